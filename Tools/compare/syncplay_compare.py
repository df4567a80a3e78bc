#!/usr/bin/env python3
"""Cowatch against Syncplay's server on the same fan-out workloads, in one run.

One load harness for both, so that the two are measured alike: the same
clients, one epoll loop in this process, and the kernel's receive timestamp of
each member's copy of the change (SO_TIMESTAMPNS), so that how fast this
harness reads does not count. A fresh server for each workload and server, the
two servers one after the other for each workload.

  python3 Tools/compare/syncplay_compare.py --cowatch BIN [--before BIN] [--syncplay syncplay-server]
      [--rounds 40] [--duration 20] [--workloads together-1x500,together-100x10,spread-100x20]

--before runs a second Cowatch server (a build of another commit) on each
workload too, between Syncplay's and --cowatch's.

Workloads (as commands/bench fanout names them):
  together-1x500    one room of 500; its controller pauses and plays in turn every 0.5 s
  together-100x10   100 rooms of 10; every room's controller at the same instant every 0.5 s
  spread-100x20     100 rooms of 20; one change a second per room, room i at i/100 of a second
  players-1x500     one room of 500 players; its controller pauses and plays in turn every 2 s.
                    Cowatch's members are players (/player on) and answer each `waiting` state
                    with /ready, as the page's player does, so a /play is measured until the
                    `playing` state that starts the group: a round trip through every member
                    more than the others. Syncplay has no coordinated start: for it this is
                    together-1x500 at this pace.

Latency: from the controller's send (CLOCK_REALTIME just before it) to each other
member's kernel receive timestamp of the message that carries the change; "last":
to the room's last member, one sample per change. The clients:
  Cowatch: WebSocket, subprotocol cowatch.v1.json (docs/protocol.md); the
    controller shares a link (/watch) and sends /play and /pause; the change is
    the `state` whose playback status is the one asked for. Pings are answered.
  Syncplay: its JSON-lines protocol over TCP (Hello, then State). The controller
    sends a State whose `paused` flips; the change is the State the server forces
    on every member of the room (`setBy` the controller, `paused` as asked). Like
    Syncplay's own client, every member answers each State it gets with a State
    of its own, acknowledging the server's `ignoringOnTheFly`, so that the server
    goes on taking its states and does not drop it as silent.
"""

import argparse
import base64
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
ANCILLARY = socket.CMSG_SPACE(16)


def realtime_ns():
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def cpu_seconds(pid):
    """utime + stime of a process and its threads, in seconds."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Member:
    """One client socket: its buffer, and what it has seen of its room's changes."""

    def __init__(self, kind, room, index, sock):
        self.kind = kind
        self.room = room
        self.index = index
        self.sock = sock
        self.buffer = b""
        self.upgraded = kind == "syncplay"
        self.ready = False
        self.seen = 0  # changes of its room this member has had


class Room:
    def __init__(self, name, size):
        self.name = name
        self.size = size
        self.members = []
        self.sent = []  # per change: realtime ns of its sending
        self.wanted = []  # per change: paused (True) or playing (False)
        self.reached = []  # per change: members (not the controller) that have it
        self.last = []  # per change: latency to the last member, ns
        self.ready_sent = {}  # players: per change, realtime ns of the last /ready sent for it
        self.after_ready = []  # players: per start, from the last /ready to the last member's `playing`
        self.paused = True
        self.counted_from = 0  # changes before this one were the warm-up


