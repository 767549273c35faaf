# kernels/: the OpenCL kernel sources of the engine (engine/ct_ocl*.c runs
# them), embedded into the binary at build time by tools/embed-cl as the
# generated kernels/ct_kernels.c (in the build tree, so VPATH builds and
# distcheck work), compiled into engine/libctengine.a.
# kernels/ct_math.clh (exp/log/tanh shared with the C reference,
# engine/ct_math.h) goes first; then every kernels/*.cl.
CT_CL_FILES = \
	kernels/ct_math.clh \
	kernels/matmul.cl \
	kernels/layers.cl \
	kernels/attention.cl \
	kernels/mm_tiled.cl \
	kernels/attn_tiled.cl \
	kernels/reduce_tiled.cl \
	kernels/lora.cl \
	kernels/llama.cl \
	kernels/matvec.cl \
	kernels/base.cl

nodist_engine_libctengine_a_SOURCES = kernels/ct_kernels.c
BUILT_SOURCES += kernels/ct_kernels.c
CLEANFILES += kernels/ct_kernels.c
EXTRA_DIST += $(CT_CL_FILES) tools/embed-cl

kernels/ct_kernels.c: $(CT_CL_FILES) $(srcdir)/tools/embed-cl
	$(AM_V_GEN)$(MKDIR_P) kernels && \
	$(SHELL) $(srcdir)/tools/embed-cl $@ $(srcdir) $(CT_CL_FILES)
