// "Watch my own copy": a file picked on this computer, played here and never
// uploaded (docs/protocol.md, "Own copies"). Thin: it reads the picked file's
// two ends and its length and keeps its object URL; what to send and what the
// player follows are decided in sync/own-copy.js.

import {
  askText, hashRanges, haveLine, localState, matchCopy, openSubtitlesHash, ownItem, watchOwnLine,
} from './own-copy.js';

/** The length the browser reads from a file's object URL, or an Error in words. */
function readDuration(url) {
  return new Promise((resolve, reject) => {
    const video = document.createElement('video');
    video.preload = 'metadata';
    video.muted = true;
    const done = () => {
      video.removeAttribute('src');
      video.load();
    };
    video.addEventListener('loadedmetadata', () => {
      const { duration } = video;
      done();
      if (Number.isFinite(duration) && duration > 0) resolve(duration);
      else reject(new Error('this browser cannot tell how long that file is'));
    }, { once: true });
    video.addEventListener('error', () => {
      done();
      reject(new Error('this browser cannot play that file'));
    }, { once: true });
    video.src = url;
  });
}

/** What identifies a picked file: its size, hash and length, and the object URL it plays from. */
async function identify(file) {
  const { head, tail } = hashRanges(file.size);
  const [first, last] = await Promise.all([
    file.slice(...head).arrayBuffer(), file.slice(...tail).arrayBuffer(),
  ]);
  const hash = openSubtitlesHash(file.size, new Uint8Array(first), new Uint8Array(last));
  const url = URL.createObjectURL(file);
  try {
    return { size: file.size, hash, duration: await readDuration(url), url };
  } catch (error) {
    URL.revokeObjectURL(url);
    throw error;
  }
}

export class OwnCopies extends EventTarget {
  /**
   * @param {{ share: HTMLInputElement, shareTitle: HTMLInputElement, ask: HTMLElement, askText: HTMLElement,
   *   pick: HTMLInputElement, none: HTMLButtonElement }} elements
   * @param {(line: string) => void} send a command to the room
   * @param {(kind: string, text: string) => void} say a line in the page's log
   */
  constructor(elements, send, say) {
    super();
    this.elements = elements;
    this.send = send;
    this.say = say;
    this.state = null;
    this.picked = null; // { identifier, url }: identifier null for a file refused or "I have none"
    this.answered = null; // { activity, yes }: the /have sent for that activity
    this.asked = null; // the activity id the viewer was asked about
    elements.share.addEventListener('change', () => this.share(elements.share.files?.[0]));
    elements.pick.addEventListener('change', () => this.pick(elements.pick.files?.[0]));
    elements.none.addEventListener('click', () => {
      this.elements.askText.textContent = 'You are not watching: the others play their own copies, and the chat is yours. '
        + 'Found the file? Pick your copy.';
      this.elements.none.hidden = true;
      this.choose({ identifier: null, url: null });
    });
  }

  /** The room's state as this page's player follows it, after answering `/have` if owed
   *  (`me`: this member as the room shows it). */
  update(state, me = null) {
    this.state = state;
    const activity = state?.session?.state === 'joined' ? state.session.activity : null;
    const item = ownItem(activity);
    const mine = item && this.picked?.identifier === item.identifier;
    this.elements.ask.hidden = !item || mine;
    if (item && !mine && this.asked !== activity.id) {
      const text = askText(item);
      this.elements.askText.textContent = 'Playing for the room: a file each person plays from their own copy. '
        + `To watch, ${text}. Nothing is uploaded; the file plays from your disk.`;
      this.elements.none.hidden = false;
      this.say('notice', `${text[0].toUpperCase()}${text.slice(1)} (over the player).`);
      this.asked = activity.id;
    }
    const line = haveLine(state, this.picked, this.answered, me);
    if (line) {
      this.send(line);
      this.answered = { activity: activity.id, yes: line.endsWith('yes') };
    }
    return localState(state, this.picked);
  }

  /** After any reconnection: the room may not know (a restarted server's new
   *  member) whether this page has the file, so the next state says it again. */
  reconnected() {
    this.answered = null;
  }

  /** Whether the room plays an own copy this page has no file for: it is not watching. */
  lacking() {
    const activity = this.state?.session?.state === 'joined' ? this.state.session.activity : null;
    const item = ownItem(activity);
    return Boolean(item) && this.picked?.identifier !== item.identifier;
  }

  choose(picked) {
    if (this.picked?.url && this.picked.url !== picked.url) URL.revokeObjectURL(this.picked.url);
    this.picked = picked;
    this.dispatchEvent(new Event('change'));
  }

  /** "Watch my own copy": share the picked file's identity, never its name. */
  async share(file) {
    if (!file) return;
    this.elements.share.value = '';
    let picked;
    try {
      picked = await identify(file);
    } catch (error) {
      this.say('error', `Not shared: ${error.message}.`);
      return;
    }
    this.choose({ identifier: `own:${picked.hash}:${picked.size}`, url: picked.url });
    this.send(watchOwnLine(picked, this.elements.shareTitle.value));
    this.elements.shareTitle.value = '';
  }

  /** "Pick your copy": play it if it is the room's file, else say why not. */
  async pick(file) {
    if (!file) return;
    this.elements.pick.value = '';
    const item = ownItem(this.state?.session?.activity);
    if (!item) return;
    const early = matchCopy(item, { size: file.size });
    if (!early.ok) {
      this.refuse(file, early.why);
      return;
    }
    let picked;
    try {
      picked = await identify(file);
    } catch (error) {
      this.refuse(file, error.message);
      return;
    }
    const match = matchCopy(item, picked);
    if (!match.ok) {
      URL.revokeObjectURL(picked.url);
      this.refuse(file, match.why);
      return;
    }
    this.say('notice', `${file.name} is the room's file: it plays from your disk, with everyone.`);
    this.choose({ identifier: item.identifier, url: picked.url });
  }

  refuse(file, why) {
    this.say('error', `${file.name} does not match: ${why}. Pick another file, or watch without it.`);
    this.elements.askText.textContent = `${file.name} does not match: ${why}.`;
    this.choose({ identifier: null, url: null });
  }
}
