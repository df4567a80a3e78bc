// Stalls (sync/stall.js): a real stall is reported once with /buffering, a
// decoder hiccup is not (it would separate the member, or stop everyone under
// `stall wait`), and a recovered player says /ready.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  READY_REPEAT_MS, recoveryReadyDue, STALL_CONFIRM_MS, stallCheckOutcome, waitingMayBeStall,
} from '../../Sources/CowatchWeb/Web/static/sync/stall.js';
import { member, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const check = { since: 1000, position: 10 };

test('a `waiting` is a stall only once the video is still stuck 500 ms later', () => {
  assert.equal(stallCheckOutcome(check, { currentTime: 10, enoughData: false, monotonic: 1000 + STALL_CONFIRM_MS - 1 }), 'pending');
  assert.equal(stallCheckOutcome(check, { currentTime: 10, enoughData: false, monotonic: 1000 + STALL_CONFIRM_MS }), 'confirmed');
  assert.equal(STALL_CONFIRM_MS, 500);
});

test('a video that moved on with data was a hiccup; moved without data, or barely moved, is still watched', () => {
  assert.equal(stallCheckOutcome(check, { currentTime: 10.2, enoughData: true, monotonic: 1100 }), 'hiccup');
  assert.equal(stallCheckOutcome(check, { currentTime: 10.2, enoughData: false, monotonic: 1100 }), 'pending');
  assert.equal(stallCheckOutcome(check, { currentTime: 10.05, enoughData: true, monotonic: 1100 }), 'pending');
  assert.equal(stallCheckOutcome(check, { currentTime: 10.05, enoughData: true, monotonic: 1600 }), 'confirmed');
});

test('`waiting` while seeking, starting, catching up, or not playing along is no stall', () => {
  const run = { kind: 'run', timeline: { catchup: false } };
  const base = { plan: run, running: 'key', joining: null, seeking: false, stalled: null, checking: null };
  assert.equal(waitingMayBeStall(base), true);
  assert.equal(waitingMayBeStall({ ...base, seeking: true }), false);
  assert.equal(waitingMayBeStall({ ...base, joining: {} }), false);
  assert.equal(waitingMayBeStall({ ...base, running: null }), false);
  assert.equal(waitingMayBeStall({ ...base, plan: { kind: 'run', timeline: { catchup: true } } }), false);
  assert.equal(waitingMayBeStall({ ...base, plan: { kind: 'hold' } }), false);
  assert.equal(waitingMayBeStall({ ...base, checking: {} }), false, 'one check at a time');
  assert.equal(waitingMayBeStall({ ...base, stalled: {} }), false, 'one stall at a time');
});

test('a recovered player says /ready at once after its stall, then every 3 s while suspended', () => {
  assert.equal(recoveryReadyDue({ stalled: true, monotonic: 10, lastSentAt: 9 }), true);
  assert.equal(recoveryReadyDue({ stalled: false, monotonic: 9 + READY_REPEAT_MS, lastSentAt: 9 }), false);
  assert.equal(recoveryReadyDue({ stalled: false, monotonic: 10 + READY_REPEAT_MS, lastSentAt: 9 }), true);
  assert.equal(recoveryReadyDue({ stalled: false, monotonic: 0, lastSentAt: -Infinity }), true);
});

// MARK: on a simulated video

function playingAlong(options) {
  const sim = new SimulatedPlayer(options);
  sim.open(roomState(5, { status: 'playing', position: 10, at: T0 - 1000 }));
  sim.until(() => sim.core.running && !sim.core.verify);
  sim.advance(300);
  return sim;
}

test('a decoder hiccup of 200 ms is not reported', () => {
  const sim = playingAlong();
  sim.hiccup(200);
  sim.advance(2000);
  assert.deepEqual(sim.lines('/buffering'), []);
  assert.equal(sim.core.mode, 'playing');
});

test('a network stall is reported once, half a second after it began, and /ready follows when data is back', () => {
  const sim = playingAlong();
  const began = sim.now;
  sim.starve(2000);
  assert.equal(sim.core.detail, '');
  sim.advance(100);
  assert.equal(sim.core.detail, 'buffering');
  sim.until(() => sim.lines('/buffering').length > 0);
  const reported = sim.sent.find((s) => s.line === '/buffering').at - began;
  assert.ok(reported >= 500 && reported <= 560, `reported after ${reported} ms`);
  // Under `stall continue` the server suspends the staller alone.
  sim.setMe(member(['stallRecovery']));
  sim.advance(1000);
  assert.equal(sim.lines('/buffering').length, 1);
  assert.deepEqual(sim.lines('/ready'), []);
  assert.equal(sim.core.mode, 'suspended');
  sim.advance(1000); // data again
  assert.deepEqual(sim.lines('/ready'), ['/ready 5']);
});

test('while a stallRecovery suspension lasts, /ready is said again every 3 s, not more often', () => {
  const sim = playingAlong();
  sim.starve(1000);
  sim.until(() => sim.lines('/buffering').length > 0);
  sim.setMe(member(['stallRecovery']));
  sim.until(() => sim.lines('/ready').length > 0);
  const first = sim.now;
  sim.advance(10000);
  const times = sim.sent.filter((s) => s.line === '/ready 5').map((s) => s.at - first);
  assert.equal(times.length, 4, `sent at ${times}`);
  for (let i = 1; i < times.length; i++) {
    const gap = times[i] - times[i - 1];
    assert.ok(gap > 3000 && gap <= 3050, `gap ${gap} ms`);
  }
});

test('a stall answered by the group waiting (`stall wait`) ends in a hold that says /ready', () => {
  const sim = playingAlong();
  sim.starve(1500);
  sim.until(() => sim.lines('/buffering').length > 0);
  // The group waits at where this player stood.
  sim.setState(roomState(6, { status: 'waiting', position: sim.video.currentTime, at: sim.now }));
  sim.advance(300);
  assert.deepEqual(sim.lines('/ready'), []); // still without data
  assert.equal(sim.core.detail, 'buffering');
  sim.advance(1500);
  assert.deepEqual(sim.lines('/ready'), ['/ready 6']);
  assert.equal(sim.core.mode, 'waiting');
});

test('a `waiting` during a start\'s seek is not a stall', () => {
  const sim = new SimulatedPlayer({ seekMs: 300 });
  sim.open(roomState(5, { status: 'playing', position: 10, at: T0 - 1000 }));
  assert.ok(sim.core.join && sim.video.seeking);
  sim.starve(600);
  sim.until(() => sim.core.running && !sim.core.verify);
  assert.deepEqual(sim.lines('/buffering'), []);
});
