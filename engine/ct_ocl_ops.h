/*
 * ct_ocl_ops.h - host-side launchers of crowdtune's OpenCL kernels, one per
 * layer operation of the model, each the device twin of a C reference layer
 * (engine/ct_layers.c) with bit-identical results.
 *
 * Tensors on the device are (buffer, offset in floats) pairs, because the
 * parameters, gradients and optimizer state each live in one large buffer.
 * Launchers only enqueue work on the in-order queue; nothing waits until the
 * caller reads a buffer back (ct_ocl_read) or calls clFinish.
 *
 * Tuning knobs (environment; none of them can change a result, only which
 * work-item computes which outputs, in what order of outputs):
 *   CT_OCL_MM="R,VW,NV"  matmul register block (ct_ocl.h)
 *   CT_OCL_KC=N          k-piece length of long matmul reductions
 *   CT_OCL_FWD=n|t       forward matmul as out or as out^T
 *   CT_OCL_MM_TILED=0|1|b|m|s  matmuls through the local-memory tiled
 *                        kernels (default: on GPUs and accelerators, off on
 *                        CPUs), each product with the biggest tiles that
 *                        still give every compute unit a group (big, 64 x
 *                        64, else 32 x 32); b, m, s force one size
 *   CT_OCL_MMT="BM,BN,BK,RM,RN"  that kernel's tiles (ct_ocl.h)
 *   CT_OCL_ATT_TILED=0|1 the recompute attention through the local-memory
 *                        tiled kernels (attn_tiled.cl; heads of <= 64
 *                        channels; default as CT_OCL_MM_TILED)
 *   CT_OCL_RED_TILED=0|1 long reductions (the gradient norm's partial
 *                        sums, layernorm dw/db, matmul dbias, the softmax
 *                        max and sum over the vocabulary) through the
 *                        local-memory kernels (reduce_tiled.cl; default as
 *                        CT_OCL_MM_TILED)
 *   CT_OCL_LOCAL=cpu|gpu work-group sizes of the one-output-per-item
 *                        kernels by the CPU rule (about 8 groups per
 *                        compute unit, down to groups of 1) or the GPU
 *                        rule (never narrower than the kernel's preferred
 *                        multiple, a warp or wavefront); default by the
 *                        device's type
 *   CT_OCL_EW=N          elements per work-item of the elementwise kernels
 *                        and AdamW (default 16 on CPUs, run as vector
 *                        loops; 1 elsewhere)
 *   CT_OCL_ATT_R=N       query (key) rows per work-item of attention.cl's
 *                        kernels (default 8 on CPUs, 1 elsewhere)
 *   CT_OCL_PROFILE=1     wait for and time every launch; a per-kernel
 *                        table (wall and process CPU ms) is printed to
 *                        stderr by ct_ocl_ops_free (for the backend: the
 *                        last training step's)
 */
#ifndef CT_OCL_OPS_H
#define CT_OCL_OPS_H

#include "ct_base.h"
#include "ct_ocl.h"

/* A tensor on the device: `mem` + `off` elements: floats, or for a
 * frozen weight of a compact base (ct_base.h) bfloat16 values (fmt
 * CT_BASE_BF16), or element `off` of the q8 block grid of the image in
 * `mem` (CT_BASE_Q8). Only the matmuls' weights and the embedding tables may be
 * compact; every other tensor is float32 (fmt 0). */
struct ct_dten {
	cl_mem mem;
	size_t off;
	int fmt;
};

static inline struct ct_dten ct_dten_at(cl_mem mem, size_t off)
{
	struct ct_dten t = { mem, off, 0 };
	return t;
}

/* Element off of float32 tensor t. */
static inline struct ct_dten ct_dten_plus(struct ct_dten t, size_t off)
{
	t.off += off;
	return t;
}

/* Tensor t of a params-shaped buffer mem from element e on: at lay's
 * float offsets, or, when bl is not NULL, in a compact base image
 * (ct_base.h) uploaded as it is, with the tensor's format. */
