"""What every Python harness in Tests/ needs of a real server, in one place:
free loopback ports, the one wait on a condition (polled, wait_until), whether
windows have settled on a state, and `cowatch serve` started, found, and
stopped (how a harness finds it: Tests/support/__init__.py).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")

# Ports handed out in this run from COWATCH_TEST_PORTS: a port bound only later
# by a server is not seen as taken.
_taken = set()


def free_port():
    """A free loopback port: the kernel's choice, or the next free one of
    COWATCH_TEST_PORTS=LOW-HIGH when a run must stay in a range."""
    low, _, high = os.environ.get("COWATCH_TEST_PORTS", "0-0").partition("-")
    for port in range(int(low), int(high or low) + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            if port == 0 or port not in _taken:
                _taken.add(port)
                return s.getsockname()[1]
    raise RuntimeError(f"no free port in COWATCH_TEST_PORTS={os.environ.get('COWATCH_TEST_PORTS')}")


def polled(check, timeout, what, failure=None):
    """`check()`'s values, one each time the caller comes back for the next,
    until a true one, or until `timeout` seconds have passed: then
    AssertionError, or what `failure()` makes (an exception that tells more of
    what was seen). The one wait of the harnesses: wait_until polls it in a
    thread, support/cluster.py's `until` in an event loop."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if not value and time.monotonic() > deadline:
            raise failure() if failure else AssertionError(f"no {what} within {timeout} s")
        yield value


def wait_until(check, timeout, what, interval=0.02, failure=None):
    """`check()`'s first true value, polled every `interval` s (see polled)."""
    for value in polled(check, timeout, what, failure):
        if value:
            return value
        time.sleep(interval)


def answers(url):
    """Whether a GET of `url` is answered 200 within a second."""
    try:
        return urllib.request.urlopen(url, timeout=1).status == 200
    except OSError:
        return False


def settled(views, status):
    """Whether every window has settled on the room's latest state: each of
    `views` (one a window, as its harness reads it: `seq`, the playback's
    `status`, `busy` while a seek, a join or a suspension is under way,
    `running` when it plays along, `held` when it holds still where it should)
    shows the same `seq` with `status`, and its player applied it: running if
    playing, held otherwise."""
    if len({v["seq"] for v in views}) != 1 or views[0]["seq"] is None:
        return False
    return all(v["status"] == status and not v["busy"] and (v["running"] if status == "playing" else v["held"])
               for v in views)


class Serve:
    """`cowatch serve` with `args`, on `port` (0: the server picks one and says
    which in its banner, read here). It can be stopped and started again on the
    same port; its log is kept in `log_path`.

    As a context manager (`with Serve(..., start=False) as server:`) it starts on
    entry and stops on exit, then removes what it made itself: the log when no
    `log_path` was given, and with `scratch_cwd` the fresh folder it ran in (so
    that nothing the server writes stays behind)."""

    BANNER = re.compile(r"serving on http://127\.0\.0\.1:(\d+)/")

    def __init__(self, *args, port=0, env=None, cwd=None, log_path=None, binary=None, start=True,
                 scratch_cwd=False):
        self.binary = os.path.abspath(binary or BIN)
        assert os.access(self.binary, os.X_OK), f"no cowatch binary at {self.binary} (set COWATCH_BIN)"
        self.args = list(args)
        self.port = port
        self.env = env
        self.scratch = tempfile.mkdtemp(prefix="cowatch-serve-cwd-") if scratch_cwd else None
        self.cwd = self.scratch or cwd
        self.own_log = log_path is None
        self.log_path = Path(log_path or tempfile.mkstemp(prefix="cowatch-serve-", suffix=".log")[1])
        self.process = None
        if start:
            self.start()

    def __enter__(self):
        if not self.process:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.own_log:
            self.log_path.unlink(missing_ok=True)

    def start(self, timeout=30):
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([self.binary, "serve", "--port", str(self.port), *self.args],
                                            stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd)

        def banner():
            if self.process.poll() is not None:
                return "exited"
            with open(self.log_path, errors="replace") as f:
                f.seek(offset)
                found = self.BANNER.findall(f.read())
            return int(found[-1]) if found else None
        found = wait_until(banner, timeout, "cowatch serve banner")
        assert found != "exited", f"cowatch serve exited:\n{self.log()}"
        self.port = found
        return self

    def url(self, path="/"):
        return f"http://127.0.0.1:{self.port}{path}"

    def ws(self, path="/"):
        return f"ws://127.0.0.1:{self.port}{path}"

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines=40):
        """The last `lines` lines of the log, for a failure's report."""
        return "\n".join(self.log().splitlines()[-lines:])

    def signal(self, number):
        self.process.send_signal(number)

    def stop(self, timeout=20):
        """SIGTERM, then SIGKILL if it has not exited within `timeout` s; its status."""
        if not self.process or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self):
        if self.process and self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
            self.process.kill()
            self.process.wait(timeout=10)
