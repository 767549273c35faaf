/*
 * ct_safetensors.c - .safetensors reader and writer (see ct_safetensors.h).
 */
#include "config.h"
#include "ct_safetensors.h"
#include "ct_err.h"
#include "ct_jv.h"
#include "ct_le.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum ct_st_dtype dt;
	int size;
} dtypes[] = {
	{ "F32", CT_ST_F32, 4 }, { "F16", CT_ST_F16, 2 }, { "BF16", CT_ST_BF16, 2 },
	{ "F64", CT_ST_OTHER, 8 }, { "I64", CT_ST_OTHER, 8 }, { "I32", CT_ST_OTHER, 4 },
	{ "I16", CT_ST_OTHER, 2 }, { "I8", CT_ST_OTHER, 1 }, { "U8", CT_ST_OTHER, 1 },
	{ "U16", CT_ST_OTHER, 2 }, { "U32", CT_ST_OTHER, 4 }, { "U64", CT_ST_OTHER, 8 },
	{ "BOOL", CT_ST_OTHER, 1 }, { "F8_E4M3", CT_ST_OTHER, 1 },
	{ "F8_E5M2", CT_ST_OTHER, 1 },
};

void ct_st_close(struct ct_st_file *f)
{
	for (size_t i = 0; i < f->nt; i++)
		free(f->t[i].name);
	free(f->t);
	ct_file_unmap(&f->map);
	memset(f, 0, sizeof(*f));
}

/* Fill t from one header entry. */
static int entry(const char *path, const char *name, const struct ct_jv *e,
		 uint64_t data_len, struct ct_st_tensor *t)
{
	const struct ct_jv *dt = ct_jv_get(e, "dtype"), *sh = ct_jv_get(e, "shape");
	const struct ct_jv *off = ct_jv_get(e, "data_offsets");
	int64_t v[2];
	size_t k;
	int size = 0;

	if (dt == NULL || dt->type != CT_JV_STR || sh == NULL || sh->type != CT_JV_ARR ||
	    off == NULL || off->type != CT_JV_ARR || off->n != 2)
		return ct_error(CT_EFORMAT, "%s: tensor '%s': want dtype, shape and "
				"data_offsets [begin, end]", path, name);
	for (k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++)
		if (strcmp(dt->str, dtypes[k].name) == 0)
			break;
	if (k == sizeof(dtypes) / sizeof(dtypes[0]))
		return ct_error(CT_EFORMAT, "%s: tensor '%s': unknown dtype '%.15s'", path,
				name, dt->str);
	snprintf(t->dtype_name, sizeof(t->dtype_name), "%s", dtypes[k].name);
	t->dtype = dtypes[k].dt;
	size = dtypes[k].size;
	if (sh->n > CT_ST_MAX_DIMS)
		return ct_error(CT_EFORMAT, "%s: tensor '%s' has %zu dimensions (limit %d)",
				path, name, sh->n, CT_ST_MAX_DIMS);
	t->ndim = (int)sh->n;
	t->nelem = 1;
	for (int d = 0; d < t->ndim; d++) {
		int64_t x;
		int rc = ct_jv_int(&sh->items[d], 0, (int64_t)1 << 40, "shape", &x);

		if (rc < 0)
			return ct_error(rc, "%s: tensor '%s': bad shape", path, name);
		t->shape[d] = x;
		if (x != 0 && t->nelem > (UINT64_MAX / 8) / (uint64_t)x)
			return ct_error(CT_EFORMAT, "%s: tensor '%s' is too large", path, name);
		t->nelem *= (uint64_t)x;
	}
	for (int i = 0; i < 2; i++)
		if (ct_jv_int(&off->items[i], 0, (int64_t)1 << 52, "data_offsets", &v[i]) < 0)
			return ct_error(CT_EFORMAT, "%s: tensor '%s': bad data_offsets", path, name);
	t->begin = (uint64_t)v[0];
	t->end = (uint64_t)v[1];
	if (t->begin > t->end || t->end > data_len || t->end - t->begin != t->nelem * (uint64_t)size)
		return ct_error(CT_EFORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] do not "
				"fit its %llu elements of %s in %llu data bytes", path, name,
				(unsigned long long)t->begin, (unsigned long long)t->end,
				(unsigned long long)t->nelem, t->dtype_name,
				(unsigned long long)data_len);
	t->name = strdup(name);
	return t->name ? 0 : ct_error(CT_ENOMEM, "out of memory");
}

