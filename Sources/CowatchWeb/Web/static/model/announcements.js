// What changes for everyone, said to a screen reader through one live region:
// the room's news in the server's words ("alice paused at 12:03"), what people
// say in the chat, the sync badge's changes and the connection's. Handed over as
// it comes, a busy room would talk over itself without end, so what is said and
// when is decided here, as a value (`now` in, sentences out):
//
// - one sentence at a time, `gapMs` apart;
// - news about playback is one slot: a pause said after a play not yet said
//   replaces it (three quick seeks are one sentence, the last);
// - at most `maxWaiting` sentences wait; past that the oldest go, and the next
//   one said first tells how many are only in the chat log;
// - the badge is said once its new state has held `settleMs`, so that a player
//   that catches up in a moment says nothing; the connection only when its
//   phase changes, never its countdown.
//
// The chat log itself (role="log") holds every line, to be read at will; the
// page (room/announcements.js) puts these sentences in the live region.

/** Causes (docs/protocol.md, `notice`) of news about where and how the room plays. */
const PLAYBACK_CAUSES = new Set(['play', 'pause', 'seek', 'resume', 'rate', 'ready', 'stall', 'ended']);

export const ANNOUNCE_GAP_MS = 1500;
export const BADGE_SETTLE_MS = 2000;
export const MAX_WAITING = 4;

export class Announcer {
  constructor({ gapMs = ANNOUNCE_GAP_MS, settleMs = BADGE_SETTLE_MS, maxWaiting = MAX_WAITING } = {}) {
    this.gapMs = gapMs;
    this.settleMs = settleMs;
    this.maxWaiting = maxWaiting;
    this.waiting = []; // { text, slot }
    this.dropped = 0;
    this.badge = null; // { kind, words, since } as last rendered
    this.saidKind = null; // the badge's state last said, or known without saying
    this.phase = null;
    this.lost = false; // reconnecting since the connection was last open
    this.lastSaidAt = -Infinity;
  }

  /** A notice from the room: `cause` says whether it is news about playback. */
  news(text, cause = null) {
    this.enqueue(text, PLAYBACK_CAUSES.has(cause) ? 'playback' : null);
  }

  /** A line someone said in the chat (not this page's own). */
  chat(name, text, action = false) {
    this.enqueue(action ? `${name} ${text}` : `${name} says: ${text}`, null);
  }

  /** Something the page itself must tell (an error in answer to a command). */
  say(text) {
    this.enqueue(text, null);
  }

  /** The connection's phase (connection-socket.js): a loss and a return are said, not the first connection. */
  connection(phase, words) {
    const before = this.phase;
    this.phase = phase;
    if (before === phase) return;
    if (phase === 'reconnecting') {
      this.lost = true;
      this.enqueue(`Connection lost: ${words}`, 'connection');
    } else if (phase === 'open' && this.lost) {
      this.lost = false;
      this.enqueue('Connected again.', 'connection');
    }
  }

  /** The sync badge as rendered (`kind` null while there is none: nothing to follow). */
  status(now, kind, words) {
    if (!kind) {
      this.badge = null;
      this.saidKind = null;
      return;
    }
    if (this.badge?.kind === kind) {
      this.badge.words = words;
      return;
    }
    this.badge = { kind, words, since: now };
  }

  enqueue(text, slot) {
    if (!text) return;
    if (slot) this.waiting = this.waiting.filter((w) => w.slot !== slot);
    this.waiting.push({ text, slot });
    while (this.waiting.length > this.maxWaiting) {
      this.waiting.shift();
      this.dropped += 1;
    }
  }

  /** The sentence due now, if any, and when to ask again (null: when something new comes). */
  next(now) {
    const badgeDue = this.badge && this.badge.kind !== this.saidKind ? this.badge.since + this.settleMs : null;
    if (this.waiting.length === 0 && badgeDue == null) return { text: null, wakeAt: null };
    const free = this.lastSaidAt + this.gapMs;
    if (now < free) return { text: null, wakeAt: free };
    if (this.waiting.length > 0) {
      let { text } = this.waiting.shift();
      if (this.dropped > 0) {
        text = `${this.dropped} more ${this.dropped === 1 ? 'line is' : 'lines are'} in the chat log. ${text}`;
        this.dropped = 0;
      }
      this.lastSaidAt = now;
      const again = this.waiting.length > 0 ? now + this.gapMs : badgeDue == null ? null : Math.max(badgeDue, now + this.gapMs);
      return { text, wakeAt: again };
    }
    if (now < badgeDue) return { text: null, wakeAt: badgeDue };
    this.saidKind = this.badge.kind;
    this.lastSaidAt = now;
    return { text: this.badge.words, wakeAt: null };
  }
}
