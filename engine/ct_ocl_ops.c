/*
 * ct_ocl_ops.c - launchers of the OpenCL kernels (see ct_ocl_ops.h). Each
 * function sets its kernel's arguments with ocl_args() and enqueues it with
 * ocl_run(); the arithmetic lives in the kernels/ .cl files.
 */
#include "ct_ocl_ops.h"
#include "ct_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_options.h"
#include "ct_model.h"
#include "ct_time.h"

static const char *const kernel_names[CT_K_COUNT] = {
	[CT_K_MM_PACK] = "ct_mm_pack",
	[CT_K_MM] = "ct_mm",
	[CT_K_MM_DBIAS] = "ct_mm_dbias",
	[CT_K_ENCODER_FWD] = "ct_encoder_fwd",
	[CT_K_ENCODER_BWD] = "ct_encoder_bwd",
	[CT_K_LAYERNORM_FWD] = "ct_layernorm_fwd",
	[CT_K_LAYERNORM_BWD_DINP] = "ct_layernorm_bwd_dinp",
	[CT_K_LAYERNORM_BWD_DWB] = "ct_layernorm_bwd_dwb",
	[CT_K_ATTENTION_FWD] = "ct_attention_fwd",
	[CT_K_ATTENTION_BWD_G] = "ct_attention_bwd_g",
	[CT_K_ATTENTION_BWD_QKV] = "ct_attention_bwd_qkv",
	[CT_K_ATTENTION_BWD_QKV8] = "ct_attention_bwd_qkv8",
	[CT_K_GELU_FWD] = "ct_gelu_fwd",
	[CT_K_GELU_BWD] = "ct_gelu_bwd",
	[CT_K_RESIDUAL_FWD] = "ct_residual_fwd",
	[CT_K_RESIDUAL_BWD] = "ct_residual_bwd",
	[CT_K_CE_MAX] = "ct_ce_max",
	[CT_K_CE_EXP] = "ct_ce_exp",
	[CT_K_CE_SUM] = "ct_ce_sum",
	[CT_K_CE_NORM] = "ct_ce_norm",
	[CT_K_CE_LOSS] = "ct_ce_loss",
	[CT_K_CROSSENTROPY_BWD] = "ct_crossentropy_bwd",
	[CT_K_GRADNORM_PART] = "ct_gradnorm_part",
	[CT_K_GRADNORM_FINAL] = "ct_gradnorm_final",
	[CT_K_GRAD_SCALE] = "ct_grad_scale",
	[CT_K_ADAMW] = "ct_adamw",
	[CT_K_ATTN_FWD] = "ct_attn_fwd",
	[CT_K_ATTN_BWD_DOT] = "ct_attn_bwd_dot",
	[CT_K_ATTN_BWD_DQ] = "ct_attn_bwd_dq",
	[CT_K_ATTN_BWD_DKV] = "ct_attn_bwd_dkv",
	[CT_K_ATTN_TR] = "ct_attn_tr",
	[CT_K_MM_TILED] = "ct_mm_tiled",
	[CT_K_ATG_FWD] = "ct_atg_fwd",
	[CT_K_ATG_DQ] = "ct_atg_dq",
	[CT_K_ATG_DKV] = "ct_atg_dkv",
	[CT_K_GRADNORM_TILED] = "ct_gradnorm_tiled",
	[CT_K_MM_TILED_S] = "ct_mm_tiled_s",
	[CT_K_LN_DWB_TILED] = "ct_layernorm_dwb_tiled",
	[CT_K_MM_DBIAS_TILED] = "ct_mm_dbias_tiled",
	[CT_K_MM_TILED_M] = "ct_mm_tiled_m",
	[CT_K_BF16_WIDEN] = "ct_bf16_widen",
	[CT_K_BF16_WIDEN2] = "ct_bf16_widen2",
	[CT_K_ENCODER_FWD_H] = "ct_encoder_fwd_h",
	[CT_K_LL_EMBED_FWD_H] = "ct_ll_embed_fwd_h",
	[CT_K_Q8_WIDEN] = "ct_q8_widen",
	[CT_K_Q8_WIDEN2] = "ct_q8_widen2",
	[CT_K_ENCODER_FWD_Q8] = "ct_encoder_fwd_q8",
	[CT_K_LL_EMBED_FWD_Q8] = "ct_ll_embed_fwd_q8",
	[CT_K_MM_PACK_C] = "ct_mm_pack_c",
	[CT_K_MM_AH] = "ct_mm_ah",
	[CT_K_MM_AQ] = "ct_mm_aq",
	[CT_K_MM_AN] = "ct_mm_an",
	[CT_K_MM_BH] = "ct_mm_bh",
	[CT_K_MM_BQ] = "ct_mm_bq",
	[CT_K_MM_BN] = "ct_mm_bn",
	[CT_K_MM_TR] = "ct_mm_tr",
	[CT_K_MATVEC1] = "ct_matvec1",
	[CT_K_MATVEC2] = "ct_matvec2",
	[CT_K_CE_ROWS_TILED] = "ct_ce_rows_tiled",
	[CT_K_CE_COUNT] = "ct_ce_count",
};

/* Work-items per group of the tiled matmul (its reqd_work_group_size). */
static size_t mmt_group(const struct ct_ocl *ocl)
{
	return (size_t)(ocl->mmt_bn / ocl->mmt_rn) * (size_t)(ocl->mmt_bm / ocl->mmt_rm);
}

/* Whether kernels first..last (GPU-shaped variants, groups of 256 using
 * up to `local` bytes of local memory) are used: on GPUs and accelerators,
 * or as the environment variable `env` (0|1) forces, when the device can
 * run them. */
static int tiled_default(const struct ct_ocl_ops *ops, enum ct_opt env, int first,
			 int last, size_t local)
{
	int on = (int)ct_opt_int(env, ops->ocl->info.type != CT_OCL_TYPE_CPU);

	for (int id = first; id <= last; id++)
		if (ops->wg_max[id] < 256)
			on = 0;
	return on && ops->ocl->info.local_mem >= local;
}

int ct_ocl_ops_init(struct ct_ocl_ops *ops, struct ct_ocl *ocl)
{
	int rc = 0;

	memset(ops, 0, sizeof(*ops));
	ops->ocl = ocl;
	ops->profile = (int)ct_opt_int(CT_OPT_OCL_PROFILE, 0);
	for (int i = 0; i < CT_K_COUNT && rc == 0; i++) {
		size_t wg = 0;

		rc = ct_ocl_kernel(ocl, kernel_names[i], &ops->k[i]);
		if (rc == 0 && clGetKernelWorkGroupInfo(ops->k[i], ocl->device,
							CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg),
							&wg, NULL) != CL_SUCCESS)
			wg = 1;
		ops->wg_max[i] = wg ? wg : 1;
		wg = 0;
		if (rc == 0 && clGetKernelWorkGroupInfo(ops->k[i], ocl->device,
							CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
							sizeof(wg), &wg, NULL) != CL_SUCCESS)
			wg = 1;
		ops->wg_mult[i] = wg ? wg : 1;
		if (rc == 0 && clGetKernelInfo(ops->k[i], CL_KERNEL_NUM_ARGS, sizeof(cl_uint),
					       &ops->nargs[i], NULL) != CL_SUCCESS)
			rc = ct_error(CT_ECL, "kernel %s: no argument count", kernel_names[i]);
	}
	if (rc == 0) {	/* the tiled kernel needs its whole work-group */
		const char *t = ct_opt_str(CT_OPT_OCL_MM_TILED), *loc = ct_opt_str(CT_OPT_OCL_LOCAL);

		ops->gpu_local = loc != NULL && (strcmp(loc, "cpu") == 0 || strcmp(loc, "gpu") == 0)
			? loc[0] == 'g' : ocl->info.type != CT_OCL_TYPE_CPU;

		ops->mm_tiled = t != NULL && strchr("01bms", t[0]) != NULL && t[0] != '\0'
			? t[0] != '0' : ocl->info.type != CT_OCL_TYPE_CPU;
		ops->mm_tiles = t != NULL && strchr("bms", t[0]) != NULL ? t[0] : 0;
		if (ops->wg_max[CT_K_MM_TILED] < mmt_group(ocl) ||
		    (ops->mm_tiles == 's' && ops->wg_max[CT_K_MM_TILED_S] < 256) ||
		    (ops->mm_tiles == 'm' && ops->wg_max[CT_K_MM_TILED_M] < 256))
			ops->mm_tiled = 0;
		ops->att_tiled = tiled_default(ops, CT_OPT_OCL_ATT_TILED, CT_K_ATG_FWD,
					       CT_K_ATG_DKV, 48 * 1024);
		ops->red_tiled = tiled_default(ops, CT_OPT_OCL_RED_TILED, CT_K_LN_DWB_TILED,
					       CT_K_MM_DBIAS_TILED, 17 * 1024) &&
			ops->wg_max[CT_K_GRADNORM_TILED] >= 256 &&
			ops->wg_max[CT_K_CE_ROWS_TILED] >= 256;
	}
	if (rc < 0)
		ct_ocl_ops_free(ops);
	return rc;
}

