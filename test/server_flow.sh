#!/bin/sh
# test/server_flow.sh - drive a real ctune-server over HTTP: project init,
# accounts, job submission, the scheduler RPC (work assignment rules,
# reports, aborts), uploads (tokens, caps, hashes, no overwrite), downloads
# (Range, ETag), bad input, the admin socket, restart.
#
#   server_flow.sh embedded   # the embedded database (default)
#   server_flow.sh mariadbd   # a private mariadbd started here, on a socket
#
# Exit 0 = pass, 77 = skipped (no mariadbd), anything else = failure.
# The helpers (start_server, rpc, up, report, ...) are in test/server_lib.sh.
mode=${1:-embedded}
CT_TMP_PREFIX=ctune-flow
. "$(dirname "$0")/server_lib.sh"

# ---- fixtures: a tiny llm.c checkpoint + token files ---------------------
le32() {
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
mk_model() {	# maxT 64, V = Vp = 65536 (any uint16 token is in it), L 1, NH 1, C 2:
	# 65536*2 (wte) + 64*2 (wpe) + 74 (one layer) + 4 (lnf) = 131278 floats
	{ le32 20240326; le32 3; le32 64; le32 65536; le32 1; le32 1; le32 2; le32 65536
	  head -c $((1024 - 32)) /dev/zero; head -c $((4 * 131278)) /dev/urandom; } > "$1"
}
mk_tokens() {	# mk_tokens FILE N
	{ le32 20240520; le32 1; le32 "$2"; head -c $((1024 - 12)) /dev/zero
	  head -c $((2 * $2)) /dev/urandom; } > "$1"
}
mk_model "$T/model.bin"
mk_tokens "$T/train.bin" 20000
mk_tokens "$T/eval.bin" 2000

# ---- database -------------------------------------------------------------
DBOPT=
[ "$mode" = mariadbd ] && start_mariadbd

# ---- project, accounts, job ---------------------------------------------
"$S" init "$P" --listen 127.0.0.1:0 --name "flow test" $DBOPT >/dev/null || die "init"
check "init twice is refused" "$("$S" init "$P" >/dev/null 2>&1; echo $?)" 1
key() { "$S" user create "$P" --name "$1" --email "$1@example.org" --password "password-$1" |
	sed -n 's/.* account key \([0-9a-f]*\)$/\1/p'; }
ALICE=$(key alice); BOB=$(key bob); CAROL=$(key carol)
[ ${#ALICE} = 32 ] && [ ${#BOB} = 32 ] || die "user create"
out=$("$S" job submit "$P" --allow-random-base --model "$T/model.bin" --train "$T/train.bin" \
	--eval "$T/eval.bin" --shards 2 --rounds 2 --steps 5 --batch 2 --seq 16 --lr 0.001 \
	--replicas 2 --quorum 2 --name flow) || die "job submit"
check "job submit prints the id" "$out" "job 1"
check "a job with too few tokens per shard is refused" \
	"$("$S" job submit "$P" --allow-random-base --model "$T/model.bin" --train "$T/eval.bin" --eval "$T/eval.bin" \
	   --shards 100 --rounds 1 --steps 1 --batch 8 --seq 64 --lr 0.001 >/dev/null 2>&1; echo $?)" 1

# ---- server -------------------------------------------------------------
start_server

check "status goes through the admin socket while running" \
	"$("$S" status "$P" | sed -n 's/^users *//p')" 3


CPA=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
CPB=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
rpc "$ALICE" 0 $CPA 4
check "alice's first RPC: HTTP 200" "$code" 200
HA=$(xp 'string(/scheduler_reply/host_id)')
check "alice gets one result per WU (2 WUs)" "$(xp 'count(/scheduler_reply/result)')" 2
check "the two results are of different WUs" \
	"$(xp '/scheduler_reply/result[1]/wu_name/text()' | grep -c "$(xp '/scheduler_reply/result[2]/wu_name/text()')")" 0
check "each result comes with its workunit" "$(xp 'count(/scheduler_reply/workunit)')" 2
RA1=$(xp 'string(/scheduler_reply/result[1]/name)')
TA1=$(xp 'string(/scheduler_reply/result[1]/upload_token)')
RA2=$(xp 'string(/scheduler_reply/result[2]/name)')
TA2=$(xp 'string(/scheduler_reply/result[2]/upload_token)')
MAXUP=$(xp 'string(/scheduler_reply/result[1]/max_upload_bytes)')
MODEL_URL=$(xp 'string(/scheduler_reply/workunit[1]/file[@role="model"]/url)')
MODEL_SHA=$(xp 'string(/scheduler_reply/workunit[1]/file[@role="model"]/sha256)')

rpc "$ALICE" 0 $CPA 4 "<other_results><name>$RA1</name><name>$RA2</name></other_results>"
check "a lost host id: same cpid gets the same host back" "$(xp 'string(/scheduler_reply/host_id)')" "$HA"
check "alice gets nothing more (no two results of a WU per account)" \
	"$(xp 'count(/scheduler_reply/result)')" 0
check "nothing to abort for results she holds" "$(xp 'count(/scheduler_reply/abort)')" 0

rpc "$ALICE" "$HA" $CPA 0 "<other_results><name>$RA1</name></other_results>"
check "a result the client lost is sent again" "$(xp 'string(/scheduler_reply/result[1]/name)')" "$RA2"

rpc "$BOB" 0 $CPB 4
HB=$(xp 'string(/scheduler_reply/host_id)')
check "bob gets the other replicas" "$(xp 'count(/scheduler_reply/result)')" 2
RB1=$(xp 'string(/scheduler_reply/result[1]/name)')
TB1=$(xp 'string(/scheduler_reply/result[1]/upload_token)')
rpc "$CAROL" 0 cccccccccccccccccccccccccccccccc 4
check "carol gets nothing: every result is out" "$(xp 'count(/scheduler_reply/result)')" 0

# ---- downloads ------------------------------------------------------------
curl -s -o "$T/dl.bin" "$MODEL_URL"
check "download is the model" "$(sha256sum <"$T/dl.bin" | cut -d' ' -f1)" "$MODEL_SHA"
check "download of the model's sha matches the submitted file" \
	"$(sha256sum <"$T/model.bin" | cut -d' ' -f1)" "$MODEL_SHA"
hdr=$(curl -s -D - -o "$T/part.bin" -H 'Range: bytes=1000-1099' "$MODEL_URL" | tr -d '\r')
check "Range gets 206" "$(echo "$hdr" | head -1 | cut -d' ' -f2)" 206
check "Range gets the right bytes" \
	"$(tail -c +1001 "$T/model.bin" | head -c 100 | cmp -s - "$T/part.bin" && echo same)" same
check "ETag is the hash" "$(echo "$hdr" | sed -n 's/^ETag: "\(.*\)"$/\1/p')" "$MODEL_SHA"
check "immutable caching" "$(echo "$hdr" | grep -c 'immutable')" 1
check "If-None-Match gets 304" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "If-None-Match: \"$MODEL_SHA\"" "$MODEL_URL")" 304
check "unsatisfiable range gets 416" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H 'Range: bytes=999999999-' "$MODEL_URL")" 416
check "unknown hash gets 404" "$(curl -s -o /dev/null -w '%{http_code}' \
	"$URL/download/0000000000000000000000000000000000000000000000000000000000000000")" 404
check "path tricks get 404" "$(curl -s -o /dev/null -w '%{http_code}' \
	"$URL/download/..%2f..%2fsecret")" 404

# ---- uploads --------------------------------------------------------------
head -c 3000 /dev/urandom >"$T/up.bin"
UPSHA=$(sha256sum <"$T/up.bin" | cut -d' ' -f1)
check "upload without a token: 401" "$(curl -s -o /dev/null -w '%{http_code}' \
	--data-binary @"$T/up.bin" "$URL/upload/$RA1")" 401
check "upload with another result's token: 401" "$(up "$RA1" "$TA2" "$T/up.bin")" 401
check "upload with bob's token for alice's result: 401" "$(up "$RA1" "$TB1" "$T/up.bin")" 401
check "upload with a forged token: 401" "$(up "$RA1" "$(echo "$TA1" | sed 's/\.[0-9]*\./.999999999./')" "$T/up.bin")" 401
head -c $((MAXUP + 1)) /dev/zero >"$T/big.bin"
check "upload over max_upload_bytes: 413" "$(up "$RA1" "$TA1" "$T/big.bin")" 413
check "upload with a wrong X-Content-SHA256: 400" "$(up "$RA1" "$TA1" "$T/up.bin" \
	-H "X-Content-SHA256: 0000000000000000000000000000000000000000000000000000000000000000")" 400
check "upload: 200" "$(up "$RA1" "$TA1" "$T/up.bin" -H "X-Content-SHA256: $UPSHA")" 200
check "upload reply has the hash" "$(xmllint --xpath 'string(/upload_reply/sha256)' "$T/up.xml")" "$UPSHA"
check "the same upload again: 200" "$(up "$RA1" "$TA1" "$T/up.bin")" 200
head -c 3000 /dev/urandom >"$T/other.bin"
# before its report, the host may replace its own upload (valid MAC)
check "other bytes of the same host before the report: 200" "$(up "$RA1" "$TA1" "$T/other.bin")" 200
check "... they replace the file" "$(sha256sum <"$P/upload/$RA1" | cut -d' ' -f1)" \
	"$(sha256sum <"$T/other.bin" | cut -d' ' -f1)"
check "other bytes without the host's MAC: 401" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "X-Upload-Token: $TA1" --data-binary @"$T/up.bin" "$URL/upload/$RA1")" 401
check "the first bytes again: 200" "$(up "$RA1" "$TA1" "$T/up.bin")" 200
check "the file is the first one again" "$(sha256sum <"$P/upload/$RA1" | cut -d' ' -f1)" "$UPSHA"

