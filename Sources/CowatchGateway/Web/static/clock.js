// The server's clock, as seen from this page.
//
// The room speaks server time (epoch milliseconds): a coordinated start says
// "play at `at`", and a playing state's position is extrapolated from `at`. A
// page's own clock may be off by seconds, so it estimates the offset with
// `/time <client-ms>` round trips, NTP style. A sample sent at local time t0,
// answered with server time s (whole milliseconds, truncated) and received at
// t1 says: the server read its clock somewhere between t0 and t1, and its clock
// then showed between s and s + 1. So
//
//     s - t1  <  offset (server - local)  <  s + 1 - t0
//
// Samples that waited (a busy main thread, a queue in the network) give wide
// intervals; quick ones narrow ones. The estimate is the middle of the
// intersection of the recent samples' intervals, which the quickest samples
// bound from both sides. When the intervals do not all meet (a clock that
// drifts, or was stepped), it falls back to the quickest samples' midpoints.
//
// The local clock is performance.timeOrigin + performance.now(): sub-millisecond
// and monotonic, unlike Date.now(), which can be stepped under our feet.

/** Samples sent in a burst when a connection opens: enough to find a quick one. */
const BURST = 8;
const BURST_SPACING_MS = 40;
/** Then one sample every half second for a while (a page is busiest just after
 *  it opens, so its first samples are often slow), then every few seconds to
 *  follow slow drift; all well under the server's 20 lines per second. */
const EARLY_MS = 500;
const EARLY_FOR_MS = 10000;
const RESAMPLE_MS = 2000;
/** Samples older than this are forgotten: two clocks drift apart by up to a few
 *  hundredths of a millisecond per second. */
const WINDOW_MS = 30000;
const WINDOW_MAX = 40;
/** The fallback: the mean of the midpoints of this many quickest samples. */
const BEST = 3;

export function localNow() {
  return performance.timeOrigin + performance.now();
}

export class ServerClock extends EventTarget {
  /** @param {(line: string) => boolean} send sends a line to the server */
  constructor(send) {
    super();
    this.send = send;
    this.samples = []; // { low, high, rtt, at }
    this.offset = 0; // server - local, ms
    this.rtt = Infinity; // of the quickest recent sample
    this.uncertainty = Infinity; // half the width of the interval the offset is known in
    this.synced = false;
    this.timers = [];
  }

  /** A connection opened: sample in a burst, then often, then periodically. */
  start() {
    this.stop();
    for (let i = 0; i < BURST; i++) {
      this.timers.push(setTimeout(() => this.sample(), i * BURST_SPACING_MS));
    }
    const early = setInterval(() => this.sample(), EARLY_MS);
    this.timers.push(early);
    this.timers.push(setTimeout(() => {
      clearInterval(early);
      this.timers.push(setInterval(() => this.sample(), RESAMPLE_MS));
    }, EARLY_FOR_MS));
  }

  stop() {
    for (const timer of this.timers) {
      clearTimeout(timer);
      clearInterval(timer);
    }
    this.timers = [];
  }

  sample() {
    // Three decimals: the server echoes the number, so the answer names its sample.
    this.send(`/time ${localNow().toFixed(3)}`);
  }

  /** A `time` event: `client` is our t0, echoed. */
  receive({ client, server }) {
    const t1 = localNow();
    const t0 = Number(client);
    const rtt = t1 - t0;
    if (!(rtt >= 0) || rtt > 10000) return; // not one of ours, or absurd
    this.samples.push({ low: server - t1, high: server + 1 - t0, rtt, at: t1 });
    while (this.samples.length > WINDOW_MAX || (this.samples.length > BEST && t1 - this.samples[0].at > WINDOW_MS)) {
      this.samples.shift();
    }
    const previous = this.offset;
    this.estimate();
    const first = !this.synced;
    this.synced = true;
    if (first || Math.abs(this.offset - previous) > 0.5) {
      this.dispatchEvent(new CustomEvent('change', { detail: { offset: this.offset, rtt: this.rtt } }));
    }
  }

  estimate() {
    const low = Math.max(...this.samples.map((s) => s.low));
    const high = Math.min(...this.samples.map((s) => s.high));
    const quickest = [...this.samples].sort((a, b) => a.rtt - b.rtt);
    this.rtt = quickest[0].rtt;
    if (low <= high) {
      this.offset = (low + high) / 2;
      this.uncertainty = (high - low) / 2;
    } else {
      const best = quickest.slice(0, BEST);
      this.offset = best.reduce((sum, s) => sum + (s.low + s.high) / 2, 0) / best.length;
      this.uncertainty = (best[0].high - best[0].low) / 2;
    }
  }

  /** Server time now, in epoch ms (fractional). */
  now() {
    return localNow() + this.offset;
  }

  /** The local clock reading (performance.timeOrigin + now()) at a server instant. */
  toLocal(serverMs) {
    return serverMs - this.offset;
  }
}
