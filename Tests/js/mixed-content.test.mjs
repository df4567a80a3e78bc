// An http:// video on a page served over https:// (sync/mixed-content.js):
// browsers do not play insecure video on a secure page (Chromium asks for it
// at https:// instead, and fails where its server does not answer there), and
// the <video> says only that the address could not be loaded. The page says
// why, before loading and when it failed, and warns whoever shares such a link.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  isMixedContent, MIXED_CONTENT_ERROR, mixedContentNotice, mixedContentShareWarning, mixedContentWords,
} from '../../Sources/CowatchWeb/Web/static/sync/mixed-content.js';
import { cannotPlayWords, describeStatus, overlayWords } from '../../Sources/CowatchWeb/Web/static/model/ui.js';
import { sharedLinkWarning } from '../../Sources/CowatchWeb/Web/static/model/watch-choice.js';
import { member, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const HTTP = 'http://media.example.org/movie.mp4';
const SUSPEND = '/suspend coordinatedPlaybackNotPossible';

test('an http:// file is mixed content on an https:// page, and only there', () => {
  assert.equal(isMixedContent(HTTP, 'https:'), true);
  assert.equal(isMixedContent('HTTP://Media.Example.org:8080/a.webm', 'https:'), true);
  assert.equal(isMixedContent(HTTP, 'http:'), false, 'a page over http:// plays it');
  assert.equal(isMixedContent(HTTP, null), false);
  assert.equal(isMixedContent('https://media.example.org/movie.mp4', 'https:'), false);
  assert.equal(isMixedContent('blob:https://cowatch.example.org/1234', 'https:'), false, 'an own copy');
  assert.equal(isMixedContent('not a link', 'https:'), false);
  assert.equal(isMixedContent(undefined, 'https:'), false);
});

test('this computer\'s addresses are trustworthy over http://: not mixed content', () => {
  for (const url of ['http://localhost:8000/a.mp4', 'http://media.localhost/a.mp4', 'http://127.0.0.1:9000/a.mp4',
    'http://127.3.2.1/a.mp4', 'http://[::1]:8000/a.mp4']) {
    assert.equal(isMixedContent(url, 'https:'), false, url);
  }
  for (const url of ['http://127.0.0.1.example.org/a.mp4', 'http://localhost.example.org/a.mp4', 'http://10.0.0.5/a.mp4',
    'http://192.168.1.20:8000/a.mp4']) {
    assert.equal(isMixedContent(url, 'https:'), true, url);
  }
});

test('only a file goes into the page\'s <video>: a provider\'s video or an own copy is not mixed content', () => {
  assert.equal(isMixedContent(HTTP, 'https:', { kind: 'file' }), true);
  assert.equal(isMixedContent('http://www.youtube.com/watch?v=abc', 'https:', { kind: 'youtube', id: 'abc' }), false);
  assert.equal(isMixedContent('http://vimeo.com/1', 'https:', { kind: 'vimeo', id: '1' }), false);
  assert.equal(isMixedContent(HTTP, 'https:', { kind: 'own', hash: 'x', size: 1 }), false);
});

test('the words say why in plain words, and what works instead', () => {
  for (const words of [mixedContentWords(false), mixedContentNotice(), mixedContentShareWarning()]) {
    assert.match(words, /http:\/\//);
    assert.match(words, /served over https:\/\//);
    assert.match(words, /cowatch watch \(mpv/);
    assert.doesNotMatch(words, /mixed content|could not be loaded/i, 'jargon, or the words it replaces');
  }
  assert.match(mixedContentWords(false), /^This video's address starts with http:\/\/, and this page is served over https:\/\/: browsers do not play insecure video on a secure page/);
  assert.match(mixedContentWords(false), /Ask whoever shared it for an https:\/\/ link/);
  assert.match(mixedContentWords(true), /The others keep watching\.$/);
  assert.doesNotMatch(mixedContentWords(false), /others/);
  assert.match(mixedContentShareWarning(), /browsers in the room/);
});

test('an https:// page told before loading, and why when it failed: the overlay and the status line', () => {
  const sim = new SimulatedPlayer({ failLoads: true, pageProtocol: 'https:' });
  const state = roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }, { url: HTTP });
  sim.setMe(member());
  sim.setState(state);
  // Said before the browser tries (its attempt at https:// may take long to fail).
  assert.deepEqual(sim.told.map((t) => [t.words, t.url]), [[mixedContentNotice(), HTTP]]);
  const kinds = sim.actions.map((a) => a.type);
  assert.ok(kinds.indexOf('tell') < kinds.indexOf('load'), `told after loading: ${kinds}`);

  sim.advance(1000);
  assert.equal(sim.core.mode, 'error');
  assert.equal(sim.core.mediaError, MIXED_CONTENT_ERROR);
  assert.deepEqual(sim.lines(), [SUSPEND], 'the group goes on without this player');
  const snapshot = { mode: 'error', mediaError: sim.core.mediaError };
  assert.equal(overlayWords(snapshot, { ended: false, othersPlay: () => true }).message, mixedContentWords(true));
  assert.equal(overlayWords(snapshot, { ended: false, othersPlay: () => false }).message, mixedContentWords(false));
  assert.equal(cannotPlayWords(MIXED_CONTENT_ERROR, false), mixedContentWords(false));
  assert.equal(describeStatus(snapshot, state, member(), null).words,
    'Cannot play: its address is http:// and this page is https://.');

  // "Try again" fails the same way: the same words, nothing told or sent again.
  sim.perform(sim.core.retryMedia());
  sim.advance(500);
  assert.equal(sim.core.mediaError, MIXED_CONTENT_ERROR);
  assert.equal(sim.told.length, 1);
  assert.deepEqual(sim.lines(), [SUSPEND]);
});

test('an https:// page whose http:// file loads all the same (its server answers at https://) plays', () => {
  const sim = new SimulatedPlayer({ pageProtocol: 'https:' });
  sim.open(roomState(2, { status: 'paused', position: 0 }, { url: HTTP }));
  assert.equal(sim.told.length, 1, 'said before loading');
  assert.equal(sim.core.mediaError, null);
  assert.equal(sim.core.mode, 'paused');
});

test('a decoding error is not the address: said as it is', () => {
  const sim = new SimulatedPlayer({ pageProtocol: 'https:' });
  sim.open(roomState(2, { status: 'paused', position: 0 }, { url: HTTP }));
  sim.video.error = { code: 3, message: 'PIPELINE_ERROR_DECODE' };
  sim.event('error');
  assert.equal(sim.core.mediaError, 'the video could not be decoded');
});

test('over http://, or an https:// file, or this computer\'s: nothing told, the usual words', () => {
  const cases = [
    { pageProtocol: 'http:', url: HTTP },
    { pageProtocol: 'https:', url: 'https://media.example.org/movie.mp4' },
    { pageProtocol: 'https:', url: 'http://127.0.0.1:8000/movie.mp4' },
  ];
  for (const { pageProtocol, url } of cases) {
    const sim = new SimulatedPlayer({ failLoads: true, pageProtocol });
    sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }, { url }));
    sim.advance(500);
    assert.deepEqual(sim.told, [], `${pageProtocol} ${url}`);
    assert.equal(sim.core.mediaError, 'the address could not be loaded or the format is not supported');
    const message = overlayWords({ mode: 'error', mediaError: sim.core.mediaError }, { ended: false, othersPlay: () => false }).message;
    assert.match(message, /^This video cannot be played here: the address could not be loaded/);
  }
});

