// What a host's room settings (static/model/host-panel.js) and the door of a refused
// page (static/model/door.js) say, decided without a page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { botNameProblem, listingStatus, passwordProblem } from '../../Sources/CowatchWeb/Web/static/model/host-panel.js';
import { DOOR_ERRORS, doorView } from '../../Sources/CowatchWeb/Web/static/model/door.js';

test('a listed room with a password or a lock is said to be off the front page, as the server says', () => {
  assert.deepEqual(listingStatus({ public: false }), { shown: false, words: 'Not listed on the server\'s front page.' });
  assert.equal(listingStatus({ public: true }).shown, true);
  assert.deepEqual(listingStatus({ public: true, password: true }),
    { shown: false, words: 'To be listed, but not on the server\'s front page while it has a password.' });
  assert.match(listingStatus({ public: true, locked: true }).words, /while it is locked\.$/);
  assert.match(listingStatus({ public: true, locked: true, password: true }).words, /while it is locked and has a password\.$/);
  assert.equal(listingStatus(undefined).shown, false);
});

test('a password the server would refuse is caught in words before it is sent', () => {
  assert.equal(passwordProblem('hunter2'), null);
  assert.match(passwordProblem(''), /Type the password/);
  assert.match(passwordProblem('two words'), /cannot have spaces/);
  assert.match(passwordProblem('x'.repeat(65)), /at most 64 characters/);
  assert.equal(passwordProblem('é'.repeat(64)), null);
  assert.match(passwordProblem('OFF'), /removes the password/);
  assert.equal(botNameProblem('dj-bot'), null);
  assert.match(botNameProblem('dj bot'), /one word/);
  assert.match(botNameProblem(''), /Type the name/);
});

test('the door: a password asked, or wrong, offers the password field; a wait does not', () => {
  const asked = doorView({ code: 4005, reason: 'This room asks for a password.', serverReason: 'this room asks for a password' });
  assert.equal(asked.askPassword, true);
  assert.equal(asked.heading, 'This room asks for a password');
  const wrong = doorView({ code: 4005, reason: 'This room asks for a password. Wrong password.', serverReason: 'wrong password' });
  assert.equal(wrong.askPassword, true);
  assert.match(wrong.words, /not the room's/);
  const wait = doorView({ code: 4005, serverReason: 'too many wrong passwords or tokens from your address; try again in 1 min' });
  assert.deepEqual([wait.askPassword, wait.words], [false, 'Too many wrong passwords or tokens from your address; try again in 1 min.']);
});

test('the door: locked, banned, kicked say the reason once, and offer nothing to do in the room', () => {
  const locked = doorView({ code: 4004, reason: 'This room is locked: only an invite link from a host lets you in.' });
  assert.deepEqual(locked, {
    heading: 'This room is locked', words: 'This room is locked: only an invite link from a host lets you in.', askPassword: false,
  });
  assert.equal(doorView({ code: 4003, reason: 'You cannot enter this room right now. Kicked.' }).heading, 'You cannot enter this room');
  assert.equal(doorView({ code: 4001, reason: 'You were removed from the room by a host.' }).askPassword, false);
  for (const code of ['locked', 'password-required', 'wrong-password', 'too-many-attempts', 'banned', 'bad-token']) {
    assert.ok(DOOR_ERRORS.has(code), code);
  }
  assert.equal(DOOR_ERRORS.has('muted'), false);
});
