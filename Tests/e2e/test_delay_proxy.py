"""The delay proxy (delay_proxy.py) against local servers: bytes stay in order
under jitter, the delays it applies stay within the configured bounds, the
bandwidth limit and the stalls happen as configured, half-closes and resets are
passed on, and HTTP Range requests and a WebSocket pass through unchanged.

Timing bounds are generous on the late side (a busy machine runs timers late)
and strict on the early side (the proxy must never release a chunk before its
time). Run by commands/test."""

import asyncio
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect as websocket_connect
from websockets.asyncio.server import serve as websocket_serve

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from delay_proxy import CONDITIONS, DelayProxy, Direction, ThreadedDelayProxy, reset  # noqa: E402
from support.media_server import MediaServer  # noqa: E402

# How much earlier than its configured minimum a chunk may be seen: only the
# clock's and the timer's resolution.
EARLY_MS = 2.0


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


async def echo_server():
    """Echoes every byte; after the client's half-close, half-closes too."""

    async def handle(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            writer.write_eof()
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def port_of(server):
    return server.sockets[0].getsockname()[1]


def settled(stats, timeout=5.0):
    """The proxy's figures once no connection is open: closes travel with the
    delay too, so they finish a little after the client is done."""
    deadline = time.monotonic() + timeout
    while True:
        figures = stats()
        if all(c["outcome"] != "open" for c in figures["connections"]) or time.monotonic() > deadline:
            return figures
        time.sleep(0.01)


async def settled_async(proxy, timeout=5.0):
    deadline = time.monotonic() + timeout
    while any(c.outcome == "open" for c in proxy.connections) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return proxy.stats()


async def read_all(reader):
    parts = []
    while data := await reader.read(65536):
        parts.append(data)
    return b"".join(parts)


def test_bytes_keep_their_order_under_heavy_jitter():
    # Jitter of ±40 ms on chunks 1 ms apart would reorder almost every pair if
    # each chunk were released at its own drawn time.
    async def scenario():
        server = await echo_server()
        async with server, DelayProxy("127.0.0.1", port_of(server), seed=7,
                                      up=Direction(20, 40), down=Direction(10, 30, jitter_shape="normal")) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            received = asyncio.create_task(read_all(reader))
            sent = []
            for number in range(300):
                chunk = b"<%05d:" % number + bytes([number % 251]) * (number % 97) + b">"
                sent.append(chunk)
                writer.write(chunk)
                await writer.drain()
                # Input shaping, not a wait: writes apart reach the proxy as
                # chunks of their own.
                await asyncio.sleep(0.001)
            writer.write_eof()
            echoed = await received
            writer.close()
            await writer.wait_closed()
            figures = proxy.stats()
        assert echoed == b"".join(sent)
        up = figures["up"]
        assert up["bytes"] == len(echoed)
        assert up["chunks"] >= 100, "the chunks should have been held one by one, not in a few lumps"
        # Held back, never early: the delays really applied start at the base
        # delay minus the jitter bound.
        assert up["delay_ms"]["min"] >= 20 - 40 - EARLY_MS
        assert figures["connections"][0]["outcome"] == "closed"

    run(scenario())


def test_one_way_delays_stay_within_the_configured_bounds():
    up, down = Direction(60, 20), Direction(30, 10)

    async def scenario():
        arrivals = []

        async def stamp(reader, writer):
            # Notes when each line arrives, and answers each at once.
            try:
                while line := await reader.readline():
                    arrivals.append((int(line), time.monotonic()))
                    writer.write(line)
                    await writer.drain()
            finally:
                writer.close()

        server = await asyncio.start_server(stamp, "127.0.0.1", 0)
        async with server, DelayProxy("127.0.0.1", port_of(server), up=up, down=down, seed=3,
                                      handshake=False) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            sent_at, back_at = {}, {}

            async def note_answers():
                while len(back_at) < 20:
                    line = await reader.readline()
                    back_at[int(line)] = time.monotonic()

            answers = asyncio.create_task(note_answers())
            for number in range(20):
                sent_at[number] = time.monotonic()
                writer.write(b"%d\n" % number)
                await writer.drain()
                # Far enough apart (more than twice the jitter bound) that
                # keeping the order never holds one line behind another.
                await asyncio.sleep(0.05)
            await answers
            writer.close()
            await writer.wait_closed()
            figures = await settled_async(proxy)

        one_way_up = [(at - sent_at[n]) * 1000 for n, at in arrivals]
        round_trips = [(back_at[n] - sent_at[n]) * 1000 for n in sent_at]
        assert min(one_way_up) >= up.delay_ms - up.jitter_ms - EARLY_MS
        assert min(round_trips) >= up.delay_ms + down.delay_ms - up.jitter_ms - down.jitter_ms - EARLY_MS
        # Late is allowed, but the typical figure must be the configured one.
        assert sorted(one_way_up)[10] <= up.delay_ms + up.jitter_ms + 25
        assert sorted(round_trips)[10] <= up.delay_ms + down.delay_ms + up.jitter_ms + down.jitter_ms + 40

        for side, direction in (("up", up), ("down", down)):
            delay = figures[side]["delay_ms"]
            # One chunk per line, unless a busy machine read two lines at once.
            assert 15 <= figures[side]["chunks"] <= 20
            assert delay["min"] >= direction.delay_ms - direction.jitter_ms - EARLY_MS
            assert delay["median"] <= direction.delay_ms + direction.jitter_ms + 25
            # The jitter is really there: 20 draws within ±jitter spread out.
            assert delay["max"] - delay["min"] >= direction.jitter_ms / 2
            assert delay["min"] <= delay["median"] <= delay["p95"] <= delay["max"]
        assert figures["connections"][0]["up"]["delay_ms"] == figures["up"]["delay_ms"]

    run(scenario())


def test_a_new_connection_pays_a_round_trip_before_its_first_bytes():
    up, down = Direction(40), Direction(30)

    async def scenario():
        first = asyncio.get_running_loop().create_future()

        async def note(reader, writer):
            await reader.read(1)
            first.set_result(time.monotonic())
            writer.close()

        server = await asyncio.start_server(note, "127.0.0.1", 0)
        async with server, DelayProxy("127.0.0.1", port_of(server), up=up, down=down) as proxy:
            started = time.monotonic()
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"x")
            await writer.drain()
            arrived = await first
            writer.close()
            figures = await settled_async(proxy)
        # SYN, SYN-ACK, then the data: up + down + up.
        assert (arrived - started) * 1000 >= 2 * up.delay_ms + down.delay_ms - EARLY_MS
        # The figures keep the handshake apart from the one-way delay.
        assert figures["connections"][0]["handshake_ms"] == up.delay_ms + down.delay_ms
        assert up.delay_ms - EARLY_MS <= figures["up"]["delay_ms"]["min"] <= up.delay_ms + 50

    run(scenario())


