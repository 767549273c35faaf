/*
 * roles.c - the role table and the threads that run roles (see roles.h).
 *
 * Every role's entry point is linked in (server/libctserver.a); the table
 * below lists them.
 */
#include "roles.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ct_clock.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "daemons/instance.h"
#include "data/server.h"
#include "web/web.h"	/* ct_stats_export_run_once (the "stats" role) */
#include "validate/credit.h"	/* ct_credit_decay_run_once (the "credit_decay" role) */

const struct ct_role ct_roles[] = {
	{ .name = "http", .run_once = NULL, .idle_ms = 0 },
	{ .name = "transitioner", .run_once = ct_transitioner_run_once, .idle_ms = 1000 },
	{ .name = "validator", .run_once = ct_validator_run_once, .idle_ms = 1000 },
	{ .name = "assimilator", .run_once = ct_assimilator_run_once, .idle_ms = 1000 },
	{ .name = "file_deleter", .run_once = ct_file_deleter_run_once, .idle_ms = 10000 },
	{ .name = "stats", .run_once = ct_stats_export_run_once, .idle_ms = 5000 },
	{ .name = "credit_decay", .run_once = ct_credit_decay_run_once, .idle_ms = 3600000 },
	{ .name = "purge", .run_once = ct_purge_run_once, .idle_ms = 600000 },
	{ .name = NULL },
};