static int parse(const char *path, struct ct_st_file *f)
{
	const struct ct_jv_limits lim = { .max_bytes = CT_ST_MAX_HEADER,
					  .max_values = 24 * (size_t)CT_ST_MAX_TENSORS + 64,
					  .max_depth = 4 };
	const unsigned char *p = f->map.addr;
	struct ct_jv *root = NULL;
	uint64_t hl;
	int rc;

	if (f->map.len < 8)
		return ct_error(CT_EFORMAT, "%s: too short for a safetensors file", path);
	hl = ct_le_get64(p);
	if (hl > CT_ST_MAX_HEADER || hl > f->map.len - 8)
		return ct_error(CT_EFORMAT, "%s: header length %llu is over the file or the "
				"100 MB limit (not a safetensors file?)", path, (unsigned long long)hl);
	f->data = p + 8 + hl;
	f->data_len = f->map.len - 8 - hl;
	rc = ct_jv_parse((const char *)p + 8, (size_t)hl, &lim, path, &root);
	if (rc < 0)
		return rc;
	if (root->type != CT_JV_OBJ) {
		rc = ct_error(CT_EFORMAT, "%s: the header is not a JSON object", path);
		goto out;
	}
	if (root->n > (size_t)CT_ST_MAX_TENSORS + 1) {
		rc = ct_error(CT_ERANGE, "%s: %zu tensors (limit %d)", path, root->n,
			      CT_ST_MAX_TENSORS);
		goto out;
	}
	f->t = calloc(root->n ? root->n : 1, sizeof(*f->t));
	if (f->t == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < root->n && rc == 0; i++) {
		if (strcmp(root->keys[i], "__metadata__") == 0)
			continue;
		if (ct_st_find(f, root->keys[i]) != NULL)
			rc = ct_error(CT_EFORMAT, "%s: tensor '%s' listed twice", path, root->keys[i]);
		else
			rc = entry(path, root->keys[i], &root->items[i], f->data_len, &f->t[f->nt]);
		if (rc == 0)
			f->nt++;
	}
out:
	ct_jv_free(root);
	return rc;
}

int ct_st_open(const char *path, struct ct_st_file *f)
{
	int rc;

	memset(f, 0, sizeof(*f));
	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	rc = ct_file_map(path, &f->map);
	if (rc == 0)
		rc = parse(path, f);
	if (rc < 0)
		ct_st_close(f);
	return rc;
}

const struct ct_st_tensor *ct_st_find(const struct ct_st_file *f, const char *name)
{
	for (size_t i = 0; i < f->nt; i++)
		if (strcmp(f->t[i].name, name) == 0)
			return &f->t[i];
	return NULL;
}

/* IEEE half to float, exactly (subnormals, inf and NaN included). */
static float half_to_float(uint16_t h)
{
	uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	float f;

	if (e == 0x1f) {
		u = s | 0x7f800000u | (m << 13);
	} else if (e != 0) {
		u = s | ((e + 112) << 23) | (m << 13);
	} else if (m == 0) {
		u = s;
	} else {		/* subnormal: normalise */
		e = 113;
		while (!(m & 0x400)) {
			m <<= 1;
			e--;
		}
		u = s | (e << 23) | ((m & 0x3ff) << 13);
	}
	memcpy(&f, &u, 4);
	return f;
}

int ct_st_read_f32(const struct ct_st_file *f, const struct ct_st_tensor *t,
		   float *out, size_t n)
{
	const unsigned char *p = f->data + t->begin;

	if (n != t->nelem)
		return ct_error(CT_EFORMAT, "tensor '%s' has %llu elements, want %zu", t->name,
				(unsigned long long)t->nelem, n);
	switch (t->dtype) {
	case CT_ST_F32:
		memcpy(out, p, n * sizeof(float));
		return 0;
	case CT_ST_F16:
		for (size_t i = 0; i < n; i++)
			out[i] = half_to_float((uint16_t)(p[2 * i] | (p[2 * i + 1] << 8)));
		return 0;
	case CT_ST_BF16:
		for (size_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)(p[2 * i] | (p[2 * i + 1] << 8)) << 16;

			memcpy(&out[i], &u, 4);
		}
		return 0;
	default:
		return ct_error(CT_EUNSUPP, "tensor '%s' has dtype %s (only F32, F16 and BF16 "
				"are read)", t->name, t->dtype_name);
	}
}

/* ---- writer ----------------------------------------------------------- */