# ---- reports --------------------------------------------------------------
rpc "$BOB" "$HB" $CPB 0 "$(report "$RA1" "$UPSHA" 3000)"
check "bob reporting alice's result: DENIED" "$(xp 'string(/scheduler_reply/ack/code)')" DENIED
rpc "$ALICE" "$HA" $CPA 0 "$(report "$RA1" 1111111111111111111111111111111111111111111111111111111111111111 3000)"
check "report with the wrong hash: HASH" "$(xp 'string(/scheduler_reply/ack/code)')" HASH
rpc "$ALICE" "$HA" $CPA 0 "$(report "$RA2" "$UPSHA" 3000)"
check "success report without an upload: NOENT" "$(xp 'string(/scheduler_reply/ack/code)')" NOENT
rpc "$ALICE" "$HA" $CPA 0 "$(report "$RA1" "$UPSHA" 3000)"
check "good report: accepted" "$(xp 'string(/scheduler_reply/ack/status)')" accepted
rpc "$ALICE" "$HA" $CPA 0 "$(report "$RA1" "$UPSHA" 3000)"
check "second report: DUP" "$(xp 'string(/scheduler_reply/ack/code)')" DUP
rpc "$ALICE" "$HA" $CPA 0 "<result><name>$RA2</name><status>error</status><error_code>-17</error_code><error_message>out of device memory</error_message></result>"
check "error report: accepted" "$(xp 'string(/scheduler_reply/ack/status)')" accepted
rpc "$ALICE" "$HA" $CPA 0 "$(report nosuchresult "$UPSHA" 3000)"
check "report of an unknown result: NOTFOUND" "$(xp 'string(/scheduler_reply/ack/code)')" NOTFOUND
check "upload after the report is refused (not in progress)" "$(up "$RA2" "$TA2" "$T/up.bin")" 409
rpc "$ALICE" "$HA" $CPA 0 "<other_results><name>$RA1</name></other_results>"
check "a finished result the client still lists is aborted" "$(xp 'string(/scheduler_reply/abort)')" "$RA1"

