// What the room page keeps in the browser between loads (docs/browser.md, "Kept in
// the browser"): this tab's member of a room (its resume token), and whether an
// owner key that came in a link may replace the one this browser keeps. No
// element, socket or timer here: the storage is passed in, so Node tests it.

/** sessionStorage key of this tab's resume token for a room. */
export const resumeStorageKey = (room) => `cowatch.resume.${room}`;

/** localStorage key of the owner key this browser keeps for a room. */
export const ownerStorageKey = (room) => `cowatch.owner.${room}`;

/**
 * This tab's member of one room, kept in sessionStorage: a reload of the tab
 * comes back as the same member, another tab is another member. The slot is
 * marked live while a page holds it and released when the page goes away
 * (`pagehide`, which a reload fires first), because a tab duplicated or opened
 * from this one starts with a copy of this tab's sessionStorage: a copy marked
 * live belongs to a page still open, whose member is not the new page's to take.
 */
export class ResumeSlot {
  constructor(room, storage = globalThis.sessionStorage) {
    this.key = resumeStorageKey(room);
    this.storage = storage;
  }

  /** The token an earlier load of this tab left for this page, or null; the
   *  slot is this page's from now on. */
  take() {
    const kept = this.read();
    const token = kept && !kept.live ? kept.token : null;
    this.write({ token, live: true });
    return token;
  }

  /** The token of the member this page is now (from its `welcome`). */
  keep(token) {
    this.write({ token: typeof token === 'string' && token ? token : null, live: true });
  }

  /** The page goes away (reload, closed tab, another address): the next load of
   *  this tab may take the member back. */
  release() {
    const kept = this.read();
    if (kept?.token) this.write({ token: kept.token, live: false });
    else this.forget();
  }

  /** The member is gone (left on purpose, removed, refused): nothing to resume. */
  forget() {
    try {
      this.storage?.removeItem(this.key);
    } catch {
      // Storage refused (a private mode's quota): nothing was kept either.
    }
  }

  read() {
    try {
      const value = JSON.parse(this.storage?.getItem(this.key) ?? 'null');
      if (value && typeof value === 'object' && (typeof value.token === 'string' || value.token === null)) {
        return { token: value.token || null, live: value.live === true };
      }
    } catch {
      // Not ours (edited by hand, or an older page's): as if nothing were kept.
    }
    return null;
  }

  write(value) {
    try {
      this.storage?.setItem(this.key, JSON.stringify(value));
    } catch {
      // Storage refused: this tab's reload makes a new member, as it did before.
    }
  }
}

/**
 * What a `welcome` says about an owner key, when the page presented one.
 *
 * A key from a link (`?owner=`) is only tried: the server lets a wrong key in as
 * an ordinary member without an error (docs/protocol.md, `owner=`), so the
 * welcome's `you.owner` is the answer. Only a key that made a newcomer the owner
 * is kept; a member that came back with its resume token keeps the owner flag it
 * had, so its welcome says nothing about the link's key.
 *
 * @param {object} input
 * @param {string|null} input.linkKey    the key from the link, if any
 * @param {string|null} input.storedKey  the key this browser keeps for the room
 * @param {string|null} input.presentedResume the resume token the connection presented
 * @param {object} input.welcome         the `welcome` event
 * @returns {{ verdict: null|'created'|'accepted'|'refused'|'unchecked', store: string|null, use: string|null }}
 *   `store`: the key to keep for the room (null: leave what is kept as it is);
 *   `use`: the key the connection presents from now on.
 */
export function ownerKeyAfterWelcome({ linkKey, storedKey, presentedResume, welcome }) {
  if (welcome?.ownerKey) {
    // This connection created the room: its key is the one to keep.
    return { verdict: 'created', store: welcome.ownerKey, use: welcome.ownerKey };
  }
  if (!linkKey || linkKey === storedKey) return { verdict: null, store: null, use: storedKey || null };
  const owner = welcome?.you?.owner === true;
  const resumed = !!presentedResume && welcome?.resume === presentedResume;
  if (!owner) return { verdict: 'refused', store: null, use: storedKey || null };
  if (resumed) return { verdict: 'unchecked', store: null, use: storedKey || null };
  return { verdict: 'accepted', store: linkKey, use: linkKey };
}

/**
 * The owner key this browser keeps for a room (it created the room, or a link's
 * key was accepted), and a key from a link until the server has answered it: the
 * link's key is presented instead of the kept one, and kept only once the
 * welcome shows it made this page the owner (`ownerKeyAfterWelcome`).
 */
export class KeptOwnerKey {
  constructor(room, linkKey, storage = globalThis.localStorage) {
    this.key = ownerStorageKey(room);
    this.linkKey = linkKey;
    this.storage = storage;
  }

  /** The key the page's first connection presents, or null. */
  presented() {
    return this.linkKey || this.storage.getItem(this.key);
  }

  /** What the welcome says of the key presented (see `ownerKeyAfterWelcome`);
   *  the link's key is answered, and later connections present the one kept. */
  answer(welcome, presentedResume) {
    const owner = ownerKeyAfterWelcome({
      linkKey: this.linkKey, storedKey: this.storage.getItem(this.key), presentedResume, welcome,
    });
    this.linkKey = null;
    if (owner.store) this.storage.setItem(this.key, owner.store);
    return owner;
  }
}
