/*
 * test_wu_state.c - the work unit's and the round's state machines
 * (wu_state.h) on the embedded server in a temporary directory. Both tables
 * are walked pair by pair: every allowed move succeeds and writes what its
 * edge says, every other is refused and changes nothing; the SQL guard and
 * ct_wu_state_of() name the same state; the transitioner's pass, the flag
 * and the bulk moves do what their contracts say.
 */
#include "ct_test_db.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ct_err.h"
#include "data/db.h"
#include "data/db_args.h"
#include "data/dl.h"
#include "data/dl_round.h"
#include "data/result_state.h"
#include "data/wu_state.h"

#define g_db (ct_test_dbs()->db)

/* ---- rounds ----------------------------------------------------------------- */

static int64_t new_round(int64_t jobid, int idx, int status)
{
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO `round` (jobid, idx, create_time, "
				    "model_sha256, nwus, status) VALUES (?, ?, 1, 'm', 3, ?)",
				    jobid, idx, status), 1);
	return ct_db_last_id(g_db);
}

/* The one round of job `jobid`, read through the data layer. */
static struct ct_round_row get_round(int64_t jobid)
{
	struct ct_round_row *all = NULL, r;
	size_t n = 0;

	assert_int_equal(ct_round_list(g_db, jobid, &all, &n), 0);
	assert_int_equal(n, 1);
	r = all[0];
	free(all);
	return r;
}

static void test_round_table_walk(void **state)
{
	const struct ct_round_change c = { .now = 40, .out_sha = "avg", .eval_loss = 2.5,
					   .base_loss = 3.0 };
	int nallowed = 0, job = 100;

	(void)state;
	for (int from = CT_ROUND_OPEN; from <= CT_ROUND_CANCELED; from++)
		for (int to = CT_ROUND_OPEN; to <= CT_ROUND_CANCELED; to++, job++) {
			int64_t id = new_round(job, 1, from);
			int ok = ct_state_edge_allowed(ct_round_edges, ct_round_nedges, from,
						   to);
			int rc = ct_round_move(g_db, id, from, to, &c);
			struct ct_round_row r = get_round(job);

			if (!ok) {
				assert_int_equal(rc, CT_ESTATE);
				assert_int_equal(r.status, from);
				assert_true(r.finish_time == 0 && r.nwus_done == 0);
				continue;
			}
			nallowed++;
			assert_int_equal(rc, 1);
			assert_int_equal(r.status, to);
			assert_true(r.finish_time == (to == CT_ROUND_ERROR ? 0 : 40));
			assert_int_equal(r.nwus_done, to == CT_ROUND_DONE ? 3 : 0);
			assert_string_equal(r.out_model_sha256, to == CT_ROUND_DONE ? "avg" : "");
			assert_true(to == CT_ROUND_DONE ? r.eval_loss == 2.5 && r.base_eval_loss == 3.0
							: isnan(r.eval_loss));
			/* the round is not at `from` any more */
			assert_int_equal(ct_round_move(g_db, id, from, to, &c), 0);
		}
	assert_int_equal(nallowed, (int)ct_round_nedges);
	assert_int_equal(nallowed, 3);
}

static void test_round_cancel_job(void **state)
{
	struct ct_round_row *r = NULL;
	size_t n = 0;

	(void)state;
	new_round(2, 1, CT_ROUND_DONE);
	new_round(2, 2, CT_ROUND_OPEN);
	new_round(3, 1, CT_ROUND_OPEN);
	assert_int_equal(ct_round_cancel_job(g_db, 2), 1);
	assert_int_equal(ct_round_list(g_db, 2, &r, &n), 0);
	assert_true(n == 2 && r[0].status == CT_ROUND_DONE && r[1].status == CT_ROUND_CANCELED);
	free(r);
	assert_int_equal(get_round(3).status, CT_ROUND_OPEN);
}

/* ---- work units ------------------------------------------------------------ */

/* The columns of each state as the fixture writes them. */
static const struct {
	int64_t canonical;
	int error_mask, assimilate_state;
} wu_fix[CT_WU_NSTATES] = {
	[CT_WU_OPEN] = { 0, 0, CT_AS_INIT },
	[CT_WU_DECIDED] = { 7, 0, CT_AS_INIT },
	[CT_WU_FAILED] = { 0, CT_WU_ERR_TOO_MANY_ERRORS, CT_AS_INIT },
	[CT_WU_READY] = { 7, 0, CT_AS_READY },
	[CT_WU_DONE] = { 7, 0, CT_AS_DONE },
};

/* A WU of job `jobid`, round `roundid` in state s (columns written
 * directly, as a fixture): min_quorum 1, target 1, caps 3 and 4, due at 1,
 * need_validate 1. */
