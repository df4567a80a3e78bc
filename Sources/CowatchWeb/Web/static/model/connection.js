// The room connection's life, pure: whether a close is for good, what it is said
// as, and when to try again. connection-socket.js owns the socket and the timer and
// asks this module at each turn; the rules are here, tested without a socket or
// a clock (Tests/js/connection.test.mjs), as the terminal client's are in
// Sources/CowatchClient/ClientLife.swift.
//
// The rules, in short:
// - A close the protocol calls final (docs/protocol.md, "Close codes": removed,
//   replaced, refused, locked, a password asked), or one after the page left on
//   purpose, is final: it is said once, with the server's reason when that adds
//   something.
// - Any other close comes back by itself after a growing, jittered delay, so a
//   room full of browsers does not return in one burst; an open connection
//   starts the count again.
// - 4010 (a cluster node says the room moved, docs/cluster.md) comes back at
//   once, spread over a tenth of a second.

/** Close codes after which reconnecting would be wrong (docs/protocol.md), with
 *  what to tell the person; the server's reason, when it gives one, follows. */
export const FINAL_CLOSES = new Map([
  [4001, 'You were removed from the room by a host.'],
  [4002, 'This room was opened again in another window; this one is disconnected.'],
  [4003, 'You cannot enter this room right now.'],
  [4004, 'This room is locked: only an invite link from a host lets you in.'],
  [4005, 'This room asks for a password.'],
]);

/** Backoff between attempts: quick at first (a server restart or a Wi-Fi
 *  hiccup), then every 10 s at most. */
export const BACKOFF_MS = Object.freeze([250, 500, 1000, 2000, 4000, 7000, 10000]);

/** Each delay is the backoff's step times a draw in [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/** 4010: the room moved to another node; the delay is a draw in [0, MOVED_SPREAD_MS]. */
export const MOVED_SPREAD_MS = 100;

const capitalized = (text) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/**
 * The words for a close for good: the protocol's sentence for its code, and the
 * server's reason after it unless it only says the same again. A locked room's
 * reason, when it differs from the usual words, is the whole story (an invite
 * link that no longer lets anyone in).
 * @param {{ code: number, reason?: string }} close
 * @returns {string}
 */
export function finalWords({ code, reason }) {
  const final = FINAL_CLOSES.get(code);
  const repeats = reason && final?.toLowerCase().startsWith(reason.toLowerCase());
  if (code === 4004 && reason && !repeats) return `${capitalized(reason)}.`;
  if (final && reason && !repeats && code !== 4004) return `${final} ${capitalized(reason)}.`;
  return final || reason || 'Disconnected.';
}

/** What a close that will be retried is said as ("Reconnecting: <reason>"). */
export function retryReason({ code, reason }) {
  if (code === 1001) return 'the server is restarting';
  if (code === 4010) return 'the room moved to another server';
  return reason || (code === 1006 ? 'connection lost' : `closed (${code})`);
}

/** How long to wait before attempt `attempt + 1`, from one draw of `random` in [0, 1). */
export function retryDelay(code, attempt, random) {
  if (code === 4010) return Math.round(MOVED_SPREAD_MS * random);
  const base = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];
  return Math.round(base * (1 - JITTER + 2 * JITTER * random));
}

/**
 * The connection's life as a value: the attempts made since the last open
 * connection, and whether the page has left on purpose.
 */
export class ConnectionLife {
  constructor() {
    this.attempt = 0;
    this.stopped = false;
  }

  /** A socket is about to be opened: the phase the page shows meanwhile. */
  opening() {
    this.stopped = false;
    return this.attempt === 0 ? 'connecting' : 'reconnecting';
  }

  /** The socket opened: the next drop starts the backoff again. */
  opened() {
    this.attempt = 0;
  }

  /** The page leaves on purpose: the close that follows is final. */
  stop() {
    this.stopped = true;
  }

  /** A new socket at once, as the same member (connection-socket.js, reopen). */
  restart() {
    this.attempt = 0;
  }

  /**
   * A close of the current socket, and what to do about it: either
   * `{ phase: 'closed', reason, code, serverReason }`, final, or
   * `{ phase: 'reconnecting', attempt, delay, reason }`, to try again after
   * `delay` ms. `random` is one draw in [0, 1) for the jitter.
   * @param {{ code: number, reason?: string }} close
   * @param {number} random
   */
  closed(close, random) {
    if (FINAL_CLOSES.has(close.code) || this.stopped) {
      return { phase: 'closed', reason: finalWords(close), code: close.code, serverReason: close.reason };
    }
    const delay = retryDelay(close.code, this.attempt, random);
    this.attempt += 1;
    return { phase: 'reconnecting', attempt: this.attempt, delay, reason: retryReason(close) };
  }
}
