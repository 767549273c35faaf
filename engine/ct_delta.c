/*
 * ct_delta.c - see ct_delta.h for the format and why it is this way.
 *
 * Both directions stream in chunks of CT_DELTA_CHUNK weights through one
 * 256 KiB staging buffer, so neither side needs memory proportional to the
 * model beyond the caller's own arrays. Hosts are little-endian (float
 * bytes are hashed and shuffled as they lie in memory).
 */
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_llama.h"
#include "ct_gpt2.h"
#include "ct_model_ops.h"
#include "ct_hash.h"
#include "ct_le.h"
#include "ct_lora.h"
#include "ct_zin.h"
#include "ct_os.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ct_delta assumes a little-endian host"
#endif

#define STAGE_MAX (4 * CT_DELTA_CHUNK)
#define ZOUT_SIZE 65536
#define ZIN_STEP ((size_t)1 << 30)	/* zlib's avail_in is 32-bit */

/* Raw (inflated) bytes for m weights in one chunk. */
static size_t chunk_raw_len(int encoding, size_t m)
{
	if (encoding != CT_DELTA_INT8)
		return 4 * m;
	return m + 4 * ((m + CT_DELTA_INT8_BLOCK - 1) / CT_DELTA_INT8_BLOCK);
}

static uint64_t total_raw_len(int encoding, uint64_t n)
{
	uint64_t full = n / CT_DELTA_CHUNK, rest = n % CT_DELTA_CHUNK;

	return full * chunk_raw_len(encoding, CT_DELTA_CHUNK) +
	       chunk_raw_len(encoding, (size_t)rest);
}

static void write_header(unsigned char *h, const struct ct_delta_info *in)
{
	const struct ct_delta_model *m = &in->model;

	memset(h, 0, CT_DELTA_HEADER_SIZE);
	memcpy(h, CT_DELTA_MAGIC, 8);
	ct_le_put32(h + 8, in->version);
	ct_le_put32(h + 12, in->encoding);
	ct_le_put64(h + 16, in->nparams);
	ct_le_put32(h + 24, m->max_seq_len);
	ct_le_put32(h + 28, m->vocab_size);
	ct_le_put32(h + 32, m->padded_vocab_size);
	ct_le_put32(h + 36, m->num_layers);
	ct_le_put32(h + 40, m->num_heads);
	ct_le_put32(h + 44, m->channels);
	memcpy(h + 48, in->base_sha, 32);
	memcpy(h + 80, in->weights_sha, 32);
	ct_le_put64(h + 112, in->payload_len);
	ct_le_put64(h + 120, in->raw_len);
	ct_le_put32(h + 128, in->block);
	if (in->kind == CT_DELTA_LORA) {
		uint32_t alpha;

		memcpy(&alpha, &in->lora.alpha, 4);
		ct_le_put32(h + 132, in->kind);
		ct_le_put32(h + 136, in->lora.rank);
		ct_le_put32(h + 140, alpha);
		ct_le_put32(h + 144, in->lora.targets);
		ct_le_put64(h + 148, in->lora.seed);
		ct_le_put32(h + 156, in->lora.arch);
	}
}

/* Adapter floats of a LoRA file of this model (ct_lora_nparams, in 64
 * bits from the header's own fields, which are capped first). */
/* A Llama model's adapters (ct_llama.h, header model type 1): the
 * per-layer widths depend on KVH and F, which the header does not carry,
 * so only a whole number of rank x layers rows within the widest shapes is
 * checked here; the exact count is checked against the work unit's config
 * when decoding (ct_lora_result_decode). */
int ct_delta_llama_lora_fits(uint64_t n, const struct ct_delta_lora *l,
			     const struct ct_delta_model *m)
{
	uint64_t rl = (uint64_t)l->rank * m->num_layers, C = m->channels;

	return n % rl == 0 && n / rl <= 7 * C + 2 * (C + 2 * (uint64_t)CT_LLAMA_MAX_F);
}

int ct_delta_gpt2_lora_fits(uint64_t n, const struct ct_delta_lora *l,
			    const struct ct_delta_model *m)
{
	uint64_t per = 0, C = m->channels;

	/* A (r, in) + B (out, r) per target: qkv 4C, proj 2C, fc 5C, fcproj 5C */
	per += (l->targets & CT_LORA_QKV) ? 4 * C : 0;
	per += (l->targets & CT_LORA_ATTPROJ) ? 2 * C : 0;
	per += (l->targets & CT_LORA_FC) ? 5 * C : 0;
	per += (l->targets & CT_LORA_FCPROJ) ? 5 * C : 0;
	return n == per * l->rank * m->num_layers;
}

