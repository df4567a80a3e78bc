"""Three real `cowatch serve --store postgres` nodes on one real PostgreSQL
(a throwaway server started here, Tests/cluster/scratch_postgres.sh), seen by
independent WebSocket clients written against docs/protocol.md: members of one
room spread over the nodes, kill -9 of the room's owner mid-playback, a paused
owner that must step down, a drained node, and the database restarted under the
cluster. How it works: docs/cluster.md.

COWATCH_BIN names the cowatch binary.
"""
import asyncio
import json
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.cluster import LEASE, RELAY_TIMEOUT, URL, Member, Node, alice_and_bob, members_on, playing, postgres, psql, until  # noqa: E402,F401  (postgres: a fixture)
from support.harness import Serve, free_port, wait_until  # noqa: E402


@pytest.fixture
def cluster(postgres):  # noqa: F811
    database = postgres.fresh()
    nodes = [Node(n, database).start() for n in (1, 2, 3)]
    yield database, nodes
    for node in nodes:
        node.stop()


def run(coroutine):
    asyncio.run(asyncio.wait_for(coroutine, 120))


def lease_row(database, room):
    return psql(database, f"SELECT node, epoch FROM room_leases WHERE room = '{room}'")


def kept_snapshot(database, room):
    """The room's snapshot as the database holds it, or None."""
    kept = psql(database, f"SELECT snapshot FROM rooms WHERE name = '{room}'")
    return json.loads(kept) if kept else None


async def written(database, room, predicate, what):
    """Waits until the room's snapshot in the database satisfies `predicate`."""
    return await until(lambda: (lambda kept: kept if kept and predicate(kept) else None)(kept_snapshot(database, room)),
                       f"snapshot of {room} with {what}")


async def lease_lapsed(database, room):
    """Waits until the room's lease has run out in the database's own clock."""
    await until(lambda: psql(database, f"SELECT expires_at < now() FROM room_leases WHERE room = '{room}'") == "t",
                f"lapsed lease of {room}", timeout=LEASE * 4)


def test_members_on_three_nodes_see_the_same_states(cluster):
    database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob, carol = await members_on("spread", n1, n2, n3)
        assert lease_row(database, "spread") == "n1|1"
        assert "relayed members: 1" in n2.health() and "relayed members: 1" in n3.health()
        assert "rooms owned: 1" in n1.health()
        steps = [(alice, f"/watch {URL} Episode 1", lambda e: e["type"] == "state" and e["session"]),
                 (alice, "/play", playing),
                 (bob, "/pause", lambda e: e["type"] == "state" and e["playback"]["status"] == "paused"),
                 (carol, "/seek 1:00", lambda e: e["type"] == "state" and e["playback"]["position"] == 60),
                 (bob, "/rate 1.5", lambda e: e["type"] == "state" and e["playback"]["rate"] == 1.5),
                 (carol, "/queue https://example.org/episode-2.mp4 Episode 2", lambda e: e["type"] == "state" and e["queue"]),
                 (alice, "/next", lambda e: e["type"] == "state" and e["session"]
                  and e["session"]["activity"]["title"] == "Episode 2")]
        for sender, line, seen in steps:
            marks = [len(m.events) for m in (alice, bob, carol)]
            await sender.send(line)
            for member, mark in zip((alice, bob, carol), marks):
                await member.wait(seen, since=mark)
        await carol.send("hello from node 3")
        for member in (alice, bob):
            await member.wait(lambda e: e["type"] == "chat" and e["text"] == "hello from node 3")
        # The same sequence of states, seq by seq, at every member.
        start = max(m.states()[0]["seq"] for m in (alice, bob, carol))
        seen = [[(s["seq"], s["playback"]["status"], s["playback"]["position"], s["playback"]["rate"],
                  s["playback"]["item"]) for s in m.states() if s["seq"] >= start] for m in (alice, bob, carol)]
        assert seen[0] == seen[1] == seen[2] and len(seen[0]) >= len(steps)
        seqs = [s[0] for s in seen[0]]
        assert seqs == sorted(set(seqs))
        # A resume token from node 2 works on node 3: the same member comes back.
        bob_id = bob.id
        await bob.go_away()
        await bob.connect(n3, "spread")
        assert bob.id == bob_id
        for member in (alice, carol, bob):
            await member.close()

    run(scenario())


