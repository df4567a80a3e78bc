// The Vimeo player's pure parts: its position known only by postMessage round
// trips (sync/remote-position.js), its declared capabilities, and its errors
// in words (sync/vimeo.js).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FRESH_MS, RemotePosition, SLOW_READING_MS } from '../../Sources/CowatchWeb/Web/static/sync/remote-position.js';
import {
  RATE_REFUSED_NOTICE, VIMEO_RATE_RANGE, vimeoCapabilities, vimeoErrorText,
} from '../../Sources/CowatchWeb/Web/static/sync/vimeo.js';

const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

test('a reading is placed at the middle of its round trip, and a playing player is extrapolated at its rate', () => {
  const p = new RemotePosition();
  p.setMoving(true, 0);
  assert.ok(p.observe(10, 1000, 1004));
  assert.equal(p.uncertainty, 2);
  near(p.positionAt(1002), 10, 'at the middle');
  near(p.positionAt(1502), 10.5, 'half a second on');
  p.setRate(2, 1502);
  near(p.positionAt(2002), 11.5, 'at rate 2');
});

test('paused or buffering, the position stands still', () => {
  const p = new RemotePosition();
  p.observe(5, 0, 2);
  near(p.positionAt(10_000), 5, 'never started');
  p.setMoving(true, 1);
  near(p.positionAt(1001), 6, 'playing');
  p.setMoving(false, 1001);
  near(p.positionAt(9001), 6, 'stopped where it was');
});

test('a slow reading is left out while a good one is fresh, and taken once it is not', () => {
  const p = new RemotePosition();
  p.setMoving(true, 0);
  p.observe(10, 0, 2); // ±1 ms, at 1
  assert.equal(p.observe(10.3, 200, 200 + 2 * (1 + SLOW_READING_MS) + 4), false, 'slow, while fresh');
  near(p.positionAt(501), 10.5, 'still from the good reading');
  assert.equal(p.observe(11.2, 1200, 1212), true, `taken after ${FRESH_MS} ms`);
  near(p.positionAt(1206), 11.2, 'the new reading');
});

test('readings that cannot be are refused', () => {
  const p = new RemotePosition();
  assert.equal(p.observe(NaN, 0, 1), false);
  assert.equal(p.observe(3, 5, 1), false);
  assert.equal(p.at, null);
});

test('capabilities: continuous rates in Vimeo\'s range, until a rate is refused; then rate 1 and seeks', () => {
  const open = vimeoCapabilities(false);
  assert.equal(open.rates, 'continuous');
  assert.deepEqual(open.rateRange, [...VIMEO_RATE_RANGE]);
  assert.deepEqual(VIMEO_RATE_RANGE, [0.5, 2]);
  assert.equal(open.reportsStalls, true);
  assert.equal(open.exactSeek, false);
  assert.ok(open.positionPrecision > 0 && open.positionPrecision <= 0.05);
  const locked = vimeoCapabilities(true);
  assert.deepEqual(locked.rates, [1]);
  assert.deepEqual(locked.rateRange, [1, 1]);
  assert.match(RATE_REFUSED_NOTICE, /speed/);
  assert.match(RATE_REFUSED_NOTICE, /seeking/);
});

test('errors in words: not found, not embeddable, private, password, the script, and anything else', () => {
  assert.match(vimeoErrorText(new Error('“https://vimeo.com/404” was not found.'), '404'), /no video 404/);
  assert.match(vimeoErrorText(new Error('“https://vimeo.com/403” is not embeddable.'), '403'), /does not allow it to be played on other sites/);
  assert.match(vimeoErrorText({ name: 'PrivacyError', message: 'x' }, '401'), /private/);
  assert.match(vimeoErrorText({ name: 'PasswordError', message: 'x' }, '7'), /password/);
  assert.equal(vimeoErrorText({ name: 'ScriptError', message: 'the Vimeo player could not be loaded (from u)' }, '7'), 'the Vimeo player could not be loaded (from u)');
  assert.equal(vimeoErrorText({ name: 'Error', message: 'boom' }, '7'), 'the Vimeo player failed: boom');
  assert.equal(vimeoErrorText(null, '7'), 'the Vimeo player failed');
});
