# Tests of the command lines of ctune and ctune-server (lib/ct_cmd.h):
# every command's --help and option checking, walked from the programs' own
# help; `ctune-server init` leaving nothing behind when it fails and
# refusing a database another project uses. Included from test/local.mk.
CT_CLI_SCRIPT_TESTS = test/cli_help.sh test/server_init.sh
dist_check_SCRIPTS += $(CT_CLI_SCRIPT_TESTS)
TESTS += $(CT_CLI_SCRIPT_TESTS)
