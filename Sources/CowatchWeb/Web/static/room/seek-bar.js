// The seek bar: dragging separates this player from the group (SharePlay's
// userIsChangingCurrentTime suspension) and previews locally; releasing
// proposes the new time to everyone with /resume ... at <time>.

import { $ } from '../model/ui-dom.js';
import { formatTime } from '../model/ui.js';

export function wireSeekBar(page) {
  const { scrub, sync } = page;
  const seek = $('seek');
  const beginScrub = () => {
    if (scrub.active) return;
    scrub.active = true;
    sync.scrubbing = true;
    const me = page.me();
    if (me?.joined && !me.suspensions.includes('userIsChangingCurrentTime')) {
      page.send('/suspend userIsChangingCurrentTime');
      scrub.suspended = true;
    }
  };
  const endScrub = (moved) => {
    if (!scrub.active) return;
    scrub.active = false;
    sync.scrubbing = false;
    if (moved) page.command(`/resume userIsChangingCurrentTime at ${Number(seek.value).toFixed(3)}`);
    else if (scrub.suspended) page.command('/resume userIsChangingCurrentTime');
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
}
