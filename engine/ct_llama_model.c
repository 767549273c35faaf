/*
 * ct_llama_model.c - the Llama forward and backward pass of the C
 * reference (struct ct_model with cfg.arch == CT_ARCH_LLAMA; ct_model.c
 * dispatches here). The order of the layers, and so of the gradient
 * contributions, is the specification (ct_llama.h, doc/workunit.md).
 *
 * struct ct_acts fields used, per layer l where marked (L,...):
 *   encoded (BT,C)  ln1 (L,BT,C)  ln1_rstd (L,BT)  qkv (L,BT,QKV) rotated
 *   qkvr (L,BT,QKV), qkn_rstd (L,BT,NH+KVH) with q/k norms
 *   atty (L,BT,A)  att (L,B,NH,T,2)  attrow (T)  attproj (L,BT,C)
 *   residual2 (L,BT,C)  ln2 (L,BT,C)  ln2_rstd (L,BT)  fch (L,BT,2F)
 *   fch_gelu (L,BT,F) = SwiGLU output  fcproj (L,BT,C)  residual3 (L,BT,C)
 *   lnf (BT,C)  lnf_rstd (BT)  logits, probs (BT,Vp)  losses (BT)
 *   rope (T,hs) the RoPE table; the *_mean fields stay NULL.
 * struct ct_grad_acts: dqkv (BT,QKV), dfch (BT,2F), dfch_gelu (BT,F), the
 * others as GPT-2's.
 */
#include "config.h"
#include "ct_llama.h"
#include "ct_lora_model.h"
#include "ct_model.h"

#include <stdint.h>
#include <string.h>

struct lp {
	float *ln1w, *qkvw, *qkvb, *qkn, *attprojw, *ln2w, *fcw, *fcprojw;
};

/* Layer l's weight matrices as stored. */
struct lm {
	struct ct_wmat qkvw, attprojw, fcw, fcprojw;
};

static void lparams(const struct ct_model *m, float *base, int l, struct lp *p)
{
	const struct ct_gpt2_layout *lay = &m->lay;
	const size_t C = (size_t)m->cfg.C, F = (size_t)m->cfg.F;
	const size_t QKV = (size_t)ct_llama_qkv_dim(&m->cfg), A = (size_t)ct_llama_att_dim(&m->cfg);
	const size_t hd = (size_t)ct_llama_head_dim(&m->cfg);

	p->qkn = lay->size[CT_LN1B] ? base + lay->offset[CT_LN1B] + l * 2 * hd : NULL;
	p->ln1w = base + lay->offset[CT_LN1W] + l * C;
	p->qkvw = base + lay->offset[CT_QKVW] + l * QKV * C;
	p->qkvb = lay->size[CT_QKVB] ? base + lay->offset[CT_QKVB] + l * QKV : NULL;
	p->attprojw = base + lay->offset[CT_ATTPROJW] + l * C * A;
	p->ln2w = base + lay->offset[CT_LN2W] + l * C;
	p->fcw = base + lay->offset[CT_FCW] + l * 2 * F * C;
	p->fcprojw = base + lay->offset[CT_FCPROJW] + l * C * F;
}

/* Layer l's weights: vectors in p (float32), matrices in w. */
static void lweights(const struct ct_model *m, int l, struct lp *p, struct lm *w)
{
	const struct ct_gpt2_layout *lay = &m->lay;
	const size_t C = (size_t)m->cfg.C, F = (size_t)m->cfg.F;
	const size_t QKV = (size_t)ct_llama_qkv_dim(&m->cfg), A = (size_t)ct_llama_att_dim(&m->cfg);
	const size_t hd = (size_t)ct_llama_head_dim(&m->cfg);
#define WV(t) ((float *)(uintptr_t)ct_model_wvec(m, t))

	memset(p, 0, sizeof(*p));
	p->qkn = lay->size[CT_LN1B] ? WV(CT_LN1B) + l * 2 * hd : NULL;
	p->ln1w = WV(CT_LN1W) + l * C;
	p->qkvb = lay->size[CT_QKVB] ? WV(CT_QKVB) + l * QKV : NULL;
	p->ln2w = WV(CT_LN2W) + l * C;
#undef WV
	w->qkvw = ct_model_wmat(m, CT_QKVW, l * QKV * C);
	w->attprojw = ct_model_wmat(m, CT_ATTPROJW, l * C * A);
	w->fcw = ct_model_wmat(m, CT_FCW, l * 2 * F * C);
	w->fcprojw = ct_model_wmat(m, CT_FCPROJW, l * C * F);
}

