// Live HLS (sync/live.js): the stream time two players agree on although each
// counts its currentTime from the segment it began on (Tests/e2e/hls_origin.py
// measured that), the report of the live edge, and how a player that cannot
// seek starts following the room.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  isLive, learnLoadMs, LIVE_LOAD_MS, LIVE_RELOADS_MAX, liveCourse, liveEdge, liveMargin, liveReloadDelay, LIVE_TOLERANCE_S,
  originSegment, parsePlaylist, playlistEnd,
} from '../../Sources/CowatchWeb/Web/static/sync/live.js';

// As ffmpeg writes it (-f hls -hls_time 1 -hls_list_size 6 -hls_flags delete_segments+program_date_time).
const DATED = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:1
#EXT-X-MEDIA-SEQUENCE:27
#EXTINF:1.000000,
#EXT-X-PROGRAM-DATE-TIME:2026-11-25T09:20:22.206+0000
live27.ts
#EXTINF:1.000000,
#EXT-X-PROGRAM-DATE-TIME:2026-11-25T09:20:23.206+0000
live28.ts
#EXTINF:1.000000,
live29.ts
#EXTINF:1.000000,
live30.ts
#EXTINF:1.000000,
live31.ts
#EXTINF:0.966667,
live32.ts
`;
const T27 = (Date.parse('2026-11-25T09:20:22.206Z') - Date.UTC(2020, 0, 1)) / 1000;

const UNDATED = `#EXTM3U
#EXT-X-TARGETDURATION:6
#EXT-X-MEDIA-SEQUENCE:100
#EXTINF:6.006,
seg/100.ts?token=a
#EXTINF:5.994,
seg/101.ts?token=b
#EXTINF:6.0,
seg/102.ts?token=c
`;

const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} vs ${b}`);

test('a dated playlist names each segment by its program date; undated ones follow on by their durations', () => {
  const p = parsePlaylist(DATED);
  assert.equal(p.targetDuration, 1);
  assert.equal(p.mediaSequence, 27);
  assert.equal(p.ended, false);
  assert.deepEqual(p.segments.map((s) => s.sequence), [27, 28, 29, 30, 31, 32]);
  near(p.segments[0].start, T27, 'first');
  near(p.segments[1].start, T27 + 1, 'dated');
  near(p.segments[3].start, T27 + 3, 'following on');
  near(playlistEnd(p), T27 + 5.966667, 'end');
});

test('without dates, a segment starts at its sequence number times the target duration', () => {
  const p = parsePlaylist(UNDATED);
  assert.deepEqual(p.segments.map((s) => [s.sequence, s.start, s.dated]), [[100, 600, false], [101, 606, false], [102, 612, false]]);
  near(playlistEnd(p), 618, 'end');
});

test('what is not a media playlist is not read as one', () => {
  assert.equal(parsePlaylist(''), null);
  assert.equal(parsePlaylist('<html>'), null);
  assert.equal(parsePlaylist(null), null);
  // A master playlist lists variants, not segments.
  assert.equal(parsePlaylist('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nlow.m3u8\n'), null);
});

test('the origin is the segment fetched after the probe of the first listed one', () => {
  const p = parsePlaylist(DATED);
  // Two windows as measured: one probed 27 and played from 30; the other, later, probed 28 and played from 31.
  const a = originSegment(['http://h/live.m3u8', 'http://h/live27.ts', 'http://h/live30.ts', 'http://h/live31.ts', 'http://h/live.m3u8', 'http://h/live32.ts'], p);
  const b = originSegment(['http://h/live.m3u8', 'http://h/live28.ts', 'http://h/live31.ts'], p);
  assert.equal(a.sequence, 30);
  assert.equal(b.sequence, 31);
  // The frame window A shows at currentTime 1.25 is the one B shows at 0.25.
  near(a.start + 1.25, b.start + 0.25, 'one stream time');
  // A playlist of four: the probe (27) and the start (28) follow each other.
  assert.equal(originSegment(['live27.ts', 'live28.ts', 'live29.ts', 'live30.ts'].map((f) => `http://h/${f}`), p).sequence, 28);
});

