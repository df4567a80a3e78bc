// Starts with sound placed on the audio output's blocks (sync/grid.js): where
// the blocks fall and what bounds play()'s delay to them, learned from each
// start; a start on the first block after its instant, from where the timeline
// is then; and an output whose starts do not keep to a grid turns it off.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  alignedStart, blockMs, GRID, gridAfterStart, gridBounded, gridWarm, warmupCallAt,
} from '../../Sources/CowatchWeb/Web/static/sync/grid.js';
import { playing, probedWithSound, roomState, SimulatedPlayer } from './support/simulated-player.mjs';

const BLOCK = (1024 / 44100) * 1000; // 23.2 ms

test('the output block is 20 ms of frames, up to a power of two; none without a rate', () => {
  assert.ok(Math.abs(blockMs(44100) - BLOCK) < 1e-9);
  assert.ok(Math.abs(blockMs(48000) - (1024 / 48) ) < 1e-9);
  assert.ok(Math.abs(blockMs(96000) - (2048 / 96)) < 1e-9);
  for (const rate of [undefined, null, 0, NaN, -44100, 1e9]) assert.equal(blockMs(rate), null);
});

test('a first start anchors the grid; a start on it, the output still running, bounds the delay', () => {
  let grid = gridAfterStart(null, { start: 1048, called: 1000, period: BLOCK });
  assert.deepEqual(grid, { anchor: 1048, period: BLOCK, heard: 1048, took: [], lo: -Infinity, hi: Infinity, misses: 0, off: false });
  grid.heard = 1300; // it played until then
  // Called at 2000: the first boundary 70 ms on is 1048 + 44 blocks.
  const start = 1048 + 44 * BLOCK;
  grid = gridAfterStart(grid, { start, called: 2000, period: BLOCK });
  assert.equal(grid.anchor, start);
  assert.ok(Math.abs(grid.hi - (start - 2000)) < 1e-9 && Math.abs(grid.lo - (start - 2000 - BLOCK)) < 1e-9);
  // A later start narrows the bounds.
  const next = start + 100 * BLOCK;
  grid = gridAfterStart(grid, { start: next, called: next - 60, period: BLOCK });
  assert.ok(Math.abs(grid.hi - 60) < 1e-9, `hi ${grid.hi}`);
  assert.ok(Math.abs(grid.lo - (start - 2000 - BLOCK)) < 1e-9, `lo ${grid.lo}`);
});

test('an output idle past warmMs is a fresh one: re-anchored, the bounds kept; a start no start could be teaches nothing', () => {
  const grid = { anchor: 1000, period: BLOCK, heard: 1000, took: [72, 88], lo: 65, hi: 72, misses: 0, off: false };
  const fresh = gridAfterStart(grid, { start: 1000 + GRID.warmMs + 55.5, called: 1000 + GRID.warmMs + 7, period: BLOCK });
  assert.deepEqual(fresh, { ...grid, anchor: 1000 + GRID.warmMs + 55.5, heard: 1000 + GRID.warmMs + 55.5 });
  assert.equal(gridAfterStart(grid, { start: 1500, called: 1490, period: BLOCK }), grid); // 10 ms: a clock that had not stopped
  assert.equal(gridAfterStart(null, { start: 1500, called: 1000, period: BLOCK }), null);
  assert.equal(gridAfterStart(null, { start: 1048, called: 1000, period: null }), null);
});

test('the delay is bounded by the last starts alone: one that varied is forgotten after GRID.samples more', () => {
  let grid = gridAfterStart(null, { start: 1048, called: 1000, period: BLOCK });
  const starts = [60, 75, 70, 80, 64, 66, 79, 71, 69]; // the delay 60 once, then about 68
  for (const took of starts) {
    const start = grid.anchor + 50 * BLOCK;
    grid = gridAfterStart(grid, { start, called: start - took, period: BLOCK });
  }
  assert.deepEqual(grid.took, starts.slice(-GRID.samples));
  assert.equal(grid.hi, 64);
  assert.ok(Math.abs(grid.lo - (80 - BLOCK)) < 1e-9);
});

