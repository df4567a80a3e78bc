// The player: makes the item's player follow the room's playback state.
//
// The server is the one authority (docs/protocol.md). This page never decides
// anything about group playback: its controls send commands, and the player
// applies the `state` that comes back, using the server clock (server-clock.js) to
// turn "playing from `position` since `at` at `rate`" into "where the video should
// be right now". It reports back what only a player can know: `/ready <seq>` when it
// holds the requested position with enough data, `/buffering` when it stalls,
// `/ended <seq>` at the end, and suspensions when it cannot follow (media that
// does not load, autoplay refused).
//
// The decisions are the modules beside this one in sync/ (player.js composes
// them; docs/browser.md has the rules). This file is what touches the world: it
// reads the <video>, feeds the decisions its events, the ticks and the timer,
// and carries out the actions they return, in one place (perform()).
//
// What plays the item is an adapter (players/player.js has the contract): the
// page's <video> for media files, a provider's embedded player for a provider's
// link, chosen from the item's `source.kind` and swapped when that changes.

import { localNow } from './server-clock.js';
import { PlayerCore } from './player.js';
import { ownReasonsOf } from './apart.js';
import { HAVE_CURRENT_DATA } from './readiness.js';
import { apiUrlFor, EMPTY_READINGS, importAdapter, sourceKind } from '../players/player.js';
import { correctionFor, seekPolicy } from './correct.js';
import VideoPlayer from '../players/video.js';

export { THRESHOLDS } from './drift.js';
export { positionAt } from './timeline.js';

const TICK_MS = 50;

/** Within how many ms of the group the badge says "In sync": the player's own
 *  band when it is corrected by seeking, else the page's usual threshold. */
function inSyncMs(capabilities) {
  if (!capabilities || correctionFor(capabilities) !== 'seek') return undefined;
  return seekPolicy(capabilities).start * 1000;
}
const HISTORY = 40;

export class PlayerSync extends EventTarget {
  /**
   * @param {HTMLVideoElement} video the page's <video>; its parent hosts the
   *   other players
   * @param {import('./server-clock.js').ServerClock} clock
   * @param {(line: string) => boolean} send
   */
  constructor(video, clock, send) {
    super();
    this.video = video;
    this.host = video.parentElement;
    this.clock = clock;
    this.send = send;
    this.core = new PlayerCore();
    // On an https:// page the browser does not load an http:// video as it is (sync/mixed-content.js).
    this.core.pageProtocol = globalThis.location?.protocol ?? null;
    this.wakeTimer = null; // the scheduled start's timer
    this.hushTimer = null; // brings the sound back after a start begun out of hearing
    this.simulatedStallUntil = 0; // test hook: see simulateStall()
    this.history = []; // the last things the player did, for debugging (and the e2e test)
    this.kind = 'file'; // the kind of player in use
    this.notice = null; // the last notice said (core.notice)
    this.player = null; // the adapter (null while one is being made)
    this.making = 0; // numbers the adapters made, so that a slow one replaced meanwhile is dropped
    this.use(new VideoPlayer(this.host, { video, apiUrl: null }));
    video.addEventListener('volumechange', () => {
      if (this.player && this.player.video !== video) this.player.setVolume(video.volume, video.muted);
    });
    this.interval = setInterval(() => this.perform(this.core.tick(this.read())), TICK_MS);
  }

