// What the player learns from its own starts: the latency of play() (so the
// video leaves its position at the planned instant, not a few ms after), and the
// join lead (how far ahead a start that must seek first is planned).

import { clamp } from './timeline.js';

/** Learned bounds, ms. */
export const PLAY_LATENCY_MS = Object.freeze({ initial: 5, min: 0, max: 60 });
export const JOIN_LEAD_MS = Object.freeze({ initial: 350, min: 200, max: 4000 });
/** How much of a start's measured error goes into the latency estimate: the
 *  error jitters by a few ms from start to start, so the estimate moves gently. */
export const LATENCY_GAIN = 0.4;
/** An error this large is not the latency of play() (a hiccup, a seek that
 *  moved the video): it is shown, not learned from. */
const LEARNABLE_ERROR_MS = 40;
/** A start is measured (and the play() latency learned) this long after it. */
export const VERIFY_AFTER_MS = 200;

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

/** The play() latency corrected by a start's error (late: call earlier). */
export function latencyAfterStart(playLatency, error) {
  if (!(Math.abs(error) < LEARNABLE_ERROR_MS)) return playLatency;
  return clamp(playLatency + error * LATENCY_GAIN, PLAY_LATENCY_MS.min, PLAY_LATENCY_MS.max);
}
