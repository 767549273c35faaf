/*
 * job_state.h - the job's lifecycle: the only writer of job.status.
 *
 *   (submitted) --> RUNNING --+--> DONE       last round assimilated
 *                             +--> ERROR      a WU failed, or the
 *                             |               submission did
 *                             +--> CANCELED   `ctune-server job cancel`
 *
 * The work generator inserts a job at RUNNING (the column's default); every
 * later change of job.status goes through ct_job_move(), which refuses an
 * edge that is not in the table below (ct_job_edges) and writes, with the
 * status, the columns that edge sets. Other modules may write the job's
 * other columns (cur_round, error_message notices, eval numbers).
 *
 * Every function takes a connection the caller owns; the moves are single
 * statements guarded by the old status, so they may run inside the
 * caller's transaction (ct_job_cancel runs its own).
 */
#ifndef CT_JOB_STATE_H
#define CT_JOB_STATE_H

#include <stddef.h>
#include <stdint.h>

/* ---- state codes (numbers as BOINC's, stored in TINYINT columns) -------- */

/* job.status */
enum ct_job_status {
	CT_JOB_RUNNING = 1,
	CT_JOB_DONE = 2,
	CT_JOB_CANCELED = 3,
	CT_JOB_ERROR = 4,
};

/* "running", "done", ...; "?" for an unknown code. */
const char *ct_job_status_name(int status);


struct ct_db;

/* One allowed change of job.status (enum ct_job_status above). */
struct ct_job_edge {
	int from, to;
};

/* The allowed changes; every other (from, to) pair is refused. */
extern const struct ct_job_edge ct_job_edges[];
extern const size_t ct_job_nedges;

/* 1 if job.status may go from `from` to `to`. */
int ct_job_move_allowed(int from, int to);

/* What a move records beside the status (members the edge does not use are
 * ignored): DONE sets final_model_sha256 = out_sha and final_eval_loss =
 * eval_loss; ERROR puts `msg` in front of error_message
 * ("msg; older", at most 255 characters); DONE and CANCELED set
 * finish_time; every move sets update_time = `now`. */
struct ct_job_change {
	int64_t now;
	const char *out_sha;
	double eval_loss;
	const char *msg;
};

/* Move job `jobid` from status `from` to `to`. Returns 1 when this call
 * moved it, 0 when the job was not at `from` (someone else moved it first,
 * or no such job), CT_ESTATE when the edge is not allowed (nothing is
 * written), or a db error. */
int ct_job_move(struct ct_db *db, int64_t jobid, int from, int to,
		const struct ct_job_change *c);

/* Cancel a running job in one transaction: the job becomes CANCELED, its
 * open rounds CANCELED, its WUs without a canonical result get
 * CT_WU_ERR_CANCELED (the transitioner then ends them), its unsent results
 * are no longer needed (result_state.h). Returns 0, CT_ENOTFOUND (no such
 * job), CT_ESTATE (the job is not running; the detail says what it is) or a
 * db error. */
int ct_job_cancel(struct ct_db *db, int64_t jobid);

#endif
