// The player: what a <video> must do to follow the room, decided without
// touching it (actions.js says how inputs and actions look).
//
// It applies the room's `state`, its own member's suspensions, catch-ups and
// the video's events; decides the mode (plan.js); holds a paused or waiting
// group's position exactly, playing along otherwise (follow.js); and reports
// what only a player can know: `/ready <seq>` when it holds the requested
// position with enough data, `/buffering` when it stalls (stall.js), `/ended
// <seq>` at the end, and suspensions when it cannot follow (media that does not
// load, autoplay refused) or when it is set apart by what neither the room nor
// the person ordered (apart.js: a pause by the system or the browser, a page
// in the background), or by the person alone ("Pause just for me", an item
// played only for me).

import { AWAY, interruptionReason, ownReasonsOf, PAUSED_FOR_ME } from './apart.js';
import { catchupOver, catchupTimeline } from './catchup.js';
import { capabilitiesOf, holdTolerance } from './correct.js';
import { Follower } from './follow.js';
import { isMixedContent, MIXED_CONTENT_ERROR, mixedContentNotice } from './mixed-content.js';
import { planPlayer } from './plan.js';
import { bufferedAhead, HAVE_METADATA, hasEnoughData } from './readiness.js';
import { canSeekTo } from './seekable.js';
import { recoveryReadyDue, stallCheckOutcome, waitingMayBeStall } from './stall.js';
import { clampToMedia, groupTimeline, positionAt } from './timeline.js';

const MEDIA_ERRORS = {
  1: 'loading was aborted',
  2: 'a network error stopped the download',
  3: 'the video could not be decoded',
  4: 'the address could not be loaded or the format is not supported',
};

export class PlayerCore extends Follower {
  constructor() {
    super();
    this.state = null; // the room's last state
    this.me = null; // my participant
    this.catchup = null; // { timeline, until } during a "what happened?" replay

    this.src = null; // the URL loaded in the video
    this.pageProtocol = null; // the page's location.protocol (player-sync.js sets it): 'https:' loads no http:// file as it is
    this.mixedContent = false; // the item loaded is an http:// file on an https:// page (mixed-content.js)
    this.mediaError = null; // text, when the current item failed to load
    this.suspendedForMedia = false; // we sent /suspend coordinatedPlaybackNotPossible
    this.unseekable = null; // { position }: the group is where this video cannot seek (seekable.js)
    this.blocked = false; // autoplay refused: waiting for a click
    this.scrubbing = false; // the viewer drags the seek bar: hands off the video
    this.hidden = false; // the page is hidden and its video is not in picture-in-picture
    this.apart = null; // { reason }: a suspension this page asked for (apart.js), until it asks to end it
    this.awayEnding = false; // `/resume away` sent, until the room drops the reason
    this.alone = null; // { activity }: an item played only for me, the session going on without me

    this.readySent = null; // seq of the last /ready
    this.durationSent = null; // url of the item whose /duration was sent
    this.endedSent = null; // seq of the last /ended
    this.stall = null; // { since } while a /buffering is unanswered by recovery
    this.stallReadySentAt = -Infinity; // when /ready last asked to end a stallRecovery suspension
    this.mode = 'idle';
  }

  // MARK: inputs

  /** A new connection's welcome: reports may be needed again. */
  reset() {
    this.readySent = null;
    this.durationSent = null;
    this.stallReadySentAt = -Infinity;
  }

  setState(state, r) {
    return this.act(r, () => {
      const previous = this.state;
      this.state = state;
      const p = state.playback;
      this.note(`state ${state.seq} ${p.status} pos=${p.position} at=${p.at % 100000} rate=${p.rate} cause=${p.cause}`);
      const activity = state.session?.state === 'joined' ? state.session.activity : null;
      if (activity && activity.url !== this.src && !this.alone) this.load(activity);
      if (previous?.playback.item !== state.playback.item) this.endedSent = null;
      // Under `stall wait` the group answers our /buffering by waiting: the hold
      // logic reports readiness from here on.
      if (state.playback.status !== 'playing') this.stall = null;
      this.reconcile();
    });
  }