test('three starts in a row off the grid turn it off; one on it in between forgives', () => {
  let grid = { anchor: 1000, period: BLOCK, heard: 1000, took: [72, 88], lo: 65, hi: 72, misses: 0, off: false };
  grid = gridAfterStart(grid, { start: 1000 + 10 * BLOCK + 9, called: 1000 + 10 * BLOCK - 70, period: BLOCK });
  assert.equal(grid.misses, 1);
  assert.equal(grid.off, false);
  grid = gridAfterStart(grid, { start: grid.anchor + 3 * BLOCK, called: grid.anchor + 3 * BLOCK - 70, period: BLOCK });
  assert.equal(grid.misses, 0);
  grid = gridAfterStart(grid, { start: grid.anchor + 3 * BLOCK + 7, called: grid.anchor + 3 * BLOCK - 70, period: BLOCK });
  grid = gridAfterStart(grid, { start: grid.anchor + 3 * BLOCK + 11, called: grid.anchor + 3 * BLOCK - 70, period: BLOCK });
  assert.equal(grid.off, false);
  grid = gridAfterStart(grid, { start: grid.anchor + 5 * BLOCK + 5, called: grid.anchor + 5 * BLOCK - 70, period: BLOCK });
  assert.equal(grid.off, true);
  assert.equal(gridWarm(grid, grid.heard), false);
  assert.equal(alignedStart(grid, 5000), null);
});

test('a placed start: the first boundary at or after the instant, play() called in the middle of the window that lands on it', () => {
  const grid = { anchor: 1000, period: BLOCK, heard: 1000, took: [72, 66 + BLOCK], lo: 66, hi: 72, misses: 0, off: false };
  const placed = alignedStart(grid, 1000 + 5 * BLOCK + 0.5);
  assert.ok(Math.abs(placed.at - (1000 + 6 * BLOCK)) < 1e-9);
  assert.ok(Math.abs(placed.latency - (69 + BLOCK / 2)) < 1e-9);
  assert.ok(Math.abs(alignedStart(grid, 1000 + 5 * BLOCK).at - (1000 + 5 * BLOCK)) < 1e-9);
  // Bounds that leave less than GRID.jitterMs of room on a side place nothing: warm-ups first.
  assert.equal(alignedStart({ ...grid, lo: 72 - BLOCK + 2 * GRID.jitterMs - 0.1 }, 1000), null);
  assert.equal(alignedStart({ ...grid, hi: Infinity, lo: -Infinity }, 1000), null);
  // A delay that varies more than the starts' spread shows: bounds crossed, the middle still the aim.
  assert.ok(Math.abs(alignedStart({ ...grid, lo: 74, hi: 71 }, 1000).latency - (72.5 + BLOCK / 2)) < 1e-9);
});

test('a warm-up calls play() a boundary less the middle of the bounds: its start halves them, whichever side the delay is', () => {
  const grid = { anchor: 1000, period: BLOCK, heard: 1000, took: [80], lo: 80 - BLOCK, hi: 80, misses: 0, off: false };
  const at = warmupCallAt(grid, 1100);
  const middle = 80 - BLOCK / 2;
  assert.ok(at >= 1100);
  const boundary = at + middle;
  assert.ok(Math.abs((boundary - 1000) / BLOCK - Math.round((boundary - 1000) / BLOCK)) < 1e-9, 'a boundary less the middle');
  for (const delay of [62, 75]) {
    const start = 1000 + Math.ceil((at + delay - 1000) / BLOCK) * BLOCK;
    const next = gridAfterStart(grid, { start, called: at, period: BLOCK });
    assert.ok(Math.abs(next.hi - next.lo - BLOCK / 2) < 1e-6, `delay ${delay}: ${next.lo}..${next.hi}`);
    assert.ok(next.lo < delay && delay <= next.hi);
  }
  // Nothing to halve: bounded already, or no bounds yet, or an output that may have stopped.
  assert.equal(warmupCallAt({ ...grid, took: [80, 66 + BLOCK], lo: 66, hi: 80 }, 1100), null);
  assert.equal(warmupCallAt({ ...grid, took: [], lo: -Infinity, hi: Infinity }, 1100), null);
  assert.equal(warmupCallAt(grid, 1000 + GRID.warmMs), null);
  assert.equal(gridBounded(grid), false);
});

