"""A small static file server with HTTP Range support, for the e2e test media.

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


class MediaServer:
    """Serves `directory` on 127.0.0.1 at `port` (0: a free one), on a daemon thread.
    `handler` may be a RangeRequestHandler subclass."""

    def __init__(self, directory, handler=None, port=0):
        handler_class = handler or RangeRequestHandler
        directory = str(directory)
        handler = lambda *a, **k: handler_class(*a, directory=directory, **k)  # noqa: E731
        self.httpd = QuietServer(("127.0.0.1", port), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"


if __name__ == "__main__":
    import time

    with MediaServer(sys.argv[1] if len(sys.argv) > 1 else ".") as server:
        print(f"serving on http://127.0.0.1:{server.port}/", flush=True)
        while True:
            time.sleep(3600)