/* Append printf output to a growing buffer. */
__attribute__((format(printf, 4, 5)))
static int put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return ct_error(CT_EINVAL, "format error");
		if (*buf && *len + (size_t)k < *cap) {
			*len += (size_t)k;
			return 0;
		}
		{
			size_t nc = (*cap + (size_t)k + 1) * 2;
			char *nb = realloc(*buf, nc);

			if (nb == NULL)
				return ct_error(CT_ENOMEM, "out of memory");
			*buf = nb;
			*cap = nc;
		}
	}
}

static const char *dtype_name(enum ct_st_dtype d)
{
	return d == CT_ST_BF16 ? "BF16" : d == CT_ST_F16 ? "F16" : "F32";
}

static size_t dtype_size(enum ct_st_dtype d)
{
	return d == CT_ST_BF16 || d == CT_ST_F16 ? 2 : 4;
}

static int header_json(const struct ct_st_out *t, size_t nt, enum ct_st_dtype dt,
		       char **buf, size_t *len)
{
	const size_t es = dtype_size(dt);
	size_t cap = 0;
	uint64_t off = 0;
	int rc = put(buf, len, &cap, "{\"__metadata__\":{\"format\":\"pt\"}");

	for (size_t i = 0; i < nt && rc == 0; i++) {
		uint64_t n = 1;

		for (const char *c = t[i].name; *c; c++)
			if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
				return ct_error(CT_EINVAL, "tensor name '%s' needs escaping", t[i].name);
		for (int d = 0; d < t[i].ndim; d++)
			n *= (uint64_t)t[i].shape[d];
		rc = put(buf, len, &cap, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t[i].name,
			 dtype_name(dt));
		for (int d = 0; d < t[i].ndim && rc == 0; d++)
			rc = put(buf, len, &cap, "%s%lld", d ? "," : "", (long long)t[i].shape[d]);
		if (rc == 0)
			rc = put(buf, len, &cap, "],\"data_offsets\":[%llu,%llu]}",
				 (unsigned long long)off, (unsigned long long)(off + es * n));
		off += es * n;
	}
	if (rc == 0)
		rc = put(buf, len, &cap, "}");
	while (rc == 0 && *len % 8 != 0)
		rc = put(buf, len, &cap, " ");
	return rc;
}

uint16_t ct_st_bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)	/* NaN: quiet, sign and top payload kept */
		return (uint16_t)((u >> 16) | 0x40);
	/* add just under half an ulp of bf16, plus one when the kept lsb is
	 * odd: a tie rounds to even; a carry moves the exponent (to inf too) */
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

uint16_t ct_st_f16(float x)
{
	uint32_t u, a, mant, q, rem, half;
	uint16_t sign;
	int s;

	memcpy(&u, &x, 4);
	sign = (uint16_t)((u >> 16) & 0x8000);
	a = u & 0x7fffffffu;
	if (a > 0x7f800000u)			/* NaN: quiet, top payload bits kept */
		return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff));
	if (a >= 0x477ff000u)			/* >= 65520 (a tie to even: 65536): inf */
		return (uint16_t)(sign | 0x7c00);
	if (a >= 0x38800000u)	/* normal half (>= 2^-14): rebias, round off 13 bits */
		return (uint16_t)(sign | ((a + 0xfffu + ((a >> 13) & 1) - 0x38000000u) >> 13));
	if (a < 0x33000000u)			/* <= 2^-25 rounds to zero */
		return sign;
	/* subnormal half: x / 2^-24 rounded, x = mant 2^(e - 150) */
	mant = (a & 0x7fffffu) | 0x800000u;
	s = 126 - (int)(a >> 23);		/* 14..24 */
	q = mant >> s;
	rem = mant & ((1u << s) - 1);
	half = 1u << (s - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;				/* 0x400 is the smallest normal: right */
	return (uint16_t)(sign | q);
}

#define NARROW_CHUNK 16384		/* floats narrowed per write */

/* n floats of data to af as dtype dt. */
static int write_data(struct ct_afile *af, const float *data, uint64_t n, enum ct_st_dtype dt)
{
	unsigned char buf[2 * NARROW_CHUNK];
	int rc = 0;

	if (dt != CT_ST_BF16 && dt != CT_ST_F16)
		return ct_afile_write(af, data, (size_t)n * sizeof(float));
	for (uint64_t i = 0; i < n && rc == 0; i += NARROW_CHUNK) {
		size_t k = n - i < NARROW_CHUNK ? (size_t)(n - i) : NARROW_CHUNK;

		for (size_t j = 0; j < k; j++) {
			uint16_t h = dt == CT_ST_BF16 ? ct_st_bf16(data[i + j]) : ct_st_f16(data[i + j]);

			buf[2 * j] = (unsigned char)(h & 0xff);
			buf[2 * j + 1] = (unsigned char)(h >> 8);
		}
		rc = ct_afile_write(af, buf, 2 * k);
	}
	return rc;
}

