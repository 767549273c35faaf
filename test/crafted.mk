# The crafted-results integration test of ctune-server: a real server
# (embedded database, then a private mariadbd) driven over HTTP by a
# scripted volunteer whose results test/craft_result makes honest or
# crafted to cheat (built with the tests' default flags, test/local.mk).
check_PROGRAMS += test/craft_result

CT_CRAFTED_SCRIPT_TESTS = test/server_crafted_embedded.sh test/server_crafted_mariadbd.sh \
	test/server_bisect.sh
dist_check_SCRIPTS += $(CT_CRAFTED_SCRIPT_TESTS)
EXTRA_DIST += test/server_crafted.sh test/server_lib.sh
TESTS += $(CT_CRAFTED_SCRIPT_TESTS)
