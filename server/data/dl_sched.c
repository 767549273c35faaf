/*
 * dl_sched.c - the scheduler RPC's reads of results with their WUs and
 * jobs (see dl_sched.h): the statements with their column tables beside
 * them.
 */
#include "dl_sched.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"
#include "dl_web.h"
#include "result_state.h"

/* A job's columns, as both statements below read them (j.*). */
#define JOB_SQL "j.steps, j.batch, j.seq, j.max_upload_bytes, j.wu_mem_bytes, j.wu_mem_ref_bytes, " \
	"j.adaptive_replication, j.lr, j.beta1, j.beta2, j.eps, j.weight_decay, j.grad_clip, " \
	"j.upload_encoding, j.chain_every"
#define JOB_COLS(T) CT_DL_COL(T, job.steps), CT_DL_COL(T, job.batch), CT_DL_COL(T, job.seq), \
	CT_DL_COL(T, job.max_upload), CT_DL_COL(T, job.wu_mem_bytes), \
	CT_DL_COL(T, job.wu_mem_ref_bytes), \
	CT_DL_COL(T, job.adaptive), CT_DL_COL(T, job.hp[0]), CT_DL_COL(T, job.hp[1]), \
	CT_DL_COL(T, job.hp[2]), CT_DL_COL(T, job.hp[3]), CT_DL_COL(T, job.hp[4]), \
	CT_DL_COL(T, job.hp[5]), CT_DL_COL(T, job.upload_encoding), CT_DL_COL(T, job.chain_every)

#define R struct ct_sched_replica
static const struct ct_dl_col replica_cols[] = {
	CT_DL_COL(R, wuid), CT_DL_COL(R, id), CT_DL_COL(R, state), CT_DL_COL(R, userid),
	CT_DL_COL(R, hostid), CT_DL_COL(R, cpid), CT_DL_COL(R, net), CT_DL_COL(R, live),
	CT_DL_COL(R, create_time), CT_DL_COL(R, nwus), CT_DL_COL(R, lora), CT_DL_COL(R, name),
	JOB_COLS(R),
};
#undef R

int ct_sched_replicas(struct ct_db *db, const int64_t *wuids, int n,
		      struct ct_sched_replica **rows, size_t *nrows)
{
	struct ct_db_arg a[CT_DL_IN_MAX];
	struct ct_db_res *res = NULL;
	char sql[1024];
	size_t cap;
	int m, rc;

	*rows = NULL;
	*nrows = 0;
	rc = ct_dl_in_list(sql, sizeof(sql), "SELECT r.workunitid, r.id, r.server_state, "
			   "r.userid, r.hostid, COALESCE(h.host_cpid, ''), r.sent_net, "
			   CT_DL_LIVE("r") ", r.create_time, COALESCE(rd.nwus, 0), l.jobid IS NOT "
			   "NULL, r.name, " JOB_SQL " FROM result r FORCE INDEX (result_wu) "
			   "LEFT JOIN host h ON h.id = r.hostid JOIN workunit w ON w.id = "
			   "r.workunitid JOIN job j ON j.id = w.jobid LEFT JOIN `round` rd ON "
			   "rd.id = w.roundid LEFT JOIN job_lora l ON l.jobid = w.jobid WHERE "
			   "r.workunitid IN (", ")", n, &m);
	if (rc < 0)
		return rc;
	ct_dl_in_ids(a, wuids, n, m);
	rc = ct_db_querya(db, &res, sql, a, (size_t)m);
	if (rc < 0)
		return rc;
	cap = ct_db_nrows(res);
	*rows = calloc(cap ? cap : 1, sizeof(**rows));
	if (*rows == NULL) {
		ct_db_res_free(res);
		return CT_ENOMEM;
	}
	while (*nrows < cap && ct_db_next(res) > 0)
		ct_dl_row(res, &(*rows)[(*nrows)++], replica_cols, CT_DL_NCOLS(replica_cols));
	ct_db_res_free(res);
	return 0;
}

#define S struct ct_sched_sent
static const struct ct_dl_col sent_cols[] = {
	CT_DL_COL(S, name), CT_DL_COL(S, deadline), CT_DL_COL(S, wu_name), CT_DL_COL(S, jobid),
	CT_DL_COL(S, round), CT_DL_COL(S, shard), CT_DL_COL(S, seed), CT_DL_COL(S, model_sha256),
	CT_DL_COL(S, model_size), CT_DL_COL(S, data_sha256), CT_DL_COL(S, data_size),
	CT_DL_COL(S, lora), CT_DL_COL(S, id), JOB_COLS(S),
};
#undef S

