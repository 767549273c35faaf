#!/bin/bash
# A compact-base LoRA job of 2 rounds x 2 shards through the whole system
# with real processes (doc/workunit.md §13, "Jobs on a compact base"):
# `job submit --base-format nf4 --rounds 2` (CT_BASE_JOB_FMT overrides:
# bf16, q8), a ctune-server on its embedded database and two `ctune run`
# daemons of two accounts, quorum 2.
#  - round 1's aggregate, the mean of its two canonical adapter arrays, is
#    a CTLORA1 adapter file in the store under its SHA-256, and each client
#    downloaded it once into its cache by that hash: round 2's WUs name it;
#  - both replicas of every WU uploaded the same bytes, all 8 results are
#    valid and the job is done;
#  - each round-2 upload is `ctune train --lora-init` of that file on the
#    compact base, byte for byte (and not the WU trained from its seed);
#  - the job's model (`job export`) is the widened base merged with the
#    mean of round 2's adapters, each decoded against round 1's mean
#    (test/lora_tool), and `ctune eval` of it prints the eval loss the
#    server recorded for round 2; round 2's base loss is round 1's loss;
#  - `job export --adapter` writes the PEFT directory of the final model;
#  - `ctune verify --all` recomputes every WU of both rounds, round 2's from
#    the adapter file its receipt names (base format and lora_init stated),
#    and both aggregates as means of adapters; a receipt signed with the
#    project's key naming other adapters for round 2 fails.
# The clients compute on PoCL when it is there (CT_E2E_DEVICE overrides).
. "$(dirname "$0")/client_lib.sh"
base_job_setup
# its rounds carry adapters: an outer step on a float32 model is refused
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 2 --steps 20 --batch 4 --seq 16 --lr 0.01 \
	--lora-rank $RANK --base-format "$FMT" --outer sgd >"$T/refused.log" 2>&1 &&
	fail "a compact base with --outer sgd was accepted"
grep -q 'takes --outer mean' "$T/refused.log" || fail "refusal: $(cat "$T/refused.log")"
"$SERVER" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 2 --steps 20 --batch 4 --seq 16 --lr 0.01 \
	--quorum 2 --lora-rank $RANK --lora-alpha $ALPHA --base-format "$FMT" \
	--name base-rounds >"$T/submit.log" 2>&1 || fail "job submit: $(cat "$T/submit.log")"
compact_base_file

e2e_device
e2e_job_run "$DEV" 900 "the 2-round compact-base job completes" 8

# round 1's aggregate, recomputed from its uploads: the adapter file in
# the store and in both clients' caches, under its hash
"$TOOL" merge --base "$BASE_C" --rank $RANK --alpha $ALPHA --mean-out "$T/mean1.ctl" \
	--out "$T/r1.bin" "$P/upload/j1-r1-s0-0" "$P/upload/j1-r1-s1-0" || fail "round 1's mean"
M1=$(sha256sum "$T/mean1.ctl" | cut -d' ' -f1)
cmp -s "$P/download/${M1:0:2}/$M1" "$T/mean1.ctl" ||
	fail "round 1's mean adapters are not in the store: $(cd "$P/download" && ls -R)"
for c in c1 c2; do
	cmp -s "$T/$c/cache/$M1" "$T/mean1.ctl" || fail "$c did not cache round 1's adapters"
done
# 32 bytes of header and 4 a weight of rank-r adapters: a round's download
[ "$(stat -c %s "$T/mean1.ctl")" -lt $(($(stat -c %s "$T/base.bin") / 10)) ] ||
	fail "the adapter file is not small beside the float32 model"

