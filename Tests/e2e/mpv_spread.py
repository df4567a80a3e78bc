#!/usr/bin/env python3
"""mpv among browser windows (run by `commands/e2e --with-mpv`): how closely
`cowatch watch` with a real, headless mpv keeps with two headless Chromium
windows in one room.

A real `cowatch serve`, the range server of Tests/support/media_server.py with a
clip that has sound (mpv's smooth position is its audio's), two Chromium
windows (each its own browser process, as Tests/e2e/run_e2e.py opens them) and
`cowatch watch ROOM --mpv-option vo=null --mpv-option ao=null` on one room. The
windows type /watch, /play, /pause, /seek 30, /play, /rate 1.5, /seek 60,
/rate 1, /pause and /play again into their chat lines (with --silent the clip
has no sound, as the other browser tests' clip, and mpv's position is then
`time-pos`). After each transition:

- settled: both windows show the state and have applied it (room_run.RoomRun.settled),
  and mpv, asked over its own IPC socket (a second connection beside
  cowatch's), has too: held within a frame of the position, or playing, not
  seeking nor waiting for its cache, at the room's rate (within the 6 % of a
  nudge) and nearer the timeline than a re-join's 250 ms;
- then SETTLE_S later (measure.py's), ROUNDS rounds SAMPLE_GAP_S apart: mpv's
  `audio-pts` (and `time-pos`, the frame's timestamp) over the IPC socket, each
  stamped with this process's clock at the middle of its round trip, and each
  window's `video.currentTime` stamped with `performance.timeOrigin +
  performance.now()`, the same system clock (checked at the start: each
  window's clock against this process's). Every reading is brought to the
  round's instant T, position + rate x (T - t_reading), and the round gives mpv
  against the windows (the larger of |mpv - A| and |mpv - B|), mpv's signed
  offset from the windows' mean, and the windows' own spread |A - B|.
  Paused, a screen shows a frame: mpv's `time-pos` is taken against the
  frame whose span holds each window's position (what Chromium shows there).

At a coordinated start the instant each player really left the start position
is measured too (read 150 ms after `at`, extrapolated back), as run_e2e does.

    python3 Tests/e2e/mpv_spread.py --cowatch BIN [--runs N] [--rounds N] [--silent]
        [--record docs/benchmarks.md] [--results FILE.json] [--port-base PORT]
        [--scratch DIR]

E2E_DEBUG=1 prints each window's own account of every coordinated start.

Exit status 0 when every functional check passed and the pooled median of mpv
against the windows is within CI_BOUND_MS (a robust bound, as run_e2e's).
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
REPO = HERE.parent.parent

from browser_server import serve_for_browsers  # noqa: E402
from browser_window import Window  # noqa: E402
from figures import machine_description  # noqa: E402
from measure import SAMPLE_GAP_S, SETTLE_S  # noqa: E402
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402
from report import Failure, failure_words, log  # noqa: E402
from room_run import RoomRun  # noqa: E402
from timecode_media import make_media  # noqa: E402
from support.mpv import Watcher  # noqa: E402
from support.records import record_blocks  # noqa: E402

ROUNDS = 20  # per transition: two seconds at SAMPLE_GAP_S, as the issue's own measurement
MPV_SAMPLE_RTT_MS = 4.0  # an mpv reading whose round trip is slower is taken again
CLOCK_TRIES = 30  # round trips to compare a window's clock with this process's
SETTLE_TIMEOUT_S = 20.0
REJOIN_S = 0.25  # beyond this from the timeline mpv re-joins (Sources/CowatchPlayer/Steadiness.swift)
NUDGE_MAX = 0.06  # the largest speed nudge (Steadiness.nudgeMax)
CI_BOUND_MS = 15.0  # the pooled median of mpv against the windows (measure.CI_BOUNDS' median)
SECTION = "## Desktop player among browser windows"


def percentile(values, fraction):
    """Nearest rank, as Tests/mpv does."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def describe(values):
    return {"median": statistics.median(values), "p95": percentile(values, 0.95), "max": max(values), "n": len(values)}


