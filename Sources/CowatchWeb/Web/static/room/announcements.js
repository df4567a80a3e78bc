// The live region (room.html, #announcer): the sentences announce.js decides on,
// put in one at a time when they are due. The one timer here only wakes the
// decision up again; it decides nothing.

import { Announcer } from '../announce.js';

export class Announcements extends Announcer {
  /** @param {HTMLElement} region a visually hidden element with role="status" */
  constructor(region) {
    super();
    this.region = region;
    this.timer = null;
  }

  /** Says what is due now, and wakes again when the next sentence will be. */
  speak() {
    clearTimeout(this.timer);
    this.timer = null;
    const { text, wakeAt } = this.next(performance.now());
    if (text) this.region.textContent = text;
    if (wakeAt != null) this.timer = setTimeout(() => this.speak(), Math.max(0, wakeAt - performance.now()));
  }
}
