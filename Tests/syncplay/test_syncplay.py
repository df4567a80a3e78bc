"""Syncplay's own client in a Cowatch room (`cowatch serve --syncplay-port`):
Debian's `syncplay --no-gui` driving a headless mpv, in one room with a browser
page (headless Chromium) that shares the room's file as an own copy, `cowatch
watch` (a headless mpv) playing its copy, and a bot that hosts the room.

- the Syncplay user is listed (on the page, with its program, and to the bot)
  as a member with a player; its copy of the file the page shared (another
  name, the same file) is matched as Syncplay matches, by size and length;
- its pause, play and seek reach the others, and theirs reach its mpv;
- chat goes both ways;
- with `/policy control hosts` its pause is corrected, as Syncplay's managed
  rooms correct a non-controller; with the room's owner key (Syncplay's
  "identify as room operator") it controls;
- a malformed line is answered with Syncplay's Error and the room plays on;
- kicked, it is out and stays out: its client stops, and coming back is refused;
- over TLS, with a throwaway CA, the client upgrades (Syncplay's TLS message).

COWATCH_BIN names the binary. Skipped, with the reason, when syncplay, mpv,
ffmpeg or the browser are missing.
"""
import json
import os
import shutil
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

try:
    from selenium.webdriver.common.by import By
except ImportError:  # browser_missing() says so, and the tests are skipped
    By = None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.bot import Bot  # noqa: E402
from support.browser import browser_missing  # noqa: E402
from support.harness import Serve, free_port, wait_until  # noqa: E402
from support.mpv import Watcher, work_folder  # noqa: E402
from support.page import WEB_ROOT, Browser, Server, clip, room_name  # noqa: E402
from support.syncplay import SyncplayClient, syncplay_missing, syncplay_port  # noqa: E402

WAIT_S = 25


def wait(check, what, timeout=WAIT_S):
    return wait_until(check, timeout, what, interval=0.05)


@pytest.fixture(scope="module")
def world():
    missing = syncplay_missing() or browser_missing() or (None if shutil.which("ffmpeg") else "ffmpeg is missing")
    if missing:
        pytest.skip(missing)
    work = Path(work_folder("cowatch-syncplay-"))
    original = work / "Holiday.2024.webm"
    clip(original, 60)
    theirs = work / "holiday (syncplay copy).webm"
    shutil.copyfile(original, theirs)
    server = Server(WEB_ROOT, "--syncplay-port", "0")
    context = {"work": work, "server": server, "original": original, "theirs": theirs, "port": syncplay_port(server),
               "room": room_name("syncplay"), "closers": []}
    yield context
    for close in reversed(context["closers"]):
        try:
            close()
        except Exception:  # noqa: BLE001 - the rest still closes
            pass
    server.stop()
    if os.environ.get("COWATCH_KEEP_WORK"):
        print(f"kept: {work}")  # the clients' logs, the server's in its folder
    else:
        shutil.rmtree(work, ignore_errors=True)


def state(bot):
    return (bot.current() or {}).get("playback") or {}


def member_id(bot, name):
    return (bot.participant(name) or {}).get("id")


