/*
 * ct_base.h - frozen base weights stored compactly for LoRA work units
 * (doc/workunit.md §13): the formats, which tensors they apply to, the
 * in-memory image of a compact base, the conversion from float32 and
 * back, and the compact checkpoint file the server ships.
 *
 * A LoRA WU never changes its base weights, so they may be kept in a
 * format narrower than float32. The arithmetic does not change in kind:
 * every matmul (and embedding lookup) reads the weight it needs widened
 * to float32 first, by a conversion that is a pure function of the stored
 * bits, then runs the float32 chain of ct_model.h unchanged. So a WU on a
 * compact base gives exactly the bytes of the float32 WU on the widened
 * weights (ct_base_widen), on every backend.
 *
 * Formats:
 *   CT_BASE_F32   the ordinary float32 parameters (no image);
 *   CT_BASE_BF16  bfloat16: the upper 16 bits of the float32. Widening
 *                 is exact (bits << 16); the conversion from float32
 *                 rounds to nearest, ties to even (finite inputs only).
 *   CT_BASE_Q8    int8 with one float32 scale per block of 32 consecutive
 *                 elements of a tensor (row-major): a block is stored as
 *                 its scale s then its 32 values q (36 bytes; the last
 *                 block of a tensor padded with q = 0); an element reads
 *                 as (float)q * s, one rounded product. Conversion: s =
 *                 amax / 127.0f over the block, q = rintf(x / s) clamped
 *                 to [-127, 127] (all 0 when s is 0).
 *   CT_BASE_NF4   4-bit NormalFloat (QLoRA's 16-value table, ct_nf4_code)
 *                 with one float32 scale per block of 64: the scale, then
 *                 32 bytes of codes, element 2i in the low nibble of byte
 *                 i (36 bytes); an element reads as code_value * s, one
 *                 rounded product. Conversion: s = amax of the block, the
 *                 code whose value is nearest x / s (the lower on a tie;
 *                 code 7, 0.0, when s is 0).
 *
 * Which tensors: the matrices (wte, wpe, qkvw, attprojw, fcw, fcprojw;
 * for Llama wpe is lm_head, empty when tied). Layernorm/RMSNorm weights,
 * biases and q/k norms stay float32 (they are small, and elementwise
 * kernels read them).
 *
 * Image layout (ct_base_layout): the 16 tensors in parameter order, tensor
 * i at byte offset off[i] (a multiple of CT_BASE_ALIGN; of CT_BASE_Q8_ALIGN
 * in a q8 image, so that a tensor starts on a whole block and element g of
 * the image's block grid is block g / 32), float32 tensors as
 * little-endian float32, bf16 tensors as little-endian uint16, q8 tensors
 * as their blocks; bytes between tensors are zero.
 *
 * File (ct_base_save / ct_base_load), little-endian:
 *   0  "CTBASE\0\0"   8 u32 version 1   12 u32 fmt   16 u64 image bytes
 *   24 SHA-256 of the image (32 bytes)   56..63 zero
 *   64 the model's 1024-byte checkpoint header (GPT-2 v3 or Llama)
 *   1088 the image; the file is exactly 1088 + image bytes.
 */
#ifndef CT_BASE_H
#define CT_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ct_gpt2.h"

enum ct_base_fmt {
	CT_BASE_F32 = 0,
	CT_BASE_BF16 = 1,
	CT_BASE_Q8 = 2,
	CT_BASE_NF4 = 3,
	CT_BASE_NFMT
};

#define CT_BASE_ALIGN 64
#define CT_BASE_Q8_BLOCK 32		/* elements per scale */
#define CT_BASE_Q8_BYTES 36		/* bytes per block */
#define CT_BASE_NF4_BLOCK 64		/* elements per scale (36 bytes too) */
#define CT_BASE_Q8_ALIGN 576		/* a block image's tensor alignment: 64 and 36 */

/* Whether fmt stores 36-byte blocks (q8, nf4), and its elements a block. */
static inline int ct_base_blocked(int fmt)
{
	return fmt == CT_BASE_Q8 || fmt == CT_BASE_NF4;
}

static inline size_t ct_base_block_elems(int fmt)
{
	return fmt == CT_BASE_NF4 ? CT_BASE_NF4_BLOCK : CT_BASE_Q8_BLOCK;
}
#define CT_BASE_FILE_HDR 1088
#define CT_BASE_VERSION 1

/* "f32", "bf16"; "?" for an unknown code. */
const char *ct_base_fmt_name(int fmt);

/* Parse a format name into *fmt. Returns 0 or CT_EINVAL naming the word. */
int ct_base_fmt_parse(const char *s, int *fmt);

/* Whether tensor t (enum ct_gpt2_tensor) is stored compactly in a
 * compact base (the matrices above). */
int ct_base_tensor_compact(int t);

/* Format of tensor t in a base of format fmt (fmt, or CT_BASE_F32). */
int ct_base_tensor_fmt(int fmt, int t);

/* Where every tensor sits in the image of a base of format fmt. */
struct ct_base_layout {
	int fmt;
	size_t off[CT_GPT2_NTENSORS];	/* bytes from the image start */
	size_t bytes;			/* image size */
};

/* Fill lay for cfg (valid) and fmt (!= CT_BASE_F32). */
void ct_base_layout(const struct ct_model_config *cfg, int fmt, struct ct_base_layout *lay);

/* bfloat16 <-> float32. Widening is exact. Narrowing rounds to nearest,
 * ties to even: h = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16 (inputs
 * are finite: the caller checks). */
