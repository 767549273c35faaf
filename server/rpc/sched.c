/*
 * sched.c - the scheduler RPC (see sched_rpc.h and doc/protocol.md).
 *
 * One request runs these steps, each on the caller's connection:
 *   1. parse (sched_req.c)          4. take reports (sched_report.c)
 *   2. authenticate the account     5. aborts and lost-result resends
 *   3. find/create the host, devices 6. claim new results: candidates
 *                                      from the ready-to-send cache
 *                                      (feeder.h), one transaction
 * then writes the reply. Statements are batched (IN lists, dl.h):
 * an RPC's cost is mostly its number of statements (doc/internals-
 * server.md, "What a scheduler RPC reads"). A refused request (XML, PROTO, AUTH, DENIED)
 * changes nothing; a bad report only gets a rejecting <ack>.
 */
#include "sched_rpc.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "account.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_xml.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/db_args.h"
#include "data/dl.h"
#include "data/dl_host.h"
#include "data/dl_chain.h"
#include "data/dl_result.h"
#include "data/dl_sched.h"
#include "data/dl_workunit.h"
#include "data/dl_worklimit.h"
#include "data/wu_state.h"
#include "data/result_state.h"
#include "eligibility.h"
#include "data/lock_order.h"
#include "data/lora_job.h"
#include "feeder.h"
#include "sched_report.h"
#include "sched_req.h"
#include "data/server.h"
#include "token.h"
#include "validate/trust.h"
#include "validate/worklimit.h"

#define MAX_SEND (CT_SCHED_MAX_WANT + CT_SCHED_MAX_OTHER)

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
	struct sched_ack acks[CT_SCHED_MAX_REPORTS];
	const char *aborts[CT_SCHED_MAX_OTHER];
	int naborts;
	int64_t send[MAX_SEND];	/* result ids to put in the reply */
	int nsend;
	int nnew;		/* new results among them: the last nnew */
	struct ct_sched_sent fresh[CT_SCHED_MAX_WANT];	/* the new ones' rows */
	int looked;		/* its caps left room and work was looked for */
	int64_t work_after;	/* > 0: called before its request_delay, no new work */
	/* read once per request (load_host), for the caps and deadlines */
	struct ct_wlim_host wh;
	int64_t host_cap, next_work_time;
	int host_read;		/* authenticate() read them, or the host is new */
	int host_new;		/* added in this request: no devices, no results */
	char device_sig[65];	/* the host's devices' digest as read */
	int report_errors;	/* reports taken as client errors */
	int report_successes;	/* and as reported (pending validation) */
	int64_t ahead, pending;	/* the account's standing when authenticated */
	struct ct_wlim_policy wlp;
	/* the deadline estimate of the job of the last claim (est_job) */
	int64_t est_job;
	struct ct_wlim_estimate est;
};

/* ---- steps 2 and 3: account and host ------------------------------------ */

/* The host's columns the caps and request_delay need (load_host). */
static void take_host(struct sched_ctx *c, const struct ct_host_account *a)
{
	c->host_cap = a->max_in_progress;
	c->consecutive_valid = a->consecutive_valid;
	c->wh.nvalid = a->nresults_valid;
	c->next_work_time = a->next_work_time;
	snprintf(c->device_sig, sizeof(c->device_sig), "%s", a->device_sig);
	c->host_read = 1;
}

/* The account by its key, with the host the request names when it is
 * the account's (one statement). */
static int authenticate(struct sched_ctx *c)
{
	struct ct_host_account a;
	char hash[65];
	int rc;

	rc = ct_account_key_hash(c->req.authenticator, hash);
	if (rc < 0)	/* not a key at all: say so, not "unknown" */
		return ct_error(CT_EAUTH, "malformed account key (want %d hex digits)",
				CT_ACCOUNT_KEY_HEXLEN);
	rc = ct_host_account_read(c->db, hash, c->req.host_id > 0 ? c->req.host_id : 0, &a);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_EAUTH, "unknown account key");
	if (rc < 0)
		return rc;
	c->userid = a.userid;
	c->teamid = a.teamid;
	snprintf(c->user_name, sizeof(c->user_name), "%s", a.user_name);
	c->total_credit = a.total_credit;
	c->expavg_credit = a.expavg_credit;
	snprintf(c->web_prefs, sizeof(c->web_prefs), "%s", a.web_prefs);
	c->web_prefs_time = a.web_prefs_time;
	c->ahead = a.ahead;
	c->pending = a.pending;
	if (a.hostid > 0) {
		c->hostid = a.hostid;
		take_host(c, &a);
	}
	return 0;
}

/* 1 if s is 32 hex digits (either case). */
static int cpid_valid(const char *s)
{
	unsigned char raw[16];

	return ct_hex_decode(s, raw, sizeof(raw)) == 0;
}

/* The request's description of the host (dev: room for its devices). */
static struct ct_host_desc host_desc(const struct sched_ctx *c, struct ct_host_device *dev)
{
	const struct sched_req *r = &c->req;

