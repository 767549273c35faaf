/*
 * robust_aside.c - setting a round's outliers aside before it is averaged
 * (see robust_aside.h).
 */
#include "robust_aside.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "credit.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/dl_host.h"
#include "data/dl_job.h"
#include "data/dl_result.h"
#include "data/dl_robust.h"
#include "data/dl_workunit.h"
#include "data/result_state.h"
#include "robust.h"
#include "data/wu_state.h"

/* One decision about a WU's canonical result. */
struct aside {
	int64_t jobid, wuid, resultid, hostid;
	int idx, shard, action;
	double cos, ratio;
	char msg[256];
};

/* Every valid result of the WU becomes invalid, its credit revoked. */
static int invalidate_valid(struct ct_db *db, int64_t wuid, int64_t now, const char *why,
			    int *n)
{
	struct ct_result_host_row *v = NULL;
	int64_t ids[64], hosts[64];
	size_t nv = 0;
	int rc;

	*n = 0;
	rc = ct_result_list_valid(db, wuid, &v, &nv);
	if (rc < 0)
		return rc;
	for (; *n < 64 && (size_t)*n < nv; (*n)++) {
		ids[*n] = v[*n].id;
		hosts[*n] = v[*n].hostid;
	}
	free(v);
	for (int i = 0; rc >= 0 && i < *n; i++) {
		rc = ct_res_move(db, ids[i], CT_RES_VALID, CT_RES_INVALID,
				 &(struct ct_res_change){ .error_message = why });
		if (rc >= 0)
			rc = ct_credit_revoke(db, ids[i], now);
		if (rc >= 0 && hosts[i] > 0)
			rc = ct_host_count_invalid(db, hosts[i]);
	}
	return rc < 0 ? rc : 0;
}

/* The transaction of a decision: the WU still has this canonical result;
 * set aside (or not), the event row, the job's notice. */
static int aside_txn(struct ct_db *db, void *arg)
{
	struct aside *s = arg;
	int64_t now = ct_db_now(db);
	struct ct_workunit_row w;
	int rc, n = 0;

	rc = ct_wu_lock(db, s->wuid, &w, NULL, NULL);
	if (rc < 0 || w.canonical_resultid != s->resultid)
		return rc < 0 ? rc : 0;	/* another assimilator decided */
	if (s->action != CT_ROBUST_ACCEPTED) {
		rc = invalidate_valid(db, s->wuid, now, s->action == CT_ROBUST_ROUND_FAILED ?
				      "set aside: the round's average raised the eval loss" :
				      "set aside: unlike the round's other shards", &n);
		/* set aside by the server: the WU's caps are not spent by it */
		if (rc >= 0)
			rc = ct_wu_move(db, s->wuid, CT_WU_READY, CT_WU_OPEN,
					&(struct ct_wu_change){ .now = now, .extra = n });
	}
	if (rc >= 0)
		rc = ct_robust_event_insert(db, &(struct ct_robust_event_row){
				.jobid = s->jobid, .wuid = s->wuid, .resultid = s->resultid,
				.hostid = s->hostid, .round_idx = s->idx, .shard = s->shard,
				.action = s->action, .cos = s->cos, .ratio = s->ratio }, now);
	if (rc >= 0 && s->msg[0])
		rc = ct_job_notice_prepend(db, s->jobid, s->msg);
	return rc < 0 ? rc : 1;
}

/* WU, canonical result and its host of shard `shard` of the round. */
static int shard_wu(struct ct_db *db, struct aside *s)
{
	struct ct_robust_shard_row r;
	int rc;

	rc = ct_robust_shard_get(db, s->jobid, s->idx, s->shard, &r);
	if (rc < 0 && rc != CT_ENOTFOUND)
		return rc;
	s->wuid = r.wuid;
	s->resultid = r.resultid;
	s->hostid = r.hostid;
	return s->wuid > 0 ? 0 : ct_error(CT_ESTATE, "job %lld round %d: no canonical result "
					  "of shard %d", (long long)s->jobid, s->idx, s->shard);
}

/* The worst outlier: lowest cosine below the limit, else the size
 * furthest from the others' median. */
