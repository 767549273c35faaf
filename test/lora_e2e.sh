#!/bin/bash
# A LoRA job through the whole system with real processes: a ctune-server
# on its embedded database and two `ctune run` daemons of two accounts
# complete a job of 2 rounds x 2 shards, rank 4 adapters on all four
# targets, quorum 2 (both replicas of every WU), validated by hash.
#  - the scheduler sends the WUs' LoRA parameters; the clients train the
#    adapters and upload only them: every upload is a LoRA result file
#    (kind 1, rank 4) and under 1/10 of the size of a full-weight WU's upload
#    (`ctune train` of all weights, same steps, encoded the same way);
#  - both replicas of every WU uploaded the same bytes, all 8 results are
#    valid, the job is done and its eval loss fell;
#  - each round's model, as `job export --round R` writes it, is bit for
#    bit the previous model merged with that round's two adapter files
#    (recomputed by test/lora_tool from the uploads), and `ctune model
#    merge` of one adapter file agrees with it;
#  - `job export --adapter` writes a PEFT adapter in GPT-2's names whose
#    product added to the base is the final model (test/hf_check.py).
# The clients compute on PoCL when it is there (CT_E2E_DEVICE overrides).
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools

server_project 1
# the uploads are read after the job is done: keep them however long that
# takes (the file deleter would remove them as soon as the round closed)
sed -i 's/^file_grace = .*/&\nupload_grace = 3600/' "$P/ctune-server.conf"
corpus_data 2 4 128
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 2 --rounds 2 --steps 30 --batch 4 --seq 16 --lr 0.01 --quorum 2 \
	--lora-rank $RANK --lora-alpha $ALPHA --lora-targets qkv,proj,fc,fcproj \
	--name lora-e2e >"$T/submit.log" 2>&1 || fail "job submit"
"$SERVER" job show "$P" 1 >"$T/show0.txt" 2>&1
grep -q "LoRA: rank $RANK, alpha $ALPHA, targets qkv,proj,fc,fcproj" "$T/show0.txt" ||
	fail "job show does not say LoRA: $(cat "$T/show0.txt")"

# PoCL when there is an OpenCL device (CT_E2E_DEVICE overrides); the
# clients run their conformance self-test, so results go out as conforming
DEV=${CT_E2E_DEVICE:-cpu}
if [ -z "${CT_E2E_DEVICE:-}" ] && "$CTUNE" devices --no-selftest 2>/dev/null | grep -q 'opencl:0'; then
	DEV=opencl:0
fi
lora_e2e_run "$DEV" 600 "the LoRA job completes"

# uploads: 8 LoRA adapter files, far below a full delta
# a full-weight WU's upload of the same shape: same steps and data, all weights
"$CTUNE" train --model "$T/base.bin" --data "$T/train.bin" --steps 30 --batch 4 --seq 16 \
	--lr 0.01 --grad-clip 1 --out "$T/trained.bin" >"$T/train.log" 2>&1 || fail "ctune train"
"$TOOL" delta --base "$T/base.bin" --out "$T/full.ctd" "$T/trained.bin" ||
	fail "full-weight delta for comparison"
FULL=$(stat -c %s "$T/full.ctd")
MAX=0
for f in "$P/upload"/*; do
	"$TOOL" info "$f" >"$T/info.txt" || fail "$f is not a result file"
	grep -q "^kind 1 rank $RANK alpha $ALPHA targets 0xf " "$T/info.txt" ||
		fail "$f is not a rank-$RANK adapter file: $(cat "$T/info.txt")"
	s=$(stat -c %s "$f")
	[ "$s" -gt "$MAX" ] && MAX=$s
done
[ $((MAX * 10)) -lt "$FULL" ] || fail "largest upload $MAX bytes, not far below a full delta ($FULL)"

# each round's model = previous model merged with its two adapter files
PREV="$T/base.bin"
for r in 1 2; do
	"$SERVER" job export "$P" 1 --round $r --out "$T/round$r.bin" >/dev/null ||
		fail "job export --round $r"
	"$TOOL" merge --base "$PREV" --rank $RANK --alpha $ALPHA --out "$T/want$r.bin" \
		"$P/upload/j1-r$r-s0-0" "$P/upload/j1-r$r-s1-0" || fail "recompute round $r"
	cmp -s "$T/round$r.bin" "$T/want$r.bin" || fail "round $r's model is not the exact merge"
	PREV="$T/round$r.bin"
done
cmp -s "$T/round1.bin" "$T/base.bin" && fail "round 1 did not change the model"
# one shard's adapters alone: the client's `ctune model merge` agrees
"$CTUNE" model merge "$T/base.bin" "$P/upload/j1-r1-s0-0" --out "$T/one.bin" >/dev/null ||
	fail "ctune model merge"
"$TOOL" merge --base "$T/base.bin" --rank $RANK --alpha $ALPHA --out "$T/one-want.bin" \
	"$P/upload/j1-r1-s0-0" || fail "recompute one shard"
cmp -s "$T/one.bin" "$T/one-want.bin" || fail "ctune model merge differs from the exact merge"
"$SERVER" job export "$P" 1 --out "$T/final.bin" >/dev/null || fail "job export (final)"
cmp -s "$T/final.bin" "$T/round2.bin" || fail "final model is not round 2's"
# the PEFT adapter in GPT-2's names (Conv1D: fan_in_fan_out): base + B A is
# the merged model (test/hf_check.py, reading the files by hand)
if command -v python3 >/dev/null; then
	"$CTUNE" model export "$T/base.bin" --out "$T/base_hf" >/dev/null || fail "model export base"
	"$SERVER" job export "$P" 1 --hf --out "$T/final_hf" >/dev/null || fail "job export --hf"
	"$SERVER" job export "$P" 1 --adapter "$T/adapter" >"$T/adapter.log" 2>&1 ||
		fail "job export --adapter: $(cat "$T/adapter.log")"
	python3 "$top_srcdir/test/hf_check.py" peft "$T/adapter" "$T/base_hf" "$T/final_hf" gpt2 \
		$((RANK * 4)) qkv,proj,fc,fcproj || fail "the GPT-2 PEFT adapter is not the job's model"
	# round 1's adapter against the final model: must fail (the check can)
	"$SERVER" job export "$P" 1 --round 1 --adapter "$T/adapter1" >/dev/null ||
		fail "job export --round 1 --adapter"
	python3 "$top_srcdir/test/hf_check.py" peft "$T/adapter1" "$T/base_hf" "$T/final_hf" gpt2 \
		$((RANK * 2)) qkv,proj,fc,fcproj >"$T/wrong.log" 2>&1 &&
		fail "round 1's adapter passed as the final model's"
	grep -q "off the merged weight" "$T/wrong.log" || fail "wrong adapter: $(cat "$T/wrong.log")"
fi

stop "$C1"; stop "$C2"; stop "$SPID"
echo "PASS: LoRA job done on $DEV, 8 valid results by hash, uploads <= $MAX bytes" \
	"(full delta $FULL), rounds merged exactly"
