#!/bin/sh
# test/server_inprogress.sh - the in-progress caps by validated throughput
# at their default (sched.new_host_in_progress unset: the project's
# max_in_progress, 4; server/validate/worklimit.c) do not slow an honest new host,
# and keep an account's new hosts from multiplying what it holds:
#  - a job of 8 shards, 2 replicas (16 results); account x has two hosts,
#    x.a and x.b, on two networks, y is another account;
#  - x.a (new) asks for 4 and gets 4: what any host may hold;
#  - x.b (new, same account) gets none: the account's new hosts hold 4 in
#    all until its work validates (each host used to get 4 of its own);
#  - y, another new account, gets its 4;
#  - once x.a has reported its 4 results, x.b gets work;
#  - with new_host_in_progress = 0 (off) x.b would have had 4: a second
#    project shows that the switch still works.
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
CT_TMP_PREFIX=ctune-inprog
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/attack_lib.sh"

make_data
setup() {	# setup EXTRA-SCHED-LINE: a project with that [sched] line, and a job
	"$S" init "$P" --listen 127.0.0.1:0 --name "in progress" >/dev/null || die "init"
	sed -i "s/^\[sched\]\$/[sched]\nseparate_loopback = 1\n$1/" "$P/ctune-server.conf"
	sed -i 's/^request_delay = .*/request_delay = 1/' "$P/ctune-server.conf"
	mkuser x y
	submit --shards 8 --rounds 1 --replicas 2 --quorum 2 --no-adaptive --name inprog
	start_server http,transitioner,validator,assimilator
}
echo 127.0.11.1 >"$T/ip.x.a"
echo 127.0.12.1 >"$T/ip.x.b"
echo 127.0.13.1 >"$T/ip.y"
setup ""
grep -q '^max_in_progress = 4$' "$P/ctune-server.conf" || die "the default max_in_progress is not 4"
check "a new host gets what any host may hold" "$(ask x.a 4)" 4
check "a second new host of the same account gets nothing" "$(ask x.b 4)" 0
check "a new host of another account gets its 4" "$(ask y 4)" 4
work x.a honest
check "x.a's 4 results are accepted" "$acks" 4
check "once they are reported, x.b gets work" "$([ "$(ask x.b 4)" -gt 0 ] && echo yes)" yes

stop_server
rm -rf "$P" "$T"/host.* "$T"/got.* "$T"/key.*
setup "new_host_in_progress = 0"
check "caps off: x.a gets 4" "$(ask x.a 4)" 4
check "caps off: x.b gets 4 more" "$(ask x.b 4)" 4
exit $((fails > 0))
