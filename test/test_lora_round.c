/*
 * Tests of LoRA jobs in the daemons against a real embedded database (the
 * fixture of test_daemons.c: a project, a job submitted with the work
 * generator, the scheduler's row changes played here, the daemons' own
 * run_once functions):
 *  - job submit stores the LoRA spec (defaults filled in) and caps uploads
 *    at adapter size;
 *  - honest adapter results (the engine's LoRA WU, encoded as the client
 *    does) validate by hash and get LoRA credit, below full-weight credit;
 *  - crafted adapter results are rejected: zero update, NaN, a huge
 *    update, another rank, another seed's adapters, a full-weights delta;
 *    a nudged one (non-conforming) disagrees and costs one more replica;
 *  - a round's model is base + the exact mean of the shards' adapter
 *    products (ct_lora_merge over the canonical adapters, bit for bit),
 *    and the next round's WUs start fresh adapters from it, through to the
 *    job's final model;
 *  - int8 adapter uploads agree by tolerance within their quantisation
 *    bound, and a scaled update does not.
 */
#include "ct_test.h"
#include "credit.h"
#include "daemon_fixture.h"
#include "daemons.h"
#include "db.h"
#include "lora_job.h"
#include "lora_round.h"
#include "roles.h"
#include "server.h"
#include "wg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_lora_result.h"

#include <math.h>

static const struct ct_gpt2_config CFG = { .maxT = 16, .V = 64, .L = 2, .NH = 2, .C = 16,
					   .Vp = 64 };
static const struct ct_lora_spec SPEC = { .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL };

struct fx {
	char *dir;
	struct ct_server srv;
	struct ct_db *db;
	char model[4200], train[4200], eval[4200];
	int64_t jobid, users[4], hosts[4];
};

static struct fx F;

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double urand(void)
{
	return ct_dfx_urand(&rng);
}

/* ---- fixture ------------------------------------------------------------- */

static int make_inputs(void)
{
	return ct_dfx_make_inputs(&CFG, F.dir, &rng, F.model, F.train, F.eval);
}

static int64_t add_user(const char *name, int64_t *hostid)
{
	return ct_dfx_add_user(F.db, name, 0, hostid);
}

static int setup(void **state)
{
	int rc;

	(void)state;
	rc = ct_dfx_open("lora test", NULL, 1, NULL, &F.dir, &F.srv, &F.db);
	if (rc == 0) rc = make_inputs();
	if (rc < 0) {
		fprintf(stderr, "setup: %s\n", ct_errmsg(rc));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ct_dfx_close(F.dir, &F.srv, F.db);
	return 0;
}

/* ---- playing the scheduler and the clients ----------------------------- */

struct wu {
	int64_t id;
	uint64_t seed;
	char model_sha[65];
	struct ct_gpt2 base;
	float *honest;		/* the engine's adapters for this WU */
	size_t n;
};

static void wu_free(struct wu *w)
{
	ct_gpt2_free(&w->base);
	free(w->honest);
	memset(w, 0, sizeof(*w));
}

/* WU `shard` of round `idx`: its base and the adapters a LoRA WU trains. */
static void wu_load(int idx, int shard, struct wu *w)
{
	struct ct_dfx_wu row;

	memset(w, 0, sizeof(*w));
	ct_dfx_wu_row(F.db, F.jobid, idx, shard, &row);
	w->id = row.id;
	memcpy(w->model_sha, row.model_sha, sizeof(w->model_sha));
	w->seed = row.seed;
	row.hp.lora = SPEC;
	row.hp.lora_seed = w->seed;
	w->n = ct_lora_nparams(&CFG, &SPEC);
	w->honest = ct_dfx_wu_run(&F.srv, &row, &row.hp, &w->base, w->n);
}

static int64_t send_to(const struct wu *w, int h)
{
	int64_t rid = 0, now = ct_db_now(F.db);

	assert_int_equal(ct_db_query_int(F.db, &rid, "SELECT id FROM result WHERE workunitid=? "
					 "AND server_state=? ORDER BY id LIMIT 1", "li", w->id,
					 CT_RS_UNSENT), 0);
	assert_int_equal(ct_db_exec(F.db, "UPDATE result SET server_state=?, hostid=?, userid=?, "
				    "sent_time=?, report_deadline=? WHERE id=? AND server_state=?",
				    "illllli", CT_RS_IN_PROGRESS, F.hosts[h], F.users[h], now,
				    now + 86400, rid, CT_RS_UNSENT), 1);
	return rid;
}

/* Upload `file` as result rid and report it (what the scheduler records). */
static void report_file(const struct wu *w, int64_t rid, const struct ct_buf *file,
			int conforming)
{
	int64_t now = ct_db_now(F.db);

	ct_dfx_upload(&F.srv, F.db, rid, file->data, file->len, NULL);
	assert_int_equal(ct_db_exec(F.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, upload_time=?, upload_size=?, conforming=? "
				    "WHERE id=?", "iilllil", CT_RS_OVER, CT_RO_SUCCESS, now, now,
				    (int64_t)file->len, conforming, rid), 1);
	assert_int_equal(ct_db_exec(F.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    "ll", now, w->id), 1);
}

static int g_encoding = CT_DELTA_LOSSLESS;	/* the current job's */

/* The client's upload of adapters ad (as cl_lora.c encodes them). */
static void report(const struct wu *w, int64_t rid, const float *ad, int conforming)
{
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];

	assert_int_equal(ct_hex_decode(w->model_sha, base_sha, 32), 0);
	assert_int_equal(ct_lora_result_encode(&CFG, &SPEC, w->seed, base_sha, ad, g_encoding,
					       &out), 0);
	report_file(w, rid, &out, conforming);
	ct_buf_free(&out);
}