// MARK: a page with Chromium's output (the simulated player's `output`)

const CHROMIUM = { rate: 44100, blockMs: BLOCK, pipelineMs: 69.4, coldMs: 47.6, idleStopMs: 10000 };

/** A clip with sound on such an output, paused at `position`, its first probe done. */
const onOutput = (position, output = CHROMIUM) => probedWithSound(position, { output });

/** `/play`: waiting until the page's /ready, then playing from `position` `lead` ms later. */
function playTogether(sim, seq, position, lead) {
  sim.setState(roomState(seq, { status: 'waiting', position, at: sim.now }));
  sim.until(() => sim.sent.some((s) => s.line.startsWith(`/ready ${seq}`)));
  const at = sim.now + lead;
  sim.setState(roomState(seq + 1, { status: 'playing', position, at }));
  return at;
}

test('the first start of an item, from 0:00: warm-ups before /ready, then the clock starts on the instant, to a fraction of a ms', () => {
  const sim = onOutput(0);
  const at = playTogether(sim, 2, 0, 300);
  const ready = sim.sent.at(-1).line;
  assert.match(ready, /^\/ready 2 lead \d+$/);
  assert.ok(Number(ready.split(' ')[3]) <= 400, ready);
  assert.ok(sim.notes.filter((n) => n === 'warm-up: where the sound\'s clock can start').length >= 1, sim.notes.join(' | '));
  sim.advance(1000);
  const drift = sim.driftMs(playing(0, at));
  assert.ok(Math.abs(drift) < 0.5, `drift ${drift} ms; ${sim.notes.join(' | ')}`);
  assert.ok(Math.abs(sim.core.lastStart.error) < 0.5, `start ${sim.core.lastStart.error} ms`);
  assert.equal(sim.count('hush'), 0); // nothing out of hearing: the start itself is exact
  assert.equal(sim.count('rate'), 0); // and nothing to correct
});

test('a delay that varies by a ms or two: the warm-ups still bound it, and the first start is as exact', () => {
  for (const pipelineMs of [62.3, 69.4, 75.8, 84.1]) {
    const sim = onOutput(0, { ...CHROMIUM, pipelineMs, jitterMs: 1.5 });
    const at = playTogether(sim, 2, 0, 350);
    sim.advance(1000);
    const warmups = sim.notes.filter((n) => n === 'warm-up: where the sound\'s clock can start').length;
    assert.ok(warmups <= 3, `${warmups} warm-ups`);
    // Those after the first called play() where their start halves the bounds.
    assert.ok(sim.actions.some((a) => a.type === 'probe' && a.at !== undefined), 'no warm-up placed');
    assert.ok(Math.abs(sim.driftMs(playing(0, at))) < 0.5, `delay ${pipelineMs}: drift ${sim.driftMs(playing(0, at))} ms; ${sim.notes.join(' | ')}`);
  }
});

test('after a long pause the output has stopped: one warm-up before /ready, and the start is as exact', () => {
  const sim = onOutput(0);
  let at = playTogether(sim, 2, 0, 300);
  sim.advance(2000);
  sim.setState(roomState(4, { status: 'paused', position: sim.video.currentTime, at: sim.now }));
  sim.advance(15000);
  const probes = sim.count('probe');
  const position = sim.video.currentTime;
  at = playTogether(sim, 5, position, 300);
  assert.equal(sim.count('probe'), probes + 1);
  sim.advance(1000);
  assert.ok(Math.abs(sim.driftMs(playing(position, at))) < 0.5, `drift ${sim.driftMs(playing(position, at))} ms`);
});

test('soon after a start the output runs on its grid: the next start needs no warm-up', () => {
  const sim = onOutput(30);
  playTogether(sim, 2, 30, 300);
  sim.advance(1500);
  sim.setState(roomState(4, { status: 'paused', position: sim.video.currentTime, at: sim.now }));
  sim.advance(500);
  const probes = sim.count('probe');
  const position = sim.video.currentTime;
  const at = playTogether(sim, 5, position, 150);
  assert.match(sim.sent.at(-1).line, /^\/ready 5 lead \d+$/);
  sim.advance(1000);
  assert.equal(sim.count('probe'), probes);
  assert.ok(Math.abs(sim.driftMs(playing(position, at))) < 0.5, `drift ${sim.driftMs(playing(position, at))} ms`);
});

