// A link shared with the landing page (static/model/share.js): which link a
// share sheet's url, text and title hold, whether it can be watched, the rooms
// to pick from, a new room's name and the room's address that shares it.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RECENT_ROOMS } from '../../Sources/CowatchWeb/Web/static/model/address.js';
import {
  MAX_LINK, MAX_SHOWN, linkInText, rememberedRooms, sharedLink, suggestRoomName, watchAddress, watchableLink,
} from '../../Sources/CowatchWeb/Web/static/model/share.js';

const shared = (query) => sharedLink(new URLSearchParams(query));

test('nothing shared is the landing page as usual', () => {
  assert.equal(shared(''), null);
  assert.equal(shared('?name=ada'), null);
  // Share sheets send every parameter, some of them empty.
  assert.equal(shared('?title=&text=&url='), null);
  assert.equal(shared('?text=%20%20'), null);
});

test('the url parameter is the link when it is one', () => {
  assert.deepEqual(shared('?url=https%3A%2F%2Fexample.org%2Fa.mp4&title=A%20film&text='),
    { found: true, link: 'https://example.org/a.mp4', title: 'A film' });
  assert.deepEqual(shared('?url=http://example.org/a.mp4'), { found: true, link: 'http://example.org/a.mp4', title: null });
});

test('a link in the text, with words around it, as share sheets often send it', () => {
  assert.deepEqual(shared('?text=look%20https://example.org/a.mp4'),
    { found: true, link: 'https://example.org/a.mp4', title: 'look' });
  assert.deepEqual(shared('?title=&text=Watch%20this%3A%20https%3A%2F%2Fyoutu.be%2FdQw4w9WgXcQ%20%F0%9F%98%80&url='),
    { found: true, link: 'https://youtu.be/dQw4w9WgXcQ', title: 'Watch this: 😀' });
  // The text alone, the link and nothing else: no title.
  assert.deepEqual(shared('?text=https://example.org/a.mp4'), { found: true, link: 'https://example.org/a.mp4', title: null });
  // A title given wins over the words around the link.
  assert.deepEqual(shared('?title=Film&text=see%20https://example.org/a.mp4'),
    { found: true, link: 'https://example.org/a.mp4', title: 'Film' });
});

test('a link in the title, when nothing else has one', () => {
  assert.deepEqual(shared('?title=https://example.org/v'), { found: true, link: 'https://example.org/v', title: null });
});

test('the url parameter wins over a link in the text', () => {
  assert.equal(shared('?url=https://a.example/1&text=https://b.example/2').link, 'https://a.example/1');
  // ...unless it is not a web address: then the text's.
  assert.equal(shared('?url=ftp://a.example/1&text=https://b.example/2').link, 'https://b.example/2');
});

test('only http and https links are taken', () => {
  for (const odd of ['javascript:alert(1)', 'ftp://example.org/a.mp4', 'file:///etc/passwd', 'data:text/html,hi',
    'https://', 'not a link', 'example.org/a.mp4', `https://example.org/${'a'.repeat(MAX_LINK)}`]) {
    assert.equal(watchableLink(odd), null, odd);
  }
  assert.equal(watchableLink(' https://Example.org/a b '), 'https://example.org/a%20b');
  assert.equal(watchableLink(42), null);
  assert.equal(watchableLink(null), null);
});

test('a link written in a sentence loses the punctuation around it', () => {
  assert.equal(linkInText('see https://example.org/a.mp4.'), 'https://example.org/a.mp4');
  assert.equal(linkInText('(https://example.org/a.mp4)'), 'https://example.org/a.mp4');
  assert.equal(linkInText('this: https://en.wikipedia.org/wiki/Film_(disambiguation)!'),
    'https://en.wikipedia.org/wiki/Film_(disambiguation)');
  assert.equal(linkInText('"https://example.org/?q=1&r=2", he said'), 'https://example.org/?q=1&r=2');
  assert.equal(linkInText('<https://example.org/a>'), 'https://example.org/a');
  assert.equal(linkInText('HTTPS://EXAMPLE.ORG/A'), 'https://example.org/A');
  assert.equal(linkInText('two: https://a.example/1 https://b.example/2'), 'https://a.example/1');
  assert.equal(linkInText('no link here'), null);
  assert.equal(linkInText('javascript:alert(1)'), null);
  assert.equal(linkInText(undefined), null);
});

