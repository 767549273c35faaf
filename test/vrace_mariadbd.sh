#!/bin/sh
# test/vrace_mariadbd.sh - test/test_vrace (two validator processes on the
# same WUs) against a private mariadbd. Exit 77 = skipped.
CT_TMP_PREFIX=ctune-vrace
. "$(dirname "$0")/server_lib.sh"
[ -x "$B/test/test_vrace" ] || { echo "skip: test/test_vrace not built"; exit 77; }
start_mariadbd
CT_TEST_DB_URL="mysql://root@localhost/ctune_test?socket=$T/mdb.sock" "$B/test/test_vrace"
