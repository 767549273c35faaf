#!/bin/sh
# bench/bench_daemons.sh [JOBS [SHARDS [INSTANCES...]]] - validator and
# assimilator throughput with 1 and with 2 (or INSTANCES) instances on a
# private mariadbd. For each count K, on a fresh database:
# bench/bench_daemons makes JOBS one-round jobs of SHARDS WUs (default
# 20 x 4) with both replicas of every WU uploaded; K `ctune-server run
# --roles validator --instance vI` processes start together and are timed
# until every WU has its canonical result; then (the transitioner's step
# done by SQL) K `--roles assimilator` instances until every round is
# averaged. Prints a table row per K; the time includes the processes'
# start (about 0.3 s). Run it under `nice` and report `uptime`.
CT_TMP_PREFIX=ctune-bdaemons
. "$(dirname "$0")/../test/server_lib.sh"
JOBS=${1:-20}
SHARDS=${2:-4}
shift 2 2>/dev/null
COUNTS=${*:-1 2}
[ -x "$B/bench/bench_daemons" ] || { echo "bench/bench_daemons not built (run in build/)"; exit 1; }
start_mariadbd
DBURL="mysql://root@localhost/ctune_test?socket=$T/mdb.sock"
sql() { mariadb --no-defaults -S "$T/mdb.sock" -u root -N -B -e "$1"; }
now() { date +%s.%N; }
DPIDS=
stop_all() { for p in $DPIDS; do kill "$p" 2>/dev/null; done; for p in $DPIDS; do wait "$p"; done; DPIDS=; }
trap 'stop_all; cleanup' EXIT INT TERM

# drain K ROLE QUERY WANT: K instances of ROLE until QUERY gives WANT; seconds
drain() {
	t0=$(now)
	for i in $(seq 1 "$1"); do
		"$S" run "$T/p" --roles "$2" --instance "$2$i" >>"$T/daemons.log" 2>&1 &
		DPIDS="$DPIDS $!"
	done
	while [ "$(sql "USE ctune_test; $3")" != "$4" ]; do sleep 0.05; done
	t1=$(now)
	stop_all
	echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}

echo "| instances | WUs | validate s | WUs/s | rounds | assimilate s | rounds/s |"
echo "|---|---|---|---|---|---|---|"
for K in $COUNTS; do
	sql "DROP DATABASE IF EXISTS ctune_test; CREATE DATABASE ctune_test"
	rm -rf "$T/p"
	nwu=$("$B/bench/bench_daemons" --dir "$T/p" --db "$DBURL" --jobs "$JOBS" \
		--shards "$SHARDS") || die "bench_daemons"
	vs=$(drain "$K" validator "SELECT COUNT(*) FROM workunit WHERE canonical_resultid<>0" "$nwu")
	sql "USE ctune_test; UPDATE workunit SET assimilate_state=1 WHERE canonical_resultid<>0" >/dev/null
	as=$(drain "$K" assimilator "SELECT COUNT(*) FROM \`round\` WHERE out_model_sha256<>''" "$JOBS")
	echo "$K $nwu $vs $JOBS $as" | awk '{ printf "| %d | %d | %.2f | %.1f | %d | %.2f | %.2f |\n",
		$1, $2, $3, $2 / $3, $4, $5, $4 / $5 }'
done
