// Own copies (sync/own-copy.js): the OpenSubtitles hash checked against an
// independent reference (Python's struct, run here on the same bytes), the
// words members are asked in, and the refusal of a copy that does not match.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import {
  askText, CHUNK, clockText, copyLabel, hashRanges, haveLine, localState, matchCopy, openSubtitlesHash, ownItem, sizeText,
  watchOwnLine,
} from '../../Sources/CowatchWeb/Web/static/sync/own-copy.js';

// The definition, written the way OpenSubtitles documents it: the size, plus the
// little-endian 64-bit words of the first and the last 64 KiB (overlapping in a
// short file; a file's last partial word padded with zeros), modulo 2^64.
const REFERENCE = `
import struct, sys
data = sys.stdin.buffer.read()
size = len(data)
def words(chunk):
    chunk = chunk + b"\\0" * (-len(chunk) % 8)
    return sum(struct.unpack("<%dQ" % (len(chunk) // 8), chunk))
total = size + words(data[:65536]) + words(data[max(0, size - 65536):])
print("%016x" % (total & 0xFFFFFFFFFFFFFFFF))
`;

function reference(bytes) {
  return execFileSync('python3', ['-c', REFERENCE], { input: bytes }).toString().trim();
}

/** Deterministic bytes that set every bit position (so carries and the sign bit are exercised). */
function bytesOf(size, seed) {
  const bytes = new Uint8Array(size);
  let x = seed >>> 0;
  for (let i = 0; i < size; i += 1) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

function hashOf(bytes) {
  const { head, tail } = hashRanges(bytes.length);
  return openSubtitlesHash(bytes.length, bytes.subarray(...head), bytes.subarray(...tail));
}

test('the hash agrees with the reference for large, overlapping, tiny and ragged files', () => {
  for (const size of [3 * CHUNK + 5, 2 * CHUNK, 2 * CHUNK - 8, CHUNK + 3, CHUNK, 1000, 13, 1]) {
    const bytes = bytesOf(size, size);
    assert.equal(hashOf(bytes), reference(bytes), `a file of ${size} bytes`);
  }
});

test('a file of zeros hashes to its size, in 16 hex digits', () => {
  assert.equal(hashOf(new Uint8Array(300000)), '00000000000493e0');
});

test('only the ends count: a change in the middle of a large file keeps the hash, a change at an end does not', () => {
  const bytes = bytesOf(4 * CHUNK, 7);
  const before = hashOf(bytes);
  bytes[2 * CHUNK] ^= 0xff;
  assert.equal(hashOf(bytes), before);
  bytes[10] ^= 0xff;
  assert.notEqual(hashOf(bytes), before);
});

test('sizes and lengths are said as the server says them', () => {
  assert.equal(sizeText(1_400_000_000), '1.4 GB');
  assert.equal(sizeText(999), '999 bytes');
  assert.equal(sizeText(65_536), '65.5 KB');
  assert.equal(sizeText(999_960), '1.0 MB');
  assert.equal(clockText(6130.7), '1:42:10');
});

const activity = {
  url: null, title: 'a file of 1.4 GB, 1:42:10', identifier: 'own:8e245d9679d31e12:1400000000',
  source: { kind: 'own', hash: '8e245d9679d31e12', size: 1_400_000_000 }, duration: 6130,
};

test('a member is asked in words for their copy, by the title the sharer gave if any', () => {
  const item = ownItem(activity);
  assert.equal(askText(item), 'pick your copy of the file: 1.4 GB, 1:42:10');
  assert.equal(askText(ownItem({ ...activity, title: 'Movie night' })), 'pick your copy of "Movie night": 1.4 GB, 1:42:10');
  assert.equal(ownItem({ ...activity, source: { kind: 'file' } }), null);
});

test('a picked file is refused with why: another size or contents is another file, another length another duration', () => {
  const item = ownItem(activity);
  assert.deepEqual(matchCopy(item, { size: 1_400_000_000, hash: '8e245d9679d31e12', duration: 6130.4 }), { ok: true });
  assert.deepEqual(matchCopy(item, { size: 700_000_000 }),
    { ok: false, why: "another file: it has 700.0 MB, the room's has 1.4 GB" });
  assert.deepEqual(matchCopy(item, { size: 1_400_000_001 }),
    { ok: false, why: "another file: it has 1400000001 bytes, the room's has 1400000000 bytes" });
  assert.deepEqual(matchCopy(item, { size: 1_400_000_000, hash: '0000000000000001' }),
    { ok: false, why: 'another file: the same size, but other contents' });
  assert.deepEqual(matchCopy(item, { size: 1_400_000_000, hash: '8e245d9679d31e12', duration: 5400 }),
    { ok: false, why: "another duration: it lasts 1:30:00, the room's lasts 1:42:10" });
});

test('the share line carries the identity and the typed title, never the file name', () => {
  const picked = { name: 'Movie.2019.mkv', size: 1_400_000_000, hash: '8e245d9679d31e12', duration: 6130.0416 };
  assert.equal(watchOwnLine(picked, ''), '/watch own 8e245d9679d31e12 1400000000 6130.042');
  assert.equal(watchOwnLine(picked, ' Movie night '), '/watch own 8e245d9679d31e12 1400000000 6130.042 Movie night');
});

test('the member list says who has the file', () => {
  assert.equal(copyLabel({ copy: true }), 'has the file');
  assert.equal(copyLabel({ copy: false }), 'no copy, not watching');
  assert.equal(copyLabel({}), '');
});

const ownState = {
  seq: 9,
  session: { state: 'joined', activity: { id: 'a3', ...activity } },
  playback: { status: 'playing', item: activity.identifier, rate: 1, position: 10, at: 1000 },
};

test('a member who picked the file plays it from its object URL; one without it follows an idle room', () => {
  const mine = { identifier: activity.identifier, url: 'blob:http://x/1' };
  assert.equal(localState(ownState, mine).session.activity.url, 'blob:http://x/1');
  assert.equal(localState(ownState, mine).playback.status, 'playing');
  const none = localState(ownState, null);
  assert.equal(none.session, null);
  assert.equal(none.playback.status, 'idle');
  const fileState = { ...ownState, session: { state: 'joined', activity: { id: 'a4', url: 'http://x/a.mp4', source: { kind: 'file' } } } };
  assert.equal(localState(fileState, null), fileState);
});

test('/have is said once per item: yes for a match, no for a refused file', () => {
  const mine = { identifier: activity.identifier, url: 'blob:x' };
  assert.equal(haveLine(ownState, mine, null), '/have 9 yes');
  assert.equal(haveLine(ownState, mine, { activity: 'a3', yes: true }), null);
  assert.equal(haveLine(ownState, { identifier: null, url: null }, null), '/have 9 no');
  assert.equal(haveLine(ownState, { identifier: 'own:0000000000000001:5', url: 'blob:y' }, null), null);
  assert.equal(haveLine(ownState, null, null), null);
});

test('a page opened again, whose file is gone while the room counts it, says no until it is picked again', () => {
  assert.equal(haveLine(ownState, null, null, { copy: true }), '/have 9 no');
  assert.equal(haveLine(ownState, null, { activity: 'a3', yes: false }, { copy: true }), null);
  assert.equal(haveLine(ownState, null, null, { copy: false }), null);
});

test('after any reconnection the page says again that it has the file (a restarted server\'s new member, or a resumed one)', async () => {
  const { OwnCopies } = await import('../../Sources/CowatchWeb/Web/static/sync/own-copies.js');
  const element = () => Object.assign(new EventTarget(), { hidden: true, textContent: '', value: '', files: null });
  const sent = [];
  const own = new OwnCopies({
    share: element(), shareTitle: element(), ask: element(), askText: element(), pick: element(), none: element(),
  }, (line) => sent.push(line), () => {});
  own.choose({ identifier: activity.identifier, url: 'blob:x' }); // the viewer's copy matched
  own.update(ownState, { copy: undefined });
  assert.deepEqual(sent, ['/have 9 yes']);
  own.update({ ...ownState, seq: 10 }, { copy: true });
  assert.deepEqual(sent, ['/have 9 yes'], 'said once per item on one connection');
  // The server restarted: a new member, who has said nothing, in the room brought back.
  own.reconnected();
  own.update({ ...ownState, seq: 2 }, { copy: undefined });
  assert.deepEqual(sent, ['/have 9 yes', '/have 2 yes']);
  // Resumed within the grace: said again too, the room may have moved on meanwhile.
  own.reconnected();
  own.update({ ...ownState, seq: 3 }, { copy: true });
  assert.deepEqual(sent, ['/have 9 yes', '/have 2 yes', '/have 3 yes']);
});
