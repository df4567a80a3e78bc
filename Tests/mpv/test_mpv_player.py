"""`cowatch watch` with real mpv, headless (--vo=null --ao=null): mpv follows a
room driven by a bot over WebSocket (/play, /pause, /seek, /rate 1.5), and its
position, read over mpv's own IPC socket with a timestamp, is checked against
the room's timeline; a pause and a seek made in mpv (over a second IPC
connection, as mpv's keys would) reach the room.

COWATCH_BIN names the cowatch binary. Ports: COWATCH_MPV_PORT (the server; the
media server takes the next one), or free ones. MPV_TEST_REPORT=path writes the
figures measured as JSON; MPV_TEST_DEBUG=1 prints `cowatch watch --verbose`'s
account at the end.
"""
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from websockets.sync.client import connect

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import media_server  # noqa: E402
from harness import Serve, free_port  # noqa: E402  (free_port: for the tests beside this one)
from harness import wait_until as wait_for  # noqa: E402

BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")
MEDIA_SECONDS = 60
FPS = 30

# How close mpv keeps to the room's timeline, and why (docs/desktop.md):
# the player nudges mpv's speed once its drift passes 3 ms (Steadiness.nudgeStart)
# and reads audio-pts to about a millisecond; the server's clock is estimated
# to within half the quickest /time round trip (well under 1 ms on loopback);
# this test's own reading is timestamped at the middle of an IPC round trip
# (samples slower than SAMPLE_RTT_MS are dropped: up to 2 ms off). So settled,
# mpv is expected within about 3 + 1 + 1 + 2 = 7 ms; the bounds allow twice that
# for the p95 of all the readings of every transition, and a busy two-core
# machine's scheduling for the largest of each.
#
# Settling: a start late by L ms (a busy machine; beyond 250 ms it re-joins with
# a seek) is absorbed by a nudge of at most 6 % of the rate, then proportionally
# over 1.5 s (Steadiness.nudgeHorizon): 250 ms at rate 1 takes about 4 s to
# come within SETTLED_MS, so SETTLE_LIMIT_S allows twice that, counted from
# the command's answer.
SAMPLE_RTT_MS = 4.0
P95_BOUND_MS = 15.0
MAX_BOUND_MS = 40.0
SETTLED_MS = 5.0
SETTLE_LIMIT_S = 8.0
MEASURE_S = 2.0


