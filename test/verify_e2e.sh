#!/bin/bash
# Round receipts and `ctune verify` with real processes: a ctune-server on
# its embedded database (a project whose key is made at its first start,
# as for one made before receipts) and two `ctune run` daemons finish two jobs of 2
# rounds x 2 shards with quorum 2: a LoRA job and a full-weight job with a
# Nesterov outer step. Then:
#  - every round has a receipt, signed with the key `project show` and the
#    home page give (OpenSSL's own Ed25519 agrees with the signature), in
#    the JSON API, chained round to round;
#  - `ctune verify --all` (every WU recomputed, then each round's
#    aggregate: the LoRA merge; the mean and the outer step with its
#    momentum buffer) passes for both jobs, and `--sample 1 --round 2`
#    too, without an account;
#  - a changed byte in a receipt fails its signature, named by round;
#  - a changed shard file and a changed round model in the store are named
#    by what they are (the download is checked against the receipt's hash);
#  - a receipt that states a wrong aggregate, signed with the project's
#    key (openssl pkeyutl), passes the signature and the chain and fails
#    the recomputed aggregate, naming the round and both hashes;
#  - every WU's entry states its canonical hash chain (a link every 4
#    steps, [daemons] chain_every), which `ctune verify` recomputes and
#    compares link by link; a changed chain file in the store is named,
#    and a receipt signed with the project's key that states another
#    chain fails naming the first step where the chains differ;
#  - a pinned --key of another project fails at once.
. "$(dirname "$0")/client_lib.sh"
lora_e2e_tools
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }

server_project 1
# a project made before receipts has no key: its first start makes one
rm "$P/signing.key"
sed -i 's/^file_grace = .*/&\nchain_every = 4/' "$P/ctune-server.conf"
corpus_data 2 4 64
common="--allow-random-base --model $T/base.bin --train $T/train.bin --eval $T/eval.bin
	--shards 2 --rounds 2 --steps 12 --batch 4 --seq 16 --lr 0.01 --quorum 2"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" $common --lora-rank $RANK --lora-alpha $ALPHA --name v-lora \
	>"$T/submit1.log" 2>&1 || fail "job submit (LoRA)"
grep -q "made its receipt signing key" "$T/submit1.log" || fail "no key made at the first start"
[ "$(stat -c %a "$P/signing.key")" = 600 ] || fail "signing.key is not 0600"
# shellcheck disable=SC2086
"$SERVER" job submit "$P" $common --outer nesterov --outer-lr 0.7 --outer-momentum 0.9 \
	--name v-full >"$T/submit2.log" 2>&1 || fail "job submit (full weights)"

server_and_clients 2 --always --device cpu --backoff-base 0.5 --checkpoint-seconds 0.3
jobs_done() {
	"$SERVER" job show "$P" 1 2>/dev/null | head -1 | grep -q ': done' &&
		"$SERVER" job show "$P" 2 2>/dev/null | head -1 | grep -q ': done'
}
wait_for 600 "both jobs done" jobs_done
wait_for 60 "the last receipt" curl -sf "$URL/job/2/round/2/receipt"
stop "$C1"; stop "$C2"

