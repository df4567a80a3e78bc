"""The browser page as a hardened web app, in headless Chromium against a real
`cowatch serve --port 0 --store memory` (COWATCH_BIN names the binary; the pages
are the source tree's, through COWATCH_WEB_ROOT):

- a reload of a room's tab is the same member; another tab is another member;
  a token the server does not know makes a new member, whose token is kept;
  "Leave room" makes the member go at once;
- an owner key in a link (`?owner=`) never replaces the key the browser keeps
  unless the server accepted it, and the person is told when it was refused;
- the landing page and the room work under the Content-Security-Policy the
  server sends (no inline script, style or handler), with a subtitle track from
  another host, and send no violation;
- a page of another origin cannot frame the room page;
- the server sends the security headers on its pages and files.

The last two read the headers the server sends (docs/security.md, "The page").
Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_page_security.py
Skipped, with the reason, when chromium, chromedriver or selenium are missing
(commands/setup --browser installs them), except the plain header check.
"""
import http.server
import json
import shutil
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

import pytest

try:
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:  # browser_missing() says so, and the browser tests are skipped
    WebDriverException = By = Keys = None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import free_port  # noqa: E402
from support.page import WAIT_S, WEB_ROOT, Observer, Server, browser, room_name, server  # noqa: E402,F401  (fixtures)

# Scripts and frames: the server's own, and the players' API origins of the
# default settings (youtube-api-url, vimeo-api-url), nothing else.
PLAYER_ORIGINS = "https://player.vimeo.com https://www.youtube.com"
POLICY = (f"default-src 'self'; script-src 'self' {PLAYER_ORIGINS}; style-src 'self'; img-src 'self' data: blob:; "
          f"media-src * data: blob:; connect-src 'self' ws: wss: http: https:; frame-src {PLAYER_ORIGINS}; "
          "frame-ancestors 'self'; base-uri 'none'; form-action 'self'; object-src 'none'")
