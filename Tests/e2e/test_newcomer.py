"""What a newcomer meets on the room page, in headless Chromium against a real
`cowatch serve --port 0 --store memory` (COWATCH_BIN names the binary; the pages
are the source tree's, through COWATCH_WEB_ROOT):

- an own copy seen by someone without the file: the video area says what plays
  and asks for the copy, in view at 1280 x 900 and on a phone, with the
  controls that could not work disabled and the item's length shown;
- a page that has the file says so again after a reconnection (`/have`);
- the chat of a host with every box open keeps a usable height and one
  scrollbar at 1280 x 900 and on a phone (measured, and screenshots written to
  COWATCH_SHOTS=DIR when set);
- a chat line too long for the server stays in the field, said so, and is not
  sent; a line the room refuses comes back into the field;
- `/help` is the page's own: short, and host commands for hosts only.

Run: COWATCH_BIN=.build/debug/cowatch python3 -m pytest -q Tests/e2e/test_newcomer.py
Skipped, with the reason, when chromium, chromedriver, selenium or ffmpeg are missing.
"""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import wait_until  # noqa: E402
from support.page import WAIT_S, Observer, files, opened_browser, room_name, server  # noqa: E402,F401  (files, server: fixtures)

try:
    from selenium.webdriver.common.by import By
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = None

DESKTOP = (1280, 900, 1, False)
PHONE = (390, 844, 3, True)


@pytest.fixture
def browser():
    yield from opened_browser(autoplay=True)


def screen(browser, size):
    width, height, ratio, mobile = size
    browser.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": ratio, "mobile": mobile})
    browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));")


