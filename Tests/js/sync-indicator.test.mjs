// The one status under the video (static/model/ui.js, describeStatus): what a viewer
// is told from the player's snapshot and the clock estimate. One source, so the
// dot's colour, the words and the number beside them never disagree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeStatus, IN_SYNC_MS } from '../../Sources/CowatchWeb/Web/static/model/ui.js';

const clock = { offset: -2500.4, uncertainty: 3.2 };
const state = { playback: { status: 'playing', rate: 1, position: 83.2 } };
const status = (snapshot, me = null) => describeStatus(snapshot, state, me, clock);

test('a player on the group timeline is in sync, with its distance beside the words and both measurements in the title', () => {
  const shown = status({ mode: 'playing', drift: 0.0031, nudging: false });
  assert.deepEqual([shown.kind, shown.words, shown.drift], ['in-sync', 'Playing in sync', '+3.1 ms']);
  assert.match(shown.title, /\+3\.1 ms from the group/);
  assert.match(shown.title, /\+2\.50 s from the server's \(known to ±3\.2 ms\)/);
  assert.equal(describeStatus({ mode: 'playing', drift: 0 }, { playback: { ...state.playback, rate: 1.5 } }, null, clock).words,
    'Playing in sync at 1.5×');
});

test('off by more than people can notice is catching up, and says so in words', () => {
  const off = status({ mode: 'playing', drift: (IN_SYNC_MS + 1) / 1000, nudging: true });
  assert.deepEqual([off.kind, off.words, off.drift], ['catching-up', 'Catching up…', '+101.0 ms (correcting)']);
  assert.deepEqual([status({ mode: 'playing', drift: 0, joining: true }).words], ['Joining the group…']);
  // With sound a new rate starts everyone again (sync/grid.js): the group's start, not a joining.
  assert.deepEqual([status({ mode: 'playing', drift: 0.2, restarting: true }).words], ['Starting together…']);
  assert.equal(status({ mode: 'catchup', drift: 0.4 }).words, 'Catching up at 2×…');
});

test('a correction nobody can see or hear is not news: within a tenth of a second, nudged or not, it is in sync', () => {
  assert.equal(IN_SYNC_MS, 100);
  for (const [drift, nudging] of [[-0.0145, true], [0.002, true], [0.06, false], [-0.099, true]]) {
    const shown = status({ mode: 'playing', drift, nudging });
    assert.deepEqual([shown.kind, shown.words], ['in-sync', 'Playing in sync'], `${drift} s, nudging ${nudging}`);
    assert.doesNotMatch(shown.drift, /correcting/);
  }
  assert.equal(status({ mode: 'playing', drift: -0.0145, nudging: true }).drift, '−14.5 ms');
});

test('far off, the words never say "in sync" and no frozen distance is shown beside them', () => {
  // A player left 59.7 s behind (a seek that landed at 0:00): not "Playing in sync" beside "Catching up".
  for (const snapshot of [
    { mode: 'playing', drift: -59.7061 },
    { mode: 'playing', drift: -59.7061, detail: 're-syncing (59706 ms off)' },
    { mode: 'playing', drift: -59.7061, joining: true },
  ]) {
    const shown = status(snapshot);
    assert.equal(shown.kind, 'catching-up', JSON.stringify(snapshot));
    assert.doesNotMatch(shown.words, /in sync/i);
    assert.equal(shown.drift, '', 'a distance from a player that is re-joining means nothing');
    assert.doesNotMatch(shown.title, /59/);
  }
});

test('a video that cannot seek is told in words, and nothing else is said beside it', () => {
  const shown = status({ mode: 'playing', drift: -59.7, unseekable: { position: 59.7 } });
  assert.equal(shown.kind, 'problem');
  assert.match(shown.words, /cannot go to 0:59 where the group is/);
  assert.equal(shown.drift, '');
  const suspended = status({ mode: 'suspended', unseekable: { position: 59.7 } }, { suspensions: ['coordinatedPlaybackNotPossible'] });
  assert.equal(suspended.words, shown.words);
});

test('a player corrected by seeking is in sync within its own band, and catching up beyond it', () => {
  assert.equal(status({ mode: 'playing', drift: 0.06, inSyncMs: 100 }).kind, 'in-sync');
  assert.equal(status({ mode: 'playing', drift: -0.101, inSyncMs: 100 }).kind, 'catching-up');
});

test('waiting for the others, starting together and buffering are said as such', () => {
  assert.equal(status({ mode: 'waiting', detail: 'ready' }).words, 'Ready: waiting for the others…');
  assert.equal(status({ mode: 'starting' }).words, 'Starting together…');
  assert.equal(status({ mode: 'stalled' }).words, 'Buffering…');
  assert.equal(status({ mode: 'playing', detail: 'buffering', drift: 0 }).words, 'Buffering…');
  for (const mode of ['waiting', 'starting', 'stalled']) assert.equal(status({ mode }).kind, 'waiting', mode);
});

test('paused together is in sync; problems are problems; no room state or an idle room shows nothing', () => {
  assert.deepEqual([status({ mode: 'paused' }).kind, status({ mode: 'paused' }).words], ['in-sync', 'Paused together at 1:23.']);
  assert.equal(status({ mode: 'error', mediaError: 'a network error stopped the download' }).kind, 'problem');
  assert.equal(status({ mode: 'blocked' }).kind, 'problem');
  assert.equal(status({ mode: 'suspended' }, { suspensions: ['stallRecovery'] }).words, 'Separated from the group (buffering).');
  assert.equal(status({ mode: 'idle' }), null);
  assert.equal(describeStatus({ mode: 'paused' }, null, null, clock), null);
});

test('every mode gives one status or none, never a number without words', () => {
  const modes = ['idle', 'left', 'error', 'blocked', 'suspended', 'stalled', 'scrubbing', 'catchup', 'paused', 'waiting', 'starting', 'playing'];
  for (const mode of modes) {
    for (const drift of [null, 0.001, 0.1, -59.7]) {
      const shown = status({ mode, drift, mediaError: 'x' }, { suspensions: [] });
      if (shown == null) continue;
      assert.ok(shown.words.length > 0, mode);
      if (shown.drift) assert.ok(['in-sync', 'catching-up'].includes(shown.kind), `${mode}: a distance beside ${shown.kind}`);
    }
  }
});

test('before the clock is measured, the title says so', () => {
  const shown = describeStatus({ mode: 'paused' }, state, null, { offset: 0, uncertainty: Infinity });
  assert.match(shown.title, /Measuring this device's clock/);
});
