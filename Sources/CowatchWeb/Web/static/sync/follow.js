// Following a playing timeline: start on time, then keep to it.
//
// Three tools keep the video on the group's timeline:
//   * a scheduled start (start.js): used for coordinated starts, late joins,
//     rejoining after a suspension, and large drift;
//   * a rate nudge for small drift (drift.js), invisible to a viewer, by the
//     video's clock, or by what its screen shows when that is more than half
//     a frame off (screen.js); with a sound track, pulses that make up what
//     each change of rate costs there and wait for it to come through (drift.js: PULSE);
//   * a start whose play() came late (a busy main thread) made up at once by a
//     short catch-up (start.js: catchUpFor);
//   * with sound, a start placed on a block of the audio output, where its
//     clock can start (grid.js), after a warm-up out of hearing that shows
//     where the blocks fall; where that does not hold, a start begun out of
//     hearing half a second early, from as far back, measured and levelled off
//     by a pulse before it is heard (start.js: PREROLL);
//   * each start measured, to learn the latency of play() and how far ahead to
//     plan a start that must seek first (latency.js); with sound, that latency
//     measured before the first start by a probe out of hearing.
// Holding still, modes and reports are the player's (player.js), which calls
// run() when the plan says play along, and provides reconcile().

import { Actions } from './actions.js';
import { pausedUnordered } from './apart.js';
import {
  capabilitiesOf, correctionFor, firstSeekLatency, holdTolerance, learnSeekLatency, medianDrift, playableRate, rateNotice, SEEK_LATENCY_MS,
  seekAim, seekDecision, seekPolicy,
} from './correct.js';
import { addDriftReading, costAfterPulse, DRIFT_WINDOW, needsRejoin, nudgeRate, PULSE, pulseFor } from './drift.js';
import { alignedStart, blockMs, GRID, gridAfterStart, gridBounded, gridWarm, warmupCallAt } from './grid.js';
import {
  JOIN_LEAD_MS, latencyAfterProbe, latencyAfterStart, leadAfterLateStart, leadAfterMiss, leadAfterSeek, measureStart, needsProbe,
  PLAY_LATENCY_MS, playerError, PROBE_MS, probedLatency, VERIFY_AFTER_MS,
} from './latency.js';
import { HAVE_METADATA, hasEnoughData } from './readiness.js';
import {
  LIVE_LOAD_MS, LIVE_RELOADS_MAX, LIVE_TOLERANCE_S, learnLoadMs, liveCourse, liveReloadDelay, liveRoomPosition,
} from './live.js';
import { screenDrift, steer } from './screen.js';
import {
  askedLead, CATCH_UP_BOOST, catchUpFor, fireDecision, missedInstant, planStart, PREROLL, prerollFor, prerollLead, sameCourse, settleFor,
  SPIN_MS, wakeDelay,
} from './start.js';
import { atEnd, clampToMedia, positionAt, timelineKey } from './timeline.js';

const ms = (seconds) => (seconds * 1000).toFixed(1);

export class Follower extends Actions {
  constructor() {
    super();
    this.join = null; // a scheduled start in progress
    this.joins = 0; // numbers the starts, so that a timer of a replaced one is ignored
    this.running = null; // the timeline the playing video follows (key)
    this.runningRate = undefined; // and its rate
    this.verify = null; // a start to measure
    this.catchUp = null; // a late start making up its lateness: { id, rate, since } (start.js: catchUpFor)
    // A start with sound begun early out of hearing (start.js: prerollFor), until
    // its instant: { key, course, until }, `course` the room's timeline drawn
    // back to the early start (the same course from then on).
    this.preroll = null;
    this.drifts = [];
    this.drift = null; // last median drift, seconds
    this.nudging = false;
    this.pulse = null; // a pulse under way, with sound (drift.js: pulseFor): { id, base, gain, before }
    this.pulseQuiet = null; // after a pulse or a change of rate, until it has come through: { until, gain?, before? }
    this.pulseCost = PULSE.cost.initial; // learned (drift.js: costAfterPulse), s
    this.screenDrift = null; // what the screen shows less the timeline (screen.js: { drift, frame }, s), when known
    this.steering = null; // steering by the screen (screen.js: steer)
    this.screenKey = null; // the timeline the screen's frames are read against
    this.screenSince = null; // since when (server ms) the video follows it
    // The latency of play() and the starts it was learned from, for each kind of
    // clock (latency.js: needsProbe): { [sound]: { playLatency, taken } }.
    this.latencies = {};
    this.sound = 'silent'; // the video's, as last read (players/video.js: soundOf)
    this.probing = null; // a probe in flight: { id, sound }
    this.probes = 0;
    this.probeFailed = new Set(); // kinds whose probe could not play: learned from starts alone
    this.probeRefused = false; // autoplay refused the probe: tried again after the viewer's click (player.js: unblock)
    this.outputRate = null; // the audio output's sample rate, when the player says (players/video.js)
    this.grid = null; // where the output's blocks fall, and what bounds play()'s delay to them (grid.js)
    this.warmups = 0; // warm-ups since the last start or /ready: at most GRID.warmups before one
    this.joinLead = JOIN_LEAD_MS.initial;
    this.lastStart = null; // { at, actual, error } of the last scheduled start, ms
    this.stallCheck = null; // { since, position } after a `waiting` event, until confirmed (player.js)
    this.detail = '';
    // Players corrected by seeking (correct.js):
    this.fix = null; // the corrective seek in progress: { at, lead, mismatch, landedAt }
    this.lastFixAt = -Infinity; // when the last one was done (monotonic ms)
    this.seekLatency = SEEK_LATENCY_MS.initial;
    this.seekLandings = 0; // corrective seeks measured so far
    this.notice = null; // in words, when the player cannot play the room's rate
    this.liveReloads = 0; // loads of a live stream in a row that left it out of tolerance
    this.liveLoadMs = LIVE_LOAD_MS.initial; // learned: from loading a live stream to its first frame playing
    this.liveLoadAt = null; // server time of the last load of a live stream, until it is measured
    this.liveKey = null; // the room's course the live loads were counted for
  }

