// YouTube links, through the YouTube IFrame Player API (the contract of
// players/player.js over `YT.Player`).
//
// Written to the documented API: the script (setting `youtube-api-url`) calls
// `onYouTubeIframeAPIReady`; `new YT.Player(iframe, { events })` drives an
// `<iframe>` of `<origin>/embed/<id>?enablejsapi=1`; the events `onReady`,
// `onStateChange` (YT.PlayerState: -1 unstarted, 0 ended, 1 playing, 2 paused,
// 3 buffering, 5 cued), `onError` (2, 5, 100, 101, 150, 153),
// `onPlaybackRateChange` and `onAutoplayBlocked`; the calls `playVideo`,
// `pauseVideo`, `seekTo(s, true)`, `getCurrentTime`, `getDuration`,
// `getPlayerState`, `setPlaybackRate`, `getPlaybackRate`,
// `getAvailablePlaybackRates`, `getVideoLoadedFraction`, `cueVideoById`,
// `mute`/`unMute`/`isMuted`, `setVolume`/`getVolume`, `destroy`.
//
// The page makes the <iframe> itself, so that it can say what referrer the
// embed gets: the page sends none (room addresses carry keys), but YouTube
// refuses an embed that names no site (error 153); `strict-origin` gives it the
// page's origin and nothing of the path.
//
// How YouTube's player maps onto the <video>'s readings and events:
//   * paused follows what was asked (play() clears it at once, as the <video>'s
//     does), and the player's own pauses and ends;
//   * buffering (state 3) is `waiting` with readyState 2: a stall under the
//     room's stall policy, like an ad break, which shows as buffering too;
//   * a seek is `seeking` until the player reports the new position, then
//     `seeked`;
//   * a cued video has no duration and starts playing when sought: the adapter
//     plays it muted until it has started, pauses it, and only then says
//     `loadedmetadata` (the video is ready to be held at any position);
//   * positions are coarse: the widget keeps the last position the player
//     posted across frames and, while playing, adds the time since the post's
//     own timestamp (at most 1 s); what that misses (a post's delay, a rate or
//     a seek since the post, two processes' clocks read a few ms apart) is the
//     declared precision, 25 ms.

import { loadScript, namedError, sourceOf } from './player.js';

/** YouTube's usual rates (getAvailablePlaybackRates() says which this video has). */
const RATES = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
const POLL_MS = 50;
/** A seek is taken as landed when the position is this close to where it should be. */
const LANDED_S = 0.5;
/** A seek that has not landed after this is given up (the position is then what the player says). */
const SEEK_GIVE_UP_MS = 8000;
/** Seconds behind a live stream's end the player follows it. */
const LIVE_MARGIN_S = 3;

const ERRORS = {
  2: 'the link does not hold a valid YouTube video id',
  5: 'YouTube\'s player cannot play this video in this browser',
  100: 'the video was not found: it was removed or made private',
  101: 'the owner of this video does not allow it to be played on other sites',
  150: 'the owner of this video does not allow it to be played on other sites',
  153: 'YouTube refused the player because it was not told which site embeds it',
};

/** The API, loaded once per page; resolves to window.YT once YT.Player exists. */
let api = null;
function loadApi(url) {
  if (window.YT?.Player) return Promise.resolve(window.YT);
  if (!api) {
    api = new Promise((resolve, reject) => {
      const before = window.onYouTubeIframeAPIReady;
      window.onYouTubeIframeAPIReady = () => {
        if (typeof before === 'function') before();
        resolve(window.YT);
      };
      loadScript(url).catch((error) => {
        api = null;
        reject(error);
      });
    });
  }
  return api;
}

export default class YouTubePlayer extends EventTarget {
  constructor(host, { apiUrl }) {
    super();
    this.capabilities = Object.freeze({
      rates: RATES, rateRange: [0.25, 2], positionPrecision: 0.025, positionUpdateMs: 250, reportsStalls: true, exactSeek: false,
    });
    this.host = host;
    this.apiUrl = apiUrl;
    this.box = document.createElement('div');
    this.box.className = 'provider-player';
    host.insertBefore(this.box, host.querySelector('.overlay'));
    this.yt = null; // the YT.Player, once made
    this.ready = false; // onReady came
    this.activity = null;
    this.id = null;
    this.state = -1; // the last YT.PlayerState
    this.primed = false; // played and paused once: the video can be held and sought
    this.priming = false;
    this.wantPaused = true;
    this.seekTarget = null; // { to, at (ms), playing }
    this.askedRate = null; // the rate last asked of the player
    this.error = null;
    this.pendingPlay = null; // { resolve, reject }
    this.loaded = 0; // the last loaded fraction, for `progress`
    this.viewerMuted = false;
    this.viewerVolume = 1;
    this.destroyed = false;
    this.poll = setInterval(() => this.check(), POLL_MS);
  }

