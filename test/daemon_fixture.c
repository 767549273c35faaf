/*
 * daemon_fixture.c - the shared fixture of the daemon tests (see
 * daemon_fixture.h).
 */
#include "ct_test.h"
#include "daemon_fixture.h"
#include "data/result_state.h"
#include "cmd/server_open.h"
#include "daemons/daemon_pass.h"
#include "cmd/roles.h"
#include "ct_err.h"
#include "ct_hash.h"

double ct_dfx_urand(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return (double)(*s >> 11) / 9007199254740992.0;
}

int ct_dfx_make_inputs(const struct ct_model_config *cfg, const char *dir, uint64_t *rng,
		       char *model, char *train, char *eval)
{
	struct ct_gpt2_layout lay;
	ct_tok tok[3000];
	float *params;
	int rc;

	ct_gpt2_layout(cfg, &lay);
	params = calloc(lay.total, sizeof(float));
	/* a learnable sequence: mostly "next = previous + 1" */
	for (size_t i = 0; i < 3000; i++)
		tok[i] = (ct_tok)(ct_dfx_urand(rng) < 0.8 && i > 0 ? (tok[i - 1] + 1) % 64
				    : ct_dfx_urand(rng) * 64);
	rc = ct_path_join(model, CT_DFX_PATH, dir, "model.bin");
	if (rc == 0) rc = ct_path_join(train, CT_DFX_PATH, dir, "train.bin");
	if (rc == 0) rc = ct_path_join(eval, CT_DFX_PATH, dir, "eval.bin");
	if (rc == 0) rc = ct_gpt2_init_random(cfg, 42, params);
	if (rc == 0) rc = ct_gpt2_save(model, cfg, params);
	if (rc == 0) rc = ct_tokens_save(train, tok, 2400);
	if (rc == 0) rc = ct_tokens_save(eval, tok + 2400, 600);
	free(params);
	return rc;
}

int ct_dfx_open(const char *name, const char *db_url, int keep_stderr, char **dir,
		struct ct_server *srv, struct ct_db **db)
{
	struct ct_project_opts o = { .name = name, .listen = "127.0.0.1:0" };
	char datadir[CT_DFX_PATH], logdir[CT_DFX_PATH];
	int rc;

	o.db_url = db_url;
	*dir = ct_test_mkdtemp();
	rc = ct_project_init(*dir, &o);
	if (rc == 0) rc = ct_server_load(srv, *dir, NULL);
	if (rc == 0) rc = ct_path_join(datadir, sizeof(datadir), srv->dir, "db");
	if (rc == 0) rc = ct_path_join(logdir, sizeof(logdir), srv->dir, "log");
	if (rc == 0 && !keep_stderr)
		rc = ct_db_global_init(srv->db_url, datadir, NULL);
	else if (rc == 0) {
		/* the embedded server sends stderr to its log: keep ours */
		int saved = dup(2);

		rc = ct_db_global_init(srv->db_url, datadir, logdir);
		if (saved >= 0) {
			dup2(saved, 2);
			close(saved);
		}
	}
	if (rc == 0) rc = ct_db_open(db, srv->clock);
	if (rc == 0) rc = ct_db_migrate(*db);
	return rc;
}

void ct_dfx_close(char *dir, struct ct_server *srv, struct ct_db *db)
{
	ct_db_close(db);
	ct_db_global_end();
	ct_server_free(srv);
	ct_test_rmtree(dir);
	free(dir);
}

int ct_dfx_lib_start(char **dir)
{
	char datadir[CT_DFX_PATH], logdir[CT_DFX_PATH];
	int rc, saved;

	*dir = ct_test_mkdtemp();
	if (*dir == NULL)
		return CT_EIO;
	rc = ct_path_join(datadir, sizeof(datadir), *dir, "db");
	if (rc == 0)
		rc = ct_path_join(logdir, sizeof(logdir), *dir, "log");
	if (rc == 0)
		rc = ct_mkdir_p(logdir, 0700);
	if (rc < 0)
		return rc;
	/* the embedded server sends stderr to its log: keep ours */
	saved = dup(2);
	rc = ct_db_global_init(NULL, datadir, logdir);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	return rc;
}