class Mpv(Watcher):
    """`cowatch watch` starting a headless mpv (support/mpv.py), and this
    harness's readings of it over its own IPC connection."""

    def __init__(self, binary, room_url, folder):
        super().__init__(folder, room_url, "mpv", "--verbose", binary=binary)

    def get(self, name):
        return self.ipc.get(name)

    def reading(self, name):
        """(value, epoch ms at the middle of the round trip); a slow round trip is taken again."""
        for _ in range(5):
            message, sent, received = self.ipc.command("get_property", name)
            if (received - sent) * 1000 <= MPV_SAMPLE_RTT_MS:
                break
        return message.get("data"), (sent + received) / 2 * 1000

    def log_tail(self, lines=30):
        return "\n".join(self.output().splitlines()[-lines:])

    def close(self):
        self.stop()


def shown_frame(position, fps):
    """The frame a paused <video> shows at `position`: the one whose span holds
    it (checked in Chromium 156: seeked to 10.05 at 30 fps, its frame callback
    says 10.033), with a tenth of a ms for timestamps' rounding."""
    return math.floor(position * fps + 1e-4 * fps) / fps


def timeline(playback, at_ms):
    """Where the room's state says the video is at `at_ms` (epoch ms)."""
    if playback["status"] != "playing" or at_ms <= playback["at"]:
        return playback["position"]
    return playback["position"] + playback["rate"] * (at_ms - playback["at"]) / 1000


def clock_offset(window):
    """The window's clock (performance.timeOrigin + performance.now()) minus this
    process's (time.time()), from the quickest of CLOCK_TRIES round trips:
    (offset ms, half that round trip ms)."""
    best = None
    for _ in range(CLOCK_TRIES):
        before = time.time() * 1000
        page = window.js("return performance.timeOrigin + performance.now()")
        after = time.time() * 1000
        if best is None or after - before < best[1] * 2:
            best = (page - (before + after) / 2, (after - before) / 2)
    return best


