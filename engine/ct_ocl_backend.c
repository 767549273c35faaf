/*
 * ct_ocl_backend.c - the "opencl" backend of the work-unit engine
 * (struct ct_backend_ops of ct_engine.h): GPT-2 forward, backward, gradient
 * clipping and AdamW on an OpenCL device, bit-identical to the C reference
 * of ct_model.c.
 *
 * This file mirrors ct_model.c call for call (same layers, same order, same
 * zeroing of the gradient scratch), with each ct_* layer replaced by its
 * ct_ocl_* twin from ct_ocl_ops.c. Everything stays on the device for the
 * whole work unit: weights, gradients, AdamW m and v, activations and
 * gradient scratch. Per step the host uploads the batch's tokens and reads
 * back the B*T losses (the mean over the trained rows is computed on the
 * host with ct_masked_mean_loss, the reference's own function); the weights and moments come back only
 * when the engine asks (read_state, for a checkpoint or the result).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ct_engine.h"
#include "ct_llama.h"
#include "ct_model_ops.h"
#include "ct_lora_model.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_ocl.h"
#include "ct_ocl_ops.h"
#include "ct_ocl_lora.h"
#include "ct_ocl_llama.h"
#include "ct_ocl_weights.h"

/* Device twins of struct ct_acts / ct_grad_acts, one buffer per field
 * (att: the attention rows' max and sum; datt: the rows' dot, B*NH*T). */
#define CT_ACT_FIELDS(X) \
	X(encoded) X(ln1) X(ln1_mean) X(ln1_rstd) X(qkv) X(atty) X(att) \
	X(attproj) X(residual2) X(ln2) X(ln2_mean) X(ln2_rstd) X(fch) \
	X(fch_gelu) X(fcproj) X(residual3) X(lnf) X(lnf_mean) X(lnf_rstd) \
	X(logits) X(probs) X(losses)
#define CT_GACT_FIELDS(X) \
	X(dlogits) X(dresidual) X(dresidual_in) X(dresidual2) X(dln) X(datty) \
	X(dattproj) X(dfcproj) X(dqkv) X(datt) X(dfch) X(dfch_gelu)

struct dacts {
#define CT_FIELD_(f) cl_mem f;
	CT_ACT_FIELDS(CT_FIELD_)
};
struct dgacts {
	CT_GACT_FIELDS(CT_FIELD_)
#undef CT_FIELD_
};

struct ct_backend {
	struct ct_ocl *ocl;
	struct ct_ocl_ops ops;
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	int B, T, training;
	int lean;			/* ln1, qkv, ln2 for one layer, recomputed in backward */
	int nl;				/* layers of per-layer activations kept: L, or 1 when
					 * only evaluating (see layer_slot) */
	int head_rows;			/* rows of logits held at once (head_chunked) */
	/* The weights: in one buffer (w.one), but a Llama LoRA backend's
	 * frozen base in per-layer pieces (ct_ocl_weights.h). On a compact
	 * base (w.bl.fmt != CT_BASE_F32) they are the image of ct_base.h as
	 * it is. */
	struct ct_dweights w;
	cl_mem grads, m, v;
	cl_mem inputs, targets;		/* ct_tok (B*T) */
	struct dacts a;
	struct dgacts g;
	float *losses;			/* host copy (B*T) */
	struct ct_ocl_lora *lora;	/* LoRA: frozen weights (grads, m, v NULL) */
	struct ct_ocl_llama *llama;	/* arch Llama: its activations (be->a, be->g unused) */
	/* Sampling (B = 1, eval only): the activations of rows 0..kv_rows-1
	 * were computed for the tokens kv_tok (kv_rows tokens of kv_size
	 * bytes each) with the weights loaded now; 0 after anything else
	 * ran (ocl_logits_rows). */
	int kv_rows;
	size_t kv_size;
	unsigned char *kv_tok;
};

/* Views of layer l's parameter tensors in a params-shaped buffer. */
struct dlayer {
	struct ct_dten ln1w, ln1b, qkvw, qkvb, attprojw, attprojb;
	struct ct_dten ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
};

/* Tensor t of base (params or grads) from element e on; params of a
 * compact base through its image layout. */
static struct ct_dten PE(const struct ct_backend *be, cl_mem base, int t, size_t e)
{
	return ct_dten_param(base, &be->lay, base == be->w.one ? &be->w.bl : NULL, t, e);
}

static void dlayer(const struct ct_backend *be, cl_mem base, int l, struct dlayer *p)
{
	const size_t C = (size_t)be->cfg.C;

	p->ln1w = PE(be, base, CT_LN1W, l * C);
	p->ln1b = PE(be, base, CT_LN1B, l * C);
	p->qkvw = PE(be, base, CT_QKVW, l * 3 * C * C);
	p->qkvb = PE(be, base, CT_QKVB, l * 3 * C);
	p->attprojw = PE(be, base, CT_ATTPROJW, l * C * C);
	p->attprojb = PE(be, base, CT_ATTPROJB, l * C);
	p->ln2w = PE(be, base, CT_LN2W, l * C);
	p->ln2b = PE(be, base, CT_LN2B, l * C);
	p->fcw = PE(be, base, CT_FCW, l * 4 * C * C);
	p->fcb = PE(be, base, CT_FCB, l * 4 * C);
	p->fcprojw = PE(be, base, CT_FCPROJW, l * 4 * C * C);
	p->fcprojb = PE(be, base, CT_FCPROJB, l * C);
}

static struct ct_dten P(const struct ct_backend *be, cl_mem base, int tensor)
{
	return PE(be, base, tensor, 0);
}

static struct ct_dten D(cl_mem m, size_t off)
{
	return ct_dten_at(m, off);
}

/* Memory savers (bit-neutral, OpenCL backend only): attproj, fch_gelu and
 * fcproj are kept for the current layer only (backward needs none of them
 * but fch_gelu, which it recomputes with the same kernel); in lean mode
 * (big batches) ln1, qkv and ln2 too (recompute_lean); unless training
 * LoRA adapters, the probabilities overwrite the logits and dlogits the
 * probabilities (every one of those kernels is elementwise; ocl_logits
 * stops before them). */
static cl_mem probs_buf(const struct ct_backend *be)
{
	return be->a.probs != NULL ? be->a.probs : be->a.logits;
}

/* The activation slot of layer l. A backend that only evaluates (no
 * training, no LoRA) keeps one layer's activations and reuses them layer
 * after layer (block l reads its input from the slot and writes its
 * output back over it last: the same kernels on the same values, so the
 * same bits), which at 124M B=4 T=256 is ~415 MiB less; sampling's kept
 * rows need every layer's, so the first ct_ocl_logits_rows grows them to
 * L (all_layers). */
static size_t layer_slot(const struct ct_backend *be, int l)
{
	return be->nl == 1 ? 0 : (size_t)l;
}

/* ---- open / close ---------------------------------------------------------- */

static int alloc_f(struct ct_backend *be, cl_mem *m, size_t floats)
{
	return ct_ocl_alloc(be->ocl, (floats ? floats : 1) * sizeof(float),
			    CL_MEM_READ_WRITE, m);
}

