// The Vimeo adapter (static/players/vimeo.js) against a stand-in of the Vimeo
// Player SDK: loading, play and refused play, seeks that say where they landed,
// a refused rate turning the player to seeks, buffering, errors in words, and a
// replaced player's callbacks ignored, as the player contract
// (static/players/player.js) says. Tests/e2e/test_vimeo_player.py does the same
// in a browser against the stand-in of Tests/e2e/vimeo_standin.py.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VimeoPlayer } from '../../Sources/CowatchWeb/Web/static/players/vimeo.js';
import { RATE_REFUSED_NOTICE, VIMEO_POLL_MS, vimeoCapabilities } from '../../Sources/CowatchWeb/Web/static/sync/vimeo.js';
import { installPage, recordEvents, settle } from './support/fake-page.mjs';

const named = (name, message = name) => Object.assign(new Error(message), { name });

/** Vimeo.Player as documented: promises the test answers, and `on` handlers it calls. */
class StandInPlayer {
  static made = [];

  constructor(element, options) {
    this.element = element;
    this.options = options;
    this.handlers = new Map();
    this.calls = [];
    this.answers = { play: () => Promise.resolve(), setPlaybackRate: () => Promise.resolve(), setCurrentTime: (s) => Promise.resolve(s) };
    this.time = 0;
    StandInPlayer.made.push(this);
  }

  on(event, handler) { this.handlers.set(event, handler); }
  ready() { return Promise.resolve(); }
  play() { this.calls.push('play'); return this.answers.play(); }
  pause() { this.calls.push('pause'); return Promise.resolve(); }
  setCurrentTime(s) { this.calls.push(['setCurrentTime', s]); return this.answers.setCurrentTime(s); }
  setPlaybackRate(r) { this.calls.push(['setPlaybackRate', r]); return this.answers.setPlaybackRate(r); }
  setVolume(v) { this.calls.push(['setVolume', v]); return Promise.resolve(v); }
  setMuted(m) { this.calls.push(['setMuted', m]); return Promise.resolve(m); }
  getDuration() { return Promise.resolve(300); }
  getPlaybackRate() { return Promise.resolve(1); }
  getCurrentTime() { this.calls.push('getCurrentTime'); return Promise.resolve(this.time); }
  destroy() { this.calls.push('destroy'); return Promise.resolve(); }

  /** The player's part: one of its events. */
  emit(event, data) { this.handlers.get(event)?.(data); }
}

const EVENTS = ['loadedmetadata', 'canplay', 'canplaythrough', 'playing', 'waiting', 'seeked', 'ended', 'error', 'progress',
  'ratechange', 'capabilitieschange', 'volumechange'];
const activity = (id = 76979871) => ({ url: `https://vimeo.com/${id}`, source: { kind: 'vimeo', id: String(id) } });

/** A player with the SDK's player made for one item, and the events it fired. */
async function madePlayer(t) {
  StandInPlayer.made = [];
  const page = installPage(t, { Vimeo: { Player: StandInPlayer } });
  const player = new VimeoPlayer(page.screen, { apiUrl: 'http://vimeo.test/player.js' });
  t.after(() => player.destroy());
  const seen = recordEvents(player, EVENTS);
  player.load(activity());
  await settle();
  assert.equal(StandInPlayer.made.length, 1);
  return { ...page, player, vimeo: StandInPlayer.made[0], seen };
}

/** Made and loaded: the video's duration known, its position polled. */
async function loadedPlayer(t) {
  const made = await madePlayer(t);
  made.vimeo.emit('loaded', { id: 76979871 });
  await settle();
  made.seen.length = 0;
  made.vimeo.calls.length = 0;
  return made;
}

test('the SDK\'s player is made in a box before the overlay, without its controls, autoplay or autopause', async (t) => {
  const { screen, vimeo, player } = await madePlayer(t);
  assert.equal(screen.children[0].className, 'provider-player');
  assert.equal(screen.children[1].className, 'overlay');
  assert.equal(vimeo.element.parent, screen.children[0]);
  assert.deepEqual(vimeo.options, { id: 76979871, autoplay: false, controls: false, autopause: false, playsinline: true, muted: false });
  assert.deepEqual(vimeo.calls, [['setVolume', 1], ['setMuted', false]], 'the viewer\'s sound once the player is ready');
  assert.equal(player.read().readyState, 0);
  assert.deepEqual(player.capabilities, vimeoCapabilities(false));
});

test('`loaded` gives the duration and enough data; the position is then polled', async (t) => {
  const { player, vimeo, seen, clock } = await madePlayer(t);
  vimeo.emit('loaded', { id: 76979871 });
  await settle();
  assert.deepEqual(seen, ['loadedmetadata', 'canplay', 'canplaythrough']);
  const reading = player.read();
  assert.equal(reading.duration, 300);
  assert.equal(reading.readyState, 4);
  assert.equal(reading.paused, true);
  vimeo.calls.length = 0;
  vimeo.time = 12.5;
  clock.ms += VIMEO_POLL_MS;
  t.mock.timers.tick(VIMEO_POLL_MS);
  assert.deepEqual(vimeo.calls, ['getCurrentTime']);
  await settle();
  assert.equal(player.read().currentTime, 12.5);
});

test('play() resolves when Vimeo plays; `playing` places the position and moves it', async (t) => {
  const { player, vimeo, seen, clock } = await loadedPlayer(t);
  await player.play();
  assert.deepEqual(vimeo.calls, ['play']);
  assert.equal(player.read().paused, false);
  vimeo.emit('playing', { seconds: 10 });
  assert.deepEqual(seen, ['playing']);
  clock.ms += 500;
  assert.ok(Math.abs(player.read().currentTime - 10.5) < 1e-9);
  player.pause();
  assert.equal(vimeo.calls.at(-1), 'pause');
  assert.equal(player.read().paused, true);
});

