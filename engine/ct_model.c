/*
 * ct_model.c - GPT-2 forward, backward and AdamW step built from the
 * reference layers of ct_layers.c, for a fixed batch shape B x T.
 *
 * The order of the layers (and so of the gradient contributions) is the
 * specification: see ct_model.h and doc/workunit.md. Buffers: parameters,
 * gradients, m and v are nparams floats each; forward activations are kept
 * per layer (backward needs them); the backward pass reuses one layer's
 * worth of gradient scratch, zeroing each buffer just before the layer that
 * adds into it.
 */
#include "config.h"
#include "ct_model.h"
#include "ct_err.h"
#include "ct_model_ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Per-model views of the tensors of layer l: the weights (matrices as
 * ct_wmat, float32 or compact) or the gradients (all float32). */
struct layer_params {
	float *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb;
	float *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

struct layer_mats {
	struct ct_wmat qkvw, attprojw, fcw, fcprojw;
};

static void layer_params(const struct ct_gpt2_layout *lay, float *base, int l,
			 int C, struct layer_params *p)
{
	size_t C_ = (size_t)C;

	p->ln1w = base + lay->offset[CT_LN1W] + l * C_;
	p->ln1b = base + lay->offset[CT_LN1B] + l * C_;
	p->qkvw = base + lay->offset[CT_QKVW] + l * 3 * C_ * C_;
	p->qkvb = base + lay->offset[CT_QKVB] + l * 3 * C_;
	p->attprojw = base + lay->offset[CT_ATTPROJW] + l * C_ * C_;
	p->attprojb = base + lay->offset[CT_ATTPROJB] + l * C_;
	p->ln2w = base + lay->offset[CT_LN2W] + l * C_;
	p->ln2b = base + lay->offset[CT_LN2B] + l * C_;
	p->fcw = base + lay->offset[CT_FCW] + l * 4 * C_ * C_;
	p->fcb = base + lay->offset[CT_FCB] + l * 4 * C_;
	p->fcprojw = base + lay->offset[CT_FCPROJW] + l * 4 * C_ * C_;
	p->fcprojb = base + lay->offset[CT_FCPROJB] + l * C_;
}

/* The weights of layer l: vectors in p (float32), matrices in w. */
static void layer_weights(const struct ct_model *m, int l, struct layer_params *p,
			  struct layer_mats *w)
{
	size_t C_ = (size_t)m->cfg.C;

#define WV(t, n) ((float *)(uintptr_t)ct_model_wvec(m, t) + (size_t)l * (n))
	p->ln1w = WV(CT_LN1W, C_);
	p->ln1b = WV(CT_LN1B, C_);
	p->qkvb = WV(CT_QKVB, 3 * C_);
	p->attprojb = WV(CT_ATTPROJB, C_);
	p->ln2w = WV(CT_LN2W, C_);
	p->ln2b = WV(CT_LN2B, C_);
	p->fcb = WV(CT_FCB, 4 * C_);
	p->fcprojb = WV(CT_FCPROJB, C_);
#undef WV
	p->qkvw = p->attprojw = p->fcw = p->fcprojw = NULL;
	w->qkvw = ct_model_wmat(m, CT_QKVW, (size_t)l * 3 * C_ * C_);
	w->attprojw = ct_model_wmat(m, CT_ATTPROJW, (size_t)l * C_ * C_);
	w->fcw = ct_model_wmat(m, CT_FCW, (size_t)l * 4 * C_ * C_);
	w->fcprojw = ct_model_wmat(m, CT_FCPROJW, (size_t)l * 4 * C_ * C_);
}

const float *ct_model_wvec(const struct ct_model *m, int t)
{
	if (m->base != NULL)
		return (const float *)(const void *)(m->base + m->blay.off[t]);
	return m->params + m->lay.offset[t];
}

struct ct_wmat ct_model_wmat(const struct ct_model *m, int t, size_t e)
{
	struct ct_wmat w = { NULL, NULL, NULL, 0, 0 };
	int fmt = m->base != NULL ? ct_base_tensor_fmt(m->blay.fmt, t) : CT_BASE_F32;

