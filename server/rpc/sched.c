/*
 * sched.c - the scheduler RPC (see sched_rpc.h and doc/protocol.md).
 *
 * One request runs these steps, each on the caller's connection:
 *   1. parse (sched_req.c)          4. take reports (one transaction each)
 *   2. authenticate the account     5. aborts and lost-result resends
 *   3. find/create the host, devices 6. claim new results (one txn each)
 * then writes the reply. A refused request (XML, PROTO, AUTH, DENIED)
 * changes nothing; a bad report only gets a rejecting <ack>.
 */
#include "sched_rpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_xml.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/db_args.h"
#include "data/dl.h"
#include "data/dl_result.h"
#include "data/result_state.h"
#include "eligibility.h"
#include "data/lock_order.h"
#include "data/lora_job.h"
#include "sched_req.h"
#include "data/server.h"
#include "token.h"
#include "validate/trust.h"
#include "validate/worklimit.h"

#define MAX_SEND (CT_SCHED_MAX_WANT + CT_SCHED_MAX_OTHER)

struct ack {
	const char *name;
	int code;		/* 0: accepted */
	char message[160];
};

struct sched_ctx {
	struct ct_server *srv;
	struct ct_db *db;
	const char *ip;
	struct sched_req req;
	int64_t userid, teamid, hostid;
	int consecutive_valid;	/* the host's, for adaptive replication */
	struct ct_elig_host who;	/* whom replicas are kept apart from */
	char user_name[65];
	double total_credit, expavg_credit;
	char web_prefs[2049];	/* the user's web preferences (user_prefs), "" none */
	int64_t web_prefs_time;
	struct ack acks[CT_SCHED_MAX_REPORTS];
	const char *aborts[CT_SCHED_MAX_OTHER];
	int naborts;
	int64_t send[MAX_SEND];	/* result ids to put in the reply */
	int nsend;
	int nnew;		/* new results among them */
	int looked;		/* its caps left room and work was looked for */
	int64_t work_after;	/* > 0: called before its request_delay, no new work */
	/* read once per request (load_host), for the caps and deadlines */
	struct ct_wlim_host wh;
	int64_t host_cap, next_work_time;
	struct ct_wlim_policy wlp;
	/* the deadline estimate of the job of the last claim (est_job) */
	int64_t est_job;
	struct ct_wlim_estimate est;
};

/* ---- steps 2 and 3: account and host ------------------------------------ */

/* authenticate's columns, in its SELECT's order. */
#define C struct sched_ctx
static const struct ct_dl_col account_cols[] = {
	CT_DL_COL(C, userid), CT_DL_COL(C, user_name), CT_DL_COL(C, teamid),
	CT_DL_COL(C, total_credit), CT_DL_COL(C, expavg_credit), CT_DL_COL(C, web_prefs),
	CT_DL_COL(C, web_prefs_time),
};
#undef C

static int authenticate(struct sched_ctx *c)
{
	struct ct_db_res *res = NULL;
	char hash[65];
	int rc;

	rc = ct_account_key_hash(c->req.authenticator, hash);
	if (rc < 0)	/* not a key at all: say so, not "unknown" */
		return ct_error(CT_EAUTH, "malformed account key (want %d hex digits)",
				CT_ACCOUNT_KEY_HEXLEN);
	rc = ct_db_query(c->db, &res, "SELECT u.id, u.name, u.teamid, u.total_credit, "
			 "u.expavg_credit, COALESCE(p.prefs, ''), COALESCE(p.mod_time, 0) FROM "
			 "`user` u LEFT JOIN user_prefs p ON p.userid = u.id WHERE u.auth_hash=?",
			 "s", hash);
	if (rc < 0)
		return rc;
	rc = ct_dl_one(res, c, account_cols, CT_DL_NCOLS(account_cols));
	if (rc == CT_ENOTFOUND)
		rc = ct_error(CT_EAUTH, "unknown account key");
	return rc;
}

/* 1 if s is 32 hex digits (either case). */
static int cpid_valid(const char *s)
{
	unsigned char raw[16];

	return ct_hex_decode(s, raw, sizeof(raw)) == 0;
}

static int find_host(struct sched_ctx *c)
{
	int64_t owner = 0, id = 0;
	int rc;

	if (c->req.host_id > 0) {
		rc = ct_db_query_int(c->db, &owner, "SELECT userid FROM host WHERE id=?", "l",
				     c->req.host_id);
		if (rc == CT_ENOTFOUND || (rc == 0 && owner != c->userid))
			return ct_error(CT_EDENIED, "host %" PRId64 " does not belong to this account",
					c->req.host_id);
		if (rc < 0)
			return rc;
		c->hostid = c->req.host_id;
		return 0;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = ct_db_query_int(c->db, &id, "SELECT id FROM host WHERE userid=? AND host_cpid=?",
				     "ls", c->userid, c->req.host_cpid);
		if (rc == 0) {
			c->hostid = id;
			return 0;
		}
		if (rc != CT_ENOTFOUND)
			return rc;
		rc = ct_db_exec(c->db, "INSERT INTO host (create_time, userid, host_cpid) "
				"VALUES (?, ?, ?)", "lls", ct_db_now(c->db), c->userid, c->req.host_cpid);
		if (rc >= 0) {
			c->hostid = ct_db_last_id(c->db);
			ct_log_info("sched: new host %" PRId64 " for user %" PRId64, c->hostid, c->userid);
			return 0;
		}
		if (rc != CT_EDUP)	/* a concurrent RPC made it: look again */
			return rc;
	}
	return ct_error(CT_EINTERNAL, "could not register host");
}

