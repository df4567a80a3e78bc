"""Headless Chromium pages in a room's voice, and what the test reads of them:
each page's fake microphone plays a file (a spoken one made with espeak-ng, or
silence), and the test's own analyser records the level of what the page
hears from the room's voice, of what its microphone sends, and the video's
volume, every 10 ms on the page's clock (epoch milliseconds, comparable across
pages on one machine)."""

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.browser import UNTHROTTLED, WINDOW, Chromium  # noqa: E402

SPEECH = ("Hello everyone. Shall we start the film now? I think the opening scene is wonderful. "
          "Please tell me when you are ready, and we will watch it together.")

RECORD_JS = """
const [which] = arguments;
const stream = which === 'heard' ? document.getElementById('voice-audio').srcObject : window.cowatch.voice.microphone;
if (!stream) return false;
const context = new AudioContext();
const analyser = context.createAnalyser();
analyser.fftSize = 512;
context.createMediaStreamSource(stream).connect(analyser);
const samples = new Float32Array(analyser.fftSize);
const video = document.getElementById('video');
window.__levels = [];
window.__recording = { context, timer: setInterval(() => {
  analyser.getFloatTimeDomainData(samples);
  let sum = 0;
  for (const x of samples) sum += x * x;
  window.__levels.push([performance.timeOrigin + performance.now(), Math.sqrt(sum / samples.length), video.volume]);
}, 10) };
return true;
"""

TAKE_JS = """
const levels = window.__levels || [];
window.__levels = [];
return levels;
"""


def make_audio(folder):
    """speech.wav (the speaker's microphone) and silence.wav (everyone else's),
    48 kHz mono 16-bit, as Chromium's fake capture reads them."""
    folder = Path(folder)
    raw = folder / "speech-raw.wav"
    subprocess.run(["espeak-ng", "-s", "150", "-w", str(raw), SPEECH], check=True, timeout=60)
    speech = folder / "speech.wav"
    # A second of silence after the words: the file loops, and the gap marks
    # each turn's start.
    subprocess.run(["sox", str(raw), "-r", "48000", "-c", "1", "-b", "16", str(speech), "pad", "0", "1"],
                   check=True, timeout=60)
    silence = folder / "silence.wav"
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", str(silence), "trim", "0", "5"],
                   check=True, timeout=60)
    return speech, silence


class VoicePage:
    def __init__(self, label, microphone):
        flags = WINDOW + UNTHROTTLED + [
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={microphone}",
            # The only interface of the test's network namespace is loopback.
            "--allow-loopback-in-peer-connection",
        ]
        self.label = label
        self.chromium = Chromium(flags, profile_prefix=f"cowatch-voice-{label}-", autoplay=True, console=True,
                                 script_timeout=20)
        self.driver = self.chromium.driver

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def open(self, url):
        self.driver.get(url)

    def wait(self, script, what, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(script)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"{self.label}: {what} did not happen in {timeout} s; console: "
                             f"{self.chromium.console_messages()[-10:]}")

    def welcomed(self):
        self.wait("return !!(window.cowatch && window.cowatch.model.meId)", "the welcome")

    def join_voice(self, relay=False):
        self.wait("return !document.getElementById('voice-panel').hidden", "the voice panel")
        if relay:
            self.js("const r = document.getElementById('voice-relay'); if (!r.checked) r.click();")
        self.js("document.getElementById('voice-join').click()")
        self.wait("return window.cowatch.voice.phase === 'on'", "the call")
        # The answer is taken; the call carries sound once ICE and DTLS are through.
        self.wait("return window.cowatch.voice.peer?.connectionState === 'connected'", "the call connected")

    def record(self, which):
        self.wait("return !!document.getElementById('voice-audio').srcObject", "the voices' stream")
        assert self.js(RECORD_JS, which), f"{self.label}: nothing to record"

    def levels(self):
        return self.js(TAKE_JS)

    def close(self):
        self.chromium.close()