static void run_daemons(void)
{
	ct_dfx_run_daemons(&F.srv, F.db);
}

static int64_t qint(const char *sql, int64_t arg)
{
	return ct_dfx_qint(F.db, sql, arg);
}

static double qdouble(const char *sql, int64_t arg)
{
	return ct_dfx_qdouble(F.db, sql, arg);
}

static int vstate(int64_t rid)
{
	return (int)qint("SELECT validate_state FROM result WHERE id=?", rid);
}

static const char *errmsg(int64_t rid)
{
	static char buf[256];
	struct ct_db_res *r = NULL;

	assert_int_equal(ct_db_query(F.db, &r, "SELECT error_message FROM result WHERE id=?",
				     "l", rid), 0);
	assert_int_equal(ct_db_next(r), 1);
	snprintf(buf, sizeof(buf), "%s", ct_db_str(r, 0));
	ct_db_res_free(r);
	return buf;
}

/* ---- the scenario -------------------------------------------------------- */

static struct wu R1[2];
static double credit1;

static void test_submit_lora_job(void **state)
{
	struct ct_job_spec spec = {
		.name = "lora job", .shards = 2, .rounds = 2, .steps = 4, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 2, .max_total_results = 12,
		.max_error_results = 10, .tolerance = 1e-3, .loss_margin = 0.5, .adaptive = 0,
		.model_path = F.model, .train_path = F.train, .eval_path = F.eval,
		.lora = { .rank = 2, .alpha = 4.0f },	/* targets: default, all */
	};
	struct ct_job_spec bad = spec;
	struct ct_lora_spec got;
	int64_t id = 0, model_size;

	(void)state;
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user%d", i);
		F.users[i] = add_user(name, &F.hosts[i]);
	}
	/* refused before anything is stored */
	bad.lora.rank = 0;
	assert_int_equal(ct_wg_submit(&F.srv, F.db, &bad, &id), CT_EINVAL);
	bad.lora = (struct ct_lora_spec){ .rank = 2, .alpha = -1.0f };
	assert_int_equal(ct_wg_submit(&F.srv, F.db, &bad, &id), CT_EINVAL);
	assert_int_equal(qint("SELECT COUNT(*) FROM job WHERE id>?", 0), 0);

	assert_int_equal(ct_wg_submit(&F.srv, F.db, &spec, &F.jobid), 0);
	assert_int_equal(ct_lora_job_get(F.db, F.jobid, &got), 0);
	assert_int_equal(got.rank, SPEC.rank);
	assert_true(got.alpha == SPEC.alpha);
	assert_int_equal(got.targets, CT_LORA_ALL);
	/* uploads capped at adapter size, far below the model's */
	model_size = qint("SELECT model_size FROM job WHERE id=?", F.jobid);
	assert_int_equal(qint("SELECT max_upload_bytes FROM job WHERE id=?", F.jobid),
			 ct_lora_max_upload(&CFG, &SPEC));
	assert_true(ct_lora_max_upload(&CFG, &SPEC) - (64 << 10) < model_size / 4);
	/* what the scheduler puts into such a WU (doc/protocol.md); nothing
	 * for a job without LoRA */
	{
		struct ct_buf x = CT_BUF_INIT(0);

		assert_int_equal(ct_lora_wu_xml(&x, F.db, F.jobid), 0);
		assert_non_null(strstr((const char *)x.data, "<lora_rank>2</lora_rank>"));
		assert_non_null(strstr((const char *)x.data, "<lora_alpha>4</lora_alpha>"));
		assert_non_null(strstr((const char *)x.data, "<lora_targets>qkv,proj,fc,fcproj</lora_targets>"));
		ct_buf_reset(&x);
		assert_int_equal(ct_lora_wu_xml(&x, F.db, F.jobid + 100), 0);
		assert_int_equal(x.len, 0);
		ct_buf_free(&x);
	}
	wu_load(1, 0, &R1[0]);
	wu_load(1, 1, &R1[1]);
	assert_true(R1[0].seed != R1[1].seed);
}

