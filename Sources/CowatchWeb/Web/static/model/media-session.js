// What the operating system's media controls show and do, pure: the lock
// screen, a phone's notification, a headset's buttons, a keyboard's media keys
// and the picture-in-picture window's buttons all speak through the browser's
// Media Session (room/media-session.js puts these values there).
//
// Each of their actions is the person's own command, with their role: a member
// who may not pause the room is told so in words and paused just for
// themselves instead (sync/apart.js), as SharePlay lets one person step out.

import { positionAt } from '../sync/timeline.js';

/** The artwork the controls show when the item's source offers none. */
export const APP_ARTWORK = Object.freeze([
  { src: '/static/icons/icon-192.png', sizes: '192x192', type: 'image/png' },
  { src: '/static/icons/icon-512.png', sizes: '512x512', type: 'image/png' },
]);

/** How far the controls' "skip back" and "skip forward" move, when they do not say (s). */
export const SKIP_SECONDS = 10;

/** The item's own artwork where its source offers one (a YouTube video's
 *  thumbnail, at the address YouTube documents for it), else the app's. */
export function artworkFor(activity) {
  const source = activity?.source;
  if (source?.kind === 'youtube' && typeof source.id === 'string' && /^[A-Za-z0-9_-]{6,20}$/.test(source.id)) {
    return [{ src: `https://i.ytimg.com/vi/${source.id}/hqdefault.jpg`, sizes: '480x360', type: 'image/jpeg' }, ...APP_ARTWORK];
  }
  return [...APP_ARTWORK];
}

/** The title, room and artwork the controls show, or null with nothing to play. */
export function sessionMetadata(state, room) {
  const activity = state?.session?.state === 'joined' ? state.session.activity : null;
  if (!activity) return null;
  return {
    title: activity.title || activity.url,
    artist: `Watching together in ${room}`,
    album: 'Cowatch',
    artwork: artworkFor(activity),
  };
}

/** The controls' play/pause state: what this page's video does ('playing'
 *  while it plays, alone or with the room; 'paused'; 'none' with nothing). */
export function playbackStateOf(snapshot) {
  if (!snapshot || snapshot.mode === 'idle') return 'none';
  if (snapshot.alone) return snapshot.videoPaused ? 'paused' : 'playing';
  return ['playing', 'starting', 'catchup'].includes(snapshot.mode) ? 'playing' : 'paused';
}

/**
 * The position the controls show: the room's timeline (or this video's when
 * alone), within the item's length, or null where there is none to show (a
 * live stream, an unknown length).
 */
export function positionStateOf({ state, now, duration, alone, videoTime, videoRate }) {
  if (!(Number.isFinite(duration) && duration > 0)) return null;
  if (alone) {
    return { duration, playbackRate: videoRate > 0 ? videoRate : 1, position: clamp(videoTime, duration) };
  }
  const playback = state?.playback;
  if (!playback || playback.status === 'idle') return null;
  const playing = playback.status === 'playing';
  const position = positionAt({ ...playback, playing }, now);
  return { duration, playbackRate: playing ? playback.rate : 1, position: clamp(position, duration) };
}

function clamp(position, duration) {
  return Math.min(Math.max(Number.isFinite(position) ? position : 0, 0), duration);
}

/**
 * What one of the controls' actions does, as the person's own command.
 *
 * @param {string} action a Media Session action ('play', 'pause', 'seekbackward',
 *   'seekforward', 'seekto', 'nexttrack')
 * @param {object} details the browser's details (seekOffset, seekTime)
 * @param {object} p
 * @param {string|null} p.status the room's playback status
 * @param {boolean} p.joined in the session
 * @param {boolean} p.mayControl may play, pause and seek for the room
 * @param {boolean} p.apart set apart by this page (paused just for me, an interruption, away)
 * @param {boolean} p.alone playing an item only for me
 * @param {number} p.queued items in the room's queue
 * @returns {{ do: 'command', line: string } | { do: 'back' } | { do: 'pauseForMe', words: string }
 *   | { do: 'local', action: string, to?: number, by?: number } | { do: 'refuse', words: string } | { do: 'none' }}
 */
export function mediaAction(action, details, { status, joined, mayControl, apart, alone, queued }) {
  if (alone) {
    if (action === 'seekto') return { do: 'local', action, to: details?.seekTime ?? 0 };
    if (action === 'seekbackward') return { do: 'local', action, by: -(details?.seekOffset || SKIP_SECONDS) };
    if (action === 'seekforward') return { do: 'local', action, by: details?.seekOffset || SKIP_SECONDS };
    if (action === 'play' || action === 'pause') return { do: 'local', action };
    return { do: 'none' };
  }
  if (!status || status === 'idle') return { do: 'none' };
  const refuse = (what) => ({ do: 'refuse', words: `Only hosts may ${what} in this room.` });
  switch (action) {
    case 'play':
      if (apart) return { do: 'back' };
      if (!joined) return { do: 'command', line: '/join' };
      if (status === 'playing' || status === 'waiting') return { do: 'none' };
      return mayControl ? { do: 'command', line: '/play' } : refuse('start playback');
    case 'pause':
      if (apart || !joined) return { do: 'none' };
      if (status !== 'playing' && status !== 'waiting') return { do: 'none' };
      if (mayControl) return { do: 'command', line: '/pause' };
      return {
        do: 'pauseForMe',
        words: 'Only hosts may pause this room: paused just for you while the others watch on. Press play to go back to the group.',
      };
    case 'seekbackward':
    case 'seekforward': {
      if (!joined || apart) return { do: 'none' };
      if (!mayControl) return refuse('move playback');
      const by = Math.round(details?.seekOffset || SKIP_SECONDS);
      return { do: 'command', line: `/seek ${action === 'seekbackward' ? '-' : '+'}${by}` };
    }
    case 'seekto': {
      if (!joined || apart) return { do: 'none' };
      if (!mayControl) return refuse('move playback');
      const to = Math.max(0, Number(details?.seekTime) || 0);
      return { do: 'command', line: `/seek ${to.toFixed(3)}` };
    }
    case 'nexttrack':
      if (!mayControl) return refuse('skip to the next video');
      return queued > 0 ? { do: 'command', line: '/next' } : { do: 'refuse', words: 'Nothing is queued to play next.' };
    default:
      return { do: 'none' };
  }
}

/**
 * Whether this page can offer picture in picture for the item, and if not,
 * why, in words: a provider's video plays in the provider's frame, which a
 * page cannot move into a window of its own.
 *
 * @param {object} p
 * @param {string} p.kind the item's player: 'file', 'youtube', 'vimeo'
 * @param {boolean} p.element the browser offers the video element's picture in picture
 * @param {boolean} p.documentWindow the browser offers a Document Picture-in-Picture window
 * @returns {{ enabled: boolean, note: string|null }}
 */
export function pictureInPictureOffer({ kind, element, documentWindow }) {
  if (kind === 'youtube' || kind === 'vimeo') {
    const provider = kind === 'youtube' ? 'YouTube' : 'Vimeo';
    return {
      enabled: false,
      note: `A ${provider} video plays inside ${provider}'s own frame, which this page cannot put in picture in picture;`
        + ` ${provider}'s player offers it only where ${provider} allows it.`,
    };
  }
  if (!element && !documentWindow) return { enabled: false, note: 'This browser offers no picture in picture.' };
  return { enabled: true, note: null };
}
