/*
 * web_api.c - the JSON API: /api/v1/<what>[/ID], one endpoint per web page,
 * built from the same dl_web*.c queries (server/data/) as the HTML, so the numbers match.
 * Lists take ?sort=rac|total&page=N like the pages. Responses are
 * application/json; errors are {"error": "..."} with the HTTP status.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "data/db.h"
#include "page_cache.h"
#include "daemons/sample.h"
#include "data/server.h"
#include "web_int.h"
#include "web_json.h"

/* An object's members as a table: key, type and where the value lives in
 * the struct, so each view's JSON shape reads as a list of fields. */
enum jf_type { JF_INT, JF_NUM, JF_STR, JF_BOOL };

struct jfield {
	const char *key;
	enum jf_type type;
	size_t off;
};

#define JF(T, k, t, m) { .key = (k), .type = (t), .off = offsetof(T, m) }
/* Members whose JSON key is the member's name. */
#define JI(T, m) JF(T, #m, JF_INT, m)
#define JN(T, m) JF(T, #m, JF_NUM, m)
#define JS(T, m) JF(T, #m, JF_STR, m)
#define JEND { .key = NULL }

static void j_members(struct ct_json *j, const void *row, const struct jfield *f)
{
	for (; f->key != NULL; f++) {
		const char *p = (const char *)row + f->off;

		switch (f->type) {
		case JF_INT:
			ct_json_kint(j, f->key, *(const int64_t *)p);
			break;
		case JF_NUM:
			ct_json_knum(j, f->key, *(const double *)p);
			break;
		case JF_STR:
			ct_json_kstr(j, f->key, p);
			break;
		case JF_BOOL:
			ct_json_key(j, f->key);
			ct_json_bool(j, *(const int *)p);
			break;
		}
	}
}

static void j_object(struct ct_json *j, const void *row, const struct jfield *f)
{
	ct_json_obj_begin(j);
	j_members(j, row, f);
	ct_json_obj_end(j);
}

#define U struct ct_web_user
static const struct jfield user_fields[] = {
	JI(U, id), JI(U, rank), JS(U, name), JS(U, country), JI(U, teamid),
	JS(U, team_name), JN(U, total_credit), JN(U, expavg_credit),
	JN(U, expavg_time), JI(U, create_time), JEND,
};
#undef U

#define T struct ct_web_team
static const struct jfield team_fields[] = {
	JI(T, id), JI(T, rank), JS(T, name),
	JF(T, "founder_id", JF_INT, userid), JS(T, founder_name), JS(T, url),
	JS(T, description), JI(T, nusers), JN(T, total_credit),
	JN(T, expavg_credit), JN(T, expavg_time), JI(T, create_time), JEND,
};
/* one team: also what its members have earned in all (dl_web.h) */
static const struct jfield team_one_fields[] = {
	JN(T, members_credit), JEND,
};
#undef T

#define H struct ct_web_host
static const struct jfield host_fields[] = {
	JI(H, id), JI(H, rank), JI(H, userid), JS(H, owner_name), JS(H, device),
	JS(H, cpu_model), JS(H, os), JI(H, ncpus), JI(H, ram_bytes),
	JS(H, client_version), JI(H, nresults_valid), JI(H, nresults_invalid),
	JN(H, total_credit), JN(H, expavg_credit), JN(H, expavg_time),
	JI(H, create_time), JI(H, rpc_time), JEND,
};
#undef H

#define J struct ct_web_job
static const struct jfield job_fields[] = {
	JI(J, id), JS(J, name), JF(J, "status", JF_STR, status_name),
	JS(J, error_message), JI(J, create_time), JI(J, finish_time),
	JI(J, nshards), JI(J, nrounds), JI(J, cur_round), JI(J, steps),
	JI(J, batch), JI(J, seq), JN(J, lr), JI(J, nwus), JI(J, nwus_done),
	JF(J, "results_unsent", JF_INT, res_unsent),
	JF(J, "results_in_progress", JF_INT, res_in_progress),
	JF(J, "results_valid", JF_INT, res_valid),
	JF(J, "results_invalid", JF_INT, res_invalid),
	JF(J, "results_error", JF_INT, res_error), JN(J, credit),
	JN(J, base_eval_loss), JN(J, final_eval_loss), JS(J, model_sha256),
	JS(J, final_model_sha256), JEND,
};
#undef J

