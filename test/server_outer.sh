#!/bin/sh
# test/server_outer.sh - `job submit --outer nesterov` makes the
# assimilator take an outer optimizer's step on each round's aggregate
# (lib/ct_outer.h, doc/workunit.md "The outer step"), through the real
# server, its daemons and two scripted honest hosts:
#  - bad --outer / --outer-momentum values are refused with what is wanted;
#  - job show and the job page name the outer optimizer and its settings;
#  - round 2 starts from the step of doc/workunit.md on round 1's mean
#    (test/craft_result computes both with its own arithmetic), which is
#    not the mean itself;
#  - the final model is round 2's step with the momentum round 1 left: the
#    buffer is carried from round to round through the store.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-outer
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "outer"
mkuser h1 h2
sub() { "$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 3 --rounds 2 --steps 2 --batch 2 --seq 16 --lr 0.001 "$@" 2>&1; }
check "--outer adam is refused" "$(sub --outer adam | grep -c 'want mean, sgd or nesterov')" 1
check "--outer-momentum 1 is refused" \
	"$(sub --outer nesterov --outer-momentum 1 | grep -c 'want 0 <= MU < 1')" 1
check "--outer-lr 0 is refused" "$(sub --outer sgd --outer-lr 0 | grep -c 'outer learning rate')" 1
check "nothing was stored" "$("$S" job list "$P" | grep -c 'job')" 0
submit --shards 3 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --name nes \
	--outer nesterov --outer-lr 0.7 --outer-momentum 0.9
check "job show names the outer optimizer" \
	"$("$S" job show "$P" 1 | grep -c 'outer optimizer nesterov (lr 0.7, momentum 0.9)$')" 1
start_server http,transitioner,validator,assimilator

# cycle: both hosts ask, compute honestly and deliver; true when the job is done
cycle() {
	for u in h1 h2; do ask "$u" 4 >/dev/null; compute "$u" honest; deliver "$u"; done
	"$S" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done'
}
# weights ROUND: the result files of ROUND's shards 0, 1, 2 (honest: any replica)
weights() {
	for s in 0 1 2; do
		r=$(cat "$T"/got.h1 "$T"/got.h2 | awk -v s="$s" -v w="-r$1-" \
			'$3 == s && index($2, w) {print $1; exit}')
		echo "$T/work/$r.weights"
	done
}
check "h1 gets one replica of each WU" "$(ask h1 4)" 3
check "h2 gets the others" "$(ask h2 4)" 3
for u in h1 h2; do compute "$u" honest; deliver "$u"; done
wait_for 60 "round 1 is averaged" round_done 1 1
"$CRAFT" mean "$T/base.bin" "$T/mean1.bin" $(weights 1) || die "craft mean"
"$CRAFT" nesterov 0.7 0.9 - "$T/mom1" "$T/base.bin" "$T/mean1.bin" "$T/step1.bin" ||
	die "craft nesterov"
check "h1 gets a round-2 result" "$(ask h1 1)" 1
m2=$(xp "string(/scheduler_reply/workunit/file[@role='model']/sha256)")
check "round 2 starts from the outer step on round 1's mean" "$m2" \
	"$(sha256sum <"$T/step1.bin" | cut -d' ' -f1)"
check "... which is not the mean" "$(cmp -s "$T/step1.bin" "$T/mean1.bin" && echo same)" ""
compute h1 honest; deliver h1
wait_for 120 "the job finishes" cycle
"$CRAFT" mean "$T/step1.bin" "$T/mean2.bin" $(weights 2) || die "craft mean 2"
"$CRAFT" nesterov 0.7 0.9 "$T/mom1" "$T/mom2" "$T/step1.bin" "$T/mean2.bin" "$T/step2.bin" ||
	die "craft nesterov 2"
"$CRAFT" nesterov 0.7 0.9 - "$T/mom2x" "$T/step1.bin" "$T/mean2.bin" "$T/step2x.bin" ||
	die "craft nesterov 2x"
check "the final model is round 2's step with round 1's momentum" \
	"$("$S" job show "$P" 1 | sed -n 's/^final model: \([0-9a-f]*\) .*/\1/p')" \
	"$(sha256sum <"$T/step2.bin" | cut -d' ' -f1)"
check "... (without it the step differs)" "$(cmp -s "$T/step2.bin" "$T/step2x.bin" && echo same)" ""
check "the job page says how rounds are combined" \
	"$(curl -s "$URL/job/1" | grep -c 'Rounds combined by</div><div class="v">mean, then nesterov (lr 0.7, momentum 0.9)<')" 1
exit $((fails > 0))
