// Alone or together, as SharePlay asks: "Pause just for me" and back, "Start
// now" (`/play now`), an item played only for me while the session goes on
// (and "Leave session" watching on alone), the question "share with the room,
// or only for me?" before a link replaces what everyone watches (remembered
// when the person asks), "end for everyone, or only leave?" for a host, and a
// room link's `?watch=URL`. The decisions are model/watch-choice.js's and
// sync/apart.js's; this file wires the page's buttons and dialogs to them.

import { $ } from '../model/ui-dom.js';
import {
  aloneActivity, aloneTarget, asksOnLeaving, SHARE_WITHOUT_ASKING, watchChoice, watchQuestion,
} from '../model/watch-choice.js';

function shareWithoutAsking() {
  try {
    return localStorage.getItem(SHARE_WITHOUT_ASKING) === '1';
  } catch {
    return false;
  }
}

function rememberShareWithoutAsking(value) {
  try {
    if (value) localStorage.setItem(SHARE_WITHOUT_ASKING, '1');
    else localStorage.removeItem(SHARE_WITHOUT_ASKING);
  } catch {
    // Storage refused (a private window's): asked again next time.
  }
}

/**
 * @param {object} p
 * @param {import('../model/connection-socket.js').Connection} p.connection
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {import('./announcements.js').Announcements} p.announcements
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {object} p.model the room's model (model/events.js)
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {(line: string) => void} p.command a command the viewer asked for
 * @param {{ all: () => void }} p.render room/render.js's
 * @param {{ watch: string|null }} fromLink what the room link carried
 * @param {() => void} quit leaves the room (room/membership.js)
 */
export function wireAloneOrTogether({ connection, log, announcements, sync, model, me, command, render }, fromLink, quit) {
  /** Tells the person, in the log and to screen readers. */
  function tell(kind, words) {
    log.add(kind, words);
    announcements.say(words);
    announcements.speak();
  }

  /** Steps this member out, the others watching on (the media controls' pause
   *  from a member who may not pause the room says why first). */
  function stepOut(words) {
    if (words) tell('notice', words);
    sync.pauseForMe();
  }

  /** Back with the group from a pause of one's own or an interruption. */
  function back() {
    sync.backToGroup();
    tell('notice', 'Back with the group. Missed something? "What happened?" replays the last 10 seconds at 2×.');
  }

  $('pause-me').addEventListener('click', () => (sync.setApartByPage ? back() : stepOut(null)));
  $('play-now').addEventListener('click', () => command('/play now'));
  $('leave').addEventListener('click', () => {
    sync.playAlone(null);
    tell('notice', 'You left the session: your video is yours now, and the room watches on. "Join session" takes you back to it.');
  });
  $('join').addEventListener('click', () => {
    if (sync.alone) sync.joinGroup();
    else command('/join');
  });

  // "Watch now": shared at once when nothing plays (or the person asked not to
  // be asked again), else the question.
  let pending = null;
  function watch(url, title = '') {
    if (watchChoice({ state: model.state, shareWithoutAsking: shareWithoutAsking() }) === 'share') {
      command(`/watch ${url}${title ? ` ${title}` : ''}`);
      return;
    }
    pending = { url, title };
    $('watch-dialog-text').textContent = watchQuestion(model.state, url);
    $('watch-remember').checked = false;
    $('watch-dialog').showModal();
  }
  $('watch-dialog').addEventListener('close', () => {
    const chosen = $('watch-dialog').returnValue;
    const item = pending;
    pending = null;
    if (!item) return;
    if (chosen === 'share') {
      if ($('watch-remember').checked) rememberShareWithoutAsking(true);
      command(`/watch ${item.url}${item.title ? ` ${item.title}` : ''}`);
    } else if (chosen === 'alone') {
      playOnlyForMe(item.url, item.title);
    }
    renderRemembered();
  });
  $('share-ask-again').addEventListener('click', () => {
    rememberShareWithoutAsking(false);
    renderRemembered();
    tell('notice', '"Watch now" will ask before it replaces what the room watches.');
  });
  function renderRemembered() {
    $('share-remembered').hidden = !shareWithoutAsking();
  }
  renderRemembered();

  function playOnlyForMe(url, title) {
    const target = aloneTarget(url);
    if (!target) {
      tell('error', `${url} is not a web address (http or https).`);
      return;
    }
    if (target === 'tab') {
      // A provider's video plays alone on the provider's own site.
      window.open(url, '_blank', 'noopener');
      tell('notice', 'Opened on its own site, only for you; the room watches on here.');
      return;
    }
    sync.playAlone(aloneActivity(url, title));
    tell('notice', `Playing ${title || url} only for you; the room watches on. "Join session" takes you back to it.`);
    render.all();
  }

  // Leaving the room: a host is asked whether to end the session for everyone.
  $('quit').addEventListener('click', () => {
    const self = me();
    const others = [...model.participants.values()].filter((p) => p.id !== self?.id && p.connected !== false).length;
    if (asksOnLeaving({ me: self, state: model.state, others })) $('quit-dialog').showModal();
    else quit();
  });
  $('quit-dialog').addEventListener('close', () => {
    const chosen = $('quit-dialog').returnValue;
    if (chosen === 'end') {
      command('/end');
      quit();
    } else if (chosen === 'leave') {
      quit();
    }
  });

  // A room link's `?watch=URL`: once this page is in the room and knows what it plays.
  let linkWatch = fromLink.watch;
  connection.addEventListener('event', ({ detail }) => {
    if (!linkWatch || detail.type !== 'state') return;
    const url = linkWatch;
    linkWatch = null;
    watch(url);
  });

  return { watch, stepOut, back };
}
