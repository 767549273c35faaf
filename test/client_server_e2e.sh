#!/bin/bash
# The whole system with real processes: a ctune-server on its embedded
# database and three `ctune run` daemons (OpenCL on PoCL when available)
# complete a job of 2 rounds x 3 shards with quorum 2.
#  - two clients start while the server is still down: they back off and
#    get work once it is up; the third account is made over the account RPC;
#  - one client is killed with SIGKILL in the middle of a work unit and
#    restarted: it resumes from its checkpoint;
#  - every WU's two replicas are bit-identical (same upload SHA-256: the
#    server validates them by hash), all 12 results are valid, no result was
#    redone or credited twice, each user's credit is an equal share for
#    every result its hosts reported, and the final model's eval loss is
#    below the base model's.
. "$(dirname "$0")/client_lib.sh"
SERVER="$top_builddir/ctune-server"
CORPUS="$top_builddir/bench/ctune-corpus"
need_built "$SERVER" "$CORPUS"
STEPS=150

server_project 1
# keep every upload to compare the replicas' bytes below (by default they
# go as soon as their round is averaged)
sed -i 's/^file_grace = .*/&\nupload_grace = 3600/' "$P/ctune-server.conf"
corpus_data 1 2 32
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 3 --rounds 2 --steps $STEPS --batch 4 --seq 16 --lr 0.001 --quorum 2 \
	>"$T/submit.log" 2>&1 || fail "job submit"

# PoCL when there is an OpenCL device (CT_E2E_DEVICE overrides)
DEV=${CT_E2E_DEVICE:-cpu}
if [ -z "${CT_E2E_DEVICE:-}" ] && "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEV=opencl:0
fi
COMMON="--always --device $DEV --backoff-base 0.5 --checkpoint-seconds 0.3"
SELFTEST_OPT=""		# run the conformance self-test: results go out as conforming

# users 1 and 2: keys from the operator's CLI; their clients start first
for i in 1 2; do
	KEY=$("$SERVER" user create "$P" --name "user$i" --email "user$i@example.org" \
		--password "password-$i" 2>/dev/null | sed -n 's/.*account key //p')
	[ -n "$KEY" ] || fail "user create $i"
	"$CTUNE" --dir "$T/c$i" attach "$URL" --key "$KEY" --no-verify >/dev/null || fail "attach c$i"  # server still down
done
start_client c1 $COMMON; C1=$CPID
start_client c2 $COMMON --max-cpu-percent 5; C2=$CPID
wait_for 120 "c1 backs off while the server is down" grep -q "scheduler RPC failed" "$T/c1.log"

"$SERVER" run "$P" >"$T/server.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_for 60 "server up" curl -sf "$URL/api/v1/status"
"$CTUNE" --dir "$T/c3" attach "$URL" --name user3 --email user3@example.org \
	--password password-3 >/dev/null || fail "account RPC attach"
start_client c3 $COMMON; C3=$CPID

# kill -9 the slow client once it has checkpointed part of a WU
step_of() { sed -n 's:.*<step>\([0-9]*\)</step>.*:\1:p' "$T/c2/client_state.xml" 2>/dev/null | head -1; }
running_ckpt() {
	state_has c2 '<state>running</state>' && state_has c2 '<checkpoint>state</checkpoint>' &&
		[ "$(step_of)" -ge 10 ] 2>/dev/null
}
wait_for 240 "c2 checkpoints a running WU past step 10" running_ckpt
kill -9 "$C2"; wait "$C2" 2>/dev/null
start_client c2 $COMMON; C2=$CPID
wait_for 120 "c2 resumes" grep -q "resuming on $DEV at step [1-9][0-9]" "$T/c2.log"
if [ "$DEV" != cpu ]; then
	grep -q "computing on $DEV (conforming)" "$T/c1.log" || fail "$DEV did not pass the self-test"
fi

job_done() { "$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 600 "the job completes" job_done
"$SERVER" job show "$P" 1 >"$T/job.txt" 2>&1
grep -Eq 'over +success +valid +12$' "$T/job.txt" || fail "not 12 valid results: $(cat "$T/job.txt")"
[ "$(grep -Ec '^ +[12] +done' "$T/job.txt")" = 2 ] || fail "rounds not done"
awk '$1 == 1 && $2 == "done" { base = $4 } $1 == 2 && $2 == "done" { final = $5 }
     END { exit !(final < base) }' "$T/job.txt" || fail "final eval loss not below the base"

# both replicas of every WU uploaded the same bytes
for wu in $(ls "$P/upload" | sed 's/-[0-9]*$//' | sort -u); do
	n=$(sha256sum "$P/upload/$wu"-* | cut -d' ' -f1 | sort -u | wc -l)
	[ "$n" = 1 ] || fail "replicas of $wu differ"
done
[ "$(ls "$P/upload" | wc -l)" = 12 ] || fail "expected 12 uploads, got $(ls "$P/upload" | wc -l)"

# credit: each user's is one equal share (a twelfth of the total) for
# every result its hosts reported, none twice: which user computes how
# many is the scheduler's choice (a fast host asks for 16 and may leave a
# late one nothing), so the shares are counted from the server's log
# ("new host H for user U", "host H reported R (success)")
user_results() {	# user_results ID: the distinct results its hosts reported
	awk -v u="$1" '
		/sched: new host [0-9]+ for user [0-9]+$/ { owner[$(NF - 3)] = $NF }
		/sched: host [0-9]+ reported .* \(success\): accepted$/ {
			if (owner[$6] == u) got[$8] = 1 }
		END { n = 0; for (r in got) n++; print n }' "$T/server.log"
}
credit_list() {
	{ curl -sf "$URL/api/v1/users"; echo; } | tr '{' '\n' |
		sed -n 's/^"id":\([0-9]*\),.*"name":"\([^"]*\)".*"total_credit":\([0-9.eE+-]*\).*/\1 \2 \3/p' >"$T/credit"
	while read -r id name cr; do
		echo "$id $name $cr $(user_results "$id")"
	done <"$T/credit" >"$T/shares.log"
	# each user listed: credit = its results x total / 12; 12 results
	# in all (a user with results but no credit is missing from them)
	awk '{ t += $3; n += $4 } END { exit n != 12 }' "$T/shares.log" || return 1
	awk -v total="$(awk '{ t += $3 } END { printf "%.17g", t }' "$T/shares.log")" '
		{ d = $3 - $4 * total / 12; if (d > 1e-6 * total || -d > 1e-6 * total) bad = 1 }
		END { exit bad || !(total > 0) }' "$T/shares.log"
}
wait_for 120 "credit: each user one twelfth of the total per result it reported" credit_list
n=$(grep -c "(success): accepted" "$T/server.log")
[ "$n" = 12 ] || fail "$n accepted reports instead of 12 (a result reported twice?)"

wait_for 30 "c1 shows its credit" bash -c "'$CTUNE' --dir '$T/c1' status | grep -Eq 'credit [0-9.]*[1-9]'"
for c in $C1 $C2 $C3 $SPID; do stop "$c"; done
echo "PASS: job done on $DEV, 12 valid results, replicas identical, credit (user, credit, results) $(cut -d" " -f2- "$T/shares.log" | tr '\n' ' ')"
