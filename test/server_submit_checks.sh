#!/bin/sh
# test/server_submit_checks.sh - `job submit` refuses or warns, in one line
# each, about inputs that parse but cannot give a good model:
#  - --train-text / --eval-text that is gzip, zstd or xz compressed: refused,
#    naming the format and the command that gives the text back;
#  - text with a NUL byte (binary): refused, naming the offset;
#  - a base model whose eval loss is near log V (random weights): refused
#    unless --allow-random-base; the same model pretrained a little on
#    another licence is accepted;
#  - shards smaller than a WU's steps x batch x seq tokens: accepted with a
#    warning giving the passes per WU and the --shards / --steps that keep
#    one pass; a job whose WUs make one pass or less gets no warning.
# Nothing is stored by a refused submit.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
S=$top_builddir/ctune-server
C=$top_builddir/ctune
TEXT=/usr/share/common-licenses/GPL-3
[ -x "$S" ] && [ -x "$C" ] || { echo "skip: not built"; exit 77; }
[ -r "$TEXT" ] || { echo "skip: no $TEXT"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-subchk.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok - $*"; }
P=$T/proj
"$S" init "$P" --listen 127.0.0.1:0 --name "submit checks" >/dev/null 2>&1 || { echo "FAIL: init"; exit 1; }
"$C" model init --layers 1 --heads 2 --channels 32 --max-seq 32 --vocab 256 --seed 1 \
	--out "$T/base.bin" >/dev/null || { echo "FAIL: model init"; exit 1; }
JOB="--rounds 1 --batch 2 --seq 32 --lr 0.003 --quorum 1 --replicas 1"

# refused FILE OPT WANT: job submit with OPT FILE fails, one line saying WANT
refused() {
	if [ "$2" = --train-text ]; then src="--train-text $1 --eval-fraction 0.1"
	else src="--train-text $TEXT --eval-text $1"; fi
	# shellcheck disable=SC2086
	if "$S" job submit "$P" --model "$T/base.bin" $src --shards 1 --steps 10 $JOB \
		>"$T/out.log" 2>&1; then
		fail "$2 $(basename "$1") accepted"
	elif ! grep -q -- "$3" "$T/out.log"; then
		fail "$2 $(basename "$1"): no '$3' in: $(cat "$T/out.log")"
	elif [ "$(grep -c . "$T/out.log")" -ne 1 ]; then
		fail "$2 $(basename "$1"): more than one line: $(cat "$T/out.log")"
	else
		ok "$2 $(basename "$1") refused: $(cat "$T/out.log")"
	fi
}
gzip -c "$TEXT" >"$T/gpl.gz"
refused "$T/gpl.gz" --train-text "gpl.gz is gzip-compressed, not text: pass the text itself (zcat "
if command -v xz >/dev/null; then
	xz -c "$TEXT" >"$T/gpl.xz"
	refused "$T/gpl.xz" --eval-text "is xz-compressed, not text"
fi
if command -v zstd >/dev/null; then
	zstd -q -c "$TEXT" >"$T/gpl.zst"
	refused "$T/gpl.zst" --train-text "is zstd-compressed, not text: pass the text itself (zstdcat"
fi
{ head -c 3000 "$TEXT"; printf 'a\000b'; cat "$TEXT"; } >"$T/nul.txt"
refused "$T/nul.txt" --train-text "nul.txt is binary, not text (a NUL byte at offset 3001)"
[ -z "$(ls "$P/download")" ] && ok "refused submits stored nothing" ||
	fail "refused submits stored files: $(ls "$P/download")"

# a random base: refused, naming its loss and the option
# shellcheck disable=SC2086
if "$S" job submit "$P" --model "$T/base.bin" --train-text "$TEXT" --eval-fraction 0.1 \
	--shards 1 --steps 10 $JOB >"$T/random.log" 2>&1; then
	fail "a random base accepted"
elif grep -q "the base model looks untrained: its eval loss 5\.5[0-9]* is not clearly below log V = 5\.545.*or pass --allow-random-base" "$T/random.log"; then
	ok "random base refused: $(grep untrained "$T/random.log")"
else
	fail "random base: $(cat "$T/random.log")"
fi
GPL2=/usr/share/common-licenses/GPL-2
if [ -r "$GPL2" ]; then
	"$C" tokens encode --tokenizer bytes "$GPL2" --out "$T/gpl2.bin" >/dev/null 2>&1 &&
	"$C" train --model "$T/base.bin" --data "$T/gpl2.bin" --steps 150 --batch 8 --seq 32 \
		--lr 3e-3 --out "$T/pre.bin" >/dev/null || fail "pretraining"
	# shellcheck disable=SC2086
	"$S" job submit "$P" --model "$T/pre.bin" --train-text "$TEXT" --eval-fraction 0.1 \
		--shards 1 --steps 10 $JOB >"$T/pre.log" 2>&1 &&
		ok "a pretrained base: $(sed -n 's/.*INFO: job submit: \(base model .*\)/\1/p' "$T/pre.log")" ||
		fail "a pretrained base refused: $(cat "$T/pre.log")"
fi

# 4 shards of ~7.9k tokens against 200 x 2 x 32 = 12,800 tokens a WU
# shellcheck disable=SC2086
"$S" job submit "$P" --model "$T/base.bin" --allow-random-base --train-text "$TEXT" \
	--eval-fraction 0.1 --shards 4 --steps 200 $JOB >"$T/small.log" 2>&1 || fail "small shards refused: $(cat "$T/small.log")"
n=$(sed -n 's/.* \([0-9]*\) training and .*/\1/p' "$T/small.log")
shard=$((n / 4))
passes=$(awk -v s="$shard" 'BEGIN { printf "%.1f", 12800 / s }')
most=$((n / 12800))
if grep -q "each WU trains on 12800 tokens (steps x batch x seq) but its shard holds $shard: $passes passes over the same tokens per WU (overfits); use --shards $most or fewer, or --steps $((shard / 64)) or fewer" "$T/small.log"; then
	ok "small shards: $(grep passes "$T/small.log" | sed 's/.*WARN: //')"
else
	fail "no passes warning ($n tokens, shard $shard, $passes passes): $(cat "$T/small.log")"
fi
# shellcheck disable=SC2086
"$S" job submit "$P" --model "$T/base.bin" --allow-random-base --train-text "$TEXT" \
	--eval-fraction 0.1 --shards 2 --steps 20 $JOB >"$T/fine.log" 2>&1 || fail "a one-pass job refused: $(cat "$T/fine.log")"
grep -q passes "$T/fine.log" && fail "a one-pass job warned: $(cat "$T/fine.log")" ||
	ok "a job of under one pass per WU: no warning"
exit $((fails > 0))
