"""Loopback web servers for the harnesses: a small static file server with HTTP
Range support for the test media (MediaServer), a test's own page beside the
source tree's static/ (TestPage), and the base of both and of the players'
stand-ins (LoopbackSite).

Browsers seek in a media file by asking for byte ranges (`Range: bytes=a-b`) and
expect `206 Partial Content` with `Content-Range`. Python's http.server ignores
Range, and with it seeking silently breaks (the browser can only play from the
start). This server answers single ranges, `HEAD`, and plain `GET`, on
127.0.0.1 only.
"""

import http.server
import os
import re
import sys
import threading
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "Sources" / "CowatchWeb" / "Web" / "static"

RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class RangeRequestHandler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: media elements make many requests

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # quiet: the test prints its own summary

    def end_headers(self):
        # The room page lives on another port (another origin); the test reads
        # frames into a canvas, which needs CORS for a cross-origin video.
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) or not os.path.isfile(path):
            self.send_error(404, "not found")
            return None
        size = os.path.getsize(path)
        start, end = 0, size - 1
        header = self.headers.get("Range")
        partial = False
        if header:
            match = RANGE.match(header.strip())
            if not match or (match.group(1) == "" and match.group(2) == ""):
                self.send_error(416, "bad range")
                return None
            if match.group(1) == "":  # suffix range: the last N bytes
                start = max(0, size - int(match.group(2)))
            else:
                start = int(match.group(1))
                if match.group(2) != "":
                    end = min(int(match.group(2)), size - 1)
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            partial = True
        handle = open(path, "rb")
        handle.seek(start)
        self.send_response(206 if partial else 200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(end - start + 1))
        if partial:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self._remaining = end - start + 1
        return handle

    def copyfile(self, source, outputfile):
        remaining = self._remaining
        while remaining > 0:
            chunk = source.read(min(256 * 1024, remaining))
            if not chunk:
                break
            try:
                outputfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                return  # the browser cancelled the request (a seek): normal
            remaining -= len(chunk)


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Browsers drop media connections all the time (a seek cancels a request).
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class LoopbackSite:
    """`handler` served on 127.0.0.1 at `port` (0: a free one), on a daemon
    thread between entering and leaving a `with`."""

    def __init__(self, handler, port=0):
        self.httpd = QuietServer(("127.0.0.1", port), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def origin(self):
        return f"http://127.0.0.1:{self.port}"

    def url(self, name):
        return f"{self.origin}/{name}"


class MediaServer(LoopbackSite):
    """Serves `directory`. `handler` may be a RangeRequestHandler subclass."""

    def __init__(self, directory, handler=None, port=0):
        handler_class = handler or RangeRequestHandler
        directory = str(directory)
        super().__init__(lambda *a, **k: handler_class(*a, directory=directory, **k), port)


class TestPage(LoopbackSite):
    """A test's own `page` (HTML) at `/`, and the source tree's static/ under
    /static/, so that the page loads the room page's modules as they are."""

    __test__ = False  # not a test class, whatever its name says

    def __init__(self, page, port=0):
        data = page.encode()

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 - the base class's name
                if self.path == "/":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                super().do_GET()

            def translate_path(self, path):
                return str(STATIC.parent) + path.split("?")[0]

            def guess_type(self, path):
                return "text/javascript" if str(path).endswith(".js") else super().guess_type(path)

        super().__init__(Handler, port)


if __name__ == "__main__":
    import time

    with MediaServer(sys.argv[1] if len(sys.argv) > 1 else ".") as server:
        print(f"serving on http://127.0.0.1:{server.port}/", flush=True)
        while True:
            time.sleep(3600)
