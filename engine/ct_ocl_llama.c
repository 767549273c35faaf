/*
 * ct_ocl_llama.c - the Llama model type on the OpenCL backend
 * (ct_ocl_llama.h): launchers of kernels/llama.cl and the forward/backward
 * pass, which mirrors ct_llama_model.c call for call (same layers, same
 * order, same zeroing of the gradient scratch) with each C reference layer
 * replaced by its device twin. The matmuls, residuals, attention and
 * cross-entropy are GPT-2's launchers (ct_ocl_ops.h), LoRA is
 * ct_ocl_lora.h's.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_llama.h"
#include "ct_model.h"
#include "ct_ocl_llama.h"
#include "ct_ocl_lora.h"
#include "ct_ocl_weights.h"
#include "ct_options.h"
#include "ct_time.h"

#include <stdio.h>

static const char *const llk_names[CT_LK_COUNT] = {
	"ct_ll_embed_fwd", "ct_ll_embed_bwd", "ct_rmsnorm_fwd", "ct_rmsnorm_bwd_dinp",
	"ct_rmsnorm_bwd_dw", "ct_ll_rope", "ct_swiglu_fwd", "ct_swiglu_bwd",
	"ct_ll_gqa_expand", "ct_ll_gqa_reduce", "ct_ll_qknorm_fwd", "ct_ll_qknorm_bwd_dw",
	"ct_ll_qknorm_bwd_dx",
};

int ct_ocl_llk_init(struct ct_ocl_llk *lk, struct ct_ocl_ops *ops)
{
	memset(lk, 0, sizeof(*lk));
	lk->ops = ops;
	for (int i = 0; i < CT_LK_COUNT; i++) {
		int rc = ct_ocl_kernel(ops->ocl, llk_names[i], &lk->k[i]);

		if (rc < 0) {
			ct_ocl_llk_free(lk);
			return rc;
		}
	}
	return 0;
}

static void print_profile(const struct ct_ocl_llk *lk)
{
	double total = 0.0;

	for (int i = 0; i < CT_LK_COUNT; i++)
		total += lk->prof_s[i];
	if (total <= 0.0)
		return;
	fprintf(stderr, "%-24s %8s %10s %10s %6s\n", "kernel (llama.cl)", "calls", "ms",
		"cpu ms", "%");
	for (int i = 0; i < CT_LK_COUNT; i++)
		if (lk->prof_n[i] > 0)
			fprintf(stderr, "%-24s %8ld %10.1f %10.1f %6.1f\n", llk_names[i],
				lk->prof_n[i], lk->prof_s[i] * 1e3, lk->prof_cpu[i] * 1e3,
				100.0 * lk->prof_s[i] / total);
}

void ct_ocl_llk_free(struct ct_ocl_llk *lk)
{
	if (lk->ops != NULL && lk->ops->profile)
		print_profile(lk);
	for (int i = 0; i < CT_LK_COUNT; i++)
		if (lk->k[i] != NULL)
			clReleaseKernel(lk->k[i]);
	memset(lk->k, 0, sizeof(lk->k));
}

/* Set kernel id's arguments from fmt ('t' a struct ct_dten = buffer and
 * ulong offset, 'm' a cl_mem, 'i' an int, 'f' a float) and enqueue it over
 * g0 x g1 work-items (g1 0: 1-D), local size left to the driver (every
 * work-item computes its own outputs, so results never depend on it). */
static int launch(struct ct_ocl_llk *lk, int id, size_t g0, size_t g1, const char *fmt, ...)
{
	cl_kernel k = lk->k[id];
	size_t g[2] = { g0, g1 };
	cl_uint a = 0;
	cl_int err = CL_SUCCESS;
	double t0 = 0.0, c0 = 0.0;
	va_list ap;

	va_start(ap, fmt);
	for (const char *p = fmt; *p != '\0' && err == CL_SUCCESS; p++) {
		if (*p == 't') {
			struct ct_dten t = va_arg(ap, struct ct_dten);
			cl_ulong off = t.off;

			err = clSetKernelArg(k, a++, sizeof(cl_mem), &t.mem);
			if (err == CL_SUCCESS)
				err = clSetKernelArg(k, a++, sizeof(off), &off);
		} else if (*p == 'm') {
			cl_mem m = va_arg(ap, cl_mem);

			err = clSetKernelArg(k, a++, sizeof(m), &m);
		} else if (*p == 'i') {
			cl_int v = va_arg(ap, int);

			err = clSetKernelArg(k, a++, sizeof(v), &v);
		} else {
			cl_float v = (cl_float)va_arg(ap, double);

			err = clSetKernelArg(k, a++, sizeof(v), &v);
		}
	}
	va_end(ap);
	if (lk->ops->profile) {
		clFinish(lk->ops->ocl->queue);
		t0 = ct_time_mono_s();
		c0 = ct_time_cpu_s();
	}
	if (err == CL_SUCCESS && g0 > 0)
		err = clEnqueueNDRangeKernel(lk->ops->ocl->queue, k, g1 ? 2 : 1, NULL, g, NULL,
					     0, NULL, NULL);
	if (err != CL_SUCCESS)
		return ct_error(CT_ECL, "%s: %s", llk_names[id], ct_ocl_strerror(err));
	if (lk->ops->profile) {
		clFinish(lk->ops->ocl->queue);
		lk->prof_s[id] += ct_time_mono_s() - t0;
		lk->prof_cpu[id] += ct_time_cpu_s() - c0;
		lk->prof_n[id]++;
	}
	return 0;
}

int ct_ocl_embed_forward(struct ct_ocl_llk *lk, struct ct_dten out, cl_mem inp,
			 struct ct_dten wte, int BT, int C)
{
	return launch(lk, CT_LK_EMBED_FWD, (size_t)C, (size_t)BT, "tmtii", out, inp, wte, BT, C);
}

int ct_ocl_embed_backward(struct ct_ocl_llk *lk, struct ct_dten dwte, struct ct_dten dout,
			  cl_mem inp, int BT, int C)
{
	return launch(lk, CT_LK_EMBED_BWD, (size_t)C, 0, "ttmii", dwte, dout, inp, BT, C);
}

int ct_ocl_rmsnorm_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten rstd,
			   struct ct_dten inp, struct ct_dten w, int BT, int C, float eps)
{
	return launch(lk, CT_LK_RMSNORM_FWD, (size_t)BT, 0, "ttttiif", out, rstd, inp, w,
		      BT, C, (double)eps);
}

int ct_ocl_rmsnorm_backward(struct ct_ocl_llk *lk, struct ct_dten dinp, struct ct_dten dw,
			    struct ct_dten dout, struct ct_dten inp, struct ct_dten w,
			    struct ct_dten rstd, int BT, int C)
{
	int rc = launch(lk, CT_LK_RMSNORM_BWD_DINP, (size_t)BT, 0, "tttttii", dinp, dout,
			inp, w, rstd, BT, C);

	if (rc == 0 && dw.mem != NULL)
		rc = launch(lk, CT_LK_RMSNORM_BWD_DW, (size_t)C, 0, "ttttii", dw, dout, inp,
			    rstd, BT, C);
	return rc;
}