static int update_host(struct sched_ctx *c)
{
	struct sched_req *r = &c->req;
	int rc;

	rc = ct_db_exec(c->db, "UPDATE host SET hostname=?, os=?, cpu_model=?, ncpus=?, "
			"ram_bytes=?, client_version=?, last_ip=?, rpc_time=?, nrpc=nrpc+1 "
			"WHERE id=?", "sssilssll", r->hostname, r->os, r->cpu_model, (int)r->ncpus,
			r->ram_bytes, r->client_version, c->ip, ct_db_now(c->db), c->hostid);
	for (int i = 0; rc >= 0 && i < r->ndev; i++) {
		struct sched_device *d = &r->dev[i];
		rc = ct_db_exec(c->db, "INSERT INTO device (hostid, slot, name, vendor, type, "
				"global_mem, compute_units, conforming, update_time) "
				"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
				"name=VALUES(name), vendor=VALUES(vendor), type=VALUES(type), "
				"global_mem=VALUES(global_mem), compute_units=VALUES(compute_units), "
				"conforming=VALUES(conforming), update_time=VALUES(update_time)",
				"lisssliil", c->hostid, i, d->name, d->vendor, d->type, d->global_mem,
				(int)d->compute_units, (int)d->conforming, ct_db_now(c->db));
	}
	if (rc >= 0)
		rc = ct_db_exec(c->db, "DELETE FROM device WHERE hostid=? AND slot>=?", "li",
				c->hostid, r->ndev);
	return rc < 0 ? rc : 0;
}

/* ---- step 4: reports ---------------------------------------------------- */

struct report_txn {
	struct sched_ctx *c;
	struct sched_report *rep;
	struct ack *ack;
	int64_t resultid, wuid;
};

static int reject(struct ack *a, int code, const char *msg)
{
	a->code = code;
	snprintf(a->message, sizeof(a->message), "%s", msg);
	return 0;
}

/* Inside the transaction: lock the WU, re-read the result, apply. */
static int report_apply(struct ct_db *db, void *arg)
{
	struct report_txn *t = arg;
	struct sched_report *rep = t->rep;
	struct ct_result_row r;
	int64_t dummy, now = ct_db_now(db);
	int rc, state, outcome;

	rc = ct_db_query_int(db, &dummy, "SELECT id FROM workunit WHERE id=? FOR UPDATE", "l",
			     t->wuid);
	if (rc < 0)
		return rc;
	rc = ct_result_get_upload(db, t->resultid, &r);
	if (rc == CT_ENOTFOUND) {
		rc = reject(t->ack, CT_ENOTFOUND, "no such result");
		goto out;
	}
	if (rc < 0)
		return rc;
	state = r.server_state;
	outcome = r.outcome;
	if (r.hostid != t->c->hostid) {
		rc = reject(t->ack, CT_EDENIED, "result was not sent to this host");
		goto out;
	}
	if (state == CT_RS_OVER && (outcome == CT_RO_SUCCESS || outcome == CT_RO_CLIENT_ERROR)) {
		rc = reject(t->ack, CT_EDUP, "result already reported");
		goto out;
	}
	if (state != CT_RS_IN_PROGRESS) {
		rc = reject(t->ack, CT_ESTATE, "result is no longer in progress (too late?)");
		goto out;
	}
	if (rep->success) {
		if (r.upload_sha256[0] == 0) {
			rc = reject(t->ack, CT_ENOENT, "no upload received for this result");
			goto out;
		}
		if (strcmp(r.upload_sha256, rep->sha256) != 0 || r.upload_size != rep->size) {
			rc = reject(t->ack, CT_EHASH, "reported sha256/size differ from the upload");
			goto out;
		}
		/* final_loss stays NULL when the client did not send one */
		rc = ct_res_move(db, t->resultid, CT_RES_IN_PROGRESS, CT_RES_REPORTED,
				 &(struct ct_res_change){ .now = now, .elapsed_s = rep->elapsed_s,
							  .final_loss = rep->final_loss,
							  .conforming = (int)rep->conforming });
		if (rc == 0) {
			rc = reject(t->ack, CT_EDUP, "result already reported");
			goto out;
		}
		if (rc > 0 && !rep->has_final_loss)
			rc = ct_db_exec(db, "UPDATE result SET final_loss=NULL WHERE id=?", "l",
					t->resultid);
	} else {
		rc = ct_res_move(db, t->resultid, CT_RES_IN_PROGRESS, CT_RES_CLIENT_ERROR,
				 &(struct ct_res_change){ .now = now, .elapsed_s = rep->elapsed_s,
							  .exit_status = (int)rep->error_code,
							  .error_message = rep->error_message });
		if (rc == 0) {
			rc = reject(t->ack, CT_EDUP, "result already reported");
			goto out;
		}
		if (rc > 0)
			rc = ct_db_exec(db, "UPDATE host SET nresults_error=nresults_error+1 WHERE id=?",
					"l", t->c->hostid);
	}
	if (rc < 0)
		goto out;
	rc = ct_db_exec(db, "UPDATE workunit SET transition_time=? WHERE id=?", "ll", now, t->wuid);
out:
	return rc < 0 ? rc : 0;
}

