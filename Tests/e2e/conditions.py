"""Conditions that real viewers have, each a short scenario of its own on a fresh
server and room (run by `commands/e2e --conditions NAME[,NAME...]`, or `all`):

  baseline              three browser processes on loopback, as the full scenario
  wan-20, wan-60,       each browser behind proxies of its own (delay_proxy.py) for
  wan-120, lossy        the WebSocket and for the media, with that network's delays,
                        jitter (different in each direction, bytes kept in order)
                        and, for lossy, stalls as a lost segment causes
  mixed-wan             A on loopback, B behind wan-60, C behind wan-120: viewers
                        on different networks in one room
  skewed-clocks         each browser's wall clock shifted by seconds (libfaketime
                        around Chromium): +5 s, -3 s, +1.5 s
  one-browser           one browser process, one driver session, three windows
  one-browser-windows   one browser's windows opened through the DevTools protocol,
                        a bot's commands, each window read over DevTools and on
                        screen (requestVideoFrameCallback): screen.py
  browsers-screen       the same, each window its own browser process
  slow-viewer-continue  one browser's media through the slow-viewer link (80 kB/s
  slow-viewer-wait      for a 100 kB/s video), under /policy stall continue / wait
  hidden-window         one browser whose hidden page has its timers throttled, as
                        in a browser a person uses: hidden behind another tab while
                        the group plays, then shown again
  voice                 baseline's scenario with all three pages in the room's
                        voice (Janus and coturn, Tests/voice/voice_services.py),
                        A's fake microphone speaking all along: smart volume
                        lowers B's and C's videos, and the spreads are read as
                        baseline's are; run through Tests/voice/in-namespace
                        (Janus's media needs the namespace's 127.0.0.2).
                        E2E_VOICE_SILENT=1: every microphone silent (no
                        speaking, no lowering); E2E_VOICE_NO_DUCK=1: smart
                        volume off on every page (no audio graph in the page)

The media URL is the room's, the same for every window, so it cannot name a
proxy of its own per browser: each Chromium is given a host resolver rule that
maps the media server's address to its own proxy (`--host-resolver-rules=MAP
127.0.0.1:MEDIA 127.0.0.1:PROXY`), and opens the room page through its other
proxy. Both proxies' figures (bytes, delays, stalls) are printed, and a proxy that
carried nothing fails the condition, so a figure is never taken over loopback by
mistake.

The scripted conditions go through /watch, a coordinated /play, playing on, a
seek while playing, /pause and /play again, measuring as the full scenario does
(settled spread after each transition, start spread at each coordinated start).
The slow viewer and the hidden window are watched instead: every window read
about seven times a second for a while, spreads taken whenever the windows
involved have been playing along for a second, and what each did in between.
"""

import concurrent.futures
import contextlib
import glob
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

from browser_server import serve_for_browsers
from browser_window import Window, read_all
from delay_proxy import CONDITIONS as NETWORKS
from delay_proxy import Direction, ThreadedDelayProxy
from figures import machine_description
from measure import TARGETS, percentile, spread_ms
from report import Failure, failure_words, log
from room_run import RoomRun

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402
from support.records import record_blocks  # noqa: E402

NAMES = ["baseline", "wan-20", "wan-60", "wan-120", "lossy", "mixed-wan", "skewed-clocks", "one-browser",
         "one-browser-windows", "browsers-screen", "slow-viewer-continue", "slow-viewer-wait", "hidden-window", "voice"]

ABOUT = {
    "baseline": "three browser processes on loopback, no proxy",
    "wan-20": "each browser behind its own proxies: " + NETWORKS["wan-20"].about,
    "wan-60": "each browser behind its own proxies: " + NETWORKS["wan-60"].about,
    "wan-120": "each browser behind its own proxies: " + NETWORKS["wan-120"].about,
    "lossy": "each browser behind its own proxies: " + NETWORKS["lossy"].about,
    "mixed-wan": "A on loopback, B behind wan-60 proxies, C behind wan-120 proxies: each page's offset "
                 "estimate is off by its own network's asymmetry",
    "skewed-clocks": "each browser's wall clock shifted (libfaketime): A +5 s, B -3 s, C +1.5 s",
    "one-browser": "one browser process, one driver session, three windows on the room",
    "one-browser-windows": "one browser process started without the flags that keep hidden pages' timers at full "
                           "speed, three windows opened with Target.createTarget (newWindow), a bot's /play, /pause, "
                           "/seek, /rate and a late fourth window; every window read ten times a second for 2 s from "
                           "2 s after each command, over DevTools and on screen",
    "browsers-screen": "as one-browser-windows, each window its own browser process",
    "slow-viewer-continue": "C's media through the slow-viewer link (80 kB/s down for a 100 kB/s video), "
                            "/policy stall continue",
    "slow-viewer-wait": "C's media through the slow-viewer link (80 kB/s down for a 100 kB/s video), "
                        "/policy stall wait",
    "hidden-window": "C's page hidden behind another tab for 15 s while the group plays, its timers "
                     "throttled as in a browser a person uses, then shown again",
    "voice": "baseline with the three pages in the room's voice (Janus, coturn), A's microphone speaking all "
             "along, B's and C's videos lowered by smart volume",
}

# The networks of mixed-wan's browsers (None: loopback, no proxy).
MIXED = {"A": None, "B": "wan-60", "C": "wan-120"}

# Seconds of each browser's clock shift in skewed-clocks (both directions).
CLOCK_SHIFTS_S = {"A": 5.0, "B": -3.0, "C": 1.5}

# The start target with network jitter.
START_TARGET_JITTER = 30.0

# CI bounds: robust figures, loose enough for a machine busy with other work,
# tight enough to catch a client that does not keep the windows together.
CI_BOUNDS = {"median": 15.0, "start_median": 40.0, "offset_error": 25.0, "back_in_sync_s": 10.0}

OBSERVE_SLOW_S = 45.0  # how long the slow viewer is watched while the group plays
HIDDEN_S = 15.0  # how long the hidden window stays hidden
CLEAN_FOR_S = 1.0  # playing along this long before a spread counts as settled
EXTRA_STARTS = {"lossy": 7}  # /pause, /play pairs after the scripted scenario
ONSET_S = 1.0  # readings this close before a reported stall are its onset
# Conditions that read the windows at set times after each command, not at
# coordinated starts: no start spread to hold to its target.
WITHOUT_STARTS = {"one-browser-windows", "browsers-screen"}


