// Picture in picture: the room's video in a small window over the person's
// other apps, still driven by the page's player, so it stays in step with the
// room while the page is hidden. Where the browser has a Document
// Picture-in-Picture window, the window holds the video with what the room
// needs at a glance (who is here, play/pause, the last line of chat); else the
// video element's own window. The page's visibility is told to the player:
// hidden without picture in picture, a video the browser pauses sets this
// member apart as away (sync/apart.js), and shown again it is back at once.

import { $ } from '../model/ui-dom.js';
import { pictureInPictureOffer } from '../model/media-session.js';

/**
 * @param {object} p
 * @param {string} p.room the room's name
 * @param {object} p.model the room's model (model/events.js)
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {HTMLVideoElement} p.video the page's `<video>`
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @returns {{ enter: () => Promise<void>, render: () => void }}
 */
export function wirePictureInPicture({ room, model, sync, video, log }) {
  const pip = { window: null }; // the Document Picture-in-Picture window, while open
  const inPictureInPicture = () => !!pip.window || document.pictureInPictureElement === video;
  const tellVisibility = () => sync.setHidden(document.visibilityState === 'hidden' && !inPictureInPicture());
  document.addEventListener('visibilitychange', tellVisibility);
  // A hidden page the browser freezes (a phone's, with its screen) is away
  // before its connection goes; unfrozen and shown, it is back.
  document.addEventListener('freeze', () => { if (!inPictureInPicture()) sync.freezing(); });
  document.addEventListener('resume', tellVisibility);
  video.addEventListener('enterpictureinpicture', () => { tellVisibility(); render(); });
  video.addEventListener('leavepictureinpicture', () => { tellVisibility(); render(); });

  const offer = () => pictureInPictureOffer({
    kind: sync.kind,
    element: document.pictureInPictureEnabled === true && typeof video.requestPictureInPicture === 'function',
    documentWindow: typeof window.documentPictureInPicture?.requestWindow === 'function',
  });

  function render() {
    const { enabled, note } = offer();
    const button = $('pip');
    button.disabled = !enabled;
    button.textContent = inPictureInPicture() ? 'Back from picture in picture' : 'Picture in picture';
    $('pip-note').hidden = !note;
    $('pip-note').textContent = note || '';
    if (pip.window) renderWindow();
  }

  async function enter() {
    const { enabled, note } = offer();
    if (!enabled) {
      log.add('error', note);
      return;
    }
    try {
      if (typeof window.documentPictureInPicture?.requestWindow === 'function') await openWindow();
      else await video.requestPictureInPicture();
    } catch (error) {
      log.add('error', `Picture in picture did not open: ${error.message}`);
    }
    tellVisibility();
    render();
  }

  async function leave() {
    if (pip.window) pip.window.close();
    else if (document.pictureInPictureElement) await document.exitPictureInPicture().catch(() => {});
  }

  /** A Document Picture-in-Picture window: the video moved there (the same
   *  element, so the player keeps driving it), and back when it closes. */
  async function openWindow() {
    const win = await window.documentPictureInPicture.requestWindow({ width: 480, height: 330 });
    const doc = win.document;
    doc.documentElement.lang = 'en';
    doc.title = `${room} · Cowatch`;
    const style = doc.createElement('link');
    style.rel = 'stylesheet';
    style.href = '/static/style.css';
    doc.head.append(style);
    doc.body.className = 'pip-window';
    const home = video.parentElement;
    const next = video.nextSibling;
    const main = doc.createElement('main');
    main.setAttribute('aria-label', `${room}: the room at a glance`);
    const bar = doc.createElement('div');
    bar.className = 'pip-bar';
    const play = doc.createElement('button');
    play.type = 'button';
    play.id = 'pip-play';
    play.addEventListener('click', () => $('play').click());
    const who = doc.createElement('p');
    who.id = 'pip-who';
    const chat = doc.createElement('p');
    chat.id = 'pip-chat';
    chat.setAttribute('aria-live', 'polite');
    bar.append(play, who);
    main.append(video, bar, chat);
    doc.body.append(main);
    pip.window = win;
    win.addEventListener('pagehide', () => {
      home.insertBefore(video, next && next.parentNode === home ? next : home.firstChild);
      pip.window = null;
      tellVisibility();
      render();
    });
    renderWindow();
  }

  function renderWindow() {
    const doc = pip.window.document;
    const play = doc.getElementById('pip-play');
    play.textContent = $('play').textContent;
    play.disabled = $('play').disabled;
    play.setAttribute('aria-label', $('play').getAttribute('aria-label') || play.textContent);
    const names = [...model.participants.values()].filter((p) => p.connected !== false).map((p) => p.name);
    doc.getElementById('pip-who').textContent = `${names.length} here: ${names.join(', ')}`;
    const lines = document.querySelectorAll('#log > *');
    doc.getElementById('pip-chat').textContent = lines.length ? lines[lines.length - 1].textContent : '';
  }

  $('pip').addEventListener('click', () => (inPictureInPicture() ? leave() : enter()));
  sync.addEventListener('player', render);
  sync.addEventListener('change', () => { if (pip.window) renderWindow(); });
  render();
  tellVisibility();
  return { enter, render };
}