def test_bandwidth_limit_and_range_requests_over_http(tmp_path):
    # Synchronous, as the harness is: the proxy on its own thread, urllib.
    media = bytes(range(256)) * 1600  # 409,600 bytes
    (tmp_path / "media.bin").write_bytes(media)
    rate = 400_000
    with MediaServer(tmp_path) as server, ThreadedDelayProxy(
            "127.0.0.1", server.port, up=Direction(10, 5), down=Direction(10, 5, bytes_per_second=rate)) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/media.bin"
        started = time.monotonic()
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
        elapsed = time.monotonic() - started
        assert body == media
        # Never faster than the link, and not much slower either.
        assert elapsed >= len(media) / rate * 0.95
        assert elapsed <= len(media) / rate * 2 + 1.0

        request = urllib.request.Request(url, headers={"Range": "bytes=100000-149999"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 206
            assert response.headers["Content-Range"] == f"bytes 100000-149999/{len(media)}"
            assert response.read() == media[100000:150000]
        figures = settled(proxy.stats)

    assert figures["down"]["bytes"] > len(media) + 50_000
    assert figures["up"]["bytes"] > 0
    # Paced in pieces of about 10 ms of the link, not in 64 KiB lumps.
    assert figures["down"]["chunks"] >= len(media) // (rate // 100)
    assert [c["outcome"] for c in figures["connections"]] == ["closed", "closed"]


def test_stalls_happen_with_the_configured_chance():
    chance, stall_ms = 0.1, 30

    async def scenario():
        server = await echo_server()
        async with server, DelayProxy("127.0.0.1", port_of(server), seed=11,
                                      up=Direction(0, 0, stall_chance=chance, stall_ms=stall_ms),
                                      down=Direction(0, 0)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            received = asyncio.create_task(read_all(reader))
            for number in range(400):
                writer.write(b"%04d" % number)
                await writer.drain()
                # Input shaping, not a wait: writes apart reach the proxy as
                # chunks of their own.
                await asyncio.sleep(0.002)
            writer.write_eof()
            echoed = await received
            writer.close()
            figures = proxy.stats()
        assert echoed == b"".join(b"%04d" % n for n in range(400))
        up, down = figures["up"], figures["down"]
        # Small chunks are one segment each: stalls / segments estimates the
        # chance. 400 trials at 0.1: mean 40, standard deviation 6.
        assert up["segments"] == up["chunks"]
        assert 0.04 <= up["stalls"] / up["segments"] <= 0.2
        assert up["stall_ms_total"] == pytest.approx(up["stalls"] * stall_ms)
        assert up["delay_ms"]["max"] >= stall_ms - EARLY_MS
        assert down["stalls"] == 0

    run(scenario())


def test_a_stall_counts_each_segment_of_a_large_chunk():
    # One 14,600-byte write is ten packets on a real link; any of them lost
    # holds the whole write.
    async def scenario():
        server = await echo_server()
        async with server, DelayProxy("127.0.0.1", port_of(server), seed=5,
                                      up=Direction(stall_chance=0.05, stall_ms=1)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            received = asyncio.create_task(read_all(reader))
            for _ in range(100):
                writer.write(b"s" * 14_600)
                await writer.drain()
                # Input shaping, not a wait: writes apart reach the proxy as
                # chunks of their own.
                await asyncio.sleep(0.002)
            writer.write_eof()
            assert len(await received) == 1_460_000
            writer.close()
            up = proxy.stats()["up"]
        assert up["segments"] == 1000
        # Per write: 1 - 0.95^10 = 0.40; a per-chunk draw would give 0.05.
        assert 0.2 <= up["stalls"] / up["chunks"] <= 0.65

    run(scenario())


def test_half_closes_pass_through_in_both_directions():
    async def scenario():
        server_saw = asyncio.get_running_loop().create_future()

        async def speaks_first(reader, writer):
            # The target says its piece and half-closes, then keeps listening.
            writer.write(b"hello, then no more from me")
            writer.write_eof()
            await writer.drain()
            server_saw.set_result(await read_all(reader))
            writer.close()

        server = await asyncio.start_server(speaks_first, "127.0.0.1", 0)
        async with server, DelayProxy("127.0.0.1", port_of(server), up=Direction(15, 5), down=Direction(10, 5)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            assert await read_all(reader) == b"hello, then no more from me"
            # The client's direction is still open after the target's EOF.
            writer.write(b"and my answer")
            writer.write_eof()
            assert await server_saw == b"and my answer"
            writer.close()
            await writer.wait_closed()
            figures = await settled_async(proxy)

        connection = figures["connections"][0]
        assert connection["outcome"] == "closed"
        assert connection["up"]["closed_by"] == "eof"
        assert connection["down"]["closed_by"] == "eof"

        # And the usual order: the client half-closes first, the echo finishes.
        echo = await echo_server()
        async with echo, DelayProxy("127.0.0.1", port_of(echo), up=Direction(15, 5), down=Direction(10, 5)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"x" * 200_000)
            writer.write_eof()
            assert await read_all(reader) == b"x" * 200_000
            writer.close()
            await writer.wait_closed()

    run(scenario())


def test_resets_and_refusals_are_passed_on():
    async def scenario():
        async def resets(reader, writer):
            await reader.read(1)
            reset(writer)

        server = await asyncio.start_server(resets, "127.0.0.1", 0)
        async with server, DelayProxy("127.0.0.1", port_of(server), up=Direction(5), down=Direction(5)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"?")
            with pytest.raises(ConnectionResetError):
                await read_all(reader)
            writer.close()
            assert (await settled_async(proxy))["connections"][0]["outcome"] == "reset"

        # A target that is not there: the client's connection is reset too. A
        # bound socket that does not listen refuses, and holds the port.
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            async with DelayProxy("127.0.0.1", closed.getsockname()[1]) as proxy:
                reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
                with pytest.raises(ConnectionResetError):
                    await read_all(reader)
                writer.close()
                assert proxy.stats()["connections"][0]["outcome"] == "refused"

    run(scenario())


def test_a_websocket_upgrade_passes_through():
    async def scenario():
        async def echo(websocket):
            async for message in websocket:
                await websocket.send(message)

        async with websocket_serve(echo, "127.0.0.1", 0) as server:
            target_port = next(iter(server.sockets)).getsockname()[1]
            async with DelayProxy("127.0.0.1", target_port, seed=2,
                                  up=Direction(20, 10), down=Direction(15, 10, jitter_shape="normal")) as proxy:
                async with websocket_connect(f"ws://127.0.0.1:{proxy.port}/rooms/x") as websocket:
                    for number in range(20):
                        message = f"text {number}" if number % 2 else bytes([number]) * 1000 * number
                        await websocket.send(message)
                        assert await websocket.recv() == message
                    latency = await websocket.ping()
                    await latency
                # The closing handshake went through both ways.
                assert websocket.close_code == 1000
                figures = await settled_async(proxy)
        assert figures["connections"][0]["outcome"] == "closed"
        assert figures["up"]["chunks"] >= 21 and figures["down"]["chunks"] >= 21
        assert figures["down"]["delay_ms"]["min"] >= 15 - 10 - EARLY_MS

    run(scenario())


def test_the_command_line_prints_its_port_and_its_figures():
    async def scenario():
        server = await echo_server()
        async with server:
            process = await asyncio.create_subprocess_exec(
                sys.executable, str(HERE / "delay_proxy.py"), "--target", f"127.0.0.1:{port_of(server)}",
                "--listen", "0", "--up-delay", "30", "--up-jitter", "10", "--down-delay", "20",
                "--down-jitter", "10", "--stall-chance", "0.01", "--stall-ms", "300",
                "--down-bytes-per-second", "200000", "--seed", "1",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            line = (await process.stdout.readline()).decode()
            assert line.startswith("listening on 127.0.0.1:"), line
            port = int(line.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"ping")
            writer.write_eof()
            assert await read_all(reader) == b"ping"
            writer.close()
            process.send_signal(signal.SIGTERM)
            _, errors = await process.communicate()
        assert process.returncode == 0, errors.decode()
        errors = errors.decode()
        assert "up   30 ms ±10 (uniform), stalls 1.00% of segments for 300 ms" in errors
        assert "down 20 ms ±10 (uniform), stalls 1.00% of segments for 300 ms, 200000 B/s" in errors
        assert "up: 1 connections, 4 bytes in 1 chunks" in errors

    run(scenario())


def test_the_named_conditions():
    for name, nominal in (("wan-20", 20), ("wan-60", 60), ("wan-120", 120)):
        condition = CONDITIONS[name]
        assert (condition.up.delay_ms + condition.down.delay_ms) / 2 == nominal
        assert condition.up != condition.down
        for direction in (condition.up, condition.down):
            assert 10 <= direction.jitter_ms <= 30
    assert CONDITIONS["lossy"].up.stall_chance > 0 and CONDITIONS["lossy"].down.stall_chance > 0
    # Slower than the e2e media's average 100 kB/s, so that its video stalls.
    assert CONDITIONS["slow-viewer"].down.bytes_per_second < 100_000
    with pytest.raises(ValueError):
        Direction(stall_chance=2)
    proxy = DelayProxy.with_condition("127.0.0.1", 1, "wan-60")
    assert proxy.up == CONDITIONS["wan-60"].up and proxy.down == CONDITIONS["wan-60"].down