class MpvIPC:
    """A second client of mpv's IPC socket: what the test reads and does in mpv."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next = 1000

    def command(self, *args):
        self.next += 1
        sent = time.time()
        self.sock.sendall((json.dumps({"command": list(args), "request_id": self.next}) + "\n").encode())
        while True:
            message = json.loads(self.file.readline())
            if message.get("request_id") == self.next:
                return message, sent, time.time()

    def get(self, name):
        message, _, _ = self.command("get_property", name)
        return message.get("data")

    def position(self):
        """(audio-pts, epoch ms at the middle of the round trip, round trip ms)."""
        message, sent, received = self.command("get_property", "audio-pts")
        return message.get("data"), (sent + received) / 2 * 1000, (received - sent) * 1000

    def close(self):
        self.sock.close()


class Room:
    """The bot: a WebSocket member that sends commands and keeps the last state."""

    def __init__(self, url):
        # Entered as a context manager would be (websockets 17 warns otherwise);
        # closed by close().
        self.ws = connect(url, subprotocols=["cowatch.v1.json"], open_timeout=10).__enter__()
        self.state = None
        self.events = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for text in self.ws:
                event = json.loads(text)
                with self.lock:
                    self.events.append(event)
                    if event["type"] == "state":
                        self.state = event
        except Exception:  # noqa: BLE001 - the connection closed at the end
            pass

    def send(self, line):
        self.ws.send(line)

    def close(self):
        self.ws.close()

    def current(self):
        with self.lock:
            return self.state

    def errors(self):
        with self.lock:
            return [e for e in self.events if e["type"] == "error"]


def expected(state, at_ms):
    p = state["playback"]
    if p["status"] != "playing" or at_ms <= p["at"]:
        return p["position"]
    return p["position"] + p["rate"] * (at_ms - p["at"]) / 1000


@pytest.fixture(scope="module")
def setup():
    if not shutil_which("mpv") or not shutil_which("ffmpeg"):
        pytest.skip("mpv or ffmpeg is missing (commands/setup installs them)")
    work = tempfile.mkdtemp(prefix="cowatch-mpv-")
    clip = os.path.join(work, "clip.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=size=320x180:rate={FPS}:duration={MEDIA_SECONDS}",
                    "-f", "lavfi", "-i", f"sine=frequency=440:duration={MEDIA_SECONDS}",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "30", "-g", str(FPS), "-pix_fmt", "yuv420p",
                    "-c:a", "aac", "-shortest", "-movflags", "+faststart", clip], check=True, timeout=180)
    port = int(os.environ["COWATCH_MPV_PORT"]) if os.environ.get("COWATCH_MPV_PORT") else free_port()
    media_port = port + 1 if os.environ.get("COWATCH_MPV_PORT") else free_port()
    handler = lambda *a, **k: media_server.RangeRequestHandler(*a, directory=work, **k)  # noqa: E731
    media = media_server.QuietServer(("127.0.0.1", media_port), handler)
    threading.Thread(target=media.serve_forever, daemon=True).start()

    server = Serve("--store", "memory", "--media-check-private", "true", port=port, binary=BIN,
                   log_path=os.path.join(work, "server.log"))

    room_url = f"ws://127.0.0.1:{port}/rooms/mpv-test"
    bot = Room(room_url + "?name=bot")
    wait_for(lambda: bot.current(), 5, "the bot's first state")
    bot.send(f"/watch http://127.0.0.1:{media_port}/clip.mp4 Clip")
    wait_for(lambda: (bot.current() or {}).get("session"), 5, "the item shared")

    tmp = os.path.join(work, "tmp")
    os.mkdir(tmp)
    watch_log = open(os.path.join(work, "watch.log"), "wb")
    watch = subprocess.Popen([BIN, "watch", room_url, "--name", "mpv", "--verbose",
                              "--mpv-option", "vo=null", "--mpv-option", "ao=null"],
                             stdout=watch_log, stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": tmp + "/"})
    path = os.path.join(tmp, f"cowatch-mpv-{watch.pid}.sock")
    wait_for(lambda: os.path.exists(path), 15, "mpv's socket")
    ipc = wait_for(lambda: _try_ipc(path), 10, "mpv's IPC")
    context = {"bot": bot, "ipc": ipc, "watch": watch, "work": work, "figures": {}, "errors": []}
    yield context
    if os.environ.get("MPV_TEST_DEBUG"):
        print("cowatch watch still running:", watch.poll() is None)
    ipc.close()
    bot.close()
    watch.terminate()
    try:
        watch.wait(timeout=10)
    except subprocess.TimeoutExpired:
        watch.kill()
    server.stop(timeout=10)
    media.shutdown()
    watch_log.close()
    if os.environ.get("MPV_TEST_DEBUG"):
        print(open(os.path.join(work, "watch.log")).read())
    report = os.environ.get("MPV_TEST_REPORT")
    if report:
        with open(report, "w") as f:
            json.dump(context["figures"], f, indent=2)


def shutil_which(name):
    import shutil
    return shutil.which(name)


def _try_ipc(path):
    try:
        return MpvIPC(path)
    except OSError:
        return None


def error_now(ctx, state):
    """mpv's error against the room's timeline now (ms), or None for a slow reading."""
    position, at_ms, rtt = ctx["ipc"].position()
    if position is None or rtt > SAMPLE_RTT_MS:
        return None
    return (position - expected(state, at_ms)) * 1000


def settled_errors(ctx, what):
    """How long mpv took to come within SETTLED_MS of the room's timeline after
    the state's instant, then its error (ms) sampled ten times a second for
    MEASURE_S."""
    state = ctx["bot"].current()
    deadline = time.monotonic() + SETTLE_LIMIT_S
    # Settled: three readings in a row within SETTLED_MS with mpv playing (a
    # paused mpv waiting for its start is level with the timeline for a moment
    # as the timeline passes it).
    close = 0
    while close < 3:
        error = error_now(ctx, state)
        close = close + 1 if error is not None and abs(error) <= SETTLED_MS and ctx["ipc"].get("pause") is False else 0
        assert time.monotonic() < deadline, f"{what}: mpv not within {SETTLED_MS} ms of the room after {SETTLE_LIMIT_S} s ({error})"
        time.sleep(0.05)
    settled_after = time.time() * 1000 - state["playback"]["at"]
    errors = []
    end = time.monotonic() + MEASURE_S
    while time.monotonic() < end:
        error = error_now(ctx, state)
        if error is not None:
            errors.append(error)
        time.sleep(0.1)
    assert len(errors) >= 8, f"{what}: too few quick samples ({len(errors)})"
    magnitudes = sorted(abs(e) for e in errors)
    p95 = magnitudes[math.ceil(0.95 * len(magnitudes)) - 1]  # nearest rank
    figure = {"settled_after_ms": round(max(0, settled_after)), "p95_ms": round(p95, 2), "max_ms": round(magnitudes[-1], 2),
              "mean_ms": round(statistics.mean(errors), 2), "samples": len(errors)}
    ctx["figures"][what] = figure
    ctx["errors"].extend(errors)
    print(f"{what}: {figure}")
    assert figure["max_ms"] <= MAX_BOUND_MS, f"{what}: {figure}"
    return figure


def playing_state(bot, after_seq, rate=None):
    state = bot.current()
    if not state or state["seq"] <= after_seq or state["playback"]["status"] != "playing":
        return None
    if rate is not None and state["playback"]["rate"] != rate:
        return None
    return state


def test_mpv_reports_the_items_length(setup):
    bot = setup["bot"]
    state = wait_for(lambda: (bot.current() or {}).get("session", {}).get("activity", {}).get("duration"), 15,
                     "mpv's /duration to reach the room")
    assert abs(state - MEDIA_SECONDS) < 0.2


def test_mpv_follows_play_pause_seek_and_rate(setup):
    bot, ipc = setup["bot"], setup["ipc"]
    seq = bot.current()["seq"]
    bot.send("/play")
    state = wait_for(lambda: playing_state(bot, seq), 10, "the room to play (mpv's /ready)")
    # A coordinated start: mpv waited with everyone and started at the state's instant.
    wait_for(lambda: ipc.get("pause") is False, 5, "mpv to play")
    settled_errors(setup, "play")

    seq = bot.current()["seq"]
    bot.send("/pause")
    state = wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["status"] == "paused" and s, 5, "paused")
    held = state["playback"]["position"]
    wait_for(lambda: ipc.get("pause") is True, 5, "mpv to pause")
    wait_for(lambda: abs((ipc.get("time-pos") or -1) - held) <= 1 / FPS + 0.001, 5, f"mpv held at {held}")

    seq = bot.current()["seq"]
    bot.send("/seek 30")
    wait_for(lambda: bot.current()["seq"] > seq, 5, "the seek")
    wait_for(lambda: abs((ipc.get("time-pos") or -1) - 30) <= 1 / FPS + 0.001, 5, "mpv at 30 s")
    assert ipc.get("pause") is True

    seq = bot.current()["seq"]
    bot.send("/play")
    wait_for(lambda: playing_state(bot, seq), 10, "the room to play again")
    settled_errors(setup, "play after seek")

    seq = bot.current()["seq"]
    bot.send("/rate 1.5")
    wait_for(lambda: playing_state(bot, seq, rate=1.5), 5, "rate 1.5")
    settled_errors(setup, "rate 1.5")
    assert abs(ipc.get("speed") - 1.5) < 1.5 * 0.061

    seq = bot.current()["seq"]
    bot.send("/seek 10")
    wait_for(lambda: playing_state(bot, seq), 10, "playing from 10 s")
    settled_errors(setup, "seek while playing")

    seq = bot.current()["seq"]
    bot.send("/rate 1")
    wait_for(lambda: playing_state(bot, seq, rate=1), 5, "rate 1")
    settled_errors(setup, "rate 1")


def test_a_pause_and_a_seek_in_mpv_reach_the_room(setup):
    bot, ipc = setup["bot"], setup["ipc"]
    wait_for(lambda: bot.current()["playback"]["status"] == "playing", 10, "the room playing")
    # mpv playing along (not paused for a start of its own, when a pause would change nothing).
    wait_for(lambda: ipc.get("pause") is False and abs(error_now(setup, bot.current()) or 1e9) <= SETTLED_MS, 10,
             "mpv playing with the room")
    seq = bot.current()["seq"]
    ipc.command("set_property", "pause", True)  # what mpv's space bar does  # what mpv's space bar does
    state = wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["status"] == "paused" and s, 5,
                     "the room paused by mpv's user")
    assert state["playback"]["cause"] == "pause"
    assert ipc.get("pause") is True  # and mpv stays paused with the room

    seq = state["seq"]
    ipc.command("seek", 42, "absolute+exact")  # what mpv's arrow keys do, to a known place
    state = wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["cause"] == "seek" and s, 5,
                     "the room moved by mpv's user")
    assert abs(state["playback"]["position"] - 42) < 0.05

    seq = state["seq"]
    ipc.command("keypress", "space")  # mpv's own key: play again, for everyone
    wait_for(lambda: playing_state(bot, seq), 10, "the room playing again from mpv's key")
    settled_errors(setup, "play from mpv's key")
    assert not [e for e in bot.errors() if e["code"] not in ("stale-report",)]


def test_all_transitions_together(setup):
    """The p95 over every settled reading of every transition (about 120)."""
    errors = setup["errors"]
    assert len(errors) >= 60, f"only {len(errors)} readings: an earlier test stopped short"
    magnitudes = sorted(abs(e) for e in errors)
    p95 = magnitudes[math.ceil(0.95 * len(magnitudes)) - 1]
    setup["figures"]["all"] = {"p95_ms": round(p95, 2), "max_ms": round(magnitudes[-1], 2),
                               "mean_ms": round(statistics.mean(errors), 2), "samples": len(errors)}
    print(f"all: {setup['figures']['all']}")
    assert p95 <= P95_BOUND_MS, setup["figures"]["all"]
