// Scheduled starts: pause, seek to where the timeline will be at a chosen
// instant, and call play() at that instant minus the measured latency of
// play().
//
// The instant is the timeline's own `at` when that is still ahead and the
// video already holds the position with enough data (a coordinated start: every
// player starts at the same server instant). Otherwise (a late join, a rejoin
// after a suspension, a large drift) it is far enough ahead to seek and buffer
// first: the learned join lead (latency.js). Times are server epoch ms.

import { roundRate, THRESHOLDS } from './drift.js';
import { LATE_START_MS, SPIN_MS } from './thresholds.js';
import { clampToMedia, positionAt } from './timeline.js';

export { LATE_START_MS, SPIN_MS };

/**
 * When and where to start following `timeline`.
 * @param {object} p
 * @param {object} p.timeline
 * @param {number} p.now server time, ms
 * @param {{ currentTime: number, seeking: boolean, duration: number }} p.video
 * @param {boolean} p.enoughData the video has the data to play from where it is
 * @param {number} p.playLatency ms between calling play() and the video moving
 * @param {number} p.joinLead ms a seek with buffering is expected to take, and more
 * @param {number} [p.tolerance] how close to the position counts as there
 *   (correct.js holdTolerance: exact for the <video>)
 * @returns {{ startAt: number, position: number, rate: number, coordinated: boolean }}
 */
export function planStart({ timeline, now, video, enoughData, playLatency, joinLead, tolerance = THRESHOLDS.hold }) {
  const atPosition = Math.abs(video.currentTime - timeline.position) <= tolerance && !video.seeking;
  // The timer and the spin need a few ms before the instant to hit it.
  const coordinated = timeline.at - now > SPIN_MS + playLatency + 2 && atPosition && enoughData;
  const startAt = coordinated ? timeline.at : Math.max(timeline.at, now + joinLead);
  return { startAt, position: clampToMedia(positionAt(timeline, startAt), video.duration), rate: timeline.rate, coordinated };
}

/** A start planned for one timeline still fits another (a handed-back state, a
 *  queue change) when that one reaches the same position at the same instant at
 *  the same rate: such a state must not restart it. */
export function sameCourse(start, timeline) {
  return Math.abs(positionAt(timeline, start.startAt) - start.position) < 0.0005 && timeline.rate === start.rate;
}

/** A start whose video is still seeking or buffering this close to its instant
 *  cannot make it: it is planned again, further ahead. */
export function missedInstant(msLeft, playLatency) {
  return msLeft < playLatency + 2;
}

/** How long the timer waits before the final spin up to the instant. */
export function wakeDelay(startAt, playLatency, now) {
  return Math.max(0, startAt - playLatency - now - SPIN_MS);
}

/**
 * What to do when the start's timer fires at server time `now`:
 *   { kind: 'replan', late }  it fired well past the instant: plan again
 *   { kind: 'wait', ms }      it fired early (the clock estimate moved): wait again
 *   { kind: 'play', at, late } call play() at server time `at` (spinning up to it;
 *                              a little late starts now, the drift correction absorbs it)
 */
export function fireDecision(startAt, playLatency, now) {
  const at = startAt - playLatency;
  const late = now - at;
  if (late > LATE_START_MS) return { kind: 'replan', late };
  if (-late > SPIN_MS + 4) return { kind: 'wait', ms: -late - SPIN_MS };
  return { kind: 'play', at, late };
}

/** A play() called this much later than its plan or more (the page's main
 *  thread was busy: its timer fired late, or the spin was preempted; on a
 *  loaded machine, in a call, tens of ms) is made up at once by a catch-up. */
export const CATCH_UP_FROM_MS = 4;
/** How much faster than the timeline a catch-up plays (the pitch is kept): a
 *  start 40 ms late is level again 160 ms later, before anyone could tell. */
export const CATCH_UP_BOOST = 0.25;

/**
 * A start that leaves `errorMs` off its instant (late: positive; early:
 * negative) levels off at once: at `rate` faster (or slower) by CATCH_UP_BOOST,
 * with the pitch kept, for `ms`, which makes up exactly the error. Null when it
 * is too small to be worth it, or so large that it is a re-join's.
 * @returns {{ rate: number, ms: number } | null}
 */
export function settleFor(errorMs, rate) {
  const size = Math.abs(errorMs);
  if (!(size >= CATCH_UP_FROM_MS) || !(size < LATE_START_MS)) return null;
  return { rate: roundRate(rate * (1 + Math.sign(errorMs) * CATCH_UP_BOOST)), ms: size / CATCH_UP_BOOST };
}

/**
 * How a start whose play() was called `lateMs` after its plan catches up:
 * at `rate` (the timeline's, faster by CATCH_UP_BOOST) for `ms`, which gains
 * exactly the lateness. Null when it is too small to be worth it.
 * @returns {{ rate: number, ms: number } | null}
 */
export function catchUpFor(lateMs, rate) {
  return lateMs > 0 ? settleFor(lateMs, rate) : null;
}

/**
 * A start with a sound track is heard where its clock starts, and that clock
 * starts anywhere within about 23 ms after play()'s measured latency (one
 * block of the audio output, docs/benchmarks.md), while a change of rate comes
 * through only ~180 ms after it is set: after the start, nothing can make up
 * the scatter before it has been heard. So such a start begins out of hearing
 * (players/video.js: hush), `back` ms early and from as far back in the media:
 * measured VERIFY_AFTER_MS after play() (latency.js), levelled off by a pulse
 * (drift.js: PULSE) that has come through (~180 ms and its own length) before
 * the instant, when the sound comes up.
 *   ms: how far back it starts, when the media has it
 *   minMs: the least that still leaves room for the measurement and one pulse
 *   seekMs: what the page allows for its seek back, in the lead it asks for
 */
export const PREROLL = Object.freeze({ ms: 480, minMs: 420, seekMs: 100 });

/**
 * Where and when a start planned for `startAt` from `position` (start.js:
 * planStart) begins out of hearing, or null when the media has too little
 * before the position (the first start of an item, at 0:00) or the instant is
 * too near for it.
 * @returns {{ back: number, startAt: number, position: number, until: number } | null}
 */
export function prerollFor({ startAt, position, rate, now, playLatency }) {
  const back = Math.min(PREROLL.ms, (position * 1000) / rate);
  if (!(back >= PREROLL.minMs)) return null;
  if (startAt - now < back + playLatency + SPIN_MS + 2) return null;
  return { back, startAt: startAt - back, position: Math.max(0, position - (rate * back) / 1000), until: startAt };
}

/** A lead to ask for in a /ready (docs/protocol.md): `ms` up to whole tens,
 *  so that a latency learned anew does not change every report. */
export function askedLead(ms) {
  return Math.ceil(Math.round(ms) / 10) * 10;
}

/** The lead a player with sound asks for in its /ready, to start out of hearing. */
export function prerollLead(playLatency) {
  return askedLead(PREROLL.ms + playLatency + PREROLL.seekMs + SPIN_MS);
}
