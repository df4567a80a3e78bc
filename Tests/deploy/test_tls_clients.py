"""Every client through nginx terminating TLS, as deploy/nginx/cowatch.conf does
it: a throwaway CA (openssl) signs the site's certificate for `localhost`, and
the clients trust it the way a person would, through `SSL_CERT_FILE` (OpenSSL's
default verify paths) or `--ca-file`.

- a bot pipes `/watch` and `/play` into `cowatch connect wss://...`;
- the page's own `https://` link works in `cowatch connect`;
- `cowatch watch https://...` joins with a headless mpv and plays the item;
- refusals in words, each with a failing exit code and no line of
  libwebsockets' before them: a certificate nobody trusts, one the given
  `--ca-file` does not vouch for, a certificate for another name (naming the
  names it is for), a server that does not speak TLS;
- an IPv6 address (`wss://[::1]:PORT`) sent as a bracketed `Host` and checked
  against the certificate's IP addresses;
- the landing page served over https shows `wss://` / `https://` in its hints.

COWATCH_BIN names the cowatch binary; nginx and openssl come from Debian
(commands/setup installs them).
"""
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.harness import Serve, free_port, wait_until  # noqa: E402
from support.media_server import MediaServer  # noqa: E402
from support.mpv import make_clip  # noqa: E402

BIN = os.path.abspath(os.environ.get("COWATCH_BIN", ".build/debug/cowatch"))
ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy" / "nginx" / "cowatch.conf"


def run(*args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, timeout=60, **kwargs)


