"""What a newcomer meets in the room page, in headless Chromium against a real
`cowatch serve --port 0 --store memory` (COWATCH_BIN names the binary; the pages
are the source tree's, through COWATCH_WEB_ROOT):

- the owner key is shown once in a box that stays until closed, with the owner
  link, a copy button that copies it, and what it is for; not in the chat;
- a host's room settings: the password (a masked field), public listing that
  says the truth while a password keeps the room off the front page, invite
  links and bot tokens shown once with a copy button, listed and revoked, the
  ban list and unban;
- a visitor asked for a password types it in a masked field; a visitor kept out
  (a locked room, a ban) reads the refusal once, and is offered nothing it
  cannot do;
- a video from a file server without range requests (`python3 -m http.server`)
  that the group seeks in: the page says once, in words, that this player cannot
  go there, shows no other status beside it, and does not seek again and again;
- with nothing playing, the box to paste a video link is in view without
  scrolling on a 1280 x 800 screen and on a phone (390 x 844), each less the
  browser's own bars.

Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_host_panel.py
(COWATCH_TEST_PORT=N serves on ports N and N + 2 (the second server does not
check links, so that loopback media can be shared), runs chromedriver on N + 1
and the plain file server on N + 3, for a machine where ports are shared out; by
default all take free ones.)
Skipped, with the reason, when chromium, chromedriver or selenium are missing
(commands/setup --browser installs them).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import free_port, wait_until  # noqa: E402
from support.page import PORT, WAIT_S, WEB_ROOT, Observer, Server, opened_browser, room_name, server  # noqa: E402,F401  (server: a fixture)

try:
    from selenium.webdriver.common.by import By
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = None


@pytest.fixture
def browser():
    for b in opened_browser():
        # The clipboard, as a person's click would have it, so that a copy can be read back.
        b.driver.execute_cdp_cmd("Browser.grantPermissions", {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        yield b


def viewport(browser, width, height, mobile=False):
    """The page's viewport at exactly this size, as a laptop's or a phone's screen shows it."""
    browser.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def visible_text(browser):
    return browser.js("return document.body.innerText")


def click(browser, css):
    browser.driver.find_element(By.CSS_SELECTOR, css).click()


def state_access(browser):
    return browser.js("return window.cowatch.model.state && window.cowatch.model.state.access")


def listed_rooms(server):
    with urllib.request.urlopen(server.url("/rooms.json"), timeout=WAIT_S) as response:
        return [room["name"] for room in json.load(response)["rooms"]]


def open_host_panel(browser):
    browser.wait("return !document.getElementById('host-panel').hidden", "the host panel shown to the host")
    browser.js("document.getElementById('host-details').open = true")
    browser.wait("return document.querySelectorAll('#ban-list li, #invite-list li, #token-list li').length >= 3",
                 "the panel's lists, as the server has them")


def list_items(browser, list_id):
    return browser.js(f"return [...document.querySelectorAll('#{list_id} li')].map((li) => li.textContent)")


# MARK: the owner key


