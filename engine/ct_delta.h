/*
 * ct_delta.h - the result upload format: trained weights as a compressed
 * delta against the base model of the work unit.
 *
 * A volunteer trains from a base model the server already holds, so it
 * uploads only what changed. A result file is a fixed 160-byte header
 * followed by one zlib stream:
 *
 *   off size  field (all integers little-endian)
 *     0    8  magic "CTDELTA1"
 *     8    4  version (1)
 *    12    4  encoding (CT_DELTA_LOSSLESS, CT_DELTA_INT8 or, for LoRA,
 *             CT_DELTA_LOSSLESS_TENSOR)
 *    16    8  nparams: number of float32 weights
 *    24   24  model config: max_seq_len, vocab_size, padded_vocab_size,
 *             num_layers, num_heads, channels (u32 each)
 *    48   32  SHA-256 of the base model file the delta is relative to
 *    80   32  SHA-256 of the full trained weights (nparams float32, LE)
 *   112    8  payload length in bytes (the zlib stream that follows)
 *   120    8  raw payload length (bytes the stream inflates to)
 *   128    4  int8 block size (256; 0 for lossless)
 *   132    4  kind: 0 full weights (CT_DELTA_FULL), 1 LoRA adapters
 *             (CT_DELTA_LORA)
 *   136   24  kind 0: zero. Kind 1, the LoRA section:
 *   136    4    rank r (1..CT_LORA_MAX_RANK)
 *   140    4    alpha (float32 bits; finite, > 0)
 *   144    4    targets (CT_LORA_* bits of ct_lora.h, non-empty)
 *   148    8    seed of the work unit (the initial adapters' seed)
 *   156    4    model type: 0 GPT-2 (adapter count checked against the
 *                shape below), 1 Llama (ct_llama.h; the widths depend on
 *                KV heads and MLP size, so only whole rank x layers rows
 *                are checked here, the exact count when decoding)
 *
 * A LoRA result (kind 1) carries a LoRA work unit's trained adapter array
 * (ct_lora.h's layout, ct_lora_nparams floats: nparams must equal it for
 * the header's config, rank and targets) as a delta against the initial
 * adapters ct_lora_init(config, {r, alpha, targets}, seed), which the
 * server regenerates; "weights" below then means adapters, base_sha is
 * still the base model file the WU trained on, and the weights hash is
 * the adapters' hash. Both encodings apply unchanged. Files of kind 0 are
 * byte for byte what they were before kinds existed (those bytes were
 * reserved, zero).
 *
 * CT_DELTA_LOSSLESS (the default): for every weight i the 32-bit patterns
 * b = bits(base[i]), r = bits(result[i]) give d = r - b (mod 2^32), stored
 * zig-zag coded (z = (d << 1) ^ (d >> 31 arithmetic)) so that small
 * differences of either sign have zero high bytes. The z words are
 * byte-shuffled (all least significant bytes first, then all second bytes,
 * ...) and deflated. The decoder recovers r = b + unzigzag(z) exactly, bit
 * for bit (NaN payloads and signed zeros included), and checks the SHA-256
 * of the result against the header. Why integer difference and not
 * float subtraction: float subtraction rounds, so base + (result - base) is
 * not always result. Why not XOR of the bit patterns (also exact): when an
 * update carries across a mantissa byte boundary XOR sets high bits the
 * integer difference leaves zero; measured on Gaussian weights with
 * updates of 1e-4..1e-2 relative size, zig-zag difference compresses 4%
 * better than XOR at the same cost (doc/results.md).
 *
 * The shuffle works on chunks of CT_DELTA_CHUNK weights (256 KiB of raw
 * bytes; the last chunk may be shorter), and each byte plane of a chunk is
 * its own deflate block (Z_BLOCK flush) so it gets its own Huffman codes:
 * that compresses as well as one global shuffle (deflate only looks back
 * 32 KiB) while both sides stream with O(1) memory. Planes mixed in one
 * deflate block cost 3-5% more (measured). The encoder picks per plane
 * between Huffman codes alone (near-random planes, order-0 entropy of a
 * bit per byte or more) and matches (planes of mostly equal bytes); any
 * deflate stream decodes.
 *
 * CT_DELTA_LOSSLESS_TENSOR (GPT-2 LoRA files only; what
 * ct_lora_result_encode writes for their lossless encoding): as CT_DELTA_LOSSLESS with two changes. (1) The
 * difference is of the patterns in the floats' order, o(u) = u for a
 * non-negative pattern and u ^ 0x7fffffff for a negative one (as int32:
 * -0 is -1), d = o(r) - o(b); o is a bijection, so this is as exact. B
 * starts at zero: with plain patterns a trained B weight of either sign
 * costs a different top byte (d near 0 or near 2^32), with o its zig-zag
 * is 2|B|+sign, the top byte its exponent alone. (2) Chunks also end at
 * the end of every adapter matrix (each slot's A, then its B, in
 * ct_lora_slot order; still at most CT_DELTA_CHUNK weights), so each
 * byte plane holds one matrix: A's small updates and B's whole values
 * get their own Huffman codes; their planes that use matches do so at
 * level 9. Measured at GPT-2 124M, r=8:
 * 7-10% smaller than CT_DELTA_LOSSLESS (doc/results.md).
 *
 * CT_DELTA_INT8 (lossy): delta = result - base (float), per block of 256
 * weights scale = max|delta| / 127 and q = round(delta / scale) as int8.
 * Raw payload, per block: the float32 scale, then the block's int8 values
 * (68 bytes; the last block may be shorter). The decoder
 * returns base + q * scale, which is NOT the trained weights: the weights
 * hash in the header is what the client claims and cannot be checked, so a
 * validator must compare int8 results by tolerance, never by that hash.
 *
 * Decoding trusts nothing in the header: sizes must match the caller's
 * model exactly, the payload must fit the buffer, inflation is capped at
 * the raw length the format implies, and scales must be finite and exactly
 * what the encoder makes (the largest |q| of a block with a normal scale
 * is 127), so a sender cannot inflate the error bound it is granted.
 */
