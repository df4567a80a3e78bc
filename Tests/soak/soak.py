"""Soak: a real `cowatch serve` under thousands of churning connections.

Started by commands/soak. It starts the server itself (so it sees its exit code),
drives it from one asyncio process for the given minutes, then checks that the
server is alive and stops cleanly, that its memory stayed flat after warm-up, that
its file descriptors came back to the baseline, that every member still connected
holds its room's current state, and that every connection the server ended got a
close frame with a code. Traffic goes to 127.0.0.1 only; every loop is bounded.
"""
import argparse
import asyncio
import collections
import ctypes
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

import wire

HOST = "127.0.0.1"
# Server settings for the soak: loopback clients all share one address, so the
# per-address cap goes; the rate limit stays at its defaults (20/s, burst 40) so the
# flooders meet it. A short resume grace makes the population of members waiting to
# come back reach its steady size during warm-up. The outbox and stuck timeout keep
# their defaults: with 64 frames and 3 s, ordinary members under this load were
# resynchronized hundreds of times and some closed as too slow.
RESUME_GRACE = 5
STUCK_TIMEOUT = 10
OUTBOX_LIMIT = 256
SHUTDOWN_GRACE = 3  # the server's default; flooders and stalled readers read again within it
CHAT_HISTORY = 200  # a room's recent chat; filled during warm-up so it cannot pass for growth
URLS = [f"https://example.org/soak/{n}.mp4" for n in range(1, 25)]


def episode():
    n = random.randrange(len(URLS))
    return f"/watch {URLS[n]} Episode {n}"


# What a controller does, by one draw in [0, 1): the first row whose bound is
# above the draw (so each row's chance is its bound less the one before),
# what kind of line it is, and the line.
CONTROLS = [
    (0.14, "watch", episode),
    (0.34, "play", lambda: "/play"),
    (0.40, "play", lambda: "/play now"),
    (0.55, "pause", lambda: "/pause"),
    (0.65, "seek", lambda: f"/seek {random.randrange(0, 3600)}"),
    (0.70, "seek", lambda: random.choice(["/seek +10", "/seek -10"])),
    (0.78, "rate", lambda: f"/rate {random.choice(['0.5', '1', '1.25', '1.5', '2'])}"),
    (0.83, "queue", lambda: f"/queue {random.choice(URLS)} Next up"),
    (0.89, "next", lambda: "/next"),
    (0.92, "catchup", lambda: "/catchup 5"),
    (0.99, "chat", lambda: f"chat from a controller {random.randrange(10**6)}"),
    (1.00, "end", lambda: "/end"),
]


class Member:
    """One connection of the soak, from its upgrade to its end."""

    __slots__ = ("soak", "role", "room", "player", "conn", "id", "resume", "last_state", "rate_limited")

    def __init__(self, soak, role, room, player=False):
        self.soak, self.role, self.room, self.player = soak, role, room, player
        self.conn = self.id = self.resume = self.last_state = None
        self.rate_limited = False

    def on_text(self, payload):
        soak = self.soak
        soak.frames += 1
        if payload.startswith(b'{"type":"state"'):
            self.last_state = payload
            soak.last_state_at = time.monotonic()
            if self.player:
                state = json.loads(payload)
                if state["playback"]["status"] == "waiting":
                    soak.later(random.uniform(0.05, 0.4), self.send, f"/ready {state['seq']}", "ready")
        elif payload.startswith(b'{"type":"welcome"'):
            welcome = json.loads(payload)
            self.id = welcome["you"]["id"]
            self.resume = welcome["resume"]
        elif payload.startswith(b'{"type":"error"') and b'"rate-limited"' in payload:
            self.rate_limited = True

    def send(self, line, name):
        if self.conn is not None and not self.conn.ended.is_set() and not self.conn.close_sent:
            self.conn.send_text(line)
            self.soak.commands[name] += 1


