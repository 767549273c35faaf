# bench/ lo-fi part: lo-fi quality, control and upload tables (bench_lofi,
# in-process on the engine library) and the verification-cost simulation
# (bench_verify). Built by `make`, never run by `make check`.
noinst_PROGRAMS += bench/bench_lofi
bench_bench_lofi_SOURCES = bench/bench_lofi.c bench/ct_corpus.c bench/ct_corpus.h
bench_bench_lofi_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
bench_bench_lofi_LDADD = lib/libctune.a $(CT_DEP_LIBS)
# bench_verify links server/quorum.c for the scheduler's own
# ct_adaptive_decide() (a pure function: no database).
noinst_PROGRAMS += bench/bench_verify
bench_bench_verify_SOURCES = bench/bench_verify.c server/quorum.c server/daemons.h \
	server/trust_rule.c server/trust.h
bench_bench_verify_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS) -I$(top_srcdir)/server
bench_bench_verify_LDADD = lib/libctune.a $(CT_DEP_LIBS)
