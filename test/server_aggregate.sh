#!/bin/sh
# test/server_aggregate.sh - `job submit --aggregate median` makes the
# assimilator take the coordinate-wise median of a round's canonical
# results instead of their mean:
#  - a job of 3 shards, 2 replicas, --aggregate median; two honest hosts
#    compute every WU; round 2's model is, byte for byte, the median that
#    test/craft_result computes with its own sort, and differs from the
#    mean;
#  - a bad --aggregate value is refused with the choices;
#  - job show reports the probe size --probe-tokens set (32 eval tokens,
#    where this job's default would be 16; the validator reads the same
#    column through the same ct_val_probe_tokens), the evaluation size
#    --eval-tokens set and the aggregation, all three stored with the job
#    when it is created (no later UPDATE: no moment with the defaults).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-agg
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "aggregate"
mkuser h1 h2
out=$("$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 3 --rounds 2 --steps 2 --batch 2 --seq 16 --lr 0.001 --aggregate mode 2>&1)
check "--aggregate mode is refused" "$(echo "$out" | grep -c 'want mean, trimmed-mean or median')" 1
submit --shards 3 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --aggregate median --name med \
	--probe-tokens 32 --eval-tokens 48
check "job show says the job's probe size" \
	"$("$S" job show "$P" 1 | grep -c '^probe: 32 eval tokens per new result$')" 1
check "job show says its evaluation size and aggregation" \
	"$("$S" job show "$P" 1 | grep -c '^evaluation: 48 tokens a round; rounds aggregated by median, no outer optimizer$')" 1
start_server http,transitioner,validator,assimilator
check "h1 gets one replica of each WU" "$(ask h1 4)" 3
check "h2 gets the others" "$(ask h2 4)" 3
mkdir -p "$T/honest"
for u in h1 h2; do compute "$u" honest; deliver "$u"; done
wait_for 60 "round 1 is averaged" round_done 1 1
set --
for s in 0 1 2; do set -- "$@" "$T/work/$(awk -v s="$s" '$3 == s {print $1}' "$T/got.h1").weights"; done
"$CRAFT" median "$T/base.bin" "$T/median.bin" "$@" || die "craft median"
"$CRAFT" mean "$T/base.bin" "$T/mean.bin" "$@" || die "craft mean"
check "h1 gets a round-2 result" "$(ask h1 1)" 1
check "round 2 starts from the median of the canonical results" \
	"$(xp "string(/scheduler_reply/workunit/file[@role='model']/sha256)")" \
	"$(sha256sum <"$T/median.bin" | cut -d' ' -f1)"
check "... which is not their mean" "$(cmp -s "$T/median.bin" "$T/mean.bin" && echo same)" ""
exit $((fails > 0))
