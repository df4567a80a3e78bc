"""One headless Chromium window on the room page, driven through Selenium
(Window), and the reading every measurement is made of: each page's clock and
video.currentTime read together (READ_JS, read_all)."""

import sys
from pathlib import Path

try:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:  # commands/e2e installs it
    sys.exit("e2e: the selenium package is missing (python3 -m pip install selenium)")

import png  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.browser import UNTHROTTLED, WINDOW, Chromium  # noqa: E402


READ_JS = """
const v = document.querySelector('video');
const c = window.cowatch;
const s = c && c.sync;
const t0 = performance.timeOrigin + performance.now();
const position = v.currentTime;
const t1 = performance.timeOrigin + performance.now();
const me = c && c.model.participants.get(c.model.meId);
return {
  t: (t0 + t1) / 2, position, paused: v.paused, seeking: v.seeking, readyState: v.readyState,
  videoRate: v.playbackRate, duration: v.duration,
  seq: s && s.state ? s.state.seq : null,
  playback: s && s.state ? s.state.playback : null,
  policy: s && s.state ? s.state.policy : null,
  mode: s ? s.mode : null, detail: s ? s.detail : null, joining: s ? !!s.join : false,
  running: s ? !!s.running : false, lastStart: s ? s.lastStart : null,
  offset: s ? s.clock.offset : null, uncertainty: s ? s.clock.uncertainty : null, rtt: s ? s.clock.rtt : null, playLatency: s ? s.playLatency : null,
  me: me || null, meId: c ? c.model.meId : null,
  members: c ? c.model.participants.size : 0,
  connection: c ? c.connection.phase : null,
  overlay: document.getElementById('overlay').hidden ? null : document.getElementById('overlay-text').textContent,
  overlayButton: document.getElementById('overlay-action').hidden ? null : document.getElementById('overlay-action').textContent,
  banner: document.getElementById('connection').hidden ? null : document.getElementById('connection-text').textContent,
};
"""


class Window:
    """One browser process with one driver session, showing the room page.

    For the conditions (conditions.py): `binary` runs Chromium through a wrapper
    (a shifted clock), `extra_flags` are added (host resolver rules that send the
    media through a proxy), `throttled` lets a hidden page's timers be throttled
    as in a browser a person uses, and `clock_shift_ms` is how far this browser's
    clock is ahead of the true one: read() takes it off, so that every reading's
    `t` is true time and the windows' readings compare."""

    def __init__(self, label, autoplay=True, binary=None, extra_flags=(), throttled=False, clock_shift_ms=0.0,
                 driver_port=0):
        self.label = label
        self.clock_shift_ms = clock_shift_ms
        self.chromium = Chromium(WINDOW + UNTHROTTLED + list(extra_flags), profile_prefix=f"cowatch-e2e-{label}-",
                                autoplay=True if autoplay else False, console=True, throttled=throttled,
                                binary=binary, driver_port=driver_port, script_timeout=10)
        self.driver = self.chromium.driver
        self.profile = self.chromium.profile

    def open(self, url):
        self.driver.get(url)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def repainted(self):
        """Returns once the page has painted a frame after this call: the second
        animation frame from now comes after the first one's paint."""
        self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => done(true)));")

    def region(self, screenshot, element_id, step=4):
        """What `screenshot` (a PNG of this window) shows where element
        `element_id` is: the luma's mean and variance and how many coarse colours
        (png.region_stats), and the element's width and height (CSS px)."""
        left, top, width, height, ratio = self.js(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            " return [r.left, r.top, r.width, r.height, window.devicePixelRatio];", element_id)
        return (*png.region_stats(screenshot, left * ratio, top * ratio, width * ratio, height * ratio, step=step),
                width, height)

    def read(self):
        reading = self.js(READ_JS)
        if self.clock_shift_ms:
            reading["t"] -= self.clock_shift_ms
        return reading

    def type(self, line):
        """Types a line into the chat input and presses Enter, as a person would."""
        field = self.driver.find_element(By.ID, "chat-input")
        field.send_keys(line, Keys.ENTER)

    def click(self, by, selector, tries=5):
        """Finds the element and clicks it; an element the page re-rendered
        between the two (a state that arrived meanwhile re-draws the list it is
        in) is found again, up to `tries` times."""
        for attempt in range(tries):
            try:
                self.driver.find_element(by, selector).click()
                return
            except StaleElementReferenceException:
                if attempt == tries - 1:
                    raise

    def console_errors(self):
        return self.chromium.console_messages("SEVERE")

    def close(self):
        self.chromium.close()


def read_all(windows):
    return [w.read() for w in windows]


def window_ports(base, n):
    """Window n's chromedriver and DevTools ports under --port-base (0: free ones)."""
    if not base:
        return {}
    return {"driver_port": base + 2 + 2 * n, "extra_flags": [f"--remote-debugging-port={base + 3 + 2 * n}"]}