def faketime_library():
    """libfaketime from Debian's faketime package (commands/setup installs it)."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    if not found:
        raise Failure("libfaketime is missing (apt-get install faketime)")
    return found[0]


def shifted_chromium(folder, shift_s):
    """A wrapper to give chromedriver as the browser binary: Chromium with its
    wall clock shifted by shift_s. libfaketime shifts CLOCK_MONOTONIC with it
    (its default), so performance.timeOrigin + performance.now(), the page's
    clock, moves by the same shift as Date.now(); with DONT_FAKE_MONOTONIC=1 a
    negative shift came out wrong (-0.7 s for -3 s) and the browser ran many
    times slower. The sandbox is off in these tests (--no-sandbox), so the
    preload reaches every Chromium process through the environment."""
    path = Path(folder) / f"chromium-shifted{shift_s:+g}s"
    path.write_text("#!/bin/sh\n"
                    f"export LD_PRELOAD={faketime_library()}\n"
                    f"export FAKETIME='{shift_s:+g}s'\n"
                    f"exec {shutil.which('chromium') or '/usr/bin/chromium'} \"$@\"\n")
    path.chmod(0o755)
    return str(path)


class TabWindow(Window):
    """One of several windows of one browser process, driven by one session:
    every call first switches the session to this window. The first window
    holds the browser (`chromium`): its close() quits it."""

    def __init__(self, label, driver, handle, chromium=None):
        self.label = label
        self.driver = driver
        self.handle = handle
        self.chromium = chromium
        self.profile = chromium.profile if chromium else None
        self.clock_shift_ms = 0.0

    def focus(self):
        if getattr(self.driver, "e2e_current", None) != self.handle:
            self.driver.switch_to.window(self.handle)
            self.driver.e2e_current = self.handle

    def open(self, url):
        self.focus()
        super().open(url)

    def js(self, script, *args):
        self.focus()
        return super().js(script, *args)

    def type(self, line):
        self.focus()
        super().type(line)

    def console_errors(self):
        self.focus()
        return super().console_errors()

    def close(self):
        if self.chromium:
            super().close()


def one_browser_windows(labels):
    first = Window(labels[0])
    driver = first.driver
    windows = [TabWindow(labels[0], driver, driver.current_window_handle, first.chromium)]
    for label in labels[1:]:
        driver.switch_to.new_window("window")
        windows.append(TabWindow(label, driver, driver.current_window_handle))
    driver.e2e_current = driver.current_window_handle
    return windows


class Network:
    """The proxies of one browser: one in front of the server (the page and its
    WebSocket), one in front of the media server."""

    def __init__(self, label, server_port, media_port, server_side, media_side, seed):
        self.label = label
        self.server_proxy = ThreadedDelayProxy("127.0.0.1", server_port, **server_side, seed=seed)
        self.media_proxy = ThreadedDelayProxy("127.0.0.1", media_port, **media_side, seed=seed + 1)
        self.server_proxy.start()
        self.media_proxy.start()
        self.media_port = media_port

    def flags(self):
        return [f"--host-resolver-rules=MAP 127.0.0.1:{self.media_port} 127.0.0.1:{self.media_proxy.port}"]

    def page_port(self):
        return self.server_proxy.port

    def figures(self):
        return {"server": self.server_proxy.stats(), "media": self.media_proxy.stats()}

    def stop(self):
        self.server_proxy.stop()
        self.media_proxy.stop()


def describe_direction(figures):
    delay = figures["delay_ms"] or {}
    text = f"{figures['bytes'] / 1024:.0f} KiB"
    if delay:
        text += f", delay median {delay['median']:.0f} p95 {delay['p95']:.0f} max {delay['max']:.0f} ms"
    if figures["stalls"]:
        text += f", {figures['stalls']} stalls"
    return text


class ConditionRun(RoomRun):
    """The scenario's waits and measurements (RoomRun), with starts that report a
    window that missed its start instead of dropping the start, and the figures
    a condition adds: proxies, clock offsets, observations."""

    def __init__(self, server, media, args, name):
        super().__init__(server, media, args)
        self.name = name
        self.room = f"cond-{name}"
        self.late_starts = []
        self.start_errors = []  # each video's start minus `at`, in true time
        # Under lossy a start is missed only when a stall falls just before it:
        # more starts than the scripted three show how often.
        self.extra_starts = EXTRA_STARTS.get(name, 0)
        self.networks = []
        self.observations = {}

    def start_spread(self, windows=None, after_seq=None):
        windows = windows or self.windows
        reading = self.coordinated_start(windows, after_seq)
        return self.measure_start(windows, reading["playback"], reading["t"])

    @staticmethod
    def log_histories(windows):
        """E2E_DEBUG=1: each window's own account of its latest starts."""
        if not os.environ.get("E2E_DEBUG"):
            return
        for window in windows:
            log(f"    {window.label}: " + " | ".join(window.js(
                "return window.cowatch.sync.history.filter(h => /play\\(\\)|started|join|state \\d+ playing|seek/.test(h)).slice(-8)")))

    def measure_start(self, windows, playback, seen):
        """Reads every window 150 ms after `at` and extrapolates back to when each
        video left the start position. A window still paused or seeking then
        missed the instant (it joins late): it is counted, not hidden."""
        at, position, rate = playback["at"], playback["position"], playback["rate"]
        wake = at / 1000 + 0.15 - time.time()
        if wake > 0:
            time.sleep(wake)
        starts, late = [], []
        for window, r in zip(windows, read_all(windows)):
            if r["paused"] or r["seeking"]:
                late.append(window.label)
            else:
                starts.append(r["t"] - (r["position"] - position) / rate * 1000)
        if late:
            # When did each late video really start? Its first reading not
            # paused nor seeking, 30 ms apart at most.
            lateness = {}
            waiting = [w for w in windows if w.label in late]
            end = time.monotonic() + 10
            while waiting and time.monotonic() < end:
                for window in list(waiting):
                    r = window.read()
                    if not r["paused"] and not r["seeking"]:
                        lateness[window.label] = r["t"] - at
                        waiting.remove(window)
                time.sleep(0.02)
            self.late_starts.append({label: round(lateness[label]) if label in lateness else None for label in late})
            log(f"  coordinated start: {', '.join(late)} not yet playing 150 ms after at (lead {at - seen:.0f} ms "
                f"as this test saw the state): joined late, playing "
                + ", ".join(f"{lateness[label]:.0f} ms" if label in lateness else "not within 10 s" for label in late)
                + " after at")
            self.log_histories(windows)
            return None
        spread = max(starts) - min(starts)
        self.start_spreads.append(spread)
        self.start_errors.extend(s - at for s in starts)
        errors = ", ".join(f"{s - at:+.1f}" for s in starts)
        log(f"  coordinated start: spread {spread:.1f} ms (each minus at: {errors} ms; lead {at - seen:.0f} ms)")
        self.log_histories(windows)
        return spread


