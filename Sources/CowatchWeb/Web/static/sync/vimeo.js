// What the Vimeo player can do, and its errors in words (players/vimeo.js
// carries them out; Vimeo's Player SDK is documented at
// developer.vimeo.com/player/sdk/reference).

/** How often the page asks the player for its position while it plays (ms).
 *  Vimeo's `timeupdate` comes about every 250 ms; a `getCurrentTime()` round
 *  trip between frames takes a few ms, so asking more often gives fresher
 *  readings at little cost. */
export const VIMEO_POLL_MS = 100;

/** The rates Vimeo documents for setPlaybackRate (on accounts that allow it). */
export const VIMEO_RATE_RANGE = Object.freeze([0.5, 2]);

/**
 * The adapter's capabilities (players/ interface).
 * @param {boolean} rateRefused the player refused a rate change: it plays at 1 only
 */
export function vimeoCapabilities(rateRefused) {
  return Object.freeze({
    rates: rateRefused ? [1] : 'continuous',
    rateRange: rateRefused ? [1, 1] : [...VIMEO_RATE_RANGE],
    // A reading is placed at the middle of its postMessage round trip (sync/remote-position.js):
    // within a few ms on one machine; 10 ms leaves room for a busy frame.
    positionPrecision: 0.01,
    positionUpdateMs: VIMEO_POLL_MS,
    reportsStalls: true, // bufferstart / bufferend
    // setCurrentTime lands "as close to that time as possible" and says where (documented), not exactly.
    exactSeek: false,
  });
}

/** Said once when a rate change is refused. */
export const RATE_REFUSED_NOTICE =
  'This Vimeo video does not let its speed be changed (its owner\'s account has no speed controls): ' +
  'this player keeps in step by seeking, a little less smoothly, and plays only at normal speed.';

/**
 * An error of the Vimeo player (a rejected promise or an `error` event), in words.
 * @param {{ name?: string, message?: string } | null} error
 * @param {string} id the video's id
 */
export function vimeoErrorText(error, id) {
  const name = error?.name || '';
  const message = String(error?.message || '');
  if (/was not found/i.test(message) || name === 'NotFoundError') {
    return `Vimeo has no video ${id}: it does not exist, was removed, or is not public`;
  }
  if (/not embeddable/i.test(message)) {
    return `the owner of Vimeo video ${id} does not allow it to be played on other sites`;
  }
  if (name === 'ScriptError') return message;
  if (name === 'PrivacyError') return `Vimeo video ${id} is private: it cannot be played here`;
  if (name === 'PasswordError') return `Vimeo video ${id} is protected by a password, which this page cannot enter`;
  return `the Vimeo player failed${message ? `: ${message}` : ''}`;
}

/** The player script could not be loaded. */
export function vimeoScriptFailed(url, why) {
  return `the Vimeo player could not be loaded from ${url}${why ? ` (${why})` : ''}; check the connection, or a blocker in the browser`;
}