int ct_sched_sent_read(struct ct_db *db, const int64_t *ids, int n, struct ct_sched_sent *out)
{
	memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof(*out));
	return ct_dl_by_ids(db, "SELECT r.name, r.report_deadline, w.name, w.jobid, w.round_idx, "
			    "w.shard, w.seed, w.model_sha256, w.model_size, w.data_sha256, "
			    "w.data_size, l.jobid IS NOT NULL, r.id, " JOB_SQL " FROM result r "
			    "STRAIGHT_JOIN workunit w ON w.id=r.workunitid STRAIGHT_JOIN job j ON "
			    "j.id=w.jobid LEFT JOIN job_lora l ON l.jobid=j.id WHERE r.id IN (", ")",
			    ids, n, out, sizeof(*out), sent_cols, CT_DL_NCOLS(sent_cols),
			    offsetof(struct ct_sched_sent, id), offsetof(struct ct_sched_sent, found));
}

#define H struct ct_sched_held
static const struct ct_dl_col held_cols[] = {
	CT_DL_COL(H, hostid), CT_DL_COL(H, server_state), CT_DL_COL(H, error_mask),
	CT_DL_COL(H, id),
};
static const struct ct_dl_col in_progress_cols[] = {
	CT_DL_COL(H, id), CT_DL_COL(H, name), CT_DL_COL(H, error_mask),
};
#undef H

int ct_sched_held_get(struct ct_db *db, const char *name, struct ct_sched_held *h)
{
	memset(h, 0, sizeof(*h));
	return CT_DL_ONE(db, h, held_cols, "SELECT r.hostid, r.server_state, w.error_mask, r.id "
			 "FROM result r JOIN workunit w ON w.id=r.workunitid WHERE r.name=?", name);
}

int ct_sched_in_progress(struct ct_db *db, int64_t hostid, int64_t now,
			 struct ct_sched_held *rows, int max, int *n)
{
	struct ct_db_res *res = NULL;
	int rc;

	*n = 0;
	/* task_state 1 is server_state in progress (migration 048) */
	rc = CT_DB_QUERY(db, &res, "SELECT r.id, r.name, w.error_mask FROM result r FORCE INDEX "
			 "(result_host_task) JOIN workunit w ON w.id=r.workunitid WHERE r.hostid=? "
			 "AND r.task_state=? AND r.report_deadline>? ORDER BY r.id LIMIT ?", hostid,
			 CT_WEB_TASK_IN_PROGRESS, now, max);
	if (rc < 0)
		return rc;
	while (*n < max && ct_db_next(res) > 0) {
		memset(&rows[*n], 0, sizeof(rows[*n]));
		ct_dl_row(res, &rows[(*n)++], in_progress_cols, CT_DL_NCOLS(in_progress_cols));
	}
	ct_db_res_free(res);
	return 0;
}

int ct_sched_rounds_turning(struct ct_db *db, int64_t *n)
{
	return ct_db_query_inta(db, n, "SELECT COUNT(*) FROM job j JOIN `round` rd ON "
				"rd.jobid=j.id AND rd.idx=j.cur_round LEFT JOIN round_stat s ON "
				"s.roundid=rd.id WHERE j.status=1 AND j.cur_round < j.nrounds AND "
				"COALESCE(s.n_unsent, 0)=0 AND COALESCE(s.n_in_progress, 0)=0", NULL, 0);
}

/* One row per candidate and sent replica of its WU; the derived table r
 * picks the candidates. */
#define FEED_SELECT "SELECT m.mx, m.nl, m.sl, r.id, r.workunitid, r.jobid, r.priority, " \
	"r.server_state, w.roundid, COALESCE(rd.nwus, 0), l.jobid IS NOT NULL, o.userid, " \
	"o.hostid, COALESCE(h.host_cpid, ''), o.sent_net FROM (SELECT (SELECT " \
	"COALESCE(MAX(id), 0) FROM result) AS mx, (SELECT COUNT(*) FROM job_lora) AS nl, " \
	"(SELECT COALESCE(SUM(jobid), 0) FROM job_lora) AS sl) m LEFT JOIN (SELECT id, " \
	"workunitid, jobid, priority, server_state FROM result "
#define FEED_JOIN ") r ON 1 = 1 LEFT JOIN workunit w ON w.id = r.workunitid LEFT JOIN " \
	"`round` rd ON rd.id = w.roundid LEFT JOIN job_lora l ON l.jobid = r.jobid LEFT JOIN " \
	"result o FORCE INDEX (result_wu) ON o.workunitid = r.workunitid AND o.hostid <> 0 " \
	"LEFT JOIN host h ON h.id = o.hostid ORDER BY "

static const char full_sql[] = FEED_SELECT "FORCE INDEX (result_dispatch) WHERE "
	"server_state = ? ORDER BY priority DESC, id LIMIT ?" FEED_JOIN "r.priority DESC, r.id";
static const char inc_sql[] = FEED_SELECT "WHERE id > ? ORDER BY id LIMIT ?" FEED_JOIN "r.id";

#define F struct ct_sched_feed_row
static const struct ct_dl_col feed_cols[] = {
	CT_DL_COL(F, mx), CT_DL_COL(F, nl), CT_DL_COL(F, sl), CT_DL_COL(F, id),
	CT_DL_COL(F, wuid), CT_DL_COL(F, jobid), CT_DL_COL(F, priority), CT_DL_COL(F, state),
	CT_DL_COL(F, roundid), CT_DL_COL(F, nwus), CT_DL_COL(F, lora), CT_DL_COL(F, o_userid),
	CT_DL_COL(F, o_hostid), CT_DL_COL(F, o_cpid), CT_DL_COL(F, o_net),
};
#undef F