def clean(reading, seq):
    """Playing along with the group's latest state, nothing in the way."""
    return (reading["seq"] == seq and reading["playback"] and reading["playback"]["status"] == "playing"
            and reading["mode"] == "playing" and reading["running"] and not reading["paused"]
            and not reading["seeking"] and not reading["joining"] and not (reading["me"] or {}).get("suspensions"))


# MARK: the scenarios


def scripted(run):
    """/watch, a coordinated /play, playing on, a seek while playing, /pause and
    /play again, each transition measured."""
    a, b, c = run.windows[:3]
    media_url = run.media.url("timecode.mp4")
    a.type(f"/watch {media_url} Test pattern")
    run.measure("/watch (paused at 0)", "paused")
    run.measure_started(a, "/play", "/play (coordinated start)")
    time.sleep(3)  # time on purpose: how far apart the videos drift while playing on
    run.measure("playing 3 s later", "playing")
    run.measure_started(b, "/seek 60", "/seek 60 while playing")
    run.measure_typed(c, "/pause", "/pause", "paused", run.everyone("paused"), "the pause")
    run.measure_started(a, "/play", "/play again")
    time.sleep(3)  # time on purpose, as above
    run.measure("playing 3 s later", "playing")
    for _ in range(run.extra_starts):
        run.settled("playing")
        a.type("/pause")
        run.settled("paused")
        seq = run.seq()
        a.type("/play")
        run.start_spread(after_seq=seq)


def observe(run, seconds, group, everyone, track):
    """Reads every window about seven times a second for `seconds`. Spreads are
    taken over `group` whenever it has been playing along for CLEAN_FOR_S, and
    over every window when all of them have; coordinated starts of the group
    are measured as they come; `track` (a window) has its modes and suspensions
    kept as a timeline, and the group's waits too."""
    end = time.monotonic() + seconds
    clean_since = {"group": None, "everyone": None}
    spreads = {"group": [], "everyone": []}
    stamped = {"group": [], "everyone": []}  # (seconds since the start, spread)
    timeline = []  # (seconds since the start, what changed)
    episodes = {"suspended": [], "waiting": []}  # [start, end] in seconds since the start
    open_episode = {"suspended": None, "waiting": None}
    measured_seqs = set()
    began = time.monotonic()
    first = read_all(everyone)
    last_seen = None
    progress = [(first[0]["t"], first[0]["position"])]
    index = {id(w): i for i, w in enumerate(everyone)}
    group_at = [index[id(w)] for w in group]
    tracked = index[id(track)]
    while time.monotonic() < end:
        if time.monotonic() > run.deadline:
            raise Failure("the run took longer than its time limit")
        rs = read_all(everyone)
        now = time.monotonic() - began
        seq = max(r["seq"] or 0 for r in rs)
        status = rs[group_at[0]]["playback"]["status"] if rs[group_at[0]]["playback"] else None
        mine = rs[tracked]
        suspensions = tuple((mine["me"] or {}).get("suspensions") or ())
        seen = (status, mine["mode"], suspensions)
        if seen != last_seen:
            timeline.append((round(now, 2), f"group {status}; {track.label} {mine['mode']}"
                             + (f" suspended {','.join(suspensions)}" if suspensions else "")))
            last_seen = seen
        for kind, on in (("suspended", bool(suspensions)), ("waiting", status == "waiting")):
            if on and open_episode[kind] is None:
                open_episode[kind] = now
            elif not on and open_episode[kind] is not None:
                episodes[kind].append([open_episode[kind], now])
                open_episode[kind] = None
        for key, members in (("group", group_at), ("everyone", range(len(everyone)))):
            if all(clean(rs[i], seq) for i in members):
                clean_since[key] = clean_since[key] if clean_since[key] is not None else now
                if now - clean_since[key] >= CLEAN_FOR_S:
                    chosen = [rs[i] for i in members]
                    spread = spread_ms(chosen, True, chosen[0]["playback"]["rate"])
                    spreads[key].append(spread)
                    stamped[key].append((now, spread))
            else:
                clean_since[key] = None
        playback = rs[group_at[0]]["playback"]
        if (playback and playback["status"] == "playing" and seq not in measured_seqs
                and all(rs[i]["seq"] == seq for i in group_at) and playback["at"] / 1000 + 0.1 > time.time()):
            measured_seqs.add(seq)
            run.measure_start(group, playback, rs[group_at[0]]["t"])
        if status == "playing":
            progress.append((rs[group_at[0]]["t"], rs[group_at[0]]["position"]))
        time.sleep(0.1)
    for kind in episodes:
        if open_episode[kind] is not None:
            episodes[kind].append([open_episode[kind], time.monotonic() - began])
    wall = (progress[-1][0] - progress[0][0]) / 1000
    return {
        "seconds": time.monotonic() - began, "spreads": spreads, "stamped": stamped, "timeline": timeline, "episodes": episodes,
        "media_seconds": progress[-1][1] - progress[0][1], "wall_seconds": wall,
    }