	if (fmt == CT_BASE_BF16)
		w.h = (const uint16_t *)(const void *)(m->base + m->blay.off[t]) + e;
	else if (ct_base_blocked(fmt)) {
		w.q8 = m->base + m->blay.off[t];
		w.qe = e;
		w.qfmt = fmt;
	} else
		w.f = ct_model_wvec(m, t) + e;
	return w;
}

int ct_model_set_base(struct ct_model *m, int fmt, const unsigned char *img)
{
	if (m->grads != NULL || fmt == CT_BASE_F32 || fmt >= CT_BASE_NFMT)
		return ct_error(CT_EINVAL, "a compact base needs frozen weights and a compact format");
	free(m->params);
	m->params = NULL;
	ct_base_layout(&m->cfg, fmt, &m->blay);
	m->base = img;
	return 0;
}

/* Per-row widths of the activations that differ between the families
 * (their rows' dims): GPT-2's (3C qkv, 4C MLP, LayerNorm means) or
 * Llama's (grouped-query qkv, SwiGLU's 2F and F, no means, a RoPE table). */
struct act_dims {
	size_t qkv, fch, fch_gelu, mean, rope, att, qkn;
};

static void act_dims(const struct ct_model *m, struct act_dims *d)
{
	const struct ct_model_dims w = ct_model_dims(&m->cfg);

	d->qkv = (size_t)w.qkv;
	d->fch = (size_t)w.fc;
	d->fch_gelu = (size_t)w.hidden;
	d->mean = (size_t)w.norm_means;
	d->rope = w.rope ? (size_t)m->T * (size_t)w.head : 0;
	d->att = (size_t)w.att;
	d->qkn = (size_t)w.qk_norms;
}

/* Take n floats at base + off for field (left NULL when n is 0). */
#define TAKE(s, field, n) do { if (base && (n) > 0) (s)->field = base + off; off += (n); } \
	while (0)

/* Lay out the activations in one block; returns the float count (and
 * assigns pointers when base is not NULL). Which fields each architecture
 * uses: ct_llama_model.c. */
static size_t acts_layout(struct ct_model *m, float *base)
{
	const size_t L = (size_t)m->cfg.L, B = (size_t)m->B, T = (size_t)m->T;
	const size_t C = (size_t)m->cfg.C, NH = (size_t)m->cfg.NH, Vp = (size_t)m->cfg.Vp;
	const size_t BT = B * T;
	struct ct_acts *a = &m->acts;
	struct act_dims d;
	size_t off = 0;

	act_dims(m, &d);
	TAKE(a, encoded, BT * C);
	TAKE(a, ln1, L * BT * C);
	TAKE(a, ln1_mean, L * BT * d.mean);
	TAKE(a, ln1_rstd, L * BT);
	TAKE(a, qkv, L * BT * d.qkv);
	TAKE(a, atty, L * BT * d.att);
	TAKE(a, att, L * B * NH * T * 2);
	TAKE(a, attrow, T);
	TAKE(a, attproj, L * BT * C);
	TAKE(a, residual2, L * BT * C);
	TAKE(a, ln2, L * BT * C);
	TAKE(a, ln2_mean, L * BT * d.mean);
	TAKE(a, ln2_rstd, L * BT);
	TAKE(a, fch, L * BT * d.fch);
	TAKE(a, fch_gelu, L * BT * d.fch_gelu);
	TAKE(a, fcproj, L * BT * C);
	TAKE(a, residual3, L * BT * C);
	TAKE(a, lnf, BT * C);
	TAKE(a, lnf_mean, BT * d.mean);
	TAKE(a, lnf_rstd, BT);
	TAKE(a, logits, BT * Vp);
	TAKE(a, probs, BT * Vp);
	TAKE(a, losses, BT);
	TAKE(a, rope, d.rope);
	TAKE(a, qkvr, d.qkn ? L * BT * d.qkv : 0);
	TAKE(a, qkn_rstd, L * BT * d.qkn);
	return off;
}

/* The same for one layer's worth of gradient scratch. */
static size_t gacts_layout(struct ct_model *m, float *base)
{
	const size_t BT = (size_t)m->B * m->T, C = (size_t)m->cfg.C;
	struct ct_grad_acts *g = &m->gacts;
	struct act_dims d;
	size_t off = 0;

	act_dims(m, &d);
	TAKE(g, dlogits, BT * (size_t)m->cfg.Vp);
	TAKE(g, dresidual, BT * C);
	TAKE(g, dresidual_in, BT * C);
	TAKE(g, dresidual2, BT * C);
	TAKE(g, dln, BT * C);
	TAKE(g, datty, BT * d.att);
	TAKE(g, dattproj, BT * C);
	TAKE(g, dfcproj, BT * C);
	TAKE(g, dqkv, BT * d.qkv);
	TAKE(g, datt, ct_attention_scratch_floats(m->T, (int)d.att, m->cfg.NH));
	TAKE(g, dfch, BT * d.fch);
	TAKE(g, dfch_gelu, BT * d.fch_gelu);
	return off;
}
#undef TAKE

static float *alloc_floats(size_t n)
{
	if (n > SIZE_MAX / sizeof(float))
		return NULL;
	return calloc(n, sizeof(float));
}

int ct_model_init(struct ct_model *m, const struct ct_model_config *cfg,
		  const float *params, int B, int T, int training)
{
	int (*rope)(const struct ct_model_config *c, int T, float *tab);
	size_t n, na;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	if (B < 1 || T < 1 || T > cfg->maxT)
		return ct_error(CT_EINVAL, "batch %d x %d: need B >= 1 and 1 <= T <= maxT (%d)",
				B, T, cfg->maxT);
	m->cfg = *cfg;
	ct_gpt2_layout(cfg, &m->lay);
	m->B = B;
	m->T = T;
	n = m->lay.total;
	na = acts_layout(m, NULL);
	m->params = alloc_floats(n);
	m->mem = alloc_floats(na);
	if (m->params == NULL || m->mem == NULL)
		goto nomem;
	acts_layout(m, m->mem);
	rope = ct_model_ops_for(cfg)->rope_table;
	if (rope != NULL && rope(cfg, T, m->acts.rope) < 0)
		goto nomem;
	if (params != NULL)
		memcpy(m->params, params, n * sizeof(float));
	if (training == 1 || training == CT_MODEL_FROZEN) {
		size_t ng = gacts_layout(m, NULL);

		if (training == 1) {
			m->grads = alloc_floats(n);
			m->m = alloc_floats(n);
			m->v = alloc_floats(n);
			if (m->grads == NULL || m->m == NULL || m->v == NULL)
				goto nomem;
		}
		m->gmem = alloc_floats(ng);
		if (m->gmem == NULL)
			goto nomem;
		gacts_layout(m, m->gmem);
	}
	return 0;
nomem:
	ct_model_free(m);
	return ct_error(CT_ENOMEM, "out of memory for a model of %zu parameters at batch %d x %d",
			n, B, T);
}

size_t ct_model_act_floats(const struct ct_model_config *cfg, int B, int T, int training)
{
	struct ct_model m = { .cfg = *cfg, .B = B, .T = T };
	size_t n = acts_layout(&m, NULL);

	return training ? n + gacts_layout(&m, NULL) : n;
}

void ct_model_free(struct ct_model *m)
{
	if (m->lora_ops != NULL)
		m->lora_ops->detach(m);
	free(m->params);
	free(m->grads);
	free(m->m);
	free(m->v);
	free(m->mem);
	free(m->gmem);
	memset(m, 0, sizeof(*m));
}

/* The hooks of attached adapters (m->lora_ops), no-ops without. */
static void adapter_forward(struct ct_model *m, int l, enum ct_lora_target t, float *out,
			    const float *inp)
{
	if (m->lora_ops != NULL)
		m->lora_ops->forward(m, l, t, out, inp);
}

static void adapter_backward(struct ct_model *m, int l, enum ct_lora_target t, float *dinp,
			     const float *dout, const float *inp)
{
	if (m->lora_ops != NULL)
		m->lora_ops->backward(m, l, t, dinp, dout, inp);
}

/* Forward through block l, from `residual` (BT,C) into residual3[l]. */
static void block_forward(struct ct_model *m, int l, const float *residual)
{
	const int B = m->B, T = m->T, C = m->cfg.C, NH = m->cfg.NH, BT = B * T;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT;
	struct ct_acts *a = &m->acts;
	struct layer_params p;
	struct layer_mats w;

	layer_weights(m, l, &p, &w);
	ct_layernorm_forward(a->ln1 + lc, a->ln1_mean + lt, a->ln1_rstd + lt,
			     residual, p.ln1w, p.ln1b, BT, C);
	ct_matmul_forward_w(a->qkv + 3 * lc, a->ln1 + lc, w.qkvw, p.qkvb, BT, C, 3 * C);
	adapter_forward(m, l, CT_LORA_QKV, a->qkv + 3 * lc, a->ln1 + lc);
	ct_attention_forward_recompute(a->atty + lc, a->att + (size_t)l * B * NH * T * 2,
				       a->attrow, a->qkv + 3 * lc, B, T, C, NH);
	ct_matmul_forward_w(a->attproj + lc, a->atty + lc, w.attprojw, p.attprojb,
			  BT, C, C);
	adapter_forward(m, l, CT_LORA_ATTPROJ, a->attproj + lc, a->atty + lc);
	ct_residual_forward(a->residual2 + lc, residual, a->attproj + lc, (size_t)BT * C);
	ct_layernorm_forward(a->ln2 + lc, a->ln2_mean + lt, a->ln2_rstd + lt,
			     a->residual2 + lc, p.ln2w, p.ln2b, BT, C);
	ct_matmul_forward_w(a->fch + 4 * lc, a->ln2 + lc, w.fcw, p.fcb, BT, C, 4 * C);
	adapter_forward(m, l, CT_LORA_FC, a->fch + 4 * lc, a->ln2 + lc);
	ct_gelu_forward(a->fch_gelu + 4 * lc, a->fch + 4 * lc, (size_t)BT * 4 * C);
	ct_matmul_forward_w(a->fcproj + lc, a->fch_gelu + 4 * lc, w.fcprojw, p.fcprojb,
			  BT, 4 * C, C);
	adapter_forward(m, l, CT_LORA_FCPROJ, a->fcproj + lc, a->fch_gelu + 4 * lc);
	ct_residual_forward(a->residual3 + lc, a->residual2 + lc, a->fcproj + lc,
			    (size_t)BT * C);
}

float ct_model_forward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets)
{
	return ct_model_ops_for(&m->cfg)->forward(m, inputs, targets);
}

