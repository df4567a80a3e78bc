"""The Vimeo player (static/players/vimeo.js) against the Vimeo stand-in
(vimeo_standin.py), in headless Chromium, without a Cowatch server: a page of
one origin loads the adapter, which loads the SDK from the stand-in's origin
and drives its player in an iframe of that origin by postMessage.

- a video loads (`loadedmetadata`), plays, reports its duration, and the
  adapter's position agrees with the video's own in the iframe (the position
  known only by round trips, sync/remote-position.js) to within the precision
  its capabilities declare;
- pause holds; a seek lands where asked and says `seeked`;
- a rate change in 0.5..2 is taken; an account without speed controls refuses
  it, and the adapter turns into a rate-1, seek-corrected player and says so;
- a video that is not found, not embeddable or private is told in words;
- a browser that refuses autoplay makes play() reject with NotAllowedError.

Run: python3 -m pytest -q Tests/e2e/test_vimeo_player.py
Skipped, with the reason, when chromium, chromedriver or selenium are missing.
"""
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from support.browser import QUIET, Chromium, browser_missing  # noqa: E402
from support.harness import wait_until  # noqa: E402
from support.media_server import TestPage  # noqa: E402
from vimeo_standin import NOT_EMBEDDABLE_ID, NOT_FOUND_ID, PRIVATE_ID, VimeoStandIn  # noqa: E402

REPO = HERE.parent.parent
VIDEO_ID = "76979871"
RATE_LOCKED_ID = "1000000"

PAGE = """<!doctype html><meta charset="utf-8"><title>Vimeo adapter</title>
<div id="player"></div>
<script type="module">
import { VimeoPlayer } from '/static/players/vimeo.js';
const events = [];
let player = null;
window.harness = {
  events,
  load(apiUrl, id) {
    player?.destroy();
    events.length = 0;
    player = new VimeoPlayer(document.getElementById('player'), { apiUrl });
    for (const type of ['loadedmetadata', 'canplay', 'seeked', 'playing', 'waiting', 'ended', 'error', 'progress', 'capabilitieschange']) {
      player.addEventListener(type, () => events.push(type));
    }
    player.load({ source: { kind: 'vimeo', id }, identifier: 'vimeo:' + id, live: false, duration: null });
  },
  read() {
    const t0 = performance.timeOrigin + performance.now();
    const r = player.read();
    const t1 = performance.timeOrigin + performance.now();
    return { ...r, t: (t0 + t1) / 2, capabilities: player.capabilities, notice: player.notice, events: [...events] };
  },
  // The SDK's player exists and its iframe said ready.
  ready() { return player.player ? player.player.ready().then(() => true, () => false) : false; },
  play() { return player.play().then(() => 'ok', (e) => e.name); },
  pause() { player.pause(); },
  seek(t) { player.seek(t); },
  setRate(r) { player.setRate(r); },
};
</script>"""

FRAME_READ = """
const v = document.querySelector('video');
const t0 = performance.timeOrigin + performance.now();
const p = v.currentTime;
const t1 = performance.timeOrigin + performance.now();
return { t: (t0 + t1) / 2, position: p, paused: v.paused, rate: v.playbackRate };
"""


pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")


def make_media():
    from timecode_media import make_media as generate  # the e2e's timecode video, cached per machine
    return generate(REPO / ".build-e2e" / "e2e-media")


@pytest.fixture(scope="module")
def servers():
    media = make_media()
    with TestPage(PAGE) as page, VimeoStandIn(media, rate_locked_ids={RATE_LOCKED_ID}) as standin:
        yield page.url(""), standin


def browser(autoplay=True):
    return Chromium(QUIET, profile_prefix="cowatch-vimeo-", profile_dir=REPO / ".build-e2e", autoplay=autoplay,
                    script_timeout=10)


@pytest.fixture
def driver():
    b = browser()
    yield b.driver
    b.close()


def open_player(driver, servers, video_id):
    page, standin = servers
    driver.get(page)
    wait_until(lambda: driver.execute_script("return !!window.harness"), 10, "the page")
    driver.execute_script("window.harness.load(arguments[0], arguments[1])", standin.api_url, video_id)


def read(driver):
    return driver.execute_script("return window.harness.read()")


def call(driver, script, *args):
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; Promise.resolve(" + script + ").then(done, (e) => done('threw ' + e));", *args)


def frame_read(driver):
    driver.switch_to.frame(driver.find_element("css selector", "#player iframe"))
    try:
        return driver.execute_script(FRAME_READ)
    finally:
        driver.switch_to.default_content()


