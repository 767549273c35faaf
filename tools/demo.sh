#!/bin/sh
# tools/demo.sh - crowdtune's main job, end to end, on this machine.
#
# Run by tools/demo from the build directory (./build). It:
#   1. generates two synthetic languages from seeds (bench/ctune-corpus):
#      A to pretrain a small GPT-2-config model, B to fine-tune it on;
#   2. pretrains the base model on A with `ctune train`;
#   3. creates a project (`ctune-server init`, embedded MariaDB), starts
#      `ctune-server run`, submits a fine-tuning job (K shards x R rounds,
#      quorum 2) on B;
#   4. attaches N volunteers (`ctune attach --name ...`, each its own state
#      directory and account) and runs their daemons with --always;
#   5. shows progress until the job is done, then prints the eval-loss table
#      (base, each shard alone, the lo-fi average after each round, the
#      centralized fine-tune with the same total steps) and each
#      volunteer's credit.
#
# Options (environment): DEMO_DIR (default ./demo), DEMO_PORT (8710),
# DEMO_SHARDS (3), DEMO_ROUNDS (5), DEMO_STEPS (100), DEMO_PASSES (4:
# passes over its shard in one work unit), DEMO_CLIENTS (3),
# DEMO_DEVICE (client device: auto, cpu, opencl; default auto),
# DEMO_SERVE=1 keeps the server running at the end (Ctrl-C stops it).
set -eu

BUILD=$(pwd)
CT="$BUILD/ctune"
CS="$BUILD/ctune-server"
CORPUS="$BUILD/bench/ctune-corpus"
DEMO=${DEMO_DIR:-$BUILD/demo}
PORT=${DEMO_PORT:-8710}
K=${DEMO_SHARDS:-3}
R=${DEMO_ROUNDS:-5}
STEPS=${DEMO_STEPS:-100}
PASSES=${DEMO_PASSES:-4}
NCLIENTS=${DEMO_CLIENTS:-3}
DEVICE=${DEMO_DEVICE:-auto}
BATCH=8
SEQ=64
LR=0.002
URL="http://127.0.0.1:$PORT"
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$BUILD/.pocl-cache}"

pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
evalloss() { "$CT" eval --model "$1" --data "$DEMO/data/b_eval.bin" --batch $BATCH --seq $SEQ | awk '{print $2}'; }

start=$(date +%s)
rm -rf "$DEMO"
mkdir -p "$DEMO/data" "$DEMO/models"
D="$DEMO/data"
M="$DEMO/models"

say "1/6 data: two synthetic languages from seeds (A: pretraining, B: fine-tuning)"
"$CORPUS" --lang 1 --tokens 400000 --seed 1 --out "$D/a_train.bin" >/dev/null
"$CORPUS" --lang 2 --base-lang 1 --share 0.5 --tokens $((K * (STEPS * BATCH * SEQ / PASSES + 1))) --seed 2 \
	--out "$D/b_train.bin" --text | cut -c1-160 | sed 's/^/   B says: /'
"$CORPUS" --lang 2 --base-lang 1 --share 0.5 --tokens 20000 --seed 3 --out "$D/b_eval.bin" >/dev/null

say "2/6 base model: GPT-2 config L=2 C=64 NH=4, pretrained 300 steps on A"
"$CT" model init --layers 2 --heads 4 --channels 64 --max-seq $SEQ --vocab 29 --padded-vocab 32 \
	--seed 1 --out "$M/init.bin"
"$CT" train --model "$M/init.bin" --data "$D/a_train.bin" --steps 300 --batch $BATCH --seq $SEQ \
	--lr 0.003 --device cpu --out "$M/base.bin" | awk 'NR % 100 == 0 || /done/'

say "3/6 project: ctune-server init + run on $URL, job of $K shards x $R rounds, quorum 2"
"$CS" init "$DEMO/project" --listen "127.0.0.1:$PORT" --url "$URL" --name "crowdtune demo" >/dev/null
"$CS" run "$DEMO/project" --log "$DEMO/server.log" &
pids="$pids $!"
i=0
until curl -fs -o /dev/null "$URL/" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || die "server did not start; see $DEMO/server.log"
	sleep 0.3
done
JOB=$("$CS" job submit "$DEMO/project" --name "lang A -> lang B" --model "$M/base.bin" \
	--train "$D/b_train.bin" --eval "$D/b_eval.bin" --shards $K --rounds $R --steps $STEPS \
	--batch $BATCH --seq $SEQ --lr $LR --quorum 2 | awk '/^job/ {print $2}')
