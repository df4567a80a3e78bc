// The page drawn from what it knows: the members, the room's controls, the host
// panel, the queue, the title, the transport and the player's status, overlay
// and seek bar.

import { positionAt } from '../sync/timeline.js';
import { $, renderMembers, renderQueue, renderRoomControls } from '../model/ui-dom.js';
import { describeStatus, formatTime, overlayWords, someoneElseCanPlay } from '../model/ui.js';

/**
 * @param {object} p what the page is drawn from
 * @param {string} p.room the room's name
 * @param {object} p.model the room's model (model/events.js)
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {(line: string) => void} p.command a command the viewer asked for
 * @param {import('../model/host-panel-dom.js').HostPanel} p.hostPanel
 * @param {import('../sync/own-copies.js').OwnCopies} p.own
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {import('../sync/server-clock.js').ServerClock} p.clock
 * @param {import('../model/door-dom.js').Door} p.door
 * @param {import('./announcements.js').Announcements} p.announcements
 * @param {() => boolean} p.seekBarHeld whether the viewer holds the seek bar (room/seek-bar.js)
 * @param {() => { render: () => void }} p.mediaSession the media controls (room/media-session.js), once wired
 * @returns {{ all: () => void, controls: () => void, player: () => void }}
 */
export function pageRenderer(p) {
  return { all: () => renderAll(p), controls: () => renderControls(p), player: () => renderPlayer(p) };
}

function renderAll(p) {
  const { command, model, room } = p;
  const me = p.me();
  renderMembers($('members'), model.participants, model.meId, command, model.voice);
  renderRoomControls($('room-controls'), me, model.state?.access, command);
  p.hostPanel.render(me, model.state?.access);
  renderQueue($('queue'), $('queue-empty'), model.state?.queue || [],
    me?.role === 'host' ? command : null);
  const activity = model.state?.session?.state === 'joined' ? model.state.session.activity : null;
  const title = activity ? (activity.title || activity.url) : '';
  $('title').textContent = title;
  $('title').hidden = !title; // no empty heading before anything plays
  document.title = activity ? `${title} · ${room} · Cowatch` : `${room} · Cowatch`;
  renderControls(p);
  renderPlayer(p);
}

/** The transport: who may play, pause, change the rate, catch up, skip, leave, join or end. */
function renderControls({ me, model, own, sync }) {
  const state = model.state;
  const self = me();
  const active = state?.session?.state === 'joined' && state.playback.status !== 'idle';
  const joined = !!self?.joined;
  const mayControl = state?.policy?.control !== 'hosts' || self?.role === 'host';
  // An own copy this page has no file for: it is not watching, so nothing here
  // could play, pause or move its video; the video area asks for the copy.
  const lacking = own.lacking();
  const transport = active && joined && mayControl && !lacking;
  const status = state?.playback.status;
  const play = $('play');
  play.disabled = !transport;
  if (lacking) play.title = 'Pick your copy of the file (over the video) to watch and control it with everyone';
  else play.removeAttribute('title');
  play.textContent = status === 'playing' ? 'Pause' : status === 'waiting' ? 'Pause (starting…)' : 'Play';
  play.setAttribute('aria-label', status === 'playing' || status === 'waiting' ? 'Pause for everyone' : 'Play for everyone');
  const rate = $('rate');
  rate.disabled = !transport;
  if (state) {
    const value = String(state.playback.rate);
    if (![...rate.options].some((o) => o.value === value)) rate.add(new Option(`${value}×`, value));
    rate.value = value;
  }
  // Alone or together (room/alone.js): a pause of one's own and the way back, a start without waiting.
  const apart = sync.setApartByPage;
  const alone = !!sync.alone;
  const pauseMe = $('pause-me');
  pauseMe.hidden = !(active && joined && !lacking) || alone;
  pauseMe.disabled = !apart && status !== 'playing' && status !== 'waiting';
  pauseMe.textContent = apart ? 'Back to the group' : 'Pause just for me';
  pauseMe.title = apart ? 'Play along with the room again, from where it is now' : 'Pause your video only; the others watch on';
  if (apart) {
    play.disabled = false;
    play.textContent = 'Play (back to the group)';
    play.setAttribute('aria-label', 'Play, back with the group');
  }
  $('play-now').hidden = !(transport && status === 'waiting' && !apart);
  $('catchup').disabled = !(active && joined) || lacking;
  $('next').disabled = !(mayControl && (state?.queue?.length ?? 0) > 0);
  $('autoplay').checked = !!self?.autoplay;
  $('autoplay').disabled = !self;
  $('leave').hidden = !joined || alone;
  $('join').hidden = !alone && (joined || !(state?.session?.state === 'joined'));
  $('join').textContent = alone ? 'Join session (stop watching alone)' : 'Join session';
  $('end').disabled = !(state?.session?.state === 'joined' && joined && mayControl);
}

