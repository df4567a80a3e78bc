// A link shared with the page, read without touching it: the landing page is the
// web app's share target (static/manifest.webmanifest), so a phone's share sheet
// opens `/?title=...&text=...&url=...`. Which link that is, whether it can be
// watched, the name a new room for it gets and the room's address that shares it
// (`/rooms/<room>?watch=<link>`). No element or storage here, so Node tests it
// (Tests/js/share.test.mjs); landing.js shows it.

import { RECENT_ROOMS, isRoomName } from './address.js';

/** The longest link taken: more is not a link a person shared. */
export const MAX_LINK = 2048;

/** The most shown of a share that holds no link. */
export const MAX_SHOWN = 200;

/** The longest room name suggested, before its random suffix. */
const MAX_STEM = 40;

// A link within words: from http:// or https:// up to the next space or a
// character that cannot be part of one written in a sentence.
const LINK_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/i;
// Any scheme at all, to tell "a link that cannot be watched" from "no link".
const ANY_LINK = /\b[a-z][a-z0-9+.-]*:\/\/\S+/i;

/**
 * The link `value` names when it is an http(s) link, as the URL parser writes
 * it, or null.
 */
export function watchableLink(value) {
  if (typeof value !== 'string') return null;
  const candidate = value.trim();
  if (!candidate || candidate.length > MAX_LINK) return null;
  let url;
  try {
    url = new URL(candidate);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return null;
  return url.href;
}

/**
 * The first http(s) link written in `text`, without the punctuation that ends
 * a sentence around it ("see https://a.example/x." is https://a.example/x), or
 * null.
 */
export function linkInText(text) {
  if (typeof text !== 'string') return null;
  const found = LINK_IN_TEXT.exec(text);
  if (!found) return null;
  let link = found[0];
  // Trailing punctuation, and a closing bracket that has no opening one in the link.
  for (;;) {
    const last = link.at(-1);
    if ('.,;:!?*'.includes(last)) link = link.slice(0, -1);
    else if (last === ')' && count(link, '(') < count(link, ')')) link = link.slice(0, -1);
    else if (last === ']' && count(link, '[') < count(link, ']')) link = link.slice(0, -1);
    else break;
  }
  return watchableLink(link);
}

const count = (text, char) => text.split(char).length - 1;

/**
 * What was shared, from the page's query parameters (a URLSearchParams, or
 * anything with `get(name)`):
 *
 * - `null`: nothing was shared (none of url, text, title has a value): the
 *   landing page as usual;
 * - `{ found: true, link, title }`: the link to watch (the `url` parameter's,
 *   else the first one in `text`, else in `title`), and the title shared with it
 *   (`title`, else the words of `text` around the link, else null);
 * - `{ found: false, shared, words }`: no http(s) link; `shared` is what was
 *   (to be shown as text, cut at MAX_SHOWN characters), `words` says so.
 */
export function sharedLink(params) {
  const value = (name) => {
    const v = params.get(name);
    return typeof v === 'string' && v.trim() ? v.trim() : null;
  };
  const url = value('url');
  const text = value('text');
  const title = value('title');
  if (url === null && text === null && title === null) return null;

  const link = watchableLink(url) ?? linkInText(url) ?? linkInText(text) ?? linkInText(title);
  if (link) {
    return { found: true, link, title: title && !linkInText(title) ? title : wordsAround(text) };
  }
  const all = [title, text, url].filter(Boolean).join(' ');
  const shared = all.length > MAX_SHOWN ? `${all.slice(0, MAX_SHOWN - 1)}…` : all;
  const words = url !== null || ANY_LINK.test(all)
    ? 'Only http and https links can be watched together, and what was shared is not one.'
    : 'No link was found in what was shared: share the page of a video, or a link to a video file.';
  return { found: false, shared, words };
}

/** `text` without its first link, when words are left: the title a share sheet put before it. */
function wordsAround(text) {
  if (!text) return null;
  const rest = text.replace(LINK_IN_TEXT, ' ').replace(/\s+/g, ' ').trim();
  return /[\p{L}\p{N}]/u.test(rest) ? rest : null;
}

/**
 * The rooms this browser remembers (what `cowatch.rooms` keeps, see
 * room/arrival.js), as the choice of a room to watch in: names only, each once,
 * in their order, at most RECENT_ROOMS; anything else kept is ignored.
 */
export function rememberedRooms(kept) {
  if (!Array.isArray(kept)) return [];
  const rooms = [];
  for (const name of kept) {
    if (typeof name !== 'string' || !isRoomName(name)) continue;
    const room = name.toLowerCase();
    if (!rooms.includes(room)) rooms.push(room);
  }
  return rooms.slice(0, RECENT_ROOMS);
}

/**
 * A name for a new room to watch `link` in: the shared title's words, else the
 * file the link names (without its extension), else the site's name, in
 * lowercase with dashes, then a dash and four random letters or digits so that
 * two shares do not meet in one room. `random` returns numbers in [0, 1).
 */
export function suggestRoomName(link, title = null, random = Math.random) {
  let stem = slug(title ?? '');
  if (!stem) {
    try {
      const url = new URL(link);
      const file = decodeSafely(url.pathname.split('/').filter(Boolean).at(-1) ?? '');
      if (/\.[A-Za-z0-9]{2,5}$/.test(file)) stem = slug(file.replace(/\.[A-Za-z0-9]{2,5}$/, ''));
      if (!stem) stem = slug(url.hostname.replace(/^(www|m)\./, '').split('.')[0]);
    } catch {
      stem = '';
    }
  }
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  let suffix = '';
  for (let i = 0; i < 4; i += 1) suffix += alphabet[Math.floor(random() * alphabet.length) % alphabet.length];
  return `${stem || 'watch'}-${suffix}`;
}

function slug(words) {
  const ascii = words.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  return ascii.replace(/[^a-z0-9]+/g, '-').replace(/^-+/, '').slice(0, MAX_STEM).replace(/-+$/, '');
}

function decodeSafely(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The room's address that shares `link` with it: `/rooms/<room>?watch=<link>`
 * (the room page shares `?watch=` with the room), the room in lowercase (room
 * names are case-insensitive); null when `room` is not a room name or `link`
 * is not an http(s) link.
 */
export function watchAddress(room, link) {
  const name = typeof room === 'string' ? room.trim() : '';
  const watched = watchableLink(link);
  if (!isRoomName(name) || !watched) return null;
  return `/rooms/${encodeURIComponent(name.toLowerCase())}?watch=${encodeURIComponent(watched)}`;
}