int ct_ocl_rope(struct ct_ocl_llk *lk, struct ct_dten qkv, struct ct_dten tab, int BT,
		int T, int NH, int KVH, int hs, int dir)
{
	return launch(lk, CT_LK_ROPE, (size_t)(NH + KVH), (size_t)BT, "ttiiiiii",
		      qkv, tab, BT, T, NH + KVH, hs, (NH + 2 * KVH) * hs, dir);
}

int ct_ocl_qknorm_forward(struct ct_ocl_llk *lk, struct ct_dten qkv, struct ct_dten rstd,
			  struct ct_dten raw, struct ct_dten qkw, int BT, int NH, int KVH,
			  int hd, float eps)
{
	return launch(lk, CT_LK_QKNORM_FWD, (size_t)(NH + 2 * KVH), (size_t)BT, "ttttiiiif",
		      qkv, rstd, raw, qkw, BT, NH, KVH, hd, (double)eps);
}

int ct_ocl_qknorm_backward(struct ct_ocl_llk *lk, struct ct_dten dqkv, struct ct_dten dqkw,
			   struct ct_dten raw, struct ct_dten qkw, struct ct_dten rstd,
			   int BT, int NH, int KVH, int hd)
{
	int rc = 0;

	if (dqkw.mem != NULL)	/* reads dqkv before the input half replaces it */
		rc = launch(lk, CT_LK_QKNORM_BWD_DW, (size_t)2 * hd, 0, "ttttiiii", dqkw, dqkv,
			    raw, rstd, BT, NH, KVH, hd);
	if (rc == 0)
		rc = launch(lk, CT_LK_QKNORM_BWD_DX, (size_t)(NH + KVH), (size_t)BT, "ttttiiii",
			    dqkv, raw, qkw, rstd, BT, NH, KVH, hd);
	return rc;
}

int ct_ocl_swiglu_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten fch,
			  int BT, int F)
{
	return launch(lk, CT_LK_SWIGLU_FWD, (size_t)F, (size_t)BT, "ttii", out, fch, BT, F);
}

int ct_ocl_swiglu_backward(struct ct_ocl_llk *lk, struct ct_dten dfch, struct ct_dten fch,
			   struct ct_dten dout, int BT, int F)
{
	return launch(lk, CT_LK_SWIGLU_BWD, (size_t)F, (size_t)BT, "tttii", dfch, fch, dout,
		      BT, F);
}

static int gqa_expand(struct ct_ocl_llk *lk, struct ct_dten x3, struct ct_dten qkv,
		      int BT, int NH, int KVH, int hs)
{
	return launch(lk, CT_LK_GQA_EXPAND, (size_t)3 * NH, (size_t)BT, "ttiiii", x3, qkv,
		      BT, NH, KVH, hs);
}

int ct_ocl_gqa_forward(struct ct_ocl_llk *lk, struct ct_dten out, struct ct_dten stat,
		       struct ct_dten qkv, struct ct_dten x3,
		       int B, int T, int NH, int KVH, int hs)
{
	int rc = 0;

	if (KVH != NH) {
		rc = gqa_expand(lk, x3, qkv, B * T, NH, KVH, hs);
		qkv = x3;
	}
	if (rc == 0)
		rc = ct_ocl_attention_forward_recompute(lk->ops, out, stat, qkv, B, T, NH * hs, NH);
	return rc;
}

int ct_ocl_gqa_backward(struct ct_ocl_llk *lk, struct ct_dten dqkv, struct ct_dten dot,
			struct ct_dten dout, struct ct_dten qkv, struct ct_dten stat,
			struct ct_dten x3, struct ct_dten dx3,
			int B, int T, int NH, int KVH, int hs)
{
	const int BT = B * T, C = NH * hs;
	int rc;

	if (KVH == NH)
		return ct_ocl_attention_backward_recompute(lk->ops, dqkv, dot, dout, qkv, stat,
							   B, T, C, NH);
	rc = gqa_expand(lk, x3, qkv, BT, NH, KVH, hs);
	if (rc == 0)
		rc = ct_ocl_zero(lk->ops, dx3, (size_t)BT * 3 * C);
	if (rc == 0)
		rc = ct_ocl_attention_backward_recompute(lk->ops, dx3, dot, dout, x3, stat,
							 B, T, C, NH);
	if (rc == 0)
		rc = launch(lk, CT_LK_GQA_REDUCE, (size_t)(NH + 2 * KVH), (size_t)BT,
			    "ttiiii", dqkv, dx3, BT, NH, KVH, hs);
	return rc;
}

/* ---- the model ------------------------------------------------------------- */

/* Device activations (the fields of ct_llama_model.c's struct ct_acts,
 * shapes there; x3 the expanded q/k/v of one layer) and gradient scratch
 * (dx3 the expanded dqkv; datt the attention rows' dot, B*NH*T). There is
 * no probs buffer: the probabilities overwrite the logits in place, and
 * their gradient the probabilities (every one of those kernels is
 * elementwise; a forward without targets stops at the logits). */
#define CT_LL_ACTS(X) \
	X(encoded) X(ln1) X(ln1_rstd) X(qkv) X(atty) X(att) X(attproj) \
	X(residual2) X(ln2) X(ln2_rstd) X(fch) X(sw) X(fcproj) X(residual3) \
	X(lnf) X(lnf_rstd) X(logits) X(losses) X(rope) X(x3) X(qkvr) X(qkn_rstd)
#define CT_LL_GACTS(X) \
	X(dresidual) X(dresidual_in) X(dresidual2) X(dln) X(datty) X(dattproj) \
	X(dfcproj) X(dqkv) X(dx3) X(datt) X(dfch) X(dsw)

enum {
#define CT_LL_IDX_(f) LL_##f,
	CT_LL_ACTS(CT_LL_IDX_)
	CT_LL_GACTS(CT_LL_IDX_)
#undef CT_LL_IDX_
	LL_NBUF
};

struct ct_ocl_llama {
	struct ct_ocl_llk lk;
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	int B, T, QKV, A, hd;	/* A = NH * hd, the attention width */
	int head_rows;		/* rows of logits held (ct_ocl_llama_head_rows) */
	/* lean mode: the per-layer activations of one layer only (slot 0),
	 * but every layer's input (in saved), from which backward runs the
	 * layer's forward again before its backward */
	int lean;
	/* rows of the MLP's activations held (ct_ocl_llama_mlp_rows): all
	 * B*T, or in a lean frozen pass a block, the MLP run block by block */
	int mlp_rows;
	/* lean: every layer's input (L x B*T*C) in host memory, copied out
	 * of encoded before the layer's forward and back before its backward:
	 * the device holds one, in encoded */
	float *saved;
	cl_mem own[LL_NBUF];	/* the device buffers, by LL_ index (NULL: shared) */
#define CT_LL_FIELD_(f) struct ct_dten f;	/* where f lies in own[] */
	CT_LL_ACTS(CT_LL_FIELD_)
	CT_LL_GACTS(CT_LL_FIELD_)
#undef CT_LL_FIELD_
};