def shot(browser, name):
    folder = os.environ.get("COWATCH_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, f"{name}.png").write_bytes(browser.driver.get_screenshot_as_png())


def type_line(browser, line):
    browser.driver.find_element(By.ID, "chat-input").send_keys(line + "\n")


IN_VIEW_JS = """
const box = (id) => { const r = document.getElementById(id).getBoundingClientRect();
  return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; };
window.scrollTo(0, 0);
const overlay = document.getElementById('overlay');
return {
  asked: !document.getElementById('own-ask').hidden,
  text: document.getElementById('own-ask-text').textContent,
  askInView: box('own-ask'), pickInView: box('own-ask') && box('own-none'),
  pickLabelInView: (() => { const r = document.querySelector('label[for=own-pick]').getBoundingClientRect();
    return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight; })(),
  overlay: overlay.hidden ? null : document.getElementById('overlay-text').textContent,
  title: document.getElementById('title').hidden ? null : document.getElementById('title').textContent,
  play: document.getElementById('play').disabled, seek: document.getElementById('seek').disabled,
  rate: document.getElementById('rate').disabled, catchup: document.getElementById('catchup').disabled,
  duration: document.getElementById('duration').textContent,
};
"""


def test_an_own_copy_without_the_file_is_asked_for_over_the_video_in_view(server, browser, files):  # noqa: F811
    room = room_name("own-new")
    browser.enter(server, room, "ada")
    ada = browser.driver.current_window_handle
    browser.driver.find_element(By.ID, "own-share").send_keys(str(files / "Movie.2019.webm"))
    browser.wait("const s = window.cowatch.model.state; const a = s && s.session && s.session.activity;"
                 " return a && a.source.kind === 'own';", "ada's file is shared")
    browser.driver.find_element(By.ID, "play").click()
    browser.wait("const s = window.cowatch.model.state; return s && s.playback.status === 'playing';", "the room plays")

    browser.new_tab()
    browser.enter(server, room, "bea")
    for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        screen(browser, size)
        # Waits for the page laid out at this size (a resize settles after the
        # call that made it), then says what was wrong if it never was.
        read = "return (() => {" + IN_VIEW_JS + "})();"
        settled = ("const r = (() => {" + IN_VIEW_JS + "})(); return r.asked && r.askInView && r.pickInView"
                   " && r.pickLabelInView && r.duration === '0:30' && r;")
        seen = wait_until(lambda: browser.js(settled), WAIT_S, "bea is asked for her copy, in view",  # noqa: B023
                          failure=lambda: AssertionError(f"{name}: not asked in view: {browser.js(read)}"))  # noqa: B023
        shot(browser, f"own-copy-asked-{name}")
        assert "pick your copy of the file: " in seen["text"] and "Playing for the room" in seen["text"], seen
        assert seen["askInView"] and seen["pickInView"] and seen["pickLabelInView"], f"{name}: the ask is not in view: {seen}"
        assert seen["overlay"] is None, f"{name}: the video area also says {seen['overlay']!r}"
        assert seen["title"], f"{name}: no title of what plays: {seen}"
        assert seen["play"] and seen["seek"] and seen["rate"] and seen["catchup"], f"{name}: controls that cannot work: {seen}"
        assert seen["duration"] == "0:30", f"{name}: the item's length: {seen}"
    title = browser.js("return document.getElementById('play').title")
    assert "Pick your copy" in title, title

    # "I don't have it": still said over the video, with the way back.
    screen(browser, DESKTOP)
    browser.driver.find_element(By.ID, "own-none").click()
    seen = browser.wait("const r = (() => {" + IN_VIEW_JS + "})(); return r.text.startsWith('You are not watching') && r;",
                        "bea said she has no copy")
    assert seen["asked"] and seen["overlay"] is None and seen["pickLabelInView"], seen
    browser.driver.switch_to.window(ada)


SENT_JS = """
window.__sent = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) { window.__sent.push(String(data)); return send.call(this, data); };
"""


def test_a_page_with_the_file_says_so_again_after_a_reconnection(server, browser, files):  # noqa: F811
    room = room_name("own-again")
    browser.enter(server, room, "ada")
    browser.driver.find_element(By.ID, "own-share").send_keys(str(files / "Movie.2019.webm"))
    browser.wait("const c = window.cowatch; const me = c.model.participants.get(c.model.meId); return me && me.copy === true;",
                 "ada has the file, as the room counts it")
    browser.js(SENT_JS)
    # The connection drops (not a leave: the member is kept for the resume grace) and comes back.
    welcomed = browser.js("return window.cowatch.model.meId")
    browser.js("window.cowatch.connection.socket.close(4000, 'dropped')")
    browser.wait("return window.cowatch.connection.phase === 'open' && window.__sent.some((l) => /^\\/have \\d+ yes$/.test(l))",
                 "/have said again after the reconnection")
    assert browser.js("return window.cowatch.model.meId") == welcomed, "came back as another member"


SCROLLERS_JS = """
const log = document.getElementById('log');
const scrollers = [];
for (let e = log.parentElement; e && e !== document.body && e !== document.documentElement; e = e.parentElement) {
  const style = getComputedStyle(e);
  if (/(auto|scroll)/.test(style.overflowY) && e.scrollHeight > e.clientHeight + 1) scrollers.push(e.className || e.tagName);
}
log.scrollIntoView({block: 'nearest'});
const r = log.getBoundingClientRect();
return {height: log.clientHeight, scrollers, logScrolls: log.scrollHeight > log.clientHeight,
        inView: r.top >= 0 && r.bottom <= innerHeight, lineHeight: parseFloat(getComputedStyle(log).lineHeight) || 20};
"""


def test_a_hosts_chat_keeps_its_height_and_one_scrollbar(server, browser):
    room = room_name("chat-tall")
    browser.enter(server, room, "hana")
    browser.wait("return !!document.querySelector('#secrets .secret.owner')", "the owner key's box")
    observers = [Observer(server, room, name=f"guest{n}") for n in range(4)]
    try:
        for n in range(3):
            type_line(browser, f"/queue http://127.0.0.1:9/clip{n}.mp4 Item {n}")
        type_line(browser, "/invite")
        browser.wait("return document.querySelectorAll('#queue li').length === 3 && document.querySelectorAll('#secrets .secret').length >= 2",
                     "the queue and the invite's box")
        browser.js("document.getElementById('host-details').open = true")
        browser.wait("return document.querySelectorAll('#members button.moderate').length >= 12", "the host's controls")
        for n in range(40):
            observers[0].socket.send(f"chat line {n}")
        browser.wait("return document.getElementById('log').textContent.includes('chat line 39')", "the chat lines")
        for name, size, least in (("desktop", DESKTOP, 300), ("phone", PHONE, 250)):
            screen(browser, size)
            seen = browser.js(SCROLLERS_JS)
            shot(browser, f"host-chat-{name}")
            assert seen["scrollers"] == [], f"{name}: scrollbars around the chat's: {seen}"
            assert seen["height"] >= least, f"{name}: the chat is {seen['height']} px tall ({seen})"
            assert seen["logScrolls"] and seen["inView"], seen
    finally:
        for observer in observers:
            observer.close()


def test_a_line_too_long_stays_in_the_field_and_a_refused_line_comes_back(server, browser):
    room = room_name("long")
    browser.enter(server, room, "ada")
    observer = Observer(server, room, name="bob")
    try:
        emoji = "\U0001F600" * 1100
        # (chromedriver types no character outside the BMP: the text is put in as a paste would.)
        browser.js("const f = document.getElementById('chat-input'); f.value = arguments[0];"
                   " f.dispatchEvent(new Event('input', {bubbles: true}));", emoji)
        said = browser.wait("return document.getElementById('chat-limit').textContent", "the field's length said")
        assert "4400 of at most 4096 bytes" in said, said
        browser.driver.find_element(By.CSS_SELECTOR, "#chat-form button[type=submit]").click()
        type_line(browser, "")  # Enter as well
        assert browser.js("return document.getElementById('chat-input').value") == emoji, "the text was lost"
        assert browser.js("return document.getElementById('chat-input').getAttribute('aria-invalid')") == "true"
        type_line(browser, "")
        assert browser.js("return window.cowatch.connection.phase") == "open"
        browser.js("const f = document.getElementById('chat-input'); f.value = 'short';"
                   " f.dispatchEvent(new Event('input', {bubbles: true}));")
        browser.driver.find_element(By.CSS_SELECTOR, "#chat-form button[type=submit]").click()
        observer.wait_for(lambda e: e.get("type") == "chat" and e.get("text") == "short", "the short line")
        assert not any(e.get("type") == "chat" and "\U0001F600" in e.get("text", "") for e in observer.events)

        # Refused by the room: the line comes back to be mended.
        type_line(browser, "/seek soon")
        browser.wait("return document.getElementById('chat-input').value === '/seek soon'", "the refused line back in the field")
    finally:
        observer.close()


def test_help_on_the_page_is_short_and_host_commands_are_for_hosts_and_the_owner_is_told_so(server, browser):
    room = room_name("help")
    browser.enter(server, room, "hana")
    reply_js = "const r = [...document.querySelectorAll('#log .line.reply')].pop(); return r ? r.textContent : null;"
    welcome_js = ("return [...document.querySelectorAll('#log .line.system .text')].map((l) => l.textContent)"
                  ".find((t) => t.startsWith('You are '))")
    assert browser.js(welcome_js) == f"You are hana in room {room}, its owner. Type /help for the commands."
    type_line(browser, "/help")
    host = browser.wait(reply_js, "hana's /help")
    assert "/kick" in host and "/play" in host and "cowatch connect" not in host and "/have" not in host, host
    browser.new_tab()
    browser.driver.get(server.url("/"))
    browser.js("localStorage.removeItem(arguments[0])", f"cowatch.owner.{room}")
    browser.enter(server, room, "vera")
    assert browser.js(welcome_js) == f"You are vera in room {room}. Type /help for the commands."
    type_line(browser, "/help")
    member = browser.wait(reply_js, "vera's /help")
    assert "/play" in member and "/kick" not in member and "/lock" not in member, member
    assert browser.js("return document.querySelectorAll('#log .line.reply .command').length") <= 14