def test_the_owner_key_is_kept_in_a_box_with_a_copy_button(server, browser):
    room = room_name("ownerbox")
    me = browser.enter(server, room, "olivia")
    assert me.get("owner") is True
    key = browser.js("return localStorage.getItem(arguments[0])", f"cowatch.owner.{room}")
    assert key

    box = browser.wait("""const box = document.querySelector('#secrets .secret.owner');
                          return box && box.getBoundingClientRect().height > 0 && {
                            text: box.textContent,
                            values: [...box.querySelectorAll('input')].map((i) => i.value),
                            buttons: [...box.querySelectorAll('button')].map((b) => b.textContent)};""",
                       "the owner key's box")
    link = server.url(f"/rooms/{room}?owner={urllib.parse.quote(key, safe='')}")
    assert box["values"] == [link, key], box
    assert box["buttons"] == ["×", "Copy", "Copy"], box
    assert "Shown once" in box["text"] and "makes you the owner again" in box["text"], box["text"]
    # The key is not in the chat, where it would scroll away (and be seen on a shared screen).
    assert key not in browser.log_text()

    # The box stays while the chat moves on.
    field = browser.driver.find_element(By.ID, "chat-input")
    for n in range(12):
        field.send_keys(f"line {n}\n")
    browser.wait("return document.getElementById('log').textContent.includes('line 11')", "the chat lines came back")
    assert browser.js("return !!document.querySelector('#secrets .secret.owner')")

    # Copy: the owner link is on the clipboard, and the page says so.
    click(browser, "#secrets .secret.owner .secret-row button.copy")
    browser.wait("return document.querySelector('#secrets .secret.owner .copy-status').textContent === 'Owner link copied.'",
                 "the page says the owner link was copied")
    copied = browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; navigator.clipboard.readText().then(done, (e) => done('refused: ' + e));")
    assert copied == link

    # Closed, it is gone for good (shown once); the key is still kept by the browser.
    click(browser, "#secrets .secret.owner button.close")
    assert browser.js("return document.querySelector('#secrets .secret.owner')") is None
    browser.driver.refresh()
    browser.welcomed()
    assert browser.js("return document.querySelector('#secrets .secret')") is None
    assert browser.js("return localStorage.getItem(arguments[0])", f"cowatch.owner.{room}") == key


# MARK: the host panel


def listed_then_removed(browser, list_id, matches, says, empty):
    """The panel's list `list_id` comes to hold one item that `matches` (a test
    in JavaScript of `item`, its text) and says `says`; its button removes it,
    and the list then says `empty`."""
    items = browser.wait(f"const items = [...document.querySelectorAll('#{list_id} li')].map((li) => li.textContent);"
                         f" const item = items[0]; return items.length === 1 && {matches} && items;",
                         f"one item in {list_id}")
    assert says in items[0], items
    click(browser, f"#{list_id} button.moderate")
    browser.wait("return document.getElementById(arguments[0]).textContent === arguments[1]", f"{list_id} emptied",
                 list_id, empty)