#ifndef CT_DELTA_H
#define CT_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"

#define CT_DELTA_MAGIC "CTDELTA1"
#define CT_DELTA_VERSION 1
#define CT_DELTA_HEADER_SIZE 160
#define CT_DELTA_INT8_BLOCK 256
#define CT_DELTA_CHUNK 65536	/* weights per shuffle chunk */
/* 4 Gi weights (16 GiB of float32): far above GPT-2 XL's 1.6 G. */
#define CT_DELTA_MAX_PARAMS ((uint64_t)1 << 32)

enum ct_delta_encoding {
	CT_DELTA_LOSSLESS = 0,
	CT_DELTA_INT8 = 1,
	CT_DELTA_LOSSLESS_TENSOR = 2,	/* LoRA files only */
};

/* What a result file holds. */
enum ct_delta_kind {
	CT_DELTA_FULL = 0,	/* all weights of the model, against the base model */
	CT_DELTA_LORA = 1,	/* LoRA adapters, against the initial adapters */
};

/* The LoRA section of a kind-1 header. */
struct ct_delta_lora {
	uint32_t rank;		/* 1..CT_LORA_MAX_RANK */
	uint32_t targets;	/* CT_LORA_* bits */
	float alpha;		/* finite, > 0 */
	uint64_t seed;		/* the WU seed the initial adapters come from */
	uint32_t arch;		/* the family, CT_ARCH_* (ct_model_config.h) */
};

/* The model's shape (llm.c's GPT-2 config), carried so a server can reject
 * a result for another model before touching the weights. */
struct ct_delta_model {
	uint32_t max_seq_len;
	uint32_t vocab_size;
	uint32_t padded_vocab_size;
	uint32_t num_layers;
	uint32_t num_heads;
	uint32_t channels;
};

/* Whether n adapter floats fit a LoRA section l on model shape m, for
 * GPT-2 (exactly: r*(in+out) per target and layer) and for Llama (a bound:
 * the header knows C and L but not F or the heads); the families' rows
 * (ct_model_ops.h) point at these. */
int ct_delta_gpt2_lora_fits(uint64_t n, const struct ct_delta_lora *l,
			    const struct ct_delta_model *m);
int ct_delta_llama_lora_fits(uint64_t n, const struct ct_delta_lora *l,
			     const struct ct_delta_model *m);

/* What a header says (and, after decode, what was verified). */
struct ct_delta_info {
	uint32_t version;
	uint32_t encoding;		/* enum ct_delta_encoding */
	uint64_t nparams;
	struct ct_delta_model model;
	unsigned char base_sha[32];	/* base model file the delta is against */
	unsigned char weights_sha[32];	/* claimed hash of the trained weights */
	uint64_t payload_len;
	uint64_t raw_len;
	uint32_t block;
	uint32_t kind;			/* enum ct_delta_kind */
	struct ct_delta_lora lora;	/* kind CT_DELTA_LORA only; else zero */
	/* Set by ct_delta_decode only: SHA-256 of the weights it returned.
	 * Equal to weights_sha for a lossless file (checked), the hash of the
	 * dequantised weights for int8. */
	unsigned char decoded_sha[32];
	/* Set by ct_delta_decode only: an upper bound on the L2 norm of
	 * (decoded - trained) weights, from the int8 scales (half a step per
	 * weight); 0 for lossless. A validator adds it to its tolerance. */
	double quant_error;
};

/* Encode `result` (n float32) relative to `base` (n float32) and append the
 * whole result file to `out` (bounded by out->max). `model` and `base_sha`
 * (32 bytes: SHA-256 of the base model file) go into the header; the
 * weights hash is computed here. encoding: CT_DELTA_LOSSLESS or
 * CT_DELTA_INT8. zlevel: zlib level 0..9, or -1 for the default (1: the
 * shuffled data gains ~3% from level 6 at several times the cost).
 * Returns 0; CT_EINVAL (n == 0, n over CT_DELTA_MAX_PARAMS, bad encoding),
 * CT_ENONFINITE (int8 with a non-finite delta), CT_ETOOBIG (out's cap),
 * CT_ENOMEM, CT_EZLIB. On failure out->len is back to its old value. */
