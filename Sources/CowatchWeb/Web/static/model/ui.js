// The words the page shows, pure: times, roles, reasons, a member gone, a
// video that cannot play, and the player's one status line (describeStatus),
// from values alone. ui-dom.js puts them in the page.

import { MIXED_CONTENT_ERROR, mixedContentWords } from '../sync/mixed-content.js';
import { unseekableWords } from '../sync/seekable.js';

/** 75.4 → "1:15", 3725 → "1:02:05". */
export function formatTime(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '0:00';
  const total = Math.floor(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** What a suspension reason means to a person. */
const REASONS = {
  stallRecovery: 'buffering',
  userIsChangingCurrentTime: 'seeking',
  catchup: 'catching up',
  coordinatedPlaybackNotPossible: 'cannot play this video',
  userActionRequired: 'needs a click to play',
  audioSessionInterrupted: 'interrupted by their device',
  playingInterstitial: 'playing an interstitial',
  away: 'away: the page is in the background',
  pausedForMe: 'paused just for themselves',
};

/** What a suspension reason means to a person: words, never the protocol's
 *  identifier (a reason this page does not know is said plainly as one). */
export function describeReason(reason) {
  return REASONS[reason] || 'away from the group';
}

/** The one word for a member's role: `owner` (created the room or holds its
 *  owner key; also a host), `host`, or `member` (docs/protocol.md, `participant`). */
export function roleWord(participant) {
  if (participant?.owner) return 'owner';
  return participant?.role === 'host' ? 'host' : 'member';
}

/** Whether a member other than `meId` can play the room's item now: in the
 *  session, driving a player, connected, not suspended, and not without an own copy. */
export function someoneElseCanPlay(participants, meId) {
  for (const p of participants.values()) {
    if (p.id === meId || !p.joined || !p.player || p.connected === false) continue;
    if ((p.suspensions?.length ?? 0) > 0 || p.copy === false) continue;
    return true;
  }
  return false;
}

/** The overlay's words when this player cannot play the item: what went wrong,
 *  and only when someone else can still play it, that the others keep watching.
 *  An http:// video on an https:// page says why, and what works instead. */
export function cannotPlayWords(mediaError, othersPlay) {
  if (mediaError === MIXED_CONTENT_ERROR) return mixedContentWords(othersPlay);
  const what = `This video cannot be played here: ${mediaError}.`;
  return othersPlay
    ? `${what} The others keep watching; your player stays apart from the group until you try again.`
    : `${what} Nobody in the room can play it now: try again, or share another video.`;
}

/** The log's line when a member goes, or null when the room's notice says it
 *  (a kick or a ban: the server's notice names who did it and why). */
export function leftWords(name, reason) {
  if (reason === 'kicked' || reason === 'banned') return null;
  return `${name} left.`;
}

/**
 * What the overlay over the video says, and its button's words, for the
 * player's mode: null for either when there is nothing to say or do.
 * @param {{ mode: string, mediaError?: string }} snapshot the player's (sync/player-sync.js)
 * @param {{ ended: boolean, othersPlay: () => boolean }} room `ended`: the
 *   session was ended (invalidated); `othersPlay`: whether another member can
 *   play the item (asked only when this player cannot)
 * @returns {{ message: string|null, button: string|null }}
 */
export function overlayWords(snapshot, { ended, othersPlay }) {
  switch (snapshot.mode) {
    case 'idle':
      return {
        message: ended ? 'The session ended. Paste a video link below to start another.'
          : 'Nothing is playing yet. Paste a video link below to watch it together.',
        button: null,
      };
    case 'left':
      return { message: 'You left the group session. You are still in the room and its chat.', button: 'Join the session again' };
    case 'suspended':
      return apartWords(snapshot.apartReasons || []);
    case 'error':
      return { message: cannotPlayWords(snapshot.mediaError, othersPlay()), button: 'Try again' };
    case 'blocked':
      return { message: 'Your browser did not allow playback to start by itself.', button: '▶ Click to join playback' };
    default:
      return { message: null, button: null };
  }
}

/** Over the video of a player this page set apart (sync/apart.js): why, and the way back. */
function apartWords(reasons) {
  const back = 'Back to the group';
  if (reasons.includes('pausedForMe')) return { message: 'Paused just for you. The others watch on.', button: back };
  if (reasons.includes('away')) {
    return { message: 'Your browser paused the video while the page was in the background. The others watch on.', button: back };
  }
  if (reasons.includes('audioSessionInterrupted')) {
    return {
      message: 'Your video was paused, not by the room: by your device (a call, another app), the browser or the video\'s own player. The others watch on.',
      button: back,
    };
  }
  return { message: null, button: null };
}

// MARK: the player's status

/**
 * Within this of the group's timeline, a playing player is "in sync" (ms): the
 * people in a room are in different places, and what they share is the story
 * and each other's reactions, not frames; a difference under a tenth of a
 * second can be neither seen nor heard between two screens. A player corrects
 * much finer differences than this all the time (sync/drift.js, a few ms), and
 * those corrections are nobody's news: the badge does not turn to "Catching
 * up…" for them, and a screen reader is not told of them.
 */
export const IN_SYNC_MS = 100;

/**
 * The one status under the video: what the player is doing and whether it is
 * with the group, from the player's snapshot alone, so that the badge's colour,
 * its words and the number beside them can never disagree.
 *
 * @returns {null | { kind: 'in-sync'|'catching-up'|'waiting'|'problem'|'neutral', words: string, drift: string, title: string }}
 *   `words` the sentence shown; `drift` this player's distance from the group,
 *   shown only while it is a fine correction (it says nothing true while the
 *   player is re-joining or out of step); `title` the measured numbers.
 *   null when there is nothing to follow (an empty room says how to start over
 *   the video instead).
 */
export function describeStatus(snapshot, state, me, clock) {
  const playback = state?.playback;
  const clockText = clock && Number.isFinite(clock.uncertainty)
    ? `This device's clock is ${formatOffset(-clock.offset)} from the server's (known to ±${clock.uncertainty.toFixed(1)} ms).`
    : 'Measuring this device\'s clock against the server\'s…';
  const driftMs = snapshot.drift == null ? null : snapshot.drift * 1000;
  const fine = driftMs != null && Math.abs(driftMs) < 250 && !snapshot.joining;
  const inSyncMs = Math.max(IN_SYNC_MS, snapshot.inSyncMs ?? 0);
  // "(correcting)" only for a correction people could notice; a finer one is just the distance.
  const visible = driftMs != null && Math.abs(driftMs) > inSyncMs;
  const driftText = fine ? formatOffset(driftMs) + (snapshot.nudging && visible ? ' (correcting)' : '') : '';
  const say = (kind, words, withDrift = false) => ({
    kind,
    words,
    drift: withDrift ? driftText : '',
    title: (withDrift && fine ? `This player is ${formatOffset(driftMs)} from the group. ` : '') + clockText,
  });
  if (!playback) return null;
  // The video cannot go where the group is: said in words, and nothing else.
  if (snapshot.unseekable) return say('problem', unseekableWords(snapshot.unseekable.position, formatTime));
  switch (snapshot.mode) {
    case 'idle':
      return null;
    case 'left':
      return say('neutral', 'You left the group session.');
    case 'alone':
      return say('neutral', 'Playing only for you: the room watches on without you.');
    case 'error':
      return say('problem', `Cannot play: ${snapshot.mediaError}.`);
    case 'blocked':
      return say('problem', 'Your browser did not let playback start: click to join.');
    case 'suspended': {
      if ((snapshot.apartReasons || []).includes('pausedForMe')) return say('neutral', 'Paused just for you: the others watch on.');
      const reasons = (me?.suspensions || []).filter((r) => r !== 'catchup').map(describeReason).join(', ');
      return say('problem', `Separated from the group (${reasons}).${snapshot.detail === 'buffering' ? ' Buffering…' : ''}`);
    }
    case 'stalled':
      return say('waiting', 'Buffering…');
    case 'scrubbing':
      return say('neutral', 'Choosing a position: release to move everyone there.');
    case 'catchup':
      return say('catching-up', 'Catching up at 2×…', true);
    case 'paused':
      return snapshot.detail === 'loading' ? say('waiting', 'Loading…')
        : say('in-sync', `Paused together at ${formatTime(playback.position)}.`);
    case 'waiting':
      if (snapshot.detail === 'ready') return say('waiting', 'Ready: waiting for the others…');
      return say('waiting', snapshot.detail === 'loading' ? 'Loading…' : 'Getting ready…');
    case 'starting':
      return say('waiting', snapshot.detail === 'loading' ? 'Loading…' : 'Starting together…');
    case 'playing': {
      if (snapshot.detail === 'loading') return say('waiting', 'Loading…');
      if (snapshot.detail === 'buffering') return say('waiting', 'Buffering…');
      if (snapshot.detail === 'ended') return say('neutral', 'At the end.');
      if (snapshot.restarting) return say('waiting', 'Starting together…');
      if (snapshot.joining) return say('catching-up', 'Joining the group…');
      if (snapshot.detail || driftMs == null) return say('catching-up', 'Re-syncing…');
      // In sync within IN_SYNC_MS, or within its own band for a player kept in
      // step by corrective seeks (sync/correct.js): a nudge inside it is not news.
      if (visible) return say('catching-up', 'Catching up…', true);
      const rate = playback.rate !== 1 ? ` at ${playback.rate}×` : '';
      return say('in-sync', `Playing in sync${rate}`, true);
    }
    default:
      return null;
  }
}

function formatOffset(ms) {
  const sign = ms >= 0 ? '+' : '−';
  const size = Math.abs(ms);
  return size >= 1000 ? `${sign}${(size / 1000).toFixed(2)} s` : `${sign}${size.toFixed(1)} ms`;
}
