#!/bin/sh
# test/llama_e2e.sh with a Qwen3-style model (head_dim apart from C/NH,
# per-head q/k RMSNorm): see LLAMA_E2E_QWEN3 there.
LLAMA_E2E_QWEN3=1 exec "$(dirname "$0")/llama_e2e.sh" "$@"
