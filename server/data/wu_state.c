/*
 * wu_state.c - the work unit's and the round's lifecycles (see
 * wu_state.h): the tables of allowed moves and the one statement per kind
 * of move that writes round.status and workunit's state columns.
 */
#include <inttypes.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "result_state.h"
#include "wu_state.h"

/* ---- round.status ------------------------------------------------------ */

const struct ct_state_edge ct_round_edges[] = {
	{ CT_ROUND_OPEN, CT_ROUND_DONE },
	{ CT_ROUND_OPEN, CT_ROUND_ERROR },
	{ CT_ROUND_OPEN, CT_ROUND_CANCELED },
};
const size_t ct_round_nedges = sizeof(ct_round_edges) / sizeof(ct_round_edges[0]);

int ct_round_move(struct ct_db *db, int64_t id, int from, int to,
		  const struct ct_round_change *c)
{
	if (!ct_state_edge_allowed(ct_round_edges, ct_round_nedges, from, to))
		return ct_error(CT_ESTATE, "round %" PRId64 ": no move from %d to %d", id, from,
				to);
	switch (to) {
	case CT_ROUND_DONE:
		return CT_DB_EXEC(db, "UPDATE `round` SET status=?, out_model_sha256=?, "
				  "eval_loss=?, base_eval_loss=?, finish_time=?, nwus_done=IF(?>0, ?, nwus) "
				  "WHERE id=? AND status=?", to, c->out_sha ? c->out_sha : "",
				  c->eval_loss, c->base_loss, c->now, c->nin, c->nin, id, from);
	case CT_ROUND_CANCELED:
		return CT_DB_EXEC(db, "UPDATE `round` SET status=?, finish_time=? WHERE id=? AND "
				  "status=?", to, c->now, id, from);
	default:
		return CT_DB_EXEC(db, "UPDATE `round` SET status=? WHERE id=? AND status=?", to,
				  id, from);
	}
}

int ct_round_cancel_job(struct ct_db *db, int64_t jobid)
{
	return CT_DB_EXEC(db, "UPDATE `round` SET status=? WHERE jobid=? AND status=?",
			  CT_ROUND_CANCELED, jobid, CT_ROUND_OPEN);
}

/* ---- the work unit ------------------------------------------------------ */

/* ct_wu_state_of() in SQL, for the guard of every move. */
#define WU_STATE "(CASE WHEN assimilate_state=2 THEN 4 WHEN assimilate_state=1 THEN 3 " \
	"WHEN error_mask<>0 THEN 2 WHEN canonical_resultid<>0 THEN 1 ELSE 0 END)"
_Static_assert(CT_AS_DONE == 2 && CT_AS_READY == 1 && CT_WU_DONE == 4 && CT_WU_READY == 3 &&
	       CT_WU_FAILED == 2 && CT_WU_DECIDED == 1 && CT_WU_OPEN == 0,
	       "WU_STATE spells these codes");

enum ct_wu_state ct_wu_state_of(int64_t canonical, int error_mask, int assimilate_state)
{
	if (assimilate_state == CT_AS_DONE)
		return CT_WU_DONE;
	if (assimilate_state == CT_AS_READY)
		return CT_WU_READY;
	if (error_mask != 0)
		return CT_WU_FAILED;
	return canonical != 0 ? CT_WU_DECIDED : CT_WU_OPEN;
}

static const struct ct_dl_col wu_cols[] = {
	CT_DL_COL(struct ct_wu_row, canonical), CT_DL_COL(struct ct_wu_row, transition_time),
	CT_DL_COL(struct ct_wu_row, credit), CT_DL_COL(struct ct_wu_row, error_mask),
	CT_DL_COL(struct ct_wu_row, assimilate_state), CT_DL_COL(struct ct_wu_row, need_validate),
	CT_DL_COL(struct ct_wu_row, file_delete_state),
};

int ct_wu_get(struct ct_db *db, int64_t id, struct ct_wu_row *w)
{
	return CT_DL_ONE(db, w, wu_cols, "SELECT canonical_resultid, transition_time, "
			 "canonical_credit, error_mask, assimilate_state, need_validate, "
			 "file_delete_state FROM workunit WHERE id=?", id);
}