def test_the_host_panel_sets_the_password_lists_and_shows_invites_bans_and_tokens(server, browser):
    room = room_name("panel")
    browser.enter(server, room, "hana")
    observer = Observer(server, room, name="mallory")
    try:
        open_host_panel(browser)
        fields = browser.js("return [...document.querySelectorAll('input[type=password]')].map((i) => i.id)")
        assert fields == ["host-password"], "the password field is masked"

        # A password: masked, sent, not echoed in the chat; the panel says newcomers are asked.
        field = browser.driver.find_element(By.ID, "host-password")
        field.send_keys("two words")
        click(browser, "#password-form button[type=submit]")
        assert browser.js("return document.querySelector('#password-form + .form-problem').textContent") \
            == "A password cannot have spaces."
        assert field.get_attribute("value") == "two words", "what was typed is kept to be corrected"
        field.clear()
        field.send_keys("hunter2")
        click(browser, "#password-form button[type=submit]")
        browser.wait("return window.cowatch.model.state.access.password === true", "the room asks a password")
        assert "hunter2" not in visible_text(browser)
        assert browser.js("return document.getElementById('password-status').textContent").startswith(
            "Newcomers are asked for a password")

        # Listed while it has a password: the page and the server say it is not on the front page.
        click(browser, "#listing-toggle")
        browser.wait("return window.cowatch.model.state.access.public === true", "the room asked to be listed")
        words = browser.wait("return document.getElementById('listing-status').textContent", "the listing's words")
        assert words == "To be listed, but not on the server's front page while it has a password."
        browser.wait("return document.getElementById('log').textContent.includes("
                     "\"it is not listed while it has a password\")", "the server's notice says it is not listed")
        assert room not in listed_rooms(server)
        click(browser, "#password-clear")
        browser.wait("return window.cowatch.model.state.access.password === false", "the password removed")
        assert browser.js("return document.getElementById('listing-status').textContent").startswith(
            "Listed on the server's front page")
        assert room in listed_rooms(server)
        click(browser, "#listing-toggle")
        browser.wait("return window.cowatch.model.state.access.public === false", "the room off the list")

        # An invite link: shown once in a box with a copy button, listed, revoked.
        click(browser, "#invite-form button[type=submit]")
        invite = browser.wait("""const box = document.querySelector('#secrets .secret.invite');
                                 return box && {text: box.textContent, value: box.querySelector('input').value,
                                                copy: !!box.querySelector('button.copy')};""", "the invite link's box")
        assert re.fullmatch(re.escape(server.url(f"/rooms/{room}?invite=")) + r"[0-9a-f]+", invite["value"]), invite
        assert invite["copy"] and "Shown once" in invite["text"]
        assert invite["value"] not in browser.log_text()
        listed_then_removed(browser, "invite-list", "item.startsWith('#1')", "1 use left", "No invite links in force.")

        # A ban from the member list appears in the panel; unban lifts it.
        browser.js("window.prompt = () => 'spam'")
        browser.driver.find_element(
            By.XPATH, "//ul[@id='members']/li[span[@class='name' and text()='mallory']]//button[text()='ban']").click()
        listed_then_removed(browser, "ban-list", "item.includes('mallory')", "banned by hana until unbanned (spam)",
                            "Nobody is banned or kept out.")

        # A bot token: shown once with a copy button, listed, revoked.
        browser.driver.find_element(By.ID, "bot-name").send_keys("dj-bot")
        click(browser, "#token-form button[type=submit]")
        token = browser.wait("""const box = document.querySelector('#secrets .secret.token');
                                return box && {text: box.textContent, value: box.querySelector('input').value};""",
                             "the bot token's box")
        assert re.fullmatch(r"[0-9a-f]{16,}", token["value"]), token
        assert "dj-bot" in token["text"] and "Shown once" in token["text"]
        assert token["value"] not in browser.log_text()
        listed_then_removed(browser, "token-list", "item.startsWith('#1 dj-bot (chat)')", "", "No bot tokens.")
        # The panel's own requests (/bans, /invites, /tokens) left no replies in the chat.
        assert browser.js("return document.querySelectorAll('#log .line.reply').length") == 0
    finally:
        observer.close()


# MARK: at the door


def test_a_visitor_types_the_password_in_a_masked_field_and_comes_in(server, browser):
    room = room_name("door")
    host_tab = browser.driver.current_window_handle
    browser.enter(server, room, "hana")
    browser.driver.find_element(By.ID, "chat-input").send_keys("/password sesame\n")
    browser.wait("return window.cowatch.model.state.access.password === true", "the room asks a password")

    browser.new_tab()
    browser.driver.get(server.url("/"))
    browser.js("localStorage.removeItem(arguments[0])", f"cowatch.owner.{room}")  # the owner key passes the door
    browser.driver.get(server.url(f"/rooms/{room}?name=vera"))
    door = browser.wait("""const door = document.getElementById('door');
                           const field = document.getElementById('door-password');
                           return !door.hidden && field && {heading: door.querySelector('h2').textContent, type: field.type};""",
                        "the door asks the password")
    assert door == {"heading": "This room asks for a password", "type": "password"}
    assert_nothing_to_do_in_the_room(browser)
    field = browser.driver.find_element(By.ID, "door-password")
    field.send_keys("wrong\n")
    browser.wait("return (document.getElementById('door-text') || {}).textContent === \"That password is not the room's. Try again:\"",
                 "the door says the password was wrong")
    assert browser.js("return document.getElementById('door-password').type") == "password"
    browser.driver.find_element(By.ID, "door-password").send_keys("sesame\n")
    me = browser.welcomed()
    assert me["name"] == "vera"
    assert browser.js("""return document.getElementById('door').hidden && !document.body.classList.contains('shut')
                           && getComputedStyle(document.getElementById('share-form')).display !== 'none'
                           && !document.getElementById('chat-input').disabled""")
    assert "sesame" not in visible_text(browser) and "wrong" not in browser.log_text()
    browser.driver.switch_to.window(host_tab)


