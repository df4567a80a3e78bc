// The server clock's offset from this page's clock, estimated from round trips.
//
// A `/time` sample sent at local time t0, answered with server time s (whole
// milliseconds, truncated) and received at t1 says: the server read its clock
// somewhere between t0 and t1, and its clock then showed between s and s + 1. So
//
//     s - t1  <  offset (server - local)  <  s + 1 - t0
//
// Samples that waited (a busy main thread, a queue in the network, on either
// leg) give wide intervals; quick ones narrow ones. The estimate is the middle
// of the intersection of the recent samples' intervals, which the quickest
// samples bound from both sides: a sample slow on the way out and one slow on
// the way back each cut one side. When the intervals do not all meet (a clock
// that drifts, or was stepped), it falls back to the quickest samples' midpoints.

/** Samples older than this are forgotten: two clocks drift apart by up to a few
 *  hundredths of a millisecond per second. */
export const WINDOW_MS = 30000;
export const WINDOW_MAX = 40;
/** The fallback: the mean of the midpoints of this many quickest samples. */
export const BEST = 3;
/** A round trip longer than this is not one of ours, or useless. */
const MAX_RTT_MS = 10000;

/**
 * A sample from one round trip (local ms t0 and t1, server ms s), or null when
 * it cannot be one of ours: `{ low, high, rtt, at }`, the offset being within
 * [low, high].
 */
export function sampleFrom(t0, s, t1) {
  const rtt = t1 - t0;
  if (!(rtt >= 0) || rtt > MAX_RTT_MS) return null;
  return { low: s - t1, high: s + 1 - t0, rtt, at: t1 };
}

/** The samples to estimate from once `sample` is added: the last WINDOW_MAX,
 *  and none older than WINDOW_MS (keeping at least BEST). */
export function keepRecent(samples, sample) {
  const kept = [...samples, sample];
  while (kept.length > WINDOW_MAX || (kept.length > BEST && sample.at - kept[0].at > WINDOW_MS)) kept.shift();
  return kept;
}

/**
 * The offset (server - local, ms), the half-width of the interval it is known
 * in (`uncertainty`), and the quickest round trip, from at least one sample.
 * @returns {{ offset: number, uncertainty: number, rtt: number }}
 */
export function estimateOffset(samples) {
  const low = Math.max(...samples.map((s) => s.low));
  const high = Math.min(...samples.map((s) => s.high));
  const quickest = [...samples].sort((a, b) => a.rtt - b.rtt);
  const rtt = quickest[0].rtt;
  if (low <= high) return { offset: (low + high) / 2, uncertainty: (high - low) / 2, rtt };
  const best = quickest.slice(0, BEST);
  return {
    offset: best.reduce((sum, s) => sum + (s.low + s.high) / 2, 0) / best.length,
    uncertainty: (best[0].high - best[0].low) / 2,
    rtt,
  };
}
