// Numbered states (sync/seq.js) and the reports that answer them: an older
// state never overrides a newer one, and /ready and /ended answer each state
// once (the server refuses stale ones, docs/protocol.md, "Item identity"), but
// again whenever the server may have lost or not yet seen them.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isStale } from '../../Sources/CowatchWeb/Web/static/sync/seq.js';
import { member, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

test('an older state is stale; the same seq again is not (handed back after a suspension)', () => {
  assert.equal(isStale({ seq: 7 }, { seq: 6 }), true);
  assert.equal(isStale({ seq: 7 }, { seq: 7 }), false);
  assert.equal(isStale({ seq: 7 }, { seq: 8 }), false);
});

test('after a welcome nothing is stale: a restarted server may count anew', () => {
  assert.equal(isStale(null, { seq: 1 }), false);
  assert.equal(isStale(undefined, { seq: 1 }), false);
});

function held(seq = 2) {
  const sim = new SimulatedPlayer();
  sim.open(roomState(1, { status: 'paused', position: 12 }));
  sim.setState(roomState(seq, { status: 'waiting', position: 12, at: sim.now }));
  sim.advance(500);
  return sim;
}

test('/ready answers a waiting state once, however many ticks go by', () => {
  const sim = held();
  sim.advance(2000);
  assert.deepEqual(sim.lines('/ready'), ['/ready 2']);
  assert.equal(sim.core.detail, 'ready');
});

test('/ready is said only at the exact position with data, after the seek', () => {
  const sim = new SimulatedPlayer({ seekMs: 200 });
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  sim.setState(roomState(2, { status: 'waiting', position: 42.5, at: sim.now }));
  sim.advance(150);
  assert.deepEqual(sim.lines('/ready'), []);
  sim.advance(200);
  assert.deepEqual(sim.lines('/ready'), ['/ready 2']);
  assert.equal(sim.video.currentTime, 42.5);
});

test('a newer waiting state (a seek while waiting) gets its own /ready', () => {
  const sim = held();
  sim.setState(roomState(3, { status: 'waiting', position: 20, at: sim.now }));
  sim.advance(500);
  assert.deepEqual(sim.lines('/ready'), ['/ready 2', '/ready 3']);
});

test('after a reconnect (a new welcome) the same state is answered again: the first /ready may be lost', () => {
  const sim = held();
  sim.reset();
  sim.setState(roomState(2, { status: 'waiting', position: 12, at: sim.now - 500 }));
  sim.advance(200);
  assert.deepEqual(sim.lines('/ready'), ['/ready 2', '/ready 2']);
});

test('when a suspension ends, the state handed back with the same seq is answered again', () => {
  const sim = held();
  sim.setMe(member(['userIsChangingCurrentTime']));
  sim.advance(200);
  sim.setMe(member([]));
  sim.setState(roomState(2, { status: 'waiting', position: 12, at: sim.now - 700 }));
  sim.advance(200);
  assert.deepEqual(sim.lines('/ready'), ['/ready 2', '/ready 2']);
});

test('/ended once per state, and again for the next item', () => {
  const sim = new SimulatedPlayer({ duration: 20 });
  sim.open(roomState(4, { status: 'playing', position: 18, at: T0 }));
  sim.advance(3000);
  sim.event('ended'); // browsers may fire it again (a seek at the end, a replay)
  assert.deepEqual(sim.lines('/ended'), ['/ended 4']);
  sim.setState(roomState(5, { status: 'playing', position: 18, at: sim.now }, { item: 'item-2', url: 'http://media.test/next.mp4' }));
  sim.advance(3000);
  assert.deepEqual(sim.lines('/ended'), ['/ended 4', '/ended 5']);
});
