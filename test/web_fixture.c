/*
 * web_fixture.c - a populated project for the web tests (see
 * web_fixture.h). Every row comes from the server's own code paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/account.h"
#include "validate/credit.h"
#include "web/web_recover.h"
#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_tokens.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "rpc/sched_rpc.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "web_fixture.h"
#include "daemons/wg.h"

/* Faster request delay and stats export for tests, through ct_conf. */
static int tune_config(const char *dir)
{
	struct ct_conf *c = NULL;
	char path[4200];
	int rc;

	rc = ct_path_join(path, sizeof(path), dir, CT_SERVER_CONF);
	if (rc == 0)
		rc = ct_conf_load(path, &c);
	if (rc == 0)
		rc = ct_conf_set(c, "sched.request_delay", "1");
	if (rc == 0)
		rc = ct_conf_set(c, "web.stats_interval", "2");
	/* every seeded user takes its 3 results: the round rules
	 * (eligibility.h), which would spread them over more accounts, are
	 * not what the pages' tests are about */
	if (rc == 0)
		rc = ct_conf_set(c, "sched.max_shared_per_round", "0");
	if (rc == 0)
		rc = ct_conf_set(c, "sched.max_net_share", "0");
	if (rc == 0)
		rc = ct_conf_set(c, "sched.max_account_share", "0");
	if (rc == 0)
		rc = ct_conf_save(c, path);
	ct_conf_free(c);
	return rc;
}

int web_fx_open(struct web_fx *fx, const char *dir)
{
	const struct ct_project_opts o = { .name = "Web test project",
					   .listen = "127.0.0.1:0" };
	char datadir[4200], logdir[4200];
	int rc;

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "%s", dir);
	rc = ct_project_init(dir, &o);
	if (rc == 0)
		rc = tune_config(dir);
	if (rc == 0)
		rc = ct_server_load(&fx->srv, dir, NULL);
	if (rc == 0)
		rc = ct_path_join(datadir, sizeof(datadir), fx->srv.dir, "db");
	if (rc == 0)
		rc = ct_path_join(logdir, sizeof(logdir), fx->srv.dir, "log");
	if (rc == 0)
		rc = ct_db_global_init(fx->srv.db_url, datadir, logdir);
	if (rc == 0)
		rc = ct_db_open(&fx->db, fx->srv.clock);
	if (rc == 0)
		rc = ct_db_migrate(fx->db);
	return rc;
}

void web_fx_close(struct web_fx *fx)
{
	ct_web_recover_stop(&fx->srv);	/* it has a connection of its own */
	ct_db_close(fx->db);
	fx->db = NULL;
	ct_db_global_end();
	ct_server_free(&fx->srv);
}

/* A tiny GPT-2 and token files under dir/inputs. */
static int make_inputs(const char *dir, char *model, char *train, char *eval,
		       size_t cap)
{
	const struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1,
					    .NH = 2, .C = 8, .Vp = 64 };
	struct ct_gpt2_layout lay;
	ct_tok tok[400];
	float *params;
	char in[4200];
	int rc;

	ct_gpt2_layout(&cfg, &lay);
	params = calloc(lay.total, sizeof(float));
	if (params == NULL)
		return CT_ENOMEM;
	for (size_t i = 0; i < 400; i++)
		tok[i] = (ct_tok)((i * 7 + i / 5) % 64);
	rc = ct_path_join(in, sizeof(in), dir, "inputs");
	if (rc == 0)
		rc = ct_mkdir_p(in, 0700);
	if (rc == 0) rc = ct_path_join(model, cap, in, "model.bin");
	if (rc == 0) rc = ct_path_join(train, cap, in, "train.bin");
	if (rc == 0) rc = ct_path_join(eval, cap, in, "eval.bin");
	if (rc == 0) rc = ct_gpt2_init_random(&cfg, 42, params);
	if (rc == 0) rc = ct_gpt2_save(model, &cfg, params);
	if (rc == 0) rc = ct_tokens_save(train, tok, 300);
	if (rc == 0) rc = ct_tokens_save(eval, tok + 300, 100);
	free(params);
	return rc;
}

