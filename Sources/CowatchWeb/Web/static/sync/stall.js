// Stalls: telling a real stall from a hiccup, and saying when it is over.
//
// Browsers fire `waiting` for a stall (no data) and also for decoder hiccups
// of a frame or two on a busy machine, which the drift correction absorbs. A
// /buffering separates the member from the group (or, under `stall wait`,
// makes everyone wait), so it is said only for a stall that lasts.

import { READY_REPEAT_MS, STALL_CONFIRM_MS } from './thresholds.js';

/** STALL_CONFIRM_MS: a `waiting` is a stall worth reporting only when the video
 *  is still stuck this long after it. READY_REPEAT_MS: while a stallRecovery
 *  suspension lasts, /ready is said again this often: a report can be lost to a
 *  reconnect, or answer a state a newer one replaced (thresholds.js). */
export { READY_REPEAT_MS, STALL_CONFIRM_MS };
/** The video moving more than this (seconds) since the `waiting` means it plays. */
const MOVED = 0.1;

/**
 * Whether a `waiting` event may be a stall: only while the player follows the
 * group's own timeline (not a catch-up) with its video started, no scheduled
 * start under way and no seek; a paused or seeking video also goes through
 * `waiting`. One stall at a time.
 */
export function waitingMayBeStall({ plan, running, joining, seeking, stalled, checking }) {
  if (plan.kind !== 'run' || plan.timeline.catchup || !running || joining || seeking) return false;
  return !stalled && !checking;
}

/**
 * A `waiting` being watched (`check`: `{ since, position }`, ms and seconds) at
 * local time `monotonic` (ms):
 *   'hiccup'     the video moved on with data: it plays again
 *   'pending'    not yet decided
 *   'confirmed'  still stuck STALL_CONFIRM_MS after: a stall
 */
export function stallCheckOutcome(check, { currentTime, enoughData, monotonic }) {
  if (Math.abs(currentTime - check.position) > MOVED && enoughData) return 'hiccup';
  if (monotonic - check.since < STALL_CONFIRM_MS) return 'pending';
  return 'confirmed';
}

/** A recovered player says /ready at once after its own stall, and again every
 *  READY_REPEAT_MS while its stallRecovery suspension lasts. */
export function recoveryReadyDue({ stalled, monotonic, lastSentAt }) {
  return stalled || monotonic - lastSentAt > READY_REPEAT_MS;
}
