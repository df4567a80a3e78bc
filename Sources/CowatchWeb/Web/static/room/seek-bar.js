// The seek bar: dragging separates this player from the group (SharePlay's
// userIsChangingCurrentTime suspension) and previews locally; releasing
// proposes the new time to everyone with /resume ... at <time>.

import { $ } from '../model/ui-dom.js';
import { formatTime } from '../model/ui.js';

/**
 * @param {object} p
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {(line: string) => boolean} p.send a line the player sends by itself
 * @param {(line: string) => void} p.command a command the viewer asked for
 * @returns {{ held: () => boolean, resumeRefused: () => void }} whether the
 *   viewer holds the bar now (the bar is not drawn under the finger), and the
 *   answer to a `/resume` the room refused
 */
export function wireSeekBar({ sync, me, send, command }) {
  // Whether the viewer holds the bar, and whether that suspended this player from the group.
  const scrub = { active: false, suspended: false };
  const seek = $('seek');
  const beginScrub = () => {
    if (scrub.active) return;
    scrub.active = true;
    sync.scrubbing = true;
    const self = me();
    if (self?.joined && !self.suspensions.includes('userIsChangingCurrentTime')) {
      send('/suspend userIsChangingCurrentTime');
      scrub.suspended = true;
    }
  };
  const endScrub = (moved) => {
    if (!scrub.active) return;
    scrub.active = false;
    sync.scrubbing = false;
    if (moved) command(`/resume userIsChangingCurrentTime at ${Number(seek.value).toFixed(3)}`);
    else if (scrub.suspended) command('/resume userIsChangingCurrentTime');
    scrub.suspended = false;
  };
  seek.addEventListener('pointerdown', beginScrub);
  seek.addEventListener('input', () => {
    beginScrub();
    $('position').textContent = formatTime(Number(seek.value));
    sync.preview(Number(seek.value));
  });
  seek.addEventListener('change', () => endScrub(true));
  // A press without a move ends the suspension without moving anyone.
  const release = () => setTimeout(() => endScrub(false), 0);
  seek.addEventListener('pointerup', release);
  seek.addEventListener('pointercancel', release);
  return {
    held: () => scrub.active,
    /** The room refused to move the group (only hosts may here): a suspension
     *  this bar began ends plainly, without moving anyone. */
    resumeRefused() {
      if (!scrub.suspended) return;
      send('/resume userIsChangingCurrentTime');
      scrub.suspended = false;
    },
  };
}