static void print_profile(const struct ct_ocl_ops *ops)
{
	double total = 0.0;

	for (int i = 0; i < CT_K_COUNT; i++)
		total += ops->prof_s[i];
	fprintf(stderr, "%-24s %8s %10s %10s %6s\n", "kernel", "calls", "ms", "cpu ms", "%");
	for (int i = 0; i < CT_K_COUNT; i++)
		if (ops->prof_n[i] > 0)
			fprintf(stderr, "%-24s %8ld %10.1f %10.1f %6.1f\n", kernel_names[i],
				ops->prof_n[i], ops->prof_s[i] * 1e3, ops->prof_cpu[i] * 1e3,
				100.0 * ops->prof_s[i] / (total > 0 ? total : 1));
}

void ct_ocl_ops_free(struct ct_ocl_ops *ops)
{
	if (ops->profile)
		print_profile(ops);
	for (int i = 0; i < CT_K_COUNT; i++)
		if (ops->k[i] != NULL)
			clReleaseKernel(ops->k[i]);
	CT_OCL_UNREF_ALL(&ops->scratch, &ops->clip_part, &ops->clip_res,
			 &ops->ce_stat, &ops->att_tr, &ops->accb, &ops->wide, &ops->tr);
	memset(ops, 0, sizeof(*ops));
}

/* Set the arguments of kernel `id` from a format: 't' a struct ct_dten
 * (two arguments: buffer, ulong offset), 'm' a cl_mem, 'i' an int, 'f' a
 * float, 'u' a cl_ulong. */
static int ocl_args(struct ct_ocl_ops *ops, int id, const char *fmt, ...)
{
	cl_kernel k = ops->k[id];
	cl_uint a = 0;
	cl_int err = CL_SUCCESS;
	va_list ap;

	va_start(ap, fmt);
	for (const char *p = fmt; *p != '\0' && err == CL_SUCCESS; p++) {
		switch (*p) {
		case 't': {
			struct ct_dten t = va_arg(ap, struct ct_dten);
			cl_ulong off = t.off;

			err = clSetKernelArg(k, a++, sizeof(cl_mem), &t.mem);
			if (err == CL_SUCCESS)
				err = clSetKernelArg(k, a++, sizeof(off), &off);
			break;
		}
		case 'm': {
			cl_mem m = va_arg(ap, cl_mem);
			err = clSetKernelArg(k, a++, sizeof(m), &m);
			break;
		}
		case 'i': {
			cl_int v = va_arg(ap, int);
			err = clSetKernelArg(k, a++, sizeof(v), &v);
			break;
		}
		case 'f': {
			cl_float v = (cl_float)va_arg(ap, double);
			err = clSetKernelArg(k, a++, sizeof(v), &v);
			break;
		}
		case 'u': {
			cl_ulong v = va_arg(ap, cl_ulong);
			err = clSetKernelArg(k, a++, sizeof(v), &v);
			break;
		}
		default:
			err = CL_INVALID_VALUE;
		}
	}
	va_end(ap);
	if (err != CL_SUCCESS)
		return ct_error(CT_ECL, "%s: argument %u: %s", kernel_names[id],
				a - 1, ct_ocl_strerror(err));
	if (a != ops->nargs[id])
		return ct_error(CT_EINTERNAL, "%s: %u arguments set, the kernel has %u",
				kernel_names[id], a, ops->nargs[id]);
	return 0;
}

/* Work-group size along dimension 0 for a range of g0 x g1 work-items:
 * a power of two, at most the kernel's limit (and 256 by the GPU rule),
 * small enough that there are about 8 work-groups per compute unit (on
 * CPU devices one work-group runs on one thread, so a single big group
 * would use one core), and no more than g0. By the GPU rule (GPUs and
 * accelerators, or CT_OCL_LOCAL=gpu) it is never narrower than the
 * kernel's preferred multiple, whatever the grid: there a group of one
 * work-item still takes a whole warp or wavefront for one lane, so a
 * small grid (a row per work-item, BT = 256) is better served by fewer,
 * full groups. Results never depend on it: every work-item computes its
 * own outputs. */
static size_t pick_local(const struct ct_ocl_ops *ops, int id, size_t g0, size_t g1)
{
	size_t cus = ops->ocl->info.compute_units ? ops->ocl->info.compute_units : 1;
	size_t target = g0 * (g1 ? g1 : 1) / (8 * cus);
	size_t cap = ops->wg_max[id], l = 1;

	if (ops->gpu_local) {
		if (cap > 256)
			cap = 256;
		while (l * 2 <= cap && l < ops->wg_mult[id])
			l *= 2;
	}
	while (l * 2 <= target && l * 2 <= cap && l * 2 <= g0)
		l *= 2;
	return l;
}

/* Enqueue kernel `id` over global size g, local size l (dims 1 or 2),
 * timed into the profile when profiling. */
static int ocl_launch(struct ct_ocl_ops *ops, int id, cl_uint dims, const size_t *g,
		      const size_t *l)
{
	double t0 = 0.0, c0 = 0.0;
	cl_int err;

	if (ops->profile) {
		clFinish(ops->ocl->queue);
		t0 = ct_time_mono_s();
		c0 = ct_time_cpu_s();
	}
	err = clEnqueueNDRangeKernel(ops->ocl->queue, ops->k[id], dims, NULL, g, l, 0,
				     NULL, NULL);
	if (err != CL_SUCCESS)
		return ct_ocl_check(err, kernel_names[id]);
	if (ops->profile) {
		clFinish(ops->ocl->queue);
		ops->prof_s[id] += ct_time_mono_s() - t0;
		ops->prof_cpu[id] += ct_time_cpu_s() - c0;
		ops->prof_n[id]++;
	}
	return 0;
}

/* Work-items of an elementwise kernel over n elements (CT_EW each). */
static size_t ew_items(const struct ct_ocl_ops *ops, size_t n)
{
	return (n + (size_t)ops->ocl->ew - 1) / (size_t)ops->ocl->ew;
}

/* Enqueue kernel `id` over a 1- or 2-D range (g1 = 0: 1-D); the range is
 * rounded up to whole work-groups (kernels check their bounds). */
static int ocl_run(struct ct_ocl_ops *ops, int id, size_t g0, size_t g1)
{
	size_t l = pick_local(ops, id, g0, g1);
	size_t g[2] = { (g0 + l - 1) / l * l, g1 }, lw[2] = { l, 1 };

	if (g0 == 0)
		return 0;
	return ocl_launch(ops, id, g1 ? 2 : 1, g, lw);
}

int ct_ocl_write(struct ct_ocl_ops *ops, struct ct_dten dst, const float *src, size_t n)
{
	if (n == 0)
		return 0;
	return ct_ocl_check(clEnqueueWriteBuffer(ops->ocl->queue, dst.mem, CL_TRUE,
						 dst.off * sizeof(float), n * sizeof(float),
						 src, 0, NULL, NULL), "write to device");
}