test('no link in what was shared says so, in words, and keeps what was shared as text', () => {
  const none = shared('?title=Hello&text=just%20some%20words');
  assert.equal(none.found, false);
  assert.equal(none.shared, 'Hello just some words');
  assert.match(none.words, /^No link was found/);
  // Markup is what was shared, not markup: the page shows it as text.
  assert.equal(shared('?text=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E').shared, '<img src=x onerror=alert(1)>');
});

test('a link that is not http(s) is said to be one that cannot be watched', () => {
  for (const query of ['?url=javascript%3Aalert(1)', '?text=ftp://example.org/a.mp4', '?url=file:///etc/passwd']) {
    const refused = shared(query);
    assert.equal(refused.found, false, query);
    assert.match(refused.words, /^Only http and https links/, query);
  }
});

test('what is shown of a share without a link is bounded', () => {
  const long = shared(`?text=${'word '.repeat(200)}`);
  assert.equal(long.shared.length, MAX_SHOWN);
  assert.ok(long.shared.endsWith('…'));
});

test('the rooms to pick from are the remembered ones, names only, once, bounded', () => {
  assert.deepEqual(rememberedRooms(['lobby', 'movie-night']), ['lobby', 'movie-night']);
  assert.deepEqual(rememberedRooms(['Lobby', 'lobby', 42, null, '../admin', 'a b', 'x']), ['lobby', 'x']);
  assert.deepEqual(rememberedRooms(Array.from({ length: 20 }, (_, i) => `r${i}`)).length, RECENT_ROOMS);
  for (const odd of [null, undefined, 'lobby', { rooms: ['a'] }]) assert.deepEqual(rememberedRooms(odd), []);
});

test('a new room is named after the title, else the file, else the site, with a random tail', () => {
  const zero = () => 0;
  assert.equal(suggestRoomName('https://example.org/a.mp4', 'Never Gonna Give You Up', zero), 'never-gonna-give-you-up-aaaa');
  assert.equal(suggestRoomName('https://example.org/films/The%20Big%20Sleep.webm', null, zero), 'the-big-sleep-aaaa');
  assert.equal(suggestRoomName('https://www.youtube.com/watch?v=x', null, zero), 'youtube-aaaa');
  assert.equal(suggestRoomName('https://m.example.org/', null, zero), 'example-aaaa');
  assert.equal(suggestRoomName('https://example.org/a.mp4', 'Café crème', zero), 'cafe-creme-aaaa');
  // Nothing to name it by: "watch".
  assert.equal(suggestRoomName('https://127.0.0.1/', '😀', zero), '127-aaaa');
  assert.equal(suggestRoomName('not a link', '', zero), 'watch-aaaa');
  // The tail differs with the random numbers, and the name is always one the server takes.
  const tails = new Set(Array.from({ length: 50 }, () => suggestRoomName('https://example.org/a.mp4').slice(-4)));
  assert.ok(tails.size > 40, `${tails.size} distinct tails`);
  const long = suggestRoomName('https://example.org/', 'a'.repeat(100), () => 0.999);
  assert.ok(/^[a-z0-9-]{1,64}$/.test(long) && long.length <= 45, long);
  assert.ok(/^[a-z0-9._-]{1,64}$/.test(suggestRoomName('https://example.org/', '--- / ---', Math.random)));
});

test('the room\'s address shares the link with ?watch=, the room in lowercase', () => {
  assert.equal(watchAddress('movie-night', 'https://example.org/a.mp4'),
    '/rooms/movie-night?watch=https%3A%2F%2Fexample.org%2Fa.mp4');
  assert.equal(watchAddress(' Lobby ', 'https://example.org/a?b=1&c=d#t=10'),
    '/rooms/lobby?watch=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1%26c%3Dd%23t%3D10');
  assert.equal(watchAddress('', 'https://example.org/a.mp4'), null);
  assert.equal(watchAddress('../admin', 'https://example.org/a.mp4'), null);
  assert.equal(watchAddress('lobby', 'javascript:alert(1)'), null);
  assert.equal(watchAddress(null, 'https://example.org/a.mp4'), null);
});