# every round-2 upload is the local ctune train of its shard from that file
for up in "$P/upload"/j1-r2-s0-0 "$P/upload"/j1-r2-s1-0; do
	seed=$("$TOOL" info "$up" | sed -n 's/.* seed \([0-9]*\) .*/\1/p')
	[ -n "$seed" ] || fail "no seed in $up"
	found=
	for d in "$T/c1/cache"/*; do
		case $(basename "$d") in "$(basename "$BASE_C")" | "$M1") continue ;; esac
		"$CTUNE" train --model "$BASE_C" --data "$d" --steps 20 --batch 4 --seq 16 \
			--lr 0.01 --grad-clip 1 --lora-rank $RANK --lora-alpha $ALPHA \
			--lora-seed "$seed" --lora-init "$T/mean1.ctl" --out "$T/local.bin" \
			>"$T/local.log" 2>&1 || continue
		cmp -s "$T/local.bin" "$up" && found=$d
	done
	[ -n "$found" ] || fail "$up is not ctune train --lora-init of a shard: $(cat "$T/local.log")"
	# from the seed's adapters instead, the WU gives other bytes
	"$CTUNE" train --model "$BASE_C" --data "$found" --steps 20 --batch 4 --seq 16 \
		--lr 0.01 --grad-clip 1 --lora-rank $RANK --lora-alpha $ALPHA --lora-seed "$seed" \
		--out "$T/seed.bin" >/dev/null 2>&1 || fail "ctune train from the seed"
	cmp -s <(tail -c +161 "$T/seed.bin") <(tail -c +161 "$up") &&
		fail "$up did not start from round 1's adapters"
done

# the job's model: the widened base + the mean of round 2's adapters
"$SERVER" job export "$P" 1 --out "$T/final.bin" >/dev/null || fail "job export"
"$TOOL" merge --base "$BASE_C" --rank $RANK --alpha $ALPHA --init "$T/mean1.ctl" \
	--out "$T/want.bin" "$P/upload/j1-r2-s0-0" "$P/upload/j1-r2-s1-0" ||
	fail "recompute round 2's merge"
cmp -s "$T/final.bin" "$T/want.bin" || fail "the job's model is not round 2's mean merged"
curl -sf "$URL/api/v1/job/1" >"$T/job.json" || fail "GET /api/v1/job/1"
read -r srv1 srv srv0 ntok < <(python3 -c 'import json, sys
r = {x["round"]: x for x in json.load(open(sys.argv[1]))["rounds"]}
print(repr(r[1]["eval_loss"]), repr(r[2]["eval_loss"]), repr(r[2]["base_eval_loss"]),
      r[2]["eval_ntokens"])' "$T/job.json")
[ -n "$ntok" ] && [ "$ntok" -gt 0 ] || fail "job JSON: $(cat "$T/job.json")"
[ "$srv0" = "$srv1" ] || fail "round 2's base loss $srv0 is not round 1's loss $srv1"
eval_is "$T/want.bin" "$ntok" "$srv" "round 2's model"
eval_is "$T/r1.bin" "$ntok" "$srv1" "round 1's model"

"$SERVER" job export "$P" 1 --adapter "$T/peft" >"$T/peft.log" 2>&1 ||
	fail "job export --adapter: $(cat "$T/peft.log")"
[ -s "$T/peft/adapter_config.json" ] && [ -s "$T/peft/adapter_model.safetensors" ] ||
	fail "job export --adapter wrote $(ls "$T/peft")"
grep -q "\"r\": $RANK\b" "$T/peft/adapter_config.json" ||
	fail "the adapter is not of rank $RANK: $(cat "$T/peft/adapter_config.json")"

# ---- the receipts: ctune verify --all recomputes both rounds -------------------
wait_for 60 "round 2's receipt" curl -sf -o "$T/rc2.txt" "$URL/job/1/round/2/receipt"
grep -qx "base $FMT" "$T/rc2.txt" || fail "round 2's receipt states no base $FMT: $(cat "$T/rc2.txt")"
grep -qx "lora_init $M1 $(stat -c %s "$T/mean1.ctl")" "$T/rc2.txt" ||
	fail "round 2's receipt does not name round 1's adapters: $(cat "$T/rc2.txt")"
V() { "$CTUNE" --dir "$T/verifier" verify "$URL" "$@"; }
V 1 --all >"$T/v.log" 2>&1 || fail "verify --all: $(cat "$T/v.log")"
[ "$(grep -c 'shard [01]: .* matches the receipt' "$T/v.log")" = 4 ] ||
	fail "verify did not match the 4 WUs: $(cat "$T/v.log")"
[ "$(grep -c 'aggregate of 2 results (LoRA mean adapters): model .* matches' "$T/v.log")" = 2 ] ||
	fail "verify did not match both aggregates: $(cat "$T/v.log")"
grep -q "round 2: starts from round 1's recomputed mean adapters $M1" "$T/v.log" ||
	fail "verify did not tie round 2's adapters to round 1's mean: $(cat "$T/v.log")"
# round 2's receipt, signed with the project's key, naming other adapters
# (round 1's mean with one weight changed, in the store): verify fails
if command -v openssl >/dev/null; then
	store_file() { echo "$P/download/$(printf '%s' "$1" | cut -c1-2)/$1"; }
	cp "$T/mean1.ctl" "$T/other.ctl"
	printf '\x00\x00\x80\x3f' | dd of="$T/other.ctl" bs=1 seek=$(($(stat -c %s "$T/other.ctl") - 4)) \
		conv=notrunc status=none
	O=$(sha256sum "$T/other.ctl" | cut -d' ' -f1)
	mkdir -p "$(dirname "$(store_file "$O")")"
	cp "$T/other.ctl" "$(store_file "$O")"
	R=$(store_file "$(sha256sum "$T/rc2.txt" | cut -d' ' -f1)")
	sed "s/^lora_init $M1 /lora_init $O /" "$T/rc2.txt" | sed '$d' >"$T/forged.txt"
	openssl pkeyutl -sign -inkey "$P/signing.key" -rawin -in "$T/forged.txt" \
		-out "$T/fsig.bin" || fail "openssl sign"
	echo "signature $(xxd -p "$T/fsig.bin" | tr -d '\n')" >>"$T/forged.txt"
	cp "$R" "$T/saved"
	cp "$T/forged.txt" "$R"
	V 1 --all >"$T/bad.log" 2>&1
	[ $? = 1 ] || fail "verify accepted round 2 from other adapters: $(cat "$T/bad.log")"
	grep -q "round 2 starts from adapters $O, but round 1's recomputed mean is $M1" "$T/bad.log" ||
		fail "verify did not name the adapters: $(cat "$T/bad.log")"
	V 1 --round 2 --all >"$T/bad2.log" 2>&1
	[ $? = 1 ] || fail "verify --round 2 accepted other adapters: $(cat "$T/bad2.log")"
	grep -q "round 2 shard [01]: the recomputed" "$T/bad2.log" ||
		fail "verify --round 2 did not name the WU: $(cat "$T/bad2.log")"
	cp "$T/saved" "$R"
else
	echo "# no openssl: the forged receipt is not tried"
fi

stop "$C1"; stop "$C2"; stop "$SPID"
echo "PASS: $FMT-base LoRA job, 2 rounds x 2 shards on $DEV: round 2 from round 1's" \
	"adapters $M1 = local ctune train --lora-init; eval loss $srv1 -> $srv recomputed"
