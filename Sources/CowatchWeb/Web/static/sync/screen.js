// What the screen shows, against the timeline.
//
// `video.currentTime` is the media clock, not the picture. Chromium picks the
// frame for each display refresh by a cadence (30 frames a second on a 60 Hz
// display: each frame for two refreshes) and keeps it while the frame it
// shows is within its tolerance of its clock, measured from the frame's whole
// span: a picture can sit most of a frame behind its clock, or a refresh
// ahead, for as long as the video plays, depending on how its cadence began.
// Windows whose clocks agree to a millisecond then show frames a frame apart
// (docs/benchmarks.md, one-browser-windows).
//
// `requestVideoFrameCallback` says, for each presented frame, its media time
// and when it is expected on the display (players/video.js keeps the last
// few). From two successive frames, the screen showed media [m1, m2) over the
// display interval [e1, e2): its drift is the middle of the one less where the
// timeline is at the middle of the other.
//
// Moving the clock under a cadence does not move the picture until the picker
// gives up the cadence, and then it skips or repeats a whole frame, keeping
// which refreshes frames begin on: a picture can be brought by whole frames
// only. Within half a frame of the timeline is therefore the best a page can
// ask; beyond it (plus a margin) the page steers the rate nudge (drift.js) by
// the screen until the picker moves the picture a frame, then the clock comes
// back while the cadence holds. Two windows of one browser whose frames begin
// on refreshes of the same parity then show the same frames; of different
// parity, a refresh apart, which no rate can change.

import { positionAt } from './timeline.js';

export const SCREEN = Object.freeze({
  /** A picture is steered when it is more than half a frame (in time at the
   *  timeline's rate) and this margin (s) from the timeline. Brought a frame,
   *  it lands `margin` inside the other side, clear of the pages' clock
   *  error (about 0.3 ms on one machine), so it does not swing back; two
   *  windows a frame apart are both left alone only when their drifts are
   *  within `margin` of -half a frame and of +half a frame. */
  margin: 0.0007,
  /** The screen's drift is the median of this many successive frame pairs
   *  (a fifth of a second at 30 frames a second): one late frame does not
   *  count. */
  pairs: 6,
  /** The pairs must agree to within this (s) for a reading: a cadence
   *  shows every frame the same amount off, while frames shown
   *  one and two refreshes by turns (45 frames a second on 60 Hz, where the
   *  picker takes the nearest refresh anyway) or late on a busy machine
   *  scatter, and are no cadence to correct. */
  steadiness: 0.003,
  /** Frames expected on the display longer ago than this (ms) are not the
   *  screen now. */
  maxAgeMs: 600,
  /** Two frames farther apart than this in media time (s) are not successive
   *  (a seek between them). */
  maxGap: 0.1,
  /** Steering by the screen moves the clock off the timeline by at most this
   *  (s). The frame picker keeps its cadence while its frame's span is within
   *  max(half a frame, 1/60 s) of the refresh on its clock (16.7 ms at 30
   *  frames a second, 20.8 ms at 24), and the screen's median takes a few
   *  frames to show the change: a clock this far off has made the picker
   *  choose. */
  clockLeeway: 0.03,
  /** After steering reached clockLeeway and the screen did not follow (a
   *  player that shows frames unlike Chromium's), the page keeps to the
   *  clock this long (ms) before it tries again. */
  retryMs: 10000,
  /** After steering brought the screen in, none again for this long (ms): a
   *  screen at the edge does not jump a frame each way. */
  againMs: 3000,
});

/**
 * The screen's drift (s; positive when the picture is ahead of the timeline)
 * and how long a frame lasts at the timeline's rate (s), `{ drift, frame }`,
 * from presented frames `[displayTime, mediaTime]`, displayTime in the page's
 * monotonic ms (performance.now()), oldest first; `now` and `monotonic` are one
 * instant on the server's clock and the page's. Only frames shown since
 * `since` (server ms: when the video began following this timeline) count.
 * Null when there are not enough of them, or when they do not agree (no
 * steady cadence: see `steadiness`).
 */
export function screenDrift(frames, timeline, now, monotonic, since) {
  if (!Array.isArray(frames) || frames.length < 2) return null;
  const from = Math.max(since ?? -Infinity, timeline.at, now - SCREEN.maxAgeMs);
  const drifts = [];
  const lengths = [];
  for (let i = 0; i + 1 < frames.length; i++) {
    const [shown, media] = frames[i];
    const [nextShown, nextMedia] = frames[i + 1];
    const start = now + (shown - monotonic);
    const end = now + (nextShown - monotonic);
    if (start < from || end > now || end <= start) continue;
    if (nextMedia <= media || nextMedia - media > SCREEN.maxGap * Math.max(1, timeline.rate)) continue;
    drifts.push((media + nextMedia) / 2 - positionAt(timeline, (start + end) / 2));
    lengths.push((nextMedia - media) / Math.max(timeline.rate, 0.01));
  }
  if (drifts.length < SCREEN.pairs) return null;
  const recent = drifts.slice(-SCREEN.pairs).sort((a, b) => a - b);
  if (recent[recent.length - 1] - recent[0] > SCREEN.steadiness) return null;
  const frame = lengths.slice(-SCREEN.pairs).sort((a, b) => a - b)[Math.floor(SCREEN.pairs / 2)];
  return { drift: recent[Math.floor(recent.length / 2)], frame };
}

/**
 * Which drift the nudge takes: the clock's (`clock`, the median of currentTime
 * less the timeline) unless the screen (screenDrift's reading, or null) is
 * more than half a frame and the margin off while the clock is within
 * clockLeeway of the timeline. `steering` is the course so far: null,
 * { since } while steering by the screen, { endedAt } after it brought the
 * screen in, or { gaveUpAt } after it did not (monotonic ms). Returns the
 * drift to nudge by and the next course.
 */
export function steer({ clock, screen, steering, monotonic }) {
  if (steering?.gaveUpAt !== undefined && monotonic - steering.gaveUpAt < SCREEN.retryMs) {
    return { drift: clock, steering };
  }
  if (steering?.endedAt !== undefined && monotonic - steering.endedAt < SCREEN.againMs) {
    return { drift: clock, steering };
  }
  const course = steering?.since !== undefined ? steering : null;
  if (screen === null || screen === undefined) {
    // No steady reading (the picker changing its cadence, or frames late): the
    // clock meanwhile; a course under way stays, to be judged by the next one.
    return { drift: clock, steering: course };
  }
  if (Math.abs(screen.drift) <= screen.frame / 2 + SCREEN.margin) {
    return { drift: clock, steering: course ? { endedAt: monotonic } : null };
  }
  if (Math.abs(clock) >= SCREEN.clockLeeway) {
    // The clock is as far off as it may go, and the picture did not move.
    return { drift: clock, steering: course ? { gaveUpAt: monotonic } : null };
  }
  return { drift: screen.drift, steering: course ?? { since: monotonic } };
}
