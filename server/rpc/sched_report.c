/*
 * sched_report.c - step 4 of the scheduler RPC (sched.c): the reports of
 * a request taken in one transaction. The reported results are found by
 * name, their WUs locked in id order (lock_order.h) and their rows read
 * under the locks; each report is checked against its row (the host's
 * result, in progress, the upload it names), and the ones that pass are
 * moved in one statement a kind (successes, client errors), each row
 * with its own elapsed time and error text (ct_res_report_many). A batch
 * that moved fewer rows than it checked runs the transaction again, one
 * report at a time. A bad report only gets a rejecting ack.
 */
#include "sched_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/dl_chain.h"
#include "data/dl_result.h"
#include "data/dl_workunit.h"
#include "data/lock_order.h"
#include "data/result_state.h"
#include "data/wu_state.h"
#include "sched_req.h"

struct report_txn {
	int64_t hostid;		/* the asking host's */
	const struct sched_report *rep;
	struct sched_ack *ack;
	int64_t resultid, wuid;
	struct ct_result_row row;	/* read under the WU's lock */
	int64_t wu_roundid;		/* its WU's round, as locked */
	int found;			/* row read */
	int to;				/* the move checked (report_check), -1 none */
};

static int reject(struct sched_ack *a, int code, const char *msg)
{
	a->code = code;
	snprintf(a->message, sizeof(a->message), "%s", msg);
	return 0;
}

/* 1 if name is a state task's (<result>.state, put_state_requests). */
int sched_is_state_task(const char *name)
{
	size_t n = strlen(name), k = strlen(CT_STATE_SUFFIX);

	return n > k && strcmp(name + n - k, CT_STATE_SUFFIX) == 0;
}

/* Inside the transaction, the WU locked and the result read: the move
 * the report asks for into t->to (returns 1), or a rejecting ack
 * (returns 0). */
static int report_check(struct report_txn *t)
{
	const struct sched_report *rep = t->rep;
	struct ct_result_row *r = &t->row;
	int state = r->server_state, outcome = r->outcome;

	if (!t->found && sched_is_state_task(rep->name))
		return 0;	/* a state task's report: the upload was all (accepted) */
	if (!t->found)
		return reject(t->ack, CT_ENOTFOUND, "no such result");
	if (r->hostid != t->hostid)
		return reject(t->ack, CT_EDENIED, "result was not sent to this host");
	if (state == CT_RS_OVER && (outcome == CT_RO_SUCCESS || outcome == CT_RO_CLIENT_ERROR))
		return reject(t->ack, CT_EDUP, "result already reported");
	if (state != CT_RS_IN_PROGRESS)
		return reject(t->ack, CT_ESTATE, "result is no longer in progress (too late?)");
	if (rep->success) {
		if (r->upload_sha256[0] == 0)
			return reject(t->ack, CT_ENOENT, "no upload received for this result");
		if (strcmp(r->upload_sha256, rep->sha256) != 0 || r->upload_size != rep->size)
			return reject(t->ack, CT_EHASH, "reported sha256/size differ from the upload");
	}
	t->to = rep->success ? CT_RES_REPORTED : CT_RES_CLIENT_ERROR;
	return 1;
}

/* What the move of a checked report writes, with the result's owners
 * and round for the counters of ct_res_report_many (its round as the
 * result triggers take it: sent_round, or its WU's when 0). */
static struct ct_res_change report_change(const struct report_txn *t, int64_t now)
{
	const struct sched_report *rep = t->rep;
	struct ct_res_change c = { .now = now, .elapsed_s = rep->elapsed_s,
				   .hostid = t->row.hostid, .userid = t->row.userid,
				   .jobid = t->row.jobid,
				   .sent_round = t->row.sent_round ? t->row.sent_round
								   : t->wu_roundid };

	if (t->to == CT_RES_REPORTED) {	/* final_loss NULL (NAN) when not sent */
		c.final_loss = rep->has_final_loss ? rep->final_loss : NAN;
		c.conforming = (int)rep->conforming;
	} else {
		c.exit_status = (int)rep->error_code;
		c.error_message = rep->error_message;
	}
	return c;
}

/* A moved success's hash chain, checked by the validator. */
static int report_chain(struct ct_db *db, const struct report_txn *t)
{
	if (t->to != CT_RES_REPORTED || t->rep->chain == NULL)
		return 0;
	return ct_dl_chain_put(db, t->resultid, t->rep->chain);
}

