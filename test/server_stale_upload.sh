#!/bin/sh
# test/server_stale_upload.sh - an upload for a round that was already
# averaged is refused with a clear status (HTTP 410, "stale: round N of
# job J is already closed"), not stored and never used:
#  - one shard, 3 replicas, quorum 2; three hosts each take a replica;
#  - two compute honestly, upload and report: the WU is validated, round 1
#    is averaged and round 2 opens;
#  - the third then uploads its round-1 result: 410 with the reason, and
#    no file of it is stored; an upload for round 2 still takes 200.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-stale
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "stale uploads"
mkuser a b c
submit --shards 1 --rounds 2 --replicas 3 --quorum 2 --no-adaptive --name stale
start_server http,transitioner,validator,assimilator

check "a gets a replica" "$(ask a 1)" 1
check "b gets a replica" "$(ask b 1)" 1
check "c gets a replica" "$(ask c 1)" 1
work a honest
check "a's upload taken" "$up_codes" 200
work b honest
check "b's upload taken" "$up_codes" 200
wait_for 60 "round 1 is averaged" round_done 1 1
compute c honest
deliver c
check "c's upload for the averaged round is refused: 410 Gone" "$up_codes" 410
check "... with the reason" \
	"$(grep -c 'stale: round 1 of job 1 is already closed' "$T/up.xml")" 1
r=$(cut -d' ' -f1 "$T/todo.c")
check "... and nothing of it is stored" \
	"$(find "$P/upload" -name "*$r*" -type f | wc -l)" 0
check "round 2: a gets work" "$(ask a 1)" 1
work a honest
check "an upload for the open round 2 is taken" "$up_codes" 200
exit $((fails > 0))
