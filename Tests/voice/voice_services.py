"""The media server and the TURN server a voice test needs, started by the test
on loopback as an operator would start them: Janus through deploy/voice/janus-run
(its templates, its secret file), coturn with TURN's REST-style shared secret.
Both stop with the test."""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Janus gathers no candidate on a loopback interface: Tests/voice/in-namespace
# gives the test's network namespace a dummy interface with a loopback-range
# address of its own, for Janus's media.
JANUS_INTERFACE = "127.0.0.2"


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, log, what, limit=20.0):
    """Returns once something accepts on 127.0.0.1:port; fails with the log if
    the process ended first or nothing accepted within `limit` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} stopped at start:\n{Path(log).read_text(errors='replace')[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}:\n{Path(log).read_text(errors='replace')[-3000:]}")


class VoiceServices:
    """`with VoiceServices() as voice:` Janus (voice.janus_url, voice.secret_file)
    and coturn (voice.turn_url, voice.turn_secret_file); `serve_args()` are the
    settings cowatch serve takes for them."""

    def __init__(self, turn=True):
        self.turn = turn
        self.dir = Path(tempfile.mkdtemp(prefix="cowatch-voice-"))
        self.processes = []

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def start(self):
        self.secret_file = self.dir / "janus.secret"
        self.janus_port = free_port()
        rtp = 20000 + secrets.randbelow(400) * 100
        janus_log = self.dir / "janus.log"
        janus = subprocess.Popen(
            [str(ROOT / "deploy/voice/janus-run"), "--secret-file", str(self.secret_file), "--dir", str(self.dir / "janus"),
             "--ws-port", str(self.janus_port), "--rtp-ports", f"{rtp}-{rtp + 99}", "--interfaces", JANUS_INTERFACE],
            stdout=open(janus_log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(janus)
        self.janus_log = janus_log
        wait_for_port(self.janus_port, janus, janus_log, "janus")
        self.janus_url = f"ws://127.0.0.1:{self.janus_port}"
        if not self.turn:
            return
        self.turn_secret_file = self.dir / "turn.secret"
        self.turn_secret_file.write_text(secrets.token_hex(24) + "\n")
        self.turn_port = free_port()
        relay = 40000 + secrets.randbelow(200) * 100
        # Relayed from Janus's own address: coturn's relay on 127.0.0.1 talking
        # to Janus on 127.0.0.2 across the namespace's two interfaces gets no
        # answer back (Chromium's TURN client stays on 127.0.0.1).
        turn_log = self.dir / "turn.log"
        turn = subprocess.Popen(
            ["turnserver", "-n", "--listening-ip=127.0.0.1", f"--relay-ip={JANUS_INTERFACE}", f"--listening-port={self.turn_port}",
             f"--min-port={relay}", f"--max-port={relay + 99}", "--use-auth-secret",
             f"--static-auth-secret={self.turn_secret_file.read_text().strip()}", "--realm=cowatch.test",
             # Everything here is on loopback: the relay's peer (Janus) too.
             "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--fingerprint",
             "--log-file=stdout", "--simple-log", "--verbose", f"--pidfile={self.dir / 'turn.pid'}",
             f"--userdb={self.dir / 'turn.db'}"],
            stdout=open(turn_log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(turn)
        self.turn_log = turn_log
        wait_for_port(self.turn_port, turn, turn_log, "turnserver")
        self.turn_url = f"turn:127.0.0.1:{self.turn_port}?transport=udp"

    def serve_args(self):
        args = ["--voice-url", self.janus_url, "--voice-secret-file", str(self.secret_file)]
        if self.turn:
            args += ["--voice-turn-urls", self.turn_url, "--voice-turn-secret-file", str(self.turn_secret_file)]
        return args

    def __exit__(self, *exc):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if os.environ.get("COWATCH_KEEP_VOICE_LOGS"):
            print(f"voice logs kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