float ct_model_gpt2_forward(struct ct_model *m, const ct_tok *inputs,
			    const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T;
	struct ct_acts *a = &m->acts;
	const float *residual;

	ct_encoder_forward_w(a->encoded, inputs, ct_model_wmat(m, CT_WTE, 0),
			     ct_model_wmat(m, CT_WPE, 0), m->B, m->T, c->C);
	residual = ct_model_blocks_forward(m, block_forward);
	ct_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, residual,
			     ct_model_wvec(m, CT_LNFW), ct_model_wvec(m, CT_LNFB), BT, c->C);
	return ct_model_head_forward(m, CT_WTE, targets);
}

const float *ct_model_blocks_forward(struct ct_model *m, ct_model_block_fn *block)
{
	const float *residual = m->acts.encoded;

	for (int l = 0; l < m->cfg.L; l++) {
		block(m, l, residual);
		residual = m->acts.residual3 + (size_t)l * m->B * m->T * m->cfg.C;
	}
	return residual;
}

float ct_model_head_forward(struct ct_model *m, int head, const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T;
	struct ct_acts *a = &m->acts;

	ct_matmul_forward_w(a->logits, a->lnf, ct_model_wmat(m, head, 0), NULL, BT, c->C, c->Vp);
	ct_crossentropy_forward(a->losses, a->probs, a->logits, targets, BT,
				c->V, c->Vp);
	if (targets == NULL)
		return 0.0f;
	return ct_masked_mean_loss(a->losses, targets, BT);
}

