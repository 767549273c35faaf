#!/bin/sh
# tools/demo.sh - crowdtune's main job, end to end, on this machine, on
# real text.
#
# Run by tools/demo from the build directory (./build). It:
#   1. takes two bodies of real English text that Debian ships: the
#      `fortunes` package's quotations and jokes (A, to pretrain on) and the
#      licence texts in /usr/share/common-licenses (B, a clearly different,
#      legal style, to fine-tune on; GFDL-1.3 is held out for evaluation);
#   2. pretrains a small GPT-2-config model on A with `ctune train` (byte
#      tokenizer, V = 256) and prints what it writes;
#   3. creates a project (`ctune-server init`, embedded MariaDB), starts
#      `ctune-server run`, submits a fine-tuning job on B's text
#      (`job submit --train-text`, K shards x R rounds, quorum 2);
#   4. attaches N volunteers (`ctune attach --name ...`, each its own state
#      directory and account) and runs their daemons with --always;
#   5. shows progress until the job is done, then prints the eval-loss table
#      (base, each shard alone, the lo-fi average after each round, the
#      centralized fine-tune with the same total steps), one sample before
#      and one after fine-tuning (same prompt and seed), and each
#      volunteer's credit.
#
# Options (environment): DEMO_DIR (default ./demo), DEMO_PORT (8710),
# DEMO_SIZE (bytes: the default, V = 256; gpt2: a GPT-2-vocabulary model,
# gpt2 tokenizer, slower; llama: a small Llama-config model (RMSNorm, RoPE,
# SwiGLU, 4 heads sharing 2 KV heads, tied embeddings), bytes tokenizer,
# trained on the C reference; chat: the llama model fine-tuned on
# conversations, the question-and-answer fortunes, with a byte-level
# tokenizer and a chat template (tools/demo_chat.sh), replies before and
# after), DEMO_SHARDS (3), DEMO_ROUNDS (4), DEMO_STEPS
# (steps per work unit), DEMO_PRESTEPS (pretraining steps), DEMO_CLIENTS (3),
# DEMO_DEVICE (client device: auto, cpu, opencl; default auto), DEMO_OUTER
# (the job's outer optimizer, `job submit --outer`: mean, sgd or nesterov;
# default mean, which no other setting beat at the demo's 4 rounds in
# bench_lofi, doc/results.md "Outer optimizers ..."),
# DEMO_PROMPT ("The "), DEMO_SERVE=1 keeps the server running at the end
# (Ctrl-C stops it).
set -eu

BUILD=$(pwd)
CT="$BUILD/ctune"
CS="$BUILD/ctune-server"
DEMO=${DEMO_DIR:-$BUILD/demo}
PORT=${DEMO_PORT:-8710}
SIZE=${DEMO_SIZE:-bytes}
case $SIZE in
bytes)	TOK=bytes; V=256; VP=256; L=2; NH=4; C=64; SEQ=64; PREBATCH=16
	PRESTEPS=${DEMO_PRESTEPS:-2000}; STEPS=${DEMO_STEPS:-100} ;;
gpt2)	TOK=gpt2; V=50257; VP=50304; L=2; NH=4; C=64; SEQ=64; PREBATCH=8
	PRESTEPS=${DEMO_PRESTEPS:-400}; STEPS=${DEMO_STEPS:-40} ;;
llama)	TOK=bytes; V=256; VP=256; L=2; NH=4; C=64; SEQ=64; PREBATCH=16
	PRESTEPS=${DEMO_PRESTEPS:-1500}; STEPS=${DEMO_STEPS:-80} ;;
chat)	TOK=chat; V=259; VP=259; L=2; NH=4; C=64; SEQ=256; PREBATCH=4
	PRESTEPS=${DEMO_PRESTEPS:-1500}; STEPS=${DEMO_STEPS:-12} ;;
*)	echo "demo: DEMO_SIZE is bytes, gpt2, llama or chat" >&2; exit 2 ;;
esac
K=${DEMO_SHARDS:-3}
R=${DEMO_ROUNDS:-4}
NCLIENTS=${DEMO_CLIENTS:-3}
DEVICE=${DEMO_DEVICE:-auto}
PROMPT=${DEMO_PROMPT:-The }
BATCH=8
[ "$SIZE" = chat ] && BATCH=4
LR=0.002
PRELR=0.006
URL="http://127.0.0.1:$PORT"
FORTUNES=/usr/share/games/fortunes
LICENSES=/usr/share/common-licenses
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$BUILD/.pocl-cache}"

pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
evalloss() { "$CT" eval --model "$1" --data "$DEMO/data/b_eval.bin" --batch $BATCH --seq $SEQ | awk '{print $2}'; }

start=$(date +%s)
rm -rf "$DEMO"
mkdir -p "$DEMO/data" "$DEMO/models"
D="$DEMO/data"
M="$DEMO/models"

A_FILES=""
for f in literature wisdom people science humorists work politics cookie computers men-women; do
	[ -r "$FORTUNES/$f" ] || die "no $FORTUNES/$f: install Debian's fortunes package (tools/setup does)"
	A_FILES="$A_FILES $FORTUNES/$f"
done
B_FILES=""
for f in GPL-3 GPL-2 LGPL-2.1 LGPL-3 Apache-2.0 MPL-2.0 Artistic; do
	[ -r "$LICENSES/$f" ] || die "no $LICENSES/$f (Debian's base-files)"
	B_FILES="$B_FILES $LICENSES/$f"
done
B_EVAL=$LICENSES/GFDL-1.3

if [ "$SIZE" = chat ]; then
	# shellcheck source=tools/demo_chat.sh
	. "$(dirname "$0")/demo_chat.sh"
	chat_tokenizer "$D/tok"
	TOK=$D/tok
fi
if [ "$SIZE" = chat ]; then
	say "1/6 data: real text (a byte-level tokenizer with a chat template). A: fortunes (pretraining), B: the fortunes' questions and answers as conversations (fine-tuning)"
else
	say "1/6 data: real text ($TOK tokenizer). A: fortunes (pretraining), B: licences (fine-tuning)"
fi
# shellcheck disable=SC2086
"$CT" tokens encode --tokenizer "$TOK" $A_FILES --out "$D/a_train.bin" >/dev/null 2>"$D/encode.err" ||
	die "$TOK tokenizer not available: $(cat "$D/encode.err")"
if [ "$SIZE" = chat ]; then
	# every eighth conversation is held out; the longest ones (over
	# SEQ tokens with the template) are left out
	fortune_chats "$FORTUNES"/*.u8 | awk 'length < 300' >"$D/chats.jsonl"
	awk 'NR % 8 == 0' "$D/chats.jsonl" >"$D/chat_eval.jsonl"
	awk 'NR % 8 != 0' "$D/chats.jsonl" >"$D/chat_train.jsonl"
	"$CT" tokens encode --tokenizer "$TOK" --chat "$D/chat_train.jsonl" --out "$D/b_train.bin" >/dev/null 2>&1
	"$CT" tokens encode --tokenizer "$TOK" --chat "$D/chat_eval.jsonl" --out "$D/b_eval.bin" >/dev/null 2>&1
	printf '   %s conversations to train on, %s held out (the loss counts the replies only)\n' \
		"$(wc -l <"$D/chat_train.jsonl")" "$(wc -l <"$D/chat_eval.jsonl")"
else
	# shellcheck disable=SC2086
	"$CT" tokens encode --tokenizer "$TOK" $B_FILES --out "$D/b_train.bin" >/dev/null 2>&1
	"$CT" tokens encode --tokenizer "$TOK" "$B_EVAL" --out "$D/b_eval.bin" >/dev/null 2>&1
fi
for x in a_train b_train b_eval; do
	printf '   %-8s %s\n' "$x" "$("$CT" tokens info "$D/$x.bin" | head -1 | sed 's:.*/::')"
done
sed -n '1,/^%$/p' "$FORTUNES/literature" | head -4 | sed 's/^/   A says: /'
if [ "$SIZE" = chat ]; then
	sed -n 2p "$D/chat_train.jsonl" | sed 's/^/   B says: /'
else
	sed -n '/^ *0\. Definitions/,+3p' "$LICENSES/GPL-3" | sed 's/^/   B says: /'
fi

if [ "$SIZE" = llama ] || [ "$SIZE" = chat ]; then
	say "2/6 base model: Llama config L=$L C=$C NH=$NH (2 KV heads) MLP 176 V=$V, pretrained $PRESTEPS steps on A"
	"$CT" model init-llama --layers $L --heads $NH --kv-heads 2 --channels $C --mlp 176 \
		--max-seq $SEQ --vocab $V --tied --seed 1 --out "$M/init.bin"
else
	say "2/6 base model: GPT-2 config L=$L C=$C NH=$NH V=$V, pretrained $PRESTEPS steps on A"
	"$CT" model init --layers $L --heads $NH --channels $C --max-seq $SEQ --vocab $V \
		--padded-vocab $VP --seed 1 --out "$M/init.bin"
