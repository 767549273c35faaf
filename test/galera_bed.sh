#!/bin/bash
# test/galera_bed.sh - crowdtune on a three-node MariaDB Galera cluster,
# everything real and on this one machine:
#  - three mariadbd + galera-4 nodes, each in its own network namespace
#    (test/galera_lib.sh: 10.213.0.1-3 on veth links to a bridge);
#  - two `ctune-server run` instances (a on node 1, b on node 2) on one
#    project directory, and three `ctune run` clients (two on a, one on b);
#  - a multi-round job; once its first round is done, node 2 and instance b
#    are killed with SIGKILL (the machine that ran both "dies") and b comes
#    back on node 3 (fail-over) a few seconds later;
#  - checks: the job finishes; no WU lost (every WU has a valid canonical
#    result, every round is averaged once); no double credit (one credit
#    event per valid result, every user's total is the sum of its events);
#    the nodes that are up hold the same rows; the final model's hash equals
#    that of the same job run by one server on its embedded database.
#
#   test/galera_bed.sh           short version (make check): 3 rounds x 3
#                                shards, a few minutes under load
#   test/galera_bed.sh --full    5 rounds x 4 shards, more steps, and node 2
#                                rejoins (IST) after the kill; then every
#                                node's rows are compared
#   KEEP_TMP=1 ...               keep the temporary directory
#
# Needs root (network namespaces), Debian's mariadb-server, galera-4 and
# rsync; skips (exit 77) with a message otherwise. Everything it starts is
# killed by PID and the namespaces deleted on every exit path.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
S="$top_builddir/ctune-server"
CTUNE="$top_builddir/ctune"
CORPUS="$top_builddir/bench/ctune-corpus"
FULL=0
[ "${1:-}" = --full ] && FULL=1
[ "${1:-}" = --help ] && { sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }

for x in "$S" "$CTUNE" "$CORPUS"; do
	[ -x "$x" ] || { echo "skip: $x not built"; exit 77; }
done
. "$(dirname "$0")/galera_lib.sh"
galera_need
GT=$(mktemp -d "${TMPDIR:-/tmp}/ctune-galera-XXXXXX")

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	galera_cleanup
	if [ "${KEEP_TMP:-0}" = 1 ]; then echo "kept $GT"; else rm -rf "$GT"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fails=0
ok() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi; }
die() {
	echo "FATAL - $*"
	for f in "$GT"/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -n 25 "$f"; }; done
	exit 1
}
wait_for() {	# wait_for SECONDS DESCRIPTION COMMAND...
	local secs=$1 what=$2 i=0
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $((secs * 5)) ] && die "timed out after ${secs}s: $what"
		sleep 0.2
	done
	ok "$what"
}
bg() {	# bg LOG CMD...: run CMD in the hub namespace in the background; sets BGPID
	local log=$1
	shift
	# not through the function hub: `f &` forks a subshell, and $! would be
	# its PID, not the program's (ip netns exec execs the program)
	ip netns exec "${GNS}h" "$@" >>"$log" 2>&1 &
	BGPID=$!
	PIDS+=("$BGPID")
}

if [ $FULL = 1 ]; then ROUNDS=5 SHARDS=4 STEPS=60; else ROUNDS=3 SHARDS=3 STEPS=30; fi
JOBARGS="--shards $SHARDS --rounds $ROUNDS --steps $STEPS --batch 4 --seq 16 --lr 0.001 --quorum 2"
COPTS="--always --device cpu --backoff-base 0.5 --checkpoint-seconds 0.3"

galera_net || die "network namespaces"
"$CTUNE" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 29 \
	--seed 1 --out "$GT/base.bin" >/dev/null || die "model init"
"$CORPUS" --lang 1 --tokens 40000 --out "$GT/train.bin" >/dev/null || die "corpus"
"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$GT/eval.bin" >/dev/null || die "corpus"

# users NAME DIR N URL...: N accounts on project DIR, client i attached to
# the URL i (cycled) in $GT/NAME-ci and started
users_and_clients() {
	local name=$1 dir=$2 n=$3 i key
	shift 3
	local urls=("$@")
	for i in $(seq 1 "$n"); do
		key=$(hub "$S" user create "$dir" --name "$name-u$i" --email "$name-u$i@example.org" \
			--password "password-$i" 2>>"$GT/$name-users.log" |
			sed -n 's/.*account key //p')
		[ -n "$key" ] || die "user create $name $i"
		hub "$CTUNE" --dir "$GT/$name-c$i" attach "${urls[$(((i - 1) % ${#urls[@]}))]}" \
			--key "$key" >/dev/null || die "attach $name c$i"
		bg "$GT/$name-c$i.log" "$CTUNE" --dir "$GT/$name-c$i" -v run $COPTS
	done
}
# job_done DIR [JOB], final_sha DIR [JOB] (JOB: default 1)
job_done() { hub "$S" job show "$1" "${2:-1}" 2>/dev/null | head -1 | grep -q ': done'; }
final_sha() {
	hub "$S" job show "$1" "${2:-1}" 2>/dev/null | sed -n 's/^final model: \([0-9a-f]*\).*/\1/p'
}

