#!/bin/sh
# test/server_crafted.sh - a real ctune-server (all roles: HTTP, transitioner,
# validator, assimilator) driven over HTTP by scripted volunteers whose
# results test/craft_result makes, honest or crafted to cheat:
#  - a job of 7 shards, 2 replicas, quorum 2: host "h1" returns honest
#    results for all 7 WUs; six cheaters each take the other replica of one
#    WU and return the base weights back (lazy), noise of the honest
#    update's norm, a x10 scaled update, a x0.9 scaled update (passes every
#    check of a single result, so only the quorum catches it), weights with
#    one NaN, and a delta for another model shape; "h2" takes the last
#    replica, honestly (all work is handed out before any is reported);
#  - every cheat ends invalid without credit, and being refused, or
#    disagreeing with h1, makes the server send a third replica of its WU,
#    which h2 computes honestly;
#  - then all 14 honest results are valid with equal credit, round 1 is
#    done, and round 2's model is the mean of the 7 canonical results:
#    its SHA-256 equals that of the checkpoint craft_result recomputes.
#
#   server_crafted.sh embedded   # the embedded database (default)
#   server_crafted.sh mariadbd   # a private mariadbd started here, on a socket
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
mode=${1:-embedded}
CT_TMP_PREFIX=ctune-crafted
. "$(dirname "$0")/server_lib.sh"
craft_tools

DBOPT=
[ "$mode" = mariadbd ] && start_mariadbd

# ---- model, data, project, accounts, job --------------------------------
make_data
"$S" init "$P" --listen 127.0.0.1:0 --name "crafted test" $DBOPT >/dev/null || die "init"
# h1 takes one replica of every WU in one RPC, h2 a third replica of each
# (the validator's checks alone: the round rules of eligibility.h, which
# would keep h2 from sharing more than one WU of the round with h1, are
# off; request_delay 1 s, enforced, lets the scripted h2 ask again at once)
sed -i 's/^max_in_progress = .*/max_in_progress = 8/; s/^max_wus_per_rpc = .*/max_wus_per_rpc = 8/;
	s/^request_delay = .*/request_delay = 1/;
	s/^\[sched\]$/[sched]\nmax_shared_per_round = 0\nmax_account_share = 0/' "$P/ctune-server.conf"
CHEATS="lazy noise x10 nudge nan shape"
mkuser h1 h2 $CHEATS
"$S" job submit "$P" --allow-random-base --model "$T/base.bin" --train "$T/train.bin" --eval "$T/eval.bin" \
	--shards 7 --rounds 2 --steps 5 --batch 2 --seq 16 --lr 0.001 --replicas 2 --quorum 2 \
	--no-adaptive --name crafted >/dev/null || die "job submit"
start_server http,transitioner,validator,assimilator
mkdir -p "$T/honest"

# ---- a scripted volunteer ---------------------------------------------------
# work USER MODE: do every result of USER's last reply as MODE
# (craft_result), upload it with its token and report it in one more RPC.
# Appends "RESULT WU SHARD" lines to $T/got.USER.
work() {
	cp "$T/reply.$1" "$T/work.xml"
	n=$(xmllint --xpath 'count(/scheduler_reply/result)' "$T/work.xml")
	reports=
	i=1
	while [ "$i" -le "$n" ]; do
		craft_item "$T/work.xml" "$i" "$2"
		[ "$2" = honest ] && cp "$T/work/$r.weights" "$T/honest/$wu"
		sha=$(sha256sum <"$T/work/$r" | cut -d' ' -f1)
		c=$(up "$r" "$tok" "$T/work/$r" -H "X-Content-SHA256: $sha")
		check "$1 uploads $r ($2)" "$c" 200
		reports="$reports$(report "$r" "$sha" "$(wc -c <"$T/work/$r")")"
		echo "$r $wu $shard" >>"$T/got.$1"
		i=$((i + 1))
	done
	if [ "$n" -gt 0 ]; then
		rpc "$(cat "$T/key.$1")" "$(cat "$T/host.$1")" "$(cpid "$1")" 0 "$reports"
		check "$1's $n report(s) accepted" \
			"$(xp 'count(/scheduler_reply/ack[status="accepted"])')" "$n"
	fi
}
cpid() { printf '%s' "$1" | sha256sum | cut -c1-32; }
# ask USER WANT: a scheduler RPC asking for WANT results; remembers the host id
ask() {
	hid=0
	[ -f "$T/host.$1" ] && hid=$(cat "$T/host.$1")
	rpc "$(cat "$T/key.$1")" "$hid" "$(cpid "$1")" "$2"
	[ "$code" = 200 ] || die "$1's RPC: HTTP $code"
	xp 'string(/scheduler_reply/host_id)' >"$T/host.$1"
	cp "$T/reply.xml" "$T/reply.$1"
}

# ---- round 1: honest h1, six cheaters, h2 ------------------------------------
ask h1 8
check "h1 gets one replica of each of the 7 WUs" "$(xp 'count(/scheduler_reply/result)')" 7
for u in $CHEATS; do
	ask "$u" 1
	check "$u gets one result" "$(xp 'count(/scheduler_reply/result)')" 1
