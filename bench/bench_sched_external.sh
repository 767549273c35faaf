#!/bin/sh
# bench/bench_sched_external.sh [BENCH_SCHED OPTIONS...] - bench/bench_sched
# on an external MariaDB: a private mariadbd (test/server_lib.sh's
# start_mariadbd) on a socket in a temporary directory, the same options
# passed through (e.g. --seconds 10 --wus 1000,1000000 --clients 4 --hosts
# 1000 --daemons --pages 20), then the server stopped by its PID and the
# directory removed. The server gets the embedded database's InnoDB
# settings (server/data/db.c: log written at commit, flushed once a second;
# a 128 MiB buffer pool) so that the two tables compare the database, not
# its durability; MDB_OPTS adds or overrides mariadbd options. Run it in
# build/ under `nice`; a million unsent WUs take ~2 GB of disk under
# TMPDIR. Prints bench_sched's table and the load before and after.
CT_TMP_PREFIX=ctune-bsched
MDB_OPTS="--innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-size=128M
	--innodb-log-file-size=64M --innodb-lock-wait-timeout=20 ${MDB_OPTS:-}"
. "$(dirname "$0")/../test/server_lib.sh"
[ -x "$B/bench/bench_sched" ] || { echo "bench/bench_sched not built (run in build/)"; exit 1; }
start_mariadbd
echo "load before: $(uptime)"
"$B/bench/bench_sched" --db "mysql://root@localhost/ctune_test?socket=$T/mdb.sock" "$@"
st=$?
echo "load after: $(uptime)"
exit $st
