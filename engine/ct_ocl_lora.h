/*
 * ct_ocl_lora.h - LoRA adapters on the OpenCL backend: the device twin of
 * ct_lora_model.h (same adapter layer, same arithmetic, bit-identical) and
 * the adapter state the backend keeps next to its frozen weights.
 */
#ifndef CT_OCL_LORA_H
#define CT_OCL_LORA_H

#include "ct_lora.h"
#include "ct_ocl_ops.h"

/* The scaling kernel (kernels/lora.cl): create from ocl's program;
 * release with clReleaseKernel. Returns 0 or CT_ECL. */
int ct_ocl_lora_kernel(struct ct_ocl *ocl, cl_kernel *out);

/* Device twins of ct_lora_layer_forward / ct_lora_layer_backward (same
 * shapes; dinp.mem NULL skips the input gradient). k is the kernel of
 * ct_ocl_lora_kernel. Enqueued only. Return 0 or CT_E*. */
int ct_ocl_lora_layer_forward(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten out,
			      struct ct_dten hs, struct ct_dten u, struct ct_dten inp,
			      struct ct_dten A, struct ct_dten Bm, float s,
			      int BT, int C, int OC, int r);
int ct_ocl_lora_layer_backward(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten dinp,
			       struct ct_dten dA, struct ct_dten dB, struct ct_dten dh,
			       struct ct_dten dout, struct ct_dten inp, struct ct_dten hs,
			       struct ct_dten A, struct ct_dten Bm, float s,
			       int BT, int C, int OC, int r);

/* Adapter state of a backend: adapters, their gradient and AdamW moments
 * (ct_lora_nparams floats each), the saved rank-r activations of every
 * slot and the scratch: u the adapter's output rows (BT of the widest
 * attention target, mlp_rows of the widest MLP one), and where the MLP
 * targets run in row blocks (mlp_rows < BT) park, the chains of their
 * weight gradients between blocks (per MLP target, dB (out, r) then dA
 * (r, in)). */
struct ct_ocl_lora {
	struct ct_ocl_ops *ops;		/* borrowed */
	cl_kernel k, kchain;
	struct ct_lora_spec spec;
	float s;
	int BT, mlp_rows;
	int nslots;
	struct ct_lora_slot *slots;
	int *slot_of;			/* (L, 4): slot or -1 */
	size_t n, u_floats, park_each;	/* park_each: floats of one MLP target's */
	cl_mem ad, grad, m, v, hs, dh, u, park;
};

/* Allocate the state for cfg, a checked spec (rank > 0) and batches of BT
 * rows whose MLP targets (fc, fcproj) run mlp_rows rows at a time (1 ..
 * BT; BT: whole). *out owned by the caller (ct_ocl_lora_close). Returns 0,
 * CT_EINVAL, CT_ENOMEM, CT_EDEVNOMEM or CT_ECL. */
int ct_ocl_lora_open(struct ct_ocl_ops *ops, const struct ct_model_config *cfg,
		     const struct ct_lora_spec *spec, int BT, int mlp_rows,
		     struct ct_ocl_lora **out);

/* Bytes of ct_ocl_lora_open's device buffers beyond ct_lora_state_floats'
 * (negative: fewer; the MLP's u rows and the park) for these arguments. */
int64_t ct_ocl_lora_bytes_delta(const struct ct_model_config *cfg,
				const struct ct_lora_spec *spec, int BT, int mlp_rows);
void ct_ocl_lora_close(struct ct_ocl_lora *lo);

/* Backend hooks, no-ops (returning 0) when lo is NULL or (l, t) has no
 * adapter: the adapter term after the target's matmul forward, and the
 * adapter's gradients (and input gradient into dinp) after its backward. */
int ct_ocl_lora_forward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			struct ct_dten out, struct ct_dten inp);
int ct_ocl_lora_backward(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			 struct ct_dten dinp, struct ct_dten dout, struct ct_dten inp);

/* The same for rows r0 .. r0 + n - 1 of the batch only (out, inp, dinp,
 * dout at those rows; n <= mlp_rows for an MLP target): the forward is
 * per row; the backward's weight-gradient chains run over the blocks in
 * row order, parked between them, and are added when the block ending at
 * row BT - 1 is done, so the blocks of one (l, t) must come in ascending
 * order with nothing else of that target in between: the bits are those
 * of the whole batch. */
int ct_ocl_lora_forward_rows(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			     struct ct_dten out, struct ct_dten inp, int r0, int n);
int ct_ocl_lora_backward_rows(struct ct_ocl_lora *lo, int l, enum ct_lora_target t,
			      struct ct_dten dinp, struct ct_dten dout, struct ct_dten inp,
			      int r0, int n);

/* One block of rows of a weight gradient's chains (kernels/lora.cl's
 * ct_lora_dw_chain, kernel k from ct_ocl_kernel): for dw (OC, IC),
 * acc[o,i] = fma(dout[t,o], inp[t,i], acc) over rows t = 0 .. n-1 of
 * dout (n, OC) and inp (n, IC), from 0.0f when first is set, else from
 * park (OC, IC); when last is set dw = dw + acc, else acc goes to park.
 * Blocks run first to last give every output the whole batch's chain.
 * Returns 0 or CT_ECL. */
int ct_ocl_lora_dw_chain(struct ct_ocl_ops *ops, cl_kernel k, struct ct_dten dw,
			 struct ct_dten park, struct ct_dten dout, struct ct_dten inp, int n,
			 int IC, int OC, int first, int last);

/* Set adapters and moments (NULL m/v: zeros) / read them (NULL: skip). */
int ct_ocl_lora_load(struct ct_ocl_lora *lo, const float *ad, const float *m,
		     const float *v);
int ct_ocl_lora_read(struct ct_ocl_lora *lo, float *ad, float *m, float *v);

#endif
