// A video that cannot seek (sync/seekable.js, sync/player.js): from a file
// server without range requests, the browser can play from the start only. The
// player says so once and stands aside, rather than seeking every tick.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { canSeekTo, unseekableWords } from '../../Sources/CowatchWeb/Web/static/sync/seekable.js';
import { formatTime } from '../../Sources/CowatchWeb/Web/static/model/ui.js';
import { member, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const SUSPEND = '/suspend coordinatedPlaybackNotPossible';
const RESUME = '/resume coordinatedPlaybackNotPossible';

test('a position is reachable within a seekable range; without ranges read, the element decides', () => {
  assert.equal(canSeekTo([[0, 600]], 59.7), true);
  assert.equal(canSeekTo([[0, 0]], 0), true);
  assert.equal(canSeekTo([[0, 0]], 59.7), false);
  assert.equal(canSeekTo([[0, 10], [20, 30]], 15), false);
  assert.equal(canSeekTo([], 0), false);
  assert.equal(canSeekTo(undefined, 59.7), true);
});

test('the words name the position and what would work', () => {
  const words = unseekableWords(59.7, formatTime);
  assert.match(words, /cannot go to 0:59 where the group is/);
  assert.match(words, /range requests/);
});

test('a group held where the video cannot seek: one /suspend, no seek loop, no /ready', () => {
  const sim = new SimulatedPlayer({ rangeRequests: false });
  sim.open(roomState(2, { status: 'paused', position: 0 }));
  assert.deepEqual(sim.lines(), []);
  // A /seek 60 while playing: the group waits for its players at 60.
  sim.setState(roomState(3, { status: 'waiting', position: 60, at: T0 + 200 }));
  sim.advance(2000);
  assert.deepEqual(sim.lines(), [SUSPEND]);
  assert.equal(sim.count('seek'), 0, 'a seek was tried where the video cannot go');
  assert.deepEqual(sim.core.unseekable, { position: 60 });
  // The server's answer: this member is suspended; nothing more is said or tried.
  sim.setMe(member(['coordinatedPlaybackNotPossible']));
  sim.advance(2000);
  assert.equal(sim.core.mode, 'suspended');
  assert.deepEqual(sim.lines(), [SUSPEND]);
  assert.equal(sim.count('seek'), 0);
  // The group plays on from the start: it is past 0:00 before this player could be back.
  sim.setState(roomState(4, { status: 'playing', position: 0, at: T0 + 4300 }));
  sim.advance(500);
  assert.deepEqual(sim.lines(), [SUSPEND]);
  // Paused at the start: the video can be there, so it rejoins, and starts with the group.
  sim.setState(roomState(5, { status: 'paused', position: 0, at: T0 + 4800 }));
  sim.advance(100);
  assert.deepEqual(sim.lines(), [SUSPEND, RESUME]);
  assert.equal(sim.core.unseekable, null);
  sim.setMe(member());
  sim.setState(roomState(6, { status: 'waiting', position: 0, at: T0 + 5000 }));
  sim.advance(200);
  assert.deepEqual(sim.lines(), [SUSPEND, RESUME, '/ready 6']);
  sim.setState(roomState(7, { status: 'playing', position: 0, at: T0 + 5400 }));
  sim.advance(1000);
  assert.ok(Math.abs(sim.driftMs({ playing: true, position: 0, at: T0 + 5400, rate: 1 })) < 10, 'started with the group');
  assert.deepEqual(sim.lines(), [SUSPEND, RESUME, '/ready 6']);
});

test('a late joiner to a group playing far from the start: said once, not re-joined every tick', () => {
  const sim = new SimulatedPlayer({ rangeRequests: false });
  sim.open(roomState(5, { status: 'playing', position: 30, at: T0 - 10_000 }));
  sim.advance(3000);
  assert.deepEqual(sim.lines(), [SUSPEND]);
  assert.equal(sim.count('seek'), 0);
  assert.equal(sim.count('play'), 0);
  assert.ok(sim.core.unseekable.position > 40, `unseekable at ${sim.core.unseekable.position}`);
});

test('with range requests nothing changes: the held position is sought as before', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'paused', position: 0 }));
  sim.setState(roomState(3, { status: 'waiting', position: 60, at: T0 + 200 }));
  sim.advance(500);
  assert.deepEqual(sim.lines(), ['/ready 3']);
  assert.equal(sim.core.unseekable, null);
  assert.equal(sim.video.currentTime, 60);
});