static void test_honest_pair(void **state)
{
	struct wu *w = &R1[0];
	int64_t a, b;
	double full;

	(void)state;
	a = send_to(w, 0);
	b = send_to(w, 1);
	report(w, a, w->honest, 1);
	report(w, b, w->honest, 1);
	run_daemons();
	assert_int_equal(vstate(a), CT_VS_VALID);
	assert_int_equal(vstate(b), CT_VS_VALID);
	assert_true(qdouble("SELECT probe_loss FROM result WHERE id=?", a) > 0.0);
	credit1 = ct_credit_from_flops(ct_lora_wu_flops(&CFG, &SPEC, 8, 2, 4));
	full = ct_credit_from_flops(ct_credit_wu_flops(&CFG, 8, 2, 4));
	assert_true(credit1 > 0.0 && credit1 < full);
	assert_true(fabs(qdouble("SELECT granted_credit FROM result WHERE id=?", a) - credit1) <
		    1e-12);
	/* doc/credit.md's worked example: GPT-2 124M, rank 8 on all four
	 * targets, 10 steps of 4 x 1024 tokens */
	{
		const struct ct_gpt2_config g = { .maxT = 1024, .V = 50257, .L = 12, .NH = 12,
						  .C = 768, .Vp = 50304 };
		const struct ct_lora_spec r8 = { .rank = 8, .alpha = 8.0f,
						 .targets = CT_LORA_ALL };

		assert_true(fabs(ct_lora_wu_flops(&g, &r8, 1024, 4, 10) -
				 40960.0 * 558028800.0) < 1.0);
		assert_true(fabs(ct_credit_from_flops(ct_lora_wu_flops(&g, &r8, 1024, 4, 10)) -
				 52.909397) < 1e-5);
	}
}

/* Adapters for the bad results of WU (1, 1). */
static float *variant(const struct wu *w, const float *init, const char *what)
{
	float *v = malloc(w->n * sizeof(float));

	for (size_t i = 0; i < w->n; i++) {
		float d = w->honest[i] - init[i];

		if (strcmp(what, "zero") == 0)
			v[i] = init[i];
		else if (strcmp(what, "huge") == 0)
			v[i] = init[i] + 1000.0f * d;
		else if (strcmp(what, "nudge") == 0)
			v[i] = init[i] + 0.9f * d;
		else
			v[i] = w->honest[i];
	}
	if (strcmp(what, "nan") == 0)
		v[w->n / 3] = NAN;
	return v;
}

/* A file that is not this WU's adapters: another rank, another seed's
 * adapters, or a full-weights delta. */