/* Layer l's parameter tensors in a params-shaped buffer (base NULL: all
 * NULL, for frozen gradients); qkvb.mem NULL without q/k/v biases. */
struct ll_layer {
	struct ct_dten ln1w, qkvw, qkvb, qkn, attprojw, ln2w, fcw, fcprojw;
};

/* Where layer tensors are read: the weights (w), or else a params-shaped
 * float32 buffer (g: the gradients; NULL when frozen, every view NULL). */
struct wsrc {
	const struct ct_dweights *w;
	cl_mem g;
};

static struct wsrc PW(const struct ct_dweights *w)
{
	struct wsrc s = { w, NULL };
	return s;
}

static struct wsrc GW(cl_mem g)
{
	struct wsrc s = { NULL, g };
	return s;
}

/* Tensor t of src from element e on; an empty tensor (no q/k/v biases,
 * no q/k norms, a tied lm_head): NULL. */
static struct ct_dten LW(const struct ct_ocl_llama *ll, struct wsrc src, int t, size_t e)
{
	struct ct_dten none = { NULL, 0, 0 };

	if (ll->lay.size[t] == 0)
		return none;
	if (src.w != NULL)
		return ct_dweights_at(src.w, t, e);
	return ct_dten_param(src.g, &ll->lay, NULL, t, e);
}

static void ll_layer(const struct ct_ocl_llama *ll, struct wsrc base, int l, struct ll_layer *p)
{
	const size_t C = (size_t)ll->cfg.C, F = (size_t)ll->cfg.F;
	const size_t QKV = (size_t)ll->QKV;

	p->ln1w = LW(ll, base, CT_LN1W, l * C);
	p->qkvw = LW(ll, base, CT_QKVW, l * QKV * C);
	p->qkvb = LW(ll, base, CT_QKVB, l * QKV);
	p->qkn = LW(ll, base, CT_LN1B, l * 2 * (size_t)ll->hd);
	p->attprojw = LW(ll, base, CT_ATTPROJW, l * C * (size_t)ll->A);
	p->ln2w = LW(ll, base, CT_LN2W, l * C);
	p->fcw = LW(ll, base, CT_FCW, l * 2 * F * C);
	p->fcprojw = LW(ll, base, CT_FCPROJW, l * C * F);
}

static struct ct_dten D(cl_mem m, size_t off)
{
	return ct_dten_at(m, off);
}

/* Floats of every buffer (n, by LL_ index; 0: not allocated) of a Llama
 * pass over B x T: every layer's activations, or with lean one layer's
 * (ll_plan then puts residual3 in encoded); with grads the backward
 * scratch. */
static void ll_sizes(const struct ct_model_config *cfg, int B_, int T_, int flags,
		     size_t n[LL_NBUF])
{
	const int grads = (flags & CT_OCL_LL_GRADS) != 0;
	const int lean = grads && (flags & CT_OCL_LL_LEAN) != 0;
	const size_t hr = ct_ocl_llama_head_rows(cfg, B_, T_, grads && (flags & CT_OCL_LL_FROZEN));
	const size_t L = cfg->L, B = B_, T = T_, C = cfg->C, NH = cfg->NH, F = cfg->F;
	const size_t BT = B * T, QKV = ct_llama_qkv_dim(cfg), Vp = cfg->Vp;
	const size_t A = ct_llama_att_dim(cfg), hd = ct_llama_head_dim(cfg);
	const size_t R = (size_t)ct_ocl_llama_mlp_rows(cfg, B_, T_, flags);
	/* lean: attention one batch row at a time */
	const size_t x3 = cfg->KVH == cfg->NH ? 0 : (lean ? T : BT) * 3 * A, Ll = lean ? 1 : L;
	const int qkn = (cfg->flags & CT_LLAMA_QK_NORM) != 0;

	memset(n, 0, LL_NBUF * sizeof(n[0]));
	n[LL_encoded] = BT * C; n[LL_ln1] = Ll * BT * C; n[LL_ln1_rstd] = Ll * BT;
	n[LL_qkv] = Ll * BT * QKV; n[LL_atty] = Ll * BT * A; n[LL_att] = Ll * B * NH * T * 2;
	n[LL_attproj] = BT * C; n[LL_residual2] = Ll * BT * C; n[LL_ln2] = Ll * BT * C;
	n[LL_ln2_rstd] = Ll * BT; n[LL_fch] = Ll * R * 2 * F; n[LL_sw] = Ll * R * F;
	n[LL_fcproj] = BT * C; n[LL_residual3] = L * BT * C; n[LL_lnf] = BT * C;
	n[LL_lnf_rstd] = BT; n[LL_logits] = hr * Vp; n[LL_losses] = BT;
	n[LL_rope] = T * hd; n[LL_x3] = x3;
	n[LL_qkvr] = qkn ? Ll * BT * QKV : 0;
	n[LL_qkn_rstd] = qkn ? Ll * BT * (NH + cfg->KVH) : 0;
	if (!grads)
		return;
	n[LL_dresidual] = BT * C; n[LL_dresidual_in] = BT * C; n[LL_dresidual2] = BT * C;
	n[LL_dln] = BT * C; n[LL_datty] = BT * A; n[LL_dattproj] = BT * C;
	n[LL_dfcproj] = BT * C; n[LL_dqkv] = BT * QKV; n[LL_dx3] = x3;
	n[LL_datt] = B * NH * T; n[LL_dfch] = R * 2 * F; n[LL_dsw] = R * F;
}

/* A lean pass's buffers that are never live at once. Each row is one use
 * of its first buffer's device memory: the buffers after it (the first
 * again where it is one of them) lie there one after another (-1 ends a
 * row), and that memory is as big as its biggest use. In a lean pass
 * every layer's activations are made again before its backward, so the
 * layer's forward and backward temporaries come and go within it:
 *   the logits piece (the head's, at forward's end and backward's start)
 *     holds a layer's MLP block (gate/up, SwiGLU and their gradients),
 *     then its attention's expanded q/k/v and their gradient;
 *   residual2 and ln2 (gone after the MLP's backward) hold dqkv;
 *   the attention projection's output (gone once residual2 is made)
 *     holds the MLP's down projection, the final norm's output (gone
 *     once the head's backward ran) and the two gradients of the
 *     residual adds' branches (each gone before the next is made);
 *   dresidual2 (gone after the attention's residual backward) holds
 *     datty;
 *   encoded holds every layer's output (residual3), the next layer's
 *     input: a layer's own input is dead once residual2 is made. */
static const signed char ll_shared[][5] = {
	{ LL_logits, LL_fch, LL_sw, LL_dfch, LL_dsw },
	{ LL_logits, LL_x3, LL_dx3, -1 },
	{ LL_residual2, LL_residual2, LL_ln2, -1 },
	{ LL_residual2, LL_dqkv, -1 },
	{ LL_attproj, LL_fcproj, -1 },
	{ LL_attproj, LL_lnf, -1 },
	{ LL_attproj, LL_dfcproj, -1 },
	{ LL_attproj, LL_dattproj, -1 },
	{ LL_dresidual2, LL_datty, -1 },
	{ LL_encoded, LL_residual3, -1 },
};

