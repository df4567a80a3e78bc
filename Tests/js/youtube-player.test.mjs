// The YouTube adapter (static/players/youtube.js) against a stand-in of the
// YouTube IFrame Player API: the <iframe> it makes, the priming that gives a cued
// video a duration, play and pause, seeks that land, rates, buffering, refusals
// and errors in words, as the player contract (static/players/player.js) says.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import YouTubePlayer from '../../Sources/CowatchWeb/Web/static/players/youtube.js';
import { installPage, recordEvents, settle } from './support/fake-page.mjs';

/** YT.Player as documented: the calls record what was asked; the test plays the player's part. */
class StandInPlayer {
  static made = [];

  constructor(iframe, { events }) {
    this.iframe = iframe;
    this.events = events;
    this.calls = [];
    this.time = 0;
    this.duration = 120;
    this.rate = 1;
    this.state = -1;
    this.fraction = 0;
    this.rates = [0.25, 0.5, 1, 1.5, 2];
    StandInPlayer.made.push(this);
  }

  playVideo() { this.calls.push('playVideo'); }
  pauseVideo() { this.calls.push('pauseVideo'); }
  seekTo(s, allowSeekAhead) { this.calls.push(['seekTo', s, allowSeekAhead]); this.time = s; }
  getCurrentTime() { return this.time; }
  getDuration() { return this.duration; }
  getPlayerState() { return this.state; }
  setPlaybackRate(r) { this.calls.push(['setPlaybackRate', r]); }
  getPlaybackRate() { return this.rate; }
  getAvailablePlaybackRates() { return this.rates; }
  getVideoLoadedFraction() { return this.fraction; }
  cueVideoById(id) { this.calls.push(['cueVideoById', id]); }
  mute() { this.calls.push('mute'); }
  unMute() { this.calls.push('unMute'); }
  setVolume(v) { this.calls.push(['setVolume', v]); }
  destroy() { this.calls.push('destroy'); }

  // The player's part:
  ready() { this.events.onReady(); }
  to(state) { this.state = state; this.events.onStateChange({ data: state }); }
  refuse(code) { this.events.onError({ data: code }); }
  autoplayBlocked() { this.events.onAutoplayBlocked(); }
}

const EVENTS = ['loadedmetadata', 'playing', 'waiting', 'seeked', 'canplay', 'ended', 'error', 'progress', 'ratechange', 'volumechange'];
const activity = (id = 'abc123XYZ_-') => ({ url: `https://youtu.be/${id}`, source: { kind: 'youtube', id } });

/** A player with its frame made and ready, and the events it fired. */
async function readyPlayer(t) {
  StandInPlayer.made = [];
  const page = installPage(t, { YT: { Player: StandInPlayer } });
  const player = new YouTubePlayer(page.screen, { apiUrl: 'http://yt.test/iframe_api' });
  t.after(() => player.destroy());
  const seen = recordEvents(player, EVENTS);
  player.load(activity());
  await settle();
  assert.equal(StandInPlayer.made.length, 1);
  const yt = StandInPlayer.made[0];
  return { ...page, player, yt, seen };
}

/** Ready and primed: the cued video played muted once, paused and held at 0. */
async function primedPlayer(t) {
  const made = await readyPlayer(t);
  made.yt.ready();
  made.yt.to(1);
  made.clock.ms += 50;
  t.mock.timers.tick(50); // the seek to 0 lands
  made.seen.length = 0;
  made.yt.calls.length = 0;
  return made;
}

test('the frame is made before the overlay, to the API\'s origin, with a referrer of the origin alone', async (t) => {
  const { screen, yt } = await readyPlayer(t);
  const box = screen.children[0];
  assert.equal(box.className, 'provider-player');
  assert.equal(screen.children[1].className, 'overlay', 'the overlay stays on top');
  const url = new URL(yt.iframe.src);
  assert.equal(url.origin + url.pathname, 'http://yt.test/embed/abc123XYZ_-');
  assert.equal(url.searchParams.get('enablejsapi'), '1');
  assert.equal(url.searchParams.get('origin'), 'http://room.test');
  assert.equal(yt.iframe.referrerPolicy, 'strict-origin');
  assert.equal(box.children[0], yt.iframe);
});

test('a cued video is played muted until it starts, then held at 0 and said loaded', async (t) => {
  const { player, yt, seen, clock } = await readyPlayer(t);
  assert.equal(player.read().readyState, 0);
  yt.ready();
  assert.deepEqual(yt.calls.slice(-2), ['mute', 'playVideo']);
  assert.deepEqual(player.capabilities.rates, [0.25, 0.5, 1, 1.5, 2], 'the rates this video has');
  assert.deepEqual(player.capabilities.rateRange, [0.25, 2]);
  assert.deepEqual(seen, ['volumechange'], 'the viewer\'s volume, given to the player once it is ready');
  seen.length = 0;
  yt.to(3); // buffering while priming is not the room's business
  assert.deepEqual(seen, []);
  yt.to(1);
  assert.deepEqual(yt.calls.slice(-3), ['pauseVideo', ['seekTo', 0, true], 'unMute']);
  assert.deepEqual(seen, ['loadedmetadata']);
  const reading = player.read();
  assert.equal(reading.readyState, 4);
  assert.equal(reading.duration, 120);
  assert.equal(reading.paused, true);
  assert.equal(reading.seeking, true, 'until the seek to 0 lands');
  clock.ms += 50;
  t.mock.timers.tick(50);
  assert.deepEqual(seen, ['loadedmetadata', 'seeked', 'canplay']);
  assert.equal(player.read().seeking, false);
});