  setMe(participant, r) {
    return this.act(r, () => {
      const before = this.me?.suspensions.join(',');
      this.me = participant;
      if (participant.suspensions.join(',') !== before) {
        // A suspension began or ended: the server hands the state again when the
        // last one ends, and that state may need a fresh /ready.
        this.readySent = null;
        this.stallReadySentAt = -Infinity;
        if (!participant.suspensions.includes('stallRecovery')) this.stall = null;
        if (!participant.suspensions.includes(AWAY)) this.awayEnding = false;
      }
      this.reconcile();
    });
  }

  /** The `catchup` event (catchup.js). */
  startCatchup(event, r) {
    return this.act(r, () => {
      const group = groupTimeline(this.state?.playback);
      if (!group) return;
      this.catchup = catchupTimeline(event, group);
      this.reconcile();
    });
  }

  /** The viewer clicked to join playback: player-sync.js calls play() within the
   *  gesture, then afterUnblock(). */
  unblock() {
    this.blocked = false;
    this.probeRefused = false;
  }

  afterUnblock(r) {
    return this.act(r, () => {
      this.running = null;
      if (this.me?.suspensions.includes('userActionRequired')) this.send('/resume userActionRequired');
      this.reconcile();
    });
  }

  /** Try the current item again after a load error. */
  retryMedia() {
    if (!this.src) return [];
    this.mediaError = null;
    return [{ type: 'reload' }];
  }

  /** The page was hidden (and its video is not in picture-in-picture) or shown:
   *  shown again, a member set apart as `away` comes back to the group at once. */
  setHidden(hidden, r) {
    return this.act(r, () => {
      if (this.hidden === hidden) return;
      this.hidden = hidden;
      this.note(hidden ? 'page hidden' : 'page shown');
      this.reconcile();
    });
  }

  /** The browser freezes the hidden page (a phone does with its screen, and its
   *  connection may go next): the member is away, so that the room says so and
   *  keeps it for the away grace rather than showing it gone. */
  freezing(r) {
    return this.act(r, () => {
      if (!this.me?.joined || this.alone || this.setApartByPage) return;
      this.setApart(AWAY, 'the page is frozen in the background');
      this.reconcile();
    });
  }

  /** "Pause just for me": this player alone stops, the group goes on. */
  pauseForMe(r) {
    return this.act(r, () => {
      if (!this.me?.joined || this.alone) return;
      this.setApart(PAUSED_FOR_ME, 'paused just for me');
      this.reconcile();
    });
  }

  /** Back with the group from every suspension this page began (apart.js): the
   *  room hands the current state when the last one ends, and the player
   *  starts along with it. */
  backToGroup(r) {
    return this.act(r, () => {
      this.endApart('back to the group');
      this.reconcile();
    });
  }

  /** Whether this page has set its member apart by itself (a reason of apart.js in effect). */
  get setApartByPage() {
    return ownReasonsOf(this.me?.suspensions, this.apart).length > 0;
  }

  /**
   * Plays `activity` only for me (or, with none, the item already loaded, from
   * where it is), out of the session: the room's state is no longer followed
   * and the person drives the video. joinGroup() ends it.
   */
  playAlone(activity, r) {
    return this.act(r, () => {
      this.endApart('playing alone');
      this.alone = { activity: activity ?? null, start: !!activity };
      if (this.me?.joined) this.send('/leave');
      this.cancelJoin();
      this.running = null;
      if (activity && activity.url !== this.src) this.load(activity);
      this.note(`alone: ${activity ? activity.url : 'the current item'}`);
      this.reconcile();
    });
  }

  /** Back from playing alone: into the session, the group's item loaded again. */
  joinGroup(r) {
    return this.act(r, () => {
      if (!this.alone) return;
      this.alone = null;
      this.stopVideo();
      if (this.me && !this.me.joined) this.send('/join');
      const activity = this.state?.session?.state === 'joined' ? this.state.session.activity : null;
      if (activity && activity.url !== this.src) this.load(activity);
      this.reconcile();
    });
  }

  /** Asks the room to set this member apart for `reason` (said once) and stops the video. */
  setApart(reason, why) {
    this.cancelJoin();
    this.stopVideo();
    if (this.apart?.reason === reason) return;
    this.apart = { reason };
    this.note(`${why}: /suspend ${reason}`);
    if (!this.me?.suspensions.includes(reason)) this.send(`/suspend ${reason}`);
  }