def slow_viewer(run, policy):
    """C's media crawls through the slow-viewer link while A and B have loopback:
    the group plays for OBSERVE_SLOW_S under `/policy stall <policy>`, and the test
    notes what the group and C do."""
    a, b, c = run.windows
    a.type(f"/policy stall {policy}")
    run.wait(lambda rs: all(r["policy"] and r["policy"]["stall"] == policy for r in rs), 10, "the policy")
    a.type(f"/watch {run.media.url('timecode.mp4')} Test pattern")
    run.measure("/watch (paused at 0)", "paused")
    seq = run.seq()
    a.type("/play")
    group = [a, b] if policy == "continue" else [a, b, c]
    start = run.start_spread(windows=group, after_seq=seq)
    log(f"  watching for {OBSERVE_SLOW_S:g} s while C's media crawls:")
    seen = observe(run, OBSERVE_SLOW_S, group, run.windows, c)
    for moment, what in seen["timeline"]:
        log(f"    {moment:6.2f} s  {what}")
    stalls, waits = seen["episodes"]["suspended"], seen["episodes"]["waiting"]
    group_key = "group" if policy == "continue" else "everyone"
    run.all_spreads.extend(seen["spreads"][group_key])
    suspended_s = sum(e - s for s, e in stalls)
    waited_s = sum(e - s for s, e in waits)
    rate = seen["media_seconds"] / seen["wall_seconds"] if seen["wall_seconds"] else 0.0

    def figures_of(values):
        if not values:
            return None
        return {"n": len(values), "median": statistics.median(values), "p95": percentile(values, 0.95),
                "max": max(values)}
    # A stall begins before anyone is told: the starved video stops while its
    # page still plays along, until it reports. Readings in the second before
    # a suspension or a wait began are that onset; the others are the spread
    # between stalls.
    onsets = [begin for begin, _ in stalls + waits]
    between = {key: [spread for moment, spread in seen["stamped"][key]
                     if not any(0 <= begin - moment <= ONSET_S for begin in onsets)]
               for key in ("group", "everyone")}
    spreads = {f"{key}{'_between' if apart else ''}": figures_of(between[key] if apart else seen["spreads"][key])
               for key in ("group", "everyone") for apart in (False, True)}
    figures = {
        "policy": policy, "observed_s": round(seen["seconds"], 1),
        "c_suspensions": len(stalls), "c_suspended_s": round(suspended_s, 1),
        "group_waits": len(waits), "group_waited_s": round(waited_s, 1),
        "media_rate": round(rate, 3), "spreads": spreads, "first_start": start,
        "timeline": seen["timeline"],
    }
    run.observations = figures

    def text(f):
        return (f"median {f['median']:.1f}, p95 {f['p95']:.1f}, max {f['max']:.1f} ms ({f['n']} readings)"
                if f else "no readings")
    log(f"  C suspended {len(stalls)} times, {suspended_s:.1f} s of {seen['seconds']:.0f}; "
        f"the group waited {len(waits)} times, {waited_s:.1f} s; the group's video advanced "
        f"{seen['media_seconds']:.1f} s in {seen['wall_seconds']:.1f} s ({rate:.2f}x)")
    names = {"group": "A, B" if policy == "continue" else "A, B, C", "everyone": "all three, C playing along"}
    for key in ("group", "everyone") if policy == "continue" else ("everyone",):
        log(f"  spread of {names[key]}: {text(spreads[key])}; of these, the ones more than {ONSET_S:g} s "
            f"before a stall was reported: {text(spreads[key + '_between'])}")
        title = "watched: " + names[key]
        run.row_from(title, seen["spreads"][key], 2 if key == "group" and policy == "continue" else 3)
        run.row_from(title + f", more than {ONSET_S:g} s before a stall", between[key],
                     2 if key == "group" and policy == "continue" else 3)
    if policy == "continue":
        run.check(len(stalls) >= 1, f"the slow viewer stalled and was suspended ({len(stalls)} times)")
        run.check(not waits, f"under stall continue the group never waited ({len(waits)} waits)")
        run.check(rate > 0.97, f"under stall continue the group played on at its rate ({rate:.2f}x)")
    else:
        run.check(len(waits) >= 1, f"under stall wait the group waited for the slow viewer ({len(waits)} waits)")


def hidden_window(run):
    """C's page goes behind another tab for HIDDEN_S while the group plays (its
    timers throttled, which the test verifies), then comes back: how far it
    drifted, and how fast it is back in step."""
    a, b, c = run.windows
    a.type(f"/watch {run.media.url('timecode.mp4')} Test pattern")
    run.measure("/watch (paused at 0)", "paused")
    run.measure_started(a, "/play", "/play (coordinated start)")
    # A 50 ms interval in C's page: the gaps between its ticks show whether the
    # hidden page's timers were throttled; each tick notes the video too.
    c.js("""window.e2eTicks = [];
            setInterval(() => {
              const v = document.querySelector('video');
              window.e2eTicks.push([performance.now(), document.visibilityState, v.currentTime, v.paused]);
            }, 50);""")
    run.wait_js(c, "return window.e2eTicks.length >= 10", 5, "C's interval ticking while visible")
    room_tab = c.driver.current_window_handle
    cover = c.driver.execute_cdp_cmd("Target.createTarget", {"url": "about:blank"})
    hidden_at = time.monotonic()
    state = c.js("return document.visibilityState")
    run.check(state == "hidden", f"C's page is hidden behind another tab (visibilityState {state!r})")
    run.measure("A, B while C is hidden", "playing", windows=[a, b])
    drifts = []
    while time.monotonic() - hidden_at < HIDDEN_S:
        rs = read_all(run.windows)
        expected = rs[0]["position"] + (rs[2]["t"] - rs[0]["t"]) / 1000 * rs[0]["playback"]["rate"]
        drifts.append((round(time.monotonic() - hidden_at, 1), round((rs[2]["position"] - expected) * 1000),
                       rs[2]["paused"], rs[2]["mode"]))
        time.sleep(0.5)
    log("  C while hidden (seconds hidden, its position minus A's in ms, paused, mode): "
        + ", ".join(f"{t:g}:{d:+d}{' p' if p else ''} {m}" for t, d, p, m in drifts[::4]))
    hidden_history = c.js("return window.cowatch.sync.history.slice(-4)")
    log("  C's player, last things it did while hidden:")
    for line in hidden_history:
        log(f"    C: {line}")
    c.driver.execute_cdp_cmd("Target.activateTarget", {"targetId": room_tab})
    c.driver.execute_cdp_cmd("Target.closeTarget", {"targetId": cover["targetId"]})
    shown = time.monotonic()
    visible_after = None
    together = []
    back = None
    while time.monotonic() - shown < 20:
        rs = read_all(run.windows)
        now = time.monotonic() - shown
        if visible_after is None and c.js("return document.visibilityState") == "visible":
            visible_after = now
        seq = max(r["seq"] or 0 for r in rs)
        if all(clean(r, seq) for r in rs) and spread_ms(rs, True, rs[0]["playback"]["rate"]) < TARGETS["p95"]:
            together.append(now)
            if len(together) >= 3:
                back = together[0]
                break
        else:
            together = []
        time.sleep(0.05)
    ticks = c.js("return window.e2eTicks")
    hidden_gaps = [y[0] - x[0] for x, y in zip(ticks, ticks[1:]) if x[1] == "hidden" and y[1] == "hidden"]
    visible_gaps = [y[0] - x[0] for x, y in zip(ticks, ticks[1:]) if x[1] == "visible" and y[1] == "visible"]
    paused_hidden = sum(1 for t in ticks if t[1] == "hidden" and t[3])
    hidden_ticks = sum(1 for t in ticks if t[1] == "hidden")
    gap = statistics.median(hidden_gaps) if hidden_gaps else float("nan")
    log(f"  C's 50 ms interval while hidden: {len(hidden_gaps) + 1} ticks in {HIDDEN_S:g} s, median gap "
        f"{gap:.0f} ms (visible: {statistics.median(visible_gaps) if visible_gaps else float('nan'):.0f} ms); "
        f"its video paused at {paused_hidden} of {hidden_ticks} hidden ticks")
    run.check(hidden_gaps and gap >= 500, f"C's timers were throttled while hidden (median gap {gap:.0f} ms)")
    history = c.js("return window.cowatch.sync.history.slice(-12)")
    if back is None:
        for line in history:
            log(f"    {line}")
        raise Failure("C did not come back in step within 20 s of being shown")
    log(f"  shown again: visible after {visible_after or 0:.2f} s, back in step (spread < {TARGETS['p95']:g} ms, "
        f"three readings running) after {back:.2f} s")
    for line in history[-6:]:
        log(f"    C: {line}")
    run.measure("C shown again, all three", "playing")
    run.observations = {
        "hidden_s": HIDDEN_S, "hidden_timer_gap_ms": round(gap), "hidden_ticks": hidden_ticks,
        "hidden_paused_ticks": paused_hidden, "drift_at_show_ms": drifts[-1][1] if drifts else None,
        "visible_after_s": round(visible_after or 0, 2), "back_in_sync_s": round(back, 2),
        "drifts": drifts, "hidden_history": hidden_history,
    }
    run.check(back < CI_BOUNDS["back_in_sync_s"],
              f"C is back in step within {CI_BOUNDS['back_in_sync_s']:g} s of being shown ({back:.2f} s)")


