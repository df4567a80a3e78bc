"""Partitions between the project's own test hosts (Tests/partitions/network.py):
three cowatch nodes and PostgreSQL, each in a network namespace of its own, and
members connecting from this one. Each case is a row of docs/cluster.md's
"What happens when": a node cut off from the other nodes but not from the
database, a node cut off from the database but not from its members, and the
database out of everyone's reach for a minute. Run by `commands/partitions`
(root: it makes namespaces).

COWATCH_BIN names the cowatch binary; COWATCH_PARTITION_MINUTE shortens the
minute (seconds).
"""
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from network import Database, Network, Node  # noqa: E402
from test_cluster import URL, Member, playing, until  # noqa: E402

LEASE, RELAY_TIMEOUT = 1.5, 2
PATIENCE = LEASE * 2 + 2
MINUTE = float(os.environ.get("COWATCH_PARTITION_MINUTE", "60"))


@pytest.fixture
def cluster():
    if os.getuid() != 0:
        pytest.skip("network namespaces need root")
    with Network() as network:
        database = Database(network).start()
        nodes = [Node(network, host, database.url, LEASE, RELAY_TIMEOUT).start() for host in ("n1", "n2", "n3")]
        try:
            yield network, database, nodes
        finally:
            for node in nodes:
                if node.process and node.process.poll() is None:
                    node.process.kill()
                    node.process.wait(10)


def run(coroutine):
    asyncio.run(asyncio.wait_for(coroutine, 180))


async def refused(node, room, name, within):
    """A connection that the node lets in but cannot seat: the close code it ends with."""
    ws = await websockets.connect(f"{node.url}/rooms/{room}?name={name}", subprotocols=["cowatch.v1.json"], open_timeout=10)
    events = []
    try:
        async with asyncio.timeout(within):
            async for frame in ws:
                events.append(json.loads(frame))
    except websockets.ConnectionClosed:
        pass
    assert not [e for e in events if e["type"] == "welcome"], f"{name} was seated on {node.host}"
    return ws.close_code


async def back(member, node, room, within):
    """The member reconnects (with its resume token) until it is seated."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await member.connect(node, room)
        except (OSError, AssertionError, websockets.WebSocketException, asyncio.TimeoutError):
            assert time.monotonic() < deadline, f"{member.name} not back on {node.host} within {within} s"
            await asyncio.sleep(0.3)


async def alice_and_bob(n1, n2, room):
    """alice on n1, first, so that n1 owns the room, and bob on n2, relayed to it;
    the room watching Episode 1."""
    alice, bob = Member("alice"), Member("bob")
    await alice.connect(n1, room)
    await bob.connect(n2, room)
    await alice.send(f"/watch {URL} Episode 1")
    await bob.wait(lambda e: e["type"] == "state" and e["session"])
    return alice, bob


def test_the_owner_cut_off_from_the_other_nodes(cluster):
    network, database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "cut")
        network.cut("n1", "n2")
        network.cut("n1", "n3")
        cut_at = time.monotonic()
        # The owner's own members carry on: it keeps its lease.
        mark = len(alice.events)
        await alice.send("/play")
        await alice.wait(playing, since=mark)
        # A relayed member's link goes silent; its node gives it up.
        code, _ = await bob.wait_closed(timeout=RELAY_TIMEOUT + 3)
        assert code == 4010 and time.monotonic() - cut_at < RELAY_TIMEOUT + 3
        # Its node cannot reach the owner: the member is told to come back later.
        assert await refused(n2, "cut", "bob2", PATIENCE + 5) == 4011
        assert database.query("SELECT node FROM room_leases WHERE room = 'cut'") == "n1"
        network.heal()
        await back(bob, n2, "cut", 20)
        await bob.wait(playing)
        mark = len(bob.events)
        await alice.send("/pause")
        await bob.wait(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused", since=mark)
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_the_owner_cut_off_from_the_database_but_not_its_members(cluster):
    network, database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "nodb")
        alice_id = alice.id
        await alice.send("/play")
        await bob.wait(playing)
        await written(database, "nodb")
        network.cut("n1", "db")
        # Its renewals fail: at the end of its trusted time it steps down.
        assert (await alice.wait_closed(timeout=LEASE + 3))[0] == 4010
        assert (await bob.wait_closed(timeout=LEASE + 3))[0] == 4010
        # A node that reaches the database takes the room, playing where it was.
        await back(bob, n2, "nodb", 15)
        assert database.query("SELECT node FROM room_leases WHERE room = 'nodb'") == "n2"
        await bob.wait(playing)
        # The cut-off node can seat nobody in it.
        assert await refused(n1, "nodb", "carol", PATIENCE + 5) == 4011
        # Its members come back through another node, as themselves.
        await back(alice, n3, "nodb", 15)
        assert alice.id == alice_id
        await alice.wait(playing)
        network.heal()
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_the_database_out_of_reach_for_a_minute(cluster):
    network, database, nodes = cluster
    n1, n2, n3 = nodes

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "minute")
        ids = (alice.id, bob.id)
        await alice.send("/play")
        await bob.wait(playing)
        await written(database, "minute")
        for host in ("n1", "n2", "n3"):
            network.cut(host, "db")
        cut_at = time.monotonic()
        # Every owner steps down at the end of its trusted time.
        assert (await alice.wait_closed(timeout=LEASE + 3))[0] == 4010
        assert (await bob.wait_closed(timeout=LEASE + 3))[0] == 4010
        # While it lasts, no node can seat anyone in a room it must load.
        assert await refused(n2, "minute", "carol", PATIENCE + 5) == 4011
        # The outage's length is the scenario itself, not a guess at how long something takes.
        await asyncio.sleep(max(0, MINUTE - (time.monotonic() - cut_at)))
        network.heal()
        # Back as themselves, the room playing from its anchor.
        await back(alice, n1, "minute", 20)
        await back(bob, n2, "minute", 20)
        assert (alice.id, bob.id) == ids
        await alice.wait(playing)
        await bob.wait(playing)
        for node in nodes:
            await until(lambda: "database: up" in node.health(), f"{node.host} reaching the database again", 15)
        for member in (alice, bob):
            await member.close()

    run(scenario())


async def written(database, room):
    """Waits until the room's playing state is in the database."""
    deadline = time.monotonic() + 10
    while True:
        kept = database.query(f"SELECT snapshot FROM rooms WHERE name = '{room}'")
        if kept and json.loads(kept)["state"]["playback"]["status"] == "playing":
            return
        assert time.monotonic() < deadline, f"{room} not written as playing"
        await asyncio.sleep(0.05)
