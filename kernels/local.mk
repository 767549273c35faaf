# kernels/ rules (included by the top-level Makefile.am): the OpenCL runtime
# and backend (lib/ct_ocl*.c, compiled into lib/libctune.a) and the kernel
# sources, embedded into the binary at build time by tools/embed-cl as the
# generated kernels/ct_kernels.c (in the build tree, so VPATH builds and
# distcheck work). kernels/ct_math.clh (exp/log/tanh shared with the C
# reference) goes first; then every kernels/*.cl.
CT_CL_FILES = \
	kernels/ct_math.clh \
	kernels/matmul.cl \
	kernels/layers.cl \
	kernels/attention.cl \
	kernels/mm_tiled.cl \
	kernels/attn_tiled.cl \
	kernels/reduce_tiled.cl \
	kernels/lora.cl

lib_libctune_a_SOURCES += \
	lib/ct_ocl.c lib/ct_ocl.h \
	lib/ct_ocl_ops.c lib/ct_ocl_ops.h \
	lib/ct_ocl_backend.c \
	lib/ct_ocl_lora.c lib/ct_ocl_lora.h \
	lib/ct_ocl_selftest.c lib/ct_ocl_selftest.h \
	lib/ct_ocl_conform.c
nodist_lib_libctune_a_SOURCES = kernels/ct_kernels.c
BUILT_SOURCES += kernels/ct_kernels.c
CLEANFILES += kernels/ct_kernels.c
EXTRA_DIST += $(CT_CL_FILES) tools/embed-cl

kernels/ct_kernels.c: $(CT_CL_FILES) $(srcdir)/tools/embed-cl
	$(AM_V_GEN)$(MKDIR_P) kernels && \
	$(SHELL) $(srcdir)/tools/embed-cl $@ $(srcdir) $(CT_CL_FILES)