static int64_t new_wu(int64_t jobid, int64_t roundid, enum ct_wu_state s)
{
	static int seq;
	char name[32];

	snprintf(name, sizeof(name), "wu-%d", seq++);
	assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO workunit (create_time, name, jobid, "
				    "roundid, round_idx, shard, seed, model_sha256, model_size, "
				    "data_sha256, data_size, data_tokens, target_nresults, min_quorum, "
				    "max_error_results, max_total_results, max_success_results, "
				    "delay_bound, transition_time, canonical_resultid, error_mask, "
				    "assimilate_state, need_validate, canonical_credit) VALUES (1, ?, "
				    "?, ?, 1, 0, 1, 'm', 1, 'd', 1, 1, 1, 1, 3, 4, 3, 100, 1, ?, ?, ?, "
				    "1, ?)", name, jobid, roundid, wu_fix[s].canonical,
				    wu_fix[s].error_mask, wu_fix[s].assimilate_state,
				    wu_fix[s].canonical ? 5.0 : 0.0), 1);
	return ct_db_last_id(g_db);
}

static struct ct_wu_row get_wu(int64_t id)
{
	struct ct_wu_row w;

	assert_int_equal(ct_wu_get(g_db, id, &w), 0);
	return w;
}

/* What set aside and the validator's move write beyond the WU's state. */
struct caps {
	double flops;
	int min_quorum, target, max_success, max_total;
};

static const struct ct_dl_col caps_cols[] = {
	CT_DL_COL(struct caps, flops), CT_DL_COL(struct caps, min_quorum),
	CT_DL_COL(struct caps, target), CT_DL_COL(struct caps, max_success),
	CT_DL_COL(struct caps, max_total),
};

static enum ct_wu_state state_of(const struct ct_wu_row *w)
{
	return ct_wu_state_of(w->canonical, w->error_mask, w->assimilate_state);
}

static enum ct_wu_state wu_state(int64_t id)
{
	struct ct_wu_row w = get_wu(id);

	return state_of(&w);
}

/* What the move from -> to of WU `id` must have written besides the state
 * columns. */
static void check_wu_extras(int64_t id, enum ct_wu_state from, enum ct_wu_state to)
{
	int aside = from == CT_WU_READY && to == CT_WU_OPEN;
	struct ct_wu_row w = get_wu(id);
	struct caps c;

	assert_int_equal(CT_DL_ONE(g_db, &c, caps_cols, "SELECT rsc_fpops, min_quorum, "
				   "target_nresults, max_success_results, max_total_results FROM "
				   "workunit WHERE id=?", id), 0);
	assert_true(w.transition_time == (to == CT_WU_DONE || aside ||
					  to == CT_WU_FAILED ? 60 : 1));
	if (from == CT_WU_OPEN && to == CT_WU_READY)
		assert_true(w.canonical == 21 && w.credit == 1.5 && c.flops == 1e12);
	if (to == CT_WU_FAILED)
		assert_int_equal(w.error_mask, CT_WU_ERR_TOO_MANY_TOTAL);
	assert_int_equal(w.need_validate, aside ? 0 : 1);
	assert_true(aside ? w.credit == 0 && c.min_quorum == 2 && c.target == 2 &&
			    c.max_success == 5 && c.max_total == 8
			  : c.min_quorum == 1 && c.max_total == 4);
}

static void test_wu_table_walk(void **state)
{
	const struct ct_wu_change c = { .now = 60, .resultid = 21, .credit = 1.5,
					.flops = 1e12, .error_bits = CT_WU_ERR_TOO_MANY_TOTAL,
					.extra = 2 };
	size_t nallowed = 0;

	(void)state;
	for (int from = 0; from < CT_WU_NSTATES; from++)
		for (int to = 0; to < CT_WU_NSTATES; to++) {
			int64_t id = new_wu(10, 10, from);
			int ok = ct_state_edge_allowed(ct_wu_edges, ct_wu_nedges, from, to);
			int rc = ct_wu_move(g_db, id, from, to, &c);
			struct ct_wu_row w = get_wu(id);

			assert_int_equal(rc, ok ? 1 : CT_ESTATE);
			assert_int_equal(state_of(&w), ok ? to : from);
			if (!ok) {
				assert_true(w.transition_time == 1 && w.need_validate == 1);
				continue;
			}
			nallowed++;
			check_wu_extras(id, from, to);
			/* the row's state is the guard: the same move again is 0 */
			assert_int_equal(ct_wu_move(g_db, id, from, to, &c), 0);
		}
	assert_int_equal(nallowed, ct_wu_nedges);
	assert_int_equal(nallowed, 6);
}

/* The SQL guard of each move names the same state as ct_wu_state_of: a
 * move from a state the row is not in writes nothing. */
static void test_wu_guard_matches(void **state)
{
	const struct ct_wu_change c = { .now = 60, .error_bits = 1 };

	(void)state;
	for (int s = 0; s < CT_WU_NSTATES; s++)
		for (size_t e = 0; e < ct_wu_nedges; e++) {
			int64_t id = new_wu(11, 11, s);
			int from = ct_wu_edges[e].from, to = ct_wu_edges[e].to;

			assert_int_equal(ct_wu_move(g_db, id, from, to, &c), from == s ? 1 : 0);
			assert_int_equal(wu_state(id), from == s ? to : s);
		}
}

