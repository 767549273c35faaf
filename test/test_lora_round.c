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
 * Each case has its own project, empty database, fake clock and users
 * (daemon_fixture.h), and submits and plays what it needs itself.
 */
#include "ct_test.h"
#include "validate/credit.h"
#include "daemon_fixture.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "data/wu_state.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/lora_job.h"
#include "validate/lora_round.h"
#include "cmd/roles.h"
#include "data/server.h"
#include "daemons/wg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_lora_result.h"

#include <math.h>

static const struct ct_model_config CFG = { .maxT = 16, .V = 64, .L = 2, .NH = 2, .C = 16,
					   .Vp = 64 };
static const struct ct_lora_spec SPEC = { .rank = 2, .alpha = 4.0f, .targets = CT_LORA_ALL };

/* One case's world: nothing is shared between cases. */
struct fx {
	struct ct_dfx_case c;	/* project, database, fake clock, inputs */
	int encoding;		/* the current job's upload encoding */
	int64_t jobid, users[4], hosts[4];
};

static double urand(struct fx *f)
{
	return ct_dfx_urand(&f->c.rng);
}

/* ---- fixture ------------------------------------------------------------- */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL || ct_dfx_case_open(&f->c, "lora test", &CFG) < 0) {
		free(f);
		return -1;
	}
	f->encoding = CT_DELTA_LOSSLESS;
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user%d", i);
		f->users[i] = ct_dfx_add_user(f->c.db, name, 0, &f->hosts[i]);
	}
	*state = f;
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
static void wu_load(struct fx *f, int idx, int shard, struct wu *w)
{
	struct ct_dfx_wu row;

	memset(w, 0, sizeof(*w));
	ct_dfx_wu_row(f->c.db, f->jobid, idx, shard, &row);
	w->id = row.id;
	memcpy(w->model_sha, row.model_sha, sizeof(w->model_sha));
	w->seed = row.seed;
	row.hp.lora = SPEC;
	row.hp.lora_seed = w->seed;
	w->n = ct_lora_nparams(&CFG, &SPEC);
	w->honest = ct_dfx_wu_run(&f->c.srv, &row, &row.hp, &w->base, w->n);
}

static int64_t send_to(struct fx *f, const struct wu *w, int h)
{
	return ct_dfx_send(f->c.db, w->id, f->hosts[h], f->users[h]);
}

/* Upload `file` as result rid and report it (what the scheduler records). */
static void report_file(struct fx *f, const struct wu *w, int64_t rid,
			const struct ct_buf *file, int conforming)
{
	int64_t now = ct_db_now(f->c.db);

	ct_dfx_upload(&f->c.srv, f->c.db, rid, file->data, file->len, NULL);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, upload_time=?, upload_size=?, conforming=? "
				    "WHERE id=?", CT_RS_OVER, CT_RO_SUCCESS, now, now,
				    (int64_t)file->len, conforming, rid), 1);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    now, w->id), 1);
}

/* The client's upload of adapters ad (as cl_lora.c encodes them). */
static void report(struct fx *f, const struct wu *w, int64_t rid, const float *ad, int conforming)
{
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];

	assert_int_equal(ct_hex_decode(w->model_sha, base_sha, 32), 0);
	assert_int_equal(ct_lora_result_encode(&CFG, &SPEC, w->seed, base_sha, ad, f->encoding,
					       &out), 0);
	report_file(f, w, rid, &out, conforming);
	ct_buf_free(&out);
}

static const char *errmsg(struct fx *f, int64_t rid)
{
	static char buf[256];
	struct ct_db_res *r = NULL;

	assert_int_equal(CT_DB_QUERY(f->c.db, &r, "SELECT error_message FROM result WHERE id=?",
				     rid), 0);
	assert_int_equal(ct_db_next(r), 1);
	snprintf(buf, sizeof(buf), "%s", ct_db_str(r, 0));
	ct_db_res_free(r);
	return buf;
}

/* ---- the scenario -------------------------------------------------------- */

/* The LoRA job of these tests: 2 shards x 2 rounds, rank 2 on every
 * target (the default). */
static void lora_spec(struct fx *f, struct ct_job_spec *spec)
{
	*spec = (struct ct_job_spec){
		.name = "lora job", .shards = 2, .rounds = 2, .steps = 4, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 2, .max_total_results = 12,
		.max_error_results = 10, .tolerance = 1e-3, .loss_margin = 0.5, .adaptive = 0,
		.model_path = f->c.model, .train_path = f->c.train, .eval_path = f->c.eval,
		.lora = { .rank = 2, .alpha = 4.0f },	/* targets: default, all */
	};
}

