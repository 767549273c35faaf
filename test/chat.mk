# Chat templates (lib/ct_jinja): the unit test of the Jinja language and
# its refusals (test/test_ct_jinja.c), and the comparison with Hugging
# Face's @huggingface/jinja + @lenml/tokenizers on the real templates of
# Llama 3/3.1/3.2, Qwen2.5, Qwen3 and SmolLM2 (test/chat_template.sh:
# test/jinja_cases renders, test/chat_ref.mjs is the reference; the
# templates are in test/data/chat/). The tests' default flags
# (test/local.mk).
if HAVE_CMOCKA
check_PROGRAMS += test/test_ct_jinja
TESTS += test/test_ct_jinja
endif
check_PROGRAMS += test/jinja_cases
dist_check_SCRIPTS += test/chat_template.sh test/chat_tokens.sh
TESTS += test/chat_template.sh test/chat_tokens.sh
EXTRA_DIST += test/chat_ref.mjs test/chat_mask_ref.mjs test/data/chat
# GGUF out (model export --gguf) against npm @huggingface/gguf
# (test/gguf_ref.mjs) and, where npm node-llama-cpp is installed,
# llama.cpp's own greedy tokens (test/gguf_llama_cpp.mjs).
dist_check_SCRIPTS += test/gguf_export.sh
TESTS += test/gguf_export.sh
# ctune chat --model: a crafted bigram model's reply ends at <|eot_id|>;
# the same seed, the same reply on every device.
dist_check_SCRIPTS += test/chat_talk.sh
TESTS += test/chat_talk.sh
EXTRA_DIST += test/gguf_ref.mjs test/gguf_llama_cpp.mjs test/browser/chat.mjs
