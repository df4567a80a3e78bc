// The player: makes a <video> follow the room's playback state.
//
// The server is the one authority (docs/protocol.md). This page never decides
// anything about group playback: its controls send commands, and this module
// applies the `state` that comes back, using the server clock (clock.js) to turn
// "playing from `position` since `at` at `rate`" into "where the video should be
// right now". It reports back what only a player can know: `/ready <seq>` when it
// holds the requested position with enough data, `/buffering` when it stalls,
// `/ended <seq>` at the end, and suspensions when it cannot follow (media that
// does not load, autoplay refused).
//
// Three tools keep the video on the group's timeline:
//   * a scheduled start: pause, seek to where the timeline will be at a chosen
//     instant, and call play() at that instant minus the measured latency of
//     play(). Used for coordinated starts (the instant is the server's `at`),
//     late joins, rejoining after a suspension, and large drift;
//   * a rate nudge for small drift: playbackRate slightly above or below the
//     group rate until the drift is gone, invisible to a viewer;
//   * exact holds: a paused or waiting group's position is seeked to exactly, so
//     every player shows the same frame.
//
// Thresholds (seconds of drift = video.currentTime - where the timeline says):
export const THRESHOLDS = Object.freeze({
  /** Beyond this, re-join with a scheduled start (a seek). A nudge of at most
   *  nudgeMax would take more than about four seconds to absorb more. */
  seek: 0.25,
  /** Nudge when the median drift of the last ticks exceeds this. Chrome reports
   *  currentTime to 0.1 ms and the clock estimate is good to about half a ms, so
   *  3 ms is well above the noise, and small enough that players stay within a
   *  few ms of each other. */
  nudgeStart: 0.003,
  /** A nudge ends (rate exact again) once the drift is below this. */
  nudgeStop: 0.001,
  /** A nudge aims to absorb the drift within about this many seconds (a
   *  proportional controller: rate change = drift / horizon)... */
  nudgeHorizon: 0.3,
  /** ...changing the rate by at most this fraction (6 %: 0.25 s of drift is
   *  absorbed in about 4.5 s; the browser preserves the pitch). */
  nudgeMax: 0.06,
  /** A held (paused, waiting) player farther than this from the position seeks
   *  (browsers land exactly on the requested time, so every player shows the
   *  same frame). */
  hold: 0.0001,
});

const TICK_MS = 50;
/** A `waiting` event is a stall worth reporting only when the video is still
 *  stuck this long after it: browsers also fire it for decoder hiccups of a
 *  frame or two (a busy CPU), which the drift correction absorbs, and a
 *  /buffering would separate us from the group (or make everyone wait). */
const STALL_CONFIRM_MS = 500;
/** Median of this many drift readings drives the nudge (robust to one odd read). */
const DRIFT_WINDOW = 3;
/** The last few ms before a scheduled play() are waited out by spinning:
 *  setTimeout alone fires a few ms early or late. */
const SPIN_MS = 10;
/** A scheduled start that fires later than this (a busy main thread) is planned
 *  again; a smaller delay is left to the drift correction. */
const LATE_START_MS = 100;
/** A start is measured (and the play() latency learned) this long after it. */
const VERIFY_AFTER_MS = 200;
/** Learned bounds. */
const PLAY_LATENCY_MS = { initial: 5, min: 0, max: 60 };
/** How much of a start's measured error goes into the latency estimate: the
 *  error jitters by a few ms from start to start, so the estimate moves gently. */
const LATENCY_GAIN = 0.4;
const JOIN_LEAD_MS = { initial: 350, min: 200, max: 4000 };

const HAVE_METADATA = 1;
const HAVE_FUTURE_DATA = 3;
const HAVE_ENOUGH_DATA = 4;

/**
 * A timeline: the media position the room asks for at each server instant.
 * `{ playing, position, at, rate }` from a state's playback, or a catch-up.
 */
