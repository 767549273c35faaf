# client_lib.sh - helpers shared by the client's integration tests
# (sourced, not run). They start real processes: test/cl_fake_server or
# ctune-server, and `ctune run` daemons, each in its own directory under a
# fresh temporary directory, and stop exactly the processes they started.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
CTUNE="$top_builddir/ctune"
FAKE="$top_builddir/test/cl_fake_server"
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-client-test.XXXXXX")
PIDS=""

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	if [ "${KEEP_TMP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "---- $f (last 30 lines)" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.1 s.
wait_for() {
	local limit=$1 what=$2 i=0
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $((limit * 10)) ] && fail "timed out after ${limit}s waiting for: $what"
		sleep 0.1
	done
}

# start_fake NAME [args]: fake server in $T/NAME; sets FAKE_PID, FAKE_URL.
start_fake() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	rm -f "$T/$name/port"
	"$FAKE" "$T/$name" "$@" >"$T/$name.log" 2>&1 &
	FAKE_PID=$!
	PIDS="$PIDS $FAKE_PID"
	wait_for 20 "fake server $name" test -s "$T/$name/port"
	FAKE_URL="http://127.0.0.1:$(cat "$T/$name/port")"
}

# start_client NAME [run args]: `ctune run` on state dir $T/NAME; sets CPID.
# The OpenCL self-test is skipped unless SELFTEST_OPT is set (to "").
start_client() {
	local name=$1
	shift
	"$CTUNE" --dir "$T/$name" -v run ${SELFTEST_OPT---no-selftest} "$@" >>"$T/$name.log" 2>&1 &
	CPID=$!
	PIDS="$PIDS $CPID"
}

