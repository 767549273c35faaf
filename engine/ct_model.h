/*
 * ct_model.h - the C reference of GPT-2 training: every layer as a
 * forward/backward pair, and the model's forward, backward and AdamW update
 * built from them. This is the executable specification of crowdtune's
 * arithmetic: the OpenCL kernels must reproduce each function below bit for
 * bit (doc/workunit.md writes the same thing out in prose).
 *
 * Rules that hold everywhere (the arithmetic contract):
 *  - float32 only; no FP contraction (-ffp-contract=off); a multiply-add is
 *    only fused where the text says fmaf(); sqrtf and / correctly rounded;
 *    exp/log/tanh are ct_expf/ct_logf/ct_tanhf (kernels/ct_math.clh).
 *  - Every reduction is one sequential fp32 chain in increasing index order:
 *    sums are `acc = acc + x`, dot products `acc = fmaf(a, b, acc)`, each
 *    starting from 0.0f unless stated.
 *  - Backward functions ADD into their outputs (`g = g + contribution`, one
 *    addition per contribution per element), and every gradient buffer,
 *    parameter or activation, is zeroed before the backward pass; the
 *    contributions arrive in ct_model_backward()'s order.
 *
 * Shapes: B batch, T sequence, C channels, NH heads, hs = C/NH, OC output
 * channels, V vocabulary, Vp padded vocabulary; BT = B*T. Arrays are
 * row-major; "(B,T,C)" means index (b*T + t)*C + c.
 *
 * Speed: the matmuls run on $CTUNE_THREADS threads (default: online CPUs),
 * split across output tiles, so the thread count never changes a result.
 *
 * LoRA (frozen weights, rank-r adapters on qkv, attproj, fc, fcproj): the
 * model opened with CT_MODEL_FROZEN and ct_lora_attach; every layer below
 * keeps its arithmetic, the parameter-gradient halves are skipped (NULL
 * dw), and the adapter terms are added after the target matmuls in the
 * order ct_lora_model.h states.
 *
 * ct_model_forward and ct_model_backward run the passes of the config's
 * family (its row of ct_model_ops.h): GPT-2's below (ct_model_gpt2_*), or
 * Llama's (ct_llama.h, engine/ct_llama_model.c) behind the same buffers
 * and LoRA hooks.
 *
 * Deviations from llm.c's train_gpt2.c (so other implementations know):
 * attention's softmax uses p = e/sum and the simplified softmax backward;
 * the loss gradient is (p - 1[i==target]) / BT (a division); layernorm's
 * and matmul's parameter gradients are accumulated per output element over
 * BT before one add; GELU's derivative uses 1 - tanh^2 for sech^2.
 */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ct_base.h"
#include "ct_gpt2.h"
#include "ct_lora.h"

#define CT_LN_EPS 1e-5f		/* layernorm epsilon */

/* ---- layers --------------------------------------------------------- */

/* out (B,T,C) = wte[inp[b,t]] + wpe[t]: out = wte[ix*C+c] + wpe[t*C+c].
 * inp (B,T) tokens < Vp; wte (Vp,C); wpe (maxT,C), T <= maxT. */
void ct_encoder_forward(float *out, const ct_tok *inp, const float *wte,
			const float *wpe, int B, int T, int C);

/* dwte (Vp,C), dwpe (maxT,C) += from dout (B,T,C). For each position in
 * increasing (b,t) order and each c:
 *   dwte[ix,c] = dwte[ix,c] + dout[b,t,c];  dwpe[t,c] = dwpe[t,c] + dout[b,t,c]
 * (added straight into the gradient, one position at a time: repeated
 * tokens accumulate in position order on top of what is already there). */
void ct_encoder_backward(float *dwte, float *dwpe, const float *dout,
			 const ct_tok *inp, int B, int T, int C);

/* A frozen weight matrix as stored (ct_base.h): float32 (f), bfloat16
 * (h) or q8 blocks (q8: its tensor's first block; the matrix starts at
 * element qe of the tensor), exactly one of f, h, q8 non-NULL. Element i
 * reads as f[i], ct_bf16_to_f32(h[i]) or ct_q8_at(q8, qe + i). */