HEADERS = {
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def parse_policy(text):
    """A policy as {directive: set of sources}, so that spacing and order do not matter."""
    directives = {}
    for part in (text or "").split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = set(words[1:])
    return directives


# MARK: the server


@pytest.fixture(scope="module")
def policed_server():
    """The pages with the policy as a <meta> (all of it but frame-ancestors, which
    only a header carries), so that they are held to it whatever headers the
    server sends; links are not checked, so that loopback media can be shared,
    and the server may fetch subtitles from loopback for the page."""
    root = Path(tempfile.mkdtemp(prefix="cowatch-page-web-")) / "Web"
    shutil.copytree(WEB_ROOT, root)
    meta_policy = "; ".join(part for part in POLICY.split("; ") if not part.startswith("frame-ancestors"))
    for page in ("index.html", "room.html"):
        path = root / page
        text = path.read_text()
        assert '<meta charset="utf-8">' in text
        path.write_text(text.replace('<meta charset="utf-8">', '<meta charset="utf-8">\n  '
                                     f'<meta http-equiv="Content-Security-Policy" content="{meta_policy}">', 1))
    s = Server(root, "--media-check", "false", "--media-check-private", "true")
    yield s
    s.stop()
    shutil.rmtree(root.parent, ignore_errors=True)


class StaticSite:
    """A tiny http.server on a free loopback port (another origin than the
    server's): fixed paths, each with its body, type and extra headers."""

    def __init__(self, files):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                entry = files.get(self.path.split("?")[0])
                if entry is None:
                    self.send_error(404)
                    return
                body, kind, headers = entry
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_reload_keeps_the_member_and_another_tab_is_another_member(server, browser):
    room = room_name("reload")
    first_tab = browser.driver.current_window_handle
    before = browser.enter(server, room, "alice")
    assert before["name"] == "alice"

    browser.driver.refresh()
    after = browser.welcomed()
    assert (after["id"], after["name"]) == (before["id"], "alice"), "the reload came back as another member"
    assert browser.js("return [...window.cowatch.model.participants.values()].map((p) => p.name)") == ["alice"]
    assert "resume" not in browser.js("return location.href")

    browser.new_tab()
    other = browser.enter(server, room, "alice")
    assert other["id"] != before["id"] and other["name"] == "alice-2", "a second tab took the first tab's member"

    # The first tab is still in the room as itself, and sees both.
    browser.driver.switch_to.window(first_tab)
    browser.wait("const c = window.cowatch; return c.connection.phase === 'open' && c.model.participants.size === 2"
                 " && [...c.model.participants.values()].every((p) => p.connected !== false);",
                 "the first tab sees both members connected")
    assert browser.js("return window.cowatch.model.meId") == before["id"]


def test_a_token_the_server_does_not_know_joins_fresh_and_is_replaced(server, browser):
    room = room_name("unknown")
    before = browser.enter(server, room, "uma")
    # What the tab keeps for its next load becomes a token the server never gave
    # (as one whose grace ran out): written after the page's own pagehide.
    browser.js("addEventListener('pagehide', () => sessionStorage.setItem(arguments[0],"
               " JSON.stringify({ token: 'not-a-token', live: false })));", f"cowatch.resume.{room}")
    browser.driver.refresh()
    fresh = browser.welcomed()
    assert fresh["id"] != before["id"], "an unknown token took back a member"
    token = browser.js("return window.cowatch.connection.resumeToken")
    assert token and token != "not-a-token"
    assert json.loads(browser.js("return sessionStorage.getItem(arguments[0])", f"cowatch.resume.{room}"))["token"] == token
    # The new member is the one the next reload takes back.
    browser.driver.refresh()
    again = browser.welcomed()
    assert again["id"] == fresh["id"]


def test_leave_room_goes_at_once_and_leaves_nothing_to_resume(server, browser):
    room = room_name("leave")
    observer = Observer(server, room)
    try:
        member = browser.enter(server, room, "lena")
        browser.driver.find_element(By.ID, "quit").click()
        # Closed with 1000: gone at once, long before the resume grace (60 s) would run out.
        left = observer.wait_for(lambda e: e.get("type") == "participant-left" and e.get("id") == member["id"],
                                 "the member that left is gone")
        assert left.get("reason") == "left"
        browser.wait("return location.pathname === '/'", "the page went to the landing page")
        # The same tab opening the room again is a newcomer.
        again = browser.enter(server, room, "lena")
        assert again["id"] != member["id"]
    finally:
        observer.close()


# MARK: 2. an owner key from a link never replaces the key kept unless accepted


def test_a_refused_owner_key_in_a_link_does_not_replace_the_key_kept(server, browser):
    room = room_name("owned")
    creator = browser.enter(server, room, "olivia")
    assert creator.get("owner") is True
    storage = f"cowatch.owner.{room}"
    real = browser.js("return localStorage.getItem(arguments[0])", storage)
    assert real, "the creator's page keeps the owner key"

    browser.new_tab()
    browser.driver.get(server.url(f"/rooms/{room}?owner=0000&name=olivia"))
    browser.welcomed()
    assert "owner=" not in browser.js("return location.href"), "the link's key stays in the address bar"
    browser.wait("return document.getElementById('log').textContent.includes("
                 "'The owner key in the link you opened was not accepted')", "the page says the link's key was refused")
    assert browser.js("return localStorage.getItem(arguments[0])", storage) == real
    # The key kept makes this tab the owner: at once, and after a reload without the link.
    tab = browser.wait("const c = window.cowatch; const me = c.model.participants.get(c.model.meId);"
                       " return me && me.owner === true && me.role === 'host' && c.connection.phase === 'open' ? me : null;",
                       "the key kept makes the page the owner")
    browser.driver.refresh()
    again = browser.welcomed()
    assert again["id"] == tab["id"] and again.get("owner") is True and again["role"] == "host"
    assert browser.js("return localStorage.getItem(arguments[0])", storage) == real


def test_an_accepted_owner_key_in_a_link_is_kept(server, browser):
    room = room_name("handed")
    browser.enter(server, room, "olivia")
    storage = f"cowatch.owner.{room}"
    real = browser.js("return localStorage.getItem(arguments[0])", storage)
    assert real
    # As on another device: this browser keeps no key, the link brings it.
    browser.js("localStorage.removeItem(arguments[0])", storage)
    browser.new_tab()
    browser.driver.get(server.url(f"/rooms/{room}?owner={real}&name=olivia"))
    member = browser.welcomed()
    assert member.get("owner") is True
    browser.wait("return document.getElementById('log').textContent.includes("
                 "'The owner key in the link you opened was accepted')", "the page says the link's key was accepted")
    assert browser.js("return localStorage.getItem(arguments[0])", storage) == real
    assert "owner=" not in browser.js("return location.href")


# MARK: 3. the pages under the policy


def test_the_pages_work_under_the_content_security_policy(server, policed_server, browser):
    vtt = b"WEBVTT\n\n00:00:00.000 --> 01:00:00.000\nunder the policy\n"
    media = StaticSite({
        # No CORS header: the page reads the track through the server.
        "/en.vtt": (vtt, "text/vtt", {}),
        "/clip.mp4": (b"\0" * 4096, "video/mp4", {}),
    })
    try:
        for label, target in (("the server's own headers", server), ("the pages held to the policy", policed_server)):
            browser.driver.get(target.url("/"))
            browser.wait("return document.readyState === 'complete'"
                         " && document.getElementById('origin').textContent === location.origin",
                         f"{label}: the landing page's script ran")
            assert browser.violations() == [], f"{label}: the landing page"

            room = room_name("policy")
            browser.driver.get(target.url(f"/rooms/{room}?name=carol"))
            browser.welcomed()
            field = browser.driver.find_element(By.ID, "chat-input")
            field.send_keys("hello under the policy", Keys.ENTER)
            # The page shows a chat line when the server sends it back, not when it is typed.
            browser.wait("return document.getElementById('log').textContent.includes('hello under the policy')",
                         f"{label}: the chat line came back from the server")
            assert browser.violations() == [], f"{label}: the room page"

        # Media and subtitles from another host: the video is asked for there, the
        # subtitles fetched through the server (their host sends no CORS header)
        # and shown from a blob (media-src * data: blob:).
        field = browser.driver.find_element(By.ID, "chat-input")
        field.send_keys(f"/watch {media.url('/clip.mp4')} Clip", Keys.ENTER)
        browser.wait("return window.cowatch.model.state?.session?.state === 'joined'", "the clip is shared")
        field.send_keys(f"/subtitles {media.url('/en.vtt')} English", Keys.ENTER)
        browser.wait("const s = document.getElementById('subtitles'); return !s.hidden && s.options.length === 2",
                     "the subtitle track is offered")
        browser.js("const s = document.getElementById('subtitles'); s.value = s.options[1].value;"
                   " s.dispatchEvent(new Event('change'));")
        browser.wait("const t = document.querySelector('#video track');"
                     " return t && t.src.startsWith('blob:') && t.readyState === 2 && t.track.mode === 'showing';",
                     "the subtitles are loaded from a blob and shown")
        assert browser.violations() == [], "media and subtitles from another host"
    finally:
        media.close()


# MARK: 4. another origin cannot frame the room page


def test_another_origin_cannot_frame_the_room_page(server, browser):
    room = room_name("framed")
    framed_url = server.url(f"/rooms/{room}?name=framed")
    framer = StaticSite({"/": (f'<!doctype html><title>framer</title><iframe id="room" src="{framed_url}"></iframe>'
                               .encode(), "text/html; charset=utf-8", {})})
    observer = Observer(server, room)
    try:
        browser.driver.get(framer.url("/"))
        browser.wait("return document.readyState === 'complete'", "the framing page and its frame loaded")
        browser.driver.switch_to.frame("room")
        try:
            framed = browser.js("return { href: location.href, room: !!window.cowatch }")
        except WebDriverException as error:  # the browser's own error page
            framed = {"href": str(error), "room": False}
        browser.driver.switch_to.default_content()
        assert framed["room"] is False, f"the room page ran inside another origin's frame ({framed['href']})"

        # A page of the server's own, opened after the frame: once it has arrived,
        # the frame had its chance, and nobody came in from it.
        browser.new_tab()
        browser.driver.get(server.url(f"/rooms/{room}?name=control"))
        observer.wait_for(observer.arrived("control"), "the room page opened directly arrives")
        assert "framed" not in observer.names_arrived()
    finally:
        observer.close()
        framer.close()


# MARK: 5. the headers


@pytest.mark.parametrize("path", ["/", "/rooms/x", "/static/room.js"])
def test_pages_and_files_carry_the_security_headers(server, path):
    with urllib.request.urlopen(server.url(path), timeout=WAIT_S) as response:
        headers = response.headers
        assert response.status == 200
    assert parse_policy(headers.get("Content-Security-Policy")) == parse_policy(POLICY), \
        f"{path}: Content-Security-Policy is {headers.get('Content-Security-Policy')!r}"
    for name, value in HEADERS.items():
        assert (headers.get(name) or "").lower() == value.lower(), f"{path}: {name} is {headers.get(name)!r}"