static void submit_lora(struct fx *f)
{
	struct ct_job_spec spec;

	lora_spec(f, &spec);
	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &spec, &f->jobid), 0);
}

static void test_submit_lora_job(void **state)
{
	struct fx *f = *state;
	struct ct_job_spec spec, bad;
	struct ct_lora_spec got;
	struct wu R1[2];
	int64_t id = 0, model_size;

	lora_spec(f, &spec);
	bad = spec;
	/* refused before anything is stored */
	bad.lora.rank = 0;
	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &bad, &id), CT_EINVAL);
	bad.lora = (struct ct_lora_spec){ .rank = 2, .alpha = -1.0f };
	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &bad, &id), CT_EINVAL);
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT COUNT(*) FROM job WHERE id>?", 0), 0);

	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &spec, &f->jobid), 0);
	assert_int_equal(ct_lora_job_get(f->c.db, f->jobid, &got), 0);
	assert_int_equal(got.rank, SPEC.rank);
	assert_true(got.alpha == SPEC.alpha);
	assert_int_equal(got.targets, CT_LORA_ALL);
	/* uploads capped at adapter size, far below the model's */
	model_size = ct_dfx_qint(f->c.db, "SELECT model_size FROM job WHERE id=?", f->jobid);
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT max_upload_bytes FROM job WHERE id=?", f->jobid),
			 ct_lora_max_upload(&CFG, &SPEC));
	assert_true(ct_lora_max_upload(&CFG, &SPEC) - (64 << 10) < model_size / 4);
	/* what the scheduler puts into such a WU (doc/protocol.md); nothing
	 * for a job without LoRA */
	{
		struct ct_buf x = CT_BUF_INIT(0);
		char sha[65];
		int64_t size;

		assert_int_equal(ct_lora_wu_xml(&x, f->c.db, f->jobid, 1, sha, &size), 0);
		assert_string_equal(sha, "");	/* a float32 job names no lora_init */
		assert_non_null(strstr((const char *)x.data, "<lora_rank>2</lora_rank>"));
		assert_non_null(strstr((const char *)x.data, "<lora_alpha>4</lora_alpha>"));
		assert_non_null(strstr((const char *)x.data, "<lora_targets>qkv,proj,fc,fcproj</lora_targets>"));
		ct_buf_reset(&x);
		assert_int_equal(ct_lora_wu_xml(&x, f->c.db, f->jobid + 100, 1, sha, &size), 0);
		assert_int_equal(x.len, 0);
		ct_buf_free(&x);
	}
	wu_load(f, 1, 0, &R1[0]);
	wu_load(f, 1, 1, &R1[1]);
	/* a round's shards start from the same adapters (one seed per round:
	 * their adapter updates compare, lora_robust.h) */
	assert_true(R1[0].seed == R1[1].seed);
	wu_free(&R1[0]);
	wu_free(&R1[1]);
}

static void test_honest_pair(void **state)
{
	struct fx *f = *state;
	struct wu R1[1], *w = &R1[0];
	int64_t a, b;
	double credit1, full;

	submit_lora(f);
	wu_load(f, 1, 0, w);
	a = send_to(f, w, 0);
	b = send_to(f, w, 1);
	report(f, w, a, w->honest, 1);
	report(f, w, b, w->honest, 1);
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	assert_int_equal(ct_dfx_vstate(f->c.db, a), CT_VS_VALID);
	assert_int_equal(ct_dfx_vstate(f->c.db, b), CT_VS_VALID);
	assert_true(ct_dfx_qdouble(f->c.db, "SELECT probe_loss FROM result WHERE id=?", a) > 0.0);
	credit1 = ct_credit_from_flops(ct_lora_wu_flops(&CFG, &SPEC, 8, 2, 4));
	full = ct_credit_from_flops(ct_credit_wu_flops(&CFG, 8, 2, 4));
	assert_true(credit1 > 0.0 && credit1 < full);
	assert_true(fabs(ct_dfx_qdouble(f->c.db, "SELECT granted_credit FROM result WHERE id=?",
					a) - credit1) < 1e-12);
	/* doc/credit.md's worked example: GPT-2 124M, rank 8 on all four
	 * targets, 10 steps of 4 x 1024 tokens */
	{
		const struct ct_model_config g = { .maxT = 1024, .V = 50257, .L = 12, .NH = 12,
						  .C = 768, .Vp = 50304 };
		const struct ct_lora_spec r8 = { .rank = 8, .alpha = 8.0f,
						 .targets = CT_LORA_ALL };

		assert_true(fabs(ct_lora_wu_flops(&g, &r8, 1024, 4, 10) -
				 40960.0 * 558028800.0) < 1.0);
		assert_true(fabs(ct_credit_from_flops(ct_lora_wu_flops(&g, &r8, 1024, 4, 10)) -
				 52.909397) < 1e-5);
	}
	wu_free(w);
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
static void report_foreign(struct fx *f, const struct wu *w, int64_t rid, const char *what)
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
			x[i] = (float)(urand(f) - 0.5) * 0.01f;
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
	report_file(f, w, rid, &out, 0);
	free(x);
	ct_buf_free(&out);
}