/* Find the result's row (outside the transaction: names never change). */
static int find_report(struct sched_ctx *c, int i, struct report_txn *t)
{
	struct ct_result_row r;
	int rc;

	t->c = c;
	t->rep = &c->req.rep[i];
	t->ack = &c->acks[i];
	t->ack->name = t->rep->name;
	t->resultid = 0;
	rc = ct_result_by_name(c->db, t->rep->name, &r);
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	t->resultid = r.id;
	t->wuid = r.workunitid;
	return 0;
}

struct report_batch {
	struct report_txn t[CT_SCHED_MAX_REPORTS];
	int n;
};

/* Every report of the RPC in one transaction; a retry starts clean. */
static int report_batch_txn(struct ct_db *db, void *arg)
{
	struct report_batch *b = arg;
	int rc;

	/* every WU row first, in id order (b->t is sorted), before any result
	 * row or the round counters its triggers update (lock_order.h) */
	for (int i = 0; i < b->n; i++) {
		int64_t dummy;

		if (b->t[i].resultid == 0 || (i > 0 && b->t[i].wuid == b->t[i - 1].wuid))
			continue;
		rc = ct_db_query_int(db, &dummy, "SELECT id FROM workunit WHERE id=? FOR UPDATE",
				     "l", b->t[i].wuid);
		if (rc < 0)
			return rc;
	}
	for (int i = 0; i < b->n; i++) {
		struct report_txn *t = &b->t[i];
		t->ack->code = 0;
		if (t->resultid == 0) {
			reject(t->ack, CT_ENOTFOUND, "no such result");
			continue;
		}
		rc = report_apply(db, t);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int report_by_wu(const void *a, const void *b)
{
	const struct report_txn *x = a, *y = b;

	return ct_lock_order_cmp(x->wuid, x->resultid, y->wuid, y->resultid);
}

static int take_reports(struct sched_ctx *c)
{
	struct report_batch *b;
	int rc = 0;

	if (c->req.nrep == 0)
		return 0;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CT_ENOMEM;
	b->n = c->req.nrep;
	for (int i = 0; rc == 0 && i < b->n; i++)
		rc = find_report(c, i, &b->t[i]);
	/* lock the WUs in id order, as every transaction does (lock_order.h) */
	qsort(b->t, (size_t)b->n, sizeof(b->t[0]), report_by_wu);
	if (rc == 0)
		rc = ct_db_txn(c->db, report_batch_txn, b);
	for (int i = 0; rc == 0 && i < b->n; i++)
		ct_log_info("sched: host %" PRId64 " reported %s (%s): %s", c->hostid,
			    b->t[i].rep->name, b->t[i].rep->success ? "success" : "error",
			    b->t[i].ack->code ? b->t[i].ack->message : "accepted");
	free(b);
	return rc;
}

/* ---- step 5: aborts and resends ---------------------------------------- */

static int listed(const struct sched_ctx *c, const char *name)
{
	for (int i = 0; i < c->req.nother; i++)
		if (strcmp(c->req.other[i], name) == 0)
			return 1;
	for (int i = 0; i < c->req.nrep; i++)
		if (strcmp(c->req.rep[i].name, name) == 0)
			return 1;
	return 0;
}

/* A result in progress on this host whose WU was canceled (error_mask
 * set: job cancel, too many errors) is over for the host, as BOINC's
 * "aborted by the project": DIDNT_NEED, not an error of the host's, and
 * no longer in progress, so it is never sent again as lost and the host's
 * in-progress caps let it take other work (a client told to abort a result
 * that was then resent as lost looped: issue 32). One autocommit UPDATE
 * guarded by the old state, without the WU's lock: a lost race moves
 * nothing, and a deadlock with a WU's transaction is retried by
 * ct_db_execa. */
static int drop_canceled(struct sched_ctx *c, int64_t resultid)
{
	int rc = ct_res_move(c->db, resultid, CT_RES_IN_PROGRESS, CT_RES_DIDNT_NEED,
			     &(struct ct_res_change){ .now = ct_db_now(c->db) });

	return rc < 0 ? rc : 0;
}

static int check_others(struct sched_ctx *c)
{
	struct ct_db_res *res = NULL;
	int rc = 0;

	for (int i = 0; rc >= 0 && i < c->req.nother; i++) {
		int64_t id = 0;
		int mine, abort = 1;

		rc = ct_db_query(c->db, &res, "SELECT r.hostid, r.server_state, w.error_mask, r.id "
				 "FROM result r JOIN workunit w ON w.id=r.workunitid WHERE r.name=?",
				 "s", c->req.other[i]);
		if (rc < 0)
			break;
		if (ct_db_next(res) > 0) {
			mine = ct_db_int(res, 0) == c->hostid &&
			       ct_db_int(res, 1) == CT_RS_IN_PROGRESS;
			abort = !mine || ct_db_int(res, 2) != 0;
			id = mine && abort ? ct_db_int(res, 3) : 0;
		}
		ct_db_res_free(res);
		res = NULL;
		if (abort)
			c->aborts[c->naborts++] = c->req.other[i];
		if (id > 0)
			rc = drop_canceled(c, id);
	}
	return rc;
}

/* Results in progress on this host that the client did not mention: sent
 * again, unless their WU was canceled (then they are over). */
static int find_lost(struct sched_ctx *c)
{
	struct ct_db_res *res = NULL;
	int64_t drop[64];
	int ndrop = 0, rc;

	rc = ct_db_query(c->db, &res, "SELECT r.id, r.name, w.error_mask FROM result r JOIN "
			 "workunit w ON w.id=r.workunitid WHERE r.hostid=? AND r.server_state=? AND "
			 "r.report_deadline>? ORDER BY r.id LIMIT 64", "lil", c->hostid,
			 CT_RS_IN_PROGRESS, ct_db_now(c->db));
	if (rc < 0)
		return rc;
	while (ct_db_next(res) > 0) {
		if (listed(c, ct_db_str(res, 1)))
			continue;
		if (ct_db_int(res, 2) != 0)
			drop[ndrop++] = ct_db_int(res, 0);
		else if (c->nsend < MAX_SEND)
			c->send[c->nsend++] = ct_db_int(res, 0);
	}
	ct_db_res_free(res);
	for (int i = 0; rc == 0 && i < ndrop; i++)
		rc = drop_canceled(c, drop[i]);
	return rc;
}

/* ---- step 6: new work -------------------------------------------------- */

struct claim_txn {
	struct sched_ctx *c;
	int64_t resultid, wuid;
};

/* A trusted host may get this WU without replication (BOINC's adaptive
 * replication; the decision and its effect are the transitioner's code). */
static int maybe_adaptive(struct ct_db *db, struct claim_txn *t)
{
	int64_t on = 0;
	uint32_t r;
	int rc;

	if (t->c->consecutive_valid < 1)
		return 0;
	rc = ct_db_query_int(db, &on, "SELECT j.adaptive_replication FROM workunit w JOIN job j "
			     "ON j.id=w.jobid WHERE w.id=?", "l", t->wuid);
	if (rc < 0 || !on)
		return rc < 0 ? rc : 0;
	/* a CSPRNG draw: thread-safe, and a host cannot predict it (on a
	 * failure of the random source, replicate as usual) */
	if (ct_random_bytes(&r, sizeof(r)) < 0)
		return 0;
	/* trust.h: slow trust, a spot-check floor, one per round */
	rc = ct_trust_allow(t->c->srv->conf, db, t->c->hostid, t->wuid, t->c->consecutive_valid,
			    r / 4294967296.0);
	if (rc <= 0)
		return rc;
	rc = ct_adaptive_apply(db, t->wuid, t->resultid);
	if (rc > 0)
		rc = ct_trust_note(db, t->wuid, t->c->hostid);
	return rc < 0 ? rc : 0;
}

/* The deadline estimate of job jobid: the request's claims are mostly of
 * one job, which is asked once. */
static int job_estimate(struct ct_db *db, struct sched_ctx *c, int64_t jobid, int64_t wuid)
{
	int rc;

	if (c->est_job == jobid)
		return 0;
	rc = ct_wlim_estimate(db, c->srv->conf, wuid, &c->est);
	if (rc == 0)
		c->est_job = jobid;
	return rc;
}

static int claim_one(struct ct_db *db, void *arg)
{
	struct claim_txn *t = arg;
	struct sched_ctx *c = t->c;
	struct ct_db_res *res = NULL;
	int64_t now = ct_db_now(db), deadline, roundid, jobid;
	const char *why;
	int rc, delay, quorum;

	rc = ct_db_query(db, &res, "SELECT delay_bound, error_mask, roundid, min_quorum, jobid "
			 "FROM workunit WHERE id=? FOR UPDATE", "l", t->wuid);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) <= 0 || ct_db_int(res, 1) != 0) {
		ct_db_res_free(res);
		return 0;
	}
	delay = (int)ct_db_int(res, 0);
	roundid = ct_db_int(res, 2);
	quorum = (int)ct_db_int(res, 3);
	jobid = ct_db_int(res, 4);
	ct_db_res_free(res);
	rc = ct_elig_check(db, t->wuid, &c->who, &why);
	/* and apart within the round (eligibility.h: the round rules) */
	if (rc > 0)
		rc = ct_elig_check_round(db, c->srv->conf, t->wuid, t->resultid, roundid,
					 quorum, &c->who, &why);
	if (rc <= 0) {
		if (rc == 0)
			ct_log_debug("sched: host %" PRId64 ": not eligible for WU %" PRId64
				     " (%s)", c->hostid, t->wuid, why);
		return rc;
	}
	rc = job_estimate(db, c, jobid, t->wuid);
	if (rc < 0)
		return rc;
	deadline = ct_wlim_deadline(&c->wlp, &c->est, c->wh.nvalid, delay, now);
	/* where it goes is recorded with the send: the placement rules of its
	 * WU and round read sent_net and sent_round */
	rc = ct_res_move(db, t->resultid, CT_RES_UNSENT, CT_RES_IN_PROGRESS,
			 &(struct ct_res_change){ .now = now, .hostid = c->hostid,
						  .userid = c->userid, .teamid = c->teamid,
						  .deadline = deadline, .sent_net = c->who.net,
						  .sent_round = roundid });
	if (rc <= 0)
		return rc;
	rc = ct_db_exec(db, "UPDATE workunit SET transition_time=LEAST(transition_time, ?) "
			"WHERE id=?", "ll", deadline, t->wuid);
	if (rc >= 0)
		rc = maybe_adaptive(db, t);
	return rc < 0 ? rc : 1;
}

