"""`cowatch bridge` between a real Matrix homeserver and a real Cowatch server:
Synapse (PyPI's matrix-synapse), started here on a loopback port with a
configuration written here (SQLite, registration by shared secret, no
federation listener, a tight message rate limit for the bot), people
registered here and driven over the client-server API with plain HTTP, and a
WebSocket member of the room (Python `websockets`, sharing no code with the
bridge).

One bridge process serves two Matrix rooms from one config file: the
invite-only #movies:cowatch.test with the room "movies", and the encrypted
#secret:cowatch.test with the room "secret", which the bridge must refuse in
words. The bot logs in with a password. The tests run in order and share them;
the last one restarts Synapse under the bridge.

COWATCH_BIN names the cowatch binary; SYNAPSE_PYTHON the Python that has
matrix-synapse (default: this one).
"""
import hashlib
import hmac
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from support.bridge import BridgeProcess, Member, chat_from, cowatch_server, stop_world  # noqa: E402
from support.harness import free_port, wait_until  # noqa: E402

PYTHON = os.environ.get("SYNAPSE_PYTHON", sys.executable)
SERVER_NAME = "cowatch.test"
SECRET = "registration-secret-of-the-tests"
BOT, BOT_PASSWORD = "@cowatch:cowatch.test", "bot-password-never-logged"
# Synapse's message rate for everyone but the people of the tests (exempted by
# the admin API): the bridge, which says more at once, meets M_LIMIT_EXCEEDED.
RC_PER_SECOND, RC_BURST = 1, 4


