// Drift, and the rate nudge that absorbs small drift.
//
// Drift is `video.currentTime - where the timeline says`, in seconds: positive
// when the video is ahead. Large drift is re-joined with a scheduled start (a
// seek, start.js); small drift is absorbed by playing slightly slower or
// faster than the group, which a viewer does not notice.

export const THRESHOLDS = Object.freeze({
  /** Beyond this, re-join with a scheduled start (a seek). A nudge of at most
   *  nudgeMax would take more than about four seconds to absorb more. */
  seek: 0.25,
  /** Nudge when the median drift of the last ticks exceeds this. Chrome reports
   *  currentTime to 0.1 ms and the clock estimate is good to about half a ms, so
   *  3 ms is well above the noise, and small enough that players stay within a
   *  few ms of each other. */
  nudgeStart: 0.003,
  /** A nudge ends (rate exact again) once the drift is below this. */
  nudgeStop: 0.001,
  /** A nudge aims to absorb the drift within about this many seconds (a
   *  proportional controller: rate change = drift / horizon)... */
  nudgeHorizon: 0.3,
  /** ...changing the rate by at most this fraction (6 %: 0.25 s of drift is
   *  absorbed in about 4.5 s; the browser preserves the pitch). */
  nudgeMax: 0.06,
  /** A held (paused, waiting) player farther than this from the position seeks
   *  (browsers land exactly on the requested time, so every player shows the
   *  same frame). */
  hold: 0.0001,
});

/** Median of this many drift readings drives the nudge (robust to one odd read). */
export const DRIFT_WINDOW = 3;

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
