// The player: makes a <video> follow the room's playback state.
//
// The server is the one authority (docs/protocol.md). This page never decides
// anything about group playback: its controls send commands, and the player
// applies the `state` that comes back, using the server clock (clock.js) to turn
// "playing from `position` since `at` at `rate`" into "where the video should be
// right now". It reports back what only a player can know: `/ready <seq>` when it
// holds the requested position with enough data, `/buffering` when it stalls,
// `/ended <seq>` at the end, and suspensions when it cannot follow (media that
// does not load, autoplay refused).
//
// The decisions are in sync/ (player.js composes them; docs/browser.md has the
// rules). This file is what touches the world: it reads the <video>, feeds the
// decisions its events, the ticks and the timer, and carries out the actions
// they return, in one place (perform()).

import { localNow } from './clock.js';
import { PlayerCore } from './sync/player.js';
import { HAVE_CURRENT_DATA } from './sync/readiness.js';

export { THRESHOLDS } from './sync/drift.js';
export { positionAt } from './sync/timeline.js';

const TICK_MS = 50;
const HISTORY = 40;

export class PlayerSync extends EventTarget {
  /**
   * @param {HTMLVideoElement} video
   * @param {import('./clock.js').ServerClock} clock
   * @param {(line: string) => boolean} send
   */
  constructor(video, clock, send) {
    super();
    this.video = video;
    this.clock = clock;
    this.send = send;
    this.core = new PlayerCore();
    this.wakeTimer = null; // the scheduled start's timer
    this.simulatedStallUntil = 0; // test hook: see simulateStall()
    this.history = []; // the last things the player did, for debugging (and the e2e test)

    const on = (type, handle) => video.addEventListener(type, () => this.perform(handle(this.read())));
    for (const type of ['loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'progress']) {
      on(type, (r) => this.core.tick(r));
    }
    on('waiting', (r) => this.core.waiting(r));
    on('playing', (r) => this.core.playing(r));
    on('ended', (r) => this.core.ended(r));
    on('error', (r) => this.core.mediaFailed(r));
    on('loadedmetadata', () => this.core.mediaLoaded());
    this.interval = setInterval(() => this.perform(this.core.tick(this.read())), TICK_MS);
  }

  // What the rest of the page (room.js, ui.js) and the e2e test read.
  get state() { return this.core.state; }
  get mode() { return this.core.mode; }
  get detail() { return this.core.detail; }
  get join() { return this.core.join; }
  get running() { return this.core.running; }
  get lastStart() { return this.core.lastStart; }
  get playLatency() { return this.core.playLatency; }
  get joinLead() { return this.core.joinLead; }
  get drift() { return this.core.drift; }
  get nudging() { return this.core.nudging; }
  get mediaError() { return this.core.mediaError; }
  get blocked() { return this.core.blocked; }
  /** The viewer drags the seek bar (room.js): hands off the video. */
  get scrubbing() { return this.core.scrubbing; }
  set scrubbing(value) { this.core.scrubbing = value; }

  // MARK: inputs

  /** A new connection's welcome: reports may be needed again. */
  reset() {
    this.core.reset();
  }

  setState(state) {
    this.perform(this.core.setState(state, this.read()));
  }

  setMe(participant) {
    this.perform(this.core.setMe(participant, this.read()));
  }

  /** The `catchup` event: replay `from` at `rate`, level with the group at `until`. */
  startCatchup(event) {
    this.perform(this.core.startCatchup(event, this.read()));
  }

  /** The "click to join playback" button: a user gesture lets play() through. */
  async unblock() {
    this.core.unblock();
    try {
      await this.video.play();
    } catch {
      // Still refused (no media yet, or the browser wants more): reconcile retries.
    }
    this.video.pause();
    this.perform(this.core.afterUnblock(this.read()));
  }

  /** Try the current item again after a load error. */
  retryMedia() {
    this.perform(this.core.retryMedia());
  }

  /**
   * Test hook (used by Tests/e2e): behave exactly as if the network stopped
   * delivering for `ms`: the video freezes, fires `waiting`, and reports no
   * data until the time is up (read()). Everything after that is the normal path.
   */
  simulateStall(ms) {
    this.simulatedStallUntil = performance.now() + ms;
    this.video.dispatchEvent(new Event('waiting'));
    this.video.pause(); // frozen, as without data; the player still counts as running
  }

  // MARK: the video

  /** The video's readings, as the decisions take them (sync/player.js). */
  read() {
    const video = this.video;
    const monotonic = performance.now();
    const now = this.clock.now();
    const starved = monotonic < this.simulatedStallUntil;
    const buffered = [];
    for (let i = 0; !starved && i < video.buffered.length; i++) buffered.push([video.buffered.start(i), video.buffered.end(i)]);
    const seekable = [];
    for (let i = 0; i < video.seekable.length; i++) seekable.push([video.seekable.start(i), video.seekable.end(i)]);
    return {
      now,
      monotonic,
      currentTime: video.currentTime,
      paused: video.paused,
      seeking: video.seeking,
      readyState: starved ? Math.min(video.readyState, HAVE_CURRENT_DATA) : video.readyState,
      duration: video.duration,
      playbackRate: video.playbackRate,
      buffered,
      seekable,
      error: video.error ? { code: video.error.code, message: video.error.message } : null,
    };
  }

  /** Carries out the decisions' actions, in order. */
  perform(actions) {
    const video = this.video;
    for (const action of actions) {
      switch (action.type) {
        case 'pause':
          video.pause();
          break;
        case 'seek':
          video.currentTime = action.to;
          break;
        case 'rate':
          video.playbackRate = action.rate;
          break;
        case 'play':
          this.playAt(action.at, action.rate);
          break;
        case 'load':
          video.src = action.url;
          break;
        case 'reload':
          video.load();
          break;
        case 'wake': {
          clearTimeout(this.wakeTimer);
          const join = action.join;
          this.wakeTimer = setTimeout(() => this.perform(this.core.wake(join, this.read())), action.ms);
          break;
        }
        case 'cancelWake':
          clearTimeout(this.wakeTimer);
          this.wakeTimer = null;
          break;
        case 'send':
          this.send(action.line);
          break;
        case 'note':
          this.note(action.text);
          break;
      }
    }
    this.dispatchEvent(new CustomEvent('change'));
  }

  /** play() at server time `at`: the timer woke a few ms before; the rest is
   *  spun, since a timer alone fires a few ms early or late. */
  playAt(at, rate) {
    const video = this.video;
    const target = this.clock.toLocal(at);
    const woke = localNow();
    while (localNow() < target) {
      // spin: the last few milliseconds
    }
    video.playbackRate = rate;
    const calledAt = localNow();
    const playing = video.play();
    this.note(`play() ${(calledAt - target).toFixed(1)} ms after its instant (spun ${Math.max(0, target - woke).toFixed(1)} ms)`);
    playing?.catch((error) => this.perform(this.core.playRefused(error?.name, this.read())));
  }

  /** Remembers what the player did and why (shown by the e2e test on outliers). */
  note(what) {
    const at = this.clock.now();
    this.history.push(`${(at % 100000).toFixed(1)} ${what}`);
    if (this.history.length > HISTORY) this.history.shift();
  }

  /** The figures the page shows and the e2e test reads. */
  snapshot() {
    const core = this.core;
    return {
      mode: core.mode,
      detail: core.detail,
      seq: core.state?.seq ?? null,
      status: core.state?.playback.status ?? null,
      drift: core.drift,
      nudging: core.nudging,
      playbackRate: this.video.playbackRate,
      playLatency: core.playLatency,
      joinLead: core.joinLead,
      lastStart: core.lastStart,
      offset: this.clock.offset,
      offsetUncertainty: this.clock.uncertainty,
      rtt: this.clock.rtt,
      joining: !!core.join,
      running: !!core.running,
      mediaError: core.mediaError,
      blocked: core.blocked,
      unseekable: core.unseekable,
    };
  }
}
