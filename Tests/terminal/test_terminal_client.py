"""`cowatch connect` as a person sees it: under a pseudo-terminal, with nobody
pressing a key, a kick and a server shutdown are told at once; after a shutdown
the client comes back by itself as the same member once the server is back; a
refused upgrade shows the server's own words. (The client's rules are in
Sources/CowatchClient/ClientLife.swift.)

COWATCH_BIN names the cowatch binary; each test starts its own server on loopback.
"""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.terminal import BIN, Terminal, bot, host, room, server, type_into  # noqa: E402,F401  (server: a fixture)


def test_a_kick_is_told_at_once_and_is_final(server):
    alice = host(server, "kicks")
    try:
        with Terminal(room(server, "kicks"), "--name", "bob") as bob:
            bob.read_until(r"welcome to kicks, bob", 10)
            type_into(alice, "/kick bob spamming")
            started = time.time()
            bob.read_until(r"removed by a host \(4001\).*spamming", 3)
            assert time.time() - started < 3
            assert bob.reap(5) == 1, bob.text
            assert "reconnecting" not in bob.text
    finally:
        alice.kill()


def test_a_shutdown_is_told_at_once_and_the_client_comes_back_as_itself(server):
    with Terminal(room(server, "restarts"), "--name", "bob") as bob:
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


def test_lines_typed_while_away_are_sent_once_back(server):
    with Terminal(room(server, "away"), "--name", "bob") as bob:
        bob.read_until(r"welcome to away, bob", 10)
        server.stop()
        bob.read_until(r"reconnecting in", 3)
        bob.type("hello from the gap")
        bob.read_until(r"the line will be sent once back \(1 waiting\)", 3)
        server.start()
        bob.read_until(r"<bob> hello from the gap", 20, since=len(bob.text))


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
    robot = bot(server, "bots", "robot", home=home)
    try:
        type_into(alice, "/kick robot")
        assert robot.wait(timeout=10) == 1
        # The same bot under another name stays out: it is the same device.
        again = subprocess.run([BIN, "connect", room(server, "bots"), "--name", "robot2"], input="/who\n",
                               capture_output=True, text=True, timeout=20, env=dict(os.environ, HOME=home))
        assert again.returncode == 1 and "kicked" in again.stderr, again.stderr
        with Terminal(room(server, "bots"), "--name", "carol", home=home) as carol:
            carol.read_until(r"welcome to bots, carol", 10)
    finally:
        robot.kill()
        alice.kill()


def test_ctrl_d_leaves_quietly(server):
    with Terminal(room(server, "leaving"), "--name", "bob") as bob:
        bob.read_until(r"welcome to leaving, bob", 10)
        os.write(bob.fd, b"\x04")
        assert bob.reap(5) == 0, bob.text
