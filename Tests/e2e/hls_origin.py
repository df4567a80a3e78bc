#!/usr/bin/env python3
"""Do two Chromium windows that open one HLS live playlist at different times
share a timeline? (docs/browser.md, "Live streams", rests on the answer.)

A live stream from ffmpeg (live_stream.py). Window A opens it; once the
playlist has moved on by several segments (A's first segment is gone from it),
window B opens it. Each window reports `currentTime`, `duration`, `seekable`,
its first `playing` and the segments its video fetched (Resource Timing); then
both hash every frame they present for two seconds (requestVideoFrameCallback,
the frame's pixels in a canvas) with its `mediaTime`. For each frame both
showed, the difference of their times: all 0 means one timeline. Last, each
tries a seek inside what both have buffered, to see whether one lands.

    python3 Tests/e2e/hls_origin.py [--gap SEGMENTS] [--json]

Prints the readings and the verdict; exit status 0 when the origins agree, 1
when they differ (the readings say by how much).
"""

import argparse
import concurrent.futures
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from live_stream import LiveStream  # noqa: E402
from browser_window import Window  # noqa: E402

PROBE = """<!doctype html><meta charset="utf-8"><title>probe</title>
<video id="v" muted playsinline crossorigin="anonymous" width="640" height="360"></video>
<canvas id="c" width="640" height="360"></canvas>
<script>
const v = document.getElementById('v');
window.probe = {
  firstPlaying: null,
  start() {
    v.addEventListener('playing', () => { window.probe.firstPlaying ??= { currentTime: v.currentTime, buffered: v.buffered.length ? [v.buffered.start(0), v.buffered.end(0)] : null }; });
    v.src = 'live.m3u8'; return v.play().then(() => 'ok', (e) => e.name); },
  read() {
    const ranges = (r) => Array.from({ length: r.length }, (_, i) => [r.start(i), r.end(i)]);
    return {
      wall: performance.timeOrigin + performance.now(),
      currentTime: v.currentTime, duration: String(v.duration), paused: v.paused,
      readyState: v.readyState, seekable: ranges(v.seekable), buffered: ranges(v.buffered),
      startDate: typeof v.getStartDate === 'function' ? String(v.getStartDate()) : null,
      error: v.error ? v.error.code + ' ' + v.error.message : null,
    };
  },
  // The segments this page's video fetched, in order (Resource Timing).
  segments() {
    return performance.getEntriesByType('resource').map((e) => [e.name.split('/').pop(), e.initiatorType, Math.round(e.startTime)]);
  },
  // Hashes of the frames presented during `ms`, keyed by their mediaTime.
  async frames(ms) {
    const c = document.getElementById('c').getContext('2d', { willReadFrequently: true });
    const table = {};
    const end = performance.now() + ms;
    while (performance.now() < end) {
      const meta = await new Promise((done) => v.requestVideoFrameCallback((_, m) => done(m)));
      c.drawImage(v, 0, 0, 640, 360);
      const digest = await crypto.subtle.digest('SHA-256', c.getImageData(0, 0, 640, 360).data);
      table[meta.mediaTime.toFixed(3)] = Array.from(new Uint8Array(digest).slice(0, 6)).map((b) => b.toString(16).padStart(2, '0')).join('');
    }
    return table;
  },
  async frameAt(t) {
    v.pause();
    const seeked = await new Promise((done) => {
      v.addEventListener('seeked', () => done(true), { once: true });
      setTimeout(() => done(false), 5000);
      v.currentTime = t;
    });
    if (!seeked) return { error: 'no seeked event in 5 s', at: v.currentTime };
    await new Promise((done) => v.requestVideoFrameCallback ? v.requestVideoFrameCallback(() => done()) : setTimeout(done, 200));
    const c = document.getElementById('c').getContext('2d');
    c.drawImage(v, 0, 0, 640, 360);
    const pixels = c.getImageData(0, 0, 640, 360).data;
    const digest = await crypto.subtle.digest('SHA-256', pixels);
    return { at: v.currentTime, hash: Array.from(new Uint8Array(digest).slice(0, 8)).map((b) => b.toString(16).padStart(2, '0')).join('') };
  },
};
</script>"""


def wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(what)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gap", type=int, default=8, help="segments between the two windows' arrivals")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cowatch-hls-origin-"))
    windows = []
    report = {}
    with LiveStream(work / "live") as live:
        (live.directory / "probe.html").write_text(PROBE)
        live.wait_segments(3, timeout=30)
        try:
            for label in ("A", "B"):
                if label == "B":
                    first = live.media_sequence()
                    live.wait_sequence(first + args.gap, timeout=args.gap * 3 + 20)
                window = Window(label)
                windows.append(window)
                window.open(live.server.url("probe.html"))
                started = window.driver.execute_async_script(
                    "const done = arguments[arguments.length - 1]; window.probe.start().then(done);")
                report[f"{label}.play"] = started
                report[f"{label}.first_sequence"] = live.media_sequence()
            wait(lambda: all(w.js("return window.probe.read().currentTime") > 0 for w in windows), 20, "both play")
            time.sleep(2)  # let both play a while past their first frames
            readings = {w.label: w.js("return window.probe.read()") for w in windows}
            report["segments"] = {w.label: w.js("return window.probe.segments()") for w in windows}
            report["first_playing"] = {w.label: w.js("return window.probe.firstPlaying") for w in windows}
            print(json.dumps(report["segments"]), flush=True)
            with concurrent.futures.ThreadPoolExecutor() as pool:
                tables = dict(zip("AB", pool.map(lambda w: w.driver.execute_async_script(
                    "const done = arguments[arguments.length - 1]; window.probe.frames(2000).then(done, (e) => done({ error: String(e) }));"), windows)))
            report["frame_tables"] = {k: len(t) for k, t in tables.items()}
            # For each hash both windows showed: B's mediaTime less A's (the origins' difference).
            where_a = {h: float(t) for t, h in tables["A"].items()}
            report["origin_difference_s"] = sorted({round(where_a[h] - float(t), 3) for t, h in tables["B"].items() if h in where_a})
            report["readings"] = readings
            # Wall clock less currentTime: the instant (page clock) each window's position 0 was live.
            report["origin_ms"] = {k: r["wall"] - r["currentTime"] * 1000 for k, r in readings.items()}
            # Where both can show a frame: their seekable ranges, or else what they buffered.
            spans = [r["seekable"] or r["buffered"] for r in readings.values()]
            low = max((s[0][0] for s in spans if s), default=0)
            high = min((s[-1][1] for s in spans if s), default=0)
            report["common_seekable"] = [low, high]
            print(json.dumps({k: report[k] for k in ("readings", "origin_ms", "common_seekable")}, indent=2), flush=True)
            # Whether a seek lands at all (inside what both have buffered).
            target = round((low + high) / 2, 3) if high > low else 0.5
            report["seek"] = {w.label: w.driver.execute_async_script(
                "const done = arguments[arguments.length - 1]; window.probe.frameAt(arguments[0]).then(done, (e) => done({ error: String(e) }));",
                target) for w in windows}
            # One timeline when every frame both windows showed has one time in both.
            report["same_timeline"] = report["origin_difference_s"] == [0.0]
        finally:
            for w in windows:
                w.close()
        report["playlist"] = live.playlist()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value if key != 'readings' else json.dumps(value, indent=2)}")
    return 0 if report.get("same_timeline") else 1


if __name__ == "__main__":
    sys.exit(main())