test('a refused autoplay rejects play() with the browser\'s error and leaves the player paused', async (t) => {
  const { player, vimeo } = await loadedPlayer(t);
  vimeo.answers.play = () => Promise.reject(named('NotAllowedError'));
  await assert.rejects(player.play(), { name: 'NotAllowedError' });
  assert.equal(player.read().paused, true);
  assert.equal(player.read().error, null);
});

test('a private video refuses play(): said in words as the player\'s error', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.answers.play = () => Promise.reject(named('PrivacyError'));
  await assert.rejects(player.play(), { name: 'PrivacyError' });
  assert.deepEqual(seen, ['error']);
  assert.equal(player.read().error.words, 'Vimeo video 76979871 is private: it cannot be played here');
});

test('a pause before Vimeo answers play() rejects it with AbortError, as the <video> does', async (t) => {
  const { player, vimeo } = await loadedPlayer(t);
  let answer;
  vimeo.answers.play = () => new Promise((resolve) => { answer = resolve; });
  const playing = player.play();
  player.pause();
  await assert.rejects(playing, { name: 'AbortError' });
  answer();
  await settle();
  assert.equal(player.read().paused, true);
});

test('a seek reads as its target until Vimeo says where it landed', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.answers.setCurrentTime = () => Promise.resolve(41.96);
  player.seek(42);
  assert.deepEqual(vimeo.calls, [['setCurrentTime', 42]]);
  assert.equal(player.read().seeking, true);
  assert.equal(player.read().currentTime, 42);
  assert.equal(player.read().readyState, 2);
  await settle();
  assert.deepEqual(seen, ['seeked']);
  assert.equal(player.read().seeking, false);
  assert.equal(player.read().currentTime, 41.96);
});

test('a seek out of the video is `seeked` where the player is; another refusal is `progress` too', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.answers.setCurrentTime = () => Promise.reject(named('RangeError'));
  player.seek(999);
  await settle();
  assert.deepEqual(seen, ['seeked']);
  vimeo.answers.setCurrentTime = () => Promise.reject(named('Error'));
  player.seek(5);
  await settle();
  assert.deepEqual(seen, ['seeked', 'seeked', 'progress']);
});

test('a refused rate turns the player to seeks at 1 only, said once in words', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.answers.setPlaybackRate = () => Promise.reject(named('Error', 'speed controls are off'));
  player.setRate(1.5);
  assert.equal(player.read().playbackRate, 1.5, 'the rate asked, until refused');
  await settle();
  assert.equal(player.read().playbackRate, 1);
  assert.deepEqual(player.capabilities, vimeoCapabilities(true));
  assert.equal(player.notice, RATE_REFUSED_NOTICE);
  assert.deepEqual(seen, ['capabilitieschange', 'ratechange']);
  player.setRate(2);
  await settle();
  assert.deepEqual(seen, ['capabilitieschange', 'ratechange'], 'said once');
});

test('a rate outside Vimeo\'s range is refused without changing what the player can do', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.answers.setPlaybackRate = () => Promise.reject(named('RangeError'));
  player.setRate(3);
  await settle();
  assert.equal(player.read().playbackRate, 1);
  assert.deepEqual(player.capabilities, vimeoCapabilities(false));
  assert.deepEqual(seen, []);
});

test('buffering while playing is a stall: `waiting`, then `canplay` when it ends', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  await player.play();
  vimeo.emit('bufferstart', {});
  assert.equal(player.read().readyState, 2);
  vimeo.emit('bufferend', {});
  assert.equal(player.read().readyState, 4);
  assert.deepEqual(seen, ['waiting', 'canplay']);
});

test('the end and the player\'s own errors; errors of a call are the call\'s', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  vimeo.emit('ended', { seconds: 300 });
  assert.equal(player.read().paused, true);
  assert.equal(player.read().currentTime, 300);
  vimeo.emit('error', { name: 'Error', message: 'x', method: 'setVolume' });
  assert.deepEqual(seen, ['ended']);
  vimeo.emit('error', { name: 'NotFoundError', message: 'Video was not found.' });
  assert.deepEqual(seen, ['ended', 'error']);
  assert.equal(player.read().error.words, 'Vimeo has no video 76979871: it does not exist, was removed, or is not public');
});

test('a new item replaces the player; the old one\'s events and answers are not heard', async (t) => {
  const { player, vimeo, seen } = await loadedPlayer(t);
  let landed;
  vimeo.answers.setCurrentTime = () => new Promise((resolve) => { landed = resolve; });
  player.seek(20);
  player.load(activity(123));
  assert.equal(vimeo.calls.at(-1), 'destroy');
  await settle();
  assert.equal(StandInPlayer.made.length, 2);
  vimeo.emit('playing', { seconds: 50 });
  landed(20);
  await settle();
  assert.deepEqual(seen, []);
  assert.equal(player.read().readyState, 0);
  assert.equal(StandInPlayer.made[1].options.id, 123);
});

test('a server that names no Vimeo script: the player says it could not be loaded, and why', async (t) => {
  const { screen } = installPage(t, {});
  const player = new VimeoPlayer(screen, { apiUrl: null });
  t.after(() => player.destroy());
  const seen = recordEvents(player, ['error']);
  player.load(activity());
  await settle();
  assert.deepEqual(seen, ['error']);
  assert.equal(player.read().error.words, 'the Vimeo player could not be loaded from nowhere (this server names no script for '
    + 'that player); check the connection, or a blocker in the browser');
});
