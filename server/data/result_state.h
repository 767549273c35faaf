/*
 * result_state.h - a result's lifecycle: the only writer of result's state
 * columns (server_state, outcome, validate_state; file_delete_state is
 * dl_files.h's, for the transitioner and the file deleter).
 *
 * A result's state is the triple of those columns; the states a result can
 * be in are named (enum ct_res_state) and the allowed moves between them
 * are a table (ct_res_edges) that ct_res_move() checks:
 *
 *   created UNSENT --send--> IN_PROGRESS --report--> REPORTED (success)
 *      |                        +--report error--> CLIENT_ERROR
 *      |                        +--deadline passed--> NO_REPLY
 *      |                        +--WU canceled, host told--> DIDNT_NEED
 *      +--WU done, canceled or adaptive replication--> DIDNT_NEED
 *   REPORTED --validator--> VALID | INVALID | INCONCLUSIVE | TOO_LATE
 *                           | VALIDATE_ERROR, or stays (validate_time set)
 *   INCONCLUSIVE --validator--> VALID | INVALID | VALIDATE_ERROR
 *   VALID --set aside (robust_aside.c)--> INVALID
 *
 * Every move is one UPDATE guarded by the whole old triple, so it may run
 * inside the caller's transaction (lock order as db.h says: the WU row
 * first) and a lost race shows as 0 rows moved.
 */
#ifndef CT_RESULT_STATE_H
#define CT_RESULT_STATE_H

#include <stddef.h>
#include <stdint.h>

/* ---- state codes (numbers as BOINC's, stored in TINYINT columns) -------- */

/* result.server_state */
enum ct_result_server_state {
	CT_RS_UNSENT = 2,	/* waiting for a host */
	CT_RS_IN_PROGRESS = 4,	/* sent, deadline in report_deadline */
	CT_RS_OVER = 5,		/* reported, timed out, or not needed */
};

/* result.outcome (meaningful once server_state = OVER) */
enum ct_result_outcome {
	CT_RO_INIT = 0,
	CT_RO_SUCCESS = 1,		/* uploaded and reported success */
	CT_RO_CLIENT_ERROR = 3,		/* the client reported an error */
	CT_RO_NO_REPLY = 4,		/* deadline passed (transitioner) */
	CT_RO_VALIDATE_ERROR = 6,	/* upload unreadable / failed sanity */
	CT_RO_DIDNT_NEED = 7,		/* WU finished before it was sent */
};

/* result.validate_state */
enum ct_result_validate_state {
	CT_VS_INIT = 0,
	CT_VS_VALID = 1,
	CT_VS_INVALID = 2,
	CT_VS_INCONCLUSIVE = 4,
	CT_VS_TOO_LATE = 5,
};

/* Short lowercase names of the codes ("unsent", "success", ...), for logs,
 * the CLI and the web pages; "?" for an unknown code. */
const char *ct_rs_name(int server_state);
const char *ct_ro_name(int outcome);
const char *ct_vs_name(int validate_state);


struct ct_db;

enum ct_res_state {
	CT_RES_UNSENT,		/* UNSENT, INIT, INIT */
	CT_RES_IN_PROGRESS,	/* IN_PROGRESS, INIT, INIT */
	CT_RES_REPORTED,	/* OVER, SUCCESS, INIT: waits for the validator */
	CT_RES_CLIENT_ERROR,	/* OVER, CLIENT_ERROR, INIT */
	CT_RES_NO_REPLY,	/* OVER, NO_REPLY, INIT */
	CT_RES_DIDNT_NEED,	/* OVER, DIDNT_NEED, INIT */
	CT_RES_VALID,		/* OVER, SUCCESS, VALID */
	CT_RES_INVALID,		/* OVER, SUCCESS, INVALID */
	CT_RES_INCONCLUSIVE,	/* OVER, SUCCESS, INCONCLUSIVE */
	CT_RES_TOO_LATE,	/* OVER, SUCCESS, TOO_LATE */
	CT_RES_VALIDATE_ERROR,	/* OVER, VALIDATE_ERROR, INVALID */
	CT_RES_NSTATES
};

/* The column values of each state (the codes above). */
struct ct_res_cols {
	int server_state, outcome, validate_state;
};
extern const struct ct_res_cols ct_res_states[CT_RES_NSTATES];

/* The state of a result reported successfully whose validate_state is vs
 * (what the validator reads), or -1 for a code that names none. */
int ct_res_validated(int vs);

/* One allowed move. */
struct ct_res_edge {
	enum ct_res_state from, to;
};
extern const struct ct_res_edge ct_res_edges[];
extern const size_t ct_res_nedges;

/* 1 if a result may move from `from` to `to`. */
int ct_res_move_allowed(int from, int to);

