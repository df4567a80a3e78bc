// The live region (room.html, #announcer): the sentences model/announcements.js decides on,
// put in one at a time when they are due. The one timer here only wakes the
// decision up again; it decides nothing.

import { Announcer } from '../model/announcements.js';

export class Announcements extends Announcer {
  /** @param {HTMLElement} region a visually hidden element with role="status" */
  constructor(region) {
    super();
    this.region = region;
    this.timer = null;
    this.wakeAt = null;
  }

  /** Says what is due now, and wakes again when the next sentence will be (a
   *  wake-up already set for that moment stays: the page asks on every repaint). */
  speak() {
    const { text, wakeAt } = this.next(performance.now());
    // The same words again are still news: a live region says only what changed.
    if (text) this.region.textContent = text === this.region.textContent ? `${text}\u00a0` : text;
    if (wakeAt === this.wakeAt && this.timer != null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.wakeAt = wakeAt;
    if (wakeAt != null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.speak();
      }, Math.max(0, wakeAt - performance.now()));
    }
  }
}
