#!/usr/bin/env python3
"""Browser end-to-end test of the Cowatch room page (run by commands/e2e).

Three headless Chromium windows, each its own browser process and driver
session (background tabs of one browser do not load media), open one room of a
real `cowatch serve`, and the test drives the room through its transitions:
/watch, a coordinated /play, /pause, /seek, /rate 1.5, a seek while playing,
the page's keys and this-player-only controls (mute, volume, one window in
fullscreen while the group seeks by the right arrow and plays on),
one window's /catchup, one window's stall under both stall policies, a media
error in one window, a reconnect, and a late joiner whose browser refuses
autoplay. After each transition settles it measures how far apart the videos
are: every window reads performance.timeOrigin + performance.now() together
with video.currentTime, and the readings are extrapolated to one common instant
at the group's rate. At coordinated starts it also measures when each video
really started (its position extrapolated back to the start position).

The media is generated with ffmpeg (testsrc2 with a burnt-in timecode) and
served by a small Range-capable server on 127.0.0.1 (Tests/support/media_server.py).

E2E_DEBUG=1 prints each window's own account of every coordinated start.

Exit status: 0 when every functional check passed and the figures are within
the CI bounds (looser than the targets, so it does not flake); the targets
themselves are printed, recorded with --record, and enforced with --strict.

The pieces, each in a module of its own beside this one: the browser window
(browser_window.py), the test video (timecode_media.py), the spreads and their
bounds (measure.py), the waits and measurements (room_run.py), the scenarios
(synced_walk.py, moderation.py, access.py, people.py, reading the page through
page_js.py), the figures recorded (figures.py) and the server
(browser_server.py, on Tests/support/harness.py).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import statistics
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from access import Access  # noqa: E402
from browser_server import serve_for_browsers  # noqa: E402
from browser_window import Window, read_all, window_ports  # noqa: E402
from figures import machine_description, record  # noqa: E402
from measure import CI_BOUNDS, TARGETS, percentile  # noqa: E402
from support.media_server import MediaServer  # noqa: E402
from moderation import Moderation  # noqa: E402
from people import People  # noqa: E402
from report import Failure, failure_words, log  # noqa: E402
from room_run import RoomRun  # noqa: E402
from synced_walk import SyncedWalk  # noqa: E402
from timecode_media import FailingHandler, make_media, sound_media  # noqa: E402

REPO = HERE.parent.parent
WEB_ROOT = REPO / "Sources" / "CowatchWeb" / "Web"


def check_bundled_files(binary):
    """The binary finds the browser client next to itself (the SwiftPM resource
    bundle), without COWATCH_WEB_ROOT: what it serves is the source tree's files."""
    with serve_for_browsers(binary, web_root=None) as server:
        for path, source in [("/rooms/e2e-check", "room.html"), ("/", "index.html"),
                             ("/static/room.js", "static/room.js"), ("/static/sync/player-sync.js", "static/sync/player-sync.js"),
                             ("/static/style.css", "static/style.css")]:
            with urllib.request.urlopen(server.url(path), timeout=5) as response:
                body = response.read()
                kind = response.headers.get("Content-Type", "")
            if source == "room.html":
                # The server fills in the players' API addresses from its settings.
                body = re.sub(rb'(name="cowatch-player-api" data-kind="\w+" content=")[^"]*"', rb'\1"', body)
            if body != (WEB_ROOT / source).read_bytes():
                raise Failure(f"the binary serves a different {path} than {source} in the source tree "
                              "(rebuild, or the resource bundle is not found)")
            if path.endswith(".js") and "javascript" not in kind:
                raise Failure(f"{path} is served as {kind!r}; module scripts need text/javascript")
    log("bundle: the binary serves the source tree's files without COWATCH_WEB_ROOT")


