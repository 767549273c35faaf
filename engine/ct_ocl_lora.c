/*
 * ct_ocl_lora.c - LoRA adapters on the OpenCL backend (ct_ocl_lora.h). The
 * adapter layer is ct_lora_model.c's composition of matmuls, a scaling and
 * an add, with each piece replaced by its device twin.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_model_ops.h"
#include "ct_ocl_lora.h"

int ct_ocl_lora_kernel(struct ct_ocl *ocl, cl_kernel *out)
{
	return ct_ocl_kernel(ocl, "ct_lora_scale", out);
}

/* x[i] = x[i] * s, i < n. */
static int lora_scale(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten x, float s,
		      size_t n)
{
	cl_ulong off = x.off, nn = n;
	size_t g = n;
	cl_int err;

	err = clSetKernelArg(k, 0, sizeof(cl_mem), &x.mem);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(k, 1, sizeof(off), &off);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(k, 2, sizeof(s), &s);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(k, 3, sizeof(nn), &nn);
	if (err == CL_SUCCESS && n > 0)
		err = clEnqueueNDRangeKernel(ops->ocl->queue, k, 1, NULL, &g, NULL, 0, NULL, NULL);
	return ct_ocl_check(err, "ct_lora_scale");
}

int ct_ocl_lora_layer_forward(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten out,
			      struct ct_dten hs, struct ct_dten u, struct ct_dten inp,
			      struct ct_dten A, struct ct_dten Bm, float s,
			      int BT, int C, int OC, int r)
{
	struct ct_dten none = { NULL, 0, 0 };
	int rc;

	rc = ct_ocl_matmul_forward(ops, hs, inp, A, none, 0, BT, C, r);
	if (rc == 0)
		rc = lora_scale(ops, k, hs, s, (size_t)BT * r);
	if (rc == 0)
		rc = ct_ocl_matmul_forward(ops, u, hs, Bm, none, 0, BT, r, OC);
	if (rc == 0)
		rc = ct_ocl_residual_forward(ops, out, out, u, (size_t)BT * OC);
	return rc;
}

int ct_ocl_lora_layer_backward(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten dinp,
			       struct ct_dten dA, struct ct_dten dB, struct ct_dten dh,
			       struct ct_dten dout, struct ct_dten inp, struct ct_dten hs,
			       struct ct_dten A, struct ct_dten Bm, float s,
			       int BT, int C, int OC, int r)
{
	struct ct_dten none = { NULL, 0, 0 };
	int rc;

	rc = ct_ocl_zero(ops, dh, (size_t)BT * r);
	if (rc == 0)
		rc = ct_ocl_matmul_dinp(ops, dh, dout, Bm, BT, r, OC);
	if (rc == 0)
		rc = ct_ocl_matmul_dweight(ops, dB, none, 0, dout, hs, BT, r, OC);
	if (rc == 0)
		rc = lora_scale(ops, k, dh, s, (size_t)BT * r);
	if (rc == 0 && dinp.mem != NULL)
		rc = ct_ocl_matmul_dinp(ops, dinp, dh, A, BT, C, r);
	if (rc == 0)
		rc = ct_ocl_matmul_dweight(ops, dA, none, 0, dh, inp, BT, C, r);
	return rc;
}

static int target_index(enum ct_lora_target t)
{
	int i = 0;

	while (i < CT_LORA_NTARGETS - 1 && (1 << i) != (int)t)
		i++;
	return i;
}

void ct_ocl_lora_close(struct ct_ocl_lora *lo)
{
	if (lo == NULL)
		return;
	CT_OCL_UNREF_ALL(&lo->ad, &lo->grad, &lo->m, &lo->v, &lo->hs, &lo->dh, &lo->u,
			 &lo->park);
	if (lo->k != NULL)
		clReleaseKernel(lo->k);
	if (lo->kchain != NULL)
		clReleaseKernel(lo->kchain);
	free(lo->slots);
	free(lo->slot_of);
	free(lo);
}

static int alloc_f(struct ct_ocl_lora *lo, cl_mem *m, size_t floats)
{
	return ct_ocl_alloc(lo->ops->ocl, (floats ? floats : 1) * sizeof(float),
			    CL_MEM_READ_WRITE, m);
}

static int is_mlp(enum ct_lora_target t)
{
	return t == CT_LORA_FC || t == CT_LORA_FCPROJ;
}