# ---- the reference: one server, embedded database, two clients --------------
ref_run() {
	local R="$GT/ref"
	hub "$S" init "$R" --listen 127.0.0.1:8003 --name ref >"$GT/ref-init.log" 2>&1 || return 1
	hub "$S" job submit "$R" --allow-random-base --model "$GT/base.bin" --train "$GT/train.bin" \
		--eval "$GT/eval.bin" $JOBARGS >>"$GT/ref-init.log" 2>&1 || return 1
	bg "$GT/ref-server.log" "$S" run "$R" --listen 127.0.0.1:8003
	local spid=$BGPID i
	trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; exit 1' TERM
	for i in $(seq 1 300); do [ -s "$R/server.url" ] && break; sleep 0.2; done
	users_and_clients ref "$R" 2 http://127.0.0.1:8003
	local c1=${PIDS[-2]} c2=${PIDS[-1]}
	for i in $(seq 1 3000); do job_done "$R" && break; sleep 0.2; done
	final_sha "$R" >"$GT/ref.sha"
	kill "$c1" "$c2" "$spid"
	wait "$c1" "$c2" "$spid"
	PIDS=()
	return 0
}
ref_run >"$GT/ref.log" 2>&1 &
REFPID=$!
PIDS+=("$REFPID")

# ---- the cluster ------------------------------------------------------------
galera_start 1 --wsrep-new-cluster || die "node 1"
galera_start 2 || die "node 2"
galera_start 3 || die "node 3"
check "the cluster has three nodes" \
	"$(galera_sql 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)" 3
# what the server's retries rest on: a transaction that loses a conflict to
# another node's commit is aborted with error 1213 (a deadlock), the
# error ct_db_txn runs a transaction again for
galera_sql 1 "CREATE DATABASE probe; CREATE TABLE probe.t (id INT PRIMARY KEY, v INT);
	INSERT INTO probe.t VALUES (1, 0)" || die "probe table"
galera_sql 1 "START TRANSACTION; UPDATE probe.t SET v=1 WHERE id=1; SELECT SLEEP(4);
	COMMIT" >"$GT/probe.out" 2>&1 &
probe=$!
sleep 1.5
galera_sql 2 "UPDATE probe.t SET v=2 WHERE id=1" || fail "the other node's update"
wait "$probe"
check "a transaction that loses a commit conflict to another node fails with 1213" \
	"$(grep -c 'ERROR 1213' "$GT/probe.out")" 1
check "the other node's write won, on every node" "$(galera_sql 3 "SET SESSION wsrep_sync_wait=1; SELECT v FROM probe.t")" 2
galera_sql 1 "DROP DATABASE probe"
galera_sql 1 "CREATE DATABASE ctune CHARACTER SET utf8mb4;
	CREATE USER ct@'%' IDENTIFIED BY 'pw'; GRANT ALL ON ctune.* TO ct@'%'" || die "grant"
DB1="mysql://ct:pw@$GNET.1:3306/ctune"
DB2="mysql://ct:pw@$GNET.2:3306/ctune"
DB3="mysql://ct:pw@$GNET.3:3306/ctune"
P="$GT/proj"
hub "$S" init "$P" --listen 127.0.0.1:8001 --name galera --db "$DB1" >"$GT/init.log" 2>&1 ||
	die "init on node 1"
check "every table has a primary key" "$(galera_sql 1 "SELECT COUNT(*) FROM
	information_schema.tables t WHERE t.table_schema='ctune' AND NOT EXISTS (SELECT 1 FROM
	information_schema.table_constraints c WHERE c.table_schema='ctune' AND
	c.table_name=t.table_name AND c.constraint_type='PRIMARY KEY')")" 0
check "every table is InnoDB" "$(galera_sql 1 "SELECT COUNT(*) FROM information_schema.tables
	WHERE table_schema='ctune' AND engine <> 'InnoDB'")" 0
hub "$S" job submit "$P" --allow-random-base --model "$GT/base.bin" --train "$GT/train.bin" --eval "$GT/eval.bin" \
	$JOBARGS >"$GT/submit.out" 2>>"$GT/init.log" || die "job submit"
cat "$GT/submit.out" >>"$GT/init.log"
# the job's id: Galera hands each node its own auto-increment offset, so the
# first job is not always 1 (a CI run got 2)
JOB=$(sed -n 's/^job \([0-9][0-9]*\)$/\1/p' "$GT/submit.out")
[ -n "$JOB" ] || die "job submit printed no job id"

