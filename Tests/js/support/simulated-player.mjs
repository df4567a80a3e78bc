// A simulated <video> and page around the player's decisions (sync/player.js),
// in place of sync/player-sync.js: it carries out the actions as a browser would, moves the
// video with time, fires its events, the 50 ms tick and the start's timer, and
// records what the player sent. Time is simulated, one millisecond a step.

import { PlayerCore } from '../../../Sources/CowatchWeb/Web/static/sync/player.js';

export const MEDIA_URL = 'http://media.test/movie.mp4';
export const T0 = 1_700_000_000_000; // server epoch ms when a simulation begins

const TICK_MS = 50;

/** A room state as the server sends it. */
export function roomState(seq, playback, { url = MEDIA_URL, item = 'item-1' } = {}) {
  return {
    seq,
    session: { state: 'joined', activity: { id: 'a1', url, title: 'movie' } },
    playback: { status: 'paused', item, rate: 1, position: 0, at: T0, by: null, cause: 'watch', ...playback },
  };
}

/** The page's own member. */
export function member(suspensions = [], { joined = true } = {}) {
  return { id: 'me', name: 'me', joined, player: true, suspensions };
}

export class SimulatedPlayer {
  /**
   * @param {object} options
   * @param {number} options.duration the media's length, seconds
   * @param {number} options.seekMs how long a seek takes to land with data
   * @param {number} options.playLatencyMs between play() and the video moving
   * @param {number} options.speed the video's clock against the server's (1.001: 0.1 % fast)
   * @param {number} options.metadataMs from a new source to `loadedmetadata`
   * @param {boolean} options.failLoads the media does not load (a MediaError)
   * @param {boolean} options.refuseAutoplay play() is refused (NotAllowedError) outside a gesture
   * @param {object|null} options.capabilities what the player declares (players/player.js);
   *   null: none given, as the <video>'s readings
   * @param {number} options.readingError the position read is off by up to this
   *   (seconds, either way), a new error drawn at each position update
   *   (capabilities.positionUpdateMs): a coarse player such as YouTube's
   * @param {boolean} options.rangeRequests the media's server answers range requests; without them,
   *   as Chromium does, the video is seekable at 0 alone and a seek elsewhere lands at 0
   * @param {string|null} options.pageProtocol the page's location.protocol ('https:': an http://
   *   file is mixed content, sync/mixed-content.js); null, as on Node, by default
   * @param {string} [options.sound] what the video's clock is, as players/video.js reads it
   *   ('silent', 'sound', 'muted'); none given, as a player that does not say
   * @param {number} [options.rateCostMs] what leaving rate 1, or coming back to it, costs a
   *   playing video's position, ms: Chromium's time-stretcher with a sound track (sync/drift.js: PULSE)
   * @param {object} [options.output] an audio output rendering in blocks, as Chromium's
   *   (sync/grid.js): { rate (Hz, as the page reads it), blockMs, pipelineMs (a start is the first
   *   block this long after play()), coldMs (after play(), the start of an output that had stopped),
   *   idleStopMs (an output idle this long stops), jitterMs (the delay varies this much either way
   *   from start to start), offGrid (starts fall anywhere in a block instead,
   *   as another browser's might) }; none: every start `playLatencyMs` after play()
   */
  constructor({
    duration = 600, seekMs = 40, playLatencyMs = 5, speed = 1, metadataMs = 30, failLoads = false, refuseAutoplay = false,
    capabilities = null, readingError = 0, rangeRequests = true, pageProtocol = null, sound = undefined, rateCostMs = 0, output = null,
  } = {}) {
    Object.assign(this, {
      output, sound, rateCostMs, duration, seekMs, playLatencyMs, speed, metadataMs, failLoads, refuseAutoplay, capabilities, readingError, rangeRequests,
    });
    this.error = 0; // the reading's current error, seconds
    this.errorDrawnAt = -Infinity;
    this.random = 0x2545f491; // xorshift state: the same errors every run
    this.core = new PlayerCore();
    this.core.pageProtocol = pageProtocol;
    this.now = T0;
    this.origin = T0 - 5000; // the page opened 5 s ago: monotonic = now - origin
    this.video = {
      currentTime: 0, paused: true, seeking: false, readyState: 0, duration: NaN, playbackRate: 1, error: null,
    };
    this.loadDoneAt = null;
    this.seekDoneAt = null;
    this.movesFrom = -Infinity; // the video leaves its position no earlier than this
    this.frozenUntil = -Infinity; // a decoder hiccup: no movement, data still there
    this.starvedUntil = -Infinity; // the network delivers nothing
    this.timer = null; // { at, join }: the start's timer
    this.timerDelayMs = 0; // the next timer fires this much late (a busy main thread)
    this.nextTick = T0 + TICK_MS;
    this.pendingRefusal = false;
    this.sent = []; // { at, line }
    this.notes = [];
    this.told = []; // { at, words, url }: what the player said to the viewer
    this.actions = []; // { at, ...action }
    this.plays = []; // server instants play() was called at
    this.rates = []; // { at, rate }
    this.hushedUntil = null; // out of hearing until this server instant (a start begun early)
    this.outputAnchor = null; // a block boundary of the running output (options.output)
    this.outputHeard = -Infinity; // when the output last played
  }

