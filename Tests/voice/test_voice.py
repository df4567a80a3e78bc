"""Voice in a room, with the real thing on loopback in a network namespace of the
test's own (Tests/voice/in-namespace): Janus's AudioBridge started through
deploy/voice/janus-run, coturn with TURN's shared secret, `cowatch serve`
pointed at both, and headless Chromium pages whose fake microphones play a
file: a spoken one made with espeak-ng for the speaker, silence for the others.

What it shows: the listeners hear the speaker (the level of what they receive
follows the level the speaker's microphone sends, at a delay under a second);
the video on their pages is lowered while the speaker talks and comes back
after; a kicked speaker is silent to the others within a second; a page that
is not a member of the room hears nothing of it, and Janus's API takes nothing
without its secret; the same through TURN alone (iceTransportPolicy
'relay'); and in a cluster of two nodes, pages on the node that does not own
the room in its voice, which moves with the room when its owner is drained
or killed."""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from browser_server import serve_for_browsers  # noqa: E402
from levels import best_delay, binned, last_sound, onsets  # noqa: E402
from voice_pages import VoicePage, make_audio  # noqa: E402
from voice_services import VoiceServices  # noqa: E402
from support.bot import Bot  # noqa: E402
from support.harness import wait_until  # noqa: E402

BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")
WEB_ROOT = Path(__file__).resolve().parents[2] / "Sources/CowatchWeb/Web"
# The level (RMS, 0..1) from which a page hears someone; Chromium's silence
# through Opus and the mixer stays far under it.
HEARD = 0.01
# How alike the speaker's words and what a listener hears must be.
ALIKE = 0.6


def in_test_namespace():
    import socket
    return "cowatch0" in [name for _, name in socket.if_nameindex()]


pytestmark = pytest.mark.skipif(not in_test_namespace() and not os.environ.get("COWATCH_VOICE_ANYWHERE"),
                                reason="run through Tests/voice/in-namespace (commands/test does)")


