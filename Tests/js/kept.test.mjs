// What the room page keeps in the browser (static/model/kept.js): this tab's member of a
// room across reloads, never taken by a copy of a tab that is still open; and an
// owner key from a link kept only once the server accepted it.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  KeptOwnerKey, ResumeSlot, ownerKeyAfterWelcome, ownerStorageKey, resumeStorageKey,
} from '../../Sources/CowatchWeb/Web/static/model/kept.js';

/** sessionStorage's interface over a Map; `copy()` is what a duplicated tab gets. */
class MemoryStorage {
  constructor(entries = []) { this.map = new Map(entries); }
  getItem(key) { return this.map.has(key) ? this.map.get(key) : null; }
  setItem(key, value) { this.map.set(key, String(value)); }
  removeItem(key) { this.map.delete(key); }
  copy() { return new MemoryStorage(this.map); }
}

test('a first load has nothing to resume; a reload takes back the member the page had', () => {
  const tab = new MemoryStorage();
  const first = new ResumeSlot('lobby', tab);
  assert.equal(first.take(), null);
  first.keep('token-a');
  first.release(); // pagehide: the reload begins
  const second = new ResumeSlot('lobby', tab);
  assert.equal(second.take(), 'token-a');
});

test('a copy of a tab that is still open (duplicated, opened from it) does not take its member', () => {
  const tab = new MemoryStorage();
  const open = new ResumeSlot('lobby', tab);
  open.take();
  open.keep('token-a');
  const duplicate = tab.copy();
  assert.equal(new ResumeSlot('lobby', duplicate).take(), null);
  // The original tab keeps its member across its own reload.
  open.release();
  assert.equal(new ResumeSlot('lobby', tab).take(), 'token-a');
});

test('a member that is gone (left, removed) leaves nothing to resume', () => {
  const tab = new MemoryStorage();
  const slot = new ResumeSlot('lobby', tab);
  slot.keep('token-a');
  slot.forget();
  slot.release();
  assert.equal(new ResumeSlot('lobby', tab).take(), null);
});

test('a token the server did not know is replaced by the new member\'s', () => {
  const tab = new MemoryStorage();
  const slot = new ResumeSlot('lobby', tab);
  slot.keep('expired');
  slot.keep('token-b'); // the welcome of the new member
  slot.release();
  assert.equal(new ResumeSlot('lobby', tab).take(), 'token-b');
});

test('each room has its own slot; what is not a slot reads as nothing', () => {
  const tab = new MemoryStorage([[resumeStorageKey('other'), 'not json'], [resumeStorageKey('odd'), '{"token": 5}']]);
  const lobby = new ResumeSlot('lobby', tab);
  lobby.keep('token-a');
  lobby.release();
  assert.equal(new ResumeSlot('other', tab).take(), null);
  assert.equal(new ResumeSlot('odd', tab).take(), null);
  assert.equal(new ResumeSlot('lobby', tab).take(), 'token-a');
});

test('storage that refuses (private mode) makes every load a first one, without throwing', () => {
  const refusing = { getItem() { throw new Error('denied'); }, setItem() { throw new Error('denied'); }, removeItem() { throw new Error('denied'); } };
  const slot = new ResumeSlot('lobby', refusing);
  assert.equal(slot.take(), null);
  slot.keep('token-a');
  slot.release();
  slot.forget();
  assert.equal(new ResumeSlot('lobby', undefined).take(), null);
});

const welcome = ({ owner = false, resume = 'r1', ownerKey } = {}) => ({
  type: 'welcome', you: { id: 'm1', name: 'olivia', owner }, resume, ...(ownerKey ? { ownerKey } : {}),
});