export function positionAt(timeline, serverMs) {
  if (!timeline.playing || serverMs <= timeline.at) return timeline.position;
  return timeline.position + (timeline.rate * (serverMs - timeline.at)) / 1000;
}

function timelineKey(t) {
  return `${t.playing ? 'p' : 'h'}|${t.position}|${t.at}|${t.rate}|${t.catchup ? 'c' : ''}`;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

const MEDIA_ERRORS = {
  1: 'loading was aborted',
  2: 'a network error stopped the download',
  3: 'the video could not be decoded',
  4: 'the address could not be loaded or the format is not supported',
};

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

    this.state = null; // the room's last state
    this.me = null; // my participant
    this.catchup = null; // { timeline, until } during a "what happened?" replay

    this.src = null; // the URL loaded in the video
    this.mediaError = null; // text, when the current item failed to load
    this.suspendedForMedia = false; // we sent /suspend coordinatedPlaybackNotPossible
    this.blocked = false; // autoplay refused: waiting for a click

    this.join = null; // a scheduled start in progress
    this.running = null; // the timeline the playing video follows (key)
    this.verify = null; // a start to measure
    this.drifts = [];
    this.drift = null; // last median drift, seconds
    this.nudging = false;
    this.playLatency = PLAY_LATENCY_MS.initial;
    this.joinLead = JOIN_LEAD_MS.initial;
    this.lastStart = null; // { at, actual, error } of the last scheduled start, ms
    this.seekTarget = null;

    this.readySent = null; // seq of the last /ready
    this.endedSent = null; // seq of the last /ended
    this.stall = null; // { since } while a /buffering is unanswered by recovery
    this.stallReadySentAt = -Infinity; // when /ready last asked to end a stallRecovery suspension
    this.stallCheck = null; // { since, position } after a `waiting` event, until confirmed
    this.simulatedStallUntil = 0; // test hook: see simulateStall()
    this.scrubbing = false; // the viewer drags the seek bar: hands off the video
    this.mode = 'idle';
    this.detail = '';
    this.history = []; // the last things the player did, for debugging (and the e2e test)

    for (const type of ['loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'progress']) {
      video.addEventListener(type, () => this.reconcile());
    }
    video.addEventListener('waiting', () => this.onWaiting());
    video.addEventListener('playing', () => {
      if (this.stallCheck && this.hasEnoughData()) this.stallCheck = null;
    });
    video.addEventListener('ended', () => this.onEnded());
    video.addEventListener('error', () => this.onMediaError());
    video.addEventListener('loadedmetadata', () => this.onMediaLoaded());
    this.interval = setInterval(() => this.reconcile(), TICK_MS);
  }

  /** Remembers what the player did and why (shown by the e2e test on outliers). */
  note(what) {
    const at = this.clock.now();
    this.history.push(`${(at % 100000).toFixed(1)} ${what}`);
    if (this.history.length > 40) this.history.shift();
  }

  // MARK: inputs

  /** A new connection's welcome: reports may be needed again. */
  reset() {
    this.readySent = null;
    this.stallReadySentAt = -Infinity;
  }

  setState(state) {
    const previous = this.state;
    this.state = state;
    const p = state.playback;
    this.note(`state ${state.seq} ${p.status} pos=${p.position} at=${p.at % 100000} rate=${p.rate} cause=${p.cause}`);
    const activity = state.session?.state === 'joined' ? state.session.activity : null;
    if (activity && activity.url !== this.src) this.load(activity.url);
    if (previous?.playback.item !== state.playback.item) this.endedSent = null;
    // Under `stall wait` the group answers our /buffering by waiting: the hold
    // logic reports readiness from here on.
    if (state.playback.status !== 'playing') this.stall = null;
    this.reconcile();
  }

  setMe(participant) {
    const before = this.me?.suspensions.join(',');
    this.me = participant;
    if (participant.suspensions.join(',') !== before) {
      // A suspension began or ended: the server hands the state again when the
      // last one ends, and that state may need a fresh /ready.
      this.readySent = null;
      this.stallReadySentAt = -Infinity;
      if (!participant.suspensions.includes('stallRecovery')) this.stall = null;
    }
    this.reconcile();
  }

  /** The `catchup` event: replay from `from` at `rate` (2), level with the group
   *  at server time `until`. Rather than starting at `from` late, the player
   *  follows the replay's own timeline, which meets the group's at `until`. */
  startCatchup({ from, rate, until }) {
    const group = this.groupTimeline();
    if (!group) return;
    const level = positionAt(group, until);
    const start = until - ((level - from) / rate) * 1000;
    this.catchup = {
      until,
      timeline: { playing: true, position: from, at: start, rate, catchup: true },
    };
    this.reconcile();
  }

  /** The "click to join playback" button: a user gesture lets play() through. */
  async unblock() {
    this.blocked = false;
    try {
      await this.video.play();
    } catch {
      // Still refused (no media yet, or the browser wants more): reconcile retries.
    }
    this.video.pause();
    this.running = null;
    if (this.me?.suspensions.includes('userActionRequired')) this.send('/resume userActionRequired');
    this.reconcile();
  }

  /** Try the current item again after a load error. */
  retryMedia() {
    if (!this.src) return;
    this.mediaError = null;
    this.video.load();
    this.emit();
  }

  /**
   * Test hook (used by Tests/e2e): behave exactly as if the network stopped
   * delivering for `ms`: the video freezes, fires `waiting`, and reports no
   * data until the time is up. Everything after that is the normal path.
   */
  simulateStall(ms) {
    this.simulatedStallUntil = performance.now() + ms;
    this.video.dispatchEvent(new Event('waiting'));
    this.video.pause(); // frozen, as without data; the player still counts as running
  }

  // MARK: media

  load(url) {
    this.src = url;
    this.mediaError = null;
    this.cancelJoin();
    this.running = null;
    this.catchup = null;
    this.stall = null;
    this.video.pause();
    this.video.src = url;
    this.emit();
  }

  onMediaLoaded() {
    // A new item loaded (or a retry worked): we can follow the group again.
    if (this.suspendedForMedia) {
      this.suspendedForMedia = false;
      this.send('/resume coordinatedPlaybackNotPossible');
    }
  }

  onMediaError() {
    const error = this.video.error;
    if (!error || !this.src) return;
    this.mediaError = MEDIA_ERRORS[error.code] || error.message || 'unknown error';
    this.join = null;
    this.running = null;
    // The group goes on without us; only our player is out of step.
    if (!this.suspendedForMedia && this.me?.joined) {
      this.suspendedForMedia = true;
      this.send('/suspend coordinatedPlaybackNotPossible');
    }
    this.emit();
  }

  /** A `waiting` event while we play along with the group may be a stall: it is
   *  confirmed (and reported with /buffering) if the video is still stuck
   *  STALL_CONFIRM_MS later. A paused or seeking video also goes through
   *  `waiting`; those are not stalls. */
  onWaiting() {
    const plan = this.plan();
    const video = this.video;
    let ahead = 0;
    for (let i = 0; i < video.buffered.length; i++) {
      if (video.buffered.start(i) <= video.currentTime + 0.01) ahead = Math.max(ahead, video.buffered.end(i) - video.currentTime);
    }
    this.note(`waiting event: readyState ${video.readyState}, ${ahead.toFixed(2)} s buffered ahead`);
    if (plan.kind !== 'run' || plan.timeline.catchup || !this.running || this.join || video.seeking) return;
    if (this.stall || this.stallCheck) return;
    this.stallCheck = { since: performance.now(), position: video.currentTime };
  }

  /** Called every tick while a `waiting` event is unconfirmed. */
  confirmStall() {
    const check = this.stallCheck;
    const video = this.video;
    const moved = Math.abs(video.currentTime - check.position) > 0.1;
    if (moved && this.hasEnoughData()) {
      this.stallCheck = null; // a hiccup: it plays again
      return;
    }
    if (performance.now() - check.since < STALL_CONFIRM_MS) return;
    this.stallCheck = null;
    if (this.plan().kind !== 'run' || !this.running) return;
    this.stall = { since: check.since };
    this.running = null;
    this.note('stall confirmed: /buffering');
    this.send('/buffering');
  }

  onEnded() {
    const plan = this.plan();
    if (plan.kind !== 'run' || plan.timeline.catchup || !this.state) return;
    if (this.endedSent === this.state.seq) return;
    this.endedSent = this.state.seq;
    this.send(`/ended ${this.state.seq}`);
  }

  /** Enough data to play from the current position: the browser says it can
   *  play through, or it has the next second (or up to the end) buffered. */
  hasEnoughData() {
    const video = this.video;
    if (performance.now() < this.simulatedStallUntil) return false;
    if (video.seeking || video.readyState < HAVE_FUTURE_DATA) return false;
    if (video.readyState >= HAVE_ENOUGH_DATA) return true;
    const from = video.currentTime;
    const to = Math.min(from + 1, video.duration || from);
    for (let i = 0; i < video.buffered.length; i++) {
      if (video.buffered.start(i) <= from + 0.001 && video.buffered.end(i) >= to - 0.001) return true;
    }
    return false;
  }

  // MARK: deciding

  groupTimeline() {
    const playback = this.state?.playback;
    if (!playback || playback.status === 'idle') return null;
    return {
      playing: playback.status === 'playing',
      position: playback.position,
      at: playback.at,
      rate: playback.rate,
    };
  }

  /** What the player should do now. */
  plan() {
    const state = this.state;
    const playback = state?.playback;
    if (!state || state.session?.state !== 'joined' || !playback || playback.status === 'idle') {
      return { kind: 'none', mode: 'idle' };
    }
    if (!this.me?.joined) return { kind: 'none', mode: 'left' };
    if (this.mediaError) return { kind: 'none', mode: 'error' };
    if (this.blocked) return { kind: 'detached', mode: 'blocked' };
    if (this.scrubbing) return { kind: 'detached', mode: 'scrubbing' };
    const now = this.clock.now();
    if (this.catchup && now >= this.catchup.until) this.catchup = null;
    const others = (this.me.suspensions || []).filter((reason) => reason !== 'catchup');
    if (this.catchup && others.length === 0) {
      return { kind: 'run', mode: 'catchup', timeline: this.catchup.timeline };
    }
    if (others.length > 0) return { kind: 'detached', mode: 'suspended', reasons: others };
    if (this.stall) return { kind: 'detached', mode: 'stalled' };
    const timeline = this.groupTimeline();
    if (!timeline.playing) {
      return { kind: 'hold', mode: playback.status, timeline, waitingSeq: playback.status === 'waiting' ? state.seq : null };
    }
    return { kind: 'run', mode: now < timeline.at ? 'starting' : 'playing', timeline };
  }

  // MARK: acting

  reconcile() {
    if (this.stallCheck) this.confirmStall();
    const plan = this.plan();
    this.mode = plan.mode;
    this.detail = '';
    switch (plan.kind) {
      case 'none':
        this.cancelJoin();
        this.stopVideo();
        break;
      case 'detached':
        // The group's state is not forced on a suspended player. What it may do
        // on its own: find its data again and say so, which ends a stall.
        this.cancelJoin();
        this.reportRecovery(plan);
        if (plan.mode === 'blocked' || plan.mode === 'stalled') this.stopVideo();
        break;
      case 'hold':
        this.hold(plan);
        break;
      case 'run':
        this.run(plan);
        break;
    }
    this.emit();
  }

  stopVideo() {
    this.stallCheck = null;
    if (!this.video.paused) this.video.pause();
    this.running = null;
    this.nudging = false;
  }

  /** Under stall recovery: /ready once the video can play again. */
  reportRecovery(plan) {
    const stalledAlone = plan.mode === 'suspended' && plan.reasons.includes('stallRecovery');
    if (!(this.stall || stalledAlone) || !this.state || this.video.readyState < HAVE_METADATA) return;
    if (!this.hasEnoughData()) {
      this.detail = 'buffering';
      return;
    }
    // Said again every few seconds while the suspension lasts: a report can be
    // lost to a reconnect, or answer a state that a newer one replaced.
    const now = performance.now();
    if (this.stall || now - this.stallReadySentAt > 3000) {
      this.stall = null;
      this.stallReadySentAt = now;
      this.send(`/ready ${this.state.seq}`);
      this.note(`recovered: /ready ${this.state.seq}`);
    }
  }

  /** Paused or waiting: stand still at exactly the position; in `waiting`, say
   *  /ready once there with enough data. */
  hold(plan) {
    const video = this.video;
    this.cancelJoin();
    this.stopVideo();
    if (video.readyState < HAVE_METADATA) {
      this.detail = 'loading';
      return;
    }
    const target = this.clampToMedia(plan.timeline.position);
    if (Math.abs(video.currentTime - target) > THRESHOLDS.hold) {
      if (!(video.seeking && this.seekTarget === target)) this.seek(target);
      return;
    }
    if (plan.waitingSeq == null) return;
    if (!this.hasEnoughData()) {
      this.detail = 'buffering';
      return;
    }
    if (this.readySent !== plan.waitingSeq) {
      this.readySent = plan.waitingSeq;
      this.send(`/ready ${plan.waitingSeq}`);
      this.note(`/ready ${plan.waitingSeq}`);
    }
    this.detail = 'ready';
  }

  /** Playing (the group's timeline or a catch-up): start on time, then keep to it. */
  run(plan) {
    const video = this.video;
    const timeline = plan.timeline;
    const key = timelineKey(timeline);
    if (video.readyState < HAVE_METADATA) {
      this.detail = 'loading';
      return;
    }
    if (this.stallCheck) {
      this.detail = 'buffering';
      return; // stuck or not, confirmStall() decides
    }
    if (this.join) {
      if (this.join.key === key || this.join.sameCourse(timeline)) return this.progressJoin(timeline, key);
      this.cancelJoin();
    }
    const now = this.clock.now();
    const duration = video.duration;
    if (!this.running || video.paused) {
      // At the end of the item there is nothing to start.
      if (Number.isFinite(duration) && positionAt(timeline, Math.max(now, timeline.at)) >= duration - 0.05) {
        this.detail = 'ended';
        return;
      }
      return this.beginJoin(timeline, key);
    }
    // Playing: keep the base rate in step (a /rate change is continuous: no seek).
    this.running = key;
    const expected = positionAt(timeline, now);
    if (Number.isFinite(duration) && expected >= duration - 0.05) return; // let it end
    if (this.verify) {
      this.verifyStart(now);
      if (this.verify) return; // the first moments belong to the start measurement
    }
    const raw = video.currentTime - expected;
    this.drifts.push(raw);
    if (this.drifts.length > DRIFT_WINDOW) this.drifts.shift();
    const drift = median(this.drifts);
    this.drift = drift;
    if (Math.abs(raw) > THRESHOLDS.seek && Math.abs(drift) > THRESHOLDS.seek) {
      this.note(`drift ${(drift * 1000).toFixed(1)} ms: re-join`);
      this.detail = `re-syncing (${Math.round(drift * 1000)} ms off)`;
      return this.beginJoin(timeline, key);
    }
    this.nudge(drift, timeline.rate);
  }

  nudge(drift, rate) {
    const size = Math.abs(drift);
    if (size < (this.nudging ? THRESHOLDS.nudgeStop : THRESHOLDS.nudgeStart)) {
      if (this.nudging) this.note(`nudge ends at ${(drift * 1000).toFixed(1)} ms`);
      this.nudging = false;
      this.setRate(rate);
      return;
    }
    if (!this.nudging) this.note(`nudge begins at ${(drift * 1000).toFixed(1)} ms`);
    this.nudging = true;
    const change = clamp(drift / THRESHOLDS.nudgeHorizon, -THRESHOLDS.nudgeMax, THRESHOLDS.nudgeMax);
    this.setRate(rate * (1 - change));
  }

  setRate(rate) {
    const rounded = Math.round(rate * 10000) / 10000; // no churn on tiny changes
    if (this.video.playbackRate !== rounded) this.video.playbackRate = rounded;
  }

  /** Plans a scheduled start: the timeline's own `at` when it is still ahead and
   *  the video already holds that position (a coordinated start), else an
   *  instant far enough ahead to seek and buffer first. */
  beginJoin(timeline, key) {
    const video = this.video;
    const now = this.clock.now();
    this.stopVideo();
    this.drifts = [];
    this.verify = null;
    let startAt;
    const atPosition = Math.abs(video.currentTime - timeline.position) <= THRESHOLDS.hold && !video.seeking;
    if (timeline.at - now > SPIN_MS + this.playLatency + 2 && atPosition && this.hasEnoughData()) {
      startAt = timeline.at;
    } else {
      startAt = Math.max(timeline.at, now + this.joinLead);
    }
    const position = this.clampToMedia(positionAt(timeline, startAt));
    const join = {
      key,
      startAt,
      position,
      rate: timeline.rate,
      seekBegan: null,
      timer: null,
      armed: false,
      // A new state on the same course (e.g. a handed state, a queue change)
      // must not restart a join.
      sameCourse: (other) => Math.abs(positionAt(other, startAt) - position) < 0.0005 && other.rate === timeline.rate,
    };
    this.join = join;
    this.note(`join: ${position.toFixed(3)} at ${(startAt % 100000).toFixed(1)} (in ${(startAt - now).toFixed(0)} ms)`);
    video.playbackRate = timeline.rate;
    if (Math.abs(video.currentTime - position) > THRESHOLDS.hold) {
      join.seekBegan = performance.now();
      this.seek(position);
    }
    this.progressJoin(timeline, key);
  }

  progressJoin(timeline, key) {
    const join = this.join;
    const msLeft = join.startAt - this.clock.now();
    this.detail = `starting in ${Math.max(0, msLeft / 1000).toFixed(2)} s`;
    if (join.armed) return;
    if (this.video.seeking || !this.hasEnoughData()) {
      if (msLeft < this.playLatency + 2) {
        // Seeking took longer than planned: lead further ahead next time, and retry.
        this.joinLead = clamp(this.joinLead * 1.6, JOIN_LEAD_MS.min, JOIN_LEAD_MS.max);
      this.note(`join missed its instant: lead now ${this.joinLead.toFixed(0)} ms`);
        this.join = null;
        this.beginJoin(timeline, key);
      }
      return;
    }
    if (join.seekBegan != null) {
      // Learn how long a seek with buffering takes here, to pick the next lead.
      const took = performance.now() - join.seekBegan;
      this.joinLead = clamp(this.joinLead * 0.7 + (took * 2 + 150) * 0.3, JOIN_LEAD_MS.min, JOIN_LEAD_MS.max);
      join.seekBegan = null;
    }
    join.armed = true;
    const wait = this.clock.toLocal(join.startAt) - this.playLatency - (performance.timeOrigin + performance.now());
    join.timer = setTimeout(() => this.fire(join), Math.max(0, wait - SPIN_MS));
  }

  fire(join) {
    if (this.join !== join) return;
    const video = this.video;
    // Recomputed here: the clock may have been refined since the timer was set.
    const target = this.clock.toLocal(join.startAt) - this.playLatency;
    const late = performance.timeOrigin + performance.now() - target;
    if (late > LATE_START_MS) {
      // The main thread was busy well past the instant: plan again, further ahead.
      this.note(`start ${late.toFixed(1)} ms late: plan again`);
      this.joinLead = clamp(this.joinLead * 1.3, JOIN_LEAD_MS.min, JOIN_LEAD_MS.max);
      this.join = null;
      this.reconcile();
      return;
    }
    // A little late: start now; the drift correction absorbs it.
    const early = target - (performance.timeOrigin + performance.now());
    if (early > SPIN_MS + 4) {
      // Fired too early (the clock estimate moved): wait again rather than spin long.
      join.timer = setTimeout(() => this.fire(join), early - SPIN_MS);
      return;
    }
    while (performance.timeOrigin + performance.now() < target) {
      // spin: the last few milliseconds
    }
    video.playbackRate = join.rate;
    const calledAt = performance.timeOrigin + performance.now();
    const playing = video.play();
    this.note(`play() ${(calledAt - target).toFixed(1)} ms after its instant (spun ${Math.max(0, -late).toFixed(1)} ms)`);
    this.join = null;
    this.running = join.key;
    this.nudging = false;
    this.verify = { startAt: join.startAt, position: join.position, rate: join.rate, calledAt: performance.now() };
    playing?.catch((error) => this.onPlayRefused(error));
  }

  /** Measures a start once it has run a little: when did the video really
   *  leave `position`? The difference with the planned instant corrects the
   *  play() latency for the next start. */
  verifyStart(now) {
    const verify = this.verify;
    if (performance.now() - verify.calledAt < VERIFY_AFTER_MS) return;
    this.verify = null;
    const video = this.video;
    if (video.paused || video.seeking) return;
    const actual = now - ((video.currentTime - verify.position) / verify.rate) * 1000;
    const error = actual - verify.startAt;
    this.lastStart = { at: verify.startAt, actual, error };
    this.note(`started ${error.toFixed(1)} ms after the instant; play() latency ${this.playLatency.toFixed(1)} ms`);
    if (Math.abs(error) < 40) {
      this.playLatency = clamp(this.playLatency + error * LATENCY_GAIN, PLAY_LATENCY_MS.min, PLAY_LATENCY_MS.max);
    }
  }

  onPlayRefused(error) {
    if (error?.name === 'AbortError') return; // a pause() or a new source came first
    this.running = null;
    if (error?.name === 'NotAllowedError') {
      // Autoplay refused: separate from the group until the viewer clicks.
      this.blocked = true;
      if (this.me?.joined && !this.me.suspensions.includes('userActionRequired')) {
        this.send('/suspend userActionRequired');
      }
    }
    this.reconcile();
  }

  cancelJoin() {
    if (!this.join) return;
    clearTimeout(this.join.timer);
    this.join = null;
  }

  seek(position) {
    this.seekTarget = position;
    this.video.currentTime = position;
  }

  clampToMedia(position) {
    const duration = this.video.duration;
    const max = Number.isFinite(duration) ? duration : Infinity;
    return clamp(position, 0, max);
  }

  /** The figures the page shows and the e2e test reads. */
  snapshot() {
    return {
      mode: this.mode,
      detail: this.detail,
      seq: this.state?.seq ?? null,
      status: this.state?.playback.status ?? null,
      drift: this.drift,
      nudging: this.nudging,
      playbackRate: this.video.playbackRate,
      playLatency: this.playLatency,
      joinLead: this.joinLead,
      lastStart: this.lastStart,
      offset: this.clock.offset,
      offsetUncertainty: this.clock.uncertainty,
      rtt: this.clock.rtt,
      joining: !!this.join,
      running: !!this.running,
      mediaError: this.mediaError,
      blocked: this.blocked,
    };
  }

  emit() {
    this.dispatchEvent(new CustomEvent('change'));
  }
}
