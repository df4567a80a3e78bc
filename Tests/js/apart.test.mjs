// A player set apart by what nobody here ordered, or by the person alone
// (sync/apart.js, sync/player.js): a pause by the system or the browser is not
// undone but said with its reason; a hidden page's is `away` and ends when the
// page is shown; "Pause just for me" and back; an item played only for me.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { interruptionReason, ownReasonsOf, pausedUnordered } from '../../Sources/CowatchWeb/Web/static/sync/apart.js';
import { planPlayer } from '../../Sources/CowatchWeb/Web/static/sync/plan.js';
import { member, playing, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const GROUP = playing(0, T0 - 1000);

/** A player in step with a group that plays from T0 - 1000. */
function playingAlong() {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }));
  sim.until(() => sim.core.running && !sim.core.verify);
  sim.advance(500);
  assert.deepEqual(sim.lines(), []);
  return sim;
}

test('an unordered pause: a video that followed the group and stands still, not at its end', () => {
  assert.equal(pausedUnordered({ running: 'k', paused: true, ended: false }), true);
  assert.equal(pausedUnordered({ running: null, paused: true }), false); // not started by us yet
  assert.equal(pausedUnordered({ running: 'k', paused: false }), false);
  assert.equal(pausedUnordered({ running: 'k', paused: true, ended: true }), false);
  assert.equal(interruptionReason(false), 'audioSessionInterrupted');
  assert.equal(interruptionReason(true), 'away');
  assert.deepEqual(ownReasonsOf(['stallRecovery', 'away'], { reason: 'pausedForMe' }), ['away', 'pausedForMe']);
  assert.deepEqual(ownReasonsOf(['away'], { reason: 'away' }), ['away']);
});

test('a pause the system makes is not undone: /suspend audioSessionInterrupted once, the video stays paused', () => {
  const sim = playingAlong();
  const plays = sim.plays.length;
  sim.video.paused = true; // the operating system took the audio (a call)
  sim.advance(2000);
  assert.deepEqual(sim.lines(), ['/suspend audioSessionInterrupted']);
  assert.equal(sim.video.paused, true);
  assert.equal(sim.plays.length, plays, 'play() was not called again');
  assert.equal(sim.core.mode, 'suspended');
  // The room confirms: still nothing more said, still paused.
  sim.setMe(member(['audioSessionInterrupted']));
  sim.advance(2000);
  assert.deepEqual(sim.lines(), ['/suspend audioSessionInterrupted']);
  assert.equal(sim.video.paused, true);
  // The person presses play (the page, the lock screen): /resume, and the state handed back starts it in step.
  sim.perform(sim.core.backToGroup(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend audioSessionInterrupted', '/resume audioSessionInterrupted']);
  sim.setMe(member([]));
  sim.until(() => sim.core.running && !sim.core.verify);
  sim.advance(1000);
  assert.ok(Math.abs(sim.driftMs(GROUP)) < 5, `back in step (${sim.driftMs(GROUP)} ms)`);
});

test('the system playing the video again ends the interruption by itself', () => {
  const sim = playingAlong();
  sim.video.paused = true;
  sim.advance(300);
  sim.setMe(member(['audioSessionInterrupted']));
  sim.video.paused = false; // a short call ended; the browser plays on
  sim.advance(300);
  assert.deepEqual(sim.lines(), ['/suspend audioSessionInterrupted', '/resume audioSessionInterrupted']);
});

test('hidden, the browser\'s pause is `away`; shown again, /resume away at once', () => {
  const sim = playingAlong();
  sim.perform(sim.core.setHidden(true, sim.read()));
  assert.deepEqual(sim.lines(), [], 'hidden alone says nothing: a video that plays on in the background is still watched');
  sim.video.paused = true; // the browser pauses a background video
  sim.advance(3000);
  assert.deepEqual(sim.lines(), ['/suspend away']);
  sim.setMe(member(['away']));
  sim.advance(3000);
  sim.perform(sim.core.setHidden(false, sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend away', '/resume away']);
  sim.advance(1000);
  assert.deepEqual(sim.lines(), ['/suspend away', '/resume away'], 'said once while the room still has it away');
  sim.setMe(member([]));
  sim.until(() => sim.core.running && !sim.core.verify);
  sim.advance(500);
  assert.ok(Math.abs(sim.driftMs(GROUP)) < 5, `back in step (${sim.driftMs(GROUP)} ms)`);
});

test('a hidden page the browser freezes is away before its connection goes, and back when shown', () => {
  const sim = playingAlong();
  sim.perform(sim.core.setHidden(true, sim.read()));
  sim.perform(sim.core.freezing(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend away']);
  assert.equal(sim.video.paused, true);
  sim.perform(sim.core.freezing(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend away'], 'said once');
  sim.setMe(member(['away']));
  sim.perform(sim.core.setHidden(false, sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend away', '/resume away']);
});

test('a page loaded while the room still has it away says it is back', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }), member(['away']));
  sim.advance(200);
  assert.deepEqual(sim.lines(), ['/resume away']);
});

test('a pause the room orders, and the end of the item, are not interruptions', () => {
  const sim = playingAlong();
  sim.setState(roomState(3, { status: 'paused', position: 1.5 }));
  sim.advance(2000);
  assert.deepEqual(sim.lines(), []);
  const short = new SimulatedPlayer({ duration: 2 });
  short.open(roomState(2, { status: 'playing', position: 0, at: T0 + 100 }));
  short.advance(4000);
  assert.deepEqual(short.lines().filter((l) => l.startsWith('/suspend')), []);
});

test('"Pause just for me": /suspend pausedForMe, the video held; back: /resume and in step', () => {
  const sim = playingAlong();
  sim.perform(sim.core.pauseForMe(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend pausedForMe']);
  assert.equal(sim.video.paused, true);
  assert.equal(sim.core.setApartByPage, true);
  sim.setMe(member(['pausedForMe']));
  sim.advance(3000);
  assert.equal(sim.video.paused, true, 'held while apart');
  sim.perform(sim.core.backToGroup(sim.read()));
  assert.deepEqual(sim.lines(), ['/suspend pausedForMe', '/resume pausedForMe']);
  sim.setMe(member([]));
  sim.until(() => sim.core.running && !sim.core.verify);
  assert.equal(sim.core.setApartByPage, false);
});

test('an item only for me: /leave, the group is not followed, and joining loads the group\'s item again', () => {
  const sim = playingAlong();
  const mine = { url: 'http://media.test/mine.mp4', title: 'Mine', identifier: 'mine', source: { kind: 'file' }, duration: null };
  sim.perform(sim.core.playAlone(mine, sim.read()));
  assert.deepEqual(sim.lines(), ['/leave']);
  assert.equal(sim.core.src, mine.url);
  sim.setMe(member([], { joined: false }));
  sim.setState(roomState(4, { status: 'paused', position: 9 }));
  sim.advance(1000);
  assert.equal(sim.core.mode, 'alone');
  assert.equal(sim.core.src, mine.url, 'the room\'s state does not load its item over mine');
  sim.perform(sim.core.joinGroup(sim.read()));
  assert.deepEqual(sim.lines(), ['/leave', '/join']);
  assert.equal(sim.core.src, 'http://media.test/movie.mp4');
  assert.equal(planPlayer({ alone: { activity: null }, state: null, me: null }, T0).mode, 'alone');
});
