/*
 * ct_ocl_weights.c - a model's weights on an OpenCL device in one buffer
 * or in per-layer pieces (ct_ocl_weights.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_ocl_weights.h"

/* Tensors 2..13 hold one slice per layer; wte, wpe (Llama's lm_head) and
 * the final norm one. */
static int per_layer(int t)
{
	return t >= CT_LN1W && t <= CT_FCPROJB;
}

/* Bytes of n elements of tensor t stored in format fmt (whole blocks). */
static size_t stored_bytes(int fmt, size_t n)
{
	if (ct_base_blocked(fmt))
		return (n + ct_base_block_elems(fmt) - 1) / ct_base_block_elems(fmt) *
		       CT_BASE_Q8_BYTES;
	return n * (fmt == CT_BASE_BF16 ? 2 : 4);
}

static int tensor_fmt(const struct ct_dweights *w, int t)
{
	return ct_base_tensor_fmt(w->bl.fmt, t);
}

/* Where tensor t starts in the stored bytes. */
static size_t tensor_start(const struct ct_dweights *w, int t)
{
	return w->bl.fmt == CT_BASE_F32 ? 4 * w->lay.offset[t] : w->bl.off[t];
}

/* Pieces of tensor t. */
static int npieces(const struct ct_dweights *w, int t)
{
	return w->per[t] == 0 ? 0 : (int)(w->lay.size[t] / w->per[t]);
}

void ct_dweights_plan(struct ct_dweights *w, const struct ct_model_config *cfg, int fmt,
		      int split)
{
	memset(w, 0, sizeof(*w));
	ct_gpt2_layout(cfg, &w->lay);
	w->bl.fmt = CT_BASE_F32;
	if (fmt != CT_BASE_F32)
		ct_base_layout(cfg, fmt, &w->bl);
	w->L = cfg->L;
	w->split = split != 0;
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		size_t n = w->lay.size[t], per = n / (size_t)cfg->L;
		int f = tensor_fmt(w, t);

		w->per[t] = n;
		if (split && per_layer(t) && n > 0 &&
		    (!ct_base_blocked(f) || per % ct_base_block_elems(f) == 0))
			w->per[t] = per;
	}
}

static uint64_t one_bytes(const struct ct_dweights *w)
{
	return w->bl.fmt == CT_BASE_F32 ? 4 * (uint64_t)w->lay.total : w->bl.bytes;
}

uint64_t ct_dweights_bytes(const struct ct_dweights *w, uint64_t *largest)
{
	uint64_t sum = 0, big = 0;

	if (!w->split) {
		sum = big = one_bytes(w);
	} else {
		for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
			uint64_t b = stored_bytes(tensor_fmt(w, t), w->per[t]);

			sum += b * (uint64_t)npieces(w, t);
			big = b > big ? b : big;
		}
	}
	if (largest != NULL)
		*largest = big;
	return sum;
}

int ct_dweights_alloc(struct ct_dweights *w, struct ct_ocl *ocl, int ro)
{
	cl_mem_flags fl = ro ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
	int rc = 0;

	if (!w->split)
		return ct_ocl_alloc(ocl, (size_t)one_bytes(w), fl, &w->one);
	w->mem = calloc((size_t)CT_GPT2_NTENSORS * w->L, sizeof(cl_mem));
	if (w->mem == NULL)
		return ct_error(CT_ENOMEM, "weight pieces");
	for (int t = 0; t < CT_GPT2_NTENSORS && rc == 0; t++)
		for (int k = 0; k < npieces(w, t) && rc == 0; k++)
			rc = ct_ocl_alloc(ocl, stored_bytes(tensor_fmt(w, t), w->per[t]), fl,
					  &w->mem[(size_t)t * w->L + k]);
	return rc;
}

void ct_dweights_free(struct ct_dweights *w)
{
	ct_ocl_unref(&w->one);
	if (w->mem != NULL)
		for (size_t i = 0; i < (size_t)CT_GPT2_NTENSORS * w->L; i++)
			ct_ocl_unref(&w->mem[i]);
	free(w->mem);
	w->mem = NULL;
}

/* The part of [off, off + n) that falls in [s, s + len), as (at, k):
 * bytes off + at .. copied to s + k ..; 0 when none. */
static size_t overlap(size_t off, size_t n, size_t s, size_t len, size_t *at, size_t *k)
{
	size_t a = off > s ? off : s, b = off + n < s + len ? off + n : s + len;

	if (a >= b)
		return 0;
	*at = a - off;
	*k = a - s;
	return b - a;
}

static int piece_io(struct ct_ocl *ocl, cl_mem m, size_t k, void *buf, size_t len, int write)
{
	cl_int err = write ? clEnqueueWriteBuffer(ocl->queue, m, CL_TRUE, k, len, buf, 0,
						  NULL, NULL)
			   : clEnqueueReadBuffer(ocl->queue, m, CL_TRUE, k, len, buf, 0, NULL,
						 NULL);

	return ct_ocl_check(err, write ? "write the weights" : "read the weights");
}

int ct_dweights_io(const struct ct_dweights *w, struct ct_ocl *ocl, size_t off, void *buf,
		   size_t n, int write)
{
	unsigned char *b = buf;
	int rc = 0;

	if (off > one_bytes(w) || n > one_bytes(w) - off)
		return ct_error(CT_EINVAL, "weight bytes %zu..%zu of %llu", off, off + n,
				(unsigned long long)one_bytes(w));
	if (!w->split)
		return n == 0 ? 0 : piece_io(ocl, w->one, off, b, n, write);
	if (!write)	/* the gaps between an image's tensors */
		memset(b, 0, n);
	for (int t = 0; t < CT_GPT2_NTENSORS && rc == 0; t++) {
		size_t len = stored_bytes(tensor_fmt(w, t), w->per[t]);

		for (int k = 0; k < npieces(w, t) && rc == 0; k++) {
			size_t at = 0, in = 0;
			size_t m = overlap(off, n, tensor_start(w, t) + (size_t)k * len, len, &at,
					   &in);

			if (m > 0)
				rc = piece_io(ocl, w->mem[(size_t)t * w->L + k], in, b + at, m,
					      write);
		}
	}
	return rc;
}
