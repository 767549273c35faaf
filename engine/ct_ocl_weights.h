/*
 * ct_ocl_weights.h - a model's weights on an OpenCL device, in one buffer
 * or in pieces: each per-layer tensor's layers in buffers of their own
 * (the other tensors, the embeddings and the final norm, one buffer each),
 * so that a frozen base of billions of weights needs no buffer over one
 * layer's largest matrix (Llama-3.1-8B nf4: 63 MiB; its bf16 vocabulary
 * matrices are 1002 MiB, the largest piece there is). Devices cap one
 * buffer (PoCL here at 4 GiB, many GPUs at a quarter of their memory);
 * the sum is what they hold.
 *
 * The pieces hold the bytes of the float32 array or of the compact image
 * (ct_base.h) as they are: a tensor's layer l is its elements l * per ..
 * (l + 1) * per - 1, per = size / L, and in a q8/nf4 image starts on a
 * block (a tensor whose per-layer slice is not whole blocks stays whole).
 * Kernels read a piece exactly as they read the tensor in one buffer, so
 * the bits do not depend on the split.
 */
#ifndef CT_OCL_WEIGHTS_H
#define CT_OCL_WEIGHTS_H

#include <stdint.h>

#include "ct_ocl_ops.h"

struct ct_dweights {
	int split;			/* in pieces (mem), or all in one buffer */
	cl_mem one;
	struct ct_gpt2_layout lay;
	struct ct_base_layout bl;	/* fmt CT_BASE_F32: float32 weights */
	int L;
	/* pieces: tensor t's piece k at mem[t * L + k], per[t] elements
	 * each (the tensor's size when it is whole: one piece; 0: empty) */
	cl_mem *mem;
	size_t per[CT_GPT2_NTENSORS];
};

/* Tensor t from element e on (within one piece). */
static inline struct ct_dten ct_dweights_at(const struct ct_dweights *w, int t, size_t e)
{
	struct ct_dten d = { NULL, 0, 0 };
	size_t k;

	if (!w->split)
		return ct_dten_param(w->one, &w->lay, &w->bl, t, e);
	if (w->per[t] == 0)
		return d;
	k = e / w->per[t];
	d.mem = w->mem[(size_t)t * w->L + k];
	d.off = e - k * w->per[t];
	d.fmt = ct_base_tensor_fmt(w->bl.fmt, t);
	return d;
}

/* Lay out w for cfg (valid) in format fmt, in pieces (split != 0) or one
 * buffer; nothing allocated. */
void ct_dweights_plan(struct ct_dweights *w, const struct ct_model_config *cfg, int fmt,
		      int split);

/* Bytes the plan needs on the device, *largest its largest buffer. */
uint64_t ct_dweights_bytes(const struct ct_dweights *w, uint64_t *largest);

/* Allocate the planned buffers (read-only for the kernels when ro).
 * Returns 0, CT_ENOMEM, CT_EDEVNOMEM or CT_ECL; release with
 * ct_dweights_free (also after a failure). */
int ct_dweights_alloc(struct ct_dweights *w, struct ct_ocl *ocl, int ro);
void ct_dweights_free(struct ct_dweights *w);

/* Copy bytes off .. off + n - 1 of the stored weights (the float32 array,
 * or the image: the bytes between an image's tensors are not kept and
 * read as zero) from host to device (write) or back. Blocking. Returns 0,
 * CT_EINVAL for a range past the end, or CT_ECL. */
int ct_dweights_io(const struct ct_dweights *w, struct ct_ocl *ocl, size_t off, void *buf,
		   size_t n, int write);

#endif