def seen(bot, check, what, timeout=15.0):
    """The first event the bot (Tests/support/bot.py) kept that passes `check`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with bot.lock:
            for event in bot.events:
                if check(event):
                    return event
        time.sleep(0.02)
    raise AssertionError(f"the bot saw no {what}")


@pytest.fixture(scope="module")
def audio():
    folder = tempfile.mkdtemp(prefix="cowatch-voice-audio-")
    try:
        yield make_audio(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def voice():
    with VoiceServices() as services:
        yield services


@pytest.fixture(scope="module")
def server(voice):
    with serve_for_browsers(BIN, web_root=WEB_ROOT, extra_args=voice.serve_args()) as served:
        yield served


class Room:
    """A room made by a bot (its host), with pages in its voice."""

    def __init__(self, server, name):
        self.server = server
        self.name = name
        self.bot = Bot(server.ws(f"/rooms/{name}?name=host"))
        seen(self.bot, lambda e: e.get("type") == "welcome", "welcome")
        self.pages = []

    def page(self, label, microphone, relay=False):
        page = VoicePage(label, microphone)
        self.pages.append(page)
        page.open(self.server.url(f"/rooms/{self.name}?name={label}"))
        page.welcomed()
        page.join_voice(relay=relay)
        return page

    def close(self):
        for page in self.pages:
            page.close()
        self.bot.close()


def janus_rooms(voice):
    """The rooms on the test's Janus, as its `list` request names them with the
    admin key (private ones too): {number: description}."""
    from websockets.sync.client import connect
    secret = voice.secret_file.read_text().strip()
    with connect(voice.janus_url, subprotocols=["janus-protocol"], open_timeout=5) as janus:
        def call(message):
            janus.send(json.dumps({**message, "transaction": "x", "apisecret": secret}))
            while True:
                answer = json.loads(janus.recv(timeout=5))
                if answer.get("janus") != "ack":
                    return answer
        session = call({"janus": "create"})["data"]["id"]
        handle = call({"janus": "attach", "session_id": session, "plugin": "janus.plugin.audiobridge"})["data"]["id"]
        listed = call({"janus": "message", "session_id": session, "handle_id": handle,
                       "body": {"request": "list", "admin_key": secret}})
        call({"janus": "destroy", "session_id": session})
    return {room["room"]: room["description"] for room in listed["plugindata"]["data"]["list"]}


def heard_by(room, talker, listeners, seconds):
    """Records for `seconds`, from when every listener hears the talker: the
    talker's microphone, each listener's ears."""
    talker.record("microphone")
    for page in listeners:
        page.record("heard")
        page.wait("return (window.__levels || []).some(([, level]) => level >= 0.05)", "the talker heard")
    for page in [talker] + listeners:
        page.levels()
    time.sleep(seconds)
    return talker.levels(), [page.levels() for page in listeners]


def check_heard(sent, heard_lists, label):
    start = max([sent[0][0]] + [h[0][0] for h in heard_lists])
    end = min([sent[-1][0]] + [h[-1][0] for h in heard_lists])
    # 50 ms bins: a word's shape, not each 20 ms packet's, which the codecs,
    # the mixer and the jitter buffers on the way reshape.
    said = binned(sent, start, end, step_ms=50.0)
    delays = []
    for heard in heard_lists:
        delay, alike = best_delay(said, binned(heard, start, end, step_ms=50.0), step_ms=50.0)
        print(f"voice: {label}: correlation {alike:.2f} at {delay:.0f} ms")
        assert alike >= ALIKE, f"{label}: what a listener heard is not the speaker's words (correlation {alike:.2f})"
        assert delay <= 1000, f"{label}: heard {delay} ms late"
        delays.append(delay)
    return delays


def test_listeners_hear_the_speaker_and_the_video_is_lowered_while_they_do(server, audio):
    speech, silence = audio
    room = Room(server, "voice-talk")
    try:
        talker = room.page("speaker", speech)
        listeners = [room.page("ann", silence), room.page("bob", silence)]
        sent, heard = heard_by(room, talker, listeners, 8)
        delays = check_heard(sent, heard, "direct")
        print(f"voice: heard at a best-fit delay of {delays} ms")
        for levels in heard:
            # Past the first 200 ms of each word (smart volume's attack, and its
            # reading every 50 ms), the video is down while a voice is heard.
            starts = onsets(levels, HEARD)
            settled = [volume for t, level, volume in levels
                       if level >= 0.05 and all(not (0 <= t - start < 200) for start in starts)]
            assert settled, "the listener never heard anyone"
            lowered = sum(1 for volume in settled if volume <= 0.35) / len(settled)
            print(f"voice: the video lowered for {lowered:.0%} of what was heard")
            assert lowered >= 0.9, f"the video was lowered for only {lowered:.0%} of what was heard"
        # The speaker's own video is not lowered by their own voice: the
        # media server mixes each member's ears without their own microphone.
        assert talker.js("return document.getElementById('video').volume") == 1
        # Who speaks reaches the member list.
        listeners[0].wait("return (window.cowatch.model.voice?.seats ?? []).some(s => s.name === 'speaker' && s.speaking)",
                          "the speaker shown speaking", timeout=10)
        assert "speaking" in listeners[0].js("return document.getElementById('members').textContent")
        # The speaker mutes: the videos come back up.
        talker.js("document.getElementById('voice-mute').click()")
        for page in listeners:
            page.wait("return document.getElementById('video').volume === 1", "the video's volume restored", timeout=5)
    finally:
        room.close()


def test_a_kicked_speaker_is_silent_to_the_others_within_a_second(server, audio):
    speech, silence = audio
    room = Room(server, "voice-kick")
    try:
        talker = room.page("speaker", speech)
        listener = room.page("ann", silence)
        listener.record("heard")
        listener.wait("return (window.__levels || []).some(([, level]) => level >= 0.05)", "the speaker heard", timeout=10)
        # Kicked while talking: the test's clock and the pages' are this machine's.
        kicked_at = time.time() * 1000
        room.bot.send("/kick speaker talking over the film")
        seen(room.bot, lambda e: e.get("type") == "participant-left" and e.get("reason") == "kicked", "the kick")
        time.sleep(3.0)
        levels = listener.levels()
        last = last_sound(levels, HEARD, after=kicked_at - 1000)
        assert last is not None, "the speaker was not heard before the kick"
        assert last - kicked_at <= 1000, f"the kicked speaker was still heard {last - kicked_at:.0f} ms after the kick"
        print(f"voice: a kicked speaker's last sound reached a listener {max(0, last - kicked_at):.0f} ms after the kick")
        # The room says the seat is gone.
        listener.wait("return !(window.cowatch.model.voice?.seats ?? []).some(s => s.name === 'speaker')",
                      "the seat gone from the roster")
    finally:
        room.close()


def test_a_page_that_is_not_a_member_cannot_reach_the_rooms_voice(server, voice, audio):
    speech, silence = audio
    room = Room(server, "voice-private")
    other = Room(server, "voice-elsewhere")
    try:
        talker = room.page("speaker", speech)
        member = room.page("ann", silence)
        stranger = other.page("eve", silence)
        member.record("heard")
        stranger.record("heard")
        time.sleep(5)
        heard = member.levels()
        overheard = stranger.levels()
        assert max(level for _, level, _ in heard) >= 0.05, "the member did not hear the speaker"
        assert max(level for _, level, _ in overheard) < HEARD, "a page of another room heard this room's speaker"
        assert talker is not None
        # Janus's own API is no way in: without the secret it takes nothing.
        from websockets.sync.client import connect
        with connect(voice.janus_url, subprotocols=["janus-protocol"], open_timeout=5) as janus:
            janus.send(json.dumps({"janus": "create", "transaction": "x"}))
            answer = json.loads(janus.recv(timeout=5))
            assert answer["janus"] == "error" and answer["error"]["code"] == 403, answer
            janus.send(json.dumps({"janus": "create", "transaction": "y", "apisecret": "guess"}))
            answer = json.loads(janus.recv(timeout=5))
            assert answer["janus"] == "error" and answer["error"]["code"] == 403, answer
        # A bot never holds a seat, and says why.
        room.bot.send("/token dj chat")
        token = seen(room.bot, lambda e: e.get("type") == "reply" and e.get("command") == "token", "a token")["token"]
        dj = Bot(server.ws(f"/rooms/{room.name}?token={token}"))
        try:
            seen(dj, lambda e: e.get("type") == "welcome", "the bot's welcome")
            dj.send("/voice join")
            refusal = seen(dj, lambda e: e.get("type") == "error" and e.get("command") == "voice", "a refusal")
            assert refusal["code"] == "forbidden", refusal
        finally:
            dj.close()
    finally:
        room.close()
        other.close()


def test_the_same_through_turn_alone(server, voice, audio):
    speech, silence = audio
    room = Room(server, "voice-relayed")
    try:
        talker = room.page("speaker", speech, relay=True)
        listeners = [room.page("ann", silence, relay=True), room.page("bob", silence, relay=True)]
        for page in [talker] + listeners:
            page.wait("return window.cowatch.voice.peer.connectionState === 'connected'", "the call connected")
            kinds = page.driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                window.cowatch.voice.peer.getStats().then((stats) => {
                  const kinds = [];
                  stats.forEach((report) => {
                    if (report.type === 'transport' && report.selectedCandidatePairId) {
                      const pair = stats.get(report.selectedCandidatePairId);
                      kinds.push(stats.get(pair.localCandidateId).candidateType);
                    }
                  });
                  done(kinds);
                });""")
            assert kinds and all(kind == "relay" for kind in kinds), f"{page.label}: the call is not relayed ({kinds})"
        sent, heard = heard_by(room, talker, listeners, 6)
        delays = check_heard(sent, heard, "relayed")
        print(f"voice: through TURN, heard at a best-fit delay of {delays} ms")
        # The TURN server gave the pages their relays, with the ticket's credentials.
        assert "ALLOCATE processed, success" in Path(voice.turn_log).read_text(errors="replace")
        room.bot.send("/kick speaker")
        kicked_at = time.time() * 1000
        time.sleep(2.5)
        for page in listeners:
            last = last_sound(page.levels(), HEARD, after=kicked_at - 1000)
            assert last is None or last - kicked_at <= 1000, "the kicked speaker was still heard through TURN"
    finally:
        room.close()


