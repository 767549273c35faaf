#!/bin/sh
# test/server_trust_caught.sh - test/server_trust.sh with a host that is
# caught by a lost quorum in the round of its lone flipped result: that
# result is set aside as a caught host's (robust_aside.h) before the
# round's cross-shard check.
TRUST_MODE=caught exec "$(dirname "$0")/server_trust.sh"
