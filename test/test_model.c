/*
 * test_model.c - the C reference model and the work-unit runner.
 *
 *  - the blocked matmul equals the plain loops of the spec, bit for bit,
 *    on awkward sizes;
 *  - gradients of the reference agree with finite differences of an
 *    independent double-precision GPT-2 forward written here;
 *  - the loss falls when training on a repetitive token stream;
 *  - a work unit run twice gives identical bytes, and one saved and
 *    resumed after any step gives the same bytes as an uninterrupted run;
 *  - resume refuses other inputs or a corrupted state; bad hyperparameters
 *    and vocabularies are rejected; eval is the mean of batch losses.
 */
#include "ct_test_engine.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_math.h"

#include <math.h>

static const struct ct_model_config tiny = CT_TEST_TINY_CONFIG;

/* ---- matmul: blocked == plain -------------------------------------- */

/* Blocked (and, for big sizes, threaded) matmul == the plain loops of the
 * spec, bit for bit, forward and backward. */
static void check_matmul(int BT, int C, int OC)
{
	float *inp = malloc(sizeof(float) * BT * C), *w = malloc(sizeof(float) * OC * C);
	float *bias = malloc(sizeof(float) * OC), *out = malloc(sizeof(float) * BT * OC);
	float *dout = malloc(sizeof(float) * BT * OC), *dinp = malloc(sizeof(float) * BT * C);
	float *dw = malloc(sizeof(float) * OC * C), *db = malloc(sizeof(float) * OC);
	float *dinp0 = malloc(sizeof(float) * BT * C), *dw0 = malloc(sizeof(float) * OC * C);
	float *db0 = malloc(sizeof(float) * OC);

	ct_test_fill(inp, (size_t)BT * C, 1, 1.0f);
	ct_test_fill(w, (size_t)OC * C, 2, 1.0f);
	ct_test_fill(bias, OC, 3, 1.0f);
	ct_test_fill(dout, (size_t)BT * OC, 4, 1.0f);
	ct_test_fill(dinp0, (size_t)BT * C, 5, 1.0f);
	ct_test_fill(dw0, (size_t)OC * C, 6, 1.0f);
	ct_test_fill(db0, OC, 7, 1.0f);
	ct_matmul_forward(out, inp, w, bias, BT, C, OC);
	for (int r = 0; r < BT; r++)
		for (int o = 0; o < OC; o++)
			assert_true(out[r * OC + o] ==
				    ct_test_fma_dot(bias[o], &inp[r * C], 1, &w[o * C], 1, C));
	memcpy(dinp, dinp0, sizeof(float) * BT * C);
	memcpy(dw, dw0, sizeof(float) * OC * C);
	memcpy(db, db0, sizeof(float) * OC);
	ct_matmul_backward(dinp, dw, db, dout, inp, w, BT, C, OC);
	for (int r = 0; r < BT; r++)
		for (int i = 0; i < C; i++)
			assert_true(dinp[r * C + i] ==
				    dinp0[r * C + i] + ct_test_fma_dot(0.0f, &dout[r * OC], 1, &w[i], C, OC));
	for (int o = 0; o < OC; o++) {
		float ab = 0.0f;

		for (int i = 0; i < C; i++)
			assert_true(dw[o * C + i] ==
				    dw0[o * C + i] + ct_test_fma_dot(0.0f, &dout[o], OC, &inp[i], C, BT));
		for (int r = 0; r < BT; r++)
			ab = ab + dout[r * OC + o];
		assert_true(db[o] == db0[o] + ab);
	}
	free(inp); free(w); free(bias); free(out); free(dout); free(dinp);
	free(dw); free(db); free(dinp0); free(dw0); free(db0);
}

static void test_matmul_matches_spec(void **state)
{
	(void)state;
	check_matmul(7, 13, 67);	/* edge tiles only */
	check_matmul(37, 130, 1001);	/* big enough for the threaded path */
	check_matmul(8, 64, 128);	/* full tiles */
	check_matmul(9, 130, 1500);	/* dinp over K = 1500: B packed (gemm_packs) */
}