  /** Ends every suspension this page began. */
  endApart(why) {
    for (const reason of ownReasonsOf(this.me?.suspensions, this.apart)) {
      this.note(`${why}: /resume ${reason}`);
      this.send(`/resume ${reason}`);
      if (reason === AWAY) this.awayEnding = true;
    }
    this.apart = null;
  }

  /** Called by follow.js: the video stood still though nobody here paused it
   *  (apart.js). The group goes on; this member is set apart with the reason. */
  interrupted() {
    this.setApart(interruptionReason(this.hidden), 'paused by the system or the browser');
  }

  /** Every tick, and after the video's progress events. */
  tick(r) {
    return this.act(r, () => this.reconcile());
  }

  /** `loadedmetadata`: a new item loaded (or a retry worked): we can follow
   *  the group again, and say how long the item is. */
  mediaLoaded(r) {
    return this.act(r, () => {
      const activity = this.state?.session?.activity;
      if (activity && this.state.session.state === 'joined') this.reportDuration(activity, this.state.seq);
      // (Not while the group is where this video cannot seek: seekableAgain() decides.)
      if (!this.suspendedForMedia || this.unseekable) return;
      this.suspendedForMedia = false;
      this.send('/resume coordinatedPlaybackNotPossible');
    });
  }

  /** No player could be made for the item (its adapter failed to load): as a
   *  media error, in words. */
  playerMissing(kind, r) {
    return this.mediaFailed({ ...r, error: { code: 0, words: `this page cannot play ${kind} videos here` } });
  }

  /**
   * `/duration <seq> <seconds>` (or `live <edge>`) once the player knows the
   * item's length, while the room does not: the room keeps the first report
   * for an item, and says it does not know yet with `duration: null` (a room
   * whose state has no `duration` at all takes no such reports).
   */
  reportDuration(activity, seq) {
    const video = this.video;
    if (activity.duration !== null || activity.url !== this.src || this.durationSent === activity.url) return;
    if (video.readyState < HAVE_METADATA) return;
    const live = video.live === true || video.duration === Infinity;
    if (live) {
      if (!Number.isFinite(video.liveEdge)) return;
      this.send(`/duration ${seq} live ${video.liveEdge.toFixed(3)}`);
    } else {
      if (!(Number.isFinite(video.duration) && video.duration > 0)) return;
      this.send(`/duration ${seq} ${video.duration.toFixed(3)}`);
    }
    this.durationSent = activity.url;
  }

  /** `error`: the group goes on without us; only our player is out of step. */
  mediaFailed(r) {
    const error = r.error;
    if (!error || !this.src) return [];
    return this.act(r, () => {
      // An http:// file on an https:// page: the browser asked for it at
      // https:// (or refused it), and "could not be loaded" would not say why.
      const mixed = this.mixedContent && !error.words && error.code !== 3;
      this.mediaError = mixed ? MIXED_CONTENT_ERROR
        : error.words || MEDIA_ERRORS[error.code] || error.message || 'unknown error';
      this.cancelJoin();
      this.running = null;
      if (!this.suspendedForMedia && this.me?.joined) {
        this.suspendedForMedia = true;
        this.send('/suspend coordinatedPlaybackNotPossible');
      }
    });
  }

  /** `waiting`: maybe a stall, confirmed (and reported with /buffering) if the
   *  video is still stuck a moment later (stall.js). */
  waiting(r) {
    return this.act(r, () => {
      const video = this.video;
      const plan = this.plan();
      this.note(`waiting event: readyState ${video.readyState}, ${bufferedAhead(video).toFixed(2)} s buffered ahead`);
      if (!waitingMayBeStall({
        plan, running: this.running, joining: this.join, seeking: video.seeking, stalled: this.stall, checking: this.stallCheck,
      })) return;
      this.stallCheck = { since: video.monotonic, position: video.currentTime };
    });
  }

  /** `playing`: a `waiting` followed by playing with data was a hiccup. */
  playing(r) {
    return this.act(r, () => {
      if (this.stallCheck && hasEnoughData(this.video)) this.stallCheck = null;
    });
  }