class Scenario:
    def __init__(self, server, media, args, number):
        self.server, self.media, self.args, self.number = server, media, args, number
        self.room = f"mpv-among-windows-{number}"
        self.run = RoomRun(server, media, args)  # the windows' waits and settling
        self.run.room = self.room
        self.mpv = None
        self.rows = []
        self.starts = []
        self.clocks = []
        self.checks = []

    def check(self, ok, what):
        self.checks.append({"ok": bool(ok), "what": what})
        if not ok:
            raise Failure(what)

    # settling

    def mpv_settled(self, playback):
        """None when mpv has applied `playback`, else what it is still doing."""
        paused, seeking, cache = self.mpv.get("pause"), self.mpv.get("seeking"), self.mpv.get("paused-for-cache")
        if seeking or cache:
            return "seeking" if seeking else "waiting for its cache"
        if playback["status"] != "playing":
            position = self.mpv.get("time-pos")
            if not paused:
                return f"playing at {position}"
            # mpv's held position is a frame's timestamp: the player counts it
            # held within a frame either way (Steadiness.holdTolerance), as an
            # exact seek lands on the first frame at or after the target and a
            # pause keeps the frame shown.
            fps = self.mpv.get("container-fps") or 30
            if position is None or abs(position - playback["position"]) > 1 / fps + 0.001:
                return f"held at {position}, not {playback['position']}"
            return None
        if paused:
            return "paused"
        speed = self.mpv.get("speed") or 0
        if abs(speed - playback["rate"]) > playback["rate"] * NUDGE_MAX + 1e-6:
            return f"speed {speed}"
        position, at_ms = self.mpv.reading(self.args.position_property)
        if position is None or abs(position - timeline(playback, at_ms)) > REJOIN_S:
            return f"at {position}, the timeline at {timeline(playback, at_ms):.3f}"
        return None

    def settle(self, status, after_seq, what):
        """Both windows and mpv have applied the room's newest state (past
        `after_seq`): returns that state and how long after its `at` (or after
        the command) everyone was there."""
        self.run.wait(lambda rs: all((r["seq"] or 0) > after_seq for r in rs), SETTLE_TIMEOUT_S,
                      f"{what}: the new state in both windows")
        readings = self.run.settled(status)
        playback = readings[0]["playback"]
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while (doing := self.mpv_settled(playback)) is not None:
            if time.monotonic() > deadline:
                raise Failure(f"{what}: mpv did not apply the room's state within {SETTLE_TIMEOUT_S:g} s "
                              f"({doing}; the state: {json.dumps(playback)})\n{self.mpv.log_tail()}")
            time.sleep(0.05)
        return readings[0]["seq"], playback, time.time() * 1000

    # measuring

    def start(self, after_seq):
        """At a coordinated start: when each player left the start position,
        minus `at` (ms), or "late" for one still paused 150 ms after `at`."""
        readings = self.run.wait(lambda rs: len({r["seq"] for r in rs}) == 1 and rs[0]["seq"] > after_seq
                                 and rs[0]["playback"]["status"] == "playing", SETTLE_TIMEOUT_S, "the start")
        playback = readings[0]["playback"]
        at, position, rate = playback["at"], playback["position"], playback["rate"]
        wake = at / 1000 + 0.15 - time.time()
        if wake > 0:
            time.sleep(wake)
        errors = {}
        mpv_position, mpv_t = self.mpv.reading(self.args.position_property)
        mpv_paused = self.mpv.get("pause")
        errors["mpv"] = ("late" if mpv_paused or mpv_position is None
                         else mpv_t - (mpv_position - position) / rate * 1000 - at)
        for window in self.run.windows:
            r = window.read()
            errors[window.label] = ("late" if r["paused"] or r["seeking"]
                                    else r["t"] - (r["position"] - position) / rate * 1000 - at)
        self.starts.append(errors)
        if os.environ.get("E2E_DEBUG"):
            for window in self.run.windows:
                log(f"    {window.label}: " + " | ".join(window.js("return window.cowatch.sync.history.slice(-12)")))
        log("  start, each minus at: " + ", ".join(
            f"{k} {v:+.1f} ms" if v != "late" else f"{k} late" for k, v in errors.items())
            + f" (lead {at - readings[0]['t']:.0f} ms)")
        return errors

    def measure(self, name, status, after_seq, start=False):
        started = time.time() * 1000
        start_errors = self.start(after_seq) if start else None
        seq, playback, settled_at = self.settle(status, after_seq, name)
        settled_after = settled_at - (playback["at"] if status == "playing" else started)
        time.sleep(SETTLE_S)  # the measurement's own settle window (run_e2e's)
        playing = status == "playing"
        rate = playback["rate"] if playing else 0.0
        vs, offsets, ab, frames = [], [], [], []
        against_timeline = []  # mpv, A, B minus the room's timeline at T (ms): who is off, when the spread is large
        stand_ins = 0  # rounds where mpv had no audio position
        fps = self.mpv.get("container-fps") or 30
        for _ in range(self.args.rounds):
            # mpv read first: its reading's instant is the round's T.
            smooth, t = self.mpv.reading(self.args.position_property if playing else "time-pos")
            frame, t_frame = self.mpv.reading("time-pos")
            a, b = (w.read() for w in self.run.windows)
            for r in (a, b):
                if r["seq"] != seq:
                    raise Failure(f"{name}: the room moved on (seq {r['seq']}, measuring {seq})")
            if smooth is None:
                # No audio position: mpv is re-joining (seeking, its audio
                # restarting), which happens on a machine that starves it. The
                # frame's timestamp stands in, so the spread shows the re-join.
                smooth, t = frame, t_frame
                stand_ins += 1
            if smooth is None:
                raise Failure(f"{name}: mpv has no position at all (neither {self.args.position_property} nor time-pos)")
            pa = a["position"] + rate * (t - a["t"]) / 1000
            pb = b["position"] + rate * (t - b["t"]) / 1000
            pf = frame + rate * (t - t_frame) / 1000
            frames.append((pf - (pa + pb) / 2) * 1000)
            if not playing:
                # Paused, a screen shows a frame: mpv's (`time-pos`) against the
                # one Chromium shows for each window's position, the frame whose
                # span holds it (the clip's frames are every 1/fps from 0).
                pa, pb = shown_frame(pa, fps), shown_frame(pb, fps)
            vs.append(max(abs(smooth - pa), abs(smooth - pb)) * 1000)
            offsets.append((smooth - (pa + pb) / 2) * 1000)
            ab.append(abs(pa - pb) * 1000)
            expected = timeline(playback, t)
            against_timeline.append([round((p - expected) * 1000, 2) for p in (smooth, pa, pb)])
            time.sleep(SAMPLE_GAP_S)
        row = {"transition": name, "status": status, "rate": playback["rate"], "settled_after_ms": round(settled_after),
               "mpv_vs_windows": describe(vs), "mpv_offset": describe(offsets), "windows": describe(ab),
               "mpv_frame_offset": describe(frames), "start": start_errors, "time_pos_stand_ins": stand_ins, "samples": {"vs": vs, "ab": ab, "against_timeline": against_timeline}}
        self.rows.append(row)
        m, o, w = row["mpv_vs_windows"], row["mpv_offset"], row["windows"]
        log(f"  {name:<26} mpv vs windows median {m['median']:5.1f} p95 {m['p95']:5.1f} max {m['max']:5.1f} ms; "
            f"mpv - windows {o['median']:+5.1f} ms; A-B median {w['median']:4.1f} p95 {w['p95']:4.1f} "
            f"max {w['max']:4.1f} ms; time-pos - windows {row['mpv_frame_offset']['median']:+5.1f} ms; "
            f"settled {settled_after:.0f} ms" + (f"; {stand_ins} rounds without an audio position" if stand_ins else ""))
        return row

    # the story

    def play(self):
        if self.args.scratch:
            Path(self.args.scratch).mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f"cowatch-mpv-spread-{self.number}-", dir=self.args.scratch)).resolve()
        base = self.args.port_base
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                self.run.windows = list(pool.map(
                    lambda pair: Window(pair[0], driver_port=base + 2 + pair[1] if base else 0), [("A", 0), ("B", 1)]))
            for window, name in zip(self.run.windows, ["alice", "bob"]):
                window.open(self.server.url(f"/rooms/{self.room}?name={name}"))
            self.run.wait(lambda rs: all(r["connection"] == "open" for r in rs), 15, "both windows connected")
            self.mpv = self.open_player(folder)
            self.run.wait(lambda rs: all(r["members"] >= 3 for r in rs), 15, "mpv in the room")
            self.run.wait(lambda rs: all(r["rtt"] is not None and r["rtt"] < 1000 for r in rs), 5, "clock sync")
            for window in self.run.windows:
                offset, half = clock_offset(window)
                self.clocks.append({"window": window.label, "offset_ms": offset, "within_ms": half})
            log("  clocks, each window's minus this process's: " + ", ".join(
                f"{c['window']} {c['offset_ms']:+.2f} ± {c['within_ms']:.2f} ms" for c in self.clocks))
            self.story(*self.run.windows, self.media.url(self.args.media_name))
            late = [k for s in self.starts for k, v in s.items() if v == "late"]
            self.check(not late, "every coordinated start found every player playing 150 ms after `at`"
                       + (f" (late: {', '.join(late)})" if late else ""))
            return None
        except Exception as error:  # noqa: BLE001 - report and fail, never hang
            return failure_words(error)
        finally:
            if self.mpv:
                self.mpv.close()
            for window in self.run.windows:
                window.close()
            if not self.args.scratch:
                shutil.rmtree(folder, ignore_errors=True)  # else kept: mpv's log, `cowatch watch --verbose`'s account

    def open_player(self, folder):
        """The desktop player measured against the windows."""
        return Mpv(self.args.cowatch, self.server.url(f"/rooms/{self.room}"), folder)

    def typed(self, window, line):
        """`line` typed into `window`'s chat line; the room's seq before it."""
        seq = self.run.seq()
        window.type(line)
        return seq

    def story(self, a, b, media_url):
        """The transitions, each measured once settled."""
        typed = self.typed
        seq = typed(a, f"/watch {media_url} Test pattern with sound")
        self.measure("/watch (paused at 0)", "paused", seq)
        duration = self.run.wait(lambda rs: rs[0]["playback"] is not None and self.mpv.get("duration"), 15,
                                 "mpv to load the item")
        self.check(duration, "mpv loaded the room's item")
        self.measure("/play (coordinated start)", "playing", typed(b, "/play"), start=True)
        self.measure("/pause", "paused", typed(a, "/pause"))
        self.measure("/seek 30 (paused)", "paused", typed(b, "/seek 30"))
        self.measure("/play from 30", "playing", typed(a, "/play"), start=True)
        self.measure("/rate 1.5", "playing", typed(b, "/rate 1.5"))
        self.check(abs(self.mpv.get("speed") - 1.5) <= 1.5 * NUDGE_MAX, "mpv plays at the room's rate 1.5")
        self.measure("/seek 60 while playing", "playing", typed(a, "/seek 60"))
        self.measure("/rate 1", "playing", typed(b, "/rate 1"))
        self.measure("/pause again", "paused", typed(a, "/pause"))
        self.measure("/play again", "playing", typed(b, "/play"), start=True)


