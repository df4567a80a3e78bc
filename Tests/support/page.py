"""The room page in headless Chromium against a real `cowatch serve --store
memory`: what the page suites (Tests/e2e/test_page_security.py,
test_accessibility.py, test_host_panel.py, test_newcomer.py, test_own_copy.py)
share. The pages are the source tree's (through COWATCH_WEB_ROOT); COWATCH_BIN
names the binary; COWATCH_TEST_PORT=N serves on port N and runs chromedriver on
N + 1 (by default both take free ones)."""
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect as ws_connect

from support.browser import WINDOW, Chromium, browser_missing
from support.harness import Serve, wait_until

REPO = Path(__file__).resolve().parents[2]
WEB_ROOT = REPO / "Sources" / "CowatchWeb" / "Web"
BIN = os.environ.get("COWATCH_BIN", str(REPO / ".build" / "debug" / "cowatch"))
PORT = int(os.environ.get("COWATCH_TEST_PORT", "0"))
WAIT_S = 20  # the longest any condition is waited for

# Installed in every document before its own scripts: what the policy refused.
VIOLATIONS_JS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__violations.push(`${event.effectiveDirective} blocked ${event.blockedURI || '(inline)'}` +
    ` at ${event.sourceFile || event.documentURI}:${event.lineNumber}`);
});
"""


def room_name(prefix):
    return f"{prefix}-{secrets.token_hex(4)}"


class Server(Serve):
    """`cowatch serve` on a loopback port (a free one unless given), the pages
    from `web_root`, nothing kept on disk."""

    def __init__(self, web_root, *extra, port=0):
        self.cwd = tempfile.mkdtemp(prefix="cowatch-page-")
        super().__init__("--host", "127.0.0.1", "--store", "memory", *extra, port=port, binary=BIN,
                         env=dict(os.environ, COWATCH_WEB_ROOT=str(web_root)), cwd=self.cwd,
                         log_path=Path(self.cwd) / "server.log")

    def stop(self):
        super().stop(timeout=10)
        shutil.rmtree(self.cwd, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    s = Server(WEB_ROOT, port=PORT)
    yield s
    s.stop()


class Browser(Chromium):
    """One headless Chromium (its own profile), driven tab by tab; every
    document records what the Content-Security-Policy refused. `autoplay`:
    its pages may start playing without a click (as a viewer's who clicked
    once); `font_size`: the viewer's text size, as set in the browser's
    settings (16 px unless changed); `throttled`: a hidden page's timers
    throttled as in a browser a person uses."""

    def __init__(self, driver_port=0, font_size=None, autoplay=None, throttled=False):
        prefs = {"webkit": {"webprefs": {"default_font_size": font_size}}} if font_size else None
        super().__init__(WINDOW, profile_prefix="cowatch-page-chromium-",
                         profile_dir=REPO / ".build-e2e" if autoplay else None, autoplay=autoplay,
                         console=True, prefs=prefs, driver_port=driver_port, throttled=throttled)
        self.watch_violations()

    def watch_violations(self):
        """Every later document of the current tab records the policy's refusals."""
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": VIOLATIONS_JS})

    def new_tab(self):
        """A tab of its own (its own sessionStorage; the browser's localStorage)."""
        self.driver.switch_to.new_window("tab")
        self.watch_violations()
        return self.driver.current_window_handle

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, script, what, *args):
        """`script`'s first true value in this tab, within WAIT_S."""
        return wait_until(lambda: self.js(script, *args), WAIT_S, what, interval=0.05)

    def enter(self, server, room, name):
        """This tab in `room` as `name`; its member once welcomed."""
        self.driver.get(server.url(f"/rooms/{room}?name={name}"))
        return self.welcomed()

    def welcomed(self):
        """Waits for this tab's room page to be welcomed; its member (id, name, owner, role)."""
        return self.wait("const c = window.cowatch; const me = c && c.model.participants.get(c.model.meId);"
                         " return me && c.connection.phase === 'open' ? me : null;", "the room page is welcomed")

    def log_text(self):
        return self.js("return document.getElementById('log').textContent")

    def violations(self):
        found = list(self.js("return window.__violations || []") or [])
        return found + [m for m in self.console_messages() if "Content Security Policy" in m]


def opened_browser(missing=None, **options):
    """A fixture's body: a Browser with `options` (driver on COWATCH_TEST_PORT + 1
    when set), skipped with the reason when none can start (or `missing` says
    what else the tests lack), closed after."""
    missing = browser_missing() or missing
    if missing:
        pytest.skip(missing)
    b = Browser(driver_port=PORT + 1 if PORT else 0, **options)
    yield b
    b.close()


@pytest.fixture
def browser():
    yield from opened_browser()


class Observer:
    """A plain WebSocket member of a room: sees who arrives and leaves."""

    def __init__(self, server, room, name="observer"):
        self.socket = ws_connect(f"ws://127.0.0.1:{server.port}/rooms/{room}?name={name}",
                                 subprotocols=["cowatch.v1.json"], open_timeout=WAIT_S).__enter__()
        self.events = []

    def wait_for(self, predicate, what, timeout=WAIT_S):
        """Reads events until one satisfies `predicate`; returns it."""
        deadline = time.monotonic() + timeout
        for event in self.events:
            if predicate(event):
                return event
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not within {timeout} s: {what}; seen {[e.get('type') for e in self.events]}")
            try:
                event = json.loads(self.socket.recv(timeout=left))
            except TimeoutError:
                continue
            self.events.append(event)
            if predicate(event):
                return event

    def arrived(self, name):
        return lambda e: e.get("type") == "participant" and e.get("change") == "arrived" and e["participant"]["name"] == name

    def names_arrived(self):
        return [e["participant"]["name"] for e in self.events
                if e.get("type") == "participant" and e.get("change") == "arrived"]

    def close(self):
        self.socket.close()


def clip(path, seconds):
    """A small WebM any Chromium plays: `seconds` long, its own bytes."""
    subprocess.run([
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
        "-i", f"testsrc2=size=160x120:rate=10:duration={seconds}",
        "-c:v", "libvpx", "-deadline", "realtime", "-b:v", "200k", str(path),
    ], check=True, timeout=120)


@pytest.fixture(scope="module")
def files():
    """Own copies on disk: one film under two names, and another film."""
    if not shutil.which("ffmpeg"):
        pytest.skip("ffmpeg is missing (commands/e2e installs it)")
    directory = Path(tempfile.mkdtemp(prefix="cowatch-own-"))
    clip(directory / "Movie.2019.webm", 30)
    shutil.copyfile(directory / "Movie.2019.webm", directory / "my copy of the movie.webm")
    clip(directory / "another film.webm", 20)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
