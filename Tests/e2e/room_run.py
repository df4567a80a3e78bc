"""The waits, checks and measurements every browser scenario is made of: a room
of windows, waited on until they agree, then measured (RoomRun). The scenarios of
run_e2e.py, conditions.py and mpv_spread.py build on it."""

import json
import os
import statistics
import sys
import time
from pathlib import Path

from browser_window import By, read_all
from measure import SAMPLE_GAP_S, SAMPLES, SETTLE_S, TARGETS, spread_ms
from report import Failure, log

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import settled, wait_until  # noqa: E402


class RoomRun:
    """A room of a server and its windows (`windows`, opened by the caller), with
    what was checked and measured on them so far."""

    def __init__(self, server, media, args):
        self.server = server
        self.media = media
        self.args = args
        self.room = "movie-night"  # a fresh server each run: the name is free
        self.windows = []
        self.rows = []  # per transition
        self.all_spreads = []
        self.start_spreads = []
        self.checks = []
        self.deadline = time.monotonic() + args.time_limit
        self.offsets = ""

    # helpers

    def check(self, ok, what):
        self.checks.append((bool(ok), what))
        if not ok:
            raise Failure(what)

    def wait(self, predicate, timeout, what, windows=None):
        windows = windows or self.windows
        seen = []

        def check():
            if time.monotonic() > self.deadline:
                raise Failure("the run took longer than its time limit")
            seen[:] = read_all(windows)
            return seen[:] if predicate(seen) else None

        def failure():
            detail = json.dumps([{k: r.get(k) for k in ("seq", "mode", "detail", "position", "paused", "seeking",
                                                        "joining", "running", "overlay", "banner")}
                                 | {"suspensions": (r.get("me") or {}).get("suspensions")} for r in seen])
            return Failure(f"timed out waiting for {what}: {detail}")
        # Each poll costs every browser a little CPU: ten a second.
        return wait_until(check, timeout, what, interval=0.1, failure=failure)

    def settled(self, status, windows=None):
        """Every window shows the same latest state with `status`, and its player
        is applied: holding still where the state says, or playing along (not
        seeking or starting)."""
        def view(r):
            return {"seq": r["seq"], "status": (r["playback"] or {}).get("status"),
                    "busy": r["seeking"] or r["joining"] or (r["me"] or {}).get("suspensions"),
                    "running": r["mode"] == "playing" and not r["paused"] and r["running"],
                    "held": r["paused"] and r["readyState"] >= 2 and r["playback"] is not None
                    and abs(r["position"] - r["playback"]["position"]) <= 0.002}
        return self.wait(lambda readings: settled([view(r) for r in readings], status), 20,
                         f"every window to settle {status}", windows)

    def measure(self, name, status, windows=None, start=None, note=""):
        windows = windows or self.windows
        readings = self.settled(status, windows)
        # Part of what is measured, not a wait: the spread SETTLE_S after every
        # window applied the transition.
        time.sleep(SETTLE_S)
        playback = readings[0]["playback"]
        playing = status == "playing"
        spreads = []
        for _ in range(SAMPLES):
            readings = read_all(windows)
            spread = spread_ms(readings, playing, playback["rate"])
            spreads.append(spread)
            if spread > TARGETS["max"]:
                self.explain(name, readings, windows)
            time.sleep(SAMPLE_GAP_S)
        self.all_spreads.extend(spreads)
        row = {
            "transition": name, "windows": len(windows), "status": status, "rate": playback["rate"],
            "median": statistics.median(spreads), "max": max(spreads), "start": start, "note": note,
        }
        self.rows.append(row)
        start_text = f", start spread {start:5.1f} ms" if start is not None else ""
        log(f"  {name:<34} spread median {row['median']:5.1f} ms, max {row['max']:5.1f} ms{start_text}"
            f"  ({len(windows)} windows, {status}{', rate ' + str(playback['rate']) if playing else ''})")
        return row

    def explain(self, name, readings, windows):
        """An outlier: print what each window saw and what its player did lately."""
        log(f"  ! outlier in {name}:")
        for window, r in zip(windows, readings):
            history = window.js("return window.cowatch.sync.history.slice(-8)")
            log(f"    {window.label}: t={r['t']:.1f} position={r['position']:.4f} rate={r['videoRate']} "
                f"mode={r['mode']} {r['detail']!r} paused={r['paused']} seeking={r['seeking']}")
            for entry in history:
                log(f"      {entry}")

    def coordinated_start(self, windows, after_seq=None):
        """Waits until every window has the same playing state (after `after_seq`
        when given): a coordinated start, `at` ahead; one window's reading of it."""
        def started(readings):
            seqs = {r["seq"] for r in readings}
            return (len(seqs) == 1 and (after_seq is None or readings[0]["seq"] > after_seq)
                    and readings[0]["playback"]["status"] == "playing")
        return self.wait(started, 20, "the coordinated start", windows)[0]

    def start_spread(self, windows=None, after_seq=None):
        """Waits for a coordinated start (a playing state with `at` ahead), then
        reads every window shortly after `at` and extrapolates back to the instant
        each video left the start position."""
        windows = windows or self.windows
        seen = self.coordinated_start(windows, after_seq)
        playback = seen["playback"]
        at, position, rate = playback["at"], playback["position"], playback["rate"]
        # Read just after the start (before any drift correction could act): the
        # extrapolation back to `position` is then the real start instant.
        wake = at / 1000 + 0.15 - time.time()
        if wake > 0:
            time.sleep(wake)
        starts = []
        for r in read_all(windows):
            if r["paused"] or r["seeking"]:
                return None  # started late (joined); the settled spread covers it
            starts.append(r["t"] - (r["position"] - position) / rate * 1000)
        spread = max(starts) - min(starts)
        self.start_spreads.append(spread)
        errors = ", ".join(f"{s - at:+.1f}" for s in starts)
        log(f"  coordinated start: spread {spread:.1f} ms (each minus at: {errors} ms; lead {at - seen['t']:.0f} ms)")
        if os.environ.get("E2E_DEBUG"):
            for window in windows:
                self.poll_js(window, "return window.cowatch.sync.history.some(h => h.includes('started'))", 2)
                log(f"    {window.label}: " + " | ".join(window.js("return window.cowatch.sync.history.filter(h => ['play()', 'started', 'levelling', 'probe', 'pulse'].some((w) => h.includes(w))).slice(-5)")))
        return spread

    def seq(self):
        return max(r["seq"] or 0 for r in read_all(self.windows))

    def keep_screenshot(self, data, path, said):
        """Writes `data` (a PNG) to `path` when one was asked for, and logs `said`."""
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_bytes(data)
            log(said)

    def room_of_their_own(self, room, what):
        """Windows A and B (free once the walk's measurements are done) and the
        address of `room`, where they do `what` on their own; said in the log."""
        log(f"{what} (room {room}):")
        return self.windows[0], self.windows[1], self.server.url(f"/rooms/{room}")

    def measure_started(self, window, line, name):
        """`line` typed in `window` starts the room: its coordinated start, then the
        settled spread, measured as `name`; the start's spread, or None."""
        seq = self.seq()
        window.type(line)
        start = self.start_spread(after_seq=seq)
        self.measure(name, "playing", start=start)
        return start

    def measure_typed(self, window, line, name, status, until, what):
        """`line` typed in `window`; once `until(readings)` holds (within 10 s),
        the settled spread with `status`, measured as `name`."""
        window.type(line)
        self.wait(until, 10, what)
        self.measure(name, status)

    def everyone(self, status):
        return lambda rs: all(r["playback"] and r["playback"]["status"] == status for r in rs)

    def press(self, window, key):
        """A key pressed with the focus on the page itself (no field, button or slider)."""
        window.js("document.activeElement && document.activeElement.blur()")
        window.driver.find_element(By.TAG_NAME, "body").send_keys(key)

    def poll_js(self, window, script, timeout):
        """Polls `script` in `window` until it returns something truthy, or the
        timeout; returns the last value (for a check to judge)."""
        end = time.monotonic() + timeout
        value = window.js(script)
        while not value and time.monotonic() < end:
            time.sleep(0.1)
            value = window.js(script)
        return value

    def wait_js(self, window, script, timeout, what):
        """Polls `script` in `window` until it returns something truthy."""
        end = time.monotonic() + timeout
        value = None
        while time.monotonic() < end:
            if time.monotonic() > self.deadline:
                raise Failure("the run took longer than its time limit")
            value = window.js(script)
            if value:
                return value
            time.sleep(0.1)
        raise Failure(f"timed out waiting for {what} (last seen: {value!r})")
