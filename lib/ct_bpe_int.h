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

/* The id of the token whose bytes are p[0..n), or -1. */
int ct_bpe_lookup(const struct ct_bpe *b, const unsigned char *p, size_t n);

/* Append the tokens of one piece (n >= 1 bytes). 0, CT_ENOMEM, CT_ETOOBIG. */
int ct_bpe_merge(const struct ct_bpe *b, const unsigned char *p, size_t n,
		 struct ct_tokvec *out);

/* The same for any n >= 2 by the heap method (ct_bpe_merge uses it for
 * long pieces; exposed so a test can hold it to the scan on short ones). */
int ct_bpe_merge_heap(const struct ct_bpe *b, const unsigned char *p,
		      size_t n, struct ct_tokvec *out);

/* A binary min-heap of rank << 40 | position. */
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

#endif
