#!/bin/sh
# test/attack_xml_bomb.sh - a small request body cannot take the server's
# memory. Before, a 16 KB gzip body inflating to 16 MiB of
# "<a/>" was parsed into a full libxml2 tree before the account key was
# looked at: ~560 MB a request, still held afterwards. Now the scheduler
# request's parse stops at its node and text caps (server/rpc/sched_req.c):
#  - that body, sent 16 times one after another, gets 413 naming the cap,
#    and the server's peak RSS (VmHWM, reset before) stays under 64 MB
#    above its RSS before them; afterwards RSS is back within 16 MB
#    (memory given back: malloc_trim after a large request);
#  - 16 MiB of text in one element, and 16 MiB of attributes, likewise;
#  - a real account's ordinary request is still answered with work.
# Also printed, not checked: the peak with 4 such bodies at once (one per
# HTTP thread; each holds its own inflated 16 MiB).
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-xmlbomb
. "$(dirname "$0")/server_lib.sh"
[ -x "$S" ] || { echo "skip: $S not built"; exit 77; }
[ -w /proc/self/clear_refs ] || { echo "skip: no /proc/PID/clear_refs"; exit 77; }

"$S" init "$P" --listen 127.0.0.1:0 --name "xml bomb" >/dev/null || die "init"
mkuser alice
start_server http

kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$SRV_PID/status"; }
# bomb NAME OPEN UNIT CLOSE: OPEN, UNIT repeated to 16 MiB, CLOSE, gzipped
bomb() {
	{ printf '%s' "$2"
	  yes "$3" | tr -d '\n' | head -c $(((16 << 20) - 128))
	  printf '%s' "$4"; } | gzip -9 >"$T/$1.gz"
}
send() {	# send NAME -> HTTP code, reply in $T/bomb.out
	curl -s -o "$T/bomb.out" -w '%{http_code}' -H 'Content-Encoding: gzip' \
		-H 'Content-Type: application/xml' --data-binary @"$T/$1.gz" "$URL/rpc/scheduler"
}
bomb elems '<scheduler_request>' '<a/>' '</scheduler_request>'
bomb text '<scheduler_request><host><hostname>' 'xxxx' '</hostname></host></scheduler_request>'
bomb attrs '<scheduler_request><a ' 'b="" ' '/></scheduler_request>'
echo "bodies: $(wc -c <"$T/elems.gz") $(wc -c <"$T/text.gz") $(wc -c <"$T/attrs.gz") bytes gzipped, 16 MiB each inflated"
check "the element bomb is at most 20 KB on the wire" \
	"$([ "$(wc -c <"$T/elems.gz")" -le 20480 ] && echo yes || echo no)" yes

# warm up: one ordinary request (a thread's database connection, caches)
rpc "$(cat "$T/key.alice")" 0 "$(printf 'a%.0s' $(seq 32))" 1
check "an ordinary request is answered" "$code" 200
sleep 1
base=$(kb VmRSS)
echo 5 >"/proc/$SRV_PID/clear_refs"	# VmHWM := VmRSS
codes=
for i in $(seq 1 16); do codes="$codes $(send elems)"; done
check "16 element bombs get 413 each" "$codes" "$(printf ' 413%.0s' $(seq 16))"
check "... saying which cap" "$(grep -c 'more than 20000 elements' "$T/bomb.out")" 1
check "the text bomb gets 413" "$(send text)" 413
check "... saying which cap" "$(grep -c 'bytes of text' "$T/bomb.out")" 1
check "the attribute bomb gets 413" "$(send attrs)" 413
check "... saying which cap" "$(grep -c "more than 20000 elements" "$T/bomb.out")" 1
hwm=$(kb VmHWM)
sleep 1
after=$(kb VmRSS)
echo "RSS: $((base / 1024)) MB before, peak $((hwm / 1024)) MB during 18 bombs ($(((hwm - base) / 1024)) MB above), $((after / 1024)) MB after"
check "the peak stayed under 64 MB above the baseline" \
	"$([ $((hwm - base)) -lt $((64 << 10)) ] && echo yes || echo no)" yes
check "memory was given back (RSS within 16 MB of the baseline)" \
	"$([ $((after - base)) -lt $((16 << 10)) ] && echo yes || echo no)" yes

echo 5 >"/proc/$SRV_PID/clear_refs"
base4=$(kb VmRSS)
pids=
for i in 1 2 3 4; do send elems >"$T/par.$i" & pids="$pids $!"; done
for p in $pids; do wait "$p"; done
echo "4 element bombs at once: $(cat "$T"/par.* | tr '\n' ' ')-> peak $(((\
$(kb VmHWM) - base4) / 1024)) MB above the baseline (4 threads, 16 MiB inflated each)"

rpc "$(cat "$T/key.alice")" "$(xp 'string(/scheduler_reply/host_id)')" \
	"$(printf 'a%.0s' $(seq 32))" 1
check "an ordinary request is still answered" "$code" 200
check "... as a scheduler reply" "$(xp 'count(/scheduler_reply)')" 1
exit $((fails > 0))