class Soak:
    def __init__(self, args):
        self.args = args
        self.duration = args.minutes * 60
        self.rooms = [f"soak-{n}" for n in range(args.rooms)]
        self.server = None
        self.port = None
        self.live = set()
        self.frames = 0
        self.commands = collections.Counter()
        self.opened = 0
        self.peak = 0
        self.refused = collections.Counter()
        self.server_closes = collections.Counter()   # (code, role)
        self.no_close_frame = collections.Counter()  # (role, how)
        self.close_reasons = collections.Counter()   # (code, reason)
        self.client_closes = collections.Counter()   # answered / unanswered
        self.cuts = collections.Counter()
        self.resumes = collections.Counter()
        self.lost_resumes = []  # seconds from our drop to the welcome that came back as somebody new
        self.floods = []
        self.flood_starts = []
        self.slow = []
        self.samples = []  # (seconds since load start, rss kB, fds, live connections)
        self.last_state_at = time.monotonic()
        self.stopping = False
        self.server_died_at = None
        self.pending = set()

    # plumbing

    def later(self, delay, function, *arguments):
        asyncio.get_running_loop().call_later(delay, function, *arguments)

    def spawn(self, coroutine):
        task = asyncio.ensure_future(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)
        return task

    async def open(self, member, resume=None, join=True, receive_buffer=None, name=None):
        query = [f"name={name or member.role}"]
        if resume:
            query.append(f"resume={resume}")
        if member.player:
            query.append("player=1")
        if not join:
            query.append("join=0")
        path = f"/rooms/{member.room}?{'&'.join(query)}"
        try:
            conn = await wire.connect(HOST, self.port, path, member.on_text, receive_buffer=receive_buffer)
        except wire.Refused as refused:
            self.refused[f"HTTP {refused.status}"] += 1
            return False
        except (OSError, asyncio.TimeoutError) as error:
            self.refused[type(error).__name__] += 1
            return False
        member.conn = conn
        conn.on_end = lambda: self.ended(member)
        self.opened += 1
        self.live.add(member)
        self.peak = max(self.peak, len(self.live))
        return True

    def ended(self, member):
        """Files how a connection ended: only a cut of our own may lack a close frame."""
        self.live.discard(member)
        conn = member.conn
        if conn.cut:
            return
        if conn.initiated:
            self.client_closes["answered" if conn.close_code is not None else "unanswered"] += 1
            if conn.close_code is None:
                self.no_close_frame[(member.role, "our close unanswered, " + conn.end)] += 1
            return
        if conn.close_code is None:
            self.no_close_frame[(member.role, conn.end)] += 1
        else:
            self.server_closes[(conn.close_code, member.role)] += 1
            self.close_reasons[(conn.close_code, conn.close_reason)] += 1

    async def welcomed(self, member, timeout=10):
        """Waits for the member's welcome and the state after it (or its end)."""
        deadline = time.monotonic() + timeout
        while member.last_state is None and not member.conn.ended.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return member.last_state is not None

    async def wait_ended(self, member, timeout):
        try:
            await asyncio.wait_for(member.conn.ended.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    # the load

    async def slot(self, index, ramp, until):
        """One seat: a member that lives a while, leaves one way or another, and comes
        back (resuming after a drop, or as somebody new)."""
        await asyncio.sleep(ramp * index / self.args.connections)
        room = self.rooms[index % len(self.rooms)]
        prefill = index < 5 * len(self.rooms)  # the first five of each room fill its chat history
        resume, role, player = None, None, False
        mean_life = min(60.0, max(8.0, self.duration / 4))
        while time.monotonic() < until and not self.stopping:
            if resume is None:
                draw = random.random()
                role, player = ("controller", False) if draw < 0.2 else ("player", True) if draw < 0.5 else ("viewer", False)
            member = Member(self, role, room, player)
            if not await self.open(member, resume=resume):
                await asyncio.sleep(random.uniform(0.2, 1.0))
                continue
            if resume is not None:
                await asyncio.sleep(0.3)
                kept = member.id == previous_id
                self.resumes["kept identity" if kept else "new identity"] += 1
                if not kept:
                    self.lost_resumes.append(f"{room} {previous_id}->{member.id} "
                                             f"{time.monotonic() - dropped_at:.1f} s")
            resume = None
            if prefill:
                prefill = False
                self.later(0.2, member.send, "\n".join(f"chat history line {n} from {room}" for n in range(40)), "chat")
            life_ends = min(until, time.monotonic() + min(4 * mean_life, random.expovariate(1 / mean_life) + 1))
            await self.live_a_while(member, life_ends)
            if self.stopping or time.monotonic() >= until:
                return  # still connected: the final check wants it
            if member.conn.ended.is_set():
                continue  # the server ended it; filed already
            way = random.random()
            if way < 0.45:
                member.conn.close(1000)
                await self.wait_ended(member, 5)
                room = random.choice(self.rooms)
            elif way < 0.75:
                reset = random.random() < 0.5
                member.conn.cut_off(reset)
                self.cuts["drop then resume (RST)" if reset else "drop then resume (FIN)"] += 1
                resume, previous_id, dropped_at = member.resume, member.id, time.monotonic()
                await asyncio.sleep(random.uniform(0.3, 2.0))
            else:
                reset = random.random() < 0.5
                member.conn.cut_off(reset)
                self.cuts["cut for good (RST)" if reset else "cut for good (FIN)"] += 1
                room = random.choice(self.rooms)
            await asyncio.sleep(random.uniform(0.0, 0.5))

    async def live_a_while(self, member, life_ends):
        conn = member.conn
        while not conn.ended.is_set() and not self.stopping:
            now = time.monotonic()
            if member.role == "controller":
                pause = random.uniform(2, 6)
            else:
                pause = random.uniform(10, 30)
            if now + pause >= life_ends:
                await asyncio.sleep(max(0, life_ends - now))
                return
            await asyncio.sleep(pause)
            if conn.ended.is_set() or self.stopping:
                return
            if member.role == "controller":
                self.control(member)
            elif random.random() < 0.8:
                member.send(f"chat {random.randrange(10**6)}", "chat")
            elif member.player and random.random() < 0.5:
                member.send("/buffering", "buffering")
            else:
                member.send(random.choice(["/status", "/who", "/me waves", f"/time {int(time.time() * 1000)}"]),
                            "info")

    def control(self, member):
        draw = random.random()
        line, kind = next((line(), kind) for below, kind, line in CONTROLS if draw < below)
        member.send(line, kind)

    async def flooder(self, number):
        """Hundreds of lines without reading: the server should say `rate-limited`,
        then close with 1008, and the close frame should reach us once we read again
        (we do, within the server's shutdown grace). One kind sends its lines in one
        burst, the other keeps sending through the pause, as a runaway script would."""
        steady = number % 2 == 1
        member = Member(self, "flooder (steady)" if steady else "flooder (one burst)", random.choice(self.rooms))
        small = number % 4 >= 2
        if not await self.open(member, receive_buffer=4096 if small else None):
            return
        await self.welcomed(member)
        conn = member.conn
        self.flood_starts.append(time.monotonic())
        conn.pause_reading()
        count = random.randint(200, 600)
        kind = random.choice(["chat", "/time", "/help"])
        lines = [f"flood {n}" if kind == "chat" else f"/time {n}" if kind == "/time" else "/help" for n in range(count)]
        hold = random.uniform(0.5, SHUTDOWN_GRACE - 1.0)
        # Steady: 50 lines every 50 ms (1,000 a second) until all are out.
        per_burst = 50 if steady else count
        sent = 0
        began = time.monotonic()
        while sent < count and not conn.transport.is_closing() and not conn.ended.is_set():
            chunk = lines[sent:sent + per_burst]
            conn.transport.write(b"".join(wire.frame(wire.TEXT, line.encode()) for line in chunk))
            sent += len(chunk)
            if steady:
                await asyncio.sleep(0.05)
        self.commands["flood"] += sent
        await asyncio.sleep(max(0.0, hold - (time.monotonic() - began)))
        conn.resume_reading()
        closed = await self.wait_ended(member, 10)
        if not closed:
            conn.close(1000)
            await self.wait_ended(member, 5)
        self.floods.append({"lines": sent, "kind": kind, "steady": steady, "small buffer": small,
                            "held": round(hold, 2), "rate-limited": member.rate_limited, "close": conn.close_code,
                            "end": conn.end if closed else "still open; we closed"})

    async def slow_reader(self, number):
        """Stops reading while its replies pile up. The server may resynchronize it
        (it stays, and must hold the room's state at the end) or, once it has overflowed
        for the stuck timeout, close it with 1008: that close frame must reach it once
        it reads again."""
        member = Member(self, "slow reader", random.choice(self.rooms))
        if not await self.open(member, receive_buffer=4096):
            return
        await self.welcomed(member)
        stalled = number % 2 == 1
        # A stall goes on until the server decides to close somebody with 1008 (seen in
        # /metrics, polled from here), then reads again well within the shutdown grace,
        # so a close frame can reach it. On loopback the kernel takes megabytes before
        # the outbox overflows, so a short run mostly ends the stall at its cap first.
        pause = min(45.0, max(STUCK_TIMEOUT + 2, 0.2 * self.duration)) if stalled else random.uniform(1.0, 2.0)
        member.conn.pause_reading()
        ends = time.monotonic() + pause
        # The rate limit's whole burst at once, then just under its rate: big replies
        # the reader does not take.
        member.send("\n".join(["/help"] * 38), "help (slow reader)")
        # Time on purpose: the rate limit earns back some of the burst, so the
        # lines below stay under it.
        await asyncio.sleep(0.5)
        # Flooders are closed with 1008 too: the ones started since shortly before the
        # first reading are not taken for ours.
        closes_before = await self.server_closes_1008() if stalled else None
        polled = since = time.monotonic()
        while time.monotonic() < ends and not member.conn.ended.is_set():
            member.send("/help", "help (slow reader)")
            await asyncio.sleep(0.06)
            if stalled and time.monotonic() - polled >= 0.25:
                polled = time.monotonic()
                floods = sum(1 for started in self.flood_starts if started >= since - 2.0)
                if await self.server_closes_1008() > closes_before + floods:
                    break
        member.conn.resume_reading()
        await self.wait_ended(member, SHUTDOWN_GRACE + 2)
        conn = member.conn
        if conn.ended.is_set():
            outcome = f"closed {conn.close_code}" if conn.close_code is not None else f"no close frame ({conn.end})"
        else:
            outcome = "still connected"
        self.slow.append({"kind": "stalled" if stalled else "short", "pause": round(pause, 1), "outcome": outcome})
        # A survivor stays as an ordinary member, so the final check covers it.

    async def server_closes_1008(self):
        lines = await asyncio.get_running_loop().run_in_executor(None, fetch_metrics, self.port)
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines
                   if line.startswith("cowatch_closes_total{") and 'code="1008"' in line and 'initiator="server"' in line)

    async def specials(self, until):
        """Flooders and slow readers, spread over the middle of the run."""
        start, stop = 0.1 * self.duration, 0.8 * self.duration
        count = max(4, int(self.duration / 5))
        step = (stop - start) / count
        await asyncio.sleep(start)
        for n in range(count):
            if self.stopping or time.monotonic() >= until:
                return
            self.spawn(self.flooder(n))
            await asyncio.sleep(step / 2)
            if self.stopping or time.monotonic() >= until:
                return
            self.spawn(self.slow_reader(n))
            await asyncio.sleep(step / 2)

    async def sample(self, started, until, interval):
        while time.monotonic() < until and not self.stopping:
            if self.server.poll() is not None:
                self.server_died_at = time.monotonic() - started
                self.stopping = True
                return
            self.samples.append((time.monotonic() - started, rss_kb(self.server.pid), fd_count(self.server.pid),
                                 len(self.live)))
            await asyncio.sleep(interval)

    # the end

    async def quiet(self, seconds, cap):
        """Waits until no `state` has arrived anywhere for `seconds`."""
        deadline = time.monotonic() + cap
        while time.monotonic() < deadline:
            if time.monotonic() - self.last_state_at >= seconds:
                return True
            await asyncio.sleep(0.1)
        return False

    async def check_states(self):
        observers = {}

        async def observe(room):
            member = Member(self, "observer", room)
            if await self.open(member, join=False, name="observer"):
                observers[room] = member
        await asyncio.gather(*(observe(room) for room in self.rooms))
        # Each observer's own state comes after its welcome: wait for all of them.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(o.last_state is None for o in observers.values()):
            await asyncio.sleep(0.1)
        mismatches, compared = [], 0
        for attempt in range(4):
            await self.quiet(1.0, 8)
            mismatches, compared = [], 0
            for member in list(self.live):
                if member.role == "observer" or member.conn.ended.is_set() or member.id is None:
                    continue
                observer = observers.get(member.room)
                if observer is None or observer.last_state is None:
                    continue
                compared += 1
                room_state = playback_state(observer.last_state)
                mine = playback_state(member.last_state) if member.last_state else None
                if mine != room_state:
                    mismatches.append((member.room, member.role, mine and mine["seq"], room_state["seq"]))
            if not mismatches:
                break
        missing = [room for room in self.rooms if room not in observers or observers[room].last_state is None]
        return compared, mismatches, missing, len(observers)

    async def run(self):
        args = self.args
        started = time.monotonic()
        until = started + self.duration
        baseline_fds = fd_count(self.server.pid)
        baseline_rss = rss_kb(self.server.pid)
        cpu_start = client_cpu()
        server_cpu_start = server_cpu(self.server.pid)
        ramp = min(6.0, 0.15 * self.duration)
        interval = min(5.0, max(0.5, self.duration / 120))
        sampler = self.spawn(self.sample(started, until, interval))
        slots = [self.spawn(self.slot(i, ramp, until)) for i in range(args.connections)]
        self.spawn(self.specials(until))
        await sampler
        load_seconds = time.monotonic() - started
        client_cpu_used = client_cpu() - cpu_start
        server_cpu_used = server_cpu(self.server.pid) - server_cpu_start if self.server.poll() is None else 0
        self.stopping = True
        await asyncio.wait(slots, timeout=10)
        # Flooders and slow readers finish their bounded scripts.
        others = [task for task in list(self.pending) if task not in slots]
        if others:
            await asyncio.wait(others, timeout=20)
        result = {"baseline_fds": baseline_fds, "baseline_rss": baseline_rss, "load_seconds": load_seconds,
                  "client_cpu": client_cpu_used, "server_cpu": server_cpu_used, "ramp": ramp}
        if self.server.poll() is not None:
            result["states"] = None
            return result
        result["quiet"] = await self.quiet(1.5, 12)
        result["states"] = await self.check_states()
        result["metrics"] = fetch_metrics(self.port)
        # Everyone leaves with a close handshake.
        leaving = list(self.live)
        for member in leaving:
            member.conn.close(1000)
        await asyncio.gather(*(self.wait_ended(m, 10) for m in leaving))
        for member in list(self.live):
            member.conn.cut_off(True)
        end_fds = None
        for _ in range(150):
            if self.server.poll() is not None:
                break
            end_fds = fd_count(self.server.pid)
            if end_fds <= baseline_fds:
                break
            await asyncio.sleep(0.1)
        result["end_fds"] = end_fds
        return result