int ct_ocl_read(struct ct_ocl_ops *ops, float *dst, struct ct_dten src, size_t n)
{
	if (n == 0)
		return 0;
	return ct_ocl_check(clEnqueueReadBuffer(ops->ocl->queue, src.mem, CL_TRUE,
						src.off * sizeof(float), n * sizeof(float),
						dst, 0, NULL, NULL), "read from device");
}

int ct_ocl_zero(struct ct_ocl_ops *ops, struct ct_dten dst, size_t n)
{
	cl_float zero = 0.0f;

	if (n == 0)
		return 0;
	return ct_ocl_check(clEnqueueFillBuffer(ops->ocl->queue, dst.mem, &zero,
						sizeof(zero), dst.off * sizeof(float),
						n * sizeof(float), 0, NULL, NULL),
			    "clEnqueueFillBuffer");
}

/* Grow *buf to hold at least `floats` floats (contents not kept). */
static int grow(struct ct_ocl_ops *ops, cl_mem *buf, size_t *cap, size_t floats)
{
	int rc;

	if (floats <= *cap)
		return 0;
	if (*buf != NULL)
		ct_ocl_free(*buf);
	*buf = NULL;
	*cap = 0;
	rc = ct_ocl_alloc(ops->ocl, floats * sizeof(float), CL_MEM_READ_WRITE, buf);
	if (rc == 0)
		*cap = floats;
	return rc;
}

/* ---- matmul ---------------------------------------------------------------- */



/* Pack B into ops->scratch: all panels, or only the last partial one when
 * the kernel reads B in place (direct); none when it has none (the
 * scratch then only a valid argument: the vocabulary's input gradient
 * would otherwise hold a panel of its 128256 rows, 31 MiB, for nothing). */
static int mm_pack_b(struct ct_ocl_ops *ops, struct ct_dten B, int sk, int sn,
		     int N, int K, size_t pw, size_t np, int direct)
{
	size_t first = direct ? np - 1 : 0;
	size_t npack = direct ? (N % (int)pw != 0) : np;
	int rc;

	rc = grow(ops, &ops->scratch, &ops->scratch_floats,
		  npack ? npack * pw * (size_t)(K > 0 ? K : 1) : 1);
	if (rc < 0 || npack == 0 || K <= 0)
		return rc;
	B.off += first * pw * (size_t)sn;
	if (B.fmt != CT_BASE_F32) {	/* a compact weight, widened as it is packed */
		rc = ocl_args(ops, CT_K_MM_PACK_C, "tiiimii", B, sk, sn, B.fmt, ops->scratch, K,
			      N - (int)(first * pw));
		return rc < 0 ? rc : ocl_run(ops, CT_K_MM_PACK_C, npack, ((size_t)K + 15) / 16);
	}
	rc = ocl_args(ops, CT_K_MM_PACK, "tiimii", B, sk, sn, ops->scratch, K,
		      N - (int)(first * pw));
	if (rc == 0)
		rc = ocl_run(ops, CT_K_MM_PACK, npack, ((size_t)K + 15) / 16);
	return rc;
}

/* Length of the k pieces (see ct_mm): about 512 KiB of the operand that is
 * reused across the outer loop (B, K x N, when all panels of a row block
 * run together (pfast); else A, M x K), at least 256 (measured best on
 * PoCL for the model's shapes); CT_OCL_KC overrides (tuning, tests). K <=
 * 2 pieces runs whole. (Sized by max(M, N) before, the transposed forward
 * of the logits, M = 50304, N = BT = 256, ran in 3 pieces at 360 GFLOP/s;
 * whole, its 786 KB of packed inputs stay in cache: 440.) */
static int mm_kpiece(int M, int N, int K, int pfast)
{
	int reused = pfast ? N : M, kc = (1 << 17) / (reused > 0 ? reused : 1);

	if (kc < 256)
		kc = 256;
	kc = (int)ct_opt_int(CT_OPT_OCL_KC, kc);
	return K > 2 * kc ? kc : K;
}

/* One product for the kernel (see kernels/matmul.cl):
 *   out[m*som + n*son] (+)= init + sum_k A[m*sam + k*sak] * B[k*sk + n*sn] */
struct mm_args {
	struct ct_dten out, A, B, bias;
	int som, son, sam, sak, sk, sn;
	int has_bias, bias_row, accumulate;
	int M, N, K;
};

static int mm_run_blocked(struct ct_ocl_ops *ops, const struct mm_args *a);

/* Groups of bm x bn tiles over an M x N output. */
static size_t mm_tiles(const struct mm_args *a, int bm, int bn)
{
	return ((size_t)a->M + bm - 1) / bm * (((size_t)a->N + bn - 1) / bn);
}

/* mm_run through the tiled kernels (mm_tiled.cl): one launch, one group of
 * (BN/RN) x (BM/RM) work-items per BM x BN block of outputs, with
 * ct_mm_tiled's tiles, else ct_mm_tiled_m's (64 x 64), else ct_mm_tiled_s's
 * (32 x 32): the first that gives every compute unit a group (or as
 * ops->mm_tiles forces). */
static int mm_tiled_run(struct ct_ocl_ops *ops, const struct mm_args *a)
{
	const struct ct_ocl *o = ops->ocl;
	struct ct_dten bias = a->bias.mem != NULL ? a->bias : a->out;
	size_t cus = o->info.compute_units ? o->info.compute_units : 1;
	int bm = o->mmt_bm, bn = o->mmt_bn, id = CT_K_MM_TILED, pick = ops->mm_tiles, rc;
	size_t l[2] = { (size_t)(bn / o->mmt_rn), (size_t)(bm / o->mmt_rm) }, g[2];

	if (a->M <= 0 || a->N <= 0)
		return 0;
	if (pick == 0)
		pick = mm_tiles(a, bm, bn) >= cus ? 'b'
			: ops->wg_max[CT_K_MM_TILED_M] >= 256 && mm_tiles(a, 64, 64) >= cus ? 'm'
			: ops->wg_max[CT_K_MM_TILED_S] >= 256 ? 's' : 'b';
	if (pick != 'b') {
		id = pick == 'm' ? CT_K_MM_TILED_M : CT_K_MM_TILED_S;
		bm = bn = pick == 'm' ? 64 : 32;
		l[0] = l[1] = 16;
	}
	g[0] = ((size_t)a->N + bn - 1) / bn * l[0];
	g[1] = ((size_t)a->M + bm - 1) / bm * l[1];
	rc = ocl_args(ops, id, "tiitiitiitiiiiii", a->A, a->sam, a->sak, a->B,
		      a->sk, a->sn, bias, a->has_bias, a->bias_row, a->out, a->som, a->son,
		      a->M, a->N, a->K, a->accumulate);
	if (rc == 0)
		rc = ocl_launch(ops, id, 2, g, l);
	return rc;
}

/* Run one product (tiled or register-blocked: the same bits). */
static int mm_run(struct ct_ocl_ops *ops, const struct mm_args *a)
{
	if (ops->mm_tiled)
		return mm_tiled_run(ops, a);
	return mm_run_blocked(ops, a);
}

/* ct_mm, or the variant that reads a compact A or B where it is (B's
 * packed panels are float32: mm_pack_b widens them). */
static int mm_kernel(const struct mm_args *a)
{
	int f = a->A.fmt != CT_BASE_F32 ? a->A.fmt : a->B.fmt;
	int base = a->A.fmt != CT_BASE_F32 ? CT_K_MM_AH : CT_K_MM_BH;

	return f == CT_BASE_F32 ? CT_K_MM : base + (f - CT_BASE_BF16);
}

