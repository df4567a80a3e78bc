"""An http:// video in a room whose page is served over https:// (mixed
content), in headless Chromium against a real `cowatch serve --store memory`
behind nginx terminating TLS, as deploy/nginx/cowatch.conf does it (the
certificate and nginx are Tests/deploy/test_tls_clients.py's; Chromium is
told to ignore that it does not trust the throwaway certificate, which leaves
the page an https:// one with its mixed-content rules):

- a person shares `http://media.test:<port>/clip.webm` (the name mapped to the
  loopback media server, so that it is no address of this computer, which
  browsers trust over http://) with "Watch now": the page warns them that
  browsers in the room will not play it; Chromium asks for it at https://,
  the media server, which speaks plain http, never sees a request for it, and
  the overlay and the status line say why in words, not only that the address
  could not be loaded;
- another member's page says so before it loads, then the same words;
- a loopback http:// link on the same https:// page plays, with no warning.

Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_mixed_content.py
Skipped, with the reason, when chromium, chromedriver, selenium, ffmpeg, nginx
or openssl are missing.
"""
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pytest

try:
    from selenium.webdriver.common.by import By
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.browser import WINDOW, Chromium, browser_missing  # noqa: E402
from support.harness import free_port  # noqa: E402
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402
from support.page import WEB_ROOT, Browser, Server, clip, room_name  # noqa: E402

MEDIA_HOST = "media.test"

# What the page says (Sources/CowatchWeb/Web/static/sync/mixed-content.js).
WHY = ("This video's address starts with http://, and this page is served over https://: "
       "browsers do not play insecure video on a secure page")
INSTEAD = "Ask whoever shared it for an https:// link, or watch it with cowatch watch (mpv plays it)."
SHARE_WARNING = "That link starts with http://, and this page is served over https://: browsers in the room"
STATUS = "Cannot play: its address is http:// and this page is https://."
GENERIC = "could not be loaded"


def missing():
    """Why this suite cannot run here, or None."""
    for tool in ("ffmpeg", "nginx", "openssl"):
        if not (shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists()):
            return f"{tool} is missing (commands/setup installs it)"
    return browser_missing()


class Requests(RangeRequestHandler):
    """The media server's handler, noting each path asked for over plain http."""

    seen = []
    lock = threading.Lock()

    def send_head(self):
        with self.lock:
            self.seen.append(self.path)
        return super().send_head()


@pytest.fixture(scope="module")
def site():
    why = missing()
    if why:
        pytest.skip(why)
    from deploy.test_tls_clients import Nginx, make_ca  # nginx and the certificate, as deployed
    folder = Path(tempfile.mkdtemp(prefix="cowatch-mixed-"))
    make_ca(folder)
    media_dir = folder / "media"
    media_dir.mkdir()
    clip(media_dir / "clip.webm", 20)
    tls_port, http_port = free_port(), free_port()
    server = Server(WEB_ROOT, "--media-check", "false", "--trusted-proxies", "127.0.0.1")
    nginx = None
    try:
        nginx = Nginx(folder, server.port, tls_port, http_port)
        with MediaServer(media_dir, handler=Requests) as media:
            yield {"origin": f"https://localhost:{tls_port}", "media": media, "server": server}
    finally:
        if nginx:
            nginx.stop()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


class TlsBrowser(Browser):
    """The page suites' Browser, trusting the throwaway certificate (by ignoring
    certificate errors) and sending `media.test` to this computer."""

    def __init__(self):
        Chromium.__init__(self, WINDOW + ["--ignore-certificate-errors",
                                          f"--host-resolver-rules=MAP {MEDIA_HOST} 127.0.0.1"],
                          profile_prefix="cowatch-mixed-chromium-", autoplay=True, console=True)
        self.watch_violations()

    def enter_https(self, site, room, name):
        self.driver.get(f"{site['origin']}/rooms/{room}?name={name}")
        member = self.welcomed()
        assert self.js("return location.protocol") == "https:"
        return member

    def share(self, url):
        field = self.driver.find_element(By.ID, "share-url")
        field.clear()
        field.send_keys(url)
        self.driver.find_element(By.XPATH, "//form[@id='share-form']/button[@data-action='watch']").click()

    def overlay(self):
        return self.js("const o = document.getElementById('overlay');"
                       " return o.hidden ? '' : document.getElementById('overlay-text').textContent;")

    def status(self):
        return self.js("return document.getElementById('player-status').textContent")


