"""What the bridge suites (Tests/bridge: IRC through ngircd, Matrix through
Synapse) share: `cowatch bridge` run on a configuration, the cowatch server it
reaches, and members that keep everything they received with the time it
came. COWATCH_BIN names the cowatch binary."""
import json
import os
import signal
import subprocess
import threading
import time

from websockets.sync.client import connect as ws_connect

from support.harness import Serve, free_port, wait_until


BIN = os.environ.get("COWATCH_BIN", ".build/debug/cowatch")


class BridgeProcess:
    """`cowatch bridge` on `config` (the file's text, written to bridge.conf in
    `directory`, readable by its owner alone when `private`), its output in
    bridge.log there."""

    def __init__(self, directory, config, private=False):
        self.config = os.path.join(directory, "bridge.conf")
        with open(self.config, "w") as f:
            f.write(config)
        if private:
            os.chmod(self.config, 0o600)
        self.log = open(os.path.join(directory, "bridge.log"), "w+")
        self.process = subprocess.Popen([BIN, "bridge", "--config", self.config], stdout=self.log,
                                        stderr=subprocess.STDOUT, text=True)

    def text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def running(self):
        """The log so far, while the bridge runs."""
        assert self.process.poll() is None, "the bridge exited: " + self.text()
        return self.text()

    def pause(self):
        self.process.send_signal(signal.SIGSTOP)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        if self.process.poll() is None:
            self.resume()
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=20)


def stop_world(bridge, *others, shown=60):
    """Stops the bridge, then what it bridged (those started), and prints the
    last `shown` lines of its log (shown by pytest when a test failed)."""
    for part in (bridge, *others):
        if part:
            part.stop()
    if bridge:
        print("--- bridge log (tail) ---\n" + "\n".join(bridge.text().splitlines()[-shown:]))


class Received:
    """What one connection received, each item with the time it arrived; a
    reader thread keeps them (`keep`)."""

    def __init__(self, name):
        self.name = name
        self.received = []  # (time, item)
        self.lock = threading.Lock()

    def keep(self, item, at=None):
        with self.lock:
            self.received.append((at or time.time(), item))

    def mark(self):
        with self.lock:
            return len(self.received)

    def matching(self, predicate, since=0):
        with self.lock:
            return [(t, item) for t, item in self.received[since:] if predicate(item)]

    def first(self, predicate, timeout, since, what, show, shown=30):
        """The first item after `since` that satisfies `predicate`, waited for up
        to `timeout` s; else a failure with the last `shown` items received."""
        def failure():
            with self.lock:
                seen = "\n".join(show(item) for _, item in self.received[since:][-shown:])
            return AssertionError(f"{self.name}: no {what} within {timeout} s; received:\n{seen}")
        return wait_until(lambda: (self.matching(predicate, since) or [(None, None)])[0][1], timeout, what,
                          failure=failure)


class Member(Received):
    """A member of a room over WebSocket (cowatch.v1.json), keeping every event."""

    def __init__(self, server, room, name):
        super().__init__(name)
        # Entered as a context manager, as websockets 17 asks; left by close().
        self.ws = ws_connect(f"ws://127.0.0.1:{server.port}/rooms/{room}?name={name}",
                             subprotocols=["cowatch.v1.json"], open_timeout=10).__enter__()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.welcome = self.wait_for(lambda e: e["type"] == "welcome", 10)

    def _read(self):
        try:
            while True:
                self.keep(json.loads(self.ws.recv()))
        except Exception:
            pass

    def send(self, text):
        self.ws.send(text)

    def wait_for(self, predicate, timeout, since=0):
        return self.first(predicate, timeout, since, "matching event", lambda e: json.dumps(e)[:200])

    def close(self):
        self.ws.close()


def chat_from(name, text=None):
    return lambda e: e["type"] == "chat" and e["name"] == name and (text is None or e["text"] == text)


def cowatch_server(directory):
    """The server the bridge reaches. The bridge is a trusted proxy: each
    person's X-Forwarded-For is their own address in the room, so a ban keeps
    out a person, not the bridge."""
    return Serve("--store", "memory", "--media-check", "false", "--trusted-proxies", "127.0.0.1",
                 "--shutdown-grace", "0", port=free_port() if os.environ.get("COWATCH_TEST_PORTS") else 0,
                 log_path=os.path.join(directory, "cowatch-serve.log"), start=False)
