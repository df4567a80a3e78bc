// Rendering: the chat log, the members list, the queue and the connection
// banner; their words, and the player's status line, are model/ui.js's. Everything
// from the server is put in the page as text (textContent), never as HTML.

import { copyLabel } from '../sync/own-copy.js';
import { describeReason, roleWord } from './ui.js';

export function $(id) {
  return document.getElementById(id);
}

/** An element with attributes and children (text is put in as text, never HTML). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value == null || value === false) continue;
    if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// MARK: chat log

export class ChatLog {
  constructor(container) {
    this.container = container;
  }

  /** Appends a line. kind: chat | me | notice | reply | error | system. */
  add(kind, text, { name = null, at = null } = {}) {
    const stick = this.container.scrollHeight - this.container.scrollTop - this.container.clientHeight < 40;
    const time = new Date(at ?? Date.now());
    const stamp = el('time', { datetime: time.toISOString() },
      time.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
    let body;
    if (kind === 'chat') {
      body = el('span', { class: 'text' }, el('b', { class: 'who' }, name), ' ', text);
    } else if (kind === 'me') {
      body = el('span', { class: 'text' }, '* ', el('b', { class: 'who' }, name), ' ', text);
    } else if (kind === 'reply') {
      body = renderReply(text);
    } else {
      body = el('span', { class: 'text' }, text);
    }
    this.container.append(el('div', { class: `line ${kind}` }, stamp, ' ', body));
    while (this.container.childElementCount > 1000) this.container.firstElementChild.remove();
    if (stick) this.container.scrollTop = this.container.scrollHeight;
  }
}

/**
 * A reply (/help, /who, /status, /queue): the server's text lines, without the
 * "= " a terminal shows, one block per line, white space kept. Command lines of
 * /help ("/seek <time> - Move everyone...") get the usage set apart.
 */
function renderReply(text) {
  const lines = String(text).split('\n').map((line) => line.replace(/^= ?/, ''));
  return el('div', { class: 'text reply-body' }, ...lines.map((line) => {
    const command = /^(\/\S.*?) - (.+)$/.exec(line);
    if (command) return el('div', { class: 'command' }, el('code', {}, command[1]), ' ', command[2]);
    return el('div', {}, line);
  }));
}

// MARK: members, queue, now playing

const ROLE_TITLES = {
  owner: 'Owner: created the room or holds its owner key; a host whom no other host can remove',
  host: 'Host: can change the room policy and moderate',
};

/** The member list. `onCommand(line)`, when given, sends a moderation command:
 *  a host sees mute, kick and ban beside every other member but the owner.
 *  `voice`, the room's voice roster: who is in voice, speaking or muted there. */
export function renderMembers(list, participants, meId, onCommand = null, voice = null) {
  const me = participants.get(meId);
  const seats = new Map((voice?.seats ?? []).map((seat) => [seat.id, seat]));
  const items = [...participants.values()].map((p) => {
    const tags = [];
    const seat = seats.get(p.id);
    if (seat) {
      const [label, title] = seat.speaking ? ['speaking', 'Speaking in voice now']
        : seat.muted ? ['in voice, mic off', 'In voice; the others do not hear their microphone'] : ['in voice', 'In voice'];
      tags.push(el('span', { class: `tag voice${seat.speaking ? ' speaking' : ''}`, title }, label));
    }
    const role = roleWord(p);
    if (role !== 'member') tags.push(el('span', { class: 'badge host', title: ROLE_TITLES[role] }, role));
    if (p.muted) tags.push(el('span', { class: 'tag warn', title: 'Muted by a host: cannot chat or use commands' }, 'muted'));
    if (p.id === meId) tags.push(el('span', { class: 'badge you' }, 'you'));
    if (!p.connected) tags.push(el('span', { class: 'tag warn' }, 'reconnecting…'));
    if (!p.joined) tags.push(el('span', { class: 'tag' }, 'not in the session'));
    else if (p.player) {
      const buffering = p.lastChange === 'buffering' || p.suspensions.includes('stallRecovery');
      const label = buffering ? 'buffering' : p.ready ? 'ready' : 'player';
      tags.push(el('span', { class: `tag ${buffering ? 'warn' : p.ready ? 'ok' : ''}`, title: 'Drives a media player' }, label));
    } else {
      tags.push(el('span', { class: 'tag', title: 'Chat only: no player' }, 'chat only'));
    }
    // The program it watches with, as its client named it (a Syncplay member's).
    if (p.software) tags.push(el('span', { class: 'tag', title: 'Watches with this program' }, `with ${p.software}`));
    for (const reason of p.suspensions) {
      tags.push(el('span', { class: 'tag suspended', title: 'Apart from the group for now' }, describeReason(reason)));
    }
    // An own copy: who has the file and watches, and who is in the room without it.
    const copy = copyLabel(p);
    if (copy) {
      tags.push(el('span', { class: `tag copy ${p.copy ? 'ok' : 'warn'}`, title: p.copy
        ? 'Plays their own copy of the file' : 'Has no copy of the file: not watching, still in the room' }, copy));
    }
    if (p.autoplay) tags.push(el('span', { class: 'tag', title: 'Autoplay on' }, 'autoplay'));
    const controls = onCommand && me?.role === 'host' && p.id !== meId && (!p.owner || me.owner)
      ? moderationControls(p, onCommand) : [];
    return el('li', { class: p.id === meId ? 'me' : null }, el('span', { class: 'name' }, p.name), ' ', ...tags, ...controls);
  });
  list.replaceChildren(...items);
}

