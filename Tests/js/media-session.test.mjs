// The operating system's media controls (model/media-session.js) and the
// choices between the room and "only for me" (model/watch-choice.js), pure.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  APP_ARTWORK, artworkFor, mediaAction, pictureInPictureOffer, playbackStateOf, positionStateOf, sessionMetadata,
} from '../../Sources/CowatchWeb/Web/static/model/media-session.js';
import {
  aloneActivity, aloneTarget, asksOnLeaving, currentItem, watchChoice, watchQuestion,
} from '../../Sources/CowatchWeb/Web/static/model/watch-choice.js';

const T = 1_700_000_000_000;
const activity = { url: 'https://media.test/a.mp4', title: 'Episode 1', source: { kind: 'file' }, duration: 600 };
const state = (status, extra = {}) => ({
  seq: 3, session: { state: 'joined', activity }, playback: { status, position: 10, at: T, rate: 1 }, queue: [], ...extra,
});
const member = { status: 'playing', joined: true, mayControl: true, apart: false, alone: false, queued: 0 };

test('what the controls show: the title, the room, the artwork; nothing without an item', () => {
  assert.deepEqual(sessionMetadata(state('playing'), 'lobby'), {
    title: 'Episode 1', artist: 'Watching together in lobby', album: 'Cowatch', artwork: [...APP_ARTWORK],
  });
  assert.equal(sessionMetadata({ session: { state: 'invalidated' } }, 'lobby'), null);
  assert.equal(sessionMetadata(null, 'lobby'), null);
  const youtube = artworkFor({ source: { kind: 'youtube', id: 'dQw4w9WgXcQ' } });
  assert.equal(youtube[0].src, 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg');
  assert.deepEqual(artworkFor({ source: { kind: 'youtube', id: '../../x' } }), [...APP_ARTWORK], 'an odd id is not put in an address');
});

test('the controls\' state and position follow the room (or this video, alone)', () => {
  assert.equal(playbackStateOf({ mode: 'playing' }), 'playing');
  assert.equal(playbackStateOf({ mode: 'suspended' }), 'paused');
  assert.equal(playbackStateOf({ mode: 'idle' }), 'none');
  assert.equal(playbackStateOf({ mode: 'alone', alone: true, videoPaused: false }), 'playing');
  assert.deepEqual(positionStateOf({ state: state('playing'), now: T + 2000, duration: 600 }), { duration: 600, playbackRate: 1, position: 12 });
  assert.deepEqual(positionStateOf({ state: state('paused'), now: T + 2000, duration: 600 }), { duration: 600, playbackRate: 1, position: 10 });
  assert.deepEqual(positionStateOf({ state: state('playing'), now: T + 2_000_000, duration: 600 }).position, 600, 'within the length');
  assert.equal(positionStateOf({ state: state('playing'), now: T, duration: Infinity }), null, 'a live stream has none');
  assert.deepEqual(positionStateOf({ alone: true, duration: 100, videoTime: 5, videoRate: 1.5 }), { duration: 100, playbackRate: 1.5, position: 5 });
});

test('a member who may control: play, pause, skip and seek are the room\'s commands', () => {
  assert.deepEqual(mediaAction('pause', {}, member), { do: 'command', line: '/pause' });
  assert.deepEqual(mediaAction('play', {}, { ...member, status: 'paused' }), { do: 'command', line: '/play' });
  assert.deepEqual(mediaAction('play', {}, member), { do: 'none' }, 'already playing');
  assert.deepEqual(mediaAction('seekbackward', {}, member), { do: 'command', line: '/seek -10' });
  assert.deepEqual(mediaAction('seekforward', { seekOffset: 30 }, member), { do: 'command', line: '/seek +30' });
  assert.deepEqual(mediaAction('seekto', { seekTime: 83.25 }, member), { do: 'command', line: '/seek 83.250' });
  assert.deepEqual(mediaAction('nexttrack', {}, { ...member, queued: 2 }), { do: 'command', line: '/next' });
  assert.equal(mediaAction('nexttrack', {}, member).do, 'refuse');
});

test('a member who may not pause the room is told so and paused just for themselves', () => {
  const guest = { ...member, mayControl: false };
  const paused = mediaAction('pause', {}, guest);
  assert.equal(paused.do, 'pauseForMe');
  assert.match(paused.words, /Only hosts may pause this room: paused just for you/);
  assert.deepEqual(mediaAction('play', {}, { ...guest, apart: true }), { do: 'back' }, 'play is the way back');
  assert.equal(mediaAction('seekforward', {}, guest).do, 'refuse');
  assert.equal(mediaAction('play', {}, { ...guest, status: 'paused' }).do, 'refuse');
  // Out of the session: play joins it; alone, the controls are this video's own.
  assert.deepEqual(mediaAction('play', {}, { ...member, status: 'paused', joined: false }), { do: 'command', line: '/join' });
  assert.deepEqual(mediaAction('pause', {}, { ...member, alone: true }), { do: 'local', action: 'pause' });
  assert.deepEqual(mediaAction('seekbackward', {}, { ...member, alone: true }), { do: 'local', action: 'seekbackward', by: -10 });
  assert.deepEqual(mediaAction('pause', {}, { ...member, status: 'idle' }), { do: 'none' });
});

test('picture in picture: offered for the page\'s own video where the browser has it, honestly not for a provider\'s', () => {
  assert.deepEqual(pictureInPictureOffer({ kind: 'file', element: true, documentWindow: false }), { enabled: true, note: null });
  assert.deepEqual(pictureInPictureOffer({ kind: 'file', element: false, documentWindow: true }), { enabled: true, note: null });
  assert.equal(pictureInPictureOffer({ kind: 'file', element: false, documentWindow: false }).enabled, false);
  const youtube = pictureInPictureOffer({ kind: 'youtube', element: true, documentWindow: true });
  assert.equal(youtube.enabled, false);
  assert.match(youtube.note, /YouTube's own frame/);
});

test('"Watch now" asks while the room watches something, unless asked not to; the question names both', () => {
  assert.equal(watchChoice({ state: state('playing'), shareWithoutAsking: false }), 'ask');
  assert.equal(watchChoice({ state: state('paused'), shareWithoutAsking: false }), 'ask');
  assert.equal(watchChoice({ state: state('playing'), shareWithoutAsking: true }), 'share');
  assert.equal(watchChoice({ state: state('idle'), shareWithoutAsking: false }), 'share');
  assert.equal(watchChoice({ state: null, shareWithoutAsking: false }), 'share');
  assert.equal(currentItem({ session: { state: 'invalidated', activity }, playback: { status: 'paused' } }), null);
  const words = watchQuestion(state('playing'), 'https://media.test/b.mp4');
  assert.match(words, /"Episode 1"/);
  assert.match(words, /https:\/\/media\.test\/b\.mp4/);
  assert.match(words, /only for you/);
});

test('only for me: a provider\'s link on its own site, a file in this page', () => {
  assert.equal(aloneTarget('https://www.youtube.com/watch?v=x'), 'tab');
  assert.equal(aloneTarget('https://youtu.be/x'), 'tab');
  assert.equal(aloneTarget('https://vimeo.com/1'), 'tab');
  assert.equal(aloneTarget('https://notyoutube.com/a.mp4'), 'page');
  assert.equal(aloneTarget('https://media.test/a.mp4'), 'page');
  assert.equal(aloneTarget('javascript:alert(1)'), null);
  assert.equal(aloneTarget('not a link'), null);
  assert.deepEqual(aloneActivity('https://media.test/a.mp4', ''), {
    url: 'https://media.test/a.mp4', title: 'https://media.test/a.mp4', identifier: 'https://media.test/a.mp4', source: { kind: 'file' }, duration: null,
  });
});

test('leaving the room asks a host with others there whether to end the session for everyone', () => {
  assert.equal(asksOnLeaving({ me: { role: 'host' }, state: state('playing'), others: 1 }), true);
  assert.equal(asksOnLeaving({ me: { role: 'host' }, state: state('playing'), others: 0 }), false);
  assert.equal(asksOnLeaving({ me: { role: 'member' }, state: state('playing'), others: 3 }), false);
  assert.equal(asksOnLeaving({ me: { role: 'host' }, state: { session: { state: 'invalidated' } }, others: 3 }), false);
});
