// Scheduled starts (sync/start.js) and what the player learns from them
// (sync/latency.js): every player leaves the position at the server's instant,
// a late one starts ahead in step rather than behind, and a start that cannot
// make its instant is planned again rather than played late.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  latencyAfterProbe, latencyAfterStart, LATENCY_SAMPLES, LEARNABLE_ERROR_MS, leadAfterMiss, leadAfterSeek, measureStart, needsProbe,
  PLAY_LATENCY_MS, playerError, probedLatency, JOIN_LEAD_MS,
} from '../../Sources/CowatchWeb/Web/static/sync/latency.js';
import {
  CATCH_UP_BOOST, CATCH_UP_FROM_MS, catchUpFor, fireDecision, LATE_START_MS, planStart, PREROLL, prerollFor, prerollLead, sameCourse, settleFor,
  SPIN_MS, wakeDelay,
} from '../../Sources/CowatchWeb/Web/static/sync/start.js';
import { member, playing, probedWithSound, roomState, SimulatedPlayer, T0 } from './support/simulated-player.mjs';

const T = 1_700_000_000_000;
const holding = (position) => ({ currentTime: position, seeking: false, duration: 600 });

// MARK: planning

test('a coordinated start keeps the server instant when the video holds the position with data', () => {
  const plan = planStart({
    timeline: playing(30, T + 300), now: T, video: holding(30), enoughData: true, playLatency: 5, joinLead: 350,
  });
  assert.deepEqual(plan, { startAt: T + 300, position: 30, rate: 1, coordinated: true });
});

test('a video not at the position, or without data, starts a lead ahead, where the timeline will be then', () => {
  for (const [video, enoughData] of [[holding(29), true], [holding(30), false], [{ ...holding(30), seeking: true }, true]]) {
    const plan = planStart({ timeline: playing(30, T + 300), now: T, video, enoughData, playLatency: 5, joinLead: 350 });
    assert.equal(plan.coordinated, false);
    assert.equal(plan.startAt, T + 350);
    assert.ok(Math.abs(plan.position - 30.05) < 1e-9);
  }
});

test('an instant too close for the timer and the spin is not aimed at', () => {
  const tooClose = T + SPIN_MS + 5 + 2;
  const plan = planStart({ timeline: playing(30, tooClose), now: T, video: holding(30), enoughData: true, playLatency: 5, joinLead: 350 });
  assert.equal(plan.coordinated, false);
  assert.equal(plan.startAt, T + 350);
});

test('joining a group that plays: the position it will have reached when the video starts', () => {
  const plan = planStart({ timeline: playing(100, T - 10000, 1.5), now: T, video: holding(0), enoughData: true, playLatency: 5, joinLead: 400 });
  assert.equal(plan.startAt, T + 400);
  assert.ok(Math.abs(plan.position - (100 + 1.5 * 10.4)) < 1e-9);
  assert.equal(plan.rate, 1.5);
});

test('a start near the end of the media aims at the end, not past it', () => {
  const plan = planStart({ timeline: playing(590, T - 20000), now: T, video: { ...holding(0), duration: 600 }, enoughData: true, playLatency: 5, joinLead: 350 });
  assert.equal(plan.position, 600);
});

test('a state on the same course (a handed-back state, a queue change) fits the start under way', () => {
  const start = { startAt: T + 350, position: 40.35, rate: 1 };
  assert.equal(sameCourse(start, playing(40, T)), true);
  assert.equal(sameCourse(start, playing(40.35, T + 350)), true); // re-anchored, same course
  assert.equal(sameCourse(start, playing(45, T)), false); // a seek
  assert.equal(sameCourse(start, playing(40, T, 1.5)), false); // a rate change
});

// MARK: firing

test('the timer wakes a spin before the instant, early by the play() latency', () => {
  assert.equal(wakeDelay(T + 500, 5, T), 500 - 5 - SPIN_MS);
  assert.equal(wakeDelay(T + 3, 5, T), 0);
});

test('a timer on time plays at the instant minus the latency; early waits again; late plans again', () => {
  assert.deepEqual(fireDecision(T + 100, 5, T + 95 - SPIN_MS), { kind: 'play', at: T + 95, late: -SPIN_MS });
  assert.deepEqual(fireDecision(T + 100, 5, T + 50), { kind: 'wait', ms: 45 - SPIN_MS });
  assert.equal(fireDecision(T + 100, 5, T + 95 + 30).kind, 'play'); // a little late: the drift correction absorbs it
  assert.equal(fireDecision(T + 100, 5, T + 95 + LATE_START_MS + 1).kind, 'replan');
});

