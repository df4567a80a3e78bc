"""An HLS live stream's stream time (players/live.js, sync/live.js) in two
headless Chromium windows that opened the stream several segments apart:
every frame both windows show has one stream time in both, although each
<video> counts its own currentTime from the segment it began on; and the
readings say `live`, `duration` Infinity and a `liveEdge` behind the end by
the margin. Without a Cowatch server: a page loads players/video.js on its
own and plays the stream from live_stream.py (ffmpeg, in real time).

Run: python3 -m pytest -q Tests/e2e/test_live_stream_time.py
Skipped, with the reason, when chromium, chromedriver, selenium or ffmpeg are missing.
"""
import concurrent.futures
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from live_stream import LiveStream, PLAYLIST_SEGMENTS, SEGMENT_SECONDS  # noqa: E402
from support.browser import QUIET, Chromium, browser_missing  # noqa: E402
from support.harness import wait_until  # noqa: E402
from support.media_server import TestPage  # noqa: E402

REPO = HERE.parent.parent
GAP_SEGMENTS = 4  # the second window arrives this many segments after the first

PAGE = """<!doctype html><meta charset="utf-8"><title>live</title>
<div id="screen"><video muted playsinline crossorigin="anonymous" width="640" height="360"></video></div>
<canvas width="160" height="90"></canvas>
<script type="module">
import VideoPlayer from '/static/players/video.js';
const video = document.querySelector('video');
const player = new VideoPlayer(document.getElementById('screen'), { video, apiUrl: null });
// As PlayerSync does: read every 50 ms (the readings keep the playlist fresh),
// and play again what was loaded again.
let started = false;
setInterval(() => {
  player.read();
  if (started && video.paused) video.play().catch(() => {});
}, 50);
window.harness = {
  start(url) {
    started = true;
    player.load({ url, live: true, duration: null, source: { kind: 'file' } });
    return player.play().then(() => 'ok', (e) => e.name);
  },
  read() { return player.read(); },
  debug() { return { origin: player.live.origin, names: performance.getEntriesByType('resource').map((e) => e.name.split('/').pop() + '@' + Math.round(e.startTime)), list: player.live.playlist && player.live.playlist.segments.map((s) => s.sequence) }; },
  // Frames presented during `ms`: a hash of each (a small copy of its pixels)
  // with its stream time (the frame's own mediaTime plus the player's shift).
  async frames(ms) {
    const canvas = document.querySelector('canvas').getContext('2d', { willReadFrequently: true });
    const out = {};
    const end = performance.now() + ms;
    while (performance.now() < end) {
      const meta = await new Promise((done) => {
        video.requestVideoFrameCallback((_, m) => done(m));
        setTimeout(() => done(null), 200);
      });
      if (!meta) continue;
      const shift = player.read().currentTime - video.currentTime;
      canvas.drawImage(video, 0, 0, 160, 90);
      const digest = await crypto.subtle.digest('SHA-256', canvas.getImageData(0, 0, 160, 90).data);
      const hash = Array.from(new Uint8Array(digest).slice(0, 8)).map((b) => b.toString(16).padStart(2, '0')).join('');
      out[hash] = meta.mediaTime + shift;
    }
    return out;
  },
};
</script>"""


MISSING = browser_missing() or (None if shutil.which("ffmpeg") else "ffmpeg is missing")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def test_two_windows_agree_on_stream_time():
    (REPO / ".build-e2e").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="cowatch-live-", dir=str(REPO / ".build-e2e")))
    browsers = []
    drivers = []
    try:
        with TestPage(PAGE) as page, LiveStream(work / "live") as live:
            live.wait_segments(3, timeout=30)
            for i in range(2):
                if i == 1:
                    live.wait_sequence(live.media_sequence() + GAP_SEGMENTS, timeout=GAP_SEGMENTS * 3 + 20)
                browsers.append(Chromium(QUIET, profile_prefix="cowatch-live-", profile_dir=REPO / ".build-e2e",
                                         autoplay=True, script_timeout=20))
                d = browsers[-1].driver
                drivers.append(d)
                d.get(page.url(""))
                wait_until(lambda: d.execute_script("return !!window.harness"), 10, "the page", interval=0.1)
                started = d.execute_async_script(
                    "const done = arguments[arguments.length - 1]; window.harness.start(arguments[0]).then(done);", live.url)
                assert started == "ok"
            readings = [wait_until(lambda: (lambda r: r if r["readyState"] > 0 and r["currentTime"] > 0 else None)(
                d.execute_script("return window.harness.read()")), 20, "stream time", interval=0.1) for d in drivers]
            for r in readings:
                assert r["live"] is True and r["duration"] is None or r["duration"] == float("inf")
                # The edge: behind the playlist's end by the margin (4 target durations and 1 s).
                assert r["liveEdge"] < r["currentTime"] + PLAYLIST_SEGMENTS * SEGMENT_SECONDS
            with concurrent.futures.ThreadPoolExecutor() as pool:
                tables = list(pool.map(lambda d: d.execute_async_script(
                    "const done = arguments[arguments.length - 1]; window.harness.frames(2500).then(done);"), drivers))
            common = set(tables[0]) & set(tables[1])
            assert len(common) >= 10, f"the windows showed too few of the same frames ({len(common)})"
            differences = sorted(abs(tables[0][h] - tables[1][h]) for h in common)
            median = differences[len(differences) // 2]
            print(f"stream time of one frame in two windows {GAP_SEGMENTS} segments apart: "
                  f"median difference {median * 1000:.2f} ms over {len(common)} frames, largest {differences[-1] * 1000:.2f} ms")
            if median >= 0.002:
                for d in drivers:
                    print(d.execute_script("return window.harness.debug()"))
            # One frame lasts 33 ms: a mapping off by a segment would be 1000 ms.
            assert median < 0.002, differences
    finally:
        for b in browsers:
            b.close()
        shutil.rmtree(work, ignore_errors=True)
