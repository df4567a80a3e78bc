// The "are we in sync?" badge (static/ui.js, describeSync): what a viewer is told
// from the player's snapshot and the clock estimate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeSync, IN_SYNC_MS } from '../../Sources/CowatchGateway/Web/static/ui.js';

const clock = { offset: -2500.4, uncertainty: 3.2 };

test('a player on the group timeline is in sync, with both measurements in the title', () => {
  const badge = describeSync({ mode: 'playing', drift: 0.0031, nudging: false }, clock);
  assert.equal(badge.kind, 'in-sync');
  assert.equal(badge.label, 'In sync');
  assert.match(badge.title, /\+3\.1 ms from the group/);
  assert.match(badge.title, /\+2\.50 s from the server's \(known to ±3\.2 ms\)/);
});

test('a player off by more than the threshold, or being nudged, or joining, is catching up', () => {
  assert.equal(describeSync({ mode: 'playing', drift: (IN_SYNC_MS + 1) / 1000 }, clock).kind, 'catching-up');
  assert.equal(describeSync({ mode: 'playing', drift: -0.002, nudging: true }, clock).kind, 'catching-up');
  assert.equal(describeSync({ mode: 'playing', drift: 0, joining: true }, clock).kind, 'catching-up');
  assert.equal(describeSync({ mode: 'catchup', drift: 0.4 }, clock).label, 'Catching up');
});

test('a player corrected by seeking is in sync within its own band, and catching up beyond it', () => {
  assert.equal(describeSync({ mode: 'playing', drift: 0.06, inSyncMs: 100 }, clock).kind, 'in-sync');
  assert.equal(describeSync({ mode: 'playing', drift: -0.101, inSyncMs: 100 }, clock).kind, 'catching-up');
});

test('waiting for the others, starting together and buffering are said as such', () => {
  assert.equal(describeSync({ mode: 'waiting' }, clock).label, 'Waiting for others');
  assert.equal(describeSync({ mode: 'starting' }, clock).label, 'Starting together');
  assert.equal(describeSync({ mode: 'stalled' }, clock).label, 'Buffering');
  assert.equal(describeSync({ mode: 'playing', detail: 'buffering', drift: 0 }, clock).label, 'Buffering');
});

test('paused together is in sync; no group to follow shows no badge', () => {
  assert.equal(describeSync({ mode: 'paused' }, clock).kind, 'in-sync');
  for (const mode of ['idle', 'left', 'error', 'suspended', 'blocked', 'scrubbing']) {
    assert.equal(describeSync({ mode }, clock), null, mode);
  }
});

test('before the clock is measured, the title says so', () => {
  const badge = describeSync({ mode: 'paused' }, { offset: 0, uncertainty: Infinity });
  assert.match(badge.title, /Measuring this device's clock/);
});
