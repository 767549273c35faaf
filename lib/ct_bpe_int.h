/*
 * ct_bpe_int.h - internals shared by ct_bpe.c (tables, merging),
 * ct_bpe_load.c (parsing the data files) and ct_bpe_split.c (the
 * pre-tokeniser and the encode loop). Not for use outside the tokenizer.
 */
#ifndef CT_BPE_INT_H
#define CT_BPE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ct_bpe.h"

#define CT_BPE_MAX_VOCAB (1 << 22)	/* ids fit the heap's 24-bit ranks */
#define CT_BPE_MAX_MERGES ((1 << 24) - 1)
#define CT_BPE_MAX_ADDED 4096
#define CT_BPE_MAX_ADDED_LEN 256

/* The pre-tokenisers: each a regular expression of a known tokenizer
 * family, written out as code in ct_bpe_split.c. */
enum ct_bpe_pre {
	CT_BPE_PRE_GPT2,	/* GPT-2's regex (also HF ByteLevel use_regex) */
	CT_BPE_PRE_LLAMA3,	/* Llama 3's Split regex: numbers in 1-3 digits */
	CT_BPE_PRE_QWEN2,	/* Qwen2/3's: the same with single digits */
	CT_BPE_PRE_DIGITS_GPT2,	/* Digits(individual) then GPT-2's (SmolLM2) */
};

#define CT_BPE_TPL_MAX 8	/* special ids on each side of a template */

struct ct_bpe_pair {
	uint64_t key;		/* left << 32 | right; UINT64_MAX = empty */
	uint32_t rank;		/* merge order: lower merges first */
	uint32_t id;		/* id of the concatenation */
};

struct ct_bpe {
	int V, eot;
	enum ct_bpe_pre pre;
	int whole_first;	/* a piece that is a token is that token */
	int nfc;		/* text is put in Unicode NFC before splitting */
	char file[128];		/* for messages: "encoder.json", a path */
	unsigned char *bytes;	/* all tokens' bytes, back to back */
	uint32_t *off;		/* token i is bytes[off[i] .. off[i+1]); empty: no id i */
	int32_t *vslot;		/* bytes -> id, open addressing; -1 empty */
	uint32_t vmask;
	struct ct_bpe_pair *pslot;
	uint32_t pmask;
	uint32_t byte_id[256];	/* the token of each single byte */
	/* Added tokens (tokenizer.json): matched in the text before the
	 * pre-tokeniser, leftmost then longest; their bytes are their text. */
	uint8_t *is_added;	/* V flags, or NULL */
	uint32_t *added;	/* their ids */
	int nadded;
	size_t added_max;	/* the longest one's bytes */
	uint8_t added_first[256];	/* 1 for each byte one of them starts with */
	/* post_processor's template (ct_bpe_post.c): ids before / after the
	 * text of one sequence; templated 0 when the file has no template. */
	int templated, ntpl_pre, ntpl_post;
	uint32_t tpl_pre[CT_BPE_TPL_MAX], tpl_post[CT_BPE_TPL_MAX];
};

/* GPT-2's byte-to-unicode alphabet: to_byte[cp] is the byte code point
 * cp stands for, -1 when none (cp < CT_BPE_NALPHA). */
#define CT_BPE_NALPHA (256 + 68)
void ct_bpe_alphabet(int to_byte[CT_BPE_NALPHA]);

/* Smallest power of two >= n (at least 1024). */
uint32_t ct_bpe_pow2(size_t n);

/* The hash from token bytes to id over all ids except eot, empty ones and
 * added tokens. CT_EFORMAT when two tokens have the same bytes. */
int ct_bpe_build_vocab_hash(struct ct_bpe *b);

/* Size the pair table for n merges (CT_ENOMEM), then insert: 1 when new,
 * 0 when (l, r) was already there (the first stays). */
int ct_bpe_pair_alloc(struct ct_bpe *b, size_t n);
int ct_bpe_pair_insert(struct ct_bpe *b, uint32_t l, uint32_t r, uint32_t rank,
		       uint32_t id);

/* Fill byte_id from the vocabulary; CT_EFORMAT when a byte has no token. */
int ct_bpe_byte_ids(struct ct_bpe *b);

/* The id of the token whose bytes are p[0..n), or -1. */
int ct_bpe_lookup(const struct ct_bpe *b, const unsigned char *p, size_t n);

/* Append the tokens of one piece (n >= 1 bytes). 0, CT_ENOMEM, CT_ETOOBIG. */
int ct_bpe_merge(const struct ct_bpe *b, const unsigned char *p, size_t n,
		 struct ct_tokvec *out);

/* The same for any n >= 2 by the heap method (ct_bpe_merge uses it for
 * long pieces; exposed so a test can hold it to the scan on short ones). */
int ct_bpe_merge_heap(const struct ct_bpe *b, const unsigned char *p,
		      size_t n, struct ct_tokvec *out);

/* A binary min-heap of rank << 40 | position (rank < 2^24). */
struct ct_bpe_heap {
	uint64_t *v;
	size_t n, cap;
};
int ct_bpe_heap_push(struct ct_bpe_heap *h, uint32_t rank, size_t pos);
uint64_t ct_bpe_heap_pop(struct ct_bpe_heap *h);

/* Parse encoder.json (a JSON object: token in GPT-2's byte-to-unicode
 * alphabet -> id) holding exactly the ids 0..V-1. *bytes and *off (V + 1
 * entries; token i is (*bytes)[off[i] .. off[i+1])) are malloc'd for the
 * caller. Returns 0, CT_EFORMAT (detail: what and where) or CT_ENOMEM. */
int ct_bpe_parse_encoder(int V, const char *json, size_t n,
			 unsigned char **bytes, uint32_t **off);

/* Check vocab.bpe ("#version" line, then "left right" per line) against
 * the vocabulary: merge i must make the token of id 256 + i, which is
 * what lets ranks be ids. Returns 0 or CT_EFORMAT. */
int ct_bpe_check_merges(const struct ct_bpe *b, const char *text, size_t n);

/* The end of the GPT-2 pre-tokeniser's piece that starts at p[i] (i < n),
 * as if the text ended at n. */
size_t ct_bpe_split_gpt2(const unsigned char *p, size_t n, size_t i);

/* The same for Llama 3's pattern (max_digits 3) and Qwen2's (1). */
size_t ct_bpe_split_llama3(const unsigned char *p, size_t n, size_t i,
			   int max_digits);

/* Read a Hugging Face tokenizer.json (n bytes of text) into b, which is
 * zeroed but for b->file. Returns 0, CT_EFORMAT, CT_EUNSUPP (a setting or
 * pre-tokeniser this engine does not implement; the detail names it),
 * CT_ETOOBIG or CT_ENOMEM. */
int ct_bpe_load_hf(struct ct_bpe *b, const char *json, size_t n);

/* Read root's post_processor into b's template (after b->V is known).
 * Returns 0, CT_EFORMAT or CT_EUNSUPP (an unknown processor type, named). */
struct ct_jv;
int ct_bpe_post_processor(struct ct_bpe *b, const struct ct_jv *root);

#endif