const struct ct_role *ct_role_find(const char *name)
{
	for (const struct ct_role *r = ct_roles; r->name; r++)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

struct role_thread {
	struct ct_server *srv;
	const struct ct_role *role;
	pthread_t tid;
	int started;
	int64_t nruns, nitems;
};

/* Sleep ms, waking early when the server stops. */
static void nap(struct ct_server *srv, int ms)
{
	while (ms > 0 && !ct_server_stopping(srv)) {
		int step = ms < 50 ? ms : 50;
		struct timespec ts = { 0, step * 1000000L };
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

static void heartbeat(struct ct_db *db, struct role_thread *rt, const char *err)
{
	int rc = ct_instance_beat(db, rt->role->name, rt->nruns, rt->nitems, err);

	if (rc < 0)
		ct_log_debug("%s: heartbeat: %s", rt->role->name, ct_errmsg(rc));
}

/* Sleep ms as nap() does, beating every 5 s meanwhile (a role that sleeps
 * an hour, credit_decay, still shows as running). */
static void rest(struct ct_db *db, struct role_thread *rt, int ms, double *last_beat)
{
	while (ms > 0 && !ct_server_stopping(rt->srv)) {
		int step = ms < 5000 ? ms : 5000;

		nap(rt->srv, step);
		ms -= step;
		if (db && ct_clock_mono(rt->srv->clock) - *last_beat >= 5) {
			heartbeat(db, rt, NULL);
			*last_beat = ct_clock_mono(rt->srv->clock);
		}
	}
}

static void *role_main(void *arg)
{
	struct role_thread *rt = arg;
	struct ct_server *srv = rt->srv;
	struct ct_db *db = NULL;
	double last_beat = -1e9;	/* beat at once */
	int rc;

	ct_instance_set_role(rt->role->name);
	while (!ct_server_stopping(srv)) {
		if (db == NULL) {
			rc = ct_db_open(&db, srv->clock);
			if (rc < 0) {
				ct_log_error("%s: database: %s", rt->role->name, ct_errmsg(rc));
				nap(srv, 2000);
				continue;
			}
		}
		rc = rt->role->run_once(srv, db);
		rt->nruns++;
		if (rc > 0)
			rt->nitems += rc;
		if (rc < 0) {
			char msg[256];
			snprintf(msg, sizeof(msg), "%s", ct_errmsg(rc));
			ct_log_error("%s: %s", rt->role->name, msg);
			heartbeat(db, rt, msg);
			if (rc == CT_EDB) {
				ct_db_close(db);
				db = NULL;
			}
			rest(db, rt, rt->role->idle_ms > 1000 ? rt->role->idle_ms : 1000, &last_beat);
			continue;
		}
		if (ct_clock_mono(srv->clock) - last_beat >= 5) {
			heartbeat(db, rt, NULL);
			last_beat = ct_clock_mono(srv->clock);
		}
		if (rc == 0)
			rest(db, rt, rt->role->idle_ms, &last_beat);
	}
	if (db && ct_instance_forget(db, rt->role->name) < 0)
		ct_log_warn("%s: cannot remove its heartbeat", rt->role->name);
	ct_db_close(db);
	return NULL;
}

/* The http role has no thread of its own: beat for it from here until
 * the server stops, then forget it. */
static void http_beats(struct ct_server *srv)
{
	struct role_thread rt = { .srv = srv, .role = &ct_roles[0] };
	struct ct_db *db = NULL;
	double last_beat = -1e9;	/* beat at once */

	while (!ct_server_stopping(srv)) {
		if (db == NULL && ct_db_open(&db, srv->clock) < 0) {
			nap(srv, 2000);
			continue;
		}
		if (ct_clock_mono(srv->clock) - last_beat >= 5) {
			heartbeat(db, &rt, NULL);
			last_beat = ct_clock_mono(srv->clock);
		}
		nap(srv, 200);
	}
	if (db && ct_instance_forget(db, "http") < 0)
		ct_log_warn("http: cannot remove its heartbeat");
	ct_db_close(db);
}

/* Parse "a,b,c" into flags over ct_roles; NULL/"all": every built role. */
static int select_roles(const char *spec, int *want, int nroles)
{
	char buf[256], *save = NULL, *tok;

	for (int i = 0; i < nroles; i++)
		want[i] = spec == NULL || strcmp(spec, "all") == 0 ?
			  (ct_roles[i].run_once != NULL || i == 0) : 0;
	if (spec == NULL || strcmp(spec, "all") == 0)
		return 0;
	if (strlen(spec) >= sizeof(buf))
		return ct_error(CT_EINVAL, "--roles too long");
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct ct_role *r = ct_role_find(tok);
		if (r == NULL)
			return ct_error(CT_EINVAL, "unknown role '%s' (roles: http, transitioner, "
					"validator, assimilator, file_deleter, stats, credit_decay, purge)", tok);
		if (r != &ct_roles[0] && r->run_once == NULL)
			return ct_error(CT_EUNSUPP, "role '%s' is not built into this binary", tok);
		want[r - ct_roles] = 1;
	}
	return 0;
}

int ct_roles_run(struct ct_server *srv, const char *roles)
{
	enum { MAXR = 16 };
	struct role_thread rt[MAXR];
	int want[MAXR], n = 0, rc;

	while (ct_roles[n].name && n < MAXR)
		n++;
	rc = select_roles(roles, want, n);
	if (rc < 0)
		return rc;
	memset(rt, 0, sizeof(rt));
	for (int i = 1; i < n; i++) {	/* 0 is http: started by the caller */
		if (!want[i])
			continue;
		rt[i].srv = srv;
		rt[i].role = &ct_roles[i];
		if (pthread_create(&rt[i].tid, NULL, role_main, &rt[i]) != 0) {
			rc = ct_error(CT_EINTERNAL, "cannot start the %s thread", ct_roles[i].name);
			atomic_store(&srv->stop, 1);
			break;
		}
		rt[i].started = 1;
		ct_log_info("role %s started", ct_roles[i].name);
	}
	if (want[0])
		http_beats(srv);
	while (!ct_server_stopping(srv))
		nap(srv, 200);
	for (int i = 1; i < n; i++)
		if (rt[i].started)
			pthread_join(rt[i].tid, NULL);
	return rc;
}

int ct_roles_wants_http(const char *roles)
{
	int want[16] = { 0 };

	return select_roles(roles, want, 1) == 0 && want[0];
}
