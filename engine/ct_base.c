/*
 * ct_base.c - compact frozen bases (see ct_base.h): layout, conversion,
 * widening and the compact checkpoint file.
 */
#include "config.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_le.h"

#include <math.h>
#include <stdlib.h>

static const char *const fmt_names[CT_BASE_NFMT] = {
	[CT_BASE_F32] = "f32",
	[CT_BASE_BF16] = "bf16",
	[CT_BASE_Q8] = "q8",
	[CT_BASE_NF4] = "nf4",
};

static const char file_magic[8] = { 'C', 'T', 'B', 'A', 'S', 'E', 0, 0 };

const char *ct_base_fmt_name(int fmt)
{
	return fmt >= 0 && fmt < CT_BASE_NFMT ? fmt_names[fmt] : "?";
}

int ct_base_fmt_parse(const char *s, int *fmt)
{
	for (int i = 0; i < CT_BASE_NFMT; i++) {
		if (strcmp(s, fmt_names[i]) == 0) {
			*fmt = i;
			return 0;
		}
	}
	return ct_error(CT_EINVAL, "unknown base format '%s' (known: f32, bf16, q8, nf4)", s);
}

int ct_base_tensor_compact(int t)
{
	return t == CT_WTE || t == CT_WPE || t == CT_QKVW || t == CT_ATTPROJW ||
	       t == CT_FCW || t == CT_FCPROJW;
}

int ct_base_tensor_fmt(int fmt, int t)
{
	return ct_base_tensor_compact(t) ? fmt : CT_BASE_F32;
}

/* Bytes of n elements of format fmt. */
static size_t fmt_bytes(int fmt, size_t n)
{
	if (ct_base_blocked(fmt))
		return (n + ct_base_block_elems(fmt) - 1) / ct_base_block_elems(fmt) *
		       CT_BASE_Q8_BYTES;
	return fmt == CT_BASE_BF16 ? 2 * n : 4 * n;
}

/* Quantize n floats into q8 blocks at dst. */
static void q8_pack(unsigned char *dst, const float *x, size_t n)
{
	for (size_t b0 = 0; b0 < n; b0 += CT_BASE_Q8_BLOCK) {
		size_t k = n - b0 < CT_BASE_Q8_BLOCK ? n - b0 : CT_BASE_Q8_BLOCK;
		unsigned char *b = dst + b0 / CT_BASE_Q8_BLOCK * CT_BASE_Q8_BYTES;
		float amax = 0.0f, s;

		for (size_t i = 0; i < k; i++)
			amax = fabsf(x[b0 + i]) > amax ? fabsf(x[b0 + i]) : amax;
		s = amax / 127.0f;
		memcpy(b, &s, sizeof(s));
		for (size_t i = 0; i < k; i++) {
			float q = s > 0.0f ? rintf(x[b0 + i] / s) : 0.0f;

			q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
			b[4 + i] = (unsigned char)(signed char)q;
		}
	}
}

/* Quantize n floats into nf4 blocks at dst. */
static void nf4_pack(unsigned char *dst, const float *x, size_t n)
{
	for (size_t b0 = 0; b0 < n; b0 += CT_BASE_NF4_BLOCK) {
		size_t k = n - b0 < CT_BASE_NF4_BLOCK ? n - b0 : CT_BASE_NF4_BLOCK;
		unsigned char *b = dst + b0 / CT_BASE_NF4_BLOCK * CT_BASE_Q8_BYTES;
		float amax = 0.0f;

		for (size_t i = 0; i < k; i++)
			amax = fabsf(x[b0 + i]) > amax ? fabsf(x[b0 + i]) : amax;
		memcpy(b, &amax, sizeof(amax));
		memset(b + 4, 0x77, 32);	/* code 7 (0.0) in both nibbles */
		for (size_t i = 0; amax > 0.0f && i < k; i++) {
			float y = x[b0 + i] / amax, best = 3.0f;
			int c = 7;

			for (int j = 0; j < 16; j++) {
				float d = fabsf(y - ct_nf4_code(j));

				if (d < best) {
					best = d;
					c = j;
				}
			}
			b[4 + i / 2] = (unsigned char)((i & 1) ? (b[4 + i / 2] & 0x0f) | (c << 4)
							     : (b[4 + i / 2] & 0xf0) | c);
		}
	}
}