  act(r, body) {
    if (r?.sound) this.sound = r.sound;
    if (r?.outputRate) this.outputRate = r.outputRate;
    return super.act(r, body);
  }

  /** The latency of play() for the video's kind of clock, as learned so far. */
  get playLatency() {
    return this.latencies[this.sound]?.playLatency ?? PLAY_LATENCY_MS.initial;
  }

  /** Whether the video's kind of clock must be measured before a start. */
  wantsProbe() {
    return this.video.live !== true && !this.probeRefused && !this.probeFailed.has(this.sound)
      && needsProbe(this.sound, this.latencies[this.sound]?.taken);
  }

  /** Measures, out of hearing, how long this video's clock takes to start
   *  (players/player.js: probe); probed() takes the answer. A warm-up is the
   *  same, shorter: it shows where the output's blocks fall (grid.js). */
  startProbe(warmup = false) {
    const id = ++this.probes;
    this.probing = { id, sound: this.sound, warmup };
    this.detail = 'measuring the sound';
    if (warmup) this.warmups += 1;
    this.note(warmup ? 'warm-up: where the sound\'s clock can start' : `probe: how long a start with ${this.sound} takes`);
    // A warm-up calls play() where its start halves the delay's bounds (grid.js: warmupCallAt).
    const at = warmup ? warmupCallAt(this.grid, this.video.monotonic + GRID.seekMs) : null;
    this.out.push({ type: 'probe', id, ms: warmup ? GRID.warmupMs : PROBE_MS, ...(at === null ? {} : { at }) });
  }

  /** Whether starts with sound are placed on the output's blocks (grid.js):
   *  the output's rate is known, and no start has proved the grid wrong. */
  aligns() {
    return this.sound === 'sound' && !!blockMs(this.outputRate) && !this.grid?.off;
  }

  /** Whether a warm-up would let the next start be placed: the output may
   *  have stopped, or play()'s delay to a block is not bounded yet. */
  wantsWarmup() {
    return this.aligns() && this.video.live !== true && !this.probeRefused && this.warmups < GRID.warmups
      && !(gridWarm(this.grid, this.video.monotonic) && gridBounded(this.grid));
  }

  /** A clock with sound started at `start` after a call at `called` (monotonic ms). */
  learnGrid(start, called, heard = start) {
    const before = this.grid;
    this.grid = gridAfterStart(this.grid, { start, called, period: blockMs(this.outputRate) });
    if (!this.grid) return;
    this.grid.heard = Math.max(this.grid.heard, heard);
    if (this.grid.off && !before?.off) this.note(`the sound's clock started off its grid ${GRID.missesOff} times in a row: starts are no longer placed on it`);
  }

