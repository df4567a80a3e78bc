// "What happened?": a catch-up replays the last seconds faster and comes back
// level with the group.
//
// The `catchup` event says: replay from `from` at `rate` (2), level with the
// group at server time `until`. Rather than starting at `from` late, the player
// follows the replay's own timeline, which meets the group's exactly at
// `until`, so the end of the replay is seamless.

import { positionAt } from './timeline.js';

/** The catch-up to follow: `{ until, timeline }`, the timeline marked `catchup`. */
export function catchupTimeline({ from, rate, until }, group) {
  const level = positionAt(group, until);
  const start = until - ((level - from) / rate) * 1000;
  return { until, timeline: { playing: true, position: from, at: start, rate, catchup: true } };
}

/** From `until` on, the group's own timeline takes over. */
export function catchupOver(catchup, now) {
  return now >= catchup.until;
}
