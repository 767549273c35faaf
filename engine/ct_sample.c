/*
 * ct_sample.c - text generation (see ct_sample.h): backend forward passes
 * for the logits, host-side fixed-order sampling for the choice.
 */
#include "config.h"
#include "ct_sample.h"
#include "ct_base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_math.h"

void ct_sample_params_default(struct ct_sample_params *p)
{
	p->ntokens = 64;
	p->temperature = 1.0f;
	p->top_k = 40;
	p->seed = 1;
	p->load = NULL;
	p->load_arg = NULL;
}

int ct_sample_params_check(const struct ct_sample_params *p, int V)
{
	if (p->ntokens < 0 || p->ntokens > CT_SAMPLE_MAX_TOKENS)
		return ct_error(CT_EINVAL, "tokens %d: want 0..%d", p->ntokens,
				CT_SAMPLE_MAX_TOKENS);
	if (!isfinite(p->temperature) || p->temperature < 0.0f)
		return ct_error(CT_EINVAL, "temperature %g: want a finite value >= 0",
				(double)p->temperature);
	if (p->top_k < 0 || p->top_k > V)
		return ct_error(CT_EINVAL, "top-k %d: want 0..%d (0 = all)", p->top_k, V);
	return 0;
}

void ct_sample_rng_seed(struct ct_sample_rng *r, uint64_t seed)
{
	r->state = seed;
}

float ct_sample_uniform(struct ct_sample_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z = z ^ (z >> 31);
	return (float)(z >> 40) * 0x1.0p-24f;
}

/* Order of the candidates: z descending, then index ascending (a total
 * order). better(z, i, j): i comes before j. */
static int better(const float *z, int i, int j)
{
	return z[i] > z[j] || (z[i] == z[j] && i < j);
}

/* Restore the heap below slot r: h[0..n) with the worst candidate (by
 * better()) at the root. */
static void sift_down(const float *z, int *h, int n, int r)
{
	for (;;) {
		int w = r, a = 2 * r + 1, b = a + 1, t;

		if (a < n && better(z, h[w], h[a]))
			w = a;
		if (b < n && better(z, h[w], h[b]))
			w = b;
		if (w == r)
			return;
		t = h[r];
		h[r] = h[w];
		h[w] = t;
		r = w;
	}
}

/* The top_k indices (a set, so any method gives the same answer): a heap
 * of the k best seen so far, O(V log k). h gets them in h[0..k). */
static void top_k_set(const float *z, int V, int k, int *h)
{
	for (int i = 0; i < k; i++)
		h[i] = i;
	for (int r = k / 2 - 1; r >= 0; r--)
		sift_down(z, h, k, r);
	for (int i = k; i < V; i++)
		if (better(z, i, h[0])) {
			h[0] = i;
			sift_down(z, h, k, 0);
		}
}

static int argmax(const float *x, int V)
{
	int best = 0;

	for (int i = 1; i < V; i++)
		if (x[i] > x[best] || (isnan(x[best]) && !isnan(x[i])))
			best = i;
	return best;
}

/* z = x / temperature (NaN -> -inf), candidates marked in ix[i]
 * (1 = candidate, 0 = not); returns the largest candidate z. */
static float candidates(const float *x, int V, float temperature, int top_k,
			float *z, int *ix)
{
	float mx;

	for (int i = 0; i < V; i++)
		z[i] = isnan(x[i]) ? -INFINITY : x[i] / temperature;
	if (top_k == 0 || top_k >= V) {
		mx = z[0];
		for (int i = 1; i < V; i++)
			mx = z[i] > mx ? z[i] : mx;
		for (int i = 0; i < V; i++)
			ix[i] = 1;
		return mx;
	}
	top_k_set(z, V, top_k, ix);
	mx = z[ix[0]];
	for (int r = 1; r < top_k; r++)
		mx = z[ix[r]] > mx ? z[ix[r]] : mx;
	for (int r = 0; r < top_k; r++)
		z[ix[r]] = NAN;		/* NaN marks a candidate (no z is NaN) */
	for (int i = 0; i < V; i++) {
		ix[i] = isnan(z[i]);
		if (ix[i])
			z[i] = isnan(x[i]) ? -INFINITY : x[i] / temperature;
	}
	return mx;
}