static int lora_header_check(const struct ct_delta_info *info)
{
	const struct ct_delta_lora *l = &info->lora;
	const struct ct_delta_model *m = &info->model;
	const struct ct_model_ops *ops;

	if (l->rank < 1 || l->rank > CT_LORA_MAX_RANK)
		return ct_error(CT_EFORMAT, "result file: LoRA rank %u", l->rank);
	if (!isfinite(l->alpha) || !(l->alpha > 0.0f))
		return ct_error(CT_EFORMAT, "result file: LoRA alpha not a number > 0");
	if (l->targets == 0 || (l->targets & ~(uint32_t)CT_LORA_ALL) != 0)
		return ct_error(CT_EFORMAT, "result file: LoRA targets 0x%x", l->targets);
	if (m->channels < 1 || m->channels > CT_GPT2_MAX_C || m->num_layers < 1 ||
	    m->num_layers > CT_GPT2_MAX_L)
		return ct_error(CT_EFORMAT, "result file: LoRA model shape out of range");
	ops = l->arch <= INT32_MAX ? ct_model_ops_find((int)l->arch) : NULL;
	if (ops == NULL)
		return ct_error(CT_EFORMAT, "result file: unknown model type %u", l->arch);
	if (!ops->delta_lora_fits(info->nparams, l, m))
		return ct_error(CT_EFORMAT, "result file: %llu adapter floats do not fit "
				"rank %u and targets 0x%x", (unsigned long long)info->nparams,
				l->rank, l->targets);
	return 0;
}

/* Whether LoRA adapters of family arch may use the per-tensor encoding. */
static int tensor_segments(uint32_t arch)
{
	const struct ct_model_ops *o = arch <= INT32_MAX ? ct_model_ops_find((int)arch) : NULL;

	return o != NULL && (o->flags & CT_MODEL_LORA_TENSOR_SEGMENTS) != 0;
}

/* Bytes 132..159: zero for full weights, the LoRA section otherwise. */
static int parse_kind(const unsigned char *h, struct ct_delta_info *info)
{
	uint32_t alpha;

	info->kind = ct_le_get32(h + 132);
	if (info->kind == CT_DELTA_FULL) {
		for (int i = 136; i < CT_DELTA_HEADER_SIZE; i++)
			if (h[i] != 0)
				return ct_error(CT_EFORMAT, "result file: reserved bytes set");
		return 0;
	}
	if (info->kind != CT_DELTA_LORA)
		return ct_error(CT_EFORMAT, "result file: unknown kind %u", info->kind);
	info->lora.rank = ct_le_get32(h + 136);
	alpha = ct_le_get32(h + 140);
	memcpy(&info->lora.alpha, &alpha, 4);
	info->lora.targets = ct_le_get32(h + 144);
	info->lora.seed = ct_le_get64(h + 148);
	info->lora.arch = ct_le_get32(h + 156);
	if (info->lora.arch > INT32_MAX || ct_model_ops_find((int)info->lora.arch) == NULL)
		return ct_error(CT_EFORMAT, "result file: unknown model type %u", info->lora.arch);
	for (int i = 160; i < CT_DELTA_HEADER_SIZE; i++)
		if (h[i] != 0)
			return ct_error(CT_EFORMAT, "result file: reserved bytes set");
	return 0;
}

/* Every check of the header but the payload length against the file's. */
static int parse_head(const unsigned char *h, struct ct_delta_info *info)
{
	struct ct_delta_model *m = &info->model;
	int rc;

	if (memcmp(h, CT_DELTA_MAGIC, 8) != 0)
		return ct_error(CT_EFORMAT, "result file: bad magic");
	info->version = ct_le_get32(h + 8);
	if (info->version != CT_DELTA_VERSION)
		return ct_error(CT_EUNSUPP, "result file: version %u", info->version);
	info->encoding = ct_le_get32(h + 12);
	info->nparams = ct_le_get64(h + 16);
	m->max_seq_len = ct_le_get32(h + 24);
	m->vocab_size = ct_le_get32(h + 28);
	m->padded_vocab_size = ct_le_get32(h + 32);
	m->num_layers = ct_le_get32(h + 36);
	m->num_heads = ct_le_get32(h + 40);
	m->channels = ct_le_get32(h + 44);
	memcpy(info->base_sha, h + 48, 32);
	memcpy(info->weights_sha, h + 80, 32);
	info->payload_len = ct_le_get64(h + 112);
	info->raw_len = ct_le_get64(h + 120);
	info->block = ct_le_get32(h + 128);
	rc = parse_kind(h, info);
	if (rc < 0)
		return rc;
	if (info->encoding != CT_DELTA_LOSSLESS && info->encoding != CT_DELTA_INT8 &&
	    info->encoding != CT_DELTA_LOSSLESS_TENSOR)
		return ct_error(CT_EFORMAT, "result file: unknown encoding %u", info->encoding);
	if (info->encoding == CT_DELTA_LOSSLESS_TENSOR &&
	    (info->kind != CT_DELTA_LORA || !tensor_segments(info->lora.arch)))
		return ct_error(CT_EFORMAT, "result file: per-tensor encoding of other than "
				"GPT-2 adapters");
	if (info->block != (info->encoding == CT_DELTA_INT8 ? CT_DELTA_INT8_BLOCK : 0))
		return ct_error(CT_EFORMAT, "result file: block size %u", info->block);
	if (info->nparams == 0)
		return ct_error(CT_EFORMAT, "result file: no weights");
	if (info->nparams > CT_DELTA_MAX_PARAMS)
		return ct_error(CT_ETOOBIG, "result file: %llu weights",
				(unsigned long long)info->nparams);
	if (info->raw_len != total_raw_len((int)info->encoding, info->nparams))
		return ct_error(CT_EFORMAT, "result file: raw length %llu does not fit %llu weights",
				(unsigned long long)info->raw_len,
				(unsigned long long)info->nparams);
	return 0;
}