  // MARK: inputs from the room

  setState(state) {
    this.perform(this.core.setState(state, this.read()));
  }

  setMe(participant) {
    this.perform(this.core.setMe(participant, this.read()));
  }

  catchup(event) {
    this.perform(this.core.startCatchup(event, this.read()));
  }

  reset() {
    this.core.reset();
  }

  /** A state and the member, loaded and settled: the usual first moments of a page. */
  open(state, participant = member()) {
    this.setMe(participant);
    this.setState(state);
    this.advance(200);
  }

  // MARK: what happens to the video

  /** A decoder hiccup: `waiting`, the video stands still for `ms`, then plays on. */
  hiccup(ms) {
    this.frozenUntil = this.now + ms;
    this.event('waiting');
  }

  /** The network delivers nothing for `ms`. */
  starve(ms) {
    this.starvedUntil = this.now + ms;
    this.event('waiting');
  }

  /** The video jumps by `seconds` on its own (a glitch, a bad frame). */
  jump(seconds) {
    this.video.currentTime += seconds;
  }

  // MARK: time

  advance(ms) {
    for (let i = 0; i < ms; i++) this.step();
  }

  /** Advances until `predicate()` holds; fails after `limitMs`. */
  until(predicate, limitMs = 20000) {
    for (let i = 0; i < limitMs; i++) {
      if (predicate()) return;
      this.step();
    }
    throw new Error(`not reached within ${limitMs} ms; last notes: ${this.notes.slice(-6).join(' | ')}`);
  }

  step() {
    // The video moves over the millisecond from `now`, as it stood then.
    const dt = 1;
    const video = this.video;
    const t = this.now;
    const moving = !video.paused && !video.seeking && video.readyState >= 3
      && t >= this.starvedUntil && t + dt > this.movesFrom && t >= this.frozenUntil;
    this.now += dt;
    if (moving) {
      // A start between two ms moves for the part of the ms after it.
      const share = Math.min(dt, t + dt - Math.max(t, this.movesFrom));
      video.currentTime += (video.playbackRate * this.speed * share) / 1000;
      this.outputHeard = this.now;
      if (video.currentTime >= this.duration) {
        video.currentTime = this.duration;
        video.paused = true;
        this.event('ended');
      }
    }
    if (this.now === this.starvedUntil || this.now === this.frozenUntil) this.event(video.paused ? 'canplay' : 'playing');
    if (this.loadDoneAt != null && this.now >= this.loadDoneAt) {
      this.loadDoneAt = null;
      if (this.failLoads) {
        video.error = { code: 4, message: 'MEDIA_ELEMENT_ERROR: Format error' };
        this.event('error');
      } else {
        Object.assign(video, { readyState: 4, duration: this.duration });
        this.event('loadedmetadata');
      }
    }
    if (this.seekDoneAt != null && this.now >= this.seekDoneAt) {
      this.seekDoneAt = null;
      video.seeking = false;
      this.event('seeked');
    }
    if (this.pendingRefusal) {
      this.pendingRefusal = false;
      this.perform(this.core.playRefused('NotAllowedError', this.read()));
    }
    if (this.timer && this.now >= this.timer.at) {
      const { join } = this.timer;
      this.timer = null;
      this.perform(this.core.wake(join, this.read()));
    }
    if (this.now >= this.nextTick) {
      this.nextTick += TICK_MS;
      this.perform(this.core.tick(this.read()));
    }
  }

