"""A stand-in for YouTube's IFrame Player API on loopback, for the browser tests.

The room page loads the YouTube player's script from the setting
`youtube-api-url`; pointed here, it gets this server's `iframe_api`, which
loads `widgetapi.js` (the documented `YT.Player` surface, standin/youtube/) and
embeds `/embed/<id>`: a page of this server's own origin, another origin than
the room's, with a `<video>` of a local file, driven by messages as the real
player is. What it reproduces and what it cannot is listed in
docs/browser.md ("A stand-in for YouTube"), and at the top of
standin/youtube/embed.js.

    python3 Tests/e2e/youtube_standin.py MEDIA_FILE [PORT]

serves on 127.0.0.1:PORT (default: a free port) until interrupted.
"""

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from support.media_server import LoopbackSite, RangeRequestHandler  # noqa: E402

FILES = HERE / "standin" / "youtube"
# A live id's stream began this long before the stand-in started, so that its
# edge is well into the media file from the first moment.
LIVE_HEAD_START_S = 60


class StandinHandler(RangeRequestHandler):
    """The API's scripts, the embed page (with the live clock and the media's
    address filled in), and the media file with Range support."""

    media = None  # Path of the video file
    live_start_ms = 0

    def do_GET(self):  # noqa: N802 - the base class's name
        path = self.path.split("?", 1)[0]
        if path == "/iframe_api":
            return self.send_text(FILES / "iframe_api.js", "text/javascript; charset=utf-8")
        if path == "/widgetapi.js":
            return self.send_text(FILES / "widgetapi.js", "text/javascript; charset=utf-8")
        if path == "/embed.js":
            return self.send_text(FILES / "embed.js", "text/javascript; charset=utf-8")
        if path.startswith("/embed/"):
            page = (FILES / "embed.html").read_text()
            page = page.replace("{{LIVE_START_MS}}", str(self.live_start_ms)).replace("{{MEDIA}}", "/media/video.mp4")
            return self.send_body(page.encode(), "text/html; charset=utf-8")
        if path == "/media/video.mp4":
            return super().do_GET()
        self.send_error(404, "not found")
        return None

    def do_HEAD(self):  # noqa: N802
        if self.path.split("?", 1)[0] == "/media/video.mp4":
            return super().do_HEAD()
        self.send_error(405, "GET only")
        return None

    def translate_path(self, path):
        return str(self.media)

    def send_text(self, file, kind):
        return self.send_body(file.read_bytes(), kind)

    def send_body(self, body, kind):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(body)


class YouTubeStandin(LoopbackSite):
    """Serves the stand-in on 127.0.0.1:`port` (0: a free one) on a daemon thread."""

    def __init__(self, media, port=0):
        handler = type("Handler", (StandinHandler,), {
            "media": Path(media).resolve(), "live_start_ms": int((time.time() - LIVE_HEAD_START_S) * 1000),
        })
        super().__init__(handler, port)

    @property
    def api_url(self):
        return f"{self.origin}/iframe_api"


if __name__ == "__main__":
    with YouTubeStandin(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0) as standin:
        print(f"YouTube stand-in on {standin.api_url}", flush=True)
        while True:
            time.sleep(3600)
