// An HLS live stream in the page's <video>: its readings in stream time.
//
// The <video> counts a live stream's currentTime from the segment it began on,
// which differs between windows (sync/live.js has the measurement and the
// rules). This reads what the rules need from the world: the playlist (fetched
// by the page once per target duration, as the video itself does) and the
// names of the segments the video fetched (Resource Timing, cleared when the
// stream is loaded again). Until the video's first segment is found in the
// playlist, the readings say there is nothing to play yet (readyState 0): a
// position in the video's own count would mean nothing to the room.

import { liveEdge, originSegment, parsePlaylist } from '../sync/live.js';

/** Before the playlist says its target duration, it is fetched this often (ms). */
const FIRST_REFRESH_MS = 1000;
/** With a frame but no origin for this many target durations, the stream is loaded again. */
const LOST_AFTER_TARGET_DURATIONS = 3;

export class LiveTracker {
  constructor() {
    this.reset(null);
  }

  /** A new stream, or the same loaded again: forget what the video fetched. */
  reset(url) {
    this.url = url;
    this.playlist = null;
    this.origin = null; // { sequence, start } of the segment currentTime counts from
    this.fetching = false;
    this.fetchedAt = -Infinity;
    this.problem = null; // why there is no stream time, in words
    this.epoch = (this.epoch ?? 0) + 1;
    this.framedAt = null; // when the video first had a frame while the origin was unknown
    performance.clearResourceTimings?.();
    // At once: the playlist must still list the segment the video begins on.
    if (url) this.refresh();
  }

  /** The origin could not be told for a while after the video had a frame
   *  (the page read the playlist too late): the stream must be loaded again. */
  lost() {
    if (this.origin || this.framedAt == null || !this.playlist) return false;
    return performance.now() - this.framedAt > LOST_AFTER_TARGET_DURATIONS * this.playlist.targetDuration * 1000;
  }

  /** Called with each reading of a live video: keeps the playlist fresh and
   *  finds the origin once the video has a frame. */
  update(readyState) {
    if (!this.url) return;
    const now = performance.now();
    const every = this.playlist ? this.playlist.targetDuration * 1000 : FIRST_REFRESH_MS;
    if (!this.fetching && now - this.fetchedAt >= every) this.refresh();
    if (this.origin || readyState < 2) return;
    this.framedAt ??= now;
    if (!this.playlist) return;
    const fetched = performance.getEntriesByType('resource').map((entry) => entry.name);
    const origin = originSegment(fetched, this.playlist);
    // Taken only from a playlist at least as new as the last segment the video fetched.
    if (origin && this.newestKnown(fetched)) this.origin = origin;
  }

  newestKnown(fetched) {
    const files = new Set(this.playlist.segments.map((s) => s.uri.split(/[?#]/)[0].split('/').pop()));
    const segments = fetched.map((url) => url.split(/[?#]/)[0].split('/').pop()).filter((file) => !file.endsWith('.m3u8'));
    return segments.length > 0 && files.has(segments[segments.length - 1]);
  }

  refresh() {
    const epoch = this.epoch;
    this.fetching = true;
    this.fetchedAt = performance.now();
    fetch(this.url, { cache: 'no-store', credentials: 'omit' })
      .then((response) => (response.ok ? response.text() : Promise.reject(new Error(`HTTP ${response.status}`))))
      .then((text) => {
        if (epoch !== this.epoch) return;
        const playlist = parsePlaylist(text);
        this.problem = playlist ? null : 'the live playlist is not a media playlist';
        if (playlist) this.playlist = playlist;
      }, (error) => {
        if (epoch !== this.epoch) return;
        // Without the playlist (a server that does not allow this page to read it), no stream time.
        this.problem = `the live playlist could not be read by this page (${error.message})`;
      })
      .finally(() => {
        if (epoch === this.epoch) this.fetching = false;
      });
  }

  /** The <video>'s readings in stream time, with `live` and `liveEdge`. */
  map(readings) {
    this.update(readings.readyState);
    if (!this.origin) return { ...readings, readyState: 0, buffered: [], seekable: [], live: true, duration: Infinity };
    const shift = this.origin.start;
    return {
      ...readings,
      currentTime: readings.currentTime + shift,
      buffered: readings.buffered.map(([a, b]) => [a + shift, b + shift]),
      seekable: (readings.seekable ?? []).map(([a, b]) => [a + shift, b + shift]),
      duration: Infinity,
      live: true,
      liveEdge: liveEdge(this.playlist),
      liveTargetDuration: this.playlist.targetDuration,
      liveOrigin: this.origin.start, // stream time of the first frame this load played
    };
  }
}