/* What the caps, deadlines and request_delay need of the host, read once:
 * its row, the project's policy, and its results in progress. */
static int load_host(struct sched_ctx *c)
{
	struct ct_db_res *res = NULL;
	int rc;

	rc = ct_wlim_policy_load(c->srv->conf, &c->wlp);
	if (rc == 0)
		rc = ct_db_query(c->db, &res, "SELECT max_in_progress, consecutive_valid, "
				 "nresults_valid, next_work_time FROM host WHERE id=?", "l",
				 c->hostid);
	if (rc < 0)
		return rc;
	if (ct_db_next(res) > 0) {
		c->host_cap = ct_db_int(res, 0);
		c->consecutive_valid = (int)ct_db_int(res, 1);
		c->wh.nvalid = ct_db_int(res, 2);
		c->next_work_time = ct_db_int(res, 3);
	}
	ct_db_res_free(res);
	if (c->host_cap <= 0)
		c->host_cap = c->srv->max_in_progress;
	return ct_db_query_int(c->db, &c->wh.inprog, "SELECT COUNT(*) FROM result WHERE "
			       "hostid=? AND server_state=?", "li", c->hostid, CT_RS_IN_PROGRESS);
}

/* Hoarding: the host's and account's caps from validated work, and the
 * daily quota (worklimit.h). */