  /** Listens to an adapter's events, as it listened to the <video>'s. */
  use(player) {
    this.player = player;
    const on = (type, handle) => player.addEventListener(type, () => {
      if (this.player === player) this.perform(handle(this.read()));
    });
    for (const type of ['loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'pause', 'progress']) {
      on(type, (r) => this.core.tick(r));
    }
    on('waiting', (r) => this.core.waiting(r));
    on('playing', (r) => this.core.playing(r));
    on('ended', (r) => this.core.ended(r));
    on('error', (r) => this.core.mediaFailed(r));
    on('loadedmetadata', (r) => this.core.mediaLoaded(r));
    for (const type of ['loadedmetadata', 'ratechange']) {
      player.addEventListener(type, () => {
        if (this.player === player) this.dispatchEvent(new CustomEvent(type));
      });
    }
    // An adapter that learns it can do less than it declared (a Vimeo video
    // whose rate cannot be changed) says so once, in words.
    player.addEventListener('capabilitieschange', () => {
      if (this.player === player && player.notice) this.dispatchEvent(new CustomEvent('notice', { detail: player.notice }));
    });
    // The page's sound controls set the <video>'s volume (room/sound-and-keys.js); another
    // player takes it from there.
    if (player.video !== this.video) player.setVolume(this.video.volume, this.video.muted);
  }

  /** Loads `activity` in the player its source needs, making that player first
   *  when the kind changed (the old one is destroyed). */
  async loadActivity(activity) {
    const kind = sourceKind(activity);
    if (kind === this.kind && this.player) {
      this.player.load(activity);
      return;
    }
    this.player?.destroy();
    this.player = null;
    this.kind = kind;
    const making = ++this.making;
    let player;
    try {
      const { default: Adapter } = await importAdapter(kind);
      player = new Adapter(this.host, { video: this.video, apiUrl: apiUrlFor(kind) });
    } catch (error) {
      if (making !== this.making) return;
      this.note(`no ${kind} player: ${error.message}`);
      this.perform(this.core.playerMissing(kind, this.read()));
      return;
    }
    if (making !== this.making) {
      player.destroy();
      return;
    }
    this.use(player);
    this.note(`${kind} player`);
    player.load(activity);
    this.dispatchEvent(new CustomEvent('player'));
    this.perform(this.core.tick(this.read()));
  }

  // What the rest of the page (room/, model/ui-dom.js) and the e2e test read.
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
  /** What the screen shows less the timeline (s), when known (sync/screen.js). */
  get screenDrift() { return this.core.screenDrift ? this.core.screenDrift.drift : null; }
  get mediaError() { return this.core.mediaError; }
  get blocked() { return this.core.blocked; }
  /** The viewer drags the seek bar (room/seek-bar.js): hands off the video. */
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
    const player = this.player;
    try {
      await player?.play();
    } catch {
      // Still refused (no media yet, or the browser wants more): reconcile retries.
    }
    player?.pause();
    this.perform(this.core.afterUnblock(this.read()));
  }

  /** Try the current item again after a load error. */
  retryMedia() {
    this.perform(this.core.retryMedia());
  }

  /** The page hidden (its video not in picture-in-picture), or shown again. */
  setHidden(hidden) {
    this.perform(this.core.setHidden(hidden, this.read()));
  }

  /** The browser freezes the hidden page (the Page Lifecycle's `freeze`). */
  freezing() {
    this.perform(this.core.freezing(this.read()));
  }

  /** "Pause just for me", and back to the group (sync/apart.js). */
  pauseForMe() {
    this.perform(this.core.pauseForMe(this.read()));
  }

  backToGroup() {
    this.perform(this.core.backToGroup(this.read()));
  }

  /** Whether this page has set its member apart by itself (sync/apart.js). */
  get setApartByPage() { return this.core.setApartByPage; }

  /** An item only for me (or the current one, with none), out of the session;
   *  joinGroup() ends it. The person drives the video with its own controls. */
  playAlone(activity) {
    this.perform(this.core.playAlone(activity ?? null, this.read()));
  }

  joinGroup() {
    this.perform(this.core.joinGroup(this.read()));
  }

  get alone() { return this.core.alone; }

  /**
   * Test hook (used by Tests/e2e): behave exactly as if the network stopped
   * delivering for `ms`: the video freezes, fires `waiting`, and reports no
   * data until the time is up (read()). Everything after that is the normal path.
   */
  simulateStall(ms) {
    this.simulatedStallUntil = performance.now() + ms;
    this.player?.dispatchEvent(new Event('waiting'));
    this.player?.pause(); // frozen, as without data; the player still counts as running
  }

  // MARK: the player

  /** The player's own readings, for the page's position and duration. */
  readings() {
    return this.player ? this.player.read() : EMPTY_READINGS;
  }

  /** The viewer drags the seek bar: show that position (room/seek-bar.js). */
  preview(t) {
    if (this.player && this.player.read().readyState >= 1) this.player.seek(t);
  }