int ct_delta_encode(const float *base, const float *result, size_t n,
		    const struct ct_delta_model *model,
		    const unsigned char base_sha[32], int encoding, int zlevel,
		    struct ct_buf *out);

/* The same for a LoRA work unit's adapters (n = ct_lora_nparams floats)
 * against the initial adapters `init` (ct_lora_init of the WU's seed): a
 * kind CT_DELTA_LORA file with the section `lora`. Returns like
 * ct_delta_encode; CT_EINVAL also when n does not fit the section and the
 * model (ct_lora_nparams of model's L and C, lora's rank and targets) or
 * the section is out of range. encoding may also be
 * CT_DELTA_LOSSLESS_TENSOR (zlevel -1: 9 for its planes that use matches). */
int ct_delta_encode_lora(const float *init, const float *adapters, size_t n,
			 const struct ct_delta_model *model,
			 const unsigned char base_sha[32], const struct ct_delta_lora *lora,
			 int encoding, int zlevel, struct ct_buf *out);

/* Parse and check the header of a result file of `len` bytes (at least the
 * header; the payload length must match len exactly). Fills *info (not
 * decoded_sha). Returns 0, CT_EFORMAT (bad magic, unknown encoding, block
 * or kind, reserved bytes set, inconsistent lengths, a LoRA section out of
 * range or whose adapter count is not nparams), CT_EUNSUPP (version),
 * CT_ETOOBIG (nparams over the cap). */
int ct_delta_parse_header(const void *data, size_t len,
			  struct ct_delta_info *info);

/* Decode a full-weights result file into result_out (n float32,
 * caller-allocated) given the base weights (n float32). The header's
 * kind must be CT_DELTA_FULL and its nparams equal n (CT_EMISMATCH
 * otherwise). Checks: as ct_delta_parse_header; the stream
 * inflates to exactly raw_len bytes (CT_ECORRUPT otherwise; no more is
 * ever written); for lossless the SHA-256 of the result must equal the
 * header's (CT_EHASH); int8 scales must be finite and >= 0, and a block
 * with a normal scale must use q = +-127 somewhere (CT_ECORRUPT). Allocates nothing proportional to n. info may be NULL.
 * The caller should still compare info->base_sha and info->model with the
 * work unit's. On failure result_out holds garbage. */
int ct_delta_decode(const void *data, size_t len, const float *base,
		    size_t n, float *result_out, struct ct_delta_info *info);

/* ---- streaming decode ----------------------------------------------------
 * A result read from its file a piece at a time: O(CT_DELTA_CHUNK) memory
 * whatever the model's size (no mapping of the file, no whole-model
 * buffer), so a server can check and compare results it never holds. */
struct ct_delta_reader;

/* Open the result file at path for n weights: the file is at most max_len
 * bytes when max_len > 0 (CT_ETOOBIG), its header passes
 * ct_delta_parse_header's checks (its errors) and says n weights
 * (CT_EMISMATCH). CT_ENOENT if the file is missing, CT_EIO. *out owned
 * by the caller (ct_delta_reader_close); NULL on failure. */
int ct_delta_reader_open(const char *path, uint64_t max_len, size_t n,
			 struct ct_delta_reader **out);

/* The header's fields; decoded_sha and quant_error are valid once
 * ct_delta_reader_next has returned 0. Borrowed from rd. */
const struct ct_delta_info *ct_delta_reader_info(const struct ct_delta_reader *rd);

/* Decode the next chunk: *m (<= CT_DELTA_CHUNK) weights from index *first
 * into dst[0..*m), against base[0..*m) (the base's weights from *first).
 * Chunks come in order, each CT_DELTA_CHUNK weights but the last, so the
 * caller knows *first and *m in advance (base + first, dst = its own
 * array + first). dst may equal base (decode in place: each weight's base
 * is read before it is written). Returns 1 with a chunk; 0 at the end,
 * after the checks ct_delta_decode makes (stream ends exactly, lossless
 * hash; CT_ECORRUPT, CT_EHASH); < 0 on an error, after which the reader
 * only fails. */
int ct_delta_reader_next(struct ct_delta_reader *rd, const float *base, float *dst,
			 size_t *first, size_t *m);

/* Close the file and free; NULL is a no-op. */
void ct_delta_reader_close(struct ct_delta_reader *rd);

/* Decode a LoRA result file (kind CT_DELTA_LORA, else CT_EMISMATCH) into
 * adapters_out (n floats) given the initial adapters init (n floats), with
 * every check of ct_delta_decode. The caller compares info->lora (rank,
 * alpha, targets, seed), info->model and info->base_sha with the WU's. */
int ct_delta_decode_lora(const void *data, size_t len, const float *init,
			 size_t n, float *adapters_out, struct ct_delta_info *info);

/* SHA-256 of n float32 weights as little-endian bytes (the hash the header
 * carries). out: 32 bytes. Returns 0 or CT_ECRYPTO. */
int ct_delta_weights_sha(const float *w, size_t n, unsigned char out[32]);

#endif
