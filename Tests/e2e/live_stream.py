"""An HLS live stream for the e2e tests, made by ffmpeg and served on loopback.

ffmpeg reads a test pattern in real time (`-re`), burns in its own clock and
frame number, and writes a live playlist (`live.m3u8`) of one-second segments,
keeping the last few and deleting older ones, as a live origin does. The
directory is served by Tests/support/media_server.py (Range-capable, CORS open so that the
test can read frames into a canvas) with the media types HLS players expect.

    with LiveStream(directory) as live:
        live.url            # http://127.0.0.1:PORT/live.m3u8
        live.wait_segments(3, timeout=20)
"""

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402

SEGMENT_SECONDS = 1  # -hls_time: the playlist's target duration
PLAYLIST_SEGMENTS = 6  # -hls_list_size: how many segments the playlist lists
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"


class LiveHandler(RangeRequestHandler):
    # Python's table guesses `.ts` as a translation file; players want these.
    extensions_map = {
        **RangeRequestHandler.extensions_map,
        ".m3u8": "application/vnd.apple.mpegurl",
        ".ts": "video/mp2t",
    }


class LiveStream:
    def __init__(self, directory, program_date_time=True):
        self.directory = Path(directory)
        self.program_date_time = program_date_time
        self.process = None
        self.server = None

    def __enter__(self):
        if self.directory.exists():
            shutil.rmtree(self.directory)
        self.directory.mkdir(parents=True)
        drawtext = (
            f"drawtext=fontfile={FONT}:text='%{{pts\\:hms}}  f%{{n}}':fontsize=40:fontcolor=white"
            ":box=1:boxcolor=black@0.7:boxborderw=8:x=(w-tw)/2:y=h-th-24"
        )
        flags = "delete_segments" + ("+program_date_time" if self.program_date_time else "")
        command = [
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-re",
            "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
            "-vf", drawtext, "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
            "-g", "15", "-keyint_min", "15", "-sc_threshold", "0", "-bf", "0", "-pix_fmt", "yuv420p",
            "-f", "hls", "-hls_time", str(SEGMENT_SECONDS), "-hls_list_size", str(PLAYLIST_SEGMENTS),
            "-hls_flags", flags, str(self.directory / "live.m3u8"),
        ]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self.server = MediaServer(self.directory, LiveHandler).__enter__()
        return self

    def __exit__(self, *exc):
        if self.server:
            self.server.__exit__(*exc)
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    @property
    def url(self):
        return self.server.url("live.m3u8")

    def playlist(self):
        try:
            return (self.directory / "live.m3u8").read_text()
        except FileNotFoundError:
            return ""

    def media_sequence(self):
        match = re.search(r"#EXT-X-MEDIA-SEQUENCE:(\d+)", self.playlist())
        return int(match.group(1)) if match else None

    def wait_segments(self, count, timeout):
        """Returns once the playlist lists `count` segments (ffmpeg writes them in real time)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ffmpeg stopped (status {self.process.returncode})")
            if self.playlist().count("#EXTINF") >= count:
                return
            time.sleep(0.1)
        raise TimeoutError(f"the live playlist did not reach {count} segments in {timeout} s")

    def wait_sequence(self, at_least, timeout):
        """Returns once the playlist's first segment is number `at_least` or later."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sequence = self.media_sequence()
            if sequence is not None and sequence >= at_least:
                return sequence
            time.sleep(0.1)
        raise TimeoutError(f"the live playlist did not move past segment {at_least} in {timeout} s")
