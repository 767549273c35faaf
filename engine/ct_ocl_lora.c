/*
 * ct_ocl_lora.c - LoRA adapters on the OpenCL backend (ct_ocl_lora.h). The
 * adapter layer is ct_lora_model.c's composition of matmuls, a scaling and
 * an add, with each piece replaced by its device twin.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
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
	CT_OCL_UNREF_ALL(&lo->ad, &lo->grad, &lo->m, &lo->v, &lo->hs, &lo->dh, &lo->u);
	if (lo->k != NULL)
		clReleaseKernel(lo->k);
	free(lo->slots);
	free(lo->slot_of);
	free(lo);
}

static int alloc_f(struct ct_ocl_lora *lo, cl_mem *m, size_t floats)
{
	return ct_ocl_alloc(lo->ops->ocl, (floats ? floats : 1) * sizeof(float),
			    CL_MEM_READ_WRITE, m);
}

int ct_ocl_lora_open(struct ct_ocl_ops *ops, const struct ct_model_config *cfg,
		     const struct ct_lora_spec *spec, int BT, struct ct_ocl_lora **out)
{
	struct ct_ocl_lora *lo;
	int rc, widest = 0;

	*out = NULL;
	rc = ct_lora_spec_check(spec, cfg);
	if (rc == 0 && spec->rank == 0)
		rc = ct_error(CT_EINVAL, "LoRA rank 0 has no adapters");
	if (rc < 0)
		return rc;
	lo = calloc(1, sizeof(*lo));
	if (lo == NULL)
		return ct_error(CT_ENOMEM, "out of memory for LoRA state");
	lo->ops = ops;
	lo->spec = *spec;
	lo->s = spec->alpha / (float)spec->rank;
	lo->BT = BT;
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
		if (lo->slots[i].out > widest)	/* the scratch u holds (BT, out) */
			widest = lo->slots[i].out;
		lo->slot_of[lo->slots[i].layer * CT_LORA_NTARGETS +
			    target_index(lo->slots[i].target)] = i;
	}
	rc = ct_ocl_lora_kernel(ops->ocl, &lo->k);
	if (rc == 0)
		rc = alloc_f(lo, &lo->ad, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->grad, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->m, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->v, lo->n);
	if (rc == 0)
		rc = alloc_f(lo, &lo->hs, (size_t)lo->nslots * BT * spec->rank);
	if (rc == 0)
		rc = alloc_f(lo, &lo->dh, (size_t)BT * spec->rank);
	if (rc == 0)
		rc = alloc_f(lo, &lo->u, (size_t)BT * widest);
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

int ct_ocl_lora_forward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			struct ct_dten out, struct ct_dten inp)
{
	int i = slot_at(lo, l, t);
	const struct ct_lora_slot *sl;

	if (i < 0)
		return 0;
	sl = &lo->slots[i];
	return ct_ocl_lora_layer_forward(lo->ops, lo->k, out,
					 ct_dten_at(lo->hs, (size_t)i * lo->BT * lo->spec.rank),
					 ct_dten_at(lo->u, 0), inp, ct_dten_at(lo->ad, sl->a_off),
					 ct_dten_at(lo->ad, sl->b_off), lo->s, lo->BT, sl->in,
					 sl->out, lo->spec.rank);
}

int ct_ocl_lora_backward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			 struct ct_dten dinp, struct ct_dten dout, struct ct_dten inp)
{
	int i = slot_at(lo, l, t);
	const struct ct_lora_slot *sl;

	if (i < 0)
		return 0;
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
