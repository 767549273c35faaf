/*
 * test_wg.c - the work generator and the file store (server/daemons/wg.h,
 * server/data/store.h) on an embedded database: a submitted job becomes K
 * contiguous shards (stored, content-addressed) and round 1 with K WUs of
 * target_nresults unsent results each; bad inputs (not a checkpoint or
 * token file, a token outside the model's vocabulary, too few tokens) are
 * refused before anything is stored and leave no running job; opening a
 * round is idempotent; seeds are deterministic and distinct; storing the
 * same bytes twice keeps one object.
 */
#include "ct_test_db.h"
#include "data/job_state.h"

#include <inttypes.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_tokens.h"
#include "data/db.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "data/store.h"
#include "daemons/wg.h"

static char *g_dir;
static struct ct_server g_srv;
static struct ct_db *g_db;
static char g_model[4200], g_train[4200], g_eval[4200], g_bad[4200], g_oov[4200],
	    g_short[4200];

static void put(const char *path, const void *p, size_t n)
{
	assert_int_equal(ct_file_write_atomic(path, p, n, 0644), 0);
}

static void make_tokens(const char *path, int n, int salt)
{
	ct_tok *t = calloc((size_t)n, sizeof(*t));

	assert_non_null(t);
	for (int i = 0; i < n; i++)
		t[i] = (ct_tok)(i + salt);	/* token i has value i + salt */
	assert_int_equal(ct_tokens_save(path, t, (uint64_t)n), 0);
	free(t);
}

static int setup_all(void **state)
{
	struct ct_project_opts o = { 0 };
	/* context 64, vocabulary 1024 (every test token is below it) */
	struct ct_model_config cfg = { .maxT = 64, .V = 1024, .L = 1, .NH = 2, .C = 8,
				      .Vp = 1024 };
	struct ct_gpt2 m = { 0 };

	if (ct_test_project_open(&o, &g_dir, &g_srv, &g_db) < 0)
		return -1;
	snprintf(g_model, sizeof(g_model), "%s/model.bin", g_dir);
	if (ct_gpt2_alloc(&m, &cfg) < 0 || ct_gpt2_save(g_model, &m.cfg, m.params) < 0)
		return -1;
	ct_gpt2_free(&m);
	snprintf(g_train, sizeof(g_train), "%s/train.bin", g_dir);
	make_tokens(g_train, 1000, 0);
	snprintf(g_eval, sizeof(g_eval), "%s/eval.bin", g_dir);
	make_tokens(g_eval, 100, 5);
	snprintf(g_bad, sizeof(g_bad), "%s/bad.bin", g_dir);
	put(g_bad, "not a model at all", 18);
	snprintf(g_oov, sizeof(g_oov), "%s/oov.bin", g_dir);
	make_tokens(g_oov, 1000, 30);	/* tokens up to 1029: over the vocabulary */
	snprintf(g_short, sizeof(g_short), "%s/short.bin", g_dir);
	make_tokens(g_short, 8, 0);	/* fewer than seq+1 */
	return 0;
}

static int teardown_all(void **state)
{
	ct_db_close(g_db);
	ct_db_global_end();
	ct_server_free(&g_srv);
	ct_test_rmtree(g_dir);
	free(g_dir);
	return 0;
}

static struct ct_job_spec spec(void)
{
	struct ct_job_spec s = { .name = "t", .model_path = g_model, .train_path = g_train,
		.eval_path = g_eval, .shards = 3, .rounds = 2, .steps = 2, .batch = 2, .seq = 8,
		.lr = 1e-3, .quorum = 2, .replicas = 3, .seed = 99, .adaptive = -1 };
	return s;
}

static int64_t q(const char *sql, int64_t id)
{
	int64_t v = -1;

	assert_int_equal(CT_DB_QUERY_INT(g_db, &v, sql, id), 0);
	return v;
}

