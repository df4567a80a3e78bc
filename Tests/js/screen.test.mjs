// What the screen shows (sync/screen.js): the drift of the presented frames
// against the timeline, and when the rate nudge steers by it instead of by the
// video's clock. The last tests run the nudge against a model of Chromium's
// frame picker (a cadence it keeps while the frame it shows is within 1/60 s
// of its clock), the cause of windows a refresh apart on screen.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { nudgeRate, addDriftReading } from '../../Sources/CowatchGateway/Web/static/sync/drift.js';
import { SCREEN, screenDrift, steer } from '../../Sources/CowatchGateway/Web/static/sync/screen.js';

const T0 = 1_700_000_000_000; // server ms
const ORIGIN = T0 - 5000; // the page's monotonic 0, on the server's clock
const FRAME = 1 / 30; // s
const REFRESH = 1000 / 60; // ms

const timeline = (at = T0, position = 0, rate = 1) => ({ playing: true, at, position, rate });

/** Frames of 30 fps media shown two refreshes each, each `lateMs` after the
 *  instant the timeline reaches it; [displayTime (monotonic ms), mediaTime]. */
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

test('frames shown on time: the screen is on the timeline', () => {
  const frames = framesShown(12, 0);
  const d = driftAt(frames, T0 + 12 * 1000 * FRAME);
  assert.ok(Math.abs(d) < 1e-9, `${d}`);
});

test('frames shown a refresh late: the screen is 16.7 ms behind; early: ahead', () => {
  const late = framesShown(12, REFRESH);
  assert.ok(Math.abs(driftAt(late, T0 + 500) + REFRESH / 1000) < 1e-6);
  const early = framesShown(12, -REFRESH);
  assert.ok(Math.abs(driftAt(early, T0 + 500) - REFRESH / 1000) < 1e-6);
});

test('at rate 1.5 the timeline moves 1.5 s a second: frames on time read 0', () => {
  const frames = framesShown(12, 0, { rate: 1.5 });
  assert.ok(Math.abs(driftAt(frames, T0 + 300, timeline(T0, 0, 1.5))) < 1e-6);
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
  assert.ok(Math.abs(driftAt(late, T0 + 12 * 1000 * FRAME) + 0.005) < 0.0011);
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
  assert.notEqual(driftAt([...before, ...framesShown(4, 0, { from: 4 * FRAME }).map(([s, m]) => [s + 4000 * FRAME, m])], now),
    null, 'six pairs');
});

test('the clock steers while the screen is within a refresh of its best', () => {
  assert.deepEqual(steer({ clock: 0.004, screen: 0.008, steering: null, monotonic: 0 }), { drift: 0.004, steering: null });
  assert.deepEqual(steer({ clock: 0.004, screen: null, steering: null, monotonic: 0 }), { drift: 0.004, steering: null });
  assert.deepEqual(steer({ clock: 0.004, screen: null, steering: { since: 0 }, monotonic: 50 }),
    { drift: 0.004, steering: { since: 0 } }, 'a course under way waits for a steady reading');
});

test('a screen a refresh off steers the nudge, while the clock is within its leeway', () => {
  const first = steer({ clock: 0.001, screen: -0.015, steering: null, monotonic: 100 });
  assert.deepEqual(first, { drift: -0.015, steering: { since: 100 } });
  const later = steer({ clock: 0.012, screen: -0.015, steering: first.steering, monotonic: 400 });
  assert.deepEqual(later, { drift: -0.015, steering: { since: 100 } });
  const back = steer({ clock: 0.014, screen: 0.002, steering: later.steering, monotonic: 500 });
  assert.deepEqual(back, { drift: 0.014, steering: { endedAt: 500 } }, 'the picture moved: the clock comes back');
});

test('after the screen was brought in, it is not steered again for a while', () => {
  const ended = { endedAt: 500 };
  assert.deepEqual(steer({ clock: 0.001, screen: -0.0095, steering: ended, monotonic: 500 + SCREEN.againMs - 1 }),
    { drift: 0.001, steering: ended });
  assert.deepEqual(steer({ clock: 0.001, screen: -0.0095, steering: ended, monotonic: 500 + SCREEN.againMs }),
    { drift: -0.0095, steering: { since: 500 + SCREEN.againMs } });
  assert.deepEqual(steer({ clock: 0.001, screen: 0.002, steering: ended, monotonic: 500 + SCREEN.againMs }),
    { drift: 0.001, steering: null });
});