/* Whether B, though its rows are contiguous, is packed all the same:
 * read in place, each k of a panel is a row of B apart, and with rows of
 * a multiple of 1 KiB (GPT-2's 768 and 3072 floats) a panel's k rows fall
 * in a few sets of the L1 cache (4 KiB apart: one set) and keep evicting
 * each other; packed, a panel is contiguous. On PoCL, AVX2 (AMD family
 * 25), 124M's products per CPU-second, packing included: dinp 62-66 ->
 * 69-76 and 48-51 -> 67-75 GFLOP, dweight 42-50 -> 61-67 (bench_kernels
 * without and with --pack; doc/results.md "124M on an AVX2 CPU"). Only
 * when the panels fit in ops->pack_max (the scratch bound the backend
 * holds itself to: a layer's weight, never the vocabulary's 50304 x 768,
 * which mm_pack_pieces packs one k piece at a time instead). */
static int mm_pack_all(const struct ct_ocl_ops *ops, int K, size_t np, size_t pw)
{
	return (double)np * pw * K <= (double)ops->pack_max;
}

/* Whether B, too big to pack whole (the vocabulary's 50304 x 768 in the
 * input gradient), is packed one k piece at a time instead of read in
 * place: each piece's panels (kc rows of k) fit in ops->pack_max, and the
 * kernel reads them as it would all of B's. float32 only: a compact B's
 * offsets count its own blocks. */
static int mm_pack_pieces(const struct ct_ocl_ops *ops, const struct mm_args *a, int kc,
			  size_t np, size_t pw)
{
	return a->sn == 1 && kc < a->K && a->B.fmt == CT_BASE_F32 &&
	       !mm_pack_all(ops, a->K, np, pw) && mm_pack_all(ops, kc, np, pw);
}

/* The register-blocked kernel. When B's rows are contiguous (sn == 1) it
 * reads B in place and only a last partial panel is packed, unless
 * mm_pack_all (all of B packed) or mm_pack_pieces (each k piece's rows
 * packed before the piece runs); otherwise all of B is packed into
 * panels. Long k ranges run in pieces. */
static int mm_run_blocked(struct ct_ocl_ops *ops, const struct mm_args *a)
{
	const struct ct_ocl *o = ops->ocl;
	size_t pw = (size_t)o->mm_vw * o->mm_nv;
	size_t np = ((size_t)a->N + pw - 1) / pw;
	size_t mb = ((size_t)a->M + o->mm_r - 1) / o->mm_r;
	int M = a->M, N = a->N, K = a->K;
	int direct = a->sn == 1 && !mm_pack_all(ops, K, np, pw);
	int lda = (int)(np * pw), pfast, kc, pieces, rc;
	int id = mm_kernel(a);
	struct ct_dten bias = a->bias.mem != NULL ? a->bias : a->out;

	if (M <= 0 || N <= 0)
		return 0;
	/* keep the bigger operand's blocks hot: with A larger than B, run all
	 * panels of one row block together */
	pfast = (double)M * K > (double)K * N;
	kc = mm_kpiece(M, N, K, pfast);
	pieces = mm_pack_pieces(ops, a, kc, np, pw);
	direct = direct && !pieces;
	rc = pieces ? 0 : mm_pack_b(ops, a->B, a->sk, a->sn, N, K, pw, np, direct);
	if (rc == 0)
		rc = grow(ops, &ops->accb, &ops->accb_floats, kc < K ? (size_t)M * lda : 1);
	for (int k0 = 0; rc == 0 && (k0 < K || k0 == 0); k0 += kc) {
		int k1 = K - k0 < kc ? K : k0 + kc;
		struct ct_dten bk = a->B;

		bk.off += (size_t)k0 * (size_t)a->sk;
		if (pieces)
			rc = mm_pack_b(ops, bk, a->sk, a->sn, N, k1 - k0, pw, np, 0);
		if (rc == 0)
			rc = ocl_args(ops, id, "tiitimitiitiiiiiiimiiiii", a->A, a->sam, a->sak,
				      a->B, a->sk, ops->scratch, direct, bias, a->has_bias,
				      a->bias_row, a->out, a->som, a->son, M, N, K,
				      a->accumulate, pfast, ops->accb, lda, k0, k1,
				      pieces ? k0 : 0, pieces ? k1 - k0 : K);
		if (rc == 0)
			rc = pfast ? ocl_run(ops, id, np, mb) : ocl_run(ops, id, mb, np);
		if (K <= 0)
			break;
	}
	return rc;
}

/* The plain form: out (M,N) row-major. */
static int mm(struct ct_ocl_ops *ops, struct ct_dten out, struct ct_dten A,
	      int sam, int sak, struct ct_dten B, int sk, int sn,
	      struct ct_dten bias, int has_bias, int M, int N, int K, int accumulate)
{
	struct mm_args a = {
		.out = out, .A = A, .B = B, .bias = bias, .som = N, .son = 1,
		.sam = sam, .sak = sak, .sk = sk, .sn = sn, .has_bias = has_bias,
		.bias_row = 0, .accumulate = accumulate, .M = M, .N = N, .K = K,
	};

	return mm_run(ops, &a);
}

/* The forward for few rows (kernels/matvec.cl: the weights read in place,
 * no packing, no padded columns): on CPU devices for BT <= MATVEC_ROWS
 * (measured with bench_kernels on 124M's shapes: BT 1-2 well ahead of
 * ct_mm, BT 3-4 a wash with a 4 x 4 variant, BT 6+ behind; see
 * doc/results.md "Sampling speed"; GPUs keep the tiled kernels, not
 * measured there). CT_OCL_MATVEC=0 / 1 forces it off / on for every
 * shape, and CT_OCL_FWD=n / t (ct_mm's two forms) turns it off (tuning,
 * tests). Same bits as ct_mm. */
#define MATVEC_ROWS 2
static int matvec_use(const struct ct_ocl_ops *ops, int BT)
{
	const char *env = ct_opt_str(CT_OPT_OCL_MATVEC), *fwd = ct_opt_str(CT_OPT_OCL_FWD);

	if (env != NULL)
		return env[0] == '1';
	if (fwd != NULL && (fwd[0] == 'n' || fwd[0] == 't'))
		return 0;
	return ops->ocl->info.type == CT_OCL_TYPE_CPU && BT <= MATVEC_ROWS;
}

/* One launch: ct_matvec1 (16 outputs per work-item) for one row, else
 * ct_matvec2 (8 outputs x 2 rows per work-item) over pairs of rows. */
static int matvec_run(struct ct_ocl_ops *ops, struct ct_dten out, struct ct_dten inp,
		      struct ct_dten w, struct ct_dten bias, int has_bias, int BT,
		      int C, int OC)
{
	int nt = BT == 1 ? 1 : 2, id = BT == 1 ? CT_K_MATVEC1 : CT_K_MATVEC2;
	int rc;

	if (BT <= 0 || OC <= 0)
		return 0;
	rc = ocl_args(ops, id, "tttitiii", inp, w, has_bias ? bias : out, has_bias, out,
		      BT, C, OC);
	if (rc == 0)
		rc = ocl_run(ops, id, ((size_t)OC + 16 / nt - 1) / (16 / nt),
			     ((size_t)BT + nt - 1) / nt);
	return rc;
}

/* Compact weights (ct_base.h) that the product does not read where they
 * are (read_in_place) are widened, exactly, into ops->wide right
 * before the product that reads them, about WIDE_MAX floats (4 MiB) at a
 * time: a bigger weight runs in pieces of whole outputs (rows of out for
 * the forward, columns of dinp for the input gradient; at least
 * WIDE_MIN_PIECE of them, so that a piece still fills the kernels'
 * panels), each output's chain whole and unchanged, so the bits are those
 * of one product. The scratch then peaks at 64 rows of the vocabulary
 * matrix's transpose (Qwen3's 151936 x 64: 39 MiB, against its 311 MiB of
 * bf16 embeddings). CT_OCL_WIDE_MAX=N (floats) overrides (tests). */
#define WIDE_MAX ((size_t)1 << 20)
#define WIDE_MIN_PIECE 64

static size_t wide_max(void)
{
	return (size_t)ct_opt_int(CT_OPT_OCL_WIDE_MAX, (long)WIDE_MAX);
}

