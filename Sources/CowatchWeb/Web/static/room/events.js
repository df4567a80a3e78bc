// The room's events (docs/protocol.md) carried out on the page. What each event
// changes in the room's model, and the words it puts in the log and tells screen
// readers, is decided in model/events.js; here it reaches, in turn, the player
// (the state it follows, the clock, a catch-up), the words (the chat log, the
// live region, the host panel's replies) and the page drawn again.

import { applyChanges, heard, replyLine, resumeRefused } from '../model/events.js';

/**
 * @param {object} p what the events reach
 * @param {object} p.model the room's model (model/events.js), which the event's changes are written into here
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {{ heard: (meId: string|null, event: object) => void }} p.chat the chat input (room/chat.js)
 * @param {(event: object) => void} p.welcome the server's `welcome` (room/membership.js)
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {import('../sync/own-copies.js').OwnCopies} p.own
 * @param {import('../subtitles.js').Subtitles} p.subtitles
 * @param {import('../sync/server-clock.js').ServerClock} p.clock
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {import('./announcements.js').Announcements} p.announcements
 * @param {import('../model/host-panel-dom.js').HostPanel} p.hostPanel
 * @param {{ resumeRefused: () => void }} p.seekBar room/seek-bar.js's
 * @param {{ all: () => void }} p.render room/render.js's
 * @param {object} event
 */
export function handleEvent(p, event) {
  p.chat.heard(p.model.meId, event);
  if (event.type === 'welcome') p.welcome(event);
  const news = heard(p.model, event);
  if (news.stale) return;
  applyChanges(p.model, news.changes);
  toPlayer(p, event, news);
  toWords(p, event, news);
  if (news.refresh) p.hostPanel.refresh(news.refresh);
  if (news.render) p.render.all();
  p.announcements.speak();
}

/** The player, its subtitles and the server clock. */
function toPlayer({ clock, me, own, subtitles, sync }, event, { state, me: changed }) {
  if (state) {
    sync.setState(own.update(state, me()));
    subtitles.update(state.session?.state === 'joined' ? state.session.activity : null);
  }
  if (changed) sync.setMe(changed);
  if (event.type === 'time') clock.receive(event);
  if (event.type === 'catchup') sync.startCatchup(event);
}

/** The chat log, the live region, the host panel's replies, and a seek-bar
 *  suspension the room would not let this page end by moving the group. */
function toWords({ announcements, hostPanel, log, seekBar }, event, news) {
  if (event.type === 'reply') {
    // Lists the host panel asked for, and secrets shown once, are its own.
    const line = replyLine(event, hostPanel.reply(event));
    if (line) log.add(...line);
  }
  for (const line of news.log) log.add(...line);
  for (const [verb, ...words] of news.announce) announcements[verb](...words);
  if (resumeRefused(event)) seekBar.resumeRefused();
}