  /** Probe `id` played and paused (or could not play: `result.error`). */
  probed(id, result, r) {
    return this.act(r, () => {
      if (this.probing?.id !== id) return;
      const { sound, warmup } = this.probing;
      this.probing = null;
      this.video.paused = true;
      if (result.error === 'NotAllowedError') {
        // Autoplay: the start's own play() meets the same refusal, and the
        // viewer's click (unblock) lets the probe play.
        this.probeRefused = true;
        this.note('probe: autoplay refused; measured after the click');
      } else if (result.error) {
        this.probeFailed.add(sound);
        this.note(`probe: could not play (${result.error}); learning from the starts`);
      } else {
        const took = probedLatency(result);
        // A warm-up's start may be an output's fresh one, quicker than the rest: it teaches the grid alone.
        if (!warmup || !this.latencies[sound]) this.latencies[sound] = latencyAfterProbe(took);
        // At rate 1 alone: the time-stretcher shifts a clock at another rate by a few ms more.
        if (sound === 'sound' && (result.rate ?? 1) === 1) this.learnGrid(result.calledAt + took, result.calledAt, result.readAt);
        this.note(`${warmup ? 'warm-up' : 'probe'}: the clock started ${took.toFixed(1)} ms after play() (${sound}); play() latency ${this.latencies[sound].playLatency.toFixed(1)} ms`
          + (this.grid && sound === 'sound' ? `; delay to a block ${this.grid.lo.toFixed(1)}..${this.grid.hi.toFixed(1)} ms` : ''));
      }
      this.reconcile();
    });
  }

  /** Playing (the group's timeline or a catch-up): start on time, then keep to it. */
  run(plan) {
    const video = this.video;
    const key = timelineKey(plan.timeline);
    if (this.preroll && (this.preroll.key !== key || video.now >= this.preroll.until)) this.endPreroll();
    const timeline = this.preroll?.course ?? plan.timeline;
    if (this.grid && !video.paused) this.grid.heard = video.monotonic; // the output runs
    if (video.readyState < HAVE_METADATA) {
      this.detail = 'loading';
      return;
    }
    if (this.stallCheck) {
      this.detail = 'buffering';
      return; // stuck or not, the stall watch decides
    }
    if (this.join) {
      if (this.join.key === key || sameCourse(this.join, timeline)) return this.progressJoin(timeline, key);
      this.cancelJoin();
    }
    const now = video.now;
    // A pause nobody here ordered (the system's, the browser's) is not undone:
    // the player is set apart with its reason and the group goes on (apart.js).
    if (pausedUnordered({ running: this.running, paused: video.paused, ended: video.ended })
      && !atEnd(positionAt(timeline, now), video.duration)) return this.interrupted();
    if (!this.running || video.paused) {
      // At the end of the item there is nothing to start.
      if (atEnd(positionAt(timeline, Math.max(now, timeline.at)), video.duration)) {
        this.detail = 'ended';
        return;
      }
      return this.beginJoin(timeline, key);
    }
    // Playing: keep the base rate in step (a /rate change is continuous: no seek).
    if (this.running !== key && this.runningRate !== timeline.rate && this.aligns() && video.live !== true) {
      // With sound a new rate comes through only once the audio queued at the
      // old one has played, 180 to 400 ms, as each window's blocks fall: it is
      // started again instead, on a block (grid.js), with a gap of about a
      // third of a second in the sound rather than windows tens of ms apart.
      this.note(`rate ${this.runningRate} to ${timeline.rate} with sound: started again on a block`);
      return this.beginJoin(timeline, key, { restart: true });
    }
    if (this.running !== key && this.sound !== 'silent') {
      // A new course at another rate (a /rate, a catch-up's end): with sound the
      // change comes through ~180 ms late, and the readings until then are not
      // drift. A pulse under way is over (its timer finds nothing to end).
      this.pulse = null;
      this.pulseQuiet = { until: video.monotonic + PULSE.quietMs };
      this.drifts = [];
    }
    this.running = key;
    this.runningRate = timeline.rate;
    if (this.screenKey !== key) {
      // Frames shown before now belong to another course (a start, a seek, a rate).
      this.screenKey = key;
      this.screenSince = now;
    }
    const expected = positionAt(timeline, now);
    if (atEnd(expected, video.duration)) return; // let it end
    if (this.verify) {
      this.verifyStart();
      if (this.verify) return; // the first moments belong to the start measurement
    }
    if (this.catchUp || this.pulse) return; // a start levelling off, a pulse: their own timers end them
    if (video.live === true) return this.followLive(timeline, key, video.currentTime - liveRoomPosition(timeline, now));
    const raw = video.currentTime - expected;
    const capabilities = capabilitiesOf(video);
    this.notice = rateNotice(capabilities, timeline.rate);
    if (correctionFor(capabilities) === 'seek') return this.correctBySeeking(timeline, raw, capabilities);
    // With sound at a rate other than 1, a reading is off the clock's line by up
    // to ±7 ms (the time-stretcher's steps): more of them make the drift.
    const noisy = this.sound !== 'silent' && timeline.rate !== 1;
    const { drifts, drift } = noisy ? medianDrift(this.drifts, raw, PULSE.stretchedWindow) : addDriftReading(this.drifts, raw);
    this.drifts = drifts;
    this.drift = drift;
    if (needsRejoin(raw, drift)) {
      this.note(`drift ${ms(drift)} ms: re-join`);
      this.detail = `re-syncing (${Math.round(drift * 1000)} ms off)`;
      return this.beginJoin(timeline, key);
    }
    this.screenDrift = screenDrift(video.frames, timeline, now, video.monotonic, this.screenSince);
    if (this.sound !== 'silent' && (this.pulseQuiet || Math.abs(drift) <= PULSE.upTo)) {
      this.nudging = false;
      // By the clock alone: steering by the screen moves the clock in small
      // steps until the picture jumps a frame, which pulses, each exact and
      // then read again, would only swing around (docs/benchmarks.md).
      this.steering = null;
      return this.correctByPulses(drift, timeline.rate, noisy ? PULSE.stretchedWindow : DRIFT_WINDOW);
    }
    const course = steer({ clock: drift, screen: this.screenDrift, steering: this.steering, monotonic: video.monotonic });
    if ((course.steering?.since !== undefined) !== (this.steering?.since !== undefined)) {
      this.note(course.steering?.since !== undefined
        ? `screen ${ms(this.screenDrift.drift)} ms off (clock ${ms(drift)} ms): steering by the screen`
        : `screen ${this.screenDrift === null ? 'unknown' : `${ms(this.screenDrift.drift)} ms off`} (clock ${ms(drift)} ms): `
          + (course.steering?.gaveUpAt !== undefined ? 'it did not follow; back to the clock' : 'steering by the clock'));
    }
    this.steering = course.steering;
    this.nudge(course.drift, timeline.rate);
  }