# ---- refused requests -----------------------------------------------------
rpc ffffffffffffffffffffffffffffffff 0 $CPA 1
check "unknown account key: AUTH" "$(xp 'string(/scheduler_reply/error/code)')" AUTH
rpc "$BOB" "$HA" $CPB 1
check "another account's host id: DENIED" "$(xp 'string(/scheduler_reply/error/code)')" DENIED
rpc "$ALICE" "$HA" nothex 1
check "bad host_cpid: PROTO" "$(xp 'string(/scheduler_reply/error/code)')" PROTO
printf '<scheduler_request><authenticator>' >"$T/req.xml"
code=$(curl -s -o "$T/reply.xml" -w '%{http_code}' --data-binary @"$T/req.xml" "$URL/rpc/scheduler")
check "malformed XML: 400" "$code" 400
check "malformed XML: code XML" "$(xp 'string(//error/code)')" XML
printf '<!DOCTYPE x [<!ENTITY a "aaaa">]><scheduler_request>&a;</scheduler_request>' >"$T/req.xml"
code=$(curl -s -o "$T/reply.xml" -w '%{http_code}' --data-binary @"$T/req.xml" "$URL/rpc/scheduler")
check "DOCTYPE/entities: 400" "$code" 400
head -c $((5 * 1024 * 1024)) /dev/zero >"$T/huge.xml"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$T/huge.xml" "$URL/rpc/scheduler")
check "oversize body: 413" "$code" 413
rpc "$ALICE" "$HA" $CPA 0
gzip -c "$T/req.xml" >"$T/req.xml.gz"
code=$(curl -s -o "$T/reply.xml" -w '%{http_code}' -H 'Content-Encoding: gzip' \
	--data-binary @"$T/req.xml.gz" "$URL/rpc/scheduler")
