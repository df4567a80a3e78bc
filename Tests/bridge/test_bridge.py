"""`cowatch bridge` between a real IRC server and a real Cowatch server: Debian's
ngircd, started here on loopback ports with its own config in a temporary
directory (in the foreground, as nobody when the test runs as root), a plain
IRC client written here, and a WebSocket member of the room (Python
`websockets`, sharing no code with the bridge).

One bridge process serves three pairs from one config file: #cowatch on plain
IRC with the room "lobby", #second over TLS (ircs://, a throwaway certificate)
with the room "second", and #third with the room "third", which the bridge
founds. The tests run in order and share them; the last ones restart ngircd and
then the Cowatch server under the bridge.

COWATCH_BIN names the cowatch binary; NGIRCD the IRC server (/usr/sbin/ngircd);
COWATCH_TEST_PORTS (such as 7900-7999), when set, the range the servers' ports
are taken from, rather than any free port.
"""
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from support.bridge import BridgeProcess, Member, Received, chat_from, cowatch_server, stop_world  # noqa: E402
from support.harness import free_port, wait_until  # noqa: E402
NGIRCD = os.environ.get("NGIRCD", "/usr/sbin/ngircd")

# The pace the test's bridge keeps: to the room, per person (under the server's
# 20 lines a second and 40 at once), and to the IRC server.
ROOM_RATE, ROOM_BURST = 15, 20
IRC_RATE, IRC_BURST = 5, 5
# The bridge connects twice, over plain IRC and over TLS, with one nick: one of
# the two connections finds it taken and goes on as cowatch_.
BOT = "cowatch_?"


