// Drift and the rate nudge (sync/drift.js): small drift is absorbed by playing
// slightly faster or slower, within limits a viewer does not notice; only
// large drift costs a seek.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  addDriftReading, costAfterPulse, DRIFT_WINDOW, needsRejoin, nudgeRate, PULSE, pulseFor, roundRate, THRESHOLDS,
} from '../../Sources/CowatchWeb/Web/static/sync/drift.js';
import { playing, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

test('drift under 3 ms is left alone: the exact group rate', () => {
  assert.deepEqual(nudgeRate(false, 0.0029, 1), { nudging: false, rate: 1 });
  assert.deepEqual(nudgeRate(false, -0.0029, 1.5), { nudging: false, rate: 1.5 });
});

test('a video ahead plays slower, one behind faster, in proportion to the drift', () => {
  const ahead = nudgeRate(false, 0.010, 1); // 10 ms over 0.3 s: 3.33 % slower
  assert.equal(ahead.nudging, true);
  assert.equal(ahead.rate, 0.9667);
  const behind = nudgeRate(false, -0.006, 1);
  assert.equal(behind.rate, 1.02);
});

test('the nudge is relative to the group rate', () => {
  assert.equal(nudgeRate(false, 0.010, 2).rate, 1.9333);
  assert.equal(nudgeRate(false, -0.010, 0.5).rate, 0.5167);
});

test('the rate never moves more than 6 %, however large the drift', () => {
  for (const drift of [0.05, 0.2, 0.249, 5]) {
    assert.equal(nudgeRate(false, drift, 1).rate, 0.94, `ahead ${drift}`);
    assert.equal(nudgeRate(false, -drift, 1).rate, 1.06, `behind ${drift}`);
  }
  assert.equal(THRESHOLDS.nudgeMax, 0.06);
});

test('a nudge, once begun, goes on down to 1 ms (no flicker around 3 ms)', () => {
  assert.equal(nudgeRate(true, 0.002, 1).nudging, true);
  assert.equal(nudgeRate(false, 0.002, 1).nudging, false);
  const ended = nudgeRate(true, 0.0009, 1.25);
  assert.deepEqual(ended, { nudging: false, rate: 1.25 });
});

test('rates are rounded to 1e-4, so tiny changes do not churn the video', () => {
  assert.equal(roundRate(1.000049), 1);
  assert.equal(roundRate(0.96666666), 0.9667);
});

test('one odd reading moves neither the median nor the rate', () => {
  let readings = [];
  let drift;
  for (const raw of [0.0005, 0.3, -0.0002]) ({ drifts: readings, drift } = addDriftReading(readings, raw));
  assert.equal(drift, 0.0005);
  assert.equal(nudgeRate(false, drift, 1).nudging, false);
  assert.equal(readings.length, DRIFT_WINDOW);
});

test('a seek needs both the last reading and the median beyond 250 ms', () => {
  assert.equal(needsRejoin(0.3, 0.001), false); // one odd reading
  assert.equal(needsRejoin(0.001, 0.3), false); // the video already came back
  assert.equal(needsRejoin(0.26, 0.26), true);
  assert.equal(needsRejoin(-0.26, -0.26), true);
  assert.equal(needsRejoin(0.25, 0.25), false);
});

// MARK: the loop closed on a simulated video

/** A player started in step with a group playing since T0 - 5 s. */
function started(options) {
  const sim = new SimulatedPlayer(options);
  const timeline = playing(100, T0 - 5000);
  sim.open(roomState(3, { status: 'playing', position: 100, at: T0 - 5000 }));
  sim.until(() => sim.core.running && !sim.core.verify && !sim.core.join);
  sim.advance(500);
  return { sim, timeline };
}

test('a video 40 ms ahead is brought back under 1 ms by a nudge, without a seek', () => {
  const { sim, timeline } = started();
  const seeks = sim.count('seek');
  sim.jump(0.040);
  sim.advance(200);
  const rate = sim.video.playbackRate;
  assert.ok(rate < 1 && rate >= 0.94, `rate ${rate} while ahead`);
  sim.advance(3000);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1, `drift ${sim.driftMs(timeline)} ms`);
  assert.equal(sim.video.playbackRate, 1);
  assert.equal(sim.count('seek'), seeks);
  assert.ok(sim.rates.every((r) => r.rate >= 0.94 && r.rate <= 1.06));
});

test('a video 60 ms behind catches up by playing at most 6 % faster', () => {
  const { sim, timeline } = started();
  sim.jump(-0.060);
  sim.advance(300);
  assert.equal(sim.video.playbackRate, 1.06);
  sim.advance(3000);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1);
});

