# lib/ training engine (helper "engine"): GPT-2 checkpoint and token file
# formats, the portable math shared with the OpenCL kernels, the C reference
# model (layers, forward/backward, AdamW), and the work-unit runner with its
# backend registry. Included from lib/local.mk.
lib_libctune_a_SOURCES += \
	lib/ct_math.h \
	lib/ct_gpt2.c lib/ct_gpt2.h \
	lib/ct_tokens.c lib/ct_tokens.h \
	lib/ct_tokenizer.c lib/ct_tokenizer.h \
	lib/ct_bpe.c lib/ct_bpe.h lib/ct_bpe_int.h \
	lib/ct_bpe_load.c lib/ct_bpe_split.c lib/ct_bpe_hf.c \
	lib/ct_jread.c lib/ct_jread.h \
	lib/ct_nfc.c lib/ct_nfc.h lib/ct_nfc_tab.c \
	lib/ct_unicode.c lib/ct_unicode.h lib/ct_unicode_tab.c \
	lib/ct_rng.c lib/ct_rng.h \
	lib/ct_lora.c lib/ct_lora.h lib/ct_lora_init.c \
	lib/ct_lora_model.c lib/ct_lora_model.h \
	lib/ct_layers.c lib/ct_model.c lib/ct_model.h \
	lib/ct_attention.c \
	lib/ct_cpu_backend.c \
	lib/ct_engine.c lib/ct_engine.h
lib_libctune_a_SOURCES += lib/ct_sample.c lib/ct_sample.h
EXTRA_DIST += kernels/ct_math.clh
# LoRA jobs beyond the engine: the exact merge of K shards' adapters and
# the adapter result file.
lib_libctune_a_SOURCES += lib/ct_lora_merge.c \
	lib/ct_lora_result.c lib/ct_lora_result.h
