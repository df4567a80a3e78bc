// The chat field (static/model/line-limit.js, static/model/help.js): lines measured as
// the server measures them, never sent too long, messages that fit the server's
// message limit, a refused line given back, and the page's own `/help`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  commandOf, DEFAULT_LIMITS, fateOfLine, limitsOf, lineStatus, packLines, refusalOf, utf8Bytes,
} from '../../Sources/CowatchWeb/Web/static/model/line-limit.js';
import { asksForHelp, pageHelp } from '../../Sources/CowatchWeb/Web/static/model/help.js';

test('a line is counted in UTF-8 bytes, as the server counts it', () => {
  for (const text of ['hello', 'é', '€', '🎬', 'a🎬b', '👩‍👩‍👧', 'naïve café ☕', '\ud800x']) {
    const expected = new TextEncoder().encode(text).length; // a lone surrogate as U+FFFD, as a browser sends it
    assert.equal(utf8Bytes(text), expected, JSON.stringify(text));
  }
  assert.equal(utf8Bytes('🎬'.repeat(1100)), 4400);
});

test('1,100 emoji are too long for a 4 KiB line: said before sending, in bytes, with what to do', () => {
  const emoji = '😀'.repeat(1100);
  assert.equal(emoji.length, 2200, 'a UTF-16 count (the field\'s old maxlength) lets it through');
  const status = lineStatus(emoji, DEFAULT_LIMITS.lineBytes);
  assert.equal(status.over, true);
  assert.match(status.words, /4400 of at most 4096 bytes \(304 too many/);
  assert.equal(lineStatus('x'.repeat(4096), 4096).over, false);
  assert.equal(lineStatus('x'.repeat(4097), 4096).over, true);
  assert.equal(lineStatus('hi', 4096).words, '', 'nothing said well under the limit');
  assert.equal(lineStatus('x'.repeat(4000), 4096).words, '96 bytes left.');
});

test('the limits come from the welcome when it gives them, else the server\'s defaults', () => {
  assert.deepEqual(limitsOf({}), { lineBytes: 4096, messageBytes: 8192 });
  assert.deepEqual(limitsOf({ limits: { lineBytes: 1000, messageBytes: 2000 } }), { lineBytes: 1000, messageBytes: 2000 });
  assert.deepEqual(limitsOf({ limits: { lineBytes: -1, messageBytes: 'x' } }), DEFAULT_LIMITS);
});

test('lines typed while disconnected go in messages that fit the message limit, in order', () => {
  const lines = Array.from({ length: 5 }, (_, i) => `${i}`.repeat(3000));
  const messages = packLines(lines, 8192);
  assert.ok(messages.every((m) => utf8Bytes(m) <= 8192), messages.map(utf8Bytes).join());
  assert.deepEqual(messages.join('\n').split('\n'), lines);
  assert.equal(messages.length, 3);
  assert.deepEqual(packLines(['a', 'b'], 8192), ['a\nb']);
  assert.deepEqual(packLines([], 8192), []);
});

test('a refusal is matched to the line typed last: chat to chat, a command to its own', () => {
  assert.equal(commandOf('/Seek 1:00'), 'seek');
  assert.equal(commandOf('//not a command'), null);
  assert.equal(commandOf('hello'), null);
  const error = (code, command = null) => ({ type: 'error', code, command, message: '' });
  assert.equal(refusalOf('hello', error('too-long')), true);
  assert.equal(refusalOf('hello', error('slow-mode')), true);
  assert.equal(refusalOf('/seek x', error('bad-arguments', 'seek')), true);
  assert.equal(refusalOf('/sekk 1', error('unknown-command')), true);
  assert.equal(refusalOf('hello', error('bad-arguments', 'seek')), false);
  assert.equal(refusalOf('/seek 1', error('stale-report', 'seek')), false);
  assert.equal(refusalOf(null, error('too-long')), false);
});

test('the line typed last is taken by its echo or a reply to its command, refused by its refusal, and else not known yet', () => {
  const error = (code, command = null) => ({ type: 'error', code, command, message: '' });
  assert.equal(fateOfLine('hello', 'm1', { type: 'chat', from: 'm1', text: 'hello' }), 'taken');
  assert.equal(fateOfLine('hello', 'm1', { type: 'chat', from: 'm2', text: 'hello' }), null);
  assert.equal(fateOfLine('/Invites', 'm1', { type: 'reply', command: 'invites', lines: [] }), 'taken');
  assert.equal(fateOfLine('/bans', 'm1', { type: 'reply', command: 'invites', lines: [] }), null);
  assert.equal(fateOfLine('/seek x', 'm1', error('bad-arguments', 'seek')), 'refused');
  assert.equal(fateOfLine('hello', 'm1', error('bad-arguments', 'seek')), null);
  assert.equal(fateOfLine(null, 'm1', { type: 'chat', from: 'm1', text: 'hello' }), null);
});

test('/help on the page is short, what the page can use, and host commands only for hosts', () => {
  const member = pageHelp({ host: false });
  const host = pageHelp({ host: true });
  assert.ok(member.length <= 15, `${member.length} lines`);
  assert.ok(host.length <= 22, `${host.length} lines`);
  const text = member.join('\n');
  for (const hostOnly of ['/kick', '/ban', '/lock', '/op', '/password', '/token', '/policy']) {
    assert.doesNotMatch(text, new RegExp(`${hostOnly}\\b`), `${hostOnly} shown to a member`);
    assert.match(host.join('\n'), new RegExp(`${hostOnly === '/token' ? '/lock' : hostOnly}\\b`));
  }
  for (const notHere of ['cowatch connect', 'Ctrl-D', '/quit', '/ready', '/have', '/time', '/player ']) {
    assert.doesNotMatch(host.join('\n'), new RegExp(notHere.replace(/[/]/g, '\\/')), `${notHere} is not for the page`);
  }
  assert.ok(asksForHelp('/help') && asksForHelp(' /HELP  '));
  assert.ok(!asksForHelp('/help seek') && !asksForHelp('help'));
});