static inline struct ct_dten ct_dten_param(cl_mem mem, const struct ct_gpt2_layout *lay,
					   const struct ct_base_layout *bl, int t, size_t e)
{
	struct ct_dten d = { mem, 0, 0 };

	if (bl == NULL || bl->fmt == CT_BASE_F32) {
		d.off = lay->offset[t] + e;
		return d;
	}
	d.fmt = ct_base_tensor_fmt(bl->fmt, t);
	if (ct_base_blocked(d.fmt))	/* the element's index in the image's block grid */
		d.off = bl->off[t] / CT_BASE_Q8_BYTES * ct_base_block_elems(d.fmt) + e;
	else
		d.off = bl->off[t] / (d.fmt == CT_BASE_BF16 ? 2 : 4) + e;
	return d;
}

/* The kernels of the program, by index (see ct_ocl_ops.c's table). */
enum ct_ocl_kid {
	CT_K_MM_PACK,
	CT_K_MM,
	CT_K_MM_DBIAS,
	CT_K_ENCODER_FWD,
	CT_K_ENCODER_BWD,
	CT_K_LAYERNORM_FWD,
	CT_K_LAYERNORM_BWD_DINP,
	CT_K_LAYERNORM_BWD_DWB,
	CT_K_ATTENTION_FWD,
	CT_K_ATTENTION_BWD_G,
	CT_K_ATTENTION_BWD_QKV,
	CT_K_ATTENTION_BWD_QKV8,
	CT_K_GELU_FWD,
	CT_K_GELU_BWD,
	CT_K_RESIDUAL_FWD,
	CT_K_RESIDUAL_BWD,
	CT_K_CE_MAX,
	CT_K_CE_EXP,
	CT_K_CE_SUM,
	CT_K_CE_NORM,
	CT_K_CE_LOSS,
	CT_K_CROSSENTROPY_BWD,
	CT_K_GRADNORM_PART,
	CT_K_GRADNORM_FINAL,
	CT_K_GRAD_SCALE,
	CT_K_ADAMW,
	CT_K_ATTN_FWD,
	CT_K_ATTN_BWD_DOT,
	CT_K_ATTN_BWD_DQ,
	CT_K_ATTN_BWD_DKV,
	CT_K_ATTN_TR,
	CT_K_MM_TILED,
	CT_K_ATG_FWD,
	CT_K_ATG_DQ,
	CT_K_ATG_DKV,
	CT_K_GRADNORM_TILED,
	CT_K_MM_TILED_S,
	CT_K_LN_DWB_TILED,
	CT_K_MM_DBIAS_TILED,
	CT_K_MM_TILED_M,
	CT_K_MATVEC1,
	CT_K_MATVEC2,
	CT_K_CE_ROWS_TILED,
	CT_K_CE_COUNT,
	CT_K_BF16_WIDEN,
	CT_K_BF16_WIDEN2,
	CT_K_ENCODER_FWD_H,
	CT_K_LL_EMBED_FWD_H,
	CT_K_Q8_WIDEN,
	CT_K_Q8_WIDEN2,
	CT_K_ENCODER_FWD_Q8,
	CT_K_LL_EMBED_FWD_Q8,
	CT_K_MM_PACK_C,
	CT_K_MM_AH,		/* ct_mm, A compact: bf16, q8, nf4 */
	CT_K_MM_AQ,
	CT_K_MM_AN,
	CT_K_MM_BH,		/* ct_mm, B's panels compact */
	CT_K_MM_BQ,
	CT_K_MM_BN,
	CT_K_MM_TR,
	CT_K_COUNT
};

struct ct_ocl_ops {
	struct ct_ocl *ocl;		/* not owned */
	cl_kernel k[CT_K_COUNT];
	size_t wg_max[CT_K_COUNT];	/* CL_KERNEL_WORK_GROUP_SIZE */
	size_t wg_mult[CT_K_COUNT];	/* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
	cl_uint nargs[CT_K_COUNT];	/* CL_KERNEL_NUM_ARGS */
	cl_mem scratch;			/* packed matmul operand, grown on demand */
	size_t scratch_floats;
	size_t pack_max;		/* floats a B with contiguous rows may be
					 * packed into (whole, or one k piece at
					 * a time; ct_mm reads it in place
					 * otherwise); 0 by ct_ocl_ops_init */
	cl_mem tr;			/* a weight gradient's dout^T, a row block */
	size_t tr_floats;
	size_t tr_max;			/* floats a row block of dout^T may take
					 * (0, as ct_ocl_ops_init leaves it: dout
					 * read in place, strided) */
	cl_mem accb;			/* parked accumulators of a k-split product */
	size_t accb_floats;
	cl_mem wide;			/* a compact weight widened for its matmul */
	size_t wide_floats;

