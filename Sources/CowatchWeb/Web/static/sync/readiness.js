// Whether the video has the data to play from where it stands.
//
// Readings are plain values taken from the <video>: `currentTime`, `seeking`,
// `readyState`, `duration`, and `buffered` as `[[start, end], ...]` seconds.

export const HAVE_METADATA = 1;
export const HAVE_CURRENT_DATA = 2;
export const HAVE_FUTURE_DATA = 3;
export const HAVE_ENOUGH_DATA = 4;

/** Seconds buffered contiguously from the current position. */
export function bufferedAhead({ buffered, currentTime }) {
  let ahead = 0;
  for (const [start, end] of buffered) {
    if (start <= currentTime + 0.01) ahead = Math.max(ahead, end - currentTime);
  }
  return ahead;
}

/** Enough data to play from the current position: the browser says it can
 *  play through, or it has the next second (or up to the end) buffered. Held
 *  players say /ready on this, and a stalled one that it recovered. */
export function hasEnoughData({ seeking, readyState, currentTime, duration, buffered }) {
  if (seeking || readyState < HAVE_FUTURE_DATA) return false;
  if (readyState >= HAVE_ENOUGH_DATA) return true;
  const to = Math.min(currentTime + 1, duration || currentTime);
  return buffered.some(([start, end]) => start <= currentTime + 0.001 && end >= to - 0.001);
}
