// The room page: wires the connection, the server clock, the player and the
// page's controls together. Controls never act on the video directly: they send
// the same slash commands a terminal user would type, and the video follows the
// state the server sends back (sync.js).

import { Connection, deviceIdentity } from './connection.js';
import { ServerClock } from './clock.js';
import { PlayerSync, positionAt } from './sync.js';
import { Subtitles } from './subtitles.js';
import { isStale } from './sync/seq.js';
import { ResumeSlot, ownerKeyAfterWelcome, ownerStorageKey } from './kept.js';
import { copyText } from './copy.js';
import { Door, DOOR_ERRORS } from './door.js';
import { HostPanel } from './host-panel.js';
import { showSecret } from './secret-box.js';
import { OwnCopies } from './owncopy.js';
import {
  $, ChatLog, describeReason, describeStatus, formatTime, renderConnection, renderMembers, renderQueue, renderRoomControls,
} from './ui.js';

const ROOM_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const CHAT_PLACEHOLDER = 'Say something, or type a command: /help, /watch <url> [title]…';

// What a link carries for this page alone (an owner key, an invite) leaves the
// address bar before anything else happens, so that history, a shared screen or
// a bookmark does not keep it; the page sends no Referer either (no-referrer).
const fromLink = (() => {
  const params = new URLSearchParams(location.search);
  const taken = { owner: params.get('owner') || null, invite: params.get('invite') || null };
  if (params.has('owner') || params.has('invite')) {
    const clean = new URL(location.href);
    clean.searchParams.delete('owner');
    clean.searchParams.delete('invite');
    history.replaceState(null, '', clean);
  }
  return taken;
})();

const room = (() => {
  const raw = location.pathname.replace(/^\/rooms\//, '').replace(/\/$/, '');
  let name;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return raw; // not valid percent-encoding: refused below as not a room name
  }
  // Room names are case-insensitive and shown in lowercase (docs/protocol.md).
  const lower = name.toLowerCase();
  if (lower !== name) history.replaceState(null, '', `/rooms/${encodeURIComponent(lower)}${location.search}${location.hash}`);
  return lower;
})();
const log = new ChatLog($('log'));
const subtitles = new Subtitles($('video'), $('subtitles'), (text) => log.add('error', text));
const video = $('video');

/** Everything the page knows about the room, from the server's events. */
const model = {
  meId: null,
  participants: new Map(), // id → participant (+ lastChange)
  state: null,
};

const me = () => model.participants.get(model.meId) || null;

