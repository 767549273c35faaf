/*
 * daemons.h - what the back-end daemons (transitioner, validator,
 * assimilator, file deleter; their run_once entry points are in roles.h)
 * offer to the rest of the server and to tests: the adaptive replication
 * decision the scheduler takes at dispatch, and the validator's checks and
 * quorum decision as pure functions (validate/quorum.h, included here).
 *
 * The daemons' contract with the rest of the server (as BOINC's):
 * - whoever changes a result row of a WU (dispatch, report, upload) pulls
 *   the WU's transition_time down to when the transitioner must look
 *   (now for a report, the deadline for a dispatch);
 * - the transitioner turns deadlines into no_reply outcomes, creates new
 *   results up to the WU's caps, flags errors on the WU, its round and its
 *   job, sets need_validate when successes wait, and finally marks files
 *   deletable;
 * - the validator checks each success, finds a canonical result by quorum,
 *   grants credit, raises target_nresults when replicas disagree, and sets
 *   assimilate_state = READY;
 * - the assimilator averages a round's canonical results when all its WUs
 *   are ready, stores and evaluates the new model, opens the next round.
 * The state changes themselves go through the two state machines: a
 * result's server_state / outcome / validate_state through result_state.h
 * and job.status through job_state.h, each with its allowed moves as a
 * table (test/test_dl.c walks them).
 */
#ifndef CT_DAEMONS_H
#define CT_DAEMONS_H

#include <stddef.h>
#include <stdint.h>

#include "validate/quorum.h"

struct ct_db;

/* transition_time of a WU that waits for nothing (year 2100). */
#define CT_TRANSITION_NEVER ((int64_t)4102444800)

/* ---- adaptive replication (validate/quorum.h: decide; transitioner.c: apply) ---- */

/* Apply that decision at dispatch, inside the scheduler's transaction that
 * already locked the WU row: if no other result of WU `wuid` left the
 * UNSENT state, set the WU's min_quorum and target_nresults to 1 and the
 * other unsent results to OVER / DIDNT_NEED. Returns 1 if applied, 0 if the
 * WU already had another result out (nothing changed), or a db error. */
int ct_adaptive_apply(struct ct_db *db, int64_t wuid, int64_t resultid);

/* ---- the daemons' passes (cmd/roles.h runs them as roles) --------------- */

struct ct_server;

int ct_transitioner_run_once(struct ct_server *srv, struct ct_db *db);
int ct_validator_run_once(struct ct_server *srv, struct ct_db *db);
int ct_assimilator_run_once(struct ct_server *srv, struct ct_db *db);
int ct_file_deleter_run_once(struct ct_server *srv, struct ct_db *db);
/* purge.c: archive and delete WUs and results of finished jobs. */
int ct_purge_run_once(struct ct_server *srv, struct ct_db *db);

#endif