/* 0 when every finite value of t fits dtype (float16: |x| < 65520, what
 * does not round to inf), else CT_ERANGE naming the tensor. */
static int check_range(const char *path, const struct ct_st_out *t, size_t nt,
		       enum ct_st_dtype dtype)
{
	if (dtype != CT_ST_F16)
		return 0;
	for (size_t i = 0; i < nt; i++) {
		uint64_t n = 1;

		for (int d = 0; d < t[i].ndim; d++)
			n *= (uint64_t)t[i].shape[d];
		for (uint64_t k = 0; k < n; k++) {
			const float x = t[i].data[k];

			if (isfinite(x) && fabsf(x) >= 65520.0f)
				return ct_error(CT_ERANGE, "%s: tensor '%s' holds %g, past float16's "
						"largest value (65504): use bf16 or f32", path,
						t[i].name, (double)x);
		}
	}
	return 0;
}

int ct_st_write(const char *path, const struct ct_st_out *t, size_t nt)
{
	return ct_st_write_as(path, t, nt, CT_ST_F32);
}

int ct_st_write_as(const char *path, const struct ct_st_out *t, size_t nt,
		   enum ct_st_dtype dtype)
{
	struct ct_afile af = { .fd = -1 };
	unsigned char hl[8];
	char *hdr = NULL;
	size_t len = 0;
	int rc;

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "%s: big-endian hosts are not supported", path);
	if (dtype != CT_ST_F32 && dtype != CT_ST_BF16 && dtype != CT_ST_F16)
		return ct_error(CT_EINVAL, "%s: safetensors are written as F32, BF16 or F16", path);
	rc = check_range(path, t, nt, dtype);
	if (rc == 0)
		rc = header_json(t, nt, dtype, &hdr, &len);
	if (rc == 0)
		rc = ct_afile_open(&af, path, 0644);
	if (rc < 0)
		goto out;
	ct_le_put64(hl, len);
	rc = ct_afile_write(&af, hl, 8);
	if (rc == 0)
		rc = ct_afile_write(&af, hdr, len);
	for (size_t i = 0; i < nt && rc == 0; i++) {
		uint64_t n = 1;

		for (int d = 0; d < t[i].ndim; d++)
			n *= (uint64_t)t[i].shape[d];
		rc = write_data(&af, t[i].data, n, dtype);
	}
	if (rc == 0)
		rc = ct_afile_commit(&af);
out:
	ct_afile_abort(&af);
	free(hdr);
	return rc;
}

int ct_st_convert(const char *path, enum ct_st_dtype dtype)
{
	struct ct_st_file f;
	struct ct_st_out *o = NULL;
	float *data = NULL;
	uint64_t total = 0;
	size_t nt = 0;
	int rc = ct_st_open(path, &f);

	for (size_t i = 0; i < f.nt && rc == 0; i++) {
		if (f.t[i].nelem > SIZE_MAX / sizeof(float) - total)
			rc = ct_error(CT_ERANGE, "%s: too large to convert", path);
		else
			total += f.t[i].nelem;
	}
	if (rc == 0 && ((o = calloc(f.nt ? f.nt : 1, sizeof(*o))) == NULL ||
			(data = malloc(total ? (size_t)total * sizeof(float) : 1)) == NULL))
		rc = ct_error(CT_ENOMEM, "out of memory");
	total = 0;
	for (size_t i = 0; i < f.nt && rc == 0; i++, nt++) {
		const struct ct_st_tensor *t = &f.t[i];

		rc = ct_st_read_f32(&f, t, data + total, (size_t)t->nelem);
		if (rc == 0 && (o[i].name = strdup(t->name)) == NULL)
			rc = ct_error(CT_ENOMEM, "out of memory");
		o[i].ndim = t->ndim;
		memcpy(o[i].shape, t->shape, sizeof(o[i].shape));
		o[i].data = data + total;
		total += t->nelem;
	}
	ct_st_close(&f);	/* unmapped before the rename (Windows needs it) */
	if (rc == 0)
		rc = ct_st_write_as(path, o, nt, dtype);
	for (size_t i = 0; o != NULL && i < nt; i++)
		free((char *)o[i].name);
	free(data);
	free(o);
	return rc;
}