static int limit_want(struct sched_ctx *c, int64_t cap, int *want)
{
	const char *why = NULL;
	int room = 0, rc;

	rc = ct_wlim_room(c->db, c->srv->conf, c->userid, c->hostid, &c->wh, cap, &room, &why);
	if (rc == 0 && room < *want) {
		ct_log_debug("sched: host %" PRId64 ": %d result(s) at most (%s)", c->hostid,
			     room, why);
		*want = room;
	}
	return rc;
}

/* request_delay enforced: a host told "no work, come back in D" that asks
 * again sooner (sched.request_delay_slack seconds of slack, default 1)
 * gets no new work in this reply (its reports are taken all the same);
 * c->work_after says until when. Returns 1 (too soon), 0 or CT_EDB. */
static int too_soon(struct sched_ctx *c)
{
	int64_t next = c->next_work_time, now = ct_db_now(c->db);
	long slack = 1;
	int rc;

	rc = ct_conf_get_int(c->srv->conf, "sched.request_delay_slack", 1, 0, 86400, &slack);
	if (rc < 0)
		return rc;
	if (now + slack >= next)
		return 0;
	c->work_after = next;
	ct_log_debug("sched: host %" PRId64 ": no work before its request_delay (%" PRId64
		     " s left)", c->hostid, next - now);
	return 1;
}

static long reply_delay(struct sched_ctx *c);

/* The request_delay this reply tells, remembered for too_soon(): after a
 * request for work that found none (its own caps left it room), the host
 * may get work again once the delay told (the configured one, or
 * reply_delay's 1-second turnover hint) has passed; a host at its caps is
 * not held back once it reports; a refused early call is told what is
 * left. */
static long told_delay(struct sched_ctx *c)
{
	int64_t now = ct_db_now(c->db);
	long d;

	if (c->work_after > 0)
		return c->work_after - now > 1 ? (long)(c->work_after - now) : 1;
	d = reply_delay(c);
	if (c->looked && c->nnew == 0)	/* best effort: a failed write only loses it */
		ct_db_exec(c->db, "UPDATE host SET next_work_time=? WHERE id=?", "ll", now + d,
			   c->hostid);
	return d;
}

static int assign_work(struct sched_ctx *c)
{
	struct ct_db_res *res = NULL;
	int64_t inprog = 0, cap = 0, ids[64][2];
	int want = (int)c->req.want, n = 0, start = 0, got = 0, rc;
	uint32_t r;

	if (c->nsend >= MAX_SEND || want <= 0)
		return 0;
	rc = load_host(c);
	if (rc == 0)
		rc = too_soon(c);
	if (rc != 0)
		return rc < 0 ? rc : 0;

	if (want > c->srv->max_wus_per_rpc)
		want = c->srv->max_wus_per_rpc;
	inprog = c->wh.inprog;
	cap = c->host_cap;
	rc = ct_elig_host_init(&c->who, c->srv->conf, c->userid, c->hostid, c->req.host_cpid,
			       c->ip);
	if (rc < 0)
		return rc;
	c->who.work_mem = c->req.work_mem;	/* WUs it cannot hold stay (eligibility.h) */
	if (want > cap - inprog)
		want = (int)(cap - inprog);
	if (want > 0)
		rc = limit_want(c, cap, &want);
	if (rc < 0 || want <= 0)
		return rc;
	c->looked = 1;
	/* a client that did not say it runs LoRA (work_req/lora) gets
	 * full-weight WUs only */
	/* one replica per account: an outer join probed per candidate by
	 * (workunitid, userid), read in dispatch order until LIMIT; as NOT
	 * EXISTS, MariaDB could turn the check into materialising every
	 * result the account ever had (bench/bench_dispatch: 18 ms per RPC
	 * at 1k results of history, 144 ms at 100k) */
	rc = ct_db_query(c->db, &res, "SELECT r.id, r.workunitid FROM result r "
			 "LEFT JOIN result r2 FORCE INDEX (result_wu_user) ON "
			 "r2.workunitid=r.workunitid AND r2.userid=? WHERE r.server_state=? "
			 "AND r2.id IS NULL "
			 "AND (? OR NOT EXISTS (SELECT 1 FROM job_lora l WHERE l.jobid=r.jobid)) "
			 "ORDER BY r.priority DESC, r.id "
			 "LIMIT ?", "liii", c->userid, CT_RS_UNSENT, (int)c->req.lora, want * 4 + 8);
	if (rc < 0)
		return rc;
	while (ct_db_next(res) > 0 && n < 64) {
		ids[n][0] = ct_db_int(res, 0);
		ids[n][1] = ct_db_int(res, 1);
		n++;
	}
	ct_db_res_free(res);
	/* One transaction per claim: it locks one WU row, then the result and
	 * the round's counters (round_stat, by trigger). A transaction that
	 * held those counters while waiting for a second WU would deadlock
	 * with any other writer of the round (lock_order.h). Start at a random
	 * candidate so concurrent schedulers collide less. */
	if (want > MAX_SEND - c->nsend)
		want = MAX_SEND - c->nsend;
	if (n > 0 && ct_random_bytes(&r, sizeof(r)) == 0)
		start = (int)(r % (uint32_t)n);
	for (int k = 0; k < n && got < want; k++) {
		int i = (start + k) % n;
		struct claim_txn t = { .c = c, .resultid = ids[i][0], .wuid = ids[i][1] };

		rc = ct_db_txn(c->db, claim_one, &t);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			c->send[c->nsend++] = ids[i][0];
			c->nnew = ++got;
		}
	}
	return 0;
}

