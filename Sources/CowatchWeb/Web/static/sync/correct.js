// How drift is corrected, by what the player can do (its `capabilities`,
// static/players/player.js).
//
// A player with continuous rates (the <video>) absorbs small drift with a rate
// nudge (drift.js) and re-joins beyond THRESHOLDS.seek. A player with a few
// discrete rates (YouTube: 0.25 to 2 in quarter steps) cannot nudge, and one that
// reads its position coarsely cannot even see a few ms of drift: it is kept on
// the timeline by corrective seeks while it plays, with rules that keep those
// from chasing their own noise:
//
//   * the drift is the median of readings spanning at least two of the
//     player's position updates, so a stale or odd reading does not count;
//   * a correction begins only beyond `start` (four times the position's
//     precision, at least 0.1 s): after a correction the player is within
//     about one precision of the timeline, well inside `start`, so one
//     correction does not call for the next (hysteresis);
//   * readings are ignored while the seek lands and for `settleMs` after, and
//     two corrections are at least `minIntervalMs` apart;
//   * the seek aims where the timeline will be once the seek has taken effect:
//     now plus the learned seek latency (guessed, until a correction has
//     landed, from the seeks of scheduled starts); what the landing shows (the
//     drift once settled, less the lead it aimed at and what a rate other than
//     the room's added since) corrects that latency for the next one.
//
// The accuracy this gives a seek-corrected player: within `start` of the
// timeline at all times but for the moment a correction lands (for YouTube's
// declared precision of 0.025 s: 0.1 s), and within about one precision right
// after a correction; two such players are within 2 × start of each other at
// worst, and within about two precisions typically.

import { positionAt } from './timeline.js';
import { THRESHOLDS } from './drift.js';

/** The decisions' tick (player-sync.js). */
const TICK_MS = 50;

/** What a player without declared capabilities is assumed to be: the <video>. */
const CONTINUOUS = Object.freeze({
  rates: 'continuous', rateRange: [0.0625, 16], positionPrecision: 0.0001, positionUpdateMs: 0, reportsStalls: true, exactSeek: true,
});

export function capabilitiesOf(readings) {
  return readings?.capabilities ?? CONTINUOUS;
}

/** 'nudge' (rates can be changed by any small amount) or 'seek'. */
export function correctionFor(capabilities) {
  return capabilities.rates === 'continuous' ? 'nudge' : 'seek';
}

/**
 * The rate the player plays when the room asks `rate`: the rate itself when it
 * can; otherwise the nearest it can (a tie goes toward 1, as YouTube rounds).
 */
export function playableRate(capabilities, rate) {
  const rates = capabilities.rates;
  if (rates === 'continuous') {
    const [min, max] = capabilities.rateRange;
    return Math.min(max, Math.max(min, rate));
  }
  if (!Array.isArray(rates) || rates.length === 0) return 1;
  let best = rates[0];
  for (const candidate of rates) {
    const gap = Math.abs(candidate - rate);
    const bestGap = Math.abs(best - rate);
    if (gap < bestGap - 1e-9 || (Math.abs(gap - bestGap) <= 1e-9 && Math.abs(candidate - 1) < Math.abs(best - 1))) best = candidate;
  }
  return best;
}

/** In words, when the player cannot play the room's rate: what it does instead. */
export function rateNotice(capabilities, rate) {
  const played = playableRate(capabilities, rate);
  if (Math.abs(played - rate) < 1e-9) return null;
  return `This player cannot play at ${rate}×: it plays at ${played}× and jumps now and then to stay with the group.`;
}

/** How close to a held position is close enough: exact for an exact seek,
 *  else within what the player can tell. */
export function holdTolerance(capabilities) {
  return capabilities.exactSeek ? THRESHOLDS.hold : Math.max(THRESHOLDS.hold, capabilities.positionPrecision);
}

/** The rules of corrective seeks for a player (see the top of this file). */
export function seekPolicy(capabilities) {
  const precision = Math.max(0.001, capabilities.positionPrecision);
  const update = Math.max(0, capabilities.positionUpdateMs);
  return {
    start: Math.max(0.1, 4 * precision),
    window: Math.max(3, Math.ceil((2 * update) / TICK_MS) + 1),
    settleMs: Math.max(250, 2 * update),
    minIntervalMs: Math.max(2000, 8 * update),
  };
}

/** The median of the last `window` readings, and those readings. */
export function medianDrift(drifts, raw, window) {
  const recent = [...drifts, raw].slice(-window);
  const sorted = [...recent].sort((a, b) => a - b);
  return { drifts: recent, drift: sorted[Math.floor(sorted.length / 2)] };
}

/**
 * Whether to seek now (`fix`: the correction in progress or null; `lastFixAt`:
 * when the last one ended, monotonic ms):
 *   'seek'   the drift is beyond start, in the median and the last reading,
 *            with readings enough and the last correction long enough ago
 *   'keep'   leave it
 */
export function seekDecision({ policy, drift, raw, readings, monotonic, lastFixAt }) {
  if (readings < policy.window) return 'keep';
  if (monotonic - lastFixAt < policy.minIntervalMs) return 'keep';
  return Math.abs(drift) > policy.start && Math.abs(raw) > policy.start ? 'seek' : 'keep';
}

/** Learned seek latency (ms): from asking a seek to the player moving again. */
export const SEEK_LATENCY_MS = Object.freeze({ initial: 300, min: 0, max: 3000, gain: 0.5 });

/** The seek latency guessed from a seek made for a scheduled start (ms from
 *  asking it to having the data), before any corrective seek has landed. A
 *  start's seek may jump far, out of what is buffered (a late joiner's first
 *  one loads from nothing), while a corrective seek jumps a fraction of a
 *  second, within it: the guess is never above the initial one. */
export function firstSeekLatency(tookMs) {
  return Math.min(SEEK_LATENCY_MS.initial, Math.max(SEEK_LATENCY_MS.min, tookMs));
}

/** Where a corrective seek asked at server time `now` aims. */
export function seekAim(timeline, now, latencyMs) {
  return positionAt(timeline, now + latencyMs);
}

/**
 * The latency after a correction that landed `residual` seconds off where it
 * meant to on a timeline at `rate`: landing behind (negative) means the seek
 * took longer than assumed. Half the error is taken each time (`gain`), so one
 * odd landing does not swing it; the first landing, which replaces a guess,
 * is taken whole (gain 1).
 */
export function learnSeekLatency(latencyMs, residual, rate, gain = SEEK_LATENCY_MS.gain) {
  const taken = latencyMs - (residual * 1000) / Math.max(rate, 0.01);
  const next = latencyMs + gain * (taken - latencyMs);
  return Math.min(SEEK_LATENCY_MS.max, Math.max(SEEK_LATENCY_MS.min, next));
}