	for (int i = 0; i < r->ndev && i < CT_SCHED_MAX_DEVICES; i++)
		dev[i] = (struct ct_host_device){ .name = r->dev[i].name, .vendor = r->dev[i].vendor,
			.type = r->dev[i].type, .global_mem = r->dev[i].global_mem,
			.compute_units = r->dev[i].compute_units, .conforming = r->dev[i].conforming };
	return (struct ct_host_desc){ .hostname = r->hostname, .os = r->os,
				      .cpu_model = r->cpu_model, .client_version = r->client_version,
				      .last_ip = c->ip, .ncpus = r->ncpus, .ram_bytes = r->ram_bytes,
				      .dev = dev, .ndev = r->ndev,
				      .device_sig = c->host_read ? c->device_sig : NULL };
}

static int find_host(struct sched_ctx *c)
{
	struct ct_host_device dev[CT_SCHED_MAX_DEVICES];
	struct ct_host_desc d;
	int added = 0, rc;

	if (c->req.host_id > 0) {	/* read with the account (authenticate) */
		if (c->hostid != c->req.host_id)
			return ct_error(CT_EDENIED, "host %" PRId64 " does not belong to this account",
					c->req.host_id);
		return 0;
	}
	d = host_desc(c, dev);
	rc = ct_host_find_or_add(c->db, c->userid, c->req.host_cpid, &d, ct_db_now(c->db),
				 &c->hostid, &added);
	if (rc == 0 && added) {
		/* its row as the INSERT left it (the schema's defaults, this
		 * RPC and its devices written): nothing to read back */
		struct ct_host_account a = { .hostid = c->hostid };

		take_host(c, &a);
		c->host_new = 1;
		ct_log_info("sched: new host %" PRId64 " for user %" PRId64, c->hostid, c->userid);
	}
	return rc;
}

/* The host's row and devices after the request, with the client errors
 * its reports counted (take_reports). A host added in this request has
 * its row written (find_host) and no results of its own, unless a
 * concurrent request sent it some that this one then reported. */
static int update_host(struct sched_ctx *c)
{
	struct ct_host_device dev[CT_SCHED_MAX_DEVICES];
	struct ct_host_desc d;
	int rc = 0;

	if (c->host_new) {
		for (int i = 0; rc == 0 && i < c->report_errors; i++)
			rc = ct_host_count_error(c->db, c->hostid);
		return rc;
	}
	d = host_desc(c, dev);
	return ct_host_rpc_update(c->db, c->hostid, &d, c->report_errors, ct_db_now(c->db));
}

/* ---- step 4: reports (sched_report.c) ------------------------------------ */

static int take_reports(struct sched_ctx *c)
{
	return sched_take_reports(c->db, c->hostid, &c->req, c->acks, &c->report_errors,
				  &c->report_successes);
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
 * that was then resent as lost looped). One autocommit UPDATE
 * guarded by the old state, without the WU's lock: a lost race moves
 * nothing, and a deadlock with a WU's transaction is retried by
 * ct_db_execa. */
static int drop_canceled(struct sched_ctx *c, int64_t resultid)
{
	int rc = ct_res_move(c->db, resultid, CT_RES_IN_PROGRESS, CT_RES_DIDNT_NEED,
			     &(struct ct_res_change){ .now = ct_db_now(c->db) });

	/* no longer in progress: the caps' counts, when read, say so */
	if (rc > 0 && c->wh.counted) {
		c->wh.inprog--;
		c->wh.acc_inprog--;
	}
	return rc < 0 ? rc : 0;
}

/* 1 if the state task `name` (<result>.state) is still asked of this
 * host, 0 if not (abort it), or a db error. */
static int state_task_open(struct sched_ctx *c, const char *name)
{
	struct ct_dl_state_req q;
	char rname[96];
	size_t n = strlen(name) - strlen(CT_STATE_SUFFIX);

	if (n >= sizeof(rname))
		return 0;
	memcpy(rname, name, n);
	rname[n] = '\0';
	return ct_dl_state_req_by_name(c->db, rname, c->hostid, &q);
}

static int check_others(struct sched_ctx *c)
{
	int rc = 0;

	for (int i = 0; rc >= 0 && i < c->req.nother; i++) {
		struct ct_sched_held h;
		int64_t id = 0;
		int mine, abort = 1;

		if (sched_is_state_task(c->req.other[i])) {	/* kept while it is asked for */
			rc = state_task_open(c, c->req.other[i]);
			if (rc == 0)
				c->aborts[c->naborts++] = c->req.other[i];
			continue;
		}
		rc = ct_sched_held_get(c->db, c->req.other[i], &h);
		if (rc < 0 && rc != CT_ENOTFOUND)
			break;
		if (rc == 0) {
			mine = h.hostid == c->hostid && h.server_state == CT_RS_IN_PROGRESS;
			abort = !mine || h.error_mask != 0;
			id = mine && abort ? h.id : 0;
		}
		rc = 0;
		if (abort)
			c->aborts[c->naborts++] = c->req.other[i];
		if (id > 0)
			rc = drop_canceled(c, id);
	}
	return rc;
}

/* A host added in this request has no results, lost or counted: only its
 * account's counts, for a request for work (the caps, load_host). */
