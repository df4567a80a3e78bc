// The player's modes (sync/plan.js, sync/player.js): what it does when it
// cannot or must not follow the group, and the suspensions it asks for.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { planPlayer } from '../../Sources/CowatchWeb/Web/static/sync/plan.js';
import { PlayerCore } from '../../Sources/CowatchWeb/Web/static/sync/player.js';
import { hasEnoughData } from '../../Sources/CowatchWeb/Web/static/sync/readiness.js';
import { member, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const knows = (state, me, extra = {}) => ({
  state, me, mediaError: null, blocked: false, scrubbing: false, catchup: null, stall: null, ...extra,
});

test('the modes, from what the player knows', () => {
  const playingState = roomState(3, { status: 'playing', position: 0, at: T0 + 200 });
  assert.equal(planPlayer(knows(null, member()), T0).mode, 'idle');
  assert.equal(planPlayer(knows({ ...playingState, session: { state: 'invalidated' } }, member()), T0).mode, 'idle');
  assert.equal(planPlayer(knows(playingState, member([], { joined: false })), T0).mode, 'left');
  assert.equal(planPlayer(knows(playingState, member(), { mediaError: 'x' }), T0).mode, 'error');
  assert.equal(planPlayer(knows(playingState, member(), { blocked: true }), T0).mode, 'blocked');
  assert.equal(planPlayer(knows(playingState, member(), { scrubbing: true }), T0).mode, 'scrubbing');
  assert.equal(planPlayer(knows(playingState, member(), { stall: {} }), T0).mode, 'stalled');
  assert.equal(planPlayer(knows(playingState, member()), T0).mode, 'starting');
  assert.equal(planPlayer(knows(playingState, member()), T0 + 200).mode, 'playing');
  const suspended = planPlayer(knows(playingState, member(['catchup', 'stallRecovery'])), T0);
  assert.deepEqual(suspended, { kind: 'detached', mode: 'suspended', reasons: ['stallRecovery'] });
  const waiting = planPlayer(knows(roomState(9, { status: 'waiting', position: 4 }), member()), T0);
  assert.equal(waiting.kind, 'hold');
  assert.equal(waiting.waitingSeq, 9);
  assert.equal(planPlayer(knows(roomState(9, { status: 'paused', position: 4 }), member()), T0).waitingSeq, null);
});

test('enough data: can play through, or the next second buffered, or up to the end', () => {
  const at = (currentTime, buffered, readyState = 3, duration = 600) => ({ seeking: false, readyState, currentTime, duration, buffered });
  assert.equal(hasEnoughData(at(10, [], 4)), true);
  assert.equal(hasEnoughData(at(10, [[9, 11.2]])), true);
  assert.equal(hasEnoughData(at(10, [[9, 10.5]])), false);
  assert.equal(hasEnoughData(at(599.5, [[590, 600]])), true);
  assert.equal(hasEnoughData(at(10, [[0, 600]], 2)), false);
  assert.equal(hasEnoughData({ ...at(10, [], 4), seeking: true }), false);
});

test('media that does not load: one /suspend coordinatedPlaybackNotPossible, and /resume once it loads', () => {
  const sim = new SimulatedPlayer({ failLoads: true });
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }));
  sim.advance(1000);
  assert.equal(sim.core.mode, 'error');
  assert.equal(sim.core.mediaError, 'the address could not be loaded or the format is not supported');
  assert.deepEqual(sim.lines(), ['/suspend coordinatedPlaybackNotPossible']);
  assert.equal(sim.video.paused, true);

  // "Try again" while the media still fails: still separated, nothing said twice.
  sim.perform(sim.core.retryMedia());
  sim.advance(500);
  assert.equal(sim.core.mode, 'error');
  assert.deepEqual(sim.lines(), ['/suspend coordinatedPlaybackNotPossible']);

  sim.failLoads = false;
  sim.perform(sim.core.retryMedia());
  sim.advance(100);
  assert.deepEqual(sim.lines(), ['/suspend coordinatedPlaybackNotPossible', '/resume coordinatedPlaybackNotPossible']);
});