void ct_model_zero_grad(struct ct_model *m)
{
	if (m->grads != NULL)
		memset(m->grads, 0, m->lay.total * sizeof(float));
}

static void zero(float *p, size_t n)
{
	memset(p, 0, n * sizeof(float));
}

/* Backward through block l. On entry g->dresidual holds the gradient of
 * residual3[l]; on exit g->dresidual_in holds that of the block's input
 * `residual` (the caller swaps the two). */
static void block_backward(struct ct_model *m, int l, const float *residual)
{
	const int B = m->B, T = m->T, C = m->cfg.C, NH = m->cfg.NH, BT = B * T;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT, n = (size_t)BT * C;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	struct layer_params p, d;
	struct layer_mats w;

	layer_weights(m, l, &p, &w);
	if (m->grads != NULL)
		layer_params(&m->lay, m->grads, l, C, &d);
	else			/* frozen weights (LoRA): no parameter gradients */
		memset(&d, 0, sizeof(d));
	zero(g->dresidual_in, n);
	zero(g->dresidual2, n);
	zero(g->dfcproj, n);
	ct_residual_backward(g->dresidual2, g->dfcproj, g->dresidual, n);
	zero(g->dfch_gelu, 4 * n);
	ct_matmul_backward_w(g->dfch_gelu, d.fcprojw, d.fcprojb, g->dfcproj,
			     a->fch_gelu + 4 * lc, w.fcprojw, BT, 4 * C, C);
	adapter_backward(m, l, CT_LORA_FCPROJ, g->dfch_gelu, g->dfcproj, a->fch_gelu + 4 * lc);
	zero(g->dfch, 4 * n);
	ct_gelu_backward(g->dfch, a->fch + 4 * lc, g->dfch_gelu, 4 * n);
	zero(g->dln, n);
	ct_matmul_backward_w(g->dln, d.fcw, d.fcb, g->dfch, a->ln2 + lc, w.fcw,
			   BT, C, 4 * C);
	adapter_backward(m, l, CT_LORA_FC, g->dln, g->dfch, a->ln2 + lc);
	ct_layernorm_backward(g->dresidual2, d.ln2w, d.ln2b, g->dln,
			      a->residual2 + lc, p.ln2w, a->ln2_mean + lt,
			      a->ln2_rstd + lt, BT, C);
	zero(g->dattproj, n);
	ct_residual_backward(g->dresidual_in, g->dattproj, g->dresidual2, n);
	zero(g->datty, n);
	ct_matmul_backward_w(g->datty, d.attprojw, d.attprojb, g->dattproj,
			     a->atty + lc, w.attprojw, BT, C, C);
	adapter_backward(m, l, CT_LORA_ATTPROJ, g->datty, g->dattproj, a->atty + lc);
	zero(g->dqkv, 3 * n);
	ct_attention_backward_recompute(g->dqkv, g->datt, g->datty, a->qkv + 3 * lc,
					a->att + (size_t)l * B * NH * T * 2, B, T, C, NH);
	zero(g->dln, n);
	ct_matmul_backward_w(g->dln, d.qkvw, d.qkvb, g->dqkv, a->ln1 + lc, w.qkvw,
			   BT, C, 3 * C);
	adapter_backward(m, l, CT_LORA_QKV, g->dln, g->dqkv, a->ln1 + lc);
	ct_layernorm_backward(g->dresidual_in, d.ln1w, d.ln1b, g->dln, residual,
			      p.ln1w, a->ln1_mean + lt, a->ln1_rstd + lt, BT, C);
}