#define IN struct ct_web_job_inputs
static const struct jfield inputs_fields[] = {
	JS(IN, model_sha256), JI(IN, model_size), JS(IN, tokenizer), JS(IN, tokenizer_files),
	JI(IN, lora_rank), JN(IN, lora_alpha), JS(IN, train_sha256), JI(IN, train_tokens),
	JS(IN, eval_sha256), JI(IN, eval_tokens), JEND,
};
#undef IN

#define R struct ct_web_round
static const struct jfield round_fields[] = {
	JF(R, "round", JF_INT, idx), JF(R, "status", JF_STR, status_name),
	JI(R, nwus), JI(R, nwus_done),
	JF(R, "results_in_progress", JF_INT, res_in_progress),
	JF(R, "results_valid", JF_INT, res_valid),
	JF(R, "results_invalid", JF_INT, res_invalid), JN(R, base_eval_loss),
	JN(R, eval_loss), JF(R, "eval_ntokens", JF_INT, eval_ntokens),
	JS(R, model_sha256), JS(R, out_model_sha256),
	JI(R, create_time), JI(R, finish_time), JF(R, "not_applied", JF_INT, nfailed), JEND,
};
#undef R

#define C struct ct_web_contrib
static const struct jfield contrib_fields[] = {
	JI(C, userid), JS(C, name), JI(C, nresults), JN(C, credit), JEND,
};
#undef C

#define S struct ct_web_status
static const struct jfield status_fields[] = {
	JF(S, "time", JF_INT, now),
	JF(S, "results_ready_to_send", JF_INT, res_unsent),
	JF(S, "results_in_progress", JF_INT, res_in_progress),
	JF(S, "workunits_awaiting_validation", JF_INT, wu_need_validate),
	JF(S, "workunits_awaiting_assimilation", JF_INT, wu_need_assimilate),
	JI(S, users), JI(S, users_with_credit), JI(S, teams), JI(S, hosts),
	JI(S, hosts_active_24h), JI(S, jobs_running), JI(S, jobs_done),
	JN(S, credit_24h), JN(S, tflops), JN(S, total_credit), JEND,
};
#undef S

#define RL struct ct_web_role
static const struct jfield role_fields[] = {
	JS(RL, role), JS(RL, instance), JF(RL, "alive", JF_BOOL, alive),
	JI(RL, beat_time), JI(RL, nruns), JI(RL, nitems), JS(RL, last_error),
	JEND,
};
#undef RL

/* "key": [objects...] for n rows of `size` bytes each. */
static void j_array(struct ct_json *j, const char *key, const void *rows,
		    size_t n, size_t size, const struct jfield *f)
{
	ct_json_key(j, key);
	ct_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		j_object(j, (const char *)rows + i * size, f);
	ct_json_arr_end(j);
}

static void j_board_head(struct ct_json *j, const struct ct_web_board *b)
{
	ct_json_kstr(j, "sort", b->sort == CT_WEB_SORT_TOTAL ? "total" : "rac");
	ct_json_kint(j, "page", b->page);
	ct_json_kint(j, "npages", b->npages);
	ct_json_kint(j, "total", b->total);
	ct_json_kint(j, "page_size", CT_WEB_PAGE_SIZE);
}

/* The three leaderboard rows, by the first letter of their name. */
struct api_kind {
	const char *name;	/* ct_web_board's kind */
	const struct jfield *fields;
	size_t size;
};

static const struct api_kind user_kind = {
	.name = "user", .fields = user_fields, .size = sizeof(struct ct_web_user),
};
static const struct api_kind team_kind = {
	.name = "team", .fields = team_fields, .size = sizeof(struct ct_web_team),
};
static const struct api_kind host_kind = {
	.name = "host", .fields = host_fields, .size = sizeof(struct ct_web_host),
};

static const struct api_kind *api_kind(const char *name)
{
	return name[0] == 'u' ? &user_kind : name[0] == 't' ? &team_kind :
		&host_kind;
}

static int api_board(struct ct_web_req *req, struct ct_json *j, const char *what)
{
	const struct api_kind *k = api_kind(what);
	struct ct_web_board b;
	enum ct_web_sort s = ct_web_arg_sort(req);
	int64_t page = ct_web_arg_page(req);
	int rc;

	rc = ct_web_board(req->db, k->name, s, page, 0, &b);
	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	j_board_head(j, &b);
	j_array(j, what, b.users, b.n, k->size, k->fields);
	ct_json_obj_end(j);
	ct_web_board_free(&b);
	return 0;
}

