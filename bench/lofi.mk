# bench/ lo-fi part: lo-fi quality, control and upload tables (bench_lofi,
# in-process on the engine library) and the verification-cost simulation
# (bench_verify). Built by `make`, never run by `make check`.
noinst_PROGRAMS += bench/bench_lofi
bench_bench_lofi_SOURCES = bench/bench_lofi.c
bench_bench_lofi_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) -I$(top_srcdir)/server
# the server's cross-shard check (server/validate/robust.c) from server/libctserver.a
bench_bench_lofi_LDADD = bench/libctcorpus.a $(CT_SERVER_LIBS)
# bench_verify links the scheduler's own ct_adaptive_decide() (server/validate/quorum.c,
# a pure function: no database) from server/libctserver.a.
noinst_PROGRAMS += bench/bench_verify
bench_bench_verify_SOURCES = bench/bench_verify.c
bench_bench_verify_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) -I$(top_srcdir)/server
bench_bench_verify_LDADD = $(CT_SERVER_LIBS)
# bench_tolerance: the validator's tolerance rule (ct_val_agree, from
# server/libctserver.a) against non-conforming OpenCL builds and small cheats.
noinst_PROGRAMS += bench/bench_tolerance
bench_bench_tolerance_SOURCES = bench/bench_tolerance.c
bench_bench_tolerance_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) -I$(top_srcdir)/server
bench_bench_tolerance_LDADD = bench/libctcorpus.a $(CT_SERVER_LIBS)