static int new_host_counts(struct sched_ctx *c)
{
	struct ct_dl_wlim_counts k;
	int64_t now = ct_db_now(c->db);
	int rc;

	if (c->req.want <= 0)
		return 0;
	rc = ct_dl_wlim_counts_account(c->db, c->userid, now - CT_WLIM_DAY, &k);
	if (rc == 0)
		ct_wlim_counted(&c->wh, &k);
	return rc;
}

/* Results in progress on this host that the client did not mention: sent
 * again, unless their WU was canceled (then they are over). */
static int find_lost(struct sched_ctx *c)
{
	struct ct_sched_held rows[64];
	int64_t drop[64];
	int n = 0, ndrop = 0, rc;

	if (c->host_new)
		return new_host_counts(c);
	/* a request for work reads the caps' counts with them (load_host) */
	if (c->req.want > 0) {
		struct ct_dl_wlim_counts k;
		int64_t now = ct_db_now(c->db);

		rc = ct_dl_wlim_counts_held(c->db, c->userid, c->hostid, now - CT_WLIM_DAY, now, &k,
					    rows, 64, &n);
		if (rc == CT_ENOTFOUND)
			rc = ct_error(CT_EDB, "host counts: no row");
		if (rc == 0)
			ct_wlim_counted(&c->wh, &k);
	} else {
		rc = ct_sched_in_progress(c->db, c->hostid, ct_db_now(c->db), rows, 64, &n);
	}
	for (int i = 0; i < n; i++) {
		if (listed(c, rows[i].name))
			continue;
		if (rows[i].error_mask != 0)
			drop[ndrop++] = rows[i].id;
		else if (c->nsend < MAX_SEND)
			c->send[c->nsend++] = rows[i].id;
	}
	for (int i = 0; rc == 0 && i < ndrop; i++)
		rc = drop_canceled(c, drop[i]);
	return rc;
}

/* ---- step 6: new work -------------------------------------------------- */

/* A trusted host may get WU wuid (result resultid) without replication
 * (BOINC's adaptive replication; the decision and its effect are the
 * transitioner's code); `on`: its job has adaptive replication. */
static int maybe_adaptive(struct ct_db *db, struct sched_ctx *c, int64_t wuid,
			  int64_t resultid, int on)
{
	uint32_t r;
	int rc;

	if (c->consecutive_valid < 1 || !on)
		return 0;
	/* a CSPRNG draw: thread-safe, and a host cannot predict it (on a
	 * failure of the random source, replicate as usual) */
	if (ct_random_bytes(&r, sizeof(r)) < 0)
		return 0;
	/* trust.h: slow trust, a spot-check floor, one per round */
	rc = ct_trust_allow(c->srv->conf, db, c->hostid, wuid, c->consecutive_valid,
			    r / 4294967296.0);
	if (rc <= 0)
		return rc;
	rc = ct_adaptive_apply(db, wuid, resultid);
	if (rc > 0)
		rc = ct_trust_note(db, wuid, c->hostid);
	else if (rc == 0)
		ct_log_debug("trust: host %" PRId64 ": WU %" PRId64 " replicated (another replica "
			     "sent before)", c->hostid, wuid);
	return rc < 0 ? rc : 0;
}

/* The deadline estimate of job jobid: the request's claims are mostly of
 * one job, which is asked once, and the requests of the last moment share
 * it (feeder.h). */
static int job_estimate(struct ct_db *db, struct sched_ctx *c, int64_t jobid, int64_t wuid)
{
	int rc;

	if (c->est_job == jobid)
		return 0;
	if (ct_feeder_estimate(c->srv->feeder, jobid, &c->est)) {	/* shared, a moment old */
		c->est_job = jobid;
		return 0;
	}
	rc = ct_wlim_estimate(db, c->srv->conf, wuid, &c->est);
	if (rc == 0) {
		c->est_job = jobid;
		ct_feeder_estimate_put(c->srv->feeder, jobid, &c->est);
	}
	return rc;
}

/* ---- step 6: the claim of new work, several replicas in one transaction -- */

#define MAX_CAND 32

struct claim_batch {
	struct sched_ctx *c;
	struct ct_elig_policy ep;
	struct ct_feed_cand cand[MAX_CAND];	/* by WU id (lock order) */
	int64_t wuids[MAX_CAND];		/* cand[i].wuid */
	int n, want;
	int one_by_one;		/* a send of several lost a race: claim singly */
	/* the transaction's outcome (reset at each try) */
	struct ct_wu_sched_row wu[MAX_CAND];	/* the locked rows, by cand */
	struct ct_sched_replica *rep;
	size_t nrep;
	const struct ct_sched_replica *own[MAX_CAND];	/* cand[i]'s row */
	struct ct_elig_round_facts facts[MAX_CAND];
	int nfacts;
	int active;		/* ct_elig_active_accounts, -1 until read */
	int active_need;	/* what it was counted up to */
	int outcome[MAX_CAND];	/* enum ct_feed_outcome */
	int64_t deadline[MAX_CAND];	/* of the claimed ones */
	int got;
};

/* The group of claimed candidate i not yet done: the claimed ones with
 * its deadline (and its round and job, with by_round), marked done; their WU ids
 * (wus) or result ids into ids. Returns how many (0: i is not claimed,
 * or done). */