class Synapse:
    """Synapse in the foreground on one loopback port, client API only."""

    def __init__(self, directory):
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.log = open(os.path.join(directory, "synapse.log"), "ab")
        self.config = os.path.join(directory, "homeserver.yaml")
        key = os.path.join(directory, "signing.key")
        subprocess.run([PYTHON, "-c", "import sys; from signedjson.key import generate_signing_key, write_signing_keys; "
                        "write_signing_keys(open(sys.argv[1], 'w'), [generate_signing_key('a_test')])", key], check=True)
        with open(self.config, "w") as f:
            f.write(f"""# Written by Tests/bridge/test_matrix.py
server_name: "{SERVER_NAME}"
pid_file: "{directory}/homeserver.pid"
listeners:
  - port: {self.port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{directory}/homeserver.db"
media_store_path: "{directory}/media"
signing_key_path: "{key}"
registration_shared_secret: "{SECRET}"
enable_registration: false
report_stats: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
url_preview_enabled: false
enable_metrics: false
rc_message:
  per_second: {RC_PER_SECOND}
  burst_count: {RC_BURST}
rc_login:
  address: {{per_second: 100, burst_count: 100}}
  account: {{per_second: 100, burst_count: 100}}
  failed_attempts: {{per_second: 100, burst_count: 100}}
rc_joins:
  local: {{per_second: 100, burst_count: 100}}
rc_invites:
  per_room: {{per_second: 100, burst_count: 100}}
  per_user: {{per_second: 100, burst_count: 100}}
""")

    def start(self):
        self.process = subprocess.Popen([PYTHON, "-m", "synapse.app.homeserver", "-c", self.config],
                                        stdout=self.log, stderr=subprocess.STDOUT, cwd=self.directory)

        def up():
            if self.process.poll() is not None:
                raise AssertionError("synapse exited: " + self.tail())
            try:
                with urllib.request.urlopen(self.url + "/_matrix/client/versions", timeout=1) as answer:
                    return answer.status == 200
            except OSError:
                return False
        wait_until(up, 90, "synapse answering")

    def tail(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-40:])

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)

    def call(self, method, path, body=None, token=None):
        """One request; returns (status, JSON answer)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def register(self, localpart, password, admin=False):
        """A user, by the shared secret (Synapse's admin registration API)."""
        _, answer = self.call("GET", "/_synapse/admin/v1/register")
        nonce = answer["nonce"]
        mac = hmac.new(SECRET.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), localpart.encode(), password.encode(), b"admin" if admin else b"notadmin"]))
        status, answer = self.call("POST", "/_synapse/admin/v1/register", {
            "nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac.hexdigest()})
        assert status == 200, answer
        return answer["access_token"]


class Person:
    """A Matrix user driven by the test over the client-server API."""

    def __init__(self, hs, localpart, display_name, admin_token=None):
        self.hs = hs
        self.id = f"@{localpart}:{SERVER_NAME}"
        self.token = hs.register(localpart, localpart + "-password", admin=admin_token is None)
        self.txn = 0
        self.ok("PUT", f"/_matrix/client/v3/profile/{q(self.id)}/displayname", {"displayname": display_name})
        # People of the tests speak as fast as they like; the bot keeps the limit.
        self.ok("POST", f"/_synapse/admin/v1/users/{q(self.id)}/override_ratelimit",
                {"messages_per_second": 0, "burst_count": 0}, token=admin_token or self.token)

    def ok(self, method, path, body=None, token=None):
        status, answer = self.hs.call(method, path, body, token or self.token)
        assert status == 200, f"{method} {path}: {status} {answer}"
        return answer

    def send(self, room, content):
        self.txn += 1
        return self.ok("PUT", f"/_matrix/client/v3/rooms/{q(room)}/send/m.room.message/t{self.txn}-{time.time()}", content)["event_id"]

    def say(self, room, text):
        return self.send(room, {"msgtype": "m.text", "body": text})

    def membership(self, room, user):
        status, answer = self.hs.call("GET", f"/_matrix/client/v3/rooms/{q(room)}/state/m.room.member/{q(user)}", token=self.token)
        return answer.get("membership") if status == 200 else None

    def messages(self, room):
        """The room's latest events, oldest first."""
        answer = self.ok("GET", f"/_matrix/client/v3/rooms/{q(room)}/messages?dir=b&limit=200")
        return list(reversed(answer["chunk"]))

    def bot_lines(self, room, msgtype=None):
        return [e["content"] for e in self.messages(room) if e["type"] == "m.room.message" and e["sender"] == BOT
                and (msgtype is None or e["content"].get("msgtype") == msgtype)]

    def wait_bot(self, room, predicate, timeout, what):
        def found():
            return next((c for c in self.bot_lines(room) if predicate(c)), None)
        try:
            return wait_until(found, timeout, what, interval=0.2)
        except AssertionError as error:
            said = "\n".join(json.dumps(c)[:300] for c in self.bot_lines(room)[-20:])
            raise AssertionError(f"{error}; the bot said:\n{said}") from None


def q(text):
    return urllib.parse.quote(text, safe="")


class Bridge(BridgeProcess):
    def __init__(self, directory, hs, server):
        self.state = os.path.join(directory, "state", "matrix-state.json")
        super().__init__(directory, f"""# Written by Tests/bridge/test_matrix.py
server = ws://127.0.0.1:{server.port}
homeserver = {hs.url}
matrix-user = {BOT}
matrix-password = {BOT_PASSWORD}
matrix-state-file = {self.state}
matrix-sync-timeout = 5
matrix-reconnect-max = 2
matrix-lines-per-second = 20
matrix-burst = 20
room-reconnect-max = 2
connect-timeout = 5
log-level = debug
owner-key-directory = {directory}/owner-keys

[pair]
matrix = "#movies:{SERVER_NAME}"
room = movies

[pair]
matrix = "#secret:{SERVER_NAME}"
room = secret
""", private=True)


class World:
    hs = server = bridge = None


@pytest.fixture(scope="module")
def world():
    status = subprocess.run([PYTHON, "-c", "import synapse"], capture_output=True)
    if status.returncode != 0:
        pytest.fail("matrix-synapse is missing: commands/setup installs it (pip install matrix-synapse)")
    directory = tempfile.mkdtemp(prefix="cowatch-matrix-")
    w = World()
    try:
        w.hs = Synapse(directory)
        w.hs.start()
        w.hs.register("cowatch", BOT_PASSWORD)
        w.ann = Person(w.hs, "ann", "Sam")
        # Another person with ann's display name.
        w.bob = Person(w.hs, "bob", "Sam", admin_token=w.ann.token)
        # Invite-only, so the bot joins when invited, not before.
        w.movies = w.ann.ok("POST", "/_matrix/client/v3/createRoom", {
            "preset": "private_chat", "room_alias_name": "movies", "invite": [w.bob.id]})["room_id"]
        w.bob.ok("POST", f"/_matrix/client/v3/join/{q(w.movies)}", {})
        w.secret = w.ann.ok("POST", "/_matrix/client/v3/createRoom", {
            "preset": "private_chat", "room_alias_name": "secret", "invite": [BOT],
            "initial_state": [{"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]})["room_id"]
        w.other = w.ann.ok("POST", "/_matrix/client/v3/createRoom", {"preset": "private_chat"})["room_id"]
        w.server = cowatch_server(directory)
        w.server.start()
        w.viewer = Member(w.server, "movies", "viewer")
        w.bridge = Bridge(directory, w.hs, w.server)
        yield w
    finally:
        stop_world(w.bridge, w.server, w.hs, shown=80)
        if w.hs:
            print("--- synapse log (tail) ---\n" + w.hs.tail())
        shutil.rmtree(directory, ignore_errors=True)


def test_the_bot_joins_a_configured_room_it_is_invited_to_and_declines_others(world):
    ann = world.ann
    # Started before the invite: the room did not let it in, and it said so.
    wait_until(lambda: "it joins when invited" in world.bridge.running(), 60, "the bridge waiting for an invite")
    ann.ok("POST", f"/_matrix/client/v3/rooms/{q(world.movies)}/invite", {"user_id": BOT})
    ann.ok("POST", f"/_matrix/client/v3/rooms/{q(world.other)}/invite", {"user_id": BOT})
    wait_until(lambda: ann.membership(world.movies, BOT) == "join", 30, "the bot in #movies")
    wait_until(lambda: ann.membership(world.other, BOT) == "leave", 30, "the invite to another room declined")
    ann.wait_bot(world.movies, lambda c: c.get("msgtype") == "m.notice" and "Cowatch room movies" in c["body"], 30,
                 "the room's link posted as a notice")


def test_the_login_is_kept_privately_and_the_password_never_logged(world):
    wait_until(lambda: os.path.exists(world.bridge.state), 10, "the state file")
    assert stat.S_IMODE(os.stat(world.bridge.state).st_mode) == 0o600
    with open(world.bridge.state) as f:
        state = json.load(f)
    assert state["accessToken"] and state["since"]
    assert BOT_PASSWORD not in world.bridge.text()
    assert state["accessToken"] not in world.bridge.text()


def test_slash_and_prefix_commands_from_matrix_drive_the_room(world):
    ann, viewer = world.ann, world.viewer
    since = viewer.mark()
    ann.say(world.movies, "/watch https://example.org/a.mp4 Episode 1")
    viewer.wait_for(lambda e: e["type"] == "state" and e["session"]
                    and "example.org/a.mp4" in json.dumps(e["session"]), 20, since)
    ann.wait_bot(world.movies, lambda c: c.get("msgtype") == "m.notice" and 'Sam shared "Episode 1"' in c["body"], 20,
                 "the shared video told as a notice")
    ann.say(world.movies, "!play")
    viewer.wait_for(lambda e: e["type"] == "state" and e["playback"]["status"] == "playing", 20, since)
    ann.say(world.movies, "!who")
    reply = ann.wait_bot(world.movies, lambda c: c["body"].startswith("Sam: ") and "here" in c["body"], 20, "!who answered")
    ann.wait_bot(world.movies, lambda c: "viewer" in c["body"] and c["msgtype"] == "m.notice", 20, "!who naming viewer")
    # Addressed to the person who asked, as a mention their client shows.
    assert reply["msgtype"] == "m.notice"
    assert reply.get("m.mentions", {}).get("user_ids") == [ann.id]
    # A refusal is a notice too, as deploy/README.md says (bots never answer one).
    ann.say(world.movies, "!frobnicate now")
    refusal = ann.wait_bot(world.movies, lambda c: "unknown command !frobnicate" in c["body"], 20, "the refusal")
    assert refusal["msgtype"] == "m.notice", refusal


def test_chat_goes_both_ways_and_edits_and_redactions_are_not_replayed(world):
    ann, viewer = world.ann, world.viewer
    since = viewer.mark()
    first = ann.say(world.movies, "hello from matrix")
    hello = viewer.wait_for(chat_from("Sam", "hello from matrix"), 20, since)
    ann.send(world.movies, {"msgtype": "m.text", "body": "* hello again, edited",
                            "m.new_content": {"msgtype": "m.text", "body": "hello again, edited"},
                            "m.relates_to": {"rel_type": "m.replace", "event_id": first}})
    ann.ok("PUT", f"/_matrix/client/v3/rooms/{q(world.movies)}/redact/{q(first)}/r{time.time()}", {})
    ann.send(world.movies, {"msgtype": "m.notice", "body": "a bot's notice"})
    ann.send(world.movies, {"msgtype": "m.emote", "body": "waves"})
    assert viewer.wait_for(chat_from("Sam", "waves"), 20, since)["me"] is True
    texts = [e["text"] for _, e in viewer.matching(lambda e: e["type"] == "chat" and e["from"] == hello["from"], since)]
    assert texts == ["hello from matrix", "waves"]

    viewer.send("hello matrix")
    line = ann.wait_bot(world.movies, lambda c: c["body"] == "<viewer> hello matrix", 20, "room chat said in Matrix")
    assert line["msgtype"] == "m.text"
    # The room's copy of what a Matrix person said is not said back.
    assert not [c for c in ann.bot_lines(world.movies) if "hello from matrix" in c["body"]]


def test_two_people_with_one_display_name_are_two_members(world):
    ann, bob, viewer = world.ann, world.bob, world.viewer
    since = viewer.mark()
    ann.say(world.movies, "ann speaking")
    bob.say(world.movies, "bob speaking")
    from_ann = viewer.wait_for(lambda e: e["type"] == "chat" and e["text"] == "ann speaking", 20, since)
    from_bob = viewer.wait_for(lambda e: e["type"] == "chat" and e["text"] == "bob speaking", 20, since)
    assert from_ann["from"] != from_bob["from"]
    assert from_ann["name"] != from_bob["name"]


def test_the_homeserver_rate_limit_is_waited_out(world):
    ann, viewer = world.ann, world.viewer
    lines = [f"burst line {n}" for n in range(RC_BURST * 3)]
    for line in lines:
        viewer.send(line)

    def all_said():
        said = [c["body"] for c in ann.bot_lines(world.movies) if c["body"].startswith("<viewer> burst line")]
        return said if len(said) >= len(lines) else None
    said = wait_until(all_said, 60, "every line said in Matrix despite the rate limit", interval=0.3)
    assert said == ["<viewer> " + line for line in lines], "each once, in order"
    assert "limits the bot's rate; waiting" in world.bridge.text()


def test_an_encrypted_room_is_refused_in_words(world):
    ann = world.ann
    wait_until(lambda: ann.membership(world.secret, BOT) == "join", 30, "the bot in the encrypted room")
    notice = ann.wait_bot(world.secret, lambda c: "end-to-end encrypted" in c["body"], 30, "the refusal in the room")
    assert notice["msgtype"] == "m.notice"
    assert "end-to-end encrypted" in world.bridge.text()
    ann.send(world.secret, {"msgtype": "m.text", "body": "plain words in a secret room"})
    ann.say(world.movies, "sentinel after the secret")
    world.viewer.wait_for(chat_from("Sam", "sentinel after the secret"), 20)
    assert len(ann.bot_lines(world.secret)) == 1, "said once, and nothing else there"


def test_a_restarted_homeserver_replays_nothing_and_loses_nothing(world):
    ann, viewer, hs = world.ann, world.viewer, world.hs
    since = viewer.mark()
    ann.say(world.movies, "before the restart")
    viewer.wait_for(chat_from("Sam", "before the restart"), 20, since)
    mark = len(world.bridge.text())
    hs.stop()
    wait_until(lambda: "syncing with the Matrix homeserver failed" in world.bridge.text()[mark:], 30, "the bridge noticing")
    viewer.send("said while the homeserver was away")
    hs.start()
    ann.say(world.movies, "after the restart")
    viewer.wait_for(chat_from("Sam", "after the restart"), 60, since)
    ann.wait_bot(world.movies, lambda c: c["body"] == "<viewer> said while the homeserver was away", 60,
                 "the room's line from the outage said in Matrix")
    texts = [e["text"] for _, e in viewer.matching(lambda e: e["type"] == "chat" and e["name"].startswith("Sam"), since)]
    assert texts == ["before the restart", "after the restart"]
    said = [c for c in ann.bot_lines(world.movies) if c["body"] == "<viewer> said while the homeserver was away"]
    assert len(said) == 1