test('a play() called late is caught up at a quarter faster, for as long as gains the lateness back', () => {
  assert.equal(catchUpFor(CATCH_UP_FROM_MS - 0.1, 1), null);
  assert.deepEqual(catchUpFor(40, 1), { rate: 1 + CATCH_UP_BOOST, ms: 40 / CATCH_UP_BOOST });
  assert.deepEqual(catchUpFor(20, 1.5), { rate: 1.5 * (1 + CATCH_UP_BOOST), ms: 20 / CATCH_UP_BOOST });
  assert.equal(catchUpFor(LATE_START_MS, 1), null); // that late, the start is planned again (fireDecision)
  assert.equal(catchUpFor(NaN, 1), null);
});

// MARK: learning

test('what a start teaches of play(): its error less the lateness of the call, and less what a catch-up gained', () => {
  // Called 30 ms late, no catch-up, the player itself 2 ms slow: 32 measured.
  assert.equal(playerError(32, { callLate: 30 }), 2);
  // Called 40 ms late, caught up at 1.25 for 5 + 160 ms; the player 3 ms slow
  // (it moved 8 ms after the call, boosted for 157 ms: gained 39.25 ms).
  const gained = CATCH_UP_BOOST * (165 - 8);
  const measured = 40 + 3 - gained;
  assert.ok(Math.abs(playerError(measured, { callLate: 40, boost: CATCH_UP_BOOST, boostedMs: 165, playLatency: 5 }) - 3) < 1e-9);
  // A clip with sound, latency not learned yet: it moved 90 ms after the call,
  // after a catch-up of 5 + 16 ms had ended: nothing gained, all of it its own.
  assert.equal(playerError(4 + 85, { callLate: 4, boost: CATCH_UP_BOOST, boostedMs: 21, playLatency: 5 }), 85);
});

test('play() latency: the median of what the last starts took from play() to the video moving, within bounds', () => {
  assert.deepEqual(latencyAfterStart(5, 10), { playLatency: 15, taken: [15] });
  assert.deepEqual(latencyAfterStart(5, -10, [3]), { playLatency: PLAY_LATENCY_MS.min, taken: [3, -5] }); // median -1: bounded
  assert.equal(latencyAfterStart(100, 120, [200, 210]).playLatency, PLAY_LATENCY_MS.max);
  // a clip with sound: its clock moved 85 ms after the instant; the next start calls play() 90 ms ahead
  assert.equal(latencyAfterStart(5, 85).playLatency, 90);
  // one hiccup among steady starts does not move it
  assert.equal(latencyAfterStart(5, 100, [5, 6, 4, 5]).playLatency, 5);
  // only the last LATENCY_SAMPLES count
  const last = latencyAfterStart(90, 0, [5, 5, 5, 90, 90]);
  assert.deepEqual(last.taken, [5, 5, 90, 90, 90].slice(-LATENCY_SAMPLES));
  assert.equal(last.playLatency, 90);
});

test('play() latency: an error of LEARNABLE_ERROR_MS or more is a hiccup, shown but not learned from', () => {
  const taken = [5, 6];
  assert.deepEqual(latencyAfterStart(5, LEARNABLE_ERROR_MS, taken), { playLatency: 5, taken });
  assert.deepEqual(latencyAfterStart(5, -LEARNABLE_ERROR_MS, taken), { playLatency: 5, taken });
  assert.deepEqual(latencyAfterStart(5, NaN, taken), { playLatency: 5, taken });
});

test('a start is measured from where the video is a little after it', () => {
  const start = measureStart({ startAt: T, position: 10, rate: 2 }, T + 200, 10.39);
  assert.ok(Math.abs(start.error - 5) < 1e-6); // 0.39 s at 2x is 195 ms: it left 5 ms late
  assert.equal(start.at, T);
});