test('an http:// link played only for me on an https:// page is told too', () => {
  const sim = new SimulatedPlayer({ pageProtocol: 'https:' });
  sim.open(roomState(2, { status: 'paused', position: 0 }, { url: 'https://media.example.org/room.mp4' }));
  assert.deepEqual(sim.told, []);
  sim.perform(sim.core.playAlone({ url: HTTP, title: 'mine', source: { kind: 'file' }, duration: null }, sim.read()));
  assert.deepEqual(sim.told.map((t) => t.url), [HTTP]);
});

test('whoever shares an http:// file from an https:// page is warned; nobody else, nothing else', () => {
  const warned = (line, protocol = 'https:') => sharedLinkWarning(line, protocol);
  assert.deepEqual(warned(`/watch ${HTTP} Episode 1`), { url: HTTP, words: mixedContentShareWarning() });
  assert.deepEqual(warned(`/queue ${HTTP}`), { url: HTTP, words: mixedContentShareWarning() });
  assert.equal(warned('  /WATCH http://Media.Example.org/a.webm').url, 'http://media.example.org/a.webm',
    'the address as the URL parser writes it, as the room sends it back');
  assert.equal(warned(`/watch ${HTTP}`, 'http:'), null, 'from a page over http://');
  assert.equal(warned('/watch https://media.example.org/movie.mp4'), null);
  assert.equal(warned('/watch http://localhost:8000/a.mp4'), null);
  assert.equal(warned('/watch http://www.youtube.com/watch?v=abcdefghijk'), null, 'a provider\'s player plays it');
  assert.equal(warned('/watch http://youtu.be/abcdefghijk'), null);
  assert.equal(warned('/watch http://vimeo.com/76979871'), null);
  assert.equal(warned('/watch own 0123abcd 1000 60 Movie'), null, 'an own copy');
  assert.equal(warned(`look at ${HTTP}`), null, 'chat');
  assert.equal(warned(`//watch ${HTTP}`), null, 'chat that starts with a slash');
  assert.equal(warned(`/subtitles ${HTTP}`), null);
  assert.equal(warned('/watch'), null);
  assert.equal(warned(null), null);
});
