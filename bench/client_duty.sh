#!/bin/bash
# bench/client_duty.sh - how busy one volunteer client keeps the machine.
#
#   bench/client_duty.sh [BUILD_DIR] [--wus N] [--steps S] [--rounds R]
#
# Part 1: a real ctune-server (embedded database, request_delay 10 s) with
# one job of N WUs (default 30) in ONE round, quorum 1, and one
# `ctune run --always` client on the CPU. From the client's log: the duty
# cycle = time spent training (each WU's "starting" to "done") over the
# wall time from the first WU's start to the last result's report, and
# the bytes downloaded per WU after the first, against the size of the
# model (the base model comes from the cache by hash; each WU's shard is
# its own and is fetched once).
# Part 2: a job of R rounds (default 3) x 2 WUs, quorum 1: round turnover =
# from the server's "round N opened" to the client starting a WU of it.
# Choose S (default 40) so that one WU trains for about 10 s on this
# machine; the table prints the measured WU time. Run under nice; report
# `uptime` with the numbers.
set -eu
B=${1:-build}
[ $# -gt 0 ] && shift
WUS=30 STEPS=40 ROUNDS=3
while [ $# -gt 0 ]; do
	case $1 in
	--wus) WUS=$2; shift 2 ;;
	--steps) STEPS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	*) echo "usage: $0 [BUILD_DIR] [--wus N] [--steps S] [--rounds R]" >&2; exit 2 ;;
	esac
done
B=$(cd "$B" && pwd)
SERVER=$B/ctune-server CTUNE=$B/ctune CORPUS=$B/bench/ctune-corpus
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-duty.XXXXXX")
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
secs() { date -d "$1" +%s.%N; }	# ISO time stamp of a log line -> seconds

# setup NAME SHARDS ROUNDS: server project with one job; sets URL, KEY
setup() {
	local name=$1 shards=$2 rounds=$3 port
	port=$(free_port)
	URL="http://127.0.0.1:$port"
	"$SERVER" init "$T/$name" --listen "127.0.0.1:$port" --url "$URL" >"$T/$name.init" 2>&1
	sed -i 's/^request_delay = .*/request_delay = 10/' "$T/$name/ctune-server.conf"
	"$SERVER" job submit "$T/$name" --model "$T/base.bin" --train "$T/train.bin" \
		--eval "$T/eval.bin" --shards "$shards" --rounds "$rounds" --steps "$STEPS" \
		--batch 4 --seq 64 --lr 0.001 --quorum 1 >"$T/$name.submit" 2>&1
	"$SERVER" run "$T/$name" >"$T/$name.server.log" 2>&1 &
	PIDS="$PIDS $!"
	for _ in $(seq 200); do curl -sf "$URL/api/v1/status" >/dev/null && break; sleep 0.1; done
	KEY=$("$SERVER" user create "$T/$name" --name "u$name" --email "$name@example.org" \
		--password "password-$name" 2>/dev/null | sed -n 's/.*account key //p')
	"$CTUNE" --dir "$T/c$name" attach "$URL" --key "$KEY" >/dev/null
}

# run_client NAME NREPORTS: client until NREPORTS results are reported
run_client() {
	local name=$1 want=$2
	nice "$CTUNE" --dir "$T/c$name" -v run --always --device cpu --no-selftest \
		--backoff-base 1 >"$T/$name.client.log" 2>&1 &
	local cpid=$!
	PIDS="$PIDS $cpid"
	for _ in $(seq 36000); do
		n=$(grep -o 'scheduler RPC ok: [0-9]* reported' "$T/$name.client.log" |
			awk '{ s += $4 } END { print s + 0 }')
		[ "$n" -ge "$want" ] && break
		sleep 0.1
	done
	kill "$cpid"
}

"$CTUNE" model init --layers 2 --heads 4 --channels 128 --max-seq 64 --vocab 29 --seed 1 \
	--out "$T/base.bin" >/dev/null
"$CORPUS" --lang 1 --tokens 400000 --out "$T/train.bin" >/dev/null
"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$T/eval.bin" >/dev/null
MODEL_BYTES=$(stat -c %s "$T/base.bin")