[ -n "$JOB" ] || die "job submit failed"
echo "   job $JOB submitted"

# One OpenCL kernel build fills the shared PoCL cache, so the volunteers
# do not all compile the same kernels at once on a small machine.
"$CT" devices >/dev/null 2>&1 || true

say "4/6 volunteers: $NCLIENTS clients attach (new accounts) and run with --always"
for n in $(seq 1 "$NCLIENTS"); do
	cdir="$DEMO/volunteer$n"
	CTUNE_PASSWORD="demo-password-$n" "$CT" --dir "$cdir" attach "$URL" --name "volunteer$n" \
		--email "volunteer$n@example.org" >/dev/null
	"$CT" --dir "$cdir" run --always --device "$DEVICE" --backoff-base 2 --checkpoint-seconds 10 \
		--log-file "$cdir/client.log" &
	pids="$pids $!"
done

say "5/6 training: progress"
last=""
deadline=$(( $(date +%s) + ${DEMO_TIMEOUT:-900} ))
while :; do
	show=$("$CS" job show "$DEMO/project" "$JOB" 2>/dev/null || true)
	line=$(printf '%s\n' "$show" | awk '/^  [0-9]/ {printf "round %s: %s, WUs %s%s | ", $1, $2, $3, ($5 == "nan" ? "" : ", eval loss " $5)}')
	if [ "$line" != "$last" ]; then
		echo "   [$(( $(date +%s) - start ))s] $line"
		last=$line
	fi
	printf '%s\n' "$show" | grep -q "^job $JOB .*: done" && break
	printf '%s\n' "$show" | grep -q "^job $JOB .*: \(error\|canceled\)" && die "job failed: $show"
	[ "$(date +%s)" -lt "$deadline" ] || die "job did not finish in time; logs in $DEMO"
	sleep 2
done

say "6/6 results: eval loss on B's held-out text (batch $BATCH x $SEQ, all of it)"
TABLE="$DEMO/results.md"
{
	echo "| model | eval loss |"
	echo "|---|---|"
	echo "| base (pretrained on A) | $(evalloss "$M/base.bin") |"
	for k in $(seq 0 $((K - 1))); do
		echo "   training on shard $((k + 1)) of $K alone for comparison ..." >&2
		"$CT" tokens shard "$D/b_train.bin" --shard "$k" --of "$K" --out "$D/shard$k.bin"
		"$CT" train --model "$M/base.bin" --data "$D/shard$k.bin" --steps $((STEPS * R)) --batch $BATCH \
			--seq $SEQ --lr $LR --device cpu --out "$M/shard$k.bin" >/dev/null
		echo "| shard $((k + 1)) alone ($((STEPS * R)) steps on it) | $(evalloss "$M/shard$k.bin") |"
	done
	for r in $(seq 1 "$R"); do
		"$CS" job export "$DEMO/project" "$JOB" --round "$r" --out "$M/lofi_round$r.bin" >/dev/null
		echo "| lo-fi average after round $r | $(evalloss "$M/lofi_round$r.bin") |"
	done
	echo "   centralized fine-tune on all shards ($((K * STEPS * R)) steps) for comparison ..." >&2
	"$CT" train --model "$M/base.bin" --data "$D/b_train.bin" --steps $((K * STEPS * R)) \
		--batch $BATCH --seq $SEQ --lr $LR --device cpu --out "$M/central.bin" >/dev/null
	echo "| centralized fine-tune (one client, all shards, $((K * STEPS * R)) steps) | $(evalloss "$M/central.bin") |"
} >"$TABLE"
cat "$TABLE"

echo
echo "credit per volunteer:"
curl -fs "$URL/api/v1/users?sort=total" 2>/dev/null | tr '{' '\n' |
	sed -n 's/.*"name":"\([^"]*\)".*"total_credit":\([0-9.e+-]*\).*/\1 \2/p' |
	awk '{ printf "  %-12s %.4f cobblestones\n", $1, $2 }' || true
echo
echo "done in $(( $(date +%s) - start ))s. Project directory: $DEMO/project"
echo "pages: $URL/ (leaderboards: $URL/users, job: $URL/job/$JOB)"
if [ "${DEMO_SERVE:-0}" = 1 ]; then
	echo "serving until Ctrl-C"
	wait
else
	echo "serve them again with: $CS run $DEMO/project"
fi
