// The operating system's media controls (the lock screen, a phone's
// notification, a headset's buttons, media keys, the picture-in-picture
// window's buttons) through the browser's Media Session: they show the room's
// item, and their actions are the person's own commands. What each shows and
// does is decided in model/media-session.js; this file only hands it over.

import { mediaAction, playbackStateOf, positionStateOf, sessionMetadata } from '../model/media-session.js';

const ACTIONS = ['play', 'pause', 'seekbackward', 'seekforward', 'seekto', 'nexttrack'];

/** Where the browser has no Media Session, or before it is wired: nothing shown, no action done. */
export const NO_MEDIA_SESSION = Object.freeze({ render() {}, act() { return { do: 'none' }; } });

/**
 * @param {object} p
 * @param {string} p.room the room's name
 * @param {object} p.model the room's model (model/events.js)
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {HTMLVideoElement} p.video the page's `<video>`
 * @param {import('../sync/server-clock.js').ServerClock} p.clock
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {import('./announcements.js').Announcements} p.announcements
 * @param {(line: string) => void} p.command a command the viewer asked for
 * @param {object} actions `stepOut(words)` and `back()` are room/alone.js's
 */
export function wireMediaSession({ room, model, me, sync, video, clock, log, announcements, command }, { stepOut, back, enterPictureInPicture }) {
  const session = navigator.mediaSession;
  if (!session) return NO_MEDIA_SESSION;

  /** What an action does here; also what the e2e test calls, as the browser would. */
  function act(action, details) {
    const state = model.state;
    const self = me();
    const decided = mediaAction(action, details, {
      status: state?.playback.status ?? null,
      joined: !!self?.joined,
      mayControl: state?.policy?.control !== 'hosts' || self?.role === 'host',
      apart: sync.setApartByPage,
      alone: !!sync.alone,
      queued: state?.queue?.length ?? 0,
    });
    switch (decided.do) {
      case 'command': command(decided.line); break;
      case 'back': back(); break;
      case 'pauseForMe': stepOut(decided.words); break;
      case 'refuse': log.add('error', decided.words); announcements.say?.(decided.words); break;
      case 'local':
        if (decided.action === 'play') video.play().catch(() => {});
        else if (decided.action === 'pause') video.pause();
        else if (decided.to != null) video.currentTime = decided.to;
        else video.currentTime = Math.max(0, video.currentTime + decided.by);
        break;
      default: break;
    }
    return decided;
  }

  for (const action of ACTIONS) {
    try {
      session.setActionHandler(action, (details) => act(action, details));
    } catch {
      // An action this browser does not know: its controls will not offer it.
    }
  }
  try {
    // Chromium opens picture in picture by itself when the page is hidden while it plays.
    session.setActionHandler('enterpictureinpicture', () => enterPictureInPicture());
  } catch {
    // Not offered by this browser.
  }

  let shownTitle = null;
  function render() {
    const metadata = sessionMetadata(model.state, room);
    const key = metadata ? `${metadata.title}|${metadata.artwork[0].src}` : null;
    if (key !== shownTitle) {
      shownTitle = key;
      session.metadata = metadata && typeof MediaMetadata === 'function' ? new MediaMetadata(metadata) : null;
    }
    const snapshot = sync.snapshot();
    const readings = sync.readings();
    session.playbackState = playbackStateOf({ ...snapshot, videoPaused: readings.paused });
    if (typeof session.setPositionState !== 'function') return;
    const activity = model.state?.session?.activity;
    const duration = Number.isFinite(readings.duration) ? readings.duration : activity?.duration;
    const position = positionStateOf({
      state: model.state, now: clock.now(), duration, alone: !!sync.alone,
      videoTime: readings.currentTime, videoRate: readings.playbackRate,
    });
    try {
      session.setPositionState(position ?? undefined);
    } catch {
      // A position the browser finds out of range for a moment (a new item): the next render puts it right.
    }
  }
  return { render, act };
}
