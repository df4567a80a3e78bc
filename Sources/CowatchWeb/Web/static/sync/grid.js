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
// the timeline is then, with play() called in the middle of the window that
// lands on it. The delay itself varies by a ms or two from start to start (more
// on a busy machine): the bounds come from the last few starts, and a start is
// placed only once they leave `jitterMs` of room on either side. What starts
// prove wrong (`missesOff` in a row off the grid, as another browser's may be)
// turns this off, and the page starts as it would without it (follow.js:
// PREROLL instead).
//
// Times are the page's monotonic ms (performance.now()).

export const GRID = Object.freeze({
  warmMs: 5000, // an output idle longer than this may have stopped: a start would be a fresh one
  tookMs: [20, 400], // a start whose clock moved sooner or later than this after play() teaches nothing
  onGridMs: 1.5, // a start this close to a boundary is on it
  samples: 8, // the starts on the grid whose delays bound it
  jitterMs: 3, // how much the delay may vary beyond its bounds: a placed start leaves this much room
  missesOff: 3, // starts off the grid in a row that turn this off (two were seen once, in a browser's first seconds of sound)
  warmupMs: 150, // a warm-up's play: its clock has started and run by then (follow.js: startProbe)
  warmups: 4, // at most this many before a /ready or a start: the delay is bounded within them, as a rule
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
 * still running and the start is on its grid, the bounds of the delay: each
 * such start took its delay and up to a block more (it is the first boundary
 * at least the delay after the call), so over the last `samples` of them the
 * delay is at least `lo` (the longest less a block) and at most `hi` (the
 * shortest), give or take its variation, which can leave `lo` above `hi`.
 * @param {object|null} grid the last one (null: none yet)
 * @returns {{ anchor, period, heard, took, lo, hi, misses, off }}
 */
export function gridAfterStart(grid, { start, called, period }) {
  if (!(start - called >= GRID.tookMs[0] && start - called <= GRID.tookMs[1])) return grid;
  if (!grid) {
    return period ? { anchor: start, period, heard: start, took: [], lo: -Infinity, hi: Infinity, misses: 0, off: false } : null;
  }
  if (grid.off) return grid;
  if (called - grid.heard >= GRID.warmMs) return { ...grid, anchor: start, heard: start };
  const cycles = (start - grid.anchor) / grid.period;
  const offBy = Math.abs(cycles - Math.round(cycles)) * grid.period;
  if (offBy > GRID.onGridMs) {
    const misses = grid.misses + 1;
    return { ...grid, anchor: start, heard: start, misses, off: misses >= GRID.missesOff };
  }
  const took = [...grid.took, start - called].slice(-GRID.samples);
  return {
    ...grid, anchor: start, heard: start, took, lo: Math.max(...took) - grid.period, hi: Math.min(...took), misses: 0,
  };
}

/** Whether the output is running, by `monotonic`, on the grid last seen. */
export function gridWarm(grid, monotonic) {
  return !!grid && !grid.off && monotonic - grid.heard < GRID.warmMs;
}

/** Whether the delay is bounded closely enough to place a start: the window
 *  that lands on a boundary (a block wide) holds the bounds and `jitterMs` on
 *  either side. */
export function gridBounded(grid) {
  return !!grid && !grid.off && Math.abs(grid.hi - grid.lo) <= grid.period - 2 * GRID.jitterMs;
}

/**
 * When a warm-up calls play() to learn the most (monotonic ms), or null for at
 * once: with the output running on a grid and the delay bounded loosely, on a
 * boundary less the middle of the bounds, so that the start lands on that
 * boundary when the delay is below the middle and on the next when above, and
 * either way halves them. `after`: the earliest it can be (its seek done).
 */
export function warmupCallAt(grid, after) {
  if (!gridWarm(grid, after) || !(grid.hi < Infinity) || gridBounded(grid)) return null;
  const middle = (Math.max(grid.lo, grid.hi - grid.period) + grid.hi) / 2;
  const boundary = grid.anchor + Math.ceil((after + middle - grid.anchor) / grid.period) * grid.period;
  return boundary - middle;
}

/**
 * A start on the first boundary at or after `startAt` (monotonic ms): `at`,
 * and how long before it to call play() (`latency`, so that the delay's bounds
 * sit in the middle of the window that lands on it: a call `latency` before a
 * boundary, with a delay between `latency` less a block and `latency`, starts
 * on it). Null until the delay is bounded closely enough.
 */
export function alignedStart(grid, startAt) {
  if (!gridBounded(grid)) return null;
  const at = grid.anchor + Math.ceil((startAt - grid.anchor) / grid.period - 1e-9) * grid.period;
  return { at, latency: (grid.lo + grid.hi) / 2 + grid.period / 2 };
}
