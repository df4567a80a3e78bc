"""The browser run's figures written down: the machine they were taken on, and
the "## Browser" section of docs/benchmarks.md."""

import os
import platform
import subprocess
import sys
from pathlib import Path

from measure import CI_BOUNDS, SAMPLE_GAP_S, SAMPLES, SETTLE_S, TARGETS
from report import log

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.records import record_section  # noqa: E402


def machine_description(load_before):
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        chromium = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        chromium = "chromium"
    return (f"{os.cpu_count()} cores ({cpu}), {chromium}, Linux {platform.release()}; "
            f"load average before the run {load_before}")


def record(path, summary):
    """Writes the figures to docs/benchmarks.md under "## Browser", replacing that
    section and keeping the others."""
    lines = [
        "## Browser",
        "",
        "Synchronization of the browser client (`Sources/CowatchWeb/Web/static/sync/player-sync.js`), measured by "
        "`commands/e2e`: three headless Chromium windows, each its own browser process, on one room of a "
        "real `cowatch serve`, all on one machine, then a fourth, late joiner. After each transition settles "
        f"({SETTLE_S:g} s after every window applied it), {SAMPLES} rounds {SAMPLE_GAP_S * 1000:.0f} ms apart: "
        "each window reads `performance.timeOrigin + performance.now()` with `video.currentTime`, the "
        "readings are extrapolated at the group's rate to one instant, and the spread is max - min. The start "
        "spread is the spread of the instants at which the videos really left the start position "
        "(extrapolated back from a reading 150 ms after `at`).",
        "",
        f"Run: `{summary['command']}` on {summary['date']}; machine: {summary['machine']}.",
        "",
        "| figure | measured | target |",
        "|---|---|---|",
        f"| p95 of settled spreads | {summary['p95']:.1f} ms | < {TARGETS['p95']:g} ms |",
        f"| largest settled spread | {summary['max']:.1f} ms | < {TARGETS['max']:g} ms |",
        f"| largest coordinated start spread | {summary['start_max']:.1f} ms | < {TARGETS['start']:g} ms |",
        f"| median settled spread | {summary['median']:.1f} ms | |",
        f"| samples | {summary['samples']} spreads, {summary['starts']} starts | |",
        f"| clock offsets the pages estimated (true: 0, one machine) | {summary['offsets']} ms | |",
        "",
        "| transition | windows | state | spread median | spread max | start spread |",
        "|---|---|---|---|---|---|",
    ]
    for row in summary["rows"]:
        state = row["status"] + (f" at {row['rate']:g}x" if row["status"] == "playing" else "")
        start = f"{row['start']:.1f} ms" if row["start"] is not None else ""
        lines.append(f"| {row['transition']} | {row['windows']} | {state} | {row['median']:.1f} ms | "
                     f"{row['max']:.1f} ms | {start} |")
    lines += [
        "",
        "Thresholds of the client (drift = the video's position minus where the state says it should be; "
        "see docs/browser.md): beyond 250 ms it re-joins with a scheduled start (pause, seek to where the "
        "group will be at a chosen instant, play() at that instant minus the measured latency of play()); "
        "between 3 ms and 250 ms it nudges `playbackRate` by drift / 0.3 s, at most 6 %, until the drift is "
        "under 1 ms; below that the rate is exact. CI asserts looser bounds on robust figures (median "
        f"settled spread < {CI_BOUNDS['median']:g} ms, median start spread < {CI_BOUNDS['start_median']:g} ms) "
        "so that decoder hiccups on a machine busy with other work (two cores shared by four browsers, the "
        "server and the test) do not fail it; the figures above are the ones that count.",
        "",
    ]
    record_section(path, "\n".join(lines))
    log(f"recorded: {path}")
