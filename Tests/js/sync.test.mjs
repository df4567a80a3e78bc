// The player as the page runs it (static/sync/player-sync.js, PlayerSync): the decisions of
// static/sync/ carried out on a stand-in <video> and the provider adapters, with
// Node's mocked timers for the 50 ms tick and the start's timer. The decisions
// themselves are tested on their own (player.test.mjs and the others); here,
// what this file adds: the item loaded in the player its source needs, the
// actions performed in order, what it sends, notices said once, a stall
// simulated, a replaced player no longer heard.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlayerSync } from '../../Sources/CowatchWeb/Web/static/sync/player-sync.js';
import { FakeElement } from './support/fake-page.mjs';
import { member, MEDIA_URL, roomState } from './support/simulated-player.mjs';

/** Resolves at the next `type` event of `target`. */
const nextEvent = (target, type) => new Promise((resolve) => target.addEventListener(type, resolve, { once: true }));

/** TimeRanges of [start, end] pairs. */
const ranges = (pairs) => ({ length: pairs.length, start: (i) => pairs[i][0], end: (i) => pairs[i][1] });

/** A <video>: what it was asked, and the browser's part played by the test. */
class StandInVideo extends EventTarget {
  constructor() {
    super();
    Object.assign(this, {
      paused: true, seeking: false, readyState: 0, duration: NaN, playbackRate: 1, error: null, volume: 1, muted: false, hidden: true,
    });
    this.time = 0;
    this.source = '';
    this.buffered = ranges([]);
    this.seekable = ranges([]);
    this.calls = [];
    this.refusal = null; // the name of the error play() rejects with, if any
  }

  get src() { return this.source; }
  set src(url) {
    this.source = url;
    this.calls.push(['src', url]);
    this.readyState = 0;
    this.duration = NaN;
  }

  get currentTime() { return this.time; }
  set currentTime(t) {
    this.time = t;
    this.calls.push(['seek', t]);
    this.seeking = true;
    queueMicrotask(() => {
      this.seeking = false;
      this.fire('seeked');
    });
  }

  play() {
    this.calls.push('play');
    if (this.refusal) return Promise.reject(Object.assign(new Error('refused'), { name: this.refusal }));
    this.paused = false;
    queueMicrotask(() => this.fire('playing'));
    return Promise.resolve();
  }

  pause() {
    this.calls.push('pause');
    this.paused = true;
  }

  load() { this.calls.push('load'); }
  removeAttribute(name) { if (name === 'src') this.source = ''; }
  fire(type) { this.dispatchEvent(new Event(type)); }

  /** The media's data arrived: its length known, all of it buffered. */
  loaded(duration = 600) {
    this.duration = duration;
    this.readyState = 4;
    this.buffered = ranges([[0, duration]]);
    this.seekable = ranges([[0, duration]]);
    for (const type of ['loadedmetadata', 'canplay', 'canplaythrough']) this.fire(type);
  }
}

/** YT.Player, enough to be made (players/youtube.js; youtube-player.test.mjs tests it). */
class StandInYouTube {
  static made = [];
  constructor(iframe, { events }) { this.events = events; this.calls = []; StandInYouTube.made.push(this); }
  destroy() { this.calls.push('destroy'); }
}

/**
 * A PlayerSync on a stand-in <video> in a stand-in page. Server time is the
 * page's own clock (no offset); `advance(ms)` moves it and fires the timers due,
 * a millisecond at a time. performance.now() moves a microsecond at each reading,
 * so that the start's spin ends.
 */
async function playerOnPage(t) {
  const saved = { document: globalThis.document, window: globalThis.window, location: globalThis.location };
  StandInYouTube.made = [];
  globalThis.window = { YT: { Player: StandInYouTube } };
  globalThis.location = { href: 'http://room.test/rooms/lobby', origin: 'http://room.test' };
  globalThis.document = {
    createElement: (tag) => new FakeElement(tag),
    // The server names a YouTube API (players/player.js, apiUrlFor).
    querySelector: (selector) => (selector.includes('"youtube"') ? { getAttribute: () => 'http://yt.test/iframe_api' } : null),
  };
  t.after(() => Object.assign(globalThis, saved));
  const local = { ms: 5000 };
  t.mock.method(performance, 'now', () => (local.ms += 0.001));
  t.mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  const screen = new FakeElement('div');
  const video = new StandInVideo();
  video.parentElement = screen;
  const serverNow = () => performance.timeOrigin + local.ms;
  const clock = { offset: 0, uncertainty: 1, rtt: 2, now: serverNow, toLocal: (ms) => ms };
  const sent = [];
  const sync = new PlayerSync(video, clock, (line) => {
    sent.push(line);
    return true;
  });
  t.after(() => clearInterval(sync.interval));
  const advance = async (ms) => {
    for (let i = 0; i < ms; i += 1) {
      local.ms += 1;
      t.mock.timers.tick(1);
      await null; // the video's microtasks (seeked, playing)
    }
  };
  return { sync, video, screen, sent, clock, advance, serverNow };
}

