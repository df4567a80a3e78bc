"""One headless Chromium window on the room page, driven through Selenium
(Window), and the reading every measurement is made of: each page's clock and
video.currentTime read together (READ_JS, read_all)."""

import shutil
import sys
import tempfile

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:  # commands/e2e installs it
    sys.exit("e2e: the selenium package is missing (python3 -m pip install selenium)")

CHROME_FLAGS = [
    "--headless=new", "--no-sandbox", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
    "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-dev-shm-usage", "--window-size=1280,900",
]


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


# Flags that keep a hidden page's timers and renderer at full speed; chromedriver
# adds the first two of its own accord.
UNTHROTTLED_FLAGS = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--disable-backgrounding-occluded-windows"]


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
        options = webdriver.ChromeOptions()
        options.binary_location = binary or shutil.which("chromium") or "/usr/bin/chromium"
        self.profile = tempfile.mkdtemp(prefix=f"cowatch-e2e-{label}-")
        flags = [f for f in CHROME_FLAGS if autoplay or not f.startswith("--autoplay-policy")]
        if not autoplay:
            flags.append("--autoplay-policy=document-user-activation-required")
        if throttled:
            flags = [f for f in flags if f not in UNTHROTTLED_FLAGS]
            options.add_experimental_option("excludeSwitches", [f[2:] for f in UNTHROTTLED_FLAGS])
        for flag in flags + list(extra_flags) + [f"--user-data-dir={self.profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver", port=driver_port)
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_script_timeout(10)

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

    def read(self):
        reading = self.js(READ_JS)
        if self.clock_shift_ms:
            reading["t"] -= self.clock_shift_ms
        return reading

    def type(self, line):
        """Types a line into the chat input and presses Enter, as a person would."""
        field = self.driver.find_element(By.ID, "chat-input")
        field.send_keys(line, Keys.ENTER)

    def console_errors(self):
        try:
            return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        except WebDriverException:
            return []

    def close(self):
        try:
            self.driver.quit()
        except Exception:  # noqa: BLE001 - best effort at the end
            pass
        shutil.rmtree(self.profile, ignore_errors=True)


def read_all(windows):
    return [w.read() for w in windows]


def window_ports(base, n):
    """Window n's chromedriver and DevTools ports under --port-base (0: free ones)."""
    if not base:
        return {}
    return {"driver_port": base + 2 + 2 * n, "extra_flags": [f"--remote-debugging-port={base + 3 + 2 * n}"]}
