/*
 * ct_bpe.c - byte-level BPE (see ct_bpe.h): loading GPT-2's encoder.json
 * and vocab.bpe (a tokenizer.json is read by ct_bpe_hf.c into the same
 * tables), and merging. The pre-tokenisers (regexes written out by hand)
 * and the encode loop are in ct_bpe_split.c.
 *
 * Encoding follows OpenAI's tiktoken and Hugging Face's tokenizers, the
 * references the tests hold it to: the text is cut into pieces; a piece
 * that is itself a token is that token (GPT-2, and a tokenizer.json with
 * ignore_merges); otherwise the piece starts as one token per byte and the
 * adjacent pair with the lowest merge rank (leftmost on ties) is merged
 * until no pair has one. A pair table (left id, right id) -> (rank, id of
 * the concatenation) makes each step one hash look-up. For GPT-2 a
 * token's rank is its id (the loader checks that vocab.bpe's merge i makes
 * token 256 + i), so the table is built from every split of every token;
 * for a tokenizer.json the rank is the merge's place in model.merges.
 */
#include "config.h"
#include "ct_array.h"
#include "ct_bpe.h"
#include "ct_bpe_int.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_file.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPT2_VOCAB 50257
#define GPT2_EOT 50256
#define EOT_TEXT "<|endoftext|>"
#define MAX_DATA_FILE (16u << 20)	/* encoder.json is 1 MB */
#define MAX_HF_FILE (64u << 20)	/* Qwen3's tokenizer.json is 11 MB */
#define HEAP_MIN 64			/* pieces this long merge with a heap */
#define NO_MERGE UINT64_MAX
#define DEAD UINT32_MAX			/* a merged-away position of the heap */

/* ---- hashing ---------------------------------------------------------- */

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDull;
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	if (n > 0) {
		uint64_t w = 0;

		memcpy(&w, p, n);
		h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
	}
	h ^= h >> 29;
	h *= 0xFF51AFD7ED558CCDull;
	return h ^ (h >> 32);
}

static uint32_t hash_pair(uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull;

	h ^= h >> 29;
	return (uint32_t)(h * 0xBF58476D1CE4E5B9ull >> 32);
}

static size_t tok_len(const struct ct_bpe *b, uint32_t id)
{
	return b->off[id + 1] - b->off[id];
}

int ct_bpe_lookup(const struct ct_bpe *b, const unsigned char *p, size_t n)
{
	uint32_t i = (uint32_t)hash_bytes(p, n) & b->vmask;

	for (;; i = (i + 1) & b->vmask) {
		int32_t id = b->vslot[i];

		if (id < 0)
			return -1;
		if (tok_len(b, (uint32_t)id) == n &&
		    memcmp(b->bytes + b->off[id], p, n) == 0)
			return id;
	}
}

/* rank << 32 | id of the merge of tokens l and r, or NO_MERGE. Lower is
 * merged first; for GPT-2 the rank is the id. */
static inline uint64_t pair_rank(const struct ct_bpe *b, uint32_t l, uint32_t r)
{
	uint64_t key = (uint64_t)l << 32 | r;
	uint32_t i = hash_pair(key) & b->pmask;

	for (;; i = (i + 1) & b->pmask) {
		if (b->pslot[i].key == key)
			return (uint64_t)b->pslot[i].rank << 32 | b->pslot[i].id;
		if (b->pslot[i].key == UINT64_MAX)
			return NO_MERGE;
	}
}

int ct_bpe_pair_insert(struct ct_bpe *b, uint32_t l, uint32_t r, uint32_t rank,
		       uint32_t id)
{
	uint64_t key = (uint64_t)l << 32 | r;
	uint32_t i = hash_pair(key) & b->pmask;

	while (b->pslot[i].key != UINT64_MAX) {
		if (b->pslot[i].key == key)
			return 0;	/* the first (lowest rank) stays */
		i = (i + 1) & b->pmask;
	}
	b->pslot[i].key = key;
	b->pslot[i].rank = rank;
	b->pslot[i].id = id;
	return 1;
}

int ct_bpe_pair_alloc(struct ct_bpe *b, size_t n)
{
	b->pmask = ct_bpe_pow2(n * 2 + 1) - 1;
	b->pslot = malloc(((size_t)b->pmask + 1) * sizeof(*b->pslot));
	if (b->pslot == NULL)
		return CT_ENOMEM;
	memset(b->pslot, 0xFF, ((size_t)b->pmask + 1) * sizeof(*b->pslot));
	return 0;
}

