// The sync thresholds the page shares with the desktop player (cowatch watch).
// Written from Sources/CowatchPlayer/SyncThresholds.swift, their one declaration;
// Tests/CowatchPlayerTests/SyncThresholdsTests.swift holds this file to it.
// Change them there, and write this file again from `SyncThresholds.javaScript`.

/** seek, nudgeStart, nudgeStop, nudgeMax, hold: see drift.js's THRESHOLDS, which adds the page's nudgeHorizon */
export const SHARED_THRESHOLDS = Object.freeze({ seek: 0.25, nudgeStart: 0.003, nudgeStop: 0.001, nudgeMax: 0.06, hold: 0.0001 });

/** The median of this many drift readings drives the nudge (robust to one odd reading). */
export const DRIFT_WINDOW = 3;

/** The last few ms before a scheduled play() are waited out by spinning: setTimeout alone fires a few ms early or late. */
export const SPIN_MS = 10;

/** A scheduled start that fires later than this (a busy main thread) is planned again; a smaller delay is left to the drift correction. */
export const LATE_START_MS = 100;

/** Learned bounds of the latency of play(), ms. The cap is high enough for a clip with sound (docs/benchmarks.md). */
export const PLAY_LATENCY_MS = Object.freeze({ initial: 5, min: 0, max: 150 });

/** How far ahead a start that must seek first is planned, ms (learned). */
export const JOIN_LEAD_MS = Object.freeze({ initial: 350, min: 200, max: 4000 });

/** A `waiting` is a stall worth reporting only when the video is still stuck this long after it. */
export const STALL_CONFIRM_MS = 500;

/** While a stallRecovery suspension lasts, /ready is said again this often. */
export const READY_REPEAT_MS = 3000;