# control_page NAME: wait for the control page of the client in $T/NAME
# (`ctune run --web`) and set PAGE (the address `ctune web` prints),
# PAGE_PORT, BASE (its http://127.0.0.1:PORT) and TOKEN.
control_page() {
	wait_for 30 "ctune web prints the address" "$CTUNE" --dir "$T/$1" web
	PAGE=$("$CTUNE" --dir "$T/$1" web)
	PAGE_PORT=${PAGE#http://127.0.0.1:}
	PAGE_PORT=${PAGE_PORT%%/*}
	BASE="http://127.0.0.1:$PAGE_PORT"
	TOKEN=${PAGE#*token=}
}

# stop PID: SIGTERM and wait.
stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# state_has DIR REGEX: the client's state file matches.
state_has() {
	grep -Eq "$2" "$T/$1/client_state.xml" 2>/dev/null
}

# reported SERVERDIR NAME: the fake server logged a success report of NAME.
reported() {
	grep -q "^$2 success " "$T/$1/reports.log" 2>/dev/null
}

# reference WU: what `ctune train` gives for the fake server's work unit.
reference() {
	local srv=$1 steps=$2
	"$CTUNE" train --model "$T/$srv/base.bin" --data "$T/$srv/data.bin" \
		--steps "$steps" --batch 2 --seq 8 --lr 0.001 --grad-clip 1 \
		--out "$T/ref.bin" >"$T/ref.log" 2>&1 || fail "ctune train failed"
}

# server_project [REQUEST_DELAY]: a port the fake server just had (PORT,
# URL) and a ctune-server project ($SERVER init) in P listening there, with
# request_delay set when given.
server_project() {
	start_fake probe
	PORT=$(cat "$T/probe/port")
	stop "$FAKE_PID"
	URL="http://127.0.0.1:$PORT"
	P="$T/proj"
	"$SERVER" init "$P" --listen "127.0.0.1:$PORT" --url "$URL" >"$T/init.log" 2>&1 ||
		fail "server init"
	if [ $# -gt 0 ]; then
		sed -i "s/^request_delay = .*/request_delay = $1/" "$P/ctune-server.conf"
	fi
}

# server_and_clients N OPTS...: `ctune-server run` on $P (pid SPID), then
# N accounts user1..userN, each attached in $T/cI and running
# `ctune run OPTS` (pids C1..CN).
server_and_clients() {
	local n=$1 i key
	shift
	"$SERVER" run "$P" >"$T/server.log" 2>&1 &
	SPID=$!
	PIDS="$PIDS $SPID"
	wait_for 60 "server up" curl -sf "$URL/api/v1/status"
	for i in $(seq 1 "$n"); do
		key=$("$SERVER" user create "$P" --name "user$i" --email "user$i@example.org" \
			--password "password-$i" 2>/dev/null | sed -n 's/.*account key //p')
		[ -n "$key" ] || fail "user create $i"
		"$CTUNE" --dir "$T/c$i" attach "$URL" --key "$key" >/dev/null || fail "attach c$i"
		start_client c$i "$@"
		eval C$i=\$CPID
	done
}

# corpus_data LAYERS HEADS CHANNELS: a model of that size (vocab 29, seed 1)
# in $T/base.bin and corpus tokens ($CORPUS) in $T/train.bin, $T/eval.bin.
corpus_data() {
	"$CTUNE" model init --layers "$1" --heads "$2" --channels "$3" --max-seq 32 --vocab 29 \
		--seed 1 --out "$T/base.bin" >/dev/null || fail "model init"
	"$CORPUS" --lang 1 --tokens 40000 --out "$T/train.bin" >/dev/null || fail "corpus"
	"$CORPUS" --lang 1 --tokens 4000 --seed 2 --out "$T/eval.bin" >/dev/null || fail "corpus"
}

# need_browser: skip the test (77) without Chromium ($CHROMIUM or Debian's
# /usr/bin/chromium), node and test/node_modules (playwright-core).
need_browser() {
	local chromium=${CHROMIUM:-/usr/bin/chromium}

	if [ ! -x "$chromium" ] || ! command -v node >/dev/null 2>&1 ||
	   [ ! -d "$top_srcdir/test/node_modules/playwright-core" ]; then
		echo "SKIP: needs $chromium, node and test/node_modules (tools/setup installs them)"
		exit 77
	fi
}

# need_built PROGRAM...: skip the test (77) unless every PROGRAM is built.
need_built() {
	local x

	for x in "$@"; do
		[ -x "$x" ] || { echo "SKIP: $x not built"; exit 77; }
	done
}

# lora_e2e_tools: SERVER, CORPUS, TOOL (test/lora_tool) set and built, else
# skip (77); RANK=4 ALPHA=8, the adapters the LoRA end-to-end jobs use.
lora_e2e_tools() {
	SERVER="$top_builddir/ctune-server"
	CORPUS="$top_builddir/bench/ctune-corpus"
	TOOL="$top_builddir/test/lora_tool"
	need_built "$SERVER" "$CORPUS" "$TOOL" "$CTUNE"
	RANK=4
	ALPHA=8
}

# base_job_setup: a compact-base job's project and data: the LoRA tools
# (lora_e2e_tools), FMT (nf4; CT_BASE_JOB_FMT overrides: bf16, q8), the
# project (uploads kept for the test to read) and the corpus_data model.
base_job_setup() {
	lora_e2e_tools
	FMT=${CT_BASE_JOB_FMT:-nf4}
	server_project 1
	sed -i 's/^file_grace = .*/&\nupload_grace = 3600/' "$P/ctune-server.conf"
	corpus_data 2 4 128
}

# compact_base_file: BASE_C, the compact base file (CTBASE) of the store.
compact_base_file() {
	local f
	BASE_C=
	for f in $(find "$P/download" -type f); do
		cmp -s -n 6 "$f" <(printf CTBASE) && BASE_C=$f
	done
	[ -n "$BASE_C" ] || fail "no compact base in the store"
}

# eval_is MODEL NTOK LOSS WHAT: `ctune eval` of MODEL on $T/eval.bin over
# NTOK tokens (batches of 4 x 16) prints the server's LOSS (the API's
# exact double, to the 6 decimals ctune prints).
eval_is() {
	local mine
	"$CTUNE" eval --model "$1" --data "$T/eval.bin" --batch 4 --seq 16 \
		--batches $(($2 / 64)) >"$T/eval.log" 2>&1 || fail "ctune eval of $4: $(cat "$T/eval.log")"
	mine=$(sed -n 's/^loss \([0-9.]*\) .*/\1/p' "$T/eval.log")
	[ "$(printf '%.6f' "$3")" = "$mine" ] || fail "server's loss of $4 $3, ctune eval $mine"
}

# e2e_device: DEV, the device the end-to-end clients compute on: PoCL's
# opencl:0 when it is there, else cpu (CT_E2E_DEVICE overrides).
e2e_device() {
	DEV=${CT_E2E_DEVICE:-cpu}
	if [ -z "${CT_E2E_DEVICE:-}" ] && "$CTUNE" devices --no-selftest 2>/dev/null |
		grep -q 'opencl:0'; then
		DEV=opencl:0
	fi
}

# e2e_job_run DEVICE SECONDS WHAT N: the server and two clients on DEVICE
# (server_and_clients), job 1 done within SECONDS with N valid results, N
# uploads in $P/upload and both replicas of every WU uploaded the same
# bytes. The job's table is left in $T/job.txt.
e2e_job_run() {
	local wu n
	server_and_clients 2 --always --device "$1" --backoff-base 0.5 --checkpoint-seconds 0.3
	job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
	wait_for "$2" "$3" job_done
	"$SERVER" job show "$P" 1 >"$T/job.txt" 2>&1
	grep -Eq "over +success +valid +$4\$" "$T/job.txt" ||
		fail "not $4 valid results: $(cat "$T/job.txt")"
	[ "$(ls "$P/upload" | wc -l)" = "$4" ] ||
		fail "expected $4 uploads, got $(ls "$P/upload" | wc -l)"
	for wu in $(ls "$P/upload" | sed 's/-[0-9]*$//' | sort -u); do
		n=$(sha256sum "$P/upload/$wu"-* | cut -d' ' -f1 | sort -u | wc -l)
		[ "$n" = 1 ] || fail "replicas of $wu differ"
	done
}

# lora_e2e_run DEVICE SECONDS WHAT: e2e_job_run with 8 results, and the
# job's eval loss fell.
lora_e2e_run() {
	e2e_job_run "$1" "$2" "$3" 8
	awk '$1 == 1 && $2 == "done" { base = $4 } $1 == 2 && $2 == "done" { final = $5 }
	     END { exit !(final < base) }' "$T/job.txt" || fail "final eval loss not below the base"
}
