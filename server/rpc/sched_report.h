/*
 * sched_report.h - a scheduler request's reports taken (step 4 of the
 * RPC; internal to the scheduler, sched.c).
 */
#ifndef CT_SCHED_REPORT_H
#define CT_SCHED_REPORT_H

#include <stdint.h>

struct ct_db;
struct sched_req;

/* What the reply says of one report. */
struct sched_ack {
	const char *name;	/* the request's, not owned */
	int code;		/* 0: accepted */
	char message[160];
};

/* 1 if name is a state task's (the result's name + CT_STATE_SUFFIX). */
int sched_is_state_task(const char *name);

/* Take req->rep[0..nrep) of host `hostid` (the account's, authenticated)
 * in one transaction on db: acks[i] says what became of req->rep[i]
 * (name pointing into req); *errors is how many moved to client errors
 * and *successes how many moved to reported (pending validation) (both 0
 * on failure). Returns 0, or a db error (nothing taken). */
int sched_take_reports(struct ct_db *db, int64_t hostid, const struct sched_req *req,
		       struct sched_ack *acks, int *errors, int *successes);

#endif
