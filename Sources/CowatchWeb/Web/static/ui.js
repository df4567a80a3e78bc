// Rendering: the chat log, the members list, the queue, the now-playing line,
// the connection banner and the player's overlay and status. Everything from
// the server is put in the page as text (textContent), never as HTML.

import { unseekableWords } from './sync/seekable.js';
import { copyLabel } from './sync/own-copy.js';

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
  audioSessionInterrupted: 'audio interrupted',
  playingInterstitial: 'playing an interstitial',
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
 *  and only when someone else can still play it, that the others keep watching. */
export function cannotPlayWords(mediaError, othersPlay) {
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
 *  a host sees mute, kick and ban beside every other member but the owner. */
export function renderMembers(list, participants, meId, onCommand = null) {
  const me = participants.get(meId);
  const items = [...participants.values()].map((p) => {
    const tags = [];
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
    case 'error':
      return say('problem', `Cannot play: ${snapshot.mediaError}.`);
    case 'blocked':
      return say('problem', 'Your browser did not let playback start: click to join.');
    case 'suspended': {
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