class Run(SyncedWalk, Moderation, Access, People, RoomRun):
    """The whole scenario on one server: the synced walk, then moderation, the
    door and what a person meets, with the screenshots each takes."""

    def __init__(self, server, media, args):
        super().__init__(server, media, args)
        self.screenshot_png = None
        self.moderation_png = None
        self.desktop_png = None
        self.phone_png = None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cowatch", required=True, help="the cowatch binary")
    parser.add_argument("--web-root", help="serve the browser client from here (COWATCH_WEB_ROOT) instead of the bundle")
    parser.add_argument("--media-dir", default=str(REPO / ".build-e2e" / "e2e-media"))
    parser.add_argument("--screenshot", default=str(REPO / ".build-e2e" / "room-playing.png"),
                        help="where to save the screenshot of the room (--record also writes docs/room-playing.png)")
    parser.add_argument("--moderation-screenshot", default=str(REPO / ".build-e2e" / "room-moderation.png"),
                        help="where to save the screenshot of a host's member list with the moderation buttons "
                             "(--record also writes docs/room-moderation.png)")
    parser.add_argument("--people-screenshots", default=str(REPO / ".build-e2e"),
                        help="the folder for room-desktop.png and room-phone.png, the room with a video and a queue "
                             "at the window's size and at a phone's (--record also writes them to docs/)")
    parser.add_argument("--record", help="write the figures to this Markdown file (section '## Browser') "
                                         "and the screenshot to docs/room-playing.png")
    parser.add_argument("--results", help="write the figures as JSON here")
    parser.add_argument("--strict", action="store_true", help="fail unless the targets (not only the CI bounds) are met")
    parser.add_argument("--time-limit", type=float, default=300, help="seconds the scenario may take")
    parser.add_argument("--conditions", metavar="NAME[,NAME...]",
                        help="instead of the full scenario, a short one per condition (conditions.py): baseline, "
                             "wan-20, wan-60, wan-120, lossy, mixed-wan, skewed-clocks, one-browser, slow-viewer-continue, "
                             "slow-viewer-wait, hidden-window, or all; --record writes their figures under "
                             "'## Browser under real-world conditions', --time-limit bounds each one")
    parser.add_argument("--port-base", type=int, default=0,
                        help="the server on PORT, the media on PORT+1, each window's chromedriver and DevTools on "
                             "the next two (up to PORT+9) for the <video> scenario; 0: free ports")
    parser.add_argument("--sound", action="store_true",
                        help="play a clip with a sound track (make_media(audio=True)) where the scenario plays "
                             "timecode.mp4: a <video> with sound starts its clock when its audio output starts")
    args = parser.parse_args()
    command = os.environ.get("E2E_COMMAND") or "python3 Tests/e2e/run_e2e.py " + " ".join(sys.argv[1:])
    # A timeout's SIGTERM unwinds normally, so the browsers and the server are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    for tool in ("chromium", "/usr/bin/chromedriver", "ffmpeg"):
        if not shutil.which(tool):
            sys.exit(f"e2e: {tool} is missing (commands/e2e installs chromium, chromium-driver, ffmpeg)")

    started = time.monotonic()
    load_before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    log(f"load average: {load_before} on {os.cpu_count()} cores")
    if args.web_root:
        log(f"web root: {args.web_root} (COWATCH_WEB_ROOT; the bundle check is skipped)")
    else:
        check_bundled_files(args.cowatch)
    media_file = sound_media(Path(args.media_dir)) if args.sound else make_media(Path(args.media_dir))
    if args.conditions:
        import conditions
        return conditions.main(args, command, media_file, load_before)
    # A web page beside the video: what people paste by mistake (a player's page).
    (media_file.parent / "watch.html").write_text("<!doctype html><title>A video page</title><p>Not a video file.\n")
    # Subtitles for the video: "cue N" from N*10 s to (N+1)*10 s.
    (media_file.parent / "cues.vtt").write_text("WEBVTT\n\n" + "".join(
        f"{n // 6:02d}:{n % 6 * 10:02d}.000 --> {(n + 1) // 6:02d}:{(n + 1) % 6 * 10:02d}.000\ncue {n}\n\n" for n in range(24)))
    failed = None
    summary = None
    base = args.port_base
    with MediaServer(media_file.parent, FailingHandler, port=base + 1 if base else 0) as media, \
            serve_for_browsers(args.cowatch, args.web_root, port=base) as server:
        log(f"server: {server.url('/')}  media: {media.url(media_file.name)}")
        run = Run(server, media, args)
        try:
            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                run.windows = list(pool.map(lambda n: Window("ABC"[n], **window_ports(base, n)), range(3)))
            for window, name in zip(run.windows, ["alice", "bob", "carol"]):
                window.open(server.url(f"/rooms/{run.room}?name={name}"))
            run.wait(lambda rs: all(r["connection"] == "open" and r["members"] >= 3 for r in rs), 15,
                     "three windows connected")
            run.wait(lambda rs: all(r["rtt"] is not None and r["rtt"] < 1000 for r in rs), 5, "clock sync")
            log(f"windows: 3 browser processes in room {run.room}")
            run.run()
            # Every process's clock here is the system clock the server reads too,
            # so the pages' estimates of the offset should all be close to 0.
            run.offsets = ", ".join(f"{r['offset'] or 0:+.2f} ± {r['uncertainty'] or 0:.2f}"
                                    for r in read_all(run.windows))
            log(f"clock offsets the pages estimated (true offset: 0): {run.offsets} ms")
            run.moderation()
            run.access()
            run.people()
        except Exception as error:  # noqa: BLE001 - report and fail, never hang
            failed = failure_words(error)
        finally:
            errors = []
            for window in run.windows:
                errors += [f"{window.label}: {m}" for m in window.console_errors() if "favicon" not in m]
                window.close()
            if errors:
                log("browser console errors:\n  " + "\n  ".join(errors[:20]))
            if failed:
                log("server log (tail):\n" + server.log_tail())

    spreads = run.all_spreads
    if spreads:
        summary = {
            "command": command, "date": time.strftime("%Y-%m-%d"), "machine": machine_description(load_before),
            "offsets": run.offsets,
            "p95": percentile(spreads, 0.95), "max": max(spreads), "median": statistics.median(spreads),
            "start_max": max(run.start_spreads) if run.start_spreads else float("nan"),
            "samples": len(spreads), "starts": len(run.start_spreads), "rows": run.rows,
            "checks": [{"ok": ok, "what": what} for ok, what in run.checks],
            "seconds": time.monotonic() - started, "failure": failed,
        }
    log("")
    log(f"e2e summary ({time.monotonic() - started:.0f} s):")
    passed = sum(1 for ok, _ in run.checks if ok)
    log(f"  functional checks: {passed} passed" + (f"; FAILED: {failed}" if failed else ""))
    verdicts = []
    if summary:
        for key, label, value in [("p95", "p95 settled spread", summary["p95"]),
                                  ("max", "largest settled spread", summary["max"]),
                                  ("start", "largest start spread", summary["start_max"])]:
            target_ok = value < TARGETS[key]
            if args.strict:
                verdicts.append(target_ok)
            log(f"  {label}: {value:.1f} ms (target < {TARGETS[key]:g} ms: {'met' if target_ok else 'MISSED'})")
        start_median = statistics.median(run.start_spreads) if run.start_spreads else 0.0
        for label, value, bound in [("median settled spread", summary["median"], CI_BOUNDS["median"]),
                                    ("median start spread", start_median, CI_BOUNDS["start_median"])]:
            verdicts.append(value < bound)
            log(f"  CI bound: {label} {value:.1f} ms < {bound:g} ms: {'ok' if value < bound else 'EXCEEDED'}")
        if args.results:
            Path(args.results).write_text(json.dumps(summary, indent=2))
        if args.record and not failed:
            record(args.record, summary)
            (REPO / "docs" / "room-playing.png").write_bytes(run.screenshot_png)
            log("recorded: docs/room-playing.png")
            (REPO / "docs" / "room-moderation.png").write_bytes(run.moderation_png)
            log("recorded: docs/room-moderation.png")
            for name, data in [("room-desktop.png", run.desktop_png), ("room-phone.png", run.phone_png)]:
                (REPO / "docs" / name).write_bytes(data)
                log(f"recorded: docs/{name}")
    ok = failed is None and summary is not None and all(verdicts)
    failed_checks = sum(1 for passed_, _ in run.checks if not passed_)
    # A failure outside a check (a timeout, a crash) counts once more.
    failures = failed_checks + (1 if failed and not failed_checks else 0) + sum(1 for v in verdicts if not v)
    log(f"{passed} passed, {failures} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