#define SHARE_ALIGN ((size_t)64)	/* floats: a shared buffer's start, 256 bytes */

/* Where a pass's buffers lie: buffer i is n[i] floats from element at[i]
 * of device buffer in[i] (in[i] == i: its own, n[i] floats, 0 for an
 * empty one, allocated as 1). */
struct ll_plan {
	size_t n[LL_NBUF], at[LL_NBUF];
	int in[LL_NBUF];
};

static void ll_plan(const struct ct_model_config *cfg, int B, int T, int flags,
		    struct ll_plan *p)
{
	const int lean = (flags & CT_OCL_LL_GRADS) && (flags & CT_OCL_LL_LEAN);
	size_t need[LL_NBUF];

	ll_sizes(cfg, B, T, flags, p->n);
	for (int i = 0; i < LL_NBUF; i++) {
		p->in[i] = i;
		p->at[i] = 0;
	}
	if (!lean)
		return;
	p->n[LL_residual3] = p->n[LL_encoded];	/* one layer's: the rest on the host */
	memcpy(need, p->n, sizeof(need));
	for (size_t r = 0; r < sizeof(ll_shared) / sizeof(ll_shared[0]); r++) {
		const int o = ll_shared[r][0];
		size_t at = 0;

		for (int k = 1; k < 5 && ll_shared[r][k] >= 0; k++) {
			const int i = ll_shared[r][k];

			p->in[i] = o;
			p->at[i] = at;
			at += (need[i] + SHARE_ALIGN - 1) / SHARE_ALIGN * SHARE_ALIGN;
		}
		p->n[o] = at > p->n[o] ? at : p->n[o];
	}
}

/* Bytes of device buffer i of plan p (one of its own), 0 when the pass
 * does not allocate it (no backward scratch without grads). */
static uint64_t ll_own_bytes(const struct ll_plan *p, int i, int grads)
{
	if (p->in[i] != i || (i >= LL_dresidual && !grads))
		return 0;
	return 4 * (uint64_t)(p->n[i] ? p->n[i] : 1);
}

uint64_t ct_ocl_llama_bytes(const struct ct_model_config *cfg, int B, int T, int flags,
			    uint64_t *largest)
{
	const int grads = (flags & CT_OCL_LL_GRADS) != 0;
	struct ll_plan p;
	uint64_t sum = 0, big = 0;

	ll_plan(cfg, B, T, flags, &p);
	for (int i = 0; i < LL_NBUF; i++) {
		uint64_t b = ll_own_bytes(&p, i, grads);

		sum += b;
		big = b > big ? b : big;
	}
	if (largest != NULL)
		*largest = big;
	return sum;
}

int ct_ocl_llama_lean(const struct ct_model_config *cfg, int B, int T)
{
	size_t all[LL_NBUF], one[LL_NBUF];
	uint64_t kept = 0;

	ll_sizes(cfg, B, T, CT_OCL_LL_GRADS, all);
	ll_sizes(cfg, B, T, CT_OCL_LL_GRADS | CT_OCL_LL_LEAN, one);
	for (int i = 0; i < LL_NBUF; i++)
		kept += 4 * (uint64_t)(all[i] - one[i]);
	return kept > ((uint64_t)1 << 30);
}

/* Floats of gate/up a lean frozen pass's MLP block holds: 2^21 (8 MiB),
 * 128 rows of Llama-3.2-1B's 2 x 8192, so that the block's gate/up,
 * SwiGLU and their gradients fit the logits piece they share. */
#define MLP_HELD ((size_t)1 << 21)

int ct_ocl_llama_mlp_rows(const struct ct_model_config *cfg, int B, int T, int flags)
{
	const long bt = (long)B * T;
	long r = (long)(MLP_HELD / (2 * (size_t)(cfg->F > 0 ? cfg->F : 1)));

	if (!(flags & CT_OCL_LL_GRADS) || !(flags & CT_OCL_LL_LEAN) ||
	    !(flags & CT_OCL_LL_FROZEN))
		return (int)bt;
	r = ct_opt_int(CT_OPT_OCL_LEAN_ROWS, r < 1 ? 1 : r);
	return (int)(r < bt ? r : bt);
}

/* Every buffer of ll_plan (an empty one as 1 float, so that every field
 * is a valid cl_mem), each field its view; lean: the host's saved layer
 * inputs. */
static int ll_alloc_all(struct ct_ocl_llama *ll, int flags)
{
	const int grads = (flags & CT_OCL_LL_GRADS) != 0;
	struct ct_dten *f[LL_NBUF] = {
#define CT_LL_PTR_(f) &ll->f,
		CT_LL_ACTS(CT_LL_PTR_)
		CT_LL_GACTS(CT_LL_PTR_)
#undef CT_LL_PTR_
	};
	struct ll_plan p;
	int rc = 0;

	ll_plan(&ll->cfg, ll->B, ll->T, flags, &p);
	for (int i = 0; i < LL_NBUF && rc == 0; i++)
		if (ll_own_bytes(&p, i, grads) > 0)
			rc = ct_ocl_alloc(ll->lk.ops->ocl, ll_own_bytes(&p, i, grads),
					  CL_MEM_READ_WRITE, &ll->own[i]);
	for (int i = 0; i < LL_NBUF; i++)
		*f[i] = D(ll->own[p.in[i]], p.at[i]);
	if (rc == 0 && ll->lean) {
		ll->saved = malloc((size_t)ll->cfg.L * ll->B * ll->T * ll->cfg.C * sizeof(float));
		if (ll->saved == NULL)
			rc = ct_error(CT_ENOMEM, "host copy of %d layer inputs", ll->cfg.L);
	}
	return rc;
}

static int upload_rope(struct ct_ocl_llama *ll)
{
	const size_t n = (size_t)ll->T * ll->hd;
	float *tab = malloc(n * sizeof(float));
	int rc;

	if (tab == NULL)
		return ct_error(CT_ENOMEM, "RoPE table");
	rc = ct_llama_rope_table(&ll->cfg, ll->T, tab);
	if (rc == 0)
		rc = ct_ocl_write(ll->lk.ops, ll->rope, tab, n);
	free(tab);
	return rc;
}

int ct_ocl_llama_open(struct ct_ocl_ops *ops, const struct ct_model_config *cfg,
		      int B, int T, int flags, struct ct_ocl_llama **out)
{
	struct ct_ocl_llama *ll;
	int rc;

	*out = NULL;
	ll = calloc(1, sizeof(*ll));
	if (ll == NULL)
		return ct_error(CT_ENOMEM, "Llama device state");
	ll->cfg = *cfg;
	ct_gpt2_layout(cfg, &ll->lay);
	ll->B = B;
	ll->T = T;
	ll->QKV = ct_llama_qkv_dim(cfg);
	ll->A = ct_llama_att_dim(cfg);
	ll->hd = ct_llama_head_dim(cfg);
	ll->lean = (flags & CT_OCL_LL_GRADS) && (flags & CT_OCL_LL_LEAN);
	ll->head_rows = ct_ocl_llama_head_rows(cfg, B, T, (flags & CT_OCL_LL_GRADS) &&
							  (flags & CT_OCL_LL_FROZEN));
	ll->mlp_rows = ct_ocl_llama_mlp_rows(cfg, B, T, flags);
	rc = ct_ocl_llk_init(&ll->lk, ops);
	if (rc == 0)
		rc = ll_alloc_all(ll, flags);
	if (rc == 0)
		rc = upload_rope(ll);
	if (rc < 0) {
		ct_ocl_llama_close(ll);
		return rc;
	}
	*out = ll;
	return 0;
}

