// The room page's address (static/model/address.js): the room a path names, what
// a link carries for the page alone and the address left without it, and the
// rooms this browser remembers for the landing page.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  RECENT_ROOMS, isRoomName, linkSecrets, recentRooms, roomFromPath,
} from '../../Sources/CowatchWeb/Web/static/model/address.js';

test('a room\'s path names it in lowercase; another spelling is renamed in the address bar', () => {
  assert.deepEqual(roomFromPath('/rooms/lobby'), { room: 'lobby', renamed: false });
  assert.deepEqual(roomFromPath('/rooms/Lobby/'), { room: 'lobby', renamed: true });
  assert.deepEqual(roomFromPath('/rooms/Movie%2DNight'), { room: 'movie-night', renamed: true });
  // Percent-encoding that decodes to the name in lowercase is the same spelling.
  assert.deepEqual(roomFromPath('/rooms/movie%2dnight'), { room: 'movie-night', renamed: false });
});

test('a path that does not decode is kept as it is, and is not a room name', () => {
  const { room, renamed } = roomFromPath('/rooms/%E0%A4%A');
  assert.equal(room, '%E0%A4%A');
  assert.equal(renamed, false);
  assert.equal(isRoomName(room), false);
});

test('room names: 1 to 64 letters, digits, ".", "_" or "-"', () => {
  assert.equal(isRoomName('lobby'), true);
  assert.equal(isRoomName('a.b_c-9'), true);
  assert.equal(isRoomName('x'.repeat(64)), true);
  assert.equal(isRoomName('x'.repeat(65)), false);
  assert.equal(isRoomName(''), false);
  assert.equal(isRoomName('movie night'), false);
  assert.equal(isRoomName('../admin'), false);
});

test('an owner key and an invite are taken from a link, and the address is left without them', () => {
  assert.deepEqual(linkSecrets('http://h/rooms/lobby?owner=k1&invite=i1&name=olivia#x'), {
    taken: { owner: 'k1', invite: 'i1', watch: null }, clean: 'http://h/rooms/lobby?name=olivia#x',
  });
  assert.deepEqual(linkSecrets('http://h/rooms/lobby?invite=i1'), {
    taken: { owner: null, invite: 'i1', watch: null }, clean: 'http://h/rooms/lobby',
  });
  // Empty, they are nothing to present, but still leave the address.
  assert.deepEqual(linkSecrets('http://h/rooms/lobby?owner=&name=a'), {
    taken: { owner: null, invite: null, watch: null }, clean: 'http://h/rooms/lobby?name=a',
  });
});

test('what to watch is taken from a link once, and only a web address', () => {
  assert.deepEqual(linkSecrets('http://h/rooms/lobby?watch=https%3A%2F%2Fexample.org%2Fa.mp4&name=a'), {
    taken: { owner: null, invite: null, watch: 'https://example.org/a.mp4' }, clean: 'http://h/rooms/lobby?name=a',
  });
  // Not a web address: nothing to watch, and it leaves the address all the same.
  for (const odd of ['javascript%3Aalert(1)', 'not%20a%20link', '']) {
    assert.deepEqual(linkSecrets(`http://h/rooms/lobby?watch=${odd}`), {
      taken: { owner: null, invite: null, watch: null }, clean: 'http://h/rooms/lobby',
    });
  }
});

test('an address without secrets is left alone', () => {
  assert.deepEqual(linkSecrets('http://h/rooms/lobby?name=olivia'), { taken: { owner: null, invite: null, watch: null }, clean: null });
  assert.deepEqual(linkSecrets('http://h/rooms/lobby'), { taken: { owner: null, invite: null, watch: null }, clean: null });
});

test('the room entered comes first among those remembered, once, and the list is bounded', () => {
  assert.deepEqual(recentRooms(['a', 'lobby', 'b'], 'lobby'), ['lobby', 'a', 'b']);
  assert.deepEqual(recentRooms([], 'lobby'), ['lobby']);
  const many = Array.from({ length: 20 }, (_, i) => `room${i}`);
  const kept = recentRooms(many, 'lobby');
  assert.equal(kept.length, RECENT_ROOMS);
  assert.deepEqual(kept.slice(0, 3), ['lobby', 'room0', 'room1']);
});

test('what was kept, if not a list, counts as no rooms', () => {
  assert.deepEqual(recentRooms(null, 'lobby'), ['lobby']);
  assert.deepEqual(recentRooms({ rooms: ['a'] }, 'lobby'), ['lobby']);
  assert.deepEqual(recentRooms('a,b', 'lobby'), ['lobby']);
});