/* ---- building the tables ---------------------------------------------- */

uint32_t ct_bpe_pow2(size_t n)
{
	uint32_t p = 1024;

	while (p < n)
		p <<= 1;
	return p;
}

int ct_bpe_build_vocab_hash(struct ct_bpe *b)
{
	b->vmask = ct_bpe_pow2((size_t)b->V * 3) - 1;
	b->vslot = malloc(((size_t)b->vmask + 1) * sizeof(*b->vslot));
	if (b->vslot == NULL)
		return CT_ENOMEM;
	memset(b->vslot, 0xFF, ((size_t)b->vmask + 1) * sizeof(*b->vslot));
	for (int id = 0; id < b->V; id++) {
		const unsigned char *p = b->bytes + b->off[id];
		size_t n = tok_len(b, (uint32_t)id);
		uint32_t i;

		if (id == b->eot || n == 0 || (b->is_added != NULL && b->is_added[id]))
			continue;
		if (ct_bpe_lookup(b, p, n) >= 0)
			return ct_error(CT_EFORMAT, "%s: token %d repeats "
					"an earlier token's bytes", b->file, id);
		i = (uint32_t)hash_bytes(p, n) & b->vmask;
		while (b->vslot[i] >= 0)
			i = (i + 1) & b->vmask;
		b->vslot[i] = id;
	}
	return 0;
}

/* Visit every split of every token into two tokens; insert (or count). */
static size_t walk_pairs(struct ct_bpe *b, int insert)
{
	size_t count = 0;

	for (int id = 0; id < b->V; id++) {
		const unsigned char *p = b->bytes + b->off[id];
		size_t n = tok_len(b, (uint32_t)id);

		if (id == b->eot)
			continue;
		for (size_t k = 1; k < n; k++) {
			int l = ct_bpe_lookup(b, p, k), r;

			if (l < 0)
				continue;
			r = ct_bpe_lookup(b, p + k, n - k);
			if (r < 0)
				continue;
			count++;
			if (insert)
				ct_bpe_pair_insert(b, (uint32_t)l, (uint32_t)r, (uint32_t)id,
						   (uint32_t)id);
		}
	}
	return count;
}

static int build_pair_table(struct ct_bpe *b)
{
	int rc = ct_bpe_pair_alloc(b, walk_pairs(b, 0));

	if (rc == 0)
		walk_pairs(b, 1);
	return rc;
}

/* ---- loading ---------------------------------------------------------- */

/* The first data directory that holds both of GPT-2's files, into dir. */
static int find_data_dir(char *dir, size_t cap)
{
	const char *env = ct_opt_str(CT_OPT_TOKENIZER_DIR);
	const char *dirs[3];
	char a[PATH_MAX], b[PATH_MAX], tried[3 * PATH_MAX];
	size_t nd = 0, t = 0;

	tried[0] = '\0';
	if (env != NULL && env[0] != '\0')
		dirs[nd++] = env;
	dirs[nd++] = CT_DATADIR "/tokenizers";
#ifdef CT_SRCDATADIR
	dirs[nd++] = CT_SRCDATADIR "/tokenizers";
#endif
	for (size_t i = 0; i < nd; i++) {
		if (ct_path_join(dir, cap, dirs[i], "gpt2") == 0 &&
		    ct_path_join(a, sizeof(a), dir, "encoder.json") == 0 &&
		    ct_path_join(b, sizeof(b), dir, "vocab.bpe") == 0 &&
		    ct_file_exists(a) && ct_file_exists(b))
			return 0;
		t += (size_t)snprintf(tried + t, sizeof(tried) - t, "%s%s",
				      t ? ", " : "", dir);
		if (t >= sizeof(tried))
			t = sizeof(tried) - 1;
	}
	return ct_error(CT_ENOENT, "gpt2 tokenizer data (encoder.json, vocab.bpe) not "
			"found in %s; set CTUNE_TOKENIZER_DIR to a directory holding "
			"gpt2/", tried);
}

static int read_data(const char *dir, const char *name, unsigned char **data,
		     size_t *len)
{
	char path[PATH_MAX];
	int rc = ct_path_join(path, sizeof(path), dir, name);

	if (rc < 0)
		return rc;
	return ct_file_read_all(path, MAX_DATA_FILE, data, len);
}