/* ---- an independent double-precision GPT-2 forward ----------------- */

struct dmodel {
	const struct ct_model_config *c;
	const struct ct_gpt2_layout *lay;
	const double *p;
};

static void d_layernorm(double *out, const double *x, const double *w,
			const double *b, int C)
{
	double mu = 0, var = 0;

	for (int i = 0; i < C; i++)
		mu += x[i];
	mu /= C;
	for (int i = 0; i < C; i++)
		var += (x[i] - mu) * (x[i] - mu);
	var /= C;
	for (int i = 0; i < C; i++)
		out[i] = (x[i] - mu) / sqrt(var + 1e-5) * w[i] + b[i];
}

static void d_linear(double *out, const double *x, const double *w,
		     const double *b, int C, int OC)
{
	for (int o = 0; o < OC; o++) {
		double acc = b ? b[o] : 0;

		for (int i = 0; i < C; i++)
			acc += x[i] * w[(size_t)o * C + i];
		out[o] = acc;
	}
}

/* One block on a sequence x (T,C), in place. */
static void d_block(const struct dmodel *m, int l, double *x, int T)
{
	const int C = m->c->C, NH = m->c->NH, hs = C / NH;
	const double *P = m->p;
	const size_t *o = m->lay->offset;
	double *ln = malloc(sizeof(double) * T * C), *qkv = malloc(sizeof(double) * T * 3 * C);
	double *y = calloc((size_t)T * C, sizeof(double)), *h = malloc(sizeof(double) * 4 * C);
	double *t2 = malloc(sizeof(double) * C);

	for (int t = 0; t < T; t++) {
		d_layernorm(ln + t * C, x + t * C, P + o[CT_LN1W] + l * C, P + o[CT_LN1B] + l * C, C);
		d_linear(qkv + t * 3 * C, ln + t * C, P + o[CT_QKVW] + (size_t)l * 3 * C * C,
			 P + o[CT_QKVB] + l * 3 * C, C, 3 * C);
	}
	for (int hh = 0; hh < NH; hh++)
		for (int t = 0; t < T; t++) {
			double s[64], mx = -1e300, sum = 0;

			for (int u = 0; u <= t; u++) {
				s[u] = 0;
				for (int i = 0; i < hs; i++)
					s[u] += qkv[t * 3 * C + hh * hs + i] * qkv[u * 3 * C + C + hh * hs + i];
				s[u] /= sqrt((double)hs);
				mx = s[u] > mx ? s[u] : mx;
			}
			for (int u = 0; u <= t; u++)
				sum += (s[u] = exp(s[u] - mx));
			for (int u = 0; u <= t; u++)
				for (int i = 0; i < hs; i++)
					y[t * C + hh * hs + i] += s[u] / sum * qkv[u * 3 * C + 2 * C + hh * hs + i];
		}
	for (int t = 0; t < T; t++) {
		d_linear(t2, y + t * C, P + o[CT_ATTPROJW] + (size_t)l * C * C,
			 P + o[CT_ATTPROJB] + l * C, C, C);
		for (int i = 0; i < C; i++)
			x[t * C + i] += t2[i];
		d_layernorm(ln + t * C, x + t * C, P + o[CT_LN2W] + l * C, P + o[CT_LN2B] + l * C, C);
		d_linear(h, ln + t * C, P + o[CT_FCW] + (size_t)l * 4 * C * C,
			 P + o[CT_FCB] + l * 4 * C, C, 4 * C);
		for (int i = 0; i < 4 * C; i++)
			h[i] = 0.5 * h[i] * (1 + tanh(sqrt(2 / M_PI) * (h[i] + 0.044715 * h[i] * h[i] * h[i])));
		d_linear(t2, h, P + o[CT_FCPROJW] + (size_t)l * 4 * C * C,
			 P + o[CT_FCPROJB] + l * C, 4 * C, C);
		for (int i = 0; i < C; i++)
			x[t * C + i] += t2[i];
	}
	free(ln); free(qkv); free(y); free(h); free(t2);
}