int ct_sample_pick(const float *x, int V, float temperature, int top_k, float u,
		   float *zscratch, int *iscratch)
{
	float *z = zscratch, mx, sum = 0.0f, r, acc = 0.0f;
	int *ix = iscratch, pick = -1, first = -1, rc;

	if (V < 1)
		return ct_error(CT_EINVAL, "sample: vocabulary %d", V);
	if (temperature == 0.0f)
		return argmax(x, V);
	if (z == NULL)
		z = malloc((size_t)V * sizeof(float));
	if (ix == NULL)
		ix = malloc((size_t)V * sizeof(int));
	if (z == NULL || ix == NULL) {
		rc = ct_error(CT_ENOMEM, "sample scratch");
		goto out;
	}
	mx = candidates(x, V, temperature, top_k, z, ix);
	for (int i = 0; i < V; i++) {
		z[i] = ix[i] ? ct_expf(z[i] - mx) : 0.0f;
		if (ix[i] && first < 0)
			first = i;
		sum = sum + z[i];
	}
	r = u * sum;
	for (int i = 0; i < V; i++) {
		if (!(z[i] > 0.0f))
			continue;
		acc = acc + z[i];
		pick = i;
		if (r < acc)
			break;
	}
	rc = pick >= 0 ? pick : (first >= 0 ? first : 0);
out:
	if (z != zscratch)
		free(z);
	if (ix != iscratch)
		free(ix);
	return rc;
}

/* ---- generation ----------------------------------------------------- */

struct gen {
	const struct ct_backend_ops *ops;
	struct ct_backend *be;
	int T, V;
	ct_tok *win;		/* T tokens: the context window, 0-padded */
	float *logits, *z;	/* V each */
	int *ix;		/* V */
};

static void gen_close(struct gen *g)
{
	if (g->ops != NULL && g->be != NULL)
		g->ops->close(g->be);
	free(g->win);
	free(g->logits);
	free(g->z);
	free(g->ix);
}

static int gen_open(struct gen *g, const struct ct_gpt2 *model, const char *device,
		    size_t total, const struct ct_sample_params *p)
{
	int rc;

	g->V = model->cfg.V;
	g->T = total < (size_t)model->cfg.maxT ? (int)total : model->cfg.maxT;
	rc = ct_backend_find(device, &g->ops);
	if (rc == 0)
		rc = ct_backend_supports(g->ops, &model->cfg);
	if (rc < 0)
		return rc;
	if (g->ops->logits == NULL)
		return ct_error(CT_EUNSUPP, "backend '%s' cannot return logits", g->ops->name);
	g->win = calloc((size_t)g->T, sizeof(ct_tok));
	g->logits = malloc((size_t)g->V * sizeof(float));
	g->z = malloc((size_t)g->V * sizeof(float));
	g->ix = malloc((size_t)g->V * sizeof(int));
	if (!g->win || !g->logits || !g->z || !g->ix)
		return ct_error(CT_ENOMEM, "sampler buffers");
	rc = g->ops->open(device, &model->cfg, 1, g->T, 0, &g->be);
	if (rc == 0 && p->load != NULL)
		rc = p->load(p->load_arg, g->ops, g->be);
	else if (rc == 0 && model->fmt != CT_BASE_F32)
		rc = ct_error(CT_EUNSUPP, "sampling reads float32 checkpoints (this one is a "
			      "compact base)");
	else if (rc == 0)
		rc = g->ops->load_state(g->be, model->params, NULL, NULL);
	return rc;
}

int ct_sample_generate(const struct ct_gpt2 *model, const char *device,
		       const ct_tok *prompt, size_t np,
		       const struct ct_sample_params *p,
		       int (*on_token)(void *arg, ct_tok id), void *arg,
		       struct ct_tokvec *out)
{
	struct gen g = { 0 };
	struct ct_sample_rng rng;
	ct_tok *ctx = NULL;
	size_t n = np;
	int rc;

