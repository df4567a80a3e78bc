#!/usr/bin/env python3
"""How closely embedded providers' players stay together (run by `commands/e2e --player NAME`).

The reusable part, for any provider with a stand-in: a real `cowatch serve`
whose setting `<provider>-api-url` points at the provider's stand-in on
loopback, N headless Chromium windows (each its own browser process) on one
room, commands typed into the first window's chat line, and each window's
true position read INSIDE the provider's frame (the stand-in's `<video>`),
with the instant of the reading, so that the spread is the players' and not
the coarseness of the provider's API. After each transition settles, the
spread of the positions extrapolated to one instant, as Tests/e2e/run_e2e.py
measures the `<video>` player.

A provider is a `Provider`: how to start its stand-in, the setting that names
its API, a link for an id, the CSS of its frame in the room page, the JS that
reads the true position inside that frame, how to make one window stall (an
ad break), and the id the stand-in refuses. `PROVIDERS` names them; the
scenario (`Scenario.run`) uses nothing else of a provider.

    python3 Tests/e2e/spread.py --cowatch BIN --player youtube [--record docs/benchmarks.md]
"""

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from browser_server import serve_for_browsers  # noqa: E402
from browser_window import Window  # noqa: E402
from figures import machine_description  # noqa: E402
from measure import percentile  # noqa: E402
from report import Failure, failure_words, log  # noqa: E402
from support.harness import settled, wait_until  # noqa: E402
from timecode_media import make_media  # noqa: E402
from vimeo_standin import NOT_EMBEDDABLE_ID, VimeoStandIn  # noqa: E402
from youtube_standin import YouTubeStandin  # noqa: E402

REPO = HERE.parent.parent
SETTLE_S = 2.0  # after a transition is applied everywhere, before measuring (a corrective seek's cycle)
SAMPLES = 10
SAMPLE_GAP_S = 0.2
WAIT_S = 30


@dataclass
class Provider:
    name: str
    setting: str  # the `cowatch serve` flag that names its API script
    standin: Callable  # (media_file, port) -> context manager with .api_url and .origin
    link: Callable  # (video id) -> the link a viewer pastes
    video_id: str  # a video the stand-in plays
    refused_id: str  # a video the stand-in refuses (not embeddable)
    refused_words: str  # what the page says of it
    frame_css: str  # the provider's frame in the room page
    truth_js: str  # run inside the frame: { t (epoch ms), position, paused }
    stall_js: str  # run in the room page with arguments[0] = ms: the player buffers that long
    # The run fails when the median of the transitions' median spreads exceeds
    # this: the player's own band (static/sync/correct.js: `start`, 100 ms for
    # YouTube's declared precision), within which it is in step by its rules.
    median_bound_ms: float
    standin_file: str = "Tests/e2e/youtube_standin.py"  # named in the record
    # A room rate this player cannot play: (rate, words its notice must have,
    # the row's note), or None when it plays every rate the room allows.
    odd_rate: tuple = (1.4, "1.5×", "not a rate YouTube plays")
    provider_hosts: tuple = ("youtube.com",)  # the real provider's hosts, absent from the page's policy here
    kind: str = ""  # the page's player kind (`source.kind`), when it is not the name
    band_text: str = ""  # what the bound means for this player, in the record (default: a seek-corrected player's)

    @property
    def player_kind(self):
        return self.kind or self.name


YOUTUBE = Provider(
    name="youtube",
    setting="youtube-api-url",
    standin=lambda media, port: YouTubeStandin(media, port),
    link=lambda video_id: f"https://www.youtube.com/watch?v={video_id}",
    video_id="dQw4w9WgXcQ",
    refused_id="notEmbed150",
    refused_words="does not allow it to be played on other sites",
    frame_css=".provider-player iframe",
    truth_js="""const v = window.standin.video;
const t0 = performance.timeOrigin + performance.now();
const position = v.currentTime;
const t1 = performance.timeOrigin + performance.now();
return { t: (t0 + t1) / 2, position, paused: v.paused, rate: v.playbackRate };""",
    stall_js="""const frame = document.querySelector('.provider-player iframe');
frame.contentWindow.postMessage(JSON.stringify({ event: 'standin', func: 'adBreak', args: [arguments[0]] }),
  new URL(frame.src).origin);""",
    median_bound_ms=100.0,
)