/* Mean cross-entropy over B sequences of T (inputs tok, targets tok+1). */
static double d_loss(const struct dmodel *m, const ct_tok *tok, int B, int T)
{
	const int C = m->c->C, V = m->c->V;
	const size_t *o = m->lay->offset;
	double *x = malloc(sizeof(double) * T * C), *lnf = malloc(sizeof(double) * C);
	double total = 0;

	for (int b = 0; b < B; b++) {
		const ct_tok *in = tok + b * T, *tg = tok + b * T + 1;

		for (int t = 0; t < T; t++)
			for (int i = 0; i < C; i++)
				x[t * C + i] = m->p[o[CT_WTE] + (size_t)in[t] * C + i] +
					       m->p[o[CT_WPE] + (size_t)t * C + i];
		for (int l = 0; l < m->c->L; l++)
			d_block(m, l, x, T);
		for (int t = 0; t < T; t++) {
			double mx = -1e300, sum = 0, z[128];

			d_layernorm(lnf, x + t * C, m->p + o[CT_LNFW], m->p + o[CT_LNFB], C);
			d_linear(z, lnf, m->p + o[CT_WTE], NULL, C, V);
			for (int v = 0; v < V; v++)
				mx = z[v] > mx ? z[v] : mx;
			for (int v = 0; v < V; v++)
				sum += exp(z[v] - mx);
			total += -(z[tg[t]] - mx - log(sum));
		}
	}
	free(x);
	free(lnf);
	return total / (B * T);
}

/* Analytic gradients of the float reference vs central differences of the
 * double model, on a sample of every tensor. The batch here is laid out as
 * llm.c's loader does: B rows of T inputs, targets shifted by one. */
static void test_gradients_vs_finite_differences(void **state)
{
	const int B = 2, T = 8;
	struct ct_model_config c = tiny;
	struct ct_gpt2_layout lay;
	struct ct_model m;
	ct_tok tok[2 * 8 + 1], in[16], tg[16];
	double *pd;
	struct dmodel dm;
	float loss;
	uint32_t seed = 99;
	double dl;

	(void)state;
	ct_gpt2_layout(&c, &lay);
	{
		float *p = malloc(lay.total * sizeof(float));

		assert_int_equal(ct_gpt2_init_random(&c, 5, p), 0);
		/* non-trivial layernorm parameters and biases */
		for (int t = CT_LN1W; t < CT_GPT2_NTENSORS; t++)
			if (t != CT_QKVW && t != CT_ATTPROJW && t != CT_FCW && t != CT_FCPROJW)
				for (size_t i = 0; i < lay.size[t]; i++)
					p[lay.offset[t] + i] += ((float)(ct_test_lcg(&seed) % 1000) / 1000.0f - 0.5f) * 0.2f;
		assert_int_equal(ct_model_init(&m, &c, p, B, T, 1), 0);
		free(p);
	}
	for (int i = 0; i < B * T + 1; i++)
		tok[i] = (ct_tok)(ct_test_lcg(&seed) % c.V);
	for (int i = 0; i < B * T; i++) {
		in[i] = tok[i];
		tg[i] = tok[i + 1];
	}
	ct_model_zero_grad(&m);
	loss = ct_model_forward(&m, in, tg);
	ct_model_backward(&m, in, tg);
	pd = malloc(lay.total * sizeof(double));
	for (size_t i = 0; i < lay.total; i++)
		pd[i] = m.params[i];
	dm = (struct dmodel){ .c = &c, .lay = &lay, .p = pd };
	/* The double model reads the batch as B rows whose targets are the
	 * next token of the same flat stream: that is exactly tok. */
	dl = d_loss(&dm, tok, B, T);
	printf("loss float %.7f double %.7f\n", (double)loss, dl);
	assert_true(fabs(loss - dl) < 1e-5);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		double worst = 0, gmax = 0;

		/* scale of this tensor's gradient, for a relative tolerance */
		for (size_t i = 0; i < lay.size[t]; i++)
			gmax = fmax(gmax, fabs(m.grads[lay.offset[t] + i]));
		assert_true(gmax > 0);
		for (int k = 0; k < 12; k++) {
			size_t i = lay.offset[t] + ct_test_lcg(&seed) % lay.size[t];
			double h = 1e-4, save = pd[i], fd, g = m.grads[i];

			if (t == CT_WPE)	/* positions >= T get no gradient */
				i = lay.offset[t] + ct_test_lcg(&seed) % ((size_t)T * c.C);
			if (t == CT_WTE && ct_test_lcg(&seed) % 2)	/* a token we use */
				i = lay.offset[t] + (size_t)tok[k] * c.C + ct_test_lcg(&seed) % c.C;
			save = pd[i];
			g = m.grads[i];
			pd[i] = save + h;
			fd = d_loss(&dm, tok, B, T);
			pd[i] = save - h;
			fd = (fd - d_loss(&dm, tok, B, T)) / (2 * h);
			pd[i] = save;
			if (fabs(g - fd) > worst)
				worst = fabs(g - fd);
			assert_true(fabs(g - fd) <= 1e-3 * gmax + 1e-3 * fabs(fd));
		}
		printf("%-9s max |grad| %.2e, max |analytic - numeric| = %.2e\n",
		       ct_gpt2_tensor_name(t), gmax, worst);
	}
	free(pd);
	ct_model_free(&m);
}