static void test_bad_results_rejected(void **state)
{
	static const struct { const char *what, *reason; } bad[] = {
		{ "zero", "no_update" }, { "nan", "nonfinite" }, { "huge", "update_too_large" },
		{ "rank", "wrong_shape" }, { "seed", "wrong_shape" }, { "full", "wrong_shape" },
	};
	struct fx *f = *state;
	struct wu wu, *w = &wu;
	float *init, *v;
	int64_t honest, rid, nudge, third;

	submit_lora(f);
	wu_load(f, 1, 1, w);
	init = malloc(w->n * sizeof(float));
	assert_int_equal(ct_lora_init(&CFG, &SPEC, w->seed, init), 0);
	honest = send_to(f, w, 1);
	report(f, w, honest, w->honest, 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		rid = send_to(f, w, 2);
		if (strcmp(bad[k].what, "rank") == 0 || strcmp(bad[k].what, "seed") == 0 ||
		    strcmp(bad[k].what, "full") == 0) {
			report_foreign(f, w, rid, bad[k].what);
		} else {
			v = variant(w, init, bad[k].what);
			report(f, w, rid, v, 0);
			free(v);
		}
		ct_dfx_run_daemons(&f->c.srv, f->c.db);
		assert_int_equal(ct_dfx_vstate(f->c.db, rid), CT_VS_INVALID);
		assert_non_null(strstr(errmsg(f, rid), bad[k].reason));
		assert_int_equal(ct_dfx_qint(f->c.db, "SELECT COUNT(*) FROM credit_event WHERE "
					     "resultid=?", rid), 0);
		assert_int_equal(ct_dfx_vstate(f->c.db, honest), CT_VS_INCONCLUSIVE);
	}
	/* a nudged update passes every check alone but disagrees */
	nudge = send_to(f, w, 3);
	v = variant(w, init, "nudge");
	report(f, w, nudge, v, 0);
	free(v);
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	assert_int_equal(ct_dfx_vstate(f->c.db, nudge), CT_VS_INCONCLUSIVE);
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT canonical_resultid FROM workunit WHERE id=?",
				     w->id), 0);
	third = send_to(f, w, 0);
	report(f, w, third, w->honest, 0);
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	assert_int_equal(ct_dfx_vstate(f->c.db, honest), CT_VS_VALID);
	assert_int_equal(ct_dfx_vstate(f->c.db, third), CT_VS_VALID);
	assert_int_equal(ct_dfx_vstate(f->c.db, nudge), CT_VS_INVALID);
	free(init);
	wu_free(w);
}

/* The round's model from the canonical adapters, recomputed here. */
static void check_round_model(struct fx *f, int idx, const struct wu *ws, const char *base_sha)
{
	const float *ads[2] = { ws[0].honest, ws[1].honest };
	struct ct_gpt2 base = { 0 }, got = { 0 };
	struct ct_db_res *res = NULL;
	char sha[65], path[4200];

	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT status, out_model_sha256, model_sha256 "
				     "FROM `round` WHERE jobid=? AND idx=?", f->jobid, idx), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_ROUND_DONE);
	snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 1));
	assert_string_equal(ct_db_str(res, 2), base_sha);
	ct_db_res_free(res);
	assert_int_equal(ct_server_download_path(&f->c.srv, base_sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &base), 0);
	assert_int_equal(ct_lora_merge(&CFG, &SPEC, base.params, ads, 2), 0);
	assert_int_equal(ct_server_download_path(&f->c.srv, sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &got), 0);
	assert_memory_equal(got.params, base.params, base.lay.total * sizeof(float));
	ct_gpt2_free(&base);
	ct_gpt2_free(&got);
}

