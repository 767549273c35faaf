#!/bin/sh
# test/server_crossshard_ulp.sh - test/server_crossshard.sh with the
# colluders' near-zero update (every weight one ulp from the base, towards
# the honest weights) instead of a sign-flipped one.
XSHARD_MODE=ulp exec "$(dirname "$0")/server_crossshard.sh"