@pytest.mark.parametrize("owner_goes", ["drained", "killed"])
def test_in_a_cluster_the_owners_voice_reaches_every_node_and_moves_with_the_room(voice, audio, owner_goes):
    """Two nodes on one PostgreSQL (Tests/support/cluster.py), sharing the
    media server: the room is node 1's; a speaker and a listener on node 2
    reach its voice through node 1 (their commands relayed, their calls to
    node 1's Janus), and a listener on node 1 hears them. Node 1 is drained
    (SIGTERM) or killed (SIGKILL, its seats at Janus going with its session):
    the room moves to node 2, node 2's pages reconnect and make their calls
    again, now through node 2, and still hear each other. Killed, node 1 left
    its room on Janus; started again, it destroys that room, and only that one."""
    from support.cluster import Node, ScratchPostgres
    speech, silence = audio
    postgres = ScratchPostgres(tempfile.mkdtemp(prefix="cowatch-voice-pg-"))
    nodes, pages, bot = [], [], None
    try:
        database = postgres.fresh()
        nodes = [Node(n, database, extra=voice.serve_args()).start() for n in (1, 2)]
        n1, n2 = nodes
        web = lambda node, label: f"http://127.0.0.1:{node.port}/rooms/voice-cluster?name={label}"  # noqa: E731
        bot = Bot(f"{n1.url}/rooms/voice-cluster?name=host")  # the room is node 1's
        seen(bot, lambda e: e.get("type") == "welcome", "welcome")

        def page(node, label, microphone):
            made = VoicePage(label, microphone)
            pages.append(made)
            made.open(web(node, label))
            made.welcomed()
            made.join_voice()
            return made

        ann = page(n1, "ann", silence)
        speaker = page(n2, "speaker", speech)
        bob = page(n2, "bob", silence)
        assert n1.metric("cowatch_voice_seats") == 3 and n2.metric("cowatch_voice_seats") == 0, \
            "the seats are not all with the room's owner"
        sent, heard = heard_by(None, speaker, [ann, bob], 6)
        delays = check_heard(sent, heard, "cluster, owner node 1")
        print(f"voice: a speaker on node 2 heard on nodes 1 and 2 through node 1, at {delays} ms")

        # The room moves: node 1 drains (node 2's pages are told to reconnect)
        # or dies (their links to it break).
        for made in (speaker, bob):
            made.js("window.__callBefore = window.cowatch.voice.peer")
        if owner_goes == "drained":
            n1.signal(signal.SIGTERM)
            assert n1.process.wait(timeout=15) == 0
        else:
            n1.kill()
        for made in (speaker, bob):
            made.wait("const v = window.cowatch.voice; return v.phase === 'on' && v.peer && v.peer !== window.__callBefore"
                      " && v.peer.connectionState === 'connected'", "the call made again after the room moved", timeout=30)
        assert n2.metric("cowatch_voice_seats") == 2, "node 2 does not hold the moved room's seats"
        sent, heard = heard_by(None, speaker, [bob], 6)
        delays = check_heard(sent, heard, "cluster, after the move to node 2")
        print(f"voice: after the room moved to node 2, heard at {delays} ms")
        if owner_goes == "killed":
            # Killed, node 1 could not destroy its room on Janus: it stays there,
            # empty, until node 1 is back, whose new link destroys it.
            assert "cowatch n1" in janus_rooms(voice).values(), "node 1's room is not on Janus"
            back = Node(1, database, extra=voice.serve_args()).start()
            nodes.append(back)
            wait_until(lambda: "an earlier link left were destroyed" in back.log(), 20, "node 1 destroying its old room")
            assert "cowatch n1" not in janus_rooms(voice).values()
            assert "cowatch n2" in janus_rooms(voice).values(), "node 2's room went too"
    finally:
        for made in pages:
            made.close()
        if bot is not None:
            bot.close()
        for node in nodes:
            node.stop()
        postgres.stop(check=False)