bg "$GT/server-a.log" "$S" run "$P" --instance a --listen 127.0.0.1:8001 --db "$DB1"
SA=$BGPID
bg "$GT/server-b.log" "$S" run "$P" --instance b --listen 127.0.0.1:8002 --db "$DB2"
SB=$BGPID
wait_for 60 "instance a serves" hub curl -sf http://127.0.0.1:8001/api/v1/status
wait_for 60 "instance b serves" hub curl -sf http://127.0.0.1:8002/api/v1/status
users_and_clients gal "$P" 3 http://127.0.0.1:8001 http://127.0.0.1:8002

# mid-job: the first round averaged, the second one running
round1() {
	[ "$(galera_sql 1 "SELECT COUNT(*) FROM ctune.round WHERE jobid=$JOB AND idx=1 AND
		out_model_sha256 <> ''")" = 1 ]
}
wait_for 600 "round 1 of the job is averaged" round1
kill -9 "$SB"
wait "$SB" 2>/dev/null
galera_kill 2
ok "node 2 and instance b killed (SIGKILL) mid-job"
check "the cluster goes on with two nodes" "$(for i in $(seq 1 50); do
	n=$(galera_sql 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)
	[ "$n" = 2 ] && break; sleep 0.2; done; echo "$n")" 2
sleep 3
bg "$GT/server-b.log" "$S" run "$P" --instance b --listen 127.0.0.1:8002 --db "$DB3"
SB=$BGPID
wait_for 60 "instance b is back, on node 3" hub curl -sf http://127.0.0.1:8002/api/v1/status
if [ $FULL = 1 ]; then
	galera_start 2 || die "node 2 rejoins"
	ok "node 2 rejoined the cluster"
fi

wait_for $((FULL ? 1800 : 900)) "the job finishes on the cluster" job_done "$P" "$JOB"
wait "$REFPID" || true
[ "$(wc -c <"$GT/ref.sha" 2>/dev/null)" = 65 ] ||
	die "the single-server reference run did not finish"
check "final model equals the single-server run's" "$(final_sha "$P" "$JOB")" "$(cat "$GT/ref.sha")"

q() { galera_sql 1 "USE ctune; $*"; }
NWU=$((ROUNDS * SHARDS))
check "every WU was made once" "$(q "SELECT COUNT(*) FROM workunit WHERE jobid=$JOB")" $NWU
check "no WU lost: each has a valid canonical result" "$(q "SELECT COUNT(*) FROM workunit w
	JOIN result r ON r.id=w.canonical_resultid WHERE w.jobid=$JOB AND r.validate_state=1")" $NWU
check "every round averaged once" "$(q "SELECT COUNT(*) FROM round WHERE jobid=$JOB AND
	status=2 AND out_model_sha256 <> '' AND nwus_done=nwus")" $ROUNDS
check "one credit event per valid result, none for others" "$(q "SELECT
	(SELECT COUNT(*) FROM credit_event WHERE jobid=$JOB) - (SELECT COUNT(*) FROM result
	WHERE jobid=$JOB AND validate_state=1 AND granted_credit > 0)")" 0
check "no credit event twice (by result)" "$(q "SELECT COUNT(*) - COUNT(DISTINCT resultid)
	FROM credit_event")" 0
check "every user's total is the sum of its events" "$(q "SELECT COUNT(*) FROM user u WHERE
	ABS(u.total_credit - (SELECT COALESCE(SUM(credit), 0) FROM credit_event e
	WHERE e.userid=u.id)) > 1e-6 * GREATEST(1, u.total_credit)")" 0
check "credit granted equals the events'" "$(q "SELECT COUNT(*) FROM result r JOIN
	credit_event e ON e.resultid=r.id WHERE ABS(r.granted_credit - e.credit) > 1e-9")" 0
valid=$(q "SELECT COUNT(*) FROM result WHERE jobid=$JOB AND validate_state=1")
[ "$valid" -ge $((2 * NWU)) ] && ok "$valid valid results for $NWU WUs" ||
	fail "$valid valid results for $NWU WUs (quorum 2)"

# the nodes agree (wsrep_sync_wait: once the node applied what it was sent)
rows() {
	galera_sql "$1" "USE ctune; SET SESSION wsrep_sync_wait=1; SELECT CONCAT((SELECT COUNT(*) FROM result), '/',
		(SELECT COUNT(*) FROM credit_event), '/', (SELECT SUM(credit) FROM credit_event),
		'/', (SELECT GROUP_CONCAT(out_model_sha256 ORDER BY id) FROM round))"
}
nodes=3
[ $FULL = 1 ] && nodes="2 3"
for i in $nodes; do
	check "node $i holds the same rows as node 1" "$(rows "$i")" "$(rows 1)"
done
grep -h "transaction still deadlocked" "$GT"/server-*.log && fail "a transaction ran out of tries"

[ "$fails" = 0 ] && echo "PASS: Galera bed ($ROUNDS rounds x $SHARDS shards), $valid valid results"
exit $((fails > 0))