def test_a_syncplay_client_watches_with_a_page_and_cowatch_watch(world):
    server, room = world["server"], world["room"]
    host = Bot(server.ws(f"/rooms/{room}?name=host"))
    world["closers"].append(host.close)
    welcome = wait(lambda: next((e for e in host.events if e["type"] == "welcome"), None), "the host's welcome")
    owner_key = welcome["ownerKey"]

    # The page shares its file as an own copy; cowatch watch plays its copy of it.
    page = Browser(autoplay=True)
    world["closers"].append(page.close)
    page.enter(server, room, "pat")
    page.driver.find_element(By.ID, "own-share").send_keys(str(world["original"]))
    wait(lambda: (bot_state := host.current()) and ((bot_state.get("session") or {}).get("activity") or {})
         .get("source", {}).get("kind") == "own", "the file shared from the page")
    mia = Watcher(str(world["work"]), server.url(f"/rooms/{room}"), "mia", str(world["original"]))
    world["closers"].append(mia.stop)
    wait(lambda: (p := host.participant("mia")) and p.get("copy") is True, "cowatch watch's copy matched")

    # The Syncplay user arrives: a member with a player, their file matched.
    sam = SyncplayClient(str(world["work"]), f"127.0.0.1:{world['port']}", "sam", room, str(world["theirs"]))
    world["closers"].append(sam.stop)
    wait(lambda: (bot_sam := host.participant("sam")) and bot_sam["connected"] and bot_sam["player"],
         "sam in the room as a player")
    wait(lambda: host.participant("sam").get("copy") is True, "sam's file matched as the room's own copy")
    assert host.participant("sam")["software"] == "Syncplay 1.6.9", host.participant("sam")
    page.wait("return document.getElementById('members').textContent.includes('with Syncplay 1.6.9')",
              "sam on the page's member list, with its program")
    assert "pat" in sam.output() and "mia" in sam.output(), "the Syncplay client does not list the others"
    assert host.participant("sam")["role"] == "member"

    # Ready (Syncplay's `t`), then its play starts everyone.
    sam.type("t")
    sam_id = member_id(host, "sam")
    wait(lambda: sam.get("duration"), "sam's mpv loaded its file")
    wait(sam.past_file_load, "sam's client reading its player again after loading the file")
    sam.type("p")
    wait_until(lambda: state(host).get("status") == "playing" and state(host).get("by") == sam_id, WAIT_S,
               "sam's play reached the room", interval=0.05, failure=lambda: AssertionError(
                   f"no sam's play reached the room within {WAIT_S} s; the room's playback: {state(host)};"
                   f" the page's player: {page.js('return window.cowatch.sync.history.slice(-12)')};"
                   f" sam's client:\n{sam.log_tail(60)}"))
    wait(lambda: page.js("return !document.getElementById('video').paused"), "the page plays")
    wait(lambda: mia.ipc.get("pause") is False, "cowatch watch plays")
    wait(lambda: sam.get("pause") is False, "sam's mpv plays")

    # The host's pause reaches sam's mpv, at the room's position.
    host.send("/pause")
    wait(lambda: state(host).get("status") == "paused", "the room paused")
    wait(lambda: sam.get("pause") is True, "sam's mpv paused by the host")
    held = state(host)["position"]
    wait(lambda: abs((sam.get("time-pos") or -9) - held) < 1.1, f"sam's mpv held near {held}")

    # sam's seek moves everyone.
    sam.type("s 0:40")
    wait(lambda: abs(state(host).get("position", 0) - 40) < 1 and state(host).get("by") == sam_id,
         "sam's seek reached the room")
    wait(lambda: abs(page.js("return document.getElementById('video').currentTime") - state(host)["position"]) < 0.3,
         "the page moved to sam's position")
    wait(lambda: abs((mia.ipc.get("time-pos") or -9) - state(host)["position"]) < 0.3, "cowatch watch moved to sam's position")

    # The host's seek reaches sam's mpv.
    host.send("/seek 10")
    wait(lambda: abs(state(host).get("position", 0) - 10) < 0.01, "the host's seek")
    wait(lambda: abs((sam.get("time-pos") or -9) - 10) < 1.1, "sam's mpv moved to 10")

    # Chat both ways.
    sam.type("ch popcorn anyone?")
    wait(lambda: any(e["type"] == "chat" and e["name"] == "sam" and e["text"] == "popcorn anyone?" for e in host.events),
         "sam's chat in the room")
    page.wait("return document.getElementById('log').textContent.includes('popcorn anyone?')", "sam's chat on the page")
    host.send("yes please, sam")
    wait(lambda: any('"message": "yes please, sam"' in line and '"username": "host"' in line for line in sam.received()),
         "the host's chat reached sam")

    # A malformed line from another Syncplay connection: told in Error, and the room plays on.
    host.send("/play")
    wait(lambda: state(host).get("status") == "playing", "the room plays again")
    wait(lambda: sam.get("pause") is False, "sam's mpv plays again")
    seq = host.current()["seq"]
    with socket.create_connection(("127.0.0.1", world["port"]), timeout=10) as raw:
        lines = raw.makefile("rb")
        raw.sendall(json.dumps({"Hello": {"username": "probe", "room": {"name": room}, "version": "1.6.9"}}).encode() + b"\r\n")
        hello = json.loads(wait(lambda: (line := lines.readline()) and b"Hello" in line and line, "the probe's Hello"))
        assert hello["Hello"]["room"]["name"] == room
        raw.sendall(b'{"State": {"playstate": \r\n')
        error = wait(lambda: (line := lines.readline()) and b"Error" in line and line, "the malformed line's Error")
        assert "not a JSON message" in json.loads(error)["Error"]["message"]
        raw.sendall(b'{"List": null}\r\n')
        wait(lambda: (line := lines.readline()) and b'"List"' in line, "the probe still served after its bad line")
    assert host.current()["seq"] == seq and state(host)["status"] == "playing", "the bad line changed the room"
    wait(lambda: sam.get("pause") is False, "sam still plays")

    # Only hosts control: sam's pause is corrected, as Syncplay's managed rooms do.
    host.send("/policy control hosts")
    wait(lambda: host.current()["policy"]["control"] == "hosts", "the policy")
    seq = host.current()["seq"]
    sam.type("p")
    wait(lambda: "only hosts" in sam.output() or "may not" in sam.output(), "sam told it may not control")
    wait(lambda: sam.get("pause") is False, "sam's mpv put back to playing")
    assert state(host)["status"] == "playing" and host.current()["seq"] == seq, "a non-host's pause changed the room"

    # With the owner key (Syncplay's "identify as room operator"), sam controls.
    sam.type(f"a {owner_key.upper()}")
    wait(lambda: (p := host.participant("sam")) and p["connected"] and p["owner"], "sam the room's owner")
    wait(lambda: any('"controllerAuth"' in line and '"success": true' in line and '"user": "sam"' in line
                     for line in sam.received()), "sam told it is the room's operator")
    sam.type("p")
    wait(lambda: state(host).get("status") == "paused" and state(host).get("by") == member_id(host, "sam"),
         "the owner's pause reached the room")
    wait(lambda: page.js("return document.getElementById('video').paused"), "the page paused by sam")

    # Kicked: out, its client stops, and coming back is refused.
    host.send("/op host")  # the host is one already; a room keeps its owner among its hosts
    host.send("/deop sam")
    host.send("/kick sam enough")
    wait(lambda: any(e["type"] == "participant-left" and e.get("name") == "sam" for e in host.events), "sam kicked")
    kicked_at = len(host.events)
    wait(lambda: any('"Error"' in line and "enough" in line for line in sam.received()), "sam told who kicked it and why")
    back = SyncplayClient(str(world["work"]), f"127.0.0.1:{world['port']}", "sam", room, str(world["theirs"]))
    world["closers"].append(back.stop)
    refusal = wait(lambda: next((line for line in back.received() if '"Error"' in line), None), "sam's return refused")
    assert "kicked" in refusal and "come back in" in refusal, refusal
    # Both clients stop reconnecting after Syncplay's Error (its client's own rule); the room never saw sam again.
    assert not [e for e in host.events[kicked_at:] if e["type"] == "participant" and e["participant"]["name"] == "sam"
                and e["participant"]["connected"]], "sam came back in"
    assert sum('"Hello"' in line for line in sam.sent()) == 1, "the kicked client said Hello again"

    # What the front did is counted in /metrics.
    metrics = urllib.request.urlopen(server.url("/metrics"), timeout=10).read().decode()
    counted = dict(line.split(" ", 1) for line in metrics.splitlines() if line.startswith("cowatch_syncplay_"))
    assert int(counted["cowatch_syncplay_accepted_total"]) >= 3 and int(counted["cowatch_syncplay_errors_total"]) >= 3, counted


