// The Vimeo player behind the player interface: to the player logic it looks
// like the <video> (readings, the video's event names, play/pause/seek/rate).
//
// Vimeo's Player SDK (`Vimeo.Player`, loaded from the `vimeo-api-url`
// setting) drives a player in an iframe of Vimeo's origin by postMessage, so
// every call is a Promise and the page never reads the video itself. The
// position is asked for every VIMEO_POLL_MS and placed at the middle of each
// round trip, extrapolated between (sync/remote-position.js); play, pause,
// buffering and seeks are followed from the documented events. Decisions and
// words are in sync/vimeo.js; this file only calls the SDK and keeps readings.

import { loadScript, namedError, sourceOf } from './player.js';
import { RemotePosition } from '../sync/remote-position.js';
import { HAVE_CURRENT_DATA, HAVE_ENOUGH_DATA, HAVE_METADATA } from '../sync/readiness.js';
import {
  RATE_REFUSED_NOTICE, VIMEO_POLL_MS, vimeoCapabilities, vimeoErrorText, vimeoScriptFailed,
} from '../sync/vimeo.js';

/** The SDK, loaded once per page (a classic script that sets window.Vimeo). */
function loadSdk(url) {
  const failed = (why) => Object.assign(new Error(vimeoScriptFailed(url ?? 'nowhere', why)), { name: 'ScriptError' });
  if (window.Vimeo?.Player) return Promise.resolve(window.Vimeo);
  return loadScript(url).then(
    () => (window.Vimeo?.Player ? window.Vimeo : Promise.reject(failed('it defines no Vimeo.Player'))),
    (error) => Promise.reject(failed(error.message)),
  );
}

export class VimeoPlayer extends EventTarget {
  /**
   * @param {HTMLElement} host the room's screen: the player's box goes in it
   * @param {{ apiUrl: string | null }} config `apiUrl`: the SDK script (the `vimeo-api-url` setting)
   */
  constructor(host, { apiUrl }) {
    super();
    this.box = document.createElement('div');
    this.box.className = 'provider-player';
    host.insertBefore(this.box, host.querySelector('.overlay'));
    this.apiUrl = apiUrl;
    this.viewerVolume = 1;
    this.viewerMuted = false;
    this.pendingPlay = null; // { reject } of a play() not yet answered
    this.destroyed = false;
    this.capabilities = vimeoCapabilities(false);
    this.notice = null; // words for the viewer about this player's limits
    this.player = null;
    this.host = null; // the element the SDK puts its iframe in (one per item)
    this.activity = null;
    this.generation = 0; // numbers the loads: callbacks of a replaced player are ignored
    this.position = new RemotePosition();
    this.poll = null;
    this.polling = false;
    this.clear();
  }

  clear() {
    this.position.reset();
    this.loaded = false;
    this.paused = true;
    this.seeking = false;
    this.buffering = false;
    this.ended = false;
    this.duration = NaN;
    this.rate = 1;
    this.bufferedTo = 0;
    this.error = null;
  }

  // MARK: the interface

  /** The readings of sync/actions.js, as a <video> would give them. */
  read() {
    let readyState = 0;
    if (this.loaded) readyState = this.buffering || this.seeking ? HAVE_CURRENT_DATA : HAVE_ENOUGH_DATA;
    else if (Number.isFinite(this.duration)) readyState = HAVE_METADATA;
    return {
      currentTime: this.position.positionAt(performance.now()),
      paused: this.paused,
      seeking: this.seeking,
      readyState,
      duration: this.duration,
      playbackRate: this.rate,
      buffered: this.bufferedTo > 0 ? [[0, this.bufferedTo]] : [],
      error: this.error,
    };
  }