/* The per-layer activations, be->nl layers of them. */
static int alloc_layer_acts(struct ct_backend *be)
{
	const size_t L = be->nl, B = be->B, T = be->T, C = be->cfg.C;
	const size_t NH = be->cfg.NH, BT = B * T;
	const size_t Ll = be->lean ? 1 : L;
	int rc = 0;

#define A_(f, n) if (rc == 0) rc = alloc_f(be, &be->a.f, (n))
	A_(ln1, Ll * BT * C); A_(ln1_mean, L * BT); A_(ln1_rstd, L * BT);
	A_(qkv, Ll * BT * 3 * C); A_(atty, L * BT * C); A_(att, L * B * NH * T * 2);
	A_(residual2, L * BT * C); A_(ln2, Ll * BT * C); A_(ln2_mean, L * BT);
	A_(ln2_rstd, L * BT); A_(fch, L * BT * 4 * C); A_(residual3, L * BT * C);
	return rc;
}

/* Grow a one-layer backend's per-layer activations to every layer
 * (layer_slot); their contents are dropped. */
static int all_layers(struct ct_backend *be)
{
	if (be->nl == be->cfg.L || be->llama != NULL)
		return 0;
	be->kv_rows = 0;
	CT_OCL_UNREF_ALL(&be->a.ln1, &be->a.ln1_mean, &be->a.ln1_rstd, &be->a.qkv,
			 &be->a.atty, &be->a.att, &be->a.residual2, &be->a.ln2,
			 &be->a.ln2_mean, &be->a.ln2_rstd, &be->a.fch, &be->a.residual3);
	be->nl = be->cfg.L;
	return alloc_layer_acts(be);
}

/* Rows of logits an evaluating backend holds at once: about 32 MiB of
 * them (160 rows at GPT-2's vocabulary, so 124M at B=4 T=256 holds 31 MiB
 * instead of 206), all of B*T when that is less; CT_OCL_HEAD_ROWS=N
 * forces N (tests). Each row's logits, probabilities and loss are the
 * same whatever rows are computed beside it. */
static int eval_head_rows(const struct ct_backend *be)
{
	long bt = (long)be->B * be->T;
	long r = ct_opt_int(CT_OPT_OCL_HEAD_ROWS, ((long)8 << 20) / be->cfg.Vp);

	r = r < 1 ? 1 : r;
	return (int)(r < bt ? r : bt);
}

static int alloc_acts(struct ct_backend *be)
{
	const size_t B = be->B, T = be->T, C = be->cfg.C;
	const size_t NH = be->cfg.NH, Vp = be->cfg.Vp, BT = B * T;
	int rc;

	be->nl = be->training || be->lora != NULL ? be->cfg.L : 1;
	be->head_rows = be->nl == 1 ? eval_head_rows(be) : (int)BT;
	rc = alloc_layer_acts(be);
#define A_(f, n) if (rc == 0) rc = alloc_f(be, &be->a.f, (n))
	A_(encoded, BT * C); A_(attproj, BT * C); A_(fch_gelu, BT * 4 * C);
	A_(fcproj, BT * C); A_(lnf, BT * C);
	A_(lnf_mean, BT); A_(lnf_rstd, BT); A_(logits, (size_t)be->head_rows * Vp);
	A_(losses, BT);
	if (be->lora != NULL)	/* else the probs overwrite the logits in place */
		A_(probs, BT * Vp);
#undef A_
	if (rc < 0 || (!be->training && be->lora == NULL))
		return rc;
#define G_(f, n) if (rc == 0) rc = alloc_f(be, &be->g.f, (n))
	/* dlogits overwrite the probs in place (see probs_buf) */
	G_(dresidual, BT * C); G_(dresidual_in, BT * C);
	G_(dresidual2, BT * C); G_(dln, BT * C); G_(datty, BT * C);
	G_(dattproj, BT * C); G_(dfcproj, BT * C); G_(dqkv, BT * 3 * C);
	G_(datt, B * NH * T); G_(dfch, BT * 4 * C); G_(dfch_gelu, BT * 4 * C);
#undef G_
	return rc;
}

static void ocl_close(struct ct_backend *be)
{
	if (be == NULL)
		return;
	if (be->ocl != NULL)
		clFinish(be->ocl->queue);
#define R_(f) ct_ocl_unref(&be->a.f);
	CT_ACT_FIELDS(R_)
#undef R_
#define R_(f) ct_ocl_unref(&be->g.f);
	CT_GACT_FIELDS(R_)
#undef R_
	ct_dweights_free(&be->w);
	CT_OCL_UNREF_ALL(&be->grads, &be->m, &be->v, &be->inputs, &be->targets);
	ct_ocl_lora_close(be->lora);
	ct_ocl_llama_close(be->llama);
	ct_ocl_ops_free(&be->ops);
	ct_ocl_close(be->ocl);
	free(be->losses);
	free(be->kv_tok);
	free(be);
}

/* Refuse at open a model whose weights as stored (and, training,
 * gradients and two AdamW moments) alone exceed the device's memory: some drivers (NVIDIA's)
 * create buffers lazily, so an oversized model would otherwise fail at its
 * first kernel instead of here. */
static int check_fits(const struct ct_backend *be, size_t n)
{
	uint64_t need = ct_dweights_bytes(&be->w, NULL) +
			(be->training ? 3 * (uint64_t)n * sizeof(float) : 0);
	uint64_t have = be->ocl->info.global_mem;

	if (have != 0 && need > have)
		return ct_error(CT_EDEVNOMEM, "the model needs %llu bytes of device memory "
				"before activations; %s has %llu bytes", (unsigned long long)need,
				be->ocl->info.name, (unsigned long long)have);
	return 0;
}

/* The largest packed matmul operand of a B x T step (floats): the bound
 * that ct_ocl_wu_bytes counts for ops->scratch (scratch_floats). */
static uint64_t pack_floats(const struct ct_model_config *c, int B, int T);

/* The row block of a weight gradient's dout^T (floats, ops.tr_max). */
static uint64_t tr_floats(const struct ct_model_config *c, int B, int T);

/* Whether cfg's family runs its passes through ct_ocl_llama.c (and
 * keeps a LoRA base in pieces): its row says so. */
static int llama_pass(const struct ct_model_config *cfg)
{
	return (ct_model_ops_for(cfg)->flags & CT_MODEL_OCL_LLAMA_PASS) != 0;
}

/* The Llama pass's flags (ct_ocl_llama.h): a training or LoRA backend
 * has the backward scratch and runs lean by ct_ocl_llama_lean
 * (CT_OCL_LEAN=0|1 forcing: tests); LoRA's weights are frozen. */
static int pass_flags(const struct ct_model_config *cfg, int B, int T, int training, int lora)
{
	int lean = ct_ocl_llama_lean(cfg, B, T);

	if (!training && !lora)
		return 0;
	lean = (int)ct_opt_int(CT_OPT_OCL_LEAN, lean);
	return CT_OCL_LL_GRADS | (lean ? CT_OCL_LL_LEAN : 0) | (lora ? CT_OCL_LL_FROZEN : 0);
}

