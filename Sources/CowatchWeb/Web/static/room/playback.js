// The player's wiring beyond the room's state: what it follows when an own copy
// is picked, and what it tells the page (repaints, notices, what it says about
// the item it loads).

/**
 * @param {object} p
 * @param {object} p.model the room's model (model/events.js)
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {import('../sync/player-sync.js').PlayerSync} p.sync
 * @param {import('../sync/own-copies.js').OwnCopies} p.own
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {Set<string>} p.toldAbout the addresses this page told its person about already (room/page.js)
 * @param {{ all: () => void, controls: () => void, player: () => void }} p.render room/render.js's
 */
export function wirePlayback({ model, me, sync, own, log, toldAbout, render }) {
  // A file picked (or refused) changes what this player follows, not the room's state.
  own.addEventListener('change', () => {
    if (model.state) sync.setState(own.update(model.state, me()));
  });
  let lastPaint = 0;
  let lastMode = null;
  sync.addEventListener('change', () => {
    // The player changes every tick; four repaints a second are plenty for text.
    const now = performance.now();
    if (now - lastPaint < 250 && sync.mode === lastMode) return;
    lastPaint = now;
    lastMode = sync.mode;
    render.player();
    render.controls();
  });
  sync.addEventListener('loadedmetadata', () => render.all());
  sync.addEventListener('notice', ({ detail }) => log.add('notice', detail));
  // What the player tells about the item it loads (an http:// video on this
  // https:// page), unless this page said it already when its person shared it.
  sync.addEventListener('tell', ({ detail }) => {
    if (detail.url && toldAbout.has(detail.url)) return;
    log.add('notice', detail.words);
  });
}
