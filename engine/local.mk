# engine/: the training engine. The portable math shared with the OpenCL
# kernels (kernels/), the seeded generator, GPT-2 checkpoints, the C
# reference model (layers, attention, forward/backward, AdamW), LoRA, the
# work-unit runner with its backend table (CPU reference, OpenCL), the
# OpenCL runtime, sampling, and the result upload encoding (ct_delta).
# Programs link engine/libctengine.a before lib/libctune.a ($(CT_CORE_LIBS)).
noinst_LIBRARIES += engine/libctengine.a
engine_libctengine_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
engine_libctengine_a_SOURCES = \
	engine/ct_math.h engine/ct_isa.c engine/ct_isa.h \
	engine/ct_rng.c engine/ct_rng.h \
	engine/ct_model_config.h engine/ct_model_ops.c engine/ct_model_ops.h \
	engine/ct_model_ops_gpt2.c engine/ct_model_ops_llama.c \
	engine/ct_gpt2.c engine/ct_gpt2.h engine/ct_base.c engine/ct_base.h \
	engine/ct_lora.c engine/ct_lora.h engine/ct_lora_init.c \
	engine/ct_lora_model.c engine/ct_lora_model.h \
	engine/ct_layers.c engine/ct_model.c engine/ct_model.h \
	engine/ct_attention.c \
	engine/ct_llama.c engine/ct_llama.h engine/ct_llama_layers.c \
	engine/ct_llama_model.c engine/ct_llama_hf.c engine/ct_llama_hf.h \
	engine/ct_gpt2_hf.c engine/ct_gpt2_hf.h \
	engine/ct_gguf_model.c engine/ct_gguf_model.h \
	engine/ct_cpu_backend.c \
	engine/ct_engine.c engine/ct_engine.h
engine_libctengine_a_SOURCES += engine/ct_sample.c engine/ct_sample.h \
	engine/ct_chat_reply.c engine/ct_chat_reply.h
# LoRA jobs beyond the engine: the exact merge of K shards' adapters and
# the adapter result file.
engine_libctengine_a_SOURCES += engine/ct_lora_merge.c \
	engine/ct_lora_result.c engine/ct_lora_result.h \
	engine/ct_lora_file.c engine/ct_lora_file.h
# Result upload encoding of full and LoRA results.
engine_libctengine_a_SOURCES += \
	engine/ct_delta.c engine/ct_delta.h
# The OpenCL runtime and backend; the kernel sources are kernels/*.cl
# (kernels/local.mk embeds them into this library).
engine_libctengine_a_SOURCES += \
	engine/ct_ocl.c engine/ct_ocl.h \
	engine/ct_ocl_ops.c engine/ct_ocl_ops.h \
	engine/ct_ocl_backend.c \
	engine/ct_ocl_lora.c engine/ct_ocl_lora.h \
	engine/ct_ocl_llama.c engine/ct_ocl_llama.h \
	engine/ct_ocl_weights.c engine/ct_ocl_weights.h \
	engine/ct_ocl_selftest.c engine/ct_ocl_selftest.h \
	engine/ct_ocl_conform.c
# Windows has no OpenCL import library here: OpenCL.dll is loaded at run time.
if CT_WINDOWS
engine_libctengine_a_SOURCES += engine/ct_ocl_dll.c
else
EXTRA_DIST += engine/ct_ocl_dll.c
endif