/* One checked report moved on its own: 1 moved, 0 not (a rejecting ack),
 * or an error. */
static int report_move(struct ct_db *db, struct report_txn *t, int64_t now)
{
	struct ct_res_change ch = report_change(t, now);
	int rc;

	rc = ct_res_move(db, t->resultid, CT_RES_IN_PROGRESS, (enum ct_res_state)t->to, &ch);
	if (rc > 0) {
		rc = report_chain(db, t);
		return rc < 0 ? rc : 1;
	}
	if (rc == 0) {
		t->to = -1;
		return reject(t->ack, CT_EDUP, "result already reported");
	}
	return rc;
}

/* The reported results' ids and WUs by name (outside the transaction:
 * names never change). */
static int find_reports(struct ct_db *db, struct report_txn *t, int n)
{
	const char *names[CT_SCHED_MAX_REPORTS] = { 0 };
	struct ct_result_row rows[CT_SCHED_MAX_REPORTS];
	int rc;

	for (int i = 0; i < n; i++)
		names[i] = t[i].rep->name;
	rc = ct_result_ids_by_name(db, names, n, rows);
	for (int i = 0; rc == 0 && i < n; i++) {
		t[i].resultid = rows[i].id;
		t[i].wuid = rows[i].workunitid;
	}
	return rc;
}

struct report_batch {
	struct report_txn t[CT_SCHED_MAX_REPORTS];
	int n;
	int errors;		/* reports that moved to client errors */
	int successes;		/* reports that moved to reported */
	int one_by_one;		/* a batch moved fewer than it checked: singly */
};

/* Lock the WUs of t[0..n) (sorted by WU), each t[i]'s WU round with it. */
static int lock_report_wus(struct ct_db *db, struct report_txn *t, int n)
{
	struct ct_wu_sched_row rows[CT_SCHED_MAX_REPORTS];
	int64_t ids[CT_SCHED_MAX_REPORTS] = { 0 };
	int nids = 0, rc;

	for (int i = 0; i < n; i++)
		if (t[i].resultid != 0 && (nids == 0 || ids[nids - 1] != t[i].wuid))
			ids[nids++] = t[i].wuid;
	rc = ct_wu_lock_ids(db, ids, nids, rows);
	for (int i = 0, k = 0; rc == 0 && i < n; i++) {
		while (t[i].resultid != 0 && k < nids && ids[k] != t[i].wuid)
			k++;
		t[i].wu_roundid = t[i].resultid != 0 && k < nids ? rows[k].roundid : 0;
	}
	return rc;
}

/* The reported results' rows (hostid, states, upload). */
static int read_reported(struct ct_db *db, struct report_txn *t, int n)
{
	int64_t ids[CT_SCHED_MAX_REPORTS] = { 0 };
	struct ct_result_row rows[CT_SCHED_MAX_REPORTS];
	int rc;

	for (int i = 0; i < n; i++)
		ids[i] = t[i].resultid;
	rc = ct_result_get_uploads(db, ids, n, rows);
	for (int i = 0; rc == 0 && i < n; i++) {
		t[i].row = rows[i];
		t[i].found = t[i].resultid != 0 && rows[i].id == t[i].resultid;
	}
	return rc;
}

/* The checked reports of kind `to` moved, one statement a CT_RES_REPORT_MAX
 * (the results are distinct: a repeated report was rejected). A batch
 * that moved fewer than it checked asks for the transaction again, one
 * report at a time (CT_EAGAIN). */
static int report_moves(struct ct_db *db, struct report_batch *b, int to, int64_t now)
{
	struct ct_res_change ch[CT_RES_REPORT_MAX];
	int64_t ids[CT_RES_REPORT_MAX];
	int n = 0, rc = 0;

	for (int i = 0; rc >= 0 && i <= b->n; i++) {
		if (i < b->n && b->t[i].to == to) {
			ids[n] = b->t[i].resultid;
			ch[n++] = report_change(&b->t[i], now);
		}
		if (n == 0 || (n < CT_RES_REPORT_MAX && i < b->n))
			continue;
		rc = ct_res_report_many(db, (enum ct_res_state)to, ids, ch, n);
		if (rc >= 0 && rc != n) {
			b->one_by_one = 1;
			return CT_EAGAIN;
		}
		n = 0;
	}
	for (int i = 0; rc >= 0 && i < b->n; i++)
		if (b->t[i].to == to)
			rc = report_chain(db, &b->t[i]);
	return rc < 0 ? rc : 0;
}

