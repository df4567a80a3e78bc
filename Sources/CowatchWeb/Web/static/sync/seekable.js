// Whether the video can go to a position at all.
//
// A video's `seekable` ranges say where a seek can land. A file server that
// does not answer range requests (python3 -m http.server, some CDNs' defaults)
// gives a media element it can only play from the start: Chromium reports
// seekable as [0, 0] there, and a seek elsewhere lands back at 0:00. Seeking
// again every tick would loop for ever; the player instead gives up once, says
// why in words, and stands aside from the group (player.js).

/** Slack for rounding in the ranges the browser reports, seconds. */
export const SEEKABLE_SLACK = 0.001;

/**
 * Whether `position` lies within one of the `seekable` ranges
 * (`[[start, end], ...]`, seconds). Readings without ranges (none read yet)
 * do not stop a seek: the media element has the last word.
 */
export function canSeekTo(seekable, position) {
  if (!Array.isArray(seekable)) return true;
  return seekable.some(([start, end]) => position >= start - SEEKABLE_SLACK && position <= end + SEEKABLE_SLACK);
}

/** What the viewer is told, once, when the group is where the video cannot go. */
export function unseekableWords(position, formatTime) {
  return `This video's server does not let players jump to a position (it answers no range requests), `
    + `so your player cannot go to ${formatTime(position)} where the group is. `
    + 'It stays out of step until the group is paused at the start or plays another video; '
    + 'a link from a server that takes range requests works everywhere.';
}