static inline float ct_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint16_t ct_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Element g of q8 blocks at t (block g / 32): (float)q * s. */
static inline float ct_q8_at(const unsigned char *t, size_t g)
{
	const unsigned char *b = t + g / CT_BASE_Q8_BLOCK * CT_BASE_Q8_BYTES;
	float s;

	memcpy(&s, b, sizeof(s));
	return (float)(signed char)b[4 + g % CT_BASE_Q8_BLOCK] * s;
}

/* QLoRA's NF4 values (float32, as hexadecimal literals so that every
 * compiler, C or OpenCL, reads the same bits). */
static inline float ct_nf4_code(int c)
{
	static const float v[16] = {
		-0x1p+0f, -0x1.647362p-1f, -0x1.0cd66p-1f, -0x1.94654p-2f,
		-0x1.23449ap-2f, -0x1.7a6a7ep-3f, -0x1.74f0e2p-4f, 0x0p+0f,
		0x1.45f5fep-4f, 0x1.4995c6p-3f, 0x1.f809bap-3f, 0x1.5a0674p-2f,
		0x1.c3497p-2f, 0x1.200f56p-1f, 0x1.722766p-1f, 0x1p+0f,
	};

	return v[c & 15];
}

/* Element g of nf4 blocks at t (block g / 64): code value * s. */
static inline float ct_nf4_at(const unsigned char *t, size_t g)
{
	const unsigned char *b = t + g / CT_BASE_NF4_BLOCK * CT_BASE_Q8_BYTES;
	unsigned char byte = b[4 + g % CT_BASE_NF4_BLOCK / 2];
	float s;

	memcpy(&s, b, sizeof(s));
	return ct_nf4_code((g & 1) ? byte >> 4 : byte & 15) * s;
}

/* Element g of the blocks (format fmt: q8 or nf4) at t. */
static inline float ct_blk_at(int fmt, const unsigned char *t, size_t g)
{
	return fmt == CT_BASE_NF4 ? ct_nf4_at(t, g) : ct_q8_at(t, g);
}

/* Convert float32 parameters (nparams, finite) into a compact model:
 * out->cfg, lay, fmt, base (owned) set, out->params NULL. Returns 0,
 * CT_EINVAL (fmt), CT_ENONFINITE or CT_ENOMEM; out is zeroed on failure. */
int ct_base_convert(const struct ct_model_config *cfg, const float *params, int fmt,
		    struct ct_gpt2 *out);

/* Widen a compact image into nparams float32 (exact). */
void ct_base_widen(const struct ct_model_config *cfg, int fmt, const unsigned char *img,
		   float *params);

/* Whether every compact tensor of params is exactly representable in fmt
 * (so conversion loses nothing): 1 or 0. */
int ct_base_exact(const struct ct_model_config *cfg, const float *params, int fmt);

/* 0 if every stored weight of m (float32 or compact) is finite, else
 * CT_ENONFINITE naming the tensor and element. */
int ct_base_check_finite(const struct ct_gpt2 *m);

/* The model's weights as float32 in a new buffer (widened for a compact
 * model, copied otherwise): *out malloc'd nparams floats, freed by the
 * caller. Returns 0 or CT_ENOMEM. */
int ct_base_params_f32(const struct ct_gpt2 *m, float **out);

/* Turn a compact model into a float32 one in place (m->params the
 * widened weights, the image freed, m->fmt 0): the model the server
 * merges and evaluates for a compact-base job (doc/workunit.md §13, "Jobs
 * on a compact base"). Nothing for a float32 model. Returns 0 or
 * CT_ENOMEM (m unchanged). */
int ct_base_widen_model(struct ct_gpt2 *m);

/* Bytes of the model's stored weights (4*nparams or the image). */
size_t ct_base_stored_bytes(const struct ct_gpt2 *m);

/* SHA-256 of the stored weights (the float32 params, or the image). */
void ct_base_sha256(const struct ct_gpt2 *m, unsigned char digest[32]);

/* Write a compact model (fmt != F32) to path atomically (0644). */
int ct_base_save(const char *path, const struct ct_gpt2 *m);

/* Whether the n bytes at data start like a compact base file. */
int ct_base_is_file(const void *data, size_t n);

/* Read a compact base file (every field checked, exact size, the image's
 * digest, and that the bytes between tensors are zero). Returns 0,
 * CT_EFORMAT / CT_ECORRUPT naming the file, file errors, or CT_ENOMEM;
 * m zeroed on failure. */
int ct_base_load_mem(const void *data, size_t n, const char *name, struct ct_gpt2 *m);

/* The config of a checkpoint of either kind from its header (and its
 * exact size; the weights are not read), *fmt (fmt may be NULL) its
 * format (CT_BASE_F32 for an llm.c checkpoint). Errors as ct_gpt2_read_config / ct_base_load. */
int ct_base_read_config(const char *path, struct ct_model_config *cfg, int *fmt);

/* A checkpoint of either kind: a compact base file, or what ct_gpt2_load
 * reads. */
int ct_base_load(const char *path, struct ct_gpt2 *m);

/* ct_base_load, then a compact base widened to float32 (ct_base_widen_model):
 * what the server merges and evaluates for a compact-base job, and what
 * `ctune eval` / `ctune model merge` read. Errors as ct_base_load, or
 * CT_ENOMEM; m zeroed on failure. */
int ct_base_load_f32(const char *path, struct ct_gpt2 *m);

#endif
