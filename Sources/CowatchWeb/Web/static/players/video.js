// The page's <video>, for links to media files: the contract of players/player.js
// with nothing translated. Readings are the element's own, events are the
// element's own events passed on, and each command is the element's property or
// method, so a file plays exactly as it did before there were other players.

import { isLive } from '../sync/live.js';
import { LiveTracker } from './live.js';
import { VIDEO_CAPABILITIES } from './player.js';

const LIVE_CAPABILITIES = Object.freeze({
  rates: [1], rateRange: [1, 1], positionPrecision: 0.0001, positionUpdateMs: 0, reportsStalls: true, exactSeek: false,
});

/** Frames kept: the screen's drift takes the last few (sync/screen.js). */
const KEPT_FRAMES = 24;

const EVENTS = [
  'loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'pause', 'waiting', 'ended', 'error', 'progress',
  'ratechange', 'volumechange',
];

let outputRateRead; // once per page: undefined until read

/** How long a probe waits for its seek: one that has not landed by then plays as it stands. */
const PROBE_SEEK_MS = 1000;
/** A probe asked to play at an instant wakes this long before it and spins. */
const PROBE_SPIN_MS = 10;

/** The sample rate of the page's audio output, which sets the size of its
 *  blocks (sync/grid.js), or null: read from an AudioContext made and closed
 *  at once (one that is never started plays nothing). */
function outputRate() {
  if (outputRateRead !== undefined) return outputRateRead;
  outputRateRead = null;
  try {
    const context = new globalThis.AudioContext();
    outputRateRead = context.sampleRate;
    context.close().catch(() => {});
  } catch {
    // No Web Audio: starts are not placed on blocks.
  }
  return outputRateRead;
}

/** The probe's volume: -80 dB, below anything heard, but not 0 (see probe()). */
const INAUDIBLE = 0.0001;

/** What the video's clock is: 'silent' (no sound track: the system clock),
 *  'sound' (the audio output's), or 'muted' (a sound track muted or at volume 0,
 *  which the browser plays another way). Whether there is a sound track is told
 *  by the bytes of audio decoded (Chromium, Safari), `mozHasAudio` (Firefox) or
 *  `audioTracks` where a browser has them. */
export function soundOf(video) {
  const hasSound = video.webkitAudioDecodedByteCount > 0 || video.mozHasAudio === true || video.audioTracks?.length > 0;
  if (!hasSound) return 'silent';
  return video.muted || video.volume === 0 ? 'muted' : 'sound';
}

export default class VideoPlayer extends EventTarget {
  constructor(host, { video }) {
    super();
    this.video = video;
    this.fileCapabilities = VIDEO_CAPABILITIES;
    this.forward = (event) => this.dispatchEvent(new Event(event.type));
    for (const type of EVENTS) video.addEventListener(type, this.forward);
    video.hidden = false;
    this.activity = null;
    this.hushedFrom = undefined; // the volume to come back to, while out of hearing (hush)
    // An HLS live stream's readings are in stream time (players/live.js): the
    // same frame has the same time in every window.
    this.live = new LiveTracker();
    this.liveKnown = false;
    // The last frames presented: [expected display time (performance.now()
    // ms), media time (s)], for what the screen shows (sync/screen.js).
    this.frames = [];
    this.frameCallback = 0;
    this.watchFrames();
  }

  /** Keeps the frames the compositor presents, where the browser says
   *  (requestVideoFrameCallback); a new source is watched afresh. */
  watchFrames() {
    const video = this.video;
    if (typeof video.requestVideoFrameCallback !== 'function') return;
    const onFrame = (_now, metadata) => {
      this.frames.push([metadata.expectedDisplayTime, metadata.mediaTime]);
      if (this.frames.length > KEPT_FRAMES) this.frames.splice(0, this.frames.length - KEPT_FRAMES);
      this.frameCallback = video.requestVideoFrameCallback(onFrame);
    };
    if (this.frameCallback) video.cancelVideoFrameCallback(this.frameCallback);
    this.frames = [];
    this.frameCallback = video.requestVideoFrameCallback(onFrame);
  }

  /** A live HLS stream in Chromium plays only at rate 1 (any other rate fails
   *  it) and cannot be sought (sync/live.js). */
  get capabilities() {
    return isLive(this.activity, this.video.duration) ? LIVE_CAPABILITIES : this.fileCapabilities;
  }