void ct_ocl_llama_close(struct ct_ocl_llama *ll)
{
	if (ll == NULL)
		return;
	for (int i = 0; i < LL_NBUF; i++)
		ct_ocl_unref(&ll->own[i]);
	free(ll->saved);
	ct_ocl_llk_free(&ll->lk);
	free(ll);
}

void ct_ocl_llama_prof_reset(struct ct_ocl_llama *ll)
{
	if (ll == NULL)
		return;
	memset(ll->lk.prof_s, 0, sizeof(ll->lk.prof_s));
	memset(ll->lk.prof_cpu, 0, sizeof(ll->lk.prof_cpu));
	memset(ll->lk.prof_n, 0, sizeof(ll->lk.prof_n));
}

struct ct_dten ct_ocl_llama_losses(const struct ct_ocl_llama *ll)
{
	return ll->losses;
}

struct ct_dten ct_ocl_llama_logits(const struct ct_ocl_llama *ll)
{
	return ll->logits;
}

/* Chain launches: after the first failure the rest are skipped. */
#define DO(call) do { if (rc == 0) rc = (call); } while (0)

/* The activation slot of layer l: l, or 0 in lean mode. */
static size_t slot(const struct ct_ocl_llama *ll, int l)
{
	return ll->lean ? 0 : (size_t)l;
}

/* Layer l's output (residual3[l]); lean: encoded, the next layer's
 * input. */
static struct ct_dten layer_out(const struct ct_ocl_llama *ll, int l)
{
	return ct_dten_plus(ll->residual3, ll->lean ? 0 : (size_t)l * ll->B * ll->T * ll->cfg.C);
}

/* Layer l's input: the embeddings, or layer l - 1's output. */
static struct ct_dten layer_in(const struct ct_ocl_llama *ll, int l)
{
	return l == 0 ? ll->encoded : layer_out(ll, l - 1);
}

/* Lean: layer l's input, in encoded, to the host before the layer's
 * forward (save_input) and back before its backward (restore_input);
 * otherwise nothing (every layer's output stays on the device). */
static int save_input(struct ct_ocl_llama *ll, int l)
{
	const size_t n = (size_t)ll->B * ll->T * ll->cfg.C;

	return ll->lean ? ct_ocl_read(ll->lk.ops, ll->saved + (size_t)l * n, ll->encoded, n) : 0;
}

static int restore_input(struct ct_ocl_llama *ll, int l)
{
	const size_t n = (size_t)ll->B * ll->T * ll->cfg.C;

	return ll->lean ? ct_ocl_write(ll->lk.ops, ll->encoded, ll->saved + (size_t)l * n, n) : 0;
}

/* Row r of layer l's ln2. */
static struct ct_dten ln2_of(const struct ct_ocl_llama *ll, int l, int r)
{
	return ct_dten_plus(ll->ln2, (slot(ll, l) * ll->B * ll->T + (size_t)r) * ll->cfg.C);
}

/* Attention of layer l (ct_ocl_gqa_forward); lean: one batch row at a
 * time (each (b, h)'s chains are its own: the same bits), so that the
 * expanded q/k/v and the attention scratch hold T rows, not B*T. */
static int attn_forward(struct ct_ocl_llama *ll, struct ct_dten atty, struct ct_dten stat,
			struct ct_dten qkv)
{
	const struct ct_model_config *c = &ll->cfg;
	const int nb = ll->lean ? ll->B : 1, b1 = ll->B / nb, T = ll->T;
	int rc = 0;

	for (int b = 0; b < nb && rc == 0; b++) {
		const size_t r = (size_t)b * b1 * T;

		DO(ct_ocl_gqa_forward(&ll->lk, ct_dten_plus(atty, r * ll->A),
				      ct_dten_plus(stat, r * c->NH * 2),
				      ct_dten_plus(qkv, r * ll->QKV), ll->x3,
				      b1, T, c->NH, c->KVH, ll->hd));
	}
	return rc;
}

/* Layer l from `residual` up to ln2 (its activations into its slot). */
static int attn_block_forward(struct ct_ocl_llama *ll, const struct ll_layer *p, int l,
			      struct ct_dten residual, struct ct_ocl_lora *lo)
{
	const struct ct_model_config *c = &ll->cfg;
	const int T = ll->T, C = c->C, BT = ll->B * T, hs = ll->hd;
	const size_t lc = slot(ll, l) * BT * C, lt = slot(ll, l) * BT, n = (size_t)BT * C;
	const float eps = (float)c->rms_eps;
	struct ct_ocl_llk *lk = &ll->lk;
	struct ct_ocl_ops *o = lk->ops;
	struct ct_dten qkv = ct_dten_plus(ll->qkv, lt * ll->QKV), ln1 = ct_dten_plus(ll->ln1, lc);
	struct ct_dten atty = ct_dten_plus(ll->atty, lt * ll->A), attproj = ll->attproj;
	struct ct_dten none = { NULL, 0, 0 };
	struct ct_dten raw = p->qkn.mem ? ct_dten_plus(ll->qkvr, lt * ll->QKV) : qkv;
	int rc = 0;

	DO(ct_ocl_rmsnorm_forward(lk, ln1, ct_dten_plus(ll->ln1_rstd, lt), residual, p->ln1w, BT,
				  C, eps));
	DO(ct_ocl_matmul_forward(o, raw, ln1, p->qkvw, p->qkvb, p->qkvb.mem != NULL,
				 BT, C, ll->QKV));
	DO(ct_ocl_lora_forward(lo, l, CT_LORA_QKV, raw, ln1));
	if (p->qkn.mem != NULL)
		DO(ct_ocl_qknorm_forward(lk, qkv, ct_dten_plus(ll->qkn_rstd, lt * (c->NH + c->KVH)), raw,
					 p->qkn, BT, c->NH, c->KVH, hs, eps));
	DO(ct_ocl_rope(lk, qkv, ll->rope, BT, T, c->NH, c->KVH, hs, 1));
	DO(attn_forward(ll, atty, ct_dten_plus(ll->att, lt * c->NH * 2), qkv));
	DO(ct_ocl_matmul_forward(o, attproj, atty, p->attprojw, none, 0, BT, ll->A, C));
	DO(ct_ocl_lora_forward(lo, l, CT_LORA_ATTPROJ, attproj, atty));
	DO(ct_ocl_residual_forward(o, ct_dten_plus(ll->residual2, lc), residual, attproj, n));
	DO(ct_ocl_rmsnorm_forward(lk, ln2_of(ll, l, 0), ct_dten_plus(ll->ln2_rstd, lt),
				  ct_dten_plus(ll->residual2, lc), p->ln2w, BT, C, eps));
	return rc;
}