/* Whether the register-blocked kernel reads the compact weight w itself
 * (kernels/matmul.cl's ct_mm_ah..ct_mm_bn: the same bits as widening
 * first), the product decoding each element `reads` times (once per
 * panel of the forward's inputs, once per row block of dinp): bf16 always
 * (a shift an element, and half float32's bytes); q8 when read at most 8
 * times (a vector of int8 converted and scaled: at Qwen3-0.6B B=1 T=32 on
 * PoCL its step took 1.0-1.1 s of CPU read in place by dinp, 6 reads,
 * against 1.4 s widened first); nf4, whose codes cost a table lookup a
 * vector, at most twice (the same dinp in place: 1.7 s against 1.3 s
 * widened with the lookup a tree of 15 selects; a wash, 1.23-1.29 s
 * against 1.26, with AVX-512's one permute). The tiled kernels read a
 * widened copy.
 * CT_OCL_WIDE_MAX set (tests): never. */
static int read_in_place(const struct ct_ocl_ops *ops, struct ct_dten w, size_t reads)
{
	if (ops->mm_tiled || ct_opt_str(CT_OPT_OCL_WIDE_MAX) != NULL)
		return 0;
	return w.fmt == CT_BASE_BF16 || reads <= (w.fmt == CT_BASE_Q8 ? 8u : 2u);
}

/* ops->wide (rows, cols) = the bf16 block of w (rows of ld elements from
 * w.off on), widened. */
static int widen(struct ct_ocl_ops *ops, struct ct_dten w, size_t rows, int cols, int ld)
{
	size_t n = rows * (size_t)cols;
	int rc;

	if (w.fmt != CT_BASE_BF16 && !ct_base_blocked(w.fmt))
		return ct_error(CT_EINTERNAL, "weight of base format %d", w.fmt);
	rc = grow(ops, &ops->wide, &ops->wide_floats, n ? n : 1);
	if (rc < 0 || n == 0)
		return rc;
	if (ct_base_blocked(w.fmt) && cols == ld) {
		rc = ocl_args(ops, CT_K_Q8_WIDEN, "mutui", ops->wide, (cl_ulong)0, w, (cl_ulong)n,
			      w.fmt);
		return rc < 0 ? rc : ocl_run(ops, CT_K_Q8_WIDEN, (n + 15) / 16, 0);
	}
	if (ct_base_blocked(w.fmt)) {
		rc = ocl_args(ops, CT_K_Q8_WIDEN2, "mutiiii", ops->wide, (cl_ulong)0, w, (int)rows,
			      cols, ld, w.fmt);
		return rc < 0 ? rc : ocl_run(ops, CT_K_Q8_WIDEN2,
					     ((size_t)cols + ops->ocl->mm_vw - 1) /
						     (size_t)ops->ocl->mm_vw, rows);
	}
	if (cols == ld) {
		rc = ocl_args(ops, CT_K_BF16_WIDEN, "mutu", ops->wide, (cl_ulong)0, w,
			      (cl_ulong)n);
		return rc < 0 ? rc : ocl_run(ops, CT_K_BF16_WIDEN, (n + 15) / 16, 0);
	}
	rc = ocl_args(ops, CT_K_BF16_WIDEN2, "mutiii", ops->wide, (cl_ulong)0, w, (int)rows,
		      cols, ld);
	return rc < 0 ? rc : ocl_run(ops, CT_K_BF16_WIDEN2, (size_t)cols, rows);
}

/* The forward of a float32 w into out with rows ldo apart (ldo >= OC). */
static int mm_forward(struct ct_ocl_ops *ops, struct ct_dten out, struct ct_dten inp,
		      struct ct_dten w, struct ct_dten bias, int has_bias, int BT, int C,
		      int OC, int ldo)
{
	const char *env = ct_opt_str(CT_OPT_OCL_FWD);
	/* Computing out^T saves packing the weights (C x OC) for packing the
	 * inputs (C x BT) but writes the output scattered (column by column:
	 * see ct_mm_store). Measured with bench_kernels on PoCL (Zen 5, 2
	 * cores): ahead from OC = 1.5 x BT (BT 256: 370-430 GFLOP/s against
	 * 280-320 for every GPT-2 124M shape), a wash there (2048 x 3072),
	 * behind below (1024 x 768, 4096 x 768). CT_OCL_FWD=n / t forces
	 * either (tuning, tests). With
	 * BT = 1 (a sampling step) the transposed form used a 32-wide panel
	 * for one real column: 31/32 of its fmas wasted, in k pieces; so on
	 * CPUs BT <= 2 goes to matvec_run (GPT-2 124M, one row, PoCL on 2
	 * cores at load ~3: 75 CPU-ms per token against 125). */
	int transposed = 2 * (long)OC >= 3 * (long)BT;

	if (ldo == OC && matvec_use(ops, BT))
		return matvec_run(ops, out, inp, w, bias, has_bias, BT, C, OC);
	if (env != NULL && (env[0] == 'n' || env[0] == 't'))
		transposed = env[0] == 't';
	if (transposed) {
		/* out^T (OC, BT): A = w (OC x C, rows contiguous), B[k=i, n=bt] =
		 * inp[bt*C + i] (packed: BT x C, smaller than w); bias per row */
		struct mm_args a = {
			.out = out, .A = w, .B = inp, .bias = bias, .som = 1, .son = ldo,
			.sam = C, .sak = 1, .sk = 1, .sn = C, .has_bias = has_bias,
			.bias_row = 1, .accumulate = 0, .M = OC, .N = BT, .K = C,
		};

		return mm_run(ops, &a);
	} else {
		/* A = inp (BT x C), B[k=i, n=o] = w[o*C + i] (packed) */
		struct mm_args a = {
			.out = out, .A = inp, .B = w, .bias = bias, .som = ldo, .son = 1,
			.sam = C, .sak = 1, .sk = 1, .sn = C, .has_bias = has_bias,
			.bias_row = 0, .accumulate = 0, .M = BT, .N = OC, .K = C,
		};

		return mm_run(ops, &a);
	}
}

int ct_ocl_matmul_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			  struct ct_dten inp, struct ct_dten w,
			  struct ct_dten bias, int has_bias, int BT, int C, int OC)
{
	size_t rows;
	int rc = 0;

	if (w.fmt == 0 || (!matvec_use(ops, BT) &&
			   read_in_place(ops, w, ((size_t)BT + ops->ocl->mm_vw * ops->ocl->mm_nv - 1) /
						 ((size_t)ops->ocl->mm_vw * ops->ocl->mm_nv))))
		return mm_forward(ops, out, inp, w, bias, has_bias, BT, C, OC, OC);
	/* compact: rows o0.. of w widened, into columns o0.. of out */
	rows = C > 0 ? wide_max() / (size_t)C : (size_t)OC;
	if (rows < WIDE_MIN_PIECE && ct_opt_str(CT_OPT_OCL_WIDE_MAX) == NULL)
		rows = WIDE_MIN_PIECE;
	if (rows < 1)
		rows = 1;
	for (int o0 = 0; rc == 0 && o0 < OC; o0 += (int)rows) {
		int n = OC - o0 < (int)rows ? OC - o0 : (int)rows;
		struct ct_dten wr = w, o = out, b = bias;

		wr.off += (size_t)o0 * C;
		o.off += (size_t)o0;
		b.off += has_bias ? (size_t)o0 : 0;
		rc = widen(ops, wr, (size_t)n, C, C);
		if (rc == 0)
			rc = mm_forward(ops, o, inp, ct_dten_at(ops->wide, 0), b, has_bias, BT, C,
					n, OC);
	}
	return rc;
}

int ct_ocl_matmul_dinp(struct ct_ocl_ops *ops, struct ct_dten dinp, struct ct_dten dout,
		       struct ct_dten w, int BT, int C, int OC)
{
	struct ct_dten none = { NULL, 0, 0 };
	size_t cols, pw = (size_t)ops->ocl->mm_vw * ops->ocl->mm_nv;
	int rc = 0;

