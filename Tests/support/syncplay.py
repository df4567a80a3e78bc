"""Debian's Syncplay client in console mode (`syncplay --no-gui`), driving its own
headless mpv, against `cowatch serve --syncplay-port`: what Tests/syncplay and
the Syncplay benchmark share.

The client reads its console commands from standard input (`p` pauses or plays,
`s 1:05` seeks, `ch TEXT` chats, `t` toggles ready, `a PASSWORD` identifies as
the room's operator) and with `-d` writes every line it exchanges with the
server to its log. Its mpv is asked for `--input-ipc-server=PATH`, which
Syncplay uses as its own socket too; a second connection there reads the
player, as Tests/support/mpv.py does for `cowatch watch`."""
import os
import re
import shutil
import subprocess
import tempfile

from support.harness import wait_until
from support.mpv import MpvIPC

SYNCPLAY = shutil.which("syncplay") or "/usr/bin/syncplay"
MPV = shutil.which("mpv") or "/usr/bin/mpv"
SYNCPLAY_BANNER = re.compile(r"syncplay on [^ ]*:(\d+)")


def syncplay_missing():
    """Why the Syncplay client cannot run here, or None."""
    for path in (SYNCPLAY, MPV):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (commands/setup installs syncplay and mpv)"
    return None


def syncplay_port(server):
    """The Syncplay port a `cowatch serve --syncplay-port 0` chose (its banner)."""
    def found():
        matches = SYNCPLAY_BANNER.findall(server.log())
        return int(matches[-1]) if matches else None
    return wait_until(found, 10, "the syncplay banner")


class SyncplayClient:
    """One `syncplay --no-gui` as `name` in `room` at `address` (HOST:PORT),
    playing `media` (a file, or None) in a headless mpv; its output in
    `work/NAME-*/syncplay.log`. `env`: its environment (SSL_CERT_FILE for a
    private CA)."""

    def __init__(self, work, address, name, room, media, env=None, ipc=True):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"{name}-", dir=work)
        self.log_path = os.path.join(self.dir, "syncplay.log")
        self.socket = os.path.join(self.dir, "mpv.sock")
        home = os.path.join(self.dir, "home")
        os.makedirs(home)
        self.log = open(self.log_path, "wb")
        mpv_options = ["--vo=null", "--ao=null", f"--input-ipc-server={self.socket}"]
        command = [SYNCPLAY, "--no-gui", "--no-store", "-d", "-a", address, "-n", name, "-r", room,
                   "--player-path", MPV] + ([media] if media else []) + ["--", *mpv_options]
        # Its own HOME: no configuration of the machine's user is read or written.
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**(env or os.environ), "HOME": home, "PYTHONUNBUFFERED": "1"})
        self.ipc = None
        if ipc:
            wait_until(lambda: os.path.exists(self.socket) or self.process.poll() is not None, 20,
                       f"{name}'s mpv socket")
            assert self.process.poll() is None, self.output()
            self.ipc = wait_until(lambda: MpvIPC.attempt(self.socket), 10, f"{name}'s mpv IPC")

    def type(self, line):
        """One console command, as a person types it."""
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def output(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def received(self):
        """Every line the server sent it, as its debug log shows them."""
        return [line.split("client/server << ", 1)[1] for line in self.output().splitlines()
                if "client/server << " in line]

    def sent(self):
        return [line.split("client/server >> ", 1)[1] for line in self.output().splitlines()
                if "client/server >> " in line]

    def past_file_load(self):
        """Its client reads its player's changes again: for its first second with
        a file (Syncplay's MPV_NEWFILE_IGNORE_TIME) it takes no change of mpv's
        for the person's and puts mpv back as the server's next State says, so a
        play pressed then is undone before it is sent. Its debug log tells: a
        poll of mpv after the file was sent, not followed by "Ignoring
        _fileIsLoaded MPV_NEWFILE delay"."""
        lines = self.output().splitlines()
        sent = next((i for i, line in enumerate(lines) if 'client/server >> {"Set": {"file"' in line), None)
        if sent is None:
            return False
        return any("player << <paused=" in line and i + 1 < len(lines) and "MPV_NEWFILE delay" not in lines[i + 1]
                   for i, line in enumerate(lines[sent:-1], start=sent))

    def get(self, name):
        return self.ipc.get(name) if self.ipc else None

    def log_tail(self, lines=30):
        return "\n".join(self.output().splitlines()[-lines:])

    def stop(self):
        if self.ipc:
            self.ipc.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # Its mpv, should it outlive it.
        subprocess.run(["pkill", "-f", f"input-ipc-server={self.socket}"], check=False)
        self.log.close()
