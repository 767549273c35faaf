#!/bin/sh
# bench/bench_job.sh - a real job of a given model shape, end to end through
# the real server (ctune-server run, embedded MariaDB, every role) and real
# clients (ctune run), timed from their logs. Prints one table: phase times
# (download, train, upload per WU on a client; validate per WU and
# assimilate per round on the server), peak RSS of the server and of each
# client (VmHWM), bytes moved, disk used by the project when the job is
# done, and the issue's goals (doc/results.md, "Server cost of a real model
# size").
#
# Run from the build directory:
#   nice bench/bench_job.sh --shape 124m --shards 2 --rounds 2 --steps 1 \
#       --batch 2 --seq 64 --quorum 2 --clients 2
# --shape: 124m (GPT-2 small: L=12 NH=12 C=768 T=1024 V=50257) or tiny
# (L=2 NH=4 C=64, vocab 29: a minute). --dir DIR keeps everything there
# (default: a fresh directory under $TMPDIR, removed afterwards unless
# --keep). --device picks the clients' device (default auto). --timeout S
# (default 3600) ends the run and is also every replica's deadline (the
# job's --deadline and the project's sched.min_deadline): no replica times
# out and is re-issued mid-run (with --clients = --quorum a re-issue has no
# eligible host, one replica per account, and the job would stall).
# --lora R trains rank-R adapters (alpha R, all targets). --verify then
# runs `ctune verify --sample 1` on the last round (on --device, cpu when
# auto) and prints its cost beside one replica's training.
set -eu

usage() {
	sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

BUILD=$(pwd)
CT="$BUILD/ctune"
CS="$BUILD/ctune-server"
CORPUS="$BUILD/bench/ctune-corpus"
SHAPE=tiny SHARDS=2 ROUNDS=2 STEPS=1 BATCH=2 SEQ=64 QUORUM=2 CLIENTS=2 DEVICE=auto
DIR="" KEEP=0 EVALTOK=0 LORA=0 VERIFY=0 PORT=${BENCH_PORT:-$((20000 + $$ % 20000))} TIMEOUT=3600
while [ $# -gt 0 ]; do
	case $1 in
	--shape) SHAPE=$2; shift ;;
	--shards) SHARDS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--steps) STEPS=$2; shift ;;
	--batch) BATCH=$2; shift ;;
	--seq) SEQ=$2; shift ;;
	--quorum) QUORUM=$2; shift ;;
	--clients) CLIENTS=$2; shift ;;
	--device) DEVICE=$2; shift ;;
	--eval-tokens) EVALTOK=$2; shift ;;
	--dir) DIR=$2; shift ;;
	--keep) KEEP=1 ;;
	--timeout) TIMEOUT=$2; shift ;;
	--lora) LORA=$2; shift ;;
	--verify) VERIFY=1 ;;
	-h|--help) usage 0 ;;
	*) echo "bench_job: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$CS" ] && [ -x "$CT" ] && [ -x "$CORPUS" ] || {
	echo "bench_job: run from the build directory (ctune, ctune-server, bench/ctune-corpus)" >&2
	exit 2
}
[ "$CLIENTS" -ge "$QUORUM" ] || { echo "bench_job: --clients must be >= --quorum" >&2; exit 2; }
case $SHAPE in
124m) MODEL="--layers 12 --heads 12 --channels 768 --max-seq 1024 --vocab 50257 --padded-vocab 50304" ;;
tiny) MODEL="--layers 2 --heads 4 --channels 64 --max-seq 64 --vocab 29 --padded-vocab 32" ;;
*) echo "bench_job: --shape 124m or tiny" >&2; exit 2 ;;
esac
if [ -z "$DIR" ]; then
	DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-job-XXXXXX")
	[ "$KEEP" = 1 ] || trap 'rm -rf "$DIR"' EXIT
fi
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$BUILD/.pocl-cache}"
URL="http://127.0.0.1:$PORT"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap 'cleanup; [ "$KEEP" = 1 ] || rm -rf "$DIR"' EXIT
trap 'exit 1' INT TERM
say() { echo "bench_job: $*" >&2; }
hwm() { awk '/^VmHWM/ {print $2 * 1024}' "/proc/$1/status" 2>/dev/null || echo 0; }
# CPU seconds of a process so far (user + system, its waited children too)
TCK=$(getconf CLK_TCK)
cpu() { awk -v t="$TCK" '{ printf "%.2f\n", ($14 + $15 + $16 + $17) / t }' "/proc/$1/stat" 2>/dev/null || echo 0; }