/* Floats of u (the adapter's output rows: BT of the widest attention
 * target, mlp_rows of the widest MLP one) and of one MLP target's park
 * (0 when the MLP runs whole). */
static void lora_scratch(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			 int BT, int mlp_rows, size_t *u, size_t *park_each)
{
	const int nslots = ct_lora_nslots(cfg, spec);
	size_t att = 0, mlp = 0, park = 0;

	for (int i = 0; i < nslots; i++) {
		struct ct_lora_slot sl;

		ct_lora_slot(cfg, spec, i, &sl);
		if (!is_mlp(sl.target)) {
			att = (size_t)sl.out > att ? (size_t)sl.out : att;
			continue;
		}
		mlp = (size_t)sl.out > mlp ? (size_t)sl.out : mlp;
		if ((size_t)(sl.out + sl.in) * spec->rank > park)
			park = (size_t)(sl.out + sl.in) * spec->rank;
	}
	att *= (size_t)BT;
	mlp *= (size_t)mlp_rows;
	*u = att > mlp ? att : mlp;
	*park_each = mlp_rows < BT ? park : 0;
}

int64_t ct_ocl_lora_bytes_delta(const struct ct_model_config *cfg,
				const struct ct_lora_spec *spec, int BT, int mlp_rows)
{
	const struct ct_model_dims d = ct_model_dims(cfg);
	int64_t w = d.fc > d.qkv ? d.fc : d.qkv;
	size_t u, park;

	lora_scratch(cfg, spec, BT, mlp_rows, &u, &park);
	w = w > cfg->C ? w : cfg->C;	/* ct_lora_state_floats' u: BT rows of w */
	return 4 * ((int64_t)u + 2 * (int64_t)park - (int64_t)BT * w);
}

/* The kernels, then every buffer (u at least 1 float). */
static int lora_alloc(struct ct_ocl_lora *lo)
{
	int rc = ct_ocl_lora_kernel(lo->ops->ocl, &lo->k);

	if (rc == 0)
		rc = ct_ocl_kernel(lo->ops->ocl, "ct_lora_dw_chain", &lo->kchain);
	if (rc == 0)
		rc = alloc_f(lo, &lo->ad, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->grad, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->m, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->v, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->hs, (size_t)lo->nslots * lo->BT * lo->spec.rank);
	if (rc == 0)
		rc = alloc_f(lo, &lo->dh, (size_t)lo->BT * lo->spec.rank);
	if (rc == 0)
		rc = alloc_f(lo, &lo->u, lo->u_floats);
	if (rc == 0 && lo->park_each > 0)
		rc = alloc_f(lo, &lo->park, 2 * lo->park_each);
	return rc;
}

int ct_ocl_lora_open(struct ct_ocl_ops *ops, const struct ct_model_config *cfg,
		     const struct ct_lora_spec *spec, int BT, int mlp_rows,
		     struct ct_ocl_lora **out)
{
	struct ct_ocl_lora *lo;
	int rc;

	*out = NULL;
	rc = ct_lora_spec_check(spec, cfg);
	if (rc == 0 && spec->rank == 0)
		rc = ct_error(CT_EINVAL, "LoRA rank 0 has no adapters");
	if (rc == 0 && (mlp_rows < 1 || mlp_rows > BT))
		rc = ct_error(CT_EINVAL, "LoRA MLP rows %d not in 1..%d", mlp_rows, BT);
	if (rc < 0)
		return rc;
	lo = calloc(1, sizeof(*lo));
	if (lo == NULL)
		return ct_error(CT_ENOMEM, "out of memory for LoRA state");
	lo->ops = ops;
	lo->spec = *spec;
	lo->s = spec->alpha / (float)spec->rank;
	lo->BT = BT;
	lo->mlp_rows = mlp_rows;
	lo->nslots = ct_lora_nslots(cfg, spec);
	lo->n = ct_lora_nparams(cfg, spec);
	lo->slots = calloc((size_t)lo->nslots, sizeof(*lo->slots));
	lo->slot_of = malloc((size_t)cfg->L * CT_LORA_NTARGETS * sizeof(int));
	if (lo->slots == NULL || lo->slot_of == NULL) {
		ct_ocl_lora_close(lo);
		return ct_error(CT_ENOMEM, "out of memory for LoRA state");
	}
	for (int i = 0; i < cfg->L * CT_LORA_NTARGETS; i++)
		lo->slot_of[i] = -1;
	for (int i = 0; i < lo->nslots; i++) {
		ct_lora_slot(cfg, spec, i, &lo->slots[i]);
		lo->slot_of[lo->slots[i].layer * CT_LORA_NTARGETS +
			    target_index(lo->slots[i].target)] = i;
	}
	lora_scratch(cfg, spec, BT, mlp_rows, &lo->u_floats, &lo->park_each);
	rc = lora_alloc(lo);
	if (rc < 0) {
		ct_ocl_lora_close(lo);
		return rc;
	}
	*out = lo;
	return 0;
}