test('the join lead grows when seeks miss their instant, and follows how long seeks take', () => {
  assert.equal(leadAfterMiss(350), 560);
  assert.equal(leadAfterMiss(3000), JOIN_LEAD_MS.max);
  assert.equal(leadAfterSeek(350, 50), 350 * 0.7 + 250 * 0.3);
  assert.equal(leadAfterSeek(200, 0), JOIN_LEAD_MS.min);
});

// MARK: on a simulated video

/** Paused at 0 with data, then the group told to play at `lead` ms from now. */
function coordinated(sim, seq, lead = 300) {
  sim.setState(roomState(seq, { status: 'waiting', position: sim.video.currentTime, at: sim.now }));
  sim.advance(100);
  const at = sim.now + lead;
  sim.setState(roomState(seq + 1, { status: 'playing', position: sim.video.currentTime, at }));
  return at;
}

/** `count` coordinated starts from where the video stands (states 2, 3, 4, then
 *  5, 6, 7...), each paused again a second later: each start's error, ms. */
function startErrors(sim, count) {
  const errors = [];
  for (let seq = 2; seq < 2 + 3 * count; seq += 3) {
    coordinated(sim, seq);
    sim.advance(1000);
    errors.push(sim.core.lastStart.error);
    sim.setState(roomState(seq + 2, { status: 'paused', position: sim.video.currentTime, at: sim.now }));
    sim.advance(200);
  }
  return errors;
}

test('a coordinated start: nothing moves before the instant, and the video leaves its position at it', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  const at = coordinated(sim, 2);
  sim.until(() => sim.now === at - 1);
  assert.equal(sim.video.currentTime, 0);
  assert.equal(sim.core.mode, 'starting');
  assert.equal(sim.count('seek'), 0);
  sim.advance(201);
  assert.ok(Math.abs(sim.video.currentTime - 0.2) < 0.0015, `at +200 ms: ${sim.video.currentTime}`);
  assert.equal(sim.core.mode, 'playing');
  assert.ok(Math.abs(sim.core.lastStart.error) <= 1);
});

test('a slow play() is learned: after a few starts the video leaves its position within 2 ms of the instant', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 20 });
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  const errors = startErrors(sim, 10);
  assert.ok(errors[0] > 10, `first start ${errors[0]} ms late`);
  assert.ok(Math.abs(errors.at(-1)) < 2, `last start ${errors.at(-1)} ms off; all: ${errors.map((e) => e.toFixed(1))}`);
  assert.ok(Math.abs(sim.core.playLatency - 20) < 2);
});

test('a clip with sound (the clock moves 90 ms after play()) is learned from the first start: the second is on time', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 90 });
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  const errors = startErrors(sim, 5);
  assert.ok(errors[0] > 80, `first start ${errors[0]} ms late`);
  assert.ok(errors.slice(1).every((e) => Math.abs(e) < 2), `starts after the first: ${errors.map((e) => e.toFixed(1))}`);
});

test('a late joiner seeks ahead and starts in step, not behind', () => {
  const sim = new SimulatedPlayer({ seekMs: 120 });
  const timeline = playing(100, T0 - 10000);
  sim.open(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.until(() => sim.core.running && !sim.core.verify);
  assert.equal(sim.count('seek'), 1);
  assert.ok(sim.actions.find((a) => a.type === 'seek').to > 110);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1.5, `drift ${sim.driftMs(timeline)} ms`);
  assert.equal(sim.core.mode, 'playing');
});

test('seeks slower than the lead: the start is planned again further ahead, and lands in step', () => {
  const sim = new SimulatedPlayer({ seekMs: 700 });
  const timeline = playing(100, T0 - 10000);
  sim.open(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.until(() => sim.core.running && !sim.core.verify, 10000);
  assert.ok(sim.notes.some((n) => n.startsWith('join missed its instant')));
  assert.ok(sim.core.joinLead > JOIN_LEAD_MS.initial);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1.5, `drift ${sim.driftMs(timeline)} ms`);
});

test('a timer that fires well past the instant (a busy page) does not play late: it plans again', () => {
  const sim = new SimulatedPlayer();
  const timeline = playing(100, T0 - 10000);
  sim.timerDelayMs = 150;
  sim.setMe(member());
  sim.setState(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.until(() => sim.timer);
  const lead = sim.core.joinLead; // as learned from the first seek
  sim.until(() => sim.core.running && !sim.core.verify);
  const replanned = sim.notes.findIndex((n) => /^start 1[0-9]{2}\.\d ms late: plan again$/.test(n));
  assert.ok(replanned >= 0, sim.notes.join(' | '));
  // The next start is planned further ahead (the lead grew by 30 %).
  const next = sim.notes.slice(replanned).find((n) => n.startsWith('join:'));
  assert.equal(Number(/\(in (\d+) ms\)/.exec(next)[1]), Math.round(lead * 1.3));
  assert.equal(sim.plays.length, 1);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1.5);
});

