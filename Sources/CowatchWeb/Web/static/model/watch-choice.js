// Sharing with the room or playing only for me, as SharePlay asks, pure: when
// a person picks something while the room watches another item, the page asks
// whether to share it (replacing what everyone watches) or to play it only for
// them while the session goes on; "don't ask again" is kept by the page
// (room/alone.js). And the question a host is asked on leaving, and the
// warning for a link browsers in the room will not play (sync/mixed-content.js).

import { isMixedContent, mixedContentShareWarning } from '../sync/mixed-content.js';

/** The key under which this browser keeps "share with the room without asking". */
export const SHARE_WITHOUT_ASKING = 'cowatch.watch.share-without-asking';

/** What the room is watching now, or null (nothing, or a session ended). */
export function currentItem(state) {
  const activity = state?.session?.state === 'joined' ? state.session.activity : null;
  if (!activity || state.playback?.status === 'idle') return null;
  return activity;
}

/**
 * What "Watch now" does with `url`: 'share' at once when the room watches
 * nothing, or the person asked not to be asked again; else 'ask'.
 */
export function watchChoice({ state, shareWithoutAsking }) {
  return currentItem(state) && !shareWithoutAsking ? 'ask' : 'share';
}

/** The question's words, naming what everyone watches now. */
export function watchQuestion(state, url) {
  const current = currentItem(state);
  const title = current ? (current.title || current.url) : 'something';
  return `The room is watching "${title}". Share ${url} with the room (it replaces "${title}" for everyone),`
    + ' or play it only for you while the others watch on?';
}

/** Where a link plays when it is only for me: a YouTube or Vimeo page on its own
 *  site (a new tab), anything else in this page's player. The host names are
 *  the providers' own; the room tells their links apart the same way. */
export function aloneTarget(url) {
  let host;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    host = parsed.hostname.toLowerCase();
  } catch {
    return null;
  }
  const provider = ['youtube.com', 'youtu.be', 'youtube-nocookie.com', 'vimeo.com']
    .some((name) => host === name || host.endsWith(`.${name}`));
  return provider ? 'tab' : 'page';
}

/** The item a link is when played only for me in this page's player. */
export function aloneActivity(url, title) {
  return { url, title: title || url, identifier: url, source: { kind: 'file' }, duration: null };
}

/**
 * Whether leaving the room asks "end for everyone, or only leave?": for a host
 * (who may end the session) while a session is on and someone else is there.
 */
export function asksOnLeaving({ me, state, others }) {
  return me?.role === 'host' && state?.session?.state === 'joined' && others > 0;
}

/**
 * The warning for whoever sends `line` from a page whose `location.protocol`
 * is `pageProtocol`, or null: a `/watch` or `/queue` of an http:// file (not
 * a provider's video, which its own player plays) from an https:// page, which
 * browsers in the room will not play as it is (sync/mixed-content.js).
 * @returns {null | { url: string, words: string }} `url` as the URL parser writes it
 */
export function sharedLinkWarning(line, pageProtocol) {
  const found = /^\s*\/(?:watch|queue)\s+(\S+)/i.exec(typeof line === 'string' ? line : '');
  if (!found || aloneTarget(found[1]) !== 'page' || !isMixedContent(found[1], pageProtocol)) return null;
  return { url: new URL(found[1]).href, words: mixedContentShareWarning() };
}
