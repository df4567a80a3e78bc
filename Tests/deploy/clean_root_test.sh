#!/usr/bin/env bash
# The shipped deployment on a clean system: Debian's debootstrap makes a bare
# Debian 12 root; a copy of it gets exactly the packages of deploy/runtime-packages
# (the one list the Dockerfile installs and deploy/README gives to systemd and
# cluster hosts), with --no-install-recommends, plus the release binary and its
# Cowatch_CowatchWeb.resources as deploy/README installs them. The binary runs
# there (chroot, which shares this machine's loopback) and must serve a room to a
# WebSocket client, keep it in SQLite across a restart, and, as a cluster node with
# deploy/cluster/cluster.conf.example, keep it in a throwaway PostgreSQL. Copies
# without libwebsockets-evlib-ev or libev4 must fail, each with its message. The
# container image is built with deploy/README's own podman lines, run as they are
# written (the default build, with stand-ins for the Swift and Debian images, and
# the from-binary build around the same binary, on the same root imported as its
# base), and run with podman, where podman can run here; the systemd units must
# pass systemd-analyze verify.
#
#   COWATCH_BIN=path/to/cowatch Tests/deploy/clean_root_test.sh
#
# COWATCH_BIN: a release binary built on Debian 12 with --static-swift-stdlib
# (commands/check-deploy builds it and runs this). Needs root. Everything it makes
# (the root and its copies, podman's storage, the database) is in one temporary
# folder, removed at the end; only debootstrap, podman and runc may be installed
# with apt. The root comes from the mirrors this machine's apt is set up with (the
# ones commands/setup installs from); COWATCH_DEBIAN_MIRROR and
# COWATCH_DEBIAN_SECURITY_MIRROR name others; COWATCH_CONTAINER=require fails instead of skipping when podman cannot
# run containers here, COWATCH_CONTAINER=skip leaves the container out.
# Prints "N passed, M failed, K skipped" last; exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
repository=$PWD
list=deploy/runtime-packages
# The first address apt's sources give for SUITE: deb822 files (Suites:, URIs:)
# and one-line "deb URI SUITE ..." entries.
apt_mirror() {
  local suite=$1 file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" 'BEGIN { RS = ""; FS = "\n" }
      { uris = ""; found = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { split(substr($i, 6), words, " "); for (w in words) if (words[w] != "") { uris = words[w]; break } }
          if ($i ~ /^Suites:/) { n = split(substr($i, 8), names, " "); for (j = 1; j <= n; j++) if (names[j] == suite) found = 1 }
        }
        if (found && uris != "") { print uris; exit } }' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }' "$file"
  done
}
mirror=${COWATCH_DEBIAN_MIRROR:-$(apt_mirror bookworm | head -n 1)}
security_mirror=${COWATCH_DEBIAN_SECURITY_MIRROR:-$(apt_mirror bookworm-security | head -n 1)}
container_mode=${COWATCH_CONTAINER:-auto}