/* Each report checked, then moved: all of one kind in one statement, or
 * (b->one_by_one) each on its own. Returns >= 0 or an error. */
static int report_apply_all(struct ct_db *db, struct report_batch *b, int64_t *woken,
			    int *nwoken)
{
	int64_t now = ct_db_now(db);
	int rc = 0;

	for (int i = 0; rc >= 0 && i < b->n; i++) {
		rc = report_check(&b->t[i]);
		if (rc > 0 && b->one_by_one)
			rc = report_move(db, &b->t[i], now);
		b->errors += rc > 0 && b->t[i].to == CT_RES_CLIENT_ERROR;
		b->successes += rc > 0 && b->t[i].to == CT_RES_REPORTED;
		/* the same result reported twice in one request: the next
		 * sees it over, as a fresh read would (adjacent: b->t sorted) */
		for (int j = i + 1; rc > 0 && j < b->n && b->t[j].resultid == b->t[i].resultid; j++) {
			b->t[j].row.server_state = CT_RS_OVER;
			b->t[j].row.outcome = b->t[i].to == CT_RES_CLIENT_ERROR ? CT_RO_CLIENT_ERROR
										: CT_RO_SUCCESS;
		}
		if (rc > 0 && (*nwoken == 0 || woken[*nwoken - 1] != b->t[i].wuid))
			woken[(*nwoken)++] = b->t[i].wuid;
	}
	if (rc >= 0 && !b->one_by_one)
		rc = report_moves(db, b, CT_RES_REPORTED, now);
	if (rc >= 0 && !b->one_by_one)
		rc = report_moves(db, b, CT_RES_CLIENT_ERROR, now);
	return rc;
}

/* Every report of the RPC in one transaction; a retry starts clean. */
static int report_batch_txn(struct ct_db *db, void *arg)
{
	struct report_batch *b = arg;
	int64_t woken[CT_SCHED_MAX_REPORTS];
	int nwoken = 0, rc;

	for (int i = 0; i < b->n; i++) {
		b->t[i].ack->code = 0;
		b->t[i].found = 0;
		b->t[i].to = -1;
	}
	b->errors = 0;	/* counted with the host's update (update_host) */
	b->successes = 0;	/* and in the reply's standing (sched.c) */
	/* every WU row first, in id order (b->t is sorted), before any result
	 * row or the round counters its triggers update (lock_order.h) */
	rc = lock_report_wus(db, b->t, b->n);
	if (rc == 0)
		rc = read_reported(db, b->t, b->n);
	if (rc >= 0)
		rc = report_apply_all(db, b, woken, &nwoken);
	if (rc >= 0)
		rc = ct_wu_wake_ids(db, woken, nwoken, ct_db_now(db), 0);
	return rc < 0 ? rc : 0;
}

static int report_by_wu(const void *a, const void *b)
{
	const struct report_txn *x = a, *y = b;

	return ct_lock_order_cmp(x->wuid, x->resultid, y->wuid, y->resultid);
}

int sched_take_reports(struct ct_db *db, int64_t hostid, const struct sched_req *req,
		       struct sched_ack *acks, int *errors, int *successes)
{
	struct report_batch *b;
	int rc = 0;

	*errors = 0;
	*successes = 0;
	if (req->nrep == 0)
		return 0;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CT_ENOMEM;
	b->n = req->nrep;
	for (int i = 0; i < b->n; i++) {
		b->t[i].hostid = hostid;
		b->t[i].rep = &req->rep[i];
		b->t[i].ack = &acks[i];
		b->t[i].ack->name = b->t[i].rep->name;
	}
	rc = find_reports(db, b->t, b->n);
	/* lock the WUs in id order, as every transaction does (lock_order.h) */
	qsort(b->t, (size_t)b->n, sizeof(b->t[0]), report_by_wu);
	if (rc == 0)
		rc = ct_db_txn(db, report_batch_txn, b);
	if (rc == 0) {
		*errors = b->errors;
		*successes = b->successes;
	}
	for (int i = 0; rc == 0 && i < b->n; i++)
		ct_log_info("sched: host %" PRId64 " reported %s (%s): %s", hostid,
			    b->t[i].rep->name, b->t[i].rep->success ? "success" : "error",
			    b->t[i].ack->code ? b->t[i].ack->message : "accepted");
	free(b);
	return rc;
}