def assert_nothing_to_do_in_the_room(browser):
    """A page kept out shows no control for a room it is not in, and no invitation to share a link."""
    shown = browser.js("""return ['share-form', 'chat-form', 'play', 'end', 'catchup', 'share', 'quit', 'overlay']
                            .filter((id) => { const e = document.getElementById(id); return e && e.getClientRects().length > 0; });""")
    assert shown == [], f"shown to a page kept out: {shown}"
    text = visible_text(browser)
    assert "Paste a video link" not in text and "paste a link" not in text.lower(), text
    assert browser.js("return document.getElementById('connection').hidden"), "the banner says the refusal again"


def test_a_visitor_kept_out_reads_the_refusal_once_and_is_offered_nothing_it_cannot_do(server, browser):
    room = room_name("shut")
    host_tab = browser.driver.current_window_handle
    browser.enter(server, room, "hana")
    click(browser, "#room-controls button.moderate")  # lock room
    browser.wait("return window.cowatch.model.state.access.locked === true", "the room locked")

    browser.new_tab()
    browser.driver.get(server.url("/"))
    browser.js("localStorage.removeItem(arguments[0])", f"cowatch.owner.{room}")  # the owner key passes the lock
    browser.driver.get(server.url(f"/rooms/{room}?name=vera"))
    refusal = "This room is locked: only an invite link from a host lets you in."
    browser.wait("return window.cowatch && window.cowatch.connection.phase === 'closed' && !document.getElementById('door').hidden",
                 "the locked door")
    text = visible_text(browser)
    assert text.count("locked") == 2 and text.count(refusal) == 1, text  # the heading, and the reason once
    assert "locked" not in browser.log_text().lower(), browser.log_text()
    assert_nothing_to_do_in_the_room(browser)
    assert browser.js("return document.querySelector('#door a').getAttribute('href')") == "/"
    browser.driver.switch_to.window(host_tab)


# MARK: the link box in view


# What a page is given of a 1280 x 800 laptop screen once the system's and the
# browser's own bars have taken about 120 px, and of a 390 x 844 phone once its
# browser's address and tool bars have taken about 180 px.
@pytest.mark.parametrize("size", [(1280, 680, False), (390, 664, True)], ids=["laptop-1280x800", "phone-390x844"])
def test_the_box_to_paste_a_link_is_in_view_without_scrolling(server, browser, size):
    width, height, mobile = size
    viewport(browser, width, height, mobile)
    room = room_name("fold")
    browser.enter(server, room, "nina")
    found = browser.wait("""const overlay = document.getElementById('overlay');
                            const box = document.getElementById('share-url').getBoundingClientRect();
                            const submit = document.querySelector('#share-form button').getBoundingClientRect();
                            return !overlay.hidden && {
                              overlay: document.getElementById('overlay-text').textContent,
                              top: box.top, bottom: Math.max(box.bottom, submit.bottom), height: innerHeight, width: innerWidth,
                              scrollY: scrollY, scrollWidth: document.documentElement.scrollWidth};""",
                         "the empty room's overlay")
    assert found["width"] == width and found["height"] == height, found
    assert "Paste a video link below" in found["overlay"], found
    assert found["scrollY"] == 0 and 0 <= found["top"] and found["bottom"] <= height, \
        f"the link box is not in view at {width}x{height}: {found}"
    assert found["scrollWidth"] <= width, found


# MARK: a video that cannot seek