const struct ct_state_edge ct_wu_edges[] = {
	{ CT_WU_OPEN, CT_WU_FAILED },	 /* caps, canceled */
	{ CT_WU_OPEN, CT_WU_READY },	 /* the validator's canonical result */
	{ CT_WU_DECIDED, CT_WU_READY },	 /* handed over by the transitioner */
	{ CT_WU_FAILED, CT_WU_READY },	 /* handed over by the transitioner */
	{ CT_WU_READY, CT_WU_DONE },	 /* assimilated */
	{ CT_WU_READY, CT_WU_OPEN },	 /* set aside */
};
const size_t ct_wu_nedges = sizeof(ct_wu_edges) / sizeof(ct_wu_edges[0]);

static int wu_allowed(int from, int to)
{
	return ct_state_edge_allowed(ct_wu_edges, ct_wu_nedges, from, to);
}

static int set_aside(struct ct_db *db, int64_t id, const struct ct_wu_change *c)
{
	return CT_DB_EXEC(db, "UPDATE workunit SET canonical_resultid=0, canonical_credit=0, "
			  "assimilate_state=?, need_validate=0, transition_time=?, "
			  "min_quorum=GREATEST(min_quorum, 2), "
			  "target_nresults=GREATEST(target_nresults, 2), "
			  "max_success_results=max_success_results+?, "
			  "max_total_results=max_total_results+? WHERE id=? AND error_mask=0 AND "
			  WU_STATE "=?", CT_AS_INIT, c->now, c->extra, c->extra + 2, id,
			  CT_WU_READY);
}

int ct_wu_move(struct ct_db *db, int64_t id, enum ct_wu_state from, enum ct_wu_state to,
	       const struct ct_wu_change *c)
{
	if (!wu_allowed(from, to))
		return ct_error(CT_ESTATE, "work unit %" PRId64 ": no move from %d to %d", id,
				(int)from, (int)to);
	if (from == CT_WU_OPEN && to == CT_WU_FAILED)
		return CT_DB_EXEC(db, "UPDATE workunit SET error_mask=error_mask|?, "
				  "transition_time=? WHERE id=? AND " WU_STATE "=?",
				  c->error_bits, c->now, id, (int)from);
	if (from == CT_WU_OPEN)	/* -> READY */
		return CT_DB_EXEC(db, "UPDATE workunit SET canonical_resultid=?, "
				  "canonical_credit=?, rsc_fpops=?, assimilate_state=? WHERE id=? "
				  "AND " WU_STATE "=?", c->resultid, c->credit, c->flops,
				  CT_AS_READY, id, (int)from);
	if (to == CT_WU_READY)
		return CT_DB_EXEC(db, "UPDATE workunit SET assimilate_state=? WHERE id=? AND "
				  WU_STATE "=?", CT_AS_READY, id, (int)from);
	if (to == CT_WU_DONE)
		return CT_DB_EXEC(db, "UPDATE workunit SET assimilate_state=?, transition_time=? "
				  "WHERE id=? AND " WU_STATE "=?", CT_AS_DONE, c->now, id,
				  (int)from);
	return set_aside(db, id, c);
}

/* 1 if the table has the move and it goes forward (the states are in the
 * order of progress; set aside is the one move back, not a pass's). */
static int forward(int from, int to)
{
	return to > from && wu_allowed(from, to);
}

/* 1 if a pass may take a WU from `from` to `to`: staying, or one or two
 * forward moves of the table. */
static int pass_reaches(enum ct_wu_state from, enum ct_wu_state to)
{
	if (from == to || forward(from, to))
		return 1;
	for (int m = 0; m < CT_WU_NSTATES; m++)
		if (forward(from, m) && forward(m, to))
			return 1;
	return 0;
}