int ct_sched_feed_read(struct ct_db *db, int full, int64_t after, int limit,
		       struct ct_sched_feed_row **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	if (full)
		return CT_DL_LIST(db, rows, n, feed_cols, "candidates", full_sql, CT_RS_UNSENT,
				  limit);
	return CT_DL_LIST(db, rows, n, feed_cols, "candidates", inc_sql, after, limit);
}

/* A row of ct_sched_round_read: kind 0 the counts (a, b: net_sent,
 * inprog), 1 a partner (userid, a: its shared WUs). */
struct round_row {
	int64_t kind, userid, a, b;
};

#define R struct round_row
static const struct ct_dl_col round_cols[] = {
	CT_DL_COL(R, kind), CT_DL_COL(R, userid), CT_DL_COL(R, a), CT_DL_COL(R, b),
};
#undef R

/* in this order (STRAIGHT_JOIN) and by these indexes: from b first,
 * MariaDB could walk every result of a holder's account */
#define PARTNERS_SQL "SELECT STRAIGHT_JOIN 1, b.userid, COUNT(*), 0 FROM result a FORCE INDEX " \
	"(result_user_round) JOIN result b FORCE INDEX (result_wu) ON b.workunitid = " \
	"a.workunitid AND b.userid <> a.userid AND " CT_DL_LIVE("b") " WHERE a.userid = ? AND " \
	"a.sent_round = ? AND " CT_DL_LIVE("a") " GROUP BY b.userid"
/* sent_net '' is every replica sent from a loopback address: never
 * counted as one network */
#define NET_COUNTS_SQL "SELECT 0, 0, (SELECT COUNT(*) FROM result r FORCE INDEX " \
	"(result_round_net) WHERE r.sent_round=? AND r.sent_net=? AND " CT_DL_LIVE("r") "), " \
	"(SELECT COUNT(*) FROM result FORCE INDEX (result_user_round) WHERE userid=? AND " \
	"sent_round=? AND server_state=?)"
#define COUNTS_SQL "SELECT 0, 0, 0, COUNT(*) FROM result FORCE INDEX (result_user_round) " \
	"WHERE userid=? AND sent_round=? AND server_state=?"

int ct_sched_round_read(struct ct_db *db, int64_t roundid, int64_t userid, const char *net,
			int counts, int partners, struct ct_sched_partner **rows, size_t *n,
			int64_t *net_sent, int64_t *inprog)
{
	static const char *const sql[2][3] = {	/* [partners][counts: none, plain, net] */
		{ NULL, COUNTS_SQL, NET_COUNTS_SQL },
		{ PARTNERS_SQL, COUNTS_SQL " UNION ALL " PARTNERS_SQL,
		  NET_COUNTS_SQL " UNION ALL " PARTNERS_SQL },
	};
	struct ct_db_arg a[7];
	struct round_row *v = NULL;
	size_t na = 0, nv = 0, k = 0;
	int c = !counts ? 0 : net && net[0] ? 2 : 1, rc;

	*rows = NULL;
	*n = 0;
	*net_sent = 0;
	*inprog = 0;
	if (sql[!!partners][c] == NULL)
		return 0;
	if (c == 2) {
		a[na++] = ct_db_arg_l(roundid);
		a[na++] = ct_db_arg_s(net);
	}
	if (c > 0) {
		a[na++] = ct_db_arg_l(userid);
		a[na++] = ct_db_arg_l(roundid);
		a[na++] = ct_db_arg_l(CT_RS_IN_PROGRESS);
	}
	if (partners) {
		a[na++] = ct_db_arg_l(userid);
		a[na++] = ct_db_arg_l(roundid);
	}
	rc = ct_dl_query_list(db, sizeof(*v), &v, &nv, round_cols, CT_DL_NCOLS(round_cols),
			      "round facts", sql[!!partners][c], a, na);
	if (rc == 0 && nv > 0) {
		*rows = calloc(nv, sizeof(**rows));
		if (*rows == NULL)
			rc = CT_ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < nv; i++) {
		if (v[i].kind == 0) {
			*net_sent = v[i].a;
			*inprog = v[i].b;
		} else {
			(*rows)[k].userid = v[i].userid;
			(*rows)[k++].shared = v[i].a;
		}
	}
	*n = k;
	free(v);
	return rc;
}

int ct_sched_active_accounts(struct ct_db *db, int64_t since, int need, int64_t *n)
{
	int rc;

	*n = 0;
	rc = CT_DB_QUERY_INT(db, n, "SELECT COUNT(*) FROM (SELECT DISTINCT userid FROM host "
			     "FORCE INDEX (host_rpc_user) WHERE rpc_time >= ? LIMIT ?) t", since,
			     need);
	return rc == CT_ENOTFOUND ? 0 : rc;
}