/* Element i of tensor t of format fmt at p, widened. */
static float tensor_at(int fmt, const unsigned char *p, size_t i)
{
	float x;
	uint16_t h;

	switch (fmt) {
	case CT_BASE_BF16:
		memcpy(&h, p + 2 * i, 2);
		return ct_bf16_to_f32(h);
	case CT_BASE_Q8:
	case CT_BASE_NF4:
		return ct_blk_at(fmt, p, i);
	default:
		memcpy(&x, p + 4 * i, 4);
		return x;
	}
}

void ct_base_layout(const struct ct_model_config *cfg, int fmt, struct ct_base_layout *lay)
{
	struct ct_gpt2_layout g;
	size_t off = 0;

	ct_gpt2_layout(cfg, &g);
	lay->fmt = fmt;
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		size_t al = ct_base_blocked(fmt) ? CT_BASE_Q8_ALIGN : CT_BASE_ALIGN;

		lay->off[t] = off;
		off += fmt_bytes(ct_base_tensor_fmt(fmt, t), g.size[t]);
		off = (off + al - 1) / al * al;
	}
	lay->bytes = off;
}

int ct_base_convert(const struct ct_model_config *cfg, const float *params, int fmt,
		    struct ct_gpt2 *out)
{
	struct ct_base_layout bl;
	int rc;

	memset(out, 0, sizeof(*out));
	if (fmt != CT_BASE_BF16 && !ct_base_blocked(fmt))
		return ct_error(CT_EINVAL, "base format %s cannot be converted to",
				ct_base_fmt_name(fmt));
	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return rc;
	out->cfg = *cfg;
	ct_gpt2_layout(cfg, &out->lay);
	rc = ct_gpt2_check_finite(params, out->lay.total, &out->lay);
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	ct_base_layout(cfg, fmt, &bl);
	out->base = calloc(bl.bytes ? bl.bytes : 1, 1);
	if (out->base == NULL) {
		memset(out, 0, sizeof(*out));
		return ct_error(CT_ENOMEM, "out of memory for a %zu-byte %s base", bl.bytes,
				ct_base_fmt_name(fmt));
	}
	out->fmt = fmt;
	out->base_bytes = bl.bytes;
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		const float *src = params + out->lay.offset[t];
		size_t n = out->lay.size[t];

		if (ct_base_tensor_fmt(fmt, t) == CT_BASE_F32) {
			memcpy(out->base + bl.off[t], src, n * sizeof(float));
			continue;
		}
		if (fmt == CT_BASE_Q8) {
			q8_pack(out->base + bl.off[t], src, n);
			continue;
		}
		if (fmt == CT_BASE_NF4) {
			nf4_pack(out->base + bl.off[t], src, n);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			uint16_t h = ct_f32_to_bf16(src[i]);

			if (!isfinite(ct_bf16_to_f32(h))) {
				rc = ct_error(CT_ENONFINITE, "%s[%zu] = %g overflows bfloat16",
					      ct_gpt2_tensor_name(t), i, (double)src[i]);
				ct_gpt2_free(out);
				return rc;
			}
			memcpy(out->base + bl.off[t] + 2 * i, &h, 2);
		}
	}
	return 0;
}

void ct_base_widen(const struct ct_model_config *cfg, int fmt, const unsigned char *img,
		   float *params)
{
	struct ct_gpt2_layout g;
	struct ct_base_layout bl;

	ct_gpt2_layout(cfg, &g);
	ct_base_layout(cfg, fmt, &bl);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		float *dst = params + g.offset[t];

		if (ct_base_tensor_fmt(fmt, t) == CT_BASE_F32) {
			memcpy(dst, img + bl.off[t], g.size[t] * sizeof(float));
			continue;
		}
		for (size_t i = 0; i < g.size[t]; i++)
			dst[i] = tensor_at(fmt, img + bl.off[t], i);
	}
}

int ct_base_exact(const struct ct_model_config *cfg, const float *params, int fmt)
{
	struct ct_gpt2_layout g;

	if (fmt == CT_BASE_F32)
		return 1;
	if (fmt != CT_BASE_BF16)	/* q8: a per-block grid, exact only by chance */
		return 0;
	ct_gpt2_layout(cfg, &g);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		if (!ct_base_tensor_compact(t))
			continue;
		for (size_t i = 0; i < g.size[t]; i++) {
			float x = params[g.offset[t] + i];

			if (memcmp(&x, &(float){ ct_bf16_to_f32(ct_f32_to_bf16(x)) }, 4) != 0)
				return 0;
		}
	}
	return 1;
}

