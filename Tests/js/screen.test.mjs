// What the screen shows (sync/screen.js): the drift of the presented frames
// against the timeline, and when the rate nudge steers by it instead of by the
// video's clock.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SCREEN, screenDrift, steer } from '../../Sources/CowatchWeb/Web/static/sync/screen.js';

const T0 = 1_700_000_000_000; // server ms
const ORIGIN = T0 - 5000; // the page's monotonic 0, on the server's clock
const FRAME = 1 / 30; // s
const REFRESH = 1000 / 60; // ms

const timeline = (at = T0, position = 0, rate = 1) => ({ playing: true, at, position, rate });

/** Frames of 30 fps media, each shown `lateMs` after the instant the timeline
 *  reaches it; [displayTime (monotonic ms), mediaTime]. */
function framesShown(count, lateMs, { from = 0, rate = 1 } = {}) {
  const frames = [];
  for (let i = 0; i < count; i++) {
    const media = from + i * FRAME;
    frames.push([T0 + ((media - from) / rate) * 1000 + lateMs - ORIGIN, media]);
  }
  return frames;
}

function driftAt(frames, now, line = timeline(), since = null) {
  return screenDrift(frames, line, now, now - ORIGIN, since);
}

const near = (actual, expected, within = 1e-6) => Math.abs(actual - expected) <= within;

test('frames shown on time: the screen is on the timeline, and a frame lasts 1/30 s', () => {
  const { drift, frame } = driftAt(framesShown(12, 0), T0 + 12 * 1000 * FRAME);
  assert.ok(near(drift, 0, 1e-9), `${drift}`);
  assert.ok(near(frame, FRAME, 1e-9));
});

test('frames shown a refresh late read 16.7 ms behind; early, ahead', () => {
  assert.ok(near(driftAt(framesShown(12, REFRESH), T0 + 500).drift, -REFRESH / 1000));
  assert.ok(near(driftAt(framesShown(12, -REFRESH), T0 + 500).drift, REFRESH / 1000));
});

test('at rate 1.5 frames on time read 0, and a frame lasts 1/45 s of the timeline', () => {
  const { drift, frame } = driftAt(framesShown(12, 0, { rate: 1.5 }), T0 + 300, timeline(T0, 0, 1.5));
  assert.ok(near(drift, 0));
  assert.ok(near(frame, FRAME / 1.5));
});

test('frames that do not agree are no steady cadence: no reading', () => {
  const frames = framesShown(12, 0);
  frames[8][0] += 30; // shown 30 ms late, once
  assert.equal(driftAt(frames, T0 + 12 * 1000 * FRAME), null);
  // 45 frames a second on 60 Hz: one refresh, then two, by turns.
  const turns = [];
  let shown = T0 - ORIGIN;
  for (let i = 0; i < 12; i++) {
    turns.push([shown, i * FRAME]);
    shown += (i % 2 ? 2 : 1) * REFRESH;
  }
  assert.equal(driftAt(turns, T0 + 300, timeline(T0, 0, 1.5)), null);
  const late = framesShown(12, 5);
  late[10][0] += 2; // within the steadiness
  assert.ok(near(driftAt(late, T0 + 12 * 1000 * FRAME).drift, -0.005, 0.0011));
});

test('too few frames, frames of another course, and frames too old say nothing', () => {
  assert.equal(driftAt(framesShown(SCREEN.pairs, 0), T0 + 400), null, 'six frames are five pairs');
  assert.equal(driftAt([], T0 + 400), null);
  assert.equal(driftAt(undefined, T0 + 400), null);
  const frames = framesShown(12, 0);
  assert.equal(driftAt(frames, T0 + 400, timeline(T0 + 300)), null, 'shown before the timeline began');
  assert.equal(driftAt(frames, T0 + 400, timeline(), T0 + 300), null, 'shown before the video followed it');
  assert.equal(driftAt(frames, T0 + 400 + SCREEN.maxAgeMs), null, 'shown too long ago');
  assert.equal(driftAt(frames, T0 + 100), null, 'not yet shown');
});