def make_ca(folder):
    """A CA, the site's certificate for localhost and ::1 signed by it, and a
    second, unrelated CA (other-ca.pem)."""
    f = Path(folder)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Cowatch test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", f / "ca.key", "-out", f / "ca.pem")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
        "-keyout", f / "site.key", "-out", f / "site.csr")
    (f / "site.ext").write_text("subjectAltName=DNS:localhost,IP:::1\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f / "site.csr", "-CA", f / "ca.pem", "-CAkey", f / "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", f / "site.ext", "-out", f / "site.pem")
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Another CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", f / "other-ca.key", "-out", f / "other-ca.pem")
    return f / "ca.pem"


class Nginx:
    """nginx with the deployed site, only its addresses, certificate and upstream
    port swapped (as Tests/deploy/nginx_proxy_test.sh checks line by line)."""

    def __init__(self, folder, upstream_port, tls_port, http_port):
        self.folder = Path(folder)
        site = SITE.read_text()
        site = site.replace("listen 443 ssl;", f"listen 127.0.0.1:{tls_port} ssl;\n    listen [::1]:{tls_port} ssl;")
        site = site.replace("listen 80;", f"listen 127.0.0.1:{http_port};")
        site = "\n".join(line for line in site.splitlines() if "listen [::]:" not in line)
        lines = []
        for line in site.splitlines():
            stripped = line.strip()
            if stripped.startswith("ssl_certificate_key "):
                line = f"    ssl_certificate_key {self.folder / 'site.key'};"
            elif stripped.startswith("ssl_certificate "):
                line = f"    ssl_certificate {self.folder / 'site.pem'};"
            lines.append(line)
        site = "\n".join(lines).replace("server 127.0.0.1:7480;", f"server 127.0.0.1:{upstream_port};")
        (self.folder / "site.conf").write_text(site)
        for name in ("logs", "temp"):
            (self.folder / name).mkdir(exist_ok=True)
        os.chmod(self.folder, 0o755)
        t = self.folder / "temp"
        (self.folder / "nginx.conf").write_text(f"""worker_processes 1;
error_log {self.folder}/logs/error.log info;
pid {self.folder}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log {self.folder}/logs/access.log;
    client_body_temp_path {t}/client_body;
    proxy_temp_path {t}/proxy;
    fastcgi_temp_path {t}/fastcgi;
    uwsgi_temp_path {t}/uwsgi;
    scgi_temp_path {t}/scgi;
    include {self.folder}/site.conf;
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        subprocess.run([nginx, "-p", f"{self.folder}/", "-c", f"{self.folder}/nginx.conf",
                        "-e", f"{self.folder}/logs/error.log"], check=True, timeout=30)
        wait_until(lambda: port_open(tls_port), 10, "nginx on its TLS port")

    def stop(self):
        pid_file = self.folder / "nginx.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().strip())
            os.kill(pid, 15)
            wait_until(lambda: not process_alive(pid), 10, "nginx stopped")


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def process_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


class Observer:
    """A member that shares none of the project's code, over wss:// with the CA."""

    def __init__(self, url, ca):
        context = ssl.create_default_context(cafile=str(ca))
        self.socket = connect(url, subprotocols=["cowatch.v1.json"], ssl=context, open_timeout=10)
        self.events = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for message in self.socket:
                with self.lock:
                    self.events.append(json.loads(message))
        except Exception:  # noqa: BLE001 - the socket closed under the reader
            pass

    def last(self, kind):
        with self.lock:
            found = [e for e in self.events if e.get("type") == kind]
        return found[-1] if found else None

    def state(self):
        return self.last("state")

    def member(self, name):
        """The newest news of the member called `name`."""
        with self.lock:
            found = [e["participant"] for e in self.events
                     if e.get("type") == "participant" and e.get("participant", {}).get("name") == name]
        return found[-1] if found else None

    def close(self):
        self.socket.close()


@pytest.fixture(scope="module")
def site():
    folder = tempfile.mkdtemp(prefix="cowatch-tls-")
    ca = make_ca(folder)
    media_dir = Path(folder) / "media"
    media_dir.mkdir()
    clip = media_dir / "clip.mp4"
    make_clip(clip, 30, fps=25, size="160x90", crf=35)
    tls_port, http_port = free_port(), free_port()
    with MediaServer(media_dir) as media:
        server = Serve("--store", "memory", "--media-check-private", "true", "--trusted-proxies", "127.0.0.1",
                       "--allowed-hosts", "localhost", binary=BIN, log_path=os.path.join(folder, "server.log"))
        nginx = Nginx(folder, server.port, tls_port, http_port)
        yield {"ca": ca, "folder": Path(folder), "tls": tls_port, "plain": server.port, "server": server,
               "media": media.url("clip.mp4")}
        nginx.stop()
        server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def env_without_trust(**extra):
    """The environment with no CA of the test's: the system's store only."""
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    env["HOME"] = tempfile.mkdtemp(prefix="cowatch-tls-home-")
    env.update(extra)
    return env


def test_a_bot_over_wss_trusting_the_ca_through_ssl_cert_file(site):
    room = f"wss://localhost:{site['tls']}/rooms/bots"
    observer = Observer(f"{room}?name=observer", site["ca"])
    try:
        wait_until(observer.state, 10, "the observer's first state")
        result = subprocess.run([BIN, "connect", room, "--name", "bot"],
                                input=f"/watch {site['media']} Clip\n/play\n", capture_output=True, text=True,
                                timeout=60, env=env_without_trust(SSL_CERT_FILE=str(site["ca"])))
        assert result.returncode == 0, result.stderr
        # Nobody in the room plays the item, so /play starts it at once.
        wait_until(lambda: ((observer.state() or {}).get("playback") or {}).get("status") == "playing", 10,
                   "the room playing")
        assert observer.member("bot")
    finally:
        observer.close()


def test_the_pages_https_link_in_cowatch_connect_with_ca_file(site):
    link = f"https://localhost:{site['tls']}/rooms/linked"
    result = subprocess.run([BIN, "connect", link, "--name", "linker", "--ca-file", str(site["ca"])],
                            input="/who\n", capture_output=True, text=True, timeout=60, env=env_without_trust())
    assert result.returncode == 0, result.stderr
    assert "linker" in result.stdout


def refusal(address, *extra):
    result = subprocess.run([BIN, "connect", address, "--name", "nobody", *extra], input="/who\n",
                            capture_output=True, text=True, timeout=60, env=env_without_trust())
    return result.returncode, result.stderr


def only_our_words(said):
    """Nothing of libwebsockets' own logging before the client's sentence."""
    assert "E: " not in said and "SSL error" not in said, said


def test_an_untrusted_certificate_is_refused_in_words(site):
    code, said = refusal(f"wss://localhost:{site['tls']}/rooms/refused")
    assert code != 0
    assert "does not trust" in said and "--ca-file" in said, said
    only_our_words(said)


def test_a_ca_file_that_does_not_vouch_is_named_not_advised(site):
    other = site["folder"] / "other-ca.pem"
    code, said = refusal(f"wss://localhost:{site['tls']}/rooms/refused", "--ca-file", str(other))
    assert code != 0
    assert f"{other} does not vouch for it either" in said, said
    assert "pass that CA's certificate with --ca-file" not in said, said
    only_our_words(said)


def test_a_certificate_for_another_name_is_refused_in_words(site):
    # The certificate names localhost and ::1; the address names 127.0.0.1.
    code, said = refusal(f"wss://127.0.0.1:{site['tls']}/rooms/refused", "--ca-file", str(site["ca"]))
    assert code != 0
    assert "certificate for another name" in said, said
    assert "it is for localhost, ::1" in said, said
    only_our_words(said)


def test_an_ipv6_address_in_brackets(site):
    # Host: [::1]:PORT (nginx answers 400 to a bare ::1), and the certificate
    # checked for the address ::1, which it lists.
    result = subprocess.run([BIN, "connect", f"wss://[::1]:{site['tls']}/rooms/six", "--name", "six",
                             "--ca-file", str(site["ca"])], input="/who\n", capture_output=True, text=True,
                            timeout=60, env=env_without_trust())
    assert result.returncode == 0, result.stderr
    assert "six" in result.stdout
    access = (site["folder"] / "logs" / "access.log").read_text()
    assert "/rooms/six" in access and '" 400 ' not in access.split("/rooms/six")[-1].splitlines()[0], access[-2000:]


def test_a_server_without_tls_is_refused_in_words(site):
    code, said = refusal(f"wss://127.0.0.1:{site['plain']}/rooms/refused", "--ca-file", str(site["ca"]))
    assert code != 0
    assert "did not answer in TLS" in said, said
    only_our_words(said)


def test_an_unreadable_ca_file_is_refused_before_connecting(site):
    code, said = refusal(f"wss://localhost:{site['tls']}/rooms/refused", "--ca-file", "/nonexistent/ca.pem")
    assert code != 0
    assert "cannot read /nonexistent/ca.pem" in said, said


def test_the_landing_page_over_https_shows_secure_addresses(site):
    context = ssl.create_default_context(cafile=str(site["ca"]))
    page = urllib.request.urlopen(f"https://localhost:{site['tls']}/", context=context, timeout=10).read().decode()
    script = urllib.request.urlopen(f"https://localhost:{site['tls']}/static/landing.js", context=context,
                                    timeout=10).read().decode()
    # The hint is written by the page from its own location: its scheme follows
    # the page's, so it never suggests ws:// to a page served over https.
    assert "cowatch connect <span id=\"origin\">" in page
    assert "ws://" not in page
    assert "`${location.protocol}//${location.host}`" in script


@pytest.mark.skipif(shutil.which("mpv") is None, reason="mpv is not installed (commands/setup installs it)")
def test_cowatch_watch_https_plays_with_a_headless_mpv(site):
    room = f"https://localhost:{site['tls']}/rooms/desktop"
    observer = Observer(f"wss://localhost:{site['tls']}/rooms/desktop?name=host", site["ca"])
    # The room's creator is shown its owner key; mpv comes in as the owner with it.
    owner_key = wait_until(lambda: (observer.last("welcome") or {}).get("ownerKey"), 10, "the owner key")
    tmp = tempfile.mkdtemp(prefix="cowatch-tls-mpv-")
    log = open(os.path.join(tmp, "watch.log"), "wb")
    watch = subprocess.Popen([BIN, "watch", room, "--name", "desk", "--owner", owner_key, "--mpv-option", "vo=null",
                              "--mpv-option", "ao=null"], stdout=log, stderr=subprocess.STDOUT,
                             env=env_without_trust(SSL_CERT_FILE=str(site["ca"]), TMPDIR=tmp + "/"))
    try:
        wait_until(observer.state, 10, "the observer's first state")

        member = wait_until(lambda: observer.member("desk"), 30, "mpv's member in the room")
        assert member.get("player") is True
        assert member.get("owner") is True, member
        observer.socket.send(f"/watch {site['media']} Clip")
        observer.socket.send("/play")

        wait_until(lambda: (observer.member("desk") or {}).get("ready") is True, 30, "mpv ready with the item, over https")
        assert watch.poll() is None
    finally:
        observer.close()
        watch.terminate()
        try:
            watch.wait(timeout=10)
        except subprocess.TimeoutExpired:
            watch.kill()
        log.close()
        print(open(os.path.join(tmp, "watch.log"), errors="replace").read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_refused_upgrade_over_tls_is_read_again_in_words(site):
    # The server refuses a room name it cannot take with a status and a sentence;
    # the client asks again over TLS to read that sentence.
    code, said = refusal(f"wss://localhost:{site['tls']}/rooms/{'x' * 80}", "--ca-file", str(site["ca"]))
    assert code != 0
    assert "the server answered 4" in said, said


def test_cowatch_admin_speaks_tls_to_an_https_address(site):
    # This server runs without an admin token: the admin API's own answer, read
    # over TLS through nginx (which passes /admin/ on from this machine), not
    # nginx's page for plain HTTP sent to its TLS port.
    result = subprocess.run([BIN, "admin", "--server", f"https://localhost:{site['tls']}", "--ca-file", str(site["ca"]),
                             "rooms"], capture_output=True, text=True, timeout=30,
                            env=env_without_trust(COWATCH_ADMIN_TOKEN="some-operator-token-0123"))
    assert result.returncode != 0
    assert "the server answered 404: the admin API is off" in result.stderr, result.stdout + result.stderr
    assert "<html" not in result.stdout + result.stderr