/* The MLP of layer l over rows r0 .. r0 + n - 1 (n <= mlp_rows): gate/up
 * and SwiGLU into the MLP buffers' slot from their row 0, with proj the
 * down projection into those rows of fcproj. Every step is per row, so
 * the rows' bits are the whole batch's. */
static int mlp_rows_forward(struct ct_ocl_llama *ll, const struct ll_layer *p, int l, int r0,
			    int n, int proj, struct ct_ocl_lora *lo)
{
	const int C = ll->cfg.C, F = ll->cfg.F;
	const size_t lm = slot(ll, l) * (size_t)ll->mlp_rows;
	struct ct_ocl_ops *o = ll->lk.ops;
	struct ct_dten fch = ct_dten_plus(ll->fch, lm * 2 * F), sw = ct_dten_plus(ll->sw, lm * F);
	struct ct_dten ln2 = ln2_of(ll, l, r0), fcproj = ct_dten_plus(ll->fcproj, (size_t)r0 * C);
	struct ct_dten none = { NULL, 0, 0 };
	int rc = 0;

	DO(ct_ocl_matmul_forward(o, fch, ln2, p->fcw, none, 0, n, C, 2 * F));
	DO(ct_ocl_lora_forward_rows(lo, l, CT_LORA_FC, fch, ln2, r0, n));
	DO(ct_ocl_swiglu_forward(&ll->lk, sw, fch, n, F));
	if (!proj)
		return rc;
	DO(ct_ocl_matmul_forward(o, fcproj, sw, p->fcprojw, none, 0, n, F, C));
	DO(ct_ocl_lora_forward_rows(lo, l, CT_LORA_FCPROJ, fcproj, sw, r0, n));
	return rc;
}

/* Rows of the MLP block starting at r0. */
static int mlp_block(const struct ct_ocl_llama *ll, int r0)
{
	const int BT = ll->B * ll->T;

	return BT - r0 < ll->mlp_rows ? BT - r0 : ll->mlp_rows;
}

/* ct_llama_model.c's block_forward: layer l from `residual` (its
 * activations into its slot, its output into residual3[l]). */
static int block_forward(struct ct_ocl_llama *ll, const struct ct_dweights *params, int l,
			 struct ct_dten residual, struct ct_ocl_lora *lo)
{
	const int BT = ll->B * ll->T;
	const size_t lc = slot(ll, l) * BT * ll->cfg.C, n = (size_t)BT * ll->cfg.C;
	struct ll_layer p;
	int rc = 0;

	ll_layer(ll, PW(params), l, &p);
	DO(attn_block_forward(ll, &p, l, residual, lo));
	for (int r0 = 0; r0 < BT && rc == 0; r0 += ll->mlp_rows)
		DO(mlp_rows_forward(ll, &p, l, r0, mlp_block(ll, r0), 1, lo));
	DO(ct_ocl_residual_forward(ll->lk.ops, layer_out(ll, l),
				   ct_dten_plus(ll->residual2, lc), ll->fcproj, n));
	return rc;
}

/* The output matrix: lm_head, or the embedding when tied. */
static struct ct_dten head(const struct ct_ocl_llama *ll, struct wsrc base)
{
	return LW(ll, base, (ll->cfg.flags & CT_LLAMA_TIED) ? CT_WTE : CT_WPE, 0);
}

/* Rows r0 .. r0 + n - 1 of the logits = lnf x head^T, into the logits
 * buffer from row 0. A float32 head runs in pieces of HEAD_PIECE floats
 * of logits (each row's chain whole, so the same bits): a long product's
 * k pieces park an accumulator per output, which for the whole head
 * would be a second logits-sized buffer (1002 MiB at Llama-3.2-1B's B=4
 * T=512). A compact head is widened 64 rows at a time and parks none.
 * CT_OCL_HEAD_ROWS=N: N rows a piece (tests). */
#define HEAD_PIECE ((size_t)1 << 25)
#define HEAD_HELD ((uint64_t)1 << 23)	/* floats of logits a frozen head holds */

static int head_rows_fwd(struct ct_ocl_llama *ll, const struct ct_dweights *params, int r0,
			 int n)
{
	const int C = ll->cfg.C, Vp = ll->cfg.Vp;
	struct ct_dten w = head(ll, PW(params)), none = { NULL, 0, 0 };
	long rows = w.fmt != CT_BASE_F32 ? n : (long)(HEAD_PIECE / (size_t)Vp);
	int rc = 0;

	rows = ct_opt_int(CT_OPT_OCL_HEAD_ROWS, rows < 1 ? 1 : rows);
	for (int k = 0; k < n && rc == 0; k += (int)rows)
		DO(ct_ocl_matmul_forward(ll->lk.ops, ct_dten_plus(ll->logits, (size_t)k * Vp),
					 ct_dten_plus(ll->lnf, (size_t)(r0 + k) * C), w, none, 0,
					 n - k < rows ? n - k : (int)rows, C, Vp));
	return rc;
}

/* Rows r0 .. r0 + n - 1 through the head and the softmax: their logits,
 * probabilities (over the logits) and losses. */
static int head_loss(struct ct_ocl_llama *ll, const struct ct_dweights *params,
		     cl_mem targets, int r0, int n)
{
	const struct ct_model_config *c = &ll->cfg;
	int rc = head_rows_fwd(ll, params, r0, n);

	DO(ct_ocl_crossentropy_forward(ll->lk.ops, ct_dten_plus(ll->losses, (size_t)r0), ll->logits,
				       ll->logits, targets, (size_t)r0, n, c->V, c->Vp));
	return rc;
}

int ct_ocl_llama_head_rows(const struct ct_model_config *cfg, int B, int T, int frozen)
{
	const long bt = (long)B * T;
	long r = (long)(HEAD_HELD / (size_t)cfg->Vp);

	if (!frozen)
		return (int)bt;
	/* whole panels of ct_mm (at most 64 wide): the transposed head
	 * product parks Vp x its rows padded to whole panels */
	if (r >= 64)
		r -= r % 64;
	if ((uint64_t)bt * cfg->Vp <= HEAD_HELD)
		r = bt;
	r = ct_opt_int(CT_OPT_OCL_HEAD_ROWS, r < 1 ? 1 : r);
	return (int)(r < bt ? r : bt);
}

int ct_ocl_llama_logits_row(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			    int pos)
{
	return head_rows_fwd(ll, params, pos, 1);
}

