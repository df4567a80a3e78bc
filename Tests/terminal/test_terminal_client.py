"""`cowatch connect` as a person sees it: under a pseudo-terminal, with nobody
pressing a key, a kick and a server shutdown are told at once; after a shutdown
the client comes back by itself as the same member once the server is back; a
refused upgrade shows the server's own words. (The client's rules are in
Sources/CowatchClient/ClientLife.swift.)

COWATCH_BIN names the cowatch binary; each test starts its own server on loopback.
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from harness import Serve  # noqa: E402

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
        os.close(self.fd)


def room(server, name):
    return f"ws://127.0.0.1:{server.port}/rooms/{name}"


def host(server, name):
    """The room's first member, a bot pipe kept open to type host commands."""
    env = dict(os.environ, HOME=tempfile.mkdtemp())
    process = subprocess.Popen([BIN, "connect", room(server, name), "--name", "alice"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = process.stdout.readline().decode()
    assert "welcome" in line, line
    return process


def test_a_kick_is_told_at_once_and_is_final(server):
    alice = host(server, "kicks")
    bob = Terminal(room(server, "kicks"), "--name", "bob")
    try:
        bob.read_until(r"welcome to kicks, bob", 10)
        alice.stdin.write(b"/kick bob spamming\n")
        alice.stdin.flush()
        started = time.time()
        bob.read_until(r"removed by a host \(4001\).*spamming", 3)
        assert time.time() - started < 3
        assert bob.reap(5) == 1, bob.text
        assert "reconnecting" not in bob.text
    finally:
        bob.kill()
        alice.kill()


def test_a_shutdown_is_told_at_once_and_the_client_comes_back_as_itself(server):
    bob = Terminal(room(server, "restarts"), "--name", "bob")
    try:
        bob.read_until(r"welcome to restarts, bob \(\w+\); 1 here: bob", 10)
        server.stop()
        bob.read_until(r"disconnected: the server is going away \(1001\)", 3)
        bob.read_until(r"reconnecting in", 3)
        before = len(bob.text)
        server.start()
        bob.read_until(r"cowatch: reconnected", 20, since=before)
        # The same member (its resume token kept), not a second "bob" beside a ghost.
        bob.read_until(r"welcome to restarts, bob \(\w+\); 1 here: bob\r?\n", 5, since=before)
        assert bob.reap(0) is None

    finally:
        bob.kill()


def test_lines_typed_while_away_are_sent_once_back(server):
    bob = Terminal(room(server, "away"), "--name", "bob")
    try:
        bob.read_until(r"welcome to away, bob", 10)
        server.stop()
        bob.read_until(r"reconnecting in", 3)
        bob.type("hello from the gap")
        bob.read_until(r"the line will be sent once back \(1 waiting\)", 3)
        server.start()
        bob.read_until(r"<bob> hello from the gap", 20, since=len(bob.text))
    finally:
        bob.kill()


def test_a_refused_upgrade_shows_the_servers_words(server):
    result = subprocess.run([BIN, "connect", room(server, "x" * 80)],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
                            env=dict(os.environ, HOME=tempfile.mkdtemp()))
    assert result.returncode == 1
    assert "the server answered 400: a room name is 1 to 64 characters" in result.stderr, result.stderr
    assert "HS:" not in result.stderr


def test_a_kicked_bot_does_not_keep_out_the_person_who_runs_it(server):
    # One OS user runs a bot pipe and, at a terminal, takes part as a person: the
    # two keep different device identities (~/.config/cowatch/device.bot and
    # device), so a host's kick of the bot keeps out the bot, not its owner.
    home = tempfile.mkdtemp()
    alice = host(server, "bots")
    bot = subprocess.Popen([BIN, "connect", room(server, "bots"), "--name", "robot"], env=dict(os.environ, HOME=home),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    carol = None
    try:
        assert "welcome" in bot.stdout.readline().decode()
        alice.stdin.write(b"/kick robot\n")
        alice.stdin.flush()
        assert bot.wait(timeout=10) == 1
        # The same bot under another name stays out: it is the same device.
        again = subprocess.run([BIN, "connect", room(server, "bots"), "--name", "robot2"], input="/who\n",
                               capture_output=True, text=True, timeout=20, env=dict(os.environ, HOME=home))
        assert again.returncode == 1 and "kicked" in again.stderr, again.stderr
        carol = Terminal(room(server, "bots"), "--name", "carol", home=home)
        carol.read_until(r"welcome to bots, carol", 10)
    finally:
        if carol:
            carol.kill()
        bot.kill()
        alice.kill()


def test_ctrl_d_leaves_quietly(server):
    bob = Terminal(room(server, "leaving"), "--name", "bob")
    try:
        bob.read_until(r"welcome to leaving, bob", 10)
        os.write(bob.fd, b"\x04")
        assert bob.reap(5) == 0, bob.text
    finally:
        bob.kill()
