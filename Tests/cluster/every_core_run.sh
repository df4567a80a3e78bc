#!/usr/bin/env bash
# The cluster on every core of a many-core machine that has nothing of ours installed (no Swift,
# no libwebsockets, no PostgreSQL), run from a checkout with .dev/bundle.tar.xz from
# Tests/cluster/every_core_bundle.sh (cowatch = the build measured, cowatch-before = the build
# compared with, their libraries, PostgreSQL 15). docs/benchmarks.md, "Cluster on every core of a
# 16-core machine", has its figures.
#  P: per-node scaling, rooms placed by room, one load generator per node: N = 1, 2, 4, 8 nodes, each
#     node PER_ROOMS x 20 spread every PER_INT s (the same per node), p99 per generator
#  D: database CPU per command, before and after, 8 nodes, the same load from one generator
#  H: 8 nodes x 12,500 connections, one generator each (100,000 on the machine)
# LOCAL=1: small, on this machine, to check the script.
set -u
PER_ROOMS=${PER_ROOMS:-200}; PER_INT=${PER_INT:-0.2}; PER_DUR=${PER_DUR:-12}; SCALE=${SCALE:-"1 2 4 8"}
D_ROOMS=${D_ROOMS:-400}; D_INT=${D_INT:-0.2}; D_DUR=${D_DUR:-12}; D_NODES=${D_NODES:-8}
H_NODES=${H_NODES:-8}; H_ROOMS=${H_ROOMS:-50}; H_IDLE=${H_IDLE:-11500}; H_DUR=${H_DUR:-25}; PHASES=${PHASES:-"D P H"}
log="${OUT:-/tmp}/log"; exec > >(tee -a "$log") 2>&1
echo "== machine: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB; phases $PHASES"; ulimit -n "$(ulimit -Hn)"; echo "nofile $(ulimit -n)"
sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 2>/dev/null
W=/tmp/cw; rm -rf $W; mkdir -p $W; tar xJf .dev/bundle.tar.xz -C $W
if [ -z "${LOCAL:-}" ]; then
  mkdir -p /usr/lib/x86_64-linux-gnu /usr/lib/postgresql/15 /usr/share/postgresql/15
  cp $W/lib/libwebsockets-evlib_ev.so /usr/lib/x86_64-linux-gnu/
  cp -r $W/pg/bin $W/pg/lib /usr/lib/postgresql/15/; cp -r $W/pg/share/* /usr/share/postgresql/15/
  L=$W/lib
fi
pgb=/usr/lib/postgresql/15/bin
id pg >/dev/null 2>&1 || useradd -M -s /bin/sh pg
rm -rf /tmp/pgd; mkdir -p /tmp/pgd && chown pg /tmp/pgd && chmod 755 $W
as() { runuser -u pg -- env LD_LIBRARY_PATH="${L:-}" "$@"; }
as $pgb/initdb -D /tmp/pgd/data -A trust -U cowatch --no-sync --locale=C -E UTF8 >/tmp/pgd/initdb.log 2>&1 || { cat /tmp/pgd/initdb.log; exit 1; }
as $pgb/pg_ctl -D /tmp/pgd/data -l /tmp/pgd/server.log -w -o "-c listen_addresses=127.0.0.1 -c port=5439 -c unix_socket_directories=/tmp/pgd -c fsync=off -c synchronous_commit=off -c max_connections=500 -c jit=off ${PGEXTRA:-}" start >/dev/null || { cat /tmp/pgd/server.log; exit 1; }
pgpid=$(head -1 /tmp/pgd/data/postmaster.pid)
[ -n "${PGSTATS:-}" ] && env LD_LIBRARY_PATH="${L:-}" psql -h 127.0.0.1 -p 5439 -U cowatch -d postgres -qc "CREATE EXTENSION pg_stat_statements"
openssl rand -hex 32 > /tmp/cluster.secret 2>/dev/null || head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > /tmp/cluster.secret
pids=(); urls=()
start_nodes() { # $1 = how many, $2 = binary (cowatch or cowatch-before)
  local db=postgres://cowatch@127.0.0.1:5439/postgres secret=()
  [ "$2" = cowatch ] && secret=(--cluster-secret-file /tmp/cluster.secret)
  pids=(); urls=()
  for n in $(seq 1 "$1"); do
    port=$((7500 + n))
    env LD_LIBRARY_PATH="${L:-}" $W/$2 serve --host 127.0.0.1 --port $port --store postgres --database-url "$db" --node-id "n$n" \
      --advertise-url "ws://127.0.0.1:$port" --trusted-proxies 127.0.0.1 "${secret[@]}" --lease-seconds 1.5 --media-check false \
      --data-dir /tmp/node$n --max-connections 19500 --max-connections-per-address 100000 --max-members 5000 \
      --max-rooms 100000 --room-creation-rate 0 --commands-per-second 1000 --command-burst 1000 --log-level warning >/tmp/node$n.log 2>&1 &
    pids+=($!); urls+=("ws://127.0.0.1:$port")
  done
  for n in $(seq 1 "$1"); do
    for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$((7500 + n))/healthz" && break; sleep 0.1; done
  done
}
stop_nodes() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done; }
node_errors() { for n in $(seq 1 "$1"); do grep -hE 'level=(error|critical)' /tmp/node$n.log | head -2 | sed "s/^/node $n: /"; done; }
join() { local IFS=,; echo "$*"; }
cw() { env LD_LIBRARY_PATH="${L:-}" $W/cowatch "$@"; }
pick='^(result|bench: only|bench: measured|bench: warm|Error)'

for phase in $PHASES; do case $phase in
P)
  for N in $SCALE; do
    echo "== P$N: $N node(s), each with its own generator: $PER_ROOMS x 20 spread every $PER_INT s for $PER_DUR s"
    start_nodes "$N" cowatch
    bp=()
    for n in $(seq 1 "$N"); do
      dbpid=(); [ "$n" = 1 ] && dbpid=(--database-pid "$pgpid")
      cw bench --url "${urls[$((n-1))]}" --server-pid "${pids[$((n-1))]}" "${dbpid[@]}" --rooms $PER_ROOMS --members 20 --schedule spread \
        --interval $PER_INT --duration $PER_DUR --connections-per-client-context $((PER_ROOMS * 20 / 4)) --timeout 140 \
        --source-addresses "127.0.0.$((n+1))" > /tmp/p$n.out 2>&1 &
      bp+=($!)
    done
    wait "${bp[@]}"
    for n in $(seq 1 "$N"); do echo "node $n: $(grep -E "$pick" /tmp/p$n.out | tr '\n' ' ')"; done
    node_errors "$N"; stop_nodes
  done ;;
D)
  for bin in ${D_BINS:-cowatch-before cowatch}; do
    echo "== D $bin: $D_NODES nodes, placed by room, $D_ROOMS x 20 spread every $D_INT s for $D_DUR s, one generator"
    start_nodes "$D_NODES" $bin
    timeout 150 env LD_LIBRARY_PATH="${L:-}" $W/cowatch bench --url "$(join "${urls[@]}")" --server-pid "$(join "${pids[@]}")" \
      --database-pid "$pgpid" --placement by-room --rooms $D_ROOMS --members 20 --schedule spread --interval $D_INT \
      --duration $D_DUR --connections-per-client-context $((D_ROOMS * 20 / 8)) --timeout 140 2>&1 | grep -E "$pick|^cpu"
    node_errors "$D_NODES"; stop_nodes
    if [ -n "${PGSTATS:-}" ]; then
      env LD_LIBRARY_PATH="${L:-}" psql -h 127.0.0.1 -p 5439 -U cowatch -d postgres -Atc "SELECT calls, round(total_exec_time::numeric,1), left(regexp_replace(query, '\s+', ' ', 'g'), 70) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12" 2>&1
      env LD_LIBRARY_PATH="${L:-}" psql -h 127.0.0.1 -p 5439 -U cowatch -d postgres -Atc "SELECT pg_stat_statements_reset()" >/dev/null 2>&1
    fi
  done ;;
H)
  echo "== H: $H_NODES nodes, each with its own generator: $H_ROOMS x 20 spread + $H_IDLE quiet (rooms of 100)"
  start_nodes "$H_NODES" cowatch
  bp=()
  for n in $(seq 1 "$H_NODES"); do
    cw bench --url "${urls[$((n-1))]}" --server-pid "${pids[$((n-1))]}" --rooms $H_ROOMS --members 20 --schedule spread \
      --duration $H_DUR --connections-per-client-context 250 --idle-connections $H_IDLE --idle-room-size 100 \
      --idle-connections-per-client-context 2000 --source-addresses "127.0.0.$((n+1))" --timeout 230 > /tmp/h$n.out 2>&1 &
    bp+=($!)
  done
  peak=0
  for i in $(seq 1 80); do
    sleep 3; held=0; for n in $(seq 1 "$H_NODES"); do c=$(ls /proc/${pids[$((n-1))]}/fd 2>/dev/null | wc -l); held=$((held + c)); done
    [ $held -gt $peak ] && peak=$held
    alive=0; for b in "${bp[@]}"; do kill -0 $b 2>/dev/null && alive=1; done; [ $alive = 0 ] && break
  done
  echo "descriptors held by the nodes at most: $peak; memory: $(free -m | awk '/Mem/{print $3}') MiB used"
  wait "${bp[@]}" 2>/dev/null
  for n in $(seq 1 "$H_NODES"); do echo "node $n: $(grep -E "$pick|^server rss" /tmp/h$n.out | tr '\n' ' ')"; done
  node_errors "$H_NODES"; stop_nodes ;;
esac; done
as $pgb/pg_ctl -D /tmp/pgd/data -m immediate stop >/dev/null
echo "== done"