int ct_bpe_byte_ids(struct ct_bpe *b)
{
	for (int c = 0; c < 256; c++) {
		unsigned char ch = (unsigned char)c;
		int id = ct_bpe_lookup(b, &ch, 1);

		if (id < 0)
			return ct_error(CT_EFORMAT, "%s: no token for byte %d", b->file, c);
		b->byte_id[c] = (uint32_t)id;
	}
	return 0;
}

int ct_bpe_open_gpt2(struct ct_bpe **out)
{
	struct ct_bpe *b;
	unsigned char *json = NULL, *merges = NULL;
	size_t njson, nmerges;
	char dir[PATH_MAX];
	int rc;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CT_ENOMEM;
	b->V = GPT2_VOCAB;
	b->eot = GPT2_EOT;
	b->pre = CT_BPE_PRE_GPT2;
	b->whole_first = 1;
	snprintf(b->file, sizeof(b->file), "encoder.json");
	rc = find_data_dir(dir, sizeof(dir));
	if (rc < 0)
		goto out;
	rc = read_data(dir, "encoder.json", &json, &njson);
	if (rc < 0)
		goto out;
	rc = read_data(dir, "vocab.bpe", &merges, &nmerges);
	if (rc < 0)
		goto out;
	rc = ct_bpe_parse_encoder(b->V, (const char *)json, njson, &b->bytes, &b->off);
	if (rc < 0)
		goto out;
	rc = ct_bpe_build_vocab_hash(b);
	if (rc < 0)
		goto out;
	rc = ct_bpe_check_merges(b, (const char *)merges, nmerges);
	if (rc < 0)
		goto out;
	rc = build_pair_table(b);
	if (rc < 0)
		goto out;
	rc = ct_bpe_byte_ids(b);
	if (rc < 0)
		goto out;
	*out = b;
	b = NULL;
out:
	free(json);
	free(merges);
	ct_bpe_free(b);
	return rc;
}

