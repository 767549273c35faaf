#!/bin/bash
# bench/bench_galera.sh [SECONDS [CLIENTS...]] - bench/bench_sched with one
# and with two scheduler front ends (separate processes, one project), on
# a private external mariadbd and on a three-node Galera cluster in network
# namespaces (test/galera_lib.sh; the two servers on nodes 1 and 2), for
# each client count (default 16 32), SECONDS each (default 15), a fresh
# database each run. Needs root, mariadb-server, galera-4 and rsync (exit
# 77 otherwise). Run it in build/ under `nice`, and report `uptime`.
set -u
: "${top_builddir:=.}"
BS="$top_builddir/bench/bench_sched"
[ -x "$BS" ] || { echo "bench/bench_sched not built (run in build/)"; exit 1; }
SECS=${1:-15}
shift 2>/dev/null
CLIENTS=${*:-16 32}
. "$(dirname "$0")/../test/galera_lib.sh"
galera_need
GT=$(mktemp -d "${TMPDIR:-/tmp}/ctune-bgalera-XXXXXX")
MPID=
cleanup() {
	[ -n "$MPID" ] && kill "$MPID" 2>/dev/null && wait "$MPID"
	galera_cleanup
	rm -rf "$GT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# the external server: one mariadbd on a socket
mkdir -p "$GT/m"
mariadb-install-db --no-defaults --datadir="$GT/m/data" --user=root \
	--auth-root-authentication-method=normal >"$GT/m/install.log" 2>&1 || exit 1
"$MARIADBD" --no-defaults --user=root --datadir="$GT/m/data" --socket="$GT/m/sock" \
	--skip-networking --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2 \
	--log-error="$GT/m/err.log" &
MPID=$!
for i in $(seq 1 100); do [ -S "$GT/m/sock" ] && break; sleep 0.1; done
msql() { mariadb --no-defaults -S "$GT/m/sock" -u root -e "$1"; }
EXT="mysql://root@localhost/ctune?socket=$GT/m/sock"

rows() { grep '^| [a-z]' | grep -v '^| db '; }
echo "| db | servers | clients | hosts | http threads | seconds | RPCs | errors | dispatches | dispatches/s | RPC p50 ms | RPC p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $CLIENTS; do
	for s in 1 2; do
		msql "DROP DATABASE IF EXISTS ctune; CREATE DATABASE ctune"
		"$BS" --clients "$c" --seconds "$SECS" --wus 10000 --servers "$s" --db "$EXT" | rows
	done
done
kill "$MPID"; wait "$MPID"; MPID=

galera_net || exit 1
galera_start 1 --wsrep-new-cluster && galera_start 2 && galera_start 3 || exit 1
galera_sql 1 "CREATE USER ct@'%' IDENTIFIED BY 'pw'; GRANT ALL ON ctune.* TO ct@'%'"
for c in $CLIENTS; do
	for s in 1 2; do
		galera_sql 1 "DROP DATABASE IF EXISTS ctune; CREATE DATABASE ctune"
		hub "$BS" --clients "$c" --seconds "$SECS" --wus 10000 --servers "$s" \
			--db "mysql://ct:pw@$GNET.1/ctune" --db "mysql://ct:pw@$GNET.2/ctune" |
			rows | sed 's/^| external[^|]*|/| galera |/'
	done
done