test('autoplay refused: /suspend userActionRequired and a click to join; the click resumes and starts in step', () => {
  const sim = new SimulatedPlayer({ refuseAutoplay: true });
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }));
  sim.advance(1000);
  assert.equal(sim.core.mode, 'blocked');
  assert.deepEqual(sim.lines(), ['/suspend userActionRequired']);
  sim.setMe(member(['userActionRequired']));

  // The click: play() within the gesture (sync/player-sync.js), then the player goes on.
  sim.refuseAutoplay = false;
  sim.core.unblock();
  sim.perform(sim.core.afterUnblock(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend userActionRequired', '/resume userActionRequired']);
  sim.setMe(member([]));
  sim.until(() => sim.core.running && !sim.core.verify);
  assert.equal(sim.core.mode, 'playing');
  assert.ok(Math.abs(sim.driftMs({ playing: true, position: 0, at: T0 - 1000, rate: 1 })) < 1.5);
});

test('a member who left the session stops its video, and reports nothing', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }));
  sim.until(() => sim.core.running);
  sim.setMe(member([], { joined: false }));
  sim.advance(1000);
  assert.equal(sim.core.mode, 'left');
  assert.equal(sim.video.paused, true);
  assert.deepEqual(sim.lines(), []);
});

test('while the viewer drags the seek bar, the player leaves the video alone', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'paused', position: 30 }));
  sim.core.scrubbing = true;
  const before = sim.actions.length;
  sim.video.currentTime = 75; // the viewer's preview
  sim.advance(1000);
  assert.equal(sim.core.mode, 'scrubbing');
  assert.equal(sim.video.currentTime, 75);
  assert.equal(sim.actions.slice(before).filter((a) => a.type !== 'note').length, 0);
  sim.core.scrubbing = false;
  sim.advance(200);
  assert.equal(sim.video.currentTime, 30);
});

test('a new item: the old start is dropped, the new source loaded, and the player holds its position', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'playing', position: 40, at: T0 - 1000 }));
  sim.advance(100);
  assert.ok(sim.core.join);
  sim.setState(roomState(3, { status: 'paused', position: 0, at: sim.now }, { item: 'item-2', url: 'http://media.test/next.mp4' }));
  assert.equal(sim.core.join, null);
  assert.ok(sim.actions.some((a) => a.type === 'load' && a.activity.url === 'http://media.test/next.mp4'));
  sim.advance(500);
  assert.equal(sim.core.mode, 'paused');
  assert.equal(sim.video.currentTime, 0);
  assert.equal(sim.plays.length, 0);
});

test('/duration once the media is loaded, only while the room says it does not know (duration: null)', () => {
  const unknown = roomState(2, { status: 'paused', position: 0 });
  unknown.session.activity.duration = null;
  const sim = new SimulatedPlayer({ duration: 600 });
  sim.open(unknown);
  assert.deepEqual(sim.lines('/duration'), ['/duration 2 600.000']);
  // Once sent, not again for the same item, whatever the states say.
  sim.setState({ ...unknown, seq: 3 });
  sim.advance(200);
  assert.deepEqual(sim.lines('/duration'), ['/duration 2 600.000']);

  // A room that knows the duration, or a state with no such field: nothing.
  const known = roomState(2, { status: 'paused', position: 0 });
  known.session.activity.duration = 600;
  const quiet = new SimulatedPlayer();
  quiet.open(known);
  const older = new SimulatedPlayer();
  older.open(roomState(2, { status: 'paused', position: 0 }));
  assert.deepEqual([...quiet.lines('/duration'), ...older.lines('/duration')], []);
});

test('a live item: /duration <seq> live <edge>, the edge being where the player would play now', () => {
  const core = new PlayerCore();
  const state = roomState(4, { status: 'paused', position: 0 });
  Object.assign(state.session.activity, { duration: null, live: true });
  const empty = {
    now: T0, monotonic: 5000, currentTime: 0, paused: true, seeking: false, readyState: 0, duration: NaN, playbackRate: 1, buffered: [], error: null,
  };
  core.setMe(member(), empty);
  core.setState(state, empty);
  const loaded = { ...empty, readyState: 4, duration: Infinity, live: true, liveEdge: 1234.5 };
  const sent = core.mediaLoaded(loaded).filter((a) => a.type === 'send').map((a) => a.line);
  assert.deepEqual(sent, ['/duration 4 live 1234.500']);
  // No edge known yet: nothing.
  const other = new PlayerCore();
  other.setMe(member(), empty);
  other.setState(state, empty);
  assert.deepEqual(other.mediaLoaded({ ...loaded, liveEdge: undefined }).filter((a) => a.type === 'send'), []);
});
