// The room page's address, read without touching the page: the room its path
// names, what a link carries for this page alone, and the rooms this browser was
// in. No element, history or storage here, so Node tests it
// (Tests/js/room-address.test.mjs); room/arrival.js applies it to the page.

/** Room names the server accepts (docs/protocol.md). */
export const ROOM_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** How many rooms this browser remembers for the landing page. */
export const RECENT_ROOMS = 10;

export const isRoomName = (room) => ROOM_PATTERN.test(room);

/**
 * What a link carries for this page alone: an owner key (`owner=`), an
 * invite (`invite=`) and what to watch (`watch=`, an http(s) link), each null
 * when absent, empty or (for `watch`) not a web address.
 *
 * @param {string} href the page's address
 * @returns {{ taken: { owner: string|null, invite: string|null, watch: string|null }, clean: string|null }}
 *   `clean`: the address without them, or null when it carried none.
 */
export function linkSecrets(href) {
  const url = new URL(href);
  const params = url.searchParams;
  const taken = { owner: params.get('owner') || null, invite: params.get('invite') || null, watch: watchLink(params.get('watch')) };
  if (!params.has('owner') && !params.has('invite') && !params.has('watch')) return { taken, clean: null };
  params.delete('owner');
  params.delete('invite');
  // What to watch is asked once: a reload, a bookmark or the link copied from the bar does not ask again.
  params.delete('watch');
  return { taken, clean: url.href };
}

/** A `?watch=` link: an http(s) address, or null. */
function watchLink(value) {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The room a page's path (`/rooms/<room>`) names, percent-decoded and in
 * lowercase: room names are case-insensitive and shown in lowercase
 * (docs/protocol.md). A path that is not valid percent-encoding is returned as
 * it is, to be refused as not a room name.
 *
 * @returns {{ room: string, renamed: boolean }} `renamed`: the path spelled the
 *   room otherwise, and the address bar should show `room`.
 */
export function roomFromPath(pathname) {
  const raw = pathname.replace(/^\/rooms\//, '').replace(/\/$/, '');
  let name;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return { room: raw, renamed: false };
  }
  const lower = name.toLowerCase();
  return { room: lower, renamed: lower !== name };
}

/**
 * The rooms this browser was in, most recent first: `room`, then those kept
 * before it (what was kept counts as none if it is not a list), at most
 * RECENT_ROOMS.
 */
export function recentRooms(kept, room) {
  return [room, ...(Array.isArray(kept) ? kept : []).filter((name) => name !== room)].slice(0, RECENT_ROOMS);
}