  /** `ended`: once per state, and not at the end of a catch-up's replay. */
  ended(r) {
    return this.act(r, () => {
      const plan = this.plan();
      if (plan.kind !== 'run' || plan.timeline.catchup || !this.state) return;
      if (this.endedSent === this.state.seq) return;
      this.endedSent = this.state.seq;
      this.send(`/ended ${this.state.seq}`);
    });
  }

  /** play() was refused with an error named `name`. */
  playRefused(name, r) {
    if (name === 'AbortError') return []; // a pause() or a new source came first
    return this.act(r, () => {
      this.running = null;
      if (name === 'NotAllowedError') {
        // Autoplay refused: separate from the group until the viewer clicks.
        this.blocked = true;
        if (this.me?.joined && !this.me.suspensions.includes('userActionRequired')) {
          this.send('/suspend userActionRequired');
        }
      }
      this.reconcile();
    });
  }

  // MARK: deciding

  plan() {
    if (this.catchup && catchupOver(this.catchup, this.video.now)) this.catchup = null;
    return planPlayer(this, this.video.now);
  }

  reconcile() {
    // A player may learn the duration after its `loadedmetadata` (an embedded
    // player's reports come later): looked at on every input, sent once.
    const session = this.state?.session;
    if (session?.state === 'joined' && session.activity) this.reportDuration(session.activity, this.state.seq);
    if (this.stallCheck) this.confirmStall();
    if (this.unseekable) this.seekableAgain();
    const plan = this.plan();
    this.mode = plan.mode;
    this.detail = '';
    if (this.probing) {
      // A probe plays out its few hundred ms and pauses by itself; a plan to
      // hold or play waits for it, any other forgets it (probed() ignores it).
      if (plan.kind === 'hold' || plan.kind === 'run') {
        this.detail = 'measuring the sound';
        return;
      }
      this.probing = null;
    }
    if (this.unseekable && (plan.kind === 'hold' || plan.kind === 'run')) {
      // Until the server's suspension arrives: stand still, try nothing.
      this.cancelJoin();
      this.stopVideo();
      return;
    }
    switch (plan.kind) {
      case 'alone':
        // The person drives the video (its own controls); nothing is reported.
        // An item picked only for me starts at once, where it can.
        this.cancelJoin();
        this.running = null;
        if (this.alone.start && this.video.readyState >= HAVE_METADATA) {
          this.alone.start = false;
          this.play(this.video.now, 1);
        }
        break;
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
        if (plan.mode === 'suspended') this.apartCourse(plan.reasons);
        break;
      case 'hold':
        this.hold(plan);
        break;
      case 'run':
        this.run(plan);
        break;
    }
  }

  /** Set apart by this page (apart.js): paused just for me stays still; an
   *  interruption that the system ends by playing the video again (a short
   *  call, the audio given back), or a page shown again, is the person back. */
  apartCourse(reasons) {
    if (reasons.includes(PAUSED_FOR_ME)) {
      this.stopVideo();
      return;
    }
    if (!ownReasonsOf(reasons, null).length) return;
    const video = this.video;
    if (this.apart && !video.paused) {
      this.endApart('the video plays again');
      return;
    }
    if (!this.hidden && reasons.includes(AWAY) && !this.awayEnding) {
      // Shown again (or a page loaded afresh while the room still had it away).
      this.endApart('the page is shown');
    }
  }

  /** Called every tick while a `waiting` event is unconfirmed. */
  confirmStall() {
    const check = this.stallCheck;
    const video = this.video;
    const outcome = stallCheckOutcome(check, { ...video, enoughData: hasEnoughData(video) });
    if (outcome === 'pending') return;
    this.stallCheck = null;
    if (outcome === 'hiccup') return;
    if (this.plan().kind !== 'run' || !this.running) return;
    this.stall = { since: check.since };
    this.running = null;
    this.note('stall confirmed: /buffering');
    this.send('/buffering');
  }