def test_plays_pauses_seeks_and_knows_where_it_is(driver, servers):
    open_player(driver, servers, VIDEO_ID)
    r = wait_until(lambda: (lambda r: r if "loadedmetadata" in r["events"] and r["duration"] > 0 else None)(read(driver)), 20, "loadedmetadata")
    assert abs(r["duration"] - 240) < 1, r["duration"]
    assert r["readyState"] == 4 and r["paused"] and r["error"] is None
    assert r["capabilities"]["rates"] == "continuous" and r["capabilities"]["rateRange"] == [0.5, 2]

    assert call(driver, "window.harness.play()") == "ok"
    wait_until(lambda: read(driver)["currentTime"] > 1.0, 10, "playing")
    # The adapter's position against the video's own (read inside the iframe), both at one instant.
    precision = r["capabilities"]["positionPrecision"]
    errors = []
    for _ in range(15):
        a = read(driver)
        f = frame_read(driver)
        errors.append(abs((a["currentTime"] + (f["t"] - a["t"]) / 1000) - f["position"]))
        time.sleep(0.07)
    errors.sort()
    print(f"adapter position against the iframe's video: median {errors[len(errors) // 2] * 1000:.2f} ms, largest {errors[-1] * 1000:.2f} ms ({len(errors)} readings)")
    assert errors[len(errors) // 2] <= precision, f"median position error {errors[len(errors) // 2] * 1000:.1f} ms > {precision * 1000} ms: {errors}"

    driver.execute_script("window.harness.pause()")
    wait_until(lambda: frame_read(driver)["paused"], 5, "paused in the iframe")
    held = frame_read(driver)["position"]
    time.sleep(0.3)  # a pause holds: the position after a while is the same
    assert frame_read(driver)["position"] == held
    wait_until(lambda: abs(read(driver)["currentTime"] - held) < 0.002, 3, "the adapter at the held position")

    driver.execute_script("window.harness.seek(120.5)")
    wait_until(lambda: read(driver)["events"].count("seeked") >= 1, 10, "seeked")
    r = read(driver)
    assert abs(r["currentTime"] - 120.5) < 0.05 and not r["seeking"], r
    assert abs(frame_read(driver)["position"] - 120.5) < 0.05


def test_a_stall_is_waiting_then_playing(driver, servers):
    open_player(driver, servers, VIDEO_ID)
    wait_until(lambda: "loadedmetadata" in read(driver)["events"], 20, "loadedmetadata")
    assert call(driver, "window.harness.play()") == "ok"
    wait_until(lambda: read(driver)["currentTime"] > 0.5, 10, "playing")
    driver.execute_script(
        "const f = document.querySelector('#player iframe');"
        "f.contentWindow.postMessage({ standin: 'stall', ms: 4000 }, new URL(f.src).origin);")
    r = wait_until(lambda: (lambda r: r if "waiting" in r["events"] else None)(read(driver)), 5, "waiting")
    assert r["readyState"] == 2 and not r["paused"]
    frozen = read(driver)["currentTime"]
    # Stalled, the position stands still: every reading while the adapter still
    # says it has no data (readyState 2) is the frozen one, however slowly the
    # readings come; the stall is long enough for several of them.
    stalled = []
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        now = read(driver)
        if now["readyState"] == 2:
            stalled.append(now["currentTime"])
        time.sleep(0.05)
    assert len(stalled) >= 2, f"the stall ended within half a second of its 4 s: {stalled}"
    assert all(abs(t - frozen) < 0.01 for t in stalled), stalled
    wait_until(lambda: read(driver)["readyState"] == 4 and read(driver)["currentTime"] > frozen + 0.2, 15, "playing again")


def test_rate_taken_in_range(driver, servers):
    open_player(driver, servers, VIDEO_ID)
    wait_until(lambda: "loadedmetadata" in read(driver)["events"], 20, "loadedmetadata")
    driver.execute_script("window.harness.setRate(1.5)")
    wait_until(lambda: frame_read(driver)["rate"] == 1.5, 5, "rate 1.5 in the iframe")
    assert read(driver)["playbackRate"] == 1.5
    driver.execute_script("window.harness.setRate(3)")  # outside Vimeo's range: refused, the rate stays
    wait_until(lambda: read(driver)["playbackRate"] == 1.5, 5, "the rate back at 1.5")
    assert read(driver)["capabilities"]["rates"] == "continuous"


def test_a_refused_rate_makes_a_seek_corrected_player(driver, servers):
    open_player(driver, servers, RATE_LOCKED_ID)
    wait_until(lambda: "loadedmetadata" in read(driver)["events"], 20, "loadedmetadata")
    driver.execute_script("window.harness.setRate(1.02)")
    r = wait_until(lambda: (lambda r: r if "capabilitieschange" in r["events"] else None)(read(driver)), 5, "capabilitieschange")
    assert r["capabilities"]["rates"] == [1] and r["playbackRate"] == 1
    assert "speed" in r["notice"] and "seeking" in r["notice"]
    assert frame_read(driver)["rate"] == 1


@pytest.mark.parametrize("video_id,words", [
    (NOT_FOUND_ID, "Vimeo has no video 404"),
    (NOT_EMBEDDABLE_ID, "does not allow it to be played on other sites"),
])
def test_a_video_that_cannot_be_embedded_is_told_in_words(driver, servers, video_id, words):
    open_player(driver, servers, video_id)
    r = wait_until(lambda: (lambda r: r if r["error"] else None)(read(driver)), 10, "an error")
    assert words in r["error"]["words"] and "error" in r["events"]


def test_a_private_video_is_told_in_words(driver, servers):
    open_player(driver, servers, PRIVATE_ID)
    wait_until(lambda: call(driver, "window.harness.ready()") is True, 10, "the player")
    assert call(driver, "window.harness.play()") == "PrivacyError"
    r = read(driver)
    assert "private" in r["error"]["words"]


def test_refused_autoplay_rejects_play_with_not_allowed(servers):
    b = browser(autoplay=False)
    d = b.driver
    try:
        open_player(d, servers, VIDEO_ID)
        wait_until(lambda: "loadedmetadata" in read(d)["events"], 20, "loadedmetadata")
        assert call(d, "window.harness.play()") == "NotAllowedError"
        assert read(d)["paused"]
    finally:
        b.close()