  /** The player's readings, as the decisions take them (sync/player.js). */
  read() {
    const readings = this.player ? this.player.read() : EMPTY_READINGS;
    const monotonic = performance.now();
    const now = this.clock.now();
    const starved = monotonic < this.simulatedStallUntil;
    return {
      ...readings,
      now,
      monotonic,
      readyState: starved ? Math.min(readings.readyState, HAVE_CURRENT_DATA) : readings.readyState,
      buffered: starved ? [] : readings.buffered,
      capabilities: this.player?.capabilities ?? null,
    };
  }

  /** Carries out the decisions' actions, in order. */
  perform(actions) {
    const player = this.player;
    for (const action of actions) {
      switch (action.type) {
        case 'pause':
          player?.pause();
          break;
        case 'seek':
          player?.seek(action.to);
          break;
        case 'rate':
          player?.setRate(action.rate);
          break;
        case 'play': {
          const late = this.playAt(action.at, action.rate);
          // How late the call really came is known only here, after the spin.
          if (late != null) this.perform(this.core.playCalled(late, this.read()));
          break;
        }
        case 'load':
          this.loadActivity(action.activity);
          break;
        case 'reload':
          player?.reload();
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
        case 'probe': {
          const probing = player?.probe ? player.probe(action.ms, action.at) : Promise.reject(new Error('this player has no probe'));
          probing.then(
            (result) => this.perform(this.core.probed(action.id, result, this.read())),
            (error) => this.perform(this.core.probed(action.id, { error: error?.name ?? String(error) }, this.read())),
          );
          break;
        }
        case 'hush':
          clearTimeout(this.hushTimer);
          this.hushTimer = null;
          if (action.ms > 0) {
            player?.hush?.(true);
            this.hushTimer = setTimeout(() => this.player?.hush?.(false), action.ms);
          } else {
            player?.hush?.(false);
          }
          break;
        case 'tell':
          this.dispatchEvent(new CustomEvent('tell', { detail: { words: action.words, url: action.url } }));
          break;
      }
    }
    // Alone, the person drives the video: the element's own controls.
    const alone = this.core.mode === 'alone' && this.player?.video === this.video;
    if (this.video.controls !== alone) this.video.controls = alone;
    if (this.core.notice !== this.notice) {
      // Said once, when it changes: what the player does that the room did not ask.
      this.notice = this.core.notice;
      if (this.notice) this.dispatchEvent(new CustomEvent('notice', { detail: this.notice }));
    }
    this.dispatchEvent(new CustomEvent('change'));
  }

  /** play() at server time `at`: the timer woke a few ms before; the rest is
   *  spun, since a timer alone fires a few ms early or late. Returns how many
   *  ms after `at` the call came (null: no player). */
  playAt(at, rate) {
    const player = this.player;
    if (!player) return null;
    const target = this.clock.toLocal(at);
    const woke = localNow();
    while (localNow() < target) {
      // spin: the last few milliseconds
    }
    player.setRate(rate);
    const calledAt = localNow();
    const playing = player.play();
    this.note(`play() ${(calledAt - target).toFixed(1)} ms after its instant (spun ${Math.max(0, target - woke).toFixed(1)} ms)`);
    playing?.catch((error) => this.perform(this.core.playRefused(error?.name, this.read())));
    return calledAt - target;
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
      screenDrift: core.screenDrift ? core.screenDrift.drift : null,
      steeringByScreen: core.steering?.since !== undefined,
      playbackRate: this.player ? this.player.read().playbackRate : 1,
      player: this.kind,
      playLatency: core.playLatency,
      joinLead: core.joinLead,
      lastStart: core.lastStart,
      offset: this.clock.offset,
      offsetUncertainty: this.clock.uncertainty,
      rtt: this.clock.rtt,
      // A probe before a late joiner's start, and a start begun out of hearing, are part of the joining;
      // the group's start again at a new rate is its own (sync/follow.js: beginJoin).
      joining: (!!core.join && !core.join.restart) || !!core.probing || !!core.preroll,
      restarting: !!core.join?.restart,
      running: !!core.running,
      mediaError: core.mediaError,
      mixedContent: core.mixedContent,
      blocked: core.blocked,
      notice: core.notice,
      inSyncMs: inSyncMs(this.player?.capabilities),
      seekLatency: core.seekLatency,
      unseekable: core.unseekable,
      apart: core.apart?.reason ?? null,
      apartReasons: ownReasonsOf(core.me?.suspensions, core.apart),
      hidden: core.hidden,
      alone: !!core.alone,
    };
  }
}
