"""`cowatch watch` with a real, headless mpv (--vo=null --ao=null), a second
client of mpv's IPC socket, test clips made with ffmpeg, and mpv's error against
the room's timeline (the room driven by support/bot.py's Bot): what the mpv
suites (Tests/mpv), the TLS clients' test and the browser-and-mpv spread share.
COWATCH_BIN names the cowatch binary."""
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

import pytest

from support.harness import free_port, wait_until

BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")

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


def work_folder(prefix):
    """A fresh folder for one mpv test's files; the test is skipped, with the
    reason, when mpv or ffmpeg is missing."""
    if not shutil.which("mpv") or not shutil.which("ffmpeg"):
        pytest.skip("mpv or ffmpeg is missing (commands/setup installs them)")
    return tempfile.mkdtemp(prefix=prefix)


def chosen_port(offset):
    """COWATCH_MPV_PORT + `offset` when set (each test of the mpv suite has
    its own offsets), else a free port."""
    base = os.environ.get("COWATCH_MPV_PORT")
    return int(base) + offset if base else free_port()


def make_clip(path, seconds, fps=30, size="320x180", frequency=440, crf=30, faststart=True):
    """A test pattern with a tone, `seconds` long, in H.264 and AAC."""
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=size={size}:rate={fps}:duration={seconds}",
                    "-f", "lavfi", "-i", f"sine=frequency={frequency}:duration={seconds}",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", str(crf), "-g", str(fps), "-pix_fmt", "yuv420p",
                    "-c:a", "aac", "-shortest", *(["-movflags", "+faststart"] if faststart else []), str(path)],
                   check=True, timeout=180)


class MpvIPC:
    """A second client of mpv's IPC socket: what the test reads and does in mpv."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next = 1000

    @classmethod
    def attempt(cls, path):
        """A client, or None while mpv does not listen yet."""
        try:
            return cls(path)
        except OSError:
            return None

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


class Watcher:
    """One `cowatch watch ROOM [FILE]` with its own headless mpv (its socket in a
    folder of its own under `work`, its output in watch.log there), and a second
    IPC client of that mpv. `env`: the environment (this one's by default);
    `binary`: the cowatch binary (COWATCH_BIN's by default)."""

    def __init__(self, work, room_url, name, *args, env=None, binary=None):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"{name}-", dir=work)
        self.log_path = os.path.join(self.dir, "watch.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen([binary or BIN, "watch", room_url, *args, "--name", name,
                                         "--mpv-option", "vo=null", "--mpv-option", "ao=null"],
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**(env or os.environ), "TMPDIR": self.dir + "/"})
        path = os.path.join(self.dir, f"cowatch-mpv-{self.process.pid}.sock")
        wait_until(lambda: os.path.exists(path) or self.process.poll() is not None, 15, f"{name}'s mpv socket")
        assert self.process.poll() is None, self.output()
        self.ipc = wait_until(lambda: MpvIPC.attempt(path), 10, f"{name}'s mpv IPC")

    def output(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        self.ipc.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def expected(state, at_ms):
    """Where the room's timeline is at `at_ms` (epoch ms) by `state`."""
    p = state["playback"]
    if p["status"] != "playing" or at_ms <= p["at"]:
        return p["position"]
    return p["position"] + p["rate"] * (at_ms - p["at"]) / 1000


def error_now(ctx, state):
    """mpv's error against the room's timeline now (ms), or None for a slow reading."""
    position, at_ms, rtt = ctx["ipc"].position()
    if position is None or rtt > SAMPLE_RTT_MS:
        return None
    return (position - expected(state, at_ms)) * 1000


def settled_errors(ctx, what):
    """How long mpv took to come within SETTLED_MS of the room's timeline after
    the state's instant, then its error (ms) sampled ten times a second for
    MEASURE_S; kept in `ctx`'s figures and errors."""
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
