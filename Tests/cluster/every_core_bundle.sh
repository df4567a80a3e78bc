#!/usr/bin/env bash
# Tests/cluster/every_core_bundle.sh AFTER BEFORE: .dev/bundle.tar.xz for
# Tests/cluster/every_core_run.sh on a machine with nothing of ours installed: the release
# binaries AFTER (as cowatch) and BEFORE (as cowatch-before), every library they and PostgreSQL 15
# need but glibc's, libwebsockets' libev plugin, and PostgreSQL's server programs and files.
# Run from the checkout after `swift build -c release`; keep .dev/ out of git (.git/info/exclude).
set -eu
after=$1; before=$2
rm -rf .dev/stage; mkdir -p .dev/stage/lib .dev/stage/pg/bin .dev/stage/pg/lib .dev/stage/pg/share
cp "$after" .dev/stage/cowatch; cp "$before" .dev/stage/cowatch-before
for l in $(ldd "$after" "$before" /usr/lib/postgresql/15/bin/postgres /usr/lib/postgresql/15/bin/initdb | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$l")" in libc.so.6|libm.so.6|libdl.so.2|libpthread.so.0|libresolv.so.2) ;; *) cp -L "$l" .dev/stage/lib/ ;; esac
done
cp /usr/lib/x86_64-linux-gnu/libwebsockets-evlib_ev.so .dev/stage/lib/
cp /usr/lib/postgresql/15/bin/{postgres,initdb,pg_ctl} .dev/stage/pg/bin/
(cd /usr/lib/postgresql/15/lib && for f in *; do case "$f" in llvmjit*|bitcode|pgxs) ;; *) cp -r "$f" "$OLDPWD/.dev/stage/pg/lib/" ;; esac; done)
cp -r /usr/share/postgresql/15/* .dev/stage/pg/share/
tar cf - -C .dev/stage . | xz -6 -T0 > .dev/bundle.tar.xz; rm -rf .dev/stage; ls -la .dev/bundle.tar.xz
