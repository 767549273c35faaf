#!/bin/sh
# test/server_crossshard_lora.sh - test/server_crossshard.sh on a LoRA job:
# the colluders' sign-flipped adapters are set aside by the cross-shard
# check of the shards' merged updates (server/validate/lora_robust.c).
XSHARD_JOB=lora exec "$(dirname "$0")/server_crossshard.sh"