  /** A video with sound: pulses, each made up exactly, read again once its
   *  effect has come through (drift.js: PULSE). */
  correctByPulses(drift, rate, window) {
    const video = this.video;
    const quiet = this.pulseQuiet;
    if (quiet) {
      if (video.monotonic < quiet.until) {
        this.drifts = []; // the pulse is still coming through
        return;
      }
      if (this.drifts.length < window) return;
      this.pulseQuiet = null;
      if (quiet.gain !== undefined) {
        this.pulseCost = costAfterPulse(this.pulseCost, { gain: quiet.gain, before: quiet.before, after: this.drift });
        this.note(`pulse landed ${ms(this.drift)} ms off; a start or stop of the rate costs ${ms(this.pulseCost)} ms`);
      }
    }
    this.setRate(rate);
    if (this.drifts.length < window) return;
    this.startPulse(drift, rate, 'drift');
  }

  /** Makes up `drift` (s) by one pulse, when it is worth one (drift.js: pulseFor). */
  startPulse(drift, rate, what) {
    const pulse = pulseFor(drift, rate, this.pulseCost);
    if (!pulse) return;
    const id = ++this.joins;
    this.pulse = { id, base: rate, gain: pulse.gain, before: drift };
    this.note(`${what} ${ms(drift)} ms: pulse at ${pulse.rate} for ${pulse.ms.toFixed(0)} ms`);
    this.setRate(pulse.rate);
    this.wakeIn(id, pulse.ms);
  }

  /** The lead this player asks for in its /ready (docs/protocol.md): time to
   *  start out of hearing first, when a start of `timeline` would (start.js: PREROLL). */
  leadToAsk(timeline) {
    if (!this.startsHeard(timeline)) return 0;
    if (this.aligns()) return askedLead(this.warmupNeed(1));
    return (timeline.position * 1000) / timeline.rate >= PREROLL.minMs ? prerollLead(this.playLatency) : 0;
  }

  /** From a warm-up's call to a start placed after it: the warm-ups, the seek
   *  back, play()'s latency and a block at most (grid.js), ms. */
  warmupNeed(warmups) {
    return warmups * (GRID.warmupMs + 10) + GRID.seekMs + this.playLatency + (this.grid?.period ?? 25) + SPIN_MS;
  }

  /** A start planned for `startAt` placed on the output's first block from
   *  then, from where the timeline is at it, its play() called to land on it
   *  (grid.js: alignedStart); null when the grid cannot place it (not yet
   *  bounded, or the output would have stopped by the call). */
  placeOnGrid(timeline, startAt, now, tolerance) {
    const video = this.video;
    const offset = now - video.monotonic;
    let aligned = alignedStart(this.grid, startAt - offset);
    if (!aligned || !gridWarm(this.grid, aligned.at - aligned.latency)) return null;
    const positionAtBlock = (at) => clampToMedia(positionAt(timeline, at + offset), video.duration);
    // A block too near for a seek and the call: the next one, a block later and as exact.
    for (let blocks = 0; blocks < 4; blocks++, aligned = { ...aligned, at: aligned.at + this.grid.period }) {
      const position = positionAtBlock(aligned.at);
      const seekMs = Math.abs(video.currentTime - position) > tolerance || video.seeking ? GRID.seekMs : 0;
      if (aligned.at + offset - now >= aligned.latency + SPIN_MS + 2 + seekMs) {
        return { startAt: aligned.at + offset, position, latency: aligned.latency };
      }
    }
    return null;
  }

