// What the player should do now, from what it knows: one of
//   { kind: 'alone', mode }     playing an item only for me ('alone'): the person
//                               drives the video; the group is not followed
//   { kind: 'none', mode }      nothing to follow: 'idle', 'left' (the member
//                               left the session), 'error' (the media failed)
//   { kind: 'detached', mode }  separated from the group: 'blocked' (autoplay
//                               refused), 'scrubbing' (the viewer drags the seek
//                               bar), 'suspended' (with `reasons`: the member's,
//                               and the one this page has just asked for), 'stalled'
//   { kind: 'hold', mode, timeline, waitingSeq }  paused or waiting: stand at
//                               the position (in `waiting`, say /ready for waitingSeq)
//   { kind: 'run', mode, timeline }  play along: 'starting' before a
//                               coordinated start's instant, 'playing', 'catchup'

import { groupTimeline } from './timeline.js';

/**
 * @param {object} p
 * @param {object|null} p.state the room's last state
 * @param {object|null} p.me the member's own participant
 * @param {string|null} p.mediaError
 * @param {boolean} p.blocked
 * @param {boolean} p.scrubbing
 * @param {object|null} p.catchup a catch-up not yet over (catchup.js)
 * @param {object|null} p.stall a /buffering the group has not answered yet
 * @param {object|null} p.apart { reason }: a suspension this page asked for (sync/apart.js), before the room says so
 * @param {object|null} p.alone { activity }: an item played only for me
 * @param {number} now server time, ms
 */
export function planPlayer({ state, me, mediaError, blocked, scrubbing, catchup, stall, apart, alone }, now) {
  if (alone) return mediaError ? { kind: 'none', mode: 'error' } : { kind: 'alone', mode: 'alone' };
  const playback = state?.playback;
  if (!state || state.session?.state !== 'joined' || !playback || playback.status === 'idle') {
    return { kind: 'none', mode: 'idle' };
  }
  if (!me?.joined) return { kind: 'none', mode: 'left' };
  if (mediaError) return { kind: 'none', mode: 'error' };
  if (blocked) return { kind: 'detached', mode: 'blocked' };
  if (scrubbing) return { kind: 'detached', mode: 'scrubbing' };
  // The server suspends a catching-up member with reason `catchup`: that one is
  // the replay itself, followed here; any other reason detaches.
  const others = (me.suspensions || []).filter((reason) => reason !== 'catchup');
  if (apart && !others.includes(apart.reason)) others.push(apart.reason);
  if (catchup && others.length === 0) return { kind: 'run', mode: 'catchup', timeline: catchup.timeline };
  if (others.length > 0) return { kind: 'detached', mode: 'suspended', reasons: others };
  if (stall) return { kind: 'detached', mode: 'stalled' };
  const timeline = groupTimeline(playback);
  if (!timeline.playing) {
    return { kind: 'hold', mode: playback.status, timeline, waitingSeq: playback.status === 'waiting' ? state.seq : null };
  }
  return { kind: 'run', mode: now < timeline.at ? 'starting' : 'playing', timeline };
}