def playback_state(payload):
    """The fields that define a room's playback state: everything in a `state` but its type."""
    state = json.loads(payload)
    state.pop("type", None)
    return state


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def healthy(port, timeout=20):
    """Waits until the server answers /healthz; False after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def server_cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def client_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def fetch_metrics(port):
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError as error:
        return [f"(metrics unavailable: {error})"]
    wanted = ("cowatch_closes", "cowatch_outbox", "cowatch_refused", "cowatch_errors")
    return [line for line in text.splitlines() if line.startswith(wanted)]


def die_with_parent():
    """The server goes when the soak goes, however the soak ends."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def start_server(args):
    log = open(os.path.join(args.work, "server.log"), "w")
    command = [args.binary, "serve", "--host", HOST, "--port", "0", "--store", "memory",
               "--max-connections-per-address", str(args.connections * 2 + 2000),
               "--max-members", "1000", "--max-rooms", "10000", "--room-creation-rate", "0",
               "--resume-grace", str(RESUME_GRACE), "--stuck-timeout", str(STUCK_TIMEOUT),
               "--outbox-limit", str(OUTBOX_LIMIT), "--shutdown-grace", str(SHUTDOWN_GRACE),
               "--log-level", "warning", "--media-check", "false"]
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              preexec_fn=die_with_parent)
    with open(os.path.join(args.work, "server.pid"), "w") as pidfile:
        pidfile.write(str(server.pid))
    port = None
    for _ in range(200):
        with open(log.name) as text:
            for line in text:
                if "serving on http://127.0.0.1:" in line:
                    port = int(line.split("serving on http://127.0.0.1:")[1].split("/")[0])
        if port or server.poll() is not None:
            break
        time.sleep(0.05)
    return server, port, log.name


