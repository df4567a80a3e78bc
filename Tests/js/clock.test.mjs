// The server clock's offset, estimated from /time round trips (static/sync/clock.js).
// A start "at server time T" happens at T minus this offset on the page: every
// millisecond of error here is a millisecond between two viewers.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BEST, estimateOffset, keepRecent, sampleFrom, WINDOW_MAX, WINDOW_MS } from '../../Sources/CowatchWeb/Web/static/sync/clock.js';

/** Deterministic noise, so a failure can be replayed. */
function random(seed) {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** One round trip sent at local t0, `up` ms to the server, `down` ms back, with
 *  the server `offset` ms ahead of the page; the server answers in whole,
 *  truncated milliseconds, as it does. */
function roundTrip(t0, offset, up, down) {
  const server = Math.floor(t0 + up + offset);
  return sampleFrom(t0, server, t0 + up + down);
}

function estimateFrom(trips) {
  let samples = [];
  for (const sample of trips) samples = keepRecent(samples, sample);
  return estimateOffset(samples);
}

test('quick round trips pin the offset to within a millisecond, and it lies in the interval claimed', () => {
  const offset = 1234567.891;
  const next = random(1);
  const trips = [];
  for (let i = 0; i < 20; i++) {
    const delay = 0.2 + next() * 2;
    trips.push(roundTrip(1000 + i * 500, offset, delay, delay));
  }
  const estimate = estimateFrom(trips);
  assert.ok(Math.abs(estimate.offset - offset) < 1, `estimate ${estimate.offset}, true ${offset}`);
  assert.ok(Math.abs(estimate.offset - offset) <= estimate.uncertainty + 1e-9);
  assert.ok(estimate.rtt < 1.5);
});

test('the server answers in whole milliseconds: that is no half-millisecond bias', () => {
  // Loopback-quick round trips sent at every phase of the server's millisecond.
  const offset = 250.9;
  const trips = [];
  for (let i = 0; i < 20; i++) trips.push(roundTrip(1000 + i * 500.05, offset, 0.05, 0.05));
  const estimate = estimateFrom(trips);
  assert.ok(Math.abs(estimate.offset - offset) < 0.2, `estimate off by ${(estimate.offset - offset).toFixed(3)} ms`);
});

test('a page whose clock is a day ahead of the server is found as well', () => {
  const offset = -86400000.25;
  const estimate = estimateFrom([roundTrip(500, offset, 1, 1), roundTrip(900, offset, 0.5, 0.6)]);
  assert.ok(Math.abs(estimate.offset - offset) < 1.2);
});

test('samples slow on one leg each: together they cut the interval from both sides', () => {
  // Every sample is badly asymmetric (15 ms on one leg, 0.3 on the other), so
  // every midpoint alone is about 7 ms off. Slow-out and slow-back samples
  // bound the offset from opposite sides.
  const offset = 5000;
  const trips = [];
  for (let i = 0; i < 10; i++) {
    trips.push(i % 2 ? roundTrip(i * 400, offset, 15, 0.3) : roundTrip(i * 400, offset, 0.3, 15));
  }
  for (const trip of trips) assert.ok(Math.abs((trip.low + trip.high) / 2 - offset) > 6);
  const estimate = estimateFrom(trips);
  assert.ok(Math.abs(estimate.offset - offset) < 1, `estimate off by ${estimate.offset - offset} ms`);
});

test('an asymmetry that never changes cannot be seen, and the uncertainty says so', () => {
  // Always 1 ms out and 21 ms back: no round trip can tell this from a
  // symmetric 11 ms with another offset; the claimed interval must cover the truth.
  const offset = 300;
  const estimate = estimateFrom([0, 1, 2, 3, 4].map((i) => roundTrip(i * 1000, offset, 1, 21)));
  assert.ok(Math.abs(estimate.offset - offset) <= estimate.uncertainty);
  assert.ok(estimate.uncertainty >= 10);
});

test('a round trip stuck behind a busy main thread does not move the estimate', () => {
  const offset = -42.5;
  const quick = [0, 1, 2, 3, 4, 5].map((i) => roundTrip(i * 500, offset, 0.4, 0.5));
  const before = estimateFrom(quick);
  // Answered at once, read 3 s later: its interval is wide and holds the truth.
  const after = estimateFrom([...quick, roundTrip(3500, offset, 0.4, 3000)]);
  assert.equal(after.offset, before.offset);
  assert.equal(after.rtt, before.rtt);
});

test('answers that cannot be ours are refused: negative or absurd round trips', () => {
  assert.equal(sampleFrom(1000, 5, 999), null); // received before it was sent
  assert.equal(sampleFrom(0, 5, 10001), null); // more than ten seconds
  assert.equal(sampleFrom(Number('not a number'), 5, 10), null);
  assert.ok(sampleFrom(0, 5, 0)); // instantaneous is possible on loopback
});

test('a random mix of delays, a few of them huge, still lands within a millisecond', () => {
  const offset = 777.777;
  const next = random(7);
  const trips = [];
  for (let i = 0; i < WINDOW_MAX; i++) {
    const slow = next() < 0.2 ? 200 * next() : 0; // queueing on one leg, now and then
    const up = 0.3 + next() * 3 + (next() < 0.5 ? slow : 0);
    const down = 0.3 + next() * 3 + (next() < 0.5 ? 0 : slow);
    trips.push(roundTrip(i * 500, offset, up, down));
  }
  const estimate = estimateFrom(trips);
  assert.ok(Math.abs(estimate.offset - offset) < 1, `estimate off by ${estimate.offset - offset} ms`);
  assert.ok(Math.abs(estimate.offset - offset) <= estimate.uncertainty);
});

test('a server clock stepped by 50 ms: a usable estimate at once, the exact one once the old samples are gone', () => {
  const before = [0, 1, 2, 3, 4, 5].map((i) => roundTrip(i * 500, 0, 0.5, 0.5));
  const stepped = [6, 7, 8].map((i) => roundTrip(i * 500, 50, 0.5, 0.5));
  let samples = [];
  for (const trip of [...before, ...stepped]) samples = keepRecent(samples, trip);
  // The intervals no longer meet: the quickest samples' midpoints, wherever they are from.
  const mixed = estimateOffset(samples);
  assert.ok(Number.isFinite(mixed.offset) && mixed.offset >= -1 && mixed.offset <= 51);
  // Half a minute later the samples from before the step have left the window.
  for (let t = 4500; t <= 4500 + WINDOW_MS + 1000; t += 2000) samples = keepRecent(samples, roundTrip(t, 50, 0.5, 0.5));
  assert.ok(Math.abs(estimateOffset(samples).offset - 50) < 1);
});

test('the window: at most WINDOW_MAX samples, none older than WINDOW_MS, but never fewer than BEST', () => {
  let samples = [];
  for (let i = 0; i < WINDOW_MAX + 10; i++) samples = keepRecent(samples, roundTrip(i * 10, 0, 1, 1));
  assert.equal(samples.length, WINDOW_MAX);
  assert.equal(samples[samples.length - 1].at, (WINDOW_MAX + 9) * 10 + 2);

  samples = [];
  for (let i = 0; i < 5; i++) samples = keepRecent(samples, roundTrip(i * 100, 0, 1, 1));
  samples = keepRecent(samples, roundTrip(WINDOW_MS + 10000, 0, 1, 1));
  // The old ones are dropped down to BEST: a page that stopped sampling for a
  // while still has something to go on.
  assert.equal(samples.length, BEST);
});