static int llama_flags(const struct ct_backend *be, int lora)
{
	return pass_flags(&be->cfg, be->B, be->T, be->training, lora);
}

static int ocl_open_common(const char *device, const struct ct_model_config *cfg,
			   int B, int T, int training, const struct ct_lora_spec *spec,
			   struct ct_backend **out)
{
	struct ct_backend *be;
	size_t n;
	int rc;

	*out = NULL;
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	if (B < 1 || T < 1 || T > cfg->maxT || (size_t)B * T > (size_t)1 << 30)
		return ct_error(CT_EINVAL, "batch %d x %d: need B >= 1 and 1 <= T <= maxT (%d)",
				B, T, cfg->maxT);
	be = calloc(1, sizeof(*be));
	if (be == NULL)
		return ct_error(CT_ENOMEM, "opencl backend");
	be->cfg = *cfg;
	ct_gpt2_layout(cfg, &be->lay);
	be->B = B;
	be->T = T;
	be->training = training != 0;
	/* lean when the logits alone pass 256 MiB (124M at B*T >= 1334);
	 * CT_OCL_LEAN=0|1 forces (tests) */
	be->lean = be->training && (size_t)B * T * cfg->Vp > ((size_t)64 << 20);
	if (be->training)
		be->lean = (int)ct_opt_int(CT_OPT_OCL_LEAN, be->lean);
	n = be->lay.total;
	be->losses = malloc((size_t)B * T * sizeof(float));
	rc = be->losses == NULL ? ct_error(CT_ENOMEM, "loss buffer") : 0;
	if (rc == 0)
		rc = ct_ocl_open(device, NULL, &be->ocl);
	if (rc == 0)
		rc = ct_ocl_ops_init(&be->ops, be->ocl);
	/* GPT-2's products may pack a weight with contiguous rows, within the
	 * scratch's bound (ct_ocl_ops.h) */
	if (rc == 0 && !llama_pass(cfg)) {
		be->ops.pack_max = (size_t)pack_floats(cfg, B, T);
		be->ops.tr_max = (size_t)tr_floats(cfg, B, T);
	}
	/* a Llama LoRA base in pieces; any other weights in one buffer */
	ct_dweights_plan(&be->w, cfg, spec != NULL ? spec->base_fmt : CT_BASE_F32,
			 spec != NULL && llama_pass(cfg));
	if (rc == 0)
		rc = check_fits(be, n);
	if (rc == 0 && spec != NULL)	/* the adapters' MLP rows are the Llama pass's */
		rc = ct_ocl_lora_open(&be->ops, cfg, spec, B * T,
				      llama_pass(cfg) ? ct_ocl_llama_mlp_rows(cfg, B, T,
									      llama_flags(be, 1))
						      : B * T, &be->lora);
	if (rc == 0)
		rc = ct_dweights_alloc(&be->w, be->ocl, spec != NULL);
	if (rc == 0 && be->training)
		rc = alloc_f(be, &be->grads, n);
	if (rc == 0 && be->training)
		rc = alloc_f(be, &be->m, n);
	if (rc == 0 && be->training)
		rc = alloc_f(be, &be->v, n);
	if (rc == 0)
		rc = ct_ocl_alloc(be->ocl, (size_t)B * T * sizeof(ct_tok), CL_MEM_READ_ONLY, &be->inputs);
	if (rc == 0)
		rc = ct_ocl_alloc(be->ocl, (size_t)B * T * sizeof(ct_tok), CL_MEM_READ_ONLY, &be->targets);
	if (rc == 0 && llama_pass(cfg))
		rc = ct_ocl_llama_open(&be->ops, cfg, B, T, llama_flags(be, spec != NULL),
				       &be->llama);
	if (rc == 0 && be->llama == NULL)
		rc = alloc_acts(be);
	if (rc < 0) {
		ocl_close(be);
		return rc;
	}
	*out = be;
	return 0;
}

static int ocl_open(const char *device, const struct ct_model_config *cfg,
		    int B, int T, int training, struct ct_backend **out)
{
	return ocl_open_common(device, cfg, B, T, training, NULL, out);
}

/* LoRA: training == 0 for the base weights (no grads, m, v), the adapter
 * state in be->lora, the gradient scratch as for training. */
static int ocl_open_lora(const char *device, const struct ct_model_config *cfg,
			 int B, int T, const struct ct_lora_spec *spec,
			 struct ct_backend **out)
{
	return ocl_open_common(device, cfg, B, T, 0, spec, out);
}

static int ocl_lora_load(struct ct_backend *be, const float *adapters,
			 const float *m, const float *v)
{
	if (be->lora == NULL)
		return ct_error(CT_ESTATE, "opencl backend opened without LoRA");
	return ct_ocl_lora_load(be->lora, adapters, m, v);
}

static int ocl_lora_read(struct ct_backend *be, float *adapters, float *m, float *v)
{
	if (be->lora == NULL)
		return ct_error(CT_ESTATE, "opencl backend opened without LoRA");
	return ct_ocl_lora_read(be->lora, adapters, m, v);
}

/* ---- state ----------------------------------------------------------------- */

static int ocl_load_state(struct ct_backend *be, const float *params,
			  const float *m, const float *v)
{
	size_t n = be->lay.total;
	int rc;

	if (be->w.bl.fmt != CT_BASE_F32)
		return ct_error(CT_ESTATE, "opencl backend: opened for a %s base (load_base)",
				ct_base_fmt_name(be->w.bl.fmt));
	be->kv_rows = 0;	/* other weights: no row computed with them */
	rc = ct_dweights_io(&be->w, be->ocl, 0, (void *)(uintptr_t)params, n * sizeof(float), 1);
	if (rc < 0 || !be->training)
		return rc;
	rc = m ? ct_ocl_write(&be->ops, D(be->m, 0), m, n) : ct_ocl_zero(&be->ops, D(be->m, 0), n);
	if (rc == 0)
		rc = v ? ct_ocl_write(&be->ops, D(be->v, 0), v, n)
		       : ct_ocl_zero(&be->ops, D(be->v, 0), n);
	if (rc == 0)
		rc = ct_ocl_check(clFinish(be->ocl->queue), "clFinish");
	return rc;
}

/* The compact base image, as it is, into be->w.one. */
static int ocl_load_base(struct ct_backend *be, int fmt, const unsigned char *img,
			 size_t bytes)
{
	if (be->w.bl.fmt == CT_BASE_F32 || fmt != be->w.bl.fmt || bytes != be->w.bl.bytes)
		return ct_error(CT_EINVAL, "opencl backend: a %s base of %zu bytes for one "
				"opened for %s (%zu bytes)", ct_base_fmt_name(fmt), bytes,
				ct_base_fmt_name(be->w.bl.fmt), be->w.bl.bytes);
	be->kv_rows = 0;
	return ct_dweights_io(&be->w, be->ocl, 0, (void *)(uintptr_t)img, bytes, 1);
}