struct ct_wmat {
	const float *f;
	const uint16_t *h;
	const unsigned char *q8;	/* q8 or nf4 blocks (qfmt) */
	size_t qe;
	int qfmt;
};

/* Element i of w, widened. */
static inline float ct_wmat_at(struct ct_wmat w, size_t i)
{
	if (w.f != NULL)
		return w.f[i];
	if (w.h != NULL)
		return ct_bf16_to_f32(w.h[i]);
	return ct_blk_at(w.qfmt, w.q8, w.qe + i);
}

/* ct_encoder_forward with wte and wpe as stored (each element widened). */
void ct_encoder_forward_w(float *out, const ct_tok *inp, struct ct_wmat wte,
			  struct ct_wmat wpe, int B, int T, int C);

/* Per row r of inp (BT,C):
 *   sum = sum_i x[i];  mu = sum / C
 *   ss = sum_i fmaf(d_i, d_i, ss) with d_i = x[i] - mu;  var = ss / C
 *   rs = 1.0f / sqrtf(var + CT_LN_EPS)
 *   out[i] = ((d_i * rs) * w[i]) + b[i]
 * out (BT,C); mean, rstd (BT) saved for backward; w, b (C). */
void ct_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
			  const float *w, const float *b, int BT, int C);

/* With n_i = (x[i] - mean[r]) * rstd[r] and dn_i = w[i] * dout[r,i]:
 *   dinp, per row r: s1 = sum_i (acc + dn_i); s2 = sum_i fmaf(dn_i, n_i, acc)
 *     m1 = s1 / C; m2 = s2 / C
 *     dv = dn_i - m1; dv = fmaf(-n_i, m2, dv); dv = dv * rstd[r]
 *     dinp[r,i] = dinp[r,i] + dv
 *   dw[i]: acc = fmaf(n_i(r), dout[r,i], acc) over r = 0..BT-1; dw[i] = dw[i] + acc
 *   db[i]: acc = acc + dout[r,i] over r;                        db[i] = db[i] + acc
 * dinp, dout, inp (BT,C); dw, db, w (C); mean, rstd (BT). dw and db NULL:
 * only dinp (frozen layernorm). */
void ct_layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
			   const float *inp, const float *w, const float *mean,
			   const float *rstd, int BT, int C);

/* out (BT,OC) = inp (BT,C) x w (OC,C)^T + bias (OC, or NULL):
 *   acc = bias ? bias[o] : 0.0f; for i = 0..C-1: acc = fmaf(inp[r,i], w[o,i], acc)
 *   out[r,o] = acc */
void ct_matmul_forward(float *out, const float *inp, const float *w,
		       const float *bias, int BT, int C, int OC);

/* ct_matmul_forward / ct_matmul_backward on a weight as stored: the same
 * chains, each w[o,i] widened to float32 (a bf16 w allows no dw: pass
 * dw NULL, as frozen weights do). */
void ct_matmul_forward_w(float *out, const float *inp, struct ct_wmat w,
			 const float *bias, int BT, int C, int OC);
void ct_matmul_backward_w(float *dinp, float *dw, float *dbias, const float *dout,
			  const float *inp, struct ct_wmat w, int BT, int C, int OC);

/* dinp (BT,C), dw (OC,C), dbias (OC or NULL) += from dout (BT,OC):
 *   dinp[r,i]: acc over o = 0..OC-1 of fmaf(dout[r,o], w[o,i], acc); dinp += acc
 *   dw[o,i]:   acc over r = 0..BT-1 of fmaf(dout[r,o], inp[r,i], acc); dw += acc
 *   dbias[o]:  acc over r of (acc + dout[r,o]);                        dbias += acc
 * dinp may be NULL (not needed); dw NULL skips dw (frozen weights). */
void ct_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout,
			const float *inp, const float *w, int BT, int C, int OC);

