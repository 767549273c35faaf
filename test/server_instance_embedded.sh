#!/bin/sh
# test/server_instance_embedded.sh - a second `run` of a project on the
# embedded database is refused with what to do: several instances need an
# external MariaDB (the embedded one serves one process), not another
# --instance NAME, which would only meet the embedded database's lock.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-inst-emb
. "$(dirname "$0")/server_lib.sh"
[ -x "$S" ] || { echo "skip: $S not built"; exit 77; }

"$S" init "$P" --listen 127.0.0.1:0 --name "embedded instances" >/dev/null || die "init"
start_server http
out=$("$S" run "$P" 2>&1); rc=$?
check "a second run on the embedded database is refused" "$rc" 1
check "it says an external database is needed" \
	"$(echo "$out" | grep -c "already runs on this project (pid $SRV_PID .*the embedded database serves one process: to run several instances, move the project to an external MariaDB (--db URL")" 1
check "it does not suggest --instance NAME" "$(echo "$out" | grep -c 'another --instance NAME')" 0
echo "$out" | tail -1
check "the first process still serves" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" 200
stop_server
exit $((fails > 0))