static int ocl_load_range(struct ct_backend *be, size_t off, const float *params, size_t n)
{
	if (be->w.bl.fmt != CT_BASE_F32)
		return ct_error(CT_ESTATE, "opencl backend: the compact base is frozen");
	if (off > be->lay.total || n > be->lay.total - off)
		return ct_error(CT_EINVAL, "weights %zu..%zu of %zu", off, off + n, be->lay.total);
	be->kv_rows = 0;
	return ct_dweights_io(&be->w, be->ocl, off * sizeof(float), (void *)(uintptr_t)params,
			      n * sizeof(float), 1);
}

static int ocl_read_state(struct ct_backend *be, float *params, float *m, float *v)
{
	size_t n = be->lay.total;
	int rc = 0;

	if ((m != NULL || v != NULL) && !be->training)
		return ct_error(CT_ESTATE, "backend opened for evaluation has no AdamW state");
	if (params != NULL && be->w.bl.fmt != CT_BASE_F32)
		return ct_error(CT_ESTATE, "opencl backend: the compact base is read where it "
				"is kept (ct_base_widen)");
	if (params != NULL)
		rc = ct_dweights_io(&be->w, be->ocl, 0, params, n * sizeof(float), 0);
	if (rc == 0 && m != NULL)
		rc = ct_ocl_read(&be->ops, m, D(be->m, 0), n);
	if (rc == 0 && v != NULL)
		rc = ct_ocl_read(&be->ops, v, D(be->v, 0), n);
	return rc;
}

static int ocl_read_grads(struct ct_backend *be, float *grads)
{
	if (!be->training)
		return ct_error(CT_ESTATE, "backend opened for evaluation has no gradients");
	return ct_ocl_read(&be->ops, grads, D(be->grads, 0), be->lay.total);
}

/* ---- forward ----------------------------------------------------------------- */

/* Chain launches: after the first failure the rest are skipped. */
#define DO(call) do { if (rc == 0) rc = (call); } while (0)

/* Forward through block l from `residual` into residual3[l]
 * (ct_model.c's block_forward). */
static int block_forward(struct ct_backend *be, int l, struct ct_dten residual)
{
	const int B = be->B, T = be->T, C = be->cfg.C, NH = be->cfg.NH, BT = B * T;
	const size_t ls = layer_slot(be, l);
	const size_t lc = ls * BT * C, lt = ls * BT, n = (size_t)BT * C;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct dlayer p;
	const size_t ll = be->lean ? 0 : lc;	/* ln1, qkv, ln2 of this layer */
	int rc = 0;

	dlayer(be, be->w.one, l, &p);
	DO(ct_ocl_layernorm_forward(o, D(a->ln1, ll), D(a->ln1_mean, lt), D(a->ln1_rstd, lt),
				    residual, p.ln1w, p.ln1b, BT, C));
	DO(ct_ocl_matmul_forward(o, D(a->qkv, 3 * ll), D(a->ln1, ll), p.qkvw, p.qkvb, 1,
				 BT, C, 3 * C));
	DO(ct_ocl_lora_forward(be->lora, l, CT_LORA_QKV, D(a->qkv, 3 * ll), D(a->ln1, ll)));
	DO(ct_ocl_attention_forward_recompute(o, D(a->atty, lc),
					      D(a->att, ls * B * NH * T * 2),
					      D(a->qkv, 3 * ll), B, T, C, NH));
	DO(ct_ocl_matmul_forward(o, D(a->attproj, 0), D(a->atty, lc), p.attprojw,
				 p.attprojb, 1, BT, C, C));
	DO(ct_ocl_lora_forward(be->lora, l, CT_LORA_ATTPROJ, D(a->attproj, 0), D(a->atty, lc)));
	DO(ct_ocl_residual_forward(o, D(a->residual2, lc), residual, D(a->attproj, 0), n));
	DO(ct_ocl_layernorm_forward(o, D(a->ln2, ll), D(a->ln2_mean, lt), D(a->ln2_rstd, lt),
				    D(a->residual2, lc), p.ln2w, p.ln2b, BT, C));
	DO(ct_ocl_matmul_forward(o, D(a->fch, 4 * lc), D(a->ln2, ll), p.fcw, p.fcb, 1,
				 BT, C, 4 * C));
	DO(ct_ocl_lora_forward(be->lora, l, CT_LORA_FC, D(a->fch, 4 * lc), D(a->ln2, ll)));
	DO(ct_ocl_gelu_forward(o, D(a->fch_gelu, 0), D(a->fch, 4 * lc), 4 * n));
	DO(ct_ocl_matmul_forward(o, D(a->fcproj, 0), D(a->fch_gelu, 0), p.fcprojw,
				 p.fcprojb, 1, BT, 4 * C, C));
	DO(ct_ocl_lora_forward(be->lora, l, CT_LORA_FCPROJ, D(a->fcproj, 0),
			       D(a->fch_gelu, 0)));
	DO(ct_ocl_residual_forward(o, D(a->residual3, lc), D(a->residual2, lc),
				   D(a->fcproj, 0), n));
	return rc;
}

/* The head of an evaluating backend, head_rows rows at a time: each
 * chunk's logits (rows r0.., the matmul's per-row chains), then its
 * softmax and losses in place; losses (B*T) as forward() leaves them. */
static int head_chunked(struct ct_backend *be)
{
	const struct ct_model_config *c = &be->cfg;
	const int BT = be->B * be->T;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct ct_dten none = { NULL, 0, 0 };
	int rc = 0;

	for (int r0 = 0; r0 < BT && rc == 0; r0 += be->head_rows) {
		int n = BT - r0 < be->head_rows ? BT - r0 : be->head_rows;

		DO(ct_ocl_matmul_forward(o, D(a->logits, 0), D(a->lnf, (size_t)r0 * c->C),
					 P(be, be->w.one, CT_WTE), none, 0, n, c->C, c->Vp));
		DO(ct_ocl_crossentropy_forward(o, D(a->losses, (size_t)r0), D(probs_buf(be), 0),
					       D(a->logits, 0), be->targets, (size_t)r0, n, c->V,
					       c->Vp));
	}
	return rc;
}

/* Upload the tokens and run the forward pass up to the losses
 * (ct_model_forward); with loss 0 up to the final layernorm only (GPT-2;
 * ocl_logits runs the head for the row it wants). */
