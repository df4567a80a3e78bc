// What the room page says to a screen reader (static/model/announcements.js): the room's news,
// chat and the sync badge, one sentence at a time, never a flood.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Announcer } from '../../Sources/CowatchWeb/Web/static/model/announcements.js';

/** Everything said from `from` to `until`, asking whenever the announcer says to. */
function drain(announcer, from, until = from + 60_000) {
  const said = [];
  let now = from;
  while (now <= until) {
    const { text, wakeAt } = announcer.next(now);
    if (text) said.push({ at: now - from, text });
    if (wakeAt == null) break;
    now = Math.max(wakeAt, now + 1);
  }
  return said;
}

test('a notice is said at once, in the server\'s words', () => {
  const a = new Announcer();
  a.news('alice paused at 12:03', 'pause');
  assert.deepEqual(a.next(0), { text: 'alice paused at 12:03', wakeAt: null });
  assert.equal(a.next(1).text, null);
});

test('news about playback not yet said is replaced by newer news: three quick seeks are one sentence', () => {
  const a = new Announcer({ gapMs: 1500 });
  a.news('bob arrived.');
  a.news('alice moved to 1:00', 'seek');
  a.news('alice moved to 1:05', 'seek');
  a.news('alice paused at 1:05', 'pause');
  assert.deepEqual(drain(a, 0), [
    { at: 0, text: 'bob arrived.' },
    { at: 1500, text: 'alice paused at 1:05' },
  ]);
});

test('sentences are said a gap apart, and a flood is cut to the newest with a count of the rest', () => {
  const a = new Announcer({ gapMs: 1000, maxWaiting: 3 });
  for (let n = 1; n <= 10; n += 1) a.chat('carol', `line ${n}`);
  assert.deepEqual(drain(a, 0), [
    { at: 0, text: '7 more lines are in the chat log. carol says: line 8' },
    { at: 1000, text: 'carol says: line 9' },
    { at: 2000, text: 'carol says: line 10' },
  ]);
});

test('a /me line is said as an action', () => {
  const a = new Announcer();
  a.chat('dan', 'waves', true);
  assert.equal(a.next(0).text, 'dan waves');
});

test('the badge is said once its new state has held, and not at all when it flickers back', () => {
  const a = new Announcer({ gapMs: 1500, settleMs: 2000 });
  a.status(0, 'in-sync', 'Playing in sync');
  assert.deepEqual(a.next(0), { text: null, wakeAt: 2000 });
  assert.deepEqual(a.next(2000), { text: 'Playing in sync', wakeAt: null });
  // A correction of a moment: catching up, then in sync again, says nothing.
  a.status(5000, 'catching-up', 'Catching up…');
  a.status(5400, 'in-sync', 'Playing in sync');
  assert.deepEqual(drain(a, 5400, 20_000), []);
  // Buffering that lasts is said, once, with the words of the moment.
  a.status(21_000, 'waiting', 'Loading…');
  a.status(21_500, 'waiting', 'Buffering…');
  for (let t = 21_600; t < 30_000; t += 100) a.status(t, 'waiting', 'Buffering…');
  assert.deepEqual(drain(a, 21_500, 30_000), [{ at: 1500, text: 'Buffering…' }]);
});

test('no badge (nothing to follow, or the door shut) forgets it: the next one is news again', () => {
  const a = new Announcer({ settleMs: 100, gapMs: 0 });
  a.status(0, 'in-sync', 'Playing in sync');
  assert.equal(a.next(100).text, 'Playing in sync');
  a.status(200, null, '');
  a.status(300, 'in-sync', 'Playing in sync');
  assert.equal(a.next(400).text, 'Playing in sync');
});

test('the connection is said when its phase changes, never its countdown', () => {
  const a = new Announcer({ gapMs: 0 });
  a.connection('connecting', 'Connecting…');
  a.connection('open', '');
  assert.equal(a.next(0).text, null, 'the first connection is not news');
  a.connection('reconnecting', 'Reconnecting… attempt 1, next try in 0.5 s');
  a.connection('reconnecting', 'Reconnecting… attempt 2, next try in 1.0 s');
  a.connection('open', '');
  assert.deepEqual(drain(a, 0), [{ at: 0, text: 'Connected again.' }],
    'a loss and its recovery not yet said are one slot: the latest');
});

test('news comes before the badge, and the badge waits its gap', () => {
  const a = new Announcer({ gapMs: 1500, settleMs: 2000 });
  a.status(0, 'in-sync', 'Playing in sync');
  a.news('alice pressed play at 0:00', 'play');
  assert.deepEqual(drain(a, 0), [
    { at: 0, text: 'alice pressed play at 0:00' },
    { at: 2000, text: 'Playing in sync' },
  ]);
});