fi
"$CT" train --model "$M/init.bin" --data "$D/a_train.bin" --steps "$PRESTEPS" --batch $PREBATCH \
	--seq $SEQ --lr $PRELR --device cpu --out "$M/base.bin" |
	awk -v n="$PRESTEPS" '/^step/ { split($2, a, "/"); if (a[1] % int(n / 5) == 0) { print "   " $0; fflush() } } /done/'
if [ "$SIZE" = chat ]; then
	"$CT" model export "$M/base.bin" --out "$M/base_hf" --tokenizer-from "$TOK" >/dev/null
	# the replies to three held-out questions (the first user message of
	# the first three held-out conversations)
	sed -n 's/^{"messages": \[{"role": "user", "content": "\(\([^"\\]\|\\.\)*\)"}.*/\1/p' \
		"$D/chat_eval.jsonl" | head -3 | sed 's/\\\(.\)/\1/g' >"$D/questions.txt"
	q1=$(head -1 "$D/questions.txt")
	printf '{"messages": [{"role": "user", "content": "%s"}]}\n' "$(printf '%s' "$q1" | sed 's/[\\"]/\\&/g')" \
		>"$D/sample_chat.json"
	sample() {
		while IFS= read -r q; do
			printf '   user:  %s\n' "$q"
			printf '   model: %s\n' "$("$CT" chat --model "$1" --prompt "$q" --temperature 0.8 --seed 1 \
				--max-tokens ${DEMO_SAMPLE_TOKENS:-120} | tr '\n' ' ')"
		done <"$D/questions.txt"
	}
	echo "   the base model answers three held-out questions (its chat template, seed 1):"
	sample "$M/base_hf" | tee "$DEMO/sample_before.txt"
else
	sample() { "$CT" sample --model "$1" --prompt "$PROMPT" --tokens ${DEMO_SAMPLE_TOKENS:-240} \
		--temperature 0.8 --seed 1 | sed 's/^/   | /'; }
	echo "   the base model writes (prompt \"$PROMPT\", seed 1):"
	sample "$M/base.bin" | tee "$DEMO/sample_before.txt"
fi

say "3/6 project: ctune-server init + run on $URL, job of $K shards x $R rounds, quorum 2"
"$CS" init "$DEMO/project" --listen "127.0.0.1:$PORT" --url "$URL" --name "crowdtune demo" \
	>"$DEMO/init.log" 2>&1 || die "ctune-server init failed: $(cat "$DEMO/init.log")"
"$CS" run "$DEMO/project" --log "$DEMO/server.log" &
pids="$pids $!"
i=0
until curl -fs -o /dev/null "$URL/" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || die "server did not start; see $DEMO/server.log"
	sleep 0.3
done
if [ "$SIZE" = chat ]; then
	set -- --name "fortunes -> conversations" --model "$M/base_hf" --train-chat "$D/chat_train.jsonl" \
		--eval-chat "$D/chat_eval.jsonl" --sample-chat "$D/sample_chat.json"
else
	# shellcheck disable=SC2086
	set -- --name "fortunes -> licences" --model "$M/base.bin" --train-text $B_FILES \
		--eval-text "$B_EVAL" --tokenizer "$TOK" --sample-prompt "$PROMPT"
fi
OUTER=${DEMO_OUTER:-mean}
JOB=$("$CS" job submit "$DEMO/project" "$@" --sample-seed 1 --shards $K --rounds $R --steps $STEPS \
	--batch $BATCH --seq $SEQ --lr $LR --quorum 2 --outer "$OUTER" 2>"$DEMO/submit.log" | awk '/^job/ {print $2}')
[ -n "$JOB" ] || die "job submit failed"
echo "   job $JOB submitted"

# One OpenCL kernel build fills the shared PoCL cache, so the volunteers
# do not all compile the same kernels at once on a small machine.
"$CT" devices >/dev/null 2>&1 || true

say "4/6 volunteers: $NCLIENTS clients attach (new accounts) and run with --always"
for n in $(seq 1 "$NCLIENTS"); do
	cdir="$DEMO/volunteer$n"
	CTUNE_PASSWORD="demo-password-$n" "$CT" --dir "$cdir" attach "$URL" --name "volunteer$n" \
		--email "volunteer$n@example.org" >/dev/null
	"$CT" --dir "$cdir" run --always --device "$DEVICE" --backoff-base 2 --checkpoint-seconds 10 \
		--log-file "$cdir/client.log" &
	pids="$pids $!"
done