test('a video whose clock runs 0.3 % fast stays within a few ms for a minute, without a seek', () => {
  const { sim, timeline } = started({ speed: 1.003 });
  const seeks = sim.count('seek');
  let worst = 0;
  for (let i = 0; i < 600; i++) {
    sim.advance(100);
    worst = Math.max(worst, Math.abs(sim.driftMs(timeline)));
  }
  assert.ok(worst < 5, `worst drift ${worst.toFixed(2)} ms`);
  assert.equal(sim.count('seek'), seeks);
});

test('drift beyond 250 ms is re-joined with one seek, then held in step', () => {
  const { sim, timeline } = started();
  const seeks = sim.count('seek');
  sim.jump(-0.8);
  sim.advance(3000);
  assert.equal(sim.count('seek'), seeks + 1);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1.5, `drift ${sim.driftMs(timeline)} ms`);
  assert.ok(sim.notes.some((n) => n.startsWith('drift -') && n.endsWith('re-join')));
});

// MARK: with sound: pulses

const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} against ${b}`);

test('with sound, a pulse from rate 1 makes up the drift and the cost of leaving rate 1 and coming back', () => {
  const behind = pulseFor(-0.010, 1, 0.008); // gain 10 ms + 2 x 8 ms
  near(behind.gain, 0.026, 'gain');
  assert.equal(behind.rate, 1 + PULSE.boost);
  near(behind.ms, 104, 'ms');
  // 5 ms ahead: the pulse itself loses 16 ms, so it plays faster, for 11 ms of gain
  const slightlyAhead = pulseFor(0.005, 1, 0.008);
  near(slightlyAhead.gain, 0.011, 'gain');
  assert.equal(slightlyAhead.rate, 1.25);
  near(slightlyAhead.ms, 44, 'ms');
  // 30 ms ahead: slower, for what the cost does not already take
  const farAhead = pulseFor(0.030, 1, 0.008);
  near(farAhead.gain, -0.014, 'gain');
  assert.equal(farAhead.rate, 0.75);
  near(farAhead.ms, 56, 'ms');
});

test('a small pulse is gentler and lasts PULSE.minMs; none within PULSE.from; no cost between rates other than 1', () => {
  const small = pulseFor(0.0135, 1, 0.008); // gain 2.5 ms
  near(small.ms, PULSE.minMs, 'ms');
  assert.equal(small.rate, roundRate(1 + 0.0025 / 0.04));
  assert.equal(pulseFor(PULSE.from / 2, 1, 0.008), null);
  assert.equal(pulseFor(NaN, 1, 0.008), null);
  const fast = pulseFor(-0.010, 1.5, 0.008);
  near(fast.gain, 0.010, 'gain');
});

test('the cost is learned from where each pulse landed, within bounds', () => {
  // To gain 26 ms by its rate, from 10 ms behind: it landed 4 ms behind, so its start and stop cost 10 ms each.
  near(costAfterPulse(0.008, { gain: 0.026, before: -0.010, after: -0.004 }), 0.008 + 0.002 * PULSE.learn, 'cost');
  assert.equal(costAfterPulse(0.008, { gain: 2, before: 0, after: 0 }), PULSE.cost.max);
  assert.equal(costAfterPulse(0.008, { gain: -2, before: 0, after: 0 }), PULSE.cost.min);
  assert.equal(costAfterPulse(0.008, { gain: NaN, before: 0, after: 0 }), 0.008);
});

test('a video with sound 20 ms behind is brought back by a pulse or two, not by nudges that each cost it 12 ms', () => {
  for (const sound of ['sound', 'silent']) {
    const sim = new SimulatedPlayer({ sound, rateCostMs: 12 });
    const timeline = playing(100, T0 - 10000);
    sim.open(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
    sim.until(() => sim.core.running && !sim.core.verify);
    sim.advance(1000);
    sim.jump(-0.020);
    const from = sim.rates.length;
    sim.advance(3000);
    const changes = sim.rates.length - from;
    if (sound === 'sound') {
      assert.ok(Math.abs(sim.driftMs(timeline)) < PULSE.from * 1000, `drift ${sim.driftMs(timeline)} ms`);
      assert.ok(changes <= 6, `${changes} changes of rate`);
      // learned from each landing, toward the 12 ms it really costs
      assert.ok(sim.core.pulseCost > PULSE.cost.initial + 0.0005 && sim.core.pulseCost <= 0.012, `learned ${sim.core.pulseCost}`);
    } else {
      // The proportional nudge, under the same cost, changes the rate at every reading.
      assert.ok(changes > 6, `${changes} changes of rate`);
    }
  }
});
