"""One member joining a room, for Tests/deploy/clean_root_test.sh: written against
docs/protocol.md only (Python's websockets), so that the check proves a server in a
clean root serves what any client expects.

    room_member.py URL ROOM NAME [--say TEXT] [--expect-chat TEXT] [--forwarded-for ADDRESS] [--timeout S]

Joins ws(s)://HOST:PORT/rooms/ROOM as NAME with the JSON subprotocol, waits for its
welcome and the room's state, then (--say) sends a chat line and waits for it to
come back: the server has taken it (and stored it). --expect-chat fails unless the
welcome's recent chat already holds TEXT: the room outlived a restart.
--forwarded-for sends X-Forwarded-For, as a proxy in front would. Prints one
line saying what it saw; exits 1 with the reason otherwise."""
import argparse
import asyncio
import json
import sys

import websockets


async def frames_until(ws, wanted, seconds):
    async def loop():
        while True:
            frame = json.loads(await ws.recv())
            if wanted(frame):
                return frame
    return await asyncio.wait_for(loop(), seconds)


async def member(arguments):
    address = f"{arguments.url}/rooms/{arguments.room}?name={arguments.name}"
    headers = {"X-Forwarded-For": arguments.forwarded_for} if arguments.forwarded_for else None
    async with websockets.connect(address, subprotocols=["cowatch.v1.json"], additional_headers=headers,
                                  open_timeout=arguments.timeout) as ws:
        welcome = await frames_until(ws, lambda f: f.get("type") == "welcome", arguments.timeout)
        await frames_until(ws, lambda f: f.get("type") == "state", arguments.timeout)
        said = [line.get("text") for line in welcome.get("chat", [])]
        if arguments.expect_chat is not None and arguments.expect_chat not in said:
            raise SystemExit(f"room_member: the welcome's chat has no {arguments.expect_chat!r}: {said}")
        if arguments.say is not None:
            await ws.send(arguments.say)
            await frames_until(ws, lambda f: f.get("type") == "chat" and f.get("text") == arguments.say,
                               arguments.timeout)
        print(f"room_member: {arguments.name} welcomed to {welcome.get('room')} as {welcome['you'].get('role')};"
              f" {len(said)} chat lines before")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("room")
    parser.add_argument("name")
    parser.add_argument("--say")
    parser.add_argument("--expect-chat")
    parser.add_argument("--forwarded-for")
    parser.add_argument("--timeout", type=float, default=15.0)
    arguments = parser.parse_args()
    try:
        asyncio.run(member(arguments))
    except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as error:
        print(f"room_member: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