say "5/6 training: progress"
last=""
deadline=$(( $(date +%s) + ${DEMO_TIMEOUT:-900} ))
while :; do
	show=$("$CS" job show "$DEMO/project" "$JOB" 2>/dev/null || true)
	line=$(printf '%s\n' "$show" | awk '/^  [0-9]/ {printf "round %s: %s, WUs %s%s | ", $1, $2, $3, ($5 == "nan" || $5 == "-" ? "" : ", eval loss " $5)}')
	if [ "$line" != "$last" ]; then
		echo "   [$(( $(date +%s) - start ))s] $line"
		last=$line
	fi
	printf '%s\n' "$show" | grep -q "^job $JOB .*: done" && break
	printf '%s\n' "$show" | grep -q "^job $JOB .*: \(error\|canceled\)" && die "job failed: $show"
	[ "$(date +%s)" -lt "$deadline" ] || die "job did not finish in time; logs in $DEMO"
	sleep 2
done

if [ "$SIZE" = chat ]; then
	say "6/6 results: eval loss on the held-out conversations' replies (batch $BATCH x $SEQ, all of them)"
else
	say "6/6 results: eval loss on B's held-out licence (GFDL-1.3, batch $BATCH x $SEQ, all of it)"
fi
TABLE="$DEMO/results.md"
{
	echo "| model | eval loss |"
	echo "|---|---|"
	echo "| base (pretrained on fortunes) | $(evalloss "$M/base.bin") |"
	for k in $(seq 0 $((K - 1))); do
		echo "   training on shard $((k + 1)) of $K alone for comparison ..." >&2
		"$CT" tokens shard "$D/b_train.bin" --shard "$k" --of "$K" --out "$D/shard$k.bin"
		"$CT" train --model "$M/base.bin" --data "$D/shard$k.bin" --steps $((STEPS * R)) --batch $BATCH \
			--seq $SEQ --lr $LR --device cpu --out "$M/shard$k.bin" >/dev/null
		echo "| shard $((k + 1)) alone ($((STEPS * R)) steps on it) | $(evalloss "$M/shard$k.bin") |"
	done
	for r in $(seq 1 "$R"); do
		"$CS" job export "$DEMO/project" "$JOB" --round "$r" --out "$M/lofi_round$r.bin" >/dev/null
		echo "| lo-fi average after round $r (--outer $OUTER) | $(evalloss "$M/lofi_round$r.bin") |"
	done
	echo "   centralized fine-tune on all shards ($((K * STEPS * R)) steps) for comparison ..." >&2
	"$CT" train --model "$M/base.bin" --data "$D/b_train.bin" --steps $((K * STEPS * R)) \
		--batch $BATCH --seq $SEQ --lr $LR --device cpu --out "$M/central.bin" >/dev/null
	echo "| centralized fine-tune (one client, all shards, $((K * STEPS * R)) steps) | $(evalloss "$M/central.bin") |"
} >"$TABLE"
cat "$TABLE"

echo
if [ "$SIZE" = chat ]; then
	echo "before fine-tuning (base model, seed 1):"
	cat "$DEMO/sample_before.txt"
	echo "after fine-tuning on the conversations (lo-fi average of round $R, same questions and seed):"
	"$CS" job export "$DEMO/project" "$JOB" --round "$R" --hf --out "$M/lofi_round${R}_hf" >/dev/null
	sample "$M/lofi_round${R}_hf" | tee "$DEMO/sample_after.txt"
else
	echo "before fine-tuning (base model, prompt \"$PROMPT\", seed 1):"
	cat "$DEMO/sample_before.txt"
	echo "after fine-tuning on the licences (lo-fi average of round $R, same prompt and seed):"
	sample "$M/lofi_round$R.bin" | tee "$DEMO/sample_after.txt"
fi
echo "(the job page shows such a sample for the base model and every round)"

echo
echo "credit per volunteer:"
curl -fs "$URL/api/v1/users?sort=total" 2>/dev/null | tr '{' '\n' |
	sed -n 's/.*"name":"\([^"]*\)".*"total_credit":\([0-9.e+-]*\).*/\1 \2/p' |
	awk '{ printf "  %-12s %.4f cobblestones\n", $1, $2 }' || true
echo
echo "done in $(( $(date +%s) - start ))s. Project directory: $DEMO/project"
echo "pages: $URL/ (leaderboards: $URL/users, job: $URL/job/$JOB)"
if [ "${DEMO_SERVE:-0}" = 1 ]; then
	echo "serving until Ctrl-C"
	wait
else
	echo "serve them again with: $CS run $DEMO/project"
fi
