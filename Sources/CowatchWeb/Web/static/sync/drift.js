// Drift, and the rate nudge that absorbs small drift.
//
// Drift is `video.currentTime - where the timeline says`, in seconds: positive
// when the video is ahead. Large drift is re-joined with a scheduled start (a
// seek, start.js); small drift is absorbed by playing slightly slower or
// faster than the group, which a viewer does not notice.

import { DRIFT_WINDOW, SHARED_THRESHOLDS } from './thresholds.js';

export { DRIFT_WINDOW };

/** The thresholds shared with the desktop player (thresholds.js: seek, beyond
 *  which a scheduled start re-joins; nudgeStart and nudgeStop, where a nudge
 *  begins and ends; nudgeMax, the largest change of rate; hold, how far a held
 *  player may be from its position), and the page's own nudgeHorizon: a nudge
 *  aims to absorb the drift within about this many seconds (a proportional
 *  controller: rate change = drift / horizon). The desktop player's is longer:
 *  mpv plays a change of speed only after its queued audio (Steadiness.swift). */
export const THRESHOLDS = Object.freeze({ ...SHARED_THRESHOLDS, nudgeHorizon: 0.3 });

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Adds a raw reading to the recent ones: `{ drifts, drift }`, drift being
 *  their median. */
export function addDriftReading(drifts, raw) {
  const recent = [...drifts, raw].slice(-DRIFT_WINDOW);
  return { drifts: recent, drift: median(recent) };
}

/** A re-join (a seek) only when both the last reading and the median say the
 *  video is far off: one odd reading does not cost a seek, and neither does a
 *  median still remembering a jump the video already made. */
export function needsRejoin(raw, drift) {
  return Math.abs(raw) > THRESHOLDS.seek && Math.abs(drift) > THRESHOLDS.seek;
}

/** Rounded to 1e-4: no churn on the video's rate for tiny changes. */
export function roundRate(rate) {
  return Math.round(rate * 10000) / 10000;
}

/**
 * The rate to play at for `drift` on a timeline moving at `rate`, and whether a
 * nudge is on (`nudging` says whether it was: a nudge begins above nudgeStart
 * and ends below nudgeStop, so it does not flicker around one threshold).
 * @returns {{ nudging: boolean, rate: number }}
 */
export function nudgeRate(nudging, drift, rate) {
  const size = Math.abs(drift);
  if (size < (nudging ? THRESHOLDS.nudgeStop : THRESHOLDS.nudgeStart)) {
    return { nudging: false, rate: roundRate(rate) };
  }
  const change = Math.min(THRESHOLDS.nudgeMax, Math.max(-THRESHOLDS.nudgeMax, drift / THRESHOLDS.nudgeHorizon));
  return { nudging: true, rate: roundRate(rate * (1 - change)) };
}

/**
 * A video with a sound track is not nudged: it is corrected by pulses. Its
 * clock is the audio's, and a rate other than 1 is played by the browser's
 * time-stretcher (the pitch kept), whose every start and stop costs the clock
 * the same few ms: 8 to 11 in Chromium (docs/benchmarks.md, "Rates with
 * sound"). A proportional nudge, which leaves rate 1 and comes back to it with
 * each small drift, loses that much every time and chases its own losses. A
 * pulse plays `boost` faster or slower for as long as makes up the drift and
 * the cost of its start and stop together, the cost being learned from what
 * each pulse did (costAfterPulse). A rate also takes effect only once the
 * audio queued at the old one has played (170 to 185 ms there): the drift is
 * read again `quietMs` after a pulse ends.
 *   from   a drift this large (s) is corrected: a pulse lands within about 3 ms
 *          (docs/benchmarks.md), so a smaller one would only be moved about
 *   upTo   a larger drift (s) is nudged as before: a long pulse was seen to land
 *          tens of ms off (a quarter of its length), each window differently,
 *          where windows nudged together stay together; the pulses finish it
 *   learn  how much of what one pulse showed moves the learned cost
 *   minMs  the shortest pulse: a shorter change of rate was seen to do nothing
 *          (the audio is stretched in blocks), so a small one is gentler and longer
 *   cost   s of media one start or stop of the time-stretcher costs: the first guess, and bounds
 *   stretchedWindow  readings whose median is the drift at a rate other than 1, where
 *          each is off the clock's line by up to ±7 ms at 1.5 (the time-stretcher
 *          plays its blocks unevenly, docs/benchmarks.md), where 3 suffice at 1
 * The cost is learned from pulses from rate 1 alone: between rates other than 1
 * the time-stretcher runs on and a change costs nothing, but comes through as
 * late, so a proportional nudge there would swing around as well.
 */
export const PULSE = Object.freeze({
  boost: 0.25, from: 0.004, upTo: 0.04, minMs: 40, quietMs: 300, learn: 0.5, cost: Object.freeze({ initial: 0.008, min: 0, max: 0.03 }),
  stretchedWindow: 9,
});

/**
 * The pulse that brings a video `drift` s off (ahead: positive) back onto a
 * timeline moving at `rate`: at `rate` (faster or slower by up to PULSE.boost)
 * for `ms` (at least PULSE.minMs), its rate gaining `gain` s of media. Leaving
 * rate 1 and coming back costs 2 x `cost`, which it makes up too; between two
 * rates other than 1 the time-stretcher runs on and costs nothing. Null within
 * PULSE.from.
 * @returns {{ rate: number, ms: number, gain: number } | null}
 */
export function pulseFor(drift, rate, cost) {
  if (!(Math.abs(drift) >= PULSE.from) || !(rate > 0)) return null;
  const gain = -drift + (rate === 1 ? 2 * cost : 0);
  const sign = gain >= 0 ? 1 : -1;
  const ms = Math.max(PULSE.minMs, (Math.abs(gain) / (rate * PULSE.boost)) * 1000);
  const boost = Math.abs(gain) / (rate * ms / 1000);
  return { rate: roundRate(rate * (1 + sign * boost)), ms, gain };
}

/**
 * What a pulse from rate 1 says of the cost: it was to gain `gain` s by its
 * rate, and the drift went from `before` to `after`; the rest was its start's
 * and stop's, together with where the drift was read (a few ms either way):
 * PULSE.learn of what this one showed, the rest what was known, within bounds.
 */
export function costAfterPulse(cost, { gain, before, after }) {
  const shown = (gain - (after - before)) / 2;
  if (!Number.isFinite(shown)) return cost;
  return Math.min(PULSE.cost.max, Math.max(PULSE.cost.min, cost + (shown - cost) * PULSE.learn));
}
