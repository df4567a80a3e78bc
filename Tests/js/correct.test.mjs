// Drift correction by capability (sync/correct.js): the <video> nudges as
// before; a player with a few rates and coarse positions (YouTube) is kept on
// the timeline by corrective seeks that never chase their own noise.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  correctionFor, firstSeekLatency, holdTolerance, learnSeekLatency, medianDrift, playableRate, rateNotice, SEEK_LATENCY_MS, seekDecision, seekPolicy,
} from '../../Sources/CowatchWeb/Web/static/sync/correct.js';
import { VIDEO_CAPABILITIES } from '../../Sources/CowatchWeb/Web/static/players/player.js';
import { member, playing, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const YOUTUBE_RATES = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
// A player coarser than players/youtube.js declares (25 ms): the rules must hold for any precision.
const COARSE = Object.freeze({
  rates: YOUTUBE_RATES, rateRange: [0.25, 2], positionPrecision: 0.05, positionUpdateMs: 250, reportsStalls: true, exactSeek: false,
});

test('continuous rates nudge; a list of rates (or none) is corrected by seeking', () => {
  assert.equal(correctionFor(VIDEO_CAPABILITIES), 'nudge');
  assert.equal(correctionFor(COARSE), 'seek');
  assert.equal(correctionFor({ ...COARSE, rates: [1] }), 'seek');
});

test('a rate the player cannot play: the nearest it can, ties toward 1, said in words', () => {
  assert.equal(playableRate(COARSE, 1.4), 1.5);
  assert.equal(playableRate(COARSE, 1.125), 1); // halfway between 1 and 1.25: toward 1
  assert.equal(playableRate(COARSE, 0.875), 1);
  assert.equal(playableRate(COARSE, 3), 2);
  assert.equal(playableRate(COARSE, 0.1), 0.25);
  assert.equal(playableRate(COARSE, 1.25), 1.25);
  assert.equal(playableRate(VIDEO_CAPABILITIES, 1.4), 1.4);
  assert.equal(rateNotice(COARSE, 1.25), null);
  assert.match(rateNotice(COARSE, 1.4), /cannot play at 1.4×: it plays at 1.5×/);
  assert.equal(rateNotice(VIDEO_CAPABILITIES, 1.4), null);
});

test('the thresholds follow from the precision and the update interval', () => {
  const policy = seekPolicy(COARSE);
  assert.equal(policy.start, 0.2); // four precisions
  assert.equal(policy.window, 11); // readings over two updates, at the 50 ms tick
  assert.equal(policy.settleMs, 500);
  assert.equal(policy.minIntervalMs, 2000);
  // A fine player still gets at least 0.1 s and the floors.
  assert.deepEqual(seekPolicy({ ...COARSE, positionPrecision: 0.001, positionUpdateMs: 0 }),
    { start: 0.1, window: 3, settleMs: 250, minIntervalMs: 2000 });
  assert.equal(holdTolerance(COARSE), 0.05);
  assert.equal(holdTolerance(VIDEO_CAPABILITIES), 0.0001);
});

test('a corrective seek needs a full window, both the median and the last reading beyond start, and time since the last', () => {
  const policy = seekPolicy(COARSE);
  const base = { policy, drift: 0.3, raw: 0.3, readings: policy.window, monotonic: 10_000, lastFixAt: 0 };
  assert.equal(seekDecision(base), 'seek');
  assert.equal(seekDecision({ ...base, readings: policy.window - 1 }), 'keep');
  assert.equal(seekDecision({ ...base, raw: 0.1 }), 'keep');
  assert.equal(seekDecision({ ...base, drift: 0.19 }), 'keep');
  assert.equal(seekDecision({ ...base, lastFixAt: 9000 }), 'keep');
  assert.equal(seekDecision({ ...base, drift: -0.3, raw: -0.25 }), 'seek');
  let drifts = [];
  let drift;
  for (const raw of [0.01, 0.9, -0.02]) ({ drifts, drift } = medianDrift(drifts, raw, 3));
  assert.equal(drift, 0.01);
});

test('the seek latency learns from where seeks land, half the error at a time, within bounds', () => {
  // Landed 100 ms behind at rate 1: the seek took 100 ms longer than assumed.
  assert.equal(learnSeekLatency(300, -0.1, 1), 350);
  assert.equal(learnSeekLatency(300, 0.1, 1), 250);
  assert.equal(learnSeekLatency(300, -0.1, 2), 325);
  assert.equal(learnSeekLatency(100, 10, 1), SEEK_LATENCY_MS.min);
  assert.equal(learnSeekLatency(2900, -10, 1), SEEK_LATENCY_MS.max);
  // The first landing replaces the guess whole.
  assert.equal(learnSeekLatency(300, 0.25, 1, 1), 50);
  assert.equal(firstSeekLatency(40), 40);
  assert.equal(firstSeekLatency(9000), SEEK_LATENCY_MS.initial);
});

test('before any corrective seek, the seek latency is what a scheduled start\'s seek took', () => {
  const sim = coarsePlayer({ seekMs: 180 });
  sim.open(roomState(2, { status: 'playing', position: 30, at: T0 - 2000 }), member()); // a late join: seeks first
  sim.until(() => sim.core.running && !sim.core.verify, 10_000);
  assert.equal(sim.core.seekLandings, 0);
  assert.ok(Math.abs(sim.core.seekLatency - 180) <= 60, `seek latency ${sim.core.seekLatency.toFixed(0)} ms`);
});

/** A YouTube-like player: coarse readings, quarter-step rates, slow seeks. */
function coarsePlayer(options = {}) {
  return new SimulatedPlayer({ capabilities: COARSE, readingError: 0.05, seekMs: 400, playLatencyMs: 60, ...options });
}

function trueDriftMs(sim, timeline) {
  return sim.driftMs(timeline);
}

test('a coarse player joins, then stays within the target band without seeking in a loop', () => {
  const sim = coarsePlayer();
  const timeline = playing(10, T0 + 500);
  sim.open(roomState(2, { status: 'playing', position: 10, at: T0 + 500 }), member());
  sim.until(() => sim.core.running && !sim.core.verify, 10_000);
  const since = sim.now;
  let worst = 0;
  for (let i = 0; i < 60_000; i += 10) {
    sim.advance(10);
    if (!sim.core.fix && !sim.video.seeking) worst = Math.max(worst, Math.abs(trueDriftMs(sim, timeline)));
  }
  const seeks = sim.count('seek', since);
  assert.ok(seeks <= 2, `${seeks} corrective seeks in a minute of noise alone`);
  assert.ok(worst <= seekPolicy(COARSE).start * 1000, `worst drift ${worst.toFixed(1)} ms`);
  assert.equal(sim.count('rate', since), 0, 'no rate churn');
});

test('a coarse player that runs slow is brought back by corrective seeks, and learns the seek latency', () => {
  const sim = coarsePlayer({ speed: 0.97, seekMs: 700 }); // 30 ms behind every second; seeks take 0.7 s
  const timeline = playing(0, T0 + 500);
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 + 500 }), member());
  sim.until(() => sim.core.running && !sim.core.verify, 10_000);
  const since = sim.now;
  let worst = 0;
  for (let i = 0; i < 120_000; i += 10) {
    sim.advance(10);
    if (sim.now - since > 20_000 && !sim.core.fix && !sim.video.seeking) worst = Math.max(worst, Math.abs(trueDriftMs(sim, timeline)));
  }
  const seeks = sim.count('seek', since);
  // 3.6 s of drift in two minutes, corrected in steps of at most the band.
  assert.ok(seeks >= 10 && seeks <= 40, `${seeks} corrective seeks`);
  // Within the band (and a little: the drift keeps growing between a reading and the seek).
  assert.ok(worst <= seekPolicy(COARSE).start * 1000 + 60, `worst drift ${worst.toFixed(1)} ms`);
  assert.ok(sim.core.seekLatency > 450, `seek latency learnt ${sim.core.seekLatency.toFixed(0)} ms`);
  assert.equal(sim.core.mode, 'playing');
});