int ct_base_check_finite(const struct ct_gpt2 *m)
{
	struct ct_base_layout bl;

	if (m->fmt == CT_BASE_F32)
		return ct_gpt2_check_finite(m->params, m->lay.total, &m->lay);
	ct_base_layout(&m->cfg, m->fmt, &bl);
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		const unsigned char *p = m->base + bl.off[t];

		for (size_t i = 0; i < m->lay.size[t]; i++) {
			float x = tensor_at(ct_base_tensor_fmt(m->fmt, t), p, i);

			if (!isfinite(x))
				return ct_error(CT_ENONFINITE, "%s[%zu] is not finite",
						ct_gpt2_tensor_name(t), i);
		}
	}
	return 0;
}

int ct_base_params_f32(const struct ct_gpt2 *m, float **out)
{
	size_t n = m->lay.total;

	*out = malloc((n ? n : 1) * sizeof(float));
	if (*out == NULL)
		return ct_error(CT_ENOMEM, "out of memory for %zu float32 weights", n);
	if (m->fmt == CT_BASE_F32)
		memcpy(*out, m->params, n * sizeof(float));
	else
		ct_base_widen(&m->cfg, m->fmt, m->base, *out);
	return 0;
}

int ct_base_widen_model(struct ct_gpt2 *m)
{
	float *p;
	int rc;

	if (m->fmt == CT_BASE_F32)
		return 0;
	rc = ct_base_params_f32(m, &p);
	if (rc < 0)
		return rc;
	free(m->base);
	m->base = NULL;
	m->base_bytes = 0;
	m->fmt = CT_BASE_F32;
	m->params = p;
	return 0;
}

size_t ct_base_stored_bytes(const struct ct_gpt2 *m)
{
	return m->fmt == CT_BASE_F32 ? m->lay.total * sizeof(float) : m->base_bytes;
}

void ct_base_sha256(const struct ct_gpt2 *m, unsigned char digest[32])
{
	if (m->fmt == CT_BASE_F32)
		ct_sha256(m->params, m->lay.total * sizeof(float), digest);
	else
		ct_sha256(m->base, m->base_bytes, digest);
}

int ct_base_save(const char *path, const struct ct_gpt2 *m)
{
	unsigned char pre[64] = { 0 };
	int32_t hdr[CT_GPT2_HEADER_INTS];
	struct ct_afile af = { .fd = -1 };
	int rc;

	if (m->fmt == CT_BASE_F32 || m->base == NULL)
		return ct_error(CT_EINVAL, "%s: not a compact base", path);
	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	memcpy(pre, file_magic, 8);
	ct_le_put32(pre + 8, CT_BASE_VERSION);
	ct_le_put32(pre + 12, (uint32_t)m->fmt);
	ct_le_put64(pre + 16, m->base_bytes);
	ct_sha256(m->base, m->base_bytes, pre + 24);
	ct_gpt2_file_header(&m->cfg, (unsigned char *)hdr);
	rc = ct_afile_open(&af, path, 0644);
	if (rc == 0)
		rc = ct_afile_write(&af, pre, sizeof(pre));
	if (rc == 0)
		rc = ct_afile_write(&af, hdr, sizeof(hdr));
	if (rc == 0)
		rc = ct_afile_write(&af, m->base, m->base_bytes);
	if (rc == 0)
		return ct_afile_commit(&af);
	ct_afile_abort(&af);
	return rc;
}

int ct_base_is_file(const void *data, size_t n)
{
	return n >= 8 && memcmp(data, file_magic, 8) == 0;
}

/* The padding between tensors (and after the last) is zero. */
static int padding_zero(const struct ct_gpt2 *m, const struct ct_base_layout *bl)
{
	for (int t = 0; t < CT_GPT2_NTENSORS; t++) {
		size_t end = bl->off[t] + fmt_bytes(ct_base_tensor_fmt(bl->fmt, t), m->lay.size[t]);
		size_t next = t + 1 < CT_GPT2_NTENSORS ? bl->off[t + 1] : bl->bytes;

		for (size_t i = end; i < next; i++)
			if (m->base[i] != 0)
				return 0;
	}
	return 1;
}

/* The file header's fields and the exact size: *cfg, *bl (fmt in it). */
static int parse_file_header(const unsigned char *p, size_t n, const char *name,
			     struct ct_model_config *cfg, struct ct_base_layout *bl)
{
	uint32_t fmt;
	int rc;