	/* dinp[bt, i] += sum_o dout[bt, o] * w[o, i]: A = dout, B = w */
	if (w.fmt == 0 || read_in_place(ops, w, ((size_t)BT + ops->ocl->mm_r - 1) /
						(size_t)ops->ocl->mm_r))
		return mm(ops, dinp, dout, OC, 1, w, C, 1, none, 0, BT, C, OC, 1);
	/* compact: columns i0.. of w widened, into columns i0.. of dinp */
	cols = OC > 0 ? wide_max() / (size_t)OC : (size_t)C;
	if (cols < WIDE_MIN_PIECE && ct_opt_str(CT_OPT_OCL_WIDE_MAX) == NULL)
		cols = WIDE_MIN_PIECE;
	/* whole panels: no piece but the last packs a partial one, and every
	 * piece starts on a whole vector of q8/nf4 blocks (ct_q8_widen2 then
	 * decodes a vector at a time; from column 341 of gate/up's 6144 rows
	 * it went element by element) */
	if (cols > pw && ct_opt_str(CT_OPT_OCL_WIDE_MAX) == NULL)
		cols -= cols % pw;
	if (cols < 1)
		cols = 1;
	for (int i0 = 0; rc == 0 && i0 < C; i0 += (int)cols) {
		int n = C - i0 < (int)cols ? C - i0 : (int)cols;
		struct ct_dten wc = w, d = dinp;
		struct mm_args a = {
			.out = d, .A = dout, .bias = none,
			.som = C, .son = 1, .sam = OC, .sak = 1, .sk = n, .sn = 1,
			.has_bias = 0, .bias_row = 0, .accumulate = 1, .M = BT, .N = n, .K = OC,
		};

		wc.off += (size_t)i0;
		a.out.off += (size_t)i0;
		rc = widen(ops, wc, (size_t)OC, n, C);
		a.B = ct_dten_at(ops->wide, 0);	/* widen may have grown it */
		if (rc == 0)
			rc = mm_run(ops, &a);
	}
	return rc;
}

/* dw[o, i] += sum_bt dout[bt, o] * inp[bt, i]: A = dout^T, B = inp.
 * Read in place, A's k (bt) run a row of dout apart: a row block's loads
 * of A then miss the caches (OC x 4 bytes apart: a few sets each) and
 * the register-blocked kernel stalls on them. So on it, within
 * ops->tr_max, dout^T is first made row-major (ct_mm_tr, a copy) one
 * block of rows o at a time and read contiguously (the same floats, the
 * same chains: the same bits). On PoCL (AMD family 25, AVX2), B=4 T=64,
 * GFLOP per CPU-second: see doc/results.md "The weight gradients'
 * dout transposed". (Measured no faster before: dw^T with B = dout read
 * in place, and A interleaved by row blocks.) */
static int mm_dweight(struct ct_ocl_ops *ops, struct ct_dten dw, struct ct_dten dout,
		      struct ct_dten inp, int BT, int C, int OC)
{
	struct ct_dten none = { NULL, 0, 0 };
	size_t rows = BT > 0 ? ops->tr_max / (size_t)BT : 0;
	int rc = 0;

	if (ops->mm_tiled || rows < (size_t)ops->ocl->mm_r)
		return mm(ops, dw, dout, 1, OC, inp, C, 1, none, 0, OC, C, BT, 1);
	for (int o0 = 0; rc == 0 && o0 < OC; o0 += (int)rows) {
		int m = OC - o0 < (int)rows ? OC - o0 : (int)rows;

		rc = grow(ops, &ops->tr, &ops->tr_floats, (size_t)m * BT);
		if (rc == 0)
			rc = ocl_args(ops, CT_K_MM_TR, "titiii", ct_dten_plus(dout, (size_t)o0), OC,
				      ct_dten_at(ops->tr, 0), BT, BT, m);
		if (rc == 0)
			rc = ocl_run(ops, CT_K_MM_TR, ((size_t)m + 15) / 16, ((size_t)BT + 15) / 16);
		if (rc == 0)
			rc = mm(ops, ct_dten_plus(dw, (size_t)o0 * C), ct_dten_at(ops->tr, 0), BT, 1,
				inp, C, 1, none, 0, m, C, BT, 1);
	}
	return rc;
}

int ct_ocl_matmul_dweight(struct ct_ocl_ops *ops, struct ct_dten dw, struct ct_dten dbias,
			  int has_bias, struct ct_dten dout, struct ct_dten inp,
			  int BT, int C, int OC)
{
	int rc;

	rc = mm_dweight(ops, dw, dout, inp, BT, C, OC);
	if (rc == 0 && has_bias && ops->red_tiled) {	/* 32 columns per group */
		size_t g = ((size_t)OC + 31) / 32 * 256, l = 256;

		rc = ocl_args(ops, CT_K_MM_DBIAS_TILED, "ttii", dout, dbias, BT, OC);
		if (rc == 0)
			rc = ocl_launch(ops, CT_K_MM_DBIAS_TILED, 1, &g, &l);
	} else if (rc == 0 && has_bias) {
		rc = ocl_args(ops, CT_K_MM_DBIAS, "ttii", dout, dbias, BT, OC);
		if (rc == 0)
			rc = ocl_run(ops, CT_K_MM_DBIAS, ew_items(ops, (size_t)OC), 0);
	}
	return rc;
}

int ct_ocl_matmul_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			   struct ct_dten dw, struct ct_dten dbias, int has_bias,
			   struct ct_dten dout, struct ct_dten inp, struct ct_dten w,
			   int BT, int C, int OC)
{
	int rc = ct_ocl_matmul_dinp(ops, dinp, dout, w, BT, C, OC);

	if (rc == 0)
		rc = ct_ocl_matmul_dweight(ops, dw, dbias, has_bias, dout, inp, BT, C, OC);
	return rc;
}

/* ---- other layers ---------------------------------------------------------- */

/* Set the arguments, then run over (g0, g1). */
#define RUN(id, g0, g1, ...) do { \
	int rc_ = ocl_args(ops, id, __VA_ARGS__); \
	if (rc_ == 0) \
		rc_ = ocl_run(ops, id, (size_t)(g0), (size_t)(g1)); \
	return rc_; \
} while (0)

int ct_ocl_encoder_forward(struct ct_ocl_ops *ops, struct ct_dten out, cl_mem inp,
			   struct ct_dten wte, struct ct_dten wpe, int B, int T, int C)
{
	if (wte.fmt != wpe.fmt)
		return ct_error(CT_EINTERNAL, "encoder: wte and wpe stored differently");
	if (wte.fmt == CT_BASE_BF16)
		RUN(CT_K_ENCODER_FWD_H, C, B * T, "tmttiii", out, inp, wte, wpe, B * T, T, C);
	if (ct_base_blocked(wte.fmt))
		RUN(CT_K_ENCODER_FWD_Q8, C, B * T, "tmttiiii", out, inp, wte, wpe, B * T, T, C,
		    wte.fmt);
	RUN(CT_K_ENCODER_FWD, C, B * T, "tmttiii", out, inp, wte, wpe, B * T, T, C);
}

int ct_ocl_embed_forward_h(struct ct_ocl_ops *ops, struct ct_dten out, cl_mem inp,
			   struct ct_dten wte, int BT, int C)
{
	if (ct_base_blocked(wte.fmt))
		RUN(CT_K_LL_EMBED_FWD_Q8, C, BT, "tmtiii", out, inp, wte, BT, C, wte.fmt);
	RUN(CT_K_LL_EMBED_FWD_H, C, BT, "tmtii", out, inp, wte, BT, C);
}

int ct_ocl_encoder_backward(struct ct_ocl_ops *ops, struct ct_dten dwte,
			    struct ct_dten dwpe, struct ct_dten dout, cl_mem inp,
			    int B, int T, int C)
{
	RUN(CT_K_ENCODER_BWD, C, 0, "tttmiii", dwte, dwpe, dout, inp, B * T, T, C);
}