static void report_foreign(const struct wu *w, int64_t rid, const char *what)
{
	struct ct_lora_spec r3 = SPEC;
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char sha[32];
	struct ct_delta_model dm;
	float *x;
	size_t n;

	assert_int_equal(ct_hex_decode(w->model_sha, sha, 32), 0);
	if (strcmp(what, "rank") == 0) {
		r3.rank = 3;
		n = ct_lora_nparams(&CFG, &r3);
		x = calloc(n, sizeof(float));
		for (size_t i = 0; i < n; i++)
			x[i] = (float)(urand() - 0.5) * 0.01f;
		assert_int_equal(ct_lora_result_encode(&CFG, &r3, w->seed, sha, x,
						       CT_DELTA_LOSSLESS, &out), 0);
	} else if (strcmp(what, "seed") == 0) {
		x = NULL;
		assert_int_equal(ct_lora_result_encode(&CFG, &SPEC, w->seed + 1, sha, w->honest,
						       CT_DELTA_LOSSLESS, &out), 0);
	} else {
		n = w->base.lay.total;
		x = malloc(n * sizeof(float));
		for (size_t i = 0; i < n; i++)
			x[i] = w->base.params[i] + 1e-4f;
		ct_lora_result_model(&CFG, &dm);
		assert_int_equal(ct_delta_encode(w->base.params, x, n, &dm, sha,
						 CT_DELTA_LOSSLESS, -1, &out), 0);
	}
	report_file(w, rid, &out, 0);
	free(x);
	ct_buf_free(&out);
}

static void test_bad_results_rejected(void **state)
{
	static const struct { const char *what, *reason; } bad[] = {
		{ "zero", "no_update" }, { "nan", "nonfinite" }, { "huge", "update_too_large" },
		{ "rank", "wrong_shape" }, { "seed", "wrong_shape" }, { "full", "wrong_shape" },
	};
	struct wu *w = &R1[1];
	float *init = malloc(w->n * sizeof(float)), *v;
	int64_t honest, rid, nudge, third;

	(void)state;
	assert_int_equal(ct_lora_init(&CFG, &SPEC, w->seed, init), 0);
	honest = send_to(w, 1);
	report(w, honest, w->honest, 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		rid = send_to(w, 2);
		if (strcmp(bad[k].what, "rank") == 0 || strcmp(bad[k].what, "seed") == 0 ||
		    strcmp(bad[k].what, "full") == 0) {
			report_foreign(w, rid, bad[k].what);
		} else {
			v = variant(w, init, bad[k].what);
			report(w, rid, v, 0);
			free(v);
		}
		run_daemons();
		assert_int_equal(vstate(rid), CT_VS_INVALID);
		assert_non_null(strstr(errmsg(rid), bad[k].reason));
		assert_int_equal(qint("SELECT COUNT(*) FROM credit_event WHERE resultid=?", rid), 0);
		assert_int_equal(vstate(honest), CT_VS_INCONCLUSIVE);
	}
	/* a nudged update passes every check alone but disagrees */
	nudge = send_to(w, 3);
	v = variant(w, init, "nudge");
	report(w, nudge, v, 0);
	free(v);
	run_daemons();
	assert_int_equal(vstate(nudge), CT_VS_INCONCLUSIVE);
	assert_int_equal(qint("SELECT canonical_resultid FROM workunit WHERE id=?", w->id), 0);
	third = send_to(w, 0);
	report(w, third, w->honest, 0);
	run_daemons();
	assert_int_equal(vstate(honest), CT_VS_VALID);
	assert_int_equal(vstate(third), CT_VS_VALID);
	assert_int_equal(vstate(nudge), CT_VS_INVALID);
	free(init);
}

/* The round's model from the canonical adapters, recomputed here. */
static void check_round_model(int idx, const struct wu *ws, const char *base_sha)
{
	const float *ads[2] = { ws[0].honest, ws[1].honest };
	struct ct_gpt2 base = { 0 }, got = { 0 };
	struct ct_db_res *res = NULL;
	char sha[65], path[4200];

	assert_int_equal(ct_db_query(F.db, &res, "SELECT status, out_model_sha256, model_sha256 "
				     "FROM `round` WHERE jobid=? AND idx=?", "li", F.jobid, idx), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_ROUND_DONE);
	snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 1));
	assert_string_equal(ct_db_str(res, 2), base_sha);
	ct_db_res_free(res);
	assert_int_equal(ct_server_download_path(&F.srv, base_sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &base), 0);
	assert_int_equal(ct_lora_merge(&CFG, &SPEC, base.params, ads, 2), 0);
	assert_int_equal(ct_server_download_path(&F.srv, sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &got), 0);
	assert_memory_equal(got.params, base.params, base.lay.total * sizeof(float));
	ct_gpt2_free(&base);
	ct_gpt2_free(&got);
}