def run_scenarios(kind, server, media, args):
    """`args.runs` scenarios of `kind` one after the other, each with fresh
    windows, player and room: what each measured, or why it failed."""
    runs = []
    for number in range(1, args.runs + 1):
        log(f"run {number} of {args.runs} (load average {os.getloadavg()[0]:.1f}):")
        scenario = kind(server, media, args, number)
        load = os.getloadavg()[0]
        failure = scenario.play()
        if failure:
            log(f"  FAILED: {failure}")
            log("  server log (tail):\n" + server.log_tail(15))
        runs.append({"number": number, "failure": failure, "rows": scenario.rows, "starts": scenario.starts,
                     "clocks": scenario.clocks, "checks": scenario.checks, "rounds": args.rounds,
                     "load_before": load, "load_after": os.getloadavg()[0]})
    return runs


# MARK: figures


def pooled(runs, key, status=None):
    values = [v for run in runs for row in run["rows"] if status is None or row["status"] == status
              for v in row["samples"][key]]
    return describe(values) if values else None


def summarize(runs):
    names = list(dict.fromkeys(row["transition"] for run in runs for row in run["rows"]))
    transitions = []
    for name in names:
        rows = [row for run in runs for row in run["rows"] if row["transition"] == name]
        vs = [v for row in rows for v in row["samples"]["vs"]]
        ab = [v for row in rows for v in row["samples"]["ab"]]
        transitions.append({
            "transition": name, "status": rows[0]["status"], "rate": rows[0]["rate"],
            "mpv_vs_windows": describe(vs), "windows": describe(ab),
            "mpv_offset_medians": [row["mpv_offset"]["median"] for row in rows],
            "mpv_frame_offset_medians": [row["mpv_frame_offset"]["median"] for row in rows],
            "settled_after_ms": [row["settled_after_ms"] for row in rows],
            "starts": [row["start"] for row in rows if row["start"]],
            "time_pos_stand_ins": sum(row.get("time_pos_stand_ins", 0) for row in rows),
        })
    # Each player against the room's timeline, playing: which side a spread comes from.
    mpv_off = [abs(r[0]) for run in runs for row in run["rows"] if row["status"] == "playing"
               for r in row["samples"]["against_timeline"]]
    windows_off = [abs(v) for run in runs for row in run["rows"] if row["status"] == "playing"
                   for r in row["samples"]["against_timeline"] for v in r[1:]]
    return {"transitions": transitions, "all": {"vs": pooled(runs, "vs"), "ab": pooled(runs, "ab")},
            "playing": {"vs": pooled(runs, "vs", "playing"), "ab": pooled(runs, "ab", "playing")},
            "timeline": {"mpv": describe(mpv_off) if mpv_off else None,
                         "windows": describe(windows_off) if windows_off else None}}


