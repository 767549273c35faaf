/*
 * ct_gguf.c - GGUF version 3 files out (see ct_gguf.h): the metadata is
 * kept as its encoded bytes while the caller adds pairs; the tensor
 * infos are encoded at write time, when the offsets are known; the
 * values are converted one row at a time into a bounded buffer.
 */
#include "ct_gguf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_le.h"
#include "ct_safetensors.h"

struct gguf_tensor {
	char name[CT_GGUF_MAX_NAME + 1];
	enum ct_ggml_type type;
	int64_t rows, cols;	/* cols 0: a vector */
	const float *data;
	const uint32_t *rowmap;
};

struct ct_gguf {
	struct ct_buf kv;	/* the encoded pairs */
	uint64_t nkv;
	char **keys;		/* for the duplicate check */
	struct gguf_tensor *t;
	size_t nt, capt;
};

int ct_gguf_new(struct ct_gguf **out)
{
	struct ct_gguf *g = calloc(1, sizeof(*g));

	*out = g;
	if (g == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	ct_buf_init(&g->kv, CT_GGUF_MAX_META);
	return ct_gguf_kv_u32(g, "general.alignment", CT_GGUF_ALIGN);
}

void ct_gguf_free(struct ct_gguf *g)
{
	if (g == NULL)
		return;
	for (uint64_t i = 0; i < g->nkv; i++)
		free(g->keys[i]);
	free(g->keys);
	free(g->t);
	ct_buf_free(&g->kv);
	free(g);
}

static int put_u32(struct ct_buf *b, uint32_t v)
{
	unsigned char p[4];

	ct_le_put32(p, v);
	return ct_buf_append(b, p, 4);
}

static int put_u64(struct ct_buf *b, uint64_t v)
{
	unsigned char p[8];

	ct_le_put64(p, v);
	return ct_buf_append(b, p, 8);
}

static int put_str(struct ct_buf *b, const char *s, size_t n)
{
	int rc = put_u64(b, n);

	return rc < 0 ? rc : ct_buf_append(b, s, n);
}

/* Start pair `key` of value type t: the checks, the key and the type. */
static int kv_begin(struct ct_gguf *g, const char *key, enum ct_gguf_vtype t)
{
	size_t n = strlen(key);
	char **keys;
	int rc;

	if (n == 0 || n > CT_GGUF_MAX_KEY)
		return ct_error(CT_EINVAL, "GGUF key '%.40s': 1 to %d bytes", key, CT_GGUF_MAX_KEY);
	for (uint64_t i = 0; i < g->nkv; i++)
		if (strcmp(g->keys[i], key) == 0)
			return ct_error(CT_EINVAL, "GGUF key '%s' given twice", key);
	keys = realloc(g->keys, (g->nkv + 1) * sizeof(*keys));
	if (keys == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	g->keys = keys;
	if ((keys[g->nkv] = strdup(key)) == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	g->nkv++;
	rc = put_str(&g->kv, key, n);
	if (rc == 0)
		rc = put_u32(&g->kv, t);
	return rc < 0 ? ct_error(rc, "GGUF metadata: over %zu bytes", (size_t)CT_GGUF_MAX_META)
		      : 0;
}

static int kv_end(int rc)
{
	return rc < 0 ? ct_error(rc, "GGUF metadata: over %zu bytes", (size_t)CT_GGUF_MAX_META)
		      : 0;
}

int ct_gguf_kv_strn(struct ct_gguf *g, const char *key, const char *s, size_t n)
{
	int rc = kv_begin(g, key, CT_GGUF_STR);

	return rc < 0 ? rc : kv_end(put_str(&g->kv, s, n));
}

int ct_gguf_kv_str(struct ct_gguf *g, const char *key, const char *s)
{
	return ct_gguf_kv_strn(g, key, s, strlen(s));
}

int ct_gguf_kv_u32(struct ct_gguf *g, const char *key, uint32_t v)
{
	int rc = kv_begin(g, key, CT_GGUF_U32);

	return rc < 0 ? rc : kv_end(put_u32(&g->kv, v));
}

int ct_gguf_kv_f32(struct ct_gguf *g, const char *key, float v)
{
	unsigned char p[4];
	int rc = kv_begin(g, key, CT_GGUF_F32);

	ct_le_put_f32(p, v);
	return rc < 0 ? rc : kv_end(ct_buf_append(&g->kv, p, 4));
}

int ct_gguf_kv_bool(struct ct_gguf *g, const char *key, int v)
{
	unsigned char b = v != 0;
	int rc = kv_begin(g, key, CT_GGUF_BOOL);

	return rc < 0 ? rc : kv_end(ct_buf_append(&g->kv, &b, 1));
}

static int arr_begin(struct ct_gguf *g, const char *key, enum ct_gguf_vtype t, size_t n)
{
	int rc = kv_begin(g, key, CT_GGUF_ARR);

	if (rc == 0)
		rc = put_u32(&g->kv, t);
	if (rc == 0)
		rc = put_u64(&g->kv, n);
	return kv_end(rc);
}

int ct_gguf_kv_arr_str(struct ct_gguf *g, const char *key, const char *const *s,
		       const size_t *len, size_t n)
{
	int rc = arr_begin(g, key, CT_GGUF_STR, n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = put_str(&g->kv, s[i], len[i]);
	return kv_end(rc);
}

int ct_gguf_kv_arr_i32(struct ct_gguf *g, const char *key, const int32_t *v, size_t n)
{
	int rc = arr_begin(g, key, CT_GGUF_I32, n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = put_u32(&g->kv, (uint32_t)v[i]);
	return kv_end(rc);
}

/* ---- tensors ---------------------------------------------------------- */

size_t ct_ggml_row_bytes(enum ct_ggml_type t, int64_t n)
{
	switch (t) {
	case CT_GGML_F32: return (size_t)n * 4;
	case CT_GGML_F16:
	case CT_GGML_BF16: return (size_t)n * 2;
	case CT_GGML_Q8_0: return (size_t)(n / CT_GGML_QK8_0) * (2 + CT_GGML_QK8_0);
	}
	return 0;
}

int ct_gguf_tensor(struct ct_gguf *g, const char *name, enum ct_ggml_type type,
		   int64_t rows, int64_t cols, const float *data, const uint32_t *rowmap)
{
	const int64_t row = cols > 0 ? cols : rows;
	struct gguf_tensor *e;
	size_t n = strlen(name);

	if (n == 0 || n > CT_GGUF_MAX_NAME)
		return ct_error(CT_EINVAL, "GGUF tensor name '%.70s': 1 to %d bytes", name,
				CT_GGUF_MAX_NAME);
	if (rows < 1 || cols < 0 || ct_ggml_row_bytes(type, row) == 0)
		return ct_error(CT_EINVAL, "GGUF tensor %s: bad shape or type", name);
	if (type == CT_GGML_Q8_0 && row % CT_GGML_QK8_0 != 0)
		return ct_error(CT_EINVAL, "GGUF tensor %s: Q8_0 needs rows of a multiple of "
				"%d values, not %lld", name, CT_GGML_QK8_0, (long long)row);
	if (g->nt == CT_GGUF_MAX_TENSORS)
		return ct_error(CT_ETOOBIG, "GGUF: over %d tensors", CT_GGUF_MAX_TENSORS);
	for (size_t i = 0; i < g->nt; i++)
		if (strcmp(g->t[i].name, name) == 0)
			return ct_error(CT_EINVAL, "GGUF tensor %s given twice", name);
	if (g->nt == g->capt) {
		size_t cap = g->capt ? 2 * g->capt : 64;
		struct gguf_tensor *t = realloc(g->t, cap * sizeof(*t));

		if (t == NULL)
			return ct_error(CT_ENOMEM, "out of memory");
		g->t = t;
		g->capt = cap;
	}
	e = &g->t[g->nt++];
	memcpy(e->name, name, n + 1);
	e->type = type;
	e->rows = rows;
	e->cols = cols;
	e->data = data;
	e->rowmap = rowmap;
	return 0;
}

static size_t pad(size_t off)
{
	return (CT_GGUF_ALIGN - off % CT_GGUF_ALIGN) % CT_GGUF_ALIGN;
}

static size_t tensor_bytes(const struct gguf_tensor *t)
{
	return t->cols > 0 ? (size_t)t->rows * ct_ggml_row_bytes(t->type, t->cols)
			   : ct_ggml_row_bytes(t->type, t->rows);
}

/* The header, the pairs, the tensor infos and the padding before the data. */
static int encode_head(const struct ct_gguf *g, struct ct_buf *h)
{
	uint64_t off = 0;
	int rc = ct_buf_append(h, "GGUF", 4);

	if (rc == 0)
		rc = put_u32(h, CT_GGUF_VERSION);
	if (rc == 0)
		rc = put_u64(h, g->nt);
	if (rc == 0)
		rc = put_u64(h, g->nkv);
	if (rc == 0)
		rc = ct_buf_append(h, g->kv.data ? g->kv.data : (unsigned char *)"", g->kv.len);
	for (size_t i = 0; rc == 0 && i < g->nt; i++) {
		const struct gguf_tensor *t = &g->t[i];

		rc = put_str(h, t->name, strlen(t->name));
		if (rc == 0)
			rc = put_u32(h, t->cols > 0 ? 2 : 1);
		if (rc == 0)
			rc = put_u64(h, (uint64_t)(t->cols > 0 ? t->cols : t->rows));
		if (rc == 0 && t->cols > 0)
			rc = put_u64(h, (uint64_t)t->rows);
		if (rc == 0)
			rc = put_u32(h, t->type);
		if (rc == 0)
			rc = put_u64(h, off);
		off += tensor_bytes(t);
		off += pad(off);
	}
	if (rc == 0)
		rc = ct_buf_append(h, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
				   "\0\0\0", pad(h->len));
	return rc < 0 ? ct_error(rc, "GGUF header: over %zu bytes", (size_t)CT_GGUF_MAX_META)
		      : 0;
}

void ct_ggml_q8_0_row(const float *x, int64_t n, unsigned char *out)
{
	for (int64_t b = 0; b < n; b += CT_GGML_QK8_0, out += 2 + CT_GGML_QK8_0) {
		float amax = 0.0f, d, id;
		uint16_t h;

		for (int i = 0; i < CT_GGML_QK8_0; i++)
			amax = fmaxf(amax, fabsf(x[b + i]));
		d = amax / 127.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		h = ct_st_f16(d);
		out[0] = (unsigned char)(h & 0xff);
		out[1] = (unsigned char)(h >> 8);
		for (int i = 0; i < CT_GGML_QK8_0; i++)
			out[2 + i] = (unsigned char)(int8_t)roundf(x[b + i] * id);
	}
}

/* One row of n values of x as type t into out; CT_ERANGE when F16 (or a
 * Q8_0 scale) would turn a finite value infinite. */
static int convert_row(enum ct_ggml_type t, const float *x, int64_t n, unsigned char *out)
{
	for (int64_t i = 0; i < n && (t == CT_GGML_F16 || t == CT_GGML_Q8_0); i++)
		if (isfinite(x[i]) && fabsf(x[i]) >= (t == CT_GGML_F16 ? 65520.0f : 65504.0f * 127))
			return CT_ERANGE;
	switch (t) {
	case CT_GGML_F32:
		for (int64_t i = 0; i < n; i++)
			ct_le_put_f32(out + 4 * i, x[i]);
		break;
	case CT_GGML_F16:
	case CT_GGML_BF16:
		for (int64_t i = 0; i < n; i++) {
			uint16_t h = t == CT_GGML_F16 ? ct_st_f16(x[i]) : ct_st_bf16(x[i]);

			out[2 * i] = (unsigned char)(h & 0xff);
			out[2 * i + 1] = (unsigned char)(h >> 8);
		}
		break;
	case CT_GGML_Q8_0:
		ct_ggml_q8_0_row(x, n, out);
		break;
	}
	return 0;
}

#define GGUF_CHUNK ((size_t)4 << 20)

/* Tensor t's values, rows converted into buf (GGUF_CHUNK bytes, or one
 * row when that is more), then its padding. */
static int write_tensor(struct ct_afile *af, const struct gguf_tensor *t, unsigned char *buf,
			size_t cap, uint64_t *off)
{
	const int64_t rows = t->cols > 0 ? t->rows : 1, n = t->cols > 0 ? t->cols : t->rows;
	const size_t rb = ct_ggml_row_bytes(t->type, n);
	static const unsigned char zero[CT_GGUF_ALIGN];
	size_t used = 0;
	int rc = 0;

	for (int64_t r = 0; r < rows && rc == 0; r++) {
		const int64_t src = t->rowmap ? t->rowmap[r] : r;

		if (convert_row(t->type, t->data + src * n, n, buf + used) < 0)
			return ct_error(CT_ERANGE, "tensor %s: a value past float16's range "
					"(65504): store it as f32 or bf16", t->name);
		used += rb;
		if (used + rb > cap || r + 1 == rows) {
			rc = ct_afile_write(af, buf, used);
			used = 0;
		}
	}
	*off += rows * rb;
	if (rc == 0)
		rc = ct_afile_write(af, zero, pad(*off));
	*off += pad(*off);
	return rc;
}

int ct_gguf_write(const struct ct_gguf *g, const char *path)
{
	struct ct_buf head = CT_BUF_INIT(CT_GGUF_MAX_META + 4096);
	struct ct_afile af = { .fd = -1 };
	unsigned char *buf = NULL;
	size_t cap = GGUF_CHUNK;
	uint64_t off = 0;
	int rc;

	for (size_t i = 0; i < g->nt; i++) {
		size_t rb = ct_ggml_row_bytes(g->t[i].type, g->t[i].cols ? g->t[i].cols : g->t[i].rows);

		cap = rb > cap ? rb : cap;
	}
	rc = encode_head(g, &head);
	if (rc == 0 && (buf = malloc(cap)) == NULL)
		rc = ct_error(CT_ENOMEM, "out of memory");
	if (rc == 0)
		rc = ct_afile_open(&af, path, 0644);
	if (rc == 0)
		rc = ct_afile_write(&af, head.data, head.len);
	for (size_t i = 0; rc == 0 && i < g->nt; i++)
		rc = write_tensor(&af, &g->t[i], buf, cap, &off);
	if (rc == 0)
		rc = ct_afile_commit(&af);
	else
		ct_afile_abort(&af);
	free(buf);
	ct_buf_free(&head);
	return rc;
}
