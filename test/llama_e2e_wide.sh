#!/bin/sh
# test/llama_e2e.sh with Llama 3's vocabulary (128,256 ids, 32-bit token
# files) and its real tokenizer.json: see LLAMA_E2E_VOCAB there.
LLAMA_E2E_VOCAB=llama3 exec "$(dirname "$0")/llama_e2e.sh" "$@"
