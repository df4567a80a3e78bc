// The room connection (static/model/connection.js, static/model/connection-socket.js): which
// closes are final and what they are said as, the backoff and its jitter, and the
// socket's life against a stand-in WebSocket with Node's mocked timers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BACKOFF_MS, ConnectionLife, FINAL_CLOSES, finalWords, JITTER, MOVED_SPREAD_MS, retryDelay, retryReason,
} from '../../Sources/CowatchWeb/Web/static/model/connection.js';

test('each close code the protocol calls final is final, said in its own words', () => {
  for (const [code, words] of FINAL_CLOSES) {
    const life = new ConnectionLife();
    assert.deepEqual(life.closed({ code, reason: '' }, 0.5), { phase: 'closed', reason: words, code, serverReason: '' });
    assert.equal(life.attempt, 0, 'a final close is not an attempt');
  }
});

test("the server's reason follows the protocol's words, unless it only says them again", () => {
  assert.equal(finalWords({ code: 4001, reason: 'spoilers' }),
    'You were removed from the room by a host. Spoilers.');
  assert.equal(finalWords({ code: 4001, reason: 'you were removed' }), 'You were removed from the room by a host.');
  assert.equal(finalWords({ code: 4005, reason: 'wrong password' }), 'This room asks for a password. Wrong password.');
});

test("a locked room's own reason is the whole story: a spent invite link", () => {
  assert.equal(finalWords({ code: 4004, reason: 'this invite link has been used up' }), 'This invite link has been used up.');
  assert.equal(finalWords({ code: 4004, reason: 'this room is locked' }), FINAL_CLOSES.get(4004));
  assert.equal(finalWords({ code: 4004, reason: '' }), FINAL_CLOSES.get(4004));
});

test('a close after the page left on purpose is final, in the server\'s words or "Disconnected."', () => {
  const life = new ConnectionLife();
  life.stop();
  assert.deepEqual(life.closed({ code: 1000, reason: 'bye' }, 0.5), { phase: 'closed', reason: 'bye', code: 1000, serverReason: 'bye' });
  assert.equal(life.closed({ code: 1006, reason: '' }, 0.5).reason, 'Disconnected.');
  assert.equal(life.opening(), 'connecting', 'opening again starts over');
  assert.equal(life.closed({ code: 1006, reason: '' }, 0.5).phase, 'reconnecting');
});

test('any other close is retried, the backoff growing to its last step and staying there', () => {
  const life = new ConnectionLife();
  assert.equal(life.opening(), 'connecting');
  const delays = [];
  for (let i = 0; i < BACKOFF_MS.length + 3; i += 1) {
    const next = life.closed({ code: 1006, reason: '' }, 0.5); // the middle of the jitter: the step itself
    assert.equal(next.phase, 'reconnecting');
    assert.equal(next.attempt, i + 1);
    assert.equal(life.opening(), 'reconnecting');
    delays.push(next.delay);
  }
  assert.deepEqual(delays, [...BACKOFF_MS, 10000, 10000, 10000]);
  life.opened();
  assert.equal(life.attempt, 0);
  assert.equal(life.opening(), 'connecting');
  assert.equal(life.closed({ code: 1006 }, 0.5).delay, BACKOFF_MS[0], 'an open connection starts the count again');
});

test('the jitter spreads each step over ±20 %, and a moved room over a tenth of a second', () => {
  assert.equal(JITTER, 0.2);
  assert.equal(retryDelay(1006, 0, 0), 200);
  assert.equal(retryDelay(1006, 3, 0.999999), 2400);
  assert.equal(retryDelay(1006, 99, 0.25), 9000);
  assert.equal(retryDelay(4010, 5, 0), 0, 'a moved room comes back at once, whatever the count');
  assert.equal(retryDelay(4010, 5, 0.999999), MOVED_SPREAD_MS);
  assert.equal(MOVED_SPREAD_MS, 100);
});

test('a retried close says why in words', () => {
  assert.equal(retryReason({ code: 1006, reason: '' }), 'connection lost');
  assert.equal(retryReason({ code: 1001, reason: 'Going Away' }), 'the server is restarting');
  assert.equal(retryReason({ code: 4010, reason: 'moved' }), 'the room moved to another server');
  assert.equal(retryReason({ code: 1008, reason: 'rate limit' }), 'rate limit');
  assert.equal(retryReason({ code: 1011, reason: '' }), 'closed (1011)');
});

test('restart (a reopen as the same member) starts the count again', () => {
  const life = new ConnectionLife();
  life.closed({ code: 1006 }, 0.5);
  life.closed({ code: 1006 }, 0.5);
  life.restart();
  assert.equal(life.attempt, 0);
  assert.equal(life.opening(), 'connecting');
});

// MARK: the socket, against a stand-in

class FakeSocket extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 3;
  static made = [];

  constructor(url, protocol) {
    super();
    this.url = url;
    this.protocol = protocol;
    this.readyState = FakeSocket.CONNECTING;
    this.sent = [];
    this.closedWith = null;
    FakeSocket.made.push(this);
  }

  send(data) {
    this.sent.push(data);
  }

  close(code, reason) {
    this.closedWith = { code, reason };
  }

  // What the server does:
  serverOpens() {
    this.readyState = FakeSocket.OPEN;
    this.dispatchEvent(new Event('open'));
  }

  serverSays(event) {
    const message = new Event('message');
    message.data = JSON.stringify(event);
    this.dispatchEvent(message);
  }

  serverCloses(code, reason = '') {
    this.readyState = FakeSocket.CLOSED;
    const close = new Event('close');
    close.code = code;
    close.reason = reason;
    this.dispatchEvent(close);
  }
}

