/*
 * web_api.c - the JSON API: /api/v1/<what>[/ID], one endpoint per web page,
 * built from the same web_data.c queries as the HTML, so the numbers match.
 * Lists take ?sort=rac|total&page=N like the pages. Responses are
 * application/json; errors are {"error": "..."} with the HTTP status.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "db.h"
#include "web_int.h"
#include "web_json.h"

static void j_user(struct ct_json *j, const struct ct_web_user *u)
{
	ct_json_obj_begin(j);
	ct_json_kint(j, "id", u->id);
	ct_json_kint(j, "rank", u->rank);
	ct_json_kstr(j, "name", u->name);
	ct_json_kstr(j, "country", u->country);
	ct_json_kint(j, "teamid", u->teamid);
	ct_json_kstr(j, "team_name", u->team_name);
	ct_json_knum(j, "total_credit", u->total_credit);
	ct_json_knum(j, "expavg_credit", u->expavg_credit);
	ct_json_knum(j, "expavg_time", u->expavg_time);
	ct_json_kint(j, "create_time", u->create_time);
	ct_json_obj_end(j);
}

static void j_team(struct ct_json *j, const struct ct_web_team *t)
{
	ct_json_obj_begin(j);
	ct_json_kint(j, "id", t->id);
	ct_json_kint(j, "rank", t->rank);
	ct_json_kstr(j, "name", t->name);
	ct_json_kint(j, "founder_id", t->userid);
	ct_json_kstr(j, "founder_name", t->founder_name);
	ct_json_kstr(j, "url", t->url);
	ct_json_kstr(j, "description", t->description);
	ct_json_kint(j, "nusers", t->nusers);
	ct_json_knum(j, "total_credit", t->total_credit);
	ct_json_knum(j, "expavg_credit", t->expavg_credit);
	ct_json_knum(j, "expavg_time", t->expavg_time);
	ct_json_kint(j, "create_time", t->create_time);
	ct_json_obj_end(j);
}

static void j_host(struct ct_json *j, const struct ct_web_host *h)
{
	ct_json_obj_begin(j);
	ct_json_kint(j, "id", h->id);
	ct_json_kint(j, "rank", h->rank);
	ct_json_kint(j, "userid", h->userid);
	ct_json_kstr(j, "owner_name", h->owner_name);
	ct_json_kstr(j, "device", h->device);
	ct_json_kstr(j, "cpu_model", h->cpu_model);
	ct_json_kstr(j, "os", h->os);
	ct_json_kint(j, "ncpus", h->ncpus);
	ct_json_kint(j, "ram_bytes", h->ram_bytes);
	ct_json_kstr(j, "client_version", h->client_version);
	ct_json_kint(j, "nresults_valid", h->nresults_valid);
	ct_json_kint(j, "nresults_invalid", h->nresults_invalid);
	ct_json_knum(j, "total_credit", h->total_credit);
	ct_json_knum(j, "expavg_credit", h->expavg_credit);
	ct_json_knum(j, "expavg_time", h->expavg_time);
	ct_json_kint(j, "create_time", h->create_time);
	ct_json_kint(j, "rpc_time", h->rpc_time);
	ct_json_obj_end(j);
}

static void j_board_head(struct ct_json *j, const struct ct_web_board *b)
{
	ct_json_kstr(j, "sort", b->sort == CT_WEB_SORT_TOTAL ? "total" : "rac");
	ct_json_kint(j, "page", b->page);
	ct_json_kint(j, "npages", b->npages);
	ct_json_kint(j, "total", b->total);
	ct_json_kint(j, "page_size", CT_WEB_PAGE_SIZE);
}

static int api_board(struct ct_web_req *req, struct ct_json *j, const char *what)
{
	struct ct_web_board b;
	enum ct_web_sort s = ct_web_arg_sort(req);
	int64_t page = ct_web_arg_page(req);
	int rc;

	rc = strcmp(what, "users") == 0 ? ct_web_users(req->db, s, page, 0, &b) :
	     strcmp(what, "teams") == 0 ? ct_web_teams(req->db, s, page, &b) :
	     ct_web_hosts(req->db, s, page, 0, &b);
	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	j_board_head(j, &b);
	ct_json_key(j, what);
	ct_json_arr_begin(j);
	for (size_t i = 0; i < b.n; i++) {
		if (what[0] == 'u')
			j_user(j, &b.users[i]);
		else if (what[0] == 't')
			j_team(j, &b.teams[i]);
		else
			j_host(j, &b.hosts[i]);
	}
	ct_json_arr_end(j);
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

	rc = kind[0] == 'u' ? ct_web_get_user(req->db, id, &x.u) :
	     kind[0] == 't' ? ct_web_get_team(req->db, id, &x.t) :
	     ct_web_get_host(req->db, id, &x.h);
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
		if (kind[0] == 'u') j_user(j, &x.u);
		else if (kind[0] == 't') j_team(j, &x.t);
		else j_host(j, &x.h);
		j_history(j, t, v, n);
		if (kind[0] != 'h') {
			ct_json_key(j, kind[0] == 'u' ? "hosts" : "members");
			ct_json_arr_begin(j);
			for (size_t i = 0; i < sub.n; i++) {
				if (kind[0] == 'u') j_host(j, &sub.hosts[i]);
				else j_user(j, &sub.users[i]);
			}
			ct_json_arr_end(j);
		}
		ct_json_obj_end(j);
	}
	ct_web_board_free(&sub);
	free(t);
	free(v);
	return rc;
}

static void j_job(struct ct_json *j, const struct ct_web_job *x)
{
	ct_json_obj_begin(j);
	ct_json_kint(j, "id", x->id);
	ct_json_kstr(j, "name", x->name);
	ct_json_kstr(j, "status", x->status_name);
	ct_json_kstr(j, "error_message", x->error_message);
	ct_json_kint(j, "create_time", x->create_time);
	ct_json_kint(j, "finish_time", x->finish_time);
	ct_json_kint(j, "nshards", x->nshards);
	ct_json_kint(j, "nrounds", x->nrounds);
	ct_json_kint(j, "cur_round", x->cur_round);
	ct_json_kint(j, "steps", x->steps);
	ct_json_kint(j, "batch", x->batch);
	ct_json_kint(j, "seq", x->seq);
	ct_json_knum(j, "lr", x->lr);
	ct_json_kint(j, "nwus", x->nwus);
	ct_json_kint(j, "nwus_done", x->nwus_done);
	ct_json_kint(j, "results_unsent", x->res_unsent);
	ct_json_kint(j, "results_in_progress", x->res_in_progress);
	ct_json_kint(j, "results_valid", x->res_valid);
	ct_json_kint(j, "results_invalid", x->res_invalid);
	ct_json_kint(j, "results_error", x->res_error);
	ct_json_knum(j, "credit", x->credit);
	ct_json_knum(j, "base_eval_loss", x->base_eval_loss);
	ct_json_knum(j, "final_eval_loss", x->final_eval_loss);
	ct_json_kstr(j, "model_sha256", x->model_sha256);
	ct_json_kstr(j, "final_model_sha256", x->final_model_sha256);
	ct_json_obj_end(j);
}

static int api_jobs(struct ct_web_req *req, struct ct_json *j)
{
	struct ct_web_job *jobs = NULL;
	size_t n = 0;
	int rc = ct_web_jobs(req->db, &jobs, &n);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	ct_json_key(j, "jobs");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < n; i++)
		j_job(j, &jobs[i]);
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	free(jobs);
	return 0;
}

static void j_round(struct ct_json *j, const struct ct_web_round *r)
{
	ct_json_obj_begin(j);
	ct_json_kint(j, "round", r->idx);
	ct_json_kstr(j, "status", r->status_name);
	ct_json_kint(j, "nwus", r->nwus);
	ct_json_kint(j, "nwus_done", r->nwus_done);
	ct_json_kint(j, "results_in_progress", r->res_in_progress);
	ct_json_kint(j, "results_valid", r->res_valid);
	ct_json_kint(j, "results_invalid", r->res_invalid);
	ct_json_knum(j, "base_eval_loss", r->base_eval_loss);
	ct_json_knum(j, "eval_loss", r->eval_loss);
	ct_json_kstr(j, "model_sha256", r->model_sha256);
	ct_json_kstr(j, "out_model_sha256", r->out_model_sha256);
	ct_json_kint(j, "create_time", r->create_time);
	ct_json_kint(j, "finish_time", r->finish_time);
	ct_json_obj_end(j);
}

static int api_job(struct ct_web_req *req, struct ct_json *j, int64_t id)
{
	struct ct_web_job job;
	struct ct_web_round *r = NULL;
	struct ct_web_contrib *k = NULL;
	size_t nr = 0, nk = 0;
	int rc = ct_web_get_job(req->db, id, &job, &r, &nr, &k, &nk);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	ct_json_key(j, "job");
	j_job(j, &job);
	ct_json_key(j, "rounds");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < nr; i++)
		j_round(j, &r[i]);
	ct_json_arr_end(j);
	ct_json_key(j, "contributors");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < nk; i++) {
		ct_json_obj_begin(j);
		ct_json_kint(j, "userid", k[i].userid);
		ct_json_kstr(j, "name", k[i].name);
		ct_json_kint(j, "nresults", k[i].nresults);
		ct_json_knum(j, "credit", k[i].credit);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	free(r);
	free(k);
	return 0;
}

static int api_status(struct ct_web_req *req, struct ct_json *j)
{
	struct ct_web_status st;
	int rc = ct_web_get_status(req->db, &st);

	if (rc < 0)
		return rc;
	ct_json_obj_begin(j);
	ct_json_kint(j, "time", st.now);
	ct_json_kint(j, "results_ready_to_send", st.res_unsent);
	ct_json_kint(j, "results_in_progress", st.res_in_progress);
	ct_json_kint(j, "workunits_awaiting_validation", st.wu_need_validate);
	ct_json_kint(j, "workunits_awaiting_assimilation", st.wu_need_assimilate);
	ct_json_kint(j, "users", st.users);
	ct_json_kint(j, "users_with_credit", st.users_with_credit);
	ct_json_kint(j, "teams", st.teams);
	ct_json_kint(j, "hosts", st.hosts);
	ct_json_kint(j, "hosts_active_24h", st.hosts_active_24h);
	ct_json_kint(j, "jobs_running", st.jobs_running);
	ct_json_kint(j, "jobs_done", st.jobs_done);
	ct_json_knum(j, "credit_24h", st.credit_24h);
	ct_json_knum(j, "tflops", st.tflops);
	ct_json_knum(j, "total_credit", st.total_credit);
	ct_json_key(j, "roles");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < st.nroles; i++) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "role", st.roles[i].role);
		ct_json_kstr(j, "instance", st.roles[i].instance);
		ct_json_key(j, "alive");
		ct_json_bool(j, st.roles[i].alive);
		ct_json_kint(j, "beat_time", st.roles[i].beat_time);
		ct_json_kint(j, "nruns", st.roles[i].nruns);
		ct_json_kint(j, "nitems", st.roles[i].nitems);
		ct_json_kstr(j, "last_error", st.roles[i].last_error);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	return 0;
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
	char key[160];
	int rc;

	resp->content_type = "application/json";
	snprintf(resp->cache_control, sizeof(resp->cache_control), "max-age=5");
	/* Every answer is public and the same for everyone: cache it briefly. */
	snprintf(key, sizeof(key), "api:%.64s?%s&%lld", what,
		 ct_web_arg_sort(req) == CT_WEB_SORT_TOTAL ? "total" : "rac",
		 (long long)ct_web_arg_page(req));
	if (ct_web_cache_get(key, &resp->body))
		return 0;
	ct_json_init(&j, &resp->body);
	rc = api_dispatch(req, &j, what);
	if (rc == 0)
		rc = ct_json_finish(&j);
	if (rc == 0)
		ct_web_cache_put(key, &resp->body);
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
