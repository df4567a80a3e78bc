// The room's events (docs/protocol.md) into what the page knows, pure: the room's
// model as the events leave it, and the words each event puts in the chat log
// and tells screen readers. room/events.js hands each event here, then carries
// out what comes back on the player, the log, the live region and the page.

import { isStale } from '../sync/seq.js';
import { DOOR_ERRORS } from './door.js';
import { leftWords, roleWord } from './ui.js';

/** Everything the page knows about the room, from the server's events. */
export function emptyModel() {
  return {
    meId: null,
    participants: new Map(), // id → participant (+ lastChange)
    state: null,
    voice: null, // the latest `voice` roster (docs/voice.md); null: this server has no voice, or has not said yet
  };
}

/**
 * A `welcome` into the model: this page is a member again, with the room's
 * members as they are now. Returns whether it is the same member as before (a
 * reconnect) rather than a new one, and the model's changes (`applyChanges`).
 */
export function welcomed(model, event) {
  const participants = new Map(event.participants.map((p) => [p.id, p]));
  participants.set(event.you.id, { ...participants.get(event.you.id), ...event.you });
  return {
    returning: model.meId === event.you.id,
    // The state follows; a restarted server may count seq anew.
    changes: { meId: event.you.id, participants, state: null, voice: null },
  };
}

/**
 * Writes what `welcomed` and `heard` decided into the model: the one place the
 * model changes (called by room/membership.js and room/events.js).
 * @param {ReturnType<typeof emptyModel>} model
 * @param {{ meId?: string, participants?: Map<string, object>, set?: object[], remove?: string[], state?: object|null, voice?: object|null }} changes
 */
export function applyChanges(model, changes) {
  if ('meId' in changes) model.meId = changes.meId;
  if (changes.participants) model.participants = changes.participants;
  for (const participant of changes.set ?? []) model.participants.set(participant.id, participant);
  for (const id of changes.remove ?? []) model.participants.delete(id);
  if ('state' in changes) model.state = changes.state;
  if ('voice' in changes) model.voice = changes.voice;
}

/** The welcome line's role, in the page's one word per role (a member's goes unsaid). */
const ROLE_SUFFIX = { owner: ', its owner', host: ', a host', member: '' };

/**
 * The chat log's lines for a `welcome`, `[kind, text, extra?]` in order: a room
 * this page created, what was said before a new member came, who this page is
 * (or that it is back), and what became of an owner key from the link.
 * @param {{ returning: boolean, owner: { verdict: string, use: string|null } }} how
 *   `owner` as model/kept.js's KeptOwnerKey answers the welcome
 */
export function welcomeLines(event, { returning, owner }) {
  const lines = [];
  if (owner.verdict === 'created') {
    lines.push(['notice', 'You created this room and own it: keep the owner link shown beside the chat.']);
  }
  if (!returning) {
    // What was said before this page came, as the server kept it.
    for (const line of event.chat || []) {
      lines.push([line.me ? 'me' : 'chat', line.text, { name: line.name, at: line.at }]);
    }
  }
  lines.push(['system', returning
    ? 'Reconnected.'
    : `You are ${event.you.name} in room ${event.room}${ROLE_SUFFIX[roleWord(event.you)]}. Type /help for the commands.`]);
  if (owner.verdict === 'accepted') {
    lines.push(['notice', 'The owner key in the link you opened was accepted: you own this room, and this browser keeps the key.']);
  } else if (owner.verdict === 'refused') {
    lines.push(['error', 'The owner key in the link you opened was not accepted for this room. ' + (owner.use
      ? 'The owner key this browser kept for the room is unchanged, and used instead.'
      : 'Nothing was kept; you are in the room as a member.')]);
  } else if (owner.verdict === 'unchecked') {
    lines.push(['notice', 'The owner key in the link you opened was not checked: this tab came back as the member it was, ' +
      'who already owns the room. The owner key this browser kept is unchanged.']);
  }
  return lines;
}

/**
 * What one of the room's events changes in the model (`changes`, for
 * `applyChanges`: the model itself is left as it is), and what the page does
 * about it:
 *   `stale`     a state older than the one applied: nothing at all
 *   `state`     the room's new state, for the player to follow
 *   `me`        this page's member as it is now, when the event changed it
 *   `log`       lines for the chat log, `[kind, text, extra?]`
 *   `announce`  for screen readers, `[verb, ...arguments]` of room/announcements.js
 *               (`say`, `chat`, `news`)
 *   `refresh`   a host panel list to ask for again
 *   `render`    the page is drawn again
 * A `welcome`, a `reply`, `time` and `catchup` are the page's own to carry out
 * (room/events.js); here they change nothing.
 */