/** A host's controls for the door, above the member list: lock or unlock, and a
 *  new invite link. Hidden for members who are not hosts. */
export function renderRoomControls(container, me, access, onCommand) {
  container.hidden = me?.role !== 'host';
  if (container.hidden) {
    container.replaceChildren();
    return;
  }
  const locked = Boolean(access?.locked);
  const lock = el('button', { type: 'button', class: 'moderate', title: locked
    ? 'Let anyone with the room\'s link in again' : 'Only invite links, the owner key and members already here let anyone in' },
  locked ? 'unlock room' : 'lock room');
  lock.addEventListener('click', () => onCommand(locked ? '/unlock' : '/lock'));
  const invite = el('button', { type: 'button', class: 'moderate', title: 'A link that lets one person in, for a day' }, 'invite link');
  invite.addEventListener('click', () => onCommand('/invite'));
  const tags = [];
  if (locked) tags.push(el('span', { class: 'tag warn' }, 'locked'));
  if (access?.password) tags.push(el('span', { class: 'tag' }, 'password'));
  container.replaceChildren(...tags, lock, invite);
}

/** Mute or unmute, kick, ban: each asks first, and kick and ban take a reason
 *  that the member is told. */
function moderationControls(p, onCommand) {
  // A name with spaces goes in quotes when a reason may follow it (docs/protocol.md).
  const target = /\s/.test(p.name) ? `"${p.name}"` : p.name;
  const button = (label, title, action) => {
    const b = el('button', { type: 'button', class: 'moderate', title }, label);
    b.addEventListener('click', action);
    return b;
  };
  const reasoned = (verb, line) => () => {
    const reason = globalThis.prompt?.(`${verb} ${p.name}? A reason they will be told (optional):`, '');
    if (reason === null || reason === undefined) return;
    onCommand(reason.trim() ? `${line} ${reason.trim()}` : line);
  };
  return [
    button(p.muted ? 'unmute' : 'mute', p.muted ? `Let ${p.name} chat again` : `Stop ${p.name}'s chat and commands`,
      () => onCommand(`/${p.muted ? 'unmute' : 'mute'} ${target}`)),
    button('kick', `Remove ${p.name}; they cannot come back for the kick cooldown`, reasoned('Kick', `/kick ${target}`)),
    button('ban', `Keep ${p.name} out until a host lifts the ban`, reasoned('Ban', `/ban ${target}`)),
  ];
}

/** The queue, in order. A host also gets, beside each item, "play next" (to the
 *  top), up and down, and remove: `/move` and `/dequeue` by the item's id, which
 *  stays right while someone else reorders the queue (docs/commands.md). */
export function renderQueue(list, empty, queue, onCommand = null) {
  const button = (label, title, line, disabled = false) => {
    const b = el('button', { type: 'button', class: 'moderate', title }, label);
    b.disabled = disabled;
    b.addEventListener('click', () => onCommand(line));
    return b;
  };
  list.replaceChildren(...queue.map((item, index) => {
    const name = item.title || item.url;
    const controls = onCommand ? el('span', { class: 'queue-controls' },
      button('play next', `Make "${name}" the next item`, `/move ${item.id} 1`, index === 0),
      button('↑', `Move "${name}" up`, `/move ${item.id} ${index}`, index === 0),
      button('↓', `Move "${name}" down`, `/move ${item.id} ${index + 2}`, index === queue.length - 1),
      button('remove', `Take "${name}" out of the queue`, `/dequeue ${item.id}`)) : null;
    return el('li', { 'data-item': item.id }, el('span', { class: 'name' }, name), controls,
      item.title && item.title !== item.url ? el('span', { class: 'url' }, item.url) : null);
  }));
  empty.hidden = queue.length > 0;
}


/** The connection banner. */
export function renderConnection(banner, text, retry, { phase, attempt, delay, reason }) {
  banner.dataset.phase = phase;
  retry.hidden = phase !== 'reconnecting';
  switch (phase) {
    case 'connecting':
      banner.hidden = false;
      text.textContent = 'Connecting…';
      break;
    case 'open':
      banner.hidden = true;
      text.textContent = '';
      break;
    case 'reconnecting':
      banner.hidden = false;
      text.textContent = `Reconnecting${reason ? ` (${reason})` : ''}… attempt ${attempt}` +
        (delay ? `, next try in ${(delay / 1000).toFixed(1)} s` : '');
      break;
    case 'closed':
      banner.hidden = false;
      text.textContent = reason || 'Disconnected.';
      break;
  }
}