def test_syncplay_over_tls_with_a_throwaway_ca(world):
    from deploy.test_tls_clients import make_ca  # the certificate for localhost, as the deployment's test makes it
    folder = world["work"] / "tls"
    folder.mkdir()
    ca = make_ca(folder)
    server = Server(WEB_ROOT, "--syncplay-port", "0", "--syncplay-certificate", str(folder / "site.pem"),
                    "--syncplay-key", str(folder / "site.key"))
    world["closers"].append(server.stop)
    port = syncplay_port(server)
    room = room_name("syncplay-tls")
    host = Bot(server.ws(f"/rooms/{room}?name=host"))
    world["closers"].append(host.close)
    # The client trusts the throwaway CA (through the stand-in for certifi in
    # trust/, see there) and checks the name, localhost.
    trust = str(Path(__file__).resolve().parent / "trust")
    kim = SyncplayClient(str(world["work"]), f"localhost:{port}", "kim", room, str(world["theirs"]),
                         env={**os.environ, "COWATCH_TEST_CA": str(ca), "PYTHONPATH": trust})
    world["closers"].append(kim.stop)
    wait(lambda: (p := host.participant("kim")) and p["connected"], "kim in the room over TLS")
    assert any('"startTLS": "true"' in line for line in kim.received()), kim.log_tail()
    wait(lambda: "Secure connection established" in kim.output(), "the client's word that TLS is on")
    # In the room as the client sees it (its first State sent back) before a
    # line is typed: a chat typed before that is not sent.
    wait(lambda: any('"State"' in line for line in kim.sent()), "the client's first State over TLS")
    kim.type("ch over tls")
    wait(lambda: any(e["type"] == "chat" and e["text"] == "over tls" for e in host.events), "chat over TLS")


def test_a_restart_brings_the_syncplay_client_back(world):
    """The server stopped (SIGTERM) and started again on its ports: its Syncplay
    clients are let go without an Error, so that Syncplay's client comes back by
    itself, into the same room (kept on disk)."""
    folder = world["work"] / "restart"
    folder.mkdir()
    syncplay = free_port()
    server = Serve("--store", "sqlite", "--data-dir", str(folder / "data"), "--syncplay-port", str(syncplay),
                   port=free_port(), log_path=str(folder / "server.log"))
    world["closers"].append(server.stop)
    room = room_name("syncplay-restart")
    lee = SyncplayClient(str(world["work"]), f"127.0.0.1:{syncplay}", "lee", room, str(world["theirs"]))
    world["closers"].append(lee.stop)
    first = Bot(server.ws(f"/rooms/{room}?name=watcher"))
    wait(lambda: (p := first.participant("lee")) and p["connected"], "lee in the room")
    first.close()
    assert server.stop() == 0, server.log_tail()
    server.start()
    again = Bot(server.ws(f"/rooms/{room}?name=watcher"))
    world["closers"].append(again.close)
    wait(lambda: (p := again.participant("lee")) and p["connected"], "lee back in the room after the restart", timeout=40)
    assert not any('"Error"' in line for line in lee.received()), lee.log_tail()