test('the origin: a playlist of three played from its first segment, and nothing known yet', () => {
  const p = parsePlaylist(UNDATED);
  assert.equal(originSegment(['seg/100.ts?token=x', 'seg/100.ts?token=x', 'seg/101.ts?token=y'], p).sequence, 100);
  assert.equal(originSegment(['live.m3u8'], p), null);
  assert.equal(originSegment(['seg/100.ts'], p), null, 'the probe alone');
  assert.equal(originSegment(['seg/100.ts', 'other/999.ts'], p), null);
  // The probe's segment gone from this playlist: the rest still tells.
  assert.equal(originSegment(['seg/99.ts', 'seg/101.ts', 'seg/102.ts'], p).sequence, 101);
  assert.equal(originSegment(['seg/100.ts'], null), null);
});

test('a playlist read too late (the video\'s first segments gone from it) tells no origin rather than a wrong one', () => {
  const p = parsePlaylist(DATED); // lists 27..32
  // The video probed 20 and played 23, 24, ... 32: 23..26 are gone from the page's playlist.
  const fetched = ['live20.ts', 'live23.ts', 'live24.ts', 'live25.ts', 'live26.ts', 'live27.ts', 'live28.ts'].map((f) => `http://h/${f}`);
  assert.equal(originSegment(fetched, p), null);
});

test('the reported edge is the playlist end less three target durations, where a loaded video begins', () => {
  const p = parsePlaylist(UNDATED);
  assert.equal(liveMargin(6), 18);
  near(liveEdge(p), 618 - 18, 'edge');
  // Program dates count from 2020: the room takes positions up to 1e9 s.
  assert.ok(parsePlaylist(DATED).segments[0].start < 1e9);
});

test('live: the room says so, or the video has no end', () => {
  assert.equal(isLive({ live: true }, 30), true);
  assert.equal(isLive({ live: false }, Infinity), true);
  assert.equal(isLive({}, 30), false);
  assert.equal(isLive(null, NaN), false);
});

const T = 1_800_000_000_000;

test('a live player within tolerance plays on; out of it, it loads again, but not forever', () => {
  const tolerance = LIVE_TOLERANCE_S;
  assert.equal(tolerance, 0.05);
  assert.equal(liveCourse({ drift: 0.04, tolerance, reloads: 0 }), 'play');
  assert.equal(liveCourse({ drift: -0.049, tolerance, reloads: 0 }), 'play');
  assert.equal(liveCourse({ drift: 0.2, tolerance, reloads: 0 }), 'reload');
  assert.equal(liveCourse({ drift: 1.0, tolerance, reloads: 0 }), 'reload');
  assert.equal(liveCourse({ drift: -30, tolerance, reloads: LIVE_RELOADS_MAX - 1 }), 'reload');
  assert.equal(liveCourse({ drift: -30, tolerance, reloads: LIVE_RELOADS_MAX }), 'play');
});

test('a load is timed so that the video begins on a segment\'s first frame as the room reaches it', () => {
  // Segments start at whole seconds (origin 100, T = 1); the room is at 205.3 at T.
  const timeline = { playing: true, position: 205.3, at: T, rate: 1 };
  // Loading takes 500 ms: at T + 500 the room is at 205.8; the next start, 206, is 200 ms later.
  near(liveReloadDelay({ timeline, now: T, loadMs: 500, segmentStart: 100, targetDuration: 1 }), 200, 'delay');
  // Exactly on a boundary: at once.
  near(liveReloadDelay({ timeline, now: T + 200, loadMs: 500, segmentStart: 100, targetDuration: 1 }), 0, 'now');
  // Nothing known of the segments yet: at once.
  assert.equal(liveReloadDelay({ timeline, now: T, loadMs: 500, segmentStart: undefined, targetDuration: 1 }), 0);
  // The load time learnt: half of each error, within bounds.
  assert.equal(learnLoadMs(500, 300), 400);
  assert.equal(learnLoadMs(500, 1e9), LIVE_LOAD_MS.max);
  assert.equal(learnLoadMs(500, NaN), 500);
});

// The player's live path (sync/follow.js, sync/player.js) with a live video's
// readings: no seek is ever asked; the player waits on its frame, plays, or
// loads the stream again.

import { PlayerCore } from '../../Sources/CowatchWeb/Web/static/sync/player.js';