VIMEO_RATE_LOCKED_ID = "1000000"  # the stand-in refuses every rate change for it (an account without speed controls)
VIMEO_TRUTH_JS = """const v = document.getElementById('v');
const t0 = performance.timeOrigin + performance.now();
const position = v.currentTime;
const t1 = performance.timeOrigin + performance.now();
return { t: (t0 + t1) / 2, position, paused: v.paused, rate: v.playbackRate };"""
VIMEO_STALL_JS = """const frame = document.querySelector('.provider-player iframe');
frame.contentWindow.postMessage({ standin: 'stall', ms: arguments[0] }, new URL(frame.src).origin);"""

# Vimeo: continuous rates in 0.5..2, nudged like the <video>; its position is
# read by round trips (10 ms declared precision): the band is the nudge's.
VIMEO = Provider(
    name="vimeo",
    setting="vimeo-api-url",
    standin=lambda media, port: VimeoStandIn(media, port, rate_locked_ids={VIMEO_RATE_LOCKED_ID}),
    link=lambda video_id: f"https://vimeo.com/{video_id}",
    video_id="76979871",
    refused_id=NOT_EMBEDDABLE_ID,
    refused_words="does not allow it to be played on other sites",
    frame_css=".provider-player iframe",
    truth_js=VIMEO_TRUTH_JS,
    stall_js=VIMEO_STALL_JS,
    median_bound_ms=30.0,
    standin_file="Tests/e2e/vimeo_standin.py",
    odd_rate=None,
    provider_hosts=("vimeo.com",),
    band_text=("The Vimeo player has continuous rates (0.5 to 2): it is kept in step by rate nudges, as the "
               "`<video>`, on positions read by postMessage round trips (docs/browser.md, \"Vimeo\"); the run fails "
               "when the median of the transitions' medians passes 30 ms, three times its declared precision."),
)

# A Vimeo video whose owner's account has no speed controls: its first rate
# change is refused, and from then on it plays at 1 and is corrected by seeks
# (static/sync/correct.js, with its 10 ms precision: a 100 ms band).
VIMEO_LOCKED = replace(
    VIMEO,
    name="vimeo-locked",
    video_id=VIMEO_RATE_LOCKED_ID,
    median_bound_ms=100.0,
    odd_rate=(1.4, "1.4×", "this video's rate cannot be changed: played at 1, seek-corrected"),
    kind="vimeo",
    band_text=("A Vimeo video whose owner's account has no speed controls: its first rate change is refused, and "
               "from then on the player plays at 1 and is kept in step by corrective seeks (docs/browser.md, "
               "\"Drift correction by capability\"; with its 10 ms precision, a band of 100 ms each, 200 ms between "
               "two at worst). At /rate 1.5 and /rate 1.4 it plays at 1: it falls behind by 0.4 to 0.5 s each second "
               "and jumps back at each correction, so those rows show how far it falls between corrections."),
)

PROVIDERS = {"youtube": YOUTUBE, "vimeo": VIMEO, "vimeo-locked": VIMEO_LOCKED}

PAGE_JS = """
const c = window.cowatch;
const s = c && c.sync;
const r = s ? s.readings() : null;
const me = c && c.model.participants.get(c.model.meId);
return {
  kind: s ? s.kind : null, seq: s && s.state ? s.state.seq : null,
  playback: s && s.state ? s.state.playback : null,
  mode: s ? s.mode : null, detail: s ? s.detail : null, joining: s ? !!s.join : false,
  running: s ? !!s.running : false, fixing: s ? !!s.core.fix : false,
  readings: r ? { currentTime: r.currentTime, paused: r.paused, seeking: r.seeking, readyState: r.readyState,
                  playbackRate: r.playbackRate } : null,
  drift: s ? s.drift : null, seekLatency: s ? s.core.seekLatency : null, notice: s ? s.core.notice : null,
  me: me || null, members: c ? c.model.participants.size : 0,
  connection: c ? c.connection.phase : null, rtt: s ? s.clock.rtt : null,
  overlay: document.getElementById('overlay').hidden ? null : document.getElementById('overlay-text').textContent,
  overlayButton: document.getElementById('overlay-action').hidden ? null : document.getElementById('overlay-action').textContent,
};
"""