# the key: project show, home page, receipts, and OpenSSL's verdict
KEY=$("$SERVER" project show "$P" | sed -n 's/^receipt key \([0-9a-f]*\) .*/\1/p')
[ ${#KEY} = 64 ] || fail "project show gives no key: $("$SERVER" project show "$P")"
curl -sf "$URL/" | grep -q "$KEY" || fail "the home page does not show the key"
for j in 1 2; do
	for r in 1 2; do
		curl -sf -o "$T/rc$j-$r.txt" "$URL/job/$j/round/$r/receipt" || fail "receipt $j/$r"
		grep -qx "key $KEY" "$T/rc$j-$r.txt" || fail "receipt $j/$r: another key"
	done
	grep -qx "prev $(sha256sum "$T/rc$j-1.txt" | cut -d' ' -f1)" "$T/rc$j-2.txt" ||
		fail "job $j: round 2's receipt does not name round 1's"
done
curl -sf "$URL/api/v1/job/1/receipts" >"$T/api.json" || fail "API receipts"
grep -q "\"sha256\":\"$(sha256sum "$T/rc1-2.txt" | cut -d' ' -f1)\"" "$T/api.json" ||
	fail "the API does not list round 2's receipt: $(cat "$T/api.json")"
# Ed25519 by OpenSSL's command line: the signed bytes are all lines but
# the last, the signature its hex
printf '302a300506032b6570032100%s' "$KEY" | xxd -r -p >"$T/pub.der"
openssl pkey -pubin -inform DER -in "$T/pub.der" -out "$T/pub.pem" || fail "public key"
head -n -1 "$T/rc1-1.txt" >"$T/body.txt"
tail -n 1 "$T/rc1-1.txt" | sed 's/^signature //' | xxd -r -p >"$T/sig.bin"
openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/body.txt" \
	-sigfile "$T/sig.bin" >/dev/null || fail "OpenSSL does not accept the signature"

# honest jobs verify, with no account (a state directory of its own: the
# temporary download cache goes there and is removed)
V() { "$CTUNE" --dir "$T/verifier" verify "$URL" "$@"; }
V 1 --all --key "$KEY" >"$T/v1.log" 2>&1 || fail "verify --all of the LoRA job: $(cat "$T/v1.log")"
[ "$(grep -c 'matches the receipt' "$T/v1.log")" = 6 ] ||
	fail "LoRA job: not 4 WUs + 2 aggregates matched: $(cat "$T/v1.log")"
[ "$(grep -c 'hash chain of 3 links (a link every 4 steps) equal to the receipt' "$T/v1.log")" = 4 ] ||
	fail "LoRA job: not 4 chains compared: $(cat "$T/v1.log")"
V 2 --all >"$T/v2.log" 2>&1 || fail "verify --all of the full-weight job: $(cat "$T/v2.log")"
grep -q "aggregate of 2 results (mean, outer nesterov): model .* matches" "$T/v2.log" ||
	fail "full-weight job: the outer step was not checked: $(cat "$T/v2.log")"
V 2 --round 2 --sample 1 >"$T/v3.log" 2>&1 || fail "verify --sample 1: $(cat "$T/v3.log")"
[ "$(grep -c 'matches the receipt' "$T/v3.log")" = 1 ] || fail "sample: $(cat "$T/v3.log")"
[ -z "$(ls "$T/verifier")" ] || fail "verify left files: $(ls -R "$T/verifier")"

# store_file SHA: the path of a store object
store_file() { echo "$P/download/${1:0:2}/$1"; }
# expect_fail WHAT PATTERN ARGS...: verify fails (status 1) saying PATTERN
expect_fail() {
	local what=$1 pat=$2
	shift 2
	V "$@" >"$T/bad.log" 2>&1 && fail "$what: verify passed"
	grep -q "$pat" "$T/bad.log" || fail "$what: not named: $(cat "$T/bad.log")"
}

# forge J ROUND SED: job J's receipt of ROUND in the store replaced by its
# text edited by SED and signed with the project's key (openssl
# pkeyutl); the original saved in $T/saved, its store path in $R
forge() {
	R=$(store_file "$(sha256sum "$T/rc$1-$2.txt" | cut -d' ' -f1)")
	cp "$R" "$T/saved"
	sed -e '$d' -e "$3" "$T/rc$1-$2.txt" >"$T/forged.txt"
	openssl pkeyutl -sign -inkey "$P/signing.key" -rawin -in "$T/forged.txt" \
		-out "$T/fsig.bin" || fail "openssl sign"
	echo "signature $(xxd -p "$T/fsig.bin" | tr -d '\n')" >>"$T/forged.txt"
	cp "$T/forged.txt" "$R"
}

# a changed byte in round 1's receipt of job 1
R=$(store_file "$(sha256sum "$T/rc1-1.txt" | cut -d' ' -f1)")
cp "$R" "$T/saved"
awk '$1 == "out" { $2 = (substr($2, 1, 1) == "a" ? "b" : "a") substr($2, 2) } { print }' \
	"$T/saved" >"$R"
expect_fail "tampered receipt" "receipt of round 1: bad signature" 1 --all
cp "$T/saved" "$R"

# a changed shard file (job 1, round 2, shard 1) and round 2's model
SH=$(awk '$1 == "wu" && $2 == 1 { print $4 }' "$T/rc1-2.txt")
F=$(store_file "$SH")
cp "$F" "$T/saved"
printf 'x' | dd of="$F" bs=1 seek=1100 conv=notrunc 2>/dev/null
expect_fail "tampered shard" "round 2 shard 1's tokens ${SH:0:16}: the server sent other bytes" \
	1 --round 2 --all
cp "$T/saved" "$F"
M=$(store_file "$(awk '$1 == "model" { print $2 }' "$T/rc2-2.txt")")
cp "$M" "$T/saved"
printf 'x' | dd of="$M" bs=1 seek=2000 conv=notrunc 2>/dev/null
expect_fail "tampered model" "round 2's model .*: the server sent other bytes" 2 --round 2 --sample 1
cp "$T/saved" "$M"

# a wrong aggregate, signed with the project's key: job 2 round 2 says
# its model is round 1's
OUT1=$(awk '$1 == "out" { print $2 " " $3 }' "$T/rc2-1.txt")
forge 2 2 "s/^out .*/out $OUT1/"
expect_fail "wrong aggregate" \
	"round 2: the aggregate of the recomputed results is model [0-9a-f]*, the receipt says ${OUT1%% *}" \
	2 --round 2 --all --key "$KEY"
cp "$T/saved" "$R"

# the chains: each WU's entry names one (conforming replicas, the same
# chain twice); a changed chain file is refused by its hash
for f in "$T"/rc*.txt; do
	head -1 "$f" | grep -qx "ctune-receipt 3" || fail "$f: not a version 3 receipt"
	grep -qx "base f32" "$f" && grep -qx "lora_init none" "$f" ||
		fail "$f: not a float32 base without carried adapters"
	[ "$(grep -c '^chain 4 [0-9a-f]\{64\}$' "$f")" = 2 ] || fail "$f: not 2 chains: $(cat "$f")"
done
CH=$(awk '$1 == "chain" { print $3; exit }' "$T/rc1-1.txt")
F=$(store_file "$CH")
[ "$(wc -c <"$F")" = 192 ] || fail "the chain file is not 3 links"
cp "$F" "$T/saved"
printf '0' | dd of="$F" bs=1 seek=70 conv=notrunc 2>/dev/null
cmp -s "$F" "$T/saved" && printf '1' | dd of="$F" bs=1 seek=70 conv=notrunc 2>/dev/null
expect_fail "tampered chain" "round 1 shard 0's hash chain ${CH:0:16}: the server sent other bytes" \
	1 --round 1 --all
cp "$T/saved" "$F"
# a receipt signed with the project's key that states another chain for
# shard 0 of job 1's round 1: its second link (after step 8) changed
head -c 64 "$T/saved" >"$T/other.chain"
printf '%064d' 0 >>"$T/other.chain"
tail -c 64 "$T/saved" >>"$T/other.chain"
OC=$(sha256sum "$T/other.chain" | cut -d' ' -f1)
mkdir -p "$(dirname "$(store_file "$OC")")"
cp "$T/other.chain" "$(store_file "$OC")"
forge 1 1 "0,/^chain 4 $CH\$/s//chain 4 $OC/"
grep -q "^chain 4 $OC\$" "$T/forged.txt" || fail "the forged receipt does not name the chain"
expect_fail "another chain" \
	"round 1 shard 0: the recomputed hash chain parts from the receipt's at link 1: they agree up to step 4, differ by step 8" \
	1 --round 1 --all --key "$KEY"
grep -q "hash chain agrees with the receipt's up to step 4 and differs at link 1 (after step 8)" \
	"$T/bad.log" || fail "the differing link is not printed: $(cat "$T/bad.log")"
cp "$T/saved" "$R"

# another project's key
expect_fail "another key" "signed by another key" 1 --sample 0 --key "$(printf '%064d' 0)"

stop "$SPID"
echo "PASS: 2 jobs' receipts verified (--all: 8 WUs and their chains, 4 aggregates); a" \
	"tampered receipt, shard, model, chain, and a signed wrong aggregate and chain each" \
	"caught and named"