def row_from(self, name, spreads, windows):
    """A row of the transitions' table from observed spreads."""
    if not spreads:
        return
    self.rows.append({"transition": name, "windows": windows, "status": "playing", "rate": 1,
                      "median": statistics.median(spreads), "max": max(spreads), "start": None, "note": ""})


ConditionRun.row_from = row_from


# MARK: one condition


def run_condition(name, args, binary, media):
    """A fresh server, browsers (and proxies) for `name`, its scenario; returns
    its summary."""
    started = time.monotonic()
    load_before = os.getloadavg()
    log("")
    log(f"condition {name}: {ABOUT[name]}")
    failed = None
    folder = tempfile.mkdtemp(prefix=f"cowatch-e2e-{name}-")
    labels = ["A", "B", "C"]
    with contextlib.ExitStack() as stack:
        voice = stack.enter_context(voice_services()) if name == "voice" else None
        server = stack.enter_context(serve_for_browsers(binary, args.web_root,
                                                        extra_args=voice.serve_args() if voice else ()))
        run = ConditionRun(server, media, args, name)
        offsets_true = {label: 0.0 for label in labels}
        try:
            options = {label: {} for label in labels}
            page_ports = {label: server.port for label in labels}
            networked = name in NETWORKS or name.startswith("slow-viewer") or name == "mixed-wan"
            if networked:
                for label in labels:
                    if name in NETWORKS:
                        server_side = media_side = NETWORKS[name].directions()
                    elif name == "mixed-wan":
                        if not MIXED[label]:
                            continue
                        server_side = media_side = NETWORKS[MIXED[label]].directions()
                    elif label == "C":  # the slow viewer: its own link, the others on loopback
                        slow = NETWORKS["slow-viewer"]
                        media_side = slow.directions()
                        server_side = {"up": Direction(slow.up.delay_ms, slow.up.jitter_ms),
                                       "down": Direction(slow.down.delay_ms, slow.down.jitter_ms)}
                    else:
                        continue
                    # Repeatable draws (delays, jitter, which segments stall);
                    # E2E_SEED gives another series.
                    seed = zlib.crc32(f"{name}:{label}{os.environ.get('E2E_SEED', '')}".encode())
                    network = Network(label, server.port, media.port, server_side, media_side, seed)
                    run.networks.append(network)
                    options[label]["extra_flags"] = network.flags()
                    page_ports[label] = network.page_port()
            if name == "skewed-clocks":
                for label in labels:
                    options[label]["binary"] = shifted_chromium(folder, CLOCK_SHIFTS_S[label])
                    options[label]["clock_shift_ms"] = CLOCK_SHIFTS_S[label] * 1000
                    offsets_true[label] = -CLOCK_SHIFTS_S[label] * 1000
            if name == "hidden-window":
                options["C"]["throttled"] = True
            if name == "voice":
                microphones = voice_microphones(folder)
                for label in labels:
                    options[label]["extra_flags"] = microphone_flags(microphones[label])
            browser = None
            if name == "one-browser":
                run.windows = one_browser_windows(labels)
            elif name in ("one-browser-windows", "browsers-screen"):
                import screen
                browser = screen.WindowsOfOneBrowser() if name == "one-browser-windows" else screen.SeparateBrowsers()
                run.windows = [browser.open_window(label) for label in labels]
            else:
                with concurrent.futures.ThreadPoolExecutor(3) as pool:
                    run.windows = list(pool.map(lambda label: Window(label, **options[label]), labels))
            for window, person in zip(run.windows, ["alice", "bob", "carol"]):
                window.open(f"http://127.0.0.1:{page_ports[window.label]}/rooms/{run.room}?name={person}")
            run.wait(lambda rs: all(r["connection"] == "open" and r["members"] >= 3 for r in rs), 20,
                     "three windows connected")
            run.wait(lambda rs: all(r["rtt"] is not None and r["rtt"] < 2000 for r in rs), 10, "clock sync")
            if name == "skewed-clocks":
                check_shifts(run)
            if name in ("one-browser", "one-browser-windows"):
                states = [w.js("return document.visibilityState") for w in run.windows]
                handles = {w.handle for w in run.windows}
                run.check(len(handles) == 3 and states == ["visible"] * 3,
                          f"one browser session shows the room in three windows, each visible: {states}")
            # The page samples the clock in a burst of 8 when it connects, then
            # every half second for 10 s: give the estimate the quick samples it
            # has 3 s after connecting (8 + 6).
            for window in run.windows:
                run.wait_js(window, "return window.cowatch.clock.samples.length >= 14", 20,
                            f"{window.label}'s first clock samples")
            if name == "voice":
                join_voice(run)
            if name.startswith("slow-viewer"):
                slow_viewer(run, name.rsplit("-", 1)[1])
            elif name == "hidden-window":
                hidden_window(run)
            elif name in ("one-browser-windows", "browsers-screen"):
                screen.scenario(run, browser)
            else:
                scripted(run)
            run.offsets = offsets(run, offsets_true)
            if run.networks:
                network_figures(run)
        except Exception as error:  # noqa: BLE001 - report and fail, never hang
            failed = failure_words(error)
        finally:
            errors = []
            for window in run.windows:
                try:
                    errors += [f"{window.label}: {m}" for m in window.console_errors()
                               if "favicon" not in m and "net::ERR" not in m]
                except Exception:  # noqa: BLE001 - a closed browser has no log
                    pass
            for window in run.windows:
                window.close()
            for network in run.networks:
                network.stop()
            shutil.rmtree(folder, ignore_errors=True)
            if errors:
                log("  browser console errors:\n    " + "\n    ".join(errors[:10]))
            if failed:
                log(f"  FAILED: {failed}")
                log("  server log (tail):\n" + server.log_tail(15))
    return summarize(name, run, failed, load_before, time.monotonic() - started)