test('a link key the server refused is not kept; the key kept is used instead', () => {
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: '0000', storedKey: 'real', presentedResume: null, welcome: welcome({ owner: false }) }),
    { verdict: 'refused', store: null, use: 'real' });
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: '0000', storedKey: null, presentedResume: null, welcome: welcome({ owner: false }) }),
    { verdict: 'refused', store: null, use: null });
  // A member that came back with its token and a valid key would be the owner.
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: '0000', storedKey: 'real', presentedResume: 'r1', welcome: welcome({ owner: false, resume: 'r1' }) }),
    { verdict: 'refused', store: null, use: 'real' });
});

test('a link key that made a newcomer the owner is kept', () => {
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: 'real', storedKey: null, presentedResume: null, welcome: welcome({ owner: true }) }),
    { verdict: 'accepted', store: 'real', use: 'real' });
  // A token the server no longer knew: a newcomer, so the flag is the key's answer.
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: 'new', storedKey: 'old', presentedResume: 'gone', welcome: welcome({ owner: true, resume: 'r2' }) }),
    { verdict: 'accepted', store: 'new', use: 'new' });
});

test('a member that came back already the owner says nothing about the link key: nothing replaced', () => {
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: '0000', storedKey: 'real', presentedResume: 'r1', welcome: welcome({ owner: true, resume: 'r1' }) }),
    { verdict: 'unchecked', store: null, use: 'real' });
});

test('the welcome of the room\'s creator carries the key to keep, whatever the link said', () => {
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: '0000', storedKey: 'expired-room', presentedResume: null, welcome: welcome({ owner: true, ownerKey: 'fresh' }) }),
    { verdict: 'created', store: 'fresh', use: 'fresh' });
});

test('without a link key, or with the key already kept, there is nothing to decide', () => {
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: null, storedKey: 'real', presentedResume: null, welcome: welcome({ owner: true }) }),
    { verdict: null, store: null, use: 'real' });
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: 'real', storedKey: 'real', presentedResume: null, welcome: welcome({ owner: true }) }),
    { verdict: null, store: null, use: 'real' });
  assert.deepEqual(
    ownerKeyAfterWelcome({ linkKey: null, storedKey: null, presentedResume: null, welcome: welcome() }),
    { verdict: null, store: null, use: null });
});

test('the page presents a link\'s owner key over the kept one, and keeps it only once accepted', () => {
  const browser = new MemoryStorage([[ownerStorageKey('lobby'), 'old']]);
  const refused = new KeptOwnerKey('lobby', '0000', browser);
  assert.equal(refused.presented(), '0000');
  assert.deepEqual(refused.answer(welcome({ owner: false }), null), { verdict: 'refused', store: null, use: 'old' });
  assert.equal(browser.getItem(ownerStorageKey('lobby')), 'old');
  const accepted = new KeptOwnerKey('lobby', 'new', browser);
  assert.deepEqual(accepted.answer(welcome({ owner: true }), null), { verdict: 'accepted', store: 'new', use: 'new' });
  assert.equal(browser.getItem(ownerStorageKey('lobby')), 'new');
});

test('a link\'s owner key is answered once: the welcomes after it have nothing to decide', () => {
  const browser = new MemoryStorage();
  const kept = new KeptOwnerKey('lobby', '0000', browser);
  assert.equal(kept.answer(welcome({ owner: false }), null).verdict, 'refused');
  // A reconnect's welcome: the link's key is no longer presented, nor judged.
  assert.deepEqual(kept.answer(welcome({ owner: false, resume: 'r2' }), 'r1'), { verdict: null, store: null, use: null });
  assert.equal(kept.presented(), null);
});

test('without a link, the page presents the key kept for the room, and keeps the key of a room it creates', () => {
  const browser = new MemoryStorage([[ownerStorageKey('lobby'), 'real']]);
  assert.equal(new KeptOwnerKey('lobby', null, browser).presented(), 'real');
  const created = new KeptOwnerKey('fresh', null, browser);
  assert.equal(created.presented(), null);
  assert.equal(created.answer(welcome({ owner: true, ownerKey: 'k' }), null).verdict, 'created');
  assert.equal(browser.getItem(ownerStorageKey('fresh')), 'k');
});
