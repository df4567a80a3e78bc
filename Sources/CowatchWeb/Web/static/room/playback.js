// The player's wiring beyond the room's state: what it follows when an own copy
// is picked, and what it tells the page (repaints, notices, what it says about
// the item it loads).

import { renderAll, renderControls, renderPlayer } from './render.js';

export function wirePlayback(page) {
  const { log, model, own, sync } = page;
  // A file picked (or refused) changes what this player follows, not the room's state.
  own.addEventListener('change', () => {
    if (model.state) sync.setState(own.update(model.state, page.me()));
  });
  let lastPaint = 0;
  let lastMode = null;
  sync.addEventListener('change', () => {
    // The player changes every tick; four repaints a second are plenty for text.
    const now = performance.now();
    if (now - lastPaint < 250 && sync.mode === lastMode) return;
    lastPaint = now;
    lastMode = sync.mode;
    renderPlayer(page);
    renderControls(page);
  });
  sync.addEventListener('loadedmetadata', () => renderAll(page));
  sync.addEventListener('notice', ({ detail }) => log.add('notice', detail));
  // What the player tells about the item it loads (an http:// video on this
  // https:// page), unless this page said it already when its person shared it.
  sync.addEventListener('tell', ({ detail }) => {
    if (detail.url && page.toldAbout.has(detail.url)) return;
    log.add('notice', detail.words);
  });
}