def voice_services():
    """Janus and coturn on loopback, as the voice test starts them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "voice"))
    from voice_services import VoiceServices
    return VoiceServices()


def voice_microphones(folder):
    """A speaks espeak-ng's speech (looped by Chromium), B and C are silent."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "voice"))
    from voice_pages import make_audio
    speech, silence = make_audio(folder)
    if os.environ.get("E2E_VOICE_SILENT"):
        return {"A": silence, "B": silence, "C": silence}
    return {"A": speech, "B": silence, "C": silence}


def microphone_flags(path):
    return ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={path}", "--allow-loopback-in-peer-connection"]


def join_voice(run):
    """Each page joins the room's voice from its panel, and B and C hear A."""
    for window in run.windows:
        run.wait_js(window, "return !document.getElementById('voice-panel').hidden", 20,
                    f"{window.label}'s voice panel")
        if os.environ.get("E2E_VOICE_NO_DUCK"):
            window.js("const d = document.getElementById('voice-duck'); if (d.checked) d.click();")
        window.js("document.getElementById('voice-join').click()")
    for window in run.windows:
        run.wait_js(window, "return window.cowatch.voice.phase === 'on'", 20, f"{window.label} in voice")
    for window in run.windows[1:] if not (os.environ.get("E2E_VOICE_SILENT") or os.environ.get("E2E_VOICE_NO_DUCK")) else []:
        run.wait_js(window, "return document.getElementById('video').volume < 1", 20,
                    f"{window.label}'s video lowered while A speaks")
    run.check(True, "the three pages in voice, B's and C's videos lowered by smart volume while A speaks")
    log("  voice: the three pages in the room's voice; A speaks all along")


def check_shifts(run):
    """Each browser's clock really is shifted: Date.now() in the page against
    this process's clock, within the time a read takes."""
    seen = []
    for window in run.windows:
        before = time.time() * 1000
        page = window.js("return Date.now()")
        after = time.time() * 1000
        shift = page - (before + after) / 2
        seen.append(shift)
        expected = window.clock_shift_ms
        run.check(abs(shift - expected) < 250 + (after - before),
                  f"{window.label}'s clock is shifted by {expected / 1000:+g} s under libfaketime "
                  f"(the page's Date.now() is {shift / 1000:+.3f} s off)")
    log("  clocks: " + ", ".join(f"{w.label} {s / 1000:+.3f} s" for w, s in zip(run.windows, seen))
        + " (the page's Date.now() against the true time)")


def offsets(run, truth):
    """Each page's estimate of (server - local) against the true one."""
    rows = []
    for window in run.windows:
        r = window.read()
        estimate = r["offset"] or 0.0
        true = truth.get(window.label, 0.0)  # a window that joined later is on this machine too
        rows.append({"window": window.label, "estimate": estimate, "true": true, "error": estimate - true,
                     "uncertainty": r["uncertainty"], "rtt": r["rtt"]})
    log("  clock offsets (server - local): " + "; ".join(
        f"{o['window']} {o['estimate']:+.1f} ± {o['uncertainty'] or 0:.1f} ms (true {o['true']:+.0f}, "
        f"error {o['error']:+.1f}, rtt {o['rtt'] or 0:.0f})" for o in rows))
    return rows


def network_figures(run):
    for network in run.networks:
        figures = network.figures()
        network.summary = {}
        for side in ("server", "media"):
            f = figures[side]
            network.summary[side] = {"connections": len(f["connections"]), "up": f["up"], "down": f["down"]}
            log(f"  {network.label} {'WebSocket and page' if side == 'server' else 'media'} proxy: "
                f"{len(f['connections'])} connections; up {describe_direction(f['up'])}; "
                f"down {describe_direction(f['down'])}")
            run.check(f["down"]["bytes"] > 0 and f["up"]["bytes"] > 0,
                      f"{network.label}'s {side} traffic went through its proxy")


