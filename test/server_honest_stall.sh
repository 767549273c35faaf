#!/bin/sh
# test/server_honest_stall.sh - honest work is never what stalls a job
# without the job saying so:
#  - a job continuing an already fine-tuned model (lr 0.01): an honest
#    update costs ~0.25 nats on the probe, more than the absolute
#    --loss-margin 0.05. With daemons.loss_margin_rel = 0 (absolute only,
#    the old rule) both bit-identical replicas are refused for probe_loss,
#    and the job's page and `job show` say why (replicas agree bit for bit
#    but fail the check; the probe losses), as does the operator's log;
#  - with the default relative margin (0.2 x the job's starting probe
#    loss) the same honest work passes: the round completes (with the
#    round check off: its average's eval loss rises more than 0.05).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-stall
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

make_data
# a fine-tuned model: 300 honest steps from the base, as a checkpoint
"$CRAFT" honest "$T/base.bin" "$T/train.bin" "$T/ft.res" steps=300 batch=4 seq=16 lr=0.003 \
	beta1=0.9 beta2=0.999 eps=1e-8 weight_decay=0 grad_clip=1 || die "fine-tune"
"$CRAFT" mean "$T/base.bin" "$T/ft.bin" "$T/ft.res.weights" || die "fine-tuned checkpoint"
"$S" init "$P" --listen 127.0.0.1:0 --name "honest stall" >/dev/null || die "init"
sed -i 's/^\[daemons\]$/[daemons]\nloss_margin_rel = 0/' "$P/ctune-server.conf"
mkuser h1 h2
ftsubmit() {
	"$S" job submit "$P" --allow-random-base --model "$T/ft.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
		--shards 1 --rounds 1 --steps 5 --batch 2 --seq 16 --lr 0.01 --replicas 2 \
		--quorum 2 --no-adaptive --name "$1" >/dev/null || die "job submit"
}
ftsubmit absolute
start_server http,transitioner,validator,assimilator

# ---- absolute margin only: refused, and the job says why ---------------------
check "h1 gets the replica" "$(ask h1 1)" 1
check "h2 gets the other" "$(ask h2 1)" 1
work h1 honest
work h2 honest
noticed() { "$S" job show "$P" 1 2>/dev/null | grep -q 'agree bit for bit'; }
wait_for 60 "job show says the replicas agree bit for bit but are refused" noticed
"$S" job show "$P" 1 >"$T/show1.txt" 2>&1
check "... naming the check and the losses" \
	"$(grep -c 'refused (validator: probe_loss [0-9.]* > [0-9.]* + 0.0500)' "$T/show1.txt")" 1
curl -s -o "$T/job1.html" "$URL/job/1"
check "the job's page says so too" "$(grep -c 'agree bit for bit' "$T/job1.html")" 1
check "the operator's log has the warning" \
	"$(grep -c 'WARN.*job 1: work unit j1-r1-s0: 2 replicas' "$T/server.log")" 1
check "both honest replicas were refused for probe_loss" \
	"$(grep -c 'rejected: probe_loss' "$T/server.log")" 2

# ---- relative margin (default): the same honest work passes ------------------
# (the validator's probe; the round check, which holds an average to the
# job's absolute --loss-margin, would refuse this round: its eval loss
# rises by a few tenths of a nat, far more than 0.05 - test/server_round_fail.sh)
stop_server
sed -i '/^loss_margin_rel = 0$/d; s/^\[daemons\]$/[daemons]\nround_check = 0/' "$P/ctune-server.conf"
ftsubmit relative
start_server http,transitioner,validator,assimilator
check "h1 gets job 2's replica" "$(ask h1 1)" 1
check "h2 gets the other" "$(ask h2 1)" 1
work h1 honest
work h2 honest
wait_for 60 "job 2's round completes with the relative margin" round_done 2 1
"$S" job show "$P" 2 >"$T/show2.txt" 2>&1
check "both of job 2's replicas are valid" \
	"$(awk '$1 == "over" && $2 == "success" && $3 == "valid" {print $4}' "$T/show2.txt")" 2
check "job 2 has no notice" "$(grep -c '^error:' "$T/show2.txt")" 0
exit $((fails > 0))