static void block_forward(struct ct_model *m, int l, const float *residual)
{
	const struct ct_model_config *c = &m->cfg;
	const int B = m->B, T = m->T, C = c->C, BT = B * T, F = c->F;
	const int hs = ct_llama_head_dim(c), A = ct_llama_att_dim(c);
	const int QKV = ct_llama_qkv_dim(c);
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT, la = (size_t)l * BT * A;
	const float eps = (float)c->rms_eps;
	struct ct_acts *a = &m->acts;
	float *qkv = a->qkv + (size_t)l * BT * QKV, *fch = a->fch + 2 * (size_t)l * BT * F;
	float *sw = a->fch_gelu + (size_t)l * BT * F;
	float *raw = a->qkvr ? a->qkvr + (size_t)l * BT * QKV : qkv;
	struct lp p;
	struct lm w;

	lweights(m, l, &p, &w);
	ct_rmsnorm_forward(a->ln1 + lc, a->ln1_rstd + lt, residual, p.ln1w, BT, C, eps);
	ct_matmul_forward_w(raw, a->ln1 + lc, w.qkvw, p.qkvb, BT, C, QKV);
	ct_lora_forward(m, l, CT_LORA_QKV, raw, a->ln1 + lc);
	if (p.qkn != NULL)
		ct_qknorm_forward(qkv, a->qkn_rstd + lt * (size_t)(c->NH + c->KVH), raw, p.qkn,
				  BT, c->NH, c->KVH, hs, eps);
	ct_rope_forward(qkv, a->rope, BT, T, c->NH, c->KVH, hs);
	ct_gqa_forward(a->atty + la, a->att + (size_t)l * B * c->NH * T * 2, a->attrow,
		       qkv, B, T, c->NH, c->KVH, hs);
	ct_matmul_forward_w(a->attproj + lc, a->atty + la, w.attprojw, NULL, BT, A, C);
	ct_lora_forward(m, l, CT_LORA_ATTPROJ, a->attproj + lc, a->atty + la);
	ct_residual_forward(a->residual2 + lc, residual, a->attproj + lc, (size_t)BT * C);
	ct_rmsnorm_forward(a->ln2 + lc, a->ln2_rstd + lt, a->residual2 + lc, p.ln2w, BT, C, eps);
	ct_matmul_forward_w(fch, a->ln2 + lc, w.fcw, NULL, BT, C, 2 * F);
	ct_lora_forward(m, l, CT_LORA_FC, fch, a->ln2 + lc);
	ct_swiglu_forward(sw, fch, BT, F);
	ct_matmul_forward_w(a->fcproj + lc, sw, w.fcprojw, NULL, BT, F, C);
	ct_lora_forward(m, l, CT_LORA_FCPROJ, a->fcproj + lc, sw);
	ct_residual_forward(a->residual3 + lc, a->residual2 + lc, a->fcproj + lc,
			    (size_t)BT * C);
}

/* The output matrix: lm_head, or the embedding when tied. */
static int head_tensor(const struct ct_model *m)
{
	return (m->cfg.flags & CT_LLAMA_TIED) ? CT_WTE : CT_WPE;
}

float ct_llama_forward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T, C = c->C;
	const struct ct_wmat wte = ct_model_wmat(m, CT_WTE, 0);
	struct ct_acts *a = &m->acts;
	const float *residual;

	for (int r = 0; r < BT; r++) {
		float *e = a->encoded + (size_t)r * C;

		if (wte.f != NULL) {
			memcpy(e, wte.f + (size_t)inputs[r] * C, (size_t)C * sizeof(float));
			continue;
		}
		for (int i = 0; i < C; i++)
			e[i] = ct_wmat_at(wte, (size_t)inputs[r] * C + i);
	}
	residual = ct_model_blocks_forward(m, block_forward);
	ct_rmsnorm_forward(a->lnf, a->lnf_rstd, residual, ct_model_wvec(m, CT_LNFW),
			   BT, C, (float)c->rms_eps);
	return ct_model_head_forward(m, head_tensor(m), targets);
}

static void zero(float *p, size_t n)
{
	memset(p, 0, n * sizeof(float));
}

/* Backward through block l's MLP half: g->dresidual (gradient of
 * residual3) into g->dresidual2. */