def summarize(name, run, failed, load_before, seconds):
    spreads = run.all_spreads
    jitter = name in NETWORKS or name.startswith("slow-viewer") or name == "mixed-wan"
    start_target = START_TARGET_JITTER if jitter else TARGETS["start"]
    summary = {
        "condition": name, "about": ABOUT[name], "failure": failed, "seconds": round(seconds, 1),
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "samples": len(spreads), "starts": len(run.start_spreads), "late_starts": run.late_starts,
        "p95": percentile(spreads, 0.95) if spreads else None,
        "max": max(spreads) if spreads else None,
        "median": statistics.median(spreads) if spreads else None,
        "start_max": max(run.start_spreads) if run.start_spreads else None,
        "start_median": statistics.median(run.start_spreads) if run.start_spreads else None,
        "start_target": start_target,
        "start_error_min": min(run.start_errors) if run.start_errors else None,
        "start_error_max": max(run.start_errors) if run.start_errors else None,
        "rows": run.rows, "offsets": run.offsets or [],
        "checks": [{"ok": ok, "what": what} for ok, what in run.checks],
        "networks": [{"window": n.label, **getattr(n, "summary", {})} for n in run.networks],
        "observations": run.observations,
    }
    targets = {"p95": TARGETS["p95"], "max": TARGETS["max"], "start_max": start_target}
    if name in WITHOUT_STARTS:
        del targets["start_max"]
    summary["targets_met"] = {key: (summary[key] is not None and summary[key] < bound) for key, bound in targets.items()}
    # A window that missed the instant has no start spread to show, but it
    # did not start together with the others: the start target is missed.
    if "start_max" in summary["targets_met"]:
        summary["targets_met"]["start_max"] = summary["targets_met"]["start_max"] and not run.late_starts
    bounds = []
    if summary["median"] is not None:
        bounds.append(("median settled spread", summary["median"], CI_BOUNDS["median"]))
    if summary["start_median"] is not None:
        bounds.append(("median start spread", summary["start_median"], CI_BOUNDS["start_median"]))
    for o in summary["offsets"]:
        bounds.append((f"{o['window']}'s clock offset error", abs(o["error"]), CI_BOUNDS["offset_error"]))
    summary["bounds"] = [{"what": what, "value": value, "bound": bound, "ok": value < bound}
                         for what, value, bound in bounds]

    def ms(value):
        return f"{value:.1f} ms" if value is not None else "n/a"
    log(f"{name}: p95 settled spread {ms(summary['p95'])}, largest {ms(summary['max'])}, "
        f"median {ms(summary['median'])} ({len(spreads)} spreads); largest start spread {ms(summary['start_max'])} "
        f"({len(run.start_spreads)} starts, {len(run.late_starts)} late); load {summary['load_before'][0]:.1f} "
        f"-> {summary['load_after'][0]:.1f}; {seconds:.0f} s")
    verdicts = ", ".join(f"{label} {'met' if summary['targets_met'][key] else 'MISSED'}"
                         for key, label in (("p95", f"p95 < {TARGETS['p95']:g}"), ("max", f"max < {TARGETS['max']:g}"),
                                            ("start_max", f"start < {start_target:g}"))
                         if key in summary["targets_met"])
    log(f"{name}: targets: {verdicts}; CI bounds: "
        + ", ".join(f"{b['what']} {b['value']:.1f} < {b['bound']:g} {'ok' if b['ok'] else 'EXCEEDED'}"
                    for b in summary["bounds"]))
    return summary


# MARK: all of them


def parse(text):
    names = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part == "all":
            # Voice runs only in a namespace of its own: named, never in "all".
            names += [name for name in NAMES if name != "voice"]
        elif part in NAMES:
            names.append(part)
        else:
            raise SystemExit(f"e2e: unknown condition {part!r}; known: {', '.join(NAMES)}, all")
    return list(dict.fromkeys(names))


def main(args, command, media_file, load_before):
    names = parse(args.conditions)
    started = time.monotonic()
    summaries = []
    with MediaServer(media_file.parent, RangeRequestHandler) as media:
        for name in names:
            summaries.append(run_condition(name, args, args.cowatch, media))
    log("")
    log(f"conditions summary ({time.monotonic() - started:.0f} s; load average before {load_before}):")
    log(f"  {'condition':<22} {'p95':>7} {'max':>7} {'median':>7} {'start max':>10} {'late':>5}  targets")

    def ms(value):
        return f"{value:7.1f}" if value is not None else "    n/a"
    for s in summaries:
        missed = [key for key, ok in s["targets_met"].items() if not ok]
        log(f"  {s['condition']:<22} {ms(s['p95'])} {ms(s['max'])} {ms(s['median'])} {ms(s['start_max']):>10} "
            f"{len(s['late_starts']):>5}  " + ("met" if not missed else "MISSED " + ", ".join(missed))
            + (" (FAILED)" if s["failure"] else ""))
    if args.results:
        Path(args.results).write_text(json.dumps({"command": command, "conditions": summaries}, indent=2))
    if args.record:
        # Each condition's block has its own load averages.
        machine = re.sub(r"; load average before the run.*$", "", machine_description(load_before))
        record(args.record, summaries, command, machine)
    passed = sum(1 for s in summaries for c in s["checks"] if c["ok"])
    failures = 0
    for s in summaries:
        failures += sum(1 for c in s["checks"] if not c["ok"])
        if s["failure"] and not any(not c["ok"] for c in s["checks"]):
            failures += 1
        failures += sum(1 for b in s["bounds"] if not b["ok"])
        if args.strict:
            failures += sum(1 for ok in s["targets_met"].values() if not ok)
        passed += sum(1 for b in s["bounds"] if b["ok"])
    log(f"{passed} passed, {failures} failed")
    return 0 if failures == 0 else 1


# MARK: docs/benchmarks.md


SECTION = "## Browser under real-world conditions"


