#!/usr/bin/env python3
"""A TCP proxy that makes a loopback connection behave like a viewer's network.

`tc netem` is not available where the end-to-end test runs, so the network is
emulated one level up: every connection accepted on a loopback port is forwarded
to a target host:port, and each direction is held back separately:

- a one-way base delay plus jitter, drawn per chunk (uniform within
  ±jitter_ms, or normal with sigma jitter_ms / 2, clipped to ±jitter_ms);
- occasional stalls, as a lost packet's retransmission causes: every 1460-byte
  segment of a chunk (a smaller chunk counts as one segment) is "lost" with
  probability stall_chance, and a chunk with a lost segment is held stall_ms
  longer, and everything behind it with it;
- optionally a bandwidth limit in bytes per second, as a slow link's
  serialization: a chunk leaves the link no sooner than the link has finished
  the bytes before it, and only then starts its delay.

TCP delivers bytes in order, so no chunk is released before the chunk read
before it: each direction keeps a release time that is the maximum of the
previous release and this chunk's arrival plus delay, jitter and stall. Jitter
thus stretches the gaps between chunks but never reorders them, as on a real
connection. End of stream (a half-close) travels the same way, after the data
before it; a reset tears the whole connection down.

The proxy works on bytes, so HTTP (keep-alive, Range requests for media) and
WebSocket upgrades pass through unchanged. Each direction buffers at most
`buffer_bytes` that are waiting for their release, then stops reading, which
pushes back on the sender as a real connection's window would.

A new connection also pays for its handshake: the client's first bytes leave no
sooner than one round trip (base up + base down delay) after the accept, since a
real client cannot send before the server's SYN-ACK reaches it.

Conditions (CONDITIONS, one-way delays per direction; "up" is client to target,
"down" is target to client; RTT is the sum of the two base delays):

  wan-20       up 24 ms ±10, down 16 ms ±12           a good line, RTT 40 ms
  wan-60       up 70 ms ±20, down 50 ms ±15           across a continent, RTT 120 ms
  wan-120      up 135 ms ±30, down 105 ms ±25         across an ocean, RTT 240 ms
  lossy        up 65 ms ±25, down 55 ms ±25, 1 % of segments stalled 300 ms
               (up) and 250 ms (down)                 busy Wi-Fi
  slow-viewer  up 50 ms ±20 at 32 kB/s, down 40 ms ±15 at 80 kB/s
                                                      a link slower than the
               e2e media (about 100 kB/s, 806 kbit/s), so the video must stall

As a library:

    proxy = DelayProxy("127.0.0.1", 7480, up=Direction(60, 20), down=Direction(40, 30), seed=1)
    await proxy.start(); ... proxy.port ...; proxy.stats(); await proxy.stop()

or, from synchronous code, on a thread of its own:

    with ThreadedDelayProxy("127.0.0.1", 7480, **CONDITIONS["wan-60"].directions()) as proxy:
        url = f"ws://127.0.0.1:{proxy.port}/rooms/a"; ...; proxy.stats()

From the command line (prints "listening on 127.0.0.1:PORT", then runs until
SIGINT or SIGTERM and prints the figures per direction):

    python3 Tests/e2e/delay_proxy.py --target 127.0.0.1:7480 --listen 0 \\
        --up-delay 60 --up-jitter 20 --down-delay 40 --down-jitter 30 \\
        --stall-chance 0.01 --stall-ms 300 --down-bytes-per-second 200000
    python3 Tests/e2e/delay_proxy.py --target 127.0.0.1:7480 --condition wan-60
"""

import argparse
import asyncio
import json
import math
import random
import signal
import socket
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

SEGMENT_BYTES = 1460  # one Ethernet packet's TCP payload: the unit that is lost
READ_BYTES = 64 * 1024


