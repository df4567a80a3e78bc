// The server's clock, as seen from this page.
//
// The room speaks server time (epoch milliseconds): a coordinated start says
// "play at `at`", and a playing state's position is extrapolated from `at`. A
// page's own clock may be off by seconds, so it estimates the offset with
// `/time <client-ms>` round trips, NTP style: for a sample sent at local t0 and
// answered at t1 with server time s, offset = s - (t0 + t1) / 2. The error of one
// sample is at most half its round trip, and samples that waited (a busy main
// thread, a queue in the network) have long round trips, so the estimate keeps
// only the lowest-delay samples of a recent window.
//
// The local clock is performance.timeOrigin + performance.now(): sub-millisecond
// and monotonic, unlike Date.now(), which can be stepped under our feet.

/** Samples sent in a burst when a connection opens: enough to find a quick one. */
const BURST = 8;
const BURST_SPACING_MS = 40;
/** Then one sample every few seconds follows slow drift and route changes, well
 *  under the server's 20 lines per second. */
const RESAMPLE_MS = 2500;
/** The window of samples considered, and how many of its fastest are averaged. */
const WINDOW = 24;
const BEST = 3;
/** The server answers with whole milliseconds, truncated: on average the true
 *  server time was half a millisecond later. */
const SERVER_TRUNCATION_MS = 0.5;

export function localNow() {
  return performance.timeOrigin + performance.now();
}

export class ServerClock extends EventTarget {
  /** @param {(line: string) => boolean} send sends a line to the server */
  constructor(send) {
    super();
    this.send = send;
    this.samples = []; // { rtt, offset, at }
    this.offset = 0; // server - local, ms
    this.rtt = Infinity; // of the best sample
    this.synced = false;
    this.timers = [];
  }

  /** A connection opened: sample in a burst, then periodically. */
  start() {
    this.stop();
    for (let i = 0; i < BURST; i++) {
      this.timers.push(setTimeout(() => this.sample(), i * BURST_SPACING_MS));
    }
    this.timers.push(setInterval(() => this.sample(), RESAMPLE_MS));
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
    const offset = server + SERVER_TRUNCATION_MS - (t0 + t1) / 2;
    this.samples.push({ rtt, offset, at: t1 });
    if (this.samples.length > WINDOW) this.samples.shift();
    const best = [...this.samples].sort((a, b) => a.rtt - b.rtt).slice(0, BEST);
    const previous = this.offset;
    this.offset = best.reduce((sum, s) => sum + s.offset, 0) / best.length;
    this.rtt = best[0].rtt;
    const first = !this.synced;
    this.synced = true;
    if (first || Math.abs(this.offset - previous) > 0.5) {
      this.dispatchEvent(new CustomEvent('change', { detail: { offset: this.offset, rtt: this.rtt } }));
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
