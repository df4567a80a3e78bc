// Setting this player apart from the group by itself, and back: the
// suspensions a page begins and ends on its own (docs/browser.md, "On a phone
// and in the background"), as SharePlay's coordinator suspends a participant
// whose audio session is interrupted and lets a person step out.
//
//   * audioSessionInterrupted: the video stopped though neither the room nor
//     the person paused it (a call, another app taking the audio, a headset
//     unplugged, the browser's own pause);
//   * away: the same while the page is hidden (the browser pauses a background
//     video), ended by itself when the page is shown again;
//   * pausedForMe: the person paused just for themselves ("Pause just for me",
//     or a media-session pause from a member who may not pause the room).

export const INTERRUPTED = 'audioSessionInterrupted';
export const AWAY = 'away';
export const PAUSED_FOR_ME = 'pausedForMe';

/** The reasons this page begins and ends itself. */
export const OWN_REASONS = Object.freeze([INTERRUPTED, AWAY, PAUSED_FOR_ME]);

/** Why a pause nobody here ordered happened: the page is away, or something took the audio. */
export function interruptionReason(hidden) {
  return hidden ? AWAY : INTERRUPTED;
}

/** A pause nobody here ordered: the video was playing along with the group
 *  (`running`) and stands still, not at its end and not on a seek of ours. */
export function pausedUnordered({ running, paused, ended }) {
  return !!running && paused === true && ended !== true;
}

/** The page's own reasons among the member's suspensions and the one it has
 *  just asked for (`apart`), without repeats. */
export function ownReasonsOf(suspensions, apart) {
  const reasons = (suspensions || []).filter((reason) => OWN_REASONS.includes(reason));
  if (apart && !reasons.includes(apart.reason)) reasons.push(apart.reason);
  return reasons;
}