echo "== part 1: $WUS WUs x $STEPS steps, one round, quorum 1, request_delay 10 s"
setup one "$WUS" 1
T0=$(date +%s.%N)
run_client one "$WUS"
L=$T/one.client.log
# per task: start and done times
awk '/: starting on / { split($0, a, " "); t = a[1]; n = $0; sub(/.*INFO: /, "", n); sub(/:.*/, "", n); s[n] = t }
     /: done, final loss/ { split($0, a, " "); t = a[1]; n = $0; sub(/.*INFO: /, "", n); sub(/:.*/, "", n); print n, s[n], t }' \
	"$L" >"$T/spans"
FIRST=$(sort -k2 "$T/spans" | head -1 | awk '{ print $2 }')
LASTREP=$(grep 'scheduler RPC ok: [1-9][0-9]* reported' "$L" | tail -1 | awk '{ print $1 }')
BUSY=0 N=0
while read -r _ s e; do
	BUSY=$(awk -v b="$BUSY" -v s="$(secs "$s")" -v e="$(secs "$e")" 'BEGIN { printf "%.3f", b + e - s }')
	N=$((N + 1))
done <"$T/spans"
WALL=$(awk -v a="$(secs "$FIRST")" -v b="$(secs "$LASTREP")" 'BEGIN { printf "%.3f", b - a }')
# bytes fetched over the network, by input (cache hits are logged as
# "in the cache" and not counted)
dl() { grep -o ": downloading $1 ([0-9]* bytes)" "$L" | tr -d '(' | awk '{ s += $4; n++ } END { print s + 0, n + 0 }'; }
read -r MODEL_DL MODEL_N <<<"$(dl model)"
read -r DATA_DL DATA_N <<<"$(dl data)"
HITS=$(grep -c ': model in the cache' "$L" || true)
printf "%-44s %s\n" "WUs computed" "$N"
printf "%-44s %.2f s\n" "mean WU training time" "$(awk -v b="$BUSY" -v n="$N" 'BEGIN { print b / n }')"
printf "%-44s %.1f s\n" "wall, first start -> last report" "$WALL"
printf "%-44s %.2f %%\n" "duty cycle (goal >= 98 %)" "$(awk -v b="$BUSY" -v w="$WALL" 'BEGIN { print 100 * b / w }')"
printf "%-44s %s\n" "model size (bytes)" "$MODEL_BYTES"
printf "%-44s %s fetches, %s bytes; %s cache hits\n" "base model downloads" "$MODEL_N" "$MODEL_DL" "$HITS"
printf "%-44s %.0f (%.3f %% of the model; goal <= 1 %%)\n" "model bytes per WU after the first" \
	"$(awk -v a="$MODEL_DL" -v m="$MODEL_BYTES" -v n="$N" 'BEGIN { print (a - m) / (n - 1) }')" \
	"$(awk -v a="$MODEL_DL" -v m="$MODEL_BYTES" -v n="$N" 'BEGIN { print 100 * (a - m) / (n - 1) / m }')"
printf "%-44s %.0f (%.2f %% of the model; every WU has its own shard)\n" "shard bytes per WU" \
	"$(awk -v a="$DATA_DL" -v n="$N" 'BEGIN { print a / n }')" \
	"$(awk -v a="$DATA_DL" -v n="$N" -v m="$MODEL_BYTES" 'BEGIN { print 100 * a / n / m }')"

echo "== part 2: $ROUNDS rounds x 2 WUs, quorum 1: round turnover"
setup two 2 "$ROUNDS"
run_client two $((2 * ROUNDS))
grep -o '[^ ]* .*round [0-9]* opened' "$T/two.server.log" |
	sed -n 's/^\([^ ]*\) .*round \([0-9]*\) opened.*/\2 \1/p' >"$T/opened"
grep ': starting on ' "$T/two.client.log" | awk '{ print $1 }' >"$T/starts"
while read -r r t; do
	[ "$r" -eq 0 ] && continue
	first=$(awk -v o="$(secs "$t")" 'BEGIN { best = "" }
		{ cmd = "date -d " $1 " +%s.%N"; cmd | getline s; close(cmd); if (s >= o && best == "") best = s }
		END { print best }' "$T/starts")
	printf "%-44s %.2f s\n" "round $r: opened -> client computing" \
		"$(awk -v a="$(secs "$t")" -v b="$first" 'BEGIN { print b - a }')"
done <"$T/opened"
echo "load: $(uptime)"