test('a timer that fires a little late (a busy page) plays late but catches up at once, and is not learned as latency', () => {
  const sim = new SimulatedPlayer();
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  const errors = [];
  for (let seq = 2; seq < 15; seq += 3) {
    sim.timerDelayMs = seq === 2 || seq === 8 ? 40 : 0; // it wakes a spin (10 ms) early: 30 ms late
    const at = coordinated(sim, seq);
    const timeline = playing(sim.video.currentTime, at);
    sim.until(() => sim.now === at + 200);
    errors.push(sim.driftMs(timeline));
    sim.advance(800);
    sim.setState(roomState(seq + 2, { status: 'paused', position: sim.video.currentTime, at: sim.now }));
    sim.advance(200);
  }
  // Level with the timeline 200 ms after the instant, late timer or not.
  assert.ok(errors.every((e) => Math.abs(e) < 1.5), `drift 200 ms after each start: ${errors.map((e) => e.toFixed(1))}`);
  const catchUps = sim.notes.filter((n) => /^play\(\) 30\.0 ms late: catching up at 1.25 for 125 ms$/.test(n));
  assert.equal(catchUps.length, 2, sim.notes.join(' | '));
  assert.ok(sim.rates.some((r) => r.rate === 1.25) && sim.video.playbackRate === 1);
  // The player's latency is still its own 5 ms, not the page's 40.
  assert.ok(Math.abs(sim.core.playLatency - 5) < 1, `learned ${sim.core.playLatency} ms`);
});

test('a start off its instant levels off at once: faster when late, slower when early, by exactly the error', () => {
  assert.deepEqual(settleFor(20, 1), { rate: 1 + CATCH_UP_BOOST, ms: 20 / CATCH_UP_BOOST });
  assert.deepEqual(settleFor(-10, 1), { rate: 1 - CATCH_UP_BOOST, ms: 10 / CATCH_UP_BOOST });
  assert.equal(settleFor(CATCH_UP_FROM_MS / 2, 1), null); // the nudge's business
  assert.equal(settleFor(-LATE_START_MS, 1), null); // a re-join's
  assert.equal(settleFor(NaN, 1), null);
  assert.deepEqual(catchUpFor(20, 1), settleFor(20, 1));
  assert.equal(catchUpFor(-20, 1), null);
});

test('a video with sound is measured before its first start (a probe), separately from silent ones', () => {
  assert.equal(needsProbe('sound'), true);
  assert.equal(needsProbe('muted', []), true);
  assert.equal(needsProbe('sound', [80]), false);
  assert.equal(needsProbe('silent'), false);
  assert.equal(needsProbe(undefined), false); // a player that does not say (YouTube, Vimeo)
  // The probe played from 10 s, called at 1000 ms, read at 1250 ms at 10.17 s: its clock started at 1080 ms.
  assert.ok(Math.abs(probedLatency({ from: 10, calledAt: 1000, readAt: 1250, currentTime: 10.17 }) - 80) < 1e-6);
  assert.ok(Math.abs(probedLatency({ from: 10, calledAt: 1000, readAt: 1250, currentTime: 10.34, rate: 2 }) - 80) < 1e-6);
  assert.deepEqual(latencyAfterProbe(80), { playLatency: 80, taken: [80] });
  assert.equal(latencyAfterProbe(400).playLatency, PLAY_LATENCY_MS.max);
});

test('a clip with sound: the probe before the first /ready makes the first start on time, and the held position is kept', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 90, sound: 'sound' });
  sim.open(roomState(1, { status: 'paused', position: 12 }));
  sim.until(() => sim.count('probe') === 1 && !sim.core.probing && !sim.video.seeking && sim.video.paused);
  assert.equal(sim.video.currentTime, 12); // played 250 ms to measure, and put back
  assert.ok(Math.abs(sim.core.playLatency - 90) < 1, `learned ${sim.core.playLatency} ms`);
  assert.equal(sim.core.latencies.silent, undefined);
  const errors = startErrors(sim, 3);
  assert.ok(errors.every((e) => Math.abs(e) < 2), `starts: ${errors.map((e) => e.toFixed(1))}`);
  assert.equal(sim.count('probe'), 1); // once, then learned from the starts
});

