"""The server seen by an independent client: Python's `websockets`, written
against docs/protocol.md only. Run by commands/test against a real server."""
import asyncio
import json
import os
import urllib.parse

import pytest
import websockets

URL = os.environ.get("COWATCH_URL", "ws://127.0.0.1:7480")


async def receive_until(ws, predicate, timeout=5.0):
    """Frames until one matches; returns it."""
    async def loop():
        while True:
            frame = await ws.recv()
            if predicate(frame):
                return frame
    return await asyncio.wait_for(loop(), timeout)


def event(kind, **fields):
    def match(frame):
        try:
            obj = json.loads(frame)
        except ValueError:
            return False
        return obj.get("type") == kind and all(obj.get(k) == v for k, v in fields.items())
    return match


def state_with_status(status):
    return lambda frame: event("state")(frame) and json.loads(frame)["playback"]["status"] == status


def run(coroutine):
    asyncio.run(coroutine)


def member(room, name, subprotocol="cowatch.v1.json", query=""):
    """A connection of `name` to `room` with `subprotocol` (None: the default)."""
    return websockets.connect(f"{URL}/rooms/{room}?name={name}{query}",
                              subprotocols=[subprotocol] if subprotocol else None)


def test_welcome_then_state_in_json():
    async def scenario():
        async with websockets.connect(f"{URL}/rooms/py-welcome?name=ada", subprotocols=["cowatch.v1.json"]) as ws:
            assert ws.subprotocol == "cowatch.v1.json"
            welcome = json.loads(await ws.recv())
            assert welcome["type"] == "welcome"
            assert welcome["you"]["name"] == "ada"
            assert welcome["you"]["role"] == "host"
            assert isinstance(welcome["serverTime"], int)
            assert isinstance(welcome["resume"], str) and welcome["resume"]
            state = json.loads(await ws.recv())
            assert state["type"] == "state"
            assert state["session"] is None
            assert state["playback"]["status"] == "idle"
            assert state["policy"] == {"control": "everyone", "stall": "continue", "wait": 5}
    run(scenario())


def test_coordinated_start_with_two_players():
    async def scenario():
        async with member("py-start", "ada", query="&player=1") as ada, \
                member("py-start", "bob", query="&player=1") as bob:
            await ada.send("/watch https://example.org/a.mp4 Episode 1")
            await receive_until(bob, state_with_status("paused"))
            await ada.send("/play")
            waiting = json.loads(await receive_until(bob, state_with_status("waiting")))
            seq = waiting["seq"]
            await ada.send(f"/ready {seq}")
            await bob.send(f"/ready {seq}")
            playing_a = json.loads(await receive_until(ada, state_with_status("playing")))
            playing_b = json.loads(await receive_until(bob, state_with_status("playing")))
            assert playing_a["seq"] == playing_b["seq"] > seq
            assert playing_a["playback"]["at"] == playing_b["playback"]["at"]
            assert playing_a["playback"]["position"] == 0
    run(scenario())


def test_text_subprotocol_and_default():
    async def scenario():
        async with member("py-text", "ada", "cowatch.v1.text") as ada, member("py-text", "bob", None) as bob:
            assert bob.subprotocol is None
            await ada.send("hello from python")
            await receive_until(bob, lambda frame: frame == "<ada> hello from python")
            await bob.send("/foo")
            await receive_until(bob, lambda frame: frame == "! unknown command /foo (try /help)")
    run(scenario())


@pytest.mark.parametrize("asked, given", [
    ("\uff21\uff4c\uff49\uff43\uff45", "Alice-2"),  # fullwidth: Alice once NFKC-normalized
    ("AIice", "AIice-2"),                                  # capital I for l: the same skeleton
    ("\u0410lice", "guest"),                              # Cyrillic A among Latin letters
    ("Alice\u200d", "guest"),                             # an invisible joiner
    ("\u2800", "guest"),                                  # braille pattern blank
    ("\u3164", "guest"),                                  # Hangul filler
])
def test_names_that_pass_for_another_are_renamed_or_refused(asked, given):
    async def scenario():
        room = f"{URL}/rooms/py-lookalike-{ord(asked[0]):x}-{len(asked)}"
        query = urllib.parse.quote(asked, safe="")
        async with websockets.connect(f"{room}?name=Alice", subprotocols=["cowatch.v1.json"]) as alice:
            await receive_until(alice, event("welcome"))
            async with websockets.connect(f"{room}?name={query}", subprotocols=["cowatch.v1.json"]) as other:
                welcome = json.loads(await receive_until(other, event("welcome")))
                assert welcome["you"]["name"] == given
                if given == "guest":
                    await receive_until(other, event("error", code="bad-name"))
    run(scenario())


def test_me_line_and_quoted_title_in_text():
    async def scenario():
        async with member("py-me-title", "ada", "cowatch.v1.text") as ada, \
                member("py-me-title", "bob", "cowatch.v1.text") as bob:
            await ada.send("/me waves")
            await receive_until(bob, lambda frame: frame == "*<ada> waves")
            await ada.send('/watch https://example.org/a.mp4 Say "hi" \\o/')
            await receive_until(bob, lambda frame: frame == '= paused "Say \\"hi\\" \\\\o/" at 0:00:00, rate 1')
    run(scenario())


def test_bad_input_close_codes():
    async def scenario():
        room = f"{URL}/rooms/py-bad"
        async with websockets.connect(f"{room}?name=witness", subprotocols=["cowatch.v1.json"]) as witness:
            for payload, code in ((b"\x01\x02", 1003), ("x" * 9000, 1009)):
                async with websockets.connect(f"{room}?name=mallory", max_size=None) as mallory:
                    await mallory.send(payload)
                    with pytest.raises(websockets.ConnectionClosed) as closed:
                        while True:
                            await asyncio.wait_for(mallory.recv(), 5)
                    assert closed.value.rcvd is not None and closed.value.rcvd.code == code
            await witness.send("still here")
            await receive_until(witness, event("chat", text="still here"))
    run(scenario())


def test_bad_room_name_is_refused_before_upgrade():
    async def scenario():
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(f"{URL}/rooms/not%20valid"):
                pass
        assert refused.value.response.status_code == 400
    run(scenario())


def test_resume_restores_identity():
    async def scenario():
        room = f"{URL}/rooms/py-resume"
        # Closed with 1001 ("going away", as a tab that reloads): 1000 would mean ada
        # is leaving for good, and her member would be gone at once.
        ada = await websockets.connect(f"{room}?name=ada", subprotocols=["cowatch.v1.json"])
        first = json.loads(await ada.recv())
        await ada.close(code=1001)
        async with websockets.connect(f"{room}?resume={first['resume']}", subprotocols=["cowatch.v1.json"]) as again:
            second = json.loads(await again.recv())
            assert second["you"]["id"] == first["you"]["id"]
            assert second["you"]["name"] == "ada"
            assert second["you"]["role"] == "host"
    run(scenario())
