// An http:// video on a page served over https:// ("mixed content"), pure.
//
// Browsers do not load insecure media into a secure page: Chromium (and Firefox
// since 127) ask for the same address at https:// instead, and play it only if
// its server answers there, with no way back to http://; others refuse it
// outright. Either way the <video> reports only that the address could not be
// loaded. mpv (`cowatch watch`) plays the http:// address as it is.
//
// So the page says why, in words: before loading such an item (the player's
// notice), when it failed (the overlay and the status line, through the
// player's mediaError), and to whoever shares such a link from an https://
// page (model/watch-choice.js). It still tries: a server that also answers at
// https:// plays. Addresses of this computer (localhost, 127.0.0.0/8, [::1])
// are trustworthy to browsers and never mixed content.

/** Whether `host` (a URL's hostname) names this computer, which browsers
 *  trust over http:// as they trust https:// ("potentially trustworthy"). */
function isLoopback(host) {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * Whether a browser on a page whose `location.protocol` is `pageProtocol`
 * will not load `url` as it is: an http:// address (not this computer's) on
 * an https:// page. `source`, when given, is the item's (`activity.source`):
 * only a file's address goes into the page's <video> (a provider's video is
 * played by the provider's own player, an own copy from this computer).
 */
export function isMixedContent(url, pageProtocol, source = null) {
  if (pageProtocol !== 'https:' || typeof url !== 'string') return false;
  if (source && typeof source.kind === 'string' && source.kind !== 'file') return false;
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'http:' && !isLoopback(parsed.hostname);
}

/** The player's reason when such an item failed to load: the status line
 *  says "Cannot play: <this>." */
export const MIXED_CONTENT_ERROR = 'its address is http:// and this page is https://';

/** Why it cannot play, and what works instead: the same for every sentence below. */
const WHY = "This video's address starts with http://, and this page is served over https://: "
  + 'browsers do not play insecure video on a secure page';
const INSTEAD = 'Ask whoever shared it for an https:// link, or watch it with cowatch watch (mpv plays it).';

/** The overlay's words when such an item failed to load (`othersPlay`:
 *  whether another member can still play it). Short enough to read over the
 *  video on a phone: the notice in the log says how browsers try https://. */
export function mixedContentWords(othersPlay) {
  return `${WHY}. ${INSTEAD}`
    + (othersPlay ? ' The others keep watching.' : '');
}

/** Said once as such an item begins to load, before the browser's attempt
 *  (which may take long to fail) says anything. */
export function mixedContentNotice() {
  return `${WHY}, so yours asks for it at https:// instead and plays it only if its server answers there. `
    + 'If it does not, ask whoever shared it for an https:// link, or watch it with cowatch watch (mpv plays it).';
}

/** Said to whoever shares such a link from an https:// page. */
export function mixedContentShareWarning() {
  return 'That link starts with http://, and this page is served over https://: browsers in the room '
    + 'do not play insecure video on a secure page, so they will not play it unless its server also answers at https://. '
    + 'Share its https:// address if there is one; cowatch watch (mpv) plays it as it is.';
}