test('a late joiner warms up, then starts on a block from where the timeline is then', () => {
  const sim = new SimulatedPlayer({ sound: 'sound', rateCostMs: 8, output: CHROMIUM });
  const timeline = playing(100, sim.now - 10000);
  sim.open(roomState(7, { status: 'playing', position: 100, at: sim.now - 10000 }));
  sim.until(() => sim.core.running && !sim.core.verify && !sim.core.probing, 5000);
  assert.ok(Math.abs(sim.driftMs(timeline)) < 0.5, `drift ${sim.driftMs(timeline)} ms; ${sim.notes.join(' | ')}`);
});

test('an output whose starts do not keep to a grid: after three, starts are begun out of hearing as without it', () => {
  const sim = onOutput(30, { ...CHROMIUM, offGrid: true });
  for (let seq = 2; !sim.core.grid?.off && seq < 40; seq += 3) {
    playTogether(sim, seq, sim.video.currentTime, 750);
    sim.advance(1500);
    sim.setState(roomState(seq + 2, { status: 'paused', position: sim.video.currentTime, at: sim.now }));
    sim.advance(300);
  }
  assert.equal(sim.core.grid.off, true, sim.notes.join(' | '));
  assert.ok(sim.notes.includes(`the sound's clock started off its grid ${GRID.missesOff} times in a row: starts are no longer placed on it`));
  const position = sim.video.currentTime;
  const at = playTogether(sim, 50, position, 750);
  assert.match(sim.sent.at(-1).line, / lead 6\d0$/); // the half second out of hearing (start.js: prerollLead)
  sim.until(() => sim.now === at);
  assert.equal(sim.hushedUntil, at);
  sim.advance(1000);
  assert.ok(Math.abs(sim.driftMs(playing(position, at))) < 4, `drift ${sim.driftMs(playing(position, at))} ms`);
});

test('a new rate with sound is started again on a block, rather than heard 180 ms late and chased', () => {
  const sim = onOutput(30);
  const at = playTogether(sim, 2, 30, 300);
  sim.advance(1500);
  const position = 30 + (sim.now - at) / 1000;
  sim.setState(roomState(4, { status: 'playing', position, at: sim.now, rate: 1.5 }));
  const faster = playing(position, sim.now, 1.5);
  assert.equal(sim.core.join?.restart, true); // the group's start again, which the page words as such (model/ui.js)
  sim.advance(1500);
  assert.ok(sim.notes.includes('rate 1 to 1.5 with sound: started again on a block'), sim.notes.join(' | '));
  assert.equal(sim.count('pause', at) >= 1, true);
  assert.ok(Math.abs(sim.driftMs(faster)) < 0.5, `drift ${sim.driftMs(faster)} ms`);
  // A state that hands back the same course does not start it again.
  const plays = sim.plays.length;
  sim.setState(roomState(5, { status: 'playing', position, at: faster.at, rate: 1.5 }));
  sim.advance(500);
  assert.equal(sim.plays.length, plays);
});

test('a group that waited long for someone else: a warm-up when the start comes, and the start on the first block it can make', () => {
  const sim = onOutput(30);
  sim.setState(roomState(2, { status: 'waiting', position: 30, at: sim.now }));
  sim.until(() => sim.sent.some((s) => s.line.startsWith('/ready 2')));
  sim.advance(GRID.warmMs + 3000); // the output may have stopped meanwhile
  const probes = sim.count('probe');
  const at = sim.now + 400;
  sim.setState(roomState(3, { status: 'playing', position: 30, at }));
  sim.advance(1000);
  assert.equal(sim.count('probe'), probes + 1);
  assert.ok(Math.abs(sim.driftMs(playing(30, at))) < 0.5, `drift ${sim.driftMs(playing(30, at))} ms`);
  const join = sim.notes.filter((n) => n.startsWith('join: ')).at(-1);
  const startsIn = Number(/at (\d+\.\d)/.exec(join)[1]) - (at % 100000);
  assert.ok(startsIn >= 0 && startsIn < 3 * BLOCK, `${join}: ${startsIn} ms after the instant`);
});