int ct_bpe_open_hf(const char *path, struct ct_bpe **out)
{
	struct ct_bpe *b;
	unsigned char *json = NULL;
	size_t n;
	int rc;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CT_ENOMEM;
	b->eot = -1;
	snprintf(b->file, sizeof(b->file), "%s", path);
	rc = ct_file_read_all(path, MAX_HF_FILE, &json, &n);
	if (rc == CT_ETOOBIG)
		rc = ct_error(rc, "%s: over %u MiB, too big for a tokenizer.json", path,
			      MAX_HF_FILE >> 20);
	if (rc == 0)
		rc = ct_bpe_load_hf(b, (const char *)json, n);
	free(json);
	if (rc < 0) {
		ct_bpe_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

void ct_bpe_free(struct ct_bpe *b)
{
	if (b == NULL)
		return;
	free(b->bytes);
	free(b->off);
	free(b->vslot);
	free(b->pslot);
	free(b->is_added);
	free(b->added);
	free(b);
}

int ct_bpe_vocab(const struct ct_bpe *b)
{
	return b->V;
}

int ct_bpe_eot(const struct ct_bpe *b)
{
	return b->eot;
}

const unsigned char *ct_bpe_token(const struct ct_bpe *b, int id, size_t *len)
{
	if (id < 0 || id >= b->V || tok_len(b, (uint32_t)id) == 0) {
		*len = 0;
		return NULL;	/* outside, or an id the vocabulary leaves out */
	}
	*len = tok_len(b, (uint32_t)id);
	return b->bytes + b->off[id];
}

/* ---- merging ---------------------------------------------------------- */

/* Short pieces: scan for the leftmost lowest rank, as tiktoken does. */
static int merge_scan(const struct ct_bpe *b, const unsigned char *p, size_t n,
		      struct ct_tokvec *out)
{
	uint32_t id[HEAP_MIN];
	uint64_t rank[HEAP_MIN];
	size_t m = n;

	for (size_t i = 0; i < n; i++)
		id[i] = b->byte_id[p[i]];
	for (size_t i = 0; i + 1 < n; i++)
		rank[i] = pair_rank(b, id[i], id[i + 1]);
	rank[n - 1] = NO_MERGE;
	for (;;) {
		uint64_t best = NO_MERGE;
		size_t at = 0;

		for (size_t i = 0; i + 1 < m; i++)
			if (rank[i] < best) {
				best = rank[i];
				at = i;
			}
		if (best == NO_MERGE)
			break;
		id[at] = (uint32_t)best;
		memmove(id + at + 1, id + at + 2, (m - at - 2) * sizeof(*id));
		memmove(rank + at + 1, rank + at + 2, (m - at - 2) * sizeof(*rank));
		m--;
		rank[at] = at + 1 < m ? pair_rank(b, id[at], id[at + 1]) : NO_MERGE;
		if (at > 0)
			rank[at - 1] = pair_rank(b, id[at - 1], id[at]);
	}
	for (size_t i = 0; i < m; i++) {
		int rc = ct_tokvec_push(out, id[i]);

		if (rc < 0)
			return rc;
	}
	return 0;
}

int ct_bpe_merge(const struct ct_bpe *b, const unsigned char *p, size_t n,
		 struct ct_tokvec *out)
{
	int id;

	if (n == 1)
		return ct_tokvec_push(out, b->byte_id[p[0]]);
	if (b->whole_first) {
		id = ct_bpe_lookup(b, p, n);
		if (id >= 0)
			return ct_tokvec_push(out, (uint32_t)id);
	}
	if (n < HEAP_MIN)
		return merge_scan(b, p, n, out);
	return ct_bpe_merge_heap(b, p, n, out);
}

/* Long pieces: a heap of (rank, position), stale entries skipped. Popping
 * the least (rank, position) among the live pairs is exactly the leftmost
 * lowest rank the scan picks, in O(n log n). */
int ct_bpe_merge_heap(const struct ct_bpe *b, const unsigned char *p,
		      size_t n, struct ct_tokvec *out)
{
	struct ct_bpe_heap h = { 0 };
	uint32_t *id = malloc(n * sizeof(*id));
	size_t *next = malloc(n * sizeof(*next)), *prev = malloc(n * sizeof(*prev));
	int rc = CT_ENOMEM;

	if (id == NULL || next == NULL || prev == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		id[i] = b->byte_id[p[i]];
		next[i] = i + 1;
		prev[i] = i - 1;	/* SIZE_MAX for the first */
	}
	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t r = pair_rank(b, id[i], id[i + 1]);

		if (r != NO_MERGE && (rc = ct_bpe_heap_push(&h, (uint32_t)(r >> 32), i)) < 0)
			goto out;
	}
	while (h.n > 0) {
		uint64_t top = ct_bpe_heap_pop(&h), r;
		size_t i = (size_t)(top & ((1ull << 40) - 1)), j;

		if (id[i] == DEAD || next[i] >= n)
			continue;
		r = pair_rank(b, id[i], id[next[i]]);
		if (r == NO_MERGE || r >> 32 != top >> 40)
			continue;	/* stale */
		j = next[i];
		id[i] = (uint32_t)r;
		id[j] = DEAD;
		next[i] = next[j];
		if (next[j] < n)
			prev[next[j]] = i;
		rc = 0;
		if (next[i] < n && (r = pair_rank(b, id[i], id[next[i]])) != NO_MERGE)
			rc = ct_bpe_heap_push(&h, (uint32_t)(r >> 32), i);
		if (rc == 0 && prev[i] != SIZE_MAX &&
		    (r = pair_rank(b, id[prev[i]], id[i])) != NO_MERGE)
			rc = ct_bpe_heap_push(&h, (uint32_t)(r >> 32), prev[i]);
		if (rc < 0)
			goto out;
	}
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i = next[i])
		rc = ct_tokvec_push(out, id[i]);
out:
	free(h.v);
	free(id);
	free(next);
	free(prev);
	return rc;
}
int ct_bpe_heap_push(struct ct_bpe_heap *h, uint32_t rank, size_t pos)
{
	uint64_t key = (uint64_t)rank << 40 | pos;
	size_t i;
	int rc = ct_array_grow(&h->v, &h->cap, h->n, sizeof(*h->v), 256);

	if (rc < 0)
		return rc;
	for (i = h->n++; i > 0 && h->v[(i - 1) / 2] > key; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = key;
	return 0;
}

uint64_t ct_bpe_heap_pop(struct ct_bpe_heap *h)
{
	uint64_t top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

int ct_bpe_is_added(const struct ct_bpe *b, uint32_t id)
{
	return b->is_added != NULL && id < (uint32_t)b->V && b->is_added[id];
}
