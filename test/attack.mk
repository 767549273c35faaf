# Integration tests of the defences against several free accounts, bad
# peer strings and crashes (doc/validation.md): each starts a real
# ctune-server and drives it over HTTP with scripted or crafted clients.
# Included from test/local.mk.
CT_ATTACK_TESTS = test/server_schema_kill9.sh test/server_badstrings.sh \
	test/server_stale_upload.sh test/server_replicas_apart.sh \
	test/server_hoarding.sh test/server_ratelimit.sh \
	test/server_honest_stall.sh test/server_aggregate.sh test/server_outer.sh \
	test/server_round_quorum.sh \
	test/server_collude.sh test/server_crossshard.sh test/server_trust.sh \
	test/server_crossshard_ulp.sh test/server_trust_caught.sh \
	test/server_crossshard_lora.sh test/server_inprogress.sh
# the port stays up: per-address limits and deadlines (a load
# program of half-sent requests), parse caps, the address behind a proxy
CT_ATTACK_TESTS += test/attack_slow_headers.sh test/attack_xml_bomb.sh \
	test/attack_proxy.sh
# a round no small group can capture, deadlines a hoarder cannot stretch:
# the round rules, request_delay enforced, the round check
CT_ATTACK_TESTS += test/server_round_capture.sh test/server_request_delay.sh \
	test/server_round_fail.sh test/server_hoarder_round.sh
# uploads that a sniffer cannot spoil: the host's MAC
CT_ATTACK_TESTS += test/server_upload_sniffer.sh
check_PROGRAMS += test/slow_headers
test_slow_headers_LDADD = -lpthread
EXTRA_DIST += test/attack_lib.sh
dist_check_SCRIPTS += $(CT_ATTACK_TESTS)
TESTS += $(CT_ATTACK_TESTS)

if HAVE_CMOCKA
CT_ATTACK_UNIT_TESTS = test/test_eligibility test/test_ratelimit test/test_robust
CT_ATTACK_UNIT_TESTS += test/test_proxy test/test_conn_guard
test_test_proxy_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_proxy_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_conn_guard_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_conn_guard_LDADD = $(CT_SERVER_TEST_LIBS)
check_PROGRAMS += $(CT_ATTACK_UNIT_TESTS)
TESTS += $(CT_ATTACK_UNIT_TESTS)
test_test_eligibility_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_eligibility_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_ratelimit_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_ratelimit_LDADD = $(CT_SERVER_TEST_LIBS)
test_test_robust_CFLAGS = $(CT_SERVER_TEST_CFLAGS)
test_test_robust_LDADD = $(CT_SERVER_TEST_LIBS)
endif