test('a paused state: the item loaded in the <video>, held at its position, /ready said', async (t) => {
  const { sync, video, sent, advance, serverNow } = await playerOnPage(t);
  sync.setMe(member());
  sync.setState(roomState(1, { status: 'waiting', position: 30, at: serverNow() }));
  assert.deepEqual(video.calls[0], ['src', MEDIA_URL]);
  assert.equal(video.hidden, false);
  video.loaded();
  await advance(200);
  assert.ok(video.calls.some((call) => call[0] === 'seek' && call[1] === 30), 'sought to the room\'s position');
  assert.equal(video.time, 30);
  assert.ok(sent.includes('/ready 1'), `sent ${JSON.stringify(sent)}`);
  assert.equal(video.paused, true);
  assert.equal(sync.snapshot().seq, 1);
});

test('a playing state starts the video at its instant, not before', async (t) => {
  const { sync, video, advance, serverNow } = await playerOnPage(t);
  sync.setMe(member());
  sync.setState(roomState(1, { status: 'waiting', position: 0, at: serverNow() }));
  video.loaded();
  await advance(100);
  const at = serverNow() + 1000;
  sync.setState(roomState(2, { status: 'playing', position: 0, at }));
  await advance(900);
  assert.equal(video.calls.includes('play'), false, 'not 100 ms before');
  await advance(200);
  assert.ok(video.calls.includes('play'));
  assert.equal(video.paused, false);
  assert.ok(sync.history.some((line) => /play\(\) .* ms after its instant/.test(line)), 'the start is noted');
  assert.equal(sync.snapshot().running, true);
});

test('an autoplay the browser refuses: the player is blocked and suspends itself, once', async (t) => {
  const { sync, video, sent, advance, serverNow } = await playerOnPage(t);
  video.refusal = 'NotAllowedError';
  sync.setMe(member());
  sync.setState(roomState(1, { status: 'waiting', position: 0, at: serverNow() }));
  video.loaded();
  await advance(100);
  sync.setState(roomState(2, { status: 'playing', position: 0, at: serverNow() + 500 }));
  await advance(700);
  assert.equal(sync.blocked, true);
  assert.equal(sync.snapshot().mode, 'blocked');
  assert.deepEqual(sent.filter((line) => line === '/suspend userActionRequired'), ['/suspend userActionRequired']);
});

test('a YouTube item swaps the <video> for the YouTube adapter; a file swaps it back', async (t) => {
  const { sync, video, screen, serverNow } = await playerOnPage(t);
  const swapped = [];
  sync.addEventListener('player', () => swapped.push(sync.kind));
  sync.setMe(member());
  const youtube = roomState(1, { status: 'paused', position: 0, at: serverNow() });
  youtube.session.activity = { id: 'a2', url: 'https://youtu.be/abc', title: 'yt', source: { kind: 'youtube', id: 'abc' } };
  const made = nextEvent(sync, 'player');
  sync.setState(youtube);
  await made; // the adapter's module is imported first
  assert.deepEqual(swapped, ['youtube']);
  assert.equal(sync.snapshot().player, 'youtube');
  assert.equal(video.hidden, true, 'the <video> is emptied and hidden');
  assert.equal(video.src, '');
  assert.equal(screen.children.length, 1, 'the YouTube player\'s box');
  assert.equal(StandInYouTube.made.length, 1);

  const youtubePlayer = sync.player;
  const back = nextEvent(sync, 'player');
  sync.setState(roomState(2, { status: 'paused', position: 0, at: serverNow() }, { item: 'item-2' }));
  await back;
  assert.deepEqual(swapped, ['youtube', 'file']);
  assert.deepEqual(StandInYouTube.made[0].calls, ['destroy']);
  assert.equal(screen.children.length, 0);
  assert.equal(video.hidden, false);
  assert.equal(video.src, MEDIA_URL);

  // The replaced adapter is no longer heard.
  let changes = 0;
  sync.addEventListener('change', () => { changes += 1; });
  youtubePlayer.dispatchEvent(new Event('playing'));
  youtubePlayer.dispatchEvent(new Event('loadedmetadata'));
  assert.equal(changes, 0);
});

test('an adapter that learns it can do less says so once, in its words', async (t) => {
  const { sync } = await playerOnPage(t);
  const notices = [];
  sync.addEventListener('notice', ({ detail }) => notices.push(detail));
  sync.player.notice = 'plays only at normal speed';
  sync.player.dispatchEvent(new Event('capabilitieschange'));
  assert.deepEqual(notices, ['plays only at normal speed']);
});

test('a simulated stall starves the readings until its time is up, and fires `waiting`', async (t) => {
  const { sync, video, advance, serverNow } = await playerOnPage(t);
  sync.setMe(member());
  sync.setState(roomState(1, { status: 'paused', position: 0, at: serverNow() }));
  video.loaded();
  await advance(100);
  let waited = 0;
  video.addEventListener('waiting', () => { waited += 1; });
  sync.player.addEventListener('waiting', () => { waited += 1; });
  sync.simulateStall(300);
  assert.equal(waited, 1);
  assert.equal(sync.read().readyState, 2);
  assert.deepEqual(sync.read().buffered, []);
  await advance(301);
  assert.equal(sync.read().readyState, 4);
  assert.deepEqual(sync.read().buffered, [[0, 600]]);
});

test('every input repaints: one `change` after the actions are carried out', async (t) => {
  const { sync, serverNow } = await playerOnPage(t);
  let changes = 0;
  sync.addEventListener('change', () => { changes += 1; });
  sync.setMe(member());
  sync.setState(roomState(1, { status: 'paused', position: 0, at: serverNow() }));
  assert.equal(changes, 2);
  t.mock.timers.tick(50);
  assert.equal(changes, 3, 'and the tick');
});