static int forward(struct ct_backend *be, const ct_tok *inputs, const ct_tok *targets,
		   int loss)
{
	const struct ct_model_config *c = &be->cfg;
	const int BT = be->B * be->T;
	const size_t n = (size_t)BT * c->C;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct ct_dten none = { NULL, 0, 0 };
	int rc = 0;

	be->kv_rows = 0;	/* the activations are overwritten */
	DO(ct_ocl_check(clEnqueueWriteBuffer(be->ocl->queue, be->inputs, CL_TRUE, 0,
					     (size_t)BT * sizeof(ct_tok), inputs, 0, NULL, NULL),
			"upload inputs"));
	DO(ct_ocl_check(clEnqueueWriteBuffer(be->ocl->queue, be->targets, CL_TRUE, 0,
					     (size_t)BT * sizeof(ct_tok), targets, 0, NULL, NULL),
			"upload targets"));
	if (be->llama != NULL) {
		DO(ct_ocl_llama_forward(be->llama, &be->w, be->inputs,
					loss ? be->targets : NULL, be->lora));
		return rc;
	}
	DO(ct_ocl_encoder_forward(o, D(a->encoded, 0), be->inputs, P(be, be->w.one, CT_WTE),
				  P(be, be->w.one, CT_WPE), be->B, be->T, c->C));
	for (int l = 0; l < c->L && rc == 0; l++)
		DO(block_forward(be, l, l == 0 ? D(a->encoded, 0)
					       : D(a->residual3, layer_slot(be, l - 1) * n)));
	DO(ct_ocl_layernorm_forward(o, D(a->lnf, 0), D(a->lnf_mean, 0), D(a->lnf_rstd, 0),
				    D(a->residual3, layer_slot(be, c->L - 1) * n),
				    P(be, be->w.one, CT_LNFW), P(be, be->w.one, CT_LNFB),
				    BT, c->C));
	if (!loss)
		return rc;
	if (be->head_rows < BT)
		return rc < 0 ? rc : head_chunked(be);
	DO(ct_ocl_matmul_forward(o, D(a->logits, 0), D(a->lnf, 0), P(be, be->w.one, CT_WTE),
				 none, 0, BT, c->C, c->Vp));
	DO(ct_ocl_crossentropy_forward(o, D(a->losses, 0), D(probs_buf(be), 0),
				       D(a->logits, 0), be->targets, 0, BT, c->V, c->Vp));
	return rc;
}

/* Read the losses back and average them exactly as the reference does
 * (over the rows targets marks trained). */
static int mean_loss(struct ct_backend *be, const ct_tok *targets, float *loss)
{
	int BT = be->B * be->T;
	int rc;

	rc = ct_ocl_read(&be->ops, be->losses, be->llama ? ct_ocl_llama_losses(be->llama)
							: D(be->a.losses, 0), (size_t)BT);
	if (rc == 0)
		*loss = ct_masked_mean_loss(be->losses, targets, BT);
	return rc;
}

static int ocl_eval(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, float *loss)
{
	int rc = forward(be, inputs, targets, 1);

	if (rc == 0)
		rc = mean_loss(be, targets, loss);
	return rc;
}

/* ---- sampling: rows kept from one call to the next (B = 1) ---------------------- */

/* Rows t0..t1-1 of a B = 1 forward pass, the rows before t0 being in the
 * activations already (layer stride: be->T rows, as forward() lays them
 * out with B = 1). Every row goes through the very kernels and per-row
 * arithmetic of forward(); attention runs over rows 0..t1-1 (its rows
 * before t0 come out as they were). Then the head of row t1-1 alone:
 * its logits in logits row 0. The tokens of rows t0..t1-1 are at the
 * start of be->inputs. */
static int forward_rows(struct ct_backend *be, int t0, int t1)
{
	const int C = be->cfg.C, NH = be->cfg.NH, n = t1 - t0;
	const size_t r = (size_t)t0 * C, bt = (size_t)be->T, last = (size_t)(t1 - 1) * C;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct ct_dten none = { NULL, 0, 0 };
	int rc = 0;

	DO(ct_ocl_encoder_forward(o, D(a->encoded, r), be->inputs, P(be, be->w.one, CT_WTE),
				  PE(be, be->w.one, CT_WPE, r), 1, n, C));
	for (int l = 0; l < be->cfg.L && rc == 0; l++) {
		const size_t lc = (size_t)l * bt * C, lt = (size_t)l * bt + (size_t)t0;
		struct ct_dten res = l == 0 ? D(a->encoded, r)
					    : D(a->residual3, (size_t)(l - 1) * bt * C + r);
		struct dlayer p;

		dlayer(be, be->w.one, l, &p);
		DO(ct_ocl_layernorm_forward(o, D(a->ln1, lc + r), D(a->ln1_mean, lt),
					    D(a->ln1_rstd, lt), res, p.ln1w, p.ln1b, n, C));
		DO(ct_ocl_matmul_forward(o, D(a->qkv, 3 * (lc + r)), D(a->ln1, lc + r), p.qkvw,
					 p.qkvb, 1, n, C, 3 * C));
		DO(ct_ocl_attention_forward_recompute(o, D(a->atty, lc),
						      D(a->att, (size_t)l * NH * bt * 2),
						      D(a->qkv, 3 * lc), 1, t1, C, NH));
		DO(ct_ocl_matmul_forward(o, D(a->attproj, 0), D(a->atty, lc + r), p.attprojw,
					 p.attprojb, 1, n, C, C));
		DO(ct_ocl_residual_forward(o, D(a->residual2, lc + r), res, D(a->attproj, 0),
					   (size_t)n * C));
		DO(ct_ocl_layernorm_forward(o, D(a->ln2, lc + r), D(a->ln2_mean, lt),
					    D(a->ln2_rstd, lt), D(a->residual2, lc + r), p.ln2w,
					    p.ln2b, n, C));
		DO(ct_ocl_matmul_forward(o, D(a->fch, 4 * (lc + r)), D(a->ln2, lc + r), p.fcw,
					 p.fcb, 1, n, C, 4 * C));
		DO(ct_ocl_gelu_forward(o, D(a->fch_gelu, 0), D(a->fch, 4 * (lc + r)),
				       (size_t)n * 4 * C));
		DO(ct_ocl_matmul_forward(o, D(a->fcproj, 0), D(a->fch_gelu, 0), p.fcprojw,
					 p.fcprojb, 1, n, 4 * C, C));
		DO(ct_ocl_residual_forward(o, D(a->residual3, lc + r), D(a->residual2, lc + r),
					   D(a->fcproj, 0), (size_t)n * C));
	}
	DO(ct_ocl_layernorm_forward(o, D(a->lnf, 0), D(a->lnf_mean, 0), D(a->lnf_rstd, 0),
				    D(a->residual3, (size_t)(be->cfg.L - 1) * bt * C + last),
				    P(be, be->w.one, CT_LNFW), P(be, be->w.one, CT_LNFB), 1, C));
	DO(ct_ocl_matmul_forward(o, D(a->logits, 0), D(a->lnf, 0), P(be, be->w.one, CT_WTE),
				 none, 0, 1, C, be->cfg.Vp));
	return rc;
}

/* Logits of row pos for B = 1 (ocl_logits' contract): causal, so row pos
 * needs rows 0..pos alone, and the rows computed by the previous call for
 * the same leading tokens are still right: only the new rows run (a
 * sampler's step costs one row, not the whole window), each with
 * forward()'s per-row arithmetic, so the same bits (test_sample_prefix).
 * tsize: bytes per token id. */
