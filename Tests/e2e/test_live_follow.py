"""Two headless Chromium windows follow one HLS live room with the page's own
player logic (static/sync/player-sync.js, PlayerSync), the room's states handed to them by
this test as the server would send them: the live rules of the room (an anchor
from the first `/duration <seq> live <edge>`, `/play` at the edge, `/pause`
holding everyone) are played here, from docs/protocol.md, so that the page's
side is measured on its own. The windows opened the stream several segments
apart, so their <video>s count from different segments; the spread is of
their stream times (players/live.js), extrapolated to one instant.

- both report the live item with its edge;
- `/play` at the edge: they play together, at rate 1 (any other rate fails a
  live stream in Chromium), within one target duration;
- `/pause`: each holds its frame, and no seek is asked;
- `/play` after a while: the room is past their frames, they load the stream
  again and play together.

Run: python3 -m pytest -q -s Tests/e2e/test_live_follow.py
Skipped, with the reason, when chromium, chromedriver, selenium or ffmpeg are missing.
"""
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from live_stream import LiveStream  # noqa: E402
from support.browser import QUIET, Chromium, browser_missing  # noqa: E402
from support.harness import wait_until  # noqa: E402
from support.media_server import TestPage  # noqa: E402

MISSING = browser_missing() or (None if shutil.which("ffmpeg") else "ffmpeg is missing")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
REPO = HERE.parent.parent

GAP_SEGMENTS = 3
LEAD_MS = 1500  # a state's `at` this far ahead, as the server leads a coordinated start
# Loading is the one correction a live stream takes (sync/live.js): players that
# load together begin on one segment, or one segment apart. The spread must stay
# under one target duration (1 s here): a mapping or a follow gone wrong is off
# by whole segments, or keeps drifting.
SPREAD_LIMIT_MS = 1000

PAGE = """<!doctype html><meta charset="utf-8"><title>live follow</title>
<div class="screen"><video muted playsinline crossorigin="anonymous" width="320" height="180"></video><div class="overlay"></div></div>
<script type="module">
import { PlayerSync } from '/static/sync/player-sync.js';
const clock = {
  now: () => performance.timeOrigin + performance.now(), toLocal: (t) => t - 0, offset: 0, uncertainty: 0, rtt: 0,
};
const sent = [];
const video = document.querySelector('video');
// Each report with the instant it was sent: the room anchors a live edge at the time it arrives.
const sync = new PlayerSync(video, clock, (line) => { sent.push([line, clock.now()]); return true; });
sync.setMe({ id: 'me', name: 'me', joined: true, player: true, suspensions: [] });
window.harness = {
  sent,
  state(state) { sync.setState(state); },
  read() {
    const t0 = performance.timeOrigin + performance.now();
    const r = sync.readings();
    const t1 = performance.timeOrigin + performance.now();
    return { t: (t0 + t1) / 2, position: r.currentTime, paused: r.paused, readyState: r.readyState, live: r.live === true,
             error: sync.mediaError,
             mode: sync.mode, detail: sync.detail, joining: !!sync.join, running: !!sync.running, history: sync.history.slice() };
  },
};
</script>"""


def room_state(seq, url, status, position, at, live=True):
    return {
        "seq": seq,
        "session": {"state": "joined", "activity": {"id": "a1", "url": url, "title": "live", "identifier": url,
                                                    "source": {"kind": "file"}, "live": live, "duration": None}},
        "playback": {"status": status, "item": "i1", "rate": 1, "position": position, "at": at, "by": None, "cause": "test"},
    }


def playing_together(drivers, timeout, what):
    def ok():
        readings = [d.execute_script("return window.harness.read()") for d in drivers]
        return all(r["running"] and not r["paused"] and not r["joining"] and r["readyState"] >= 2 for r in readings)
    try:
        wait_until(ok, timeout, what, interval=0.1)
    except AssertionError:
        for d in drivers:
            print(d.execute_script("return window.harness.read()"))
        raise


def spread(drivers, playing):
    readings = [d.execute_script("return window.harness.read()") for d in drivers]
    t = readings[0]["t"]
    positions = [r["position"] + ((t - r["t"]) / 1000 if playing else 0) for r in readings]
    return (max(positions) - min(positions)) * 1000, readings