/* Causal multi-head self-attention. qkv (B,T,3C): q = qkv[b,t,0:C],
 * k = qkv[b,t,C:2C], v = qkv[b,t,2C:3C]; head h uses channels h*hs..+hs.
 * scale = 1.0f / sqrtf((float)hs). For each b, h, query t, keys t2 <= t:
 *   s[t2] = (acc over i<hs of fmaf(q[t,i], k[t2,i], acc)) * scale
 *   mx = s[0]; for t2 = 1..t: mx = s[t2] > mx ? s[t2] : mx
 *   e[t2] = ct_expf(s[t2] - mx); sum = sum_t2 (acc + e[t2])
 *   att[b,h,t,t2] = e[t2] / sum;  att[b,h,t,t2>t] = 0
 *   out[b,t,h*hs+i] = acc over t2 = 0..t of fmaf(att[t2], v[t2,i], acc)
 * out (B,T,C); att (B,NH,T,T) saved for backward. */
void ct_attention_forward(float *out, float *att, const float *qkv,
			  int B, int T, int C, int NH);

/* Backward of the above; dqkv (B,T,3C) +=; datt (B,NH,T,T) is scratch
 * (fully overwritten, rows t2 <= t). For each b, h:
 *   da[t,t2]  = acc over i of fmaf(dout[t,i], v[t2,i], acc)       (t2 <= t)
 *   dot[t]    = acc over t2 = 0..t of fmaf(att[t,t2], da[t,t2], acc)
 *   g[t,t2]   = (att[t,t2] * (da[t,t2] - dot[t])) * scale         (stored in datt)
 *   dq[t,i]   = acc over t2 = 0..t     of fmaf(g[t,t2], k[t2,i], acc)
 *   dk[t2,i]  = acc over t = t2..T-1   of fmaf(g[t,t2], q[t,i], acc)
 *   dv[t2,i]  = acc over t = t2..T-1   of fmaf(att[t,t2], dout[t,i], acc)
 *   each added once: dqkv[...] = dqkv[...] + acc. */
void ct_attention_backward(float *dqkv, float *datt, const float *dout,
			   const float *qkv, const float *att,
			   int B, int T, int C, int NH);

/* The same attention without the (B,NH,T,T) matrices (engine/ct_attention.c;
 * what the model runs). Every output is computed by exactly the chains
 * above, so out and dqkv are bit-identical to ct_attention_forward/backward;
 * only what is kept differs:
 *  - forward keeps, per row (b,h,t), stat[.,0] = mx and stat[.,1] = sum;
 *    stat (B,NH,T,2); row is scratch of T floats.
 *  - backward recomputes att[t,t2] = ct_expf(s[t2] - mx) / sum, with s[t2]
 *    the same fmaf chain times scale (hence the same bits), and da, dot, g
 *    as above; dq[t] is added once per row t; dk[t2], dv[t2] are chains over
 *    t = t2..T-1 in increasing t, added once after the last row. scratch
 *    holds ct_attention_scratch_floats(T, C, NH) floats. dqkv +=. */
size_t ct_attention_scratch_floats(int T, int C, int NH);
void ct_attention_forward_recompute(float *out, float *stat, float *row,
				    const float *qkv, int B, int T, int C, int NH);
void ct_attention_backward_recompute(float *dqkv, float *scratch, const float *dout,
				     const float *qkv, const float *stat,
				     int B, int T, int C, int NH);

/* out[i] = ct_gelu_forward_elem(inp[i]), n elements. */
void ct_gelu_forward(float *out, const float *inp, size_t n);

/* dinp[i] = dinp[i] + (ct_gelu_grad_elem(inp[i]) * dout[i]). */
void ct_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n);

/* out[i] = a[i] + b[i]. */
void ct_residual_forward(float *out, const float *a, const float *b, size_t n);

/* da[i] = da[i] + dout[i]; db[i] = db[i] + dout[i]. */
void ct_residual_backward(float *da, float *db, const float *dout, size_t n);

/* Softmax over the first V of Vp logits, and cross-entropy, per row r:
 *   mx = x[0]; for i = 1..V-1: mx = x[i] > mx ? x[i] : mx
 *   e_i = ct_expf(x[i] - mx); sum = sum_{i<V} (acc + e_i)
 *   probs[r,i] = e_i / sum (i < V), 0.0f (V <= i < Vp)
 *   losses[r] = -ct_logf(probs[r, CT_TOK_ID(targets[r])])
 * logits, probs (BT,Vp); targets, losses (BT); CT_TOK_ID(targets) < V.
 * A target may carry CT_TOK_UNTRAINED (ct_tok.h): its row's loss is
 * computed all the same, and left out by ct_masked_mean_loss and by
 * ct_crossentropy_backward. */
