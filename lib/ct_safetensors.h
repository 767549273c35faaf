/*
 * ct_safetensors.h - reading and writing Hugging Face's .safetensors files:
 * u64 little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 *  "__metadata__": {"k": "v"}}, then the raw little-endian tensor bytes
 * (offsets relative to the end of the header).
 *
 * Reading maps the file and checks everything a peer could get wrong: the
 * header length (<= CT_ST_MAX_HEADER), the JSON (ct_jv limits), every
 * entry's dtype, shape (<= 8 dims, each >= 0, element count without
 * overflow) and offsets (inside the data, end - begin = elements * dtype
 * size). Tensors of dtype F32, F16 and BF16 convert to float32 exactly;
 * other dtypes are listed but refused by ct_st_read_f32 (CT_EUNSUPP naming
 * the tensor and dtype).
 */
#ifndef CT_SAFETENSORS_H
#define CT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "ct_file.h"

#define CT_ST_MAX_HEADER ((uint64_t)100 << 20)	/* the format's own cap */
#define CT_ST_MAX_TENSORS 16384
#define CT_ST_MAX_DIMS 8

enum ct_st_dtype { CT_ST_OTHER = 0, CT_ST_F32, CT_ST_F16, CT_ST_BF16 };

struct ct_st_tensor {
	char *name;
	char dtype_name[16];	/* as in the file ("F32", "I64", ...) */
	enum ct_st_dtype dtype;
	int ndim;
	int64_t shape[CT_ST_MAX_DIMS];
	uint64_t nelem;
	uint64_t begin, end;	/* byte offsets in the data section */
};

struct ct_st_file {
	struct ct_mmap map;
	const unsigned char *data;	/* start of the data section */
	uint64_t data_len;
	size_t nt;
	struct ct_st_tensor *t;
};

/* Open and validate path. *f zeroed on failure. Returns 0, a file error,
 * CT_EFORMAT (naming path and what is wrong), CT_ERANGE, CT_ENOMEM. */
int ct_st_open(const char *path, struct ct_st_file *f);

/* Release f; a zeroed f is a no-op. */
void ct_st_close(struct ct_st_file *f);

/* The tensor called name, or NULL. */
const struct ct_st_tensor *ct_st_find(const struct ct_st_file *f, const char *name);

/* Convert tensor t (of f) to n float32s (n must equal t->nelem, else
 * CT_EFORMAT). F32 is copied bit for bit; F16 and BF16 widen exactly.
 * Other dtypes: CT_EUNSUPP. */
int ct_st_read_f32(const struct ct_st_file *f, const struct ct_st_tensor *t,
		   float *out, size_t n);

/* One tensor to write (float32). */
struct ct_st_out {
	const char *name;
	int ndim;
	int64_t shape[CT_ST_MAX_DIMS];
	const float *data;
};

/* Write nt F32 tensors to path atomically (0644), in the given order,
 * with __metadata__ {"format": "pt"}; the header is padded with spaces to
 * a multiple of 8 bytes. Names must not need JSON escaping beyond
 * printable ASCII (CT_EINVAL otherwise). */
int ct_st_write(const char *path, const struct ct_st_out *t, size_t nt);

/* ct_st_write with the tensors stored as dtype: CT_ST_F32 (bit for bit),
 * CT_ST_BF16 or CT_ST_F16 (each float rounded by ct_st_bf16 / ct_st_f16);
 * another dtype: CT_EINVAL. A finite value that float16 would turn into
 * inf (|x| >= 65520) is refused: CT_ERANGE naming the tensor, nothing
 * written. */
int ct_st_write_as(const char *path, const struct ct_st_out *t, size_t nt,
		   enum ct_st_dtype dtype);

/* Rewrite the safetensors file at path (atomically, in place) with every
 * tensor stored as dtype (as ct_st_write_as; the tensors must be F32, F16
 * or BF16, read exactly). Holds all tensors as float32 at once. Returns 0
 * or a CT_E* code. */
int ct_st_convert(const char *path, enum ct_st_dtype dtype);

/* x rounded to the nearest bfloat16 / IEEE binary16, ties to even; a
 * value past the largest finite one rounds to infinity (binary16: from
 * 65520 up), a NaN stays a (quiet) NaN of the same sign; binary16 keeps
 * its subnormals. The 16 bits as the file stores them (little-endian
 * order is the caller's). */
uint16_t ct_st_bf16(float x);
uint16_t ct_st_f16(float x);

#endif