  read() {
    const video = this.video;
    const buffered = [];
    for (let i = 0; i < video.buffered.length; i++) buffered.push([video.buffered.start(i), video.buffered.end(i)]);
    const seekable = [];
    for (let i = 0; i < video.seekable.length; i++) seekable.push([video.seekable.start(i), video.seekable.end(i)]);
    const readings = {
      currentTime: video.currentTime,
      paused: video.paused,
      ended: video.ended,
      seeking: video.seeking,
      readyState: video.readyState,
      duration: video.duration,
      playbackRate: video.playbackRate,
      buffered,
      seekable,
      error: video.error ? { code: video.error.code, message: video.error.message } : null,
      frames: this.frames,
      sound: soundOf(video),
      outputRate: null,
    };
    if (readings.sound === 'sound') readings.outputRate = outputRate();
    if (!isLive(this.activity, readings.duration)) return readings;
    const live = this.live.map(readings);
    if (this.live.lost()) {
      // Its first segment could not be told (sync/live.js): begin again, at the live edge.
      this.reload();
      return { ...live, readyState: 0 };
    }
    if (live.readyState > 0 && !this.liveKnown) {
      // Stream time is known from now on: the readings have what `loadedmetadata` promises.
      this.liveKnown = true;
      queueMicrotask(() => this.dispatchEvent(new Event('loadedmetadata')));
    }
    return live;
  }

  load(activity) {
    this.activity = activity;
    this.liveKnown = false;
    this.live.reset(activity.url);
    this.video.src = activity.url;
    this.watchFrames();
  }

  reload() {
    const live = isLive(this.activity, this.video.duration); // before load() forgets the duration
    this.liveKnown = false;
    this.live.reset(this.activity?.url ?? null);
    this.video.load();
    // A live stream loaded again is played at once: one left paused after
    // loading fails or jumps when played later (sync/live.js). A refusal
    // (autoplay) leaves it paused, and the player logic's start takes it from there.
    if (live) this.video.play().catch(() => {});
  }

  play() { return this.video.play(); }
  pause() { this.video.pause(); }

  /** Plays for `ms` where it stands, out of hearing, and pauses: when did the
   *  clock start moving after play()? With a sound track the clock is the
   *  audio output's, which starts tens of ms after the call (sync/latency.js,
   *  PROBE). A volume of 0 or `muted` would take another path through the
   *  browser (in Chromium a silent one, which starts in half the time), so an
   *  audible video plays at a volume nobody hears instead, and a muted one muted.
   *  It seeks where it stands first (a start after a seek is what it measures),
   *  and calls play() at `at` (performance.now() ms) when given, else at once.
   *  Resolves to { from, calledAt, readAt, currentTime, rate } (performance.now() ms). */
  async probe(ms, at) {
    const video = this.video;
    const volume = video.volume;
    // From a seek where it stands: a clock just paused still holds the audio it
    // had queued, and would start from that, sooner than any start does.
    if (!video.seeking) video.currentTime = video.currentTime;
    await new Promise((resolve) => {
      const done = () => { clearTimeout(timer); video.removeEventListener('seeked', done); resolve(); };
      const timer = setTimeout(done, PROBE_SEEK_MS);
      video.addEventListener('seeked', done);
    });
    const from = video.currentTime;
    if (!video.muted && volume > 0) video.volume = INAUDIBLE;
    try {
      if (at !== undefined) {
        // A timer to a few ms before, then a spin, as a start's play() (sync/player-sync.js: playAt).
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - PROBE_SPIN_MS - performance.now())));
        while (performance.now() < at) { /* spin */ }
      }
      const calledAt = performance.now();
      await video.play();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, calledAt + ms - performance.now())));
      const readAt = performance.now();
      return { from, calledAt, readAt, currentTime: video.currentTime, rate: video.playbackRate };
    } finally {
      video.pause();
      // Unless the viewer set a volume of their own meanwhile.
      if (video.volume === INAUDIBLE) video.volume = volume;
    }
  }

  /** Out of hearing (`on`), or the volume as it was: a start with sound
   *  begins early at a volume nobody hears (sync/start.js: PREROLL), for the
   *  reason probe() does not mute. A volume the viewer set meanwhile is kept. */
  hush(on) {
    const video = this.video;
    if (on) {
      if (this.hushedFrom !== undefined || video.muted || !(video.volume > 0) || video.volume === INAUDIBLE) return;
      this.hushedFrom = video.volume;
      video.volume = INAUDIBLE;
    } else if (this.hushedFrom !== undefined) {
      if (video.volume === INAUDIBLE) video.volume = this.hushedFrom;
      this.hushedFrom = undefined;
    }
  }

  /** No seek lands in a live stream (its `seekable` is empty): the player
   *  logic follows one by loading it again (sync/live.js). */
  seek(t) {
    if (isLive(this.activity, this.video.duration)) return;
    this.video.currentTime = t;
  }
  setRate(r) {
    if (isLive(this.activity, this.video.duration) && r !== 1) return; // it would fail the stream
    this.video.playbackRate = r;
  }

  setVolume(volume, muted) {
    this.video.volume = volume;
    this.video.muted = muted;
  }

  volume() { return { volume: this.video.volume, muted: this.video.muted }; }

  /** Another kind of player takes over: the element stays in the page (it is
   *  the page's), emptied and hidden. */
  destroy() {
    const video = this.video;
    for (const type of EVENTS) video.removeEventListener(type, this.forward);
    if (this.frameCallback) video.cancelVideoFrameCallback(this.frameCallback);
    this.frameCallback = 0;
    video.pause();
    video.removeAttribute('src');
    video.load();
    video.hidden = true;
    this.live.reset(null);
  }
}
