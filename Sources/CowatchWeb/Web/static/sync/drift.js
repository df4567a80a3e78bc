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
