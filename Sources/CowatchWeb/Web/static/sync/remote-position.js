// The position of a player in another frame, known only by messages.
//
// A provider's player (Vimeo's) lives in an iframe of the provider's origin;
// the page learns its position by asking (`getCurrentTime()`, a postMessage
// round trip) and from its events. A reading answered between the local
// instants `sentAt` and `receivedAt` is placed at the middle of that round
// trip, give or take half of it (as an NTP sample is); between readings, a
// playing player is extrapolated at its rate. A reading whose round trip is
// much slower than the best recent one (the page or the frame was busy) is
// less exact than extrapolating from a better one, and is left out.

/** A reading whose half round trip exceeds the best recent one by more than
 *  this (ms) is not taken while a good reading is fresh. */
export const SLOW_READING_MS = 4;
/** A reading is fresh for this long (ms): after it, any reading is taken. */
export const FRESH_MS = 1000;

export class RemotePosition {
  constructor() {
    this.reset();
  }

  /** A new video: nothing known. */
  reset() {
    this.position = 0; // seconds, at `at`
    this.at = null; // local ms (performance.now()) of `position`
    this.uncertainty = Infinity; // ms, half the round trip of the reading
    this.moving = false; // playing and not buffering
    this.rate = 1;
  }

  /** Where the player is at local instant `now` (ms). */
  positionAt(now) {
    if (this.at == null) return this.position;
    return this.moving ? this.position + (this.rate * Math.max(0, now - this.at)) / 1000 : this.position;
  }

  /** The answer to a position request: `seconds`, asked at `sentAt`, answered at `receivedAt` (local ms). */
  observe(seconds, sentAt, receivedAt) {
    if (!Number.isFinite(seconds) || receivedAt < sentAt) return false;
    const half = (receivedAt - sentAt) / 2;
    const fresh = this.at != null && receivedAt - this.at < FRESH_MS;
    if (fresh && half > this.uncertainty + SLOW_READING_MS) return false;
    this.position = seconds;
    this.at = sentAt + half;
    this.uncertainty = half;
    return true;
  }

  /** A position the page itself decided (a seek it asked for), or an event's, at `now`. */
  set(seconds, now, uncertainty = 0) {
    if (!Number.isFinite(seconds)) return;
    this.position = seconds;
    this.at = now;
    this.uncertainty = uncertainty;
  }

  /** Starts or stops the extrapolation at `now` (play, pause, buffering). */
  setMoving(moving, now) {
    if (moving === this.moving) return;
    this.position = this.positionAt(now);
    this.at = now;
    this.moving = moving;
  }

  setRate(rate, now) {
    if (!(rate > 0) || rate === this.rate) return;
    this.position = this.positionAt(now);
    this.at = now;
    this.rate = rate;
  }
}
