// The room's timeline (sync/timeline.js): where every player must be at a
// server instant. If this is wrong, every player is wrong the same way, so
// these compare against positions worked out by hand.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  atEnd, clampToMedia, groupTimeline, positionAt, timelineKey,
} from '../../Sources/CowatchWeb/Web/static/sync/timeline.js';

const T = 1_700_000_000_000;

test('a playing timeline moves at its rate from `at`', () => {
  const timeline = { playing: true, position: 30, at: T, rate: 1.5 };
  assert.equal(positionAt(timeline, T), 30);
  assert.equal(positionAt(timeline, T + 2000), 33);
});

test('a coordinated start ahead holds the position until its instant', () => {
  const timeline = { playing: true, position: 12, at: T + 300, rate: 1 };
  assert.equal(positionAt(timeline, T), 12);
  assert.equal(positionAt(timeline, T + 299.9), 12);
  assert.ok(Math.abs(positionAt(timeline, T + 400) - 12.1) < 1e-9);
});

test('paused and waiting hold the position, whatever the time', () => {
  const paused = groupTimeline({ status: 'paused', position: 42, at: T, rate: 1 });
  const waiting = groupTimeline({ status: 'waiting', position: 42, at: T, rate: 2 });
  assert.equal(positionAt(paused, T + 60000), 42);
  assert.equal(positionAt(waiting, T + 60000), 42);
  assert.equal(groupTimeline({ status: 'idle', position: 0, at: T, rate: 1 }), null);
  assert.equal(groupTimeline(undefined), null);
});

test('states on the same course have the same key; any change of course, another', () => {
  const base = { playing: true, position: 5, at: T, rate: 1 };
  assert.equal(timelineKey({ ...base }), timelineKey(base));
  for (const change of [{ playing: false }, { position: 5.001 }, { at: T + 1 }, { rate: 1.5 }, { catchup: true }]) {
    assert.notEqual(timelineKey({ ...base, ...change }), timelineKey(base), JSON.stringify(change));
  }
});

test('positions past the media are kept inside it; unknown durations do not clamp', () => {
  assert.equal(clampToMedia(130, 120), 120);
  assert.equal(clampToMedia(-0.5, 120), 0);
  assert.equal(clampToMedia(130, NaN), 130);
  assert.equal(clampToMedia(130, Infinity), 130);
});

test('the last 50 ms of an item count as its end; a live or unknown length never ends', () => {
  assert.equal(atEnd(119.96, 120), true);
  assert.equal(atEnd(119.9, 120), false);
  assert.equal(atEnd(1e9, NaN), false);
  assert.equal(atEnd(1e9, Infinity), false);
});