	rc = ct_sample_params_check(p, model->cfg.V);
	if (rc < 0)
		return rc;
	if (np == 0 || np > (size_t)INT32_MAX)
		return ct_error(CT_EINVAL, "sample: the prompt must have 1..2^31-1 tokens");
	for (size_t i = 0; i < np; i++)
		if (prompt[i] >= (uint32_t)model->cfg.V)
			return ct_error(CT_EMISMATCH, "prompt token %u at %zu is outside the "
					"model's vocabulary (V = %d)", prompt[i], i,
					model->cfg.V);
	if (p->ntokens == 0)
		return 0;
	ctx = malloc((np + (size_t)p->ntokens) * sizeof(ct_tok));
	if (ctx == NULL)
		return ct_error(CT_ENOMEM, "sample context");
	memcpy(ctx, prompt, np * sizeof(ct_tok));	/* each < V, checked above */
	rc = gen_open(&g, model, device, np + (size_t)p->ntokens - 1, p);
	ct_sample_rng_seed(&rng, p->seed);
	for (int k = 0; rc == 0 && k < p->ntokens; k++) {
		size_t w = n < (size_t)g.T ? n : (size_t)g.T;
		int id;

		memcpy(g.win, ctx + (n - w), w * sizeof(ct_tok));
		rc = g.ops->logits(g.be, g.win, (int)w - 1, g.logits);
		if (rc < 0)
			break;
		id = ct_sample_pick(g.logits, g.V, p->temperature, p->top_k,
				    ct_sample_uniform(&rng), g.z, g.ix);
		if (id < 0) {
			rc = id;
			break;
		}
		ctx[n++] = (ct_tok)id;
		rc = ct_tokvec_push(out, (ct_tok)id);
		if (rc == 0 && on_token != NULL && on_token(arg, (ct_tok)id) != 0)
			break;
	}
	gen_close(&g);
	free(ctx);
	return rc;
}

int ct_sample_prompt(const struct ct_tokenizer *tk, const char *prompt, size_t n,
		     struct ct_tokvec *out)
{
	int eot = ct_tokenizer_eot(tk), rc;

	if (ct_tokenizer_has_template(tk)) {	/* as a training document starts */
		rc = ct_tokenizer_doc_open(tk, out);
		return rc == 0 && n > 0 ? ct_tokenizer_encode(tk, prompt, n, out) : rc;
	}
	if (n > 0)
		return ct_tokenizer_encode(tk, prompt, n, out);
	return ct_tokvec_push(out, (ct_tok)(eot >= 0 ? eot : '\n'));
}

int ct_sample_text(const struct ct_gpt2 *model, const struct ct_tokenizer *tk,
		   const char *device, const char *prompt, size_t n,
		   const struct ct_sample_params *p, struct ct_buf *text)
{
	struct ct_tokvec in = { 0 }, gen = { 0 };
	int rc;

	if (ct_tokenizer_vocab(tk) > model->cfg.V)
		return ct_error(CT_EMISMATCH, "tokenizer '%s' has %d tokens but the model's "
				"vocabulary is %d", ct_tokenizer_name(tk),
				ct_tokenizer_vocab(tk), model->cfg.V);
	rc = ct_sample_prompt(tk, prompt, n, &in);
	if (rc == 0)
		rc = ct_sample_generate(model, device, in.v, in.n, p, NULL, NULL, &gen);
	for (size_t i = 0; rc == 0 && i < gen.n; i++) {
		size_t len;
		const unsigned char *b = ct_tokenizer_token(tk, (int)gen.v[i], &len);

		/* an id with no text (a padded vocabulary's, a hole of a
		 * tokenizer.json) prints nothing */
		if (b != NULL)
			rc = ct_buf_append(text, b, len);
	}
	ct_tokvec_free(&in);
	ct_tokvec_free(&gen);
	return rc;
}
