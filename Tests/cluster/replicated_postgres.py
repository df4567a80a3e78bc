"""PostgreSQL with a streaming replica, kept by Patroni on an etcd of one
member, all from Debian's packages (patroni, etcd-server) and on loopback:
what deploy/cluster/patroni/ describes, started by a test.

Patroni decides which server is the primary and promotes the standby when the
primary's leader key ends in etcd (its `ttl`); nothing here promotes anything.
The servers run as an unprivileged user (postgres, when started by root), as
Tests/cluster/scratch_postgres.sh does.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from support.cluster import psql as run_psql
from support.harness import answers, free_port, wait_until

PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1] if Path("/usr/lib/postgresql").exists() else None
AS_POSTGRES = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
# How long the primary's leader key lives without renewal: a dead primary's
# standby is promoted at most this long after the death (Patroni's own rule:
# loop_wait + 2 x retry_timeout <= ttl).
TTL, LOOP_WAIT, RETRY_TIMEOUT = 10, 1, 3


class ReplicatedPostgres:
    """Two PostgreSQL servers under Patroni: `url` reaches whichever is the primary
    (libpq's multi-host address with target_session_attrs=read-write)."""

    def __init__(self, synchronous=False):
        self.synchronous = synchronous
        self.folder = Path(tempfile.mkdtemp(prefix="cowatch-patroni-"))
        if os.getuid() == 0:
            shutil.chown(self.folder, "postgres")
        self.etcd_port, self.etcd_peer = free_port(), free_port()
        self.members = {}
        for name in ("pg1", "pg2"):
            self.members[name] = {"port": free_port(), "api": free_port(), "process": None}
        self.etcd = None
        hosts = ",".join(f"127.0.0.1:{m['port']}" for m in self.members.values())
        self.url = f"postgres://cowatch@{hosts}/cowatch?target_session_attrs=read-write"

    # -- starting and stopping

    def start(self):
        etcd_dir = self.folder / "etcd"
        self.etcd_log = open(self.folder / "etcd.log", "wb")
        self.etcd = subprocess.Popen(
            ["etcd", "--name", "e1", "--data-dir", str(etcd_dir), "--enable-v2=true",
             "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
             "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
             "--listen-peer-urls", f"http://127.0.0.1:{self.etcd_peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.etcd_peer}",
             "--initial-cluster", f"e1=http://127.0.0.1:{self.etcd_peer}"],
            stdout=self.etcd_log, stderr=subprocess.STDOUT)
        wait_until(self._etcd_up, 20, "etcd answering")
        self.start_member("pg1")
        wait_until(lambda: self.primary() == "pg1", 60, "pg1 bootstrapped as the primary")
        self.psql("pg1", "CREATE ROLE cowatch LOGIN SUPERUSER", database="postgres")
        self.psql("pg1", "CREATE DATABASE cowatch OWNER cowatch", database="postgres")
        self.start_member("pg2")
        wait_until(lambda: self.streaming("pg2"), 60, "pg2 streaming from pg1")
        if self.synchronous:
            wait_until(lambda: self.cluster_role("pg2") == "sync_standby", 60, "pg2 the synchronous standby")
        return self

    def _etcd_up(self):
        return answers(f"http://127.0.0.1:{self.etcd_port}/health")

    def config(self, name):
        member = self.members[name]
        data = self.folder / name
        dcs = {"ttl": TTL, "loop_wait": LOOP_WAIT, "retry_timeout": RETRY_TIMEOUT,
               "maximum_lag_on_failover": 16 << 20,
               "synchronous_mode": self.synchronous,
               "postgresql": {"use_pg_rewind": False, "parameters": {
                   "wal_level": "replica", "hot_standby": "on", "max_wal_senders": 10,
                   "max_replication_slots": 10, "wal_keep_size": "64MB", "max_connections": 200}}}
        # JSON is YAML: Patroni reads this file as it would a YAML one.
        return {
            "scope": "cowatch-test", "name": name,
            "restapi": {"listen": f"127.0.0.1:{member['api']}", "connect_address": f"127.0.0.1:{member['api']}"},
            "etcd3": {"hosts": [f"127.0.0.1:{self.etcd_port}"]},
            "bootstrap": {"dcs": dcs, "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}, "no-sync"]},
            "postgresql": {
                "listen": f"127.0.0.1:{member['port']}", "connect_address": f"127.0.0.1:{member['port']}",
                "data_dir": str(data), "bin_dir": str(PG_BIN),
                "pgpass": str(self.folder / f"{name}.pgpass"),
                "authentication": {"superuser": {"username": "postgres", "password": "unused"},
                                   "replication": {"username": "replicator", "password": "unused"}},
                "parameters": {"unix_socket_directories": str(self.folder)},
                # A standby is cloned at once, not at the primary's next checkpoint.
                "basebackup": [{"checkpoint": "fast"}],
                "pg_hba": ["local all all trust", "host all all 127.0.0.1/32 trust",
                           "host replication replicator 127.0.0.1/32 trust"],
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
        }

    def start_member(self, name):
        path = self.folder / f"{name}.yml"
        path.write_text(json.dumps(self.config(name)))
        log = open(self.folder / f"{name}.log", "ab")
        if os.getuid() == 0:
            shutil.chown(path, "postgres")
        self.members[name]["process"] = subprocess.Popen(AS_POSTGRES + ["patroni", str(path)],
                                                         stdout=log, stderr=subprocess.STDOUT,
                                                         start_new_session=True)

    def stop(self):
        for name, member in self.members.items():
            process = member["process"]
            if process and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
            self._kill_postmaster(name)
        if self.etcd:
            self.etcd.terminate()
            self.etcd.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- what the test does to them

    def kill_primary(self):
        """kill -9 of the primary's machine, as far as one machine can be: its
        Patroni and every PostgreSQL process of its data directory. Returns its name."""
        name = self.primary()
        assert name, "no primary to kill"
        process = self.members[name]["process"]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        self._kill_postmaster(name)
        return name

    def _kill_postmaster(self, name):
        pid_file = self.folder / name / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        # The postmaster and its children (its own process group is the postmaster's session).
        subprocess.run(["pkill", "-9", "-s", str(pid)], check=False)
        subprocess.run(["kill", "-9", str(pid)], check=False, capture_output=True)

    def rejoin(self, name):
        """The killed member comes back as a standby of the new primary: its data
        directory is cloned again (Patroni's basebackup), as an operator would."""
        shutil.rmtree(self.folder / name, ignore_errors=True)
        self.start_member(name)
        wait_until(lambda: self.streaming(name), 90, f"{name} streaming again")
        if self.synchronous:
            # Patroni promotes only the standby it has named synchronous: until then
            # a second failover would find nobody to promote, by design.
            wait_until(lambda: self.cluster_role(name) == "sync_standby", 60, f"{name} the synchronous standby")

    def cluster_role(self, name):
        """The member's role as Patroni's cluster view names it (leader, replica, sync_standby)."""
        for member in self.members:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.members[member]['api']}/cluster", timeout=1) as answer:
                    view = json.loads(answer.read())
            except (OSError, ValueError):
                continue
            for entry in view.get("members", []):
                if entry.get("name") == name:
                    return entry.get("role")
        return None

    # -- reading their state

    def role(self, name):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.members[name]['api']}/patroni", timeout=1) as answer:
                return json.loads(answer.read())
        except (OSError, ValueError):
            return None

    def primary(self):
        for name in self.members:
            status = self.role(name)
            if status and status.get("role") in ("master", "primary") and status.get("state") == "running":
                return name
        return None

    def streaming(self, name):
        status = self.role(name)
        return bool(status and status.get("role") == "replica" and status.get("state") == "running"
                    and status.get("replication_state", "streaming") == "streaming"
                    and self.primary() and self.primary() != name
                    and self._standby_streams(name))

    def _standby_streams(self, name):
        primary = self.primary()
        if not primary:
            return False
        try:
            rows = self.psql(primary, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'",
                             database="postgres")
        except subprocess.CalledProcessError:
            return False
        return name in rows.split()

    def psql(self, name, sql, database="cowatch"):
        port = self.members[name]["port"]
        return run_psql(f"postgres://postgres@127.0.0.1:{port}/{database}", sql)

    def query(self, sql):
        """On whichever server is the primary now."""
        return run_psql(self.url, sql)
