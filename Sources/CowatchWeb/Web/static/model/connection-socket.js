// The room connection: one WebSocket speaking `cowatch.v1.json`, which comes back
// by itself after a drop and takes the same member back with the resume token.
// Whether and when it comes back, and what a close is said as, is decided in
// model/connection.js; this file opens the sockets and keeps the timer.
//
// Events (an EventTarget):
//   'status'  detail: { phase, attempt, delay, reason }   phase is one of
//             'connecting' | 'open' | 'reconnecting' | 'closed' (for good)
//   'event'   detail: one server event object ({ type: 'state', ... })

import { ConnectionLife } from './connection.js';
import { DEFAULT_LIMITS, limitsOf, packLines } from './line-limit.js';

/** A random identity this browser keeps (`device=`), so that a ban holds when
 *  someone comes back under another name (docs/security.md). */
export function deviceIdentity(storage = globalThis.localStorage) {
  let device = storage?.getItem('cowatch.device');
  if (!device) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    device = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
    storage?.setItem('cowatch.device', device);
  }
  return device;
}

export class Connection extends EventTarget {
  /**
   * @param {object} options
   * @param {string} options.room   room name (already valid: it is the URL path)
   * @param {string} options.name   display name asked for
   * @param {boolean} options.player this page drives a media player (player=1)
   */
  constructor({ room, name, player, device = null, ownerKey = null, invite = null, resumeToken = null }) {
    super();
    this.room = room;
    this.name = name;
    this.player = player;
    this.device = device;
    this.ownerKey = ownerKey; // makes this page the room's owner (owner=)
    this.invite = invite; // an invite link's token (invite=), until the first welcome
    this.password = null; // the room password (password=), until the first welcome
    this.resumeToken = resumeToken; // from the last `welcome` (or this tab's last load): the same member
    this.presented = { resume: null, owner: null }; // what the current socket was opened with
    this.socket = null;
    this.life = new ConnectionLife();
    this.timer = null;
    this.outbox = []; // lines typed while disconnected, sent on the next open
    this.messageBytes = DEFAULT_LIMITS.messageBytes; // the server's, once its welcome says it
  }

  /** Attempts since the last open connection. */
  get attempt() {
    return this.life.attempt;
  }

  url() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const params = new URLSearchParams();
    if (this.name) params.set('name', this.name);
    if (this.player) params.set('player', '1');
    if (this.resumeToken) params.set('resume', this.resumeToken);
    if (this.device) params.set('device', this.device);
    if (this.ownerKey) params.set('owner', this.ownerKey);
    if (this.invite) params.set('invite', this.invite);
    if (this.password) params.set('password', this.password);
    return `${scheme}//${location.host}/rooms/${encodeURIComponent(this.room)}?${params}`;
  }

  open() {
    this.status(this.life.opening());
    let socket;
    try {
      this.presented = { resume: this.resumeToken, owner: this.ownerKey };
      socket = new WebSocket(this.url(), 'cowatch.v1.json');
    } catch (error) {
      this.status('closed', { reason: `Cannot connect: ${error.message}` });
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.life.opened();
      this.status('open');
      // What was typed meanwhile, in order, in messages the server takes (a
      // message over its size limit would close this connection again).
      for (const message of packLines(this.outbox.splice(0), this.messageBytes)) socket.send(message);
    });
    socket.addEventListener('message', (message) => {
      // A socket let go by reopen() may still deliver what was in flight.
      if (this.socket !== socket || typeof message.data !== 'string') return;
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return; // not ours to interpret: the contract says one JSON object per frame
      }
      if (event.type === 'welcome') this.messageBytes = limitsOf(event).messageBytes;
      if (event.type === 'welcome' && event.resume) {
        // The resume token lets this member back in from now on.
        this.resumeToken = event.resume;
        this.invite = null;
        this.password = null;
      }
      this.dispatchEvent(new CustomEvent('event', { detail: event }));
    });
    socket.addEventListener('close', (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      const next = this.life.closed(close, Math.random());
      if (next.phase === 'closed') {
        const { phase, ...extra } = next;
        this.status(phase, extra);
        return;
      }
      this.scheduleReconnect(next);
    });
    // An 'error' is always followed by 'close', which does the work.
  }

  scheduleReconnect({ attempt, delay, reason }) {
    this.status('reconnecting', { attempt, delay, reason });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Reconnect now (the "retry now" button), skipping the remaining backoff. */
  retryNow() {
    if (this.socket) return;
    clearTimeout(this.timer);
    this.open();
  }

  get isOpen() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /**
   * Sends one line (a command or chat) exactly as given. Returns false when the
   * connection is down; `queue: true` keeps the line for the next connection
   * instead (what a person typed), while player reports are dropped: the state
   * that follows a reconnect asks for them again.
   */
  send(line, { queue = false } = {}) {
    if (this.isOpen) {
      this.socket.send(line);
      return true;
    }
    if (queue) this.outbox.push(line);
    return false;
  }

  /**
   * Leaves the room on purpose: 1000 tells the server the member is gone at once
   * (docs/protocol.md, "Close codes"), where a reload or a closed tab (the
   * browser's 1001) keeps it for the resume grace. Resolves once the socket has
   * closed, or after `waitMs` if the server does not answer, so that a page
   * navigating away afterwards does not cut the close short.
   */
  close({ waitMs = 2000 } = {}) {
    this.life.stop();
    clearTimeout(this.timer);
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      socket.addEventListener('close', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
      socket.close(1000, 'bye');
    });
  }

  /**
   * Opens a new connection at once with what is set now (the resume token, the
   * owner key), as the same member. The current socket is let go with a code
   * other than 1000, so the member is kept until the new one takes it back.
   */
  reopen() {
    const previous = this.socket;
    this.socket = null;
    clearTimeout(this.timer);
    this.life.restart();
    previous?.close(4000, 'reconnecting');
    this.open();
  }

  status(phase, extra = {}) {
    this.phase = phase;
    this.dispatchEvent(new CustomEvent('status', { detail: { phase, attempt: this.attempt, ...extra } }));
  }
}