  /** Whether a start of `timeline` is heard where its clock starts, and so is
   *  placed on the output's blocks or begun out of hearing: a sound track heard
   *  (not muted), on a player whose rate a pulse can change (drift.js: PULSE). */
  startsHeard(timeline) {
    return this.sound === 'sound' && this.video.live !== true && playableRate(capabilitiesOf(this.video), timeline.rate) === timeline.rate
      && correctionFor(capabilitiesOf(this.video)) === 'nudge';
  }

  /** The start begun out of hearing is over: its instant has come, or the
   *  room's course changed. The sound comes up (at once, if not already). */
  endPreroll() {
    const preroll = this.preroll;
    this.preroll = null;
    if (this.video.now < preroll.until) this.hush(0);
  }

  /** A pulse's time is up: back to the timeline's rate, and quiet until that has come through. */
  endPulse() {
    const { base, gain, before } = this.pulse;
    this.pulse = null;
    this.drifts = [];
    // Leaving rate 1 and coming back costs the clock (PULSE.cost); between other rates nothing to learn.
    this.pulseQuiet = base === 1 ? { until: this.video.monotonic + PULSE.quietMs, gain, before } : { until: this.video.monotonic + PULSE.quietMs };
    this.setRate(base);
  }

  /** A player that cannot nudge: corrective seeks, by the rules of correct.js. */
  correctBySeeking(timeline, raw, capabilities) {
    const video = this.video;
    const policy = seekPolicy(capabilities);
    const played = playableRate(capabilities, timeline.rate);
    this.setRate(played);
    const fix = this.fix;
    if (fix) {
      if (video.seeking) return;
      if (fix.landedAt == null) {
        fix.landedAt = video.monotonic;
        this.drifts = [];
        return;
      }
      if (video.monotonic - fix.landedAt < policy.settleMs) return;
    }
    const { drifts, drift } = medianDrift(this.drifts, raw, policy.window);
    this.drifts = drifts;
    this.drift = drift;
    if (fix) {
      if (drifts.length < policy.window) return;
      this.fix = null;
      this.lastFixAt = video.monotonic;
      // What the landing says of the seek latency: the drift less where the
      // seek meant to land (its lead) and less what a rate other than the
      // room's has added since the player moved again.
      const moving = Math.max(0, (video.monotonic - fix.at - this.seekLatency) / 1000);
      const residual = drift - fix.lead - fix.mismatch * moving;
      // The first landing replaces the guess; later ones correct it by halves.
      this.seekLatency = learnSeekLatency(this.seekLatency, residual, timeline.rate, this.seekLandings === 0 ? 1 : undefined);
      this.seekLandings += 1;
      this.note(`corrective seek landed ${ms(drift)} ms off; seek latency now ${this.seekLatency.toFixed(0)} ms`);
    }
    if (seekDecision({ policy, drift, raw, readings: drifts.length, monotonic: video.monotonic, lastFixAt: this.lastFixAt }) !== 'seek') {
      return;
    }
    // At a rate other than the room's the drift grows steadily: land on the
    // far side of the timeline, so that it crosses the whole band before the
    // next correction.
    const lead = played === timeline.rate ? 0 : -Math.sign(played - timeline.rate) * 0.8 * policy.start;
    const to = clampToMedia(seekAim(timeline, video.now, this.seekLatency) + lead, video.duration);
    this.note(`drift ${ms(drift)} ms: corrective seek to ${to.toFixed(3)}`);
    this.fix = { at: video.monotonic, lead, mismatch: played - timeline.rate, landedAt: null };
    this.drifts = [];
    this.seek(to);
  }

  nudge(drift, rate) {
    const next = nudgeRate(this.nudging, drift, rate);
    if (next.nudging !== this.nudging) this.note(`nudge ${next.nudging ? 'begins' : 'ends'} at ${ms(drift)} ms`);
    this.nudging = next.nudging;
    this.setRate(next.rate);
  }