int web_fx_submit(struct web_fx *fx, const char *name, int shards, int rounds,
		  int replicas, int64_t *jobid)
{
	char model[4200], train[4200], eval[4200];
	struct ct_job_spec spec = {
		.name = name, .shards = shards, .rounds = rounds,
		.steps = 2, .batch = 1, .seq = 8, .lr = 1e-3, .quorum = 2,
		.replicas = replicas, .adaptive = -1,
	};
	int rc = make_inputs(fx->dir, model, train, eval, sizeof(model));

	if (rc < 0)
		return rc;
	spec.model_path = model;
	spec.train_path = train;
	spec.eval_path = eval;
	return ct_wg_submit(&fx->srv, fx->db, &spec, jobid);
}

/* One scheduler RPC for user u asking for 3 results; sets u->hostid. */
static int host_rpc(struct web_fx *fx, struct web_fx_user *u, size_t i)
{
	struct ct_buf req = CT_BUF_INIT(1 << 16), out = CT_BUF_INIT(1 << 22);
	int status = 0, rc;

	rc = ct_buf_appendf(&req, "<scheduler_request><authenticator>%s"
		"</authenticator><host_id>0</host_id><host_cpid>%032zx</host_cpid>"
		"<client_version>0.1.0</client_version><host><hostname>pc%zu"
		"</hostname><os>Linux 6.1 &lt;test&gt;</os><cpu_model>Test CPU %zu"
		"</cpu_model><ncpus>4</ncpus><ram_bytes>8589934592</ram_bytes>"
		"<device><name>Test GPU %zu</name><vendor>Test</vendor><type>gpu"
		"</type><global_mem>1073741824</global_mem><compute_units>8"
		"</compute_units><conforming>1</conforming></device></host>"
		"<work_req><want_results>3</want_results></work_req>"
		"</scheduler_request>", u->key, i + 1, i, i, i);
	if (rc == 0)
		rc = ct_sched_rpc(&fx->srv, fx->db, req.data, req.len, "127.0.0.1",
				  &out, &status);
	if (rc == 0 && status != 200)
		rc = ct_error(CT_EPROTO, "scheduler said %d: %s", status,
			      ct_buf_cstr(&out));
	if (rc == 0)
		rc = CT_DB_QUERY_INT(fx->db, &u->hostid, "SELECT id FROM host "
				     "WHERE userid = ?", u->id);
	ct_buf_free(&req);
	ct_buf_free(&out);
	return rc;
}

/* Grant credit on each result user u was sent, one day apart. */
static int grant_user(struct web_fx *fx, struct web_fx_user *u, double credit)
{
	struct ct_db_res *res = NULL;
	int64_t now = ct_db_now(fx->db);
	int rc, k = 0;

	rc = CT_DB_QUERY(fx->db, &res, "SELECT id FROM result WHERE userid = ? "
			 "ORDER BY id", u->id);
	if (rc < 0)
		return rc;
	while (rc >= 0 && ct_db_next(res) > 0) {
		int64_t rid = ct_db_int(res, 0);

		rc = ct_db_begin(fx->db);
		if (rc == 0)
			rc = ct_credit_grant(fx->db, rid, credit,
					     now - (int64_t)(2 - k) * 86400);
		if (rc >= 0)
			rc = ct_db_commit(fx->db);
		else
			ct_db_rollback(fx->db);
		if (rc >= 0) {
			u->credit += credit;
			u->nresults++;
			k++;
		}
	}
	ct_db_res_free(res);
	return rc < 0 ? rc : 0;
}

int web_fx_seed(struct web_fx *fx, size_t n, double credit_unit)
{
	int rc = 0;

	if (n < 2 || n > WEB_FX_MAX_USERS)
		return ct_error(CT_EINVAL, "fixture: 2..%d users", WEB_FX_MAX_USERS);
	fx->nusers = n;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct web_fx_user *u = &fx->users[i];

		if (i == 0)
			snprintf(u->name, sizeof(u->name), "<script>alert(1)</script>");
		else
			snprintf(u->name, sizeof(u->name), "volunteer %zu", i);
		snprintf(u->email, sizeof(u->email), "user%zu@example.org", i);
		snprintf(u->password, sizeof(u->password), "password-%zu", i);
		rc = ct_account_create(fx->db, u->name, u->email, u->password,
				       u->key, &u->id);
	}
	if (rc == 0)
		rc = web_fx_submit(fx, "Tiny <b>test</b> job", 3, 2, (int)n,
				   &fx->jobid);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = host_rpc(fx, &fx->users[i], i);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = grant_user(fx, &fx->users[i], credit_unit * (double)(i + 1));
	return rc;
}
