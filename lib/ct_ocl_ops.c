/*
 * ct_ocl_ops.c - launchers of the OpenCL kernels (see ct_ocl_ops.h). Each
 * function sets its kernel's arguments with ocl_args() and enqueues it with
 * ocl_run(); the arithmetic lives in the kernels/ .cl files.
 */
#include "ct_ocl_ops.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_model.h"

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
	[CT_K_GELU_FWD] = "ct_gelu_fwd",
	[CT_K_GELU_BWD] = "ct_gelu_bwd",
	[CT_K_RESIDUAL_FWD] = "ct_residual_fwd",
	[CT_K_RESIDUAL_BWD] = "ct_residual_bwd",
	[CT_K_CROSSENTROPY_FWD] = "ct_crossentropy_fwd",
	[CT_K_CROSSENTROPY_BWD] = "ct_crossentropy_bwd",
	[CT_K_GRADNORM_PART] = "ct_gradnorm_part",
	[CT_K_GRADNORM_FINAL] = "ct_gradnorm_final",
	[CT_K_GRAD_SCALE] = "ct_grad_scale",
	[CT_K_ADAMW] = "ct_adamw",
};

int ct_ocl_ops_init(struct ct_ocl_ops *ops, struct ct_ocl *ocl)
{
	int rc = 0;

	memset(ops, 0, sizeof(*ops));
	ops->ocl = ocl;
	for (int i = 0; i < CT_K_COUNT && rc == 0; i++)
		rc = ct_ocl_kernel(ocl, kernel_names[i], &ops->k[i]);
	if (rc < 0)
		ct_ocl_ops_free(ops);
	return rc;
}

void ct_ocl_ops_free(struct ct_ocl_ops *ops)
{
	for (int i = 0; i < CT_K_COUNT; i++)
		if (ops->k[i] != NULL)
			clReleaseKernel(ops->k[i]);
	if (ops->scratch != NULL)
		clReleaseMemObject(ops->scratch);
	if (ops->clip_part != NULL)
		clReleaseMemObject(ops->clip_part);
	if (ops->clip_res != NULL)
		clReleaseMemObject(ops->clip_res);
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
	return 0;
}

/* Enqueue kernel `id` over a 1- or 2-D range (g1 = 0: 1-D). */
static int ocl_run(struct ct_ocl_ops *ops, int id, size_t g0, size_t g1)
{
	size_t g[2] = { g0, g1 };
	cl_int err;

	if (g0 == 0)
		return 0;
	err = clEnqueueNDRangeKernel(ops->ocl->queue, ops->k[id], g1 ? 2 : 1, NULL,
				     g, NULL, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return ct_ocl_check(err, kernel_names[id]);
	return 0;
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

/* ---- matmul ---------------------------------------------------------------- */

static int scratch_reserve(struct ct_ocl_ops *ops, size_t floats)
{
	int rc;

	if (floats <= ops->scratch_floats)
		return 0;
	if (ops->scratch != NULL) {
		/* the queue may still use the old one: release is deferred by CL */
		clReleaseMemObject(ops->scratch);
		ops->scratch = NULL;
		ops->scratch_floats = 0;
	}
	rc = ct_ocl_alloc(ops->ocl, floats * sizeof(float), CL_MEM_READ_WRITE,
			  &ops->scratch);
	if (rc < 0)
		return rc;
	ops->scratch_floats = floats;
	return 0;
}

/* out[m*ldo + n] (+)= sum_k A[m*sam + k*sak] * B[k*sk + n*sn] (see
 * kernels/matmul.cl): pack B into the scratch panels, then multiply. */
static int mm(struct ct_ocl_ops *ops, struct ct_dten out, struct ct_dten A,
	      int sam, int sak, struct ct_dten B, int sk, int sn,
	      struct ct_dten bias, int has_bias, int M, int N, int K, int accumulate)
{
	const struct ct_ocl *o = ops->ocl;
	size_t pw = (size_t)o->mm_vw * o->mm_nv;
	size_t np = ((size_t)N + pw - 1) / pw;
	size_t mb = ((size_t)M + o->mm_r - 1) / o->mm_r;
	int rc;

	if (M <= 0 || N <= 0)
		return 0;
	if (bias.mem == NULL)
		bias = out;	/* any valid buffer: not read when has_bias is 0 */
	rc = scratch_reserve(ops, np * pw * (size_t)(K > 0 ? K : 1));
	if (rc == 0)
		rc = ocl_args(ops, CT_K_MM_PACK, "tiimii", B, sk, sn, ops->scratch, K, N);
	if (rc == 0 && K > 0)
		rc = ocl_run(ops, CT_K_MM_PACK, np * pw, (size_t)K);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_MM, "tiimtitiiiii", A, sam, sak, ops->scratch,
			      bias, has_bias, out, N, M, N, K, accumulate);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_MM, mb, np);
	return rc;
}

int ct_ocl_matmul_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			  struct ct_dten inp, struct ct_dten w,
			  struct ct_dten bias, int has_bias, int BT, int C, int OC)
{
	/* A = inp (BT x C), B[k=i, n=o] = w[o*C + i] */
	return mm(ops, out, inp, C, 1, w, 1, C, bias, has_bias, BT, OC, C, 0);
}