static int claimed_group(const struct claim_batch *b, int i, int *done, int by_round, int wus,
			 int64_t *ids)
{
	int n = 0;

	if (b->outcome[i] != CT_FEED_CLAIMED || done[i])
		return 0;
	for (int j = i; j < b->n; j++)
		if (b->outcome[j] == CT_FEED_CLAIMED && !done[j] && b->deadline[j] == b->deadline[i] &&
		    (!by_round || (b->wu[j].roundid == b->wu[i].roundid &&
				   b->cand[j].jobid == b->cand[i].jobid))) {
			ids[n++] = wus ? b->cand[j].wuid : b->cand[j].resultid;
			done[j] = 1;
		}
	return n;
}

/* The claimed results' WUs: transition_time pulled down to their
 * deadlines, one statement per distinct deadline (usually one). */
static int pull_wus(struct ct_db *db, struct claim_batch *b)
{
	int done[MAX_CAND] = { 0 }, rc = 0;

	for (int i = 0; rc >= 0 && i < b->n; i++) {
		int64_t ids[MAX_CAND];
		int n = claimed_group(b, i, done, 0, 1, ids);

		if (n > 0)
			rc = ct_wu_wake_ids(db, ids, n, b->deadline[i], 1);
	}
	return rc;
}

static int cand_by_wu(const void *a, const void *b)
{
	const struct ct_feed_cand *x = a, *y = b;

	return ct_lock_order_cmp(x->wuid, x->resultid, y->wuid, y->resultid);
}

/* The round's facts, read the first time a candidate of it comes up. */
static int round_facts(struct ct_db *db, struct claim_batch *b, int64_t roundid,
		       struct ct_elig_round_facts **out)
{
	int rc;

	for (int i = 0; i < b->nfacts; i++)
		if (b->facts[i].roundid == roundid) {
			*out = &b->facts[i];
			return 0;
		}
	*out = &b->facts[b->nfacts++];
	rc = ct_elig_round_facts(db, &b->ep, roundid, &b->c->who, *out);
	return rc;
}

/* The per-WU rules for candidate i against its WU's rows; b->own[i] = its
 * own row when still unsent. Returns the rule refused, or NULL. */
static const char *wu_rules(struct claim_batch *b, int i)
{
	const struct ct_feed_cand *k = &b->cand[i];
	const char *why = NULL;

	b->own[i] = NULL;
	for (size_t j = 0; j < b->nrep; j++) {
		const struct ct_sched_replica *r = &b->rep[j];

		if (r->wuid != k->wuid)
			continue;
		if (r->id == k->resultid && r->state == CT_RS_UNSENT)
			b->own[i] = r;
		if (r->hostid != 0 && why == NULL)
			why = ct_elig_replica_rule(&b->c->who, r->userid, r->hostid, r->cpid, r->net);
	}
	return why;
}

/* The round rules for candidate i (eligibility.h), facts f and its row. */
static int round_rules(struct ct_db *db, struct claim_batch *b, int i,
		       const struct ct_elig_round_facts *f, const char **why)
{
	const struct ct_sched_replica *own = b->own[i];
	struct ct_elig_round r = { .nwus = own->nwus, .quorum = b->wu[i].min_quorum,
				   .has_net = b->c->who.net[0] != '\0', .net_sent = f->net_sent,
				   .account_inprog = f->account_inprog, .active = 1 << 30 };
	int rc, need;

	for (size_t j = 0; j < b->nrep; j++) {
		const struct ct_sched_replica *x = &b->rep[j];
		int s;

		if (x->wuid != b->cand[i].wuid || !x->live || x->userid == b->c->userid)
			continue;
		s = ct_elig_round_shared(f, x->userid);
		if (s > r.shared)
			r.shared = s;
	}
	if (ct_elig_round_rule(&b->ep, &r, why))
		return 1;
	/* refused: the facts that lift a refusal */
	need = ct_elig_accounts_needed(&b->ep, r.nwus, r.quorum);
	if (b->active < 0 || b->active_need != need) {
		rc = ct_elig_active_accounts(db, &b->ep, need, &b->active);
		if (rc < 0)
			return rc;
		b->active_need = need;
	}
	r.active = b->active;
	r.waited = (int)(ct_db_now(db) - own->create_time);
	return ct_elig_round_rule(&b->ep, &r, why);
}

/* The change that sends candidate i to the host. */
static struct ct_res_change send_change(const struct claim_batch *b, int i, int64_t now)
{
	const struct sched_ctx *c = b->c;

	/* where it goes is recorded with the send: the placement rules of its
	 * WU and round read sent_net and sent_round */
	return (struct ct_res_change){ .now = now, .hostid = c->hostid, .userid = c->userid,
				       .teamid = c->teamid, .deadline = b->deadline[i],
				       .sent_net = c->who.net, .sent_round = b->wu[i].roundid,
				       .jobid = b->cand[i].jobid };
}

/* Candidate i is the host's: its deadline, and the facts the next
 * candidate of the round is judged by (as if the send succeeded: one that
 * then loses a race only made the rules stricter for the rest). One by
 * one, the result moves here (guarded by its unsent state); else
 * send_claimed() moves the batch's at once. Returns 1 (claimed), 0 (lost a
 * race: no longer unsent) or an error. */
