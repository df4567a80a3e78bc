"""`cowatch connect` as a person runs it (on a pseudo-terminal) and as a bot
(a pipe), against a server of each test's own: what the terminal suites share.
COWATCH_BIN names the cowatch binary."""
import os
import pty
import re
import select
import signal
import subprocess
import tempfile
import time

import pytest

from support.harness import Serve

BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")


@pytest.fixture
def server():
    with tempfile.TemporaryDirectory() as data_dir:
        # Every client here comes from 127.0.0.1: bans and kicks are held to
        # names and device identities, as behind a proxy that is not trusted.
        s = Serve("--data-dir", data_dir, "--shutdown-grace", "0", "--address-bans", "false")
        yield s
        s.stop()


class Terminal:
    """`cowatch connect` on a pseudo-terminal; everything it writes (stdout and
    stderr) is collected from the terminal's side."""

    def __init__(self, *args, home=None):
        env = dict(os.environ, HOME=home or tempfile.mkdtemp())
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(BIN, [BIN, "connect", *args], env)
        self.text = ""
        self.status = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()

    def read_until(self, pattern, timeout, since=0):
        """Waits for `pattern` in what the terminal showed after offset `since`."""
        deadline = time.time() + timeout
        while not re.search(pattern, self.text[since:]):
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} within {timeout} s; the terminal shows:\n{self.text}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    self.reap(timeout=1)
                    if not re.search(pattern, self.text[since:]):
                        raise AssertionError(f"ended without {pattern!r}; the terminal shows:\n{self.text}")
                    break
                self.text += chunk.decode("utf-8", "replace")
        return self.text

    def type(self, line):
        os.write(self.fd, line.encode() + b"\n")

    def reap(self, timeout):
        deadline = time.time() + timeout
        while self.status is None and time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.05)
        return self.status

    def kill(self):
        if self.reap(0) is None:
            os.kill(self.pid, signal.SIGKILL)
            self.reap(5)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def room(server, name):
    return f"ws://127.0.0.1:{server.port}/rooms/{name}"


def bot(server, room_name, name, home=None):
    """A bot pipe in the room, its input kept open to type commands; returns
    once it is welcomed."""
    env = dict(os.environ, HOME=home or tempfile.mkdtemp())
    process = subprocess.Popen([BIN, "connect", room(server, room_name), "--name", name], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = process.stdout.readline().decode()
    assert "welcome" in line, line
    return process


def host(server, name):
    """The room's first member, a bot pipe kept open to type host commands."""
    return bot(server, name, "alice")


def type_into(process, line):
    """Types `line` into a bot pipe."""
    process.stdin.write(line.encode() + b"\n")
    process.stdin.flush()