  fire(type) {
    if (!this.destroyed) this.dispatchEvent(new Event(type));
  }

  // MARK: the contract

  read() {
    const yt = this.ready ? this.yt : null;
    const live = this.activity?.live === true;
    const duration = yt ? yt.getDuration() : 0;
    const primed = this.primed && !this.error;
    const seeking = this.seekTarget != null;
    let readyState = 0;
    if (primed) readyState = this.state === 3 ? 2 : 4;
    const currentTime = seeking ? this.seekTarget.to : (yt && this.primed ? yt.getCurrentTime() : 0);
    const known = primed && duration > 0;
    const readings = {
      currentTime,
      paused: this.wantPaused,
      seeking,
      readyState,
      duration: live ? Infinity : (known ? duration : NaN),
      // The rate asked, once asked: the player's own says so only at its next post.
      playbackRate: this.askedRate ?? (yt ? yt.getPlaybackRate() : 1),
      buffered: known ? [[0, Math.max(0, yt.getVideoLoadedFraction()) * duration]] : [],
      error: this.error,
    };
    if (live) {
      readings.live = true;
      if (known) readings.liveEdge = Math.max(0, duration - LIVE_MARGIN_S);
    }
    return readings;
  }

  load(activity) {
    this.activity = activity;
    this.id = sourceOf(activity).id ?? null;
    this.reset();
    if (!this.id) {
      this.fail(2);
      return;
    }
    if (this.yt && this.ready) {
      this.yt.cueVideoById(this.id);
      return;
    }
    if (!this.yt) this.make();
  }

  reload() {
    if (this.activity) this.load(this.activity);
  }

  play() {
    this.abortPlay();
    if (!this.ready || this.error) return Promise.reject(namedError('AbortError', 'the player is not ready'));
    this.wantPaused = false;
    return new Promise((resolve, reject) => {
      this.pendingPlay = { resolve, reject };
      this.yt.playVideo();
    });
  }

  pause() {
    this.wantPaused = true;
    this.abortPlay();
    if (this.ready && this.primed) this.yt.pauseVideo();
  }

  seek(t) {
    if (!this.ready || !this.primed) return;
    this.seekTarget = { to: t, at: performance.now(), playing: !this.wantPaused };
    this.yt.seekTo(t, true);
  }

  setRate(r) {
    if (!this.ready) return;
    const rates = this.capabilities.rates;
    const nearest = rates.reduce((best, x) => (Math.abs(x - r) < Math.abs(best - r) ? x : best), rates[0]);
    if (this.askedRate === nearest) return;
    this.askedRate = nearest;
    this.yt.setPlaybackRate(nearest);
  }

  setVolume(volume, muted) {
    this.viewerVolume = volume;
    this.viewerMuted = muted;
    if (!this.ready) return;
    this.yt.setVolume(Math.round(volume * 100));
    if (this.priming) return; // the priming's mute ends with it
    if (muted) this.yt.mute();
    else this.yt.unMute();
    this.fire('volumechange');
  }

  volume() {
    return { volume: this.viewerVolume, muted: this.viewerMuted };
  }

  destroy() {
    this.abortPlay();
    this.destroyed = true;
    clearInterval(this.poll);
    try {
      this.yt?.destroy();
    } catch {
      // A player whose frame never came has nothing to take down.
    }
    this.box.remove();
  }

  // MARK: the player

  reset() {
    this.abortPlay();
    this.primed = false;
    this.priming = false;
    this.wantPaused = true;
    this.seekTarget = null;
    this.error = null;
    this.state = -1;
    this.loaded = 0;
    this.askedRate = null;
  }

  async make() {
    let YT;
    try {
      YT = await loadApi(this.apiUrl);
    } catch (error) {
      this.error = { code: 0, message: error.message, words: `YouTube's player could not be loaded: ${error.message}` };
      this.fire('error');
      return;
    }
    if (this.destroyed) return;
    const origin = new URL(this.apiUrl, location.href).origin;
    const iframe = document.createElement('iframe');
    const query = new URLSearchParams({
      enablejsapi: '1', controls: '0', disablekb: '1', playsinline: '1', rel: '0', fs: '0', iv_load_policy: '3', origin: location.origin,
    });
    this.framed = this.id; // the video the frame was made with
    iframe.src = `${origin}/embed/${encodeURIComponent(this.id)}?${query}`;
    iframe.title = 'YouTube video player';
    iframe.allow = 'autoplay; encrypted-media; picture-in-picture';
    iframe.referrerPolicy = 'strict-origin';
    this.box.append(iframe);
    this.yt = new YT.Player(iframe, {
      events: {
        onReady: () => this.onReady(),
        onStateChange: (event) => this.onState(event.data),
        onError: (event) => this.fail(event.data),
        onPlaybackRateChange: () => this.fire('ratechange'),
        onAutoplayBlocked: () => this.onAutoplayBlocked(),
      },
    });
  }