passed=0
failed=0
skipped=0
pass() { passed=$((passed + 1)); echo "ok   - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 20 "$2" | sed 's/^/    /'; return 0; }
skip() { skipped=$((skipped + 1)); echo "skip - $1"; }
summary() {
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
}
# A step the rest cannot do without: count it, show why, stop.
abort() {
  fail "$@"
  summary
}

[ "$(id -u)" -eq 0 ] || { echo "clean_root_test: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
bin=${COWATCH_BIN:-}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "clean_root_test: COWATCH_BIN must name the release binary (commands/check-deploy builds it)" >&2; exit 2; }
bin=$(readlink -f "$bin")
resources="$(dirname "$bin")/Cowatch_CowatchWeb.resources"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cowatch-deploy.XXXXXX")
# The throwaway PostgreSQL runs as postgres and keeps its files in here.
chmod 0755 "$tmp"
mounts=()
server_pid=""
postgres_dir=""
podman_ready=false
podman=(podman --root "$tmp/podman/storage" --runroot "$tmp/podman/run" --tmpdir "$tmp/podman/tmp"
        --runtime runc --cgroup-manager cgroupfs --events-backend none)

stop_server() {
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null
  server_status=$?
  server_pid=""
}
cleanup() {
  stop_server
  # podman's storage for this run is in $tmp: emptied first, so that nothing of
  # it stays mounted.
  if $podman_ready && command -v podman >/dev/null; then
    "${podman[@]}" rm -f -t 5 --all >/dev/null 2>&1 || true
    "${podman[@]}" volume rm -f --all >/dev/null 2>&1 || true
    "${podman[@]}" rmi -f --all >/dev/null 2>&1 || true
  fi
  [ -n "$postgres_dir" ] && Tests/cluster/scratch_postgres.sh stop "$postgres_dir" >/dev/null 2>&1 || true
  local index
  for ((index = ${#mounts[@]} - 1; index >= 0; index--)); do umount -l "${mounts[$index]}" 2>/dev/null || true; done
  # Never follow a mount that is still there into this machine's own files.
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

packages() { sed -e 's/#.*//' "$1" | tr -s ' \t' '\n' | sed '/^$/d'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 apt-get -o DPkg::Lock::Timeout=120 update -qq >"$tmp/apt.log" 2>&1 &&
    timeout 600 apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "$@" >>"$tmp/apt.log" 2>&1
}

# --- What the check needs ----------------------------------------------------

# PostgreSQL for the cluster node, Python's websockets for the member.
timeout 900 commands/setup >"$tmp/setup.log" 2>&1 || abort "commands/setup" "$tmp/setup.log"
command -v debootstrap >/dev/null || apt_install debootstrap || abort "installing debootstrap" "$tmp/apt.log"
command -v systemd-analyze >/dev/null || apt_install systemd || abort "installing systemd (systemd-analyze)" "$tmp/apt.log"

# The binary must carry the Swift runtime: the list has none of it.
if readelf -d "$bin" | grep -q 'libswift'; then
  abort "$bin needs the Swift runtime's shared libraries: build with --static-swift-stdlib (deploy/README)"
fi
[ -d "$resources" ] || abort "no Cowatch_CowatchWeb.resources beside $bin"

# --- The lists, where they are published ---------------------------------------

wanted=$(packages "$list" | tr '\n' ' ')
if [ -n "$wanted" ]; then pass "$list lists the runtime packages: $wanted"; else abort "$list lists no package"; fi
# The container's runtime stage installs from the file itself, and nothing else.
runtime_stage=$(sed -n '/^FROM .* AS runtime$/,/^FROM /p' deploy/docker/Dockerfile)
if grep -q '^COPY deploy/runtime-packages ' <<<"$runtime_stage" &&
   [ "$(grep -c 'apt-get install' <<<"$runtime_stage")" -eq 1 ] &&
   grep 'apt-get install' <<<"$runtime_stage" | grep -q '/tmp/runtime-packages' &&
   grep -qx '!deploy/runtime-packages' deploy/docker/Dockerfile.dockerignore; then
  pass "deploy/docker/Dockerfile's runtime stage installs $list and only it"
else
  fail "deploy/docker/Dockerfile's runtime stage must install $list (copied in, and let through its .dockerignore) and no list of its own"
fi
# Its two images (deploy/README, "Docker") put the binary in the same places, each
# from its own stage.
copies() { sed -n "/^FROM runtime AS $1\$/,/^FROM /p" deploy/docker/Dockerfile | sed -n "s/^COPY --from=$2 //p"; }
if [ -n "$(copies from-binary binary)" ] && [ "$(copies from-binary binary)" = "$(copies from-source build)" ]; then
  pass "deploy/docker/Dockerfile's from-binary and from-source copy the same files, from binary and from build"
else
  fail "deploy/docker/Dockerfile's from-binary (COPY --from=binary) and from-source (COPY --from=build) must copy the same files"
fi
# The hosts' instructions point at the file instead of keeping a copy that can drift.
for doc in deploy/README.md deploy/cluster/cowatch@.service docs/cluster.md; do
  if grep -q 'deploy/runtime-packages\|(runtime-packages)' "$doc"; then
    pass "$doc points to $list"
  else
    fail "$doc does not point to $list"
  fi
done

# --- A clean Debian 12 root ----------------------------------------------------

[ -n "$mirror" ] || abort "a Debian 12 mirror: none in apt's sources for bookworm; set COWATCH_DEBIAN_MIRROR"
echo "clean_root_test: debootstrap bookworm (minbase) from $mirror"
base="$tmp/base"
if ! timeout 900 debootstrap --variant=minbase bookworm "$base" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
  abort "debootstrap of a Debian 12 root" "$tmp/debootstrap.log"
fi
# As a debian:bookworm image has it: the release, its updates and security.
cat >"$base/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
EOF
[ -z "$security_mirror" ] || echo "deb $security_mirror bookworm-security main" >>"$base/etc/apt/sources.list"
cp /etc/resolv.conf "$base/etc/resolv.conf"
if ! timeout 300 chroot "$base" apt-get update -qq >"$tmp/apt-root.log" 2>&1; then
  abort "apt-get update in the clean root" "$tmp/apt-root.log"
fi
pass "a clean Debian 12 root (debootstrap --variant=minbase)"

# A copy of the clean root with exactly the list's packages and the binary, put
# where deploy/README's systemd steps put them.
make_root() {
  local root="$tmp/$1"
  cp -a "$base" "$root"
  cp "$list" "$root/tmp/runtime-packages"
  if ! timeout 600 chroot "$root" /bin/sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(sed -e "s/#.*//" /tmp/runtime-packages)' \
       >"$tmp/$1-apt.log" 2>&1; then
    return 1
  fi
  install -m 0755 "$bin" "$root/usr/local/bin/cowatch"
  cp -R "$resources" "$root/usr/local/bin/"
  install -d -o 65534 -g 65534 "$root/var/lib/cowatch"
  # Swift reads its arguments from /proc/self/cmdline.
  mount -t proc proc "$root/proc" && mounts+=("$root/proc")
}

# Starts `cowatch ARGS...` in ROOT as nobody, its output in LOG; true once it
# says where it serves (server_port), false once it has exited instead.
server_status=""
start_server() {
  local root=$1 log=$2
  shift 2
  server_port=""
  chroot --userspec=65534:65534 "$root" /usr/local/bin/cowatch "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    server_port=$(sed -n 's|.*serving on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
    [ -n "$server_port" ] && return 0
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" 2>/dev/null
      server_status=$?
      server_pid=""
      return 1
    fi
    sleep 0.1
  done
  return 1
}

member() { timeout 60 python3 Tests/deploy/room_member.py "$@"; }

# Serves a room from ROOT with the SQLite store, and the room (its chat) is in the
# database file after a restart. Prints what went wrong; false on a failure.
sqlite_room() {
  local root=$1 name=$2
  start_server "$root" "$tmp/$name-serve.log" serve --port 0 --data-dir /var/lib/cowatch || return 1
  member "ws://127.0.0.1:$server_port" deploy-check ada --say "kept in SQLite" >"$tmp/$name-member.log" 2>&1 || return 2
  stop_server
  [ "$server_status" -eq 0 ] || return 3
  [ -s "$root/var/lib/cowatch/cowatch.sqlite" ] || return 4
  start_server "$root" "$tmp/$name-serve2.log" serve --port 0 --data-dir /var/lib/cowatch || return 1
  member "ws://127.0.0.1:$server_port" deploy-check bob --expect-chat "kept in SQLite" >>"$tmp/$name-member.log" 2>&1 || return 5
  python3 - "$server_port" >>"$tmp/$name-member.log" 2>&1 <<'EOF' || return 6
import sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
assert urllib.request.urlopen(f"{base}/healthz", timeout=10).read().startswith(b"ok")
page = urllib.request.urlopen(f"{base}/rooms/deploy-check", timeout=10).read()
assert b"<html" in page.lower(), page[:200]
EOF
  stop_server
  return 0
}

echo "clean_root_test: installing the list in a copy of the root"
if ! make_root full; then
  abort "apt-get install --no-install-recommends of $list in the clean root" "$tmp/full-apt.log"
fi
pass "$list installs in a clean Debian 12 root"
root="$tmp/full"
if chroot "$root" ldd /usr/local/bin/cowatch >"$tmp/ldd.log" 2>&1 && ! grep -q 'not found' "$tmp/ldd.log"; then
  pass "every library the binary links is there"
else
  fail "libraries missing in the clean root" "$tmp/ldd.log"
fi

sqlite_room "$root" full
case $? in
  0) pass "the clean root serves a room (welcome, state, chat), keeps it in SQLite across a restart, serves the page and /healthz" ;;
  1) fail "cowatch serve did not start in the clean root (exit ${server_status:-?})" "$tmp/full-serve.log" ;;
  2) fail "a member was not served in the clean root" "$tmp/full-member.log" ;;
  3) fail "SIGTERM did not stop the server with 0 (exit $server_status)" "$tmp/full-serve.log" ;;
  4) fail "no SQLite database in /var/lib/cowatch" ;;
  5) fail "the room's chat did not outlive a restart" "$tmp/full-member.log" ;;
  *) fail "the page or /healthz was not served" "$tmp/full-member.log" ;;