class IRCServer:
    """ngircd in the foreground on two loopback ports: plain and TLS."""

    def __init__(self, directory):
        self.directory = directory
        self.port, self.tls_port = free_port(), free_port()
        self.process = None
        self.log = open(os.path.join(directory, "ngircd.log"), "wb")
        self.cert = os.path.join(directory, "cert.pem")
        key = os.path.join(directory, "key.pem")
        dh = os.path.join(directory, "dh.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", self.cert,
                        "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
        # Made here in a moment; ngircd (GnuTLS) would take seconds at every start.
        subprocess.run(["openssl", "dhparam", "-dsaparam", "-out", dh, "2048"], check=True, capture_output=True)
        self.config = os.path.join(directory, "ngircd.conf")
        with open(self.config, "w") as f:
            f.write(f"""[Global]
Name = irc.cowatch.test
Info = Cowatch bridge tests
AdminInfo1 = tests
AdminInfo2 = loopback
AdminEMail = nobody@example.org
Listen = 127.0.0.1
Ports = {self.port}
MotdPhrase = "bridge tests"
[Limits]
MaxConnectionsIP = 0
MaxNickLength = 30
[Options]
DNS = no
Ident = no
PAM = no
[SSL]
CertFile = {self.cert}
KeyFile = {key}
DHFile = {dh}
Ports = {self.tls_port}
[Operator]
Name = paster
Password = pastepass
""")
        for name in (self.config, self.cert, key, dh):
            os.chmod(name, 0o644)
        os.chmod(directory, 0o755)

    def start(self):
        command = [NGIRCD, "-n", "-f", self.config]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "nobody", "--"] + command
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                socket.create_connection(("127.0.0.1", self.tls_port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("ngircd did not start: " + open(self.log.name).read())

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=10)


class IRCClient(Received):
    """A person on IRC: registers, joins, and keeps every line received, with
    when it arrived; answers PING."""

    def __init__(self, server, nick, channels=("#cowatch",), oper=False):
        super().__init__(nick)
        self.nick = nick
        self.socket = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        # Connected: the reader waits as long as the channel stays quiet.
        self.socket.settimeout(None)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.send(f"NICK {nick}", f"USER {nick} 0 * :{nick} of the tests")
        self.wait_for(rf"^:\S+ 001 {nick} ", 10)
        if oper:
            # Relaxed flood protection (user mode F), so that a paste reaches
            # the channel at once; the bridge keeps ngircd's usual limits.
            self.send("OPER paster pastepass", f"MODE {nick} +F")
            self.wait_for(rf"MODE {nick} :?\+F", 5)
        for channel in channels:
            self.send(f"JOIN {channel}")
            self.wait_for(rf"^:\S+ 366 {nick} {re.escape(channel)} ", 5)

    def _read(self):
        pending = b""
        while True:
            try:
                chunk = self.socket.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            *complete, pending = pending.split(b"\r\n")
            now = time.time()
            for raw in complete:
                line = raw.decode("utf-8", "replace")
                if line.startswith("PING "):
                    self.send("PONG " + line[5:])
                self.keep(line, at=now)

    def send(self, *lines):
        self.socket.sendall(b"".join(line.encode() + b"\r\n" for line in lines))

    def say(self, channel, text):
        self.send(f"PRIVMSG {channel} :{text}")

    def seen(self, pattern, since=0):
        return self.matching(lambda line: re.search(pattern, line), since)

    def wait_for(self, pattern, timeout, since=0):
        return self.first(lambda line: re.search(pattern, line), timeout, since, repr(pattern), str, shown=40)

    def close(self):
        try:
            self.send("QUIT :done")
        except OSError:
            pass
        self.socket.close()


class Bridge(BridgeProcess):
    def __init__(self, directory, irc, server):
        super().__init__(directory, f"""# Written by Tests/bridge/test_bridge.py
server = ws://127.0.0.1:{server.port}
nick = cowatch
irc-lines-per-second = {IRC_RATE}
irc-burst = {IRC_BURST}
room-lines-per-second = {ROOM_RATE}
room-burst = {ROOM_BURST}
irc-reconnect-max = 2
room-reconnect-max = 2
# debug: the log says when a line from the room is not relayed, which the
# restart test waits on.
log-level = debug
# Where the key of a room the bridge founds goes (#third's room "third").
owner-key-directory = {directory}/owner-keys

[pair]
irc = irc://127.0.0.1:{irc.port}/#cowatch
room = lobby

[pair]
irc = ircs://127.0.0.1:{irc.tls_port}/#second
tls-ca-file = {irc.cert}
room = second

[pair]
irc = irc://127.0.0.1:{irc.port}/#third
room = third
""")

    def mark(self):
        return len(self.text())

    def wait_log(self, *patterns, timeout, since=0):
        """Waits for a line of the bridge's log, after offset `since`, matching
        every one of `patterns`."""
        def found():
            return next((line for line in self.text()[since:].splitlines()
                         if all(re.search(p, line) for p in patterns)), None)
        return wait_until(found, timeout, f"bridge log line matching {patterns}")


class World:
    irc = server = bridge = None


@pytest.fixture(scope="module")
def world():
    if not os.path.exists(NGIRCD):
        pytest.fail(f"{NGIRCD} is missing: commands/setup installs ngircd")
    directory = tempfile.mkdtemp(prefix="cowatch-bridge-")
    w = World()
    try:
        w.irc = IRCServer(directory)
        w.irc.start()
        w.server = cowatch_server(directory)
        w.server.start()
        # The rooms' first members, and so their hosts, before the bridge comes.
        w.dana = Member(w.server, "lobby", "dana")
        w.erin = Member(w.server, "second", "erin")
        w.ann = IRCClient(w.irc, "ann", channels=("#cowatch", "#second"))
        w.bridge = Bridge(directory, w.irc, w.server)
        w.ann.wait_for(rf"^:{BOT}!\S+ JOIN :?#cowatch", 15)
        w.ann.wait_for(rf"^:{BOT}!\S+ JOIN :?#second", 15)
        yield w
    finally:
        stop_world(w.bridge, w.server, w.irc)
        shutil.rmtree(directory, ignore_errors=True)


def test_the_bridge_posts_the_rooms_link_when_it_joins(world):
    link = f"http://127.0.0.1:{world.server.port}/rooms/lobby"
    world.ann.wait_for(rf"^:{BOT}!\S+ NOTICE #cowatch :Cowatch room lobby: {re.escape(link)} .*!help", 5)
    world.ann.wait_for(rf"^:{BOT}!\S+ NOTICE #second :Cowatch room second: ", 5)


def test_commands_typed_in_the_channel_change_the_room(world):
    ann, dana = world.ann, world.dana
    since = dana.mark()
    ann.say("#cowatch", "!watch https://example.org/a.mp4 Episode 1")
    state = dana.wait_for(lambda e: e["type"] == "state" and e["session"]
                          and e["session"]["activity"]["title"] == "Episode 1", 10, since)
    assert state["playback"]["status"] == "paused"
    ann.wait_for(r"NOTICE #cowatch :ann shared \"Episode 1\" · http://", 5)

    ann.say("#cowatch", "!play")
    dana.wait_for(lambda e: e["type"] == "state" and e["playback"]["status"] == "playing", 10, since)
    ann.say("#cowatch", "!seek 1:23")
    dana.wait_for(lambda e: e["type"] == "state" and abs(e["playback"]["position"] - 83) < 0.01, 10, since)
    irc_mark = ann.mark()
    ann.say("#cowatch", "!pause")
    dana.wait_for(lambda e: e["type"] == "state" and e["playback"]["status"] == "paused"
                  and e["playback"]["position"] >= 83, 10, since)
    ann.wait_for(r"NOTICE #cowatch :ann paused at 0:01:2\d", 5, irc_mark)

    # The table's own words for a bad command, written with the channel's prefix.
    ann.say("#cowatch", "!seek soon")
    ann.wait_for(r"NOTICE #cowatch :ann: !seek: .*\(usage: !seek <time>\)", 5, irc_mark)
    ann.say("#cowatch", "!frobnicate now")
    ann.wait_for(r"NOTICE #cowatch :ann: unknown command !frobnicate \(try !help\)", 5, irc_mark)
    # What the room answers one person is said in the channel, to them.
    ann.say("#cowatch", "!status")
    ann.wait_for(r"NOTICE #cowatch :ann: .*Episode 1", 5, irc_mark)
    ann.say("#cowatch", "!help")
    ann.wait_for(r"NOTICE #cowatch :ann: Cowatch commands, in the room: !help ", 5, irc_mark)
    assert not ann.seen(r"NOTICE #cowatch :.*!ready", irc_mark)
    assert not dana.matching(lambda e: e["type"] == "chat" and "frobnicate" in e["text"], since)


def test_a_room_the_bridge_founds_has_its_owner_key_in_a_private_file(world):
    # Nobody was in "third" before the bridge: its watcher founded it.
    line = world.bridge.wait_log(r"its owner key is kept in", r"room=third", timeout=15)
    path = re.search(r"owner_key_file=(\S+)", line).group(1)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as f:
        keys = [text for text in f.read().splitlines() if text and not text.startswith("#")]
    assert len(keys) == 1
    assert keys[0] not in world.bridge.text(), "the key is in the file, not in the log"
    owner = Member(world.server, "third", "olga&owner=" + urllib.parse.quote(keys[0], safe=""))
    try:
        assert owner.welcome["you"]["owner"] is True
        assert owner.welcome["you"]["role"] == "host"
    finally:
        owner.close()


def test_chat_flows_both_ways_without_echoes(world):
    ann, dana = world.ann, world.dana
    since, irc_mark = dana.mark(), ann.mark()
    ann.say("#cowatch", "hello room")
    dana.wait_for(chat_from("ann", "hello room"), 10, since)
    ann.say("#cowatch", "\x01ACTION waves\x01")
    assert dana.wait_for(chat_from("ann", "waves"), 5, since)["me"] is True
    ann.say("#cowatch", "\x02bold\x02 and \x0304,01red\x03 text")
    dana.wait_for(chat_from("ann", "bold and red text"), 5, since)
    ann.say("#cowatch", "/not a command")
    dana.wait_for(chat_from("ann", "/not a command"), 5, since)

    dana.send("hello channel")
    ann.wait_for(rf"^:{BOT}!\S+ PRIVMSG #cowatch :<dana> hello channel$", 5, irc_mark)
    dana.send("/me claps")
    ann.wait_for(rf"^:{BOT}!\S+ PRIVMSG #cowatch :\* dana claps$", 5, irc_mark)
    # The room's copy of ann's own lines is not said back in the channel. The
    # bridge hears the room in order and says it in order, and dana's lines came
    # after ann's in the room: an echo would be in the channel before them.
    assert not ann.seen(r"<ann>|\* ann waves", irc_mark)


def test_the_second_pair_runs_over_tls(world):
    ann, erin = world.ann, world.erin
    since, irc_mark = erin.mark(), ann.mark()
    ann.say("#second", "over tls")
    erin.wait_for(chat_from("ann", "over tls"), 10, since)
    erin.send("and back")
    ann.wait_for(rf"^:{BOT}!\S+ PRIVMSG #second :<erin> and back$", 5, irc_mark)
    assert not ann.seen(r"PRIVMSG #cowatch :<erin>", irc_mark)
    assert "tls=true" in world.bridge.text()


def test_a_kick_in_the_room_applies_to_that_speaker_alone(world):
    ann, dana = world.ann, world.dana
    bob = IRCClient(world.irc, "bob")
    try:
        since = dana.mark()
        bob.say("#cowatch", "hi from bob")
        said = dana.wait_for(chat_from("bob", "hi from bob"), 10, since)
        bob_id = said["from"]
        assert bob_id != dana.wait_for(chat_from("ann"), 1)["from"]

        bob_mark, irc_mark = bob.mark(), ann.mark()
        dana.send("/kick bob spamming")
        left = dana.wait_for(lambda e: e["type"] == "participant-left" and e["id"] == bob_id, 5, since)
        assert left["reason"] == "kicked"
        bob.wait_for(r"NOTICE bob :You were removed from the room lobby: .*spamming", 5, bob_mark)
        ann.wait_for(r"NOTICE #cowatch :bob was kicked by dana \(spamming\)", 5, irc_mark)

        since = dana.mark()
        bob.say("#cowatch", "am I back?")
        bob.wait_for(r"NOTICE bob :Your lines are not relayed to the room lobby", 5, bob_mark)
        # Others from the channel, and the bridge itself, are not kept out with him.
        ann.say("#cowatch", "ann is still here")
        dana.wait_for(chat_from("ann", "ann is still here"), 10, since)
        dana.send("the room still talks")
        ann.wait_for(r"PRIVMSG #cowatch :<dana> the room still talks", 5, irc_mark)
        # The notice bob got is the bridge's answer to "am I back?": it was
        # handled, and not relayed.
        assert not dana.matching(lambda e: e["type"] == "chat" and e["text"] == "am I back?", since)
    finally:
        bob.close()


def test_200_lines_pasted_in_the_channel_arrive_paced_and_in_order(world):
    ann, dana = world.ann, world.dana
    carl = IRCClient(world.irc, "carl", oper=True)
    try:
        since, carl_mark, irc_mark = dana.mark(), carl.mark(), ann.mark()
        carl.send(*[f"PRIVMSG #cowatch :paste {n:03d}" for n in range(200)])
        wait_until(lambda: len(dana.matching(chat_from("carl"), since)) >= 200, 40, "200 lines in the room")
        got = dana.matching(chat_from("carl"), since)
        assert [e["text"] for _, e in got] == [f"paste {n:03d}" for n in range(200)]
        # One member all along: the room never closed carl's connection for its rate.
        assert len({e["from"] for _, e in got}) == 1
        span = got[-1][0] - got[0][0]
        assert span >= (200 - ROOM_BURST) / ROOM_RATE * 0.8, span
        assert not dana.matching(lambda e: e["type"] == "participant-left", since)
        assert not carl.seen(r"NOTICE carl :", carl_mark)

        # The other way: 30 lines at once from the room reach the channel at the
        # IRC pace, in order, and ngircd keeps the bridge connected.
        dana.send("\n".join(f"burst {n:02d}" for n in range(30)))
        wait_until(lambda: len(ann.seen(r"PRIVMSG #cowatch :<dana> burst \d\d$", irc_mark)) >= 30, 30,
                   "30 lines in the channel")
        lines = ann.seen(r"PRIVMSG #cowatch :<dana> burst \d\d$", irc_mark)
        assert [line.rsplit(" ", 1)[1] for _, line in lines] == [f"{n:02d}" for n in range(30)]
        assert lines[-1][0] - lines[0][0] >= (30 - IRC_BURST) / IRC_RATE * 0.8
        assert not ann.seen(rf"^:{BOT}!\S+ (QUIT|PART)", irc_mark)
    finally:
        carl.close()


def test_the_bridge_comes_back_when_ngircd_restarts(world):
    dana, bridge = world.dana, world.bridge
    world.ann.close()
    log_mark = bridge.mark()
    world.irc.stop()
    # The bridge has seen the plain link drop (and so left #cowatch) before the
    # room speaks: the line is then one it could not relay.
    bridge.wait_log("IRC connection lost", rf"server=127\.0\.0\.1:{world.irc.port}(\s|$)", timeout=10, since=log_mark)
    since = dana.mark()
    dana.send("said while IRC was down")
    bridge.wait_log("a line from the room not relayed", r"room=lobby(\s|$)", timeout=10, since=log_mark)
    # ann must be in #cowatch before the bridge comes back to see its JOIN and
    # the notice it posts on joining: the bridge is held still meanwhile, as
    # its reconnect could otherwise win the race.
    bridge.pause()
    try:
        world.irc.start()
        ann = world.ann = IRCClient(world.irc, "ann", channels=("#cowatch", "#second"))
    finally:
        bridge.resume()
    ann.wait_for(rf"^:{BOT}!\S+ JOIN :?#cowatch", 15)
    ann.wait_for(r"NOTICE #cowatch :\(1 line from the room not relayed while the bridge was away\)", 5)
    ann.say("#cowatch", "after the restart")
    dana.wait_for(chat_from("ann", "after the restart"), 10, since)
    irc_mark = ann.mark()
    dana.send("welcome back")
    ann.wait_for(r"PRIVMSG #cowatch :<dana> welcome back", 5, irc_mark)


def test_the_bridge_comes_back_when_the_cowatch_server_restarts(world):
    world.dana.close()
    world.erin.close()
    world.server.stop()
    world.server.start()  # the same port; a memory store, so the rooms start anew
    dana = world.dana = Member(world.server, "lobby", "dana")
    ann = world.ann
    # The bridge's watcher is back in the room.
    dana.wait_for(lambda e: e["type"] == "welcome" and any(p["name"] == "IRC" for p in e["participants"])
                  or e["type"] == "participant" and e["participant"]["name"] == "IRC", 15)
    since, irc_mark = dana.mark(), ann.mark()
    ann.say("#cowatch", "after the server restart")
    dana.wait_for(chat_from("ann", "after the server restart"), 15, since)
    dana.send("the room is back")
    ann.wait_for(r"PRIVMSG #cowatch :<dana> the room is back", 10, irc_mark)