static int slot_at(const struct ct_ocl_lora *lo, int l, enum ct_lora_target t)
{
	return lo == NULL ? -1 : lo->slot_of[l * CT_LORA_NTARGETS + target_index(t)];
}


/* The slot of (l, t) into *slot (-1: no adapter, or lo NULL) for rows
 * r0 .. r0 + n - 1, checked against the scratch. Returns 0 or CT_EINVAL
 * (rows the state was not sized for). */
static int rows_slot(const struct ct_ocl_lora *lo, int l, enum ct_lora_target t, int r0, int n,
		     int *slot)
{
	int i = slot_at(lo, l, t);

	*slot = i;
	if (i < 0)
		return 0;
	if (r0 < 0 || n < 1 || n > lo->BT - r0 ||
	    (size_t)n * (size_t)lo->slots[i].out > lo->u_floats ||
	    (n < lo->BT && (!is_mlp(t) || lo->park_each == 0)))
		return ct_error(CT_EINVAL, "LoRA rows %d..%d of target %d", r0, r0 + n - 1,
				(int)t);
	return 0;
}

int ct_ocl_lora_forward_rows(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			     struct ct_dten out, struct ct_dten inp, int r0, int n)
{
	const struct ct_lora_slot *sl;
	size_t r;
	int i, rc = rows_slot(lo, l, t, r0, n, &i);

	if (rc < 0 || i < 0)
		return rc;
	sl = &lo->slots[i];
	r = (size_t)lo->spec.rank;
	return ct_ocl_lora_layer_forward(lo->ops, lo->k, out,
					 ct_dten_at(lo->hs, ((size_t)i * lo->BT + r0) * r),
					 ct_dten_at(lo->u, 0), inp, ct_dten_at(lo->ad, sl->a_off),
					 ct_dten_at(lo->ad, sl->b_off), lo->s, n, sl->in,
					 sl->out, (int)r);
}

int ct_ocl_lora_dw_chain(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten dw,
			 struct ct_dten park, struct ct_dten dout, struct ct_dten inp, int n,
			 int IC, int OC, int first, int last)
{
	const struct ct_dten t[4] = { dw, park, dout, inp };
	const int v[5] = { n, IC, OC, first, last };
	/* one work-item per tile of 8 x 8 outputs (lora.cl's CT_DW_TI, CT_DW_TO) */
	size_t g[2] = { ((size_t)IC + 7) / 8, ((size_t)OC + 7) / 8 };
	cl_uint a = 0;
	cl_int err = CL_SUCCESS;

	for (int j = 0; j < 4 && err == CL_SUCCESS; j++) {
		cl_ulong off = t[j].off;

		err = clSetKernelArg(k, a++, sizeof(cl_mem), &t[j].mem);
		if (err == CL_SUCCESS)
			err = clSetKernelArg(k, a++, sizeof(off), &off);
	}
	for (int j = 0; j < 5 && err == CL_SUCCESS; j++) {
		cl_int x = v[j];

		err = clSetKernelArg(k, a++, sizeof(x), &x);
	}
	if (err == CL_SUCCESS && IC > 0 && OC > 0)
		err = clEnqueueNDRangeKernel(ops->ocl->queue, k, 2, NULL, g, NULL,
					     0, NULL, NULL);
	return ct_ocl_check(err, "ct_lora_dw_chain");
}

/* ct_ocl_lora_layer_backward for a block of rows of slot i: the same
 * steps, the two weight gradients' chains through ct_ocl_lora_dw_chain. */
static int backward_block(struct ct_ocl_lora *lo, int i, struct ct_dten dinp,
			  struct ct_dten dout, struct ct_dten inp, int r0, int n)
{
	const struct ct_lora_slot *sl = &lo->slots[i];
	const int r = lo->spec.rank, first = r0 == 0, last = r0 + n == lo->BT;
	const size_t pk = (size_t)(sl->target == CT_LORA_FC ? 0 : 1) * lo->park_each;
	struct ct_dten dh = ct_dten_at(lo->dh, 0), A = ct_dten_at(lo->ad, sl->a_off);
	struct ct_dten hs = ct_dten_at(lo->hs, ((size_t)i * lo->BT + r0) * r);
	int rc;

