// The operating system's media controls (the lock screen, a phone's
// notification, a headset's buttons, media keys, the picture-in-picture
// window's buttons) through the browser's Media Session: they show the room's
// item, and their actions are the person's own commands. What each shows and
// does is decided in model/media-session.js; this file only hands it over.

import { mediaAction, playbackStateOf, positionStateOf, sessionMetadata } from '../model/media-session.js';

const ACTIONS = ['play', 'pause', 'seekbackward', 'seekforward', 'seekto', 'nexttrack'];

/** @param {object} page the RoomPage; `stepOut(words)` and `back()` are room/alone.js's */
export function wireMediaSession(page, { stepOut, back, enterPictureInPicture }) {
  const session = navigator.mediaSession;
  if (!session) return { render() {}, act() { return { do: 'none' }; } };
  const { sync } = page;

  /** What an action does here; also what the e2e test calls, as the browser would. */
  function act(action, details) {
    const state = page.model.state;
    const me = page.me();
    const decided = mediaAction(action, details, {
      status: state?.playback.status ?? null,
      joined: !!me?.joined,
      mayControl: state?.policy?.control !== 'hosts' || me?.role === 'host',
      apart: sync.setApartByPage,
      alone: !!sync.alone,
      queued: state?.queue?.length ?? 0,
    });
    const video = page.video;
    switch (decided.do) {
      case 'command': page.command(decided.line); break;
      case 'back': back(); break;
      case 'pauseForMe': stepOut(decided.words); break;
      case 'refuse': page.log.add('error', decided.words); page.announcements.say?.(decided.words); break;
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
    const metadata = sessionMetadata(page.model.state, page.room);
    const key = metadata ? `${metadata.title}|${metadata.artwork[0].src}` : null;
    if (key !== shownTitle) {
      shownTitle = key;
      session.metadata = metadata && typeof MediaMetadata === 'function' ? new MediaMetadata(metadata) : null;
    }
    const snapshot = sync.snapshot();
    const readings = sync.readings();
    session.playbackState = playbackStateOf({ ...snapshot, videoPaused: readings.paused });
    if (typeof session.setPositionState !== 'function') return;
    const activity = page.model.state?.session?.activity;
    const duration = Number.isFinite(readings.duration) ? readings.duration : activity?.duration;
    const position = positionStateOf({
      state: page.model.state, now: page.clock.now(), duration, alone: !!sync.alone,
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