test('a room rate the player cannot play: the nearest rate, kept in step by seeks, and the viewer told', () => {
  const sim = coarsePlayer({ seekMs: 700 });
  const timeline = playing(0, T0 + 500, 1.4);
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 + 500, rate: 1.4 }), member());
  sim.until(() => sim.core.running && !sim.core.verify, 10_000);
  assert.equal(sim.video.playbackRate, 1.5);
  assert.match(sim.core.notice, /plays at 1.5×/);
  const since = sim.now;
  let worst = 0;
  for (let i = 0; i < 60_000; i += 10) {
    sim.advance(10);
    // The first landings teach the seek latency (a guess of 300 ms at first): the band holds once learnt.
    if (sim.now - since > 10_000 && !sim.core.fix && !sim.video.seeking) worst = Math.max(worst, Math.abs(trueDriftMs(sim, timeline)));
  }
  const seeks = sim.count('seek', since);
  // 0.1 s of drift a second, a band of 0.4 s crossed each time: a seek every few seconds.
  assert.ok(seeks >= 8 && seeks <= 30, `${seeks} corrective seeks`);
  assert.ok(worst <= seekPolicy(COARSE).start * 1000 + 60, `worst drift ${worst.toFixed(1)} ms`);
  // The drift the rate adds on purpose is told apart from the seek's own latency.
  assert.ok(Math.abs(sim.core.seekLatency - 700) < 120, `seek latency learnt ${sim.core.seekLatency.toFixed(0)} ms`);
});

test('a coarse player holds a paused position within its precision, with one seek', () => {
  const sim = coarsePlayer();
  sim.open(roomState(2, { status: 'paused', position: 42 }), member());
  sim.advance(3000);
  assert.equal(sim.count('seek'), 1);
  assert.equal(sim.core.mode, 'paused');
  assert.ok(Math.abs(sim.video.currentTime - 42) <= 0.05);
});

test('the <video> (no capabilities in its readings) still nudges: no corrective seeks for small drift', () => {
  const sim = new SimulatedPlayer({ speed: 1.002 });
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 + 500 }), member());
  sim.until(() => sim.core.running && !sim.core.verify, 10_000);
  const since = sim.now;
  sim.advance(20_000);
  assert.equal(sim.count('seek', since), 0);
  assert.ok(sim.count('rate', since) > 0);
  assert.ok(Math.abs(sim.driftMs(playing(0, T0 + 500))) < 5);
});