def stop_server(server):
    """SIGTERM, then the exit code (None if it had to be killed)."""
    if server.poll() is not None:
        return server.returncode, 0.0
    began = time.monotonic()
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=20)
        return code, time.monotonic() - began
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        return None, time.monotonic() - began


def summarize(soak, result, exit_code, stop_seconds, log_path):
    checks = []
    duration = soak.duration
    print()
    print(f"soak: {soak.args.minutes:g} min, {soak.args.connections} seats in {soak.args.rooms} rooms, "
          f"seed {soak.args.seed}")
    print(f"  connections opened   {soak.opened}  (peak concurrent {soak.peak})")
    refused = ", ".join(f"{k} {v}" for k, v in sorted(soak.refused.items())) or "none"
    print(f"  refused or failed    {refused}")
    print(f"  commands sent        {sum(soak.commands.values())}: "
          + ", ".join(f"{k} {v}" for k, v in soak.commands.most_common()))
    print(f"  frames received      {soak.frames}")
    print(f"  resumes              " + (", ".join(f"{k} {v}" for k, v in sorted(soak.resumes.items())) or "none")
          + (f" (came back as somebody new, grace {RESUME_GRACE} s: room, ids, time from our drop to the "
             f"welcome: {'; '.join(soak.lost_resumes[:5])})" if soak.lost_resumes else ""))
    print(f"  our cuts (no frame)  " + (", ".join(f"{k} {v}" for k, v in sorted(soak.cuts.items())) or "none"))
    print(f"  our closes           " + (", ".join(f"{k} {v}" for k, v in sorted(soak.client_closes.items())) or "none"))
    closes = collections.defaultdict(collections.Counter)
    for (code, role), n in soak.server_closes.items():
        closes[code][role] += n
    print("  server closes        " + ("; ".join(
        f"{code}: {sum(roles.values())} ({', '.join(f'{r} {n}' for r, n in roles.items())})"
        for code, roles in sorted(closes.items())) or "none"))
    for (code, reason), n in sorted(soak.close_reasons.items()):
        print(f"      {code} \"{reason}\" x{n}")
    flood_closes = collections.Counter(("steady: " if f["steady"] else "one burst: ")
                                       + (f"closed {f['close']}" if f["close"] is not None else f"no close frame ({f['end']})")
                                       for f in soak.floods)
    limited = collections.Counter("steady" if f["steady"] else "one burst" for f in soak.floods if f["rate-limited"])
    print(f"  floods               {len(soak.floods)}, {sum(f['lines'] for f in soak.floods)} lines; "
          f"saw rate-limited: " + (", ".join(f"{k} {v}" for k, v in sorted(limited.items())) or "none")
          + "; ended by " + ", ".join(f"{k} {v}" for k, v in sorted(flood_closes.items())))
    slow = collections.Counter(f"{s['kind']}: {s['outcome']}" for s in soak.slow)
    print(f"  slow readers         {len(soak.slow)}: " + ", ".join(f"{k} {v}" for k, v in sorted(slow.items())))
    print(f"  client CPU           {result['client_cpu']:.1f} s over {result['load_seconds']:.0f} s of load "
          f"({100 * result['client_cpu'] / max(1, result['load_seconds']):.0f}%); server "
          f"{result['server_cpu']:.1f} s ({100 * result['server_cpu'] / max(1, result['load_seconds']):.0f}%)")
    for line in result.get("metrics", []):
        print(f"  metrics              {line}")

    # no crash
    alive = soak.server_died_at is None
    checks.append(("no crash: alive through the run, exit 0 on SIGTERM",
                   alive and exit_code == 0,
                   f"exit code {exit_code} {stop_seconds:.2f} s after SIGTERM" if alive
                   else f"died {soak.server_died_at:.0f} s into the run (exit {exit_code}); log {log_path}"))

    # RSS. Warm-up: the first quarter, and at least 15 s, since the churn reaches its
    # steady mix only once the first lifetimes and the resume grace have run out.
    warmup = max(0.25 * duration, min(15.0, 0.5 * duration))
    series = [(t, rss) for t, rss, _, _ in soak.samples if rss]
    after = [rss for t, rss in series if t >= warmup]
    if len(after) >= 4:
        reference_window = [rss for t, rss in series if warmup <= t < warmup + max(0.1 * duration, 3)]
        reference = statistics.median(reference_window or after[:3])
        top, low, last = max(after), min(after), after[-1]
        growth = (top - reference) / reference
        print(f"  RSS                  baseline {result['baseline_rss'] / 1024:.1f} MiB; {len(series)} samples; "
              f"warm-up first {warmup:.0f} s; after it: reference {reference / 1024:.1f} MiB, "
              f"min {low / 1024:.1f}, max {top / 1024:.1f}, last {last / 1024:.1f} ({100 * growth:+.1f}% at most)")
        print("  RSS series (MiB)     " + " ".join(f"{rss / 1024:.0f}" for _, rss in series[:: max(1, len(series) // 24)]))
        live = [n for t, _, _, n in soak.samples if t >= warmup]
        print(f"  live connections     after warm-up: min {min(live)}, max {max(live)}")
        checks.append(("RSS flat within 5% after warm-up", growth <= 0.05,
                       f"max {top / 1024:.1f} MiB vs reference {reference / 1024:.1f} MiB ({100 * growth:+.1f}%)"))
    else:
        checks.append(("RSS flat within 5% after warm-up", False, "too few samples"))

    # fds
    end_fds = result.get("end_fds")
    checks.append(("file descriptors back to the baseline", end_fds is not None and end_fds <= result["baseline_fds"],
                   f"baseline {result['baseline_fds']}, end {end_fds}, peak "
                   f"{max((f for _, _, f, _ in soak.samples if f), default=None)}"))

    # states
    states = result.get("states")
    if states is None:
        checks.append(("every member holds its room's state", False, "not checked: the server was gone"))
    else:
        compared, mismatches, missing, observed = states
        detail = f"{compared} members in {observed} rooms compared, {len(mismatches)} differ"
        if not result.get("quiet"):
            detail += " (the rooms never went quiet before the check)"
        if missing:
            detail += f"; no observer state for {len(missing)} rooms"
        for room, role, mine, theirs in mismatches[:5]:
            detail += f"\n      {room}: a {role} holds seq {mine}, the room is at {theirs}"
        checks.append(("every member holds its room's state", compared > 0 and not mismatches and not missing, detail))

    # close codes
    missing_frames = sum(soak.no_close_frame.values())
    detail = f"{sum(soak.server_closes.values())} server closes with a code, {missing_frames} without a close frame"
    for (role, how), n in sorted(soak.no_close_frame.items()):
        detail += f"\n      {role}: {n} ended by {how} without a close frame"
    decided = collections.Counter()
    for line in result.get("metrics", []):
        if line.startswith("cowatch_closes_total{") and 'initiator="server"' in line:
            decided[line.split('code="')[1].split('"')[0]] += int(float(line.rsplit(" ", 1)[1]))
    if decided:
        seen = collections.Counter()
        for (code, _), n in soak.server_closes.items():
            seen[str(code)] += n
        detail += "\n      server-side closes (its /metrics, before the final leave): " + ", ".join(
            f"{code}: {n} decided, {seen[code]} close frames received" for code, n in sorted(decided.items()))
    no_code = sum(n for (code, _), n in soak.server_closes.items() if code == 1005)
    if no_code:
        detail += f"; {no_code} close frames without a code"
    checks.append(("every close has a code", missing_frames == 0 and no_code == 0, detail))

    print()
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}")
    passed = sum(1 for _, ok, _ in checks if ok)
    print(f"\nsoak: {passed} passed, {len(checks) - passed} failed")
    return all(ok for _, ok, _ in checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--connections", type=int, default=int(os.environ.get("COWATCH_SOAK_CONNECTIONS", 2000)))
    parser.add_argument("--rooms", type=int, default=int(os.environ.get("COWATCH_SOAK_ROOMS", 150)))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("COWATCH_SOAK_SEED", time.time())))
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if args.minutes <= 0 or args.connections < 1 or args.rooms < 1:
        parser.error("minutes, connections and rooms must be positive")
    random.seed(args.seed)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.connections + args.rooms + 1000
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
        if hard < wanted:
            print(f"soak: only {hard} file descriptors allowed; {wanted} wanted", file=sys.stderr)

    soak = Soak(args)
    server, port, log_path = start_server(args)
    if port is None:
        print("soak: the server did not start:", file=sys.stderr)
        print(open(log_path).read(), file=sys.stderr)
        server.kill()
        return 1
    soak.server, soak.port = server, port
    print(f"soak: server pid {server.pid} on ws://{HOST}:{port}, {args.minutes:g} min, "
          f"{args.connections} seats, {args.rooms} rooms, seed {args.seed}", flush=True)
    # The baseline is taken once the server answers: its service thread runs.
    if not healthy(port):
        print("soak: the server does not answer /healthz", file=sys.stderr)
        server.kill()
        return 1
    try:
        result = asyncio.run(soak.run())
    finally:
        exit_code, stop_seconds = stop_server(server)
    ok = summarize(soak, result, exit_code, stop_seconds, log_path)
    with open(log_path) as log:
        errors = [line.rstrip() for line in log if "level=error" in line or "level=critical" in line]
    if errors:
        print(f"soak: {len(errors)} error lines in the server log, first ones:")
        for line in errors[:5]:
            print(f"  {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
