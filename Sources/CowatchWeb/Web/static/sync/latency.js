// What the player learns from its own starts: the latency of play() (so the
// video leaves its position at the planned instant, not a few ms after), and the
// join lead (how far ahead a start that must seek first is planned).

import { JOIN_LEAD_MS, PLAY_LATENCY_MS } from './thresholds.js';
import { clamp } from './timeline.js';

/** Learned bounds, ms (thresholds.js). The cap of PLAY_LATENCY_MS is high enough
 *  for a clip with sound: there the video's clock is the audio's, and it starts
 *  moving only once the audio output has started, 65-100 ms after play() in
 *  headless Chromium (docs/benchmarks.md). */
export { JOIN_LEAD_MS, PLAY_LATENCY_MS };
/** An error at least this large is not the latency of play() (a hiccup, a seek
 *  that moved the video): it is shown, not learned from. Above the largest
 *  latency a clip with sound shows, so that one is learned. */
export const LEARNABLE_ERROR_MS = 150;
/** The latency is the median of what the last this many learnable starts took
 *  from play() to the video moving: one hiccup among them does not move it, and
 *  a latency that is really there (a clip with sound) is followed from the first
 *  start on, not approached over several. */
export const LATENCY_SAMPLES = 5;
/** A start is measured (and the play() latency learned) this long after it. */
export const VERIFY_AFTER_MS = 200;
/** How long a probe plays (players/player.js: probe): a start with sound moves
 *  its clock 75 to 95 ms after play() here (docs/benchmarks.md), and the
 *  clock is read once it has run steadily for more than that. */
export const PROBE_MS = 250;

/**
 * The latency of play() differs with what the video's clock is (players/video.js:
 * soundOf): the system clock for a silent video (a few ms), the audio output's for
 * one with sound (tens of ms, more on a slow output), and another path again when
 * it is muted. The first start of a kind with sound would be late by all of it, so
 * that kind is measured before its first start, by a probe, and learned from then on.
 */
export function needsProbe(sound, taken = []) {
  return (sound === 'sound' || sound === 'muted') && taken.length === 0;
}

/** How long the probe's clock took to start after its play(), ms: extrapolated
 *  back from its reading, as measureStart does for a start. */
export function probedLatency({ from, calledAt, readAt, currentTime, rate = 1 }) {
  return readAt - ((currentTime - from) / rate) * 1000 - calledAt;
}

/** What a probe that took `took` ms teaches: the latency, and its first sample. */
export function latencyAfterProbe(took) {
  const sample = clamp(took, PLAY_LATENCY_MS.min, PLAY_LATENCY_MS.max);
  return { playLatency: sample, taken: [sample] };
}

const lead = (ms) => clamp(ms, JOIN_LEAD_MS.min, JOIN_LEAD_MS.max);

/** Seeking took longer than the lead allowed: lead further ahead next time. */
export function leadAfterMiss(joinLead) {
  return lead(joinLead * 1.6);
}

/** The main thread was busy past the instant: a little further ahead. */
export function leadAfterLateStart(joinLead) {
  return lead(joinLead * 1.3);
}

/** A seek with buffering took `tookMs`: the lead follows twice that, plus a
 *  margin, smoothed over starts. */
export function leadAfterSeek(joinLead, tookMs) {
  return lead(joinLead * 0.7 + (tookMs * 2 + 150) * 0.3);
}

/**
 * When did the video really leave `position`? Extrapolated back from a reading
 * (`currentTime` at server time `now`) taken a little after the start.
 * @param {{ startAt: number, position: number, rate: number }} start the plan
 * @returns {{ at: number, actual: number, error: number }} error = actual - planned, ms
 */
export function measureStart(start, now, currentTime) {
  const actual = now - ((currentTime - start.position) / start.rate) * 1000;
  return { at: start.startAt, actual, error: actual - start.startAt };
}

/**
 * The part of a start's error that is the player's own (its play() latency
 * mispredicted), to learn from. A start whose play() was called `callLate` ms
 * after its plan (a busy main thread) is that much later through no fault of
 * the player. One made up by a catch-up played `1 + boost` times faster from
 * the call for `boostedMs`: the video gained `boost` times the part of that
 * span it spent moving, which began `playLatency` plus its own error after the
 * call. Solved for that error (the measured error grows with it, so there is
 * one answer).
 * @param {number} error the start's measured error, ms (measureStart)
 * @param {{ callLate?: number, boost?: number, boostedMs?: number, playLatency?: number }} start
 */
export function playerError(error, { callLate = 0, boost = 0, boostedMs = 0, playLatency = 0 } = {}) {
  const own = error - callLate;
  if (!(boost > 0)) return own;
  const moving = boostedMs - playLatency; // the boosted span the video moved in, were its latency as planned
  const caughtUp = (own + boost * moving) / (1 + boost);
  return caughtUp < moving ? caughtUp : own; // it began moving after the catch-up ended: nothing gained
}

/** The median of numbers (the mean of the middle two for an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * The play() latency learned from a start measured `error` ms late (negative:
 * early) when play() was called `playLatency` ms ahead of the instant: that start
 * took `playLatency + error` from play() to its clock moving. The latency becomes
 * the median of the last LATENCY_SAMPLES such durations, within PLAY_LATENCY_MS.
 * @param {number[]} taken durations of the previous learnable starts, ms, oldest first
 * @returns {{ playLatency: number, taken: number[] }} the latency and the durations kept
 */
export function latencyAfterStart(playLatency, error, taken = []) {
  if (!(Math.abs(error) < LEARNABLE_ERROR_MS)) return { playLatency, taken };
  const kept = [...taken, playLatency + error].slice(-LATENCY_SAMPLES);
  return { playLatency: clamp(median(kept), PLAY_LATENCY_MS.min, PLAY_LATENCY_MS.max), taken: kept };
}
