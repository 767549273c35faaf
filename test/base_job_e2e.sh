#!/bin/bash
# A LoRA job on a compact frozen base through the whole system with real
# processes (doc/workunit.md §13, "Jobs on a compact base"): `job submit
# --base-format nf4` (CT_BASE_JOB_FMT overrides: bf16, q8) on a float32
# model, a ctune-server on its embedded database and two `ctune run`
# daemons of two accounts, 1 round x 2 shards, quorum 2 (the carry over
# rounds: test/base_job_rounds.sh).
#  - the server converted the base once: the job's model file in the store
#    is a compact base of that format, far smaller than the float32 file,
#    and each client downloaded it once into its cache, by its hash;
#  - both replicas of every WU uploaded the same bytes, all 4 results are
#    valid and the job is done;
#  - each upload is what `ctune train --base-format F` computes locally
#    from the float32 model, byte for byte (the client's compact base
#    equals the local conversion);
#  - the job's model (`job export`) is the widened base merged with the
#    two uploads (test/lora_tool), and `ctune eval` of it on the job's eval
#    tokens prints the eval loss the server recorded for the round.
# The clients compute on PoCL when it is there (CT_E2E_DEVICE overrides).
. "$(dirname "$0")/client_lib.sh"
base_job_setup
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --base-format "$FMT" --shards 2 --rounds 1 --steps 20 --batch 4 --seq 16 \
	--lr 0.01 >"$T/refused.log" 2>&1 && fail "--base-format without --lora-rank was accepted"
grep -q 'needs --lora-rank' "$T/refused.log" || fail "refusal: $(cat "$T/refused.log")"
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 1 --steps 20 --batch 4 --seq 16 --lr 0.01 \
	--quorum 2 --lora-rank $RANK --lora-alpha $ALPHA --base-format "$FMT" \
	--name base-e2e >"$T/submit.log" 2>&1 || fail "job submit: $(cat "$T/submit.log")"
"$SERVER" job show "$P" 1 >"$T/show0.txt" 2>&1
grep -q "^frozen base: $FMT\$" "$T/show0.txt" || fail "job show: $(cat "$T/show0.txt")"

# the store holds the compact base, converted once
compact_base_file
[ "$(basename "$BASE_C")" = "$(sha256sum "$BASE_C" | cut -d' ' -f1)" ] ||
	fail "the compact base is not stored under its hash"
# a compact file as a job's model needs --base-format (its clients would
# read it as float32 otherwise)
"$SERVER" job submit "$P" --allow-random-base --model "$BASE_C" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 1 --steps 20 --batch 4 --seq 16 --lr 0.01 \
	--lora-rank $RANK >"$T/refused.log" 2>&1 && fail "a compact model without --base-format"
grep -q "is a $FMT base: a job on it needs --lora-rank and --base-format $FMT" \
	"$T/refused.log" || fail "refusal: $(cat "$T/refused.log")"
"$CTUNE" train --model "$T/base.bin" --data "$T/eval.bin" --steps 1 --batch 1 --seq 8 \
	--lr 0 --lora-rank 1 --base-format "$FMT" --out "$T/probe.bin" >/dev/null 2>&1 ||
	fail "ctune train --base-format $FMT"
F32=$(stat -c %s "$T/base.bin")
C=$(stat -c %s "$BASE_C")
# the matrices at 2 / 1.125 / 0.5625 bytes a weight; norms, biases and the
# header stay as they were
case $FMT in bf16) PCT=55 ;; q8) PCT=35 ;; *) PCT=25 ;; esac
[ $((C * 100)) -le $((F32 * PCT)) ] || fail "compact base of $C bytes, float32 $F32 (> $PCT%)"

e2e_device
e2e_job_run "$DEV" 600 "the compact-base job completes" 4
# each client holds the compact base in its cache, under its hash
for c in c1 c2; do
	cmp -s "$T/$c/cache/$(basename "$BASE_C")" "$BASE_C" ||
		fail "$c did not cache the compact base"
done

# every upload is the local `ctune train --base-format` of its shard
# (the shards are the token files in a client's cache; the seed is the
# upload's own)
for up in "$P/upload"/j1-r1-s0-0 "$P/upload"/j1-r1-s1-0; do
	seed=$("$TOOL" info "$up" | sed -n 's/.* seed \([0-9]*\) .*/\1/p')
	[ -n "$seed" ] || fail "no seed in $up"
	found=
	for d in "$T/c1/cache"/*; do
		[ "$d" = "$T/c1/cache/$(basename "$BASE_C")" ] && continue
		"$CTUNE" train --model "$T/base.bin" --data "$d" --steps 20 --batch 4 --seq 16 \
			--lr 0.01 --grad-clip 1 --lora-rank $RANK --lora-alpha $ALPHA \
			--lora-seed "$seed" --base-format "$FMT" --out "$T/local.bin" \
			>"$T/local.log" 2>&1 || continue
		# the local file names the float32 model's compact image; the
		# upload the server's file: the adapters (after the header) agree
		cmp -s <(tail -c +161 "$T/local.bin") <(tail -c +161 "$up") && found=$d
	done
	[ -n "$found" ] || fail "$up is not the local ctune train --base-format $FMT of a shard"
	# from the compact file the client downloaded: the very bytes
	"$CTUNE" train --model "$BASE_C" --data "$found" --steps 20 --batch 4 --seq 16 \
		--lr 0.01 --grad-clip 1 --lora-rank $RANK --lora-alpha $ALPHA --lora-seed "$seed" \
		--out "$T/local.bin" >"$T/local.log" 2>&1 || fail "ctune train --model compact"
	cmp -s "$T/local.bin" "$up" || fail "$up differs from ctune train on the compact base"
done

# the job's model: the widened base + the two shards' adapters, exactly
"$SERVER" job export "$P" 1 --out "$T/final.bin" >/dev/null || fail "job export"
"$TOOL" merge --base "$BASE_C" --rank $RANK --alpha $ALPHA --out "$T/want.bin" \
	"$P/upload/j1-r1-s0-0" "$P/upload/j1-r1-s1-0" || fail "recompute the merge"
cmp -s "$T/final.bin" "$T/want.bin" || fail "the job's model is not the widened base's merge"
# the server's eval loss of the round (the API's exact double of the float)
# and its tokens, recomputed by the client's eval of the model
curl -sf "$URL/api/v1/job/1" >"$T/job.json" || fail "GET /api/v1/job/1"
read -r srv srv0 ntok < <(python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["rounds"] if x["round"] == 1][0]
print(repr(r["eval_loss"]), repr(r["base_eval_loss"]), r["eval_ntokens"])' "$T/job.json")
[ -n "$ntok" ] || fail "job JSON: $(cat "$T/job.json")"
[ $((ntok % 64)) = 0 ] && [ "$ntok" -gt 0 ] || fail "eval over $ntok tokens"
eval_is "$T/want.bin" "$ntok" "$srv" "the job's model"
# the compact base itself, evaluated by the client: the server's base loss
eval_is "$BASE_C" "$ntok" "$srv0" "the compact base"

stop "$C1"; stop "$C2"; stop "$SPID"
echo "PASS: $FMT-base LoRA job done on $DEV: compact base $C bytes (float32 $F32)," \
	"4 valid results = local ctune train --base-format, eval loss $srv recomputed"