static int ct_ocl_logits_rows(struct ct_backend *be, const void *inputs, size_t tsize,
			      int pos, float *out)
{
	const unsigned char *in = inputs;
	int t0 = 0, rc;

	rc = all_layers(be);	/* the kept rows are every layer's */
	if (rc < 0)
		return rc;
	if (be->kv_tok == NULL || be->kv_size != tsize) {
		free(be->kv_tok);
		be->kv_rows = 0;
		be->kv_size = tsize;
		be->kv_tok = malloc((size_t)be->T * tsize);
		if (be->kv_tok == NULL)
			return ct_error(CT_ENOMEM, "sampling rows");
	}
	while (t0 < be->kv_rows && t0 < pos &&
	       memcmp(be->kv_tok + (size_t)t0 * tsize, in + (size_t)t0 * tsize, tsize) == 0)
		t0++;
	be->kv_rows = 0;	/* until the rows below are in */
	rc = ct_ocl_check(clEnqueueWriteBuffer(be->ocl->queue, be->inputs, CL_TRUE, 0,
					       (size_t)(pos + 1 - t0) * tsize,
					       in + (size_t)t0 * tsize, 0, NULL, NULL),
			  "upload inputs");
	if (rc == 0)
		rc = forward_rows(be, t0, pos + 1);
	if (rc == 0)
		rc = ct_ocl_read(&be->ops, out, D(be->a.logits, 0), (size_t)be->cfg.V);
	if (rc == 0) {
		memcpy(be->kv_tok, in, (size_t)(pos + 1) * tsize);
		be->kv_rows = pos + 1;
	}
	return rc;
}

/* The reference's logits are those of ct_model_forward(); the inputs
 * double as (valid, unused) targets. */
static int ocl_logits(struct ct_backend *be, const ct_tok *inputs, int pos,
		      float *out)
{
	int rc;

	if (pos < 0 || pos >= be->B * be->T)
		return ct_error(CT_EINVAL, "logits of row %d of %d", pos, be->B * be->T);
	if (be->B == 1 && !be->training && be->lora == NULL && be->llama == NULL)
		return ct_ocl_logits_rows(be, inputs, sizeof(*inputs), pos, out);
	rc = forward(be, inputs, inputs, 0);
	if (rc == 0 && be->llama != NULL)
		rc = ct_ocl_llama_logits_row(be->llama, &be->w, pos);
	if (rc == 0 && be->llama != NULL)
		return ct_ocl_read(&be->ops, out, ct_ocl_llama_logits(be->llama),
				   (size_t)be->cfg.V);
	if (rc == 0)	/* the head of row pos alone (its logits as in any batch) */
		rc = ct_ocl_matmul_forward(&be->ops, D(be->a.logits, 0),
					   D(be->a.lnf, (size_t)pos * be->cfg.C),
					   P(be, be->w.one, CT_WTE), (struct ct_dten){ NULL, 0, 0 },
					   0, 1, be->cfg.C, be->cfg.Vp);
	if (rc == 0)
		rc = ct_ocl_read(&be->ops, out, D(be->a.logits, 0), (size_t)be->cfg.V);
	return rc;
}

/* ---- backward ------------------------------------------------------------------ */

/* Lean mode: ln1, qkv and ln2 of layer l again, as block_forward made
 * them (mean and rstd are rewritten with the values they hold). */
static int recompute_lean(struct ct_backend *be, int l, struct ct_dten residual,
			  const struct dlayer *p)
{
	const int BT = be->B * be->T, C = be->cfg.C;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	int rc = 0;

	DO(ct_ocl_layernorm_forward(o, D(a->ln1, 0), D(a->ln1_mean, lt), D(a->ln1_rstd, lt),
				    residual, p->ln1w, p->ln1b, BT, C));
	DO(ct_ocl_matmul_forward(o, D(a->qkv, 0), D(a->ln1, 0), p->qkvw, p->qkvb, 1,
				 BT, C, 3 * C));
	DO(ct_ocl_lora_forward(be->lora, l, CT_LORA_QKV, D(a->qkv, 0), D(a->ln1, 0)));
	DO(ct_ocl_layernorm_forward(o, D(a->ln2, 0), D(a->ln2_mean, lt), D(a->ln2_rstd, lt),
				    D(a->residual2, lc), p->ln2w, p->ln2b, BT, C));
	return rc;
}

/* ct_ocl_matmul_backward, or with frozen weights (LoRA, no grads buffer)
 * only its input-gradient half. */
static int mm_backward(struct ct_backend *be, struct ct_dten dinp, struct ct_dten dw,
		       struct ct_dten dbias, int has_bias, struct ct_dten dout,
		       struct ct_dten inp, struct ct_dten w, int BT, int C, int OC)
{
	if (be->grads == NULL)
		return ct_ocl_matmul_dinp(&be->ops, dinp, dout, w, BT, C, OC);
	return ct_ocl_matmul_backward(&be->ops, dinp, dw, dbias, has_bias, dout, inp, w,
				      BT, C, OC);
}

/* Backward through block l (ct_model.c's block_backward): g.dresidual holds
 * the gradient of residual3[l]; g.dresidual_in receives that of `residual`. */
static int block_backward(struct ct_backend *be, int l, struct ct_dten residual)
{
	const int B = be->B, T = be->T, C = be->cfg.C, NH = be->cfg.NH, BT = B * T;
	const size_t lc = (size_t)l * BT * C, lt = (size_t)l * BT, n = (size_t)BT * C;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct dgacts *g = &be->g;
	struct dlayer p, d;
	const size_t ll = be->lean ? 0 : lc;
	int rc = 0;

	dlayer(be, be->w.one, l, &p);
	dlayer(be, be->grads, l, &d);	/* NULL buffers when frozen */
	if (be->lean)	/* the same kernels on the same inputs: the same bits */
		DO(recompute_lean(be, l, residual, &p));
	DO(ct_ocl_zero(o, D(g->dresidual_in, 0), n));
	DO(ct_ocl_zero(o, D(g->dresidual2, 0), n));
	DO(ct_ocl_zero(o, D(g->dfcproj, 0), n));
	DO(ct_ocl_residual_backward(o, D(g->dresidual2, 0), D(g->dfcproj, 0),
				    D(g->dresidual, 0), n));
	DO(ct_ocl_zero(o, D(g->dfch_gelu, 0), 4 * n));
	DO(ct_ocl_gelu_forward(o, D(a->fch_gelu, 0), D(a->fch, 4 * lc), 4 * n));
	DO(mm_backward(be, D(g->dfch_gelu, 0), d.fcprojw, d.fcprojb, 1,
				  D(g->dfcproj, 0), D(a->fch_gelu, 0), p.fcprojw,
				  BT, 4 * C, C));
	DO(ct_ocl_lora_backward(be->lora, l, CT_LORA_FCPROJ, D(g->dfch_gelu, 0),
				D(g->dfcproj, 0), D(a->fch_gelu, 0)));
	DO(ct_ocl_zero(o, D(g->dfch, 0), 4 * n));
	DO(ct_ocl_gelu_backward(o, D(g->dfch, 0), D(a->fch, 4 * lc), D(g->dfch_gelu, 0),
				4 * n));
	DO(ct_ocl_zero(o, D(g->dln, 0), n));
	DO(mm_backward(be, D(g->dln, 0), d.fcw, d.fcb, 1, D(g->dfch, 0),
				  D(a->ln2, ll), p.fcw, BT, C, 4 * C));
	DO(ct_ocl_lora_backward(be->lora, l, CT_LORA_FC, D(g->dln, 0), D(g->dfch, 0),
				D(a->ln2, ll)));
	DO(ct_ocl_layernorm_backward(o, D(g->dresidual2, 0), d.ln2w, d.ln2b, D(g->dln, 0),
				     D(a->residual2, lc), p.ln2w, D(a->ln2_mean, lt),
				     D(a->ln2_rstd, lt), BT, C));
	DO(ct_ocl_zero(o, D(g->dattproj, 0), n));
	DO(ct_ocl_residual_backward(o, D(g->dresidual_in, 0), D(g->dattproj, 0),
				    D(g->dresidual2, 0), n));
	DO(ct_ocl_zero(o, D(g->datty, 0), n));
	DO(mm_backward(be, D(g->datty, 0), d.attprojw, d.attprojb, 1,
				  D(g->dattproj, 0), D(a->atty, lc), p.attprojw, BT, C, C));
	DO(ct_ocl_lora_backward(be->lora, l, CT_LORA_ATTPROJ, D(g->datty, 0),
				D(g->dattproj, 0), D(a->atty, lc)));
	DO(ct_ocl_zero(o, D(g->dqkv, 0), 3 * n));
	DO(ct_ocl_attention_backward_recompute(o, D(g->dqkv, 0), D(g->datt, 0),
					       D(g->datty, 0), D(a->qkv, 3 * ll),
					       D(a->att, (size_t)l * B * NH * T * 2),
					       B, T, C, NH));
	DO(ct_ocl_zero(o, D(g->dln, 0), n));
	DO(mm_backward(be, D(g->dln, 0), d.qkvw, d.qkvb, 1, D(g->dqkv, 0),
				  D(a->ln1, ll), p.qkvw, BT, C, 3 * C));
	DO(ct_ocl_lora_backward(be->lora, l, CT_LORA_QKV, D(g->dln, 0), D(g->dqkv, 0),
				D(a->ln1, ll)));
	DO(ct_ocl_layernorm_backward(o, D(g->dresidual_in, 0), d.ln1w, d.ln1b, D(g->dln, 0),
				     residual, p.ln1w, D(a->ln1_mean, lt), D(a->ln1_rstd, lt),
				     BT, C));
	return rc;
}

