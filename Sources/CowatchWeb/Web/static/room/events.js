// The room's events (docs/protocol.md) into the page: the model, the player, the
// chat log and the host panel.

import { isStale } from '../sync/seq.js';
import { DOOR_ERRORS } from '../model/door.js';
import { welcome } from './membership.js';
import { leftWords } from '../model/ui.js';
import { chatHeard } from './chat.js';
import { renderAll } from './render.js';

export function handleEvent(page, event) {
  const { announcements, clock, hostPanel, log, model, own, subtitles, sync } = page;
  chatHeard(page, event);
  switch (event.type) {
    case 'welcome':
      welcome(page, event);
      break;
    case 'state':
      if (isStale(model.state, event)) return;
      model.state = event;
      sync.setState(own.update(event, page.me()));
      subtitles.update(event.session?.state === 'joined' ? event.session.activity : null);
      renderAll(page);
      break;
    case 'participant': {
      const participant = { ...event.participant, lastChange: event.change };
      const known = model.participants.has(participant.id);
      const previousName = model.participants.get(participant.id)?.name;
      model.participants.set(participant.id, participant);
      if (participant.id === model.meId) sync.setMe(participant);
      if (!known && participant.id !== model.meId) {
        log.add('system', `${participant.name} arrived.`);
        announcements.say(`${participant.name} arrived.`);
      }
      if (event.change === 'renamed') {
        log.add('system', `${previousName || 'someone'} is now known as ${participant.name}.`);
      }
      renderAll(page);
      break;
    }
    case 'participant-left': {
      const gone = model.participants.get(event.id);
      model.participants.delete(event.id);
      const words = leftWords(event.name || gone?.name || 'someone', event.reason);
      if (words) {
        log.add('system', words);
        announcements.say(words);
      }
      if (event.reason === 'kicked' || event.reason === 'banned') hostPanel.refresh('bans');
      renderAll(page);
      break;
    }
    case 'chat':
      log.add(event.me ? 'me' : 'chat', event.text, { name: event.name, at: event.at });
      if (event.from !== model.meId) announcements.chat(event.name, event.text, event.me);
      break;
    case 'notice':
      log.add('notice', event.text);
      announcements.news(event.text, event.cause);
      break;
    case 'reply':
      // Lists the host panel asked for, and secrets shown once, are its own.
      if (hostPanel.reply(event)) {
        if (event.command === 'invite') log.add('notice', 'Invite link made: it is shown beside the chat, with a copy button.');
        if (event.command === 'token') log.add('notice', 'Bot token made: it is shown beside the chat, with a copy button.');
        break;
      }
      log.add('reply', event.text ?? JSON.stringify(event, null, 2));
      break;
    case 'error':
      // A player report that raced with a newer state: the page answers that one.
      if (event.code === 'stale-report') break;
      // A refusal at the door: the door says it when the close follows.
      if (event.command == null && DOOR_ERRORS.has(event.code)) break;
      log.add('error', event.message || event.code);
      announcements.say(event.message || event.code);
      if (event.command === 'resume' && event.code === 'forbidden' && page.scrub.suspended) {
        // Only hosts may move the group here: end the seek-bar suspension plainly.
        page.send('/resume userIsChangingCurrentTime');
        page.scrub.suspended = false;
      }
      break;
    case 'time':
      clock.receive(event);
      break;
    case 'catchup':
      sync.startCatchup(event);
      break;
    default:
      break; // unknown types are ignored (the contract allows new ones)
  }
  announcements.speak();
}
