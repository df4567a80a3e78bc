#!/usr/bin/env python3
"""Syncplay's player among browser windows (`commands/bench syncplay`): how
closely Debian's Syncplay client, in console mode driving a headless mpv
through `cowatch serve --syncplay-port`, keeps with two headless Chromium
windows in one room.

The harness is Tests/e2e/mpv_spread.py's (the same windows, readings, settling
of the windows and figures), with Syncplay's mpv in the place of `cowatch
watch`'s: the windows play the room's link (the range server's clip with
sound), Syncplay's client plays the same file from disk (an own source, as a
Syncplay user has), and its mpv is read over a second connection to the IPC
socket Syncplay itself uses. The story has the windows' /watch, /play, /pause,
/seek and /play, and Syncplay's own pause, seek and play (its console's `p` and
`s`), each measured SETTLE_S after it settled: Syncplay's mpv against the
windows (the larger of |S - A| and |S - B|), its signed offset from their
mean, and the windows' own spread. No /rate: Syncplay's clients do not follow
a rate (docs/syncplay.md).

A transition counts as settled for Syncplay's mpv once it is paused within
Syncplay's own seek threshold (1 s) of the held position, or playing within
its slow-down threshold (1.5 s) of the timeline: nearer than that, Syncplay's
client corrects nothing, and what remains is what its player shows.

    python3 Tests/syncplay/syncplay_spread.py --cowatch BIN [--runs N] [--rounds N]
        [--record docs/benchmarks.md] [--results FILE.json]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "Tests" / "e2e"))
sys.path.insert(0, str(REPO / "Tests"))

from browser_server import serve_for_browsers  # noqa: E402
from figures import machine_description  # noqa: E402
from measure import SAMPLE_GAP_S, SETTLE_S  # noqa: E402
from mpv_spread import MPV_SAMPLE_RTT_MS, ROUNDS, Scenario, fmt, run_scenarios, summarize, timeline  # noqa: E402
from report import log  # noqa: E402
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402
from support.records import record_blocks  # noqa: E402
from support.syncplay import SyncplayClient, syncplay_missing, syncplay_port  # noqa: E402
from timecode_media import make_media  # noqa: E402

SECTION = "## Syncplay's player among browser windows"
HOLD_S = 1.0  # Syncplay's SEEK_THRESHOLD: a paused player nearer than this is not moved
FOLLOW_S = 1.5  # Syncplay's DEFAULT_SLOWDOWN_KICKIN_THRESHOLD: nearer than this, nothing is corrected


class SyncplayPlayer:
    """Syncplay's client and its mpv, with the readings mpv_spread takes of `cowatch watch`'s."""

    def __init__(self, folder, address, room, media):
        self.client = SyncplayClient(str(folder), address, "syncplay", room, str(media))

    def get(self, name):
        return self.client.get(name)

    def reading(self, name):
        for _ in range(5):
            message, sent, received = self.client.ipc.command("get_property", name)
            if (received - sent) * 1000 <= MPV_SAMPLE_RTT_MS:
                break
        return message.get("data"), (sent + received) / 2 * 1000

    def log_tail(self, lines=30):
        return self.client.log_tail(lines)

    def close(self):
        self.client.stop()


class SyncplayScenario(Scenario):
    def __init__(self, server, media, args, number):
        super().__init__(server, media, args, number)
        self.room = f"syncplay-among-windows-{number}"
        self.run.room = self.room

    def open_player(self, folder):
        return SyncplayPlayer(folder, f"127.0.0.1:{self.args.syncplay_port}", self.room, self.args.media_path)

    def mpv_settled(self, playback):
        if self.mpv.get("seeking") or self.mpv.get("paused-for-cache"):
            return "seeking"
        position, at_ms = self.mpv.reading("time-pos")
        if position is None:
            return "no position"
        if playback["status"] != "playing":
            if not self.mpv.get("pause"):
                return f"playing at {position}"
            return None if abs(position - playback["position"]) <= HOLD_S else f"held at {position}"
        if self.mpv.get("pause"):
            return "paused"
        expected = timeline(playback, at_ms)
        return None if abs(position - expected) <= FOLLOW_S else f"at {position}, the timeline at {expected:.3f}"

    def by_syncplay(self, line):
        """A console command of Syncplay's; the room's seq before it."""
        seq = self.run.seq()
        self.mpv.client.type(line)
        return seq

    def story(self, a, b, media_url):
        typed = self.typed
        self.mpv.client.type("t")  # ready, as a Syncplay user says before watching
        seq = typed(a, f"/watch {media_url} Test pattern with sound")
        self.measure("/watch (paused at 0)", "paused", seq)
        self.check(self.run.wait(lambda rs: self.mpv.get("duration"), 15, "Syncplay's mpv to load its file"),
                   "Syncplay's mpv loaded its file")
        self.measure("/play (coordinated start)", "playing", typed(b, "/play"), start=True)
        self.measure("/pause", "paused", typed(a, "/pause"))
        self.measure("/seek 30 (paused)", "paused", typed(b, "/seek 30"))
        self.measure("/play from 30", "playing", typed(a, "/play"), start=True)
        self.measure("/seek 60 while playing", "playing", typed(a, "/seek 60"))
        self.measure("Syncplay's pause (p)", "paused", self.by_syncplay("p"))
        self.measure("Syncplay's seek (s 1:30)", "paused", self.by_syncplay("s 1:30"))
        self.measure("Syncplay's play (p)", "playing", self.by_syncplay("p"), start=True)
        self.measure("/pause again", "paused", typed(b, "/pause"))
        self.measure("/play again", "playing", typed(a, "/play"), start=True)


def record(path, command, runs, summary, machine, versions, commit, label="with the room's timing"):
    """Writes this run's block, named by `label`, into SECTION of `path`,
    replacing that label's earlier block and keeping the rest."""
    loads = ", ".join(f"{run['load_before']:.1f} -> {run['load_after']:.1f}" for run in runs)
    failed = [f"run {run['number']}: {run['failure'].splitlines()[0]}" for run in runs if run["failure"]]
    intro = (
        "Debian's Syncplay client (`syncplay --no-gui`, driving a headless mpv) through `cowatch serve "
        "--syncplay-port`, beside two headless Chromium windows in one room, measured by `commands/bench syncplay` "
        "(`Tests/syncplay/syncplay_spread.py`, on `Tests/e2e/mpv_spread.py`'s harness): the windows play the room's "
        "link, Syncplay's mpv the same file from disk. After each transition has settled (for Syncplay's mpv: "
        f"paused within its seek threshold of {HOLD_S:g} s, or playing within its slow-down threshold of "
        f"{FOLLOW_S:g} s), {SETTLE_S:g} s later, rounds {SAMPLE_GAP_S * 1000:.0f} ms apart read Syncplay's mpv "
        "(`audio-pts` playing, `time-pos` paused, over its IPC socket) and each window's `video.currentTime`, "
        "brought to one instant; the figure is Syncplay's mpv against the windows (the larger of |S - A| and "
        "|S - B|), beside the windows' own spread.")
    name = f"syncplay-among-windows {label}"
    lines = [
        f"<!-- {name} -->", f"### {label[0].upper()}{label[1:]}", "",
        f"Run: `{command}` at commit {commit} on {time.strftime('%Y-%m-%d')}; machine: {machine}; {versions}; "
        f"{len(runs)} runs of {runs[0]['rounds']} rounds per transition; load average (1 min) before -> after "
        f"each run: {loads}." + (f" **Failed:** {'; '.join(failed)}" if failed else ""),
        "",
        "| figure (median / p95 / max) | Syncplay's mpv against the windows | window A against B |",
        "|---|---|---|",
        f"| every settled reading ({summary['all']['vs']['n']}) | {fmt(summary['all']['vs'])} | {fmt(summary['all']['ab'])} |",
        f"| playing only ({summary['playing']['vs']['n']}) | {fmt(summary['playing']['vs'])} | {fmt(summary['playing']['ab'])} |",
        "",
        "| transition | state | Syncplay's mpv against the windows | A against B | Syncplay - windows' mean (median, each run) | settled after (each run) |",
        "|---|---|---|---|---|---|",
    ]
    for t in summary["transitions"]:
        lines.append(f"| {t['transition']} | {t['status']} | {fmt(t['mpv_vs_windows'])} | {fmt(t['windows'])} | "
                     + " / ".join(f"{v:+.1f}" for v in t["mpv_offset_medians"]) + " ms | "
                     + " / ".join(f"{v / 1000:.1f}" for v in t["settled_after_ms"]) + " s |")
    starts = [s for t in summary["transitions"] for s in t["starts"]]
    if starts:
        def show(v):
            return "late" if v == "late" else f"{v:+.0f}"
        lines += ["", "Coordinated starts, each player's start minus `at` (ms; Syncplay, A, B): "
                  + "; ".join(", ".join(show(s[k]) for k in ("mpv", "A", "B")) for s in starts) + "."]
    lines += ["", f"<!-- /{name} -->"]
    record_blocks(path, SECTION, intro, [(name, "\n".join(lines))])
    log(f"recorded: {path} ({SECTION[3:]})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cowatch", required=True, help="the cowatch binary")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="readings per transition")
    parser.add_argument("--record", help="write the figures to this Markdown file, under " + repr(SECTION[3:]))
    parser.add_argument("--label", default="with the room's timing",
                        help="the recorded block's name (another label keeps the other blocks)")
    parser.add_argument("--from-results", help="record the figures of an earlier run's --results file instead of running")
    parser.add_argument("--results", help="write the figures as JSON here")
    parser.add_argument("--web-root", help="serve the browser client from here (COWATCH_WEB_ROOT)")
    parser.add_argument("--media-dir", default=str(REPO / ".build-e2e" / "e2e-media"))
    parser.add_argument("--scratch", default=None, help="keep the clients' logs here")
    args = parser.parse_args()
    args.port_base = 0
    args.position_property = "audio-pts"
    args.time_limit = 300
    command = "python3 Tests/syncplay/syncplay_spread.py " + " ".join(sys.argv[1:])
    missing = syncplay_missing() or next((f"{t} is missing" for t in ("chromium", "/usr/bin/chromedriver", "ffmpeg")
                                          if not shutil.which(t)), None)
    if missing:
        sys.exit(f"syncplay_spread: {missing}")
    if args.from_results:
        kept = json.loads(Path(args.from_results).read_text())
        runs = [run for run in kept["runs"] if run["rows"]]
        record(args.record, kept["command"], runs, kept["summary"], kept["machine"], kept["versions"], kept["commit"],
               args.label)
        return 0
    load_before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    media_file = make_media(Path(args.media_dir), audio=True)
    args.media_name, args.media_path = media_file.name, media_file
    versions = (subprocess.run(["dpkg-query", "-W", "-f=syncplay ${Version}", "syncplay"], capture_output=True,
                               text=True).stdout + ", " + " ".join(subprocess.run(["mpv", "--version"], capture_output=True,
                                                                                  text=True).stdout.split()[:2]))
    with MediaServer(media_file.parent, RangeRequestHandler, port=0) as media, \
            serve_for_browsers(args.cowatch, args.web_root, extra_args=("--syncplay-port", "0"), port=0) as server:
        args.syncplay_port = syncplay_port(server)
        runs = run_scenarios(SyncplayScenario, server, media, args)
    measured = [run for run in runs if run["rows"]]
    summary = summarize(measured) if measured else None
    if summary:
        for t in summary["transitions"]:
            log(f"  {t['transition']:<28} {fmt(t['mpv_vs_windows']):<34} {fmt(t['windows'])}")
        log(f"  {'every settled reading':<28} {fmt(summary['all']['vs']):<34} {fmt(summary['all']['ab'])}")
    # The binary's own commit (a build of an earlier commit measures that commit).
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(args.cowatch).resolve().parent).stdout.strip()
    machine = re.sub(r"; load average before the run.*$", "", machine_description(load_before))
    if args.results:
        Path(args.results).write_text(json.dumps({"command": command, "runs": runs, "summary": summary, "commit": commit,
                                                  "machine": machine, "versions": versions}, indent=2))
    if args.record and summary:
        record(args.record, command, measured, summary, machine, versions, commit, args.label)
    failures = sum(1 for run in runs if run["failure"])
    return 0 if failures == 0 and summary else 1


if __name__ == "__main__":
    sys.exit(main())