mkdir -p "$DIR/data"
say "model ($SHAPE) and data in $DIR"
"$CT" model init $MODEL --seed 1 --out "$DIR/data/base.bin" >/dev/null
MODEL_BYTES=$(stat -c %s "$DIR/data/base.bin")
"$CORPUS" --lang 1 --tokens $((SHARDS * (STEPS * BATCH * SEQ + 1) + 1000)) --seed 2 \
	--out "$DIR/data/train.bin" >/dev/null
"$CORPUS" --lang 1 --tokens 20000 --seed 3 --out "$DIR/data/eval.bin" >/dev/null

"$CS" init "$DIR/project" --listen "127.0.0.1:$PORT" --url "$URL" --name bench >/dev/null
# no replica's deadline before the run's end: the scheduler gives a result
# a few times the job's typical run time (sched.min_deadline at least), and
# a loaded machine trains slower than that (see --timeout)
sed -i "s/^\[sched\]\$/[sched]\nmin_deadline = $TIMEOUT/" "$DIR/project/ctune-server.conf"
grep -q "^min_deadline = $TIMEOUT" "$DIR/project/ctune-server.conf" ||
	{ say "could not set sched.min_deadline"; exit 1; }
BASE_DISK=$(du -sb "$DIR/project" | awk '{print $1}')
"$CS" run "$DIR/project" --log "$DIR/server.log" &
SPID=$!
pids="$pids $SPID"
i=0
until curl -fs -o /dev/null "$URL/" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || { say "server did not start"; exit 1; }
	sleep 0.3
done
EV=""
[ "$EVALTOK" = 0 ] || EV="--eval-tokens $EVALTOK"
[ "$LORA" = 0 ] || EV="$EV --lora-rank $LORA"
JOB=$("$CS" job submit "$DIR/project" --name bench --allow-random-base --model "$DIR/data/base.bin" \
	--train "$DIR/data/train.bin" --eval "$DIR/data/eval.bin" --shards "$SHARDS" \
	--rounds "$ROUNDS" --steps "$STEPS" --batch "$BATCH" --seq "$SEQ" --lr 1e-4 \
	--quorum "$QUORUM" --replicas "$QUORUM" --no-adaptive --deadline "$TIMEOUT" $EV |
	awk '/^job/ {print $2}')