test('play() resolves once the player plays; a pause before that rejects it as the <video> does', async (t) => {
  const { player, yt, seen } = await primedPlayer(t);
  const playing = player.play();
  assert.equal(player.read().paused, false, 'at once, as a <video>\'s');
  assert.deepEqual(yt.calls, ['playVideo']);
  yt.to(1);
  await playing;
  assert.deepEqual(seen, ['playing']);

  player.pause();
  const interrupted = player.play();
  player.pause();
  await assert.rejects(interrupted, { name: 'AbortError' });
  assert.equal(player.read().paused, true);
  assert.equal(yt.calls.at(-1), 'pauseVideo');
});

test('the player starting on its own (a click in its frame) is paused again: the room decides', async (t) => {
  const { yt, seen } = await primedPlayer(t);
  yt.to(1);
  assert.deepEqual(yt.calls, ['pauseVideo']);
  assert.deepEqual(seen, []);
});

test('a pause from inside the frame is the player\'s own pause', async (t) => {
  const { player, yt } = await primedPlayer(t);
  const playing = player.play();
  yt.to(1);
  await playing;
  yt.to(2);
  assert.equal(player.read().paused, true);
});

test('buffering while playing is a stall: `waiting`, and readyState 2', async (t) => {
  const { player, yt, seen } = await primedPlayer(t);
  const playing = player.play();
  yt.to(1);
  await playing;
  yt.to(3);
  assert.deepEqual(seen, ['playing', 'waiting']);
  assert.equal(player.read().readyState, 2);
});

test('a seek reads as its target until the player is there, then `seeked`', async (t) => {
  const { player, yt, seen, clock } = await primedPlayer(t);
  yt.state = 2;
  player.seek(42);
  assert.deepEqual(yt.calls, [['seekTo', 42, true]]);
  yt.time = 30; // not there yet
  clock.ms += 50;
  t.mock.timers.tick(50);
  assert.equal(player.read().currentTime, 42);
  assert.equal(player.read().seeking, true);
  yt.time = 41.8;
  clock.ms += 50;
  t.mock.timers.tick(50);
  assert.deepEqual(seen, ['seeked', 'canplay']);
  assert.equal(player.read().currentTime, 41.8);
});

test('a rate is the nearest this video has, asked once', async (t) => {
  const { player, yt } = await primedPlayer(t);
  player.setRate(1.1);
  player.setRate(0.95);
  assert.deepEqual(yt.calls, [['setPlaybackRate', 1]]);
  player.setRate(1.4);
  assert.deepEqual(yt.calls.at(-1), ['setPlaybackRate', 1.5]);
  assert.equal(player.read().playbackRate, 1.5, 'the rate asked, before the player says it');
});

test('a refused autoplay rejects play() with NotAllowedError', async (t) => {
  const { player, yt } = await primedPlayer(t);
  const playing = player.play();
  yt.autoplayBlocked();
  await assert.rejects(playing, { name: 'NotAllowedError' });
  assert.equal(player.read().paused, true);
});

test('YouTube\'s errors are said in words, and a pending play() is rejected', async (t) => {
  const { player, yt, seen } = await primedPlayer(t);
  const playing = player.play();
  yt.refuse(150);
  await assert.rejects(playing, { name: 'AbortError' });
  assert.deepEqual(seen, ['error']);
  assert.equal(player.read().error.words, 'the owner of this video does not allow it to be played on other sites');
  assert.equal(player.read().readyState, 0);
  yt.refuse(999);
  assert.equal(player.read().error.words, 'YouTube\'s player failed (error 999)');
  await assert.rejects(player.play(), { name: 'AbortError' });
});

test('a link without a video id is error 2, and no frame is made', async (t) => {
  StandInPlayer.made = [];
  const { screen } = installPage(t, { YT: { Player: StandInPlayer } });
  const player = new YouTubePlayer(screen, { apiUrl: 'http://yt.test/iframe_api' });
  t.after(() => player.destroy());
  player.load({ url: 'https://youtube.com/', source: { kind: 'youtube' } });
  await settle();
  assert.equal(StandInPlayer.made.length, 0);
  assert.equal(player.read().error.code, 2);
});

test('the next item is cued in the same player and primed again', async (t) => {
  const { player, yt, seen } = await primedPlayer(t);
  player.load(activity('second'));
  assert.deepEqual(yt.calls, [['cueVideoById', 'second']]);
  assert.equal(player.read().readyState, 0);
  yt.to(5);
  assert.deepEqual(yt.calls.slice(-2), ['mute', 'playVideo']);
  yt.to(1);
  assert.deepEqual(seen, ['loadedmetadata']);
});

test('the viewer\'s volume and mute reach the player; destroy takes the frame down', async (t) => {
  const { player, yt, screen, seen } = await primedPlayer(t);
  player.setVolume(0.5, true);
  assert.deepEqual(yt.calls, [['setVolume', 50], 'mute']);
  assert.deepEqual(player.volume(), { volume: 0.5, muted: true });
  assert.deepEqual(seen, ['volumechange']);
  player.destroy();
  assert.equal(yt.calls.at(-1), 'destroy');
  assert.equal(screen.children.length, 1, 'only the overlay is left');
});

test('the loaded fraction is `progress` and the buffered range', async (t) => {
  const { player, yt, seen, clock } = await primedPlayer(t);
  yt.fraction = 0.25;
  clock.ms += 50;
  t.mock.timers.tick(50);
  assert.deepEqual(seen, ['progress']);
  assert.deepEqual(player.read().buffered, [[0, 30]]);
});