static int claim_cand(struct ct_db *db, struct claim_batch *b, int i,
		      struct ct_elig_round_facts *f)
{
	struct sched_ctx *c = b->c;
	int64_t now = ct_db_now(db);
	int rc;

	rc = job_estimate(db, c, b->wu[i].jobid, b->cand[i].wuid);
	if (rc < 0)
		return rc;
	b->deadline[i] = ct_wlim_deadline(&c->wlp, &c->est, c->wh.nvalid, b->wu[i].delay_bound,
					  now);
	if (b->one_by_one) {
		struct ct_res_change ch = send_change(b, i, now);

		rc = ct_res_move(db, b->cand[i].resultid, CT_RES_UNSENT, CT_RES_IN_PROGRESS, &ch);
		if (rc <= 0)
			return rc;
	}
	f->account_inprog++;
	if (c->who.net[0])
		f->net_sent++;
	for (size_t j = 0; j < b->nrep; j++)
		if (b->rep[j].wuid == b->cand[i].wuid && b->rep[j].live &&
		    b->rep[j].userid != c->userid && ct_elig_round_add(f, b->rep[j].userid) < 0)
			return CT_ENOMEM;
	return 1;
}

/* The claimed candidates moved to the host, one statement per distinct
 * deadline and round (usually one), then adaptive replication for each.
 * A send that moved fewer than it claimed (another instance, or a job
 * cancel, took one meanwhile) asks for the transaction again, one result
 * at a time (CT_EAGAIN). */
static int send_claimed(struct ct_db *db, struct claim_batch *b)
{
	int64_t now = ct_db_now(db);
	int done[MAX_CAND] = { 0 }, rc = 0;

	for (int i = 0; !b->one_by_one && rc >= 0 && i < b->n; i++) {
		struct ct_res_change ch = send_change(b, i, now);
		int64_t ids[MAX_CAND];
		int n = claimed_group(b, i, done, 1, 0, ids);

		if (n == 0)
			continue;
		rc = ct_res_send_many(db, ids, n, &ch);
		if (rc >= 0 && rc != n) {
			b->one_by_one = 1;
			return CT_EAGAIN;
		}
	}
	for (int i = 0; rc >= 0 && i < b->n; i++)
		if (b->outcome[i] == CT_FEED_CLAIMED)
			rc = maybe_adaptive(db, b->c, b->cand[i].wuid, b->cand[i].resultid,
					    b->own[i]->job.adaptive);
	return rc < 0 ? rc : 0;
}

static void batch_reset(struct claim_batch *b)
{
	free(b->rep);
	b->rep = NULL;
	b->nrep = 0;
	for (int i = 0; i < b->nfacts; i++)
		ct_elig_round_facts_free(&b->facts[i]);
	b->nfacts = 0;
	b->active = -1;
	b->got = 0;
	memset(b->wu, 0, sizeof(b->wu));
	memset(b->own, 0, sizeof(b->own));
	for (int i = 0; i < b->n; i++)
		b->outcome[i] = CT_FEED_KEEP;
}

/* The rules of eligibility.h for candidate i, after its own row was
 * found unsent: NULL when it may go to the host, else the rule. */
static int judge(struct ct_db *db, struct claim_batch *b, int i, const char *why,
		 struct ct_elig_round_facts **f, const char **out)
{
	const struct ct_sched_replica *own = b->own[i];
	struct sched_ctx *c = b->c;
	int rc;

	*out = NULL;
	/* a client that did not say it runs LoRA gets full-weight WUs
	 * only (the cache said so too, unless it was out of date) */
	if (why == NULL && own->lora && !c->req.lora)
		why = "LoRA";
	/* a WU it cannot hold stays */
	if (why == NULL && c->who.work_mem > 0 &&
	    !ct_elig_mem_rule(ct_elig_mem_need(&own->job, c->who.work_backend),
			      c->who.work_mem))
		why = "memory";
	if (why == NULL) {
		rc = round_facts(db, b, b->wu[i].roundid, f);
		if (rc == 0)
			rc = round_rules(db, b, i, *f, &why);
		if (rc < 0)
			return rc;
		if (rc == 0 && why == NULL)
			why = "round";
	}
	*out = why;
	return 0;
}

/* One try of the batch's transaction: lock, read, judge each candidate
 * in WU order by the rules of eligibility.h, claim until b->want. */
static int claim_batch_txn(struct ct_db *db, void *arg)
{
	struct claim_batch *b = arg;
	int rc;

	batch_reset(b);
	rc = ct_wu_lock_ids(db, b->wuids, b->n, b->wu);
	if (rc == 0)
		rc = ct_sched_replicas(db, b->wuids, b->n, &b->rep, &b->nrep);
	for (int i = 0; rc >= 0 && i < b->n && b->got < b->want; i++) {
		struct ct_elig_round_facts *f = NULL;
		const char *why = wu_rules(b, i);

		if (b->wu[i].id == 0 || b->wu[i].error_mask != 0 || b->own[i] == NULL) {
			b->outcome[i] = CT_FEED_GONE;
			continue;
		}
		rc = judge(db, b, i, why, &f, &why);
		if (rc < 0)
			break;
		if (why != NULL) {
			ct_log_debug("sched: host %" PRId64 ": not eligible for WU %" PRId64 " (%s)",
				     b->c->hostid, b->cand[i].wuid, why);
			continue;
		}
		rc = claim_cand(db, b, i, f);
		if (rc >= 0)
			b->outcome[i] = rc > 0 ? CT_FEED_CLAIMED : CT_FEED_GONE;
		b->got += rc > 0;
	}
	if (rc >= 0)
		rc = send_claimed(db, b);
	if (rc >= 0)
		rc = pull_wus(db, b);
	return rc < 0 ? rc : b->got;
}

