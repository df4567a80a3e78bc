// Live HLS streams: one timeline for players that each count from where they began.
//
// A live playlist has no fixed timeline. Measured in Chromium 156 (which plays
// HLS itself; Tests/e2e/hls_origin.py, docs/browser.md "Live streams"): the
// video's `duration` is Infinity, `seekable` is empty (no seek lands), and
// `currentTime` is 0 at the start of the segment the video began playing on
// (three segments before the playlist's end), so two windows that opened the
// stream at different times report different times for the same frame, by
// exactly the media between their first segments.
//
// The common timeline ("stream time") is therefore named by the playlist: a
// segment starts at its `#EXT-X-PROGRAM-DATE-TIME` (seconds since 2020)
// when the playlist carries one, else at its media sequence number times the
// target duration (exact for segments cut at the target duration, as ffmpeg
// cuts them at keyframes; otherwise off by what the segments between two
// players' first segments differ from it). Each player finds the segment it
// counts from among what its video fetched (Resource Timing: the playlist,
// then the first listed segment as a probe, then the segments it plays in
// order), and adds that segment's stream time to its `currentTime`.
//
// Nothing else can steer such a video (measured the same way, Chromium 156):
// a playbackRate other than 1, even 1.001, fails it at once with
// MEDIA_ERR_SRC_NOT_SUPPORTED; and after a pause, play() does not go on from
// the paused frame but jumps ahead, back to about three target durations
// behind the playlist's end, where it began. A live player therefore plays at
// rate 1 from where loading the stream puts it, and the only correction is to
// load it again: the room's timeline for a live item is set where a freshly
// loaded video plays (the playlist's end less three target durations), and a
// player farther than LIVE_TOLERANCE_S from it loads again, at
// the moment that makes it begin on a segment's first frame as the room does.

/** Program dates are counted from here (2020-01-01T00:00:00Z), in seconds:
 *  the room takes positions up to 1,000,000,000 s (docs/protocol.md, "The
 *  item's length"), which seconds since 1970 already pass; since 2020 they
 *  stay under it until 2051. */
export const STREAM_EPOCH_MS = Date.UTC(2020, 0, 1);

/** How far behind the playlist's end a player reports the room should play,
 * in target durations: where the video begins when the stream is loaded (its
 * first segment is the third from the end of the playlist it read). */
export const LIVE_MARGIN_TARGET_DURATIONS = 3;

/** A live player farther than this from the room's position (s) loads the
 *  stream again. A load is timed (liveReloadDelay) so that the video begins on
 *  a segment's first frame as the room reaches it; what is left is the error
 *  of the learned load time, which varies by tens of ms from load to load here
 *  (a closer tolerance would load again for nothing), or a whole segment when
 *  the video began on another one than planned. Measured with three windows
 *  (Tests/e2e/live_spread.py, one-second segments): a tolerance of 0.3 s left
 *  them 100 to 220 ms apart, 0.05 s left 7 to 26 ms, after a few more loads. */
export const LIVE_TOLERANCE_S = 0.05;

/** How long loading a live stream takes, from the load to its first frame
 *  playing (ms): the first guess, and how much of each measurement is taken. */
export const LIVE_LOAD_MS = Object.freeze({ initial: 500, min: 50, max: 5000, gain: 0.5 });

/** Loads in a row that still left the player out of tolerance: after this
 *  many it plays from where it is, rather than loading forever (a stream whose
 *  segments are longer than its target duration). */
export const LIVE_RELOADS_MAX = 5;

/**
 * The facts of a media playlist the timeline needs.
 * @param {string} text an HLS media playlist
 * @returns {{ targetDuration: number, mediaSequence: number, ended: boolean,
 *   segments: { uri: string, sequence: number, duration: number, start: number, dated: boolean }[] } | null}
 *   null when the text is not a media playlist (a master playlist has no segments)
 */
export function parsePlaylist(text) {
  if (typeof text !== 'string' || !text.startsWith('#EXTM3U')) return null;
  let targetDuration = NaN;
  let mediaSequence = 0;
  let ended = false;
  let duration = null;
  let date = null; // ms, for the next segment
  const raw = [];
  for (const line of text.split(/\r?\n/).map((l) => l.trim())) {
    if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) mediaSequence = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-ENDLIST')) ended = true;
    else if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) {
      const ms = Date.parse(line.slice(25));
      date = Number.isFinite(ms) ? ms : null;
    } else if (line && !line.startsWith('#') && duration != null) {
      raw.push({ uri: line, duration, date });
      duration = null;
      date = null;
    }
  }
  if (!Number.isFinite(targetDuration) || targetDuration <= 0 || !raw.length) return null;
  // A date applies to its segment; the ones after it follow on by their durations.
  let previous = null;
  const segments = raw.map((s, i) => {
    const sequence = mediaSequence + i;
    let start;
    let dated = true;
    if (s.date != null) start = (s.date - STREAM_EPOCH_MS) / 1000;
    else if (previous?.dated) start = previous.start + previous.duration;
    else {
      start = sequence * targetDuration;
      dated = false;
    }
    previous = { uri: s.uri, sequence, duration: s.duration, start, dated };
    return previous;
  });
  return { targetDuration, mediaSequence, ended, segments };
}

