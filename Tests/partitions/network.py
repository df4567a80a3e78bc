"""The project's own test hosts for partitions: a network namespace each for
PostgreSQL and three cowatch nodes, joined by a bridge in this namespace (whose
address the test's clients use), all made here and removed after. A partition
is a blackhole route on both sides (`ip route add blackhole`): packets vanish
without a reset, as on a real network that fails. Needs root and iproute2.
"""
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.cluster import psql  # noqa: E402
from support.harness import answers  # noqa: E402

PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1] if Path("/usr/lib/postgresql").exists() else None
AS_POSTGRES = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")
SUBNET = "10.231.{}.{}"


def ip(*args, namespace=None):
    command = (["ip", "netns", "exec", namespace] if namespace else []) + ["ip", *args]
    subprocess.run(command, check=True, capture_output=True)


class Network:
    """Hosts `db`, `n1`, `n2`, `n3` on one bridge; `address(host)` is each one's."""

    HOSTS = {"db": 2, "n1": 11, "n2": 12, "n3": 13}

    def __init__(self):
        tag = f"cw{os.getpid() % 100000}"
        self.net = os.getpid() % 200 + 20
        self.namespaces = {host: f"{tag}-{host}" for host in self.HOSTS}
        self.bridge = f"{tag}br"
        self.cuts = []
        # The secret the nodes share (cluster-secret-file): their relay links prove it.
        handle, self.cluster_secret = tempfile.mkstemp(prefix="cowatch-partition-", suffix=".secret")
        os.write(handle, secrets.token_hex(32).encode())
        os.close(handle)

    def address(self, host):
        return SUBNET.format(self.net, self.HOSTS[host] if host != "here" else 1)

    def __enter__(self):
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.address('here')}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for host, namespace in self.namespaces.items():
            subprocess.run(["ip", "netns", "add", namespace], check=True)
            ip("link", "set", "lo", "up", namespace=namespace)
            outside = f"{namespace[-6:]}v"
            ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            ip("link", "set", outside, "master", self.bridge)
            ip("link", "set", outside, "up")
            ip("addr", "add", f"{self.address(host)}/24", "dev", "eth0", namespace=namespace)
            ip("link", "set", "eth0", "up", namespace=namespace)
        return self

    def __exit__(self, *exc):
        for namespace in self.namespaces.values():
            subprocess.run(["ip", "netns", "pids", namespace], capture_output=True)
            pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)

    def cut(self, a, b):
        """Nothing passes between hosts `a` and `b`, either way, and nothing says so."""
        ip("route", "add", "blackhole", f"{self.address(b)}/32", namespace=self.namespaces[a])
        ip("route", "add", "blackhole", f"{self.address(a)}/32", namespace=self.namespaces[b])
        self.cuts.append((a, b))

    def heal(self):
        for a, b in self.cuts:
            ip("route", "del", "blackhole", f"{self.address(b)}/32", namespace=self.namespaces[a])
            ip("route", "del", "blackhole", f"{self.address(a)}/32", namespace=self.namespaces[b])
        self.cuts = []

    def run(self, host, command, **kwargs):
        return subprocess.Popen(["ip", "netns", "exec", self.namespaces[host], *command], **kwargs)


class Database:
    """PostgreSQL on host `db`, trusting the bridge's addresses."""

    def __init__(self, network):
        self.network = network
        self.folder = Path(tempfile.mkdtemp(prefix="cowatch-partition-pg-"))
        if os.getuid() == 0:
            subprocess.run(["chown", "postgres", str(self.folder)], check=True)
        self.url = f"postgres://cowatch@{network.address('db')}:5432/cowatch"
        self.process = None

    def start(self):
        data = self.folder / "data"
        subprocess.run(AS_POSTGRES + [str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "cowatch", "--no-sync"],
                       check=True, capture_output=True)
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {SUBNET.format(self.network.net, 0)}/24 trust\n")
        log = open(self.folder / "server.log", "wb")
        self.process = self.network.run("db", AS_POSTGRES + [
            str(PG_BIN / "postgres"), "-D", str(data), "-c", f"listen_addresses={self.network.address('db')}",
            "-c", "port=5432", "-c", f"unix_socket_directories={self.folder}", "-c", "fsync=off"],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while subprocess.run(["psql", "-qAt", f"postgres://cowatch@{self.network.address('db')}:5432/postgres",
                              "-c", "SELECT 1"], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "PostgreSQL did not start in its namespace"
            time.sleep(0.2)
        subprocess.run(["psql", "-qAt", f"postgres://cowatch@{self.network.address('db')}:5432/postgres",
                        "-c", "CREATE DATABASE cowatch"], check=True, capture_output=True)
        return self

    def query(self, sql):
        return psql(self.url, sql)


class Node:
    """`cowatch serve` on host `n1`, `n2` or `n3`, a node of the cluster."""

    def __init__(self, network, host, database_url, lease=1.5, relay_timeout=2):
        self.network, self.host = network, host
        self.address = network.address(host)
        self.url = f"ws://{self.address}:7480"
        self.data = tempfile.mkdtemp(prefix=f"cowatch-partition-{host}-")
        nodes = ",".join(network.address(n) for n in ("n1", "n2", "n3"))
        self.args = [os.path.abspath(BIN), "serve", "--host", self.address, "--port", "7480", "--store", "postgres",
                     "--database-url", database_url, "--node-id", host, "--advertise-url", self.url,
                     "--trusted-proxies", nodes, "--lease-seconds", str(lease), "--relay-timeout", str(relay_timeout),
                     "--media-check", "false", "--data-dir", self.data, "--shutdown-grace", "1",
                     "--cluster-secret-file", network.cluster_secret]
        self.log_path = Path(self.data) / "node.log"
        self.process = None

    def start(self):
        self.process = self.network.run(self.host, self.args, stdout=open(self.log_path, "wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.healthy():
            assert self.process.poll() is None, f"node {self.host} exited: {self.log_path.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"node {self.host} not healthy: {self.log_path.read_text()[-2000:]}"
            time.sleep(0.1)
        return self

    def healthy(self):
        return answers(f"http://{self.address}:7480/healthz")

    def health(self):
        return urllib.request.urlopen(f"http://{self.address}:7480/healthz", timeout=2).read().decode()
