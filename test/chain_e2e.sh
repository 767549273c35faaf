#!/bin/bash
# Every result carries its WU's hash chain, with real processes: a
# ctune-server on its embedded database and two `ctune run` daemons finish
# a LoRA job and a full-weight job (2 shards, quorum 2, 24 steps, a link
# every 8 steps by [daemons] chain_every; one client, slowed down, is
# stopped after its first checkpoint and started again, so it resumes a
# WU from its checkpoint and must carry the links before it across):
#  - the scheduler sends the interval with every WU (chain_every);
#  - the validator finds every one of the 8 results' chains well formed,
#    3 links, the last its result's hash (a resumed WU's chain too), and
#    refuses none as false_chain;
#  - both jobs are done with all 8 results valid, without a third replica.
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools

server_project 1
sed -i 's/^file_grace = .*/&\nchain_every = 8/' "$P/ctune-server.conf"
corpus_data 2 4 64
common="--allow-random-base --model $T/base.bin --train $T/train.bin --eval $T/eval.bin
	--shards 2 --rounds 1 --steps 24 --batch 4 --seq 16 --lr 0.003 --quorum 2"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" $common --lora-rank $RANK --lora-alpha $ALPHA --name c-lora \
	>"$T/submit1.log" 2>&1 || fail "job submit (LoRA)"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" $common --name c-full >"$T/submit2.log" 2>&1 ||
	fail "job submit (full weights)"

opts="--always --device cpu --backoff-base 0.5 --checkpoint-seconds 0.2"
# shellcheck disable=SC2086
server_and_clients 1 $opts --max-cpu-percent 1
# stop the slow client after its first checkpoint and start it again
wait_for 120 "c1 checkpoints a WU" state_has c1 "<checkpoint>"
stop "$C1"
key=$("$SERVER" user create "$P" --name user2 --email user2@example.org \
	--password password-2 2>/dev/null | sed -n 's/.*account key //p')
"$CTUNE" --dir "$T/c2" attach "$URL" --key "$key" >/dev/null || fail "attach c2"
# shellcheck disable=SC2086
start_client c2 $opts
C2=$CPID
# shellcheck disable=SC2086
start_client c1 $opts
C1=$CPID
jobs_done() {
	"$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done' &&
		"$SERVER" job show "$P" 2 2>/dev/null | head -1 | grep -q ': done'
}
wait_for 300 "both jobs done" jobs_done
stop "$C1"; stop "$C2"

n=$(grep -c 'hash chain of 3 links ends in its result.s hash' "$T/server.log")
[ "$n" = 8 ] || fail "$n of 8 results had a checked chain: $(grep validator "$T/server.log")"
grep -q 'false_chain' "$T/server.log" && fail "a chain was refused: $(grep false_chain "$T/server.log")"
grep -q 'resuming' "$T/c1.log" || fail "c1 resumed no WU: $(grep -E 'start|suspend|checkpoint' "$T/c1.log")"
for j in 1 2; do
	"$SERVER" job show "$P" "$j" >"$T/show$j.txt" 2>&1
	v=$(awk '$1 == "over" && $2 == "success" && $3 == "valid" {print $4}' "$T/show$j.txt")
	[ "$v" = 4 ] || fail "job $j: $v valid results, want 4: $(cat "$T/show$j.txt")"
	o=$(awk '$1 == "over" {n += $4} END {print n + 0}' "$T/show$j.txt")
	[ "$o" = 4 ] || fail "job $j: $o results, want 4 (no third replica)"
done
stop "$SPID"
echo "PASS: 8 results, each with a 3-link hash chain ending in its hash, a resumed WU's too"