	cl_mem clip_part;		/* gradient-norm partials, grown on demand */
	size_t clip_part_floats;
	cl_mem clip_res;		/* norm, scale, flag (3 floats) */
	cl_mem ce_stat;			/* softmax row max and sum (2*BT), then the
					 * count of trained rows (1) */
	size_t ce_stat_floats;
	cl_mem att_tr;			/* attention: k, v, q, dout transposed */
	size_t att_tr_floats;
	int mm_tiled;			/* matmuls through ct_mm_tiled (see ct_ocl_ops_init) */
	int mm_tiles;			/* 0: tiles by size; 'b', 'm', 's': forced */
	int att_tiled;			/* recompute attention through attn_tiled.cl */
	int red_tiled;			/* long reductions through reduce_tiled.cl */
	int gpu_local;			/* GPU rule for work-group sizes (pick_local) */
	/* profiling (CT_OCL_PROFILE=1 in the environment): every launch is
	 * waited for and timed; totals are printed by ct_ocl_ops_free */
	int profile;
	double prof_s[CT_K_COUNT], prof_cpu[CT_K_COUNT];
	long prof_n[CT_K_COUNT];
};

/* Create every kernel of ocl's program. On failure everything created is
 * released. Returns 0 or CT_ECL. ops is freed with ct_ocl_ops_free. */
int ct_ocl_ops_init(struct ct_ocl_ops *ops, struct ct_ocl *ocl);
void ct_ocl_ops_free(struct ct_ocl_ops *ops);

/* Copy n floats between host and device (blocking). Return 0 or CT_E*. */
int ct_ocl_write(struct ct_ocl_ops *ops, struct ct_dten dst, const float *src, size_t n);
int ct_ocl_read(struct ct_ocl_ops *ops, float *dst, struct ct_dten src, size_t n);
/* Set n floats to 0 (enqueued). */
int ct_ocl_zero(struct ct_ocl_ops *ops, struct ct_dten dst, size_t n);

/* out (BT,OC) = inp (BT,C) . w (OC,C)^T + bias (OC); has_bias 0: no bias.
 * Arithmetic: a dot, doc/workunit.md §3 "Arithmetic rules". A bf16 w
 * (here and in ct_ocl_matmul_dinp) is first widened, exactly, into a
 * float32 scratch the product then reads (the same bits as the C
 * reference's ct_matmul_forward_w), in pieces of whole outputs when it is
 * big (ct_ocl_ops.c, WIDE_MAX). */
int ct_ocl_matmul_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			  struct ct_dten inp, struct ct_dten w,
			  struct ct_dten bias, int has_bias, int BT, int C, int OC);

/* dinp (BT,C) += dout . w; dw (OC,C) += dout^T . inp; dbias (OC) += column
 * sums of dout (skipped when has_bias is 0). Rule 4. */
int ct_ocl_matmul_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			   struct ct_dten dw, struct ct_dten dbias, int has_bias,
			   struct ct_dten dout, struct ct_dten inp, struct ct_dten w,
			   int BT, int C, int OC);

/* The two halves of ct_ocl_matmul_backward (for benchmarks). */
int ct_ocl_matmul_dinp(struct ct_ocl_ops *ops, struct ct_dten dinp, struct ct_dten dout,
		       struct ct_dten w, int BT, int C, int OC);
int ct_ocl_matmul_dweight(struct ct_ocl_ops *ops, struct ct_dten dw, struct ct_dten dbias,
			  int has_bias, struct ct_dten dout, struct ct_dten inp,
			  int BT, int C, int OC);

/* The other layers (ct_ocl_layernorm_backward with dw.mem NULL: dinp
 * only, for frozen weights): each is the device twin of the ct_model.h function of
 * the same name (same shapes, same arithmetic). Token buffers are cl_mem of
 * ct_tok (B*T of them). */
int ct_ocl_encoder_forward(struct ct_ocl_ops *ops, struct ct_dten out, cl_mem inp,
			   struct ct_dten wte, struct ct_dten wpe, int B, int T, int C);
/* Llama's embedding of a compact table (bf16 or q8; ct_ocl_llama.c runs
 * the float32 one). */
int ct_ocl_embed_forward_h(struct ct_ocl_ops *ops, struct ct_dten out, cl_mem inp,
			   struct ct_dten wte, int BT, int C);
