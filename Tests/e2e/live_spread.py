#!/usr/bin/env python3
"""How closely three windows follow an HLS live stream together.

A live stream made by ffmpeg in real time (live_stream.py), a real
`cowatch serve`, three headless Chromium windows (each its own browser
process) on one room: `/watch` of the live playlist, `/play`, `/pause`,
`/play` again (everyone restarts at the live edge: the paused windows load the
stream again and wait for the room), a late joiner, and `/seek`, which the
room refuses for a live item, in words. After each transition settles, every
window reads its position in stream time (the page's player readings,
players/live.js: the same frame has the same stream time in every window)
with the instant of the reading; the readings are extrapolated to one instant
and the spread is max - min, as Tests/e2e/run_e2e.py measures files.

    python3 Tests/e2e/live_spread.py --cowatch BIN [--record docs/benchmarks.md]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from live_stream import LiveStream, PLAYLIST_SEGMENTS, SEGMENT_SECONDS  # noqa: E402
from browser_server import serve_for_browsers  # noqa: E402
from browser_window import Window  # noqa: E402
from figures import machine_description  # noqa: E402
from report import Failure, log  # noqa: E402
from support.harness import settled, wait_until  # noqa: E402
from support.records import record_section  # noqa: E402

REPO = HERE.parent.parent
SETTLE_S = 1.0
SAMPLES = 10
SAMPLE_GAP_S = 0.1
WAIT_S = 40  # loading a live stream again takes a few seconds (playlist, segments, stream time)

READ_JS = """
const c = window.cowatch;
const s = c && c.sync;
const t0 = performance.timeOrigin + performance.now();
const r = s ? s.readings() : null;
const t1 = performance.timeOrigin + performance.now();
const me = c && c.model.participants.get(c.model.meId);
const log = document.getElementById('log');
return {
  t: (t0 + t1) / 2, position: r ? r.currentTime : null, paused: r ? r.paused : null, readyState: r ? r.readyState : 0,
  live: r ? r.live === true : false, liveEdge: r ? r.liveEdge ?? null : null,
  seq: s && s.state ? s.state.seq : null,
  playback: s && s.state ? s.state.playback : null,
  activity: s && s.state && s.state.session ? s.state.session.activity ?? null : null,
  mode: s ? s.mode : null, detail: s ? s.detail : null, joining: s ? !!s.join : false, running: s ? !!s.running : false,
  suspensions: me ? me.suspensions : null,
  seekHidden: document.getElementById('seek').hidden,
  chat: log ? log.textContent.slice(-600) : '',
};
"""


def spread_ms(readings, playing, rate):
    t = readings[0]["t"]
    positions = [r["position"] + (rate * (t - r["t"]) / 1000 if playing else 0) for r in readings]
    return (max(positions) - min(positions)) * 1000


class LiveRun:
    def __init__(self, server, live, args):
        self.server = server
        self.live = live
        self.args = args
        self.windows = []
        self.rows = []
        self.checks = []

    def read(self, windows=None):
        return [w.js(READ_JS) for w in (windows or self.windows)]

    def check(self, ok, what):
        self.checks.append((bool(ok), what))
        if not ok:
            raise Failure(what)

    def wait(self, predicate, what, windows=None, timeout=WAIT_S):
        seen = []

        def check():
            seen[:] = self.read(windows)
            return seen[:] if predicate(seen) else None

        def failure():
            detail = json.dumps([{k: r.get(k) for k in ("seq", "mode", "detail", "position", "paused", "readyState",
                                                        "joining", "running", "suspensions")} for r in seen])
            for w in (windows or self.windows):
                log(f"    {w.label}: " + " | ".join(w.js("return window.cowatch.sync.history.slice(-12)")))
            return Failure(f"timed out waiting for {what}: {detail}")
        return wait_until(check, timeout, what, interval=0.1, failure=failure)

    def settled(self, status, windows=None):
        """Every window shows the same latest state with `status`, a frame to
        show, and its player applied (harness.settled)."""
        def view(r):
            return {"seq": r["seq"], "status": (r["playback"] or {}).get("status"),
                    "busy": r["suspensions"] or r["position"] is None or r["readyState"] < 2 or r["joining"],
                    "running": r["mode"] == "playing" and not r["paused"] and r["running"], "held": r["paused"]}
        return self.wait(lambda readings: settled([view(r) for r in readings], status),
                         f"every window to settle {status}", windows)

    def measure(self, name, status, windows=None, note=""):
        windows = windows or self.windows
        began = time.monotonic()
        readings = self.settled(status, windows)
        settle_s = time.monotonic() - began
        time.sleep(SETTLE_S)  # part of what is measured: the spread this long after every window applied it
        rate = readings[0]["playback"]["rate"]
        spreads = []
        for _ in range(SAMPLES):
            spreads.append(spread_ms(self.read(windows), status == "playing", rate))
            time.sleep(SAMPLE_GAP_S)
        if statistics.median(spreads) > 200:  # an outlier: what each window did lately
            for w in windows:
                log(f"    {w.label}: " + " | ".join(w.js("return window.cowatch.sync.history.slice(-10)")))
                log(f"      fetched: " + " ".join(w.js(
                    "return performance.getEntriesByType('resource').map((e) => e.name.split('/').pop().split('?')[0])"
                    ".filter((n) => n.endsWith('.ts')).slice(0, 8)")) + f"; origin {w.js('return window.cowatch.sync.player.live && window.cowatch.sync.player.live.origin')}")
        row = {"transition": name, "windows": len(windows), "status": status, "median": statistics.median(spreads),
               "max": max(spreads), "settle": settle_s, "note": note}
        self.rows.append(row)
        log(f"  {name:<40} spread median {row['median']:6.1f} ms, max {row['max']:6.1f} ms"
            f"  (settled in {settle_s:4.1f} s, {len(windows)} windows, {status})")
        return row

    def open(self, label, name):
        window = Window(label)
        self.windows.append(window)
        window.open(self.server.url(f"/rooms/live-night?name={name}"))
        return window

    def seq(self):
        return max(r["seq"] or 0 for r in self.read())

    def run(self):
        a = self.open("A", "alice")
        b = self.open("B", "bob")
        self.wait(lambda rs: all(r["seq"] is not None for r in rs), "both windows in the room")
        log("transitions (spread = max - min of the players' stream times at one instant):")
        a.type(f"/watch {self.live.url} Live test pattern")
        readings = self.wait(lambda rs: all(r["activity"] and r["activity"].get("live") is True for r in rs),
                             "the room to know the item is live (/duration live)")
        self.check(all(r["seekHidden"] for r in self.read()), "no seek bar for a live item")
        edge = readings[0]["playback"]["position"]
        log(f"  live item known: room position {edge:.3f} (stream time: seconds since 2020)")

        seq = self.seq()
        a.type("/play")
        self.wait(lambda rs: all((r["seq"] or 0) > seq for r in rs), "the playing state")
        self.measure("/play (at the live edge)", "playing")

        a.type("/pause")
        self.measure("/pause (each holds its frame)", "paused")
        time.sleep(3)  # paused a while: the room's edge moves on, the windows' frames do not

        a.type("/play")
        self.measure("/play again (everyone rejoins the edge)", "playing",
                     note="the paused windows load the stream again and wait for the room")

        c = self.open("C", "carol")
        self.wait(lambda rs: rs[-1]["seq"] is not None, "the late joiner in the room")
        self.measure("late joiner (three windows)", "playing")

        seq = self.seq()
        a.type("/seek 10")
        refused = self.wait(lambda rs: "live stream has no timeline" in rs[0]["chat"], "the refusal of /seek, in words", [a])
        self.check("live stream has no timeline" in refused[0]["chat"], "/seek refused in words")
        self.check(self.seq() == seq, "a refused /seek changes nothing")
        self.measure("after the refused /seek", "playing")
        for w in (a, b, c):
            self.check(not [e for e in w.console_errors() if "favicon" not in e], f"no console errors in {w.label}")

    def close(self):
        for w in self.windows:
            w.close()


def record(path, summary):
    lines = [
        "## Browser: an HLS live stream",
        "",
        "Three headless Chromium windows (each its own browser process) on one room of a real `cowatch serve` "
        "follow an HLS live stream that ffmpeg makes in real time (`Tests/e2e/live_stream.py`: one-second "
        f"segments, {PLAYLIST_SEGMENTS} in the playlist, program dates), measured by `Tests/e2e/live_spread.py`. "
        "Positions are stream time (the page's player readings, `static/players/live.js`: each window's "
        "`currentTime` plus the start of the segment it began on), read with `performance.timeOrigin + "
        "performance.now()`, extrapolated to one instant; the spread is max - min, "
        f"{SAMPLES} rounds {SAMPLE_GAP_S * 1000:.0f} ms apart, {SETTLE_S:g} s after every window applied the "
        "transition. \"Settled in\" is from the command to every window applying it (a window that must load "
        "the stream again does so at the moment that makes it begin on a segment's first frame as the room "
        "reaches it, docs/browser.md \"Live streams\"). The figures vary from run to run with the load "
        "times: the accuracy of a live stream is that of timing a load, not of a seek or a rate nudge.",
        "",
        f"Run: `{summary['command']}` at commit {summary['commit']} on {summary['date']}; machine: {summary['machine']}.",
        "",
        "| transition | windows | state | spread median | spread max | settled in |",
        "|---|---|---|---|---|---|",
    ]
    for row in summary["rows"]:
        lines.append(f"| {row['transition']} | {row['windows']} | {row['status']} | {row['median']:.1f} ms | "
                     f"{row['max']:.1f} ms | {row['settle']:.1f} s |")
    lines += ["", f"Checks: {summary['checks']}.", ""]
    record_section(path, "\n".join(lines))
    log(f"recorded: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cowatch", required=True)
    parser.add_argument("--web-root")
    parser.add_argument("--record")
    args = parser.parse_args()
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    work = Path(tempfile.mkdtemp(prefix="cowatch-live-spread-"))
    run = None
    try:
        with LiveStream(work / "live") as live, serve_for_browsers(args.cowatch, args.web_root) as server:
            live.wait_segments(PLAYLIST_SEGMENTS, timeout=30)
            run = LiveRun(server, live, args)
            try:
                run.run()
            except Exception:
                log(server.log_tail())
                raise
    except Failure as failure:
        log(f"FAILED: {failure}")
        traceback.print_exc()
        return 1
    finally:
        if run:
            run.close()
    passed = sum(1 for ok, _ in run.checks if ok)
    log(f"checks: {passed}/{len(run.checks)} passed")
    if args.record:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        record(args.record, {
            "command": "python3 Tests/e2e/live_spread.py " + " ".join(sys.argv[1:]),
            "commit": commit, "date": time.strftime("%Y-%m-%d"), "machine": machine_description(load_before),
            "rows": run.rows, "checks": f"{passed}/{len(run.checks)} passed",
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