[ -n "$JOB" ] || { say "job submit failed"; exit 1; }
# the job's files: inputs in the store (download/), results (upload/)
files() { find "$DIR/project/download" "$DIR/project/upload" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
START_DISK=$(files)
SCPU0=$(cpu "$SPID")
start=$(date +%s)
cpids=""
for n in $(seq 1 "$CLIENTS"); do
	c="$DIR/client$n"
	CTUNE_PASSWORD="bench-password-$n" "$CT" --dir "$c" attach "$URL" --name "bench$n" \
		--email "bench$n@example.org" >/dev/null
	"$CT" --dir "$c" run --always --device "$DEVICE" --backoff-base 2 \
		--checkpoint-seconds 600 --log-file "$c/client.log" &
	cpids="$cpids $!"
	pids="$pids $!"
done
say "job $JOB: $SHARDS shards x $ROUNDS rounds, quorum $QUORUM, $CLIENTS clients"
deadline=$((start + TIMEOUT))
while :; do
	show=$("$CS" job show "$DIR/project" "$JOB" 2>/dev/null || true)
	printf '%s\n' "$show" | grep -q "^job $JOB .*: done" && break
	printf '%s\n' "$show" | grep -q "^job $JOB .*: \(error\|canceled\)" && { say "job failed"; exit 1; }
	if [ "$(date +%s)" -ge "$deadline" ]; then
		say "timed out after $TIMEOUT s; logs in $DIR; the job and the server's last steps:"
		printf '%s\n' "$show" >&2
		grep -E 'validator|assimilator|transitioner' "$DIR/server.log" | tail -n 8 >&2
		KEEP=1
		exit 1
	fi
	sleep 5
done
WALL=$(( $(date +%s) - start ))
CHWM=""
CCPU=0
for p in $cpids; do CHWM="$CHWM $(hwm "$p")"; CCPU=$(echo "$CCPU $(cpu "$p")" | awk '{print $1 + $2}'); done
for p in $cpids; do kill "$p" 2>/dev/null || true; done
# the file deleter runs every 10 s: give it two turns
i=0
while [ $i -lt 30 ] && [ -n "$(ls -A "$DIR/project/upload" 2>/dev/null | grep -v '^\.' || true)" ]; do
	sleep 1; i=$((i + 1))
done
SHWM=$(hwm "$SPID")
SCPU=$(echo "$SCPU0 $(cpu "$SPID")" | awk '{print $2 - $1}')
END_DISK=$(files)
UP_DISK=$(du -sb "$DIR/project/upload" 2>/dev/null | awk '{print $1}')
SHARD_BYTES=$(stat -c %s "$DIR/data/train.bin")
EVAL_BYTES=$(stat -c %s "$DIR/data/eval.bin")
DB_DISK=$(du -sb "$DIR/project/db" 2>/dev/null | awk '{print $1}')
if [ "$VERIFY" = 1 ]; then
	VDEV=$DEVICE
	[ "$VDEV" != auto ] || VDEV=cpu
	t0=$(date +%s.%N)
	"$CT" verify "$URL" "$JOB" --round "$ROUNDS" --sample 1 --device "$VDEV" \
		>"$DIR/verify.log" 2>&1 || { say "verify failed: $(cat "$DIR/verify.log")"; exit 1; }
	VWALL=$(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
fi
kill "$SPID" 2>/dev/null || true
wait "$SPID" 2>/dev/null || true

# Phase times from the logs (timestamps: 2026-11-24T20:22:57.143Z).
cat "$DIR"/client*/client.log >"$DIR/clients.log"
awk -v shwm="$SHWM" -v chwm="$CHWM" -v mb="$MODEL_BYTES" -v wall="$WALL" \
    -v base="$BASE_DISK" -v endd="$END_DISK" -v up="${UP_DISK:-0}" -v dbd="${DB_DISK:-0}" \
    -v shard="$SHARD_BYTES" -v evalb="$EVAL_BYTES" -v rounds="$ROUNDS" -v startd="$START_DISK" \
    -v shape="$SHAPE" -v q="$QUORUM" -v nwu="$((SHARDS * ROUNDS))" -v scpu="$SCPU" -v ccpu="$CCPU" -v loadavg="$(cut -d' ' -f1-3 /proc/loadavg)" '
function ts(s,   t) { t = substr(s, 12, 12); split(t, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
FILENAME ~ /clients.log$/ {
	name = $4; sub(/:$/, "", name)
	if ($0 ~ /: downloading /) { if (!(name in dl0)) dl0[name] = ts($1); b = $(NF - 1); gsub(/[()]/, "", b); down += b }
	else if ($0 ~ /inputs verified, ready/) { if (name in dl0) { dl += ts($1) - dl0[name]; ndl++; delete dl0[name] } }
	else if ($0 ~ / at step 0 of /) tr0[name] = ts($1)
	else if ($0 ~ /: done, final loss/) { if (name in tr0) { tr += ts($1) - tr0[name]; ntr++ } }
	else if ($0 ~ /: uploading$/) up0[name] = ts($1)
	else if ($0 ~ /: uploaded [0-9]+ bytes/) { if (name in up0) { upt += ts($1) - up0[name]; nup++ }; for (i = 1; i <= NF; i++) if ($(i) == "uploaded") upb += $(i + 1) }
}
FILENAME ~ /server.log$/ {
	if ($0 ~ /validator: .*result\(s\) in /) {
		for (i = 1; i <= NF; i++) {
			if ($(i) == "in" && $(i + 2) ~ /^s/) v += $(i + 1)
			if ($(i) == "read") vl += $(i + 1)
			if ($(i) == "decode") vd += $(i + 1)
			if ($(i) == "probes") vp += $(i + 1)
		}
		nv++
	}
	if ($0 ~ /assimilator: job .* round .*: .* s \(average/) {
		for (i = 1; i <= NF; i++) if ($(i) ~ /^[0-9.]+$/ && $(i + 1) == "s" && $(i + 2) == "(average") { as += $(i); if ($(i) > asmax) asmax = $(i) }
		na++
	}
	if ($0 ~ /ahead of the round, in /) { for (i = 1; i <= NF; i++) if ($(i) == "in") ah += $(i + 1) }
	if ($0 ~ /assimilator: job .* done: .* sample /) { for (i = 1; i <= NF; i++) if ($(i) == "sample") sm += $(i + 1); ns++ }
}
END {
	n = split(chwm, c, " "); cmax = 0; for (i = 1; i <= n; i++) if (c[i] > cmax) cmax = c[i]
	trw = ntr ? tr / ntr : 0
	srv = ntr ? (v + as + ah + sm) / ntr : 0
	printf "| shape %s, quorum %d (load %s) | value |\n|---|---|\n", shape, q, loadavg
	printf "| model size | %.1f MiB |\n", mb / 1048576
	printf "| job wall time | %d s |\n", wall
	printf "| client: download per WU (mean of %d) | %.2f s |\n", ndl, ndl ? dl / ndl : 0
	printf "| client: train per WU (mean of %d) | %.2f s |\n", ntr, trw
	printf "| client: upload per WU (mean of %d) | %.2f s |\n", nup, nup ? upt / nup : 0
	printf "| server: validate per pass (mean of %d) | %.2f s |\n", nv, nv ? v / nv : 0
	printf "| server: validation, all passes: models read / decode / probes | %.2f / %.2f / %.2f s of %.2f s |\n", vl, vd, vp, v
	printf "| server: assimilate per round (mean of %d; max) | %.2f s; %.2f s |\n", na, na ? as / na : 0, asmax
	printf "| server: base loss ahead of round 1; round samples (mean of %d) | %.2f s; %.2f s |\n", ns, ah, ns ? sm / ns : 0
	printf "| server time per WU result (validate + share of assimilate, base loss, samples) | %.2f s (%.1f%% of train) |\n", srv, trw ? 100 * srv / trw : 0
	# per WU: the validation of all its replicas and the share of its round, against
	# the compute of one replica (the goal: stricter than per result)
	srvwu = (v + as + ah + sm) / nwu
	printf "| server time per WU (the above x results / %d WUs) | %.2f s (%.1f%% of the train of one replica) |\n", nwu, srvwu, trw ? 100 * srvwu / trw : 0
	# CPU seconds do not depend on who else runs: the steadier figures
	printf "| server CPU per WU result (whole process over the job / %d) | %.2f s |\n", ntr, ntr ? scpu / ntr : 0
	printf "| client CPU per WU replica (whole processes / %d: input checks, training, upload encoding) | %.2f s |\n", ntr, ntr ? ccpu / ntr : 0
	printf "| server CPU / client CPU, per result | %.1f%% |\n", ccpu ? 100 * scpu / ccpu : 0
	printf "| server CPU per WU / client CPU per replica | %.2f / %.2f s = %.1f%% |\n", scpu / nwu, ntr ? ccpu / ntr : 0, ccpu ? 100 * (scpu / nwu) / (ccpu / ntr) : 0
	printf "| server peak RSS | %.0f MiB (%.2fx model) |\n", shwm / 1048576, shwm / mb
	printf "| client peak RSS (max of %d) | %.0f MiB |\n", n, cmax / 1048576
	printf "| bytes downloaded / uploaded by clients | %.1f / %.1f MiB |\n", down / 1048576, upb / 1048576
	printf "| project files (store + uploads): job submitted / job done | %.1f / %.1f MiB |\n", startd / 1048576, endd / 1048576
	printf "| of which uploads left; database; empty project | %.1f; %.1f; %.1f MiB |\n", up / 1048576, dbd / 1048576, base / 1048576
	bound = startd + rounds * mb
	printf "| goal: disk done <= submitted + one model per round (%.1f MiB) | %s |\n", bound / 1048576, endd <= bound ? "met" : "NOT met"
	printf "| goal: server per WU <= 10%% of the train of one replica (wall clock, from the logs) | %s |\n", trw && srvwu <= 0.1 * trw ? "met" : "NOT met"
	printf "| goal: server CPU per WU <= 10%% of client CPU per replica | %s |\n", (ccpu > 0 && ntr > 0 && scpu / nwu <= 0.1 * ccpu / ntr) ? "met" : "NOT met"
	printf "| goal: assimilate a round <= 30 s | %s |\n", asmax <= 30 ? "met" : "NOT met"
	printf "| goal: server peak RSS <= 2.5x model | %s |\n", shwm <= 2.5 * mb ? "met" : "NOT met"
}' "$DIR/clients.log" "$DIR/server.log"
if [ "$VERIFY" = 1 ]; then
	# the WU's compute and the downloads, as ctune verify prints them; one
	# replica's training for comparison, from the clients' logs (table above)
	awk -v wall="$VWALL" -v dev="$VDEV" -v loadavg="$(cut -d' ' -f1-3 /proc/loadavg)" '
	/recomputed on/ { for (i = 1; i <= NF; i++) if ($i == "in") c = $(i + 1) }
	/^verified:/ { for (i = 1; i <= NF; i++) if ($i == "MB") mb = $(i - 1) }
	END {
		printf "\n| ctune verify --sample 1 (last round, %s; load %s) | |\n|---|---|\n", dev, loadavg
		printf "| wall clock | %.2f s |\n", wall
		printf "| of which recomputing the WU | %.2f s |\n", c
		printf "| downloaded (round model + shard) | %.1f MB |\n", mb
		printf "| the rest (receipts, signatures, loading, hashing, downloads) | %.2f s |\n", wall - c
	}' "$DIR/verify.log"
fi
