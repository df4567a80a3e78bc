"""Own copies in the room page, in one headless Chromium against a real
`cowatch serve --port 0 --store memory` (COWATCH_BIN names the binary; the pages
are the source tree's, through COWATCH_WEB_ROOT):

- a member picks a file on their disk with "Watch my own copy": nothing is
  uploaded, the room is told its hash, size and length, not its name;
- a second window picks its copy of the same file under another name: it
  matches and plays; a third picks another file and is told, in words, that it
  does not match and why;
- everyone sees who has the file; the room waits for the two who have it and
  not for the third, and the two play together.

Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_own_copy.py
(COWATCH_TEST_PORT=N serves on port N and runs chromedriver on N + 1; by
default both take free ones.) Skipped, with the reason, when chromium,
chromedriver, selenium or ffmpeg are missing.
"""
import sys
from pathlib import Path

import pytest

try:
    from selenium.webdriver.common.by import By
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import wait_until  # noqa: E402
from support.page import WAIT_S, files, opened_browser, room_name, server  # noqa: E402,F401  (files, server: fixtures)


@pytest.fixture
def browser():
    yield from opened_browser(autoplay=True)


COPIES = ("const c = window.cowatch; if (!c) return null;"
          " return Object.fromEntries([...c.model.participants.values()].map((p) => [p.name, p.copy ?? null]));")


def test_two_copies_of_one_file_play_together_and_another_file_is_refused(server, browser, files):
    room = room_name("own")
    windows = {}
    for name in ("ada", "bea", "cy"):
        if windows:
            browser.new_tab()
        browser.driver.get(server.url(f"/rooms/{room}?name={name}"))
        browser.welcomed()
        windows[name] = browser.driver.current_window_handle

    def at(name):
        browser.driver.switch_to.window(windows[name])
        return browser

    # ada shares her file: the room learns its identity, never its name.
    at("ada").driver.find_element(By.ID, "own-share").send_keys(str(files / "Movie.2019.webm"))
    size = (files / "Movie.2019.webm").stat().st_size
    state = at("ada").wait("const s = window.cowatch.model.state; const a = s && s.session && s.session.activity;"
                           " return a && a.source.kind === 'own' ? s : null;", "ada's file is shared")
    activity = state["session"]["activity"]
    assert activity["url"] is None
    assert activity["source"]["size"] == size
    assert activity["identifier"] == f"own:{activity['source']['hash']}:{size}"
    assert abs(activity["duration"] - 30) < 0.5
    assert "Movie" not in activity["title"] and activity["title"].startswith("a file of ")

    # bea is asked in words, and picks her copy under another name: it matches.
    bea = at("bea")
    bea.wait("return !document.getElementById('own-ask').hidden", "bea is asked to pick her copy")
    assert "pick your copy of the file: " in bea.js("return document.getElementById('own-ask-text').textContent")
    bea.driver.find_element(By.ID, "own-pick").send_keys(str(files / "my copy of the movie.webm"))
    bea.wait("return document.getElementById('log').textContent.includes(\"is the room's file\")",
             "bea's copy is accepted")

    # cy picks another film: refused, saying why.
    cy = at("cy")
    cy.wait("return !document.getElementById('own-ask').hidden", "cy is asked to pick his copy")
    cy.driver.find_element(By.ID, "own-pick").send_keys(str(files / "another film.webm"))
    cy.wait("return document.getElementById('log').textContent.includes('another film.webm does not match: another file')",
            "cy is told his file does not match")

    # Everyone sees who has it.
    copies = wait_until(lambda: (lambda c: c if c == {"ada": True, "bea": True, "cy": False} else None)(
        at("cy").js(COPIES)), WAIT_S, "cy's page shows ada and bea with the file and cy without")
    assert copies["cy"] is False
    members = at("ada").js("return document.getElementById('members').textContent")
    assert "has the file" in members and "no copy, not watching" in members

    # ada plays: the room waits for ada and bea only, and plays.
    at("ada").driver.find_element(By.ID, "play").click()
    at("ada").wait("const s = window.cowatch.model.state; return s && s.playback.status === 'playing';",
                   "the room plays without waiting for cy")

    def position(name):
        return at(name).js("return document.getElementById('video').currentTime")

    wait_until(lambda: position("ada") > 1 and position("bea") > 1, WAIT_S, "ada's and bea's videos play")
    # Together: their positions, read one right after the other, are close.
    spreads = []
    for _ in range(5):
        a = position("ada")
        b = position("bea")
        a2 = position("ada")
        spreads.append(abs((a + a2) / 2 - b))
    assert min(spreads) < 0.25, f"ada and bea apart by {spreads}"
    # Not by the wait limit, which would have suspended a straggler: cy was never waited for.
    me = "const c = window.cowatch; return c.model.participants.get(c.model.meId)"
    assert at("cy").js(me + ".suspensions") == []
    assert "started without" not in at("ada").js("return document.getElementById('log').textContent")
    # cy stays in the room, not watching: his video plays nothing.
    assert at("cy").js("const v = document.getElementById('video'); return v.paused || !v.currentSrc") is True
    assert at("cy").js(me + ".joined") is True