void ct_crossentropy_forward(float *losses, float *probs, const float *logits,
			     const ct_tok *targets, int BT, int V, int Vp);

/* Mean loss of a batch: (acc over r = 0..BT-1 of acc + losses[r]) / (float)BT. */
float ct_mean_loss(const float *losses, int BT);

/* Number of trained rows: targets without CT_TOK_UNTRAINED. */
int ct_trained_rows(const ct_tok *targets, int BT);

/* Mean loss over the trained rows: (acc over trained r ascending of
 * acc + losses[r]) / (float)ntrained, 0.0f when no row is trained. With
 * every row trained this is ct_mean_loss, bit for bit. */
float ct_masked_mean_loss(const float *losses, const ct_tok *targets, int BT);

/* dlogits (BT,Vp) = (probs - 1[i == target]) / (float)N for i < V, 0 for
 * i >= V, with N = ct_trained_rows(targets) (BT when nothing is masked);
 * a row whose target carries CT_TOK_UNTRAINED is 0.0f throughout.
 * Written, not added (it is the first gradient of the pass). */
void ct_crossentropy_backward(float *dlogits, const float *probs,
			      const ct_tok *targets, int BT, int V, int Vp);

/* ---- optimizer ------------------------------------------------------ */

struct ct_adamw_args {
	float lr, beta1, beta2, eps, weight_decay;
	float bc1, bc2;		/* 1 - beta1^t, 1 - beta2^t (see below) */
};

/* Bias corrections for step t >= 1 by repeated float multiplication:
 *   b1 = 1.0f; repeat t times: b1 = b1 * beta1;  *bc1 = 1.0f - b1
 * (same for beta2). */
void ct_adamw_bias_corrections(float beta1, float beta2, int t, float *bc1, float *bc2);

/* One AdamW step on n parameters: for each j, with the element functions of
 * ct_math.clh, m[j] = ct_adamw_m_elem(m[j], g[j], beta1); v[j] likewise;
 * p[j] = ct_adamw_p_elem(p[j], m[j], v[j], lr, eps, wd, bc1, bc2).
 * Weight decay applies to every parameter (as llm.c). */
void ct_adamw_update(float *p, const float *g, float *m, float *v, size_t n,
		     const struct ct_adamw_args *a);

#define CT_CLIP_CHUNK 65536

/* Global gradient norm: chunk k = g[k*65536 .. min(n, (k+1)*65536)) gives
 * part_k = acc over its elements of fmaf(g, g, acc); sumsq = acc over k of
 * (acc + part_k); returns sqrtf(sumsq). */
float ct_grad_norm(const float *g, size_t n);

/* If clip > 0 and norm > clip: s = clip / norm; every g[j] = g[j] * s.
 * Returns norm (computed by ct_grad_norm). */
float ct_grad_clip(float *g, size_t n, float clip);

/* ---- the model ------------------------------------------------------ */

/* Activations of one forward pass, for batch B x T (shapes per field). */
struct ct_acts {
	float *encoded;		/* (B,T,C) */
	float *ln1;		/* (L,B,T,C) */
	float *ln1_mean;	/* (L,B,T) */
	float *ln1_rstd;	/* (L,B,T) */
	float *qkv;		/* (L,B,T,3C) */
	float *atty;		/* (L,B,T,C) */
	float *att;		/* (L,B,NH,T,2) attention rows' max and sum */
	float *attrow;		/* (T) attention forward scratch */
	float *attproj;		/* (L,B,T,C) */
	float *residual2;	/* (L,B,T,C) */
	float *ln2;		/* (L,B,T,C) */
	float *ln2_mean;	/* (L,B,T) */
	float *ln2_rstd;	/* (L,B,T) */
	float *fch;		/* (L,B,T,4C) */
	float *fch_gelu;	/* (L,B,T,4C) */
	float *fcproj;		/* (L,B,T,C) */
	float *residual3;	/* (L,B,T,C) */
	float *lnf;		/* (B,T,C) */
	float *lnf_mean;	/* (B,T) */
	float *lnf_rstd;	/* (B,T) */
	float *logits;		/* (B,T,Vp) */
	float *probs;		/* (B,T,Vp) */
	float *losses;		/* (B,T) */
	float *rope;		/* Llama only: (T, hs) RoPE table (ct_llama.h) */
	float *qkvr;		/* Llama with q/k norms: (L,B,T,QKV) before the norms */
	float *qkn_rstd;	/* Llama with q/k norms: (L,B,T,NH+KVH) */
};

