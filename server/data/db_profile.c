/*
 * db_profile.c - the statement profile (see db_profile.h): an open
 * addressing table of statement texts under one mutex.
 */
#include "db_profile.h"

#include "ct_options.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROF_SLOTS 1024	/* distinct texts kept; the rest count as "(other)" */

struct prof_entry {
	char *sql;
	uint64_t calls;
	int64_t cpu_ns, wall_ns;
};

static pthread_once_t prof_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t prof_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *prof_path;
static struct prof_entry prof[PROF_SLOTS], prof_other;

static void prof_init(void)
{
	prof_path = ct_opt_str(CT_OPT_DB_PROFILE);	/* NULL: unset or empty */
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ct_db_profile_begin(struct ct_db_prof_mark *m)
{
	pthread_once(&prof_once, prof_init);
	m->on = prof_path != NULL;
	if (m->on) {
		m->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		m->wall_ns = clock_ns(CLOCK_MONOTONIC);
	}
}

static struct prof_entry *slot(const char *sql)
{
	uint64_t h = 1469598103934665603u;	/* FNV-1a */

	for (const char *p = sql; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211u;
	for (size_t i = 0; i < PROF_SLOTS; i++) {
		struct prof_entry *e = &prof[(h + i) % PROF_SLOTS];

		if (e->sql == NULL) {
			e->sql = strdup(sql);
			return e->sql ? e : &prof_other;
		}
		if (strcmp(e->sql, sql) == 0)
			return e;
	}
	return &prof_other;
}

void ct_db_profile_end(const struct ct_db_prof_mark *m, const char *sql)
{
	int64_t cpu, wall;
	struct prof_entry *e;

	if (!m->on)
		return;
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - m->cpu_ns;
	wall = clock_ns(CLOCK_MONOTONIC) - m->wall_ns;
	pthread_mutex_lock(&prof_mu);
	e = slot(sql);
	e->calls++;
	e->cpu_ns += cpu;
	e->wall_ns += wall;
	pthread_mutex_unlock(&prof_mu);
}

static int by_cpu(const void *a, const void *b)
{
	const struct prof_entry *x = *(struct prof_entry *const *)a;
	const struct prof_entry *y = *(struct prof_entry *const *)b;

	return (x->cpu_ns < y->cpu_ns) - (x->cpu_ns > y->cpu_ns);
}

void ct_db_profile_dump(void)
{
	struct prof_entry *list[PROF_SLOTS + 1];
	int64_t total = 0;
	size_t n = 0;
	FILE *f;

	pthread_once(&prof_once, prof_init);
	if (prof_path == NULL)
		return;
	pthread_mutex_lock(&prof_mu);
	for (size_t i = 0; i < PROF_SLOTS; i++)
		if (prof[i].calls > 0)
			list[n++] = &prof[i];
	if (prof_other.calls > 0)
		list[n++] = &prof_other;
	qsort(list, n, sizeof(list[0]), by_cpu);
	for (size_t i = 0; i < n; i++)
		total += list[i]->cpu_ns;
	f = strcmp(prof_path, "-") == 0 ? stderr : fopen(prof_path, "a");
	if (f) {
		fprintf(f, "\nstatements of process %ld (%s)\n\n", (long)getpid(),
			program_invocation_short_name);
		fprintf(f, "| CPU s | %% | calls | CPU us/call | wall us/call | statement |\n"
			"|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < n; i++) {
			const struct prof_entry *e = list[i];

			fprintf(f, "| %.3f | %.1f | %llu | %.1f | %.1f | %.300s |\n",
				e->cpu_ns / 1e9, total ? 100.0 * e->cpu_ns / total : 0,
				(unsigned long long)e->calls, e->cpu_ns / 1e3 / e->calls,
				e->wall_ns / 1e3 / e->calls, e->sql ? e->sql : "(other)");
		}
		if (f != stderr)
			fclose(f);
	}
	for (size_t i = 0; i < PROF_SLOTS; i++) {
		free(prof[i].sql);
		memset(&prof[i], 0, sizeof(prof[i]));
	}
	memset(&prof_other, 0, sizeof(prof_other));
	pthread_mutex_unlock(&prof_mu);
}
