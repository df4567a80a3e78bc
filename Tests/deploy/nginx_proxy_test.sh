#!/usr/bin/env bash
# The nginx site in deploy/nginx/cowatch.conf, run for real in front of a real
# server: only the listen addresses, the certificate and the upstream port are
# swapped for throwaway loopback ones, so the proxy rules tested are the ones
# deployed. nginx runs with a private prefix in a temporary folder; nothing
# outside it is touched (except installing Debian's nginx and openssl when they
# are missing). Prints "N passed, M failed" last; exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
site=${COWATCH_NGINX_SITE:-deploy/nginx/cowatch.conf}

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1"; }
summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}
# A step the rest cannot do without: count it, show why, stop.
abort() {
  fail "$1"
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 30 "$2" | sed 's/^/    /'
  summary
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cowatch-nginx.XXXXXX")
# nginx's workers drop root; they must be able to reach their temp folders here.
chmod 0755 "$tmp"
server_pid=""
nginx_bin=""

stop_nginx() {
  [ -f "$tmp/nginx.pid" ] || return 0
  local pid
  pid=$(cat "$tmp/nginx.pid" 2>/dev/null) || return 0
  [ -n "$pid" ] || return 0
  kill -QUIT "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
stop_server() {
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null || { server_pid=""; return 0; }
  for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
cleanup() {
  stop_nginx
  stop_server
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# True once something accepts connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- What the test needs -----------------------------------------------------

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 $sudo apt-get -o DPkg::Lock::Timeout=120 update -qq >"$tmp/apt.log" 2>&1 &&
    timeout 600 $sudo apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "$@" >>"$tmp/apt.log" 2>&1
}

# The build's own system packages, and Python's websockets.
timeout 900 commands/setup >"$tmp/setup.log" 2>&1 || abort "commands/setup" "$tmp/setup.log"

missing=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || missing+=(nginx)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "nginx_proxy_test: installing ${missing[*]}"
  apt_install "${missing[@]}" || abort "installing ${missing[*]}" "$tmp/apt.log"
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

if ! python3 -c "import websockets" 2>/dev/null; then
  timeout 300 python3 -m pip install -q --disable-pip-version-check "websockets>=13" >"$tmp/pip.log" 2>&1 ||
    abort "installing Python's websockets" "$tmp/pip.log"
fi

timeout 1200 swift build --product cowatch >"$tmp/build.log" 2>&1 || abort "swift build --product cowatch" "$tmp/build.log"
bin="$(swift build --show-bin-path)/cowatch"
[ -x "$bin" ] || abort "the cowatch binary at $bin"

# --- The server, on loopback -------------------------------------------------

read -r server_port tls_port http_port < <(python3 - <<'EOF'
import socket
sockets = [socket.socket() for _ in range(3)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
EOF
)

extra=()
help=$("$bin" serve --help 2>&1 || true)
# The store's options, once this build has them; a fresh database per run.
if grep -q -- "--data-dir" <<<"$help"; then extra+=(--data-dir "$tmp/data"); fi
# Pings every second and a 3 s idle timeout: members stay only if pings and pongs
# really cross the proxy both ways.
"$bin" serve --host 127.0.0.1 --port "$server_port" --ping-interval 1 --idle-timeout 3 "${extra[@]}" \
  >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 150); do
  port_open "$server_port" && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
port_open "$server_port" || abort "the server starts on 127.0.0.1:$server_port" "$tmp/server.log"

# --- nginx with the deployed site --------------------------------------------

timeout 60 openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >"$tmp/openssl.log" 2>&1 ||
  abort "a throwaway certificate" "$tmp/openssl.log"

sed -E \
  -e "s|^([[:space:]]*)listen 80;|\1listen 127.0.0.1:$http_port;|" \
  -e "s|^([[:space:]]*)listen 443 ssl;|\1listen 127.0.0.1:$tls_port ssl;|" \
  -e '/^[[:space:]]*listen \[::\]:(80|443)( ssl)?;/d' \
  -e "s|^([[:space:]]*ssl_certificate[[:space:]]+)/etc/ssl/[^;]*;|\1$tmp/cert.pem;|" \
  -e "s|^([[:space:]]*ssl_certificate_key[[:space:]]+)/etc/ssl/[^;]*;|\1$tmp/key.pem;|" \
  -e "s|server 127\.0\.0\.1:7480;|server 127.0.0.1:$server_port;|" \
  "$site" >"$tmp/site.conf"

# Only those lines changed, and none of the deployed addresses or paths is left.
changed=$(diff "$site" "$tmp/site.conf" | grep '^<' | grep -Ev 'listen |ssl_certificate(_key)? |server 127\.0\.0\.1:7480;')
if [ -z "$changed" ] && [ "$(grep -c "listen 127.0.0.1:" "$tmp/site.conf")" -eq 2 ] &&
  ! sed 's/#.*//' "$tmp/site.conf" | grep -Eq '/etc/ssl|:7480|listen (\[::\]:)?(80|443)'; then
  pass "the test site is $site with only addresses, certificate and upstream port swapped"
else
  abort "the test site is $site with only addresses, certificate and upstream port swapped"
fi

mkdir -p "$tmp/logs" "$tmp/temp"
cat >"$tmp/nginx.conf" <<EOF
worker_processes 1;
error_log $tmp/logs/error.log info;
events { worker_connections 256; }
http {
    access_log $tmp/logs/access.log;
    client_body_temp_path $tmp/temp/client_body;
    proxy_temp_path $tmp/temp/proxy;
    fastcgi_temp_path $tmp/temp/fastcgi;
    uwsgi_temp_path $tmp/temp/uwsgi;
    scgi_temp_path $tmp/temp/scgi;
    include $tmp/site.conf;
}
EOF
nginx_args=(-p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log")
if timeout 30 "$nginx_bin" "${nginx_args[@]}" -t -g "pid $tmp/nginx.pid;" >"$tmp/nginx-t.log" 2>&1 &&
  ! grep -q '\[warn\]' "$tmp/nginx-t.log"; then
  pass "nginx -t accepts the site without warnings"
else
  abort "nginx -t accepts the site without warnings" "$tmp/nginx-t.log"
fi
timeout 30 "$nginx_bin" "${nginx_args[@]}" -g "daemon on; pid $tmp/nginx.pid;" >"$tmp/nginx-start.log" 2>&1 ||
  abort "nginx starts" "$tmp/nginx-start.log"
for _ in $(seq 1 100); do
  port_open "$tls_port" && port_open "$http_port" && break
  sleep 0.1
done
port_open "$tls_port" && port_open "$http_port" || abort "nginx listens on 127.0.0.1:$tls_port and :$http_port" "$tmp/logs/error.log"

# --- Through nginx -------------------------------------------------------------

timeout 90 python3 - "$tls_port" "$http_port" "$tmp/cert.pem" "$server_pid" "$tmp/site.conf" "$server_port" \
  >"$tmp/checks.log" 2>&1 <<'EOF'
import asyncio, http.client, json, os, re, signal, ssl, sys, traceback
import websockets

tls_port, http_port, cert, server_pid, site = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
server_port = int(sys.argv[6])
context = ssl.create_default_context(cafile=cert)
base = f"wss://127.0.0.1:{tls_port}/rooms"


def check(name, condition, detail=""):
    print(("ok   - " if condition else "FAIL - ") + name + ("" if condition or not detail else f" ({detail})"), flush=True)


def get(path, tls=True):
    connection = (http.client.HTTPSConnection("127.0.0.1", tls_port, context=context, timeout=5) if tls
                  else http.client.HTTPConnection("127.0.0.1", http_port, timeout=5))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def attempt(name, function):
    try:
        function()
    except Exception as error:
        check(name, False, f"{type(error).__name__}: {error}")


def healthz():
    status, _, body = get("/healthz")
    check("GET /healthz over TLS answers ok", status == 200 and body.strip() == "ok", f"{status} {body[:80]!r}")


def redirect():
    status, headers, _ = get("/rooms/lobby?name=x", tls=False)
    location = headers.get("location", "")
    check("plain HTTP redirects to https with the same path", status == 301 and location.startswith("https://")
          and location.endswith("/rooms/lobby?name=x"), f"{status} {location!r}")


def room_page():
    status, headers, body = get("/rooms/lobby")
    check("GET /rooms/lobby (no upgrade) is the room's page", status == 200 and headers.get("content-type", "").startswith("text/html"),
          f"{status} {headers.get('content-type')}")


def metrics():
    status, _, body = get("/metrics")
    check("GET /metrics from loopback is proxied", status == 200 and "cowatch_connections" in body, f"{status}")


def websocket_location():
    text = open(site).read()
    block = re.search(r"location /rooms/ \{(.*?)\n    \}", text, re.S)
    body = block.group(1) if block else ""
    seconds = lambda key: int((re.search(rf"{key}\s+(\d+)s;", body) or [0, 0])[1])
    check("the WebSocket location is unbuffered and its timeouts outlast pings and the idle timeout",
          "proxy_buffering off;" in body and seconds("proxy_read_timeout") >= 60 and seconds("proxy_send_timeout") >= 60
          and "$http_upgrade" in body, f"read {seconds('proxy_read_timeout')}s send {seconds('proxy_send_timeout')}s")


async def until(ws, predicate, timeout=5.0):
    async def loop():
        while True:
            event = json.loads(await ws.recv())
            if predicate(event):
                return event
    return await asyncio.wait_for(loop(), timeout)


def connect(name):
    return websockets.connect(f"{base}/lobby?name={name}", subprotocols=["cowatch.v1.json"], ssl=context,
                              open_timeout=5, close_timeout=5)


async def members():
    async with connect("alice") as alice:
        welcome = json.loads(await asyncio.wait_for(alice.recv(), 5))
        state = json.loads(await asyncio.wait_for(alice.recv(), 5))
        check("a member connects through nginx with cowatch.v1.json and gets welcome then state",
              alice.subprotocol == "cowatch.v1.json" and welcome.get("type") == "welcome" and welcome.get("room") == "lobby"
              and state.get("type") == "state", f"{alice.subprotocol} {welcome.get('type')} {state.get('type')}")

        await alice.send("/watch https://example.org/a.mp4")
        paused = await until(alice, lambda e: e.get("type") == "state" and e["playback"]["status"] == "paused")
        check("/watch through nginx gives a paused state", paused["playback"]["status"] == "paused")

        # The same wait on a connection straight to the server: when members are
        # dropped, this tells the server's fault from the proxy's.
        direct = await websockets.connect(f"ws://127.0.0.1:{server_port}/rooms/control?name=carol",
                                          subprotocols=["cowatch.v1.json"], open_timeout=5, close_timeout=2)
        async with connect("bob") as bob:
            await until(bob, lambda e: e.get("type") == "welcome")
            # Several server pings (every 1 s, idle timeout 3 s) cross the proxy:
            # time on purpose, longer than the idle timeout that would close a
            # member whose pongs did not come back through nginx.
            await asyncio.sleep(4.5)
            check("control, no proxy: a member connected straight to the server stays across the same pings",
                  direct.close_code is None, f"closed {direct.close_code} {direct.close_reason!r}")
            await direct.close()
            await alice.send("hello through nginx")
            chat = await until(bob, lambda e: e.get("type") == "chat")
            check("a second member sees the first's chat after several pings through nginx",
                  chat.get("text") == "hello through nginx" and chat.get("name") == "alice", json.dumps(chat)[:200])

            # SIGTERM: every member is closed with 1001, through the proxy.
            os.kill(server_pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(alice.wait_closed(), 10)
            except asyncio.TimeoutError:
                pass
            check("a server shutdown reaches members through nginx as close 1001", alice.close_code == 1001,
                  f"close code {alice.close_code}")


for name, function in [("healthz", healthz), ("redirect", redirect), ("room page", room_page),
                       ("metrics", metrics), ("websocket location", websocket_location)]:
    attempt(name, function)
attempt("members through nginx", lambda: asyncio.run(members()))
EOF
python_status=$?
cat "$tmp/checks.log"
passed=$((passed + $(grep -c '^ok   - ' "$tmp/checks.log")))
failed=$((failed + $(grep -c '^FAIL - ' "$tmp/checks.log")))
expected=10
got=$(grep -Ec '^(ok   - |FAIL - )' "$tmp/checks.log")
if [ "$python_status" -ne 0 ] || [ "$got" -ne "$expected" ]; then
  fail "the client checks ran to the end ($got of $expected reported, exit $python_status)"
fi

# The checks end by sending the server SIGTERM; if they did not get that far, do it here.
grep -q 'close 1001' "$tmp/checks.log" || kill -TERM "$server_pid" 2>/dev/null
# It exits 0 within a few seconds.
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then
  fail "the server exits 0 on SIGTERM (still running after 10 s)"
else
  wait "$server_pid"
  status=$?
  server_pid=""
  [ "$status" -eq 0 ] && pass "the server exits 0 on SIGTERM" || fail "the server exits 0 on SIGTERM (exit $status)"
fi

if [ "$failed" -gt 0 ]; then
  echo "--- server log"; tail -n 20 "$tmp/server.log" | sed 's/^/    /'
  echo "--- nginx error log"; tail -n 20 "$tmp/logs/error.log" | sed 's/^/    /'
fi
summary