test('a late joiner with sound probes first, then plans its start with what it measured', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 70, sound: 'sound', seekMs: 60 });
  const timeline = playing(100, T0 - 10000);
  sim.open(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.until(() => sim.core.running && !sim.core.verify && !sim.core.catchUp);
  assert.equal(sim.count('probe'), 1);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 2, `drift ${sim.driftMs(timeline)} ms`);
});

test('a late joiner with sound whose autoplay is refused measures after the click, and starts in step', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 80, sound: 'sound', refuseAutoplay: true });
  const timeline = playing(0, T0 - 1000);
  sim.open(roomState(2, { status: 'playing', position: 0, at: T0 - 1000 }));
  sim.advance(1000);
  assert.equal(sim.core.mode, 'blocked');
  sim.setMe(member(['userActionRequired']));
  sim.refuseAutoplay = false;
  sim.core.unblock();
  sim.perform(sim.core.afterUnblock(sim.read()));
  sim.setMe(member([]));
  sim.until(() => sim.core.running && !sim.core.verify && !sim.core.pulse && !sim.core.pulseQuiet, 20000);
  assert.ok(sim.notes.includes('probe: autoplay refused; measured after the click'), sim.notes.join(' | '));
  assert.ok(sim.notes.some((n) => n.startsWith('probe: the clock started 80.0 ms')), sim.notes.join(' | '));
  assert.ok(Math.abs(sim.core.lastStart.error) < 2, `start ${sim.core.lastStart.error} ms`);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 2, `drift ${sim.driftMs(timeline)} ms`);
});

test('with sound, a late play() is not caught up before the clock moves (its rate would be heard late): the start is measured', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 90, sound: 'sound' });
  sim.open(roomState(1, { status: 'paused', position: 0 }));
  sim.timerDelayMs = 40;
  coordinated(sim, 2);
  sim.advance(1000);
  assert.ok(!sim.notes.some((n) => n.includes('catching up')), sim.notes.join(' | '));
  assert.ok(Math.abs(sim.core.playLatency - 90) < 1, `learned ${sim.core.playLatency} ms`);
});

// MARK: with sound, out of hearing first (start.js: PREROLL)

test('a start with sound begins out of hearing: from as far back as the media has, when the instant leaves time for it', () => {
  const plan = { startAt: T + 700, rate: 1, now: T, playLatency: 90 };
  assert.deepEqual(prerollFor({ ...plan, position: 12 }),
    { back: PREROLL.ms, startAt: T + 700 - PREROLL.ms, position: 12 - PREROLL.ms / 1000, until: T + 700 });
  // 0.45 s into the item: from 0.
  assert.deepEqual(prerollFor({ ...plan, position: 0.45 }), { back: 450, startAt: T + 250, position: 0, until: T + 700 });
  // At 1.5x, half a second goes back 0.72 s of media.
  const fast = prerollFor({ ...plan, rate: 1.5, position: 60 });
  assert.equal(fast.back, PREROLL.ms);
  assert.ok(Math.abs(fast.position - (60 - 1.5 * PREROLL.ms / 1000)) < 1e-9);
  assert.equal(prerollFor({ ...plan, rate: 1.5, position: 0.6 }), null);
  // The first start of an item, from 0:00, has nothing before it; an instant 150 ms ahead has no time.
  assert.equal(prerollFor({ ...plan, position: 0 }), null);
  assert.equal(prerollFor({ ...plan, position: 0.3 }), null);
  assert.equal(prerollFor({ ...plan, startAt: T + 150, position: 12 }), null);
  assert.equal(prerollLead(90), 680);
  assert.equal(prerollLead(83.2), 680);
});

/** A clip with sound paused at `position`, probed (its clock moves `latency` ms after play()). */
const soundAt = (position, latency = 90) => probedWithSound(position, { playLatencyMs: latency });