	if (n < CT_BASE_FILE_HDR || !ct_base_is_file(p, n))
		return ct_error(CT_EFORMAT, "%s: not a compact base file", name);
	if (ct_le_get32(p + 8) != CT_BASE_VERSION)
		return ct_error(CT_EFORMAT, "%s: compact base version %u not supported (want %d)",
				name, ct_le_get32(p + 8), CT_BASE_VERSION);
	fmt = ct_le_get32(p + 12);
	if (fmt == CT_BASE_F32 || fmt >= CT_BASE_NFMT)
		return ct_error(CT_EFORMAT, "%s: unknown base format %u", name, fmt);
	for (int i = 56; i < 64; i++)
		if (p[i] != 0)
			return ct_error(CT_EFORMAT, "%s: header byte %d is not zero", name, i);
	rc = ct_gpt2_parse_config(p + 64, name, cfg);
	if (rc < 0)
		return rc;
	ct_base_layout(cfg, (int)fmt, bl);
	if (ct_le_get64(p + 16) != bl->bytes || n != CT_BASE_FILE_HDR + bl->bytes)
		return ct_error(CT_EFORMAT, "%s: file is %zu bytes but its header implies %zu "
				"(truncated or wrong file)", name, n, CT_BASE_FILE_HDR + bl->bytes);
	return 0;
}

int ct_base_read_config(const char *path, struct ct_model_config *cfg, int *fmt)
{
	struct ct_mmap map = { 0 };
	struct ct_base_layout bl;
	int rc;

	if (fmt != NULL)
		*fmt = CT_BASE_F32;
	rc = ct_file_map(path, &map);
	if (rc < 0)
		return rc;
	if (!ct_base_is_file(map.addr, map.len)) {
		ct_file_unmap(&map);
		return ct_gpt2_read_config(path, cfg);
	}
	rc = parse_file_header(map.addr, map.len, path, cfg, &bl);
	if (rc == 0 && fmt != NULL)
		*fmt = bl.fmt;
	ct_file_unmap(&map);
	return rc;
}

int ct_base_load_mem(const void *data, size_t n, const char *name, struct ct_gpt2 *m)
{
	const unsigned char *p = data;
	unsigned char digest[CT_SHA256_LEN];
	struct ct_base_layout bl;
	struct ct_model_config cfg;
	uint32_t fmt;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = parse_file_header(p, n, name, &cfg, &bl);
	if (rc < 0)
		return rc;
	fmt = (uint32_t)bl.fmt;
	ct_sha256(p + CT_BASE_FILE_HDR, bl.bytes, digest);
	if (memcmp(digest, p + 24, CT_SHA256_LEN) != 0)
		return ct_error(CT_ECORRUPT, "%s: the weights do not match their digest", name);
	m->cfg = cfg;
	ct_gpt2_layout(&cfg, &m->lay);
	m->base = malloc(bl.bytes ? bl.bytes : 1);
	if (m->base == NULL) {
		memset(m, 0, sizeof(*m));
		return ct_error(CT_ENOMEM, "%s: out of memory for %zu bytes", name, bl.bytes);
	}
	memcpy(m->base, p + CT_BASE_FILE_HDR, bl.bytes);
	m->fmt = (int)fmt;
	m->base_bytes = bl.bytes;
	if (!padding_zero(m, &bl)) {
		ct_gpt2_free(m);
		return ct_error(CT_EFORMAT, "%s: padding between tensors is not zero", name);
	}
	rc = ct_base_check_finite(m);
	if (rc < 0)
		ct_gpt2_free(m);
	return rc;
}

int ct_base_load(const char *path, struct ct_gpt2 *m)
{
	struct ct_mmap map = { 0 };
	int rc;

	memset(m, 0, sizeof(*m));
	rc = ct_file_map(path, &map);
	if (rc < 0)
		return rc;
	if (ct_base_is_file(map.addr, map.len))
		rc = ct_base_load_mem(map.addr, map.len, path, m);
	else
		rc = ct_gpt2_load_mem(map.addr, map.len, path, m);
	ct_file_unmap(&map);
	return rc;
}

int ct_base_load_f32(const char *path, struct ct_gpt2 *m)
{
	int rc = ct_base_load(path, m);

	if (rc == 0)
		rc = ct_base_widen_model(m);
	if (rc < 0)
		ct_gpt2_free(m);
	return rc;
}