  /** A new item: `activity.source` is `{ kind: 'vimeo', id }`. */
  load(activity) {
    this.abortPlay();
    this.destroyPlayer();
    this.activity = activity;
    this.clear();
    const generation = ++this.generation;
    const id = String(sourceOf(activity).id ?? '');
    const current = () => generation === this.generation && !this.destroyed;
    this.host = document.createElement('div');
    this.box.append(this.host);
    loadSdk(this.apiUrl).then((Vimeo) => {
      if (!current()) return;
      // No autoplay and no controls of Vimeo's own: the room decides when it plays.
      const player = new Vimeo.Player(this.host, {
        id: Number(id), autoplay: false, controls: false, autopause: false, playsinline: true, muted: false,
      });
      this.player = player;
      this.listen(player, current, id);
      return player.ready().then(() => {
        if (current()) this.applyVolume();
      });
    }).catch((error) => {
      if (current()) this.fail(error, id);
    });
  }

  reload() {
    if (this.activity) this.load(this.activity);
  }

  /** Resolves when Vimeo plays; rejects with the browser's error name (NotAllowedError: autoplay refused). */
  play() {
    this.abortPlay();
    if (!this.player || this.error) return Promise.reject(namedError('AbortError', 'the Vimeo player is not ready'));
    this.paused = false;
    this.ended = false;
    this.position.setMoving(!this.buffering && !this.seeking, performance.now());
    const generation = this.generation;
    return new Promise((resolve, reject) => {
      const pending = { reject };
      this.pendingPlay = pending;
      this.player.play().then(() => {
        if (this.pendingPlay !== pending) return;
        this.pendingPlay = null;
        resolve();
      }, (error) => {
        if (this.pendingPlay !== pending) return;
        this.pendingPlay = null;
        if (generation === this.generation) {
          this.paused = true;
          this.position.setMoving(false, performance.now());
          if (error?.name === 'PrivacyError' || error?.name === 'PasswordError') this.fail(error, sourceOf(this.activity).id);
        }
        reject(error);
      });
    });
  }

  /** A pause() or a new item before play() was answered: play() rejects with AbortError, as the <video>'s. */
  abortPlay() {
    const pending = this.pendingPlay;
    this.pendingPlay = null;
    pending?.reject(namedError('AbortError', 'play() was interrupted'));
  }

  pause() {
    this.abortPlay();
    this.paused = true;
    this.position.setMoving(false, performance.now());
    this.player?.pause().catch(() => {}); // the `pause` event and the next reading say where it stopped
  }

  seek(seconds) {
    if (!this.player) return;
    this.seeking = true;
    this.ended = false;
    this.position.set(seconds, performance.now(), Infinity);
    this.position.setMoving(false, performance.now());
    const generation = this.generation;
    this.player.setCurrentTime(seconds).then((landed) => {
      if (generation !== this.generation) return;
      this.seeking = false;
      // Where it landed, as it says; a reading soon refines it.
      this.position.set(Number.isFinite(landed) ? landed : seconds, performance.now(), Infinity);
      this.position.setMoving(!this.paused && !this.buffering, performance.now());
      this.dispatch('seeked');
    }, (error) => {
      if (generation !== this.generation) return;
      this.seeking = false;
      this.dispatch('seeked'); // RangeError: out of the video; the player logic sees where it is
      if (error?.name !== 'RangeError') this.dispatch('progress');
    });
  }

  /** A rate Vimeo refuses (an account without speed controls) makes this a
   *  player that plays at 1 only and is corrected by seeking: said once in words. */
  setRate(rate) {
    if (!this.player || rate === this.rate) return;
    const previous = this.rate;
    this.rate = rate;
    this.position.setRate(rate, performance.now());
    const generation = this.generation;
    this.player.setPlaybackRate(rate).catch((error) => {
      if (generation !== this.generation) return;
      this.rate = previous;
      this.position.setRate(previous, performance.now());
      if (error?.name === 'RangeError') return; // outside 0.5..2: the rate stays; the capabilities said so
      if (this.capabilities.rates !== 'continuous') return;
      this.capabilities = vimeoCapabilities(true);
      this.notice = RATE_REFUSED_NOTICE;
      this.dispatch('capabilitieschange');
      this.dispatch('ratechange');
    });
  }

  setVolume(volume, muted) {
    this.viewerVolume = volume;
    this.viewerMuted = muted;
    this.applyVolume();
    this.dispatch('volumechange');
  }