/** The file name of a URI or URL, for matching what the video fetched against
 *  what the playlist lists (relative in one, absolute in the other). */
function fileOf(uri) {
  const path = String(uri).split(/[?#]/)[0];
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The segment the video counts its `currentTime` from. Chromium's video first
 * fetches the playlist's first segment (a probe), then the one it plays from
 * (the third from the end) and those after it, in order (Tests/e2e/hls_origin.py):
 * the origin is the second segment fetched, or the first when it is fetched
 * again at once (a playlist of three segments, played from its first). A
 * playlist of four gives a probe and a start that follow each other, which is
 * why the order, not the numbers, tells them apart. Every segment fetched after
 * the probe must be in `playlist` (fetched as early as the video's own): one
 * already gone from it would leave the origin unknown, and a wrong origin is
 * worse than none.
 * @param {string[]} fetched URLs the video fetched, in order (playlists among them)
 * @param {ReturnType<typeof parsePlaylist>} playlist
 * @returns {{ sequence: number, start: number } | null} null while it cannot be told
 */
export function originSegment(fetched, playlist) {
  if (!playlist) return null;
  const byFile = new Map(playlist.segments.map((s) => [fileOf(s.uri), s]));
  const files = fetched.map(fileOf).filter((file) => file && !file.toLowerCase().endsWith('.m3u8'));
  if (files.length < 2) return null; // the probe alone: the start is not fetched yet
  for (const file of files.slice(1)) if (!byFile.has(file)) return null;
  const start = byFile.get(files[1]);
  return { sequence: start.sequence, start: start.start };
}

/** Stream time of the playlist's end (the end of its last segment). */
export function playlistEnd(playlist) {
  const last = playlist.segments[playlist.segments.length - 1];
  return last.start + last.duration;
}

/** The safety margin behind the playlist's end, s. */
export function liveMargin(targetDuration) {
  return LIVE_MARGIN_TARGET_DURATIONS * targetDuration;
}

/** The position a player reports the room should play at now (`/duration
 *  <seq> live <edge>`): the playlist's end less the margin. */
export function liveEdge(playlist) {
  return playlistEnd(playlist) - liveMargin(playlist.targetDuration);
}

/** A live item: the room says so, or the video does (no end). */
export function isLive(activity, duration) {
  return activity?.live === true || duration === Infinity;
}

/** Where a playing live room is at server time `now`: its course extended
 *  before its `at` as well (a live edge does not wait for a start). */
export function liveRoomPosition(timeline, now) {
  if (!timeline.playing) return timeline.position;
  return timeline.position + (timeline.rate * (now - timeline.at)) / 1000;
}

/**
 * How long to wait (ms) before loading the stream again, so that the video,
 * which begins on a segment's first frame `loadMs` after the load, begins as
 * the room's position reaches a segment's start: segments start at
 * `segmentStart` plus whole target durations (stream time, s). 0 when no
 * segment start is known yet.
 */
export function liveReloadDelay({ timeline, now, loadMs, segmentStart, targetDuration }) {
  if (!Number.isFinite(segmentStart) || !(targetDuration > 0)) return 0;
  const rate = timeline.rate > 0 ? timeline.rate : 1;
  const past = liveRoomPosition(timeline, now + loadMs) - segmentStart;
  const into = ((past % targetDuration) + targetDuration) % targetDuration;
  return into === 0 ? 0 : ((targetDuration - into) / rate) * 1000;
}

/** The load time after one that took `measuredMs`. */
export function learnLoadMs(loadMs, measuredMs) {
  if (!Number.isFinite(measuredMs)) return loadMs;
  const next = loadMs + LIVE_LOAD_MS.gain * (measuredMs - loadMs);
  return Math.min(LIVE_LOAD_MS.max, Math.max(LIVE_LOAD_MS.min, next));
}

/**
 * What a live player does about its distance from the room, `drift` (its
 * position less the room's, s; positive ahead): 'play' (keep playing, or
 * start now: waiting would not hold its frame) when within `tolerance`, else
 * 'reload' (load the stream again), unless it already did `reloads` times in
 * a row (LIVE_RELOADS_MAX): then 'play' from where it is.
 */
export function liveCourse({ drift, tolerance, reloads }) {
  if (Math.abs(drift) <= tolerance) return 'play';
  return reloads >= LIVE_RELOADS_MAX ? 'play' : 'reload';
}