static void test_submit(void **state)
{
	struct ct_job_spec s = spec();
	struct ct_db_res *res = NULL;
	int64_t job = 0;

	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), 0);
	assert_true(job > 0);
	assert_int_equal(q("SELECT cur_round FROM job WHERE id=?", job), 1);
	assert_int_equal(q("SELECT status FROM job WHERE id=?", job), CT_JOB_RUNNING);
	assert_int_equal(q("SELECT COUNT(*) FROM `round` WHERE jobid=?", job), 1);
	assert_int_equal(q("SELECT COUNT(*) FROM workunit WHERE jobid=?", job), 3);
	assert_int_equal(q("SELECT COUNT(*) FROM result WHERE jobid=? AND server_state=2", job), 9);
	/* shards: contiguous slices [n*k/K, n*(k+1)/K) as token files */
	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT shard, sha256, ntokens FROM job_shard "
				     "WHERE jobid=? ORDER BY shard", job), 0);
	int64_t first = 0;
	for (int k = 0; k < 3; k++) {
		char path[4200];
		struct ct_mmap m = { 0 };
		assert_int_equal(ct_db_next(res), 1);
		int64_t a = 1000 * k / 3, b = 1000 * (k + 1) / 3;
		assert_int_equal(ct_db_int(res, 2), b - a);
		assert_true(ct_store_has(&g_srv, ct_db_str(res, 1)));
		assert_int_equal(ct_server_download_path(&g_srv, ct_db_str(res, 1), path,
							 sizeof(path)), 0);
		assert_int_equal(ct_file_map(path, &m), 0);
		assert_int_equal(m.len, 1024 + 2 * (size_t)(b - a));
		const int32_t *h = m.addr;
		assert_int_equal(h[0], 20240520);
		assert_int_equal(h[2], b - a);
		uint16_t t0;	/* a version 1 input makes version 1 shards */
		memcpy(&t0, (const char *)m.addr + 1024, 2);
		assert_int_equal(t0, a);	/* the slice starts at token a */
		ct_file_unmap(&m);
		first += b - a;
	}
	assert_int_equal(first, 1000);	/* every token in exactly one shard */
	ct_db_res_free(res);
	/* WUs name the round model and their shard, with distinct seeds */
	assert_int_equal(CT_DB_QUERY(g_db, &res, "SELECT w.name, w.seed, w.model_sha256 = j.model_sha256, "
				     "w.data_sha256 = s.sha256, w.target_nresults FROM workunit w "
				     "JOIN job j ON j.id=w.jobid JOIN job_shard s ON s.jobid=w.jobid "
				     "AND s.shard=w.shard WHERE w.jobid=? ORDER BY w.shard", job), 0);
	for (int k = 0; k < 3; k++) {
		char name[64];
		assert_int_equal(ct_db_next(res), 1);
		snprintf(name, sizeof(name), "j%" PRId64 "-r1-s%d", job, k);
		assert_string_equal(ct_db_str(res, 0), name);
		assert_int_equal(ct_db_int(res, 1), ct_wg_wu_seed(99, 1, k));
		assert_int_equal(ct_db_int(res, 2), 1);
		assert_int_equal(ct_db_int(res, 3), 1);
		assert_int_equal(ct_db_int(res, 4), 3);
	}
	ct_db_res_free(res);
}

static void test_open_round(void **state)
{
	struct ct_job_spec s = spec();
	char sha[65];
	int64_t job = 0;

	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), 0);
	assert_int_equal(ct_store_add_buf(&g_srv, g_db, "next model", 10, "round_model", job, 1,
					  sha), 0);
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, job, 2, sha), 0);
	assert_int_equal(q("SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=2", job), 3);
	/* again (an assimilator retrying after a crash): nothing new */
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, job, 2, sha), 0);
	assert_int_equal(q("SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=2", job), 3);
	assert_int_equal(q("SELECT COUNT(*) FROM result WHERE jobid=?", job), 18);
	assert_int_equal(q("SELECT cur_round FROM job WHERE id=?", job), 2);
	assert_int_equal(q("SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=2 AND "
			   "model_sha256=(SELECT sha256 FROM `file` WHERE kind='round_model' "
			   "AND jobid=workunit.jobid)", job), 3);
	/* past the last round, unknown model, unknown job */
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, job, 3, sha), CT_ERANGE);
	int64_t job2 = 0;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job2), 0);
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, job2, 2,
		"0000000000000000000000000000000000000000000000000000000000000000"), CT_ENOTFOUND);
	assert_int_equal(q("SELECT COUNT(*) FROM `round` WHERE jobid=?", job2), 1);
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, 999999, 1, sha), CT_ENOTFOUND);
	assert_int_equal(ct_wg_open_round(&g_srv, g_db, job, 1, "nothex"), CT_EINVAL);
}