  /** The video's events, handled as player-sync.js handles them. */
  event(type) {
    const core = this.core;
    if (['loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'progress'].includes(type)) {
      this.perform(core.tick(this.read()));
    }
    if (type === 'waiting') this.perform(core.waiting(this.read()));
    if (type === 'playing') this.perform(core.playing(this.read()));
    if (type === 'ended') this.perform(core.ended(this.read()));
    if (type === 'error') this.perform(core.mediaFailed(this.read()));
    if (type === 'loadedmetadata') this.perform(core.mediaLoaded(this.read()));
  }

  // MARK: the page's side

  read() {
    const video = this.video;
    const starved = this.now < this.starvedUntil;
    const loaded = video.readyState > 0;
    const update = this.capabilities?.positionUpdateMs ?? 0;
    if (this.readingError > 0 && this.now - this.errorDrawnAt >= update) {
      this.errorDrawnAt = this.now;
      this.error = (this.draw() * 2 - 1) * this.readingError;
    }
    return {
      now: this.now,
      monotonic: this.now - this.origin,
      capabilities: this.capabilities,
      currentTime: video.currentTime + (video.seeking || video.paused ? 0 : this.error),
      paused: video.paused,
      seeking: video.seeking,
      readyState: starved ? Math.min(video.readyState, 2) : video.readyState,
      duration: video.duration,
      playbackRate: video.playbackRate,
      buffered: loaded && !starved ? [[0, this.duration]] : [],
      seekable: !loaded ? [] : this.rangeRequests ? [[0, this.duration]] : [[0, 0]],
      error: video.error,
      ...(this.sound ? { sound: this.sound } : {}),
      ...(this.output ? { outputRate: this.output.rate } : {}),
    };
  }

  perform(actions) {
    const video = this.video;
    for (const action of actions) {
      this.actions.push({ at: this.now, ...action });
      switch (action.type) {
        case 'pause':
          video.paused = true;
          break;
        case 'seek':
          video.currentTime = this.rangeRequests ? action.to : 0;
          video.seeking = true;
          this.seekDoneAt = this.now + this.seekMs;
          break;
        case 'rate': {
          // A player with a list of rates plays the nearest (ties toward 1), as YouTube rounds.
          const rate = this.playable(action.rate);
          if (this.rateCostMs && !video.paused && (video.playbackRate === 1) !== (rate === 1)) video.currentTime -= this.rateCostMs / 1000;
          video.playbackRate = rate;
          this.rates.push({ at: this.now, rate: action.rate });
          break;
        }
        case 'play': {
          // player-sync.js spins up to the instant, then calls play().
          const calledAt = Math.max(this.now, action.at);
          video.playbackRate = this.playable(action.rate);
          if (this.refuseAutoplay) {
            this.pendingRefusal = true;
            break;
          }
          this.plays.push(calledAt);
          video.paused = false;
          this.movesFrom = this.startsAt(calledAt);
          this.perform(this.core.playCalled(calledAt - action.at, this.read()));
          break;
        }
        case 'load':
        case 'reload':
          Object.assign(video, { currentTime: 0, paused: true, seeking: false, readyState: 0, duration: NaN, error: null });
          this.seekDoneAt = null;
          this.loadDoneAt = this.now + this.metadataMs;
          break;
        case 'wake':
          this.timer = { at: this.now + action.ms + this.timerDelayMs, join: action.join };
          this.timerDelayMs = 0;
          break;
        case 'cancelWake':
          this.timer = null;
          break;
        case 'probe': {
          // players/video.js: plays `ms` where it stands, reads, pauses.
          if (this.refuseAutoplay) {
            this.perform(this.core.probed(action.id, { error: 'NotAllowedError' }, this.read()));
            break;
          }
          // Called at `at` (monotonic ms) when asked.
          if (action.at !== undefined) this.advance(Math.max(0, Math.ceil(action.at - (this.now - this.origin))));
          const from = video.currentTime;
          const calledAt = this.now;
          video.paused = false;
          this.movesFrom = this.startsAt(calledAt);
          this.advance(action.ms);
          const result = { from, calledAt: calledAt - this.origin, readAt: this.now - this.origin, currentTime: video.currentTime, rate: video.playbackRate };
          video.paused = true;
          this.perform(this.core.probed(action.id, result, this.read()));
          break;
        }
        case 'hush':
          // players/video.js: out of hearing until then (null: heard).
          this.hushedUntil = action.ms > 0 ? this.now + action.ms : null;
          break;
        case 'send':
          this.sent.push({ at: this.now, line: action.line });
          break;
        case 'note':
          this.notes.push(action.text);
          break;
        case 'tell':
          this.told.push({ at: this.now, words: action.words, url: action.url });
          break;
        default:
          throw new Error(`unknown action ${action.type}`);
      }
    }
  }

  /** A uniform draw in [0, 1), repeatable. */
  draw() {
    let x = this.random;
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    this.random = x;
    return x / 2 ** 32;
  }

  playable(rate) {
    const rates = this.capabilities?.rates;
    if (!Array.isArray(rates)) return rate;
    return rates.reduce((best, r) => {
      const gap = Math.abs(r - rate) - Math.abs(best - rate);
      return gap < -1e-9 || (Math.abs(gap) <= 1e-9 && Math.abs(r - 1) < Math.abs(best - 1)) ? r : best;
    });
  }

  // MARK: measuring

  /** The lines sent, optionally only those starting with `prefix`. */
  lines(prefix = '') {
    return this.sent.map((s) => s.line).filter((line) => line.startsWith(prefix));
  }

  /** How many actions of `type` since server time `since`. */
  /** When a play() called at `calledAt` moves the clock (options.output). */
  startsAt(calledAt) {
    const o = this.output;
    if (!o) return calledAt + this.playLatencyMs;
    if (o.offGrid) return calledAt + o.pipelineMs + this.draw() * o.blockMs;
    if (this.outputAnchor === null || calledAt - this.outputHeard >= o.idleStopMs) {
      this.outputAnchor = calledAt + o.coldMs;
      return this.outputAnchor;
    }
    const earliest = calledAt + o.pipelineMs + (o.jitterMs ? (this.draw() * 2 - 1) * o.jitterMs : 0);
    return this.outputAnchor + Math.ceil((earliest - this.outputAnchor) / o.blockMs) * o.blockMs;
  }

  count(type, since = -Infinity) {
    return this.actions.filter((a) => a.type === type && a.at >= since).length;
  }

  /** The video's position minus the timeline's, ms. */
  driftMs(timeline) {
    const expected = timeline.position + (timeline.playing && this.now > timeline.at ? timeline.rate * (this.now - timeline.at) / 1000 : 0);
    return (this.video.currentTime - expected) * 1000;
  }
}

/** A clip with sound paused at `position`, its probe played; each change of
 *  rate to or from 1 costs its clock 8 ms, as Chromium's time-stretcher does
 *  (sync/drift.js: PULSE). `options` as SimulatedPlayer's. */
export function probedWithSound(position, options = {}) {
  const sim = new SimulatedPlayer({ sound: 'sound', rateCostMs: 8, ...options });
  sim.open(roomState(1, { status: 'paused', position }));
  sim.until(() => sim.count('probe') >= 1 && !sim.core.probing && !sim.video.seeking && sim.video.paused);
  return sim;
}

/** The group's timeline as a test states it. */
export function playing(position, at, rate = 1) {
  return { playing: true, position, at, rate };
}