static int worst(const struct ct_robust *r, const int *out)
{
	int w = -1;

	for (int i = 0; i < r->k; i++) {
		if (!out[i])
			continue;
		if (w < 0 || r->cos[i] < r->cos[w] ||
		    (r->cos[i] == r->cos[w] && fabs(log(r->ratio[i])) > fabs(log(r->ratio[w]))))
			w = i;
	}
	return w;
}

int ct_robust_aside_outlier(const struct ct_conf *conf, struct ct_db *db, int64_t jobid,
			    int idx, const struct ct_robust *r, const int *out)
{
	struct aside s = { .jobid = jobid, .idx = idx };
	long on = 1, maxre = 2;
	int64_t times = 0;
	int rc;

	rc = conf ? ct_conf_get_int(conf, "daemons.robust_set_aside", 1, 0, 1, &on) : 0;
	if (rc == 0 && conf)
		rc = ct_conf_get_int(conf, "daemons.robust_max_reissue", 2, 0, 1000, &maxre);
	if (rc < 0 || !on)
		return rc < 0 ? rc : 0;
	s.shard = worst(r, out);
	if (s.shard < 0)
		return 0;
	s.cos = r->cos[s.shard];
	s.ratio = r->ratio[s.shard];
	s.shard = r->shard[s.shard];	/* from the update's index to its shard */
	rc = shard_wu(db, &s);
	if (rc == 0)
		rc = ct_robust_wu_events(db, s.wuid, CT_ROBUST_SET_ASIDE, &times);
	if (rc < 0)
		return rc;
	s.action = times < maxre ? CT_ROBUST_SET_ASIDE : CT_ROBUST_ACCEPTED;
	if (s.action == CT_ROBUST_SET_ASIDE)
		snprintf(s.msg, sizeof(s.msg), "round %d, shard %d: canonical result set aside "
			 "(cosine %.3f, %.3gx the others' median size), work unit re-issued to "
			 "other hosts (%lld of %ld)", idx, s.shard, s.cos, s.ratio,
			 (long long)times + 1, maxre);
	else
		snprintf(s.msg, sizeof(s.msg), "round %d, shard %d: still unlike the others "
			 "after %lld re-issues (cosine %.3f, %.3gx); accepted: unusual data, or "
			 "colluders on every network it went to", idx, s.shard, (long long)times,
			 s.cos, s.ratio);
	rc = ct_db_txn(db, aside_txn, &s);
	if (rc > 0)
		ct_log_warn("assimilator: job %lld: %s", (long long)jobid, s.msg);
	if (rc < 0)
		return rc;
	return rc > 0 && s.action == CT_ROBUST_SET_ASIDE;
}

int ct_robust_aside_caught(struct ct_db *db, int64_t jobid, int idx)
{
	struct ct_robust_shard_row rows[16];
	struct aside s[16];
	size_t n = 0;
	int done = 0, rc;

	/* unreplicated (min_quorum 1) canonical results whose host has an
	 * invalid result: caught by a spot-check or a set-aside */
	rc = ct_robust_caught_list(db, jobid, idx, rows, 16, &n);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		s[i] = (struct aside){ .jobid = jobid, .idx = idx, .wuid = rows[i].wuid,
				       .resultid = rows[i].resultid, .hostid = rows[i].hostid,
				       .shard = rows[i].shard, .action = CT_ROBUST_CAUGHT };
		snprintf(s[i].msg, sizeof(s[i].msg), "round %d, shard %d: unreplicated result of "
			 "host %lld, caught since, set aside; work unit re-issued with replicas",
			 idx, s[i].shard, (long long)s[i].hostid);
	}
	for (size_t i = 0; i < n; i++) {
		rc = ct_db_txn(db, aside_txn, &s[i]);
		if (rc < 0)
			return rc;
		if (rc > 0)
			ct_log_warn("assimilator: job %lld: %s", (long long)jobid, s[i].msg);
		done += rc > 0;
	}
	return done;
}