  onReady() {
    if (this.destroyed) return;
    this.ready = true;
    const rates = this.yt.getAvailablePlaybackRates?.();
    if (Array.isArray(rates) && rates.length > 0) {
      this.capabilities = Object.freeze({
        ...this.capabilities, rates: [...rates].sort((a, b) => a - b), rateRange: [Math.min(...rates), Math.max(...rates)],
      });
    }
    this.setVolume(this.viewerVolume, this.viewerMuted);
    // Another item came while the frame was loading: cue it (its state 5 primes it).
    if (this.framed !== this.id) this.yt.cueVideoById(this.id);
    else this.prime();
  }

  /** Plays the cued video muted until it has started, then pauses it: from
   *  then on it has a duration and holds any position it is sought to. */
  prime() {
    if (this.primed || this.priming || this.error) return;
    this.priming = true;
    this.yt.mute();
    this.yt.playVideo();
  }

  onState(state) {
    if (this.destroyed) return;
    const previous = this.state;
    this.state = state;
    if (this.priming) {
      if (state === 5 || state === -1) return;
      if (state === 1 || (state === 2 && previous === 1)) {
        this.priming = false;
        this.primed = true;
        this.yt.pauseVideo();
        this.yt.seekTo(0, true);
        if (!this.viewerMuted) this.yt.unMute();
        this.seekTarget = { to: 0, at: performance.now(), playing: false };
        this.fire('loadedmetadata');
      }
      return;
    }
    if (state === 5 && !this.primed) {
      this.prime(); // a new item cued in the same player
      return;
    }
    if (!this.primed && (state === 1 || state === 2)) {
      // Started by a play() after even a muted start was refused (the viewer's
      // click): it is primed now.
      this.primed = true;
      this.fire('loadedmetadata');
    }
    switch (state) {
      case 1:
        if (this.wantPaused) {
          this.yt.pauseVideo(); // the player started on its own (a click in the frame): the room decides
          break;
        }
        this.pendingPlay?.resolve();
        this.pendingPlay = null;
        this.fire('playing');
        break;
      case 2:
        if (!this.wantPaused && this.seekTarget == null) {
          this.wantPaused = true; // paused from inside the frame, as a <video>'s own pause
          this.abortPlay();
        }
        break;
      case 3:
        if (!this.wantPaused && this.seekTarget == null) this.fire('waiting');
        break;
      case 0:
        this.wantPaused = true;
        this.fire('ended');
        break;
      default:
        break;
    }
  }

  onAutoplayBlocked() {
    if (this.priming) {
      // Not even muted: the video is still cued; the first play() (a click) primes it.
      this.priming = false;
      return;
    }
    this.wantPaused = true;
    const pending = this.pendingPlay;
    this.pendingPlay = null;
    pending?.reject(namedError('NotAllowedError', 'YouTube\'s player was not allowed to start without a click'));
  }

  fail(code) {
    this.abortPlay();
    this.priming = false;
    this.error = { code, message: `YouTube error ${code}`, words: ERRORS[code] ?? `YouTube's player failed (error ${code})` };
    this.fire('error');
  }

  abortPlay() {
    const pending = this.pendingPlay;
    this.pendingPlay = null;
    pending?.reject(namedError('AbortError', 'play() was interrupted'));
  }

  /** Every 50 ms: a seek landed, the data loaded. */
  check() {
    if (!this.ready || this.destroyed || !this.primed) return;
    const yt = this.yt;
    const seek = this.seekTarget;
    if (seek) {
      const elapsed = (performance.now() - seek.at) / 1000;
      const position = yt.getCurrentTime();
      const state = yt.getPlayerState();
      const moving = state === 1 ? elapsed * yt.getPlaybackRate() : 0;
      const there = Math.abs(position - seek.to) <= LANDED_S + moving;
      if ((there && state !== 3 && state !== -1) || elapsed * 1000 > SEEK_GIVE_UP_MS) {
        this.seekTarget = null;
        this.fire('seeked');
        this.fire('canplay');
      }
    }
    const fraction = yt.getVideoLoadedFraction();
    if (fraction !== this.loaded) {
      this.loaded = fraction;
      this.fire('progress');
    }
  }
}
