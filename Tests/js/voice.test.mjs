// Voice on the page, without a browser: smart volume (static/voice/ducking.js),
// the panel's words and the offer's lines (static/voice/voice-words.js), and
// what a `voice` roster says (static/model/events.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DUCKING_DEFAULTS, duckingStep, quietState, rmsLevel } from '../../Sources/CowatchWeb/Web/static/voice/ducking.js';
import { microphoneRefusal, offerLines, voicePanel } from '../../Sources/CowatchWeb/Web/static/voice/voice-words.js';
import { applyChanges, emptyModel, heard, voiceWords } from '../../Sources/CowatchWeb/Web/static/model/events.js';

/** The factors over `samples` of `[level, now]`. */
function run(samples, settings = DUCKING_DEFAULTS) {
  let state = quietState();
  return samples.map(([level, now]) => {
    const step = duckingStep(state, { level, now }, settings);
    state = step.state;
    return step.factor;
  });
}

test('the video goes down while others speak, within the attack, and back after the hold and the release', () => {
  const samples = [];
  for (let now = 0; now <= 3000; now += 50) samples.push([now >= 500 && now < 1500 ? 0.2 : 0.001, now]);
  const factors = run(samples);
  const at = (ms) => factors[ms / 50];
  assert.equal(at(450), 1, 'silence leaves the video as it is');
  assert.ok(at(550) < 1, 'a word starts lowering it at once');
  assert.equal(at(700), DUCKING_DEFAULTS.depth, `down to ${DUCKING_DEFAULTS.depth} within the attack`);
  assert.equal(at(1450), DUCKING_DEFAULTS.depth);
  assert.equal(at(1450 + DUCKING_DEFAULTS.holdMs), DUCKING_DEFAULTS.depth, 'a pause between words keeps it down');
  assert.ok(at(2300) > DUCKING_DEFAULTS.depth && at(2300) < 1, 'then it comes back, gradually');
  assert.equal(at(3000), 1);
});

test('a short pause between words does not let the video up', () => {
  const samples = [];
  for (let now = 0; now <= 2000; now += 50) samples.push([(now % 800) < 500 ? 0.1 : 0, now]);
  const factors = run(samples).slice(4);
  assert.ok(factors.every((f) => f === DUCKING_DEFAULTS.depth), factors.join(' '));
});

test('smart volume turned off, or a depth of 1, never touches the volume', () => {
  const loud = [[0.5, 0], [0.5, 100], [0.5, 200]];
  assert.deepEqual(run(loud, { ...DUCKING_DEFAULTS, enabled: false }), [1, 1, 1]);
  assert.deepEqual(run(loud, { ...DUCKING_DEFAULTS, depth: 1 }), [1, 1, 1]);
  assert.deepEqual(run(loud, { ...DUCKING_DEFAULTS, depth: 0, attackMs: 100 }), [1, 0, 0]);
});

test('the level is the samples\' RMS', () => {
  assert.equal(rmsLevel([]), 0);
  assert.equal(rmsLevel([0.5, -0.5, 0.5, -0.5]), 0.5);
});

test('an offer longer than a line goes in parts, each within the line, and comes back whole', () => {
  const sdp = 'v=0\r\n' + 'a=candidate:1 1 udp 2122260223 127.0.0.1 57156 typ host\r\n'.repeat(120);
  const lines = offerLines(sdp, 4096);
  assert.ok(lines.length > 1);
  assert.ok(lines.every((line) => new TextEncoder().encode(line).length <= 4096));
  assert.ok(lines.slice(0, -1).every((line) => line.startsWith('/voice offer part ')));
  assert.ok(!lines.at(-1).includes(' part '));
  const joined = lines.map((line) => line.split(' ').at(-1)).join('');
  assert.equal(atob(joined), sdp);
  assert.deepEqual(offerLines('v=0\r\n'), [`/voice offer ${btoa('v=0\r\n')}`]);
});

test('a refused microphone is explained in words a person can act on', () => {
  assert.match(microphoneRefusal({ name: 'NotAllowedError' }), /Allow the microphone/);
  assert.match(microphoneRefusal({ name: 'NotFoundError' }), /No microphone was found/);
  assert.match(microphoneRefusal({ name: 'NoMediaDevices' }), /https/);
  assert.match(microphoneRefusal({ name: 'Weird' }), /Weird/);
});

test('the panel: hidden without voice; join for those the mode lets in; a host\'s mute said', () => {
  const off = { phase: 'off', muted: false, pushToTalk: false, talking: false };
  const on = { ...off, phase: 'on' };
  const roster = (mode, seats = []) => ({ mode, seats });
  const member = { id: 'm2', role: 'member' };
  assert.deepEqual(voicePanel(off, null, member), { shown: false });
  assert.equal(voicePanel(off, roster('on'), member).join, true);
  assert.equal(voicePanel(off, roster('hosts'), member).join, false);
  assert.match(voicePanel(off, roster('hosts'), member).status, /hosts only/);
  assert.equal(voicePanel(off, roster('hosts'), { id: 'm1', role: 'host' }).join, true);
  assert.match(voicePanel(off, roster('off'), member).status, /turned voice off/);
  assert.match(voicePanel(on, roster('on'), { ...member, muted: true }).status, /muted by a host/);
  assert.match(voicePanel({ ...on, pushToTalk: true }, roster('on'), member).status, /hold T/);
  assert.equal(voicePanel({ ...on, pushToTalk: true }, roster('on'), member).mute, false);
  assert.equal(voicePanel(on, roster('on'), member).leave, true);
});

test('a roster says who joins and leaves, and who starts speaking when nobody was, to screen readers alone', () => {
  const seat = (id, speaking = false) => ({ id, name: id, muted: false, speaking });
  const quiet = { mode: 'on', seats: [seat('m1'), seat('m2')] };
  assert.deepEqual(voiceWords(null, { change: 'joined', member: 'm2', name: 'bob', seats: [] }, 'm1'),
    { log: 'bob joined voice.', say: 'bob joined voice.' });
  assert.deepEqual(voiceWords(null, { change: 'left', member: 'm1', name: 'ann', seats: [] }, 'm1'),
    { log: 'You left voice.', say: 'You left voice.' });
  assert.deepEqual(voiceWords(quiet, { change: 'speaking', member: 'm2', name: 'bob', seats: [seat('m2', true)] }, 'm1'),
    { say: 'bob is speaking.' });
  const talking = { mode: 'on', seats: [seat('m2', true)] };
  assert.deepEqual(voiceWords(talking, { change: 'speaking', member: 'm3', name: 'cy', seats: [] }, 'm1'), {});
  const model = emptyModel();
  const news = heard(model, { type: 'voice', change: 'list', member: null, mode: 'on', seats: [seat('m2')] });
  applyChanges(model, news.changes);
  assert.equal(model.voice.seats[0].id, 'm2');
  assert.equal(news.render, true);
});
