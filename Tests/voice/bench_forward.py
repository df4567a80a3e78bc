"""What forwarding a room's voice would cost the media server, beside mixing it
(bench_mixer.py): Janus's VideoRoom, the SFU that sends every listener every
speaker's own stream, with S speakers and L listeners, its CPU time read from
/proc for `--seconds`, with `commands/bench voice forward`.

Janus as Cowatch runs it (deploy/voice/janus-run) with VideoRoom let in beside
AudioBridge. The speakers are VideoRoom's remote publishers (plain RTP into
the room, as one Janus sends another), fed the same Opus packets as the
mixer's benchmark; each listener takes each speaker's stream through an RTP
forwarder to a UDP socket of its own, so that the room sends S x L streams, as
it would to L WebRTC listeners. With --srtp each forwarder encrypts what it
sends (SRTP, AES-128 and HMAC-SHA1-80, the key given as SDES gives it), as
Janus would for each WebRTC listener; without it, plain RTP, as the mixer's
benchmark sends. Run through Tests/voice/in-namespace.

    python3 Tests/voice/bench_forward.py --speakers 5 --listeners 50 --seconds 30 [--srtp]
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mixer import Janus, opus_packets, paced, room_shape_arguments, rtp_header  # noqa: E402
from voice_pages import make_audio  # noqa: E402
from voice_services import VoiceServices, wait_for_port  # noqa: E402

VIDEOROOM = "janus.plugin.videoroom"
# Janus's remote publishers take the RTP of their stream number m on SSRC
# 1000 + 10 m (REMOTE_PUBLISHER_BASE_SSRC and _STEP in its janus_videoroom.c).
REMOTE_SSRC = 1000


def with_videoroom(services):
    """Janus again on janus-run's own configuration, VideoRoom let in (with
    the same secret as its admin key), on the same port."""
    janus = services.processes[0]
    janus.terminate()
    janus.wait(timeout=10)
    folder = services.dir / "janus"
    config = folder / "janus.jcfg"
    config.write_text(config.read_text().replace("libjanus_videoroom.so,", ""))
    secret = services.secret_file.read_text().strip()
    (folder / "janus.plugin.videoroom.jcfg").write_text(
        f'general: {{\n\tadmin_key = "{secret}"\n\tlock_rtp_forward = true\n\tevents = false\n}}\n')
    log = services.dir / "janus-videoroom.log"
    restarted = subprocess.Popen(["janus", f"--configs-folder={folder}", f"--config={config}", "--disable-colors"],
                                 stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
    services.processes[0] = restarted
    wait_for_port(services.janus_port, restarted, log, "janus with VideoRoom")
    return restarted


def main():
    parser = room_shape_arguments()
    parser.add_argument("--srtp", action="store_true", help="the forwarders encrypt (SRTP), as for WebRTC listeners")
    args = parser.parse_args()
    # A master key and salt (16 + 14 bytes), as an SDES crypto line carries them.
    srtp = {"srtp_suite": 80, "srtp_crypto": base64.b64encode(os.urandom(30)).decode()} if args.srtp else {}
    folder = tempfile.mkdtemp(prefix="cowatch-voice-bench-")
    speech, _ = make_audio(folder)
    packets = opus_packets(speech, folder)
    with VoiceServices(turn=False) as services:
        janus_pid = with_videoroom(services).pid
        janus = Janus(services.janus_url, services.secret_file.read_text().strip())
        control = janus.attach(VIDEOROOM)
        room = 4242
        created = janus.message(control, {"request": "create", "room": room, "admin_key": janus.secret,
                                          "secret": janus.secret, "is_private": True, "audiocodec": "opus",
                                          "publishers": args.speakers, "audiolevel_event": True})
        assert created.get("videoroom") == "created", created
        speakers = []
        for number in range(args.speakers):
            added = janus.message(control, {
                "request": "add_remote_publisher", "room": room, "secret": janus.secret, "id": number + 1,
                "display": f"s{number}", "iface": "127.0.0.1", "port": 0,
                "streams": [{"type": "audio", "mindex": 0, "mid": "0", "codec": "opus"}]})
            assert added.get("videoroom") == "success", added
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("127.0.0.1", 0))
            speakers.append({"sock": sock, "to": (added.get("ip") or "127.0.0.1", added["port"]), "id": number + 1})
        # A remote publisher joins its room from a thread of its own, after
        # the answer: its streams can be forwarded once the room lists it.
        deadline = time.monotonic() + 10
        while True:
            listed = janus.message(control, {"request": "listparticipants", "room": room}).get("participants", [])
            if {p["id"] for p in listed} >= {s["id"] for s in speakers}:
                break
            assert time.monotonic() < deadline, f"the room lists {listed}, not every speaker"
            time.sleep(0.01)
        listeners = []
        for number in range(args.listeners):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("127.0.0.1", 0))
            sock.setblocking(False)
            for speaker in speakers:
                forwarded = janus.message(control, {
                    "request": "rtp_forward", "room": room, "publisher_id": speaker["id"], "secret": janus.secret,
                    "admin_key": janus.secret, "host": "127.0.0.1", "host_family": "ipv4",
                    "streams": [{"mid": "0", "port": sock.getsockname()[1]}], **srtp})
                assert forwarded.get("videoroom") == "rtp_forward", forwarded
            listeners.append({"sock": sock})

        def send(sequence, timestamp, payload):
            for speaker in speakers:
                speaker["sock"].sendto(rtp_header(sequence, timestamp, REMOTE_SSRC) + payload, speaker["to"])

        used, elapsed, received = paced(janus_pid, packets, listeners, send, args.warmup, args.seconds)
        shutil.rmtree(folder, ignore_errors=True)
        print(json.dumps({
            "speakers": args.speakers, "listeners": args.listeners, "srtp": args.srtp, "seconds": round(elapsed, 1),
            "janus_cpu_percent_of_one_core": round(100 * used / elapsed, 1),
            "forwarded_packets_per_second": round(received / elapsed),
            "expected_per_second": args.speakers * args.listeners * 50,
            # With SRTP, its authentication tag: 10 bytes more than what the speakers send.
            "bytes_per_packet_received": round(sum(r["bytes"] for r in listeners) / max(1, sum(r["received"] for r in listeners)), 1),
            "bytes_per_packet_sent": round(12 + sum(map(len, packets)) / len(packets), 1),
        }))


if __name__ == "__main__":
    main()