def measure(drivers, playing, what):
    spreads = []
    for _ in range(10):
        s, readings = spread(drivers, playing)
        spreads.append(s)
        time.sleep(0.1)
    median = statistics.median(spreads)
    print(f"{what}: spread median {median:.1f} ms, max {max(spreads):.1f} ms")
    return median, readings


def test_two_windows_follow_a_live_room():
    root = REPO / ".build-e2e"
    root.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="cowatch-live-follow-", dir=str(root)))
    browsers = []
    drivers = []
    try:
        with TestPage(PAGE) as page, LiveStream(work / "live") as live:
            live.wait_segments(6, timeout=30)
            # Paused on the new item, as the room is after /watch, until its edge is known.
            seq = 1
            for i in range(2):
                if i == 1:
                    live.wait_sequence(live.media_sequence() + GAP_SEGMENTS, timeout=GAP_SEGMENTS * 3 + 20)
                browsers.append(Chromium(QUIET, profile_prefix="cowatch-live-", profile_dir=root, autoplay=True,
                                         script_timeout=20))
                d = browsers[-1].driver
                drivers.append(d)
                d.get(page.url(""))
                wait_until(lambda: d.execute_script("return !!window.harness"), 10, "the page", interval=0.1)
                d.execute_script("window.harness.state(arguments[0])", room_state(seq, live.url, "paused", 0, time.time() * 1000, live=False))

            def reports():
                lines = [d.execute_script("return window.harness.sent.filter(([l]) => l.startsWith('/duration'))") for d in drivers]
                return lines if all(lines) else None
            lines = wait_until(reports, 30, "/duration live reports", interval=0.1)
            assert all(x[0][0].startswith(f"/duration {seq} live ") for x in lines), lines
            # The room's anchor: the first report, at the time it came (the later one changes nothing).
            edge = float(lines[0][0][0].split()[-1])
            anchor_at = lines[0][0][1]

            # /play: everyone at the edge, a coordinated start LEAD_MS ahead.
            seq += 1
            at = time.time() * 1000 + LEAD_MS
            position = edge + (at - anchor_at) / 1000
            for d in drivers:
                d.execute_script("window.harness.state(arguments[0])", room_state(seq, live.url, "playing", position, at))
            playing_together(drivers, 30, "both playing")
            time.sleep(1)
            median, _ = measure(drivers, True, "/play at the live edge")
            time.sleep(3)
            measure(drivers, True, "/play at the live edge, 5 s on")
            assert median < SPREAD_LIMIT_MS

            # /pause: each holds its frame; nothing seeks.
            seq += 1
            now = time.time() * 1000
            paused_at = edge + (now - anchor_at) / 1000
            for d in drivers:
                d.execute_script("window.harness.state(arguments[0])", room_state(seq, live.url, "paused", paused_at, now))
            wait_until(lambda: all(d.execute_script("return window.harness.read()")["paused"] for d in drivers), 10,
                       "both paused", interval=0.1)
            median, _ = measure(drivers, False, "/pause (each holds its frame)")
            assert median < SPREAD_LIMIT_MS
            time.sleep(4)  # the room's edge moves on; their frames do not

            # /play again: at the edge, which is past both frames: they load again and wait for the room.
            seq += 1
            at = time.time() * 1000 + LEAD_MS
            position = edge + (at - anchor_at) / 1000
            began = time.monotonic()
            for d in drivers:
                d.execute_script("window.harness.state(arguments[0])", room_state(seq, live.url, "playing", position, at))
            playing_together(drivers, 40, "both playing again")
            print(f"/play again: both playing {time.monotonic() - began:.1f} s after the state")
            # Each was paused: a paused live video does not play on from its frame, it is loaded again.
            history = [d.execute_script("return window.harness.read()")["history"] for d in drivers]
            assert all(any("load the stream again" in h for h in hs) for hs in history), history
            time.sleep(1)
            median, _ = measure(drivers, True, "/play again (both rejoin the edge)")
            assert median < SPREAD_LIMIT_MS
    finally:
        for b in browsers:
            b.close()
        shutil.rmtree(work, ignore_errors=True)