export function heard(model, event) {
  const out = { changes: {}, stale: false, state: null, me: null, log: [], announce: [], refresh: null, render: false };
  switch (event.type) {
    case 'state':
      if (isStale(model.state, event)) {
        out.stale = true;
        break;
      }
      out.changes.state = event;
      out.state = event;
      out.render = true;
      break;
    case 'participant': {
      const participant = { ...event.participant, lastChange: event.change };
      const known = model.participants.has(participant.id);
      const previousName = model.participants.get(participant.id)?.name;
      out.changes.set = [participant];
      if (participant.id === model.meId) out.me = participant;
      if (!known && participant.id !== model.meId) {
        out.log.push(['system', `${participant.name} arrived.`]);
        out.announce.push(['say', `${participant.name} arrived.`]);
      }
      if (event.change === 'renamed') {
        // The event says the name before; a server that does not, the page's own list.
        out.log.push(['system', `${event.from || previousName || 'someone'} is now known as ${participant.name}.`]);
      }
      out.render = true;
      break;
    }
    case 'participant-left': {
      const gone = model.participants.get(event.id);
      out.changes.remove = [event.id];
      const words = leftWords(event.name || gone?.name || 'someone', event.reason);
      if (words) {
        out.log.push(['system', words]);
        out.announce.push(['say', words]);
      }
      if (event.reason === 'kicked' || event.reason === 'banned') out.refresh = 'bans';
      out.render = true;
      break;
    }
    case 'chat':
      out.log.push([event.me ? 'me' : 'chat', event.text, { name: event.name, at: event.at }]);
      if (event.from !== model.meId) out.announce.push(['chat', event.name, event.text, event.me]);
      break;
    case 'notice':
      out.log.push(['notice', event.text]);
      out.announce.push(['news', event.text, event.cause]);
      break;
    case 'error':
      // A player report that raced with a newer state: the page answers that one.
      if (event.code === 'stale-report') break;
      // A refusal at the door: the door says it when the close follows.
      if (event.command == null && DOOR_ERRORS.has(event.code)) break;
      out.log.push(['error', event.message || event.code]);
      out.announce.push(['say', event.message || event.code]);
      break;
    case 'voice': {
      out.changes.voice = event;
      const words = voiceWords(model.voice, event, model.meId);
      if (words.log) out.log.push(['system', words.log]);
      if (words.say) out.announce.push(['say', words.say]);
      out.render = true;
      break;
    }
    default:
      break; // unknown types are ignored (the contract allows new ones)
  }
  return out;
}

/**
 * What a `voice` roster says in words: `log` for the chat log, `say` for screen
 * readers. Who comes and goes is both; who starts speaking when nobody was is
 * said alone (each breath of a conversation would drown the log; the member
 * list shows the rest).
 */
export function voiceWords(before, roster, meId) {
  const name = roster.name || 'someone';
  switch (roster.change) {
    case 'joined':
      if (roster.member === meId) return { log: 'You are in voice.', say: 'You are in voice.' };
      return { log: `${name} joined voice.`, say: `${name} joined voice.` };
    case 'left': {
      const words = roster.member === meId ? 'You left voice.' : `${name} left voice.`;
      return { log: words, say: words };
    }
    case 'speaking': {
      const quietBefore = !(before?.seats ?? []).some((seat) => seat.speaking);
      return quietBefore && roster.member !== meId ? { say: `${name} is speaking.` } : {};
    }
    default:
      return {};
  }
}

/** The log's line for a `reply`: the host panel's own replies (`shown`: it put
 *  the list or the secret beside the chat) only point there, if anything. */
export function replyLine(event, shown) {
  if (shown) {
    if (event.command === 'invite') return ['notice', 'Invite link made: it is shown beside the chat, with a copy button.'];
    if (event.command === 'token') return ['notice', 'Bot token made: it is shown beside the chat, with a copy button.'];
    return null;
  }
  return ['reply', event.text ?? JSON.stringify(event, null, 2)];
}

/** Whether an `error` ends a seek-bar suspension this page is left in: only
 *  hosts may move the group here, so the page resumes plainly. */
export function resumeRefused(event) {
  return event.type === 'error' && event.command === 'resume' && event.code === 'forbidden';
}