int ct_ocl_llama_forward(struct ct_ocl_llama *ll, const struct ct_dweights *params, cl_mem inputs,
			 cl_mem targets, struct ct_ocl_lora *lora)
{
	const struct ct_model_config *c = &ll->cfg;
	const int BT = ll->B * ll->T, C = c->C;
	struct ct_ocl_ops *o = ll->lk.ops;
	struct ct_dten last = layer_out(ll, c->L - 1);
	int rc = 0;

	if (LW(ll, PW(params), CT_WTE, 0).fmt != CT_BASE_F32)
		DO(ct_ocl_embed_forward_h(o, ll->encoded, inputs, LW(ll, PW(params), CT_WTE, 0),
					  BT, C));
	else
		DO(ct_ocl_embed_forward(&ll->lk, ll->encoded, inputs,
					LW(ll, PW(params), CT_WTE, 0), BT, C));
	for (int l = 0; l < c->L && rc == 0; l++) {
		DO(save_input(ll, l));
		DO(block_forward(ll, params, l, layer_in(ll, l), lora));
	}
	DO(ct_ocl_rmsnorm_forward(&ll->lk, ll->lnf, ll->lnf_rstd, last,
				  LW(ll, PW(params), CT_LNFW, 0), BT, C, (float)c->rms_eps));
	for (int r0 = 0; targets != NULL && r0 < BT && rc == 0; r0 += ll->head_rows)
		DO(head_loss(ll, params, targets, r0,
			     BT - r0 < ll->head_rows ? BT - r0 : ll->head_rows));
	return rc;
}

/* ct_ocl_matmul_backward, or with frozen weights (grads NULL) only its
 * input-gradient half. */
static int mm_bwd(struct ct_ocl_llama *ll, cl_mem grads, struct ct_dten dinp,
		  struct ct_dten dw, struct ct_dten dbias, struct ct_dten dout,
		  struct ct_dten inp, struct ct_dten w, int BT, int C, int OC)
{
	if (grads == NULL)
		return ct_ocl_matmul_dinp(ll->lk.ops, dinp, dout, w, BT, C, OC);
	return ct_ocl_matmul_backward(ll->lk.ops, dinp, dw, dbias, dbias.mem != NULL, dout,
				      inp, w, BT, C, OC);
}

/* The head's backward into dln: the gradient of the logits over the
 * probabilities in place, then through the head matrix (its gradient
 * too when grads). */
static int head_backward(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			 cl_mem grads, cl_mem targets)
{
	const struct ct_model_config *c = &ll->cfg;
	const int BT = ll->B * ll->T, C = c->C;
	struct ct_ocl_ops *o = ll->lk.ops;
	struct ct_dten dlogits = ll->logits, none = { NULL, 0, 0 };
	int rc = 0;

	DO(ct_ocl_crossentropy_backward(o, dlogits, ll->logits, targets, BT, c->V, c->Vp));
	DO(ct_ocl_zero(o, ll->dln, (size_t)BT * C));
	DO(mm_bwd(ll, grads, ll->dln, head(ll, GW(grads)), none, dlogits, ll->lnf,
		  head(ll, PW(params)), BT, C, c->Vp));
	return rc;
}

/* The same with a frozen head held head_rows rows at a time: each piece's
 * logits and softmax again (the forward's kernels on the same rows: the
 * same bits, the losses rewritten as they are), its gradient, and its
 * rows of dln (each row's chain whole). */
static int head_backward_rows(struct ct_ocl_llama *ll, const struct ct_dweights *params,
			      cl_mem targets)
{
	const struct ct_model_config *c = &ll->cfg;
	const int BT = ll->B * ll->T, C = c->C;
	struct ct_ocl_ops *o = ll->lk.ops;
	struct ct_dten dlogits = ll->logits;
	int rc = 0;

	DO(ct_ocl_zero(o, ll->dln, (size_t)BT * C));
	for (int r0 = 0; r0 < BT && rc == 0; r0 += ll->head_rows) {
		int n = BT - r0 < ll->head_rows ? BT - r0 : ll->head_rows;

		DO(head_loss(ll, params, targets, r0, n));
		DO(ct_ocl_crossentropy_backward_rows(o, dlogits, dlogits, targets, (size_t)r0, n,
						     BT, c->V, c->Vp));
		DO(ct_ocl_matmul_dinp(o, ct_dten_plus(ll->dln, (size_t)r0 * C), dlogits,
				      head(ll, PW(params)), n, C, c->Vp));
	}
	return rc;
}

/* The MLP's backward over rows r0 .. r0 + n - 1 (their gate/up and SwiGLU
 * in the MLP buffers, again first in a lean pass): dsw and dfch of those
 * rows, into those rows of dln. Every input gradient is per row; the
 * frozen pass's adapter gradients chain over the blocks in row order
 * (ct_ocl_lora_backward_rows), and a full pass's weight gradients only
 * ever see one block of all B*T rows. */
static int mlp_rows_backward(struct ct_ocl_llama *ll, cl_mem grads, int l, int r0, int n,
			     const struct ll_layer *p, const struct ll_layer *d,
			     struct ct_ocl_lora *lo)
{
	const int C = ll->cfg.C, F = ll->cfg.F;
	const size_t lm = slot(ll, l) * (size_t)ll->mlp_rows;
	struct ct_ocl_llk *lk = &ll->lk;
	struct ct_ocl_ops *o = lk->ops;
	struct ct_dten fch = ct_dten_plus(ll->fch, lm * 2 * F), sw = ct_dten_plus(ll->sw, lm * F);
	struct ct_dten dfcproj = ct_dten_plus(ll->dfcproj, (size_t)r0 * C);
	struct ct_dten dln = ct_dten_plus(ll->dln, (size_t)r0 * C);
	struct ct_dten ln2 = ln2_of(ll, l, r0), none = { NULL, 0, 0 };
	int rc = 0;

	if (ll->lean)	/* the same kernels on the same rows: the same bits */
		DO(mlp_rows_forward(ll, p, l, r0, n, 0, lo));
	DO(ct_ocl_zero(o, ll->dsw, (size_t)n * F));
	DO(mm_bwd(ll, grads, ll->dsw, d->fcprojw, none, dfcproj, sw, p->fcprojw, n, F, C));
	DO(ct_ocl_lora_backward_rows(lo, l, CT_LORA_FCPROJ, ll->dsw, dfcproj, sw, r0, n));
	DO(ct_ocl_zero(o, ll->dfch, (size_t)n * 2 * F));
	DO(ct_ocl_swiglu_backward(lk, ll->dfch, fch, ll->dsw, n, F));
	DO(mm_bwd(ll, grads, dln, d->fcw, none, ll->dfch, ln2, p->fcw, n, C, 2 * F));
	DO(ct_ocl_lora_backward_rows(lo, l, CT_LORA_FC, dln, ll->dfch, ln2, r0, n));
	return rc;
}

/* ct_llama_model.c's mlp_backward: dresidual into dresidual2. */
static int mlp_backward(struct ct_ocl_llama *ll, cl_mem grads, int l, const struct ll_layer *p,
			const struct ll_layer *d, struct ct_ocl_lora *lo)
{
	const int BT = ll->B * ll->T, C = ll->cfg.C;
	const size_t lc = slot(ll, l) * BT * C, lt = slot(ll, l) * BT, n = (size_t)BT * C;
	struct ct_ocl_llk *lk = &ll->lk;
	struct ct_ocl_ops *o = lk->ops;
	int rc = 0;

	DO(ct_ocl_zero(o, ll->dresidual2, n));
	DO(ct_ocl_zero(o, ll->dfcproj, n));
	DO(ct_ocl_residual_backward(o, ll->dresidual2, ll->dfcproj,
				    ll->dresidual, n));
	DO(ct_ocl_zero(o, ll->dln, n));
	for (int r0 = 0; r0 < BT && rc == 0; r0 += ll->mlp_rows)
		DO(mlp_rows_backward(ll, grads, l, r0, mlp_block(ll, r0), p, d, lo));
	DO(ct_ocl_rmsnorm_backward(lk, ll->dresidual2, d->ln2w, ll->dln,
				   ct_dten_plus(ll->residual2, lc), p->ln2w, ct_dten_plus(ll->ln2_rstd, lt), BT, C));
	return rc;
}