check "gzip request: 200" "$code" 200
check "gzip request: a normal reply" "$(xp 'string(/scheduler_reply/host_id)')" "$HA"
head -c $((20 * 1024 * 1024)) /dev/zero | gzip -c >"$T/bomb.gz"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Encoding: gzip' \
	--data-binary @"$T/bomb.gz" "$URL/rpc/scheduler")
check "gzip bomb: 413" "$code" 413
check "unknown path: 404" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope/x")" 404

# ---- accounts over HTTP -----------------------------------------------------
acct() {
	curl -s -o "$T/reply.xml" -w '%{http_code}' --data-binary "$1" "$URL/rpc/account" >/dev/null
}
acct "<account_request><action>create</action><name>dave</name><email>Dave@Example.org</email><password>hunter2hunter2</password></account_request>"
DAVE=$(xp 'string(/account_reply/authenticator)')
check "account create returns a key" "${#DAVE}" 32
acct "<account_request><action>lookup</action><email>dave@example.org</email><password>hunter2hunter2</password></account_request>"
check "lookup (any case of email) returns the same key" "$(xp 'string(/account_reply/authenticator)')" "$DAVE"
acct "<account_request><action>lookup</action><email>dave@example.org</email><password>wrong-password</password></account_request>"
check "lookup with a wrong password: AUTH" "$(xp 'string(//error/code)')" AUTH
acct "<account_request><action>create</action><name>d2</name><email>dave@example.org</email><password>hunter2hunter2</password></account_request>"
check "create with a taken email: EXISTS" "$(xp 'string(//error/code)')" EXISTS
rpc "$DAVE" 0 dddddddddddddddddddddddddddddddd 1
check "the new key works with the scheduler" "$(xp 'count(/scheduler_reply/error)')" 0

# ---- admin commands while running; restart ---------------------------------
check "job list through the server" "$("$S" job list "$P" | awk '$1 == 1 {print $3}')" running
"$S" job show "$P" 1 >"$T/show.txt" || fail "job show"
check "job show lists round 1" "$(grep -c '^  1 ' "$T/show.txt")" 1
check "export before the job is done fails" "$("$S" job export "$P" 1 --out "$T/final.bin" \
	>/dev/null 2>&1; echo $?)" 1
stop_server
check "status works without a server" "$("$S" status "$P" | sed -n 's/^results in progress *//p')" 2
start_server
rpc "$ALICE" "$HA" $CPA 0 "$(report "$RA1" "$UPSHA" 3000)"
check "after a restart the report is still a DUP" "$(xp 'string(/scheduler_reply/ack/code)')" DUP
# a crash: kill -9 right after an accepted upload; the next start recovers
check "bob's upload before the crash: 200" "$(up "$RB1" "$TB1" "$T/up.bin")" 200
kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
start_server
check "the upload survived kill -9" "$(sha256sum <"$P/upload/$RB1" | cut -d' ' -f1)" "$UPSHA"
rpc "$BOB" "$HB" $CPB 0 "$(report "$RB1" "$UPSHA" 3000)"
check "after kill -9 the upload is still recorded: report accepted" \
	"$(xp 'string(/scheduler_reply/ack/status)')" accepted
"$S" job cancel "$P" 1 >/dev/null || fail "job cancel"
check "a canceled job's results are aborted" "$(rpc "$BOB" "$HB" $CPB 0 \
	"<other_results><name>$RB1</name></other_results>"; xp 'string(/scheduler_reply/abort)')" "$RB1"
check "cancel twice is refused" "$("$S" job cancel "$P" 1 >/dev/null 2>&1; echo $?)" 1
stop_server

# ---- TLS from the config ---------------------------------------------------
if command -v openssl >/dev/null 2>&1 &&
   openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" \
	-days 1 -subj /CN=localhost >/dev/null 2>&1; then
	sed -i "s|^tls_cert = .*|tls_cert = \"$T/cert.pem\"|; s|^tls_key = .*|tls_key = \"$T/key.pem\"|" \
		"$P/ctune-server.conf"
	start_server
	check "with a certificate the server speaks https" "${URL%%:*}" https
	code=$(curl -sk -o "$T/reply.xml" -w '%{http_code}' --data-binary @"$T/req.xml" \
		"$URL/rpc/scheduler")
	check "an RPC over TLS" "$code" 200
	check "plain http to the TLS port fails" \
		"$(curl -s -o /dev/null -w '%{http_code}' "http${URL#https}/download/x")" 000
	stop_server
else
	echo "skip - TLS (no openssl)"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; tail -30 "$T/server.log"; exit 1; }
echo "all server flow checks passed ($mode)"