int ct_robust_aside_round(struct ct_db *db, int64_t jobid, int idx, int nwus,
			  double base_loss, double loss, const char *msg)
{
	int done = 0, rc = 0;

	for (int k = 0; k < nwus; k++) {
		struct aside s = { .jobid = jobid, .idx = idx, .shard = k,
				   .action = CT_ROBUST_ROUND_FAILED, .cos = base_loss,
				   .ratio = loss };

		rc = shard_wu(db, &s);
		if (rc == CT_ESTATE)	/* already set aside by an earlier pass */
			continue;
		if (rc == 0)
			rc = ct_db_txn(db, aside_txn, &s);
		if (rc < 0)
			return rc;
		done += rc > 0;
	}
	if (done > 0) {
		rc = ct_job_notice_prepend(db, jobid, msg);
		ct_log_warn("assimilator: job %lld: %s", (long long)jobid, msg);
	}
	return rc < 0 ? rc : done;
}

/* ---- the cross-shard check of a round ---------------------------------- */

static int report(struct ct_db *db, int64_t jobid, int idx, const struct ct_robust *r,
		  const int *out)
{
	char msg[256];
	int rc = 0;

	for (int i = 0; rc >= 0 && i < r->k; i++) {
		if (!out[i])
			continue;
		snprintf(msg, sizeof(msg), "round %d, shard %d: its update is unlike the other "
			 "shards' (cosine %.3f with their mean, %.3gx their median size): "
			 "possible poisoning, or a shard unlike the others", idx, r->shard[i], r->cos[i],
			 r->ratio[i]);
		ct_log_warn("assimilator: job %lld: %s", (long long)jobid, msg);
		rc = ct_job_notice_first(db, jobid, msg);
	}
	return rc < 0 ? rc : 0;
}

int ct_robust_check_round(const struct ct_conf *conf, struct ct_db *db, int64_t jobid,
			  int idx, int k, size_t n, const float *base,
			  ct_robust_load_fn load, void *ctx, const int *shards)
{
	struct ct_robust_limits lim = { .min_cos = 0.0, .max_ratio = 4.0 };
	struct ct_robust r;
	int out[CT_ROBUST_MAX_K], nout = 0, rc;
	float *w;

	rc = ct_robust_aside_caught(db, jobid, idx);
	if (rc != 0 || k < 3 || k > CT_ROBUST_MAX_K)
		return rc;
	rc = conf ? ct_conf_get_double(conf, "daemons.robust_min_cos", 0.0, -1.0, 1.0,
				       &lim.min_cos) : 0;
	if (rc == 0 && conf)
		rc = ct_conf_get_double(conf, "daemons.robust_max_ratio", 4.0, 1.0, 1e6,
					&lim.max_ratio);
	if (rc < 0)
		return rc;
	w = malloc(n * sizeof(float));
	if (w == NULL)
		return CT_ENOMEM;
	rc = ct_robust_init(&r, k, n);
	for (int i = 0; rc == 0 && shards != NULL && i < k; i++)
		r.shard[i] = shards[i];
	for (int i = 0; rc == 0 && i < k; i++) {
		rc = load(ctx, i, w);
		if (rc == 0)
			ct_robust_add(&r, i, base, w);
	}
	for (int i = 0; rc == 0 && i < k; i++) {
		rc = load(ctx, i, w);
		if (rc == 0)
			ct_robust_score(&r, i, base, w);
	}
	if (rc == 0) {
		double cmin = 2.0, rlo = 1e300, rhi = 0.0;

		nout = ct_robust_verdict(&r, &lim, out);
		for (int i = 0; i < k; i++) {
			cmin = r.cos[i] < cmin ? r.cos[i] : cmin;
			rlo = r.ratio[i] < rlo ? r.ratio[i] : rlo;
			rhi = r.ratio[i] > rhi ? r.ratio[i] : rhi;
		}
		ct_log_info("assimilator: job %lld round %d: cross-shard check of %d: lowest "
			    "cosine %.3f, sizes %.3g..%.3gx the others' median, %d outlier(s)",
			    (long long)jobid, idx, k, cmin, rlo, rhi, nout);
	}
	if (rc == 0 && nout > 0)
		rc = report(db, jobid, idx, &r, out);
	if (rc == 0 && nout > 0)
		rc = ct_robust_aside_outlier(conf, db, jobid, idx, &r, out);
	ct_robust_free(&r);
	free(w);
	return rc;
}
