"""How much of this machine the media server takes to mix a room's voice:
Janus's AudioBridge with S speakers and L listeners, its CPU time read from
/proc while it mixes for `--seconds`, with `commands/bench voice`.

The participants are Janus's plain-RTP ones (allow_rtp_participants), which
the benchmark drives from UDP sockets on loopback, so that the machine's
cores go to Janus rather than to browsers: each speaker sends a spoken file's
Opus packets (ffmpeg encodes espeak-ng's speech) every 20 ms, and every
participant receives its own mix, as a WebRTC member's page would, without
DTLS-SRTP's cost (which Janus pays per member in a real room; see
docs/benchmarks.md). Run through Tests/voice/in-namespace.

    python3 Tests/voice/bench_mixer.py --speakers 1 --listeners 20 --seconds 20
"""

import argparse
import json
import os
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from voice_pages import make_audio  # noqa: E402
from voice_services import VoiceServices  # noqa: E402


def opus_packets(wav, folder):
    """The Opus packets of `wav`, 20 ms each, from an Ogg file ffmpeg makes."""
    ogg = Path(folder) / "speech.opus"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(wav), "-c:a", "libopus", "-b:a", "32k",
                    "-frame_duration", "20", "-application", "voip", "-ar", "48000", "-ac", "1", str(ogg)],
                   check=True, timeout=120)
    data = ogg.read_bytes()
    packets, partial, at = [], b"", 0
    while at + 27 <= len(data) and data[at:at + 4] == b"OggS":
        segments = data[at + 26]
        lacing = data[at + 27:at + 27 + segments]
        body = at + 27 + segments
        for size in lacing:
            partial += data[body:body + size]
            body += size
            if size < 255:
                packets.append(partial)
                partial = b""
        at = body
    return [p for p in packets if not p.startswith(b"OpusHead") and not p.startswith(b"OpusTags")]


class Janus:
    def __init__(self, url, secret):
        from websockets.sync.client import connect
        self.ws = connect(url, subprotocols=["janus-protocol"], open_timeout=10, max_size=None).__enter__()
        self.secret = secret
        self.number = 0
        self.session = self.call({"janus": "create"})["data"]["id"]

    def call(self, message, jsep_wait=False):
        self.number += 1
        transaction = f"b{self.number}"
        message = {**message, "transaction": transaction, "apisecret": self.secret}
        if "session_id" not in message and message["janus"] != "create":
            message["session_id"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            answer = json.loads(self.ws.recv(timeout=20))
            if answer.get("transaction") != transaction or answer.get("janus") == "ack":
                continue
            return answer

    def attach(self, plugin="janus.plugin.audiobridge"):
        return self.call({"janus": "attach", "plugin": plugin})["data"]["id"]

    def message(self, handle, body):
        answer = self.call({"janus": "message", "handle_id": handle, "body": body})
        return answer.get("plugindata", {}).get("data", {})


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rtp_header(sequence, timestamp, ssrc):
    """A plain RTP header: version 2, Opus's payload type 111."""
    return struct.pack("!BBHII", 0x80, 111, sequence & 0xFFFF, timestamp & 0xFFFFFFFF, ssrc)


def paced(janus_pid, packets, receivers, send, warmup, seconds):
    """Calls `send(sequence, timestamp, payload)` every 20 ms (one Opus packet
    of 960 samples at 48 kHz) while `receivers` (dicts with a non-blocking
    "sock") count what arrives from a thread of their own; after `warmup` s,
    measures for `seconds`. Returns (Janus's CPU s, elapsed s, packets received)."""
    selector = selectors.DefaultSelector()
    for receiver in receivers:
        receiver["received"], receiver["bytes"] = 0, 0
        selector.register(receiver["sock"], selectors.EVENT_READ, receiver)
    stop = threading.Event()

    def receive():
        while not stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                while True:
                    try:
                        key.data["bytes"] += len(key.data["sock"].recv(2048))
                        key.data["received"] += 1
                    except BlockingIOError:
                        break

    thread = threading.Thread(target=receive, daemon=True)
    thread.start()
    reading = lambda: (cpu_seconds(janus_pid), time.monotonic(), sum(r["received"] for r in receivers))  # noqa: E731
    sequence = 0
    started = time.monotonic()
    before, tick = None, started
    while time.monotonic() < started + warmup + seconds:
        if before is None and time.monotonic() >= started + warmup:
            before = reading()
        send(sequence, sequence * 960, packets[sequence % len(packets)])
        sequence += 1
        tick += 0.02
        time.sleep(max(0.0, tick - time.monotonic()))
    after = reading()
    stop.set()
    thread.join()
    return tuple(b - a for a, b in zip(before, after))


def room_shape_arguments():
    """The options both benchmarks take: the room's shape and how long to measure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--speakers", type=int, default=1)
    parser.add_argument("--listeners", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=3)
    return parser


def main():
    parser = room_shape_arguments()
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="cowatch-voice-bench-")
    speech, _ = make_audio(folder)
    packets = opus_packets(speech, folder)
    with VoiceServices(turn=False) as services:
        janus_pid = services.processes[0].pid
        janus = Janus(services.janus_url, services.secret_file.read_text().strip())
        control = janus.attach()
        room = 4242
        created = janus.message(control, {"request": "create", "room": room, "admin_key": janus.secret,
                                          "secret": janus.secret, "is_private": True, "sampling_rate": 16000,
                                          "audiolevel_event": True, "allow_rtp_participants": True})
        assert created.get("audiobridge") == "created", created
        members = []
        total = args.speakers + args.listeners
        for index in range(total):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("127.0.0.1", 0))
            sock.setblocking(False)
            handle = janus.attach()
            speaker = index < args.speakers
            joined = janus.message(handle, {
                "request": "join", "room": room, "id": index + 1, "display": f"p{index}", "muted": not speaker,
                "rtp": {"ip": "127.0.0.1", "port": sock.getsockname()[1], "payload_type": 111}})
            assert joined.get("audiobridge") == "joined", joined
            rtp = joined["rtp"]
            members.append({"sock": sock, "to": (rtp["ip"], rtp["port"]), "speaker": speaker})
        speakers = [m for m in members if m["speaker"]]
        # Janus sends a plain-RTP participant its mix once it has heard from
        # it: each listener says one packet, which its mute keeps out of the mix.
        for number, member in enumerate(members):
            member["sock"].sendto(rtp_header(0, 0, 0x20000 + number) + packets[0], member["to"])

        def send(sequence, timestamp, payload):
            for number, member in enumerate(speakers):
                member["sock"].sendto(rtp_header(sequence, timestamp, 0x10000 + number) + payload, member["to"])

        used, elapsed, received = paced(janus_pid, packets, members, send, args.warmup, args.seconds)
        mixes = received / elapsed
        shutil.rmtree(folder, ignore_errors=True)
        print(json.dumps({
            "speakers": args.speakers, "listeners": args.listeners, "seconds": round(elapsed, 1),
            "janus_cpu_percent_of_one_core": round(100 * used / elapsed, 1),
            "mix_packets_per_second": round(mixes), "expected_per_second": total * 50,
        }))


if __name__ == "__main__":
    main()
