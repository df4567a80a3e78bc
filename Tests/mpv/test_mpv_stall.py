"""A stall in a real mpv: the media server holds the clip back past a point
(a gate) until the test opens it, so that mpv's cache runs dry while it plays
(`paused-for-cache`). Under `/policy stall continue` mpv is suspended alone
(`stallRecovery`) while the room plays on, and back with it once the data
comes; under `stall wait` the room waits for it (`waiting`, cause `stall`) and
starts again together.

COWATCH_BIN names the cowatch binary; COWATCH_MPV_PORT + 2 and + 3 are this
test's ports (or free ones).
"""
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.bot import Bot  # noqa: E402
from support.harness import Serve  # noqa: E402
from support.harness import wait_until as wait_for  # noqa: E402
from support.media_server import MediaServer, RangeRequestHandler  # noqa: E402
from support.mpv import BIN, Watcher, chosen_port, make_clip, settled_errors, work_folder  # noqa: E402

MEDIA_SECONDS = 60

# The gate: bytes past this fraction of a file are held until it opens. Playing
# from START_AT, mpv runs dry a few seconds later.
GATE_FRACTION = 0.3
START_AT = 12


class Gates:
    def __init__(self):
        self.events = {}
        self.offsets = {}

    def add(self, name, offset):
        self.events[name] = threading.Event()
        self.offsets[name] = offset

    def open(self, name):
        self.events[name].set()


GATES = Gates()


class GatedHandler(RangeRequestHandler):
    """Serves as the range server does, but holds the bytes of a gated file past
    its gate until the test opens it."""

    def send_head(self):
        self._name = os.path.basename(self.path)
        self._start = 0
        header = self.headers.get("Range")
        if header and header.startswith("bytes=") and header[6:].split("-")[0].isdigit():
            self._start = int(header[6:].split("-")[0])
        return super().send_head()

    def copyfile(self, source, outputfile):
        gate = GATES.events.get(self._name)
        offset = self._start
        remaining = self._remaining
        while remaining > 0:
            if gate is not None and not gate.is_set() and offset >= GATES.offsets[self._name]:
                gate.wait(60)
            limit = GATES.offsets.get(self._name, 1 << 62) - offset if gate is not None and not gate.is_set() else 1 << 62
            chunk = source.read(max(1, min(64 * 1024, remaining, limit if limit > 0 else 64 * 1024)))
            if not chunk:
                break
            try:
                outputfile.write(chunk)
                outputfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return
            offset += len(chunk)
            remaining -= len(chunk)


@pytest.fixture(scope="module")
def stall_setup():
    work = work_folder("cowatch-mpv-stall-")
    clip = os.path.join(work, "clip.mp4")
    make_clip(clip, MEDIA_SECONDS)
    for name in ("continue.mp4", "wait.mp4"):
        shutil.copy(clip, os.path.join(work, name))
        GATES.add(name, int(os.path.getsize(clip) * GATE_FRACTION))
    port, media_port = chosen_port(2), chosen_port(3)
    with MediaServer(work, GatedHandler, port=media_port), \
            Serve("--store", "memory", "--media-check-private", "true", port=port, binary=BIN,
                  log_path=os.path.join(work, "server.log")):
        room_url = f"ws://127.0.0.1:{port}/rooms/mpv-stall"
        bot = Bot(room_url + "?name=bot")
        wait_for(lambda: bot.current(), 5, "the bot's first state")
        watcher = Watcher(work, room_url, "mpv", "--verbose")
        context = {"bot": bot, "ipc": watcher.ipc, "media_port": media_port, "figures": {}, "errors": []}
        yield context
        for name in GATES.events:
            GATES.open(name)
        bot.close()
        watcher.stop()
    if os.environ.get("MPV_TEST_DEBUG"):
        print(watcher.output())


def mpv_member(bot):
    member = bot.participant("mpv")
    return member if member and member["player"] else None


def start_playing_gated(ctx, name):
    bot = ctx["bot"]
    seq = bot.current()["seq"]
    bot.send(f"/watch http://127.0.0.1:{ctx['media_port']}/{name} {name}")
    wait_for(lambda: (s := bot.current())["seq"] > seq and s["session"]["activity"]["url"].endswith(name), 5, "the item")
    wait_for(lambda: bot.current()["session"]["activity"]["duration"], 15, "mpv's /duration")
    seq = bot.current()["seq"]
    bot.send(f"/seek {START_AT}")
    wait_for(lambda: bot.current()["seq"] > seq, 5, "the seek")
    seq = bot.current()["seq"]
    bot.send("/play")
    wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["status"] == "playing", 10, "the room playing")


def test_a_stall_under_stall_continue_suspends_mpv_alone(stall_setup):
    ctx, bot = stall_setup, stall_setup["bot"]
    start_playing_gated(ctx, "continue.mp4")
    member = wait_for(lambda: (m := mpv_member(bot)) and "stallRecovery" in m["suspensions"] and m, 30,
                      "mpv's /buffering (its cache run dry) to suspend it")
    assert member["suspensions"] == ["stallRecovery"]
    assert bot.current()["playback"]["status"] == "playing"  # the room plays on without it
    GATES.open("continue.mp4")
    wait_for(lambda: (m := mpv_member(bot)) and m["suspensions"] == [], 15, "mpv back with the room")
    settled_errors(ctx, "after a stall, stall continue")


def test_a_stall_under_stall_wait_holds_the_room(stall_setup):
    ctx, bot = stall_setup, stall_setup["bot"]
    seq = bot.current()["seq"]
    bot.send("/policy stall wait")
    wait_for(lambda: bot.current()["seq"] > seq and bot.current()["policy"]["stall"] == "wait", 5, "the policy")
    start_playing_gated(ctx, "wait.mp4")
    state = wait_for(lambda: (s := bot.current())["playback"]["status"] == "waiting" and s["playback"]["cause"] == "stall" and s,
                     30, "the room waiting for mpv (its cache run dry)")
    GATES.open("wait.mp4")
    wait_for(lambda: (s := bot.current())["seq"] > state["seq"] and s["playback"]["status"] == "playing", 15,
             "the room playing again with mpv")
    settled_errors(ctx, "after a stall, stall wait")
