// What the room page is made of: the room's model as the server's events leave
// it, and the page's parts (the connection, the server clock, the player, the
// host panel, the door, own copies), made in this order. The parts are wired by
// the modules beside this one, each handed only what it reads; room.js lists
// them. What those modules keep is their own (the line typed last, the seek bar
// held, leaving on purpose), so that nothing here is written from outside.

import { Connection, deviceIdentity } from '../model/connection-socket.js';
import { ServerClock } from '../sync/server-clock.js';
import { PlayerSync } from '../sync/player-sync.js';
import { KeptOwnerKey, ResumeSlot } from '../model/kept.js';
import { Door } from '../model/door-dom.js';
import { HostPanel } from '../model/host-panel-dom.js';
import { OwnCopies } from '../sync/own-copies.js';
import { Announcements } from './announcements.js';
import { $ } from '../model/ui-dom.js';
import { describeReason } from '../model/ui.js';
import { sharedLinkWarning } from '../model/watch-choice.js';
import { emptyModel } from '../model/events.js';

export class RoomPage {
  /**
   * @param {object} p
   * @param {string} p.room the room's name (valid)
   * @param {string} p.name the name to join with
   * @param {{ owner: string|null, invite: string|null }} p.fromLink what the link carried for this page
   * @param {import('../model/ui-dom.js').ChatLog} p.log the chat log
   * @param {HTMLVideoElement} p.video the page's `<video>`
   */
  constructor({ room, name, fromLink, log, video }) {
    this.room = room;
    this.log = log;
    /** Everything the page knows about the room, from the server's events (model/events.js). */
    this.model = emptyModel();
    // The owner key this browser keeps for the room, or a link's (model/kept.js).
    this.ownerKey = new KeptOwnerKey(room, fromLink.owner);
    // This tab's member of the room, from an earlier load of this tab (a reload).
    this.slot = new ResumeSlot(room);
    this.connection = new Connection({
      room, name, player: true, device: deviceIdentity(), ownerKey: this.ownerKey.presented(),
      invite: fromLink.invite, resumeToken: this.slot.take(),
    });
    // Player reports and clock samples are not queued while disconnected: the
    // state that follows a reconnect asks for them again.
    const send = (line) => this.send(line);
    this.clock = new ServerClock(send);
    this.sync = new PlayerSync(video, this.clock, send);
    this.hostPanel = new HostPanel($('host-panel'), {
      room, send: (line) => this.command(line), secrets: $('secrets'),
      roomLink: (query) => this.roomLink(query), toLocal: (ms) => this.clock.toLocal(ms),
    });
    // A room that asks a password: the door asks for it (masked) and tries again.
    this.door = new Door($('door'), {
      room,
      onPassword: (password) => {
        this.connection.password = password;
        this.connection.retryNow();
      },
    });
    // Own copies: a file from this computer, matched by identity, never uploaded.
    this.own = new OwnCopies({
      share: $('own-share'), shareTitle: $('own-title'), ask: $('own-ask'), askText: $('own-ask-text'),
      pick: $('own-pick'), none: $('own-none'),
    }, (line) => this.command(line), (kind, text) => log.add(kind, text));
    // What changes for everyone, said to screen readers without flooding them.
    this.announcements = new Announcements($('announcer'));
    // The addresses this page has told its person about already (an http://
    // link shared from this https:// page), so that the player does not say it again.
    this.toldAbout = new Set();
  }

  /** This page's member, once welcomed. */
  me() {
    return this.model.participants.get(this.model.meId) || null;
  }

  /** Sends a line the player or the clock makes; false while disconnected. */
  send(line) {
    return this.connection.send(line);
  }

  /** Sends a command the viewer asked for; while disconnected, says it was not sent. */
  command(line) {
    if (!this.connection.send(line)) {
      this.log.add('error', `Not connected: ${line} was not sent.`);
      return;
    }
    this.warnOfInsecureLink(line);
  }

  /** A `/watch` or `/queue` line sent from this page: an http:// link shared
   *  from an https:// page, which browsers in the room will not play as it
   *  is, is said so (in the log and to screen readers). */
  warnOfInsecureLink(line) {
    const warning = sharedLinkWarning(line, location.protocol);
    if (!warning) return;
    this.toldAbout.add(warning.url);
    this.log.add('notice', warning.words);
    this.announcements.say(warning.words);
    this.announcements.speak();
  }

  /** The room's address with a query (`owner=...`, `invite=...`). */
  roomLink(query) {
    return `${location.origin}/rooms/${encodeURIComponent(this.room)}?${query}`;
  }

  /** For people debugging a room, and for the e2e test (`window.cowatch`).
   *  @param {() => { act: Function }} mediaSession the media controls (room/media-session.js) */
  debugHandle(mediaSession) {
    const { connection, clock, sync, model } = this;
    return {
      connection, clock, sync, model,
      // What a media-session action (the lock screen's, a headset's) does, as the browser would call it.
      mediaAction: (action, details = {}) => mediaSession().act(action, details),
      snapshot: () => ({ ...sync.snapshot(), me: this.me(), reasons: (this.me()?.suspensions || []).map(describeReason) }),
    };
  }
}
