"""The operator's controls in a cluster (docs/cluster.md, "The operator's
controls in a cluster"), on three real nodes on one real PostgreSQL, through
`cowatch admin` as an operator runs it:

- an address banned on one node is refused by the other two within a second,
  and its connection open on another node is closed (4003);
- a drain is the node's own: the drained node refuses new rooms, the others
  take them, and the ban is still in force everywhere and still in the
  database (the drain no longer writes the operator's state back whole);
- a lift on a third node reaches the first; a restarted node keeps the
  cluster's bans and its own drain;
- a creation token made on one node creates a room on another, once;
- `cowatch admin rooms` on any node lists the cluster's rooms with their node.

Clients give their address in X-Forwarded-For (the nodes trust 127.0.0.1 as a
proxy, as behind nginx). COWATCH_BIN names the cowatch binary.
"""
import sys
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.cluster import Node, postgres, psql  # noqa: E402,F401  (postgres: a fixture)
from support.harness import wait_until  # noqa: E402
from support.operator import admin as run_admin, admin_token_file  # noqa: E402

BANNED = "198.51.100.9"


@pytest.fixture
def token_file():
    with admin_token_file() as path:
        yield path


def nodes_on(database, token_file, *extra):
    return [Node(n, database, extra=("--admin-token-file", token_file, *extra)).start() for n in (1, 2, 3)]


def admin(node, *words):
    return run_admin(node.port, *words)


def upgrade(node, room, address, query=""):
    """Opens a member's connection from `address`: (status, socket). 101's socket
    is open; any other status comes with None."""
    try:
        socket = connect(f"{node.url}/rooms/{room}?name=someone{query}", subprotocols=["cowatch.v1.json"],
                         additional_headers={"X-Forwarded-For": address}, open_timeout=5)
    except InvalidStatus as refused:
        return refused.response.status_code, None
    return 101, socket


def status(node, room, address, query=""):
    code, socket = upgrade(node, room, address, query)
    if socket:
        socket.close()
    return code


def within_a_second(check, what):
    """Waits for `check` for at most a second; how long it took."""
    started = time.monotonic()
    wait_until(check, 1.0, what, failure=lambda: AssertionError(f"{what} took over a second"))
    return time.monotonic() - started


def closed_with(socket, timeout=3):
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            socket.recv(timeout=max(0.05, deadline - time.monotonic()))
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None
    except TimeoutError:
        return None
    return None


def test_a_ban_reaches_every_node_and_a_drain_leaves_it(postgres, token_file):  # noqa: F811
    database = postgres.fresh()
    nodes = nodes_on(database, token_file)
    try:
        n1, n2, n3 = nodes
        # Someone from the address is in a room on n3 before the ban.
        code, open_socket = upgrade(n3, "before-ban", BANNED)
        assert code == 101
        assert status(n2, "somewhere", BANNED) == 101

        admin(n1, "ban", BANNED)
        took = within_a_second(lambda: status(n2, "somewhere", BANNED) == 403 and status(n3, "elsewhere", BANNED) == 403,
                               "the ban reaching n2 and n3")
        print(f"the ban refused on n2 and n3 {took * 1000:.0f} ms after n1 took it")
        assert closed_with(open_socket) == 4003
        # Others still come in.
        assert status(n3, "elsewhere", "203.0.113.5") == 101
        # Any node lists the cluster's rooms: its own in full, the others' with their node.
        listed = admin(n1, "rooms")
        assert "node n1" in listed and "before-ban  on node n3" in listed, listed

        # A drain on n2 is n2's alone, and writes nothing over the ban.
        admin(n2, "drain", "on")
        assert status(n2, "new-on-drained", "203.0.113.5") == 503
        assert status(n1, "new-on-open-node", "203.0.113.5") == 101
        assert status(n1, "new-again", BANNED) == 403
        assert BANNED in psql(database, "SELECT address FROM operator_bans")
        assert BANNED in admin(n3, "bans")

        # A restarted node reads the cluster's bans, and keeps its own drain.
        n2.kill()
        n2.start()
        assert status(n2, "after-restart", BANNED) == 403
        assert status(n2, "new-after-restart", "203.0.113.5") == 503
        admin(n2, "drain", "off")
        assert status(n2, "new-after-drain-off", "203.0.113.5") == 101

        # Lifted on n3, the address comes back on n1 within a second.
        admin(n3, "unban", BANNED)
        within_a_second(lambda: status(n1, "after-lift", BANNED) == 101, "the lift reaching n1")
        assert psql(database, "SELECT count(*) FROM operator_bans") == "0"
    finally:
        for node in nodes:
            node.stop()


def test_a_creation_token_from_one_node_creates_one_room_on_another(postgres, token_file):  # noqa: F811
    database = postgres.fresh()
    nodes = nodes_on(database, token_file, "--room-creation", "token")
    try:
        n1, n2, n3 = nodes
        said = admin(n1, "creation-token", "--uses", "1")
        token = next(word for word in said.replace('"', " ").split() if len(word) >= 32)
        assert status(n2, "without-token", "203.0.113.6") == 403
        wait_until(lambda: status(n2, "made-with-token", "203.0.113.6", f"&create={token}") == 101, 2,
                   "the token known on n2")
        # Used up: refused on another node once the use is shared.
        wait_until(lambda: status(n3, "second-with-token", "203.0.113.6", f"&create={token}") == 403, 2,
                   "the token's one use known on n3")
    finally:
        for node in nodes:
            node.stop()