esac
stop_server

# Voice: Janus from the list, started by deploy/voice/janus-run where the
# unit runs it, and cowatch pointed at it as deploy/systemd/cowatch.service.d
# says: the link stands (/metrics) and a member's /voice join gets its ticket.
install -d "$root/usr/local/lib/cowatch" "$root/etc/cowatch"
cp -R deploy/voice "$root/usr/local/lib/cowatch/voice"
openssl rand -hex 32 >"$root/etc/cowatch/janus.secret"
# Readable by the server's user here (nobody); a host hands it as a credential.
chmod 0644 "$root/etc/cowatch/janus.secret"
janus_port=$(free_port)
chroot "$root" /usr/local/lib/cowatch/voice/janus-run --secret-file /etc/cowatch/janus.secret \
  --dir /run/cowatch-janus --ws-port "$janus_port" --rtp-ports 20000-20099 >"$tmp/janus.log" 2>&1 &
janus_pid=$!
for _ in $(seq 1 100); do
  (echo >"/dev/tcp/127.0.0.1/$janus_port") 2>/dev/null && break
  kill -0 "$janus_pid" 2>/dev/null || break
  sleep 0.1
done
if ! kill -0 "$janus_pid" 2>/dev/null; then
  fail "janus-run did not start Janus in the clean root" "$tmp/janus.log"