class Scenario:
    def __init__(self, provider, server, args, standin_origin):
        self.provider, self.standin_origin, self.server, self.args = provider, standin_origin, server, args
        self.room = f"{provider.name}-spread"
        self.windows = []
        self.rows = []
        self.checks = []
        self.deadline = time.monotonic() + args.time_limit

    # MARK: reading the windows

    def page(self, window):
        return window.js(PAGE_JS)

    def truth(self, window):
        """The true position, read in the provider's frame."""
        driver = window.driver
        frame = driver.find_element("css selector", self.provider.frame_css)
        driver.switch_to.frame(frame)
        try:
            return driver.execute_script(self.provider.truth_js)
        finally:
            driver.switch_to.default_content()

    def wait(self, predicate, what, windows=None, timeout=WAIT_S):
        windows = windows or self.windows
        seen = []

        def check():
            if time.monotonic() > self.deadline:
                raise Failure("the run took longer than its time limit")
            seen[:] = [self.page(w) for w in windows]
            return seen[:] if predicate(seen) else None

        def failure():
            detail = json.dumps([{k: p.get(k) for k in ("kind", "seq", "mode", "detail", "readings", "joining",
                                                         "running", "overlay")} for p in seen])
            return Failure(f"timed out waiting for {what}: {detail}")
        return wait_until(check, timeout, what, interval=0.2, failure=failure)

    def check(self, ok, what):
        self.checks.append((bool(ok), what))
        log(f"  {'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            raise Failure(what)

    def settled(self, status, windows=None):
        """Every window's player of this provider shows the same latest state with
        `status`, applied (harness.settled)."""
        def view(p):
            r = p["readings"] or {}
            ours = p["kind"] == self.provider.player_kind and p["playback"] and r
            return {"seq": p["seq"], "status": p["playback"]["status"] if ours else None,
                    "busy": r.get("seeking") or p["joining"] or p["fixing"] or (p["me"] or {}).get("suspensions"),
                    "running": p["mode"] == "playing" and not r.get("paused") and p["running"],
                    "held": r.get("paused") and r.get("readyState", 0) >= 2}
        return self.wait(lambda pages: settled([view(p) for p in pages], status), f"every window to settle {status}",
                         windows)

    def measure(self, name, status, windows=None):
        windows = windows or self.windows
        pages = self.settled(status, windows)
        time.sleep(SETTLE_S)  # part of what is measured: the spread this long after the transition applied
        playback = pages[0]["playback"]
        playing = status == "playing"
        spreads = []
        for _ in range(SAMPLES):
            readings = [self.truth(w) for w in windows]
            t = readings[0]["t"]
            positions = [r["position"] + (playback["rate"] * (t - r["t"]) / 1000 if playing else 0) for r in readings]
            spreads.append((max(positions) - min(positions)) * 1000)
            time.sleep(SAMPLE_GAP_S)
        pages = [self.page(w) for w in windows]
        row = {"transition": name, "windows": len(windows), "status": status, "rate": playback["rate"],
               "median": statistics.median(spreads), "max": max(spreads),
               "seek_latency": [round(p["seekLatency"] or 0) for p in pages]}
        self.rows.append(row)
        log(f"  {name:<36} spread median {row['median']:6.1f} ms, max {row['max']:6.1f} ms"
            f"  ({len(windows)} windows, {status}{', rate ' + str(playback['rate']) if playing else ''})")
        if os.environ.get("E2E_DEBUG"):
            for window in windows:
                log(f"    {window.label}: seek latency {self.page(window)['seekLatency']:.0f} ms")
                for entry in window.js("return window.cowatch.sync.history.slice(-10)"):
                    log(f"      {entry}")
        return row

    def type(self, line, window=None):
        (window or self.windows[0]).type(line)

    def seq(self):
        return self.page(self.windows[0])["seq"]

    def after(self, line, status, name, windows=None):
        before = self.seq()
        self.type(line)
        self.wait(lambda ps: all((p["seq"] or 0) > before for p in ps), f"the state after {line}", windows)
        return self.measure(name, status, windows)

    # MARK: the scenario

    def open(self, label, name, autoplay=True):
        window = Window(label, autoplay=autoplay)
        window.open(self.server.url(f"/rooms/{self.room}?name={name}"))
        return window

    def policy(self):
        """The room page's Content-Security-Policy allows scripts and frames from
        the stand-in's origin (the setting) and none of the real providers'."""
        with urllib.request.urlopen(self.server.url(f"/rooms/{self.room}"), timeout=10) as response:
            policy = response.headers.get("Content-Security-Policy") or ""
        directives = {d.split()[0]: d.split()[1:] for d in policy.split("; ") if d}
        origin = self.standin_origin
        self.check(origin in directives.get("script-src", []) and origin in directives.get("frame-src", [])
                   and not any(h in o for h in self.provider.provider_hosts
                               for o in directives.get("script-src", []) + directives.get("frame-src", [])),
                   f"the page's policy names the stand-in's origin for scripts and frames: {policy!r}")

    def run(self):
        p = self.provider
        self.policy()
        self.windows = [self.open(label, name) for label, name in [("A", "alice"), ("B", "bob"), ("C", "carol")]]
        self.wait(lambda ps: all(x["connection"] == "open" and x["members"] >= 3 for x in ps), "three windows connected")
        self.wait(lambda ps: all(x["rtt"] is not None for x in ps), "clock sync")

        before = self.seq()
        self.type(f"/watch {p.link(p.video_id)}")
        self.wait(lambda ps: all((x["seq"] or 0) > before and x["kind"] == p.player_kind for x in ps), f"the {p.name} player in every window")
        self.measure(f"/watch (a {p.name} link), paused", "paused")
        self.after("/play", "playing", "/play")
        self.after("/pause", "paused", "/pause")
        self.after("/seek 60", "paused", "/seek 60 (paused)")
        self.after("/play", "playing", "/play at 60")
        self.after("/seek 90", "playing", "/seek 90 while playing")
        if p.odd_rate is None or p.odd_rate[0] != 1.5:
            self.after("/rate 1.5", "playing", "/rate 1.5")
        if p.odd_rate is not None:
            rate, words, note = p.odd_rate
            row = self.after(f"/rate {rate:g}", "playing", f"/rate {rate:g} ({note})")
            notices = [self.page(w)["notice"] for w in self.windows]
            self.check(all(n and words in n for n in notices), "a rate the player cannot play is told in words: " + repr(notices[0]))
            row["note"] = note
        self.after("/rate 1", "playing", "/rate 1")

        # A stall: one window's player buffers (an ad break) for 3 s.
        b = self.windows[1]
        b.js(p.stall_js, 3000)
        self.wait(lambda ps: ps[0]["mode"] in ("suspended", "stalled") or any(
            (x["me"] or {}).get("suspensions") for x in ps) or ps[0]["playback"]["status"] == "waiting",
            "the stall to be seen", [b])
        self.measure("after a 3 s stall (ad break) in one window", "playing")

        # A late joiner whose browser refuses autoplay: the click-to-join path.
        self.windows[2].close()
        late = self.open("late", "dave", autoplay=False)
        self.windows[2] = late
        pages = self.wait(lambda ps: ps[0]["mode"] == "blocked" and ps[0]["overlayButton"], "the late joiner's refusal", [late])
        self.check("allow playback" in (pages[0]["overlay"] or ""),
                   f"a refused autoplay shows the click-to-join button: {pages[0]['overlayButton']!r}")
        late.driver.find_element("id", "overlay-action").click()
        self.measure("late joiner (autoplay refused, then a click)", "playing")

        # A video the provider refuses: every window says why, in words.
        before = self.seq()
        self.type(f"/watch {p.link(p.refused_id)}")
        pages = self.wait(lambda ps: all((x["seq"] or 0) > before and x["mode"] == "error" for x in ps), "the refusal")
        self.check(all(p.refused_words in (x["overlay"] or "") for x in pages),
                   f"a refused video is told in words: {pages[0]['overlay']!r}")


def record(path, provider, summary):
    """Writes the figures under '## Browser: <provider> player' in `path` (replacing that section)."""
    heading = f"## Browser: {provider.name} player"
    lines = [heading, "",
             f"`{summary['command']}` at commit {summary['commit']}, {summary['date']}, on {summary['machine']}.",
             "",
             f"Three windows, one room, the {provider.name} player through its stand-in "
             f"({provider.standin_file}); each position read inside the provider's frame. "
             "Spread: the largest distance between the windows' positions, extrapolated to one instant, "
             f"{SAMPLES} samples {SAMPLE_GAP_S:g} s apart, {SETTLE_S:g} s after each transition settled "
             "(every window on the new state, not seeking, no corrective seek in progress).",
             "",
             provider.band_text or
             f"The target for a seek-corrected player (docs/browser.md, \"Drift correction by capability\"): each within "
             f"{summary['bound']:g} ms of the timeline, so two within {2 * summary['bound']:g} ms at worst; the first corrective "
             "seek of a page lands as far off as its guess of the seek latency (what the seeks of its scheduled starts took) is wrong, later ones as the "
             "learned latency says. The rate row marked is one the player cannot play: its drift crosses the band on "
             "purpose between corrections.",
             "",
             "| transition | windows | median ms | max ms |",
             "|---|---|---|---|"]
    for row in summary["rows"]:
        lines.append(f"| {row['transition']} | {row['windows']} | {row['median']:.1f} | {row['max']:.1f} |")
    lines += ["", f"Median of the transitions' medians {summary['median']:.1f} ms (the run fails beyond "
              f"{summary['bound']:g} ms, the player's band); of the transitions' largest samples: p95 {summary['p95']:.1f} ms, "
              f"max {summary['max']:.1f} ms. Checks: {summary['checks']}.", ""]
    text = Path(path).read_text()
    start = text.find(heading)
    if start >= 0:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + "\n".join(lines) + ("\n" + text[end + 1:] if end >= 0 else "")
    else:
        marker = "\n## Gateway"
        at = text.find(marker)
        text = text[:at + 1] + "\n".join(lines) + "\n" + text[at + 1:] if at >= 0 else text + "\n" + "\n".join(lines)
    Path(path).write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cowatch", required=True)
    parser.add_argument("--player", required=True, choices=sorted(PROVIDERS))
    parser.add_argument("--web-root")
    parser.add_argument("--media-dir", default=str(REPO / ".build-e2e" / "e2e-media"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("E2E_STANDIN_PORT", "0")),
                        help="the stand-in's port (0: a free one)")
    parser.add_argument("--record", help="write the figures to this Markdown file")
    parser.add_argument("--time-limit", type=float, default=300)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scratch = REPO / ".build-e2e" / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    tempfile.tempdir = str(scratch)  # browser profiles and the server's folder go under .build-e2e
    provider = PROVIDERS[args.player]
    started = time.monotonic()
    load_before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    media = make_media(Path(args.media_dir))
    failed = None
    scenario = None
    with provider.standin(media, args.port) as standin:
        extra = [f"--{provider.setting}", standin.api_url, "--media-check", "false"]
        with serve_for_browsers(args.cowatch, args.web_root, extra) as server:
            log(f"server: {server.url('/')}  {provider.name} stand-in: {standin.api_url}")
            scenario = Scenario(provider, server, args, standin.origin)
            try:
                scenario.run()
            except Exception as error:  # noqa: BLE001 - report and fail, never hang
                failed = failure_words(error)
            finally:
                for window in scenario.windows:
                    errors = [m for m in window.console_errors() if "favicon" not in m]
                    for message in errors[:10]:
                        log(f"  console {window.label}: {message}")
                    window.close()
                if failed:
                    log("server log (tail):\n" + server.log_tail())
    spreads = [row["max"] for row in scenario.rows] if scenario else []
    passed = sum(1 for ok, _ in scenario.checks if ok) if scenario else 0
    log(f"\n{provider.name} spread ({time.monotonic() - started:.0f} s): {len(scenario.rows) if scenario else 0} transitions measured, "
        f"{passed} checks passed" + (f"; FAILED: {failed}" if failed else ""))
    if spreads:
        medians = [row["median"] for row in scenario.rows]
        median = statistics.median(medians)
        within = median < provider.median_bound_ms
        log(f"  median of the transitions' medians {median:.1f} ms (bound < {provider.median_bound_ms:g} ms: "
            f"{'ok' if within else 'EXCEEDED'}); largest sample {max(spreads):.1f} ms")
        if not within and not failed:
            failed = "the players were not kept within their band"
    if args.record and not failed and scenario and scenario.rows:
        commit = os.popen("git rev-parse --short HEAD").read().strip()
        all_medians = [row["median"] for row in scenario.rows]
        summary = {"command": os.environ.get("E2E_COMMAND") or " ".join(sys.argv), "commit": commit,
                   "date": time.strftime("%Y-%m-%d"), "machine": machine_description(load_before),
                   "rows": scenario.rows, "median": statistics.median(all_medians),
                   "p95": percentile(spreads, 0.95), "max": max(spreads), "checks": f"{passed} passed",
                   "bound": provider.median_bound_ms}
        record(args.record, provider, summary)
        log(f"recorded in {args.record}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
