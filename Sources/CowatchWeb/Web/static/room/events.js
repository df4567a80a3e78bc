// The room's events (docs/protocol.md) carried out on the page. What each event
// changes in the room's model, and the words it puts in the log and tells screen
// readers, is decided in model/events.js; here it reaches, in turn, the player
// (the state it follows, the clock, a catch-up), the words (the chat log, the
// live region, the host panel's replies) and the page drawn again.

import { heard, replyLine, resumeRefused } from '../model/events.js';
import { welcome } from './membership.js';
import { chatHeard } from './chat.js';
import { renderAll } from './render.js';

export function handleEvent(page, event) {
  chatHeard(page.chat, page.model.meId, event);
  if (event.type === 'welcome') welcome(page, event);
  const news = heard(page.model, event);
  if (news.stale) return;
  toPlayer(page, event, news);
  toWords(page, event, news);
  if (news.refresh) page.hostPanel.refresh(news.refresh);
  if (news.render) renderAll(page);
  page.announcements.speak();
}

/** The player, its subtitles and the server clock. */
function toPlayer(page, event, { state, me }) {
  const { clock, own, subtitles, sync } = page;
  if (state) {
    sync.setState(own.update(state, page.me()));
    subtitles.update(state.session?.state === 'joined' ? state.session.activity : null);
  }
  if (me) sync.setMe(me);
  if (event.type === 'time') clock.receive(event);
  if (event.type === 'catchup') sync.startCatchup(event);
}

/** The chat log, the live region, the host panel's replies, and a seek-bar
 *  suspension the room would not let this page end by moving the group. */
function toWords(page, event, news) {
  const { announcements, hostPanel, log } = page;
  if (event.type === 'reply') {
    // Lists the host panel asked for, and secrets shown once, are its own.
    const line = replyLine(event, hostPanel.reply(event));
    if (line) log.add(...line);
  }
  for (const line of news.log) log.add(...line);
  for (const [verb, ...words] of news.announce) announcements[verb](...words);
  if (resumeRefused(event) && page.scrub.suspended) {
    page.send('/resume userIsChangingCurrentTime');
    page.scrub.suspended = false;
  }
}
