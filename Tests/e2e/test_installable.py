"""The page as an installable web app and a share target, in headless Chromium
against a real `cowatch serve --store memory` (COWATCH_BIN names the binary; the
pages are the source tree's, through COWATCH_WEB_ROOT):

- the manifest (static/manifest.webmanifest) is served as
  application/manifest+json, parses, and names the app, its icons and the share
  target (GET to `/` with title, text and url);
- every icon it names is served with its type, each PNG as large as it says
  (read from its IHDR), the SVG an SVG, and a maskable one among them;
- the landing page and the room page link it, with a theme colour;
- Chromium's own reading of the manifest (CDP `Page.getAppManifest`) has no
  errors and finds the share target, and `Page.getInstallabilityErrors` has
  none, with no service worker: Chromium no longer asks for one. What headless
  Chromium cannot show is the install prompt itself, or the phone's share
  sheet: a share is opened here as the share sheet would, `/?text=...`;
- a shared link opens "Watch this together" on the landing page, the link shown
  as text (markup in it is not markup), a new room's name filled in and the rooms
  this browser remembers to pick from; the button leads to
  `/rooms/<room>?watch=<the link>`; a share with no link, or not an http(s) one,
  says so and offers no button.

Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_installable.py
Skipped, with the reason, when chromium, chromedriver or selenium are missing.
"""
import json
import struct
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.page import WAIT_S, opened_browser, room_name, server  # noqa: E402,F401  (server: a fixture)

try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = Select = None

MANIFEST = "/static/manifest.webmanifest"


@pytest.fixture
def browser():
    yield from opened_browser()