/* ---- the reply --------------------------------------------------------- */

static int put_file(struct ct_buf *b, struct ct_server *srv, const char *role,
		    const char *sha, int64_t size)
{
	int rc;

	rc = ct_buf_appendf(b, "<file role=\"%s\">\n<url>", role);
	if (rc == 0)
		rc = ct_xml_escape(b, srv->base_url);
	if (rc == 0)
		rc = ct_buf_appendf(b, "/download/%s</url>\n", sha);
	if (rc == 0)
		rc = ct_xml_elem_str(b, "sha256", sha);
	if (rc == 0)
		rc = ct_xml_elem_int64(b, "size", size);
	if (rc == 0)
		rc = ct_xml_close(b, "file");
	return rc;
}

/* A result being sent, with its WU and job: what the reply says. */
struct sent {
	char name[81], wu_name[65];
	int64_t deadline, jobid, round, shard, seed;
	char model_sha[65], data_sha[65];
	int64_t model_size, data_size, steps, batch, seq;
	double hp[6];			/* lr, beta1, beta2, eps, weight_decay, grad_clip */
	char upload_encoding[65];
	int64_t max_upload;
};

static const char wu_sql[] =
	"SELECT r.name, r.report_deadline, w.name, w.jobid, w.round_idx, w.shard, w.seed, "
	"w.model_sha256, w.model_size, w.data_sha256, w.data_size, j.steps, j.batch, j.seq, "
	"j.lr, j.beta1, j.beta2, j.eps, j.weight_decay, j.grad_clip, j.upload_encoding, "
	"j.max_upload_bytes FROM result r JOIN workunit w ON w.id=r.workunitid "
	"JOIN job j ON j.id=w.jobid WHERE r.id=?";
#define S struct sent
static const struct ct_dl_col sent_cols[] = {
	CT_DL_COL(S, name), CT_DL_COL(S, deadline), CT_DL_COL(S, wu_name), CT_DL_COL(S, jobid),
	CT_DL_COL(S, round), CT_DL_COL(S, shard), CT_DL_COL(S, seed), CT_DL_COL(S, model_sha),
	CT_DL_COL(S, model_size), CT_DL_COL(S, data_sha), CT_DL_COL(S, data_size),
	CT_DL_COL(S, steps), CT_DL_COL(S, batch), CT_DL_COL(S, seq), CT_DL_COL(S, hp[0]),
	CT_DL_COL(S, hp[1]), CT_DL_COL(S, hp[2]), CT_DL_COL(S, hp[3]), CT_DL_COL(S, hp[4]),
	CT_DL_COL(S, hp[5]), CT_DL_COL(S, upload_encoding), CT_DL_COL(S, max_upload),
};
#undef S

/* A job's LoRA parameters as the reply says them, kept for the next
 * result of the same job (a reply's results are mostly of one). */
struct lora_xml {
	int64_t jobid;		/* 0: none yet */
	struct ct_buf xml;
};

static int put_lora(struct ct_buf *b, struct ct_db *db, struct lora_xml *l, int64_t jobid)
{
	int rc = 0;

	if (l->jobid != jobid) {
		ct_buf_reset(&l->xml);
		l->jobid = 0;
		rc = ct_lora_wu_xml(&l->xml, db, jobid);
		if (rc < 0)
			return rc;
		l->jobid = jobid;
	}
	return l->xml.len ? ct_buf_append(b, l->xml.data, l->xml.len) : 0;
}

static int put_workunit(struct ct_buf *b, struct ct_server *srv, struct ct_db *db,
			struct lora_xml *lora, const struct sent *s)
{
	static const char *const dbl[] = { "lr", "beta1", "beta2", "eps", "weight_decay",
					   "grad_clip" };
	int rc;

	rc = ct_xml_open(b, "workunit");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", s->wu_name);
	if (rc == 0) rc = ct_xml_elem_int64(b, "job_id", s->jobid);
	if (rc == 0) rc = ct_xml_elem_int64(b, "round", s->round);
	if (rc == 0) rc = ct_xml_elem_int64(b, "shard", s->shard);
	if (rc == 0) rc = ct_xml_elem_int64(b, "steps", s->steps);
	if (rc == 0) rc = ct_xml_elem_int64(b, "batch", s->batch);
	if (rc == 0) rc = ct_xml_elem_int64(b, "seq", s->seq);
	for (int i = 0; rc == 0 && i < 6; i++)
		rc = ct_xml_elem_double(b, dbl[i], s->hp[i]);
	if (rc == 0) rc = ct_xml_elem_int64(b, "seed", s->seed);
	if (rc == 0) rc = ct_xml_elem_str(b, "upload_encoding", s->upload_encoding);
	if (rc == 0) rc = put_lora(b, db, lora, s->jobid);
	if (rc == 0) rc = put_file(b, srv, "model", s->model_sha, s->model_size);
	if (rc == 0) rc = put_file(b, srv, "data", s->data_sha, s->data_size);
	if (rc == 0) rc = ct_xml_close(b, "workunit");
	return rc;
}