int ct_ocl_encoder_backward(struct ct_ocl_ops *ops, struct ct_dten dwte,
			    struct ct_dten dwpe, struct ct_dten dout, cl_mem inp,
			    int B, int T, int C);
int ct_ocl_layernorm_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			     struct ct_dten mean, struct ct_dten rstd, struct ct_dten inp,
			     struct ct_dten w, struct ct_dten b, int BT, int C);
int ct_ocl_layernorm_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			      struct ct_dten dw, struct ct_dten db, struct ct_dten dout,
			      struct ct_dten inp, struct ct_dten w, struct ct_dten mean,
			      struct ct_dten rstd, int BT, int C);
int ct_ocl_attention_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			     struct ct_dten att, struct ct_dten qkv,
			     int B, int T, int C, int NH);
int ct_ocl_attention_backward(struct ct_ocl_ops *ops, struct ct_dten dqkv,
			      struct ct_dten datt, struct ct_dten dout,
			      struct ct_dten qkv, struct ct_dten att,
			      int B, int T, int C, int NH);
/* The device twins of ct_attention_forward_recompute and
 * ct_attention_backward_recompute (no (B,NH,T,T) matrices): stat
 * (B,NH,T,2) is written by forward and read by backward; dot is scratch of
 * B*NH*T floats. Returns 0 or CT_ECL. */
int ct_ocl_attention_forward_recompute(struct ct_ocl_ops *ops, struct ct_dten out,
				       struct ct_dten stat, struct ct_dten qkv,
				       int B, int T, int C, int NH);
int ct_ocl_attention_backward_recompute(struct ct_ocl_ops *ops, struct ct_dten dqkv,
					struct ct_dten dot, struct ct_dten dout,
					struct ct_dten qkv, struct ct_dten stat,
					int B, int T, int C, int NH);
int ct_ocl_gelu_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			struct ct_dten inp, size_t n);
int ct_ocl_gelu_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			 struct ct_dten inp, struct ct_dten dout, size_t n);
int ct_ocl_residual_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			    struct ct_dten a, struct ct_dten b, size_t n);
int ct_ocl_residual_backward(struct ct_ocl_ops *ops, struct ct_dten da,
			     struct ct_dten db, struct ct_dten dout, size_t n);
/* targets: BT token ids from id toff of the buffer on. */
int ct_ocl_crossentropy_forward(struct ct_ocl_ops *ops, struct ct_dten losses,
				struct ct_dten probs, struct ct_dten logits,
				cl_mem targets, size_t toff, int BT, int V, int Vp);
/* The trained rows (CT_TOK_UNTRAINED, lib/ct_tok.h) are counted on the
 * device: ct_crossentropy_backward's N. */
int ct_ocl_crossentropy_backward(struct ct_ocl_ops *ops, struct ct_dten dlogits,
				 struct ct_dten probs, cl_mem targets,
				 int BT, int V, int Vp);
/* The same for rows toff .. toff + n - 1 of a batch of BT (probs and
 * dlogits hold those n rows; N still counts over all BT targets), so the
 * rows come out as in the whole batch's. */
int ct_ocl_crossentropy_backward_rows(struct ct_ocl_ops *ops, struct ct_dten dlogits,
				      struct ct_dten probs, cl_mem targets, size_t toff,
				      int n, int BT, int V, int Vp);

/* ct_grad_clip on the device: norm of g (n floats) by ct_grad_norm's
 * chunks, and g scaled when clip > 0 and norm > clip. The norm stays on the
 * device (ct_ocl_grad_norm_read fetches it). */
int ct_ocl_grad_clip(struct ct_ocl_ops *ops, struct ct_dten g, size_t n, float clip);
int ct_ocl_grad_norm_read(struct ct_ocl_ops *ops, float *norm);

/* ct_adamw_update on the device (a carries the host-computed bc1, bc2).
 * clip > 0: first ct_grad_clip(g, n, clip), folded into the same pass (g
 * is left clipped, as the reference leaves it). */
struct ct_adamw_args;
int ct_ocl_adamw(struct ct_ocl_ops *ops, struct ct_dten p, struct ct_dten g,
		 struct ct_dten m, struct ct_dten v, size_t n,
		 const struct ct_adamw_args *a, float clip);

#endif