static void test_rounds_merge_exactly(void **state)
{
	struct wu R2[2];
	struct ct_db_res *res = NULL;
	char out1[65], job_model[65];

	(void)state;
	assert_int_equal(ct_db_query(F.db, &res, "SELECT j.model_sha256, r.out_model_sha256 FROM "
				     "job j JOIN `round` r ON r.jobid = j.id AND r.idx = 1 WHERE "
				     "j.id=?", "l", F.jobid), 0);
	assert_int_equal(ct_db_next(res), 1);
	snprintf(job_model, sizeof(job_model), "%s", ct_db_str(res, 0));
	snprintf(out1, sizeof(out1), "%s", ct_db_str(res, 1));
	ct_db_res_free(res);
	check_round_model(1, R1, job_model);
	/* round 2: fresh adapters (new seeds) on round 1's model */
	wu_load(2, 0, &R2[0]);
	wu_load(2, 1, &R2[1]);
	assert_string_equal(R2[0].model_sha, out1);
	assert_true(R2[0].seed != R1[0].seed && R2[1].seed != R1[1].seed);
	for (int k = 0; k < 2; k++) {
		int64_t a = send_to(&R2[k], 0), b = send_to(&R2[k], 1 + k);

		report(&R2[k], a, R2[k].honest, 1);
		report(&R2[k], b, R2[k].honest, 1);
	}
	run_daemons();
	check_round_model(2, R2, out1);
	assert_int_equal(qint("SELECT status FROM job WHERE id=?", F.jobid), CT_JOB_DONE);
	assert_int_equal(qint("SELECT COUNT(*) FROM job j JOIN `round` r ON r.jobid = j.id AND "
			      "r.idx = 2 WHERE j.id=? AND j.final_model_sha256 = "
			      "r.out_model_sha256", F.jobid), 1);
	for (int k = 0; k < 2; k++) {
		wu_free(&R1[k]);
		wu_free(&R2[k]);
	}
}

/* int8 adapter uploads from non-conforming devices: two honest results
 * whose adapters differ slightly agree by tolerance, widened by the
 * decoder's bound on the int8 error of the adapters; a 0.9x update does
 * not. */
static void test_int8_adapters(void **state)
{
	struct ct_job_spec spec = {
		.name = "lora int8", .shards = 1, .rounds = 1, .steps = 4, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 3, .tolerance = 1e-3, .loss_margin = 0.5,
		.adaptive = 0, .model_path = F.model, .train_path = F.train, .eval_path = F.eval,
		.upload_encoding = "int8", .lora = SPEC,
	};
	struct wu w;
	float *init, *near, *nudge;
	int64_t a, b, c;

	(void)state;
	assert_int_equal(ct_wg_submit(&F.srv, F.db, &spec, &F.jobid), 0);
	g_encoding = CT_DELTA_INT8;
	wu_load(1, 0, &w);
	init = malloc(w.n * sizeof(float));
	near = malloc(w.n * sizeof(float));
	nudge = malloc(w.n * sizeof(float));
	assert_int_equal(ct_lora_init(&CFG, &SPEC, w.seed, init), 0);
	for (size_t i = 0; i < w.n; i++) {
		float d = w.honest[i] - init[i];

		/* a different device's rounding: a few adapters off by 2% */
		near[i] = i % 97 == 0 ? init[i] + 1.02f * d : w.honest[i];
		nudge[i] = init[i] + 0.9f * d;
	}
	a = send_to(&w, 0);
	b = send_to(&w, 1);
	c = send_to(&w, 2);
	report(&w, a, w.honest, 0);
	report(&w, b, near, 0);
	report(&w, c, nudge, 0);
	run_daemons();
	assert_int_equal(vstate(a), CT_VS_VALID);
	assert_int_equal(vstate(b), CT_VS_VALID);
	assert_int_equal(vstate(c), CT_VS_INVALID);
	/* a and b decoded differently (not a hash match); ~2% x sqrt(1/97) of
	 * the update apart, over the 1e-3 tolerance without the int8 bound */
	assert_true(qdouble("SELECT update_norm FROM result WHERE id=?", a) !=
		    qdouble("SELECT update_norm FROM result WHERE id=?", b));
	assert_int_equal(qint("SELECT status FROM job WHERE id=?", F.jobid), CT_JOB_DONE);
	g_encoding = CT_DELTA_LOSSLESS;
	free(init), free(near), free(nudge);
	wu_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_lora_job),
		cmocka_unit_test(test_honest_pair),
		cmocka_unit_test(test_bad_results_rejected),
		cmocka_unit_test(test_rounds_merge_exactly),
		cmocka_unit_test(test_int8_adapters),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
