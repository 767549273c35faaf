/*
 * daemon_fixture.h - the shared fixture of the daemon tests (test_daemons,
 * test_lora_round, test_vrace): a project with a real database, a tiny
 * GPT-2 job's inputs, users with hosts, uploads as the upload handler
 * writes them, and the daemons run until they settle. Every helper fails
 * the running cmocka test on a database error unless it returns a code.
 */
#ifndef CT_DAEMON_FIXTURE_H
#define CT_DAEMON_FIXTURE_H

#include "ct_test.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "data/server.h"
#include "ct_clock.h"
#include "ct_engine.h"
#include "ct_file.h"

#define CT_DFX_PATH 4200	/* size of the path buffers below */

/* The next number in [0, 1) of the xorshift generator whose state is *s. */
double ct_dfx_urand(uint64_t *s);

/* Write a random model of cfg (seed 42) and a learnable token stream
 * (2400 train, 600 eval tokens, drawn from *rng) into dir; their paths go
 * to model, train, eval (CT_DFX_PATH bytes each). Returns 0 or CT_E*. */
int ct_dfx_make_inputs(const struct ct_model_config *cfg, const char *dir, uint64_t *rng,
		       char *model, char *train, char *eval);

/* A new project in a fresh temporary directory (*dir, caller frees through
 * ct_dfx_close) named name, on db_url (NULL: embedded), loaded into srv,
 * its database opened and migrated into *db. keep_stderr: give the
 * embedded server a log directory and keep this process's stderr.
 * Returns 0 or CT_E*. For one program only: it starts the database
 * library, which cannot start again (see ct_dfx_lib_start). */
int ct_dfx_open(const char *name, const char *db_url, int keep_stderr, char **dir,
		struct ct_server *srv, struct ct_db **db);

/* Undo ct_dfx_open: close db, end the library, free srv, remove dir. */
void ct_dfx_close(char *dir, struct ct_server *srv, struct ct_db *db);

/* For a test program whose cases each want their own project and an
 * empty database. MariaDB's embedded server starts once per process (it
 * cannot be started again after ct_db_global_end), so the program starts
 * it once, in a temporary directory (*dir, freed by ct_dfx_lib_end), and
 * each case gets a fresh project directory and a database dropped and
 * migrated anew: nothing a case wrote is seen by the next. Returns 0 or
 * CT_E*. */
int ct_dfx_lib_start(char **dir);
void ct_dfx_lib_end(char *dir);

/* The same as cmocka group setup and teardown (*state holds the dir). */
int ct_dfx_group_setup(void **state);
int ct_dfx_group_teardown(void **state);

/* main() of such a program (group name group_name): run the case functions
 * named, each between case_setup and ct_dfx_case_teardown, all between
 * ct_dfx_group_setup and _teardown; argv[1], when given, runs only the cases
 * whose names match it (cmocka's filter: * and ?), so any case can run
 * alone. Returns cmocka's exit status. */
#define CT_DFX_MAIN(group_name, case_setup, ...) \
	static const struct ct_test_plan ct_dfx_plan = { \
		.group = (group_name), .setup = (case_setup), \
		.teardown = ct_dfx_case_teardown, .group_setup = ct_dfx_group_setup, \
		.group_teardown = ct_dfx_group_teardown, \
	}; \
	CT_TEST_MAIN_WITH(&ct_dfx_plan, __VA_ARGS__)

/* One case's world in such a program: a new project on an empty,
 * migrated database, a fake clock (srv.clock) starting at CT_DFX_T0, a
 * seeded generator and the inputs of a tiny job. A test embeds it in its
 * own fixture, which must not move while the case runs (srv points at
 * clock). */
struct ct_dfx_case {
	char *dir;
	struct ct_server srv;
	struct ct_db *db;
	double t;		/* the fake clock's time: move it to pass time */
	struct ct_clock clock;
	uint64_t rng;
	char model[CT_DFX_PATH], train[CT_DFX_PATH], eval[CT_DFX_PATH];
};

#define CT_DFX_T0 1748736000.0	/* 2025-06-01 00:00:00 UTC */

/* Open c (zeroed) for a project named name with a random model of cfg
 * (ct_dfx_make_inputs). Returns 0, or CT_E* with c closed again. */
int ct_dfx_case_open(struct ct_dfx_case *c, const char *name,
		     const struct ct_model_config *cfg);
void ct_dfx_case_close(struct ct_dfx_case *c);
/* A cmocka teardown for a fixture that embeds struct ct_dfx_case as its
 * FIRST member and was calloc()ed: closes the case, frees *state. */
int ct_dfx_case_teardown(void **state);

/* An unsent result of WU wuid sent to hostid/userid, as the scheduler
 * does it (report deadline a day away); returns its id (asserts). */
int64_t ct_dfx_send(struct ct_db *db, int64_t wuid, int64_t hostid, int64_t userid);

/* A user `name` (email name@example.org, team) with one host (*hostid). */
int64_t ct_dfx_add_user(struct ct_db *db, const char *name, int64_t team, int64_t *hostid);

/* Write data (len bytes) as result rid's upload file; usha (65 bytes, or
 * NULL) gets its SHA-256 in hex, as the upload handler computes it. */
void ct_dfx_upload(const struct ct_server *srv, struct ct_db *db, int64_t rid,
		   const void *data, size_t len, char *usha);

/* A WU's row: id, seed, base model and data hashes, its hyperparameters. */
struct ct_dfx_wu {
	int64_t id;
	uint64_t seed;
	char model_sha[65], data_sha[65];
	struct ct_wu_hparams hp;
};

/* Read WU `shard` of round idx of job jobid into w. */
void ct_dfx_wu_row(struct ct_db *db, int64_t jobid, int idx, int shard, struct ct_dfx_wu *w);

/* Load w's base into *base (caller frees) and run the WU on the CPU
 * reference with hp: returns its n floats (n 0: the base's size), malloc'd. */
float *ct_dfx_wu_run(const struct ct_server *srv, const struct ct_dfx_wu *w,
		     const struct ct_wu_hparams *hp, struct ct_gpt2 *base, size_t n);

/* Run transitioner, validator, assimilator until none has work. */
void ct_dfx_run_daemons(struct ct_server *srv, struct ct_db *db);

/* result rid's validate_state. */
int ct_dfx_vstate(struct ct_db *db, int64_t rid);

/* One integer / double of sql with one int64 argument. */
int64_t ct_dfx_qint(struct ct_db *db, const char *sql, int64_t arg);
double ct_dfx_qdouble(struct ct_db *db, const char *sql, int64_t arg);

#endif
