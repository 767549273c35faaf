/*
 * wu_state.h - the work unit's and the round's lifecycles: the writer of
 * round.status and of workunit's state columns (canonical_resultid with
 * canonical_credit, error_mask, assimilate_state, need_validate,
 * file_delete_state).
 *
 * A round:
 *
 *   (opened by the work generator at OPEN)
 *   OPEN --+--> DONE       assimilator: averaged (out model, losses)
 *          +--> ERROR      transitioner: one of its WUs failed
 *          +--> CANCELED   assimilator: the job stopped; `job cancel`
 *
 * A work unit's state is named from (canonical_resultid, error_mask,
 * assimilate_state) by ct_wu_state_of():
 *
 *   OPEN --canonical result (validator)--> READY --assimilated--> DONE
 *     |                                      ^  \
 *     +--caps, canceled (transitioner)--> FAILED  +--set aside--> OPEN
 *   DECIDED (a canonical result not handed over) --transitioner--> READY
 *   FAILED --handed over (transitioner)--> READY
 *
 * Every move is one UPDATE guarded by the row's old state (as SQL, the
 * same rule as ct_wu_state_of), so it may run inside the caller's
 * transaction after the WU row lock, and a lost race shows as 0 rows.
 * need_validate is a flag beside the state (ct_wu_need_validate);
 * file_delete_state goes INIT -> READY in the transitioner's pass and
 * READY -> DONE by the file deleter (ct_wu_files_done).
 */
#ifndef CT_WU_STATE_H
#define CT_WU_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "state_edge.h"

/* ---- state codes (numbers as BOINC's, stored in TINYINT columns) -------- */

/* workunit.assimilate_state */
enum ct_assimilate_state {
	CT_AS_INIT = 0,
	CT_AS_READY = 1,	/* canonical result found (or WU errored) */
	CT_AS_DONE = 2,
};

/* file_delete_state of workunit, result and `file` */
enum ct_file_delete_state {
	CT_FD_INIT = 0,
	CT_FD_READY = 1,	/* may be deleted (after the grace period) */
	CT_FD_DONE = 2,
	CT_FD_ERROR = 3,
};

/* workunit.error_mask bits */
enum ct_wu_error {
	CT_WU_ERR_COULDNT_SEND = 1,
	CT_WU_ERR_TOO_MANY_ERRORS = 2,
	CT_WU_ERR_TOO_MANY_SUCCESS = 4,
	CT_WU_ERR_TOO_MANY_TOTAL = 8,
	CT_WU_ERR_CANCELED = 16,
};

/* `round`.status */
enum ct_round_status {
	CT_ROUND_OPEN = 1,
	CT_ROUND_DONE = 2,
	CT_ROUND_ERROR = 3,
	CT_ROUND_CANCELED = 4,
};

/* "open", "done", ...; "?" for an unknown code. */
const char *ct_round_status_name(int status);


struct ct_db;

/* ---- round.status ------------------------------------------------------ */

/* The allowed changes of round.status (CT_ROUND_* above); every other
 * (from, to) pair is refused (ct_state_edge_allowed). */
extern const struct ct_state_edge ct_round_edges[];
extern const size_t ct_round_nedges;

/* What a move records beside the status: DONE sets out_model_sha256 =
 * out_sha, eval_loss, base_eval_loss, finish_time = now and nwus_done =
 * nin (the WUs in the aggregate; 0: nwus); CANCELED sets finish_time =
 * now; ERROR nothing else. */
struct ct_round_change {
	int64_t now;
	const char *out_sha;
	double eval_loss, base_loss;
	int nin;
};

/* Move round `id` from `from` to `to`. Returns 1 when this call moved it,
 * 0 when the round was not at `from`, CT_ESTATE for a move not in the
 * table (nothing written), or a db error. */
int ct_round_move(struct ct_db *db, int64_t id, int from, int to,
		  const struct ct_round_change *c);

/* OPEN -> CANCELED for every open round of job `jobid` (the status only,
 * as `job cancel` writes it). Returns the rounds moved or a db error. */
int ct_round_cancel_job(struct ct_db *db, int64_t jobid);

/* A round closed without some of its WUs (job.round_quorum): every WU of
 * round `roundid` not yet handed to the assimilator (OPEN, DECIDED) is
 * abandoned as a canceled one (error_mask CT_WU_ERR_CANCELED: the
 * transitioner hands it over, the scheduler tells its hosts to stop) and
 * its unsent results are not needed. Returns the WUs abandoned or a db
 * error; in the caller's transaction. */
int ct_wu_abandon_round(struct ct_db *db, int64_t roundid, int64_t now);