void ct_model_backward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets)
{
	ct_model_ops_for(&m->cfg)->backward(m, inputs, targets);
}

void ct_model_gpt2_backward(struct ct_model *m, const ct_tok *inputs,
			    const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T;
	const size_t n = (size_t)BT * c->C;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	const struct ct_gpt2_layout *lay = &m->lay;
	float *const gr = m->grads;	/* NULL: frozen weights (LoRA) */

	ct_model_head_backward(m, CT_WTE, targets);
	ct_layernorm_backward(g->dresidual, gr ? gr + lay->offset[CT_LNFW] : NULL,
			      gr ? gr + lay->offset[CT_LNFB] : NULL, g->dln,
			      a->residual3 + (size_t)(c->L - 1) * n,
			      ct_model_wvec(m, CT_LNFW), a->lnf_mean,
			      a->lnf_rstd, BT, c->C);
	ct_model_blocks_backward(m, block_backward);
	if (gr == NULL)
		return;
	ct_encoder_backward(m->grads + lay->offset[CT_WTE],
			    m->grads + lay->offset[CT_WPE], g->dresidual, inputs,
			    m->B, m->T, c->C);
}

void ct_model_head_backward(struct ct_model *m, int head, const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T;
	const size_t n = (size_t)BT * c->C;
	struct ct_grad_acts *g = &m->gacts;
	float *const gr = m->grads;	/* NULL: frozen weights (LoRA) */

	ct_crossentropy_backward(g->dlogits, m->acts.probs, targets, BT, c->V, c->Vp);
	zero(g->dln, n);
	ct_matmul_backward_w(g->dln, gr ? gr + m->lay.offset[head] : NULL, NULL, g->dlogits,
			     m->acts.lnf, ct_model_wmat(m, head, 0), BT, c->C, c->Vp);
	zero(g->dresidual, n);
}