static void j_history(struct ct_json *j, const double *t, const double *v,
		      size_t n)
{
	ct_json_key(j, "credit_history");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		ct_json_arr_begin(j);
		ct_json_int(j, (long long)t[i]);
		ct_json_num(j, v[i]);
		ct_json_arr_end(j);
	}
	ct_json_arr_end(j);
}

/* {"user": {...}, "credit_history": [[t, credit]...], "hosts"|"members": [...]} */
static int api_one(struct ct_web_req *req, struct ct_json *j, const char *kind,
		   int64_t id)
{
	union { struct ct_web_user u; struct ct_web_team t; struct ct_web_host h; } x;
	struct ct_web_board sub = { 0 };
	double *t = NULL, *v = NULL, total;
	size_t n = 0;
	int rc;

	rc = ct_web_get(req->db, kind, id, &x);
	if (rc < 0)
		return rc;
	total = kind[0] == 'u' ? x.u.total_credit : kind[0] == 't' ?
		x.t.total_credit : x.h.total_credit;
	rc = ct_web_history(req->db, kind, id, total, &t, &v, &n);
	if (rc == 0 && kind[0] == 'u')
		rc = ct_web_hosts(req->db, CT_WEB_SORT_RAC, 1, id, &sub);
	if (rc == 0 && kind[0] == 't')
		rc = ct_web_users(req->db, CT_WEB_SORT_RAC, 1, id, &sub);
	if (rc == 0) {
		ct_json_obj_begin(j);
		ct_json_key(j, kind);
		ct_json_obj_begin(j);
		j_members(j, &x, api_kind(kind)->fields);
		if (kind[0] == 't')
			j_members(j, &x, team_one_fields);
		ct_json_obj_end(j);
		j_history(j, t, v, n);
		if (kind[0] == 'u')
			j_array(j, "hosts", sub.hosts, sub.n, host_kind.size,
				host_kind.fields);
		else if (kind[0] == 't')
			j_array(j, "members", sub.users, sub.n, user_kind.size,
				user_kind.fields);
		ct_json_obj_end(j);
	}
	ct_web_board_free(&sub);
	free(t);
	free(v);
	return rc;
}

static int api_jobs(struct ct_web_req *req, struct ct_json *j)
{
	struct ct_web_job *jobs = NULL;
	size_t n = 0;
	int rc = ct_web_jobs(req->db, &jobs, &n);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	j_array(j, "jobs", jobs, n, sizeof(*jobs), job_fields);
	ct_json_obj_end(j);
	free(jobs);
	return 0;
}

static int api_job(struct ct_web_req *req, struct ct_json *j, int64_t id)
{
	struct ct_web_job job;
	struct ct_web_round *r = NULL;
	struct ct_web_contrib *k = NULL;
	struct ct_web_job_inputs in;
	size_t nr = 0, nk = 0;
	int rc = ct_web_get_job(req->db, id, &job, &r, &nr, &k, &nk);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	ct_json_key(j, "job");
	j_object(j, &job, job_fields);
	j_array(j, "rounds", r, nr, sizeof(*r), round_fields);
	j_array(j, "contributors", k, nk, sizeof(*k), contrib_fields);
	rc = ct_web_job_samples_json(req->db, j, id);
	if (rc == 0)
		rc = ct_web_partings_json(req, j, id);
	if (rc == 0)
		rc = ct_web_get_job_inputs(req->db, id, &in);
	if (rc == 0) {
		ct_json_key(j, "inputs");
		j_object(j, &in, inputs_fields);
	}
	ct_json_obj_end(j);
	free(r);
	free(k);
	return rc;
}

static int api_status(struct ct_web_req *req, struct ct_json *j)
{
	struct ct_web_status st;
	int rc = ct_web_get_status(req->db, &st);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	j_members(j, &st, status_fields);
	j_array(j, "roles", st.roles, st.nroles, sizeof(st.roles[0]),
		role_fields);
	ct_json_obj_end(j);
	return 0;
}

#define TK struct ct_web_task
static const struct jfield task_fields[] = {
	JI(TK, id), JS(TK, name), JF(TK, "job", JF_INT, jobid),
	JF(TK, "round", JF_INT, round_idx), JI(TK, shard), JF(TK, "host", JF_INT, hostid),
	JF(TK, "state", JF_STR, state_name), JF(TK, "state_code", JF_INT, state),
	JI(TK, sent_time), JI(TK, report_deadline), JI(TK, received_time),
	JN(TK, elapsed_s), JN(TK, granted_credit), JN(TK, credit), JEND,
};
#undef TK

