"""Partitions between the project's own test hosts (Tests/partitions/network.py):
three cowatch nodes and PostgreSQL, each in a network namespace of its own, and
members connecting from this one. Each case is a row of docs/cluster.md's
"What happens when": a node cut off from the other nodes but not from the
database, a node cut off from the database but not from its members (holding its
room, and having it taken by a node that reaches the database), and the database
out of everyone's reach for a minute. Run by `commands/partitions`
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from network import Database, Network, Node  # noqa: E402
from support.cluster import Member, alice_and_bob, playing, until  # noqa: E402

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


def lease_row(database, room):
    """The room's lease as `node|epoch`."""
    return database.query(f"SELECT node || '|' || epoch FROM room_leases WHERE room = '{room}'")


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


def test_the_owner_cut_off_from_the_database_holds_its_room_until_it_is_back(cluster):
    """Nobody else needs the room meanwhile (behind nginx its members all reach
    its owner): the owner holds it unchanged, and it goes on as it was."""
    network, database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "nodb", play=True)
        await written(database, "nodb")
        lease = lease_row(database, "nodb")
        network.cut("n1", "db")
        # Shown while the lease is still trusted; written once the database is back.
        await alice.send("said as the database went")
        await bob.wait(chat("said as the database went"))
        await held(alice, bob)
        await refused_change(alice)
        # Nobody new is seated in a held room: they are told to come back shortly.
        assert await refused(n1, "nodb", "carol", 10) == 4011
        network.heal()
        await resumed(alice, bob)
        assert lease_row(database, "nodb") == lease
        await paused_by(alice, bob)
        await kept_line(database, "nodb", "said as the database went")
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_a_held_room_taken_by_a_node_that_reaches_the_database(cluster):
    """A member reaches a node that has the database: that node takes the lapsed
    lease. The held owner learns it at its first renewal and gives the room up;
    its members come back as themselves to the room as the database kept it."""
    network, database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "nodb")
        alice_id = alice.id
        await alice.send("/play")
        await bob.wait(playing)
        await written(database, "nodb")
        network.cut("n1", "db")
        await held(alice, bob)
        carol = Member("carol")
        await back(carol, n3, "nodb", 15)
        assert database.query("SELECT node FROM room_leases WHERE room = 'nodb'") == "n3"
        await carol.wait(playing)
        # The cut-off node can seat nobody in the room meanwhile.
        assert await refused(n1, "nodb", "dave", 10) == 4011
        assert alice.closed is None and bob.closed is None
        network.heal()
        assert (await alice.wait_closed(timeout=15))[0] == 4010
        assert (await bob.wait_closed(timeout=15))[0] == 4010
        await back(alice, n3, "nodb", 15)
        await back(bob, n2, "nodb", 15)
        assert alice.id == alice_id
        await alice.wait(playing)
        await paused_by(carol, bob)
        for member in (alice, bob, carol):
            await member.close()

    run(scenario())


def test_the_database_out_of_reach_for_a_minute(cluster):
    network, database, nodes = cluster
    n1, n2, n3 = nodes

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "minute", play=True)
        await written(database, "minute")
        lease = lease_row(database, "minute")
        marks = [len(alice.events), len(bob.events)]
        for host in ("n1", "n2", "n3"):
            network.cut(host, "db")
        cut_at = time.monotonic()
        await alice.send("said as the database went")
        await bob.wait(chat("said as the database went"))
        # The owner holds the room: playing on, nothing changing, nobody dropped.
        await held(alice, bob)
        await refused_change(alice)
        # A newcomer is told to come back shortly: by the owner (the room is held)
        # and by a node that would have to load the room.
        assert await refused(n1, "minute", "carol", 10) == 4011
        assert await refused(n3, "minute", "dave", PATIENCE + 5) == 4011
        # The outage's length is the scenario itself, not a guess at how long something takes.
        await asyncio.sleep(max(0, MINUTE - (time.monotonic() - cut_at)))
        assert alice.closed is None and bob.closed is None
        assert not [e for m, mark in zip((alice, bob), marks) for e in m.events[mark:] if e["type"] == "state"]
        network.heal()
        await resumed(alice, bob)
        assert lease_row(database, "minute") == lease
        await paused_by(alice, bob)
        await kept_line(database, "minute", "said as the database went")
        for node in nodes:
            await until(lambda: "database: up" in node.health(), f"{node.host} reaching the database again", 15)
        for member in (alice, bob):
            await member.close()

    run(scenario())


HELD = "The database is out of reach"
BACK = "The database is back"


def chat(text):
    return lambda e: e["type"] == "chat" and e.get("text") == text


def notice(prefix):
    return lambda e: e["type"] == "notice" and e["text"].startswith(prefix)


async def held(*members):
    """Each member is told the room is held once the owner's trust lapses."""
    for member in members:
        await member.wait(notice(HELD), timeout=LEASE + 3)


async def resumed(*members):
    for member in members:
        await member.wait(notice(BACK), timeout=20)


async def refused_change(member):
    """A line that would change a held room is refused in words; one that
    changes nothing is still answered."""
    mark = len(member.events)
    await member.send("/pause")
    error = await member.wait(lambda e: e["type"] == "error", since=mark)
    assert error["code"] == "unavailable", error
    mark = len(member.events)
    await member.send("/who")
    await member.wait(lambda e: e["type"] == "reply", since=mark)
    assert member.closed is None


async def paused_by(member, other):
    mark = len(other.events)
    await member.send("/pause")
    await other.wait(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused", since=mark, timeout=10)


async def kept_line(database, room, text):
    """The chat line is in the database: written once it was back."""
    deadline = time.monotonic() + 15
    while text not in database.query(f"SELECT line FROM chat WHERE room = '{room}'"):
        assert time.monotonic() < deadline, f"{text!r} never written"
        await asyncio.sleep(0.1)


async def written(database, room):
    """Waits until the room's playing state is in the database."""
    deadline = time.monotonic() + 10
    while True:
        kept = database.query(f"SELECT snapshot FROM rooms WHERE name = '{room}'")
        if kept and json.loads(kept)["state"]["playback"]["status"] == "playing":
            return
        assert time.monotonic() < deadline, f"{room} not written as playing"
        await asyncio.sleep(0.05)