void ct_model_blocks_backward(struct ct_model *m, ct_model_block_fn *block)
{
	const size_t n = (size_t)m->B * m->T * m->cfg.C;
	struct ct_grad_acts *g = &m->gacts;

	for (int l = m->cfg.L - 1; l >= 0; l--) {
		const float *residual = l == 0 ? m->acts.encoded
					       : m->acts.residual3 + (size_t)(l - 1) * n;
		float *tmp;

		block(m, l, residual);
		tmp = g->dresidual;
		g->dresidual = g->dresidual_in;
		g->dresidual_in = tmp;
	}
}

int ct_model_step(struct ct_model *m, const ct_tok *inputs,
		  const ct_tok *targets, int t, float lr, float beta1,
		  float beta2, float eps, float weight_decay, float grad_clip,
		  float *loss)
{
	struct ct_adamw_args a = { .lr = lr, .beta1 = beta1, .beta2 = beta2,
				   .eps = eps, .weight_decay = weight_decay };

	ct_adamw_bias_corrections(beta1, beta2, t, &a.bc1, &a.bc2);
	if (m->lora != NULL)
		return m->lora_ops->step(m, inputs, targets, &a, grad_clip, loss);
	if (m->grads == NULL)
		return ct_error(CT_ESTATE, "model opened for evaluation cannot train");
	ct_model_zero_grad(m);
	*loss = ct_model_forward(m, inputs, targets);
	ct_model_backward(m, inputs, targets);
	if (grad_clip > 0.0f)
		ct_grad_clip(m->grads, m->lay.total, grad_clip);
	ct_adamw_update(m->params, m->grads, m->m, m->v, m->lay.total, &a);
	return 0;
}