  /** Under stall recovery: /ready once the video can play again. */
  reportRecovery(plan) {
    const video = this.video;
    const stalledAlone = plan.mode === 'suspended' && plan.reasons.includes('stallRecovery');
    if (!(this.stall || stalledAlone) || !this.state || video.readyState < HAVE_METADATA) return;
    if (!hasEnoughData(video)) {
      this.detail = 'buffering';
      return;
    }
    if (recoveryReadyDue({ stalled: !!this.stall, monotonic: video.monotonic, lastSentAt: this.stallReadySentAt })) {
      this.stall = null;
      this.stallReadySentAt = video.monotonic;
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
    const target = clampToMedia(plan.timeline.position, video.duration);
    // A live stream holds where it stands (no seek lands in it); /play restarts
    // everyone at the live edge (sync/live.js).
    if (video.live !== true && Math.abs(video.currentTime - target) > holdTolerance(capabilitiesOf(video))) {
      if (!(video.seeking && this.seekTarget === target) && this.maySeekTo(target)) this.seek(target);
      return;
    }
    if (!hasEnoughData(video)) {
      if (plan.waitingSeq != null) this.detail = 'buffering';
      return;
    }
    // Before its first start, a video with sound measures how long its clock
    // takes to start (sync/latency.js: needsProbe), while nobody waits on it
    // if it can.
    if (this.wantsProbe()) return this.startProbe();
    if (plan.waitingSeq == null) return;
    // And before each /ready, a warm-up, when the start it leads to could not
    // otherwise be placed on the output's blocks (sync/grid.js).
    if (this.readySent !== plan.waitingSeq && this.startsHeard(plan.timeline) && this.wantsWarmup()) return this.startProbe(true);
    if (this.readySent !== plan.waitingSeq) {
      this.readySent = plan.waitingSeq;
      this.warmups = 0;
      // With sound, time to start out of hearing first (sync/start.js: PREROLL).
      const lead = this.leadToAsk(plan.timeline);
      const line = `/ready ${plan.waitingSeq}${lead ? ` lead ${lead}` : ''}`;
      this.send(line);
      this.note(line);
    }
    this.detail = 'ready';
  }

  /** Whether the video can seek to `position`. When it cannot, the first time
   *  says so (`unseekable`, which the page words) and separates this player
   *  from the group, so that nobody waits for it and it does not seek again
   *  every tick; seekableAgain() ends that. */
  maySeekTo(position) {
    if (canSeekTo(this.video.seekable, position)) return true;
    if (!this.unseekable) {
      this.unseekable = { position };
      this.note(`cannot seek to ${position.toFixed(3)}: seekable ${JSON.stringify(this.video.seekable)}`);
      this.cancelJoin();
      this.stopVideo();
      if (!this.suspendedForMedia && this.me?.joined) {
        this.suspendedForMedia = true;
        this.send('/suspend coordinatedPlaybackNotPossible');
      }
    }
    return false;
  }

  /** Separated because the video could not seek: back with the group once it
   *  holds still where this video can go (paused at the start, or within the
   *  seekable ranges), from where a coordinated start takes everyone along. A
   *  group playing on has moved past any such point by the time the player is
   *  back: rejoining then would only find it out of reach again. */
  seekableAgain() {
    const timeline = groupTimeline(this.state?.playback);
    if (!timeline || timeline.playing || this.video.readyState < HAVE_METADATA) return;
    const target = clampToMedia(timeline.position, this.video.duration);
    if (!canSeekTo(this.video.seekable, target)) return;
    this.note(`can seek to ${target.toFixed(3)} again`);
    this.unseekable = null;
    if (this.suspendedForMedia && !this.mediaError) {
      this.suspendedForMedia = false;
      this.send('/resume coordinatedPlaybackNotPossible');
    }
  }

  load(activity) {
    this.src = activity.url;
    this.mediaError = null;
    this.mixedContent = isMixedContent(activity.url, this.pageProtocol, activity.source);
    // Said before the browser's attempt, which can take long to fail.
    if (this.mixedContent) this.tell(mixedContentNotice(), new URL(activity.url).href);
    this.unseekable = null;
    this.cancelJoin();
    this.probing = null;
    this.running = null;
    this.catchup = null;
    this.stall = null;
    // Another source may play through another output stream, on its own blocks (sync/grid.js).
    if (this.grid) this.grid = { ...this.grid, heard: -Infinity };
    this.loadSource(activity);
  }
}