static struct ct_feeder *sched_feeder(struct ct_server *srv)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct ct_feeder *f;

	pthread_mutex_lock(&mu);
	if (srv->feeder == NULL) {
		double full_s = CT_FEED_FULL_S;
		int rc = ct_conf_get_double(srv->conf, "sched.feeder_full_s", CT_FEED_FULL_S, 0.1,
					    3600.0, &full_s);

		if (rc < 0) {
			ct_log_warn("sched: %s; the ready-to-send cache is read afresh every %.0f s",
				    ct_errmsg(rc), CT_FEED_FULL_S);
			full_s = CT_FEED_FULL_S;
		}
		ct_feeder_new(&srv->feeder, full_s);
	}
	f = srv->feeder;
	pthread_mutex_unlock(&mu);
	return f;
}

/* What the reply says of claimed candidate i: from the claim's rows (its
 * WU's locked row, its own row with its job's columns). */
static void fresh_sent(struct ct_sched_sent *s, const struct claim_batch *b, int i)
{
	const struct ct_wu_sched_row *w = &b->wu[i];
	const struct ct_sched_replica *r = b->own[i];

	memset(s, 0, sizeof(*s));
	s->id = r->id;
	s->jobid = w->jobid;
	s->round = w->round_idx;
	s->shard = w->shard;
	s->seed = w->seed;
	s->deadline = b->deadline[i];
	s->model_size = w->model_size;
	s->data_size = w->data_size;
	snprintf(s->name, sizeof(s->name), "%s", r->name);
	snprintf(s->wu_name, sizeof(s->wu_name), "%s", w->name);
	snprintf(s->model_sha256, sizeof(s->model_sha256), "%s", w->model_sha256);
	snprintf(s->data_sha256, sizeof(s->data_sha256), "%s", w->data_sha256);
	s->lora = r->lora;
	s->job = r->job;
	s->found = 1;
}

/* Up to want new results for the host: candidates from the ready-to-send
 * cache, claimed in one transaction; the ones the rules refused make room
 * for the next (at most want*4+8 looked at, as many as the scan of the
 * result table this replaced). */
static int claim_new(struct sched_ctx *c, int want)
{
	struct ct_feeder *f = sched_feeder(c->srv);
	struct claim_batch *b = NULL;
	int64_t tried[4 * CT_SCHED_MAX_WANT + 8];
	int ntried = 0, limit = want * 4 + 8, rc;

	if (f == NULL)
		return CT_ENOMEM;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CT_ENOMEM;
	if (limit > (int)(sizeof(tried) / sizeof(tried[0])))
		limit = (int)(sizeof(tried) / sizeof(tried[0]));
	b->c = c;
	rc = ct_elig_policy_load(c->srv->conf, &b->ep);
	while (rc == 0 && c->nnew < want && ntried < limit) {
		int need = want - c->nnew, max = need + need / 2 + 1, n = 0;

		if (max > limit - ntried)
			max = limit - ntried;
		if (max > MAX_CAND)
			max = MAX_CAND;
		rc = ct_feeder_take(f, c->db, &c->who, (int)c->req.lora, tried, ntried, b->cand, max,
				    &n);
		if (rc < 0 || n == 0)
			break;
		qsort(b->cand, (size_t)n, sizeof(b->cand[0]), cand_by_wu);
		b->n = n;
		b->want = need;
		b->one_by_one = 0;
		for (int i = 0; i < n; i++)
			b->wuids[i] = b->cand[i].wuid;
		rc = ct_db_txn(c->db, claim_batch_txn, b);
		if (rc < 0)	/* rolled back: nothing claimed */
			for (int i = 0; i < n; i++)
				b->outcome[i] = CT_FEED_KEEP;
		ct_feeder_done(f, b->cand, b->outcome, n, &c->who);
		for (int i = 0; i < n; i++) {
			tried[ntried++] = b->cand[i].resultid;
			if (b->outcome[i] == CT_FEED_CLAIMED && c->nnew < CT_SCHED_MAX_WANT) {
				fresh_sent(&c->fresh[c->nnew++], b, i);
				c->send[c->nsend++] = b->cand[i].resultid;
			}
		}
		rc = rc < 0 ? rc : 0;
	}
	batch_reset(b);
	free(b);
	return rc;
}

/* What the caps, deadlines and request_delay need of the host, read once:
 * its row, the project's policy, and its results in progress. */
