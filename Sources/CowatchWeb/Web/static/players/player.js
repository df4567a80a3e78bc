// One player interface for every kind of source.
//
// PlayerSync (static/sync/player-sync.js) follows the room with whatever plays the item: the
// page's <video> for media files (players/video.js), a provider's embedded player
// for a provider's link (players/youtube.js, players/vimeo.js). Each adapter
// looks to PlayerSync exactly as the <video> did, so that the decisions in
// static/sync/ stay the same for all of them; what differs between players is
// said by `capabilities`, and the decisions that depend on it (how drift is
// corrected, how close a held position must be) read it from there.
//
// THE CONTRACT (one file per adapter, its default export a class):
//
//   new Adapter(host, config)
//     host    the element the player lives in (the room's `.screen`); an adapter
//             that needs an element of its own adds it to host and removes it in
//             destroy()
//     config  { video: the page's <video> element,
//               apiUrl: the provider's API script (from the page's
//                       <meta name="cowatch-player-api" data-kind=... content=...>,
//                       which the server fills from its settings), or null }
//
//   capabilities   (a frozen object, known from construction)
//     rates             'continuous' (any rate within rateRange), or the list of
//                       the rates the player can play, ascending; an adapter whose
//                       list is only known once an item is loaded updates it then
//     rateRange         [min, max]
//     positionPrecision seconds: how far a reading of currentTime may be from
//                       the true position while playing (the <video>: 0.0001)
//     positionUpdateMs  how often the position the player reports is refreshed
//                       (0: read from the player at each read)
//     reportsStalls     whether `waiting` is fired when the player runs out of data
//     exactSeek         whether a seek lands exactly on the time asked
//
//   read() -> the readings of static/sync/actions.js, without `now` and
//     `monotonic` (PlayerSync adds them):
//       { currentTime, paused, ended?, seeking, readyState (HTMLMediaElement's 0..4),
//         duration (NaN while unknown; Infinity for a live stream),
//         playbackRate, buffered: [[start, end], ...],
//         error: null | { code, message, words },
//         live?: boolean, liveEdge?: seconds,
//         sound?: 'silent' | 'sound' | 'muted' }
//     `sound` says what the video's clock is, where the player knows (the
//     <video>: players/video.js, soundOf): a start's latency differs by it.
//     `error.words` says in plain words what went wrong, for the viewer (a
//     provider's code means nothing to them); `liveEdge` is the position the
//     player would play at now to follow a live stream, its safety margin
//     included. read() is synchronous and cheap: it is called every 50 ms.
//
//   load(activity)    a new item: `state.session.activity` (url, source,
//                     identifier, live, duration); the player empties (readyState 0,
//                     paused) and fires `loadedmetadata` once it knows the duration
//   reload()          the same item again, after an error
//   play()            a Promise: resolves once playback was asked; rejects with
//                     an error named 'NotAllowedError' when the browser (or the
//                     provider) refuses to start without a user gesture, and
//                     'AbortError' when a pause() or a new item came first
//   pause()
//   seek(t)           seconds; `seeking` is true until the position is reached
//                     and `seeked` fired
//   setRate(r)        plays at r, or at the nearest rate it can (`playbackRate`
//                     in the readings says which)
//   setVolume(volume, muted)   0..1; the viewer's own, never the room's
//   volume() -> { volume, muted }
//   probe(ms)         optional (the <video>): plays `ms` out of hearing and pauses,
//                     to measure how long its clock takes to start; a Promise of
//                     { from, calledAt, readAt, currentTime, rate } (players/video.js)
//   destroy()         stops, removes what it added to host, fires nothing more
//
//   events (the adapter is an EventTarget), named as the <video>'s:
//     loadedmetadata, canplay, canplaythrough, seeked, playing, waiting, ended,
//     error, progress, ratechange, volumechange (and `pause`, where the player
//     has one: a pause nobody here ordered is then seen at once, not at the next tick)
//
// The <video> adapter passes the element's own events and readings through
// untouched; an embedded player's adapter maps its provider's states onto them
// (players/youtube.js says how).

/** The readings of a player that has nothing loaded (or is still being made). */
export const EMPTY_READINGS = Object.freeze({
  currentTime: 0, paused: true, seeking: false, readyState: 0, duration: NaN, playbackRate: 1, buffered: [], error: null,
});

/** What the page's <video> can do (players/video.js). Also the assumption for
 *  readings that carry no capabilities (the decisions' tests). */
export const VIDEO_CAPABILITIES = Object.freeze({
  rates: 'continuous',
  rateRange: [0.0625, 16],
  positionPrecision: 0.0001,
  positionUpdateMs: 0,
  reportsStalls: true,
  exactSeek: true,
});

/** The adapter module for a source kind (`activity.source.kind`); a file, or no
 *  source given, is the <video>'s. Imported on first use, so that a page whose
 *  room never plays a provider's link never loads that adapter, and a missing
 *  adapter only fails the items that need it. */
export function adapterModule(kind) {
  switch (kind) {
    case 'youtube': return './youtube.js';
    case 'vimeo': return './vimeo.js';
    default: return './video.js';
  }
}

/** The adapter class for `kind`, imported relative to this file. */
export function importAdapter(kind) {
  return import(adapterModule(kind));
}

/**
 * The item's source as the room names it in `activity.source` ({ kind: 'file' },
 * { kind: 'youtube', id }, { kind: 'vimeo', id }, { kind: 'own', ... }): the
 * server tells a provider's link by its form (Sources/SlashCommands/MediaSource.swift),
 * so the page never parses links itself. None given: a file.
 */
export function sourceOf(activity) {
  const source = activity?.source;
  return source && typeof source.kind === 'string' ? source : { kind: 'file' };
}

/** The kind of player an activity needs: 'file' (the <video>), 'youtube' or 'vimeo'. */
export function sourceKind(activity) {
  const kind = sourceOf(activity).kind;
  return kind === 'youtube' || kind === 'vimeo' ? kind : 'file';
}

/** An Error with a DOM-style name (what a refused play() rejects with). */
export function namedError(name, message) {
  const error = new Error(message);
  error.name = name;
  return error;
}

/** Loads a provider's API script once per URL (a <script> element: the page's
 *  Content-Security-Policy names the origin; the server derives both from the
 *  same setting). Resolves when the script has run; rejects in words. */
const scripts = new Map();
export function loadScript(url) {
  if (!url) return Promise.reject(new Error('this server names no script for that player'));
  if (!scripts.has(url)) {
    scripts.set(url, new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = url;
      script.async = true;
      script.addEventListener('load', () => resolve());
      script.addEventListener('error', () => {
        scripts.delete(url); // a later item may try again
        reject(new Error(`the player's script could not be loaded from ${new URL(url, location.href).origin}`));
      });
      document.head.append(script);
    }));
  }
  return scripts.get(url);
}

/** The provider API script URL the server gave the page for `kind`, or null. */
export function apiUrlFor(kind, doc = document) {
  const meta = doc.querySelector(`meta[name="cowatch-player-api"][data-kind="${kind}"]`);
  const url = meta?.getAttribute('content');
  return url ? url : null;
}
