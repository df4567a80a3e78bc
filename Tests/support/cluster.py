"""A cluster of `cowatch serve --store postgres` nodes on a throwaway PostgreSQL
(Tests/cluster/scratch_postgres.sh), and members that watch it through plain
WebSockets written against docs/protocol.md: what the cluster tests, the
partition tests, the database failover test and the failover benchmark share."""
import asyncio
import json
import os
import secrets
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import websockets

from support.harness import Serve, answers, free_port, polled, wait_until

SCRATCH_POSTGRES = Path(__file__).resolve().parents[1] / "cluster" / "scratch_postgres.sh"
LEASE = 1.5
RELAY_TIMEOUT = 2
URL = "https://example.org/episode-1.mp4"


def psql(url, sql):
    """One statement through psql; its rows, unaligned, one a line."""
    return subprocess.run(["psql", "-qAt", url, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


class ScratchPostgres:
    """A PostgreSQL server of its own in `folder`, on loopback, for one run."""

    def __init__(self, folder):
        self.folder = folder
        self.url = self.script("start", capture=True)

    def script(self, verb, capture=False, check=True):
        done = subprocess.run([str(SCRATCH_POSTGRES), verb, self.folder], check=check, capture_output=capture, text=True)
        return done.stdout.strip() if capture else None

    def fresh(self):
        """A database of its own on this server, for one test's cluster."""
        name = "cluster_" + uuid.uuid4().hex[:12]
        psql(self.url, f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name

    def restart(self):
        self.script("restart")

    def stop(self, check=True):
        self.script("stop", check=check)

    def resume(self):
        self.script("resume")


@pytest.fixture(scope="module")
def postgres():
    pg = ScratchPostgres(tempfile.mkdtemp(prefix="cowatch-cluster-pg-"))
    yield pg
    pg.stop(check=False)


_SECRET_FILES = {}


def secret_file(folder=None):
    """The secret every node of a cluster shares (cluster-secret-file): one file
    in `folder`, or one for the whole run."""
    if folder not in _SECRET_FILES:
        if folder is None:
            handle, path = tempfile.mkstemp(prefix="cowatch-cluster-", suffix=".secret")
            os.close(handle)
        else:
            path = os.path.join(folder, "cluster.secret")
        with open(path, "w") as f:
            f.write(secrets.token_hex(32))
        _SECRET_FILES[folder] = path
    return _SECRET_FILES[folder]


class Node(Serve):
    """Node `number` of a cluster on `database`, on a free port, its data and
    log in `folder` (fresh temporary ones unless given); `extra` arguments
    after the cluster's own (`relay_timeout` None: the server's default).
    Stopping it kills it, as a crash would."""

    def __init__(self, number, database, lease=LEASE, folder=None, extra=(), binary=None, relay_timeout=RELAY_TIMEOUT):
        self.number, self.database = number, database
        self.name = f"n{number}"
        port = free_port()
        # The node's WebSocket base (in place of Serve.url: what every caller uses).
        self.url = f"ws://127.0.0.1:{port}"
        if folder is None:
            self.data = tempfile.mkdtemp(prefix=f"cowatch-node{number}-")
            log = tempfile.NamedTemporaryFile(prefix=f"cowatch-node{number}-", suffix=".log", delete=False)
            log.close()
            log_path = log.name
        else:
            self.data = os.path.join(folder, self.name)
            log_path = os.path.join(folder, self.name + ".log")
        super().__init__("--store", "postgres", "--database-url", database, "--node-id", self.name,
                         "--advertise-url", self.url, "--trusted-proxies", "127.0.0.1", "--lease-seconds", str(lease),
                         "--media-check", "false", "--data-dir", self.data, "--shutdown-grace", "1",
                         *(["--relay-timeout", str(relay_timeout)] if relay_timeout is not None else []),
                         "--cluster-secret-file", secret_file(folder), *extra,
                         port=port, log_path=log_path, binary=binary, start=False)

    def start(self):
        super().start()
        wait_until(self.healthy, 20, f"node {self.number} healthy (its log: {self.log_path})")
        return self

    def healthy(self):
        return answers(f"http://127.0.0.1:{self.port}/healthz")

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def health(self):
        return urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2).read().decode()

    def metric(self, name):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2).read().decode()
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None

    def stop(self):
        self.kill()


class Member:
    """One client: every event it receives, kept in order with the monotonic
    time it arrived (`arrivals`), read in the background."""

    def __init__(self, name):
        self.name = name
        self.events, self.arrivals = [], []
        # Its connection (with the node it is on and its reader) and how that
        # closed; who it is in the room, and how it comes back as itself.
        self.ws = self.node = self.reader = self.closed = None
        self.id = self.resume = None

    async def open(self, node, room, query="", timeout=10):
        """Opens a connection to `room` on `node` (as itself again when it has a
        resume token) and reads it in the background; the index of the first
        event it will bring."""
        params = f"name={self.name}" + (f"&resume={self.resume}" if self.resume else "") + (f"&{query}" if query else "")
        mark = len(self.events)
        self.ws = await websockets.connect(f"{node.url}/rooms/{room}?{params}", subprotocols=["cowatch.v1.json"],
                                           open_timeout=timeout, max_size=None)
        self.closed = None
        self.node = node
        self.reader = asyncio.ensure_future(self.read(self.ws))
        return mark

    async def connect(self, node, room, query="", timeout=10):
        """Opens a connection and waits for its welcome (kept: the resume token, the id)."""
        mark = await self.open(node, room, query, timeout)
        welcome = await self.wait(lambda e: e["type"] == "welcome", timeout=timeout, since=mark)
        self.resume = welcome["resume"]
        self.id = welcome["you"]["id"]
        return welcome

    async def read(self, ws):
        try:
            async for frame in ws:
                self.arrivals.append(time.monotonic())
                self.events.append(json.loads(frame))
        except websockets.ConnectionClosed:
            pass
        self.closed = (ws.close_code, ws.close_reason)

    async def send(self, line):
        await self.ws.send(line)

    async def wait(self, predicate, timeout=5, since=0):
        """The first event after `since` that satisfies `predicate`."""
        return await until(lambda: next((e for e in self.events[since:] if predicate(e)), None), "", timeout,
                           interval=0.01, failure=lambda: AssertionError(
                               f"{self.name}: nothing matched within {timeout} s; last events: {self.events[-5:]}"))

    async def wait_closed(self, timeout=5):
        """How its connection closed: (code, reason)."""
        return await until(lambda: self.closed, "", timeout, interval=0.01, failure=lambda: AssertionError(
            f"{self.name} was not closed within {timeout} s"))

    def states(self):
        return [e for e in self.events if e["type"] == "state"]

    async def close(self, code=1000):
        """Leaves for good (1000), or with 1001 as a tab that closes or reloads
        (the member keeps its resume grace); returns once its reader has ended."""
        if self.ws:
            await self.ws.close(code=code)
            if self.reader:
                await self.reader

    async def go_away(self):
        await self.close(code=1001)


def playing(e):
    return e["type"] == "state" and e["playback"]["status"] == "playing"


async def members_on(room, *nodes):
    """alice, bob and carol (as many as `nodes`), each connected in turn to its
    node of `nodes`: the first one's node owns the room."""
    members = [Member(name) for name, _ in zip(("alice", "bob", "carol"), nodes)]
    for member, node in zip(members, nodes):
        await member.connect(node, room)
    return members


async def alice_and_bob(n1, n2, room, play=False):
    """alice on n1, first, so that n1 owns the room, and bob on n2, relayed to it;
    the room watching Episode 1 as bob sees it (playing, with `play`)."""
    alice, bob = await members_on(room, n1, n2)
    await alice.send(f"/watch {URL} Episode 1")
    await bob.wait(lambda e: e["type"] == "state" and e["session"])
    if play:
        await alice.send("/play")
        await bob.wait(playing)
    return alice, bob


async def until(check, what, timeout=10, interval=0.05, failure=None):
    """Polls `check` until it gives something true, or fails after `timeout` s
    (wait_until's twin for a test's event loop)."""
    for value in polled(check, timeout, what, failure):
        if value:
            return value
        await asyncio.sleep(interval)