@dataclass(frozen=True)
class Direction:
    """How one direction of a connection is held back. Times in milliseconds;
    bytes_per_second None means no bandwidth limit."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    stall_chance: float = 0.0
    stall_ms: float = 0.0
    bytes_per_second: float | None = None
    jitter_shape: str = "uniform"  # or "normal"

    def __post_init__(self):
        if self.delay_ms < 0 or self.jitter_ms < 0 or self.stall_ms < 0:
            raise ValueError("delays, jitter and stalls cannot be negative")
        if not 0.0 <= self.stall_chance <= 1.0:
            raise ValueError("stall_chance is a probability, 0 to 1")
        if self.bytes_per_second is not None and self.bytes_per_second <= 0:
            raise ValueError("bytes_per_second must be positive (or None for no limit)")
        if self.jitter_shape not in ("uniform", "normal"):
            raise ValueError("jitter_shape is 'uniform' or 'normal'")

    def describe(self):
        text = f"{self.delay_ms:g} ms ±{self.jitter_ms:g} ({self.jitter_shape})"
        if self.stall_chance:
            text += f", stalls {self.stall_chance:.2%} of segments for {self.stall_ms:g} ms"
        if self.bytes_per_second:
            text += f", {self.bytes_per_second:g} B/s"
        return text


@dataclass(frozen=True)
class Condition:
    """A named network: both directions, and what it stands for."""

    up: Direction
    down: Direction
    about: str = ""

    def directions(self):
        """The keyword arguments DelayProxy takes for this condition."""
        return {"up": self.up, "down": self.down}


CONDITIONS = {
    "wan-20": Condition(Direction(24, 10), Direction(16, 12), "a good line, RTT 40 ms"),
    "wan-60": Condition(Direction(70, 20), Direction(50, 15), "across a continent, RTT 120 ms"),
    "wan-120": Condition(Direction(135, 30), Direction(105, 25), "across an ocean, RTT 240 ms"),
    "lossy": Condition(
        Direction(65, 25, stall_chance=0.01, stall_ms=300),
        Direction(55, 25, stall_chance=0.01, stall_ms=250),
        "busy Wi-Fi: 1 % of segments wait for a retransmission",
    ),
    "slow-viewer": Condition(
        Direction(50, 20, bytes_per_second=32_000),
        Direction(40, 15, bytes_per_second=80_000),
        "a link slower than the e2e media's 100 kB/s: the video stalls",
    ),
}


def _percentile(ordered, fraction):
    """Nearest rank: a value that was really observed."""
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def summarize_delays(delays_ms):
    if not delays_ms:
        return None
    ordered = sorted(delays_ms)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {
        "min": round(ordered[0], 3),
        "median": round(median, 3),
        "p95": round(_percentile(ordered, 0.95), 3),
        "max": round(ordered[-1], 3),
    }


@dataclass
class DirectionStats:
    """What one direction of one connection carried. delays_ms holds, per chunk,
    the time from when it entered the emulated network (its arrival at the
    proxy, or the end of the connection's handshake if that is later) to its
    write onward: the one-way delay the chunk really got, including waiting
    behind earlier chunks, stalls, the bandwidth limit and late timers. The
    handshake's wait is ConnectionStats.handshake_ms, not part of these."""

    bytes: int = 0
    chunks: int = 0
    segments: int = 0
    stalls: int = 0
    stall_ms_total: float = 0.0
    delays_ms: list = field(default_factory=list)
    closed_by: str = ""  # "eof" (half-close passed on), "reset", or "" while open

    def record(self, size, delay_ms, stalled, stall_ms):
        self.bytes += size
        self.chunks += 1
        self.segments += max(1, math.ceil(size / SEGMENT_BYTES))
        self.delays_ms.append(delay_ms)
        if stalled:
            self.stalls += 1
            self.stall_ms_total += stall_ms

    def summary(self):
        return {
            "bytes": self.bytes,
            "chunks": self.chunks,
            "segments": self.segments,
            "stalls": self.stalls,
            "stall_ms_total": round(self.stall_ms_total, 3),
            "delay_ms": summarize_delays(self.delays_ms),
            "closed_by": self.closed_by,
        }

    @staticmethod
    def combined(parts):
        total = DirectionStats()
        for part in parts:
            total.bytes += part.bytes
            total.chunks += part.chunks
            total.segments += part.segments
            total.stalls += part.stalls
            total.stall_ms_total += part.stall_ms_total
            total.delays_ms.extend(part.delays_ms)
        return total


@dataclass
class ConnectionStats:
    number: int
    peer: str
    opened: float  # time.time()
    closed: float | None = None
    # "open", "closed", "reset", "refused" (the target did not answer), "stopped"
    # (by DelayProxy.stop)
    outcome: str = "open"
    handshake_ms: float = 0.0  # how long the client's first bytes waited for the handshake
    up: DirectionStats = field(default_factory=DirectionStats)
    down: DirectionStats = field(default_factory=DirectionStats)

    def summary(self):
        return {
            "number": self.number,
            "peer": self.peer,
            "opened": self.opened,
            "closed": self.closed,
            "outcome": self.outcome,
            "handshake_ms": self.handshake_ms,
            "up": self.up.summary(),
            "down": self.down.summary(),
        }


def reset(writer):
    """Closes with a RST, not a FIN: asyncio's abort() only drops the buffer,
    and the other end would take that for an orderly close."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


class _Torn(Exception):
    """One side reset or vanished: the whole connection goes."""


_EOF = object()
_RESET = object()


class _Pipe:
    """One direction of one connection: a reader that stamps each chunk with its
    release time, and a writer that sends it onward at that time."""

    def __init__(self, settings, source, sink, rng, stats, buffer_bytes, not_before):
        self.settings = settings
        self.source = source
        self.sink = sink
        self.rng = rng
        self.stats = stats
        self.buffer_bytes = buffer_bytes
        self.loop = asyncio.get_running_loop()
        self.not_before = not_before
        self.last_release = 0.0
        self.link_free = 0.0
        self.queue = deque()
        self.queued_bytes = 0
        self.ready = asyncio.Event()
        self.room = asyncio.Event()

    def _piece_bytes(self):
        # A bandwidth-limited link is paced in pieces of about 10 ms, so that a
        # 64 KiB read does not arrive as one late burst.
        rate = self.settings.bytes_per_second
        return max(512, int(rate / 100)) if rate else READ_BYTES

    def _jitter_ms(self):
        s = self.settings
        if not s.jitter_ms:
            return 0.0
        if s.jitter_shape == "normal":
            return max(-s.jitter_ms, min(s.jitter_ms, self.rng.gauss(0.0, s.jitter_ms / 2)))
        return self.rng.uniform(-s.jitter_ms, s.jitter_ms)

    def _schedule(self, arrival, item):
        s = self.settings
        size = len(item) if isinstance(item, bytes) else 0
        leaves = max(arrival, self.not_before)
        if size and s.bytes_per_second:
            self.link_free = max(self.link_free, leaves) + size / s.bytes_per_second
            leaves = self.link_free
        hold_ms = max(0.0, s.delay_ms + self._jitter_ms())
        stalled = False
        if size and s.stall_chance:
            segments = max(1, math.ceil(size / SEGMENT_BYTES))
            stalled = self.rng.random() < 1.0 - (1.0 - s.stall_chance) ** segments
            if stalled:
                hold_ms += s.stall_ms
        release = max(self.last_release, leaves + hold_ms / 1000.0)
        self.last_release = release
        self.queue.append((release, max(arrival, self.not_before), item, stalled))
        self.ready.set()

    async def read_side(self):
        try:
            while True:
                data = await self.source.read(READ_BYTES)
                arrival = self.loop.time()
                if not data:
                    self._schedule(arrival, _EOF)
                    return
                step = self._piece_bytes()
                for start in range(0, len(data), step):
                    self._schedule(arrival, data[start:start + step])
                self.queued_bytes += len(data)
                while self.queued_bytes > self.buffer_bytes:
                    self.room.clear()
                    await self.room.wait()
        except (ConnectionError, OSError):
            self._schedule(self.loop.time(), _RESET)

    async def write_side(self):
        while True:
            while not self.queue:
                self.ready.clear()
                await self.ready.wait()
            release, entered, item, stalled = self.queue.popleft()
            wait = release - self.loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if item is _EOF:
                self.stats.closed_by = "eof"
                try:
                    if self.sink.can_write_eof():
                        self.sink.write_eof()
                except (ConnectionError, OSError, RuntimeError) as error:
                    raise _Torn() from error
                return
            if item is _RESET:
                self.stats.closed_by = "reset"
                raise _Torn()
            self.stats.record(len(item), (self.loop.time() - entered) * 1000.0, stalled, self.settings.stall_ms)
            try:
                self.sink.write(item)
                await self.sink.drain()
            except (ConnectionError, OSError, RuntimeError) as error:
                self.stats.closed_by = "reset"
                raise _Torn() from error
            self.queued_bytes -= len(item)
            if self.queued_bytes <= self.buffer_bytes:
                self.room.set()


class DelayProxy:
    """Listens on listen_host:listen_port (0: any free port, see .port) and
    forwards each connection to target_host:target_port, holding the client's
    bytes back as `up` says and the target's as `down` says. seed makes the
    draws repeatable: each connection's directions draw from their own
    generator, seeded by (seed, connection number, direction)."""

    def __init__(self, target_host, target_port, up=Direction(), down=Direction(), seed=None,
                 listen_host="127.0.0.1", listen_port=0, buffer_bytes=1024 * 1024, handshake=True):
        self.target_host = target_host
        self.target_port = int(target_port)
        self.up = up
        self.down = down
        self.seed = seed if seed is not None else random.randrange(1 << 30)
        self.listen_host = listen_host
        self.listen_port = int(listen_port)
        self.buffer_bytes = buffer_bytes
        self.handshake = handshake
        self.port = None
        self.connections = []
        self._server = None
        self._handlers = set()
        self._writers = set()

    @classmethod
    def with_condition(cls, target_host, target_port, name, **options):
        return cls(target_host, target_port, **CONDITIONS[name].directions(), **options)

    async def start(self):
        self._server = await asyncio.start_server(self._accept, self.listen_host, self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self):
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._writers):
            reset(writer)
        for handler in list(self._handlers):
            handler.cancel()
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc):
        await self.stop()

    def stats(self):
        """Per connection and per direction, and the directions over all
        connections: bytes, chunks, segments, stalls, delays (min, median, p95,
        max in ms). Plain data, safe to keep or dump as JSON."""
        return {
            "seed": self.seed,
            "up": DirectionStats.combined(c.up for c in self.connections).summary(),
            "down": DirectionStats.combined(c.down for c in self.connections).summary(),
            "connections": [c.summary() for c in self.connections],
        }

    def _rng(self, number, direction):
        return random.Random(f"{self.seed}:{number}:{direction}")

    async def _accept(self, client_reader, client_writer):
        handler = asyncio.current_task()
        self._handlers.add(handler)
        self._writers.add(client_writer)
        loop = asyncio.get_running_loop()
        accepted = loop.time()
        peer = client_writer.get_extra_info("peername")
        conn = ConnectionStats(len(self.connections) + 1, f"{peer[0]}:{peer[1]}" if peer else "?", time.time())
        self.connections.append(conn)
        target_writer = None
        try:
            try:
                target_reader, target_writer = await asyncio.open_connection(self.target_host, self.target_port)
            except OSError:
                conn.outcome = "refused"
                reset(client_writer)
                return
            self._writers.add(target_writer)
            round_trip = (self.up.delay_ms + self.down.delay_ms) / 1000.0 if self.handshake else 0.0
            conn.handshake_ms = round_trip * 1000.0
            up = _Pipe(self.up, client_reader, target_writer, self._rng(conn.number, "up"), conn.up,
                       self.buffer_bytes, accepted + round_trip)
            down = _Pipe(self.down, target_reader, client_writer, self._rng(conn.number, "down"), conn.down,
                         self.buffer_bytes, accepted)
            try:
                async with asyncio.TaskGroup() as group:
                    for pipe in (up, down):
                        group.create_task(pipe.read_side())
                        group.create_task(pipe.write_side())
                conn.outcome = "closed"
            except* _Torn:
                conn.outcome = "reset"
                # Pass the reset on: the side still there sees its connection
                # reset, as it would when the other end vanished.
                reset(client_writer)
                reset(target_writer)
        except asyncio.CancelledError:
            # stop(): the connection ends here; the task ends quietly, since
            # asyncio reports a connection handler that ends cancelled as an error.
            conn.outcome = "stopped"
        finally:
            conn.closed = time.time()
            for writer in (client_writer, target_writer):
                if writer is None:
                    continue
                self._writers.discard(writer)
                if not writer.transport.is_closing():
                    writer.close()
                try:
                    await writer.wait_closed()
                except (ConnectionError, OSError, asyncio.CancelledError):
                    pass
            self._handlers.discard(handler)


class ThreadedDelayProxy:
    """A DelayProxy on an event loop of its own, on a daemon thread, for
    synchronous code: start() returns the port, stop() ends every connection,
    stats() reads the figures on the proxy's loop. Takes DelayProxy's arguments."""

    def __init__(self, *args, **kwargs):
        self.proxy = DelayProxy(*args, **kwargs)
        self.port = None
        self._loop = None
        self._thread = None

    def start(self, timeout=10.0):
        started = threading.Event()
        failure = []

        def run():
            self._loop = asyncio.new_event_loop()
            try:
                self.port = self._loop.run_until_complete(self.proxy.start())
            except BaseException as error:  # handed to the caller of start()
                failure.append(error)
                started.set()
                self._loop.close()
                return
            started.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self.proxy.stop())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="delay-proxy", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise TimeoutError("the delay proxy did not start")
        if failure:
            raise failure[0]
        return self.port

    def stop(self, timeout=10.0):
        if self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        self._thread = None

    def stats(self, timeout=10.0):
        if self._thread is None:
            return self.proxy.stats()

        async def read():
            return self.proxy.stats()

        return asyncio.run_coroutine_threadsafe(read(), self._loop).result(timeout)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def _address(text, default_host):
    host, _, port = text.rpartition(":")
    return (host or default_host), int(port)


def _first(*values):
    return next((value for value in values if value is not None), None)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="A TCP proxy that delays, jitters, stalls and throttles each direction separately.")
    parser.add_argument("--target", required=True, help="HOST:PORT to forward to")
    parser.add_argument("--listen", default="0", help="PORT or HOST:PORT to listen on (127.0.0.1:0: a free port)")
    parser.add_argument("--condition", choices=sorted(CONDITIONS), help="start from a named condition")
    parser.add_argument("--seed", type=int, help="makes the draws repeatable")
    parser.add_argument("--stall-chance", type=float, help="both directions: chance a segment stalls")
    parser.add_argument("--stall-ms", type=float, help="both directions: how long a stall lasts")
    parser.add_argument("--jitter-shape", choices=("uniform", "normal"), help="both directions")
    parser.add_argument("--no-handshake", action="store_true",
                        help="let the client's first bytes go without waiting a round trip")
    parser.add_argument("--stats-json", help="write the figures to this file on exit")
    for side in ("up", "down"):
        parser.add_argument(f"--{side}-delay", type=float, help=f"{side}: one-way base delay, ms")
        parser.add_argument(f"--{side}-jitter", type=float, help=f"{side}: jitter bound, ms")
        parser.add_argument(f"--{side}-stall-chance", type=float)
        parser.add_argument(f"--{side}-stall-ms", type=float)
        parser.add_argument(f"--{side}-bytes-per-second", type=float, help=f"{side}: bandwidth limit")
    args = parser.parse_args(argv)

    base = CONDITIONS[args.condition] if args.condition else Condition(Direction(), Direction())
    directions = {}
    for side in ("up", "down"):
        changes = {}
        for name, value in (
            ("delay_ms", getattr(args, f"{side}_delay")),
            ("jitter_ms", getattr(args, f"{side}_jitter")),
            ("stall_chance", _first(getattr(args, f"{side}_stall_chance"), args.stall_chance)),
            ("stall_ms", _first(getattr(args, f"{side}_stall_ms"), args.stall_ms)),
            ("bytes_per_second", getattr(args, f"{side}_bytes_per_second")),
            ("jitter_shape", args.jitter_shape),
        ):
            if value is not None:
                changes[name] = value
        directions[side] = replace(getattr(base, side), **changes)

    target_host, target_port = _address(args.target, "127.0.0.1")
    listen_host, listen_port = _address(args.listen, "127.0.0.1")

    async def serve():
        proxy = DelayProxy(target_host, target_port, up=directions["up"], down=directions["down"],
                           seed=args.seed, listen_host=listen_host, listen_port=listen_port,
                           handshake=not args.no_handshake)
        await proxy.start()
        print(f"listening on {listen_host}:{proxy.port}", flush=True)
        print(f"up   {directions['up'].describe()}\ndown {directions['down'].describe()}", file=sys.stderr, flush=True)
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, done.set)
        await done.wait()
        await proxy.stop()
        figures = proxy.stats()
        for side in ("up", "down"):
            f = figures[side]
            print(f"{side}: {len(figures['connections'])} connections, {f['bytes']} bytes in {f['chunks']} chunks, "
                  f"{f['stalls']} stalls, delay ms {f['delay_ms']}", file=sys.stderr)
        if args.stats_json:
            with open(args.stats_json, "w") as handle:
                json.dump(figures, handle, indent=1)

    asyncio.run(serve())


if __name__ == "__main__":
    main()
