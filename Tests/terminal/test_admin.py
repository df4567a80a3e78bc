"""`cowatch admin` as an operator reads it: without a token it says where the
token goes; answers are lines (rooms one a line, bans with their end as a UTC
date), `--json` gives the server's JSON; an address that is not the admin API
is said to be so; `cowatch --version` and the server's first line and
/metrics name the version; a member's arrival is logged with the address to
ban. (Over https:// through nginx: Tests/deploy/test_tls_clients.py.)

COWATCH_BIN names the cowatch binary; each test starts its own server.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import Serve, wait_until  # noqa: E402
from support.operator import TOKEN, admin_token_file, run_admin  # noqa: E402
from support.terminal import BIN, bot  # noqa: E402


@pytest.fixture
def server():
    with admin_token_file() as token_file:
        s = Serve("--store", "memory", "--shutdown-grace", "0", "--admin-token-file", token_file)
        yield s
        s.stop()


def admin(server, *words, token=TOKEN):
    return run_admin(server.port, *words, token=token)


def test_without_a_token_it_says_where_the_token_goes(server):
    result = admin(server, "rooms", token=None)
    assert result.returncode != 0
    assert "--token-file" in result.stderr and "COWATCH_ADMIN_TOKEN" in result.stderr, result.stderr
    assert "{" not in result.stdout + result.stderr


def test_a_wrong_token_is_said_in_words(server):
    result = admin(server, "rooms", token="not-the-token-at-all")
    assert result.returncode != 0
    assert "the server answered 401: the admin API needs the operator's token" in result.stderr, result.stderr


def test_answers_are_lines_to_read_and_json_on_request(server):
    alice = bot(server, "movie-night", "alice")
    try:
        rooms = admin(server, "rooms")
        assert rooms.returncode == 0, rooms.stderr
        assert re.search(r"^movie-night  1/1 connected  \w+", rooms.stdout, re.M), rooms.stdout
        banned = admin(server, "ban", "203.0.113.9", "--minutes", "90")
        assert banned.returncode == 0 and "banned: 203.0.113.9" in banned.stdout, banned.stdout + banned.stderr
        bans = admin(server, "bans")
        assert re.search(r"^203\.0\.113\.9  until \d{4}-\d\d-\d\d \d\d:\d\d UTC$", bans.stdout, re.M), bans.stdout
        raw = admin(server, "bans", "--json")
        assert json.loads(raw.stdout)["bans"][0]["address"] == "203.0.113.9"
        missing = admin(server, "close", "no-such-room")
        assert missing.returncode != 0 and "the server answered 404: no room no-such-room" in missing.stderr
    finally:
        alice.kill()


def test_an_address_that_is_not_the_admin_api_is_said_to_be_so(server):
    # The media of a room is not the admin API: a plain web server's page.
    from support.media_server import MediaServer
    with tempfile.TemporaryDirectory() as folder, MediaServer(Path(folder)) as media:
        port = int(media.url("x").split(":")[2].split("/")[0])
        result = subprocess.run([BIN, "admin", "--server", f"http://127.0.0.1:{port}", "rooms"], capture_output=True,
                                text=True, timeout=20, env=dict(os.environ, COWATCH_ADMIN_TOKEN=TOKEN))
    assert result.returncode != 0
    assert "something other than Cowatch's admin API" in result.stderr, result.stderr
    assert "<" not in result.stdout + result.stderr


def test_the_version_is_said_everywhere(server):
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert f"version={version}" in server.log()
    assert re.search(r"level=notice .*msg=\"serving on http://127\.0\.0\.1:\d+/\"", server.log()), server.log()
    metrics = urllib.request.urlopen(server.url("/metrics"), timeout=5).read().decode()
    assert f'cowatch_build_info{{version="{version}"}} 1' in metrics


def test_a_members_arrival_is_logged_with_the_address_to_ban(server):
    alice = bot(server, "logged", "alice")
    try:
        wait_until(lambda: re.search(r'msg="member arrived".* address=127\.0\.0\.1 .*name=alice', server.log()), 10,
                   "the arrival logged with its address")
    finally:
        alice.kill()


def test_data_files_are_readable_by_the_servers_user_alone():
    # Started by hand (no systemd UMask), with a permissive umask: the store, its
    # WAL (resume tokens) and the data folder are still 0600 / 0700.
    with tempfile.TemporaryDirectory() as parent:
        data = os.path.join(parent, "data")
        old = os.umask(0o022)
        try:
            with Serve("--data-dir", data, "--shutdown-grace", "0", start=False) as s:
                alice = bot(s, "kept", "alice")
                try:
                    wait_until(lambda: any(name.endswith("-wal") for name in os.listdir(data)), 10, "the store's WAL")
                finally:
                    alice.kill()
                modes = {name: os.stat(os.path.join(data, name)).st_mode & 0o777 for name in os.listdir(data)}
                assert os.stat(data).st_mode & 0o777 == 0o700, oct(os.stat(data).st_mode)
                assert modes and all(mode & 0o077 == 0 for mode in modes.values()), {k: oct(v) for k, v in modes.items()}
        finally:
            os.umask(old)
