"""A Syncplay client on a cluster (docs/cluster.md, docs/syncplay.md): two
`cowatch serve --store postgres` nodes on a throwaway PostgreSQL, the room owned
by node 1, Debian's Syncplay client on node 2's syncplay-port. Its member is
relayed to the owner like any member: listed, waited for at the owner's start,
the host's play and pause reaching its player. Then node 1 leaves (SIGTERM): the room moves to node 2,
and the Syncplay member is rejoined there as the same member, without its
client noticing (no Error, no reconnect of its own).

COWATCH_BIN names the binary. Skipped, with the reason, when syncplay, mpv,
ffmpeg or PostgreSQL's server are missing.
"""
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.bot import Bot  # noqa: E402
from support.cluster import URL, Node, postgres  # noqa: E402,F401  (postgres: a fixture)
from support.harness import free_port, wait_until  # noqa: E402
from support.mpv import make_clip, work_folder  # noqa: E402
from support.syncplay import SyncplayClient, syncplay_missing  # noqa: E402

WAIT_S = 25


def wait(check, what, timeout=WAIT_S):
    return wait_until(check, timeout, what, interval=0.05)


def playback(bot):
    return (bot.current() or {}).get("playback") or {}


def test_a_syncplay_member_is_relayed_and_moves_with_its_room(postgres):  # noqa: F811
    missing = syncplay_missing() or (None if shutil.which("ffmpeg") else "ffmpeg is missing")
    if missing:
        pytest.skip(missing)
    work = Path(work_folder("cowatch-syncplay-cluster-"))
    clip = work / "episode-1.mp4"
    make_clip(str(clip), 30, fps=30, size="160x90", crf=32)
    database = postgres.fresh()
    port = free_port()
    first = Node(1, database, folder=str(work)).start()
    second = Node(2, database, folder=str(work), extra=("--syncplay-port", str(port))).start()
    closers = [first.stop, second.stop]
    try:
        room = "syncplay-on-a-cluster"
        host = Bot(f"{first.url}/rooms/{room}?name=host")
        closers.append(host.close)
        wait(lambda: host.current(), "the host's first state")

        # sam comes before the link is shared: Syncplay's client plays its own
        # file then, and keeps it when a link of a domain it does not trust comes.
        sam = SyncplayClient(str(work), f"127.0.0.1:{port}", "sam", room, str(clip))
        closers.append(sam.stop)
        wait(lambda: (p := host.participant("sam")) and p["connected"] and p["player"], "sam, on node 2, in node 1's room")
        assert second.metric("cowatch_cluster_relayed_members") >= 1, "sam's member is not relayed by node 2"
        sam_id = host.participant("sam")["id"]
        wait(lambda: sam.get("duration"), "sam's mpv loaded its file")
        host.send(f"/watch {URL} Episode 1")
        wait(lambda: playback(host).get("item") == URL, "the item shared")
        # The owner's start waits for sam's /ready, relayed, and reaches its mpv.
        host.send("/play")
        wait(lambda: playback(host).get("status") == "playing", "the room plays")
        wait(lambda: sam.get("pause") is False, "the host's play reached sam's mpv")
        assert not (host.participant("sam") or {}).get("suspensions"), "sam was not waited for"
        host.send("/pause")
        wait(lambda: sam.get("pause") is True, "the host's pause reached sam's mpv")

        # Node 1 leaves: the room moves to node 2, and sam's member with it.
        first.signal(signal.SIGTERM)
        assert first.process.wait(timeout=20) == 0, first.log_tail()
        watcher = Bot(f"{second.url}/rooms/{room}?name=watcher")
        closers.append(watcher.close)
        wait(lambda: (p := watcher.participant("sam")) and p["connected"] and p["id"] == sam_id,
             "sam, the same member, in the room on node 2")
        wait(lambda: playback(watcher).get("status") == "paused", "the room as it was")
        watcher.send("/play")
        wait(lambda: sam.get("pause") is False, "the room's play reached sam's mpv on node 2")
        assert not any('"Error"' in line for line in sam.received()), sam.log_tail()
        assert sum('"Hello"' in line for line in sam.sent()) == 1, "sam's client had to come back by itself"
    finally:
        for close in reversed(closers):
            try:
                close()
            except Exception:  # noqa: BLE001 - the rest still closes
                pass
        if not os.environ.get("COWATCH_KEEP_WORK"):
            shutil.rmtree(work, ignore_errors=True)
