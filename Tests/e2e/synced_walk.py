"""The synced walk: three windows on one room through every transition of the
player (/watch, coordinated starts, pause, seek, rate, the page's keys and the
controls of one player, catch-up, stalls under both policies, a reconnect, a
media error, a late joiner), each measured; and the room's screenshot."""

import time

from browser_window import By, Keys, Window, read_all, window_ports
from measure import CI_BOUNDS, spread_ms
from page_js import LOG_JS
from report import log
from timecode_media import FAIL_COOKIE


class SyncedWalk:
    """The walk, for a RoomRun with three windows (self.windows: A, B, C)."""

    def stall_policy(self, window, policy):
        """`/policy stall <policy>` typed in `window`, taken by every window, and
        the room playing settled again."""
        window.type(f"/policy stall {policy}")
        self.wait(lambda rs: all(r["policy"]["stall"] == policy for r in rs), 5, "the policy")
        self.settled("playing")

    def run(self):
        a, b, c = self.windows
        room_url = self.server.url(f"/rooms/{self.room}")
        media_url = self.media.url("timecode.mp4")

        log("transitions (spread = max - min of the videos' positions at one instant):")
        # /watch: everyone loads the item, paused at 0.
        a.type(f"/watch {media_url} Test pattern, part 1")
        self.measure("/watch (paused at 0)", "paused")

        # A coordinated start.
        self.measure_started(a, "/play", "/play (coordinated start)")
        # Time on purpose: how far apart the videos drift while playing on.
        time.sleep(1.5)
        self.measure("playing 1.5 s later", "playing")

        def at_rate(rate):
            return lambda rs: all(r["playback"]["rate"] == rate for r in rs)
        self.measure_typed(a, "/pause", "/pause", "paused", self.everyone("paused"), "the pause")
        self.measure_typed(b, "/seek 30", "/seek 30 (paused)", "paused",
                           lambda rs: all(r["playback"]["position"] == 30 for r in rs), "the seek")
        self.measure_started(c, "/play", "/play from 30")
        self.measure_typed(a, "/rate 1.5", "/rate 1.5 while playing", "playing", at_rate(1.5), "the rate change")
        self.measure_started(b, "/seek 60", "/seek 60 while playing (1.5x)")
        self.measure_typed(a, "/rate 1", "/rate 1 while playing", "playing", at_rate(1), "the rate change")

        self.own_controls()

        # "What happened?": C replays the last 10 s at 2x and comes back level.
        self.settled("playing")
        c.type("/catchup")
        # The catch-up's mode shows as soon as its event arrives, a moment before the
        # video has taken its seek back: wait for the replay itself, behind the group.
        readings = self.wait(lambda rs: rs[2]["mode"] == "catchup" and not rs[2]["joining"]
                             and not rs[2]["paused"] and rs[0]["position"] - rs[2]["position"] > 1,
                             10, "the catch-up to begin, behind the group")
        behind = readings[0]["position"] - readings[2]["position"]
        self.check(readings[2]["videoRate"] > 1.8 and 1 < behind < 10.5,
                   f"the catching-up window replays at 2x behind the group ({behind:.2f} s behind, "
                   f"rate {readings[2]['videoRate']})")
        self.check(readings[0]["mode"] == "playing" and readings[1]["mode"] == "playing",
                   "the others keep playing during one window's catch-up")
        self.wait(lambda rs: rs[2]["mode"] == "playing" and not (rs[2]["me"] or {}).get("suspensions"),
                  15, "the catch-up to end")
        self.measure("/catchup (C, after it ends)", "playing")

        # A stall under `stall continue`: B alone is suspended; the group goes on.
        self.stall_policy(a, "continue")
        seq = self.seq()
        b.js("window.cowatch.sync.simulateStall(2500)")
        readings = self.wait(lambda rs: "stallRecovery" in ((rs[1]["me"] or {}).get("suspensions") or []),
                             5, "B's stallRecovery suspension")
        self.check(all(r["playback"]["status"] == "playing" for r in readings),
                   "under stall continue the group keeps playing while B stalls")
        self.measure("stall continue: A, C during B's stall", "playing", windows=[a, c])
        self.check(self.seq() == seq, "B's stall did not move the group (no new state)")
        self.wait(lambda rs: not (rs[1]["me"] or {}).get("suspensions") and rs[1]["mode"] == "playing",
                  15, "B to recover")
        self.measure("stall continue: B back in", "playing")

        # A stall under `stall wait`: the group waits for C, then starts together.
        self.stall_policy(a, "wait")
        stalled_at = time.monotonic()
        c.js("window.cowatch.sync.simulateStall(2000)")
        self.wait(self.everyone("waiting"), 5, "the group to wait for C")
        readings = self.wait(lambda rs: all(r["paused"] and not r["seeking"] for r in rs), 5,
                             "every window to hold while the group waits")
        held = spread_ms(readings, False, 1)
        log(f"  stall wait: the group waits for C (held positions within {held:.1f} ms)")
        start = self.start_spread(after_seq=self.seq())
        waited = time.monotonic() - stalled_at
        self.check(waited > 1.5, f"under stall wait the group waited for the staller ({waited:.1f} s)")
        self.measure("stall wait: restart together", "playing", start=start)
        a.type("/policy stall continue")
        self.wait(lambda rs: all(r["policy"]["stall"] == "continue" for r in rs), 5, "the policy")

        # Reconnect: the page comes back by itself as the same member.
        me_before = b.read()["meId"]
        b.js("""window.e2eBanners = [];
                window.cowatch.connection.addEventListener('status', () => {
                  const banner = document.getElementById('connection');
                  if (!banner.hidden) window.e2eBanners.push(document.getElementById('connection-text').textContent);
                });
                window.cowatch.connection.socket.close(4000, 'e2e: dropped');""")
        self.wait(lambda rs: rs[1]["connection"] == "open" and rs[1]["banner"] is None, 10, "B to reconnect")
        banners = b.js("return window.e2eBanners")
        self.check(any("Reconnecting" in text for text in banners), f"B showed that it was reconnecting: {banners}")
        log(f"  reconnect: B showed \"{banners[0]}\"")
        self.check(b.read()["meId"] == me_before, "B reconnected as the same member (resume token)")
        self.measure("after B reconnects", "playing")

        # A media error in one window: C is suspended, the group goes on.
        c.js(f"document.cookie = '{FAIL_COOKIE}=1; path=/'")
        a.type(f"/watch {self.media.url('timecode.mp4?fail=1')} Test pattern, part 2")
        readings = self.wait(lambda rs: rs[2]["mode"] == "error"
                             and "coordinatedPlaybackNotPossible" in ((rs[2]["me"] or {}).get("suspensions") or []),
                             10, "C's media error and suspension")
        self.check(readings[2]["overlay"] and "cannot be played" in readings[2]["overlay"],
                   f"C shows a clear message: {readings[2]['overlay']!r}")
        self.measure("item 2 loaded (A, B; C failed)", "paused", windows=[a, b])
        seq = self.seq()
        a.type("/play")
        start = self.start_spread(windows=[a, b], after_seq=seq)
        self.measure("/play without C (A, B)", "playing", windows=[a, b], start=start)
        c.js(f"document.cookie = '{FAIL_COOKIE}=; path=/; max-age=0'")
        c.driver.find_element(By.ID, "overlay-action").click()  # "Try again"
        self.wait(lambda rs: not (rs[2]["me"] or {}).get("suspensions") and rs[2]["mode"] == "playing",
                  15, "C to load the item and rejoin")
        self.measure("C retries and rejoins", "playing")

        # /help is readable in the log: the page's own short list, the commands a
        # host uses among them (docs/browser.md).
        a.type("/help")
        count = "return document.querySelectorAll('#log .reply-body .command').length"
        self.poll_js(a, count + " >= 10", 5)
        commands = a.js(count)
        self.check(10 <= commands <= 20, f"/help is shown as a short list of commands ({commands} lines)")

        # A late joiner whose browser refuses autoplay: it shows the button,
        # a click lets it join at group time.
        late = Window("late", autoplay=False, **window_ports(self.args.port_base, 3))
        self.windows.append(late)
        late.open(f"{room_url}?name=late")
        readings = self.wait(lambda rs: rs[3]["mode"] == "blocked"
                             and "userActionRequired" in ((rs[3]["me"] or {}).get("suspensions") or []),
                             15, "the late joiner's autoplay refusal")
        self.check(readings[3]["overlayButton"] and "join playback" in readings[3]["overlayButton"].lower(),
                   f"the late joiner shows a click-to-join button: {readings[3]['overlayButton']!r}")
        self.check(all(r["mode"] == "playing" for r in readings[:3]), "the late joiner did not disturb the group")
        late.driver.find_element(By.ID, "overlay-action").click()
        self.wait(lambda rs: not (rs[3]["me"] or {}).get("suspensions") and rs[3]["mode"] == "playing",
                  15, "the late joiner to join after the click")
        self.measure("late joiner (after its click)", "playing")

        # A queue and a little conversation for the screenshot.
        a.type(f"/queue {self.media.url('timecode.mp4?part=3')} Test pattern, part 3")
        b.type("the timecodes match on my screen")
        c.type("/me waves from the second window")
        late.type("hi all, joined late")
        self.wait_js(a, """const text = document.body.innerText;
                           return ['Test pattern, part 3', 'the timecodes match on my screen',
                                   'waves from the second window', 'hi all, joined late'].every(t => text.includes(t));""",
                     10, "the queue and the conversation on A's page")
        self.screenshot(a)

    def own_controls(self):
        """The controls that act on one player only, and the page's keys, while the
        group plays: spaces, m and f typed in the chat are text; m and the volume
        mute this player only; space pauses and plays the room (a coordinated
        start); f puts A's screen in fullscreen, where the right arrow moves the
        group +5 s (a coordinated start) and the videos must stay together; f again
        leaves fullscreen."""
        a, b, c = self.windows
        sound = """const v = document.getElementById('video');
                   return {muted: v.muted, volume: v.volume, text: document.getElementById('mute').textContent};"""
        self.settled("playing")
        started = time.monotonic()

        # Typed in the chat, spaces, m and f are text: the line arrives whole, and
        # nothing was paused, muted or made fullscreen (a /pause sent before the
        # line would have reached B before it).
        seq = self.seq()
        alices = LOG_JS + "const alices = lines.filter((l) => l.kind === 'chat' && l.who === 'alice');"
        count = b.js(alices + "return alices.length;")
        line = "this film is so sharp"  # one m, one f, four spaces
        a.type(line)
        said = self.wait_js(b, alices + f"return alices.length > {count} && alices[alices.length - 1].text;", 5,
                            "alice's chat line in bob's log")
        quiet = a.js("""const v = document.getElementById('video');
                        return {muted: v.muted, fullscreen: !!document.fullscreenElement};""")
        readings = read_all(self.windows)
        self.check(said == f"alice {line}" and self.seq() == seq and all(not r["paused"] for r in readings)
                   and quiet == {"muted": False, "fullscreen": False},
                   f"spaces, m and f typed in the chat are text, not shortcuts ({said!r}; seq {seq} -> {self.seq()}; "
                   f"A {quiet})")

        # m mutes and unmutes this player only; the volume slider at 0 shows Unmute.
        self.press(a, "m")
        muted = [w.js(sound) for w in self.windows]
        self.press(a, "m")
        unmuted = a.js(sound)
        self.check(muted[0]["muted"] and muted[0]["text"] == "Unmute" and not muted[1]["muted"]
                   and not muted[2]["muted"] and not unmuted["muted"] and unmuted["text"] == "Mute",
                   f"m mutes this player only and m again unmutes it: A {muted[0]}, then {unmuted}; "
                   f"B, C muted: {muted[1]['muted']}, {muted[2]['muted']}")
        a.driver.find_element(By.ID, "volume").send_keys(Keys.HOME)  # the slider to 0, by its own key
        silent = a.js(sound)
        a.driver.find_element(By.ID, "mute").click()
        restored = a.js(sound)
        self.check(silent["volume"] == 0 and silent["text"] == "Unmute" and not restored["muted"]
                   and restored["volume"] > 0 and restored["text"] == "Mute",
                   f"the volume slider at 0 shows Unmute, and Unmute brings the sound back: {silent}, then {restored}")

        # Space pauses the room, and plays it again with a coordinated start.
        seq = self.seq()
        self.press(a, " ")
        readings = self.wait(lambda rs: len({r["seq"] for r in rs}) == 1 and rs[0]["seq"] > seq, 5,
                             "the state after space")
        if readings[0]["playback"]["status"] == "paused":
            readings = self.settled("paused")
        self.check(readings[0]["playback"]["status"] == "paused" and all(r["paused"] for r in readings),
                   f"space pauses the room: {readings[0]['playback']['status']}, videos paused "
                   f"{[r['paused'] for r in readings]}")
        seq = self.seq()
        self.press(a, " ")
        start = self.start_spread(after_seq=seq)
        readings = self.settled("playing")
        self.check(all(r["playback"]["status"] == "playing" and not r["paused"] for r in readings),
                   "space plays the room again, every window started together"
                   + (f" (start spread {start:.1f} ms)" if start is not None else ""))

        # f: A's screen (the video and its overlay) in fullscreen, asked for by a
        # real key press. Should this Chromium refuse it, the check says so.
        a.js("""window.e2eFullscreenRefused = false;
                document.addEventListener('fullscreenerror', () => { window.e2eFullscreenRefused = true; });""")
        self.press(a, "f")
        fullscreen = self.poll_js(a, """const e = document.fullscreenElement;
            if (window.e2eFullscreenRefused) return {refused: true};
            const v = document.getElementById('video').getBoundingClientRect();
            return e && {screen: e === document.querySelector('.screen'), width: innerWidth, height: innerHeight,
                         video: [Math.round(v.width), Math.round(v.height)]};""", 3)
        self.check(fullscreen and fullscreen.get("screen")
                   and fullscreen["video"] == [fullscreen["width"], fullscreen["height"]],
                   "f puts A's screen (the video and its overlay) in fullscreen, the video filling it: "
                   + ("this Chromium refused fullscreen (fullscreenerror)" if fullscreen and fullscreen.get("refused")
                      else f"{fullscreen}"))

        # While A is fullscreen, the right arrow moves the group +5 s: the group
        # waits at the new position and starts together; then it must keep together.
        self.settled("playing")
        before = read_all(self.windows)
        old = before[0]["playback"]
        seq = self.seq()
        pressed = time.time() * 1000
        self.press(a, Keys.ARROW_RIGHT)
        start = self.start_spread(after_seq=seq)
        row = self.measure("right arrow +5 s, A fullscreen", "playing", start=start)
        after = read_all(self.windows)
        new = after[0]["playback"]
        expected = old["position"] + old["rate"] * (pressed - old["at"]) / 1000 + 5
        waited = (new["at"] - pressed) / 1000  # held at the new position until the start
        jumps = [y["position"] - x["position"] - new["rate"] * (y["t"] - x["t"]) / 1000 for x, y in zip(before, after)]
        self.check(abs(new["position"] - expected) < 0.3 and all(abs(j - (5 - waited)) < 0.3 for j in jumps),
                   f"the right arrow moves the group +5 s: state at {new['position']:.2f} s (expected {expected:.2f}); "
                   f"each video {', '.join(f'{j:+.2f}' for j in jumps)} s beyond playing on "
                   f"(expected {5 - waited:+.2f}: +5 less {waited:.2f} s held for the start)")
        still = a.js("return document.fullscreenElement === document.querySelector('.screen');")
        self.check(still and row["median"] < CI_BOUNDS["median"],
                   f"with A fullscreen the group keeps together: median settled spread {row['median']:.1f} ms "
                   f"(CI bound < {CI_BOUNDS['median']:g} ms), A still fullscreen: {still}")

        self.press(a, "f")
        left = self.poll_js(a, "return !document.fullscreenElement;", 3)
        self.check(left, "f again leaves fullscreen")
        log(f"  own controls: keys typed in the chat are text; m and the volume mute A only; space paused and "
            f"played; A fullscreen at {fullscreen['width']}x{fullscreen['height']}; the right arrow moved +5 s "
            f"({time.monotonic() - started:.1f} s with the measurement)")

    def screenshot(self, window):
        """The room page with a playing frame, for the README; its video area must
        not be blank."""
        window.js("document.getElementById('chat-input').blur()")
        window.repainted()
        data = window.driver.get_screenshot_as_png()
        mean, variance, colours, _, _ = window.region(data, "video")
        self.check(variance > 200 and colours > 8,
                   f"the screenshot's video area is not blank (luma variance {variance:.0f}, {colours} colours)")
        self.screenshot_png = data
        self.keep_screenshot(data, self.args.screenshot, f"screenshot: {self.args.screenshot} "
                             f"(video area: luma variance {variance:.0f}, {colours} colours)")