/* ct_model_backward: the contributions in the reference's order. */
static int backward(struct ct_backend *be)
{
	const struct ct_model_config *c = &be->cfg;
	const int BT = be->B * be->T;
	const size_t n = (size_t)BT * c->C;
	struct ct_ocl_ops *o = &be->ops;
	struct dacts *a = &be->a;
	struct dgacts *g = &be->g;
	struct ct_dten none = { NULL, 0, 0 };
	int rc = 0;

	if (be->llama != NULL)
		return ct_ocl_llama_backward(be->llama, &be->w, be->grads, be->inputs,
					     be->targets, be->lora);
	DO(ct_ocl_crossentropy_backward(o, D(probs_buf(be), 0), D(probs_buf(be), 0),
					be->targets, BT, c->V, c->Vp));
	DO(ct_ocl_zero(o, D(g->dln, 0), n));
	DO(mm_backward(be, D(g->dln, 0), P(be, be->grads, CT_WTE), none, 0,
				  D(probs_buf(be), 0), D(a->lnf, 0), P(be, be->w.one, CT_WTE),
				  BT, c->C, c->Vp));
	DO(ct_ocl_zero(o, D(g->dresidual, 0), n));
	DO(ct_ocl_layernorm_backward(o, D(g->dresidual, 0), P(be, be->grads, CT_LNFW),
				     P(be, be->grads, CT_LNFB), D(g->dln, 0),
				     D(a->residual3, (size_t)(c->L - 1) * n),
				     P(be, be->w.one, CT_LNFW), D(a->lnf_mean, 0),
				     D(a->lnf_rstd, 0), BT, c->C));
	for (int l = c->L - 1; l >= 0 && rc == 0; l--) {
		cl_mem tmp;

		DO(block_backward(be, l, l == 0 ? D(a->encoded, 0)
						: D(a->residual3, (size_t)(l - 1) * n)));
		tmp = g->dresidual;
		g->dresidual = g->dresidual_in;
		g->dresidual_in = tmp;
	}
	if (be->grads == NULL)		/* frozen embeddings (LoRA) */
		return rc;
	DO(ct_ocl_encoder_backward(o, P(be, be->grads, CT_WTE), P(be, be->grads, CT_WPE),
				   D(g->dresidual, 0), be->inputs, be->B, be->T, c->C));
	return rc;
}

/* ---- step ---------------------------------------------------------------------- */

/* A LoRA step (ct_lora_step): adapter gradients zeroed, forward, backward
 * through the frozen weights, clip and AdamW over the adapters only. */
static int lora_step(struct ct_backend *be, const ct_tok *inputs,
		     const ct_tok *targets, const struct ct_step_args *args,
		     float *loss)
{
	struct ct_ocl_lora *lo = be->lora;
	int rc = 0;

	DO(ct_ocl_zero(&be->ops, D(lo->grad, 0), lo->n));
	DO(forward(be, inputs, targets, 1));
	DO(backward(be));
	DO(ct_ocl_adamw(&be->ops, D(lo->ad, 0), D(lo->grad, 0), D(lo->m, 0), D(lo->v, 0),
			lo->n, &args->opt, args->grad_clip));
	DO(mean_loss(be, targets, loss));
	return rc;
}

static int ocl_step(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, const struct ct_step_args *args,
		    float *loss)
{
	const size_t n = be->lay.total;
	int rc = 0;

	if (be->lora != NULL)
		return lora_step(be, inputs, targets, args, loss);
	if (!be->training)
		return ct_error(CT_ESTATE, "backend opened for evaluation cannot train");
	if (be->ops.profile) {	/* the profile printed at close is the last step's */
		memset(be->ops.prof_s, 0, sizeof(be->ops.prof_s));
		memset(be->ops.prof_cpu, 0, sizeof(be->ops.prof_cpu));
		memset(be->ops.prof_n, 0, sizeof(be->ops.prof_n));
		ct_ocl_llama_prof_reset(be->llama);
	}
	DO(ct_ocl_zero(&be->ops, D(be->grads, 0), n));
	DO(forward(be, inputs, targets, 1));
	DO(backward(be));
	/* clipping (when grad_clip > 0) is folded into the AdamW pass */
	DO(ct_ocl_adamw(&be->ops, D(be->w.one, 0), D(be->grads, 0), D(be->m, 0),
			D(be->v, 0), n, &args->opt, args->grad_clip));
	DO(mean_loss(be, targets, loss));
	return rc;
}