int ct_wu_store_pass(struct ct_db *db, int64_t id, enum ct_wu_state from, int fd_from,
		     const struct ct_wu_pass *p)
{
	enum ct_wu_state to = ct_wu_state_of(p->canonical, p->error_mask, p->assimilate_state);

	if (!pass_reaches(from, to) ||
	    (p->file_delete_state != fd_from &&
	     !(fd_from == CT_FD_INIT && p->file_delete_state == CT_FD_READY)))
		return ct_error(CT_ESTATE, "work unit %" PRId64 ": no pass from %d to %d (files "
				"%d to %d)", id, (int)from, (int)to, fd_from,
				p->file_delete_state);
	return CT_DB_EXEC(db, "UPDATE workunit SET transition_time=?, error_mask=?, "
			  "need_validate=?, assimilate_state=?, file_delete_state=? WHERE id=? "
			  "AND " WU_STATE "=?", p->transition_time, p->error_mask,
			  p->need_validate, p->assimilate_state, p->file_delete_state, id,
			  (int)from);
}

int ct_wu_need_validate(struct ct_db *db, int64_t id, int on, int64_t when)
{
	if (when < 0)
		return CT_DB_EXEC(db, "UPDATE workunit SET need_validate=? WHERE id=?", on, id);
	return CT_DB_EXEC(db, "UPDATE workunit SET need_validate=?, transition_time=? "
			  "WHERE id=?", on, when, id);
}

int ct_wu_cancel_job(struct ct_db *db, int64_t jobid, int64_t now)
{
	return CT_DB_EXEC(db, "UPDATE workunit SET error_mask=error_mask|?, transition_time=? "
			  "WHERE jobid=? AND canonical_resultid=0", CT_WU_ERR_CANCELED, now,
			  jobid);
}

int ct_wu_abandon_round(struct ct_db *db, int64_t roundid, int64_t now)
{
	int rc = CT_DB_EXEC(db, "UPDATE workunit SET error_mask=error_mask|?, transition_time=? "
			    "WHERE roundid=? AND assimilate_state=? AND error_mask=0",
			    CT_WU_ERR_CANCELED, now, roundid, CT_AS_INIT);
	int n = rc;

	if (rc >= 0)
		rc = ct_res_drop_unsent_round(db, roundid);
	return rc < 0 ? rc : n;
}

int ct_wu_done_ready(struct ct_db *db, int64_t roundid, int64_t now)
{
	if (roundid == 0)
		return CT_DB_EXEC(db, "UPDATE workunit SET assimilate_state=?, transition_time=? "
				  "WHERE assimilate_state=? AND error_mask<>0", CT_AS_DONE, now,
				  CT_AS_READY);
	return CT_DB_EXEC(db, "UPDATE workunit SET assimilate_state=?, transition_time=? "
			  "WHERE roundid=? AND assimilate_state=?", CT_AS_DONE, now, roundid,
			  CT_AS_READY);
}

int ct_wu_files_done(struct ct_db *db)
{
	return CT_DB_EXEC(db, "UPDATE workunit SET file_delete_state=? WHERE "
			  "file_delete_state=? AND NOT EXISTS (SELECT 1 FROM result r WHERE "
			  "r.workunitid = workunit.id AND r.file_delete_state IN (?, ?))",
			  CT_FD_DONE, CT_FD_READY, CT_FD_INIT, CT_FD_READY);
}

int ct_wu_wake_ids(struct ct_db *db, const int64_t *ids, int n, int64_t when, int least)
{
	struct ct_db_arg a[CT_DL_IN_MAX + 1];
	char sql[384];
	int m, rc = 0;

	for (int k = 0; rc >= 0 && k < n; k += CT_DL_IN_MAX) {
		int cnt = n - k < CT_DL_IN_MAX ? n - k : CT_DL_IN_MAX;

		rc = ct_dl_in_list(sql, sizeof(sql), least ? "UPDATE workunit SET transition_time="
				   "LEAST(transition_time, ?) WHERE id IN (" : "UPDATE workunit SET "
				   "transition_time=? WHERE id IN (", ")", cnt, &m);
		a[0] = ct_db_arg_l(when);
		ct_dl_in_ids(a + 1, ids + k, cnt, m);
		if (rc == 0)
			rc = ct_db_execa(db, sql, a, (size_t)m + 1);
	}
	return rc < 0 ? rc : 0;
}

/* ---- state names -------------------------------------------------------- */

const char *ct_round_status_name(int s)
{
	static const char *const names[] = { "?", "open", "done", "error", "canceled" };

	return s >= 0 && s < 5 ? names[s] : "?";
}
