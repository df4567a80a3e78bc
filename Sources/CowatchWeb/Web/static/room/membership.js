// This tab's member of the room: kept across a reload, welcomed (the owner key
// answered, what was said before shown), closed for good at the door, left on
// purpose with Quit (quitRoom).

import { showSecret } from '../secret-box.js';
import { $, renderConnection } from '../model/ui-dom.js';
import { renderAll, renderPlayer } from './render.js';
import { limitsOf } from '../model/line-limit.js';
import { welcomed, welcomeLines } from '../model/events.js';

const CHAT_PLACEHOLDER = 'Say something, or type a command: /help, /watch <url> [title]…';

/** The connection's life on the page: the banner, the clock's samples, the door, reload and Quit. */
export function keepMembership(page) {
  const { connection, clock, door, log, slot } = page;
  // A reload or a closed tab: the browser closes the socket with 1001, which
  // keeps the member for the resume grace, and the next load of this tab takes
  // it back. (A page restored from the back-forward cache holds the slot again.)
  addEventListener('pagehide', () => slot.release());
  addEventListener('pageshow', (event) => {
    if (event.persisted) slot.keep(connection.resumeToken);
  });

  connection.addEventListener('status', ({ detail }) => {
    renderConnection($('connection'), $('connection-text'), $('retry'), detail);
    page.announcements.connection(detail.phase, $('connection-text').textContent);
    page.announcements.speak();
    if (detail.phase === 'open') clock.start();
    else clock.stop();
    if (detail.phase === 'closed') {
      if (page.leaving) return;
      // Removed, refused or left: this tab's member is gone, nothing to resume.
      // (4002: another connection holds the member now; 4005: asked a password.)
      if (detail.code !== 4002 && detail.code !== 4005) slot.forget();
      if (!detail.code) {
        log.add('error', detail.reason || 'Disconnected.');
        return;
      }
      // Closed for good (removed, refused, replaced): the door says why, once,
      // in place of the banner; nothing typed here would be sent.
      $('connection').hidden = true;
      $('chat-input').disabled = true;
      $('chat-input').placeholder = 'You are not in this room any more.';
      door.shut(detail);
      renderPlayer(page);
    }
  });

  $('retry').addEventListener('click', () => connection.retryNow());
}

/** Leaves the room on purpose ("Leave room", room/alone.js asks a host first):
 *  the member goes at once (1000), this tab keeps nothing to resume. */
export async function quitRoom(page) {
  page.leaving = true;
  page.slot.forget();
  await page.connection.close();
  location.assign('/');
}

/** The server's `welcome`: this page is a member again (first, or after a reconnect). */
export function welcome(page, event) {
  const { connection, door, log, model, slot, sync } = page;
  if (door.isShut) door.open();
  $('chat-input').disabled = false;
  $('chat-input').placeholder = CHAT_PLACEHOLDER;
  const returning = welcomed(model, event);
  page.limits = limitsOf(event);
  page.chat.measure?.();
  // A new connection is a new member after a restart, or one the server may
  // have lost track of: whether this page has the own copy is said again.
  page.own.reconnected();
  sync.reset();
  sync.setMe(page.me());
  slot.keep(event.resume);
  const owner = page.ownerKey.answer(event, connection.presented.resume);
  connection.ownerKey = owner.use;
  if (owner.verdict === 'created') {
    showSecret($('secrets'), {
      kind: 'owner',
      title: 'You created this room and own it',
      text: 'Keep this link: it makes you the owner again from any device, even after everyone has left '
        + '(this browser keeps the key too). Anyone who has it owns the room. Shown once.',
      values: [
        { label: 'Owner link', value: page.roomLink(`owner=${encodeURIComponent(event.ownerKey)}`) },
        { label: 'Owner key', value: event.ownerKey },
      ],
    });
  }
  for (const line of welcomeLines(event, { returning, owner })) log.add(...line);
  renderAll(page);
  // A refused link key: come back at once as the same member with the key
  // this browser kept, which makes it the owner again.
  if (owner.verdict === 'refused' && owner.use) connection.reopen();
}