/* ---- memory ------------------------------------------------------------------- */

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* n columns padded to whole panels (of at most 64: ct_mm's lda). */
static uint64_t pad64(uint64_t n)
{
	return (n + 63) / 64 * 64;
}

/* The packed matmul operand's bound (floats) of a full pass over B x T:
 * at most 1.5 x BT rows or 64 columns of a product's longest reduction
 * (the forward packs the smaller side). */
static uint64_t pack_floats(const struct ct_model_config *c, int B, int T)
{
	const struct ct_model_dims d = ct_model_dims(c);
	const uint64_t BT = (uint64_t)B * T, Vp = c->Vp;
	const uint64_t A = (uint64_t)d.att, F = (uint64_t)d.fc;
	const uint64_t wide_out = max64(max64(F, A), (uint64_t)d.qkv);
	const uint64_t K = max64(max64(F, A), (uint64_t)c->C), side = max64(Vp, wide_out);

	return (BT + BT / 2 + 64) * K + 64 * side;
}

/* The whole dout^T of the widest product (BT x the vocabulary), but at
 * most 4 MiB a block (or 8 rows): the vocabulary's weight gradient then
 * runs in row blocks of 4096 at B=4 T=64. */
static uint64_t tr_floats(const struct ct_model_config *c, int B, int T)
{
	const struct ct_model_dims d = ct_model_dims(c);
	const uint64_t BT = (uint64_t)B * T;
	const uint64_t wide_out = max64(max64((uint64_t)d.fc, (uint64_t)d.att), (uint64_t)d.qkv);
	const uint64_t all = BT * max64((uint64_t)c->Vp, wide_out);
	const uint64_t cap = max64((uint64_t)1 << 20, 8 * BT);

	return all < cap ? all : cap;
}

/* Bounds on the scratch ct_ocl_ops.c grows on demand (floats), the
 * largest into *big: the packed matmul operand (at most 1.5 x BT rows or
 * 64 columns of a product's longest reduction: the forward packs the
 * smaller side), the parked accumulators of a k-split product (one
 * output: BT rows of the widest, the head in pieces; with the MLP in
 * blocks of rows < BT (frozen weights, so no weight gradient of the
 * base: every product's rows are BT or rows, its reduction a forward's
 * C, A or F), a frozen head's rows of the vocabulary, BT rows of the
 * attention's widest and rows of the MLP's (gate/up's 2F), each padded
 * to whole panels, and the packed operand of those rows), a
 * compact weight widened (max(2^20, 64 x the longest side)), the
 * attention transposes (4 blocks of B*T*A; one batch row's, T*A, in a
 * lean pass), a weight gradient's dout^T in blocks (GPT-2: tr_floats)
 * and the softmax statistics. */
static uint64_t scratch_floats(const struct ct_model_config *c, int B, int T, int compact,
			       int flags, int rows, uint64_t *big)
{
	const struct ct_model_dims d = ct_model_dims(c);
	const uint64_t BT = (uint64_t)B * T, Vp = c->Vp;
	const uint64_t A = (uint64_t)d.att, F = (uint64_t)d.fc;
	const uint64_t wide_out = max64(max64(F, A), (uint64_t)d.qkv);
	const uint64_t K = max64(max64(F, A), (uint64_t)c->C), side = max64(Vp, wide_out);
	const uint64_t head = BT * Vp < ((uint64_t)1 << 25) ? BT * Vp : (uint64_t)1 << 25;
	uint64_t pack = pack_floats(c, B, T);
	uint64_t accb = max64(head, BT * max64(wide_out, K));
	uint64_t wide = compact ? max64((uint64_t)1 << 20, 64 * side) : 0;
	uint64_t att = 4 * ((flags & CT_OCL_LL_LEAN) ? (uint64_t)T : BT) * A + 32;
	uint64_t tr = llama_pass(c) ? 0 : tr_floats(c, B, T);

	if ((uint64_t)rows < BT) {	/* no weight gradient of the base, the MLP's rows */
		const uint64_t att_k = max64(A, (uint64_t)c->C), R = (uint64_t)rows;
		const uint64_t hr = (uint64_t)ct_ocl_llama_head_rows(c, B, T, 1);

		/* a last partial panel of a B read in place (64 x its k): the
		 * adapters' input gradients (r columns over their outputs) and
		 * weight gradients (over BT), the vocabulary's input gradient
		 * only where C is no whole number of panels */
		const uint64_t part = c->C % 64 ? side : max64(max64(wide_out, (uint64_t)c->C), BT);

		accb = max64(pad64(hr) * pad64(Vp), max64(BT * pad64(max64((uint64_t)d.qkv, att_k)),
						   R * pad64(max64(F, (uint64_t)c->C))));
		pack = max64((BT + BT / 2 + 64) * att_k,
			     (R + R / 2 + 64) * max64((uint64_t)c->F, (uint64_t)c->C)) + 64 * part;
	}
	*big = max64(max64(max64(pack, accb), max64(wide, att)), tr);
	return pack + accb + wide + att + tr + 2 * BT + 1;
}

uint64_t ct_ocl_wu_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp,
			 uint64_t *largest)
{
	const int lora = hp->lora.rank > 0, llama = llama_pass(cfg);
	const int fmt = lora ? hp->lora.base_fmt : CT_BASE_F32;
	struct ct_dweights w;
	uint64_t sum, big, b;
	int flags = 0, mlp_rows = hp->B * hp->T;

	ct_dweights_plan(&w, cfg, fmt, lora && llama);
	sum = ct_dweights_bytes(&w, &big);
	if (!lora) {
		sum += 12 * (uint64_t)w.lay.total;
		big = max64(big, 4 * (uint64_t)w.lay.total);
	}
	if (llama) {	/* the pass a backend of this process opens */
		flags = pass_flags(cfg, hp->B, hp->T, 1, lora);
		sum += ct_ocl_llama_bytes(cfg, hp->B, hp->T, flags, &b);
		mlp_rows = ct_ocl_llama_mlp_rows(cfg, hp->B, hp->T, flags);
	} else {
		b = 4 * (uint64_t)ct_model_act_floats(cfg, hp->B, hp->T, 1);
		sum += b;
	}
	big = max64(big, b);
	if (lora)	/* the MLP's adapter rows as the pass holds them */
		sum += 4 * (uint64_t)ct_lora_state_floats(cfg, &hp->lora, hp->B, hp->T, 1) +
		       (uint64_t)(llama ? ct_ocl_lora_bytes_delta(cfg, &hp->lora, hp->B * hp->T,
								  mlp_rows) : 0);
	sum += 2 * (uint64_t)hp->B * hp->T * sizeof(ct_tok);
	sum += 4 * scratch_floats(cfg, hp->B, hp->T, fmt != CT_BASE_F32, flags, mlp_rows, &b);
	big = max64(big, 4 * b);
	if (largest != NULL)
		*largest = big;
	return sum;
}

const struct ct_backend_ops ct_ocl_backend_ops = {
	.name = "opencl",
	.open = ocl_open,
	.load_state = ocl_load_state,
	.step = ocl_step,
	.eval = ocl_eval,
	.read_state = ocl_read_state,
	.read_grads = ocl_read_grads,
	.open_lora = ocl_open_lora,
	.lora_load = ocl_lora_load,
	.lora_read = ocl_lora_read,
	.load_base = ocl_load_base,
	.close = ocl_close,
	.logits = ocl_logits,
	.load_range = ocl_load_range,
};
