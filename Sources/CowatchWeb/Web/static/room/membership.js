// This tab's member of the room: kept across a reload, welcomed (the owner key
// answered, what was said before shown), closed for good at the door, left on
// purpose with Quit.

import { showSecret } from '../secret-box.js';
import { $, renderConnection } from '../model/ui-dom.js';
import { limitsOf } from '../model/line-limit.js';
import { applyChanges, welcomed, welcomeLines } from '../model/events.js';

const CHAT_PLACEHOLDER = 'Say something, or type a command: /help, /watch <url> [title]…';

/**
 * The connection's life on the page: the banner, the clock's samples, the door,
 * reload, the welcome and Quit.
 * @param {object} p
 * @param {import('../model/connection-socket.js').Connection} p.connection
 * @param {import('../sync/server-clock.js').ServerClock} p.clock
 * @param {import('../model/door-dom.js').Door} p.door
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {import('../model/kept.js').ResumeSlot} p.slot
 * @param {import('../model/kept.js').KeptOwnerKey} p.ownerKey
 * @param {import('./announcements.js').Announcements} p.announcements
 * @param {object} p.model the room's model (model/events.js), which the welcome changes
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {import('../sync/own-copies.js').OwnCopies} p.own
 * @param {(query: string) => string} p.roomLink the room's address with a query
 * @param {(limits: object) => void} p.limitsChanged the server's limits, from its welcome (room/chat.js)
 * @param {{ all: () => void, player: () => void }} p.render room/render.js's
 * @returns {{ welcome: (event: object) => void, quit: () => Promise<void> }} the server's
 *   `welcome` (room/events.js), and leaving the room on purpose (room/alone.js)
 */
export function keepMembership(p) {
  const { connection, clock, door, log, slot } = p;
  let leaving = false; // the viewer quit: the close that follows is not news
  // A reload or a closed tab: the browser closes the socket with 1001, which
  // keeps the member for the resume grace, and the next load of this tab takes
  // it back. (A page restored from the back-forward cache holds the slot again.)
  addEventListener('pagehide', () => slot.release());
  addEventListener('pageshow', (event) => {
    if (event.persisted) slot.keep(connection.resumeToken);
  });

  connection.addEventListener('status', ({ detail }) => {
    renderConnection($('connection'), $('connection-text'), $('retry'), detail);
    p.announcements.connection(detail.phase, $('connection-text').textContent);
    p.announcements.speak();
    if (detail.phase === 'open') clock.start();
    else clock.stop();
    if (detail.phase === 'closed') {
      if (leaving) return;
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
      p.render.player();
    }
  });

  $('retry').addEventListener('click', () => connection.retryNow());

  return {
    welcome: (event) => welcome(p, event),
    /** Leaves the room on purpose ("Leave room", room/alone.js asks a host first):
     *  the member goes at once (1000), this tab keeps nothing to resume. */
    async quit() {
      leaving = true;
      slot.forget();
      await connection.close();
      location.assign('/');
    },
  };
}

/** The server's `welcome`: this page is a member again (first, or after a reconnect). */
function welcome(p, event) {
  const { connection, door, log, model, own, ownerKey, slot, sync } = p;
  if (door.isShut) door.open();
  $('chat-input').disabled = false;
  $('chat-input').placeholder = CHAT_PLACEHOLDER;
  const { returning, changes } = welcomed(model, event);
  applyChanges(model, changes);
  p.limitsChanged(limitsOf(event));
  // A new connection is a new member after a restart, or one the server may
  // have lost track of: whether this page has the own copy is said again.
  own.reconnected();
  sync.reset();
  sync.setMe(p.me());
  slot.keep(event.resume);
  const owner = ownerKey.answer(event, connection.presented.resume);
  connection.ownerKey = owner.use;
  if (owner.verdict === 'created') {
    showSecret($('secrets'), {
      kind: 'owner',
      title: 'You created this room and own it',
      text: 'Keep this link: it makes you the owner again from any device, even after everyone has left '
        + '(this browser keeps the key too). Anyone who has it owns the room. Shown once.',
      values: [
        { label: 'Owner link', value: p.roomLink(`owner=${encodeURIComponent(event.ownerKey)}`) },
        { label: 'Owner key', value: event.ownerKey },
      ],
    });
  }
  for (const line of welcomeLines(event, { returning, owner })) log.add(...line);
  p.render.all();
  // A refused link key: come back at once as the same member with the key
  // this browser kept, which makes it the owner again.
  if (owner.verdict === 'refused' && owner.use) connection.reopen();
}
