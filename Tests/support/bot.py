"""The bot of the harnesses that drive a room by its commands."""
import json
import threading

from websockets.sync.client import connect


class Bot:
    """A member with no player: a WebSocket that sends the room's commands,
    reads every event as it comes (a member that does not read is a slow
    consumer to the server) and keeps them, and the last state."""

    def __init__(self, url):
        # Entered as a context manager would be (websockets 17 warns otherwise);
        # closed by close().
        self.ws = connect(url, subprotocols=["cowatch.v1.json"], open_timeout=10).__enter__()
        self.state = None
        self.events = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for text in self.ws:
                event = json.loads(text)
                with self.lock:
                    self.events.append(event)
                    if event["type"] == "state":
                        self.state = event
        except Exception:  # noqa: BLE001 - the connection closed at the end
            pass

    def send(self, line):
        self.ws.send(line)

    def close(self):
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - best effort at the end
            pass

    def current(self):
        with self.lock:
            return self.state

    def errors(self):
        with self.lock:
            return [e for e in self.events if e["type"] == "error"]

    def participant(self, name):
        """The member called `name` as the room last described it, or None."""
        with self.lock:
            people = {}
            for event in self.events:
                if event["type"] == "welcome":
                    people.update({p["id"]: p for p in event["participants"]})
                elif event["type"] == "participant":
                    people[event["participant"]["id"]] = event["participant"]
        return next((p for p in people.values() if p["name"] == name), None)
