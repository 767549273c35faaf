/*
 * db_profile.h - where a process's database time goes, statement by
 * statement: with CT_DB_PROFILE set in the environment, every statement
 * db.c runs (by its text, COMMIT included) counts its calls and the
 * thread CPU and wall time spent in it (the embedded server does its work
 * in the calling thread, so that is the database's cost); at
 * ct_db_global_end, or ct_db_profile_dump, the table goes to the file
 * CT_DB_PROFILE names ("-": stderr; ct_options.h), costliest first. A
 * tool for benchmarks (bench_sched); off, it costs a test a statement.
 */
#ifndef CT_DB_PROFILE_H
#define CT_DB_PROFILE_H

#include <stdint.h>

/* A statement's start: 0 when profiling is off, else the clock readings
 * ct_db_profile_end needs. */
struct ct_db_prof_mark {
	int on;
	int64_t cpu_ns, wall_ns;
};

void ct_db_profile_begin(struct ct_db_prof_mark *m);
void ct_db_profile_end(const struct ct_db_prof_mark *m, const char *sql);

/* Write the table (if profiling is on) and empty it. */
void ct_db_profile_dump(void);

#endif