/* ---- work units ----------------------------------------------------- */

static void test_loss_decreases(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	float losses[40], *out;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 500, 10);
	ct_test_tiny_hparams(&hp, 40);
	hp.lr = 1e-2f;
	out = malloc(model.lay.total * sizeof(float));
	assert_int_equal(ct_wu_run(&model, &tok, &hp, "cpu", out, losses), 0);
	printf("loss: step 1 %.4f, step 20 %.4f, step 40 %.4f\n", (double)losses[0],
	       (double)losses[19], (double)losses[39]);
	assert_true(losses[0] > 3.5f);			/* ~ln(60) at init */
	assert_true(losses[39] < 0.5f * losses[0]);
	assert_true(losses[39] < losses[19]);
	free(out);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

static void test_wu_deterministic_and_resume(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	float *a, la[7];
	char path[4200];

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 150, 23);	/* 150 tokens: batches wrap */
	ct_test_tiny_hparams(&hp, 7);
	hp.grad_clip = 0.5f;
	a = malloc(model.lay.total * sizeof(float));
	ct_test_wu_twice(&model, &tok, &hp, model.lay.total, a, la);
	assert_memory_not_equal(a, model.params, model.lay.total * sizeof(float));
	snprintf(path, sizeof(path), "%s/wu.state", ct_test_dir);
	ct_test_wu_resume_each(&model, &tok, &hp, path, "a WU", ct_wu_read_params,
			       model.lay.total, a, la);
	free(a);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

static void test_resume_refuses_other_inputs(void **state)
{
	struct ct_gpt2 model = { 0 }, other = { 0 };
	struct ct_tokens tok = { 0 }, tok2 = { 0 };
	struct ct_wu_hparams hp, hp2;
	struct ct_wu *wu = NULL;
	char path[4200];
	unsigned char *data;
	size_t len;
	float loss;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 100, 11);
	ct_test_tiny_hparams(&hp, 3);
	snprintf(path, sizeof(path), "%s/r.state", ct_test_dir);
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), 0);
	assert_int_equal(ct_wu_step(wu, &loss), 0);
	assert_int_equal(ct_wu_save_state(wu, path), 0);
	ct_wu_close(wu);
	wu = NULL;

	hp2 = hp;
	hp2.lr = 1e-3f;
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp2, "cpu", &wu), CT_EMISMATCH);
	assert_null(wu);
	assert_int_equal(ct_gpt2_alloc(&other, &tiny), 0);
	memcpy(other.params, model.params, model.lay.total * sizeof(float));
	other.params[17] += 1.0f;
	assert_int_equal(ct_wu_resume(path, &other, &tok, &hp, "cpu", &wu), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "base model"));
	{
		ct_tok t2[100];

		memcpy(t2, tok.tok, sizeof(t2));
		t2[50] ^= 1;
		assert_int_equal(ct_tokens_from_array(&tok2, t2, 100), 0);
	}
	assert_int_equal(ct_wu_resume(path, &model, &tok2, &hp, "cpu", &wu), CT_EMISMATCH);
	assert_non_null(strstr(ct_errmsg(CT_EMISMATCH), "data"));
	/* corruption anywhere is caught by the checksum */
	assert_int_equal(ct_file_read_all(path, 0, &data, &len), 0);
	data[len / 2] ^= 0x40;
	assert_int_equal(ct_file_write_atomic(path, data, len, 0600), 0);
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp, "cpu", &wu), CT_ECORRUPT);
	assert_int_equal(ct_file_write_atomic(path, data, len / 3, 0600), 0);
	assert_int_equal(ct_wu_resume(path, &model, &tok, &hp, "cpu", &wu), CT_EFORMAT);
	assert_null(wu);
	free(data);
	ct_tokens_free(&tok);
	ct_tokens_free(&tok2);
	ct_gpt2_free(&model);
	ct_gpt2_free(&other);
}