static int load_host(struct sched_ctx *c)
{
	struct ct_host_account a;
	int rc;

	rc = ct_wlim_policy_load(c->srv->conf, &c->wlp);
	if (rc == 0 && !c->host_read) {	/* a host new in this request */
		memset(&a, 0, sizeof(a));
		rc = ct_host_caps_read(c->db, c->hostid, &a);
		if (rc == 0)
			take_host(c, &a);
		rc = rc == CT_ENOTFOUND ? 0 : rc;
	}
	if (rc < 0)
		return rc;
	if (c->host_cap <= 0)
		c->host_cap = c->srv->max_in_progress;
	/* in progress, and what the caps and quota count (worklimit.h), unless
	 * find_lost read them */
	return c->wh.counted ? 0 : ct_wlim_count(c->db, c->userid, c->hostid, &c->wh);
}

/* Hoarding: the host's and account's caps from validated work, and the
 * daily quota (worklimit.h). */
static int limit_want(struct sched_ctx *c, int64_t cap, int *want)
{
	const char *why = NULL;
	int room = 0, rc;

	rc = ct_wlim_room(c->srv->conf, &c->wh, cap, &room, &why);
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
		ct_host_set_next_work(c->db, c->hostid, now + d);
	return d;
}

static int assign_work(struct sched_ctx *c)
{
	int64_t inprog = 0, cap = 0;
	int want = (int)c->req.want, rc;

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
	c->who.work_backend = ct_elig_backend_parse(c->req.work_backend);
	if (want > cap - inprog)
		want = (int)(cap - inprog);
	if (want > 0)
		rc = limit_want(c, cap, &want);
	if (rc < 0 || want <= 0)
		return rc;
	c->looked = 1;
	/* a client that did not say it runs LoRA (work_req/lora) gets
	 * full-weight WUs only (ct_feeder_take) */
	if (want > MAX_SEND - c->nsend)
		want = MAX_SEND - c->nsend;
	return claim_new(c, want);
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

/* A job's LoRA parameters as the reply says them, kept for the next
 * result of the same job (a reply's results are mostly of one). */
struct lora_xml {
	int64_t jobid;		/* 0: none yet */
	int round;		/* a round's WUs may name its carried adapters */
	struct ct_buf xml;
	char init_sha[65];	/* their lora_init file; "" none */
	int64_t init_size;
};

static int put_lora(struct ct_buf *b, struct ct_server *srv, struct ct_db *db,
		    struct lora_xml *l, const struct ct_sched_sent *s)
{
	int rc = 0;

	if (!s->lora)		/* full weights: nothing to say */
		return 0;
	if (l->jobid != s->jobid || l->round != s->round) {
		ct_buf_reset(&l->xml);
		l->jobid = 0;
		rc = ct_lora_wu_xml(&l->xml, db, s->jobid, (int)s->round, l->init_sha,
				    &l->init_size);
		if (rc < 0)
			return rc;
		l->jobid = s->jobid;
		l->round = (int)s->round;
	}
	rc = l->xml.len ? ct_buf_append(b, l->xml.data, l->xml.len) : 0;
	if (rc == 0 && l->init_sha[0] != '\0')
		rc = put_file(b, srv, "lora_init", l->init_sha, l->init_size);
	return rc;
}

static int put_workunit(struct ct_buf *b, struct ct_server *srv, struct ct_db *db,
			struct lora_xml *lora, const struct ct_sched_sent *s)
{
	static const char *const dbl[] = { "lr", "beta1", "beta2", "eps", "weight_decay",
					   "grad_clip" };
	int rc;

	rc = ct_xml_open(b, "workunit");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", s->wu_name);
	if (rc == 0) rc = ct_xml_elem_int64(b, "job_id", s->jobid);
	if (rc == 0) rc = ct_xml_elem_int64(b, "round", s->round);
	if (rc == 0) rc = ct_xml_elem_int64(b, "shard", s->shard);
	if (rc == 0) rc = ct_xml_elem_int64(b, "steps", s->job.steps);
	if (rc == 0) rc = ct_xml_elem_int64(b, "batch", s->job.batch);
	if (rc == 0) rc = ct_xml_elem_int64(b, "seq", s->job.seq);
	for (int i = 0; rc == 0 && i < 6; i++)
		rc = ct_xml_elem_double(b, dbl[i], s->job.hp[i]);
	if (rc == 0) rc = ct_xml_elem_int64(b, "seed", s->seed);
	if (rc == 0) rc = ct_xml_elem_str(b, "upload_encoding", s->job.upload_encoding);
	if (rc == 0 && s->job.chain_every > 0)
		rc = ct_xml_elem_int64(b, "chain_every", s->job.chain_every);
	if (rc == 0 && s->state_at > 0)
		rc = ct_xml_elem_int64(b, "state_at", s->state_at);
	if (rc == 0) rc = put_lora(b, srv, db, lora, s);
	if (rc == 0) rc = put_file(b, srv, "model", s->model_sha256, s->model_size);
	if (rc == 0) rc = put_file(b, srv, "data", s->data_sha256, s->data_size);
	if (rc == 0) rc = ct_xml_close(b, "workunit");
	return rc;
}

static int put_result(struct ct_buf *b, struct sched_ctx *c, const struct ct_sched_sent *s)
{
	char token[CT_TOKEN_MAX];
	const char *name = s->name;
	int64_t deadline = s->deadline, max = s->job.max_upload;
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
		struct sched_ack *a = &c->acks[i];
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
	if (ct_sched_rounds_turning(c->db, &turning) < 0)
		return c->srv->request_delay;
	return turning > 0 ? 1 : c->srv->request_delay;
}

/* The user's standing for the client's saver: rank by recent average
 * credit (1 = first) and results reported but not yet validated, as
 * authenticate() read them, with this request's own successes. */
static int put_standing(struct ct_buf *b, struct sched_ctx *c)
{
	int rc;

	rc = ct_xml_elem_int64(b, "rank", c->ahead + 1);
	if (rc == 0)
		rc = ct_xml_elem_int64(b, "pending_results", c->pending + c->report_successes);
	return rc;
}

/* The results being sent (c->send) with their WUs and jobs into
 * sent[0..c->nsend): the resent ones read (one that is gone has found 0),
 * the new ones as their claim read them. */
static int read_sent(struct sched_ctx *c, struct ct_sched_sent *sent)
{
	int old = c->nsend - c->nnew;

	memcpy(sent + old, c->fresh, (size_t)c->nnew * sizeof(*sent));
	return old > 0 ? ct_sched_sent_read(c->db, c->send, old, sent) : 0;
}

/* The states the validator asks of this host to settle disputes
 * (validate/dispute.h; doc/protocol.md "State requests"): where to upload
 * the training state after `step` of the result's WU, and the same as a
 * task a client runs like any other: the WU again as <wu>.state with
 * state_at, and a result <result>.state uploading to that place. */
static int put_state_requests(struct ct_buf *b, struct sched_ctx *c, struct lora_xml *lora)
{
	struct ct_dl_state_req *q = NULL;
	struct ct_sched_sent s[4];
	char token[CT_TOKEN_MAX], name[sizeof(s[0].name)];
	int64_t ids[4];
	size_t n = 0;
	int rc;

	if (c->host_new)	/* asked of hosts with results only */
		return 0;
	rc = ct_dl_state_req_for_host(c->db, c->hostid, ct_db_now(c->db), 4, &q, &n);
	for (size_t i = 0; i < n; i++)
		ids[i] = q[i].resultid;
	memset(s, 0, sizeof(s));
	if (rc == 0 && n > 0)
		rc = ct_sched_sent_read(c->db, ids, (int)n, s);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (snprintf(name, sizeof(name), "%s%s", q[i].result_name, CT_STATE_SUFFIX) >=
		    (int)sizeof(name))
			continue;	/* no upload name of 80 bytes: the deadline decides */
		rc = ct_token_make(c->srv->secret, sizeof(c->srv->secret), name, c->hostid,
				   q[i].max_bytes, q[i].deadline, token, sizeof(token));
		if (rc == 0) rc = ct_xml_open(b, "state_request");
		if (rc == 0) rc = ct_xml_elem_str(b, "name", q[i].result_name);
		if (rc == 0) rc = ct_xml_elem_int64(b, "step", q[i].step);
		if (rc == 0) rc = ct_xml_elem_str(b, "digest", q[i].agreed_sha);
		if (rc == 0) rc = ct_xml_elem_int64(b, "deadline", q[i].deadline);
		if (rc == 0) rc = ct_buf_appends(b, "<upload_url>");
		if (rc == 0) rc = ct_xml_escape(b, c->srv->base_url);
		if (rc == 0) rc = ct_buf_appendf(b, "/upload/%s</upload_url>\n", name);
		if (rc == 0) rc = ct_xml_elem_str(b, "upload_token", token);
		if (rc == 0) rc = ct_xml_elem_int64(b, "max_upload_bytes", q[i].max_bytes);
		if (rc == 0) rc = ct_xml_close(b, "state_request");
		if (rc < 0 || !s[i].found)
			continue;
		memcpy(s[i].name, name, sizeof(name));
		snprintf(s[i].wu_name + strlen(s[i].wu_name),
			 sizeof(s[i].wu_name) - strlen(s[i].wu_name), "%s", CT_STATE_SUFFIX);
		s[i].state_at = q[i].step;
		s[i].deadline = q[i].deadline;
		s[i].job.max_upload = q[i].max_bytes;
		rc = put_workunit(b, c->srv, c->db, lora, &s[i]);
		if (rc == 0)
			rc = put_result(b, c, &s[i]);
	}
	free(q);
	return rc;
}

static int write_reply(struct sched_ctx *c, struct ct_buf *b)
{
	struct lora_xml lora = { .xml = CT_BUF_INIT(1 << 16) };
	struct ct_sched_sent *sent = NULL;
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
	if (rc == 0) rc = put_state_requests(b, c, &lora);
	if (rc == 0 && c->nsend > 0) {
		sent = calloc((size_t)c->nsend, sizeof(*sent));
		rc = sent ? read_sent(c, sent) : CT_ENOMEM;
	}
	for (int i = 0; rc == 0 && i < c->nsend; i++) {
		if (!sent[i].found)
			continue;	/* gone meanwhile: not sent */
		rc = put_workunit(b, c->srv, c->db, &lora, &sent[i]);
		if (rc == 0)
			rc = put_result(b, c, &sent[i]);
	}
	free(sent);
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
	if (rc == 0) rc = take_reports(c);
	if (rc == 0) rc = update_host(c);
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
