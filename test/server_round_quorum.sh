#!/bin/sh
# test/server_round_quorum.sh - `job submit --round-quorum 0.75`: a round
# closes once 3 of its 4 WUs are done, without waiting for a volunteer who
# took the fourth and vanished (its deadline is an hour away), through the
# real server and its daemons:
#  - bad --round-quorum / --round-timeout values, and a LoRA job with a
#    round quorum, are refused;
#  - round 1 closes with the 3 WUs done: round 2 starts from their mean,
#    byte for byte (test/craft_result's own mean, in shard order), and
#    `job show` and the job page say how rounds close;
#  - the straggler's WU is abandoned: its host, back, is told to abort it,
#    and the job finishes long before the deadline.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-rquorum
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "round-quorum"
mkuser h1 slow
sub() { "$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 4 --rounds 2 --steps 2 --batch 2 --seq 16 --lr 0.001 "$@" 2>&1; }
check "--round-quorum 0 is refused" "$(sub --round-quorum 0 | grep -c 'want a fraction in (0, 1]')" 1
check "--round-quorum 1.5 is refused" "$(sub --round-quorum 1.5 | grep -c 'want a fraction')" 1
check "--round-timeout -1 is refused" "$(sub --round-timeout -1 | grep -c 'round-timeout')" 1
check "a LoRA job with a round quorum is refused" \
	"$(sub --round-quorum 0.75 --lora-rank 2 | grep -c 'not supported for LoRA')" 1
check "nothing was stored" "$("$S" job list "$P" | grep -c 'job')" 0
submit --shards 4 --rounds 2 --replicas 1 --quorum 1 --no-adaptive --deadline 3600 \
	--round-quorum 0.75 --name rq
check "job show says how rounds close" \
	"$("$S" job show "$P" 1 | grep -c '^a round closes with 0.75 of its work units done')" 1
start_server http,transitioner,validator,assimilator
t0=$(date +%s)
check "the straggler takes one WU" "$(ask slow 1)" 1
lost=$(xp 'string(/scheduler_reply/result/name)')
check "h1 takes the other three" "$(ask h1 4)" 3
compute h1 honest; deliver h1
wait_for 60 "round 1 closes with 3 of its 4 WUs" round_done 1 1
check "the log says one WU was abandoned" \
	"$(grep -c 'job 1 round 1 closed with 3 of 4 work units; 1 abandoned' "$T/server.log")" 1
set --
for r in $(sort -k3n "$T/got.h1" | awk '{print $1}'); do	# in shard order
	set -- "$@" "$T/work/$r.weights"
done
"$CRAFT" mean "$T/base.bin" "$T/mean3.bin" "$@" || die "craft mean"
check "h1 gets round-2 work" "$(ask h1 4)" 4
check "round 2 starts from the mean of the three" \
	"$(xp "string(/scheduler_reply/workunit[1]/file[@role='model']/sha256)")" \
	"$(sha256sum <"$T/mean3.bin" | cut -d' ' -f1)"
check "the job page says how rounds close" \
	"$(curl -s "$URL/job/1" | grep -c 'Rounds close</div><div class="v">with 75% of their work units done<')" 1
compute h1 honest; deliver h1
# the straggler comes back, still holding its round-1 task
vrpc slow 0 "<other_results><name>$lost</name></other_results>"
check "the straggler is told to abort its round-1 task" \
	"$(xp "count(/scheduler_reply/abort[text()='$lost'])")" 1
wait_for 60 "the job finishes" round_done 1 2
secs=$(( $(date +%s) - t0 ))
echo "the job took $secs s; the straggler's deadline was 3600 s"
check "... well before the straggler's deadline" "$([ "$secs" -lt 600 ] && echo yes)" yes
check "job show lists round 1 with 3 of 4 WUs" \
	"$("$S" job show "$P" 1 | grep -Ec '^ +1 +done +3/4')" 1
exit $((fails > 0))