  /** Plans a scheduled start, seeking first when needed. `restart`: the
   *  group's own start again at a new rate, not this player's joining it. */
  beginJoin(timeline, key, { restart = false } = {}) {
    const video = this.video;
    const now = video.now;
    if (video.live === true) return this.beginLiveJoin(timeline, key);
    this.stopVideo();
    this.drifts = [];
    this.verify = null;
    const capabilities = capabilitiesOf(video);
    const tolerance = holdTolerance(capabilities);
    this.fix = null;
    const planned = (joinLead) => planStart({
      timeline, now, video, enoughData: hasEnoughData(video), playLatency: this.playLatency, joinLead, tolerance,
    });
    let { startAt, position, coordinated } = planned(this.joinLead);
    let latency;
    if (this.startsHeard(timeline) && this.aligns()) {
      // The room's instant when it is still ahead, though the video must seek
      // first (after a warm-up, say): a block this close may leave the time.
      const soonest = !coordinated && timeline.at > now ? this.placeOnGrid(timeline, timeline.at, now, tolerance) : null;
      const placed = soonest ?? this.placeOnGrid(timeline, startAt, now, tolerance);
      if (placed) {
        ({ startAt, position, latency } = placed);
      } else if (this.warmups < GRID.warmups && (!coordinated || timeline.at - now >= this.warmupNeed(gridBounded(this.grid) ? 1 : 2))) {
        // A warm-up first (grid.js); a start of its own is planned again after it.
        this.cancelJoin();
        return this.startProbe(true);
      }
    } else if (this.startsHeard(timeline)) {
      // Out of hearing first (start.js: PREROLL): a start of its own plans that much further ahead.
      const wide = coordinated ? { startAt, position } : planned(this.joinLead + PREROLL.ms);
      const preroll = prerollFor({ ...wide, rate: timeline.rate, now, playLatency: this.playLatency });
      if (preroll) {
        ({ startAt, position } = preroll);
        const course = { playing: true, position, at: startAt, rate: timeline.rate };
        this.preroll = { key, course, until: preroll.until };
        this.hush(preroll.until - now);
        this.note(`out of hearing from ${(preroll.back).toFixed(0)} ms before`);
      }
    }
    const rate = playableRate(capabilities, timeline.rate);
    this.notice = rateNotice(capabilities, timeline.rate);
    const join = {
      id: ++this.joins, key, startAt, position, rate, seekBegan: null, armed: false, preroll: !!this.preroll, latency, restart,
    };
    this.join = join;
    this.note(`join: ${position.toFixed(3)} at ${(startAt % 100000).toFixed(1)} (in ${(startAt - now).toFixed(0)} ms)`
      + (latency === undefined ? '' : `, on a block of the sound: play() ${latency.toFixed(1)} ms before`));
    this.setRate(rate);
    if (Math.abs(video.currentTime - position) > tolerance) {
      if (!this.maySeekTo(position)) return; // player.js: said once, out of step
      join.seekBegan = video.monotonic;
      this.seek(position);
    }
    this.progressJoin(timeline, key);
  }

  /** A live stream can be neither sought nor played at another rate, and a
   *  paused one does not play on from its frame (sync/live.js): a playing
   *  video within tolerance of the room is followed as it is; a paused one, or
   *  one out of tolerance, loads the stream again, which plays it at once. */
  beginLiveJoin(timeline, key) {
    const video = this.video;
    const now = video.now;
    if (this.liveKey !== key) {
      // A new course of the room (a state): loads may be tried again.
      this.liveKey = key;
      this.liveReloads = 0;
    }
    this.cancelJoin();
    this.drifts = [];
    this.verify = null;
    this.catchUp = null;
    this.nudging = false;
    if (this.liveLoadAt != null && !video.paused && Number.isFinite(video.liveOrigin)) {
      // How long the last load took (learnt from every load, kept or not): its first frame played at now less the time played since.
      const began = now - (video.currentTime - video.liveOrigin) * 1000;
      this.liveLoadMs = learnLoadMs(this.liveLoadMs, began - this.liveLoadAt);
      this.note(`live: the load took ${(began - this.liveLoadAt).toFixed(0)} ms; planning ${this.liveLoadMs.toFixed(0)} ms`);
      this.liveLoadAt = null;
    }
    const drift = video.currentTime - liveRoomPosition(timeline, now);
    const tolerance = LIVE_TOLERANCE_S;
    const course = video.paused && this.liveReloads < LIVE_RELOADS_MAX
      ? 'reload'
      : liveCourse({ drift, tolerance, reloads: this.liveReloads });
    if (course === 'reload') {
      this.liveReloads += 1;
      this.running = null;
      this.detail = 'rejoining the live edge';
      const delay = liveReloadDelay({
        timeline, now, loadMs: this.liveLoadMs, segmentStart: video.liveOrigin, targetDuration: video.liveTargetDuration,
      });
      this.note(`live: ${video.paused ? 'paused' : `${ms(drift)} ms from the room`}: load the stream again in ${delay.toFixed(0)} ms`);
      if (delay < SPIN_MS) return this.liveReload();
      // A timer, as a scheduled start's: the load begins when the room is `liveLoadMs` before a segment's start.
      this.join = { id: ++this.joins, key, live: 'reload', startAt: now + delay, armed: true };
      this.wakeIn(this.join.id, delay);
      return;
    }
    if (Math.abs(drift) > tolerance) {
      // Loads are spent for this course of the room: play on from here (until the room's next state).
      this.note(`live: still ${ms(drift)} ms off after ${this.liveReloads} loads: playing from here`);
    } else {
      this.liveReloads = 0;
    }
    this.setRate(1);
    if (!video.paused) {
      this.running = key;
      this.note(`live: following, ${ms(drift)} ms from the room`);
      return;
    }
    // Loads are spent: play from here, at once.
    const join = { id: ++this.joins, key, startAt: now + this.playLatency + SPIN_MS + 2, position: video.currentTime, rate: 1, seekBegan: null, armed: false };
    this.join = join;
    this.progressJoin(timeline, key);
  }

