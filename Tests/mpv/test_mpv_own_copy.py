"""Own copies in real, headless mpv (`cowatch watch ROOM FILE`): one mpv shares
its file (`--share`: the room is told its hash, size and length, not its name),
a second plays a renamed copy of it, and a third holds another file: it is told
why in words, says `/have no`, stays in the room not watching and is not waited
for, while the two with the file start, pause and play together.

COWATCH_BIN names the cowatch binary; COWATCH_MPV_PORT + 4 is this test's port
(or a free one).
"""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.bot import Bot  # noqa: E402
from support.harness import Serve  # noqa: E402
from support.harness import wait_until as wait_for  # noqa: E402
from support.mpv import BIN, Watcher, chosen_port, make_clip, work_folder  # noqa: E402

SECONDS = 20
FPS = 30


def clip(path, frequency):
    make_clip(path, SECONDS, fps=FPS, size="160x90", frequency=frequency, crf=32, faststart=False)


@pytest.fixture(scope="module")
def room():
    work = work_folder("cowatch-mpv-own-")
    original = os.path.join(work, "Holiday.2024.mp4")
    clip(original, 440)
    renamed = os.path.join(work, "my copy.mp4")
    shutil.copyfile(original, renamed)
    other = os.path.join(work, "another.mp4")
    clip(other, 660)

    port = chosen_port(4)
    server = Serve("--store", "memory", port=port, binary=BIN, log_path=os.path.join(work, "server.log"))
    room_url = f"http://127.0.0.1:{port}/rooms/own-mpv"
    bot = Bot(f"ws://127.0.0.1:{port}/rooms/own-mpv?name=bot")
    wait_for(lambda: bot.current(), 5, "the bot's first state")
    context = {"bot": bot, "room_url": room_url, "work": work, "files": (original, renamed, other), "watchers": {}}
    yield context
    for watcher in context["watchers"].values():
        watcher.stop()
    bot.close()
    server.stop(timeout=10)


def test_a_shared_file_and_a_renamed_copy_play_together_and_another_file_is_not_waited_for(room):
    bot = room["bot"]
    original, renamed, other = room["files"]
    watchers = room["watchers"]

    watchers["sharer"] = Watcher(room["work"], room["room_url"], "sharer", original, "--verbose", "--share", "--title", "Holiday")
    state = wait_for(lambda: (s := bot.current()) and (s.get("session") or {}).get("activity", {}).get("source", {}).get("kind") == "own" and s,
                     20, "the file shared from mpv")
    activity = state["session"]["activity"]
    assert activity["title"] == "Holiday"
    assert activity["url"] is None
    assert activity["identifier"] == f"own:{activity['source']['hash']}:{os.path.getsize(original)}"
    assert abs(activity["duration"] - SECONDS) < 0.5
    assert "Holiday.2024" not in json.dumps(bot.events), "the file's name reached the room"
    wait_for(lambda: (bot.participant("sharer") or {}).get("copy") is True, 10, "the sharer counted as having it")

    watchers["renamed"] = Watcher(room["work"], room["room_url"], "renamed", renamed, "--verbose")
    wait_for(lambda: (bot.participant("renamed") or {}).get("copy") is True, 15, "the renamed copy matched")

    watchers["other"] = Watcher(room["work"], room["room_url"], "other", other, "--verbose")
    wait_for(lambda: (bot.participant("other") or {}).get("copy") is False, 15, "the other file refused")
    wait_for(lambda: "your file is not the room's: another file" in watchers["other"].output(), 5,
             "the other file's viewer told why")
    assert bot.participant("other")["joined"], "the member without the file left the room"

    # The room starts with the two who have the file; the third is not waited for.
    seq = bot.current()["seq"]
    bot.send("/play")
    state = wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["status"] == "playing" and s, 15,
                     "the room to start without the member who lacks the file")
    for name in ("sharer", "renamed"):
        ipc = watchers[name].ipc
        wait_for(lambda: ipc.get("pause") is False and (ipc.get("time-pos") or 0) > 0.5, 10, f"{name}'s mpv playing")
    assert watchers["other"].ipc.get("idle-active") is True, "the other file was played"

    # Both players follow the room together: each within a frame and a little of the timeline.
    def apart():
        readings = []
        for name in ("sharer", "renamed"):
            position, at_ms, rtt = watchers[name].ipc.position()
            if position is None or rtt > 4:
                return None
            readings.append(position - (at_ms - state["playback"]["at"]) / 1000 * state["playback"]["rate"])
        return abs(readings[0] - readings[1])
    wait_for(lambda: (gap := apart()) is not None and gap < 0.05, 10, "the two copies within 50 ms of each other")

    seq = bot.current()["seq"]
    bot.send("/pause")
    state = wait_for(lambda: (s := bot.current())["seq"] > seq and s["playback"]["status"] == "paused" and s, 5, "paused")
    for name in ("sharer", "renamed"):
        ipc = watchers[name].ipc
        wait_for(lambda: ipc.get("pause") is True
                 and abs((ipc.get("time-pos") or -1) - state["playback"]["position"]) <= 1 / FPS + 0.001, 5,
                 f"{name}'s mpv held where the room paused")
    assert not [e for e in bot.errors() if e["code"] != "stale-report"]