static int put_result(struct ct_buf *b, struct sched_ctx *c, const struct sent *s)
{
	char token[CT_TOKEN_MAX];
	const char *name = s->name;
	int64_t deadline = s->deadline, max = s->max_upload;
	int rc;

	rc = ct_token_make(c->srv->secret, sizeof(c->srv->secret), name, c->hostid, max,
			   deadline + c->srv->upload_token_slack, token, sizeof(token));
	if (rc == 0) rc = ct_xml_open(b, "result");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", name);
	if (rc == 0) rc = ct_xml_elem_str(b, "wu_name", s->wu_name);
	if (rc == 0) rc = ct_xml_elem_int64(b, "deadline", deadline);
	if (rc == 0) rc = ct_buf_appends(b, "<upload_url>");
	if (rc == 0) rc = ct_xml_escape(b, c->srv->base_url);
	if (rc == 0) rc = ct_buf_appendf(b, "/upload/%s</upload_url>\n", name);
	if (rc == 0) rc = ct_xml_elem_str(b, "upload_token", token);
	if (rc == 0) rc = ct_xml_elem_int64(b, "max_upload_bytes", max);
	if (rc == 0) rc = ct_xml_close(b, "result");
	return rc;
}

static int put_acks(struct ct_buf *b, struct sched_ctx *c)
{
	int rc = 0;

	for (int i = 0; rc == 0 && i < c->req.nrep; i++) {
		struct ack *a = &c->acks[i];
		rc = ct_xml_open(b, "ack");
		if (rc == 0) rc = ct_xml_elem_str(b, "name", a->name ? a->name : "");
		if (rc == 0) rc = ct_xml_elem_str(b, "status", a->code ? "rejected" : "accepted");
		if (rc == 0 && a->code) rc = ct_xml_elem_str(b, "code", ct_errname(a->code));
		if (rc == 0 && a->code) rc = ct_xml_elem_str(b, "message", a->message);
		if (rc == 0) rc = ct_xml_close(b, "ack");
	}
	for (int i = 0; rc == 0 && i < c->naborts; i++)
		rc = ct_xml_elem_str(b, "abort", c->aborts[i]);
	return rc;
}

/* request_delay for this reply. A host that got no work while some job's
 * newest round has every result back (validation and assimilation are
 * about to open the next round) is told to come back within a second, so
 * round turnover does not wait a whole request_delay; otherwise the
 * configured delay. */
static long reply_delay(struct sched_ctx *c)
{
	int64_t turning = 0;

	if (c->nsend > 0 || c->srv->request_delay <= 1)
		return c->srv->request_delay;
	/* from the round's counters (round_stat, kept by the result
	 * triggers): looking for a result still out walked every result of
	 * a round whose last ones were back, a million for a big round */
	if (ct_db_query_int(c->db, &turning, "SELECT COUNT(*) FROM job j JOIN `round` rd ON "
			    "rd.jobid=j.id AND rd.idx=j.cur_round LEFT JOIN round_stat s ON "
			    "s.roundid=rd.id WHERE j.status=1 AND j.cur_round < j.nrounds AND "
			    "COALESCE(s.n_unsent, 0)=0 AND COALESCE(s.n_in_progress, 0)=0", "") < 0)
		return c->srv->request_delay;
	return turning > 0 ? 1 : c->srv->request_delay;
}

/* The user's standing for the client's saver: rank by recent average
 * credit (1 = first) and results reported but not yet validated. A failed
 * count leaves the element out (the reply still goes). */
static int put_standing(struct ct_buf *b, struct sched_ctx *c)
{
	int64_t ahead = 0, pending = 0;
	int rc = 0;

	if (ct_db_query_int(c->db, &ahead, "SELECT COUNT(*) FROM `user` WHERE expavg_credit > ?",
			    "d", c->expavg_credit) == 0)
		rc = ct_xml_elem_int64(b, "rank", ahead + 1);
	if (rc == 0 && ct_db_query_int(c->db, &pending, "SELECT COUNT(*) FROM result WHERE "
				       "userid=? AND server_state=5 AND outcome=1 AND "
				       "validate_state IN (0, 4)", "l", c->userid) == 0)
		rc = ct_xml_elem_int64(b, "pending_results", pending);
	return rc;
}

