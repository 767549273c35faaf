#!/bin/sh
# test/server_replicas_apart.sh - the replicas of a WU go to different
# accounts, hosts and networks (server/rpc/eligibility.c), so several free
# accounts on one network cannot hold every replica of a WU:
#  - sched.separate_loopback = 1 makes 127.x.y.z addresses count as
#    networks (x.y picks the /24);
#  - a job of 3 shards, 2 replicas: m1 (127.0.7.1) takes one replica of
#    each WU; m2, another account on the same /24 (127.0.7.2), gets
#    nothing; m3, an account on another /24 but with m1's client id
#    (host_cpid), gets nothing; h (127.0.8.1) gets the other replicas;
#  - the log names the rule each time (network, host);
#  - with sched.separate_networks = 0 (volunteers behind one NAT), after a
#    restart m2 gets the one replica left;
#  - m1 and m2 never both hold a replica of one WU while the rule is on.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-apart
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

# the per-WU rules alone: the round rules (test/server_round_capture.sh)
# would keep h from sharing more than one of m1's WUs
attack_project "replicas apart" \
	"separate_loopback = 1\nmax_shared_per_round = 0\nmax_net_share = 0\nmax_account_share = 0"
sed -i 's/^log_level = .*/log_level = debug/' "$P/ctune-server.conf"
mkuser m1 m2 m3 h
echo 127.0.7.1 >"$T/ip.m1"
echo 127.0.7.2 >"$T/ip.m2"
echo 127.0.9.1 >"$T/ip.m3"
echo 127.0.8.1 >"$T/ip.h"
cpid m1 >"$T/cpid.m3"
submit --shards 3 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name apart
start_server http

check "m1 gets one replica of each of the 3 WUs" "$(ask m1 4)" 3
check "m2, another account on m1's /24, gets nothing" "$(ask m2 4)" 0
check "... and the log says why (network)" \
	"$(grep -c "host $(cat "$T/host.m2"): not eligible for WU .* (network)" "$T/server.log")" 3
check "m3, another account with m1's client id, gets nothing" "$(ask m3 4)" 0
check "... and the log says why (host)" \
	"$(grep -c "host $(cat "$T/host.m3"): not eligible for WU .* (host)" "$T/server.log")" 3
check "h, on another network, gets 2 (its cap per RPC)" "$(ask h 2)" 2

stop_server
sed -i 's/^\[sched\]$/[sched]\nseparate_networks = 0/' "$P/ctune-server.conf"
start_server http
check "with separate_networks = 0, m2 gets the replica left" "$(ask m2 4)" 1
check "m3 still gets nothing (same client id as m1)" "$(ask m3 4)" 0
wu_m2=$(xmllint --xpath 'string(/scheduler_reply/result/wu_name)' "$T/reply.m2")
wu_h=$(xmllint --xpath '/scheduler_reply/result/wu_name/text()' "$T/reply.h" | sort | tr '\n' ' ')
check "... of the WU h did not take" "$(echo "$wu_h" | grep -c "$wu_m2")" 0
exit $((fails > 0))