test('a screen that does not follow the clock is given up for a while, then tried again', () => {
  const gaveUp = steer({ clock: SCREEN.clockLeeway, screen: -0.015, steering: { since: 0 }, monotonic: 1000 });
  assert.deepEqual(gaveUp, { drift: SCREEN.clockLeeway, steering: { gaveUpAt: 1000 } });
  const meanwhile = steer({ clock: 0.001, screen: -0.015, steering: gaveUp.steering, monotonic: 1000 + SCREEN.retryMs - 1 });
  assert.deepEqual(meanwhile, { drift: 0.001, steering: { gaveUpAt: 1000 } });
  const again = steer({ clock: 0.001, screen: -0.015, steering: gaveUp.steering, monotonic: 1000 + SCREEN.retryMs });
  assert.deepEqual(again, { drift: -0.015, steering: { since: 1000 + SCREEN.retryMs } });
  assert.deepEqual(steer({ clock: 0.03, screen: -0.015, steering: null, monotonic: 0 }), { drift: 0.03, steering: null },
    'a clock far off is the clock\'s to correct first');
});

/**
 * A video playing 30 fps media on a 60 Hz display, its frames picked as
 * Chromium's VideoRendererAlgorithm does once it has a cadence: each frame two
 * refreshes, unless the frame the cadence calls for is more than
 * max(half a frame, 1/60 s) from the refresh on the video's clock, when the
 * frame covering the refresh best is taken instead. The page's tick (50 ms)
 * reads the clock's drift and the frames, and nudges the rate.
 */
function simulate({ byScreen, seconds = 4, clockOffsetMs = 0, pictureLateMs = 15 }) {
  const tolerance = Math.max(FRAME / 2, 1 / 60) * 1000;
  let clock = -pictureLateMs + clockOffsetMs; // the video's clock less the timeline, ms: the cadence begins here
  let rate = 1;
  let shown = null; // { frame, count }
  const frames = [];
  let drifts = [];
  let nudging = false;
  let steering = null;
  let screen = null;
  let steers = 0; // times steering by the screen began
  const line = timeline();
  for (let t = 0; t <= seconds * 1000; t += 1) {
    const now = T0 + t;
    if (t === 300) clock = clockOffsetMs; // the clock is brought to the timeline; the cadence holds
    clock += rate - 1; // one ms of the timeline: the clock moves `rate` ms
    if (t % REFRESH < 1) {
      const position = t + clock; // ms of media on the video's clock
      const covering = Math.floor((position + REFRESH / 2) / (FRAME * 1000));
      let frame = covering;
      if (shown) {
        const candidate = shown.count < 2 ? shown.frame : shown.frame + 1;
        const start = candidate * FRAME * 1000 - position; // from now, in ms (rate ~1)
        const end = start + FRAME * 1000;
        const off = start > 0 ? start : end < 0 ? -end : 0;
        frame = off > tolerance ? covering : candidate;
      }
      if (!shown || frame !== shown.frame) {
        shown = { frame, count: 1 };
        frames.push([now - ORIGIN, frame * FRAME]);
        if (frames.length > 24) frames.shift();
      } else {
        shown.count += 1;
      }
    }
    if (t % 50 === 0 && t > 0) {
      const raw = clock / 1000;
      ({ drifts } = addDriftReading(drifts, raw));
      const drift = [...drifts].sort((a, b) => a - b)[Math.floor(drifts.length / 2)];
      screen = screenDrift(frames, line, now, now - ORIGIN, T0);
      let use = drift;
      if (byScreen) {
        const course = steer({ clock: drift, screen, steering, monotonic: now - ORIGIN });
        if (course.steering?.since !== undefined && steering?.since === undefined) steers += 1;
        ({ drift: use, steering } = course);
      }
      ({ nudging, rate } = nudgeRate(nudging, use, 1));
    }
  }
  return { clock, screen, steering, steers };
}

test('model: a picture a refresh late stays late when the clock alone is steered', () => {
  const { clock, screen } = simulate({ byScreen: false });
  assert.ok(Math.abs(clock) < 3, `clock ${clock} ms`);
  assert.ok(screen < -SCREEN.tolerance, `the picture is still ${(screen * 1000).toFixed(1)} ms behind`);
});

test('model: steering by the screen brings the picture to its refresh and the clock back', () => {
  for (const late of [10, 12, 15]) {
    const { clock, screen, steering, steers } = simulate({ byScreen: true, pictureLateMs: late });
    assert.ok(Math.abs(screen) <= SCREEN.tolerance, `picture ${late} ms late: now ${(screen * 1000).toFixed(1)} ms`);
    assert.equal(steers, 1, `picture ${late} ms late: steered once`);
    assert.ok(Math.abs(clock) < 3, `picture ${late} ms late: the clock ends ${clock.toFixed(1)} ms off`);
    assert.ok(steering === null || steering.endedAt !== undefined, JSON.stringify(steering));
  }
});

test('model: a picture the picker brought within the tolerance is not steered', () => {
  for (const late of [8, 0, -8, -15]) {
    const { screen, steers } = simulate({ byScreen: true, pictureLateMs: late });
    assert.equal(steers, 0, `picture ${late} ms late`);
    assert.ok(Math.abs(screen) <= SCREEN.tolerance, `picture ${late} ms late: ${(screen * 1000).toFixed(1)} ms`);
  }
});