  liveReload() {
    this.liveLoadAt = this.video.now;
    this.out.push({ type: 'reload' });
    Object.assign(this.video, { readyState: 0, paused: true, buffered: [] });
  }

  /** Playing a live stream: nothing to nudge or seek; out of tolerance, it loads again. */
  followLive(timeline, key, raw) {
    const { drifts, drift } = addDriftReading(this.drifts, raw);
    this.drifts = drifts;
    this.drift = drift;
    const tolerance = LIVE_TOLERANCE_S;
    if (this.liveReloads >= LIVE_RELOADS_MAX) return; // given up on this course of the room
    if (Math.abs(raw) > tolerance && Math.abs(drift) > tolerance) {
      this.note(`live drift ${ms(drift)} ms`);
      return this.beginJoin(timeline, key);
    }
  }

  /** A start waits for its seek and data, then arms its timer. */
  progressJoin(timeline, key) {
    const join = this.join;
    const video = this.video;
    const msLeft = join.startAt - video.now;
    this.detail = `starting in ${Math.max(0, msLeft / 1000).toFixed(2)} s`;
    if (join.armed) return;
    if (video.seeking || !hasEnoughData(video)) {
      if (missedInstant(msLeft, join.latency ?? this.playLatency)) {
        this.joinLead = leadAfterMiss(this.joinLead);
        this.note(`join missed its instant: lead now ${this.joinLead.toFixed(0)} ms`);
        this.join = null;
        this.beginJoin(timeline, key);
      }
      return;
    }
    if (join.seekBegan != null) {
      // Learn how long a seek with buffering takes here, to pick the next lead.
      const took = video.monotonic - join.seekBegan;
      this.joinLead = leadAfterSeek(this.joinLead, took);
      // Until a corrective seek has landed, the best guess of how long one
      // takes on this player is how long this one took.
      if (this.seekLandings === 0) this.seekLatency = firstSeekLatency(took);
      join.seekBegan = null;
    }
    if (this.wantsProbe()) {
      // Its play() latency is not known yet: measured first, then planned again.
      this.cancelJoin();
      return this.startProbe();
    }
    join.armed = true;
    this.wakeIn(join.id, wakeDelay(join.startAt, join.latency ?? this.playLatency, video.now));
  }

  /** The timer of scheduled start number `id` fired. */
  wake(id, r) {
    return this.act(r, () => {
      if (this.catchUp?.id === id) return this.endCatchUp();
      if (this.pulse?.id === id) return this.endPulse();
      const join = this.join;
      if (!join || join.id !== id) return;
      const video = this.video;
      if (join.live === 'reload') {
        this.join = null;
        this.liveReload();
        return;
      }
      const decision = fireDecision(join.startAt, join.latency ?? this.playLatency, video.now);
      if (decision.kind === 'replan') {
        this.note(`start ${decision.late.toFixed(1)} ms late: plan again`);
        this.joinLead = leadAfterLateStart(this.joinLead);
        this.join = null;
        this.reconcile();
        return;
      }
      if (decision.kind === 'wait') {
        this.wakeIn(id, decision.ms);
        return;
      }
      this.play(decision.at, join.rate);
      this.join = null;
      this.warmups = 0;
      this.running = join.key;
      this.runningRate = join.rate;
      this.nudging = false;
      const calledAt = video.monotonic + Math.max(0, -decision.late);
      this.verify = {
        id: join.id, startAt: join.startAt, position: join.position, rate: join.rate, calledAt, playLatency: join.latency ?? this.playLatency,
        sound: this.sound, preroll: join.preroll, callAt: decision.at,
      };
    });
  }