static int write_reply(struct sched_ctx *c, struct ct_buf *b)
{
	struct lora_xml lora = { .xml = CT_BUF_INIT(1 << 16) };
	const char *pname = "crowdtune";
	int rc;

	ct_conf_get_str(c->srv->conf, "project_name", "crowdtune", &pname);
	rc = ct_xml_open(b, "scheduler_reply");
	if (rc == 0) rc = ct_xml_elem_int64(b, "host_id", c->hostid);
	if (rc == 0 && c->req.host_id <= 0) {	/* the host's upload secret, once */
		char hsec[CT_SHA256_HEXLEN + 1];

		ct_token_host_secret(c->srv->secret, sizeof(c->srv->secret), c->hostid, hsec);
		rc = ct_xml_elem_str(b, "host_secret", hsec);
	}
	if (rc == 0) rc = ct_xml_elem_long(b, "request_delay", told_delay(c));
	if (rc == 0) rc = ct_xml_elem_str(b, "user_name", c->user_name);
	if (rc == 0) rc = ct_xml_elem_double(b, "total_credit", c->total_credit);
	if (rc == 0) rc = ct_xml_elem_double(b, "expavg_credit", c->expavg_credit);
	if (rc == 0) rc = ct_xml_elem_str(b, "project_name", pname);
	if (rc == 0) rc = put_standing(b, c);
	if (rc == 0 && c->web_prefs_time > 0) {	/* the client applies them (cl_prefs.h) */
		rc = ct_xml_open(b, "web_prefs");
		if (rc == 0) rc = ct_xml_elem_int64(b, "mod_time", c->web_prefs_time);
		if (rc == 0) rc = ct_xml_elem_str(b, "conf", c->web_prefs);
		if (rc == 0) rc = ct_xml_close(b, "web_prefs");
	}
	if (rc == 0) rc = put_acks(b, c);
	for (int i = 0; rc == 0 && i < c->nsend; i++) {
		struct ct_db_res *r = NULL;
		struct sent s;

		rc = CT_DB_QUERY(c->db, &r, wu_sql, c->send[i]);
		if (rc == 0)
			rc = ct_dl_one(r, &s, sent_cols, CT_DL_NCOLS(sent_cols));
		if (rc == CT_ENOTFOUND) {
			rc = 0;		/* gone meanwhile: not sent */
			continue;
		}
		if (rc == 0)
			rc = put_workunit(b, c->srv, c->db, &lora, &s);
		if (rc == 0)
			rc = put_result(b, c, &s);
	}
	if (rc == 0) rc = ct_xml_close(b, "scheduler_reply");
	ct_buf_free(&lora.xml);
	return rc;
}

/* ---- the RPC ----------------------------------------------------------- */

static int http_status_for(int code)
{
	switch (code) {
	case CT_EXML: return 400;
	case CT_ETOOBIG: return 413;
	case CT_EAGAIN: return 503;
	case CT_EAUTH: case CT_EDENIED: case CT_EPROTO: return 200;
	default: return 500;
	}
}

static int run_steps(struct sched_ctx *c)
{
	int rc;

	rc = authenticate(c);
	if (rc == 0 && !cpid_valid(c->req.host_cpid))
		rc = ct_error(CT_EPROTO, "<host_cpid> must be 32 hex digits");
	if (rc == 0) rc = find_host(c);
	if (rc == 0) rc = update_host(c);
	if (rc == 0) rc = take_reports(c);
	if (rc == 0) rc = check_others(c);
	if (rc == 0) rc = find_lost(c);
	if (rc == 0) rc = assign_work(c);
	return rc;
}

int ct_sched_rpc(struct ct_server *srv, struct ct_db *db, const void *body, size_t n,
		 const char *remote_ip, struct ct_buf *out, int *status)
{
	struct sched_ctx *c = calloc(1, sizeof(*c));
	int rc, code;

	if (c == NULL)
		return CT_ENOMEM;
	c->srv = srv;
	c->db = db;
	c->ip = remote_ip ? remote_ip : "";
	*status = 200;
	rc = sched_req_parse(body, n, srv->max_inflated, &c->req);
	if (rc == 0)
		rc = run_steps(c);
	if (rc == 0) {
		size_t mark = out->len;
		rc = write_reply(c, out);
		if (rc < 0)
			out->len = mark;
	}
	if (rc < 0 && rc != CT_ENOMEM) {
		code = rc;
		if (code == CT_EDB || code == CT_EAGAIN) {
			ct_log_error("sched: %s: %s", c->ip, ct_errmsg(code));
			code = CT_EAGAIN;
		} else {
			ct_log_info("sched: %s: refused: %s", c->ip, ct_errmsg(code));
		}
		struct ct_http_resp tmp = { .body = *out };
		rc = ct_http_xml_error(&tmp, http_status_for(code), "scheduler_reply", code,
				       code == CT_EAGAIN ? "server busy, try later" : ct_errmsg(code),
				       srv->request_delay > 60 ? srv->request_delay : 60);
		*out = tmp.body;
		*status = tmp.status;
		if (rc == 0 && code == CT_EAGAIN)
			rc = CT_EAGAIN;	/* tell the caller the connection may be bad */
	}
	sched_req_free(&c->req);
	free(c);
	return rc;
}

static int sched_http(struct ct_http_req *req, struct ct_http_resp *resp)
{
	struct ct_db *db = ct_http_db(req);
	int rc, status = 200;

	resp->content_type = "application/xml";
	if (db == NULL)
		return ct_http_xml_error(resp, 503, "scheduler_reply", CT_EAGAIN,
					 "database unavailable", 60);
	rc = ct_sched_rpc(req->srv, db, req->body, req->body_len, req->remote_ip, &resp->body,
			  &status);
	resp->status = status;
	if (rc == CT_EAGAIN) {
		ct_http_db_reset(req);
		rc = 0;
	}
	return rc;
}

const struct ct_http_route ct_sched_routes[] = {
	{ .method = "POST", .path = "/rpc/scheduler", .handler = sched_http },
	{ .path = NULL },
};
