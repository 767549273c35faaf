#!/bin/sh
# test/server_crossshard.sh - two colluding accounts on two different
# networks (the network rule cannot keep them apart) hold both replicas of
# one WU and agree on a sign-flipped update: it becomes canonical, and the
# cross-shard check (server/validate/robust.c, robust_aside.c) sets it aside before
# the round is averaged:
#  - a job of 3 shards, 2 replicas, 1 round; c1 (127.0.7.1) takes one WU's
#    replica, c2 (127.0.17.1) one replica of each WU; both report the same
#    flipped update for c1's WU, c2 honest ones for the others, which h1
#    confirms;
#  - the round's log line gives the check's figures; that shard is named
#    as an outlier (negative cosine) in the log and on the job's page, and
#    set aside: its two results become invalid, the colluders' credit for
#    them is revoked, and the WU gets two new replicas, which go to h1 and
#    h2 (127.0.9.1), never to c1 or c2;
#  - the job finishes; the final model is byte for byte the mean of the
#    honest results (an honest-only run's); c1 has no credit, c2 only that
#    of its two honest results (as much as h1's two first), and the choice
#    is recorded (robust_event, the job page).
#
# XSHARD_MODE=ulp (test/server_crossshard_ulp.sh) plays the same with a
# near-zero update instead: every weight one ulp from the base, towards
# the honest weights; it is set aside for its size (far below the median).
#
# XSHARD_JOB=lora (test/server_crossshard_lora.sh) plays it on a LoRA job
# (rank 4 adapters on every target): the flipped result is the adapters
# moved back from their start as far as the honest ones moved forward,
# and the check compares the shards' merged updates (server/validate/lora_robust.c);
# the final model is base merged with the honest adapters (test/lora_tool).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
MODE=${XSHARD_MODE:-flip}
JOBKIND=${XSHARD_JOB:-full}
CT_TMP_PREFIX=ctune-xshard-$JOBKIND-$MODE
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"
LORA_OPTS=
LORA_TARGETS=qkv,proj,fc,fcproj
if [ "$JOBKIND" = lora ]; then
	LTOOL="$B/test/lora_tool"
	[ -x "$LTOOL" ] || { echo "skip: $LTOOL not built"; exit 77; }
	LORA_OPTS="--lora-rank 4 --lora-alpha 8 --lora-targets $LORA_TARGETS"
fi

attack_project "cross-shard" "separate_loopback = 1"
mkuser c1 c2 h1 h2
echo 127.0.7.1 >"$T/ip.c1"
echo 127.0.17.1 >"$T/ip.c2"
echo 127.0.8.1 >"$T/ip.h1"
echo 127.0.9.1 >"$T/ip.h2"
submit --shards 3 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name xshard $LORA_OPTS
start_server http,transitioner,validator,assimilator

check "c1 takes a replica" "$(ask c1 1)" 1
X=$(xmllint --xpath 'string(/scheduler_reply/result/wu_name)' "$T/reply.c1")
XS=$(xmllint --xpath 'string(/scheduler_reply/workunit/shard)' "$T/reply.c1")
check "c2, on another network, takes one replica of each WU" "$(ask c2 4)" 3
check "h1 takes the two replicas left" "$(ask h1 4)" 2
work c1 "$MODE"
compute c2 honest
xr=$(awk -v x="$X" '$2 == x {print $1}' "$T/todo.c2")
W="/scheduler_reply/workunit[name='$X']"
hp=$(wu_hp "$T/reply.c2" "$X")
msha=$(xmllint --xpath "string($W/file[@role='model']/sha256)" "$T/reply.c2")
dsha=$(xmllint --xpath "string($W/file[@role='data']/sha256)" "$T/reply.c2")
"$CRAFT" "$MODE" "$T/cache/$msha" "$T/cache/$dsha" "$T/work/$xr" $hp || die "craft $MODE"
deliver c2
check "c2's three uploads are taken" "$up_codes" "200 200 200"
work h1 honest
set_aside() { grep -q "job 1: round 1, shard $XS: canonical result set aside" "$T/server.log"; }
wait_for 60 "the $MODE shard is set aside" set_aside
check "the check's figures are logged" \
	"$(grep -c 'job 1 round 1: cross-shard check of 3: lowest cosine -*[0-9.]*, .* [123] outlier' "$T/server.log")" 1
check "only the worst outlier is set aside" \
	"$(grep -c 'job 1: round 1, shard [0-9]: canonical result set aside' "$T/server.log")" 1
check "the $MODE shard is named in a warning" \
	"$(grep -c "WARN.*job 1: round 1, shard $XS: its update is unlike" "$T/server.log")" 1
check "... and set aside in the log" \
	"$(grep -c "WARN.*job 1: round 1, shard $XS: canonical result set aside" "$T/server.log")" 1
check "the round is not averaged" "$(round_done 1 1 && echo yes || echo no)" no
check "c1 gets no new replica of it" "$(ask c1 4)" 0
check "c2 gets none" "$(ask c2 4)" 0
again() {
	for v in h1 h2; do
		[ "$(ask $v 4)" -gt 0 ] && work $v honest
	done
	[ "$(awk -v x="$X" '$2 == x' "$T/got.h1" "$T/got.h2" 2>/dev/null | wc -l)" -ge 2 ]
}
wait_for 60 "h1 and h2 take and report the two new replicas" again
job_done() { "$S" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'; }
wait_for 60 "the job finishes" job_done
check "the check passed the second time" \
	"$(grep -c 'job 1 round 1: cross-shard check of 3: .* 0 outlier' "$T/server.log")" 1
"$S" job export "$P" 1 --out "$T/final.bin" >/dev/null 2>&1 || fail "job export"
set --
for s in 0 1 2; do
	set -- "$@" "$T/work/$(awk -v s="$s" '$3 == s {print $1; exit}' "$T/got.h1")"
done
if [ "$JOBKIND" = lora ]; then
	"$LTOOL" merge --base "$T/base.bin" --rank 4 --alpha 8 --targets $LORA_TARGETS \
		--out "$T/honest.bin" "$@" || die "lora_tool merge"
else
	for f in "$@"; do shift; set -- "$@" "$f.weights"; done
	"$CRAFT" mean "$T/base.bin" "$T/honest.bin" "$@" || die "craft mean"
fi
check "the final model is the honest-only mean, byte for byte" \
	"$(cmp -s "$T/final.bin" "$T/honest.bin" && echo same)" same
credits() {
	users_json || return 1
	a=$(credit_of h2); b=$(credit_of c2); c=$(credit_of h1)
	[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] &&
		awk -v a="$a" -v b="$b" -v c="$c" 'function near(x, y) { return x - y < 1e-9 * y && y - x < 1e-9 * y }
			BEGIN { exit !(a > 0 && near(b, 2 * a) && near(c, 3 * a)) }'
}
wait_for 30 "c2 keeps the credit of its 2 honest results (2x h2's 1, h1 has 3)" credits
check "c1 has no credit" "$(awk -v c="$(credit_of c1)" 'BEGIN { print c == "" || c == 0 ? "none" : c }')" none
curl -s -o "$T/job.html" "$URL/job/1"
check "the set-aside is on the job's page" \
	"$(grep -c "round 1, shard $XS: canonical result set aside" "$T/job.html")" 1
[ $fails -gt 0 ] && grep "cross-shard" "$T/server.log"
exit $((fails > 0))
