/*
 * web_fixture.h - a populated project for the web tests, made only through
 * the server's own functions: `ctune-server init`'s ct_project_init, the
 * account module (ct_account_create, as POST /rpc/account does), a real job
 * (ct_wg_submit of a tiny random GPT-2 and token files), real scheduler
 * RPCs (ct_sched_rpc: hosts register with their devices and receive
 * results) and the validator's credit call (ct_credit_grant) on those
 * results, spread over past days so credit histories have several points.
 *
 * The only SQL the fixture runs itself is SELECTs (to find the results a
 * host was sent, and the totals the tests compare against).
 */
#ifndef CT_WEB_FIXTURE_H
#define CT_WEB_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/server_open.h"
#include "data/server.h"

struct ct_db;

#define WEB_FX_MAX_USERS 8

struct web_fx_user {
	char name[80];
	char email[80];
	char password[40];
	char key[33];
	int64_t id, hostid;
	double credit;		/* granted in total */
	int nresults;		/* results credited */
};

struct web_fx {
	char dir[4096];			/* the project directory */
	struct ct_server srv;
	struct ct_db *db;
	int64_t jobid;
	size_t nusers;
	struct web_fx_user users[WEB_FX_MAX_USERS];
};

/* Make a project in `dir` (must not be a project yet), start the embedded
 * database in it, migrate, and leave fx->db open in this thread. The
 * config gets sched.request_delay = 1 and web.stats_interval = 2 so that
 * real clients and the stats role move quickly in tests. Returns 0 or a
 * CT_E* code (with a detail). */
int web_fx_open(struct web_fx *fx, const char *dir);

/* Populate: `n` users (the first one named "<script>alert(1)</script>"),
 * one job, one host per user, and credit: user i gets credit_unit *
 * (i + 1) per result on up to 3 results, granted on different days. */
int web_fx_seed(struct web_fx *fx, size_t n, double credit_unit);

/* Submit one more job on the fixture's tiny model and token files (made
 * by web_fx_seed): `shards` x `rounds`, `replicas` results per WU, quorum
 * 2, 2 steps per WU. */
int web_fx_submit(struct web_fx *fx, const char *name, int shards, int rounds,
		  int replicas, int64_t *jobid);

/* Close the connection and the embedded database. */
void web_fx_close(struct web_fx *fx);

#endif