int ct_ocl_layernorm_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			     struct ct_dten mean, struct ct_dten rstd, struct ct_dten inp,
			     struct ct_dten w, struct ct_dten b, int BT, int C)
{
	RUN(CT_K_LAYERNORM_FWD, BT, 0, "ttttttii", out, mean, rstd, inp, w, b, BT, C);
}

int ct_ocl_layernorm_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			      struct ct_dten dw, struct ct_dten db, struct ct_dten dout,
			      struct ct_dten inp, struct ct_dten w, struct ct_dten mean,
			      struct ct_dten rstd, int BT, int C)
{
	int rc;

	rc = ocl_args(ops, CT_K_LAYERNORM_BWD_DINP, "ttttttii", dinp, dout, inp, w,
		      mean, rstd, BT, C);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_LAYERNORM_BWD_DINP, (size_t)BT, 0);
	if (dw.mem == NULL)	/* frozen layernorm (LoRA): dinp only */
		return rc;
	if (rc == 0 && ops->red_tiled) {	/* 32 channels per group */
		size_t g = ((size_t)C + 31) / 32 * 256, l = 256;

		rc = ocl_args(ops, CT_K_LN_DWB_TILED, "ttttttii", dw, db, dout, inp,
			      mean, rstd, BT, C);
		return rc == 0 ? ocl_launch(ops, CT_K_LN_DWB_TILED, 1, &g, &l) : rc;
	}
	if (rc == 0)
		rc = ocl_args(ops, CT_K_LAYERNORM_BWD_DWB, "ttttttii", dw, db, dout, inp,
			      mean, rstd, BT, C);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_LAYERNORM_BWD_DWB, ew_items(ops, (size_t)C), 0);
	return rc;
}

int ct_ocl_attention_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			     struct ct_dten att, struct ct_dten qkv,
			     int B, int T, int C, int NH)
{
	RUN(CT_K_ATTENTION_FWD, T, B * NH, "tttiiii", out, att, qkv, B, T, C, NH);
}

int ct_ocl_attention_backward(struct ct_ocl_ops *ops, struct ct_dten dqkv,
			      struct ct_dten datt, struct ct_dten dout,
			      struct ct_dten qkv, struct ct_dten att,
			      int B, int T, int C, int NH)
{
	/* 8 channels per work-item when a head's channels come in eights */
	int k8 = (C / NH) % 8 == 0;
	int id = k8 ? CT_K_ATTENTION_BWD_QKV8 : CT_K_ATTENTION_BWD_QKV;
	int rc;

	rc = ocl_args(ops, CT_K_ATTENTION_BWD_G, "ttttiiii", datt, dout, qkv, att,
		      B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTENTION_BWD_G, (size_t)T, (size_t)B * NH);
	if (rc == 0)
		rc = ocl_args(ops, id, "tttttiiii", dqkv, datt, dout, qkv, att, B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, id, (size_t)(k8 ? C / 8 : C), (size_t)B * T);
	return rc;
}

/* Transpose the channels at src (B*T rows of ld floats, C of them) into
 * block `blk` of ops->att_tr, (B,NH,hs,T) each; the scratch holds
 * `nblk` blocks plus 32 floats of padding (read by the last 32-key dots). */
static int att_tr(struct ct_ocl_ops *ops, int blk, int nblk, struct ct_dten src, int ld,
		  int B, int T, int C)
{
	size_t per = (size_t)B * C * T;
	int rc = grow(ops, &ops->att_tr, &ops->att_tr_floats, (size_t)nblk * per + 32);

	if (rc == 0)
		rc = ocl_args(ops, CT_K_ATTN_TR, "ttiiii", ct_dten_at(ops->att_tr, blk * per), src,
			      ld, B, T, C);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTN_TR, (size_t)T, (size_t)B * C);
	return rc;
}

/* Work-items of attention.cl's kernels per head: CT_ATT_R rows each. */
static size_t att_items(const struct ct_ocl_ops *ops, int T)
{
	return ((size_t)T + (size_t)ops->ocl->att_r - 1) / (size_t)ops->ocl->att_r;
}

/* Launch attn_tiled.cl's kernel `id` over (query or key tiles, B*NH). */
static int atg_run(struct ct_ocl_ops *ops, int id, int B, int T, int NH)
{
	size_t g[2] = { ((size_t)T + 31) / 32 * 256, (size_t)B * NH }, l[2] = { 256, 1 };

	return ocl_launch(ops, id, 2, g, l);
}

/* Whether this shape runs through attn_tiled.cl (heads of <= 64). */
static int atg_use(const struct ct_ocl_ops *ops, int B, int T, int C, int NH)
{
	return ops->att_tiled && NH > 0 && C / NH <= 64 && B > 0 && T > 0;
}

int ct_ocl_attention_forward_recompute(struct ct_ocl_ops *ops, struct ct_dten out,
				       struct ct_dten stat, struct ct_dten qkv,
				       int B, int T, int C, int NH)
{
	int rc;

	if (atg_use(ops, B, T, C, NH)) {
		rc = ocl_args(ops, CT_K_ATG_FWD, "tttiiii", out, stat, qkv, B, T, C, NH);
		return rc == 0 ? atg_run(ops, CT_K_ATG_FWD, B, T, NH) : rc;
	}
	rc = att_tr(ops, 0, 1, ct_dten_plus(qkv, C), 3 * C, B, T, C);

	if (rc == 0)
		rc = ocl_args(ops, CT_K_ATTN_FWD, "ttttiiii", out, stat, qkv,
			      ct_dten_at(ops->att_tr, 0), B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTN_FWD, att_items(ops, T), (size_t)B * NH);
	return rc;
}

/* Transposes (k, v, q, dout), then three passes: the rows' dot (needed by
 * every g), dq by query rows, dk and dv by key rows (each chain in the
 * reference's order). */
int ct_ocl_attention_backward_recompute(struct ct_ocl_ops *ops, struct ct_dten dqkv,
					struct ct_dten dot, struct ct_dten dout,
					struct ct_dten qkv, struct ct_dten stat,
					int B, int T, int C, int NH)
{
	struct ct_dten tr;
	int rc;

	if (atg_use(ops, B, T, C, NH)) {	/* dq (and each row's dot), then dk, dv */
		rc = ocl_args(ops, CT_K_ATG_DQ, "tttttiiii", dqkv, dot, dout, qkv, stat,
			      B, T, C, NH);
		if (rc == 0)
			rc = atg_run(ops, CT_K_ATG_DQ, B, T, NH);
		if (rc == 0)
			rc = ocl_args(ops, CT_K_ATG_DKV, "tttttiiii", dqkv, dot, dout, qkv,
				      stat, B, T, C, NH);
		return rc == 0 ? atg_run(ops, CT_K_ATG_DKV, B, T, NH) : rc;
	}
	rc = att_tr(ops, 0, 4, ct_dten_plus(qkv, C), 3 * C, B, T, C);
	if (rc == 0)
		rc = att_tr(ops, 1, 4, ct_dten_plus(qkv, 2 * (size_t)C), 3 * C, B, T, C);
	if (rc == 0)
		rc = att_tr(ops, 2, 4, qkv, 3 * C, B, T, C);
	if (rc == 0)
		rc = att_tr(ops, 3, 4, dout, C, B, T, C);
	tr = ct_dten_at(ops->att_tr, 0);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_ATTN_BWD_DOT, "tttttiiii", dot, dout, qkv, stat, tr,
			      B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTN_BWD_DOT, att_items(ops, T), (size_t)B * NH);
	for (int id = CT_K_ATTN_BWD_DQ; id <= CT_K_ATTN_BWD_DKV && rc == 0; id++) {
		rc = ocl_args(ops, id, "ttttttiiii", dqkv, dot, dout, qkv, stat, tr,
			      B, T, C, NH);
		if (rc == 0)
			rc = ocl_run(ops, id, att_items(ops, T), (size_t)B * NH);
	}
	return rc;
}

int ct_ocl_gelu_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			struct ct_dten inp, size_t n)
{
	RUN(CT_K_GELU_FWD, ew_items(ops, n), 0, "ttu", out, inp, (cl_ulong)n);
}