  /** The page called the start's play() `late` ms after its plan (the timer
   *  fired late, or the spin was preempted: the page cannot tell the player
   *  when to start, only call it). Measured against the spin's own clock, this
   *  is known at once: the video catches up by playing a little faster for a
   *  moment, rather than starting late and waiting for the drift to show. */
  playCalled(late, r) {
    return this.act(r, () => {
      const verify = this.verify;
      if (!verify || verify.callLate !== undefined) return;
      verify.callLate = Math.max(0, late);
      // A live stream cannot play faster; a player with a few rates only nudges by seeking.
      if (this.video.live === true || correctionFor(capabilitiesOf(this.video)) !== 'nudge') return;
      // With a sound track, a rate is heard (and the clock follows it) only once
      // the audio already queued at the old one has played, about 180 ms later
      // (docs/benchmarks.md): a catch-up from before the clock moves would end
      // that much too late. A pulse takes it once the start is measured.
      if (verify.sound !== 'silent') return;
      const catchUp = catchUpFor(verify.callLate, verify.rate);
      if (!catchUp) return;
      // It lasts from the call until the video has moved `ms` at the faster
      // rate: it starts moving `playLatency` after the call.
      const lasts = this.playLatency + catchUp.ms;
      this.catchUp = { id: verify.id, rate: verify.rate, since: this.video.monotonic };
      verify.boost = CATCH_UP_BOOST;
      this.note(`play() ${verify.callLate.toFixed(1)} ms late: catching up at ${catchUp.rate} for ${lasts.toFixed(0)} ms`);
      this.setRate(catchUp.rate);
      this.wakeIn(verify.id, lasts);
    });
  }

  /** The catch-up's time is up: back to the timeline's rate (how long it
   *  really lasted, its timer being as late as the page, is measured). */
  endCatchUp() {
    const catchUp = this.catchUp;
    this.catchUp = null;
    if (this.verify?.id === catchUp.id) this.verify.boostedMs = this.video.monotonic - catchUp.since;
    this.drifts = []; // readings taken while it ran are not drift
    this.setRate(catchUp.rate);
  }

  /** Measures a start once it has run a little: when did the video really
   *  leave its position? The error corrects the play() latency. */
  verifyStart() {
    const verify = this.verify;
    const video = this.video;
    if (video.monotonic - verify.calledAt < VERIFY_AFTER_MS || this.catchUp) return;
    this.verify = null;
    if (video.paused || video.seeking) return;
    const start = measureStart(verify, video.now, video.currentTime);
    this.lastStart = start;
    const own = playerError(start.error, verify);
    this.note(`started ${start.error.toFixed(1)} ms after the instant`
      + (verify.callLate >= 1 ? ` (play() called ${verify.callLate.toFixed(1)} ms late${verify.boost ? ', caught up' : ''})` : '')
      + `; play() latency ${this.playLatency.toFixed(1)} ms`);
    const learned = this.latencies[verify.sound] ?? { playLatency: verify.playLatency, taken: [] };
    // The start took what it was planned to take (its play() called that far ahead) and its error.
    this.latencies[verify.sound] = latencyAfterStart(verify.playLatency, own, learned.taken);
    if (verify.sound === 'sound' && verify.callAt !== undefined && verify.rate === 1) {
      // Where its clock started, and when play() was really called, on the page's own clock (grid.js).
      const offset = video.now - video.monotonic;
      this.learnGrid(start.actual - offset, verify.callAt + (verify.callLate ?? 0) - offset, video.monotonic);
    }
    // What is still off is made up at once, in the first moments, rather than
    // by the drift correction's gentle nudge over a second or more. With a
    // sound track a change of rate comes through late and costs the clock a
    // few ms: the pulses take it from the next readings (correctByPulses).
    const nudges = correctionFor(capabilitiesOf(video)) === 'nudge' && video.live !== true;
    // Begun out of hearing, it has just the time for one pulse before it is heard.
    if (nudges && verify.preroll && this.preroll) return this.startPulse(-start.error / 1000, verify.rate, 'start');
    const levels = nudges && verify.sound === 'silent';
    const settle = levels ? settleFor(start.error, verify.rate) : null;
    if (settle) {
      this.note(`levelling off ${start.error.toFixed(1)} ms: at ${settle.rate} for ${settle.ms.toFixed(0)} ms`);
      this.catchUp = { id: verify.id, rate: verify.rate, since: video.monotonic };
      this.setRate(settle.rate);
      this.wakeIn(verify.id, settle.ms);
    }
  }

  stopVideo() {
    if (this.preroll) this.endPreroll();
    this.catchUp = null;
    this.pulse = null;
    this.pulseQuiet = null;
    this.stallCheck = null;
    this.fix = null;
    this.pause();
    this.running = null;
    this.runningRate = undefined;
    this.nudging = false;
    this.steering = null;
    this.screenKey = null;
  }

  cancelJoin() {
    if (!this.join) return;
    this.cancelWake();
    this.join = null;
  }
}