/* Gradient scratch of the backward pass, reused by every layer (each
 * buffer zeroed right before the layer that fills it, which is the same
 * arithmetic as zeroing everything at the start of the pass). */
struct ct_grad_acts {
	float *dlogits;		/* (B,T,Vp) */
	float *dresidual;	/* (B,T,C) gradient of the current residual stream */
	float *dresidual_in;	/* (B,T,C) gradient of the layer's input stream */
	float *dresidual2;	/* (B,T,C) */
	float *dln;		/* (B,T,C) */
	float *datty;		/* (B,T,C) */
	float *dattproj;	/* (B,T,C) */
	float *dfcproj;		/* (B,T,C) */
	float *dqkv;		/* (B,T,3C) */
	float *datt;		/* ct_attention_scratch_floats(T, C, NH) */
	float *dfch;		/* (B,T,4C) */
	float *dfch_gelu;	/* (B,T,4C) */
};

struct ct_lora_state;
struct ct_model;

/* What attached adapters do at the C reference's hooks (ct_lora_model.h
 * has the contracts; ct_lora_attach sets the model's lora_ops to its one
 * row, so this module never calls into the LoRA one by name): forward and
 * backward after a target's matmul (no-ops without an adapter on (l, t)),
 * a whole training step, and the release of the adapters. */
struct ct_model_lora_ops {
	void (*forward)(struct ct_model *m, int l, enum ct_lora_target t,
			float *out, const float *inp);
	void (*backward)(struct ct_model *m, int l, enum ct_lora_target t,
			 float *dinp, const float *dout, const float *inp);
	int (*step)(struct ct_model *m, const ct_tok *inputs, const ct_tok *targets,
		    const struct ct_adamw_args *a, float grad_clip, float *loss);
	void (*detach)(struct ct_model *m);
};

/* The C reference model: parameters, AdamW state and buffers for a fixed
 * B and T. All memory owned; free with ct_model_free(). */

struct ct_model {
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	int B, T;
	float *params;		/* nparams */
	float *grads;		/* nparams, NULL when opened for eval only */
	float *m, *v;		/* AdamW moments, NULL for eval only */
	struct ct_acts acts;
	struct ct_grad_acts gacts;
	void *mem;		/* one allocation behind the activations */
	void *gmem;		/* one allocation behind the gradient scratch */
	struct ct_lora_state *lora;	/* LoRA adapters (ct_lora_model.h) or NULL */
	const struct ct_model_lora_ops *lora_ops;	/* with lora, else NULL */
	/* A compact frozen base (ct_model_set_base): params is NULL and the
	 * weights are read from this image (borrowed) at blay's offsets. */
	const unsigned char *base;
	struct ct_base_layout blay;
};

/* The model's weights: float32 tensor t (a vector, or a matrix of a
 * float32 base), and matrix tensor t from element e on as stored. */
const float *ct_model_wvec(const struct ct_model *m, int t);
struct ct_wmat ct_model_wmat(const struct ct_model *m, int t, size_t e);

/* Read the frozen weights of a model opened with CT_MODEL_FROZEN from a
 * compact image of format fmt (ct_base.h; borrowed, kept alive and
 * unchanged by the caller until ct_model_free): params is released.
 * Returns 0 or CT_EINVAL (training model, or fmt not compact). */
int ct_model_set_base(struct ct_model *m, int fmt, const unsigned char *img);

/* ct_model_init's `training` for LoRA: gradient scratch for the backward
 * pass but no parameter gradients or moments (the weights are frozen;
 * ct_lora_attach adds the adapters). */
#define CT_MODEL_FROZEN 2

