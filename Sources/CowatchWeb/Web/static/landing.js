// The landing page (index.html): pick or create a room, choose a name, see the
// rooms this browser was in and the rooms listed on this server. A file of its
// own rather than an inline script, so that the pages run under a policy that
// allows scripts from this server only (docs/browser.md, "Under a strict
// Content-Security-Policy").

import { rememberedRooms, sharedLink, suggestRoomName, watchAddress } from './model/share.js';

const form = document.getElementById('open-room');
// The terminal's address is this page's own (cowatch connect takes the page's
// link), so its scheme is the one the page came over: https:// behind TLS.
document.getElementById('origin').textContent = `${location.protocol}//${location.host}`;
form.room.value = localStorage.getItem('cowatch.room') || '';

// Rooms this browser was in (room/arrival.js keeps the list), then the rooms their
// hosts listed on this server, with what is playing and how many watch.
function link(name, detail) {
  const item = document.createElement('li');
  const anchor = document.createElement('a');
  anchor.href = '/rooms/' + encodeURIComponent(name);
  anchor.textContent = name;
  item.append(anchor);
  if (detail) item.append(' ', Object.assign(document.createElement('span'), { className: 'detail', textContent: detail }));
  return item;
}
let mine = [];
try { mine = JSON.parse(localStorage.getItem('cowatch.rooms') || '[]'); } catch { mine = []; }
if (Array.isArray(mine) && mine.length) {
  document.getElementById('my-rooms').replaceChildren(...mine.slice(0, 10).map((name) => link(String(name))));
  document.getElementById('mine').hidden = false;
}
fetch('/rooms.json').then((response) => response.ok ? response.json() : { rooms: [] }).then(({ rooms }) => {
  if (!rooms?.length) return;
  document.getElementById('public-rooms').replaceChildren(...rooms.map((room) => {
    const watching = room.watching === 1 ? '1 watching' : `${room.watching} watching`;
    const what = room.title ? `${room.status === 'playing' ? 'playing' : room.status} "${room.title}"` : 'nothing playing yet';
    return link(room.name, `${what}, ${watching}`);
  }));
  document.getElementById('listed').hidden = false;
}).catch(() => {});
form.name.value = localStorage.getItem('cowatch.name') || '';
form.addEventListener('submit', (event) => {
  event.preventDefault();
  const room = form.room.value.trim().toLowerCase(); // room names are case-insensitive
  const name = form.name.value.trim();
  localStorage.setItem('cowatch.room', room);
  if (name) localStorage.setItem('cowatch.name', name);
  location.href = '/rooms/' + encodeURIComponent(room) + (name ? '?name=' + encodeURIComponent(name) : '');
});

// A link shared with this page (it is the web app's share target: a phone's share
// sheet opens /?url=...&text=...&title=...): "Watch this together", in a new room
// or one this browser remembers, then the room with ?watch=<link>. What is
// shared is only ever shown as text; model/share.js decides the rest.
const shared = sharedLink(new URLSearchParams(location.search));
if (shared) showShared(shared);

function showShared(shared) {
  const status = document.getElementById('shared-status');
  const watch = document.getElementById('watch-shared');
  document.getElementById('shared').hidden = false;
  let words;
  if (shared.found) {
    document.title = 'Watch this together - Cowatch';
    words = `Shared with you: ${shared.title ? `"${shared.title}", ` : ''}${shared.link}`;
    let kept = [];
    try { kept = JSON.parse(localStorage.getItem('cowatch.rooms') || '[]'); } catch { kept = []; }
    watch.choice.append(...rememberedRooms(kept).map((room) => new Option(room, room)));
    watch.room.value = suggestRoomName(shared.link, shared.title);
    const fresh = document.getElementById('shared-new');
    const choose = () => {
      // Only a new room has a name to type (a disabled field is not checked on submit).
      fresh.hidden = watch.choice.value !== '';
      watch.room.disabled = fresh.hidden;
    };
    watch.choice.addEventListener('change', choose);
    choose();
    watch.addEventListener('submit', (event) => {
      event.preventDefault();
      const address = watchAddress(watch.choice.value || watch.room.value, shared.link);
      if (address) location.href = address;
      else watch.room.reportValidity();
    });
    watch.hidden = false;
  } else {
    words = `${shared.words} What was shared: "${shared.shared}"`;
  }
  // The status is on the page before its words, so that a screen reader says them.
  setTimeout(() => { status.textContent = words; }, 100);
}
