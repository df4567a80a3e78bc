// Where a clock with sound can start: on a block of the audio output.
//
// A <video> with a sound track runs on its audio output's clock, and in
// Chromium that output renders in blocks (1024 frames at 44.1 or 48 kHz: 23.2
// or 21.3 ms) that go on while the page plays anything, and for some seconds
// after (about 10 here). A start after play() does not scatter at random: its
// clock starts on the first block boundary at least a fixed delay after the
// call (`pipeline`, about 70 ms here), and a stream that had stopped starts
// afresh, a fixed time after the call (about 48 ms), on a new grid
// (docs/benchmarks.md, "Browser with sound"). So once one start has shown
// where the boundaries fall, and a few have bounded the delay, a start can be
// placed on a boundary exactly: on the first one after the instant, from where
// the timeline is then, with play() called half a block inside the window
// that lands on it. What a start proves wrong (two in a row off the grid, as
// another browser's may be) turns this off, and the page starts as it would
// without it (follow.js: PREROLL instead).
//
// Times are the page's monotonic ms (performance.now()).

export const GRID = Object.freeze({
  warmMs: 5000, // an output idle longer than this may have stopped: a start would be a fresh one
  tookMs: [20, 400], // a start whose clock moved sooner or later than this after play() teaches nothing
  onGridMs: 1.5, // a start this close to a boundary is on it
  missesOff: 2, // starts off the grid in a row that turn this off
  warmupMs: 150, // a warm-up's play: its clock has started and run by then (follow.js: warmUp)
  seekMs: 60, // what a start allows for its seek to where the timeline is at the boundary
});

/** The output's block, ms, at the output's sample rate: Chromium's choice for
 *  media playback (about 20 ms, up to a power of two frames). Null when the
 *  rate is not known. */
export function blockMs(outputRate) {
  if (!(outputRate >= 3000 && outputRate <= 768000)) return null;
  return (2 ** Math.ceil(Math.log2(0.02 * outputRate)) / outputRate) * 1000;
}

/**
 * What a clock start at `start`, after a call at `called`, teaches: where the
 * boundaries fall (the grid moves to this start), and, when the output was
 * still running and the start is on its grid, the bounds of the delay
 * (`lo` < pipeline <= `hi`: the start is the first boundary at least the
 * delay after the call).
 * @param {object|null} grid the last one (null: none yet)
 * @returns {{ anchor, period, heard, lo, hi, misses, off }}
 */
export function gridAfterStart(grid, { start, called, period }) {
  if (!(start - called >= GRID.tookMs[0] && start - called <= GRID.tookMs[1])) return grid;
  if (!grid) {
    return period ? { anchor: start, period, heard: start, lo: -Infinity, hi: Infinity, misses: 0, off: false } : null;
  }
  if (grid.off) return grid;
  if (called - grid.heard >= GRID.warmMs) return { ...grid, anchor: start, heard: start };
  const cycles = (start - grid.anchor) / grid.period;
  const offBy = Math.abs(cycles - Math.round(cycles)) * grid.period;
  if (offBy > GRID.onGridMs) {
    const misses = grid.misses + 1;
    return { ...grid, anchor: start, heard: start, misses, off: misses >= GRID.missesOff };
  }
  const took = start - called;
  let lo = Math.max(grid.lo, took - grid.period);
  let hi = Math.min(grid.hi, took);
  // Bounds that no longer meet (the delay changed): this start's alone.
  if (!(lo < hi)) [lo, hi] = [took - grid.period, took];
  return { ...grid, anchor: start, heard: start, lo, hi, misses: 0 };
}

/** Whether the output is running, by `monotonic`, on the grid last seen. */
export function gridWarm(grid, monotonic) {
  return !!grid && !grid.off && monotonic - grid.heard < GRID.warmMs;
}

/**
 * A start on the first boundary at or after `startAt` (monotonic ms): `at`,
 * and how long before it to call play() (`latency`: the middle of the window
 * that lands on it). Null until the delay is bounded.
 */
export function alignedStart(grid, startAt) {
  if (!grid || grid.off || !(grid.hi < Infinity)) return null;
  const at = grid.anchor + Math.ceil((startAt - grid.anchor) / grid.period - 1e-9) * grid.period;
  const lo = Math.max(grid.lo, grid.hi - grid.period);
  return { at, latency: (lo + grid.hi) / 2 + grid.period / 2 };
}