def condition_block(s, command, machine):
    def ms(value):
        return f"{value:.1f} ms" if value is not None else "n/a"
    lines = [f"<!-- condition {s['condition']} -->", f"### {s['condition']}", "",
             f"{s['about'][0].upper()}{s['about'][1:]}.", "",
             f"Run: `{command}` on {time.strftime('%Y-%m-%d')}; machine: {machine}; load average "
             f"{s['load_before'][0]:.1f} before this condition, {s['load_after'][0]:.1f} after; "
             f"{s['seconds']:.0f} s." + (f" **Failed:** {s['failure'].splitlines()[0]}" if s["failure"] else ""),
             "",
             "| figure | measured | target |", "|---|---|---|",
             f"| p95 of settled spreads | {ms(s['p95'])} | < {TARGETS['p95']:g} ms |",
             f"| largest settled spread | {ms(s['max'])} | < {TARGETS['max']:g} ms |",
             f"| largest coordinated start spread | {ms(s['start_max'])} | < {s['start_target']:g} ms |",
             f"| median settled spread | {ms(s['median'])} | |",
             f"| samples | {s['samples']} spreads, {s['starts']} starts, {len(s['late_starts'])} late | |"]
    if s["start_error_min"] is not None:
        lines.append(f"| each video's start minus `at` (true time) | {s['start_error_min']:+.1f} to "
                     f"{s['start_error_max']:+.1f} ms | |")
    for late in s["late_starts"]:
        lines.append("| a start some window missed | " + ", ".join(
            f"{label} playing {ms_ if ms_ is not None else '?'} ms after `at`" for label, ms_ in late.items())
            + " (joined late) | |")
    for o in s["offsets"]:
        lines.append(f"| {o['window']}'s clock offset (server - local) | {o['estimate']:+.1f} ± "
                     f"{o['uncertainty'] or 0:.1f} ms (true {o['true']:+.0f}; error {o['error']:+.1f} ms; "
                     f"RTT {o['rtt'] or 0:.0f} ms) | |")
    for n in s["networks"]:
        for side, what in (("server", "page and WebSocket"), ("media", "media")):
            f = n.get(side)
            if f:
                lines.append(f"| {n['window']}'s {what} proxy | up {describe_direction(f['up'])}; down "
                             f"{describe_direction(f['down'])} | |")
    o = s["observations"]
    if "policy" in o:
        lines.append(f"| watched for | {o['observed_s']:g} s | |")
        lines.append(f"| C suspended | {o['c_suspensions']} times, {o['c_suspended_s']:g} s | |")
        lines.append(f"| the group waited | {o['group_waits']} times, {o['group_waited_s']:g} s | |")
        lines.append(f"| the group's video advanced | {o['media_rate']:.2f} s per second | |")
        for key, what in (("group", "A, B" if o["policy"] == "continue" else "A, B, C"),
                          ("everyone", "all three, C playing along")):
            if o["policy"] == "wait" and key == "group":
                continue
            for suffix, which in (("", ""), ("_between", f", more than {ONSET_S:g} s before a stall")):
                f = o["spreads"].get(key + suffix)
                if f:
                    lines.append(f"| spread of {what}{which} | median {f['median']:.1f}, p95 {f['p95']:.1f}, "
                                 f"max {f['max']:.1f} ms ({f['n']} readings) | |")
    if "back_in_sync_s" in o:
        lines.append(f"| C's 50 ms interval while hidden | median gap {o['hidden_timer_gap_ms']} ms | |")
        lines.append(f"| C's video while hidden | paused at {o['hidden_paused_ticks']} of {o['hidden_ticks']} "
                     f"ticks; {o['drift_at_show_ms']:+d} ms from A when shown | |")
        lines.append(f"| C back in step after being shown | {o['back_in_sync_s']:.2f} s (visible after "
                     f"{o['visible_after_s']:.2f} s) | |")
    if "screen" in o:
        lines += screen_lines(o["screen"])
    lines += ["", "| transition | windows | state | spread median | spread max | start spread |",
              "|---|---|---|---|---|---|"]
    for row in s["rows"]:
        start = f"{row['start']:.1f} ms" if row["start"] is not None else ""
        lines.append(f"| {row['transition']} | {row['windows']} | {row['status']} | {row['median']:.1f} ms | "
                     f"{row['max']:.1f} ms | {start} |")
    if "screen" in o:
        lines += [""] + screen_table(o["screen"])
    lines += ["", f"<!-- /condition {s['condition']} -->"]
    return "\n".join(lines)


def screen_lines(screen):
    """The rows of one-browser-windows: each way of reading the windows, over
    every round and over the rounds where every video played."""
    import screen as screen_module
    lines = []
    for method in screen_module.METHODS:
        every, playing = screen["totals"].get(method), screen["playing"].get(method)
        if every:
            lines.append(f"| spread, {screen_module.METHOD_WORDS[method]} | p95 {every['p95']:.1f}, max "
                         f"{every['max']:.1f}, median {every['median']:.1f} ms ({every['n']} rounds); playing only: "
                         f"p95 {playing['p95']:.1f}, max {playing['max']:.1f} ms | |")
    for label, a in screen["account"].items():
        lines.append(f"| {label}'s page | 50 ms interval: gap median {a['gap_median']:.1f}, p95 {a['gap_p95']:.1f}, "
                     f"max {a['gap_max']:.1f} ms; {', '.join(a['visibility'])}; video rate changed "
                     f"{a['rate_changes']} times while playing; drift p95 {a['drift_abs_p95'] or 0:.1f} ms; steered by "
                     f"its screen {a['steered']} times ({a['steering_s']:.2f} s) | |")
    threads = screen.get("threads")
    if threads:
        lines.append(f"| main threads | while one window's page ran a 400 ms loop (answered after "
                     f"{threads['busy_ms']:.0f} ms), another answered in {threads['other_ms']:.1f} ms: "
                     f"{threads['verdict']} | |")
    return lines


def screen_table(screen):
    """Per command: the spread each way (median / max of its 20 rounds) and
    where each window's picture sat against its own clock."""
    def pair(f):
        return f"{f['median']:.1f} / {f['max']:.1f}" if f else "n/a"
    lines = ["| command | state | currentTime, stamped by the page | as read | on screen, continuous | on screen, "
             "frame by frame | each picture less its currentTime (median) |", "|---|---|---|---|---|---|---|"]
    for row in screen["rows"]:
        state = row["status"] + (f" at {row['rate']:g}x" if row["status"] == "playing" else "")
        lag = ", ".join(f"{x:+.1f}" for x in row["lag"]) + " ms" if row["lag"] else ""
        lines.append(f"| {row['transition']} | {state} | {pair(row['page'])} | {pair(row['naive'])} | "
                     f"{pair(row['continuous'])} | {pair(row['frame'])} | {lag} |")
    return lines


def record(path, summaries, command, machine):
    """Writes each condition's figures into its own block of the section
    SECTION of `path`, replacing that condition's earlier block and keeping
    everything else (the other conditions, the text around them)."""
    blocks = [(f"condition {s['condition']}", condition_block(s, command, machine))
              for s in summaries if not (s["failure"] and not s["samples"])]
    record_blocks(path, SECTION, "Figures of `commands/e2e --conditions`, one block per condition.", blocks)
    log(f"recorded: {path} ({SECTION[3:]})")