static void mlp_backward(struct ct_model *m, int l, const struct lp *p, const struct lm *w,
			 const struct lp *d)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T, C = c->C, F = c->F;
	const size_t lc = (size_t)l * BT * C, n = (size_t)BT * C;
	const float *fch = m->acts.fch + 2 * (size_t)l * BT * F;
	const float *sw = m->acts.fch_gelu + (size_t)l * BT * F;
	struct ct_grad_acts *g = &m->gacts;

	zero(g->dresidual2, n);
	zero(g->dfcproj, n);
	ct_residual_backward(g->dresidual2, g->dfcproj, g->dresidual, n);
	zero(g->dfch_gelu, (size_t)BT * F);
	ct_matmul_backward_w(g->dfch_gelu, d->fcprojw, NULL, g->dfcproj, sw, w->fcprojw, BT, F, C);
	ct_lora_backward(m, l, CT_LORA_FCPROJ, g->dfch_gelu, g->dfcproj, sw);
	zero(g->dfch, (size_t)BT * 2 * F);
	ct_swiglu_backward(g->dfch, fch, g->dfch_gelu, BT, F);
	zero(g->dln, n);
	ct_matmul_backward_w(g->dln, d->fcw, NULL, g->dfch, m->acts.ln2 + lc, w->fcw, BT, C,
			     2 * F);
	ct_lora_backward(m, l, CT_LORA_FC, g->dln, g->dfch, m->acts.ln2 + lc);
	ct_rmsnorm_backward(g->dresidual2, d->ln2w, g->dln, m->acts.residual2 + lc, p->ln2w,
			    m->acts.ln2_rstd + (size_t)l * BT, BT, C);
}

/* Backward through block l: g->dresidual holds the gradient of
 * residual3[l]; on exit g->dresidual_in holds that of `residual`. */
static void block_backward(struct ct_model *m, int l, const float *residual)
{
	const struct ct_model_config *c = &m->cfg;
	const int B = m->B, T = m->T, C = c->C, BT = B * T;
	const int hs = ct_llama_head_dim(c), A = ct_llama_att_dim(c);
	const int QKV = ct_llama_qkv_dim(c);
	const size_t lc = (size_t)l * BT * C, n = (size_t)BT * C, la = (size_t)l * BT * A;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	struct lp p, d;
	struct lm w;

	lweights(m, l, &p, &w);
	if (m->grads != NULL)
		lparams(m, m->grads, l, &d);
	else
		memset(&d, 0, sizeof(d));
	zero(g->dresidual_in, n);
	mlp_backward(m, l, &p, &w, &d);
	zero(g->dattproj, n);
	ct_residual_backward(g->dresidual_in, g->dattproj, g->dresidual2, n);
	zero(g->datty, (size_t)BT * A);
	ct_matmul_backward_w(g->datty, d.attprojw, NULL, g->dattproj, a->atty + la, w.attprojw,
			   BT, A, C);
	ct_lora_backward(m, l, CT_LORA_ATTPROJ, g->datty, g->dattproj, a->atty + la);
	zero(g->dqkv, (size_t)BT * QKV);
	ct_gqa_backward(g->dqkv, g->datt, g->datty, a->qkv + (size_t)l * BT * QKV,
			a->att + (size_t)l * B * c->NH * T * 2, B, T, c->NH, c->KVH, hs);
	ct_rope_backward(g->dqkv, a->rope, BT, T, c->NH, c->KVH, hs);
	if (p.qkn != NULL)
		ct_qknorm_backward(g->dqkv, d.qkn, a->qkvr + (size_t)l * BT * QKV, p.qkn,
				   a->qkn_rstd + (size_t)l * BT * (c->NH + c->KVH), BT,
				   c->NH, c->KVH, hs);
	zero(g->dln, n);
	ct_matmul_backward_w(g->dln, d.qkvw, d.qkvb, g->dqkv, a->ln1 + lc, w.qkvw, BT, C, QKV);
	ct_lora_backward(m, l, CT_LORA_QKV, g->dln, g->dqkv, a->ln1 + lc);
	ct_rmsnorm_backward(g->dresidual_in, d.ln1w, g->dln, residual, p.ln1w,
			    a->ln1_rstd + (size_t)l * BT, BT, C);
}

void ct_llama_backward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets)
{
	const struct ct_model_config *c = &m->cfg;
	const int BT = m->B * m->T, C = c->C;
	const size_t n = (size_t)BT * C;
	struct ct_acts *a = &m->acts;
	struct ct_grad_acts *g = &m->gacts;
	float *const gr = m->grads;	/* NULL: frozen weights (LoRA) */

	ct_model_head_backward(m, head_tensor(m), targets);
	ct_rmsnorm_backward(g->dresidual, gr ? gr + m->lay.offset[CT_LNFW] : NULL, g->dln,
			    a->residual3 + (size_t)(c->L - 1) * n,
			    ct_model_wvec(m, CT_LNFW), a->lnf_rstd, BT, C);
	ct_model_blocks_backward(m, block_backward);
	if (gr == NULL)
		return;
	for (int r = 0; r < BT; r++) {
		float *dw = gr + m->lay.offset[CT_WTE] + (size_t)inputs[r] * C;
		const float *dy = g->dresidual + (size_t)r * C;

		for (int i = 0; i < C; i++)
			dw[i] = dw[i] + dy[i];
	}
}
