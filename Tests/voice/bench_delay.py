"""Mouth to ear: how long after the speaker's microphone takes a word a
listener's page hears it, through cowatch, Janus's AudioBridge and (with
--relay) coturn, all on loopback in the test's network namespace, with
`commands/bench voice`. Two headless Chromium pages: the speaker's fake
microphone plays espeak-ng's speech; the test's analyser on each page reads
the level of what the microphone sends and of what the listener hears, every
10 ms on the pages' shared clock; each word's start on the speaker's side is
paired with the same start heard on the listener's. Prints the delays' p50,
p95 and max.

    Tests/voice/in-namespace python3 Tests/voice/bench_delay.py --seconds 60
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from browser_server import serve_for_browsers  # noqa: E402
from levels import onsets, percentile  # noqa: E402
from voice_pages import VoicePage, make_audio  # noqa: E402
from voice_services import VoiceServices  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def delays(sent, heard, threshold=0.02, within_ms=1000.0):
    """Each start of a word sent, paired with the first start heard after it."""
    heard_starts = onsets(heard, threshold)
    found = []
    for start in onsets(sent, threshold):
        later = [t for t in heard_starts if start <= t <= start + within_ms]
        if later:
            found.append(later[0] - start)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--relay", action="store_true")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="cowatch-voice-delay-")
    speech, silence = make_audio(folder)
    binary = os.environ.get("COWATCH_BIN", str(ROOT / ".build/release/cowatch"))
    with VoiceServices() as voice, serve_for_browsers(binary, web_root=ROOT / "Sources/CowatchWeb/Web",
                                                       extra_args=voice.serve_args()) as server:
        pages = []
        try:
            for label, microphone in (("speaker", speech), ("listener", silence)):
                page = VoicePage(label, microphone)
                pages.append(page)
                page.open(server.url(f"/rooms/voice-delay?name={label}"))
                page.welcomed()
                page.join_voice(relay=args.relay)
            speaker, listener = pages
            speaker.record("microphone")
            listener.record("heard")
            sent, heard = [], []
            until = time.monotonic() + args.seconds
            while time.monotonic() < until:
                time.sleep(5)
                sent += speaker.levels()
                heard += listener.levels()
            found = delays(sent, heard)
            print(json.dumps({
                "relay": args.relay, "seconds": args.seconds, "words": len(found),
                "p50_ms": round(percentile(found, 0.5) or 0), "p95_ms": round(percentile(found, 0.95) or 0),
                "max_ms": round(max(found) if found else 0),
            }))
        finally:
            for page in pages:
                page.close()
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
