// "What happened?" (sync/catchup.js): the catching-up player replays the last
// seconds at 2x behind the group and comes back level with it at `until`,
// without a seek or a jump at the hand-over.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { catchupOver, catchupTimeline } from '../../Sources/CowatchWeb/Web/static/sync/catchup.js';
import { positionAt } from '../../Sources/CowatchWeb/Web/static/sync/timeline.js';
import { member, playing, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const T = 1_700_000_000_000;

test('the replay meets the group exactly at `until`, from `from`, at its rate', () => {
  const group = playing(50, T - 20000); // at 70 s now
  const { until, timeline } = catchupTimeline({ from: 60, rate: 2, until: T + 10000 }, group);
  assert.equal(until, T + 10000);
  assert.equal(timeline.catchup, true);
  assert.ok(Math.abs(positionAt(timeline, until) - positionAt(group, until)) < 1e-9);
  // 20 s of media in 10 s at 2x: the replay was at `from` 10 s before `until`.
  assert.ok(Math.abs(positionAt(timeline, T) - 60) < 1e-9);
  assert.ok(Math.abs(positionAt(timeline, T + 5000) - 70) < 1e-9);
});

test('a catch-up on a group at 1.5x still meets it at `until`', () => {
  const group = playing(0, T - 10000, 1.5);
  const { timeline } = catchupTimeline({ from: 5, rate: 2, until: T + 20000 }, group);
  assert.ok(Math.abs(positionAt(timeline, T + 20000) - positionAt(group, T + 20000)) < 1e-9);
});

test('the catch-up is over at `until`, not before', () => {
  assert.equal(catchupOver({ until: T }, T - 0.1), false);
  assert.equal(catchupOver({ until: T }, T), true);
});

test('on a video: behind the group at 2x, then level and in step at `until`, with no seek at the hand-over', () => {
  const sim = new SimulatedPlayer();
  const group = playing(50, T0 - 20000);
  sim.open(roomState(4, { status: 'playing', position: 50, at: T0 - 20000 }));
  sim.until(() => sim.core.running && !sim.core.verify);
  const until = sim.now + 8000;
  const from = positionAt(group, sim.now) - 8; // 8 s back; 16 s of media by `until` at 2x
  sim.setMe(member(['catchup']));
  sim.catchup({ from, rate: 2, until });
  assert.equal(sim.core.mode, 'catchup');
  sim.advance(1500);
  assert.equal(sim.video.playbackRate, 2);
  const behind = positionAt(group, sim.now) - sim.video.currentTime;
  assert.ok(behind > 5 && behind < 8, `${behind.toFixed(2)} s behind`);

  sim.until(() => sim.now >= until - 100);
  const seeks = sim.count('seek');
  sim.advance(100);
  sim.setMe(member([])); // the server ends the catchup suspension at `until`
  sim.advance(3000);
  assert.equal(sim.core.mode, 'playing');
  assert.equal(sim.count('seek'), seeks, 'no seek at the hand-over');
  assert.equal(sim.video.playbackRate, 1);
  assert.ok(Math.abs(sim.driftMs(group)) < 2, `drift ${sim.driftMs(group)} ms after the catch-up`);
});

test('the end of the media during a replay is not reported as the item\'s end', () => {
  const sim = new SimulatedPlayer({ duration: 30 });
  sim.open(roomState(4, { status: 'playing', position: 20, at: T0 - 5000 }));
  sim.until(() => sim.core.running && !sim.core.verify);
  sim.setMe(member(['catchup']));
  sim.catchup({ from: 20, rate: 2, until: sim.now + 10000 });
  sim.advance(500);
  sim.event('ended'); // a stray `ended` while replaying
  assert.deepEqual(sim.lines('/ended'), []);
});

test('a catch-up with nothing playing is ignored', () => {
  const sim = new SimulatedPlayer();
  sim.open({ ...roomState(1, { status: 'idle' }), session: null });
  sim.catchup({ from: 0, rate: 2, until: sim.now + 1000 });
  assert.equal(sim.core.catchup, null);
  assert.equal(sim.core.mode, 'idle');
});
