// Just enough of a page for the player adapters (static/players/youtube.js,
// static/players/vimeo.js): elements that hold children, `document`, `window`,
// `location`, and `performance.now()` read from a clock the test moves.

export class FakeElement {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.parent = null;
    this.className = '';
  }

  append(...nodes) {
    for (const node of nodes) this.insertBefore(node, null);
  }

  insertBefore(node, before) {
    node.remove();
    node.parent = this;
    const at = before ? this.children.indexOf(before) : -1;
    if (at < 0) this.children.push(node);
    else this.children.splice(at, 0, node);
    return node;
  }

  querySelector(selector) {
    for (const child of this.children) {
      if (selector.startsWith('.') && child.className.split(' ').includes(selector.slice(1))) return child;
      const deeper = child.querySelector(selector);
      if (deeper) return deeper;
    }
    return null;
  }

  remove() {
    if (!this.parent) return;
    this.parent.children.splice(this.parent.children.indexOf(this), 1);
    this.parent = null;
  }
}

/**
 * Installs the page's globals for one test, taken away when it ends; `window`
 * starts with `windowProps` (a provider's API). Returns the room's screen (with
 * its overlay) and the clock: `clock.ms` is what performance.now() says.
 */
export function installPage(t, windowProps = {}) {
  const saved = { document: globalThis.document, window: globalThis.window, location: globalThis.location };
  globalThis.document = { createElement: (tag) => new FakeElement(tag) };
  globalThis.window = { ...windowProps };
  globalThis.location = { href: 'http://room.test/rooms/lobby', origin: 'http://room.test', protocol: 'http:', host: 'room.test' };
  const clock = { ms: 1000 };
  t.mock.method(performance, 'now', () => clock.ms);
  t.mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  t.after(() => Object.assign(globalThis, saved));
  const screen = new FakeElement('div');
  const overlay = new FakeElement('div');
  overlay.className = 'overlay';
  screen.append(overlay);
  return { screen, clock };
}

/** Lets promise callbacks run (the adapters answer the providers' promises). */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The events an EventTarget fires, in order. */
export function recordEvents(target, types) {
  const seen = [];
  for (const type of types) target.addEventListener(type, () => seen.push(type));
  return seen;
}