void ct_dfx_lib_end(char *dir)
{
	ct_db_global_end();
	if (dir != NULL)
		ct_test_rmtree(dir);
	free(dir);
}

int ct_dfx_group_setup(void **state)
{
	char *dir = NULL;

	if (ct_dfx_lib_start(&dir) < 0) {
		ct_dfx_lib_end(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

int ct_dfx_group_teardown(void **state)
{
	ct_dfx_lib_end(*state);
	*state = NULL;
	return 0;
}

int ct_dfx_case_open(struct ct_dfx_case *c, const char *name,
		     const struct ct_model_config *cfg)
{
	struct ct_project_opts o = { .name = name, .listen = "127.0.0.1:0" };
	int rc;

	ct_pass_forget_all();	/* a fresh database reuses the ids failures were kept by */
	c->rng = 0x9E3779B97F4A7C15ull;
	c->t = CT_DFX_T0;
	ct_clock_fake(&c->clock, &c->t);
	c->dir = ct_test_mkdtemp();
	if (c->dir == NULL)
		return CT_EIO;
	rc = ct_project_init(c->dir, &o);
	if (rc == 0) rc = ct_server_load(&c->srv, c->dir, NULL);
	if (rc == 0)
		c->srv.clock = &c->clock;
	/* an empty database: the next connection creates it again */
	if (rc == 0) rc = ct_db_open(&c->db, c->srv.clock);
	if (rc == 0) rc = ct_db_execa(c->db, "DROP DATABASE IF EXISTS `" CT_DB_EMBEDDED_NAME "`",
				     NULL, 0);
	ct_db_close(c->db);
	c->db = NULL;
	if (rc >= 0) rc = ct_db_open(&c->db, c->srv.clock);
	if (rc == 0) rc = ct_db_migrate(c->db);
	if (rc == 0)
		rc = ct_dfx_make_inputs(cfg, c->dir, &c->rng, c->model, c->train, c->eval);
	if (rc < 0) {
		fprintf(stderr, "case setup: %s\n", ct_errmsg(rc));
		ct_dfx_case_close(c);
		return rc;
	}
	return 0;
}

void ct_dfx_case_close(struct ct_dfx_case *c)
{
	ct_db_close(c->db);
	c->db = NULL;
	ct_server_free(&c->srv);
	if (c->dir != NULL)
		ct_test_rmtree(c->dir);
	free(c->dir);
	c->dir = NULL;
}

int ct_dfx_case_teardown(void **state)
{
	struct ct_dfx_case *c = *state;

	ct_dfx_case_close(c);
	free(c);
	return 0;
}

int64_t ct_dfx_send(struct ct_db *db, int64_t wuid, int64_t hostid, int64_t userid)
{
	int64_t rid = 0, now = ct_db_now(db);

	assert_int_equal(CT_DB_QUERY_INT(db, &rid, "SELECT id FROM result WHERE workunitid=? "
					 "AND server_state=? ORDER BY id LIMIT 1", wuid,
					 CT_RS_UNSENT), 0);
	assert_int_equal(CT_DB_EXEC(db, "UPDATE result SET server_state=?, hostid=?, userid=?, "
				    "sent_time=?, report_deadline=? WHERE id=? AND server_state=?",
				    CT_RS_IN_PROGRESS, hostid, userid, now,
				    now + 86400, rid, CT_RS_UNSENT), 1);
	return rid;
}

int64_t ct_dfx_add_user(struct ct_db *db, const char *name, int64_t team, int64_t *hostid)
{
	char email[64], auth[65];
	int64_t id;

	snprintf(email, sizeof(email), "%s@example.org", name);
	ct_sha256_hex(name, strlen(name), auth);
	assert_int_equal(CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, "
				    "passwd_hash, auth_hash, teamid) VALUES (?,?,?,?,?,?)",
				    ct_db_now(db), name, email, "x", auth, team), 1);
	id = ct_db_last_id(db);
	assert_int_equal(CT_DB_EXEC(db, "INSERT INTO host (create_time, userid, host_cpid) "
				    "VALUES (?,?,?)", ct_db_now(db), id, auth + 32), 1);
	*hostid = ct_db_last_id(db);
	return id;
}

void ct_dfx_upload(const struct ct_server *srv, struct ct_db *db, int64_t rid,
		   const void *data, size_t len, char *usha)
{
	char name[96], path[CT_DFX_PATH];
	struct ct_db_res *r = NULL;

	assert_int_equal(CT_DB_QUERY(db, &r, "SELECT name FROM result WHERE id=?", rid), 0);
	assert_int_equal(ct_db_next(r), 1);
	snprintf(name, sizeof(name), "%s", ct_db_str(r, 0));
	ct_db_res_free(r);
	assert_int_equal(ct_server_upload_path(srv, name, path, sizeof(path)), 0);
	assert_int_equal(ct_file_write_atomic(path, data, len, 0600), 0);
	if (usha)
		ct_sha256_hex(data, len, usha);
}

void ct_dfx_wu_row(struct ct_db *db, int64_t jobid, int idx, int shard, struct ct_dfx_wu *w)
{
	struct ct_db_res *res = NULL;

	memset(w, 0, sizeof(*w));
	assert_int_equal(CT_DB_QUERY(db, &res, "SELECT w.id, w.model_sha256, w.data_sha256, "
				     "w.seed, j.steps, j.batch, j.seq, j.lr, j.grad_clip FROM "
				     "workunit w JOIN job j ON j.id = w.jobid WHERE w.jobid=? AND "
				     "w.round_idx=? AND w.shard=?", jobid, idx, shard), 0);
	assert_int_equal(ct_db_next(res), 1);
	w->id = ct_db_int(res, 0);
	snprintf(w->model_sha, sizeof(w->model_sha), "%s", ct_db_str(res, 1));
	snprintf(w->data_sha, sizeof(w->data_sha), "%s", ct_db_str(res, 2));
	w->seed = (uint64_t)ct_db_int(res, 3);
	ct_wu_hparams_default(&w->hp);
	w->hp.steps = (int)ct_db_int(res, 4);
	w->hp.B = (int)ct_db_int(res, 5);
	w->hp.T = (int)ct_db_int(res, 6);
	w->hp.lr = (float)ct_db_double(res, 7);
	w->hp.grad_clip = (float)ct_db_double(res, 8);
	ct_db_res_free(res);
}

float *ct_dfx_wu_run(const struct ct_server *srv, const struct ct_dfx_wu *w,
		     const struct ct_wu_hparams *hp, struct ct_gpt2 *base, size_t n)
{
	struct ct_tokens tok = { 0 };
	char path[CT_DFX_PATH];
	float *out;

	assert_int_equal(ct_server_download_path(srv, w->model_sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, base), 0);
	assert_int_equal(ct_server_download_path(srv, w->data_sha, path, sizeof(path)), 0);
	assert_int_equal(ct_tokens_load(path, &tok), 0);
	if (n == 0)
		n = base->lay.total;
	out = malloc(n * sizeof(float));
	assert_non_null(out);
	assert_int_equal(ct_wu_run(base, &tok, hp, "cpu", out, NULL), 0);
	ct_tokens_free(&tok);
	return out;
}

void ct_dfx_run_daemons(struct ct_server *srv, struct ct_db *db)
{
	for (int pass = 0; pass < 20; pass++) {
		int n = 0, rc;

		rc = ct_transitioner_run_once(srv, db);
		assert_true(rc >= 0);
		n += rc;
		rc = ct_validator_run_once(srv, db);
		assert_true(rc >= 0);
		n += rc;
		rc = ct_assimilator_run_once(srv, db);
		assert_true(rc >= 0);
		n += rc;
		if (n == 0)
			return;
	}
	fail_msg("daemons never settled");
}

int64_t ct_dfx_qint(struct ct_db *db, const char *sql, int64_t arg)
{
	int64_t v = -1;

	assert_int_equal(CT_DB_QUERY_INT(db, &v, sql, arg), 0);
	return v;
}

double ct_dfx_qdouble(struct ct_db *db, const char *sql, int64_t arg)
{
	double v = -1;

	assert_int_equal(CT_DB_QUERY_DOUBLE(db, &v, sql, arg), 0);
	return v;
}

int ct_dfx_vstate(struct ct_db *db, int64_t rid)
{
	return (int)ct_dfx_qint(db, "SELECT validate_state FROM result WHERE id=?", rid);
}