  volume() {
    return { volume: this.viewerVolume, muted: this.viewerMuted };
  }

  applyVolume() {
    if (!this.player) return;
    this.player.setVolume(this.viewerVolume).catch(() => {});
    this.player.setMuted(this.viewerMuted).catch(() => {});
  }

  destroy() {
    this.abortPlay();
    this.destroyPlayer();
    this.generation++;
    this.destroyed = true;
    this.activity = null;
    this.clear();
    this.box.remove();
  }

  // MARK: the SDK's side

  listen(player, current, id) {
    const on = (event, handle) => player.on(event, (data) => {
      if (current()) handle(data || {});
    });
    const now = () => performance.now();
    on('loaded', () => {
      // `loadedmetadata` once the duration is known (the interface's promise).
      Promise.all([player.getDuration(), player.getPlaybackRate()]).then(([duration, rate]) => {
        if (!current()) return;
        if (duration > 0) this.duration = duration;
        if (rate > 0) this.rate = rate;
        this.loaded = true;
        this.dispatch('loadedmetadata');
        this.dispatch('canplay');
        this.dispatch('canplaythrough');
        this.startPolling(current);
      }, (error) => {
        if (current()) this.fail(error, id);
      });
    });
    on('durationchange', (d) => {
      if (d.duration > 0) this.duration = d.duration;
    });
    on('play', () => {
      this.paused = false;
    });
    on('playing', (d) => {
      this.paused = false;
      this.buffering = false;
      this.position.set(d.seconds, now(), Infinity);
      this.position.setMoving(!this.seeking, now());
      this.dispatch('playing');
    });
    on('pause', (d) => {
      this.paused = true;
      this.position.setMoving(false, now());
      if (Number.isFinite(d.seconds)) this.position.set(d.seconds, now(), 0.5);
    });
    on('timeupdate', (d) => {
      if (d.duration > 0) this.duration = d.duration;
    });
    on('progress', (d) => {
      if (Number.isFinite(d.seconds)) this.bufferedTo = d.seconds;
      this.dispatch('progress');
    });
    on('bufferstart', () => {
      // Also sent around seeks and at preload (documented): a stall only while it plays.
      this.buffering = true;
      this.position.setMoving(false, now());
      if (!this.seeking && !this.paused) this.dispatch('waiting');
    });
    on('bufferend', () => {
      this.buffering = false;
      this.position.setMoving(!this.paused && !this.seeking, now());
      this.dispatch('canplay');
    });
    on('playbackratechange', (d) => {
      if (d.playbackRate > 0) {
        this.rate = d.playbackRate;
        this.position.setRate(d.playbackRate, now());
        this.dispatch('ratechange');
      }
    });
    on('ended', (d) => {
      this.ended = true;
      this.paused = true;
      this.position.setMoving(false, now());
      if (Number.isFinite(d.seconds)) this.position.set(d.seconds, now(), 0);
      this.dispatch('ended');
    });
    on('error', (d) => {
      // Errors of our own calls are handled where they are made; the rest stop the video.
      if (d.method) return;
      this.fail(d, id);
    });
  }

  startPolling(current) {
    clearInterval(this.poll);
    this.poll = setInterval(() => {
      if (!current() || !this.player || this.polling) return;
      this.polling = true;
      const sentAt = performance.now();
      this.player.getCurrentTime().then((seconds) => {
        this.polling = false;
        if (current() && !this.seeking) this.position.observe(seconds, sentAt, performance.now());
      }, () => {
        this.polling = false;
      });
    }, VIMEO_POLL_MS);
  }

  fail(error, id) {
    this.abortPlay();
    const words = vimeoErrorText(error, id);
    this.error = { code: 0, message: String(error?.message || words), words };
    this.dispatch('error');
  }

  destroyPlayer() {
    clearInterval(this.poll);
    this.poll = null;
    this.polling = false;
    const player = this.player;
    this.player = null;
    player?.destroy().catch(() => {});
    this.host?.remove();
    this.host = null;
  }

  dispatch(type) {
    if (!this.destroyed) this.dispatchEvent(new Event(type));
  }
}

export default VimeoPlayer;