def fmt(d):
    return f"{d['median']:.1f} / {d['p95']:.1f} / {d['max']:.1f} ms"


INTRO = (
    "`cowatch watch` with a real, headless mpv (`--vo=null --ao=null`) and two headless Chromium windows "
    "(each its own browser process) in one room of a real `cowatch serve`, all on one machine, measured by "
    "`commands/e2e --with-mpv` (`Tests/e2e/mpv_spread.py`). The windows type each command; once it has "
    f"settled (both windows and mpv have applied the state, mpv as read over its own IPC socket), {SETTLE_S:g} s "
    f"later, rounds {SAMPLE_GAP_S * 1000:.0f} ms apart read mpv's position and `time-pos` (stamped at the middle "
    "of an IPC round trip) and each window's `video.currentTime` (stamped with `performance.timeOrigin + "
    "performance.now()`, the same system clock), bring them to one instant at the room's rate, and take mpv "
    "against the windows (the larger of |mpv - A| and |mpv - B|) beside the windows' own spread |A - B|. "
    "One block per clip: with sound (H.264 and AAC; mpv's position is `audio-pts`, which moves smoothly as "
    "`currentTime` does) and silent (`--silent`, H.264 alone, the clip of the other browser tests; mpv's "
    "position is `time-pos`, the timestamp of a frame, in 33 ms steps). Paused, the figure is the frame each "
    "shows: mpv's `time-pos` against the frame whose span holds each window's `currentTime` (the frame Chromium "
    "shows there); the `time-pos` column is against the windows' positions themselves.")