async function chooseName() {
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

async function main() {
  $('room-name').textContent = room;
  document.title = `${room} · Cowatch`;
  if (!ROOM_PATTERN.test(room)) {
    log.add('error', 'This is not a room name: 1 to 64 letters, digits, ".", "_" or "-".');
    return;
  }
  localStorage.setItem('cowatch.room', room);
  // The landing page lists the rooms this browser was in, most recent first.
  try {
    const known = JSON.parse(localStorage.getItem('cowatch.rooms') || '[]');
    const rooms = [room, ...(Array.isArray(known) ? known : []).filter((name) => name !== room)].slice(0, 10);
    localStorage.setItem('cowatch.rooms', JSON.stringify(rooms));
  } catch {
    localStorage.setItem('cowatch.rooms', JSON.stringify([room]));
  }
  const name = await chooseName();

  // The owner key this browser keeps for the room (it created the room, or a
  // link's key was accepted). A key from a link is presented instead, and kept
  // only once the welcome shows it made this page the owner (kept.js).
  const ownerStorage = ownerStorageKey(room);
  let linkKey = fromLink.owner;
  // This tab's member of the room, from an earlier load of this tab (a reload).
  const slot = new ResumeSlot(room);
  const connection = new Connection({
    room, name, player: true, device: deviceIdentity(), ownerKey: linkKey || localStorage.getItem(ownerStorage),
    invite: fromLink.invite, resumeToken: slot.take(),
  });
  // A reload or a closed tab: the browser closes the socket with 1001, which
  // keeps the member for the resume grace, and the next load of this tab takes
  // it back. (A page restored from the back-forward cache holds the slot again.)
  addEventListener('pagehide', () => slot.release());
  addEventListener('pageshow', (event) => {
    if (event.persisted) slot.keep(connection.resumeToken);
  });
  let leaving = false;
  // Player reports and clock samples are not queued while disconnected: the
  // state that follows a reconnect asks for them again.
  const send = (line) => connection.send(line);
  const clock = new ServerClock(send);
  const sync = new PlayerSync(video, clock, send);
  const roomLink = (query) => `${location.origin}/rooms/${encodeURIComponent(room)}?${query}`;
  const hostPanel = new HostPanel($('host-panel'), {
    room, send: (line) => command(line), secrets: $('secrets'), roomLink, toLocal: (ms) => clock.toLocal(ms),
  });
  // A room that asks a password: the door asks for it (masked) and tries again.
  const door = new Door($('door'), {
    room,
    onPassword: (password) => {
      connection.password = password;
      connection.retryNow();
    },
  });

  connection.addEventListener('status', ({ detail }) => {
    renderConnection($('connection'), $('connection-text'), $('retry'), detail);
    if (detail.phase === 'open') clock.start();
    else clock.stop();
    if (detail.phase === 'closed') {
      if (leaving) return;
      // Removed, refused or left: this tab's member is gone, nothing to resume.
      // (4002: another connection holds the member now; 4005: asked a password.)
      if (detail.code !== 4002 && detail.code !== 4005) slot.forget();
      if (!detail.code) {
        log.add('error', detail.reason || 'Disconnected.');
        return;
      }
      // Closed for good (removed, refused, replaced): the door says why, once,
      // in place of the banner; nothing typed here would be sent.
      $('connection').hidden = true;
      $('chat-input').disabled = true;
      $('chat-input').placeholder = 'You are not in this room any more.';
      door.shut(detail);
      renderPlayer();
    }
  });
  connection.addEventListener('event', ({ detail }) => handle(detail));

  function handle(event) {
    switch (event.type) {
      case 'welcome': {
        if (door.isShut) door.open();
        $('chat-input').disabled = false;
        $('chat-input').placeholder = CHAT_PLACEHOLDER;
        const returning = model.meId === event.you.id;
        model.meId = event.you.id;
        model.participants = new Map(event.participants.map((p) => [p.id, p]));
        model.participants.set(event.you.id, { ...model.participants.get(event.you.id), ...event.you });
        model.state = null; // the state follows; a restarted server may count seq anew
        sync.reset();
        sync.setMe(me());
        slot.keep(event.resume);
        const owner = ownerKeyAfterWelcome({
          linkKey, storedKey: localStorage.getItem(ownerStorage), presentedResume: connection.presented.resume, welcome: event,
        });
        linkKey = null; // answered: later connections present the key kept
        if (owner.store) localStorage.setItem(ownerStorage, owner.store);
        connection.ownerKey = owner.use;
        if (owner.verdict === 'created') {
          showSecret($('secrets'), {
            kind: 'owner',
            title: 'You created this room and own it',
            text: 'Keep this link: it makes you the owner again from any device, even after everyone has left '
              + '(this browser keeps the key too). Anyone who has it owns the room. Shown once.',
            values: [
              { label: 'Owner link', value: roomLink(`owner=${encodeURIComponent(event.ownerKey)}`) },
              { label: 'Owner key', value: event.ownerKey },
            ],
          });
          log.add('notice', 'You created this room and own it: keep the owner link shown beside the chat.');
        }
        if (!returning) {
          // What was said before this page came, as the server kept it.
          for (const line of event.chat || []) {
            log.add(line.me ? 'me' : 'chat', line.text, { name: line.name, at: line.at });
          }
        }
        log.add('system', returning
          ? 'Reconnected.'
          : `You are ${event.you.name} in room ${event.room}. Type /help for the commands.`);
        if (owner.verdict === 'accepted') {
          log.add('notice', 'The owner key in the link you opened was accepted: you own this room, and this browser keeps the key.');
        } else if (owner.verdict === 'refused') {
          log.add('error', 'The owner key in the link you opened was not accepted for this room. ' + (owner.use
            ? 'The owner key this browser kept for the room is unchanged, and used instead.'
            : 'Nothing was kept; you are in the room as a member.'));
        } else if (owner.verdict === 'unchecked') {
          log.add('notice', 'The owner key in the link you opened was not checked: this tab came back as the member it was, ' +
            'who already owns the room. The owner key this browser kept is unchanged.');
        }
        renderAll();
        // A refused link key: come back at once as the same member with the key
        // this browser kept, which makes it the owner again.
        if (owner.verdict === 'refused' && owner.use) connection.reopen();
        break;
      }
      case 'state':
        if (isStale(model.state, event)) return;
        model.state = event;
        sync.setState(own.update(event, me()));
        subtitles.update(event.session?.state === 'joined' ? event.session.activity : null);
        renderAll();
        break;
      case 'participant': {
        const participant = { ...event.participant, lastChange: event.change };
        const known = model.participants.has(participant.id);
        const previousName = model.participants.get(participant.id)?.name;
        model.participants.set(participant.id, participant);
        if (participant.id === model.meId) sync.setMe(participant);
        if (!known && participant.id !== model.meId) log.add('system', `${participant.name} arrived.`);
        if (event.change === 'renamed') {
          log.add('system', `${previousName || 'someone'} is now known as ${participant.name}.`);
        }
        renderAll();
        break;
      }
      case 'participant-left': {
        const gone = model.participants.get(event.id);
        model.participants.delete(event.id);
        const name = event.name || gone?.name || 'someone';
        const how = { kicked: 'was removed by a host', banned: 'was banned by a host' }[event.reason] || 'left';
        log.add('system', `${name} ${how}.`);
        if (event.reason === 'kicked' || event.reason === 'banned') hostPanel.refresh('bans');
        renderAll();
        break;
      }
      case 'chat':
        log.add(event.me ? 'me' : 'chat', event.text, { name: event.name, at: event.at });
        break;
      case 'notice':
        log.add('notice', event.text);
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
        if (event.command === 'resume' && event.code === 'forbidden' && scrub.suspended) {
          // Only hosts may move the group here: end the seek-bar suspension plainly.
          send('/resume userIsChangingCurrentTime');
          scrub.suspended = false;
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
  }

  // MARK: sharing a link (no command to learn)

  const shareForm = $('share-form');
  shareForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = $('share-url').value.trim();
    if (!url) return;
    const queueIt = event.submitter?.dataset.action === 'queue';
    command(`${queueIt ? '/queue' : '/watch'} ${url}`);
    $('share-url').value = '';
  });

  // MARK: own copies: a file from this computer, matched by identity, never uploaded

  const own = new OwnCopies({
    share: $('own-share'), shareTitle: $('own-title'), ask: $('own-ask'), askText: $('own-ask-text'),
    pick: $('own-pick'), none: $('own-none'),
  }, (line) => command(line), (kind, text) => log.add(kind, text));
  // A file picked (or refused) changes what this player follows, not the room's state.
  own.addEventListener('change', () => {
    if (model.state) sync.setState(own.update(model.state, me()));
  });

  // MARK: chat input (anything typed goes to the room as is)

  const input = $('chat-input');
  const typed = []; // lines sent from the input (not `history`: main() uses window.history above)
  let historyIndex = 0;
  $('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const line = input.value;
    if (!line.trim()) return;
    if (!connection.send(line, { queue: true })) log.add('system', 'Not connected: sent when the connection is back.');
    typed.push(line);
    historyIndex = typed.length;
    input.value = '';
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowUp' && historyIndex > 0) {
      input.value = typed[--historyIndex];
      event.preventDefault();
    } else if (event.key === 'ArrowDown' && historyIndex < typed.length) {
      input.value = typed[++historyIndex] ?? '';
      event.preventDefault();
    }
  });

  // MARK: controls: each sends a command

  const command = (line) => {
    if (!connection.send(line)) log.add('error', `Not connected: ${line} was not sent.`);
  };
  $('play').addEventListener('click', () => {
    const status = model.state?.playback.status;
    command(status === 'playing' || status === 'waiting' ? '/pause' : '/play');
  });
  $('rate').addEventListener('change', (event) => command(`/rate ${event.target.value}`));

  // MARK: this player only: volume, mute, fullscreen, keys (none of them acts for the room)

  const renderSound = () => {
    $('mute').textContent = video.muted || video.volume === 0 ? 'Unmute' : 'Mute';
    $('volume').value = String(video.muted ? 0 : video.volume);
  };
  const toggleMute = () => {
    video.muted = !video.muted;
    if (!video.muted && video.volume === 0) video.volume = 1;
    renderSound();
  };
  const toggleFullscreen = () => {
    // The screen (video and its overlay), so the group's messages stay visible;
    // the video element keeps playing on the same clock.
    if (document.fullscreenElement) document.exitFullscreen?.();
    else document.querySelector('.screen')?.requestFullscreen?.().catch(() => {});
  };
  $('mute').addEventListener('click', toggleMute);
  $('volume').addEventListener('input', (event) => {
    video.volume = Number(event.target.value);
    video.muted = video.volume === 0;
    renderSound();
  });
  $('fullscreen').addEventListener('click', toggleFullscreen);
  document.addEventListener('keydown', (event) => {
    // Keys typed into a field, or that a focused control handles itself (space on
    // a button, arrows on a slider), are theirs, not shortcuts.
    // A held key repeats: one press, one action. The chat log scrolls with space.
    const target = event.target;
    const own = target instanceof HTMLElement
      && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON'].includes(target.tagName)
        || target.id === 'log');
    if (own || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    switch (event.key) {
      case ' ':
        if (!$('play').disabled) $('play').click();
        break;
      case 'ArrowLeft':
        if (!$('seek').disabled) command('/seek -5');
        break;
      case 'ArrowRight':
        if (!$('seek').disabled) command('/seek +5');
        break;
      case 'm': case 'M':
        toggleMute();
        break;
      case 'f': case 'F':
        toggleFullscreen();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
  renderSound();
  $('catchup').addEventListener('click', () => command('/catchup'));
  $('next').addEventListener('click', () => command('/next'));
  $('autoplay').addEventListener('change', (event) => {
    command(`/autoplay ${event.target.checked ? 'on' : 'off'}`);
    event.target.checked = !!me()?.autoplay; // shown as the server confirms it
  });
  $('leave').addEventListener('click', () => command('/leave'));
  $('join').addEventListener('click', () => command('/join'));
  $('end').addEventListener('click', () => $('end-dialog').showModal());
  $('end-dialog').addEventListener('close', () => {
    if ($('end-dialog').returnValue === 'end') command('/end');
  });
  $('retry').addEventListener('click', () => connection.retryNow());
  $('quit').addEventListener('click', async () => {
    // Leaving on purpose: the member goes at once (1000), this tab keeps nothing to resume.
    leaving = true;
    slot.forget();
    await connection.close();
    location.assign('/');
  });
  $('share').addEventListener('click', shareLink);
  $('overlay-action').addEventListener('click', () => {
    switch (sync.mode) {
      case 'blocked': sync.unblock(); break;
      case 'error': sync.retryMedia(); break;
      case 'left': command('/join'); break;
      default: break;
    }
  });

  // The seek bar: dragging separates this player from the group (SharePlay's
  // userIsChangingCurrentTime suspension) and previews locally; releasing
  // proposes the new time to everyone with /resume ... at <time>.
  const seek = $('seek');
  const scrub = { active: false, suspended: false };
  const beginScrub = () => {
    if (scrub.active) return;
    scrub.active = true;
    sync.scrubbing = true;
    if (me()?.joined && !me().suspensions.includes('userIsChangingCurrentTime')) {
      send('/suspend userIsChangingCurrentTime');
      scrub.suspended = true;
    }
  };
  const endScrub = (moved) => {
    if (!scrub.active) return;
    scrub.active = false;
    sync.scrubbing = false;
    if (moved) command(`/resume userIsChangingCurrentTime at ${Number(seek.value).toFixed(3)}`);
    else if (scrub.suspended) command('/resume userIsChangingCurrentTime');
    scrub.suspended = false;
  };
  seek.addEventListener('pointerdown', beginScrub);
  seek.addEventListener('input', () => {
    beginScrub();
    $('position').textContent = formatTime(Number(seek.value));
    sync.preview(Number(seek.value));
  });
  seek.addEventListener('change', () => endScrub(true));
  // A press without a move ends the suspension without moving anyone.
  const release = () => setTimeout(() => endScrub(false), 0);
  seek.addEventListener('pointerup', release);
  seek.addEventListener('pointercancel', release);

  async function shareLink() {
    const link = `${location.origin}/rooms/${encodeURIComponent(room)}`;
    const copied = await copyText(link);
    $('share-status').textContent = copied ? 'Link copied.' : '';
    if (!copied) log.add('system', `Share this link: ${link}`);
    setTimeout(() => { $('share-status').textContent = ''; }, 3000);
  }

  // MARK: rendering

  function renderAll() {
    renderMembers($('members'), model.participants, model.meId, (line) => command(line));
    renderRoomControls($('room-controls'), me(), model.state?.access, (line) => command(line));
    hostPanel.render(me(), model.state?.access);
    renderQueue($('queue'), $('queue-empty'), model.state?.queue || [],
      me()?.role === 'host' ? (line) => command(line) : null);
    const activity = model.state?.session?.state === 'joined' ? model.state.session.activity : null;
    const title = activity ? (activity.title || activity.url) : '';
    $('title').textContent = title;
    document.title = activity ? `${title} · ${room} · Cowatch` : `${room} · Cowatch`;
    renderControls();
    renderPlayer();
  }

  function renderControls() {
    const state = model.state;
    const self = me();
    const active = state?.session?.state === 'joined' && state.playback.status !== 'idle';
    const joined = !!self?.joined;
    const mayControl = state?.policy?.control !== 'hosts' || self?.role === 'host';
    const transport = active && joined && mayControl;
    const status = state?.playback.status;
    const play = $('play');
    play.disabled = !transport;
    play.textContent = status === 'playing' ? 'Pause' : status === 'waiting' ? 'Pause (starting…)' : 'Play';
    play.setAttribute('aria-label', status === 'playing' || status === 'waiting' ? 'Pause for everyone' : 'Play for everyone');
    const rate = $('rate');
    rate.disabled = !transport;
    if (state) {
      const value = String(state.playback.rate);
      if (![...rate.options].some((o) => o.value === value)) rate.add(new Option(`${value}×`, value));
      rate.value = value;
    }
    $('catchup').disabled = !(active && joined);
    $('next').disabled = !(mayControl && (state?.queue?.length ?? 0) > 0);
    $('autoplay').checked = !!self?.autoplay;
    $('autoplay').disabled = !self;
    $('leave').hidden = !joined;
    $('join').hidden = joined || !(state?.session?.state === 'joined');
    $('end').disabled = !(state?.session?.state === 'joined' && joined && mayControl);
  }

  function renderPlayer() {
    const snapshot = sync.snapshot();
    const state = model.state;
    // One status, from the snapshot alone: its colour, words and number agree.
    const status = door.isShut ? null
      : describeStatus(snapshot, sync.state, me(), { offset: clock.offset, uncertainty: clock.uncertainty });
    $('player-line').hidden = !status;
    const words = status?.words ?? '';
    if ($('player-status').textContent !== words) $('player-status').textContent = words;
    $('player-drift').textContent = status?.drift ?? '';
    if (status) {
      const badge = $('sync-indicator');
      if (badge.dataset.kind !== status.kind) badge.dataset.kind = status.kind;
      $('player-line').title = status.title;
    }
    // Overlay: what the viewer must know or do.
    const overlay = $('overlay');
    const text = $('overlay-text');
    const action = $('overlay-action');
    let message = null;
    let button = null;
    switch (snapshot.mode) {
      case 'idle':
        message = state?.session?.state === 'invalidated'
          ? 'The session ended. Paste a video link below to start another.'
          : 'Nothing is playing yet. Paste a video link below to watch it together.';
        break;
      case 'left':
        message = 'You left the group session. You are still in the room and its chat.';
        button = 'Join the session again';
        break;
      case 'error':
        message = `This video cannot be played here: ${snapshot.mediaError}. The others keep watching; ` +
          'your player is separated from the group (coordinatedPlaybackNotPossible).';
        button = 'Try again';
        break;
      case 'blocked':
        message = 'Your browser did not allow playback to start by itself.';
        button = '▶ Click to join playback';
        break;
      default:
        break;
    }
    if (door.isShut) message = button = null; // the door says all there is
    overlay.hidden = message == null;
    overlay.dataset.mode = snapshot.mode;
    // Nothing playing: the link box comes up under the video, where the overlay points.
    $('player').dataset.idle = String(snapshot.mode === 'idle' && !door.isShut);
    text.textContent = message || '';
    action.hidden = button == null;
    action.textContent = button || '';

    const seek = $('seek');
    const shown = sync.readings(); // the item's player: the <video> or a provider's
    const duration = shown.duration;
    if (Number.isFinite(duration) && seek.max !== String(duration)) seek.max = String(duration);
    $('duration').textContent = formatTime(duration);
    if (!scrub.active) {
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

  let lastPaint = 0;
  let lastMode = null;
  sync.addEventListener('change', () => {
    // The player changes every tick; four repaints a second are plenty for text.
    const now = performance.now();
    if (now - lastPaint < 250 && sync.mode === lastMode) return;
    lastPaint = now;
    lastMode = sync.mode;
    renderPlayer();
    renderControls();
  });
  sync.addEventListener('loadedmetadata', renderAll);
  sync.addEventListener('notice', ({ detail }) => log.add('notice', detail));

  // For people debugging a room, and for the e2e test.
  window.cowatch = {
    connection, clock, sync, model,
    snapshot: () => ({ ...sync.snapshot(), me: me(), reasons: (me()?.suspensions || []).map(describeReason) }),
  };

  connection.open();
}

main().catch((error) => {
  log.add('error', `The page failed to start: ${error.message}`);
  console.error(error);
});