	rc = ct_ocl_zero(lo->ops, dh, (size_t)n * r);
	if (rc == 0)
		rc = ct_ocl_matmul_dinp(lo->ops, dh, dout, ct_dten_at(lo->ad, sl->b_off), n, r,
					sl->out);
	if (rc == 0)
		rc = ct_ocl_lora_dw_chain(lo->ops, lo->kchain, ct_dten_at(lo->grad, sl->b_off),
					  ct_dten_at(lo->park, pk), dout, hs, n, r, sl->out, first,
					  last);
	if (rc == 0)
		rc = lora_scale(lo->ops, lo->k, dh, lo->s, (size_t)n * r);
	if (rc == 0 && dinp.mem != NULL)
		rc = ct_ocl_matmul_dinp(lo->ops, dinp, dh, A, n, sl->in, r);
	if (rc == 0)
		rc = ct_ocl_lora_dw_chain(lo->ops, lo->kchain, ct_dten_at(lo->grad, sl->a_off),
					  ct_dten_at(lo->park, pk + (size_t)sl->out * r), dh, inp,
					  n, sl->in, r, first, last);
	return rc;
}

int ct_ocl_lora_backward_rows(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			      struct ct_dten dinp, struct ct_dten dout, struct ct_dten inp,
			      int r0, int n)
{
	const struct ct_lora_slot *sl;
	int i, rc = rows_slot(lo, l, t, r0, n, &i);

	if (rc < 0 || i < 0)
		return rc;
	if (n < lo->BT)
		return backward_block(lo, i, dinp, dout, inp, r0, n);
	sl = &lo->slots[i];
	return ct_ocl_lora_layer_backward(lo->ops, lo->k, dinp,
					  ct_dten_at(lo->grad, sl->a_off),
					  ct_dten_at(lo->grad, sl->b_off), ct_dten_at(lo->dh, 0),
					  dout, inp,
					  ct_dten_at(lo->hs, (size_t)i * lo->BT * lo->spec.rank),
					  ct_dten_at(lo->ad, sl->a_off),
					  ct_dten_at(lo->ad, sl->b_off), lo->s, lo->BT, sl->in,
					  sl->out, lo->spec.rank);
}

int ct_ocl_lora_forward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			struct ct_dten out, struct ct_dten inp)
{
	return lo == NULL ? 0 : ct_ocl_lora_forward_rows(lo, l, t, out, inp, 0, lo->BT);
}

int ct_ocl_lora_backward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			 struct ct_dten dinp, struct ct_dten dout, struct ct_dten inp)
{
	return lo == NULL ? 0 : ct_ocl_lora_backward_rows(lo, l, t, dinp, dout, inp, 0, lo->BT);
}

int ct_ocl_lora_load(struct ct_ocl_lora *lo, const float *ad, const float *m,
		     const float *v)
{
	int rc = ct_ocl_write(lo->ops, ct_dten_at(lo->ad, 0), ad, lo->n);

	if (rc == 0)
		rc = m ? ct_ocl_write(lo->ops, ct_dten_at(lo->m, 0), m, lo->n)
		       : ct_ocl_zero(lo->ops, ct_dten_at(lo->m, 0), lo->n);
	if (rc == 0)
		rc = v ? ct_ocl_write(lo->ops, ct_dten_at(lo->v, 0), v, lo->n)
		       : ct_ocl_zero(lo->ops, ct_dten_at(lo->v, 0), lo->n);
	if (rc == 0)
		rc = ct_ocl_check(clFinish(lo->ops->ocl->queue), "clFinish");
	return rc;
}

int ct_ocl_lora_read(struct ct_ocl_lora *lo, float *ad, float *m, float *v)
{
	int rc = 0;

	if (ad != NULL)
		rc = ct_ocl_read(lo->ops, ad, ct_dten_at(lo->ad, 0), lo->n);
	if (rc == 0 && m != NULL)
		rc = ct_ocl_read(lo->ops, m, ct_dten_at(lo->m, 0), lo->n);
	if (rc == 0 && v != NULL)
		rc = ct_ocl_read(lo->ops, v, ct_dten_at(lo->v, 0), lo->n);
	return rc;
}