ABOUT = {"sound": "a 30 fps H.264 clip with an AAC tone; mpv's position playing: `audio-pts`",
         "silent": "the same clip without sound (`--silent`); mpv's position playing: `time-pos`"}


def record(path, command, runs, summary, machine, mpv_version, commit, variant):
    """Writes this run's block (`variant`: sound or silent) into SECTION of
    `path`, replacing that variant's earlier block and keeping the rest."""
    loads = ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in runs)
    failed = [f"run {run['number']}: {run['failure'].splitlines()[0]}" for run in runs if run["failure"]]
    lines = [
        f"<!-- mpv-among-windows {variant} -->", f"### {variant}", "",
        f"{ABOUT[variant][0].upper()}{ABOUT[variant][1:]}.", "",
        f"Run: `{command}` at commit {commit} on {time.strftime('%Y-%m-%d')}; machine: {machine}; {mpv_version}; "
        f"{len(runs)} runs of {runs[0]['rounds']} rounds per transition; load average (1 min) before -> after "
        f"each run: {loads}." + (f" **Failed:** {'; '.join(failed)}" if failed else ""),
        "",
        "| figure (median / p95 / max) | mpv against the windows | window A against B |",
        "|---|---|---|",
        f"| every settled reading ({summary['all']['vs']['n']}) | {fmt(summary['all']['vs'])} | "
        f"{fmt(summary['all']['ab'])} |",
        f"| playing only ({summary['playing']['vs']['n']}) | {fmt(summary['playing']['vs'])} | "
        f"{fmt(summary['playing']['ab'])} |",
    ]
    if summary["timeline"]["mpv"]:
        lines.append(f"| each against the room's timeline, playing: mpv, windows | {fmt(summary['timeline']['mpv'])} | "
                     f"{fmt(summary['timeline']['windows'])} |")
    lines += [
        "",
        "| transition | state | mpv against the windows | A against B | mpv - windows' mean (median, each run) "
        "| `time-pos` - windows' mean (median, each run) | settled after (each run) |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in summary["transitions"]:
        state = t["status"] + (f" at {t['rate']:g}x" if t["status"] == "playing" else "")
        lines.append(f"| {t['transition']} | {state} | {fmt(t['mpv_vs_windows'])} | {fmt(t['windows'])} | "
                     + " / ".join(f"{v:+.1f}" for v in t["mpv_offset_medians"]) + " ms | "
                     + " / ".join(f"{v:+.1f}" for v in t["mpv_frame_offset_medians"]) + " ms | "
                     + " / ".join(f"{v / 1000:.1f}" for v in t["settled_after_ms"]) + " s |")
    stand_ins = [f"{t['transition']} ({t['time_pos_stand_ins']})" for t in summary["transitions"]
                 if t["time_pos_stand_ins"]]
    if stand_ins:
        lines += ["", "Rounds in which mpv had no audio position (re-joining: its `time-pos` stands in): "
                  + ", ".join(stand_ins) + "."]
    starts = [s for t in summary["transitions"] for s in t["starts"]]
    if starts:
        def show(v):
            return "late" if v == "late" else f"{v:+.0f}"
        lines += ["", "Coordinated starts, each player's start minus `at` (ms; mpv, A, B): "
                  + "; ".join(", ".join(show(s[k]) for k in ("mpv", "A", "B")) for s in starts) + "."]
    clocks = [c for run in runs for c in run["clocks"]]
    if clocks:
        lines += ["", "Each window's clock minus the harness's, from the quickest of "
                  f"{CLOCK_TRIES} round trips: " + ", ".join(f"{c['offset_ms']:+.1f} ± {c['within_ms']:.1f}"
                                                             for c in clocks) + " ms."]
    lines += ["", f"<!-- /mpv-among-windows {variant} -->"]
    block = "\n".join(lines)
    record_blocks(path, SECTION, INTRO, [(f"mpv-among-windows {variant}", block)])
    log(f"recorded: {path} ({SECTION[3:]}, {variant})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cowatch", required=True, help="the cowatch binary")
    parser.add_argument("--with-mpv", action="store_true", help="(commands/e2e's flag that runs this scenario)")
    parser.add_argument("--runs", type=int, default=1, help="how many times to run the scenario (fresh windows, "
                                                            "mpv and room each time)")
    parser.add_argument("--silent", action="store_true",
                        help="a clip without sound (the one the other browser tests play): mpv's position is then "
                             "`time-pos`, a frame's timestamp")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="readings per transition")
    parser.add_argument("--record", help="write the figures to this Markdown file, under " + repr(SECTION[3:]))
    parser.add_argument("--results", help="write the figures as JSON here")
    parser.add_argument("--port-base", type=int, default=0,
                        help="the server on this port, the media on the next, the windows' drivers on the two after "
                             "(0: free ones)")
    parser.add_argument("--web-root", help="serve the browser client from here (COWATCH_WEB_ROOT) instead of the bundle")
    parser.add_argument("--time-limit", type=float, default=240, help="seconds each run may take")
    parser.add_argument("--media-dir", default=str(REPO / ".build-e2e" / "e2e-media"))
    parser.add_argument("--scratch", default=None,
                        help="a folder for mpv's socket, `cowatch watch --verbose`'s log (kept after the run) "
                             "and the browsers' profiles (default: temporary ones, removed)")
    args = parser.parse_args()
    if args.runs < 1 or args.rounds < 2:
        parser.error("--runs takes 1 or more, --rounds 2 or more")
    command = os.environ.get("E2E_COMMAND") or "python3 Tests/e2e/mpv_spread.py " + " ".join(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for tool in ("chromium", "/usr/bin/chromedriver", "ffmpeg", "mpv"):
        if not shutil.which(tool):
            sys.exit(f"mpv_spread: {tool} is missing (commands/setup --browser installs it)")

    if args.scratch:
        # The browsers' profiles (browser_window.Window's temporary folders) go there too.
        profiles = Path(args.scratch).resolve() / "profiles"
        profiles.mkdir(parents=True, exist_ok=True)
        tempfile.tempdir = str(profiles)
    load_before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    log(f"load average: {load_before} on {os.cpu_count()} cores")
    media_file = make_media(Path(args.media_dir), audio=not args.silent)
    args.media_name = media_file.name
    # Playing, mpv's position is its audio's, which moves smoothly; without
    # sound there is only the frame's timestamp (33 ms steps at 30 fps).
    args.position_property = "time-pos" if args.silent else "audio-pts"
    mpv_version = subprocess.run(["mpv", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    mpv_version = " ".join(mpv_version.split()[:2])
    runs = []
    started = time.monotonic()
    base = args.port_base
    with MediaServer(media_file.parent, RangeRequestHandler, port=base + 1 if base else 0) as media, \
            serve_for_browsers(args.cowatch, args.web_root, port=base) as server:
        log(f"server: {server.url('/')}  media: {media.url(media_file.name)}")
        runs = run_scenarios(Scenario, server, media, args)

    measured = [run for run in runs if run["rows"]]
    summary = summarize(measured) if measured else None
    failures = sum(1 for run in runs if run["failure"])
    log("")
    if summary:
        log(f"mpv among windows ({len(runs)} runs, {time.monotonic() - started:.0f} s; load average before "
            f"{load_before}, now {' / '.join(f'{x:.1f}' for x in os.getloadavg())}):")
        log(f"  {'transition':<26} {'mpv vs windows (median/p95/max)':<34} {'A vs B (median/p95/max)'}")
        for t in summary["transitions"]:
            log(f"  {t['transition']:<26} {fmt(t['mpv_vs_windows']):<34} {fmt(t['windows'])}")
        log(f"  {'every settled reading':<26} {fmt(summary['all']['vs']):<34} {fmt(summary['all']['ab'])}")
        median = summary["all"]["vs"]["median"]
        ok = median < CI_BOUND_MS
        failures += 0 if ok else 1
        log(f"  CI bound: median of mpv against the windows {median:.1f} ms < {CI_BOUND_MS:g} ms: "
            f"{'ok' if ok else 'EXCEEDED'}")
    if args.results:
        Path(args.results).write_text(json.dumps({"command": command, "runs": runs, "summary": summary}, indent=2))
    if args.record and summary:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=REPO).stdout.strip()
        machine = re.sub(r"; load average before the run.*$", "", machine_description(load_before))
        record(args.record, command, measured, summary, machine, mpv_version, commit, "silent" if args.silent else "sound")
    passed = sum(1 for run in runs for c in run["checks"] if c["ok"])
    log(f"{passed} checks passed, {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
