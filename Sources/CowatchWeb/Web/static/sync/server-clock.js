// The server's clock, as seen from this page.
//
// The room speaks server time (epoch milliseconds): a coordinated start says
// "play at `at`", and a playing state's position is extrapolated from `at`. A
// page's own clock may be off by seconds, so it estimates the offset with
// `/time <client-ms>` round trips, NTP style; sync/clock.js turns the samples
// into an estimate. This file sends them and keeps the result.
//
// The local clock is performance.timeOrigin + performance.now(): sub-millisecond
// and monotonic, unlike Date.now(), which can be stepped under our feet.

import { estimateOffset, keepRecent, sampleFrom } from './clock.js';

/** Samples sent in a burst when a connection opens: enough to find a quick one. */
const BURST = 8;
const BURST_SPACING_MS = 40;
/** Then one sample every half second for a while (a page is busiest just after
 *  it opens, so its first samples are often slow), then every few seconds to
 *  follow slow drift; all well under the server's 20 lines per second. */
const EARLY_MS = 500;
const EARLY_FOR_MS = 10000;
const RESAMPLE_MS = 2000;

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
    const sample = sampleFrom(Number(client), server, localNow());
    if (!sample) return; // not one of ours, or absurd
    this.samples = keepRecent(this.samples, sample);
    const previous = this.offset;
    Object.assign(this, estimateOffset(this.samples));
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
