"""Leaving on purpose: a person who quits the terminal client (`/quit`, or a bot
whose input ends) is gone from the room at once, as the others see it, instead
of being listed as reconnecting for the resume grace (docs/protocol.md, "Close
codes": the client closes with 1000)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.terminal import Terminal, host, room, server  # noqa: E402,F401  (server: a fixture)


def test_quit_leaves_at_once(server):
    with Terminal(room(server, "quits"), "--name", "alice") as alice:
        alice.read_until(r"welcome to quits, alice", 10)
        with Terminal(room(server, "quits"), "--name", "bob") as bob:
            bob.read_until(r"welcome to quits, bob", 10)
            alice.read_until(r"\+ bob arrived", 5)
            before = len(alice.text)
            bob.type("/quit")
            assert bob.reap(5) == 0, bob.text
        # Far within the resume grace (60 s): bob left, and was never "away".
        alice.read_until(r"bob left", 5, since=before)
        assert "reconnecting" not in alice.text[before:]


def test_a_bot_whose_input_ends_leaves_at_once(server):
    with Terminal(room(server, "pipes"), "--name", "alice") as alice:
        alice.read_until(r"welcome to pipes, alice", 10)
        before = len(alice.text)
        bot = host(server, "pipes")  # a pipe named alice-2 here; its input is closed below
        bot.stdin.close()
        assert bot.wait(timeout=10) == 0
        alice.read_until(r"alice-2 left", 5, since=before)