const S = 217_761_000; // stream time, seconds (a program date, counted from 2020)
const URL_ = 'http://127.0.0.1:9/live.m3u8';

function liveRoom(seq, playback) {
  return {
    seq,
    session: { state: 'joined', activity: { id: 'a1', url: URL_, title: 'live', live: true, duration: null, source: { kind: 'file' } } },
    playback: { status: 'paused', item: 'i1', rate: 1, position: S, at: T, by: null, cause: 'watch', ...playback },
  };
}

function liveReadings(now, currentTime, extra = {}) {
  return {
    now, monotonic: now - T, currentTime, paused: true, seeking: false, readyState: 4, duration: Infinity,
    playbackRate: 1, buffered: [[currentTime, currentTime + 3]], error: null, live: true, liveEdge: currentTime - 1, ...extra,
  };
}

function liveCore(state, r) {
  const core = new PlayerCore();
  core.setMe({ id: 'me', name: 'me', joined: true, player: true, suspensions: [] }, r);
  const actions = core.setState(state, r);
  return { core, actions };
}

test('a playing live player near the room is followed as it is: no pause, no seek, rate 1', () => {
  const r = liveReadings(T + 1000, S + 1.03, { liveTargetDuration: 1, paused: false }); // the room is at S + 1 now
  const { core } = liveCore(liveRoom(4, { status: 'playing', position: S, at: T }), r); // loads the item
  const all = core.tick(r); // the video plays (loaded again, it played at once)
  assert.ok(all.every((a) => !['seek', 'reload', 'pause'].includes(a.type)), JSON.stringify(all));
  assert.ok(all.every((a) => a.type !== 'rate' || a.rate === 1));
  assert.ok(core.running, 'following');
});

test('a paused live player, or one out of tolerance, loads the stream again (which plays it)', () => {
  const paused = liveReadings(T + 1000, S + 1, { liveTargetDuration: 1, paused: true });
  const one = liveCore(liveRoom(4, { status: 'playing', position: S, at: T }), paused);
  assert.ok([...one.actions, ...one.core.tick(paused)].some((a) => a.type === 'reload'));
  const far = liveReadings(T + 1000, S + 3, { liveTargetDuration: 1, paused: false }); // no segment known: at once
  const two = liveCore(liveRoom(4, { status: 'playing', position: S, at: T }), far);
  assert.ok([...two.actions, ...two.core.tick(far)].some((a) => a.type === 'reload'));
});

test('a live player the room has passed loads the stream again, and no more than LIVE_RELOADS_MAX times in a row', () => {
  const state = liveRoom(5, { status: 'playing', position: S, at: T });
  const r = liveReadings(T + 30000, S + 2); // left 28 s behind (it was paused)
  const { core } = liveCore(state, r);
  let reloads = 0;
  for (let i = 0; i < LIVE_RELOADS_MAX + 4; i++) {
    const actions = core.tick(liveReadings(T + 30000 + i * 50, S + 2, { liveTargetDuration: 1 }));
    assert.ok(actions.every((a) => a.type !== 'seek'));
    reloads += actions.filter((a) => a.type === 'reload').length;
  }
  assert.ok(reloads >= 1, 'loaded again');
  assert.ok(reloads <= LIVE_RELOADS_MAX, `not forever (${reloads})`);
});

test('a paused or waiting live room: the player holds where it stands and says /ready with data', () => {
  const r = liveReadings(T + 500, S + 7);
  const { core, actions } = liveCore(liveRoom(6, { status: 'waiting', position: S + 2, at: T }), r);
  const all = [...actions, ...core.tick(r)];
  assert.ok(all.every((a) => a.type !== 'seek'), 'no seek in a live stream');
  assert.ok(all.some((a) => a.type === 'send' && a.line === '/ready 6'), JSON.stringify(all));
});

test('a live item is reported with its edge: /duration <seq> live <edge>', () => {
  const r = liveReadings(T, S + 10, { liveEdge: S + 4.5 });
  const { core, actions } = liveCore(liveRoom(7, { status: 'paused', position: S, at: T }), r);
  const all = [...actions, ...core.mediaLoaded(r)];
  assert.ok(all.some((a) => a.type === 'send' && a.line === `/duration 7 live ${(S + 4.5).toFixed(3)}`), JSON.stringify(all));
});