test('with sound, /ready asks for the lead a start out of hearing needs, unless nothing comes before the position', () => {
  const sim = soundAt(12);
  sim.setState(roomState(2, { status: 'waiting', position: 12, at: sim.now }));
  sim.advance(100);
  assert.equal(sim.sent.at(-1).line, `/ready 2 lead ${prerollLead(90)}`);
  const start = soundAt(0);
  start.setState(roomState(2, { status: 'waiting', position: 0, at: start.now }));
  start.advance(100);
  assert.equal(start.sent.at(-1).line, '/ready 2');
  const silent = new SimulatedPlayer();
  silent.open(roomState(1, { status: 'paused', position: 12 }));
  silent.setState(roomState(2, { status: 'waiting', position: 12, at: silent.now }));
  silent.advance(100);
  assert.equal(silent.sent.at(-1).line, '/ready 2');
});

test('with sound and the lead asked for, a start 12 ms off its plan is levelled off out of hearing, before the instant', () => {
  const sim = soundAt(12);
  sim.playLatencyMs = 102; // this start's clock moves 12 ms later than learned (one block of the audio output)
  const seeks = sim.count('seek');
  const at = coordinated(sim, 2, 750);
  sim.until(() => sim.count('seek') === seeks + 1);
  assert.ok(Math.abs(sim.video.currentTime - (12 - PREROLL.ms / 1000)) < 1e-9);
  assert.equal(sim.hushedUntil, at);
  sim.until(() => sim.now === at);
  assert.ok(sim.plays[0] < at - PREROLL.ms - 80, `play() ${at - sim.plays[0]} ms before the instant`);
  assert.equal(sim.hushedUntil, at); // heard from the instant on
  assert.ok(Math.abs(sim.video.currentTime - 12) < 0.0015, `at the instant: ${sim.video.currentTime}`);
  assert.ok(sim.notes.some((n) => /^start -1[12]\.\d ms: pulse/.test(n)), sim.notes.join(' | '));
  assert.equal(sim.core.mode, 'playing');
  sim.advance(1000);
  assert.ok(Math.abs(sim.driftMs(playing(12, at))) < 1.5, `drift ${sim.driftMs(playing(12, at))} ms`);
  assert.equal(sim.core.preroll, null);
});

test('a pause while a start is out of hearing brings the sound back at once, and the video holds the position', () => {
  const sim = soundAt(12);
  const at = coordinated(sim, 2, 750);
  sim.until(() => sim.plays.length === 1);
  sim.advance(100);
  sim.setState(roomState(4, { status: 'paused', position: 12, at: sim.now }));
  sim.advance(200);
  assert.equal(sim.hushedUntil, null);
  assert.ok(sim.now < at);
  assert.equal(sim.video.paused, true);
  assert.equal(sim.video.currentTime, 12);
});

test('with sound, a start without the lead, or from 0:00, is not begun out of hearing', () => {
  for (const [position, lead] of [[12, 300], [0, 750]]) {
    const sim = soundAt(position);
    const seeks = sim.count('seek');
    coordinated(sim, 2, lead);
    sim.advance(1000);
    assert.equal(sim.count('hush'), 0);
    assert.equal(sim.count('seek'), seeks);
    assert.ok(Math.abs(sim.core.lastStart.error) < 2, `start ${sim.core.lastStart.error} ms`);
  }
});

test('a late joiner with sound begins out of hearing too, half a second further ahead', () => {
  const sim = new SimulatedPlayer({ playLatencyMs: 70, sound: 'sound', seekMs: 60 });
  const timeline = playing(100, T0 - 10000);
  sim.open(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.until(() => sim.plays.length === 1);
  const until = sim.hushedUntil;
  sim.until(() => sim.now === until);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 1.5, `drift ${sim.driftMs(timeline)} ms`);
});

test('the same state handed back during a start does not restart it', () => {
  const sim = new SimulatedPlayer();
  const state = roomState(7, { status: 'playing', position: 100, at: T0 - 10000 });
  sim.open(state);
  sim.setState(roomState(7, { status: 'playing', position: 100, at: T0 - 10000 }));
  sim.setState(roomState(8, { status: 'playing', position: 100 + (sim.now - (T0 - 10000)) / 1000, at: sim.now }));
  sim.until(() => sim.core.running && !sim.core.verify);
  assert.equal(sim.count('seek'), 1);
  assert.equal(sim.plays.length, 1);
});