/* {"state", "page", "counts": {...}, "granted_credit", "pending_credit",
 * "tasks": [...]} */
static int api_tasks(struct ct_web_req *req, struct ct_json *j)
{
	struct ct_web_task *t = NULL;
	struct ct_web_task_sum sum;
	size_t n = 0;
	int state, rc = ct_web_req_tasks(req, &state, &t, &n, &sum);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	ct_json_kstr(j, "state", ct_web_task_state_name(state));
	ct_json_kint(j, "page", ct_web_arg_page(req));
	ct_json_kint(j, "page_size", CT_WEB_PAGE_SIZE);
	ct_json_key(j, "counts");
	ct_json_obj_begin(j);
	for (int s = 0; s < CT_WEB_TASK_NSTATES; s++)
		ct_json_kint(j, ct_web_task_state_name(s), sum.n[s]);
	ct_json_obj_end(j);
	ct_json_knum(j, "granted_credit", sum.granted);
	ct_json_knum(j, "pending_credit", sum.pending);
	j_array(j, "tasks", t, n, sizeof(*t), task_fields);
	ct_json_obj_end(j);
	free(t);
	return 0;
}

static const char *arg_or(const struct ct_web_req *req, const char *name)
{
	const char *v = ct_web_arg(req, name);

	return v != NULL ? v : "";
}

static int api_dispatch(struct ct_web_req *req, struct ct_json *j,
			const char *what)
{
	static const char *const ones[] = { "user/", "team/", "host/", "job/" };

	if (strcmp(what, "users") == 0 || strcmp(what, "teams") == 0 ||
	    strcmp(what, "hosts") == 0)
		return api_board(req, j, what);
	if (strcmp(what, "jobs") == 0)
		return api_jobs(req, j);
	if (strcmp(what, "status") == 0)
		return api_status(req, j);
	if (strcmp(what, "tasks") == 0)
		return api_tasks(req, j);
	if (ct_web_receipt_api_match(what) > 0)
		return ct_web_api_receipts(req, j, ct_web_receipt_api_match(what));
	for (size_t i = 0; i < 4; i++) {
		int64_t id = ct_web_path_id(what, ones[i]);

		if (strncmp(what, ones[i], strlen(ones[i])) != 0)
			continue;
		if (id <= 0)
			break;
		if (i == 3)
			return api_job(req, j, id);
		return api_one(req, j, i == 0 ? "user" : i == 1 ? "team" : "host", id);
	}
	return ct_error(CT_ENOTFOUND, "no API endpoint /api/v1/%.64s", what);
}

int ct_web_api(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *what = req->path + strlen("/api/v1/");
	struct ct_json j;
	char key[256];
	int rc;

	resp->content_type = "application/json";
	snprintf(resp->cache_control, sizeof(resp->cache_control), "max-age=5");
	/* Every answer is public and the same for everyone: cache it briefly,
	 * under every argument an endpoint reads. */
	snprintf(key, sizeof(key), "api:%.64s?%s&%lld&h=%.20s&u=%.20s&s=%.4s", what,
		 ct_web_arg_sort(req) == CT_WEB_SORT_TOTAL ? "total" : "rac",
		 (long long)ct_web_arg_page(req), arg_or(req, "host"), arg_or(req, "user"),
		 arg_or(req, "state"));
	if (ct_page_cache_get(req->srv->pages, key, &resp->body))
		return 0;
	ct_json_init(&j, &resp->body);
	rc = api_dispatch(req, &j, what);
	if (rc == 0)
		rc = ct_json_finish(&j);
	if (rc == 0)
		ct_page_cache_put(req->srv->pages, key, &resp->body);
	else
		ct_page_cache_abandon(req->srv->pages, key);
	if (rc < 0) {
		int st = rc == CT_ENOTFOUND ? 404 : 500;

		ct_buf_reset(&resp->body);
		ct_json_init(&j, &resp->body);
		ct_json_obj_begin(&j);
		ct_json_kstr(&j, "error", st == 404 ? ct_errmsg(rc) : "internal error");
		ct_json_obj_end(&j);
		resp->status = st;
		return ct_json_finish(&j);
	}
	return 0;
}