/** The player's status line, its overlay (what the viewer must know or do) and the seek bar. */
function renderPlayer({ announcements, clock, door, me, mediaSession, model, seekBarHeld, sync }) {
  const snapshot = sync.snapshot();
  const state = model.state;
  // One status, from the snapshot alone: its colour, words and number agree.
  const status = door.isShut ? null
    : describeStatus(snapshot, sync.state, me(), { offset: clock.offset, uncertainty: clock.uncertainty });
  $('player-line').hidden = !status;
  const words = status?.words ?? '';
  if ($('player-status').textContent !== words) $('player-status').textContent = words;
  $('player-drift').textContent = status?.drift ?? '';
  // A paused player's badge ("Paused together at ...") has the colour of being
  // in sync, but is not said: the room's notice says who paused. It counts as no
  // badge, so that "Playing in sync" is said again when the room plays, however
  // quickly the player got there (a paused badge of the same kind kept it unsaid).
  announcements.status(performance.now(), snapshot.mode === 'paused' ? null : status?.kind ?? null, words);
  announcements.speak();
  if (status) {
    const badge = $('sync-indicator');
    if (badge.dataset.kind !== status.kind) badge.dataset.kind = status.kind;
    $('player-line').title = status.title;
  }
  // Overlay: what the viewer must know or do.
  const overlay = $('overlay');
  const text = $('overlay-text');
  const action = $('overlay-action');
  mediaSession().render();
  let { message, button } = overlayWords(snapshot, {
    ended: state?.session?.state === 'invalidated',
    othersPlay: () => someoneElseCanPlay(model.participants, model.meId),
  });
  // An own copy asked for over the video (sync/own-copies.js) says what plays: no other sentence there.
  const asking = !$('own-ask').hidden;
  if (door.isShut || asking) message = button = null; // the door, or the ask, says all there is
  overlay.hidden = message == null;
  overlay.dataset.mode = snapshot.mode;
  // Nothing playing: the link box comes up under the video, where the overlay points.
  $('player').dataset.idle = String(snapshot.mode === 'idle' && !door.isShut && !asking);
  text.textContent = message || '';
  action.hidden = button == null;
  action.textContent = button || '';

  const seek = $('seek');
  const shown = sync.readings(); // the item's player: the <video> or a provider's
  // Without a file of its own the player knows no length: the room's item says it.
  const activity = state?.session?.state === 'joined' ? state.session.activity : null;
  const duration = Number.isFinite(shown.duration) || !Number.isFinite(activity?.duration) ? shown.duration : activity.duration;
  if (Number.isFinite(duration) && seek.max !== String(duration)) seek.max = String(duration);
  $('duration').textContent = formatTime(duration);
  if (!seekBarHeld()) {
    let position = shown.currentTime;
    if (shown.readyState < 1 && state && state.playback.status !== 'idle') {
      position = positionAt({ ...state.playback, playing: state.playback.status === 'playing' }, clock.now());
    }
    seek.value = String(position);
    $('position').textContent = formatTime(position);
    seek.setAttribute('aria-valuetext', `${formatTime(position)} of ${formatTime(duration)}`);
  }
  $('seek').disabled = $('play').disabled || !Number.isFinite(duration);
  // A live stream has no timeline to seek in (the room refuses /seek): no seek bar, no times.
  const live = shown.live === true || duration === Infinity;
  seek.hidden = live;
  $('position').parentElement.hidden = live;
}