int ct_delta_parse_header(const void *data, size_t len,
			  struct ct_delta_info *info)
{
	int rc;

	memset(info, 0, sizeof(*info));
	if (data == NULL || len < CT_DELTA_HEADER_SIZE)
		return ct_error(CT_EFORMAT, "result file: %zu bytes, shorter than its header", len);
	rc = parse_head(data, info);
	if (rc < 0)
		return rc;
	if (info->payload_len != (uint64_t)(len - CT_DELTA_HEADER_SIZE))
		return ct_error(CT_EFORMAT, "result file: payload is %zu bytes, header says %llu",
				len - CT_DELTA_HEADER_SIZE,
				(unsigned long long)info->payload_len);
	if (info->kind == CT_DELTA_LORA)
		return lora_header_check(info);
	return 0;
}

/* ---- hashing -------------------------------------------------------------- */

int ct_delta_weights_sha(const float *w, size_t n, unsigned char out[32])
{
	struct ct_sha256_ctx *ctx = NULL;
	int rc;

	rc = ct_sha256_init(&ctx);
	if (rc == 0)
		rc = ct_sha256_update(ctx, w, n * sizeof(float));
	if (rc == 0)
		return ct_sha256_final(ctx, out);
	ct_sha256_abort(ctx);
	return rc;
}

