"""kill -9 of the PostgreSQL primary under three cowatch nodes with a playing
room: Patroni promotes the standby (Tests/cluster/replicated_postgres.py), the
nodes follow it through libpq's multi-host address, and every member ends in
step. Each failover is measured: how long until the database takes writes
again, how long until the room's writes have all landed, what members noticed
(closes, time away), and what was lost (chat lines the room had shown its
members that the new primary does not have).

COWATCH_DB_FAILOVERS: failovers per configuration (default 2; `commands/bench
database-failover` runs 10). COWATCH_DB_FAILOVER_CONFIGS: which of
`async-20`, `sync-20`, `async-1.5`, `sync-1.5` (replication, then lease
seconds; default `async-1.5`, the default lease). Owners hold their rooms
through the promotion (database-hold-seconds, 90 by default): no member is
closed in any of them, and with synchronous replication nothing shown is lost. COWATCH_DB_FAILOVER_REPORT: a file to write every figure to (JSON).
"""
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from replicated_postgres import ReplicatedPostgres  # noqa: E402
from support.cluster import URL, Member, Node, playing, until  # noqa: E402

FAILOVERS = int(os.environ.get("COWATCH_DB_FAILOVERS", "2"))
CONFIGS = os.environ.get("COWATCH_DB_FAILOVER_CONFIGS", "async-1.5").split(",")
REPORT = os.environ.get("COWATCH_DB_FAILOVER_REPORT")
ROOM = "premiere"
CHAT_EVERY = 0.05
# How long the host goes on chatting after the kill: the part of the outage whose
# lines are counted (a length of the scenario, not a wait for something to happen).
CHAT_AFTER_KILL = 3


class Kept:
    """A member that comes back as the page does: at once, with its resume token,
    to its own node, whatever closed it; what it noticed is counted."""

    def __init__(self, member, node):
        self.member, self.node = member, node
        self.closes = []
        self.away = 0.0
        self.running = True

    async def run(self):
        while self.running:
            if self.member.closed is None:
                await asyncio.sleep(0.02)
                continue
            self.closes.append(self.member.closed[0])
            left = time.monotonic()
            while self.running:
                try:
                    await self.member.connect(self.node, ROOM)
                    break
                except (OSError, AssertionError, websockets.WebSocketException, asyncio.TimeoutError):
                    await asyncio.sleep(0.2)
            self.away += time.monotonic() - left


def chat_markers(database_query, rep):
    """The chat lines of failover `rep` that the database holds."""
    rows = database_query(f"SELECT line FROM chat WHERE room = '{ROOM}'")
    return set(int(i) for i in re.findall(rf"\br{rep}-(\d+)\b", rows))


def quiet(node):
    """The node reaches the database and has nothing left to write."""
    try:
        return node.metric("cowatch_database_up") == 1 and node.metric("cowatch_store_pending_changes") == 0
    except OSError:
        return False


def writable(pg):
    try:
        return pg.query("SELECT pg_is_in_recovery()") == "f"
    except Exception:  # noqa: BLE001 - any failure means not yet
        return False


@pytest.mark.parametrize("config", CONFIGS)
def test_the_primary_killed_under_a_playing_room(config):
    replication, lease = config.split("-")
    pg = ReplicatedPostgres(synchronous=replication == "sync").start()
    nodes = []
    try:
        nodes = [Node(n, pg.url, lease=float(lease)).start() for n in (1, 2, 3)]
        figures = asyncio.run(asyncio.wait_for(scenario(pg, nodes), 60 + 90 * FAILOVERS))
        for figure in figures:
            assert figure["members_closed"] == 0, f"{config}: members were closed by a promotion: {figure}"
            if replication == "sync":
                assert figure["lost"] == 0, f"{config}: lines shown were lost: {figure}"
    finally:
        for node in nodes:
            node.stop()
        pg.stop()
    if REPORT:
        with open(REPORT, "a") as out:
            out.write(json.dumps({"config": config, "failovers": figures}) + "\n")


async def scenario(pg, nodes):
    members = [Member(f"{kind}{n}") for n in (1, 2, 3) for kind in ("a", "b")]
    placed = [nodes[i // 2] for i in range(len(members))]
    for member, node in zip(members, placed):
        await member.connect(node, ROOM)
    host = members[0]
    await host.send(f"/watch {URL} Premiere")
    await host.send("/play")
    for member in members:
        await member.wait(playing)
    kept = [Kept(m, n) for m, n in zip(members, placed)]
    keepers = [asyncio.ensure_future(k.run()) for k in kept]
    figures = []
    for rep in range(FAILOVERS):
        before = [(len(k.closes), k.away) for k in kept]
        sent = asyncio.Event()
        stop = asyncio.Event()

        async def chatter():
            i = 0
            while not stop.is_set():
                if host.closed is None:
                    try:
                        await host.send(f"r{rep}-{i}")
                    except websockets.ConnectionClosed:
                        pass
                    i += 1
                if i == int(0.5 / CHAT_EVERY):
                    sent.set()
                await asyncio.sleep(CHAT_EVERY)
        talking = asyncio.ensure_future(chatter())
        await sent.wait()
        killed = pg.kill_primary()
        killed_at = time.monotonic()
        await asyncio.sleep(CHAT_AFTER_KILL)
        stop.set()
        await talking
        await until(lambda: writable(pg), "primary taking writes", 60)
        writes_back = time.monotonic() - killed_at
        await until(lambda: all(quiet(n) for n in nodes), "every node's writes landed", 90)
        landed = time.monotonic() - killed_at
        # Everyone back and in step: a seek reaches all six with one seq.
        await until(lambda: all(m.closed is None and m.ws is not None for m in members), "every member connected", 60)
        marks = [len(m.events) for m in members]
        position = 600 + 60 * rep
        for _ in range(100):
            if host.closed is None:
                try:
                    await host.send(f"/seek {position}")
                    break
                except websockets.ConnectionClosed:
                    pass
            await asyncio.sleep(0.1)
        seen = [await m.wait(lambda e: e["type"] == "state" and e["playback"]["position"] == position
                             and e["playback"]["status"] == "playing", timeout=20, since=mark)
                for m, mark in zip(members, marks)]
        assert len({s["seq"] for s in seen}) == 1, f"failover {rep}: members see different states: {seen}"
        # What the room showed its members (any member's view) against what the database kept.
        shown = set()
        for member in members[1:]:
            for event in member.events:
                if event["type"] == "chat":
                    match = re.fullmatch(rf"r{rep}-(\d+)", event.get("text", ""))
                    if match:
                        shown.add(int(match.group(1)))
        kept_lines = chat_markers(pg.query, rep)
        lost = sorted(shown - kept_lines)
        noticed = [(len(k.closes) - b[0], round(k.away - b[1], 3)) for k, b in zip(kept, before)]
        figure = {"failover": rep, "killed": killed, "writes_back_s": round(writes_back, 3),
                  "landed_s": round(landed, 3), "shown": len(shown), "lost": len(lost),
                  "closes": sum(c for c, _ in noticed), "longest_away_s": max(a for _, a in noticed),
                  "members_closed": sum(1 for c, _ in noticed if c)}
        figures.append(figure)
        print(json.dumps(figure), flush=True)
        pg.rejoin(killed)
    for k in kept:
        k.running = False
    await asyncio.gather(*keepers)
    for member in members:
        await member.close()
    return figures