/* Set up a model for cfg (validated) and batch B x T (1 <= T <= maxT,
 * B >= 1, B*T*Vp and friends must fit in memory). params are copied from
 * `params` (nparams floats; NULL: zeros). training 1 also allocates grads and zeroed
 * m, v; CT_MODEL_FROZEN only the backward scratch (grads, m, v stay NULL). Returns 0, CT_EINVAL (bad B/T, detail says which), CT_EFORMAT (bad
 * config) or CT_ENOMEM; on failure m is zeroed. */
int ct_model_init(struct ct_model *m, const struct ct_model_config *cfg,
		  const float *params, int B, int T, int training);

/* Floats ct_model_init allocates besides the weights and AdamW state for
 * cfg at B x T: the activations, plus the backward scratch when training
 * is not 0 (the same layout functions, so the count is exact). */
size_t ct_model_act_floats(const struct ct_model_config *cfg, int B, int T, int training);

/* Release everything; zeroes m. A zeroed m is a no-op. */
void ct_model_free(struct ct_model *m);

/* Forward pass on inputs (B,T) and targets (B,T) (targets may be NULL:
 * logits only, returns 0). Returns the mean loss (ct_masked_mean_loss). Tokens
 * must be < V (checked by the caller). */
float ct_model_forward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets);

/* Zero the parameter gradients. */
void ct_model_zero_grad(struct ct_model *m);

/* Backward pass after ct_model_forward() with targets, adding into grads
 * (call ct_model_zero_grad() first). Order of the contributions:
 * crossentropy -> logits matmul (dwte first) -> final layernorm -> layers
 * L-1..0 (residual3 -> fcproj -> gelu -> fc -> ln2 -> residual2 ->
 * attproj -> attention -> qkv -> ln1) -> encoder (dwte, dwpe). */
void ct_model_backward(struct ct_model *m, const ct_tok *inputs,
		       const ct_tok *targets);

/* One full training step: zero_grad, forward, backward, optional clip
 * (grad_clip > 0), AdamW step t (1-based) with args built from the
 * hyperparameters. *loss receives the mean loss. Returns 0 or CT_ESTATE
 * (model opened without training buffers). */
int ct_model_step(struct ct_model *m, const ct_tok *inputs,
		  const ct_tok *targets, int t, float lr, float beta1,
		  float beta2, float eps, float weight_decay, float grad_clip,
		  float *loss);

/* ---- shared by the architectures' drivers (ct_model.c, ct_llama_model.c)
 * only; the order of the calls inside is part of the specification. */

/* GPT-2's passes (its row of ct_model_ops.h; ct_model_forward and
 * ct_model_backward call the row's). */
float ct_model_gpt2_forward(struct ct_model *m, const ct_tok *inputs,
			    const ct_tok *targets);
void ct_model_gpt2_backward(struct ct_model *m, const ct_tok *inputs,
			    const ct_tok *targets);

/* One block: reads `residual` (its input) and, forward, writes layer l's
 * activations; backward, turns m->gacts.dresidual (gradient of
 * residual3[l]) into m->gacts.dresidual_in (gradient of `residual`). */
typedef void ct_model_block_fn(struct ct_model *m, int l, const float *residual);

/* block() for l = 0 .. L-1 on acts.encoded, then residual3[l-1]; returns
 * the last block's output (BT x C). */
const float *ct_model_blocks_forward(struct ct_model *m, ct_model_block_fn *block);

/* block() for l = L-1 .. 0, swapping gacts.dresidual and dresidual_in
 * after each: on return gacts.dresidual holds the gradient of acts.encoded. */
void ct_model_blocks_backward(struct ct_model *m, ct_model_block_fn *block);

/* The output matrix (tensor head, Vp x C) on acts.lnf into logits, then
 * probs and losses; returns the mean loss, or 0 when targets is NULL. */
float ct_model_head_forward(struct ct_model *m, int head, const ct_tok *targets);

/* Back through the loss and the output matrix (tensor head): gacts.dln
 * gets the gradient of acts.lnf (grads + head gets its own when grads is
 * not NULL); gacts.dresidual is zeroed for the final norm to add into. */
void ct_model_head_backward(struct ct_model *m, int head, const ct_tok *targets);

#endif
