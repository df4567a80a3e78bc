"""The spread of one browser's windows as the screen shows it (the condition
`one-browser-windows` of conditions.py, run by
`commands/e2e --conditions one-browser-windows`; `browsers-screen` runs the
same with each window its own Chromium).

One headless Chromium (started as a person's would be: the flags that keep
hidden pages' timers at full speed are left out) holds three windows opened
through the DevTools protocol (`Target.createTarget` with `newWindow: true`).
A bot, a WebSocket member of the room with no player, drives it: /watch, /play,
/pause, /seek (paused and playing), /rate 1.5, /rate 1, and a fourth window
joins late. Two seconds after each command, every window is read ten times a
second for two seconds, over a DevTools connection of this test's own to each
window (`Runtime.evaluate`, one window after the other, as an outside script
would), and each round gives four spreads from the same readings:

  naive          the windows' `currentTime` values compared as they come, as if
                 read at one instant: the time between the reads counts, at the
                 group's rate, as spread
  client-stamped each value placed at the middle of its round trip on this
                 test's clock, and all extrapolated to one instant
  page-stamped   each value with the page's own `performance.timeOrigin +
                 performance.now()` taken beside it, extrapolated to one
                 instant (how the rest of the harness reads: browser_window.read_all)
  on screen      from `requestVideoFrameCallback`: every presented frame's
                 `mediaTime` and `expectedDisplayTime`, kept by each page;
                 at the round's instant T, the media time each screen shows,
                 frame by frame (the frame shown at T) and continuous (between
                 the frame shown at T and the next, in proportion of T between
                 their display times)

The pages also keep a 50 ms interval's ticks (how late their timers run, their
visibilityState, the video's playbackRate and the page's drift), so that what
moves a window can be told from the page's own account.
"""

import json
import statistics
import sys
import threading
import time
from pathlib import Path

from websocket import create_connection

from browser_window import Window
from conditions import TabWindow
from measure import percentile
from report import Failure, log

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.bot import Bot  # noqa: E402
from support.harness import wait_until  # noqa: E402

ROUNDS = 20  # readings per command
ROUND_GAP_S = 0.1
MEASURE_AFTER_S = 2.0  # after the command is sent
# A playing window presents a frame every 33 ms: one past the last round is
# waited for this long at most (a busy machine), then the run fails in words.
SCREEN_FRAME_TIMEOUT_S = 10
KEPT_FRAMES = 1200  # per page: 40 s at 30 frames a second
KEPT_TICKS = 1200  # per page: 60 s of 50 ms ticks

# Kept by each page from the moment it is installed: the frames presented and
# the ticks of a 50 ms interval. An armed callback that a new source left without
# frames is armed again (cancelled first, so one chain runs at a time).
RECORDER_JS = """
if (window.e2eScreen) return true;
const v = document.querySelector('video');
const origin = performance.timeOrigin;
const screen = window.e2eScreen = { frames: [], ticks: [], lastFrame: performance.now(), handle: 0 };
const onFrame = (now, m) => {
  screen.frames.push([origin + m.expectedDisplayTime, origin + m.presentationTime, m.mediaTime, m.presentedFrames,
                      origin + now]);
  if (screen.frames.length > %(frames)d) screen.frames.splice(0, screen.frames.length - %(frames)d);
  screen.lastFrame = performance.now();
  screen.handle = v.requestVideoFrameCallback(onFrame);
};
screen.handle = v.requestVideoFrameCallback(onFrame);
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  const sync = window.cowatch && window.cowatch.sync;
  // Where the page steers by its screen (sync/screen.js): whether it does, and its reading.
  const steering = !!(sync && sync.core.steering && sync.core.steering.since !== undefined);
  screen.ticks.push([origin + now, now - last, document.visibilityState, v.playbackRate, v.currentTime, v.paused,
                     sync ? sync.drift : null, steering ? 1 : 0,
                     sync && typeof sync.screenDrift === 'number' ? sync.screenDrift : null]);
  if (screen.ticks.length > %(ticks)d) screen.ticks.splice(0, screen.ticks.length - %(ticks)d);
  last = now;
  if (!v.paused && now - screen.lastFrame > 500) {
    v.cancelVideoFrameCallback(screen.handle);
    screen.lastFrame = now;
    screen.handle = v.requestVideoFrameCallback(onFrame);
  }
}, 50);
return true;
""" % {"frames": KEPT_FRAMES, "ticks": KEPT_TICKS}