class Harness:
    def __init__(self, kind, port, players=False):
        self.kind = kind
        self.port = port
        self.players = players
        self.selector = selectors.DefaultSelector()
        self.latencies = []
        self.rooms = []

    # Connections.

    def connect(self, rooms, size):
        for number in range(rooms):
            room = Room(f"r{number}", size)
            self.rooms.append(room)
            for index in range(size):
                sock = socket.create_connection(("127.0.0.1", self.port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                member = Member(self.kind, room, index, sock)
                room.members.append(member)
                self.hello(member)
                sock.setblocking(False)
                self.selector.register(sock, selectors.EVENT_READ, member)
                # Those already in are answered meanwhile: Syncplay drops a member silent for 12.5 s.
                self.read_ready(0)
        # The controller's opening, once everyone is in.
        self.pump_until(lambda: all(m.ready for r in self.rooms for m in r.members), 120)
        if self.kind == "cowatch" and self.players:
            for room in self.rooms:
                for member in room.members:
                    self.send(member, "/player on")
        for room in self.rooms:
            if self.kind == "cowatch":
                self.send(room.members[0], "/watch https://example.org/compare.mp4 Compare")
        self.pump(0.5)

    def hello(self, member):
        name = f"{member.room.name}m{member.index}"
        if self.kind == "cowatch":
            key = base64.b64encode(os.urandom(16)).decode()
            request = (f"GET /rooms/{member.room.name}?name={name} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                       f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                       f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: cowatch.v1.json\r\n\r\n")
            member.sock.sendall(request.encode())
        else:
            hello = {"Hello": {"username": name, "room": {"name": member.room.name}, "version": "1.6.9",
                               "features": {"sharedPlaylists": False, "chat": False, "readiness": False,
                                            "managedRooms": False}}}
            member.sock.sendall((json.dumps(hello) + "\r\n").encode())

    def send(self, member, text):
        data = masked_frame(text.encode(), 1) if self.kind == "cowatch" else (text + "\r\n").encode()
        try:
            member.sock.sendall(data)
        except OSError as error:
            raise SystemExit(f"compare: {self.kind}: the server closed {member.room.name}m{member.index}: {error}")

    # Reading.

    def pump(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.read_ready(left)

    def pump_until(self, done, bound):
        deadline = time.monotonic() + bound
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"compare: {self.kind}: gave up waiting after {bound} s")
            self.read_ready(0.1)

    def read_ready(self, timeout):
        for key, _ in self.selector.select(timeout):
            member = key.data
            try:
                data, ancillary, _, _ = member.sock.recvmsg(1 << 16, ANCILLARY)
            except BlockingIOError:
                continue
            if not data:
                raise SystemExit(f"compare: {self.kind}: the server closed {member.room.name}m{member.index}")
            stamp = None
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanoseconds = struct.unpack("qq", value[:16])
                    stamp = seconds * 1_000_000_000 + nanoseconds
            member.buffer += data
            for message in self.messages(member):
                self.handle(member, message, stamp or realtime_ns())

    def messages(self, member):
        if self.kind == "syncplay":
            *lines, member.buffer = member.buffer.split(b"\r\n")
            return [json.loads(line) for line in lines if line.strip()]
        if not member.upgraded:
            head, separator, rest = member.buffer.partition(b"\r\n\r\n")
            if not separator:
                return []
            if not head.startswith(b"HTTP/1.1 101"):
                raise SystemExit(f"compare: cowatch refused the upgrade: {head[:200]!r}")
            member.upgraded = True
            member.buffer = rest
        found = []
        while True:
            frame = parse_frame(member.buffer)
            if frame is None:
                return found
            opcode, payload, used = frame
            member.buffer = member.buffer[used:]
            if opcode == 9:
                member.sock.sendall(masked_frame(payload, 10))
            elif opcode == 1:
                found.append(json.loads(payload))

    def handle(self, member, message, stamp):
        room = member.room
        if self.kind == "cowatch":
            kind = message.get("type")
            if kind == "welcome":
                member.ready = True
            if kind != "state":
                return
            status = (message.get("playback") or {}).get("status")
            if status == "waiting" and self.players:
                self.send(member, f"/ready {message.get('seq')}")
                room.ready_sent[member.seen] = realtime_ns()
            paused = {"paused": True, "playing": False}.get(status)
        else:
            if "Hello" in message:
                member.ready = True
            state = message.get("State")
            if state is None:
                return
            # Answered as Syncplay's client does: its own state, with the server's count acknowledged.
            answer = {"ping": {"latencyCalculation": (state.get("ping") or {}).get("latencyCalculation", 0), "clientRtt": 0}}
            ignoring = (state.get("ignoringOnTheFly") or {}).get("server")
            if ignoring:
                answer["ignoringOnTheFly"] = {"server": ignoring}
            self.send(member, json.dumps({"State": answer}))
            playstate = state.get("playstate") or {}
            if playstate.get("setBy") != f"{room.name}m0" or not ignoring:
                return
            paused = playstate.get("paused")
        change = member.seen
        if change >= len(room.sent) or paused != room.wanted[change]:
            return
        member.seen += 1
        if member.index == 0:
            return
        latency = stamp - room.sent[change]
        self.latencies.append(latency)
        room.reached[change] += 1
        if room.reached[change] == room.size - 1:
            room.last.append(latency)
            if change in room.ready_sent:
                room.after_ready.append(stamp - room.ready_sent[change])

    # Changes.

    def change(self, room):
        room.paused = not room.paused
        room.wanted.append(room.paused)
        room.reached.append(0)
        controller = room.members[0]
        if self.kind == "cowatch":
            text = "/pause" if room.paused else "/play"
        else:
            text = json.dumps({"State": {"playstate": {"position": 0.0, "paused": room.paused, "doSeek": False},
                                         "ping": {"latencyCalculation": 0, "clientRtt": 0}}})
        room.sent.append(realtime_ns())
        self.send(controller, text)

    def settled(self):
        return all(len(room.last) == len(room.sent) for room in self.rooms)


def masked_frame(payload, opcode):
    mask = os.urandom(4)
    length = len(payload)
    if length < 126:
        head = bytes([0x80 | opcode, 0x80 | length])
    elif length < 65536:
        head = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack("!H", length)
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack("!Q", length)
    return head + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


def parse_frame(buffer):
    if len(buffer) < 2:
        return None
    opcode = buffer[0] & 0x0F
    length = buffer[1] & 0x7F
    start = 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length = struct.unpack("!H", buffer[2:4])[0]
        start = 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length = struct.unpack("!Q", buffer[2:10])[0]
        start = 10
    if len(buffer) < start + length:
        return None
    return opcode, buffer[start:start + length], start + length


def start_server(kind, binary, arguments, work):
    log = open(os.path.join(work, f"{kind}.log"), "w+")
    if kind == "cowatch":
        process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--store", "memory",
             "--data-dir", os.path.join(work, "data"), "--max-connections-per-address", "100000",
             "--max-members", "5000", "--max-rooms", "100000", "--room-creation-rate", "0",
             "--media-check", "false", "--commands-per-second", "1000", "--command-burst", "1000",
             "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            log.seek(0)
            for line in log:
                if "serving on http://127.0.0.1:" in line:
                    port = int(line.split("serving on http://127.0.0.1:")[1].split("/")[0])
                    return process, port
            if process.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit("compare: cowatch did not start")
    port = free_port()
    process = subprocess.Popen([arguments.syncplay, "--port", str(port), "--isolate-rooms"],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.05)
    raise SystemExit("compare: syncplay-server did not start")


def run(kind, binary, workload, arguments, work):
    process, port = start_server(kind, binary, arguments, work)
    try:
        harness = Harness(kind, port, players=workload == "players-1x500")
        interval = 0.5
        if workload == "together-1x500":
            rooms, size, spread = 1, 500, False
        elif workload == "players-1x500":
            # A start of the build before announce-ready-up-to took 1.3 s: this pace lets it finish.
            rooms, size, spread, interval = 1, 500, False, 2.0
        elif workload == "together-100x10":
            rooms, size, spread = 100, 10, False
        else:
            rooms, size, spread = 100, 20, True
        harness.connect(rooms, size)
        warm_up = 3
        if spread:
            changes = arguments.duration + warm_up
            interval, offset = 1.0, 1.0 / rooms
        else:
            changes = arguments.rounds + warm_up
            offset = 0.0
        start = time.monotonic() + 0.2
        schedule = sorted((start + change * interval + number * offset, number)
                          for change in range(changes) for number in range(rooms))
        cpu_before = None
        for at, number in schedule:
            while time.monotonic() < at:
                harness.read_ready(max(0, at - time.monotonic()))
            if cpu_before is None and at >= start + warm_up * interval:
                # The warm-up's samples are dropped once it is over.
                harness.pump_until(harness.settled, 30)
                harness.latencies.clear()
                for room in harness.rooms:
                    room.last.clear()
                    room.after_ready.clear()
                    room.counted_from = len(room.sent)
                cpu_before = (cpu_seconds(process.pid), realtime_ns())
            harness.change(harness.rooms[number])
        harness.pump_until(lambda: all(len(r.last) == len(r.sent) - r.counted_from for r in harness.rooms), 60)
        cpu = cpu_seconds(process.pid) - cpu_before[0]
        deliveries = len(harness.latencies)
        last = [value for room in harness.rooms for value in room.last]
        after_ready = [value for room in harness.rooms for value in room.after_ready]
        extra = {}
        if after_ready:
            # How long the server took to start the group once the last member had said /ready.
            extra = {"after_ready_p50": percentile(after_ready, 0.5) / 1e6,
                     "after_ready_p99": percentile(after_ready, 0.99) / 1e6}
        return extra | {
            "p50": percentile(harness.latencies, 0.5) / 1e6, "p99": percentile(harness.latencies, 0.99) / 1e6,
            "max": max(harness.latencies) / 1e6, "last_p50": percentile(last, 0.5) / 1e6,
            "last_p99": percentile(last, 0.99) / 1e6, "deliveries": deliveries,
            "server_us": cpu * 1e6 / max(1, deliveries),
        }
    except SystemExit:
        log = os.path.join(work, f"{kind}.log")
        with open(log) as handle:
            print(f"compare: the end of {kind}'s log:\n" + "".join(handle.readlines()[-20:]), file=sys.stderr)
        raise
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cowatch", required=True)
    parser.add_argument("--before", help="another cowatch build, run on each workload too")
    parser.add_argument("--syncplay", default=shutil.which("syncplay-server") or "syncplay-server")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--workloads", default="together-1x500,together-100x10,spread-100x20")
    arguments = parser.parse_args()
    workloads = arguments.workloads.split(",")
    for workload in workloads:
        if workload not in ("together-1x500", "together-100x10", "spread-100x20", "players-1x500"):
            parser.error(f"unknown workload {workload}")
    results = []
    with tempfile.TemporaryDirectory(prefix="cowatch-compare.") as work:
        servers = [("syncplay", "syncplay", None)]
        if arguments.before:
            servers.append(("cowatch before", "cowatch", arguments.before))
        servers.append(("cowatch", "cowatch", arguments.cowatch))
        for workload in workloads:
            for label, kind, binary in servers:
                print(f"== {workload}, {label}", flush=True)
                result = run(kind, binary, workload, arguments, work)
                print("result: " + " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                                            for k, v in result.items()), flush=True)
                results.append((workload, label, result))
    print()
    print("| workload | server | per-member p50 ms | per-member p99 ms | max ms | last member p50 ms | last member p99 ms | deliveries | server µs per delivery |")
    print("|---|---|---|---|---|---|---|---|---|")
    for workload, kind, r in results:
        print(f"| {workload} | {kind} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f} | {r['last_p50']:.2f} | "
              f"{r['last_p99']:.2f} | {r['deliveries']} | {r['server_us']:.1f} |")
    starts = [(workload, label, r) for workload, label, r in results if "after_ready_p99" in r]
    if starts:
        print()
        print("| workload | server | from the last /ready to the last member's `playing`, p50 ms | p99 ms |")
        print("|---|---|---|---|")
        for workload, label, r in starts:
            print(f"| {workload} | {label} | {r['after_ready_p50']:.2f} | {r['after_ready_p99']:.2f} |")
    print()
    print("| workload | server | Syncplay p99 / its p99 | Syncplay last p99 / its last p99 |")
    print("|---|---|---|---|")
    for workload in workloads:
        pair = {label: r for w, label, r in results if w == workload}
        for label in [label for label, _, _ in servers if label != "syncplay"]:
            print(f"| {workload} | {label} | {pair['syncplay']['p99'] / pair[label]['p99']:.1f}x | "
                  f"{pair['syncplay']['last_p99'] / pair[label]['last_p99']:.1f}x |")


if __name__ == "__main__":
    main()