/* ---- the work unit ------------------------------------------------------ */

enum ct_wu_state {
	CT_WU_OPEN,	/* no canonical result, no error, assimilate INIT */
	CT_WU_DECIDED,	/* a canonical result, assimilate INIT */
	CT_WU_FAILED,	/* error_mask != 0, assimilate INIT */
	CT_WU_READY,	/* assimilate READY: for the assimilator */
	CT_WU_DONE,	/* assimilate DONE */
	CT_WU_NSTATES
};

/* The state of a WU with these columns. */
enum ct_wu_state ct_wu_state_of(int64_t canonical, int error_mask, int assimilate_state);

/* The columns of a WU this module writes (the state, the flag, when the
 * transitioner looks next). */
struct ct_wu_row {
	int64_t canonical, transition_time;
	double credit;
	int error_mask, assimilate_state, need_validate, file_delete_state;
};

/* Read WU `id` (no lock). Returns 0, CT_ENOTFOUND or a db error. */
int ct_wu_get(struct ct_db *db, int64_t id, struct ct_wu_row *w);

/* The allowed moves of a WU in one step; every other is refused. */
extern const struct ct_state_edge ct_wu_edges[];
extern const size_t ct_wu_nedges;

/* What a move records (members the edge does not use are ignored):
 *   OPEN -> FAILED:   error_mask |= error_bits, transition_time = now
 *   OPEN -> READY:    canonical_resultid = resultid, canonical_credit =
 *                     credit, rsc_fpops = flops (the validator)
 *   -> READY otherwise: nothing else
 *   READY -> DONE:    transition_time = now
 *   READY -> OPEN:    the canonical result withdrawn (set aside):
 *                     canonical_credit = 0, need_validate = 0,
 *                     transition_time = now, min_quorum and
 *                     target_nresults at least 2, max_success_results +=
 *                     extra, max_total_results += extra + 2 (the server's
 *                     own doing does not spend the WU's caps) */
struct ct_wu_change {
	int64_t now, resultid;
	double credit, flops;
	int error_bits, extra;
};

/* Move WU `id` from `from` to `to`. Returns 1 when this call moved it, 0
 * when the WU was not in `from`, CT_ESTATE for a move not in the table
 * (nothing written), or a db error. */
int ct_wu_move(struct ct_db *db, int64_t id, enum ct_wu_state from, enum ct_wu_state to,
	       const struct ct_wu_change *c);

/* The transitioner's pass over a locked WU: what it read (`from`, its
 * canonical result) and what it decided, written in one statement. The
 * state may stay or follow up to two forward edges of the table (OPEN ->
 * FAILED -> READY in one pass; never set aside); file_delete_state may only
 * stay or go INIT -> READY. */
struct ct_wu_pass {
	int64_t canonical, transition_time;
	int error_mask, assimilate_state, need_validate, file_delete_state;
};

/* Write the pass `p` of WU `id` read in state `from` with
 * file_delete_state `fd_from`. Returns 1 when written, 0 when the WU was
 * not in `from` any more, CT_ESTATE when the pass would take a path the
 * tables do not allow (nothing written), or a db error. */
int ct_wu_store_pass(struct ct_db *db, int64_t id, enum ct_wu_state from, int fd_from,
		     const struct ct_wu_pass *p);

/* transition_time := when (least: LEAST(transition_time, when), never
 * later than it was) for the WUs ids[0..n) (any n; CT_DL_IN_MAX a
 * statement): the transitioner looks at them then. Returns 0 or a db
 * error. */
int ct_wu_wake_ids(struct ct_db *db, const int64_t *ids, int n, int64_t when, int least);

/* need_validate := on; transition_time := when unless when < 0. Returns
 * the rows changed or a db error. */
int ct_wu_need_validate(struct ct_db *db, int64_t id, int on, int64_t when);

/* `job cancel`: OPEN -> FAILED with CT_WU_ERR_CANCELED for each WU of job
 * `jobid` without a canonical result (a failed one gets the bit too), due
 * at `now`. Returns the WUs changed or a db error. */
int ct_wu_cancel_job(struct ct_db *db, int64_t jobid, int64_t now);

/* READY -> DONE for the WUs of round `roundid` (the assimilator: averaged
 * or dropped), or with roundid 0 for every failed WU (error_mask != 0);
 * due at `now`. Returns the WUs moved or a db error. */
int ct_wu_done_ready(struct ct_db *db, int64_t roundid, int64_t now);

/* file_delete_state READY -> DONE for each WU none of whose results still
 * has a file to delete (the file deleter). Returns the WUs moved. */
int ct_wu_files_done(struct ct_db *db);

#endif
