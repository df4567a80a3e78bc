"""One headless Chromium with one Selenium driver session: the only place a
harness under Tests/ starts a browser (Debian's chromium and chromedriver;
commands/setup --browser installs them and selenium)."""
import os
import shutil
import tempfile

try:
    from selenium import webdriver
    SELENIUM = None
except ImportError as error:  # commands/setup --browser installs it
    webdriver = None
    SELENIUM = f"selenium is missing ({error})"

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Selenium Manager would fetch a driver when it finds none: never let it.
os.environ["SE_OFFLINE"] = "true"

# Without a screen, a GPU, a sandbox or much /dev/shm, as on a test machine.
HEADLESS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
# The same, silent and without the first run's questions.
QUIET = HEADLESS + ["--mute-audio", "--no-first-run"]
# A window a person would have: a desktop's size, no extensions.
WINDOW = QUIET + ["--no-default-browser-check", "--disable-extensions", "--window-size=1280,900"]
# Flags that keep a hidden page's timers and renderer at full speed; chromedriver
# adds the first two of its own accord.
UNTHROTTLED = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
               "--disable-backgrounding-occluded-windows"]


def browser_missing():
    """Why no browser can be started here, or None."""
    if SELENIUM:
        return SELENIUM
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (commands/setup --browser installs chromium and chromium-driver)"
    return None


class Chromium:
    """One Chromium with `flags`, in a fresh profile (named `profile_prefix`,
    under `profile_dir` when given) removed on close, driven by `driver`.

    `autoplay`: True lets pages start media without a click, False asks for
    one, None leaves Chromium's default. `console`: keep the page's console for
    `console_errors`. `throttled`: let a hidden page's timers be throttled, as
    in a browser a person uses (chromedriver turns that off unless told).
    `prefs`: the profile's settings. `binary`: another Chromium (a wrapper);
    `driver_port`: chromedriver's port (0: a free one)."""

    def __init__(self, flags=WINDOW, profile_prefix="cowatch-chromium-", profile_dir=None, autoplay=None,
                 console=False, throttled=False, prefs=None, binary=None, driver_port=0, script_timeout=None):
        options = webdriver.ChromeOptions()
        options.binary_location = binary or CHROMIUM
        if prefs:
            options.add_experimental_option("prefs", prefs)
        if throttled:
            options.add_experimental_option("excludeSwitches", [f[2:] for f in UNTHROTTLED])
        if profile_dir:
            os.makedirs(profile_dir, exist_ok=True)
        self.profile = tempfile.mkdtemp(prefix=profile_prefix, dir=profile_dir)
        flags = [f for f in flags if not (throttled and f in UNTHROTTLED)]
        if autoplay is not None:
            flags.append("--autoplay-policy=" + ("no-user-gesture-required" if autoplay
                                                 else "document-user-activation-required"))
        for flag in flags + [f"--user-data-dir={self.profile}"]:
            options.add_argument(flag)
        if console:
            options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(
            executable_path=CHROMEDRIVER, port=driver_port))
        if script_timeout:
            self.driver.set_script_timeout(script_timeout)

    def console_messages(self, level=None):
        """The page's console since the last call (all of it, or one level's)."""
        from selenium.common.exceptions import WebDriverException
        try:
            return [e["message"] for e in self.driver.get_log("browser") if level is None or e["level"] == level]
        except WebDriverException:
            return []

    def close(self):
        try:
            self.driver.quit()
        except Exception:  # noqa: BLE001 - best effort at the end
            pass
        shutil.rmtree(self.profile, ignore_errors=True)