/* Attention backward of layer l (ct_ocl_gqa_backward), as attn_forward
 * one batch row at a time in a lean pass. */
static int attn_backward(struct ct_ocl_llama *ll, struct ct_dten qkv, struct ct_dten stat)
{
	const struct ct_model_config *c = &ll->cfg;
	const int nb = ll->lean ? ll->B : 1, b1 = ll->B / nb, T = ll->T;
	int rc = 0;

	for (int b = 0; b < nb && rc == 0; b++) {
		const size_t r = (size_t)b * b1 * T;

		DO(ct_ocl_gqa_backward(&ll->lk, ct_dten_plus(ll->dqkv, r * ll->QKV),
				       ct_dten_plus(ll->datt, r * c->NH), ct_dten_plus(ll->datty, r * ll->A),
				       ct_dten_plus(qkv, r * ll->QKV),
				       ct_dten_plus(stat, r * c->NH * 2), ll->x3,
				       ll->dx3, b1, T, c->NH, c->KVH, ll->hd));
	}
	return rc;
}

/* ct_llama_model.c's block_backward: dresidual (gradient of residual3[l])
 * into dresidual_in (that of `residual`). In lean mode the layer's forward
 * runs again first, from its kept input, up to ln2 (the MLP's again block
 * by block in mlp_rows_backward): the same kernels on the same values, so
 * the very activations the forward pass had (LoRA's rank-r rows are
 * rewritten with the bits they hold). */
static int block_backward(struct ct_ocl_llama *ll, const struct ct_dweights *params, cl_mem grads, int l,
			  struct ct_dten residual, struct ct_ocl_lora *lo)
{
	const struct ct_model_config *c = &ll->cfg;
	const int B = ll->B, T = ll->T, C = c->C, BT = B * T, hs = ll->hd;
	const size_t lc = slot(ll, l) * BT * C, lt = slot(ll, l) * BT, n = (size_t)BT * C;
	struct ct_ocl_llk *lk = &ll->lk;
	struct ct_ocl_ops *o = lk->ops;
	struct ct_dten qkv = ct_dten_plus(ll->qkv, lt * ll->QKV);
	struct ct_dten atty = ct_dten_plus(ll->atty, lt * ll->A);
	struct ct_dten ln1 = ct_dten_plus(ll->ln1, lc), none = { NULL, 0, 0 };
	struct ll_layer p, d;
	int rc = 0;

	ll_layer(ll, PW(params), l, &p);
	ll_layer(ll, GW(grads), l, &d);	/* NULL buffers when frozen */
	if (ll->lean)
		DO(attn_block_forward(ll, &p, l, residual, lo));
	DO(ct_ocl_zero(o, ll->dresidual_in, n));
	DO(mlp_backward(ll, grads, l, &p, &d, lo));
	DO(ct_ocl_zero(o, ll->dattproj, n));
	DO(ct_ocl_residual_backward(o, ll->dresidual_in, ll->dattproj,
				    ll->dresidual2, n));
	DO(ct_ocl_zero(o, ll->datty, (size_t)BT * ll->A));
	DO(mm_bwd(ll, grads, ll->datty, d.attprojw, none, ll->dattproj, atty,
		  p.attprojw, BT, ll->A, C));
	DO(ct_ocl_lora_backward(lo, l, CT_LORA_ATTPROJ, ll->datty, ll->dattproj,
				atty));
	DO(ct_ocl_zero(o, ll->dqkv, (size_t)BT * ll->QKV));
	DO(attn_backward(ll, qkv, ct_dten_plus(ll->att, lt * c->NH * 2)));
	DO(ct_ocl_rope(lk, ll->dqkv, ll->rope, BT, T, c->NH, c->KVH, hs, -1));
	if (p.qkn.mem != NULL)
		DO(ct_ocl_qknorm_backward(lk, ll->dqkv, d.qkn, ct_dten_plus(ll->qkvr, lt * ll->QKV),
					  p.qkn, ct_dten_plus(ll->qkn_rstd, lt * (c->NH + c->KVH)), BT,
					  c->NH, c->KVH, hs));
	DO(ct_ocl_zero(o, ll->dln, n));
	DO(mm_bwd(ll, grads, ll->dln, d.qkvw, d.qkvb, ll->dqkv, ln1, p.qkvw,
		  BT, C, ll->QKV));
	DO(ct_ocl_lora_backward(lo, l, CT_LORA_QKV, ll->dln, ll->dqkv, ln1));
	DO(ct_ocl_rmsnorm_backward(lk, ll->dresidual_in, d.ln1w, ll->dln, residual,
				   p.ln1w, ct_dten_plus(ll->ln1_rstd, lt), BT, C));
	return rc;
}

int ct_ocl_llama_backward(struct ct_ocl_llama *ll, const struct ct_dweights *params, cl_mem grads,
			  cl_mem inputs, cl_mem targets, struct ct_ocl_lora *lora)
{
	const struct ct_model_config *c = &ll->cfg;
	const int BT = ll->B * ll->T, C = c->C;
	const size_t n = (size_t)BT * C;
	struct ct_ocl_ops *o = ll->lk.ops;
	struct ct_dten none = { NULL, 0, 0 };
	struct ct_dten dlnfw = grads ? D(grads, ll->lay.offset[CT_LNFW]) : none;
	int rc = 0;

	if (ll->head_rows < BT)
		DO(head_backward_rows(ll, params, targets));
	else
		DO(head_backward(ll, params, grads, targets));
	DO(ct_ocl_zero(o, ll->dresidual, n));
	DO(ct_ocl_rmsnorm_backward(&ll->lk, ll->dresidual, dlnfw, ll->dln,
				   layer_out(ll, c->L - 1),
				   LW(ll, PW(params), CT_LNFW, 0), ll->lnf_rstd, BT, C));
	for (int l = c->L - 1; l >= 0 && rc == 0; l--) {
		struct ct_dten tmp;

		DO(restore_input(ll, l));
		DO(block_backward(ll, params, grads, l, layer_in(ll, l), lora));
		tmp = ll->dresidual;
		ll->dresidual = ll->dresidual_in;
		ll->dresidual_in = tmp;
	}
	if (grads == NULL)		/* frozen embeddings (LoRA) */
		return rc;
	DO(ct_ocl_embed_backward(&ll->lk, D(grads, ll->lay.offset[CT_WTE]), ll->dresidual,
				 inputs, BT, C));
	return rc;
}