int ct_ocl_matmul_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			   struct ct_dten dw, struct ct_dten dbias, int has_bias,
			   struct ct_dten dout, struct ct_dten inp, struct ct_dten w,
			   int BT, int C, int OC)
{
	struct ct_dten none = { NULL, 0 };
	int rc;

	/* dinp[bt, i] += sum_o dout[bt, o] * w[o, i]: A = dout, B = w */
	rc = mm(ops, dinp, dout, OC, 1, w, C, 1, none, 0, BT, C, OC, 1);
	/* dw[o, i] += sum_bt dout[bt, o] * inp[bt, i]: A = dout^T, B = inp */
	if (rc == 0)
		rc = mm(ops, dw, dout, 1, OC, inp, C, 1, none, 0, OC, C, BT, 1);
	if (rc == 0 && has_bias) {
		rc = ocl_args(ops, CT_K_MM_DBIAS, "ttii", dout, dbias, BT, OC);
		if (rc == 0)
			rc = ocl_run(ops, CT_K_MM_DBIAS, (size_t)OC, 0);
	}
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
	RUN(CT_K_ENCODER_FWD, C, B * T, "tmttiii", out, inp, wte, wpe, B * T, T, C);
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
	if (rc == 0)
		rc = ocl_args(ops, CT_K_LAYERNORM_BWD_DWB, "ttttttii", dw, db, dout, inp,
			      mean, rstd, BT, C);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_LAYERNORM_BWD_DWB, (size_t)C, 0);
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
	int rc;

	rc = ocl_args(ops, CT_K_ATTENTION_BWD_G, "ttttiiii", datt, dout, qkv, att,
		      B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTENTION_BWD_G, (size_t)T, (size_t)B * NH);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_ATTENTION_BWD_QKV, "tttttiiii", dqkv, datt, dout,
			      qkv, att, B, T, C, NH);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_ATTENTION_BWD_QKV, (size_t)C, (size_t)B * T);
	return rc;
}

int ct_ocl_gelu_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			struct ct_dten inp, size_t n)
{
	RUN(CT_K_GELU_FWD, n, 0, "ttu", out, inp, (cl_ulong)n);
}

int ct_ocl_gelu_backward(struct ct_ocl_ops *ops, struct ct_dten dinp,
			 struct ct_dten inp, struct ct_dten dout, size_t n)
{
	RUN(CT_K_GELU_BWD, n, 0, "tttu", dinp, inp, dout, (cl_ulong)n);
}

int ct_ocl_residual_forward(struct ct_ocl_ops *ops, struct ct_dten out,
			    struct ct_dten a, struct ct_dten b, size_t n)
{
	RUN(CT_K_RESIDUAL_FWD, n, 0, "tttu", out, a, b, (cl_ulong)n);
}

int ct_ocl_residual_backward(struct ct_ocl_ops *ops, struct ct_dten da,
			     struct ct_dten db, struct ct_dten dout, size_t n)
{
	RUN(CT_K_RESIDUAL_BWD, n, 0, "tttu", da, db, dout, (cl_ulong)n);
}

int ct_ocl_crossentropy_forward(struct ct_ocl_ops *ops, struct ct_dten losses,
				struct ct_dten probs, struct ct_dten logits,
				cl_mem targets, int BT, int V, int Vp)
{
	RUN(CT_K_CROSSENTROPY_FWD, BT, 0, "tttmiii", losses, probs, logits, targets,
	    BT, V, Vp);
}

int ct_ocl_crossentropy_backward(struct ct_ocl_ops *ops, struct ct_dten dlogits,
				 struct ct_dten probs, cl_mem targets,
				 int BT, int V, int Vp)
{
	RUN(CT_K_CROSSENTROPY_BWD, Vp, BT, "ttmiii", dlogits, probs, targets, BT, V, Vp);
}

/* ---- clipping and AdamW ---------------------------------------------------- */

int ct_ocl_grad_clip(struct ct_ocl_ops *ops, struct ct_dten g, size_t n, float clip)
{
	size_t nparts = (n + CT_CLIP_CHUNK - 1) / CT_CLIP_CHUNK;
	int rc = 0;

	if (n == 0)
		return 0;
	if (nparts > ops->clip_part_floats) {
		if (ops->clip_part != NULL)
			clReleaseMemObject(ops->clip_part);
		ops->clip_part = NULL;
		ops->clip_part_floats = 0;
		rc = ct_ocl_alloc(ops->ocl, nparts * sizeof(float), CL_MEM_READ_WRITE,
				  &ops->clip_part);
		if (rc < 0)
			return rc;
		ops->clip_part_floats = nparts;
	}
	if (ops->clip_res == NULL)
		rc = ct_ocl_alloc(ops->ocl, 4 * sizeof(float), CL_MEM_READ_WRITE,
				  &ops->clip_res);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_GRADNORM_PART, "tmu", g, ops->clip_part, (cl_ulong)n);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_GRADNORM_PART, nparts, 0);
	if (rc == 0)
		rc = ocl_args(ops, CT_K_GRADNORM_FINAL, "mmuf", ops->clip_part,
			      ops->clip_res, (cl_ulong)nparts, (double)clip);
	if (rc == 0)
		rc = ocl_run(ops, CT_K_GRADNORM_FINAL, 1, 0);
	if (rc == 0 && clip > 0.0f)
		rc = ocl_args(ops, CT_K_GRAD_SCALE, "tmu", g, ops->clip_res, (cl_ulong)n);
	if (rc == 0 && clip > 0.0f)
		rc = ocl_run(ops, CT_K_GRAD_SCALE, n, 0);
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
		 const struct ct_adamw_args *a)
{
	RUN(CT_K_ADAMW, n, 0, "ttttufffffff", p, g, m, v, (cl_ulong)n,
	    (double)a->lr, (double)a->beta1, (double)a->beta2, (double)a->eps,
	    (double)a->weight_decay, (double)a->bc1, (double)a->bc2);
}
