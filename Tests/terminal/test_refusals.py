"""Every refusal in the server's own words, read by `cowatch connect` and by
`cowatch watch`: an address the operator banned, a new room on a draining
server, a locked room, a room that asks a password (none given, a wrong one) and
a full room. Each client exits non-zero with the words and nothing of a CORS
problem or of libwebsockets ("HS:", "E:").

The upgrade refusals (the ban, the drain) are read by asking again
(Sources/CowatchClient/PlainHTTP.swift); a client that sent an origin it made up
was told "pages on ... may not open connections" instead. COWATCH_BIN names the
cowatch binary; each test starts its own server on loopback.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import Serve  # noqa: E402
from support.operator import admin_token_file, admin as run_admin  # noqa: E402
from support.terminal import BIN, bot, type_into  # noqa: E402


@pytest.fixture
def server():
    with admin_token_file() as token_file:
        # One member a room: the owner fills it. Room bans are by name here (every
        # client is 127.0.0.1); the operator's ban is by address.
        s = Serve("--store", "memory", "--shutdown-grace", "0", "--address-bans", "false",
                  "--admin-token-file", token_file, "--max-members", "1")
        yield s
        s.stop()


def admin(server, *words):
    return run_admin(server.port, *words)


def connect(server, room, *extra):
    """`cowatch connect` once, its input empty: (exit status, what it said)."""
    result = subprocess.run([BIN, "connect", f"ws://127.0.0.1:{server.port}/rooms/{room}", "--name", "newcomer",
                             *extra], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, HOME=tempfile.mkdtemp()))
    return result.returncode, result.stdout + result.stderr


def watch(server, room, *extra):
    """`cowatch watch` with a headless mpv, once: (exit status, what it said)."""
    home = tempfile.mkdtemp()
    try:
        result = subprocess.run([BIN, "watch", f"ws://127.0.0.1:{server.port}/rooms/{room}", "--name", "viewer",
                                 "--mpv-option", "vo=null", "--mpv-option", "ao=null", *extra],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, HOME=home, TMPDIR=home + "/"))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return result.returncode, result.stdout + result.stderr


CLIENTS = [pytest.param(connect, id="connect"),
           pytest.param(watch, id="watch",
                        marks=pytest.mark.skipif(shutil.which("mpv") is None,
                                                 reason="mpv is not installed (commands/setup installs it)"))]


def told(process, word, lines=20):
    """Reads a bot pipe's lines until one holds `word`."""
    for _ in range(lines):
        line = process.stdout.readline().decode()
        if word in line:
            return line
    raise AssertionError(f"no line with {word!r}")


def refused(client, server, room, words, *extra):
    code, said = client(server, room, *extra)
    assert code != 0, said
    assert words in said, said
    for wrong in ("may not open connections", "HS:", "E: "):
        assert wrong not in said, said
    return said


@pytest.mark.parametrize("client", CLIENTS)
def test_an_address_the_operator_banned(server, client):
    admin(server, "ban", "127.0.0.1")
    refused(client, server, "anything", "the server answered 403: your address may not connect to this server")


@pytest.mark.parametrize("client", CLIENTS)
def test_a_new_room_on_a_draining_server(server, client):
    alice = bot(server, "open-before", "alice")
    try:
        admin(server, "drain", "on")
        refused(client, server, "made-while-draining",
                "the server answered 503: this server is not taking new rooms right now; existing rooms are open")
    finally:
        alice.kill()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_locked_room(server, client):
    alice = bot(server, "locked", "alice")
    try:
        type_into(alice, "/lock")
        told(alice, "locked")
        refused(client, server, "locked", "this room is locked: only an invite link from a host lets you in")
    finally:
        alice.kill()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_room_with_a_password(server, client):
    alice = bot(server, "guarded", "alice")
    try:
        type_into(alice, "/password sesame-street-42")
        told(alice, "password")
        refused(client, server, "guarded", "this room asks for a password")
        refused(client, server, "guarded", "wrong password", "--password", "not-the-one")
    finally:
        alice.kill()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_full_room(server, client):
    alice = bot(server, "crowded", "alice")
    try:
        refused(client, server, "crowded", "room crowded is full (1 members)")
    finally:
        alice.kill()


def test_a_closed_port_is_said_to_refuse_and_where():
    from support.harness import free_port
    port = free_port()
    result = subprocess.run([BIN, "connect", f"ws://127.0.0.1:{port}/rooms/nowhere"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=30, env=dict(os.environ, HOME=tempfile.mkdtemp()))
    assert result.returncode != 0
    assert f"nothing accepts connections at 127.0.0.1:{port} (connection refused)" in result.stderr, result.stderr
    assert "Unable to connect" not in result.stderr, result.stderr
