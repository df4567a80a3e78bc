#!/usr/bin/env python3
"""What a <video> in headless Chromium does between play() and its clock moving,
for the clip without sound and the clip with sound (make_media in timecode_media.py),
unmuted and muted, with Chromium's --mute-audio and without.

For each: ms after play() was called until the play() promise resolved, the
'playing' event, the first requestVideoFrameCallback (and the media time of that
frame past the start, ms), the first change of currentTime, and when the clock
really started: extrapolated back from currentTime 400 ms after play(), as the
page measures its starts (static/sync/latency.js: measureStart). Medians and
ranges over --runs starts. With --call, the page is first put in a call, as a
page in a room's voice is: a fake microphone sent through two
RTCPeerConnections on loopback, the voice received playing in an <audio>.

With --rates, instead: what changes of rate do to a playing video's clock, for
the clip with sound and the silent one (sync/drift.js: PULSE). For each change,
the position gained over a span against what the rates say it should gain, in
ms of media ("lost": the clock's own loss), and how long after a change from 1
to 1.25 the clock follows it ("follows", extrapolated back from a reading 300 ms
later). The changes: a pulse from 1 (to 1.25 for 20 and 100 ms, to 0.75 for
100 ms, to 1.02 for 400 ms), four pulses to 1.05 of 300 ms each, eight changes
between 1.05 and 1.04 (leaving 1 and coming back once), and the four pulses
with `preservesPitch` off. Then how far single readings of currentTime stray
from the clock's line at rates 1, 1.5 and 0.75 (60 readings 50 ms apart, each
less the median of them all, ms of media: the 5th and 95th percentiles and the
largest).

With --grid, instead: where the clock of the clip with sound starts (static/sync/
grid.js). Starts after pauses of 0 to 20 s, each from a seek: ms from play() to
the clock moving, and where the start falls against the first one's, modulo the
output's block (20 ms of frames up to a power of two: 1024 at 44.1 kHz), in ms; then starts
placed as the page places them: a warm-up (two the first time, to bound the
delay), a seek, and play() called to land on the first block 250 ms on, with the
start's distance from that block, ms.

    python3 Tests/e2e/play_latency.py [--runs N] [--port-base PORT] [--call] [--rates | --grid]
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from support.browser import HEADLESS, Chromium  # noqa: E402
from support.media_server import MediaServer  # noqa: E402
from timecode_media import make_media  # noqa: E402

REPO = HERE.parent.parent

# In the page: seek to 5 s, wait until it can play through, then play() and
# record when each sign of playing came, in ms after the call.
PROBE = r"""
const [src, muted, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const v = document.getElementById('v');
v.muted = muted;
const event = (name) => new Promise((resolve) => v.addEventListener(name, resolve, { once: true }));
const run = async () => {
  if (!v.src.endsWith(src)) v.src = src;
  v.pause();
  const seeked = event('seeked');
  v.currentTime = 5;
  await seeked;
  while (v.readyState < 4) await event('canplaythrough');
  const t = {};
  const call = performance.now();
  v.addEventListener('playing', () => { t.playing = performance.now() - call; }, { once: true });
  v.requestVideoFrameCallback((now, frame) => { t.frame = performance.now() - call; t.frameMedia = (frame.mediaTime - 5) * 1000; });
  const from = v.currentTime;
  v.play().then(() => { t.promise = performance.now() - call; });
  const poll = () => { if (v.currentTime !== from) t.moved = performance.now() - call; else setTimeout(poll, 0); };
  poll();
  // The clock is read once it has run a while (as the page does, VERIFY_AFTER_MS).
  while (performance.now() - call < 400) await new Promise((resolve) => setTimeout(resolve, 50));
  t.started = (performance.now() - call) - (v.currentTime - from) * 1000;
  v.pause();
  done(t);
};
run().catch((error) => done({ error: String(error) }));
"""
# A call inside the page: its microphone to itself through two peer connections.
CALL = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const microphone = await navigator.mediaDevices.getUserMedia({ audio: true });
  const [a, b] = [new RTCPeerConnection(), new RTCPeerConnection()];
  a.onicecandidate = (e) => e.candidate && b.addIceCandidate(e.candidate);
  b.onicecandidate = (e) => e.candidate && a.addIceCandidate(e.candidate);
  b.ontrack = (e) => { window.voices = new Audio(); window.voices.srcObject = e.streams[0]; window.voices.play(); };
  microphone.getTracks().forEach((track) => a.addTrack(track, microphone));
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  window.call = [a, b];
  const connected = new Promise((resolve) => { b.onconnectionstatechange = () => b.connectionState === 'connected' && resolve(); });
  await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, 10000))]);
  done(b.connectionState);
})().catch((error) => done(String(error)));
"""
FIGURES = ["promise", "playing", "frame", "frameMedia", "moved", "started"]

# In the page, the clip playing from 5 s, past its start: `steps` ([rate, ms], ...)
# played in turn, back to 1, and 800 ms later (the span measured) the position
# gained against the page's clock, less what the rates should have gained.
RATES = r"""
const [src, steps, pitch, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
const v = document.getElementById('v');
const event = (name) => new Promise((resolve) => v.addEventListener(name, resolve, { once: true }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const SPAN_MS = 800;
const run = async () => {
  if (!v.src.endsWith(src)) v.src = src;
  v.pause();
  v.playbackRate = 1;
  v.preservesPitch = pitch;
  const seeked = event('seeked');
  v.currentTime = 5;
  await seeked;
  while (v.readyState < 4) await event('canplaythrough');
  await v.play();
  // Past its start: the clock has run half a second.
  while (v.currentTime < 5.5) await event('timeupdate');
  const ahead = () => v.currentTime * 1000 - performance.now();
  const before = ahead();
  let ideal = 0;
  for (const [rate, ms] of steps) {
    v.playbackRate = rate;
    const from = performance.now();
    while (performance.now() < from + ms) await sleep(1);
    ideal += (rate - 1) * (performance.now() - from);
  }
  v.playbackRate = 1;
  // The span read: the last change (heard some 180 ms after it is set) and 600 ms at 1.
  await sleep(SPAN_MS);
  const lost = ahead() - before - ideal;
  // How long after a change of rate the clock follows it.
  const t0 = performance.now();
  const p0 = v.currentTime;
  v.playbackRate = 1.25;
  await sleep(300);
  const gained = (v.currentTime - p0) * 1000 - (performance.now() - t0);
  const follows = (performance.now() - t0) - gained / 0.25;
  v.pause();
  v.playbackRate = 1;
  v.preservesPitch = true;
  done({ lost, follows });
};
run().catch((error) => done({ error: String(error) }));
"""
# What the --rates readings and --grid scripts share: the video, its events, a
# sleep, and a seek that waits for the data to play through.
PAGE = r"""
const v = document.getElementById('v');
const event = (name) => new Promise((resolve) => v.addEventListener(name, resolve, { once: true }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seekTo = async (t) => { const s = event('seeked'); v.currentTime = t; await s; while (v.readyState < 4) await event('canplaythrough'); };
// Until the clock has moved from `from`, then `ms` more: a span to extrapolate back over.
const runFor = async (from, ms) => { while (v.currentTime === from) await sleep(1); await sleep(ms); };
"""

# In the page, the clip with sound: starts after pauses of `gaps` ms, each
# from a seek to 5 s, at -80 dB, read 60 ms after its clock moved.
GRID_STARTS = PAGE + r"""
const [src, gaps, placing, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
const context = new AudioContext();
const rate = context.sampleRate;
context.close();
const block = (2 ** Math.ceil(Math.log2(0.02 * rate)) / rate) * 1000;
const start = async (from, callAt) => {
  if (callAt !== undefined) { while (performance.now() < callAt - 8) await sleep(1); while (performance.now() < callAt) {} }
  const call = performance.now();
  await v.play();
  await runFor(from, 60);
  return { call, start: performance.now() - ((v.currentTime - from) * 1000) / v.playbackRate };
};
const phase = (t, anchor) => { const k = (t - anchor) / block; return (k - Math.round(k)) * block; };
const run = async () => {
  if (!v.src.endsWith(src)) v.src = src;
  v.volume = 0.0001;
  const starts = [];
  let anchor = null;
  for (const gap of placing ? [] : gaps) {
    v.pause();
    await seekTo(5);
    await sleep(gap);
    const s = await start(5);
    anchor ??= s.start;
    starts.push({ gap, took: s.start - s.call, phase: phase(s.start, anchor) });
  }
  // Placed starts: warm-ups, then play() in the middle of the window that lands on a block.
  const placed = [];
  let lo = -Infinity, hi = Infinity;
  for (let i = 0; placing && i < gaps.length; i++) {
    v.pause();
    await seekTo(5);
    await sleep(gaps[i]);
    let last = null;
    for (let w = 0; w < (hi === Infinity ? 2 : 1); w++) {
      if (w) { v.pause(); await seekTo(5); }
      const s = await start(5);
      if (last !== null && Math.abs(phase(s.start, last)) < 1.5) { lo = Math.max(lo, s.start - s.call - block); hi = Math.min(hi, s.start - s.call); }
      last = s.start;
    }
    v.pause();
    const at = last + Math.ceil((performance.now() + 250 - last) / block) * block;
    await seekTo(20);
    const d = (Math.max(lo, hi - block) + hi) / 2;
    const s = await start(20, at - d - block / 2);
    placed.push({ gap: gaps[i], error: s.start - at });
  }
  v.pause();
  done({ rate, block, starts, placed });
};
run().catch((error) => done({ error: String(error) }));
"""
# Each call within the driver's 120 s.
GRID_GAPS = [0, 0, 100, 500, 1000, 3000, 6000, 12000, 0, 20000, 0, 0]


def grid_figures(driver, clip):
    result = driver.execute_async_script(GRID_STARTS, clip.name, GRID_GAPS, False)
    placed = driver.execute_async_script(GRID_STARTS, clip.name, GRID_GAPS, True)
    for answer in (result, placed):
        if "error" in answer:
            sys.exit(f"play-latency: {clip.name}: {answer['error']}")
    result["placed"] = placed["placed"]
    print(f"output: {result['rate']} Hz, block {result['block']:.2f} ms")
    for row in result["starts"]:
        print(f"after {row['gap']:>6} ms paused: clock moved {row['took']:6.1f} ms after play(), "
              f"{row['phase']:+6.1f} ms off the first start's grid", flush=True)
    errors = [row["error"] for row in result["placed"]]
    for row in result["placed"]:
        print(f"placed, after {row['gap']:>6} ms paused: {row['error']:+6.2f} ms from its block", flush=True)
    print(f"placed starts: median {statistics.median(errors):+.2f} ms, range [{min(errors):+.2f}, {max(errors):+.2f}] ms")


RATE_CHANGES = [
    ("to 1.25 for 20 ms", [[1.25, 20]], True),
    ("to 1.25 for 100 ms", [[1.25, 100]], True),
    ("to 0.75 for 100 ms", [[0.75, 100]], True),
    ("to 1.02 for 400 ms", [[1.02, 400]], True),
    ("4 x to 1.05 for 300 ms", [[1.05, 300], [1, 300]] * 4, True),
    ("1.05 and 1.04, 8 changes", [[1.05, 300], [1.04, 300]] * 4, True),
    ("4 x to 1.05, pitch not kept", [[1.05, 300], [1, 300]] * 4, False),
]


# In the page: playing at `rate` from 5 s, 60 readings of currentTime less the
# page's clock at that rate, 50 ms apart, from 500 ms after its clock moved.
READINGS = PAGE + r"""
const [src, rate, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const run = async () => {
  if (!v.src.endsWith(src)) v.src = src;
  v.pause();
  await seekTo(5);
  v.playbackRate = rate;
  await v.play();
  await runFor(5, 500);
  const rows = [];
  for (let i = 0; i < 60; i++) {
    rows.push(v.currentTime * 1000 - performance.now() * rate);
    await sleep(50);
  }
  v.pause();
  v.playbackRate = 1;
  done(rows);
};
run().catch((error) => done({ error: String(error) }));
"""


def reading_figures(driver, clips):
    for clip in clips:
        for rate in (1, 1.5, 0.75):
            rows = driver.execute_async_script(READINGS, clip.name, rate)
            if isinstance(rows, dict):
                sys.exit(f"play-latency: {clip.name}: {rows['error']}")
            middle = statistics.median(rows)
            off = sorted(r - middle for r in rows)
            print(f"{clip.name:20} readings at {rate:<5} p5 {off[3]:+.1f}, p95 {off[-4]:+.1f}, "
                  f"largest {max(abs(x) for x in off):.1f} ms off the line", flush=True)


def rate_figures(driver, clips, runs):
    for clip in clips:
        for words, steps, pitch in RATE_CHANGES:
            rows = [driver.execute_async_script(RATES, clip.name, steps, pitch) for _ in range(runs)]
            failed = [r["error"] for r in rows if "error" in r]
            if failed:
                sys.exit(f"play-latency: {clip.name}: {failed[0]}")
            figures = {k: {"median": round(statistics.median(r[k] for r in rows), 1),
                           "range": [round(min(r[k] for r in rows), 1), round(max(r[k] for r in rows), 1)]}
                       for k in ("lost", "follows")}
            print(f"{clip.name:20} {words:28} {json.dumps(figures)}", flush=True)
    reading_figures(driver, clips)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="starts per clip and setting")
    parser.add_argument("--port-base", type=int, default=0,
                        help="media server on PORT, chromedriver on PORT+1, DevTools on PORT+2 (0: free ones)")
    parser.add_argument("--media-dir", default=str(REPO / ".build-e2e" / "e2e-media"))
    parser.add_argument("--call", action="store_true", help="with the page in a call (a fake microphone, sent to itself)")
    parser.add_argument("--rates", action="store_true", help="what changes of rate do to a playing video's clock, instead")
    parser.add_argument("--grid", action="store_true", help="where a clock with sound starts, and starts placed there, instead")
    args = parser.parse_args()
    media = Path(args.media_dir)
    clips = [make_media(media), make_media(media, audio=True)]
    (media / "probe.html").write_text("<!doctype html><title>play() latency</title><video id=v preload=auto playsinline></video>\n")
    port = (lambda n: args.port_base + n if args.port_base else 0)
    with MediaServer(media, port=port(0)) as server:
        for setting, extra in (("--mute-audio", ["--mute-audio"]),) + (() if args.rates or args.grid else (("audio out", []),)):
            call_flags = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"] if args.call else []
            browser = Chromium(HEADLESS + extra + call_flags + ([f"--remote-debugging-port={port(2)}"] if args.port_base else []),
                               profile_prefix="cowatch-play-latency-", profile_dir=REPO / ".build-e2e", autoplay=True,
                               binary="/usr/bin/chromium", driver_port=port(1), script_timeout=600 if args.grid else 30)
            driver = browser.driver
            try:
                driver.get(server.url("probe.html"))
                if args.call:
                    state = driver.execute_async_script(CALL)
                    if state != "connected":
                        sys.exit(f"play-latency: the call did not connect: {state}")
                if args.rates:
                    rate_figures(driver, clips, args.runs)
                    continue
                if args.grid:
                    grid_figures(driver, clips[1])
                    continue
                for clip in clips:
                    for muted in (False, True):
                        rows = [driver.execute_async_script(PROBE, clip.name, muted) for _ in range(args.runs)]
                        failed = [r["error"] for r in rows if "error" in r]
                        if failed:
                            sys.exit(f"play-latency: {clip.name}: {failed[0]}")
                        figures = {k: {"median": round(statistics.median(r[k] for r in rows), 1),
                                       "range": [round(min(r[k] for r in rows)), round(max(r[k] for r in rows))]}
                                   for k in FIGURES if all(k in r for r in rows)}
                        print(f"{setting:12} {clip.name:20} {'muted' if muted else 'unmuted':8} {json.dumps(figures)}",
                              flush=True)
            finally:
                browser.close()


if __name__ == "__main__":
    main()