async function connectionWithFakes(t) {
  FakeSocket.made = [];
  t.mock.timers.enable({ apis: ['setTimeout'] });
  t.mock.method(Math, 'random', () => 0.5);
  globalThis.WebSocket = FakeSocket;
  globalThis.location = { protocol: 'http:', host: 'example.test' };
  t.after(() => {
    delete globalThis.WebSocket;
    delete globalThis.location;
  });
  const { Connection } = await import('../../Sources/CowatchWeb/Web/static/model/connection-socket.js');
  const connection = new Connection({ room: 'lobby', name: 'ann', player: true, device: 'd1' });
  const statuses = [];
  connection.addEventListener('status', ({ detail }) => statuses.push(detail));
  return { connection, statuses };
}

test('a dropped socket comes back after the backoff, with the newest resume token', async (t) => {
  const { connection, statuses } = await connectionWithFakes(t);
  connection.open();
  assert.equal(FakeSocket.made.length, 1);
  assert.equal(FakeSocket.made[0].url, 'ws://example.test/rooms/lobby?name=ann&player=1&device=d1');
  assert.equal(FakeSocket.made[0].protocol, 'cowatch.v1.json');
  FakeSocket.made[0].serverOpens();
  FakeSocket.made[0].serverSays({ type: 'welcome', resume: 'r1', you: { id: 'p1' } });
  FakeSocket.made[0].serverCloses(1006);
  assert.deepEqual(statuses.map((s) => s.phase), ['connecting', 'open', 'reconnecting']);
  assert.deepEqual(statuses[2], { phase: 'reconnecting', attempt: 1, delay: BACKOFF_MS[0], reason: 'connection lost' });
  t.mock.timers.tick(BACKOFF_MS[0] - 1);
  assert.equal(FakeSocket.made.length, 1, 'not before the delay');
  t.mock.timers.tick(1);
  assert.equal(FakeSocket.made.length, 2);
  assert.match(FakeSocket.made[1].url, /resume=r1/);
  assert.equal(statuses.at(-1).phase, 'reconnecting');
});

test('lines typed while away are sent on the next open; player reports are not kept', async (t) => {
  const { connection } = await connectionWithFakes(t);
  connection.open();
  assert.equal(connection.send('/ready 1'), false);
  assert.equal(connection.send('hello', { queue: true }), false);
  assert.equal(connection.send('/play', { queue: true }), false);
  FakeSocket.made[0].serverOpens();
  assert.deepEqual(FakeSocket.made[0].sent, ['hello\n/play']);
  assert.equal(connection.send('/pause'), true);
  assert.deepEqual(FakeSocket.made[0].sent.at(-1), '/pause');
});

test('a final close is said once and not retried; retry now skips the backoff', async (t) => {
  const { connection, statuses } = await connectionWithFakes(t);
  connection.open();
  FakeSocket.made[0].serverCloses(4001, 'spoilers');
  assert.deepEqual(statuses.at(-1), {
    phase: 'closed', attempt: 0, reason: 'You were removed from the room by a host. Spoilers.', code: 4001, serverReason: 'spoilers',
  });
  t.mock.timers.tick(60000);
  assert.equal(FakeSocket.made.length, 1);

  connection.retryNow();
  assert.equal(FakeSocket.made.length, 2);
  FakeSocket.made[1].serverCloses(1001);
  assert.equal(statuses.at(-1).reason, 'the server is restarting');
  connection.retryNow();
  assert.equal(FakeSocket.made.length, 3, 'at once');
  t.mock.timers.tick(60000);
  assert.equal(FakeSocket.made.length, 3, 'and the timer it replaced does not open another');
});

test('leaving on purpose closes with 1000 and the close that follows is final', async (t) => {
  const { connection, statuses } = await connectionWithFakes(t);
  connection.open();
  const socket = FakeSocket.made[0];
  socket.serverOpens();
  const left = connection.close();
  assert.deepEqual(socket.closedWith, { code: 1000, reason: 'bye' });
  socket.serverCloses(1000, 'bye');
  await left;
  assert.equal(statuses.at(-1).phase, 'closed');
  t.mock.timers.tick(60000);
  assert.equal(FakeSocket.made.length, 1);
});

test('reopen lets the socket go with 4000 and opens another at once; the old one is not heard', async (t) => {
  const { connection, statuses } = await connectionWithFakes(t);
  const events = [];
  connection.addEventListener('event', ({ detail }) => events.push(detail.type));
  connection.open();
  const first = FakeSocket.made[0];
  first.serverOpens();
  connection.reopen();
  assert.deepEqual(first.closedWith, { code: 4000, reason: 'reconnecting' });
  assert.equal(FakeSocket.made.length, 2);
  first.serverSays({ type: 'state' });
  first.serverCloses(4000, 'reconnecting');
  assert.deepEqual(events, []);
  assert.equal(statuses.at(-1).phase, 'connecting');
});