/* What a move records beside the state columns (members the edge does not
 * use are ignored):
 *   send:          hostid, userid, teamid, sent_time = now, report_deadline
 *   REPORTED:      received_time = now, elapsed_s, final_loss, conforming
 *   CLIENT_ERROR:  received_time = now, elapsed_s, exit_status, error_message
 *   validator:     validate_time = now; probe_loss and update_norm when
 *                  has_probe; VALIDATE_ERROR: error_message
 *   set aside:     error_message
 * NO_REPLY and DIDNT_NEED record nothing else. */
struct ct_res_change {
	int64_t now;
	int64_t hostid, userid, teamid, deadline;
	/* send: where it went, for the placement rules (eligibility.h):
	 * the network key ("" or NULL: none) and the WU's round */
	const char *sent_net;
	int64_t sent_round;
	int64_t jobid;		/* ct_res_send_many: the results' job */
	double elapsed_s, final_loss;	/* final_loss NAN: none (SQL NULL) */
	int conforming, exit_status;
	const char *error_message;
	int has_probe;
	double probe_loss, update_norm;
};

/* Move result `id` from state `from` to `to`. Returns 1 when this call
 * moved it, 0 when the result was not in `from` (someone else moved it),
 * CT_ESTATE for a move not in the table (nothing written), or a db error. */
int ct_res_move(struct ct_db *db, int64_t id, enum ct_res_state from,
		enum ct_res_state to, const struct ct_res_change *c);

/* UNSENT -> IN_PROGRESS for the results ids[0..n) (1 <= n <= CT_DL_IN_MAX,
 * dl.h), all of job c->jobid, with the one change c (host, account,
 * deadline, network, round): one UPDATE, whose rows the result triggers
 * do not count (migration 047); the counters (round_stat, task_stat) get
 * the rows it moved in one statement each. Returns the number this call
 * moved (a result that was not unsent any more stays as it was), or a db
 * error. Inside the caller's transaction, so that the counters and the
 * rows commit or roll back together. */
int ct_res_send_many(struct ct_db *db, const int64_t *ids, int n, const struct ct_res_change *c);

/* The most reports ct_res_report_many moves in one statement: each row
 * binds 7 parameters and the id list is padded to 4, 8, ... (dl.h), so 4
 * rows' 34 stay within the database layer's 48 and 8 rows' 62 would not. */
#define CT_RES_REPORT_MAX 4

/* IN_PROGRESS -> `to` (CT_RES_REPORTED or CT_RES_CLIENT_ERROR) for the
 * distinct results ids[0..n) (1 <= n <= CT_RES_REPORT_MAX), each with its own
 * change ch[i] (what ct_res_move writes for that move: elapsed time and
 * final loss and conforming, or exit status and error text; the time is
 * ch[0].now; and for the counters its owners hostid and userid, jobid and
 * its round as the triggers take it in sent_round: the row's sent_round,
 * its WU's roundid when that is 0): one UPDATE, whose rows the triggers
 * do not count (migration 047), then round_stat and task_stat one
 * statement each. Returns the number this call moved (a result no longer
 * in progress stays as it was), CT_ESTATE for another `to`, or a db
 * error. When it moved fewer than n the counters are not written: the
 * caller rolls its transaction back (sched_report.c then moves the
 * reports one at a time). */
int ct_res_report_many(struct ct_db *db, enum ct_res_state to, const int64_t *ids,
		       const struct ct_res_change *ch, int n);

/* Insert a new UNSENT result named `name` of WU `wuid` (job `jobid`)
 * created at `now`. Returns 0 or a db error (CT_EDUP: the name exists);
 * the new id is ct_db_last_id(db). */
int ct_res_create(struct ct_db *db, int64_t wuid, int64_t jobid, const char *name,
		  int64_t now);

/* A new result for ct_res_create_many: its WU, job and the WU's round, and
 * its name (borrowed). */
struct ct_res_new {
	int64_t wuid, jobid, roundid;
	const char *name;
};

#define CT_RES_CREATE_CHUNK 12	/* rows an INSERT (4 values a row) */

/* Insert the new UNSENT results v[0..n), created at `now`, by one INSERT
 * a CT_RES_CREATE_CHUNK rows (the insert trigger off, migration 049), and
 * count them in round_stat as the trigger would, one statement a run of
 * rows of one round (so the round's counter row is locked once, last).
 * *done: the rows inserted and counted, v[0..*done), whole chunks. Returns
 * 0 or a db error: CT_EDUP when a name of the next chunk exists (that
 * INSERT did nothing; the transaction goes on: v[*done..n) may be
 * inserted otherwise). */
int ct_res_create_many(struct ct_db *db, const struct ct_res_new *v, int n, int64_t now,
		       int *done);

/* UNSENT -> DIDNT_NEED for every unsent result of WU `wuid` but result
 * `except` (0: none), or of job `jobid`. Return the number moved, or a db
 * error. */
int ct_res_drop_unsent_wu(struct ct_db *db, int64_t wuid, int64_t except);
int ct_res_drop_unsent_job(struct ct_db *db, int64_t jobid);
/* The same for the results of round `roundid` (ct_wu_abandon_round). */
int ct_res_drop_unsent_round(struct ct_db *db, int64_t roundid);

#endif