static void test_bad_inputs(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_wu *wu = NULL;
	const struct ct_backend_ops *ops;

	(void)state;
	ct_test_tiny_inputs(&model, &tok, 40, 11);
	ct_test_tiny_hparams(&hp, 2);
	hp.T = 17;				/* > maxT */
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), CT_EINVAL);
	assert_non_null(strstr(ct_errmsg(CT_EINVAL), "max_seq_len"));
	hp.T = 16;
	hp.B = 3;				/* 3*16+1 > 40 tokens */
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), CT_ERANGE);
	hp.B = 2;
	hp.lr = NAN;
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), CT_ERANGE);
	hp.lr = 1e-3f;
	hp.beta2 = 1.0f;
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), CT_ERANGE);
	hp.beta2 = 0.999f;
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "gpu", &wu), CT_EINVAL);
	assert_int_equal(ct_backend_find("opencl:x", &ops), CT_EINVAL);
	assert_int_equal(ct_backend_find("cpu", &ops), 0);
	assert_string_equal(ops->name, "cpu");
	model.cfg.V = 50;			/* tokens reach 59 */
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), CT_EMISMATCH);
	assert_null(wu);
	model.cfg.V = tiny.V;
	assert_int_equal(ct_wu_open(&model, &tok, &hp, "cpu", &wu), 0);
	ct_wu_close(wu);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

static void test_batches_and_eval(void **state)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_model m;
	float mean, acc = 0.0f;

	(void)state;
	/* 100 tokens, B*T = 32: 3 batches per pass at 0, 32, 64, then wrap */
	assert_int_equal(ct_wu_batch_start(0, 100, 2, 16), 0);
	assert_int_equal(ct_wu_batch_start(2, 100, 2, 16), 64);
	assert_int_equal(ct_wu_batch_start(3, 100, 2, 16), 0);
	assert_int_equal(ct_wu_batch_start(4, 97, 2, 16), 32);	/* 97 = 3*32+1 */
	assert_int_equal(ct_wu_batch_start(3, 96, 2, 16), 32);	/* only 2 fit */
	ct_test_tiny_inputs(&model, &tok, 100, 13);
	assert_int_equal(ct_eval(&model, &tok, 2, 16, 0, "cpu", &mean), 0);
	assert_int_equal(ct_model_init(&m, &tiny, model.params, 2, 16, 0), 0);
	for (int i = 0; i < 3; i++)
		acc = acc + ct_model_forward(&m, tok.tok + 32 * i, tok.tok + 32 * i + 1);
	assert_true(mean == acc / 3.0f);
	ct_model_free(&m);
	assert_int_equal(ct_eval(&model, &tok, 2, 17, 1, "cpu", &mean), CT_EINVAL);
	assert_int_equal(ct_eval(&model, &tok, 7, 16, 1, "cpu", &mean), CT_ERANGE);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_matmul_matches_spec,
	test_gradients_vs_finite_differences, test_loss_decreases,
	test_wu_deterministic_and_resume, test_resume_refuses_other_inputs,
	test_bad_inputs, test_batches_and_eval)