elif ! start_server "$root" "$tmp/voice-serve.log" serve --port 0 --store memory \
       --voice-url "ws://127.0.0.1:$janus_port" --voice-secret-file /etc/cowatch/janus.secret; then
  fail "cowatch serve with voice did not start in the clean root (exit ${server_status:-?})" "$tmp/voice-serve.log"
elif python3 - "$server_port" >"$tmp/voice-member.log" 2>&1 <<'EOF'
import json, sys, time, urllib.request
from websockets.sync.client import connect
base = f"127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 20
while b"cowatch_voice_link_up 1" not in urllib.request.urlopen(f"http://{base}/metrics", timeout=10).read():
    assert time.monotonic() < deadline, "the media server's link never stood"
    time.sleep(0.1)
with connect(f"ws://{base}/rooms/deploy-voice?name=ada", subprotocols=["cowatch.v1.json"], open_timeout=10) as ws:
    ws.send("/voice join")
    while True:
        event = json.loads(ws.recv(timeout=10))
        assert event["type"] != "error", event
        if event["type"] == "voice-ticket":
            break
EOF
then
  pass "voice in the clean root: Janus started by deploy/voice/janus-run, cowatch's link to it up, a member's /voice join ticketed"
else
  fail "voice in the clean root" "$tmp/voice-member.log"
fi
stop_server
kill -TERM "$janus_pid" 2>/dev/null || true
wait "$janus_pid" 2>/dev/null || true