test('a seek between two frames does not count as a pair', () => {
  const before = framesShown(4, 0);
  const after = framesShown(3, 0, { from: 60 }).map(([shown, media]) => [shown + 4000 * FRAME, media]);
  const now = T0 + 8 * 1000 * FRAME;
  assert.equal(driftAt([...before, ...after], now), null, 'five pairs, and one across the seek');
  const on = framesShown(4, 0, { from: 4 * FRAME }).map(([shown, media]) => [shown + 4000 * FRAME, media]);
  assert.notEqual(driftAt([...before, ...on], now), null, 'six pairs');
});

const screen = (ms) => ({ drift: ms / 1000, frame: FRAME });

test('a picture within half a frame of the timeline is left to the clock: it moves by whole frames only', () => {
  assert.deepEqual(steer({ clock: 0.004, screen: screen(-14.8), steering: null, monotonic: 0 }),
    { drift: 0.004, steering: null }, 'a refresh behind, the nearest its refreshes allow');
  assert.deepEqual(steer({ clock: 0.004, screen: screen(16.6 + 0.7), steering: null, monotonic: 0 }),
    { drift: 0.004, steering: null });
  assert.deepEqual(steer({ clock: 0.004, screen: null, steering: null, monotonic: 0 }), { drift: 0.004, steering: null });
  assert.deepEqual(steer({ clock: 0.004, screen: null, steering: { since: 0 }, monotonic: 50 }),
    { drift: 0.004, steering: { since: 0 } }, 'a course under way waits for a steady reading');
});

test('a picture more than half a frame off steers the nudge, while the clock is within its leeway', () => {
  const first = steer({ clock: 0.001, screen: screen(-24.9), steering: null, monotonic: 100 });
  assert.deepEqual(first, { drift: -0.0249, steering: { since: 100 } });
  const later = steer({ clock: 0.012, screen: screen(-24.9), steering: first.steering, monotonic: 400 });
  assert.deepEqual(later, { drift: -0.0249, steering: { since: 100 } });
  const back = steer({ clock: 0.014, screen: screen(8.4), steering: later.steering, monotonic: 500 });
  assert.deepEqual(back, { drift: 0.014, steering: { endedAt: 500 } }, 'the picture moved a frame: the clock comes back');
  assert.deepEqual(steer({ clock: 0.001, screen: { drift: 0.013, frame: FRAME / 1.5 }, steering: null, monotonic: 0 }),
    { drift: 0.013, steering: { since: 0 } }, 'at 1.5x a frame is 22 ms of the timeline: 13 ms is more than half');
});

test('after the picture was brought in, it is not steered again for a while', () => {
  const ended = { endedAt: 500 };
  assert.deepEqual(steer({ clock: 0.001, screen: screen(-20), steering: ended, monotonic: 500 + SCREEN.againMs - 1 }),
    { drift: 0.001, steering: ended });
  assert.deepEqual(steer({ clock: 0.001, screen: screen(-20), steering: ended, monotonic: 500 + SCREEN.againMs }),
    { drift: -0.02, steering: { since: 500 + SCREEN.againMs } });
  assert.deepEqual(steer({ clock: 0.001, screen: screen(2), steering: ended, monotonic: 500 + SCREEN.againMs }),
    { drift: 0.001, steering: null });
});

test('a picture that does not follow the clock is given up for a while, then tried again', () => {
  const gaveUp = steer({ clock: SCREEN.clockLeeway, screen: screen(-25), steering: { since: 0 }, monotonic: 1000 });
  assert.deepEqual(gaveUp, { drift: SCREEN.clockLeeway, steering: { gaveUpAt: 1000 } });
  const meanwhile = steer({ clock: 0.001, screen: screen(-25), steering: gaveUp.steering, monotonic: 1000 + SCREEN.retryMs - 1 });
  assert.deepEqual(meanwhile, { drift: 0.001, steering: { gaveUpAt: 1000 } });
  const again = steer({ clock: 0.001, screen: screen(-25), steering: gaveUp.steering, monotonic: 1000 + SCREEN.retryMs });
  assert.deepEqual(again, { drift: -0.025, steering: { since: 1000 + SCREEN.retryMs } });
  assert.deepEqual(steer({ clock: 0.04, screen: screen(-25), steering: null, monotonic: 0 }), { drift: 0.04, steering: null },
    'a clock far off is the clock\'s to correct first');
});
