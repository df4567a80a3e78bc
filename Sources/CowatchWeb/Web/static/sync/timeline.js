// The room's timeline: where the media should be at each server instant.
//
// A timeline is `{ playing, position, at, rate }`, from a state's playback or a
// catch-up (which also carries `catchup: true`). Playing, it moves from
// `position` at `at` at `rate`; until `at` (a coordinated start ahead) and
// while not playing, it holds `position`. Times are server epoch milliseconds,
// positions seconds.

/** The media position the timeline asks for at server instant `serverMs`. */
export function positionAt(timeline, serverMs) {
  if (!timeline.playing || serverMs <= timeline.at) return timeline.position;
  return timeline.position + (timeline.rate * (serverMs - timeline.at)) / 1000;
}

/** Equal for two timelines that describe the same course, so a repeated state
 *  does not disturb a player that already follows it. */
export function timelineKey(t) {
  return `${t.playing ? 'p' : 'h'}|${t.position}|${t.at}|${t.rate}|${t.catchup ? 'c' : ''}`;
}

/** The group's timeline from a state's `playback`; null when nothing plays. */
export function groupTimeline(playback) {
  if (!playback || playback.status === 'idle') return null;
  return {
    playing: playback.status === 'playing',
    position: playback.position,
    at: playback.at,
    rate: playback.rate,
  };
}

export const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

/** A position the media has: past the end (a state computed from a longer
 *  item, or rounding) becomes the end. `duration` is NaN before metadata. */
export function clampToMedia(position, duration) {
  return clamp(position, 0, Number.isFinite(duration) ? duration : Infinity);
}

/** Within this of the end, there is nothing left to start or to correct: the
 *  video is let run into its `ended`. */
const END_MARGIN = 0.05;

export function atEnd(position, duration) {
  return Number.isFinite(duration) && position >= duration - END_MARGIN;
}
