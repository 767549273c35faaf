/*
 * ct_gguf.h - a writer of GGUF files (version 3), the single-file model
 * format of ggml, llama.cpp, Ollama and LM Studio (ggml's docs/gguf.md):
 *
 *   u32 magic "GGUF"  u32 version 3  u64 tensor count  u64 key/value count
 *   key/value pairs:  string key, u32 value type, the value
 *   tensor infos:     string name, u32 n_dims, u64 ne[n_dims] (ne[0] the
 *                     fastest-varying dimension: a row-major (rows, cols)
 *                     matrix is ne = {cols, rows}), u32 ggml type,
 *                     u64 offset into the data section
 *   zero padding to the alignment (general.alignment, written: 32), then
 *   the tensors, each starting at a multiple of the alignment.
 * Strings are u64 length + UTF-8 bytes (no NUL); arrays u32 element type,
 * u64 count, the elements; everything little-endian.
 *
 * The caller builds the metadata and the tensor list in order, then
 * writes the file atomically; the tensor values are converted from
 * float32 row by row while writing (F32 as is; F16, BF16 rounded to
 * nearest even by ct_st_f16 / ct_st_bf16; Q8_0 in blocks of 32: a
 * float16 scale d = max|x| / 127 and 32 int8 q = round(x / d), half away
 * from zero; d = 0 gives q = 0).
 *
 *   struct ct_gguf *g;
 *   rc = ct_gguf_new(&g);
 *   rc = ct_gguf_kv_str(g, "general.architecture", "llama");
 *   rc = ct_gguf_tensor(g, "token_embd.weight", CT_GGML_F16, V, C, emb, NULL);
 *   rc = ct_gguf_write(g, "out.gguf");
 *   ct_gguf_free(g);
 */
#ifndef CT_GGUF_H
#define CT_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define CT_GGUF_VERSION 3
#define CT_GGUF_ALIGN 32
#define CT_GGUF_MAX_NAME 63		/* bytes of a tensor name (ggml's 64 with the NUL) */
#define CT_GGUF_MAX_KEY 255		/* bytes of a key */
#define CT_GGUF_MAX_TENSORS 65536
#define CT_GGUF_MAX_META ((size_t)1 << 30)	/* bytes of metadata and tensor infos */

/* The value types of the metadata (the spec's numbering). */
enum ct_gguf_vtype {
	CT_GGUF_U8 = 0, CT_GGUF_I8 = 1, CT_GGUF_U16 = 2, CT_GGUF_I16 = 3,
	CT_GGUF_U32 = 4, CT_GGUF_I32 = 5, CT_GGUF_F32 = 6, CT_GGUF_BOOL = 7,
	CT_GGUF_STR = 8, CT_GGUF_ARR = 9, CT_GGUF_U64 = 10, CT_GGUF_I64 = 11,
	CT_GGUF_F64 = 12,
};

/* The tensor types written (ggml's numbering). */
enum ct_ggml_type {
	CT_GGML_F32 = 0, CT_GGML_F16 = 1, CT_GGML_Q8_0 = 8, CT_GGML_BF16 = 30,
};

#define CT_GGML_QK8_0 32	/* values per Q8_0 block (2 + 32 bytes) */

struct ct_gguf;

/* A new, empty file description (*out owned: ct_gguf_free). 0 or CT_ENOMEM. */
int ct_gguf_new(struct ct_gguf **out);
void ct_gguf_free(struct ct_gguf *g);

/* Append one key/value pair. Keys are 1..CT_GGUF_MAX_KEY bytes, each at
 * most once (CT_EINVAL otherwise); a string value is n bytes (no NUL
 * needed; ct_gguf_kv_str takes a C string). Each returns 0, CT_EINVAL or
 * CT_ETOOBIG (past CT_GGUF_MAX_META in all) / CT_ENOMEM. */
int ct_gguf_kv_str(struct ct_gguf *g, const char *key, const char *s);
int ct_gguf_kv_strn(struct ct_gguf *g, const char *key, const char *s, size_t n);
int ct_gguf_kv_u32(struct ct_gguf *g, const char *key, uint32_t v);
int ct_gguf_kv_f32(struct ct_gguf *g, const char *key, float v);
int ct_gguf_kv_bool(struct ct_gguf *g, const char *key, int v);

/* Arrays: n strings (s[i] of len[i] bytes), n int32, n float32. */
int ct_gguf_kv_arr_str(struct ct_gguf *g, const char *key, const char *const *s,
		       const size_t *len, size_t n);
int ct_gguf_kv_arr_i32(struct ct_gguf *g, const char *key, const int32_t *v, size_t n);

/* Append a tensor of rows x cols float32 values (cols = 0: a vector of
 * rows values, ne = {rows}; else ne = {cols, rows}) stored as type. Row r
 * of the file is row rowmap[r] of data when rowmap is not NULL (a
 * permutation, borrowed like data until ct_gguf_write returns). Names
 * are 1..CT_GGUF_MAX_NAME bytes and unique. Q8_0 needs cols % 32 == 0
 * (a vector: rows % 32). Returns 0, CT_EINVAL (naming the tensor) or
 * CT_ENOMEM / CT_ETOOBIG. */
int ct_gguf_tensor(struct ct_gguf *g, const char *name, enum ct_ggml_type type,
		   int64_t rows, int64_t cols, const float *data, const uint32_t *rowmap);

/* Bytes of one stored row of n values of type t (Q8_0: n % 32 == 0). */
size_t ct_ggml_row_bytes(enum ct_ggml_type t, int64_t n);

/* The 34 bytes of Q8_0 blocks for n (a multiple of 32) floats of x. */
void ct_ggml_q8_0_row(const float *x, int64_t n, unsigned char *out);

/* Write the file at path atomically (0644): header, metadata, tensor
 * infos, the tensors in the order given. A finite value F16 would make
 * infinite (|x| >= 65520; Q8_0's scales too) is refused: CT_ERANGE naming
 * the tensor, nothing written. Returns 0 or a CT_E* code. */
int ct_gguf_write(const struct ct_gguf *g, const char *path);

#endif