/* ---- chunk transforms ----------------------------------------------------- */

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* The sign-magnitude bits of a float as a two's complement integer in the
 * floats' order: non-negative patterns stay, negative ones get their
 * magnitude bits flipped (-0 -> -1, the smallest negative -> -2, ...). A
 * bijection, its own inverse; a weight that crosses zero or starts at
 * zero (LoRA's B) differs from its base by about its magnitude, not by
 * 2^31. */
static uint32_t ord(uint32_t u)
{
	return u ^ ((uint32_t)((int32_t)u >> 31) >> 1);
}

/* Lossless, m weights -> 4m shuffled bytes of zig-zag(bits(r) - bits(b)),
 * or of zig-zag(ord(bits(r)) - ord(bits(b))) for the per-tensor encoding
 * (ordered != 0). */
static void lossless_pack(const float *b, const float *r, size_t m, int ordered,
			  unsigned char *stage)
{
	for (size_t i = 0; i < m; i++) {
		uint32_t d = ordered ? ord(f2u(r[i])) - ord(f2u(b[i])) : f2u(r[i]) - f2u(b[i]);
		uint32_t z = (d << 1) ^ (0u - (d >> 31));

		stage[i] = (unsigned char)z;
		stage[m + i] = (unsigned char)(z >> 8);
		stage[2 * m + i] = (unsigned char)(z >> 16);
		stage[3 * m + i] = (unsigned char)(z >> 24);
	}
}

static void lossless_unpack(const float *b, const unsigned char *stage,
			    size_t m, int ordered, float *r)
{
	for (size_t i = 0; i < m; i++) {
		uint32_t z = (uint32_t)stage[i] |
			     (uint32_t)stage[m + i] << 8 |
			     (uint32_t)stage[2 * m + i] << 16 |
			     (uint32_t)stage[3 * m + i] << 24;
		uint32_t d = (z >> 1) ^ (0u - (z & 1));

		r[i] = ordered ? u2f(ord(ord(f2u(b[i])) + d)) : u2f(f2u(b[i]) + d);
	}
}

/* int8, m weights -> per block of CT_DELTA_INT8_BLOCK: float32 scale + int8 values. */
static int int8_pack(const float *b, const float *r, size_t m,
		     unsigned char *stage)
{
	unsigned char *p = stage;

	for (size_t s = 0; s < m; s += CT_DELTA_INT8_BLOCK) {
		size_t e = s + CT_DELTA_INT8_BLOCK < m ? s + CT_DELTA_INT8_BLOCK : m;
		float amax = 0.0f, scale;

		for (size_t i = s; i < e; i++) {
			float d = fabsf(r[i] - b[i]);

			if (!isfinite(d))
				return ct_error(CT_ENONFINITE, "int8 delta: non-finite weight %zu", i);
			amax = d > amax ? d : amax;
		}
		scale = amax / 127.0f;
		memcpy(p, &scale, 4);
		p += 4;
		for (size_t i = s; i < e; i++) {
			float q = scale > 0.0f ? rintf((r[i] - b[i]) / scale) : 0.0f;

			q = q > 127.0f ? 127.0f : (q < -127.0f ? -127.0f : q);
			*p++ = (unsigned char)(int8_t)q;
		}
	}
	return 0;
}

/* Also adds to *qerr2 the squared bound of the block's rounding error:
 * each weight is within scale / 2 of the trained one (plus the float
 * rounding of b + q * scale, covered by rounding the bound up by 1%). */
static int int8_unpack(const float *b, const unsigned char *stage, size_t m,
		       float *r, double *qerr2)
{
	const unsigned char *p = stage;

	for (size_t s = 0; s < m; s += CT_DELTA_INT8_BLOCK) {
		size_t e = s + CT_DELTA_INT8_BLOCK < m ? s + CT_DELTA_INT8_BLOCK : m;
		float scale;

		memcpy(&scale, p, 4);
		p += 4;
		if (!isfinite(scale) || scale < 0.0f)
			return ct_error(CT_ECORRUPT, "int8 delta: bad scale in block %zu",
					s / CT_DELTA_INT8_BLOCK);
		int qmax = 0;

		for (size_t i = s; i < e; i++) {
			int q = (int8_t)*p++;

			qmax = abs(q) > qmax ? abs(q) : qmax;
			r[i] = b[i] + (float)q * scale;
		}
		/* The encoder's scale makes the largest |q| of a block 127. A
		 * larger scale would widen the error bound a validator grants
		 * (quant_error) at no cost to the sender: refuse it. */
		if (scale >= FLT_MIN && qmax != 127)
			return ct_error(CT_ECORRUPT, "int8 delta: block %zu not as encoded "
					"(largest |q| %d)", s / CT_DELTA_INT8_BLOCK, qmax);
		*qerr2 += (double)(e - s) * (0.505 * scale) * (0.505 * scale);
	}
	return 0;
}

/* ---- chunks ---------------------------------------------------------------
 * Lossless and int8 cut the weights into chunks of CT_DELTA_CHUNK. The
 * per-tensor encoding also ends a chunk at the end of every adapter
 * matrix (each slot's A, then its B, in ct_lora_slot order), so a byte
 * plane never mixes A's small updates with B's whole values. */
struct segs {
	struct ct_model_config cfg;
	struct ct_lora_spec spec;
	int per_tensor, t, nt;	/* t: current matrix, 2 per slot */
	size_t end;		/* where matrix t ends */
};

static void segs_init(struct segs *g, const struct ct_delta_info *info)
{
	const struct ct_delta_model *m = &info->model;

	memset(g, 0, sizeof(*g));
	g->per_tensor = info->encoding == CT_DELTA_LOSSLESS_TENSOR;
	if (!g->per_tensor)
		return;
	g->cfg = (struct ct_model_config){ .maxT = (int)m->max_seq_len, .V = (int)m->vocab_size,
					  .Vp = (int)m->padded_vocab_size, .L = (int)m->num_layers,
					  .NH = (int)m->num_heads, .C = (int)m->channels };
	g->spec = (struct ct_lora_spec){ .rank = (int)info->lora.rank,
					 .alpha = info->lora.alpha, .targets = info->lora.targets };
	g->nt = 2 * ct_lora_nslots(&g->cfg, &g->spec);
	g->t = -1;
}

/* Weights in the chunk that starts at pos (< n). */
static size_t segs_next(struct segs *g, size_t pos, size_t n)
{
	size_t m = n - pos < CT_DELTA_CHUNK ? n - pos : CT_DELTA_CHUNK;

	while (g->per_tensor && pos >= g->end && g->t + 1 < g->nt) {
		struct ct_lora_slot sl;

		g->t++;
		ct_lora_slot(&g->cfg, &g->spec, g->t / 2, &sl);
		g->end = g->t % 2 == 0 ? sl.b_off : sl.b_off + (size_t)sl.out * g->spec.rank;
	}
	if (g->per_tensor && g->end > pos && g->end - pos < m)
		m = g->end - pos;
	return m;
}

/* ---- encode --------------------------------------------------------------- */

struct enc {
	z_stream z;
	struct ct_buf *out;
	int level, strategy;
	unsigned char zout[ZOUT_SIZE];
	unsigned char stage[STAGE_MAX + 4 * (CT_DELTA_CHUNK / CT_DELTA_INT8_BLOCK)];
};

/* Deflate `len` bytes of stage (flush: Z_NO_FLUSH or Z_FINISH) into out. */
static int enc_feed(struct enc *e, const unsigned char *p, size_t len, int flush)
{
	int zr, rc;

	e->z.next_in = (unsigned char *)p;
	e->z.avail_in = (uInt)len;
	do {
		e->z.next_out = e->zout;
		e->z.avail_out = ZOUT_SIZE;
		zr = deflate(&e->z, flush);
		if (zr == Z_STREAM_ERROR)
			return ct_error(CT_EZLIB, "deflate failed");
		rc = ct_buf_append(e->out, e->zout, ZOUT_SIZE - e->z.avail_out);
		if (rc < 0)
			return rc;
	} while (e->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

/* Order-0 entropy of p[0..m) in bits per byte, below 1: a plane of
 * mostly equal bytes, where deflate's matches beat its Huffman codes (a
 * code is at least one bit a byte). */
static int low_entropy(const unsigned char *p, size_t m)
{
	size_t h[256] = { 0 };
	double e = 0.0;

	for (size_t i = 0; i < m; i++)
		h[p[i]]++;
	for (int v = 0; v < 256; v++)
		if (h[v] != 0)
			e -= (double)h[v] * log2((double)h[v] / (double)m);
	return e < (double)m;
}

/* Deflate one byte plane of m bytes as its own block: planes of
 * near-random bytes by Huffman codes alone (matches only cost there),
 * planes of mostly equal bytes with matches. For full weights this
 * doubled the encoder's speed and saved 3-4% of the bytes against
 * matches everywhere (bench_delta, 124M weights: 79-96 -> 170-191 MB/s). */
static int enc_plane(struct enc *e, const unsigned char *p, size_t m)
{
	int want = Z_DEFAULT_STRATEGY;

	if (!low_entropy(p, m))
		want = Z_HUFFMAN_ONLY;
	if (want != e->strategy) {
		e->z.next_in = NULL;
		e->z.avail_in = 0;
		e->z.next_out = e->zout;
		e->z.avail_out = ZOUT_SIZE;
		if (deflateParams(&e->z, e->level, want) != Z_OK)
			return ct_error(CT_EZLIB, "deflateParams failed");
		e->strategy = want;
		int rc = ct_buf_append(e->out, e->zout, ZOUT_SIZE - e->z.avail_out);

		if (rc < 0)
			return rc;
	}
	return enc_feed(e, p, m, Z_BLOCK);
}

static int enc_chunks(struct enc *e, const float *base, const float *result,
		      const struct ct_delta_info *info, struct ct_sha256_ctx *sha)
{
	int encoding = (int)info->encoding, rc = 0;
	size_t n = (size_t)info->nparams, m;
	struct segs g;

	segs_init(&g, info);
	for (size_t s = 0; s < n && rc == 0; s += m) {
		m = segs_next(&g, s, n);
		if (encoding != CT_DELTA_INT8)
			lossless_pack(base + s, result + s, m, g.per_tensor, e->stage);
		else
			rc = int8_pack(base + s, result + s, m, e->stage);
		if (rc == 0)
			rc = ct_sha256_update(sha, result + s, m * sizeof(float));
		if (rc == 0 && encoding != CT_DELTA_INT8) {
			/* one deflate block per byte plane: each gets its own
			 * Huffman codes */
			for (int p = 0; p < 4 && rc == 0; p++)
				rc = enc_plane(e, e->stage + (size_t)p * m, m);
		} else if (rc == 0) {
			rc = enc_feed(e, e->stage, chunk_raw_len(encoding, m), Z_NO_FLUSH);
		}
	}
	if (rc == 0)
		rc = enc_feed(e, NULL, 0, Z_FINISH);
	return rc;
}

/* Both kinds: lora NULL for full weights. */
static int encode_kind(const float *base, const float *result, size_t n,
		       const struct ct_delta_model *model, const unsigned char base_sha[32],
		       const struct ct_delta_lora *lora, int encoding, int zlevel,
		       struct ct_buf *out)
{
	struct ct_delta_info info;
	struct enc *e = NULL;
	struct ct_sha256_ctx *sha = NULL;
	size_t start = out->len;
	int rc, zinit = 0;

	if (n == 0 || (uint64_t)n > CT_DELTA_MAX_PARAMS || zlevel < -1 || zlevel > 9 ||
	    (encoding != CT_DELTA_LOSSLESS && encoding != CT_DELTA_INT8 &&
	     (encoding != CT_DELTA_LOSSLESS_TENSOR || lora == NULL ||
	      !tensor_segments(lora->arch))))
		return ct_error(CT_EINVAL, "delta encode: bad arguments");
	memset(&info, 0, sizeof(info));
	info.version = CT_DELTA_VERSION;
	info.encoding = (uint32_t)encoding;
	info.nparams = n;
	info.model = *model;
	memcpy(info.base_sha, base_sha, 32);
	info.raw_len = total_raw_len(encoding, n);
	info.block = encoding == CT_DELTA_INT8 ? CT_DELTA_INT8_BLOCK : 0;
	if (lora != NULL) {
		info.kind = CT_DELTA_LORA;
		info.lora = *lora;
		if (lora_header_check(&info) < 0)
			return ct_error(CT_EINVAL, "delta encode: LoRA section does not fit "
					"%zu adapter floats of this model", n);
	}
	rc = ct_buf_reserve(out, CT_DELTA_HEADER_SIZE);
	if (rc < 0)
		goto out;
	out->len += CT_DELTA_HEADER_SIZE;	/* header written at the end */
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	e->out = out;
	/* per tensor: the level only matters for the few planes of mostly
	 * equal bytes, where 9 costs little */
	e->level = zlevel >= 0 ? zlevel : encoding == CT_DELTA_LOSSLESS_TENSOR ? 9 : 1;
	e->strategy = Z_DEFAULT_STRATEGY;
	if (deflateInit(&e->z, e->level) != Z_OK) {
		rc = ct_error(CT_EZLIB, "deflateInit failed");
		goto out;
	}
	zinit = 1;
	rc = ct_sha256_init(&sha);
	if (rc < 0)
		goto out;
	rc = enc_chunks(e, base, result, &info, sha);
	if (rc < 0)
		goto out;
	rc = ct_sha256_final(sha, info.weights_sha);
	sha = NULL;
	if (rc < 0)
		goto out;
	info.payload_len = out->len - start - CT_DELTA_HEADER_SIZE;
	write_header(out->data + start, &info);
out:
	if (zinit)
		deflateEnd(&e->z);
	free(e);
	ct_sha256_abort(sha);
	if (rc < 0) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	} else {
		out->data[out->len] = '\0';
	}
	return rc;
}

int ct_delta_encode(const float *base, const float *result, size_t n,
		    const struct ct_delta_model *model,
		    const unsigned char base_sha[32], int encoding, int zlevel,
		    struct ct_buf *out)
{
	return encode_kind(base, result, n, model, base_sha, NULL, encoding, zlevel, out);
}

int ct_delta_encode_lora(const float *init, const float *adapters, size_t n,
			 const struct ct_delta_model *model,
			 const unsigned char base_sha[32], const struct ct_delta_lora *lora,
			 int encoding, int zlevel, struct ct_buf *out)
{
	if (lora == NULL)
		return ct_error(CT_EINVAL, "delta encode: no LoRA section");
	return encode_kind(init, adapters, n, model, base_sha, lora, encoding, zlevel, out);
}

/* ---- decode --------------------------------------------------------------- */

struct dec {
	struct ct_zin z;
	const unsigned char *in;	/* payload not yet handed to zlib */
	size_t in_left;			/* bytes of it (in memory or still in the file) */
	int fd;				/* >= 0: the payload is read from this file */
	int ended;
	unsigned char *inbuf;		/* fd mode: DEC_INBUF bytes read at a time */
	unsigned char stage[STAGE_MAX + 4 * (CT_DELTA_CHUNK / CT_DELTA_INT8_BLOCK)];
};

#define DEC_INBUF 65536

/* Hand zlib the next piece of payload when it has none. */
static int dec_refill(struct dec *d)
{
	size_t step;

	if (d->z.avail_in != 0 || d->in_left == 0)
		return 0;
	if (d->fd < 0) {
		step = d->in_left < ZIN_STEP ? d->in_left : ZIN_STEP;
		d->z.next_in = (unsigned char *)d->in;
		d->in += step;
	} else {
		step = d->in_left < DEC_INBUF ? d->in_left : DEC_INBUF;
		for (size_t got = 0; got < step;) {
			ssize_t r = read(d->fd, d->inbuf + got, step - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return ct_error(CT_EIO, "result file: read: %s", strerror(errno));
			if (r == 0)
				return ct_error(CT_ECORRUPT, "result file: shorter than its header says");
			got += (size_t)r;
		}
		d->z.next_in = d->inbuf;
	}
	d->z.avail_in = step;
	d->in_left -= step;
	return 0;
}

/* An inflate error, named as the result file's. */
static int zin_fail(int zr)
{
	char m[128];

	snprintf(m, sizeof(m), "%s", ct_errmsg(zr));
	return ct_error(CT_ECORRUPT, "result file: %s", m);
}

/* Inflate exactly `want` bytes into stage; the stream may end only after
 * the last byte of the last chunk. */
static int dec_fill(struct dec *d, size_t want)
{
	size_t out0, in0;
	int zr, rc;

	d->z.next_out = d->stage;
	d->z.avail_out = want;
	while (d->z.avail_out > 0) {
		if (d->ended)
			return ct_error(CT_ECORRUPT, "result file: payload ends early");
		rc = dec_refill(d);
		if (rc < 0)
			return rc;
		out0 = d->z.avail_out;
		in0 = d->z.avail_in;
		zr = ct_zin_run(&d->z);
		if (zr < 0)
			return zin_fail(zr);
		d->ended = zr;
		/* no progress with all the payload handed over */
		if (!zr && d->z.avail_out == out0 && d->z.avail_in == in0 && d->in_left == 0)
			return ct_error(CT_ECORRUPT, "result file: payload truncated");
	}
	return 0;
}

/* After the last chunk: the stream must end with no more output and no
 * trailing bytes (its end may still be spread over several reads). */
static int dec_finish(struct dec *d)
{
	unsigned char extra;
	size_t in0;
	int zr, rc;

	while (!d->ended) {
		rc = dec_refill(d);
		if (rc < 0)
			return rc;
		in0 = d->z.avail_in;
		d->z.next_out = &extra;
		d->z.avail_out = 1;
		zr = ct_zin_run(&d->z);
		if (zr < 0)
			return zin_fail(zr);
		if (d->z.avail_out != 1)
			return ct_error(CT_ECORRUPT, "result file: payload longer than its weights");
		d->ended = zr;
		if (!zr && d->z.avail_in == in0 && d->in_left == 0)
			return ct_error(CT_ECORRUPT, "result file: payload truncated");
	}
	if (d->z.avail_in != 0 || d->in_left != 0)
		return ct_error(CT_ECORRUPT, "result file: trailing bytes after the payload");
	return 0;
}

static int dec_chunks(struct dec *d, struct ct_delta_info *info,
		      const float *base, size_t n, float *r, struct ct_sha256_ctx *sha)
{
	int enc = (int)info->encoding;
	double qerr2 = 0.0;
	struct segs g;
	size_t m;
	int rc = 0;

	segs_init(&g, info);
	for (size_t s = 0; s < n && rc == 0; s += m) {
		m = segs_next(&g, s, n);
		rc = dec_fill(d, chunk_raw_len(enc, m));
		if (rc < 0)
			break;
		if (enc != CT_DELTA_INT8)
			lossless_unpack(base + s, d->stage, m, g.per_tensor, r + s);
		else
			rc = int8_unpack(base + s, d->stage, m, r + s, &qerr2);
		if (rc == 0)
			rc = ct_sha256_update(sha, r + s, m * sizeof(float));
	}
	if (rc == 0)
		rc = dec_finish(d);
	info->quant_error = sqrt(qerr2);
	return rc;
}

static int decode_kind(const void *data, size_t len, const float *base, size_t n,
		       float *result_out, struct ct_delta_info *info, uint32_t kind)
{
	struct ct_delta_info local;
	struct dec *d = NULL;
	struct ct_sha256_ctx *sha = NULL;
	int rc, zinit = 0;

	if (info == NULL)
		info = &local;
	rc = ct_delta_parse_header(data, len, info);
	if (rc < 0)
		return rc;
	if (info->kind != kind)
		return ct_error(CT_EMISMATCH, "result file: %s where %s are expected",
				info->kind == CT_DELTA_LORA ? "LoRA adapters" : "full weights",
				kind == CT_DELTA_LORA ? "LoRA adapters" : "full weights");
	if (info->nparams != (uint64_t)n)
		return ct_error(CT_EMISMATCH, "result file: %llu weights, model has %zu",
				(unsigned long long)info->nparams, n);
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return CT_ENOMEM;
	d->fd = -1;
	d->in = (const unsigned char *)data + CT_DELTA_HEADER_SIZE;
	d->in_left = len - CT_DELTA_HEADER_SIZE;
	rc = ct_zin_init(&d->z);
	if (rc < 0)
		goto out;
	zinit = 1;
	rc = ct_sha256_init(&sha);
	if (rc < 0)
		goto out;
	rc = dec_chunks(d, info, base, n, result_out, sha);
	if (rc < 0)
		goto out;
	rc = ct_sha256_final(sha, info->decoded_sha);
	sha = NULL;
	if (rc < 0)
		goto out;
	if (info->encoding != CT_DELTA_INT8 &&
	    memcmp(info->decoded_sha, info->weights_sha, 32) != 0)
		rc = ct_error(CT_EHASH, "result file: weights do not match their hash");
out:
	if (zinit)
		ct_zin_end(&d->z);
	free(d);
	ct_sha256_abort(sha);
	return rc;
}

int ct_delta_decode(const void *data, size_t len, const float *base,
		    size_t n, float *result_out, struct ct_delta_info *info)
{
	return decode_kind(data, len, base, n, result_out, info, CT_DELTA_FULL);
}

int ct_delta_decode_lora(const void *data, size_t len, const float *init,
			 size_t n, float *adapters_out, struct ct_delta_info *info)
{
	return decode_kind(data, len, init, n, adapters_out, info, CT_DELTA_LORA);
}

/* ---- streaming decode from a file ------------------------------------------ */

struct ct_delta_reader {
	struct dec d;
	struct ct_delta_info info;
	struct ct_sha256_ctx *sha;
	size_t n, pos;
	double qerr2;
	int zinit, done;
	unsigned char inbuf[DEC_INBUF];
};

static int reader_header(struct ct_delta_reader *rd, const char *path, uint64_t max_len)
{
	unsigned char h[CT_DELTA_HEADER_SIZE];
	struct stat st;
	size_t got = 0;
	int rc;

	if (fstat(rd->d.fd, &st) < 0)
		return ct_error(CT_EIO, "%s: %s", path, strerror(errno));
	if (max_len > 0 && (uint64_t)st.st_size > max_len)
		return ct_error(CT_ETOOBIG, "%s: %lld bytes, over the cap of %llu", path,
				(long long)st.st_size, (unsigned long long)max_len);
	if ((uint64_t)st.st_size < sizeof(h))
		return ct_error(CT_EFORMAT, "%s: %lld bytes, shorter than its header", path,
				(long long)st.st_size);
	while (got < sizeof(h)) {
		ssize_t r = read(rd->d.fd, h + got, sizeof(h) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ct_error(CT_EIO, "%s: read: %s", path, r < 0 ? strerror(errno) : "eof");
		got += (size_t)r;
	}
	rc = parse_head(h, &rd->info);
	if (rc == 0 && rd->info.payload_len != (uint64_t)st.st_size - sizeof(h))
		rc = ct_error(CT_EFORMAT, "%s: payload is %llu bytes, header says %llu", path,
			      (unsigned long long)st.st_size - sizeof(h),
			      (unsigned long long)rd->info.payload_len);
	rd->d.in_left = (size_t)rd->info.payload_len;
	return rc;
}

int ct_delta_reader_open(const char *path, uint64_t max_len, size_t n,
			 struct ct_delta_reader **out)
{
	struct ct_delta_reader *rd;
	int rc;

	*out = NULL;
	rd = calloc(1, sizeof(*rd));
	if (rd == NULL)
		return CT_ENOMEM;
	rd->d.inbuf = rd->inbuf;
	rd->n = n;
	rd->d.fd = ct_os_open(path, O_RDONLY | O_CLOEXEC);
	if (rd->d.fd < 0) {
		rc = ct_error(errno == ENOENT ? CT_ENOENT : CT_EIO, "%s: %s", path,
			      strerror(errno));
		goto out;
	}
	rc = reader_header(rd, path, max_len);
	if (rc == 0 && rd->info.kind != CT_DELTA_FULL)
		rc = ct_error(CT_EMISMATCH, "result file: LoRA adapters where full weights are "
			      "expected");
	if (rc == 0 && rd->info.nparams != (uint64_t)n)
		rc = ct_error(CT_EMISMATCH, "result file: %llu weights, model has %zu",
			      (unsigned long long)rd->info.nparams, n);
	if (rc < 0)
		goto out;
	rc = ct_zin_init(&rd->d.z);
	if (rc < 0)
		goto out;
	rd->zinit = 1;
	rc = ct_sha256_init(&rd->sha);
out:
	if (rc < 0) {
		ct_delta_reader_close(rd);
		return rc;
	}
	*out = rd;
	return 0;
}

const struct ct_delta_info *ct_delta_reader_info(const struct ct_delta_reader *rd)
{
	return &rd->info;
}

static int reader_end(struct ct_delta_reader *rd)
{
	int rc = dec_finish(&rd->d);

	rd->info.quant_error = sqrt(rd->qerr2);
	if (rc == 0)
		rc = ct_sha256_final(rd->sha, rd->info.decoded_sha);	/* frees it */
	else
		ct_sha256_abort(rd->sha);	/* a stream that does not end right */
	rd->sha = NULL;
	if (rc == 0 && rd->info.encoding == CT_DELTA_LOSSLESS &&
	    memcmp(rd->info.decoded_sha, rd->info.weights_sha, 32) != 0)
		rc = ct_error(CT_EHASH, "result file: weights do not match their hash");
	rd->done = rc == 0 ? 1 : -1;
	return rc;
}

int ct_delta_reader_next(struct ct_delta_reader *rd, const float *base, float *dst,
			 size_t *first, size_t *m)
{
	int enc = (int)rd->info.encoding, rc;
	size_t k;

	*first = rd->pos, *m = 0;
	if (rd->done != 0)
		return rd->done > 0 ? 0 : ct_error(CT_ESTATE, "result file: reader failed before");
	if (rd->pos == rd->n)
		return reader_end(rd);
	k = rd->n - rd->pos < CT_DELTA_CHUNK ? rd->n - rd->pos : CT_DELTA_CHUNK;
	rc = dec_fill(&rd->d, chunk_raw_len(enc, k));
	if (rc == 0 && enc == CT_DELTA_LOSSLESS)
		lossless_unpack(base, rd->d.stage, k, 0, dst);
	else if (rc == 0)
		rc = int8_unpack(base, rd->d.stage, k, dst, &rd->qerr2);
	if (rc == 0)
		rc = ct_sha256_update(rd->sha, dst, k * sizeof(float));
	if (rc < 0) {
		rd->done = -1;
		return rc;
	}
	rd->pos += k;
	*m = k;
	return 1;
}

void ct_delta_reader_close(struct ct_delta_reader *rd)
{
	if (rd == NULL)
		return;
	if (rd->zinit)
		ct_zin_end(&rd->d.z);
	if (rd->d.fd >= 0)
		close(rd->d.fd);
	ct_sha256_abort(rd->sha);
	free(rd);
}
