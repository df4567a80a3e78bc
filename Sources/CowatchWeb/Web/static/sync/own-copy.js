// Own copies (docs/protocol.md, "Own copies"): a file each member picks on their
// own disk, known to the room by its OpenSubtitles hash, size and length. Pure:
// bytes and numbers in, words and lines out; own-copies.js reads the file.

/** OpenSubtitles reads 64 KiB at each end of the file. */
export const CHUNK = 65536;
/** Two readings of one file's length differ by a few frames at most. */
export const DURATION_TOLERANCE = 1;
const MASK = (1n << 64n) - 1n;

/** The byte ranges the hash reads: [start, end) at the head and at the tail. */
export function hashRanges(size) {
  return {
    head: [0, Math.min(size, CHUNK)],
    tail: [Math.max(0, size - CHUNK), size],
  };
}

function addWords(sum, bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  for (; i + 8 <= bytes.byteLength; i += 8) sum = (sum + view.getBigUint64(i, true)) & MASK;
  if (i < bytes.byteLength) {
    // A file shorter than a whole number of words: its last word is padded with zeros.
    let word = 0n;
    for (let k = bytes.byteLength - 1; k >= i; k -= 1) word = (word << 8n) | BigInt(bytes[k]);
    sum = (sum + word) & MASK;
  }
  return sum;
}

/**
 * The OpenSubtitles hash of a file of `size` bytes whose `hashRanges` hold `head`
 * and `tail` (Uint8Arrays): the size plus every little-endian 64-bit word of
 * both, modulo 2^64, as 16 lower-case hex digits.
 */
export function openSubtitlesHash(size, head, tail) {
  let sum = BigInt(size) & MASK;
  sum = addWords(sum, head);
  sum = addWords(sum, tail);
  return sum.toString(16).padStart(16, '0');
}

/** `1.4 GB`: powers of 1,000, one decimal, as the server writes sizes. */
export function sizeText(bytes) {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 999.95 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${(Math.round(value * 10) / 10).toFixed(1)} ${units[unit]}`;
}

/** `1:42:10`: hours, minutes, seconds, as the server writes lengths. */
export function clockText(seconds) {
  const total = Math.floor(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

/** The own copy the activity is, or null: `{ hash, size, duration, title }`. */
export function ownItem(activity) {
  if (!activity || activity.source?.kind !== 'own') return null;
  const { hash, size } = activity.source;
  if (typeof hash !== 'string' || typeof size !== 'number' || typeof activity.duration !== 'number') return null;
  return { hash, size, duration: activity.duration, title: activity.title, identifier: activity.identifier };
}

/** What a member is asked: "pick your copy of the file: 1.4 GB, 1:42:10". */
export function askText(item) {
  const what = `${sizeText(item.size)}, ${clockText(item.duration)}`;
  const neutral = item.title === `a file of ${what}`;
  return neutral ? `pick your copy of the file: ${what}` : `pick your copy of "${item.title}": ${what}`;
}

/**
 * Whether a picked file is the room's item. Size first (known without reading),
 * then the hash, then the length. `{ ok: true }` or `{ ok: false, why }`.
 */
export function matchCopy(item, picked) {
  if (picked.size !== item.size) {
    // Sizes that round alike are told in bytes, so that the two numbers differ.
    const alike = sizeText(picked.size) === sizeText(item.size);
    const size = (bytes) => (alike ? `${bytes} bytes` : sizeText(bytes));
    return { ok: false, why: `another file: it has ${size(picked.size)}, the room's has ${size(item.size)}` };
  }
  if (picked.hash !== undefined && picked.hash !== item.hash) {
    return { ok: false, why: 'another file: the same size, but other contents' };
  }
  if (picked.duration !== undefined && Math.abs(picked.duration - item.duration) > DURATION_TOLERANCE) {
    return {
      ok: false,
      why: `another duration: it lasts ${clockText(picked.duration)}, the room's lasts ${clockText(item.duration)}`,
    };
  }
  return { ok: true };
}

/** The line that shares a picked file: its name is not sent, only what the sharer typed. */
export function watchOwnLine(picked, title) {
  const seconds = Math.round(picked.duration * 1000) / 1000;
  const typed = (title ?? '').trim();
  return `/watch own ${picked.hash} ${picked.size} ${seconds}${typed ? ` ${typed}` : ''}`;
}

/** Who watches an own copy, as the member list says it: `has the file`, `no copy`, or nothing. */
export function copyLabel(participant) {
  if (participant.copy === true) return 'has the file';
  if (participant.copy === false) return 'no copy, not watching';
  return '';
}

/**
 * The state this page's player follows. For an own copy, the room sends no
 * address: a member whose picked file matched plays it from its object URL
 * (`picked.url`), and one without it follows nothing (it is not watching; the
 * room does not wait for it), so its player is handed an idle room.
 */
export function localState(state, picked) {
  const item = ownItem(state?.session?.activity);
  if (!item) return state;
  if (picked && picked.identifier === item.identifier) {
    return { ...state, session: { ...state.session, activity: { ...state.session.activity, url: picked.url } } };
  }
  return { ...state, session: null, playback: { ...state.playback, status: 'idle', item: null } };
}

/**
 * The `/have` this page owes the room, or null: `yes` once a matching file is
 * picked, `no` once one that does not match is (or the viewer said they have
 * none), each at most once per activity (`answered`: `{ activity, yes }`).
 * A page opened again has lost the file it picked (its object URL went with the
 * page) while the room still counts it (`me.copy`): it says `no` until it is
 * picked again, so that the room does not wait for a player with nothing to play.
 */
export function haveLine(state, picked, answered, me = null) {
  const activity = state?.session?.state === 'joined' ? state.session.activity : null;
  const item = ownItem(activity);
  if (!item) return null;
  if (!picked) {
    const said = answered && answered.activity === activity.id && answered.yes === false;
    return me?.copy === true && !said ? `/have ${state.seq} no` : null;
  }
  const yes = picked.identifier === item.identifier;
  if (!yes && picked.identifier !== null) return null; // a match for an earlier item says nothing of this one
  if (answered && answered.activity === activity.id && answered.yes === yes) return null;
  return `/have ${state.seq} ${yes ? 'yes' : 'no'}`;
}