static void test_bad_inputs(void **state)
{
	struct ct_job_spec s;
	int64_t before = 0, after = 0, files = 0, files_after = 0, job = 0;

	assert_int_equal(ct_db_query_inta(g_db, &before, "SELECT COUNT(*) FROM job WHERE status=1",
					 NULL, 0), 0);
	assert_int_equal(ct_db_query_inta(g_db, &files, "SELECT COUNT(*) FROM `file`", NULL, 0), 0);
	s = spec();
	s.model_path = g_bad;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EFORMAT);
	s = spec();
	s.train_path = g_model;		/* a checkpoint is not a token file */
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EFORMAT);
	s = spec();
	s.model_path = g_train;		/* a token file is not a checkpoint */
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EFORMAT);
	s = spec();
	s.train_path = g_oov;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "oov.bin"));
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "token 1024 at position 994"));
	s = spec();
	s.eval_path = g_oov;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EMISMATCH);
	s = spec();
	s.eval_path = g_short;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	s = spec();
	s.shards = 200;			/* 5 tokens per shard < batch*seq+1 */
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	s = spec();
	s.seq = 65;			/* longer than the model's context (64) */
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	s = spec();
	s.lr = 0;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	s = spec();
	s.quorum = 3;
	s.replicas = 2;
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	s = spec();
	s.upload_encoding = "zip";
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &s, &job), CT_EINVAL);
	assert_int_equal(job, 0);
	assert_int_equal(ct_db_query_inta(g_db, &after, "SELECT COUNT(*) FROM job WHERE status=1",
					 NULL, 0), 0);
	assert_int_equal(after, before);	/* nothing half-made is running */
	assert_int_equal(ct_db_query_inta(g_db, &files_after, "SELECT COUNT(*) FROM `file`", NULL, 0),
			 0);
	assert_int_equal(files_after, files);	/* inputs are checked before storing */
}

static void test_seeds(void **state)
{
	assert_int_equal(ct_wg_wu_seed(1, 1, 0), ct_wg_wu_seed(1, 1, 0));
	assert_true(ct_wg_wu_seed(1, 1, 0) != ct_wg_wu_seed(1, 1, 1));
	assert_true(ct_wg_wu_seed(1, 1, 0) != ct_wg_wu_seed(1, 2, 0));
	assert_true(ct_wg_wu_seed(1, 1, 0) != ct_wg_wu_seed(2, 1, 0));
	assert_true(ct_wg_wu_seed(INT64_MAX, 100000, 99999) >= 0);
}

static void test_store(void **state)
{
	char a[65], b[65], hex[65], path[4200], src[4200];
	int64_t size = 0, n = 0;

	assert_int_equal(ct_store_add_buf(&g_srv, g_db, "same bytes", 10, "model", 0, 0, a), 0);
	snprintf(src, sizeof(src), "%s/same.bin", g_dir);
	put(src, "same bytes", 10);
	assert_int_equal(ct_store_add_file(&g_srv, g_db, src, "model", 0, 1, b, &size), 0);
	assert_string_equal(a, b);
	assert_int_equal(size, 10);
	ct_sha256_hex("same bytes", 10, hex);
	assert_string_equal(a, hex);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT COUNT(*) FROM `file` WHERE sha256=?",
					 a), 0);
	assert_int_equal(n, 1);
	assert_int_equal(CT_DB_QUERY_INT(g_db, &n, "SELECT keep FROM `file` WHERE sha256=?",
					 a), 0);
	assert_int_equal(n, 1);	/* raised by the second add */
	assert_int_equal(ct_server_download_path(&g_srv, a, path, sizeof(path)), 0);
	unsigned char d[32];
	char got[65];
	assert_int_equal(ct_sha256_file(path, d), 0);
	ct_hex_encode(d, 32, got);
	assert_string_equal(got, a);
	assert_int_equal(ct_store_add_file(&g_srv, g_db, "/nonexistent/x", "model", 0, 0, b, NULL),
			 CT_ENOENT);
	assert_int_equal(ct_server_download_path(&g_srv, "../../etc/passwd", path, sizeof(path)),
			 CT_EINVAL);
	assert_int_equal(ct_server_upload_path(&g_srv, "../secret", path, sizeof(path)), CT_EINVAL);
	assert_int_equal(ct_server_upload_path(&g_srv, "j1-r1-s0-0", path, sizeof(path)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit),
		cmocka_unit_test(test_open_round),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
