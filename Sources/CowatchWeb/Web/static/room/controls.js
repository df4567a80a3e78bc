// The controls that act for the room: each sends a command (the same a terminal
// user would type), and the page follows the state the server sends back. The
// link box, the transport, the session's buttons, sharing the room's address,
// and the overlay's action.

import { copyText } from '../copy.js';
import { $ } from '../model/ui-dom.js';

/** The link box: a video's address shared with /watch (`watch` asks first
 *  when it would replace what the room watches), or queued with /queue. */
export function wireLinkBox(command, watch) {
  $('share-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const url = $('share-url').value.trim();
    if (!url) return;
    const queueIt = event.submitter?.dataset.action === 'queue';
    if (queueIt) command(`/queue ${url}`);
    else watch(url); // shared, or asked first while the room watches something (room/alone.js)
    $('share-url').value = '';
  });
}

/** Play or pause for everyone, and the group's rate. */
export function wireTransport({ sync, model, command }) {
  $('play').addEventListener('click', () => {
    // Set apart by this page (paused just for me, an interruption): play is the way back.
    if (sync.setApartByPage) {
      $('pause-me').click();
      return;
    }
    const status = model.state?.playback.status;
    command(status === 'playing' || status === 'waiting' ? '/pause' : '/play');
  });
  $('rate').addEventListener('change', (event) => command(`/rate ${event.target.value}`));
}

/** Catch up, the next item, autoplay, ending the session, sharing the room's
 *  address, and what the player's overlay offers (leaving and joining the
 *  session are room/alone.js's: leaving watches on alone). */
export function wireSessionControls({ sync, room, log, me, command }) {
  $('catchup').addEventListener('click', () => command('/catchup'));
  $('next').addEventListener('click', () => command('/next'));
  $('autoplay').addEventListener('change', (event) => {
    command(`/autoplay ${event.target.checked ? 'on' : 'off'}`);
    event.target.checked = !!me()?.autoplay; // shown as the server confirms it
  });
  $('end').addEventListener('click', () => $('end-dialog').showModal());
  $('end-dialog').addEventListener('close', () => {
    if ($('end-dialog').returnValue === 'end') command('/end');
  });
  $('share').addEventListener('click', () => shareLink(room, log));
  $('overlay-action').addEventListener('click', () => {
    switch (sync.mode) {
      case 'blocked': sync.unblock(); break;
      case 'error': sync.retryMedia(); break;
      case 'left': command('/join'); break;
      case 'suspended': if (sync.setApartByPage) $('pause-me').click(); break;
      default: break;
    }
  });
}

/** The room's address, copied; where the browser refuses, written in the log. */
async function shareLink(room, log) {
  const link = `${location.origin}/rooms/${encodeURIComponent(room)}`;
  const copied = await copyText(link);
  $('share-status').textContent = copied ? 'Link copied.' : '';
  if (!copied) log.add('system', `Share this link: ${link}`);
  setTimeout(() => { $('share-status').textContent = ''; }, 3000);
}