# A cluster node: deploy/cluster/cluster.conf.example with a throwaway database,
# started as cowatch@.service starts it.
postgres_dir="$tmp/postgres"
if database_url=$(Tests/cluster/scratch_postgres.sh start "$postgres_dir" 2>"$tmp/postgres.log"); then
  install -d "$root/etc/cowatch"
  sed -e "s|^database-url = .*|database-url = $database_url|" deploy/cluster/cluster.conf.example >"$root/etc/cowatch/cluster.conf"
  chmod 0644 "$root/etc/cowatch/cluster.conf"
  # The secret the example names, as a host makes it (readable by the node's user here: it runs as nobody).
  openssl rand -hex 32 >"$root/etc/cowatch/cluster.secret"
  chmod 0644 "$root/etc/cowatch/cluster.secret"
  node_port=$(free_port)
  cluster_node() {
    COWATCH_ADVERTISE_URL="ws://127.0.0.1:$node_port" start_server "$root" "$1" \
      serve --config /etc/cowatch/cluster.conf --port "$node_port" --node-id "check-$node_port"
  }
  if ! cluster_node "$tmp/node.log"; then
    fail "a cluster node did not start in the clean root (exit ${server_status:-?})" "$tmp/node.log"
  elif ! grep -q 'store: postgres' "$tmp/node.log"; then
    fail "the node did not take the PostgreSQL store" "$tmp/node.log"
  elif ! member "ws://127.0.0.1:$node_port" deploy-cluster ada --say "kept in PostgreSQL" >"$tmp/node-member.log" 2>&1; then
    fail "the cluster node did not serve a room" "$tmp/node-member.log"
  else
    stop_server
    if ! cluster_node "$tmp/node2.log"; then
      fail "the cluster node did not start again" "$tmp/node2.log"
    elif member "ws://127.0.0.1:$node_port" deploy-cluster bob --expect-chat "kept in PostgreSQL" >>"$tmp/node-member.log" 2>&1; then
      pass "a cluster node in the clean root (cluster.conf.example) keeps its room in PostgreSQL across a restart"
    else
      fail "the room's chat did not outlive the node's restart" "$tmp/node-member.log"
    fi
  fi
  stop_server
else
  fail "a throwaway PostgreSQL (Tests/cluster/scratch_postgres.sh)" "$tmp/postgres.log"
fi

# --- Self-tests: what is left out of the list must fail the check ---------------

# A copy of the full root without PACKAGE (its files gone, whatever depends on it).
without() {
  local name=$1 package=$2
  cp -a "$tmp/full" "$tmp/$name" 2>/dev/null
  mounts+=("$tmp/$name/proc")
  mount -t proc proc "$tmp/$name/proc" || return 1
  chroot "$tmp/$name" dpkg --force-depends --purge "$package" >"$tmp/$name-dpkg.log" 2>&1
}
umount "$tmp/full/proc" 2>/dev/null || true

if without no-plugin libwebsockets-evlib-ev && ! sqlite_room "$tmp/no-plugin" no-plugin; then
  if grep -q "libwebsockets could not load its libev plugin (evlib_ev): install Debian's libwebsockets-evlib-ev" "$tmp/no-plugin-serve.log" &&
     ! grep -q "could not listen" "$tmp/no-plugin-serve.log"; then
    pass "without libwebsockets-evlib-ev the check fails, and the server names the plugin: $(grep '^cowatch serve:' "$tmp/no-plugin-serve.log")"
  else
    fail "without libwebsockets-evlib-ev the server does not name the missing plugin" "$tmp/no-plugin-serve.log"
  fi
else
  fail "a root without libwebsockets-evlib-ev still passed the check" "$tmp/no-plugin-serve.log"
fi
stop_server

if without no-libev libev4 && ! sqlite_room "$tmp/no-libev" no-libev; then
  if grep -q 'libev.so.4: cannot open shared object file' "$tmp/no-libev-serve.log"; then
    pass "without libev4 the check fails: $(grep -o 'error while loading shared libraries: .*' "$tmp/no-libev-serve.log" | head -n 1)"
  else
    fail "without libev4 the server fails for another reason" "$tmp/no-libev-serve.log"
  fi
else
  fail "a root without libev4 still passed the check" "$tmp/no-libev-serve.log"
fi
stop_server

# --- The systemd units ---------------------------------------------------------

# systemd-analyze verify in a root of its own: systemd's units, the binary where
# the units run it, and deploy's units installed as deploy/README installs them.
units="$tmp/units"
install -d "$units/usr/lib/systemd" "$units/etc/systemd/system" "$units/usr/local/bin"
cp -a /usr/lib/systemd/system "$units/usr/lib/systemd/" 2>/dev/null || cp -a /lib/systemd/system "$units/usr/lib/systemd/"
install -m 0755 "$bin" "$units/usr/local/bin/cowatch"
install -d "$units/usr/local/lib/cowatch"
cp -R deploy/voice "$units/usr/local/lib/cowatch/voice"
cp deploy/systemd/cowatch.service deploy/systemd/cowatch-bridge.service deploy/systemd/cowatch-janus.service \
   deploy/cluster/cowatch@.service "$units/etc/systemd/system/"
