#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: Debian's binaries, a cluster made by
# initdb in DIR, run as an unprivileged user (postgres when started by root), on a
# free loopback port, trusting local connections.
#   scratch_postgres.sh start DIR     prints the URL of its database "cowatch"
#   scratch_postgres.sh stop|restart DIR
#   scratch_postgres.sh resume DIR    starts a stopped one again, on its port
set -euo pipefail
action=${1:?start, stop or restart}
dir=${2:?a directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "scratch_postgres: PostgreSQL is not installed (commands/setup installs it)" >&2; exit 1; }
as=()
if [ "$(id -u)" -eq 0 ]; then
  as=(runuser -u postgres --)
fi
ctl() { "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" "$@" >/dev/null; }
serve() {
  ctl -w -o "-c listen_addresses=127.0.0.1 -c port=$(cat "$dir/port") -c unix_socket_directories=$dir -c fsync=off -c max_connections=200" start
}
case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U cowatch --no-sync >/dev/null
    echo "$port" > "$dir/port"
    serve
    "$bin/psql" -q "postgres://cowatch@127.0.0.1:$port/postgres" -c "CREATE DATABASE cowatch" >/dev/null
    echo "postgres://cowatch@127.0.0.1:$port/cowatch"
    ;;
  stop) ctl -w -m fast stop ;;
  resume) serve ;;
  restart) ctl -w -m fast restart ;;
  *) echo "scratch_postgres: start, stop, resume or restart" >&2; exit 2 ;;
esac
