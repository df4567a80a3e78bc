// What the room page says to people (static/model/ui.js): words, never a protocol
// identifier; one word per role; a removal told once; "the others keep
// watching" only when someone else can.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cannotPlayWords, describeReason, leftWords, overlayWords, roleWord, someoneElseCanPlay,
} from '../../Sources/CowatchWeb/Web/static/model/ui.js';

const member = (id, extra = {}) => ({
  id, name: id, role: 'member', joined: true, player: true, connected: true, ready: true, suspensions: [], ...extra,
});
const room = (...people) => new Map(people.map((p) => [p.id, p]));

test('a suspension reason is said in words, a reason the page does not know too', () => {
  assert.equal(describeReason('coordinatedPlaybackNotPossible'), 'cannot play this video');
  assert.equal(describeReason('someNewReason'), 'away from the group');
  for (const reason of ['stallRecovery', 'userIsChangingCurrentTime', 'catchup', 'coordinatedPlaybackNotPossible',
    'userActionRequired', 'audioSessionInterrupted', 'playingInterstitial', 'someNewReason']) {
    assert.doesNotMatch(describeReason(reason), /[a-z][A-Z]/, `${reason} shown as an identifier`);
  }
});

test('a video nobody else can play never says that the others keep watching', () => {
  const me = member('me', { suspensions: ['coordinatedPlaybackNotPossible'] });
  const alone = room(me);
  const othersCannot = room(me,
    member('bob', { suspensions: ['coordinatedPlaybackNotPossible'] }),
    member('cy', { player: false }), // chat only
    member('dee', { joined: false }), // left the session
    member('eve', { connected: false }), // reconnecting
    member('fay', { copy: false })); // no copy of an own file
  for (const participants of [alone, othersCannot]) {
    assert.equal(someoneElseCanPlay(participants, 'me'), false);
    const words = cannotPlayWords('the video was not found', someoneElseCanPlay(participants, 'me'));
    assert.doesNotMatch(words, /keep watching/);
    assert.match(words, /^This video cannot be played here: the video was not found\. Nobody in the room can play it now/);
    assert.doesNotMatch(words, /coordinatedPlaybackNotPossible/);
  }
  const withBob = room(me, member('bob'));
  assert.equal(someoneElseCanPlay(withBob, 'me'), true);
  const words = cannotPlayWords('the video was not found', true);
  assert.match(words, /The others keep watching/);
  assert.doesNotMatch(words, /[a-z][A-Z][a-z]+[A-Z]/, 'no identifier in the words');
});

test('one word per role: owner (also a host), host, member', () => {
  assert.equal(roleWord({ role: 'host', owner: true }), 'owner');
  assert.equal(roleWord({ role: 'host' }), 'host');
  assert.equal(roleWord({ role: 'member' }), 'member');
  assert.equal(roleWord({ role: 'member', owner: false }), 'member');
});

test('a kick or a ban is told once, by the room\'s notice; a member who left is told by the page', () => {
  assert.equal(leftWords('bob', 'kicked'), null);
  assert.equal(leftWords('bob', 'banned'), null);
  assert.equal(leftWords('bob', 'left'), 'bob left.');
  assert.equal(leftWords('bob', undefined), 'bob left.');
});

test('the overlay over the video says what the viewer must know or do, and only then', () => {
  const never = () => assert.fail('asked only when this player cannot play');
  assert.deepEqual(overlayWords({ mode: 'idle' }, { ended: false, othersPlay: never }),
    { message: 'Nothing is playing yet. Paste a video link below to watch it together.', button: null });
  assert.equal(overlayWords({ mode: 'idle' }, { ended: true, othersPlay: never }).message,
    'The session ended. Paste a video link below to start another.');
  assert.equal(overlayWords({ mode: 'left' }, { ended: false, othersPlay: never }).button, 'Join the session again');
  assert.deepEqual(overlayWords({ mode: 'error', mediaError: 'the file is not a video' }, { ended: false, othersPlay: () => true }), {
    message: cannotPlayWords('the file is not a video', true), button: 'Try again',
  });
  assert.equal(overlayWords({ mode: 'blocked' }, { ended: false, othersPlay: never }).button, '▶ Click to join playback');
  for (const mode of ['playing', 'paused', 'waiting', 'stalled', 'catchup', 'scrubbing', 'suspended']) {
    assert.deepEqual(overlayWords({ mode }, { ended: false, othersPlay: never }), { message: null, button: null });
  }
});