@pytest.fixture
def browser():
    b = TlsBrowser()
    yield b
    b.close()


def test_an_http_link_on_an_https_page_is_said_in_words(site, browser):
    room = room_name("mixed")
    media = site["media"]
    url = f"http://{MEDIA_HOST}:{media.port}/clip.webm"
    first = browser.driver.current_window_handle
    browser.enter_https(site, room, "alice")
    Requests.seen.clear()
    browser.share(url)

    # Whoever shares it is told at once that browsers in the room will not play it.
    browser.wait("return document.getElementById('log').textContent.includes(arguments[0])",
                 "the warning to whoever shares it", SHARE_WARNING)

    # The load fails, and the page says why.
    browser.wait("const s = window.cowatch.sync.snapshot(); return s.mode === 'error';", "the video fails to load")
    overlay = browser.wait("const o = document.getElementById('overlay-text').textContent;"
                           " return o.includes('http://') ? o : null;", "the overlay's words")
    assert overlay.startswith(WHY), overlay
    assert INSTEAD in overlay, overlay
    assert GENERIC not in overlay, overlay
    assert browser.wait("const t = document.getElementById('player-status').textContent;"
                        " return t.startsWith('Cannot play') ? t : null;", "the status line") == STATUS
    # Chromium asked for it over https:// (or not at all): never over http://.
    assert not any(path.startswith("/clip.webm") for path in Requests.seen), Requests.seen
    # Its own player did not say it a second time (this page warned already).
    log = browser.log_text()
    assert log.count(SHARE_WARNING) == 1, log
    assert log.count(WHY) == 0, log

    # Another member: told before the video loads, then the same words.
    browser.new_tab()
    browser.enter_https(site, room, "bob")
    browser.wait("return window.cowatch.sync.snapshot().mode === 'error'", "bob's video fails to load")
    log = browser.wait("const t = document.getElementById('log').textContent; return t.includes('yours asks for it at https://') ? t : null;",
                       "bob's notice before loading")
    assert WHY in log and SHARE_WARNING not in log, log
    overlay = browser.wait("const o = document.getElementById('overlay-text').textContent;"
                           " return o.includes('http://') ? o : null;", "bob's overlay")
    assert overlay.startswith(WHY) and GENERIC not in overlay, overlay
    browser.driver.switch_to.window(first)


def test_a_loopback_http_link_on_an_https_page_plays_unwarned(site, browser):
    room = room_name("loopback")
    media = site["media"]
    url = f"http://127.0.0.1:{media.port}/clip.webm"
    browser.enter_https(site, room, "carol")
    Requests.seen.clear()
    browser.share(url)
    browser.wait("const s = window.cowatch.sync.snapshot(); const v = document.getElementById('video');"
                 " return s.mode === 'paused' && v.readyState >= 1;", "the loopback video loads")
    assert any(path.startswith("/clip.webm") for path in Requests.seen), Requests.seen
    log = browser.log_text()
    assert SHARE_WARNING not in log and WHY not in log, log
    assert browser.overlay() == ""


def test_the_words_and_try_again_fit_a_phone(site, browser):
    """At 390 and 320 CSS px wide the overlay's words and its Try again are in
    view together, without scrolling inside the screen or sideways."""
    room = room_name("phone")
    browser.enter_https(site, room, "dana")
    browser.share(f"http://{MEDIA_HOST}:{site['media'].port}/clip.webm")
    browser.wait("return window.cowatch.sync.snapshot().mode === 'error'", "the video fails to load")
    try:
        for width, height in ((390, 844), (320, 640)):
            browser.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
            fit = browser.wait(
                "const o = document.getElementById('overlay'), b = document.getElementById('overlay-action');"
                " const d = document.documentElement;"
                " if (d.clientWidth !== arguments[0] || b.hidden) return null;"
                " const ob = o.getBoundingClientRect(), bb = b.getBoundingClientRect();"
                " return {inside: bb.top >= ob.top && bb.bottom <= ob.bottom, scrolls: o.scrollHeight > o.clientHeight + 1,"
                " sideways: d.scrollWidth > d.clientWidth};", f"the page laid out at {width} px", width)
            assert fit == {"inside": True, "scrolls": False, "sideways": False}, (width, fit)
    finally:
        browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
