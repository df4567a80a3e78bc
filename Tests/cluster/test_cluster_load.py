"""Six nodes on one PostgreSQL under concurrent load: hundreds of rooms created
at once, each room's members spread over every node (so most are relayed on
shared links), and commands in every room for half a minute. Nothing may be
refused for the database's sake while it is up: no member closed with 4011, no
`unavailable`, every command's state at every member of its room (`cowatch
bench` reports a phase complete only then), and no node logging an error.

On a machine of many cores this load once deadlocked the store's batches
against the lease heartbeats (docs/cluster.md, "One order of locks"); here, on
two cores, it shows the cluster carrying it at all, with the lock order and the
retries in place. COWATCH_BIN names the cowatch binary (the bench is one of its
commands).
"""
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.cluster import Node, postgres  # noqa: E402,F401  (postgres: a fixture)

BIN = os.path.abspath(os.environ.get("COWATCH_BIN", ".build/debug/cowatch"))
NODES = int(os.environ.get("COWATCH_LOAD_NODES", "6"))
ROOMS = int(os.environ.get("COWATCH_LOAD_ROOMS", "240"))
MEMBERS = int(os.environ.get("COWATCH_LOAD_MEMBERS", "6"))
SECONDS = int(os.environ.get("COWATCH_LOAD_SECONDS", "30"))


def metrics(node):
    return urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5).read().decode()


def closes(text, code):
    """Closes with `code` the node sent, by its /metrics."""
    total = 0
    for line in text.splitlines():
        if line.startswith("cowatch_closes_total{") and f'code="{code}"' in line:
            total += int(float(line.split()[-1]))
    return total


def test_six_nodes_carry_hundreds_of_rooms_with_nothing_refused(postgres):  # noqa: F811
    database = postgres.fresh()
    nodes = []
    for number in range(1, NODES + 1):
        node = Node(number, database)
        # Room for one load generator's thousands of connections from one address,
        # and its rooms created at once (as commands/bench cluster runs nodes).
        node.args += ["--max-connections-per-address", "100000", "--max-rooms", "100000", "--room-creation-rate", "0",
                      "--commands-per-second", "1000", "--command-burst", "1000"]
        nodes.append(node.start())
    try:
        urls = ",".join(node.url for node in nodes)
        pids = ",".join(str(node.process.pid) for node in nodes)
        # Every room's members on every node (member i on node i mod 6), every room
        # created at once by the warm-up; then a command per room per second.
        bench = subprocess.run(
            [BIN, "bench", "--url", urls, "--server-pid", pids, "--rooms", str(ROOMS), "--members", str(MEMBERS),
             "--schedule", "spread", "--interval", "1", "--duration", str(SECONDS),
             "--connections-per-client-context", "300", "--timeout", "120"],
            capture_output=True, text=True, timeout=SECONDS + 240)
        report = bench.stdout + bench.stderr
        print(report[-3000:])
        assert bench.returncode == 0, report[-3000:]
        result = next((line for line in bench.stdout.splitlines() if line.startswith("result:")), "")
        assert "complete=yes" in result, report[-3000:]
        assert not re.search(r"refused by the server|connection\(s\) failed", report), report[-3000:]
        for node in nodes:
            text = metrics(node)
            assert closes(text, 4011) == 0, f"node {node.number} closed members with 4011"
            assert closes(text, 4010) == 0, f"node {node.number} moved rooms under load"
            log = node.log()
            errors = [line for line in log.splitlines() if "level=error" in line or "level=critical" in line]
            assert not errors, f"node {node.number} logged errors: {errors[:5]}"
            assert "unavailable" not in log, f"node {node.number} refused lines as unavailable"
    finally:
        for node in nodes:
            node.stop()