int ct_ocl_gelu_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			 struct ct_dten inp, struct ct_dten dout, size_t n)
{
	RUN(CT_K_GELU_BWD, ew_items(ops, n), 0, "tttu", dinp, inp, dout, (cl_ulong)n);
}

int ct_ocl_residual_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			    struct ct_dten a, struct ct_dten b, size_t n)
{
	RUN(CT_K_RESIDUAL_FWD, ew_items(ops, n), 0, "tttu", out, a, b, (cl_ulong)n);
}

int ct_ocl_residual_backward(struct ct_ocl_ops *ops, struct ct_dten da,
			     struct ct_dten db, struct ct_dten dout, size_t n)
{
	RUN(CT_K_RESIDUAL_BWD, ew_items(ops, n), 0, "tttu", da, db, dout, (cl_ulong)n);
}

/* One of the softmax's row chains (kernel id CT_K_CE_MAX or CT_K_CE_SUM)
 * over x (BT,Vp) into ops->ce_stat: one work-item per row, or with the
 * tiled reductions groups of 256 for 32 rows (reduce_tiled.cl; the same
 * chains). */
static int ce_row_chain(struct ct_ocl_ops *ops, int id, struct ct_dten x, int BT, int V,
			int Vp)
{
	int rc;

	if (ops->red_tiled) {
		size_t gs = ((size_t)BT + 31) / 32 * 256, ls = 256;

		rc = ocl_args(ops, CT_K_CE_ROWS_TILED, "tmiiii", x, ops->ce_stat, BT, V, Vp,
			      id == CT_K_CE_SUM);
		return rc < 0 ? rc : ocl_launch(ops, CT_K_CE_ROWS_TILED, 1, &gs, &ls);
	}
	rc = ocl_args(ops, id, "tmiii", x, ops->ce_stat, BT, V, Vp);
	return rc < 0 ? rc : ocl_run(ops, id, (size_t)BT, 0);
}

int ct_ocl_crossentropy_forward(struct ct_ocl_ops *ops, struct ct_dten losses,
				struct ct_dten probs, struct ct_dten logits,
				cl_mem targets, size_t toff, int BT, int V, int Vp)
{
	int rc = grow(ops, &ops->ce_stat, &ops->ce_stat_floats, 2 * (size_t)BT + 1);

	if (rc == 0)
		rc = ce_row_chain(ops, CT_K_CE_MAX, logits, BT, V, Vp);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_CE_EXP, "ttmiii", probs, logits, ops->ce_stat, BT, V, Vp);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_CE_EXP, (size_t)Vp, (size_t)BT);
	if (rc == 0)
		rc = ce_row_chain(ops, CT_K_CE_SUM, probs, BT, V, Vp);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_CE_NORM, "tmiii", probs, ops->ce_stat, BT, V, Vp);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_CE_NORM, ew_items(ops, (size_t)V), (size_t)BT);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_CE_LOSS, "ttmuii", losses, probs, targets, (cl_ulong)toff,
			      BT, Vp);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_CE_LOSS, (size_t)BT, 0);
	return rc;
}

int ct_ocl_crossentropy_backward(struct ct_ocl_ops *ops, struct ct_dten dlogits,
				 struct ct_dten probs, cl_mem targets,
				 int BT, int V, int Vp)
{
	return ct_ocl_crossentropy_backward_rows(ops, dlogits, probs, targets, 0, BT, BT, V, Vp);
}

int ct_ocl_crossentropy_backward_rows(struct ct_ocl_ops *ops, struct ct_dten dlogits,
				      struct ct_dten probs, cl_mem targets, size_t toff,
				      int n, int BT, int V, int Vp)
{
	struct ct_dten ntr = { NULL, 2 * (size_t)n, 0 };	/* after the row stats */
	int rc = grow(ops, &ops->ce_stat, &ops->ce_stat_floats, 2 * (size_t)n + 1);

	ntr.mem = ops->ce_stat;
	if (rc == 0)
		rc = ocl_args(ops, CT_K_CE_COUNT, "mti", targets, ntr, BT);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_CE_COUNT, 1, 0);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_CROSSENTROPY_BWD, "ttmutiii", dlogits, probs, targets,
			      (cl_ulong)toff, ntr, n, V, Vp);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_CROSSENTROPY_BWD, ew_items(ops, (size_t)Vp), (size_t)n);
	return rc;
}

/* ---- clipping and AdamW ---------------------------------------------------- */

/* Allocate ops->clip_res (norm and clipping factor) once. */
static int clip_res_ready(struct ct_ocl_ops *ops)
{
	if (ops->clip_res != NULL)
		return 0;
	return ct_ocl_alloc(ops->ocl, 4 * sizeof(float), CL_MEM_READ_WRITE, &ops->clip_res);
}

/* The gradient norm of g and, in res, the clipping factor (see
 * ct_gradnorm_final). */
static int grad_norm(struct ct_ocl_ops *ops, struct ct_dten g, size_t n, float clip)
{
	size_t nparts = (n + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK;
	int rc;

	rc = grow(ops, &ops->clip_part, &ops->clip_part_floats, nparts);
	if (rc == 0)
		rc = clip_res_ready(ops);
	if (rc == 0 && ops->red_tiled) {	/* groups of 256 for 8 chunks */
		size_t gs = (nparts + 7) / 8 * 256, ls = 256;

		rc = ocl_args(ops, CT_K_GRADNORM_TILED, "tmu", g, ops->clip_part, (cl_ulong)n);
		if (rc == 0)
			rc = ocl_launch(ops, CT_K_GRADNORM_TILED, 1, &gs, &ls);
	} else if (rc == 0) {
		rc = ocl_args(ops, CT_K_GRADNORM_PART, "tmu", g, ops->clip_part, (cl_ulong)n);
		if (rc == 0)
			rc = ocl_run(ops, CT_K_GRADNORM_PART, (nparts + 15) / 16, 0);	/* 16 per item */
	}
	if (rc == 0)
		rc = ocl_args(ops, CT_K_GRADNORM_FINAL, "mmuf", ops->clip_part,
			      ops->clip_res, (cl_ulong)nparts, (double)clip);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_GRADNORM_FINAL, 1, 0);
	return rc;
}

int ct_ocl_grad_clip(struct ct_ocl_ops *ops, struct ct_dten g, size_t n, float clip)
{
	int rc;

	if (n == 0)
		return 0;
	rc = grad_norm(ops, g, n, clip);
	if (rc == 0 && clip > 0.0f)
		rc = ocl_args(ops, CT_K_GRAD_SCALE, "tmu", g, ops->clip_res, (cl_ulong)n);
	if (rc == 0 && clip > 0.0f)
		rc = ocl_run(ops, CT_K_GRAD_SCALE, ew_items(ops, n), 0);
	return rc;
}

int ct_ocl_grad_norm_read(struct ct_ocl_ops *ops, float *norm)
{
	if (ops->clip_res == NULL)
		return ct_error(CT_ESTATE, "no gradient norm computed yet");
	return ct_ocl_read(ops, norm, ct_dten_at(ops->clip_res, 0), 1);
}

int ct_ocl_adamw(struct ct_ocl_ops *ops, struct ct_dten p, struct ct_dten g,
		 struct ct_dten m, struct ct_dten v, size_t n,
		 const struct ct_adamw_args *a, float clip)
{
	int rc = 0, clipping = clip > 0.0f && n > 0;

	if (clipping)
		rc = grad_norm(ops, g, n, clip);
	else	/* the kernel needs a valid buffer */
		rc = clip_res_ready(ops);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_ADAMW, "ttttufffffffmi", p, g, m, v, (cl_ulong)n,
			      (double)a->lr, (double)a->beta1, (double)a->beta2,
			      (double)a->eps, (double)a->weight_decay, (double)a->bc1,
			      (double)a->bc2, ops->clip_res, clipping);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ADAMW, ew_items(ops, n), 0);
	return rc;
}
