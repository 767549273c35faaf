# bench/ rules (included by the top-level Makefile.am)
# Daemons part: averaging and result-delta benchmarks.
noinst_PROGRAMS += bench/bench_avg bench/bench_delta
bench_bench_avg_SOURCES = bench/bench_avg.c
bench_bench_avg_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
bench_bench_delta_SOURCES = bench/bench_delta.c
bench_bench_delta_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
# OpenCL part: kernel and training-step benchmarks (built, never run by make check).
noinst_PROGRAMS += bench/bench_kernels
bench_bench_kernels_SOURCES = bench/bench_kernels.c
bench_bench_kernels_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_kernels_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
noinst_PROGRAMS += bench/bench_train
bench_bench_train_SOURCES = bench/bench_train.c
bench_bench_train_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) \
	-DCT_TORCH_SCRIPT='"$(abs_top_srcdir)/bench/torch_train.py"'
EXTRA_DIST += bench/torch_train.py
bench_bench_train_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
noinst_PROGRAMS += bench/bench_mask
bench_bench_mask_SOURCES = bench/bench_mask.c
bench_bench_mask_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_mask_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
noinst_PROGRAMS += bench/bench_lora
bench_bench_lora_SOURCES = bench/bench_lora.c
bench_bench_lora_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_lora_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
# bench_train's and bench_lora's run options
EXTRA_DIST += bench/ct_bench.h
include bench/corpus.mk
include bench/lofi.mk
# Server part: scheduler load generator (simulated hosts over loopback).
noinst_PROGRAMS += bench/bench_sched
bench_bench_sched_SOURCES = bench/bench_sched.c bench/sched_load.c
EXTRA_DIST += bench/sched_load.h
bench_bench_sched_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS) -I$(top_srcdir)/bench \
	$(CURL_CFLAGS) -I$(top_srcdir)/server
bench_bench_sched_LDADD = server/libctserver.a $(CT_CORE_LIBS) $(MARIADBD_LIBS) $(MHD_LIBS) \
	$(CURL_LIBS) $(CT_DEP_LIBS)
# Server part: averaging a round, the previous way against the streamed mean.
noinst_PROGRAMS += bench/bench_mean
bench_bench_mean_SOURCES = bench/bench_mean.c
bench_bench_mean_CFLAGS = $(CT_SERVER_CFLAGS)
bench_bench_mean_LDADD = $(CT_SERVER_LIBS)
# Server part: what validating one WU costs (time, peak RSS) by shape and quorum.
noinst_PROGRAMS += bench/bench_validate
bench_bench_validate_SOURCES = bench/bench_validate.c
bench_bench_validate_CFLAGS = $(CT_SERVER_CFLAGS)
bench_bench_validate_LDADD = $(CT_SERVER_LIBS)
# Disputes: one segment recomputed from an uploaded state against a third replica.
noinst_PROGRAMS += bench/bench_dispute
bench_bench_dispute_SOURCES = bench/bench_dispute.c
bench_bench_dispute_CFLAGS = $(CT_SERVER_CFLAGS)
bench_bench_dispute_LDADD = $(CT_SERVER_LIBS)
# job export: --hf in f32 / bf16 / f16 and --adapter (server/cmd/job_peft.c).
noinst_PROGRAMS += bench/bench_export
bench_bench_export_SOURCES = bench/bench_export.c
bench_bench_export_CFLAGS = $(CT_SERVER_CFLAGS)
bench_bench_export_LDADD = $(CT_SERVER_LIBS)
# LoRA jobs: upload bytes of a LoRA result vs a full one, and the merge.
noinst_PROGRAMS += bench/bench_lora_upload
bench_bench_lora_upload_SOURCES = bench/bench_lora_upload.c
bench_bench_lora_upload_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_lora_upload_LDADD = bench/libctcorpus.a $(CT_CORE_LIBS) $(CT_DEP_LIBS)
# Tokenizer: encode throughput against tiktoken (bench/bench_tokenizer.sh).
noinst_PROGRAMS += bench/bench_tokenizer
bench_bench_tokenizer_SOURCES = bench/bench_tokenizer.c
bench_bench_tokenizer_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
EXTRA_DIST += bench/bench_tokenizer.sh
# Chat templates: render + encode against @huggingface/jinja (bench/bench_chat.sh).
EXTRA_DIST += bench/bench_chat.sh
# Sampling: tokens/s of `ctune sample` on cpu and opencl.
noinst_PROGRAMS += bench/bench_sample
bench_bench_sample_SOURCES = bench/bench_sample.c
bench_bench_sample_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_sample_LDADD = $(CT_CORE_LIBS) $(CT_DEP_LIBS)
EXTRA_DIST += bench/bench_job.sh
EXTRA_DIST += bench/client_duty.sh
# The C reference's training step, Linux vs Wine, per kernel path.
EXTRA_DIST += bench/bench_win_train.sh

# bench/bench_web: page render times with many users (prints a table; built
# by make, never run by make check). It reuses the web tests' fixture.
noinst_PROGRAMS += bench/bench_web
bench_bench_web_SOURCES = bench/bench_web.c
bench_bench_web_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/server -I$(top_srcdir)/test
bench_bench_web_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS)
bench_bench_web_LDADD = test/libctwebfx.a $(CT_SERVER_LIBS)
EXTRA_DIST += bench/bench_web_compare.sh

# bench/bench_dispatch: scheduler RPC time as one volunteer's history grows
# from 1k to 100k results (prints a table, never run by make check).
noinst_PROGRAMS += bench/bench_dispatch
bench_bench_dispatch_SOURCES = bench/bench_dispatch.c
bench_bench_dispatch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/server -I$(top_srcdir)/test
bench_bench_dispatch_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) $(MARIADB_CFLAGS) $(MHD_CFLAGS)
bench_bench_dispatch_LDADD = test/libctwebfx.a $(CT_SERVER_LIBS)

# Scale-out: a validator/assimilator backlog on an external
# database, timed with 1 and 2 instances by bench/bench_daemons.sh.
noinst_PROGRAMS += bench/bench_daemons
bench_bench_daemons_SOURCES = bench/bench_daemons.c
bench_bench_daemons_CFLAGS = $(CT_SERVER_CFLAGS)
bench_bench_daemons_LDADD = $(CT_SERVER_LIBS)
EXTRA_DIST += bench/bench_daemons.sh bench/bench_galera.sh bench/bench_sched_external.sh