static void test_rounds_merge_exactly(void **state)
{
	struct fx *f = *state;
	struct wu R1[2], R2[2];
	struct ct_db_res *res = NULL;
	char out1[65], job_model[65];

	/* round 1: both WUs returned honestly by two hosts each */
	submit_lora(f);
	for (int k = 0; k < 2; k++) {
		int64_t a, b;

		wu_load(f, 1, k, &R1[k]);
		a = send_to(f, &R1[k], 0);
		b = send_to(f, &R1[k], 1 + k);
		report(f, &R1[k], a, R1[k].honest, 1);
		report(f, &R1[k], b, R1[k].honest, 1);
	}
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT j.model_sha256, r.out_model_sha256 FROM "
				     "job j JOIN `round` r ON r.jobid = j.id AND r.idx = 1 WHERE "
				     "j.id=?", f->jobid), 0);
	assert_int_equal(ct_db_next(res), 1);
	snprintf(job_model, sizeof(job_model), "%s", ct_db_str(res, 0));
	snprintf(out1, sizeof(out1), "%s", ct_db_str(res, 1));
	ct_db_res_free(res);
	check_round_model(f, 1, R1, job_model);
	/* round 2: fresh adapters (new seeds) on round 1's model */
	wu_load(f, 2, 0, &R2[0]);
	wu_load(f, 2, 1, &R2[1]);
	assert_string_equal(R2[0].model_sha, out1);
	assert_true(R2[0].seed != R1[0].seed && R2[1].seed != R1[1].seed);
	for (int k = 0; k < 2; k++) {
		int64_t a = send_to(f, &R2[k], 0), b = send_to(f, &R2[k], 1 + k);

		report(f, &R2[k], a, R2[k].honest, 1);
		report(f, &R2[k], b, R2[k].honest, 1);
	}
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	check_round_model(f, 2, R2, out1);
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT status FROM job WHERE id=?", f->jobid), CT_JOB_DONE);
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT COUNT(*) FROM job j JOIN `round` r ON "
				     "r.jobid = j.id AND r.idx = 2 WHERE j.id=? AND "
				     "j.final_model_sha256 = r.out_model_sha256", f->jobid), 1);
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
	struct fx *f = *state;
	struct ct_job_spec spec = {
		.name = "lora int8", .shards = 1, .rounds = 1, .steps = 4, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 3, .tolerance = 1e-3, .loss_margin = 0.5,
		.adaptive = 0, .model_path = f->c.model, .train_path = f->c.train, .eval_path = f->c.eval,
		.upload_encoding = "int8", .lora = SPEC,
	};
	struct wu w;
	float *init, *near, *nudge;
	int64_t a, b, c;

	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &spec, &f->jobid), 0);
	f->encoding = CT_DELTA_INT8;
	wu_load(f, 1, 0, &w);
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
	a = send_to(f, &w, 0);
	b = send_to(f, &w, 1);
	c = send_to(f, &w, 2);
	report(f, &w, a, w.honest, 0);
	report(f, &w, b, near, 0);
	report(f, &w, c, nudge, 0);
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
	assert_int_equal(ct_dfx_vstate(f->c.db, a), CT_VS_VALID);
	assert_int_equal(ct_dfx_vstate(f->c.db, b), CT_VS_VALID);
	assert_int_equal(ct_dfx_vstate(f->c.db, c), CT_VS_INVALID);
	/* a and b decoded differently (not a hash match); ~2% x sqrt(1/97) of
	 * the update apart, over the 1e-3 tolerance without the int8 bound */
	assert_true(ct_dfx_qdouble(f->c.db, "SELECT update_norm FROM result WHERE id=?", a) !=
		    ct_dfx_qdouble(f->c.db, "SELECT update_norm FROM result WHERE id=?", b));
	assert_int_equal(ct_dfx_qint(f->c.db, "SELECT status FROM job WHERE id=?", f->jobid), CT_JOB_DONE);
	free(init), free(near), free(nudge);
	wu_free(&w);
}

/* Each case on its own fixture; `test_lora_round PATTERN` runs the cases
 * whose names match (cmocka's filter: * and ?). */
CT_DFX_MAIN("test_lora_round", setup, test_submit_lora_job, test_honest_pair,
	test_bad_results_rejected, test_rounds_merge_exactly, test_int8_adapters)