def get(server, path):
    """(status, content type, body) of a GET to the server."""
    with urllib.request.urlopen(server.url(path), timeout=WAIT_S) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def png_size(data):
    """A PNG's width and height, from its IHDR (the first chunk)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, f"the first chunk is {kind!r}"
    return struct.unpack(">II", data[16:24])


def manifest(server):
    status, content_type, body = get(server, MANIFEST)
    assert status == 200
    assert content_type == "application/manifest+json", content_type
    return json.loads(body)


# MARK: the manifest and its icons, over HTTP


def test_the_manifest_is_served_and_names_the_app_its_icons_and_the_share_target(server):  # noqa: F811
    app = manifest(server)
    assert app["name"] == "Cowatch" and app["short_name"] and app["description"], app
    assert app["start_url"] == "/" and app["scope"] == "/" and app["display"] == "standalone", app
    # The colours of static/style.css: the accent and the light background.
    assert app["theme_color"].lower() == "#2255cc" and app["background_color"].lower() == "#f6f6f4", app
    icons = app["icons"]
    assert any(i["type"] == "image/svg+xml" and i["sizes"] == "any" and i.get("purpose", "any") == "any" for i in icons), icons
    assert {(i["sizes"], i.get("purpose", "any")) for i in icons if i["type"] == "image/png"} >= {
        ("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")}, icons
    # (enctype: GET's only one, said so that Chromium does not warn of a default.)
    assert app["share_target"] == {"action": "/", "method": "GET", "enctype": "application/x-www-form-urlencoded",
                                   "params": {"title": "title", "text": "text", "url": "url"}}, app.get("share_target")


def test_every_icon_is_served_with_its_type_and_size(server):  # noqa: F811
    icons = manifest(server)["icons"]
    assert len(icons) >= 4
    for icon in icons:
        status, content_type, body = get(server, urllib.parse.urljoin(MANIFEST, icon["src"]))
        assert status == 200, icon
        assert content_type == icon["type"], f"{icon['src']} is served as {content_type}"
        if icon["type"] == "image/png":
            width, height = png_size(body)
            assert f"{width}x{height}" == icon["sizes"], f"{icon['src']} is {width}x{height}, said {icon['sizes']}"
        else:
            assert b"<svg" in body and b'viewBox="0 0 16 16"' in body, icon["src"]


def test_the_landing_page_and_the_room_page_link_the_manifest(server):  # noqa: F811
    for path in ("/", f"/rooms/{room_name('manifest')}"):
        _, _, body = get(server, path)
        page = body.decode()
        assert f'<link rel="manifest" href="{MANIFEST}">' in page, f"{path} does not link the manifest"
        assert '<meta name="theme-color"' in page, f"{path} has no theme colour"


# MARK: Chromium's reading of it


def test_chromium_reads_the_manifest_without_errors_and_finds_it_installable(server, browser):  # noqa: F811
    """Headless Chromium reads the manifest and judges installability (no
    service worker needed) but shows no install prompt: that part is for a
    person to try."""
    driver = browser.driver
    driver.get(server.url("/"))
    browser.wait("return document.readyState === 'complete'", "the landing page")
    seen = driver.execute_cdp_cmd("Page.getAppManifest", {})
    assert seen["url"] == server.url(MANIFEST), seen["url"]
    assert seen["errors"] == [], seen["errors"]
    assert json.loads(seen["data"])["name"] == "Cowatch"
    parsed = seen.get("manifest")
    if parsed is not None:  # Chromium's parsed manifest (newer versions), in its own spelling ("kGet", "kStandalone")
        assert parsed["startUrl"] == parsed["scope"] == server.url("/"), parsed
        assert "standalone" in parsed["display"].lower(), parsed
        # The share target as Chromium understood it: its action and method (CDP's
        # copy of the rest is garbled in Chromium 156: params and enctype are not its own).
        share = parsed.get("shareTarget") or {}
        assert share.get("action") == server.url("/") and "get" in share.get("method", "").lower(), share
    try:
        errors = driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]
    except Exception as error:  # noqa: BLE001 - an older or newer Chromium without it
        pytest.skip(f"Page.getInstallabilityErrors is not available here: {error}")
    assert errors == [], errors
    assert browser.violations() == []


# MARK: a shared link on the landing page


STATUS_JS = "const s = document.getElementById('shared-status'); return !document.getElementById('shared').hidden && s.textContent"


def test_a_shared_link_opens_watch_this_together_and_leads_to_the_room(server, browser):  # noqa: F811
    driver = browser.driver
    # A room this browser remembers (room/arrival.js keeps the list).
    driver.get(server.url("/"))
    browser.js("localStorage.setItem('cowatch.rooms', JSON.stringify(['movie-night', 'lobby']))")
    driver.get(server.url("/?text=look%20https://example.org/a.mp4"))
    status = browser.wait(STATUS_JS, "the shared link said")
    section = driver.find_element(By.ID, "shared")
    assert section.find_element(By.TAG_NAME, "h2").text == "Watch this together"
    assert "https://example.org/a.mp4" in status, status
    assert driver.find_element(By.ID, "shared-status").get_attribute("role") == "status"
    choice = Select(driver.find_element(By.ID, "shared-choice"))
    assert [o.text for o in choice.options] == ["A new room", "movie-night", "lobby"]
    room = browser.js("return document.querySelector('#watch-shared [name=room]').value")
    assert room and room == room.lower() and len(room) <= 64, room

    # A remembered room: its name field goes, the button leads there.
    choice.select_by_visible_text("lobby")
    assert not driver.find_element(By.ID, "shared-new").is_displayed()
    choice.select_by_visible_text("A new room")
    assert driver.find_element(By.ID, "shared-new").is_displayed()

    # The new room: the room page with ?watch=<the link> (the room page then takes it
    # out of the address bar, so the address asked for is read from the navigation).
    section.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    browser.wait("return location.pathname.startsWith('/rooms/')", "the room page")
    asked = browser.js("return performance.getEntriesByType('navigation')[0].name")
    assert asked == server.url(f"/rooms/{room}?watch=https%3A%2F%2Fexample.org%2Fa.mp4"), asked


def test_a_shared_room_picked_from_those_remembered(server, browser):  # noqa: F811
    driver = browser.driver
    driver.get(server.url("/"))
    browser.js("localStorage.setItem('cowatch.rooms', JSON.stringify(['movie-night']))")
    driver.get(server.url("/?title=A%20film&url=https%3A%2F%2Fexample.org%2Fb.webm&text="))
    status = browser.wait(STATUS_JS, "the shared link said")
    assert '"A film"' in status and "https://example.org/b.webm" in status, status
    Select(driver.find_element(By.ID, "shared-choice")).select_by_visible_text("movie-night")
    driver.find_element(By.CSS_SELECTOR, "#watch-shared button[type=submit]").click()
    browser.wait("return location.pathname === '/rooms/movie-night'", "the remembered room")
    asked = browser.js("return performance.getEntriesByType('navigation')[0].name")
    assert asked == server.url("/rooms/movie-night?watch=https%3A%2F%2Fexample.org%2Fb.webm"), asked


def test_a_share_without_a_link_says_so_and_shows_what_was_shared_as_text(server, browser):  # noqa: F811
    driver = browser.driver
    driver.get(server.url("/?title=Hi&text=%3Cimg%20src%3Dx%20id%3Dinjected%3E%20no%20link%20here"))
    status = browser.wait(STATUS_JS, "the missing link said")
    assert status.startswith("No link was found"), status
    assert "<img src=x id=injected>" in status, status
    assert browser.js("return document.getElementById('injected')") is None, "what was shared became markup"
    assert not driver.find_element(By.ID, "watch-shared").is_displayed(), "a button with nothing to watch"

    driver.get(server.url("/?url=javascript%3Aalert(1)"))
    status = browser.wait(STATUS_JS, "the refused link said")
    assert status.startswith("Only http and https links"), status
    assert not driver.find_element(By.ID, "watch-shared").is_displayed()


def test_the_landing_page_without_a_share_is_as_before(server, browser):  # noqa: F811
    browser.driver.get(server.url("/?name=ada"))
    browser.wait("return document.readyState === 'complete'", "the landing page")
    assert browser.js("return document.getElementById('shared').hidden") is True
    assert browser.violations() == []