static void test_wu_pass(void **state)
{
	int64_t id = new_wu(12, 12, CT_WU_OPEN);
	struct ct_wu_pass p = { .transition_time = 77, .error_mask = CT_WU_ERR_CANCELED,
				.assimilate_state = CT_AS_READY,
				.file_delete_state = CT_FD_INIT };
	struct ct_wu_row w;

	(void)state;
	/* OPEN -> FAILED -> READY in one pass */
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_OPEN, CT_FD_INIT, &p), 1);
	w = get_wu(id);
	assert_true(state_of(&w) == CT_WU_READY && w.transition_time == 77 &&
		    w.need_validate == 0 && w.error_mask == CT_WU_ERR_CANCELED);
	/* read in a state the row is not in: nothing written */
	p.transition_time = 78;
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_OPEN, CT_FD_INIT, &p), 0);
	assert_true(get_wu(id).transition_time == 77);
	/* files may become deletable */
	p.file_delete_state = CT_FD_READY;
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_READY, CT_FD_INIT, &p), 1);
	assert_int_equal(get_wu(id).file_delete_state, CT_FD_READY);
	/* refused: READY back to FAILED, DONE to anything, files backwards */
	p.assimilate_state = CT_AS_INIT;
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_READY, CT_FD_READY, &p), CT_ESTATE);
	p.assimilate_state = CT_AS_READY;
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_DONE, CT_FD_READY, &p), CT_ESTATE);
	p.file_delete_state = CT_FD_INIT;
	assert_int_equal(ct_wu_store_pass(g_db, id, CT_WU_READY, CT_FD_READY, &p), CT_ESTATE);
	w = get_wu(id);
	assert_true(state_of(&w) == CT_WU_READY && w.file_delete_state == CT_FD_READY &&
		    w.transition_time == 78);
}

static void test_wu_flag_and_bulk(void **state)
{
	int64_t open = new_wu(13, 13, CT_WU_OPEN), canon = new_wu(13, 13, CT_WU_READY);
	int64_t failed = new_wu(13, 14, CT_WU_FAILED), other = new_wu(14, 15, CT_WU_READY);
	struct ct_wu_row w;

	(void)state;
	assert_int_equal(ct_wu_need_validate(g_db, open, 0, -1), 1);
	w = get_wu(open);
	assert_true(w.need_validate == 0 && w.transition_time == 1);
	assert_int_equal(ct_wu_need_validate(g_db, open, 1, 30), 1);
	w = get_wu(open);
	assert_true(w.need_validate == 1 && w.transition_time == 30);

	/* cancel: every WU of the job without a canonical result gets the bit */
	assert_int_equal(ct_wu_cancel_job(g_db, 13, 50), 2);
	w = get_wu(open);
	assert_true(state_of(&w) == CT_WU_FAILED && w.error_mask == CT_WU_ERR_CANCELED &&
		    w.transition_time == 50);
	assert_int_equal(get_wu(failed).error_mask,
			 CT_WU_ERR_TOO_MANY_ERRORS | CT_WU_ERR_CANCELED);
	assert_int_equal(get_wu(canon).error_mask, 0);

	/* READY -> DONE: a round's WUs; then every failed one */
	assert_int_equal(ct_wu_done_ready(g_db, 13, 70), 1);
	assert_int_equal(wu_state(canon), CT_WU_DONE);
	assert_int_equal(wu_state(open), CT_WU_FAILED);
	assert_int_equal(ct_wu_move(g_db, failed, CT_WU_FAILED, CT_WU_READY,
				    &(struct ct_wu_change){ 0 }), 1);
	assert_true(ct_wu_done_ready(g_db, 0, 71) >= 1);	/* earlier tests' too */
	w = get_wu(failed);
	assert_true(state_of(&w) == CT_WU_DONE && w.transition_time == 71);
	assert_int_equal(wu_state(other), CT_WU_READY);

	/* files: READY -> DONE once none of its results has a file left */
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE workunit SET file_delete_state=? WHERE "
				    "jobid=?", CT_FD_READY, 13), 3);
	assert_int_equal(ct_res_create(g_db, canon, 13, "f-0", 1), 0);
	assert_int_equal(CT_DB_EXEC(g_db, "UPDATE result SET file_delete_state=? WHERE id=?",
				    CT_FD_READY, ct_db_last_id(g_db)), 1);
	assert_true(ct_wu_files_done(g_db) >= 2);	/* earlier tests' too */
	assert_int_equal(get_wu(canon).file_delete_state, CT_FD_READY);
	assert_int_equal(get_wu(open).file_delete_state, CT_FD_DONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_table_walk),
		cmocka_unit_test(test_round_cancel_job),
		cmocka_unit_test(test_wu_table_walk),
		cmocka_unit_test(test_wu_guard_matches),
		cmocka_unit_test(test_wu_pass),
		cmocka_unit_test(test_wu_flag_and_bulk),
	};

	return cmocka_run_group_tests(tests, ct_test_db_setup, ct_test_db_teardown);
}