@pytest.fixture(scope="module")
def unchecked_server():
    s = Server(WEB_ROOT, "--media-check", "false", port=PORT + 2 if PORT else 0)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def plain_file_server():
    """`python3 -m http.server` over a short generated video: it answers no range
    requests, so a browser can play the video from the start only."""
    if not shutil.which("ffmpeg"):
        pytest.skip("ffmpeg is missing (commands/setup --browser installs it)")
    folder = tempfile.mkdtemp(prefix="cowatch-plain-files-")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
                    "-i", "testsrc2=size=320x180:rate=30:duration=90", "-c:v", "libx264", "-preset", "veryfast",
                    "-crf", "30", "-g", "30", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
                    os.path.join(folder, "clip.mp4")], check=True, timeout=120)
    port = PORT + 3 if PORT else free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", folder],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/clip.mp4", timeout=1) as response:
                return response.status == 200 and "Accept-Ranges" not in response.headers
        except OSError:
            return False

    wait_until(answers, WAIT_S, "the plain file server answers, without range requests")
    yield f"http://127.0.0.1:{port}/clip.mp4"
    process.terminate()
    process.wait(timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


STATUS_JS = """const c = window.cowatch; const line = document.getElementById('player-line');
return {mode: c.sync.mode, shown: line.hidden ? null : line.innerText.trim(),
        kind: document.getElementById('sync-indicator').dataset.kind,
        drift: document.getElementById('player-drift').textContent,
        seeks: c.sync.history.filter((h) => h.includes('cannot seek')).length};"""


def test_a_video_that_cannot_seek_is_said_once_in_words_and_not_looped_on(unchecked_server, plain_file_server, browser):
    room = room_name("noranges")
    browser.driver.get(unchecked_server.url(f"/rooms/{room}?name=hana"))
    browser.welcomed()
    field = browser.driver.find_element(By.ID, "chat-input")
    field.send_keys(f"/watch {plain_file_server} Clip\n")
    browser.wait("return document.getElementById('video').readyState >= 1", "the video's metadata")
    field.send_keys("/play\n")
    playing = browser.wait(STATUS_JS.replace("return {", "const s = {") + " return s.shown && s.shown.startsWith('Playing') && s;",
                           "the group playing, from the start")
    assert playing["kind"] in ("in-sync", "catching-up"), playing
    field.send_keys("/seek 40\n")
    said = browser.wait(STATUS_JS.replace("return {", "const s = {") + " return s.shown && s.shown.includes('0:40') && s;",
                        "the page says the video cannot go to 0:40")
    assert said["shown"].startswith("This video's server does not let players jump to a position"), said
    assert said["kind"] == "problem" and said["drift"] == "", said
    # A while later: the same words, alone, and no seek tried again.
    browser.wait("return window.cowatch.model.participants.get(window.cowatch.model.meId)"
                 ".suspensions.includes('coordinatedPlaybackNotPossible')", "this player stands aside from the group")
    later = browser.wait(STATUS_JS.replace("return {", "const s = {") + " return s.mode === 'suspended' && s;",
                         "the player suspended")
    assert later["shown"] == said["shown"] and later["seeks"] == 1, later
    assert "In sync" not in visible_text(browser) and "Catching up" not in visible_text(browser)
    # Back to the start, where the video can go: it rejoins the group. (Another
    # member moves the group: a suspended member's /seek is refused, docs/protocol.md.)
    observer = Observer(unchecked_server, room, name="otto")
    try:
        observer.wait_for(lambda e: e.get("type") == "state", "the observer's first state")
        observer.socket.send("/pause\n/seek 0")
        browser.wait("return !window.cowatch.model.participants.get(window.cowatch.model.meId)"
                     ".suspensions.includes('coordinatedPlaybackNotPossible')", "this player back with the group")
        observer.socket.send("/play")
        back = browser.wait(STATUS_JS.replace("return {", "const s = {") + " return s.shown && s.shown.startsWith('Playing') && s;",
                            "the player playing with the group again")
        assert back["seeks"] == 1, back
    finally:
        observer.close()