cp -R deploy/systemd/cowatch.service.d "$units/etc/systemd/system/"
for unit in cowatch.service cowatch-bridge.service cowatch-janus.service cowatch@7481.service; do
  # Unknown keys and other complaints are only printed: any output fails.
  if systemd-analyze verify --root="$units" "$unit" >"$tmp/verify.log" 2>&1 && [ ! -s "$tmp/verify.log" ]; then
    pass "systemd-analyze verify $unit"
  else
    fail "systemd-analyze verify $unit" "$tmp/verify.log"
  fi
done

# --- The container ----------------------------------------------------------------

# podman here needs runc (crun refuses a machine with cgroup v1 and v2 controllers
# both mounted) and explicit limits (its defaults raise RLIMIT_NOFILE and
# RLIMIT_NPROC above this process's, which needs CAP_SYS_RESOURCE; nproc no higher
# than the 32768 podman gives itself); see deploy/README.
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=4096:4096")

# The image is built with deploy/README's own commands, so that the two cannot
# drift: the podman lines of the fenced blocks under HEADING (up to the next
# heading), continuation lines joined, one a line.
readme_podman_lines() {
  awk -v heading="$1" '
    index($0, heading) == 1 { section = 1; next }
    section && !fence && /^#/ { exit }
    section && /^```/ { fence = !fence; next }
    section && fence { line = line $0; if (sub(/\\$/, "", line)) next; print line; line = "" }
  ' deploy/README.md | grep -E '(^|[|] *)podman ' || true
}
default_build=$(readme_podman_lines '## Docker: ')
offline_lines=$(readme_podman_lines '### Without a registry')
offline_imports=$(grep -v '^podman build ' <<<"$offline_lines")
offline_build=$(grep '^podman build ' <<<"$offline_lines")
# What those lines name: the image they tag, the base and binary images imported.
image=$(sed -n 's/.* -t \([^ ]*\).*/\1/p' <<<"$offline_build")
base_image=$(sed -n 's/.*--build-arg RUNTIME_BASE=\([^ ]*\).*/\1/p' <<<"$offline_build")
if grep -q '^podman build --format docker ' <<<"$default_build" && [ "$(grep -c . <<<"$default_build")" -eq 1 ] &&
   grep -q '^podman build --format docker .*--target from-binary ' <<<"$offline_build" &&
   [ "$(grep -c 'podman import - ' <<<"$offline_imports")" -eq 2 ] && [ -n "$image" ] && [ -n "$base_image" ] &&
   [ "$image" = "$(sed -n 's/.* -t \([^ ]*\).*/\1/p' <<<"$default_build")" ]; then
  pass "deploy/README gives podman's build with --format docker, and its offline route: $(tr '\n' ';' <<<"$offline_lines")"
else
  fail "deploy/README's \"Docker\" section must give \`podman build --format docker ... -t NAME .\`, and \"Without a registry\" the two podman imports and \`podman build --format docker ... --target from-binary ... --build-arg RUNTIME_BASE=... -t NAME .\`"
fi

# Runs deploy/README's LINES from the repository's root as they are written, as
# root, with this check's podman: its own storage, and the sandbox's settings
# (runc, the limits) added. root is the clean root, bin the binary's folder.
documented() {
  (
    podman() {
      case $1 in
        build) shift; timeout 900 "${podman[@]}" build "${limits[@]}" "$@" ;;
        run) shift; command "${podman[@]}" run "${limits[@]}" "$@" ;;
        *) command "${podman[@]}" "$@" ;;
      esac
    }
    sudo() { "$@"; }
    root=$base
    bin=$(dirname "$bin")
    set -e -o pipefail
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      echo "+ $line"
      eval "$line" </dev/null
    done <<<"$1"
  )
}

# The image keeps its HEALTHCHECK (podman drops it from an OCI-format image).
keeps_healthcheck() {
  "${podman[@]}" image inspect -f '{{json .HealthCheck}}' "$image" 2>&1 | grep -q '/healthz'
}

container_check() {
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    apt_install podman runc uidmap || { echo "installing podman and runc failed: $(tail -n 3 "$tmp/apt.log")"; return 2; }
  fi
  install -d "$tmp/podman/tmp"
  # The clean root as the base, the binary as the BINARY image.
  documented "$offline_imports" >"$tmp/podman.log" 2>&1 ||
    { echo "podman import: $(tail -n 3 "$tmp/podman.log")"; return 2; }
  if ! "${podman[@]}" run --rm --network none "${limits[@]}" "$base_image" /bin/true >"$tmp/podman.log" 2>&1; then
    echo "podman cannot run a container here: $(tail -n 3 "$tmp/podman.log")"
    return 2
  fi
  # Stand-ins, in this check's storage, for the two images the default build
  # pulls: the clean root as the runtime's base, and as the Swift image with a
  # swift that hands over the binary already built and refuses any command the
  # Dockerfile does not give.
  local standin="$tmp/swift-stand-in" swift_version runtime_default
  swift_version=$(sed -n 's/^ARG SWIFT_VERSION=//p' deploy/docker/Dockerfile)
  runtime_default=$(sed -n 's/^ARG RUNTIME_BASE=//p' deploy/docker/Dockerfile)
  "${podman[@]}" tag "$base_image" "localhost/$runtime_default" >>"$tmp/podman.log" 2>&1 || return 1
  install -d "$standin/release"
  cp -a "$bin" "$resources" "$standin/release/"
  cat >"$standin/swift" <<'EOF'
#!/bin/sh
case "$*" in
  "package resolve" | "build -c release --product cowatch --static-swift-stdlib") ;;
  "build -c release --show-bin-path") echo /stand-in/release ;;
  *) echo "the stand-in for swift: not the Dockerfile's command: swift $*" >&2; exit 1 ;;
esac
EOF
  chmod 0755 "$standin/swift"
  printf 'FROM %s\nCOPY swift /usr/local/bin/swift\nCOPY release /stand-in/release\n' "$base_image" >"$standin/Containerfile"
  "${podman[@]}" build "${limits[@]}" -f "$standin/Containerfile" -t "localhost/swift:$swift_version-bookworm" "$standin" \
    >>"$tmp/podman.log" 2>&1 || { echo "the stand-in for swift:$swift_version-bookworm: $(tail -n 3 "$tmp/podman.log")"; return 1; }
  echo "ready"
}

[ "$container_mode" = skip ] || podman_ready=true
container_result=$( [ "$container_mode" = skip ] && echo "COWATCH_CONTAINER=skip" && exit 2; container_check ); container_status=$?
image_built=false
if [ "$container_status" -eq 0 ]; then
  # The default build: the build stage, then from-source. A stage named through
  # a build arg stopped Debian's podman here ('short-name "build" did not resolve').
  if ! documented "$default_build" >"$tmp/image-default.log" 2>&1; then
    fail "the documented default build with podman: $default_build" "$tmp/image-default.log"
  elif ! keeps_healthcheck; then
    fail "the default build's image has no HEALTHCHECK (podman image inspect)" "$tmp/image-default.log"
  else
    pass "the documented default build with podman (stand-ins for the Swift and Debian images) keeps its HEALTHCHECK: $default_build"
  fi
  # Without a registry: no build stage, no Swift image.
  if ! documented "$offline_build" >"$tmp/image.log" 2>&1; then
    fail "the documented from-binary build with podman: $offline_build" "$tmp/image.log"
  elif grep -q 'FROM swift:' "$tmp/image.log"; then
    fail "the from-binary build ran the build stage (the Swift image)" "$tmp/image.log"
  elif ! keeps_healthcheck; then
    fail "the from-binary build's image has no HEALTHCHECK (podman image inspect)" "$tmp/image.log"
  else
    image_built=true
    pass "the documented from-binary build on a clean Debian 12 base from $list (podman, no build stage) keeps its HEALTHCHECK"
  fi
fi
if $image_built; then
  port=$(free_port)
  # As deploy/README runs it, with the public name a proxy in front would pass on.
  if "${podman[@]}" run -d --name cowatch-check "${limits[@]}" -p "127.0.0.1:$port:7480" -v cowatch-check-data:/data \
       -e COWATCH_ALLOWED_HOSTS=cowatch.example.org "$image" >"$tmp/run.log" 2>&1; then
    for _ in $(seq 1 300); do
      "${podman[@]}" logs cowatch-check 2>&1 | grep -q 'serving on' && break
      [ "$("${podman[@]}" inspect -f '{{.State.Running}}' cowatch-check 2>/dev/null)" = true ] || break
      sleep 0.1
    done
    "${podman[@]}" logs cowatch-check >"$tmp/container.log" 2>&1
    if member "ws://127.0.0.1:$port" deploy-image ada --say "kept in the volume" >"$tmp/image-member.log" 2>&1; then
      pass "the container serves a room on its published port, as user $("${podman[@]}" exec cowatch-check id -u 2>/dev/null)"
    else
      fail "the container did not serve a room" "$tmp/container.log"
    fi
    if python3 - "$port" >"$tmp/hosts.log" 2>&1 <<'EOF'
import http.client, sys
def status(host):
    connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
    connection.request("GET", "/healthz", headers={"Host": host})
    return connection.getresponse().status
assert status("cowatch.example.org") == 200, status("cowatch.example.org")
assert status("elsewhere.example.net") == 421, status("elsewhere.example.net")
EOF
    then
      pass "behind a proxy: the name in COWATCH_ALLOWED_HOSTS is served, another gets 421"
    else
      fail "allowed-hosts in the container" "$tmp/hosts.log"
    fi
    # Where a proxy on the host comes from, as the server inside sees it: what
    # trusted-proxies must name (deploy/README, "Behind a proxy").
    member "ws://127.0.0.1:$port" deploy-image carol --forwarded-for 192.0.2.7 >>"$tmp/image-member.log" 2>&1
    peer=$("${podman[@]}" logs cowatch-check 2>&1 | sed -n 's/.*not a trusted proxy sent X-Forwarded-For.* peer=\([^ ]*\).*/\1/p' | head -n 1)
    if [ -n "$peer" ] && [ "$peer" != 127.0.0.1 ]; then
      pass "a proxy on the host reaches the container from $peer, not 127.0.0.1: trusted-proxies must name that"
    else
      "${podman[@]}" logs cowatch-check >"$tmp/container.log" 2>&1
      fail "the address a proxy on the host has inside the container (seen: ${peer:-none})" "$tmp/container.log"
    fi
    if "${podman[@]}" healthcheck run cowatch-check >"$tmp/health.log" 2>&1; then
      pass "the image's HEALTHCHECK finds it healthy"
    else
      fail "the image's HEALTHCHECK" "$tmp/health.log"
    fi
    "${podman[@]}" stop -t 20 cowatch-check >/dev/null 2>&1
    code=$("${podman[@]}" inspect -f '{{.State.ExitCode}}' cowatch-check 2>/dev/null)
    if [ "$code" = 0 ]; then pass "podman stop (SIGTERM): exit 0"; else fail "podman stop: exit $code" "$tmp/container.log"; fi
    "${podman[@]}" start cowatch-check >/dev/null 2>&1
    for _ in $(seq 1 300); do
      [ "$("${podman[@]}" logs cowatch-check 2>&1 | grep -c 'serving on')" -ge 2 ] && break
      sleep 0.1
    done
    if member "ws://127.0.0.1:$port" deploy-image bob --expect-chat "kept in the volume" >>"$tmp/image-member.log" 2>&1; then
      pass "the room is kept in the /data volume across a restart of the container"
    else
      "${podman[@]}" logs cowatch-check >"$tmp/container.log" 2>&1
      fail "the room did not outlive the container's restart" "$tmp/image-member.log"
    fi
    "${podman[@]}" rm -f -t 5 cowatch-check >/dev/null 2>&1
  else
    fail "podman run of the image" "$tmp/run.log"
  fi
elif [ "$container_status" -eq 2 ] && [ "$container_mode" != require ]; then
  skip "the container: $container_result (the clean-root checks above cover its package list and binary)"
elif [ "$container_status" -ne 0 ]; then
  echo "$container_result" | sed 's/^/    /'
  fail "the container image"
fi

summary
