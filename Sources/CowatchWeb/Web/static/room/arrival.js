// Arriving in a room, before anything is sent: the link's secrets out of the
// address bar, the room this page is for, the name to join with. What these
// read from the address is decided in model/address.js.

import { $ } from '../model/ui-dom.js';
import { isRoomName, linkSecrets, recentRooms, roomFromPath } from '../model/address.js';

/**
 * What a link carries for this page alone (an owner key, an invite) leaves the
 * address bar before anything else happens, so that history, a shared screen or
 * a bookmark does not keep it; the page sends no Referer either (no-referrer).
 */
export function takeLinkSecrets() {
  const { taken, clean } = linkSecrets(location.href);
  if (clean != null) history.replaceState(null, '', clean);
  return taken;
}

/** The room this page is for, the address bar showing its name as the room's. */
export function roomOfThisPage() {
  const { room, renamed } = roomFromPath(location.pathname);
  if (renamed) history.replaceState(null, '', `/rooms/${encodeURIComponent(room)}${location.search}${location.hash}`);
  return room;
}

/**
 * Shows the room's name; a path that is not a room name is told in the log and
 * goes no further (false). The room is remembered for the landing page.
 */
export function enterRoom(room, log) {
  $('room-name').textContent = room;
  document.title = `${room} · Cowatch`;
  if (!isRoomName(room)) {
    log.add('error', 'This is not a room name: 1 to 64 letters, digits, ".", "_" or "-".');
    return false;
  }
  localStorage.setItem('cowatch.room', room);
  // The landing page lists the rooms this browser was in, most recent first.
  try {
    const known = JSON.parse(localStorage.getItem('cowatch.rooms') || '[]');
    localStorage.setItem('cowatch.rooms', JSON.stringify(recentRooms(known, room)));
  } catch {
    localStorage.setItem('cowatch.rooms', JSON.stringify([room]));
  }
  return true;
}

/** The name to join with: `?name=`, else the last one used, else asked in a dialog. */
export async function chooseName() {
  const fromUrl = new URLSearchParams(location.search).get('name');
  if (fromUrl && fromUrl.trim()) {
    localStorage.setItem('cowatch.name', fromUrl.trim());
    return fromUrl.trim();
  }
  const stored = localStorage.getItem('cowatch.name');
  if (stored) return stored;
  const dialog = $('name-dialog');
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const name = $('name-input').value.trim();
      if (name) localStorage.setItem('cowatch.name', name);
      resolve(name || 'guest');
    }, { once: true });
  });
}
