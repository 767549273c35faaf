#!/bin/sh
# test/server_upload_sniffer.sh - an upload that a sniffer cannot spoil:
# the upload token travels in clear without TLS, but an
# upload counts only with a MAC over its body under the secret of the host
# the token was issued to, a secret sent once (in the reply that makes the
# host) and never again:
#  - one shard, 2 replicas, quorum 2; hosts a and b each take a replica;
#    a's first reply carries host_secret, its second one does not;
#  - a sniffer with a's token (not its secret) uploads junk first, from
#    another address, with no MAC and with a MAC under the token: 401
#    each time, and nothing of it is stored;
#  - a uploads a first try of its own (valid MAC): 200; then its real
#    result before reporting: 200, the file replaced; it reports; b does
#    the same, the WU is validated and round 1 averaged (with quorum 2 of
#    2, only if a's stored file is its real result);
#  - an upload of a's after its report: 409 (no longer in progress), the
#    file unchanged.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-sniff
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_project "upload sniffer"
mkuser a b
submit --shards 1 --rounds 2 --replicas 2 --quorum 2 --no-adaptive --name sniff
start_server http,transitioner,validator,assimilator

check "a gets a replica" "$(ask a 1)" 1
SEC=$(xmllint --xpath 'string(/scheduler_reply/host_secret)' "$T/reply.a")
check "a's first reply gives its host secret" "${#SEC}" 64
check "b gets a replica" "$(ask b 1)" 1
compute a honest
read -r r wu shard tok <"$T/todo.a"
sha=$(sha256sum <"$T/work/$r" | cut -d' ' -f1)

printf 'junk of a sniffer %s' "$r" >"$T/junk"
sniff() {	# sniff [curl args]: the sniffer's upload of $T/junk -> HTTP code
	curl -s -o "$T/up.xml" -w '%{http_code}' --interface 127.0.0.9 \
		-H "X-Upload-Token: $tok" "$@" --data-binary @"$T/junk" "$URL/upload/$r"
}
check "the sniffer's junk without a MAC: 401" "$(sniff)" 401
check "... with the reason" "$(grep -c 'X-Upload-MAC' "$T/up.xml")" 1
check "the sniffer's junk with a MAC under the token: 401" \
	"$(sniff -H "X-Upload-MAC: $(upload_mac "$r" "$tok" "$T/junk" "$tok")")" 401
check "the sniffer's junk with a's MAC of another body: 401" \
	"$(sniff -H "X-Upload-MAC: $(upload_mac "$r" "$tok" "$T/work/$r" "$SEC")")" 401
check "... and nothing of the sniffer is stored" \
	"$(find "$P/upload" -name "*$r*" -type f | wc -l)" 0

printf 'a first try of a, replaced before reporting' >"$T/try1"
own() {	# own FILE: a's upload of FILE under its secret -> HTTP code
	curl -s -o "$T/up.xml" -w '%{http_code}' -H "X-Upload-Token: $tok" \
		-H "X-Upload-MAC: $(upload_mac "$r" "$tok" "$1" "$SEC")" \
		--data-binary @"$1" "$URL/upload/$r"
}
check "a's first try (valid MAC): 200" "$(own "$T/try1")" 200
check "a replaces its own unvalidated upload: 200" "$(own "$T/work/$r")" 200
check "... the stored file is the new one" \
	"$(sha256sum <"$(find "$P/upload" -name "$r" -type f)" | cut -d' ' -f1)" "$sha"
check "... and no temp file is left" \
	"$(find "$P/upload" -name ".tmp-*" | wc -l)" 0
ask a 0 >/dev/null
check "a's second reply (with its host id) has no host secret" \
	"$(xp 'count(/scheduler_reply/host_secret)')" 0
deliver a
check "a's upload and report accepted" "$up_codes $acks" "200 1"
read -r r wu shard tok <"$T/todo.a"	# deliver's loop used r and tok
check "a's upload after its report: 409" "$(own "$T/try1")" 409
check "... and the reported file is unchanged" \
	"$(sha256sum <"$(find "$P/upload" -name "$r" -type f)" | cut -d' ' -f1)" "$sha"
work b honest
check "b's upload taken" "$up_codes" 200
# quorum 2 of 2: the round is averaged only if a's stored file validates
wait_for 60 "round 1 is averaged (a's real result validated)" round_done 1 1
exit $((fails > 0))
