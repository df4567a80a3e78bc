"""The test video of the browser runs, made with ffmpeg: a test pattern with its
media time and frame number burnt in, silent or with a tone; and a handler of the
media server that fails one window's requests on purpose."""

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.media_server import RangeRequestHandler  # noqa: E402
from report import log  # noqa: E402

MEDIA_SECONDS = 240
FAIL_COOKIE = "e2e-fail-media"


def make_media(directory, audio=False):
    """640x360, 30 fps, a keyframe every 15 frames (quick, exact seeks), with the
    media time and frame number burnt in. Cached: generated once per machine.
    With `audio`, timecode-audio.mp4 with a 440 Hz tone in AAC beside the video
    (mpv reads its smooth position from the audio: Tests/e2e/mpv_spread.py)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / ("timecode-audio.mp4" if audio else "timecode.mp4")
    if target.exists() and target.stat().st_size > 100_000:
        return target
    font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
    drawtext = (
        f"drawtext=fontfile={font}:text='%{{pts\\:hms}}  f%{{n}}':fontsize=40:fontcolor=white"
        ":box=1:boxcolor=black@0.7:boxborderw=8:x=(w-tw)/2:y=h-th-24"
    )
    partial = target.with_suffix(".partial.mp4")
    sound = (["-f", "lavfi", "-i", f"sine=frequency=440:duration={MEDIA_SECONDS}"] if audio else [])
    sound_codec = ["-c:a", "aac", "-b:a", "64k", "-shortest"] if audio else []
    command = [
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
        "-f", "lavfi", "-i", f"testsrc2=size=640x360:rate=30:duration={MEDIA_SECONDS}", *sound,
        "-vf", drawtext, "-c:v", "libx264", "-preset", "veryfast", "-crf", "26",
        "-g", "15", "-keyint_min", "15", "-sc_threshold", "0", "-bf", "0",
        "-pix_fmt", "yuv420p", *sound_codec, "-movflags", "+faststart", str(partial),
    ]
    started = time.monotonic()
    subprocess.run(command, check=True, timeout=240)
    partial.rename(target)
    log(f"media: generated {target.name} ({target.stat().st_size // 1024} KiB) in {time.monotonic() - started:.1f} s")
    return target


def sound_media(directory):
    """The clip with sound under the name the scenarios play, timecode.mp4, in a
    directory of its own beside the silent one (a link, not a second copy)."""
    target = make_media(directory, audio=True)
    served = directory / "sound" / "timecode.mp4"
    served.parent.mkdir(parents=True, exist_ok=True)
    if not served.is_symlink():
        served.symlink_to(Path("..") / target.name)
    return served


class FailingHandler(RangeRequestHandler):
    """The media server's handler, except for a browser that carries the cookie
    FAIL_COOKIE, asking for a URL with "fail" in it: it gets 404, as when a video
    cannot be reached from one member's network. (Cookies ignore ports, so the
    window that sets it on the room page's origin sends it here too.)"""

    def send_head(self):
        if FAIL_COOKIE in (self.headers.get("Cookie") or "") and "fail" in self.path:
            self.send_error(404, "not found (this window is made to fail)")
            return None
        return super().send_head()