done
ask h2 8
check "h2 gets the one replica left" "$(xp 'count(/scheduler_reply/result)')" 1
work h1 honest
for u in $CHEATS; do work "$u" "$u"; done
work h2 honest
for u in $CHEATS; do cat "$T/got.$u"; done | cut -d' ' -f2 | sort >"$T/cheated.wus"
check "the cheaters hold 6 different WUs" "$(sort -u "$T/cheated.wus" | wc -l)" 6
check "h2 holds the seventh" "$(cut -d' ' -f2 "$T/got.h2" | grep -c -x -F -f "$T/cheated.wus")" 0

# as each cheat is refused or disagrees with h1, h2 takes the third replica
# the server sends for its WU
h2_all() {
	ask h2 8
	[ "$(xp 'count(/scheduler_reply/result)')" -gt 0 ] && work h2 honest
	[ "$(wc -l <"$T/got.h2")" -ge 7 ]
}
wait_for 60 "h2 gets 7 results" h2_all
check "h2 holds every WU once" "$(cut -d' ' -f2 "$T/got.h2" | sort -u | wc -l)" 7
check "h2's third replicas (index 2) are of the cheated WUs" \
	"$(awk '$1 ~ /-2$/ {print $2}' "$T/got.h2" | sort | tr '\n' ' ')" \
	"$(tr '\n' ' ' <"$T/cheated.wus")"
check "the cheat that passed the checks was out-voted: a third replica" \
	"$(grep -c "validator: $(cut -d' ' -f2 "$T/got.nudge"): no agreement among 2 results" \
	   "$T/server.log")" 1

round1_done() { "$S" job show "$P" 1 2>/dev/null | grep -Eq '^ +1 +done '; }
wait_for 60 "round 1 completes" round1_done
"$S" job show "$P" 1 >"$T/show.txt" 2>&1 || fail "job show"
cat "$T/show.txt"
check "14 honest results valid" "$(awk '$1 == "over" && $2 == "success" && $3 == "valid" {print $4}' \
	"$T/show.txt")" 14
check "6 cheats invalid" "$(awk '$1 == "over" && $3 == "invalid" {n += $4} END {print n + 0}' \
	"$T/show.txt")" 6
check "5 of them refused on their own (validate_error)" \
	"$(awk '$1 == "over" && $2 == "validate_error" && $3 == "invalid" {print $4}' "$T/show.txt")" 5
check "1 out-voted (success, invalid)" \
	"$(awk '$1 == "over" && $2 == "success" && $3 == "invalid" {print $4}' "$T/show.txt")" 1
check "20 results of round 1 are over (6 third replicas)" \
	"$(awk '$1 == "over" {n += $4} END {print n + 0}' "$T/show.txt")" 20
check "job moved to round 2" "$(head -1 "$T/show.txt" | sed -n 's/.*round \([0-9]*\) of.*/\1/p')" 2

# why each cheat was refused (the validator's log line names the check)
reason() { grep -c "validator: $(cut -d' ' -f1 "$T/got.$1") rejected: $2\$" "$T/server.log"; }
check "lazy result rejected: no update" "$(reason lazy no_update)" 1
check "x10 result rejected: update too large" "$(reason x10 update_too_large)" 1
check "NaN result rejected: non-finite" "$(reason nan nonfinite)" 1
check "wrong-shape result rejected: wrong shape" "$(reason shape wrong_shape)" 1
nr=$(cut -d' ' -f1 "$T/got.noise")
nwu=$(cut -d' ' -f2 "$T/got.noise")
check "noise result rejected on its own or out-voted" "$(grep -Ec \
	"validator: ($nr rejected: |$nwu: no agreement)" "$T/server.log")" 1
check "the nudged result was not rejected on its own" \
	"$(grep -c "validator: $(cut -d' ' -f1 "$T/got.nudge") rejected" "$T/server.log")" 0

# credit: h1 and h2 have equal shares (7 valid results each), cheaters none
wait_for 30 "h1 and h2 get equal, non-zero credit" credits_of h1 h2 'a > 0 && a == b'
check_no_credit $CHEATS

# ---- round 2 starts from the mean of the 7 canonical results ------------------
# (canonical = an honest result; both honest replicas of a WU are the same
# bits, so h1's weights per shard stand for them, in shard order)
set --
for s in 0 1 2 3 4 5 6; do
	wu=$(awk -v s="$s" '$3 == s {print $2}' "$T/got.h1")
	[ -n "$wu" ] || die "no WU of shard $s"
	set -- "$@" "$T/honest/$wu"
done
"$CRAFT" mean "$T/base.bin" "$T/mean.bin" "$@" || die "craft mean"
MEAN_SHA=$(sha256sum <"$T/mean.bin" | cut -d' ' -f1)
ask h1 1
check "h1 gets a round-2 result" "$(xp 'count(/scheduler_reply/result)')" 1
check "round 2's WU is of round 2" "$(xp 'string(/scheduler_reply/workunit/round)')" 2
check "round 2's model hash is the hash of the mean" \
	"$(xp "string(/scheduler_reply/workunit/file[@role='model']/sha256)")" "$MEAN_SHA"
curl -sf -o "$T/r2model.bin" "$(xp "string(/scheduler_reply/workunit/file[@role='model']/url)")" ||
	fail "download round 2's model"
check "round 2's model is the mean, byte for byte" \
	"$(cmp -s "$T/r2model.bin" "$T/mean.bin" && echo same)" same
check "the base is not the mean" "$(cmp -s "$T/base.bin" "$T/mean.bin" && echo same)" ""
stop_server

[ "$fails" = 0 ] || { echo "$fails failure(s)"; tail -40 "$T/server.log"; exit 1; }
echo "all crafted-result checks passed ($mode)"
