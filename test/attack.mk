# Integration tests of the defences against several free accounts, bad
# peer strings and crashes (doc/validation.md): each starts a real
# ctune-server and drives it over HTTP with scripted or crafted clients.
# Included from test/local.mk.
CT_ATTACK_TESTS = test/server_schema_kill9.sh test/server_badstrings.sh \
	test/server_stale_upload.sh
EXTRA_DIST += test/attack_lib.sh
dist_check_SCRIPTS += $(CT_ATTACK_TESTS)
TESTS += $(CT_ATTACK_TESTS)