def test_a_node_relays_all_its_members_of_a_room_on_one_link(cluster):
    """Five members on two relaying nodes: one shared link per node to the owner,
    the same states with the same seq everywhere, replies, kicks and bans to one
    person, a text member's lines, and the link closed once its last member leaves."""
    database, (n1, n2, n3) = cluster

    async def scenario():
        host = Member("host")
        await host.connect(n1, "shared")
        on2 = [Member(f"two{i}") for i in range(3)]
        on3 = [Member(f"three{i}") for i in range(2)]
        for member in on2:
            await member.connect(n2, "shared")
        for member in on3:
            await member.connect(n3, "shared")
        reader = await websockets.connect(f"{n2.url}/rooms/shared?name=reader", subprotocols=["cowatch.v1.text"],
                                          open_timeout=10)
        lines = []

        async def read_lines():
            try:
                async for frame in reader:
                    lines.extend(frame.splitlines())
            except websockets.ConnectionClosed:
                pass
        reading = asyncio.ensure_future(read_lines())
        assert lease_row(database, "shared") == "n1|1"
        assert n1.metric("cowatch_cluster_relay_links_in") == 2
        assert n1.metric("cowatch_cluster_carried_members") == 6
        assert n2.metric("cowatch_cluster_relay_links_out") == 1 and n3.metric("cowatch_cluster_relay_links_out") == 1
        everyone = [host] + on2 + on3
        marks = [len(m.events) for m in everyone]
        await host.send(f"/watch {URL} Episode 1")
        await host.send("/play")
        await on2[1].wait(playing, since=marks[2])
        await on2[1].send("/seek 2:00")
        for member, mark in zip(everyone, marks):
            await member.wait(lambda e: e["type"] == "state" and e["playback"]["position"] == 120
                              and e["playback"]["status"] == "playing", since=mark)
        await until(lambda: any("2:00" in line for line in lines), "the text member's line for the seek")
        start = max(m.states()[0]["seq"] for m in everyone)
        seen = [[(s["seq"], s["playback"]["status"], s["playback"]["position"]) for s in m.states() if s["seq"] >= start]
                for m in everyone]
        assert all(view == seen[0] for view in seen) and len(seen[0]) >= 3
        # A reply goes to the one who asked, on its node, not to the others there.
        marks = [len(m.events) for m in everyone]
        await on2[0].send("/rate 99")
        await on2[0].wait(lambda e: e["type"] == "error", since=marks[1])
        await host.send("say something")
        for member, mark in zip(everyone, marks):
            await member.wait(lambda e: e["type"] == "chat" and e["text"] == "say something", since=mark)
        assert not [e for m, mark in zip(everyone, marks) if m is not on2[0] for e in m.events[mark:] if e["type"] == "error"]
        # A kick and a ban reach one person each; the rest of their node's members carry on.
        await host.send(f"/kick {on2[2].name} enough")
        assert (await on2[2].wait_closed())[0] == 4001
        await host.send(f"/ban {on3[1].name} 5 spoilers")
        assert (await on3[1].wait_closed())[0] == 4001
        marks = [len(m.events) for m in everyone]
        await host.send("/pause")
        for member, mark in zip([host, on2[0], on2[1], on3[0]], [marks[0], marks[1], marks[2], marks[4]]):
            await member.wait(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused", since=mark)
        assert on2[0].closed is None and on2[1].closed is None and on3[0].closed is None
        # The banned member's next attempt, through its node's link, is refused in words.
        again = await websockets.connect(f"{n3.url}/rooms/shared?name={on3[1].name}&resume={on3[1].resume}",
                                         subprotocols=["cowatch.v1.json"], open_timeout=10)
        told = []
        with pytest.raises(websockets.ConnectionClosedError):
            while True:
                told.append(json.loads(await again.recv()))
        assert [e["code"] for e in told if e["type"] == "error"] == ["banned"] and again.close_code == 4003
        # Once the last member on node 3 leaves, its link is closed.
        await on3[0].close()
        await until(lambda: n3.metric("cowatch_cluster_relay_links_out") == 0, "node 3's link closed")
        await until(lambda: n1.metric("cowatch_cluster_relay_links_in") == 1, "the owner holding node 2's link alone")
        await reader.close()
        await reading
        for member in [host, on2[0], on2[1]]:
            await member.close()

    run(scenario())


def test_kill_9_of_the_owner_mid_playback(cluster):
    database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob, carol = await members_on("failover", n1, n2, n3)
        await alice.send(f"/watch {URL} Episode 1")
        await carol.wait(lambda e: e["type"] == "state" and e["session"])
        await alice.send("/seek 0:30")
        await alice.send("/play")
        before = await carol.wait(lambda e: playing(e) and e["playback"]["position"] == 30)
        # What the survivors take over is what the owner's store wrote.
        await written(database, "failover", lambda kept: kept["state"]["seq"] >= before["seq"], f"seq {before['seq']}")
        ids = {m.name: m.id for m in (alice, bob, carol)}
        killed = time.monotonic()
        n1.signal(signal.SIGKILL)
        for member in (bob, carol):
            code, _ = await member.wait_closed(timeout=5)
            assert code == 4010
        # Everyone comes back, to the nodes still alive, with their resume tokens.
        await bob.connect(n2, "failover")
        answered = time.monotonic() - killed
        await carol.connect(n3, "failover")
        await alice.connect(n2, "failover")
        state = [e for e in bob.events if e["type"] == "state"][-1]
        print(f"\nfailover: the room answered {answered:.2f} s after kill -9 of its owner")
        assert answered < 2 * LEASE + 1, f"the room answered only {answered:.2f} s after the kill"
        assert {m.name: m.id for m in (alice, bob, carol)} == ids
        assert state["playback"]["status"] == "playing" and state["seq"] > before["seq"]
        welcome = [e for e in alice.events if e["type"] == "welcome"][-1]
        assert welcome["you"]["role"] == "host" and welcome["you"]["owner"] is True
        assert lease_row(database, "failover") in ("n2|2", "n3|2")
        # The room goes on: a command from one survivor reaches the others.
        mark = len(carol.events)
        await alice.send("/pause")
        await carol.wait(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused", since=mark)
        for member in (alice, bob, carol):
            await member.close()

    run(scenario())


def test_a_paused_owner_steps_down_and_writes_nothing(cluster):
    database, (n1, n2, n3) = cluster

    async def scenario():
        alice, dave = Member("alice"), Member("dave")
        await alice.connect(n1, "paused")
        await alice.send(f"/watch {URL} Episode 1")
        await alice.send("/play")
        await alice.wait(playing)
        await written(database, "paused", lambda kept: kept["state"]["playback"]["status"] == "playing", "playing")
        n1.signal(signal.SIGSTOP)
        await lease_lapsed(database, "paused")
        await dave.connect(n3, "paused")  # node 3 takes the lapsed lease
        assert lease_row(database, "paused") == "n3|2"
        kept = psql(database, "SELECT snapshot FROM rooms WHERE name = 'paused'")
        await alice.send("/pause")  # waits in node 1's socket while it is stopped
        n1.signal(signal.SIGCONT)
        code, _ = await alice.wait_closed(timeout=5)
        assert code == 4010
        # Nothing marks a write that never comes: node 1's store writes at once
        # (no batching delay), so a write it made for /pause would land well
        # within this second. The time is the window the check looks through.
        await asyncio.sleep(1)
        assert psql(database, "SELECT snapshot FROM rooms WHERE name = 'paused'") == kept
        assert json.loads(kept)["state"]["playback"]["status"] == "playing"
        assert lease_row(database, "paused") == "n3|2"
        assert n1.metric("cowatch_cluster_rooms_lost_total") >= 1
        assert not any(e["type"] == "state" and e["playback"]["status"] == "paused" for e in dave.events)
        await dave.close()

    run(scenario())


def test_a_paused_owners_relayed_members_are_told_to_reconnect(cluster):
    """A paused owner says nothing on its links, and sends no reset either: the
    relaying node pings its link, gives it up after relay-timeout (2 s here), and
    its member comes back on the node that has taken the room since."""
    database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "silent")
        assert n2.metric("cowatch_cluster_relay_links_out") == 1
        await written(database, "silent", lambda kept: kept["state"]["session"] is not None, "the session")
        n1.signal(signal.SIGSTOP)
        try:
            code, _ = await bob.wait_closed(timeout=RELAY_TIMEOUT + 3)
            assert code == 4010
            await lease_lapsed(database, "silent")
            welcome = await bob.connect(n2, "silent")
            assert welcome["you"]["name"] == "bob"
            assert lease_row(database, "silent").startswith("n2|") or lease_row(database, "silent").startswith("n3|")
        finally:
            n1.signal(signal.SIGCONT)
        await bob.close()

    run(scenario())


def test_sigterm_hands_rooms_over(cluster):
    database, (n1, n2, n3) = cluster

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "drained", play=True)
        ids = (alice.id, bob.id)
        n1.signal(signal.SIGTERM)
        for member in (alice, bob):
            code, reason = await member.wait_closed(timeout=5)
            assert code == 4010, (member.name, code, reason)
        started = time.monotonic()
        await alice.connect(n2, "drained")
        await bob.connect(n2, "drained")
        took = time.monotonic() - started
        print(f"\ndrain: both members back on node 2 in {took:.2f} s")
        assert took < 1.5
        assert (alice.id, bob.id) == ids
        assert [e for e in bob.events if e["type"] == "state"][-1]["playback"]["status"] == "playing"
        assert n1.process.wait(timeout=10) == 0
        assert lease_row(database, "drained") == "n2|2"
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_the_database_restarted_under_a_running_cluster(cluster, postgres):
    database, (n1, n2, n3) = cluster

    async def comeback(member, node, room, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            try:
                return await member.connect(node, room)
            except (OSError, websockets.InvalidStatus, websockets.ConnectionClosed, AssertionError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.3)

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "restart")
        ids = (alice.id, bob.id)
        lost = n1.metric("cowatch_cluster_rooms_lost_total")
        postgres.restart()
        # Node 1 owns the room: once it has renewed its leases with the database
        # back, it has kept the room or given it up (for good, if the lease
        # lapsed while the database was away).
        renewals = n1.metric("cowatch_cluster_lease_renewals_total")
        await until(lambda: n1.metric("cowatch_cluster_lease_renewals_total") > renewals,
                    "lease renewal by node 1 after the restart", timeout=20)
        if n1.metric("cowatch_cluster_rooms_lost_total") > lost:
            # Members whose room was given up come back (bob through node 2's relay).
            for member, node in ((alice, n1), (bob, n2)):
                await member.wait_closed()
                await comeback(member, node, "restart")
        assert (alice.id, bob.id) == ids
        mark = len(bob.events)
        await alice.send("/play")
        await bob.wait(playing, since=mark, timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            kept = psql(database, "SELECT snapshot FROM rooms WHERE name = 'restart'")
            if json.loads(kept)["state"]["playback"]["status"] == "playing":
                break
            await asyncio.sleep(0.2)
        assert json.loads(kept)["state"]["playback"]["status"] == "playing", "writes did not resume"
        # Every node reaches the database again, each on its own next renewal (a
        # node that owns nothing may not have renewed since the restart yet).
        for node in (n1, n2, n3):
            await until(lambda node=node: "database: up" in node.health(),
                        f"node {node.number} reaching the database again", timeout=20)
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_the_database_away_rooms_are_held_then_go_on(cluster, postgres):
    """PostgreSQL stopped under a playing room, then started again: the owner holds
    the room (docs/cluster.md, "Riding out the database's absence"): nobody is
    closed, what would change it is refused in words, a newcomer is told to come
    back, and once the database is back the room goes on under the same lease,
    with what it showed as the database went written."""
    database, (n1, n2, n3) = cluster
    said = "said as the database went"

    async def scenario():
        alice, bob = await alice_and_bob(n1, n2, "held", play=True)
        await written(database, "held", lambda kept: kept["state"]["playback"]["status"] == "playing", "playing")
        lease = lease_row(database, "held")
        postgres.stop()
        try:
            await alice.send(said)
            await bob.wait(lambda e: e["type"] == "chat" and e["text"] == said)
            for member in (alice, bob):
                await member.wait(lambda e: e["type"] == "notice" and e["text"].startswith("The database is out of reach"),
                                  timeout=LEASE + 5)
            mark = len(alice.events)
            await alice.send("/pause")
            error = await alice.wait(lambda e: e["type"] == "error", since=mark)
            assert error["code"] == "unavailable", error
            await alice.send("/who")
            await alice.wait(lambda e: e["type"] == "reply", since=mark)
            ws = await websockets.connect(f"{n1.url}/rooms/held?name=carol", subprotocols=["cowatch.v1.json"])
            told = []
            try:
                async for frame in ws:
                    told.append(json.loads(frame))
            except websockets.ConnectionClosed:
                pass
            assert [e["code"] for e in told if e["type"] == "error"] == ["unavailable"] and ws.close_code == 4011
            assert alice.closed is None and bob.closed is None
        finally:
            postgres.resume()
        for member in (alice, bob):
            await member.wait(lambda e: e["type"] == "notice" and e["text"].startswith("The database is back"), timeout=20)
        assert lease_row(database, "held") == lease
        mark = len(bob.events)
        await alice.send("/pause")
        await bob.wait(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused", since=mark)
        await until(lambda: said in psql(database, "SELECT line FROM chat WHERE room = 'held'"),
                    "the line shown as the database went, written", timeout=15)
        assert alice.closed is None and bob.closed is None
        for member in (alice, bob):
            await member.close()

    run(scenario())


def test_relay_links_need_the_clusters_secret(cluster):
    """A process on a node's own host (a trusted proxy's address) that opens a
    relay link without proof of the cluster's secret, or with another secret's, is
    refused before anything is relayed; the nodes' own links carry on."""
    _, (n1, n2, _) = cluster

    async def scenario():
        alice = Member("alice")
        await alice.connect(n1, "guarded")
        bob = Member("bob")
        await bob.connect(n2, "guarded")
        await alice.wait(lambda e: e["type"] == "participant" and e["participant"]["name"] == "bob")
        for headers in ({}, {"X-Cowatch-Relay-Proof": "v1 n9 0 0123456789abcdef " + "0" * 64}):
            with pytest.raises(websockets.InvalidStatus) as refused:
                await websockets.connect(f"{n1.url}/relay/guarded", subprotocols=["cowatch.relay.v1"],
                                         additional_headers=headers, open_timeout=5)
            assert refused.value.response.status_code == 403
            assert b"relay link refused" in refused.value.response.body
        assert n1.metric("cowatch_cluster_relay_links_in") == 1
        await bob.send("still relayed")
        await alice.wait(lambda e: e["type"] == "chat" and e["text"] == "still relayed")
        await alice.close()
        await bob.close()
    run(scenario())


def test_a_node_without_the_secret_says_it_cannot_relay(postgres):
    database = postgres.fresh()
    port = free_port()
    node = Serve("--store", "postgres", "--database-url", database, "--node-id", "lonely",
                 "--advertise-url", f"ws://127.0.0.1:{port}", "--media-check", "false",
                 "--data-dir", tempfile.mkdtemp(prefix="cowatch-lonely-"), port=port)
    try:
        wait_until(lambda: "this cluster node cannot relay" in node.log(), 10, "the start-up message")
        health = urllib.request.urlopen(f"http://127.0.0.1:{node.port}/healthz", timeout=2).read().decode()
        assert "relaying: impossible: no cluster-secret-file" in health, health
    finally:
        node.stop()