READ_EXPRESSION = """(() => {
  const v = document.querySelector('video');
  const s = window.cowatch && window.cowatch.sync;
  const t0 = performance.timeOrigin + performance.now();
  const position = v.currentTime;
  const t1 = performance.timeOrigin + performance.now();
  const playback = s && s.state ? s.state.playback : null;
  return { t: (t0 + t1) / 2, position, paused: v.paused, seeking: v.seeking, seq: s && s.state ? s.state.seq : null,
           status: playback ? playback.status : null, rate: playback ? playback.rate : 1,
           mode: s ? s.mode : null, visibility: document.visibilityState };
})()"""


class DevTools:
    """This test's own DevTools connection to one page (beside chromedriver's):
    one command at a time, answered before the next."""

    def __init__(self, port, target_id):
        # No Origin header: Chromium refuses DevTools WebSockets from web origins.
        self.socket = create_connection(f"ws://127.0.0.1:{port}/devtools/page/{target_id}", timeout=10,
                                        suppress_origin=True)
        self.next_id = 0

    def call(self, method, params=None):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise Failure(f"DevTools {method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise Failure(f"DevTools evaluate: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def read(self):
        """The page's reading, with this test's clock (ms since the epoch) at
        the middle of the round trip."""
        sent = time.time() * 1000
        reading = self.evaluate(READ_EXPRESSION)
        received = time.time() * 1000
        reading["client_t"] = (sent + received) / 2
        reading["client_rtt"] = received - sent
        return reading

    def close(self):
        try:
            self.socket.close()
        except Exception:  # noqa: BLE001 - best effort at the end
            pass


def devtools_port(profile, timeout=10):
    """The port Chromium chose for --remote-debugging-port=0: the first line of
    DevToolsActivePort in its profile."""
    end = time.monotonic() + timeout
    path = f"{profile}/DevToolsActivePort"
    while time.monotonic() < end:
        try:
            with open(path) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            time.sleep(0.05)
    raise Failure(f"Chromium wrote no {path}")


class WindowsOfOneBrowser:
    """One Chromium; its windows opened with Target.createTarget (newWindow),
    each a TabWindow for the harness (chromedriver's window handle is the
    DevTools target id) with a DevTools connection of its own for the readings."""

    def __init__(self):
        # Chromium started as a person's: hidden pages' timers may be throttled.
        self.browser = Window("browser", throttled=True, extra_flags=["--remote-debugging-port=0"])
        self.port = devtools_port(self.browser.profile)
        self.windows = []

    def open_window(self, label):
        target = self.browser.driver.execute_cdp_cmd("Target.createTarget", {"url": "about:blank", "newWindow": True})
        # The first window's close() quits the browser (TabWindow).
        chromium = None if self.windows else self.browser.chromium
        window = DevToolsWindow(label, self.browser.driver, target["targetId"], chromium)
        window.devtools = DevTools(self.port, target["targetId"])
        self.windows.append(window)
        return window


class DevToolsWindow(TabWindow):
    def close(self):
        self.devtools.close()
        super().close()


class SeparateBrowsers:
    """The same windows, each its own Chromium (as the full scenario's), for
    the condition browsers-screen: what the screens show when each browser
    has a display clock of its own."""

    def open_window(self, label):
        window = BrowserWithDevTools(label, throttled=True, extra_flags=["--remote-debugging-port=0"])
        # chromedriver's window handle is the page's DevTools target id.
        window.devtools = DevTools(devtools_port(window.profile), window.driver.current_window_handle)
        return window


class BrowserWithDevTools(Window):
    def close(self):
        self.devtools.close()
        super().close()


# MARK: figures


def spreads_of(readings):
    """The round's four spreads (ms) but on screen: naive, client-stamped,
    page-stamped, from one reading per window."""
    rate = readings[0]["rate"] or 1
    playing = all(not r["paused"] for r in readings)
    naive = (max(r["position"] for r in readings) - min(r["position"] for r in readings)) * 1000

    def at_one_instant(key):
        t = readings[0][key]
        positions = [r["position"] + (rate * (t - r[key]) / 1000 if playing else 0) for r in readings]
        return (max(positions) - min(positions)) * 1000
    return {"naive": naive, "client": at_one_instant("client_t"), "page": at_one_instant("t")}


def shown_at(frames, t):
    """What a screen shows at instant t (ms since the epoch): (the media time of
    the frame shown, the continuous media time), or None when t is before the
    first frame kept. Between a frame's display and the next one's the
    continuous time moves in proportion; after the last frame kept (a paused
    video shows it still) it is that frame's."""
    if not frames or frames[0][0] > t:
        return None
    low, high = 0, len(frames) - 1
    while low < high:  # the last frame displayed at or before t
        middle = (low + high + 1) // 2
        if frames[middle][0] <= t:
            low = middle
        else:
            high = middle - 1
    frame = frames[low]
    if low + 1 < len(frames):
        following = frames[low + 1]
        span = following[0] - frame[0]
        if span > 0 and following[2] >= frame[2]:
            return frame[2], frame[2] + (following[2] - frame[2]) * (t - frame[0]) / span
    return frame[2], frame[2]


def screen_spreads(frames_by_window, t):
    """Frame and continuous spreads (ms) of what the screens show at t, or None
    when a window has no frame for t."""
    shown = [shown_at(frames, t) for frames in frames_by_window]
    if any(s is None for s in shown):
        return None
    frame = [s[0] for s in shown]
    continuous = [s[1] for s in shown]
    return {"frame": (max(frame) - min(frame)) * 1000, "continuous": (max(continuous) - min(continuous)) * 1000,
            "shown": continuous}


def figures(values):
    if not values:
        return None
    return {"n": len(values), "median": statistics.median(values), "p95": percentile(values, 0.95), "max": max(values)}


METHODS = ("naive", "client", "page", "frame", "continuous")
METHOD_WORDS = {
    "naive": "currentTime, read one window after another and compared as read",
    "client": "currentTime, each stamped on the reading script's clock (middle of its round trip)",
    "page": "currentTime, each stamped by its page (performance.now() beside it)",
    "frame": "on screen, the frame each window shows at T (rVFC)",
    "continuous": "on screen, continuous between frames (rVFC)",
}


# MARK: the scenario


def sample(run, name, windows, sent):
    """ROUNDS rounds ROUND_GAP_S apart from MEASURE_AFTER_S after `sent`
    (time.monotonic()); then each page's frames, and the figures."""
    rounds = []
    for i in range(ROUNDS):
        wake = sent + MEASURE_AFTER_S + i * ROUND_GAP_S - time.monotonic()
        if wake > 0:
            time.sleep(wake)
        if time.monotonic() > run.deadline:
            raise Failure("the run took longer than its time limit")
        rounds.append([w.devtools.read() for w in windows])
    # The continuous reading at T needs the frame after T: each playing window's
    # frames are read once one is presented past its last reading (a paused
    # window presents none, and needs none).
    last = rounds[-1]

    def frames_past_last():
        frames = [w.devtools.evaluate("window.e2eScreen.frames") for w in windows]
        shown = all(r["paused"] or any(f[0] > r["t"] for f in kept) for kept, r in zip(frames, last))
        return frames if shown else None
    frames = wait_until(frames_past_last, SCREEN_FRAME_TIMEOUT_S, "a frame presented after the last round in each window")
    row = {"transition": name, "windows": len(windows), "rounds": [], "status": rounds[-1][0]["status"],
           "rate": rounds[-1][0]["rate"], "readings": rounds,
           "frames": [[f for f in kept if rounds[0][0]["t"] - 100 <= f[0] <= rounds[-1][0]["t"] + 100]
                      for kept in frames]}
    for readings in rounds:
        entry = spreads_of(readings)
        screen = screen_spreads(frames, readings[0]["t"])
        if screen:
            entry["frame"], entry["continuous"] = screen["frame"], screen["continuous"]
            # Each screen's media time at T less its currentTime there (page-stamped).
            rate = readings[0]["rate"] or 1
            playing = all(not r["paused"] for r in readings)
            entry["lag"] = [round((shown - (r["position"] + (rate * (readings[0]["t"] - r["t"]) / 1000
                                                             if playing else 0))) * 1000, 1)
                            for shown, r in zip(screen["shown"], readings)]
        entry["read_ms"] = readings[-1]["client_t"] - readings[0]["client_t"]
        entry["paused"] = any(r["paused"] for r in readings)
        row["rounds"].append(entry)
    for method in METHODS:
        row[method] = figures([e[method] for e in row["rounds"] if method in e])
    row["read_ms"] = statistics.median(e["read_ms"] for e in row["rounds"])
    lags = [e["lag"] for e in row["rounds"] if "lag" in e and not e["paused"]]
    row["lag"] = [round(statistics.median(column), 1) for column in zip(*lags)] if lags else None

    def ms(f):
        return f"{f['median']:5.1f}/{f['max']:5.1f}" if f else "  n/a"
    log(f"  {name:<24} median/max ms: naive {ms(row['naive'])}, client {ms(row['client'])}, "
        f"page {ms(row['page'])}, screen frame {ms(row['frame'])}, continuous {ms(row['continuous'])}; "
        f"reads span {row['read_ms']:.1f} ms" + (f"; screen - currentTime per window {row['lag']} ms"
                                                 if row["lag"] else ""))
    return row


def page_account(windows):
    """What each page's interval saw: how late its timers ran, its visibility,
    and how its video's rate moved (the nudges)."""
    account = {}
    for window in windows:
        ticks = window.devtools.evaluate("window.e2eScreen.ticks")
        gaps = [t[1] for t in ticks[1:]]
        rates = [t[3] for t in ticks if not t[5]]
        changes = sum(1 for a, b in zip(ticks, ticks[1:]) if a[3] != b[3] and not a[5] and not b[5])
        drifts = [t[6] * 1000 for t in ticks if t[6] is not None and not t[5]]
        steered = sum(1 for a, b in zip(ticks, ticks[1:]) if b[7] and not a[7])
        steering_s = sum(t[1] for t in ticks if t[7]) / 1000

        account[window.label] = {
            "ticks": len(ticks), "gap_median": statistics.median(gaps) if gaps else None,
            "gap_p95": percentile(gaps, 0.95) if gaps else None, "gap_max": max(gaps) if gaps else None,
            "visibility": sorted({t[2] for t in ticks}), "rate_changes": changes,
            "rates": sorted({round(r, 4) for r in rates})[:12],
            "drift_abs_p95": percentile([abs(d) for d in drifts], 0.95) if drifts else None,
            "steered": steered, "steering_s": round(steering_s, 2),
            # The page's own series while playing, for the results file: seconds since the epoch, its drift
            # (ms), the video's rate, whether it steers by its screen, and its screen's drift (ms).
            "series": [[round(t[0] / 1000, 2), None if t[6] is None else round(t[6] * 1000, 1), t[3], t[7],
                        None if t[8] is None else round(t[8] * 1000, 1)] for t in ticks if not t[5]],
        }
        a = account[window.label]
        log(f"  {window.label}'s page: {a['ticks']} ticks of its 50 ms interval, gap median {a['gap_median']:.1f}, "
            f"p95 {a['gap_p95']:.1f}, max {a['gap_max']:.1f} ms; visibility {a['visibility']}; "
            f"video rate changed {changes} times while playing ({a['rates']}); "
            f"|drift| p95 {a['drift_abs_p95'] or 0:.1f} ms; steered by its screen {steered} times, "
            f"{steering_s:.2f} s in all")
    return account


def main_threads(windows):
    """Whether the windows' pages share a main thread: while the first runs a
    400 ms busy loop (its evaluation answered only after it), how long the
    second takes to answer. A loop that did not hold the first for most of
    its 400 ms (a busy machine) says nothing, and the reading says so."""
    busy = {}

    def loop():
        began = time.monotonic()
        windows[0].devtools.evaluate("{ const end = performance.now() + 400; while (performance.now() < end) {} true }")
        busy["ms"] = (time.monotonic() - began) * 1000
    thread = threading.Thread(target=loop)
    thread.start()
    time.sleep(0.1)
    began = time.monotonic()
    windows[1].devtools.evaluate("true")
    other = (time.monotonic() - began) * 1000
    thread.join()
    if busy["ms"] < 300 or other > 300:
        verdict = "inconclusive (the machine was too busy for the loop to tell)"
    elif other < 100:
        verdict = "one main thread each"
    else:
        verdict = "one main thread for both"
    log(f"  main threads: while {windows[0].label}'s page ran a 400 ms loop (answered after {busy['ms']:.0f} ms), "
        f"{windows[1].label}'s answered in {other:.1f} ms: {verdict}")
    return {"other_ms": round(other, 1), "busy_ms": round(busy["ms"], 1), "verdict": verdict}


def scenario(run, browser):
    """The bot's commands, each followed by its readings; run.all_spreads gets
    the page-stamped currentTime spreads (the harness's own), and
    run.observations the four methods side by side."""
    ws_url = run.server.url(f"/rooms/{run.room}").replace("http://", "ws://") + "?name=bot"
    bot = Bot(ws_url)
    rows = []
    try:
        for window in run.windows:
            window.js(RECORDER_JS)
        bot.send(f"/watch {run.media.url('timecode.mp4')} Test pattern")
        run.settled("paused")
        steps = ["/play", "/pause", "/seek 30", "/play", "/seek 60", "/rate 1.5", "/rate 1", "late joiner"]
        for step in steps:
            if step == "late joiner":
                late = browser.open_window("D")
                late.open(run.server.url(f"/rooms/{run.room}?name=dave"))
                late.js(RECORDER_JS)
                run.windows.append(late)
                sent = time.monotonic()  # the page has loaded: it joins from here
            else:
                sent = time.monotonic()
                bot.send(step)
            rows.append(sample(run, step, run.windows, sent))
        account = page_account(run.windows)
        threads = main_threads(run.windows)
    finally:
        bot.close()
    for row in rows:
        run.all_spreads.extend(e["page"] for e in row["rounds"])
        run.rows.append({"transition": row["transition"], "windows": row["windows"], "status": row["status"],
                         "rate": row["rate"], "median": row["page"]["median"], "max": row["page"]["max"],
                         "start": None, "note": ""})
    totals = {method: figures([e[method] for row in rows for e in row["rounds"] if method in e]) for method in METHODS}
    playing = {method: figures([e[method] for row in rows for e in row["rounds"] if method in e and not e["paused"]])
               for method in METHODS}
    log("  all rounds (p95 / max ms): " + "; ".join(
        f"{m} {totals[m]['p95']:.1f} / {totals[m]['max']:.1f}" for m in METHODS if totals[m]))
    run.observations = {"screen": {"totals": totals, "playing": playing, "account": account, "threads": threads,
                                   "rows": [{k: v for k, v in row.items() if k not in ("rounds", "readings", "frames")}
                                            for row in rows],
                                   "rounds": [{k: row[k] for k in ("transition", "rounds", "readings", "frames")}
                                              for row in rows]}}
    frames_seen = all((row["frame"] or {}).get("n") for row in rows)
    run.check(frames_seen, "requestVideoFrameCallback reported presented frames in every window for every command")
