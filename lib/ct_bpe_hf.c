/*
 * ct_bpe_hf.c - reading a Hugging Face tokenizer.json into the BPE engine
 * (see ct_bpe_int.h): model.vocab (token in GPT-2's byte alphabet -> id),
 * model.merges (by rank; "a b" strings or [a, b] pairs), added_tokens
 * (matched in the text before pre-tokenisation, decoded as their text),
 * and the pre-tokeniser, which must be one whose regular expression
 * ct_bpe_split.c implements by hand. Every setting that would change the
 * ids and is not implemented is refused by name rather than ignored.
 */
#include "config.h"
#include "ct_bpe_int.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_jv.h"
#include "ct_unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES (1 << 22)	/* Llama 3: 0.7 M values */
#define MAX_BYTES (64u << 20)

/* The Split regexes this engine implements (ct_bpe_split.c). */
static const char LLAMA3_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
	" ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
	" ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct hf {
	struct ct_bpe *b;
	int to_byte[CT_BPE_NALPHA];
	struct ct_buf s;	/* scratch string */
};

static int unsupp(const struct hf *h, const char *what, const char *detail)
{
	return ct_error(CT_EUNSUPP, "%s: %s%s%s is not supported", h->b->file, what,
			detail ? " " : "", detail ? detail : "");
}

/* The string value of key in obj into h->s (NUL-terminated); "" when the
 * key is missing or null. */
static int str_field(struct hf *h, const struct ct_jv *obj, const char *key)
{
	const struct ct_jv *v = ct_jv_get(obj, key);

	ct_buf_reset(&h->s);
	if (v != NULL && v->type == CT_JV_STR)
		return ct_buf_appends(&h->s, v->str);
	if (v != NULL && v->type != CT_JV_NULL)
		return ct_error(CT_EFORMAT, "%s: \"%s\" is not a string", h->b->file, key);
	return ct_buf_append(&h->s, "", 0);
}

/* A boolean field: 1, 0, or dflt when missing or null. */
static int bool_field(const struct ct_jv *obj, const char *key, int dflt)
{
	const struct ct_jv *v = ct_jv_get(obj, key);

	if (v == NULL || v->type == CT_JV_NULL)
		return dflt;
	return v->type == CT_JV_TRUE;
}

static int is_type(struct hf *h, const struct ct_jv *obj, const char *type)
{
	return obj != NULL && obj->type == CT_JV_OBJ && str_field(h, obj, "type") == 0 &&
	       strcmp(ct_buf_cstr(&h->s), type) == 0;
}

/* ByteLevel pre-tokeniser with no prefix space; its use_regex into *re.
 * 0, 1 when pt is not a ByteLevel, or CT_EUNSUPP. */
static int byte_level(struct hf *h, const struct ct_jv *pt, int *re)
{
	if (!is_type(h, pt, "ByteLevel"))
		return 1;
	if (bool_field(pt, "add_prefix_space", 0))
		return unsupp(h, "ByteLevel with", "add_prefix_space");
	*re = bool_field(pt, "use_regex", 1);
	return 0;
}

/* Recognise the pre-tokeniser: one ByteLevel, or a Sequence of a known
 * Split or Digits and a ByteLevel. */
static int pre_tokenizer(struct hf *h, const struct ct_jv *root)
{
	const struct ct_jv *pt = ct_jv_get(root, "pre_tokenizer"), *list = NULL, *a, *pat;
	int re = 0, rc;

	rc = pt != NULL ? byte_level(h, pt, &re) : 1;
	if (rc < 0)
		return rc;
	if (rc == 0) {
		if (!re)
			return unsupp(h, "a ByteLevel pre-tokeniser without", "its regex");
		h->b->pre = CT_BPE_PRE_GPT2;
		return 0;
	}
	if (is_type(h, pt, "Sequence"))
		list = ct_jv_get(pt, "pretokenizers");
	if (list == NULL || list->type != CT_JV_ARR || list->n != 2) {
		if (pt != NULL)
			str_field(h, pt, "type");
		return ct_error(CT_EUNSUPP, "%s: pre-tokeniser '%s' is not supported (known: "
				"ByteLevel, or a Sequence of Split or Digits and ByteLevel)",
				h->b->file, pt != NULL ? ct_buf_cstr(&h->s) : "none");
	}
	a = &list->items[0];
	rc = byte_level(h, &list->items[1], &re);
	if (rc != 0)
		return rc < 0 ? rc : unsupp(h, "a pre-tokeniser Sequence that does not end in",
					    "ByteLevel");
	if (is_type(h, a, "Digits")) {
		if (!bool_field(a, "individual_digits", 0) || !re)
			return unsupp(h, "Digits pre-tokeniser other than", "individual digits then GPT-2's regex");
		h->b->pre = CT_BPE_PRE_DIGITS_GPT2;
		return 0;
	}
	if (!is_type(h, a, "Split") || re)
		return unsupp(h, "this pre-tokeniser Sequence", "(known: Split+ByteLevel, Digits+ByteLevel)");
	if (bool_field(a, "invert", 0) || str_field(h, a, "behavior") < 0 ||
	    strcmp(ct_buf_cstr(&h->s), "Isolated") != 0)
		return unsupp(h, "Split other than", "behavior Isolated, invert false");
	pat = ct_jv_get(a, "pattern");
	if (str_field(h, pat != NULL ? pat : a, "Regex") < 0)
		return CT_EFORMAT;
	if (strcmp(ct_buf_cstr(&h->s), LLAMA3_RE) == 0)
		h->b->pre = CT_BPE_PRE_LLAMA3;
	else if (strcmp(ct_buf_cstr(&h->s), QWEN2_RE) == 0)
		h->b->pre = CT_BPE_PRE_QWEN2;
	else
		return ct_error(CT_EUNSUPP, "%s: the Split pattern %s is not one ctune implements "
				"(known: Llama 3's and Qwen2's; see doc/tokenizers.md)",
				h->b->file, ct_buf_cstr(&h->s));
	return 0;
}

/* The BPE model's settings, the normalizer and the decoder. */
static int settings(struct hf *h, const struct ct_jv *root, const struct ct_jv *model)
{
	const struct ct_jv *norm = ct_jv_get(root, "normalizer");
	const struct ct_jv *dec = ct_jv_get(root, "decoder");
	const struct ct_jv *drop = ct_jv_get(model, "dropout");
	static const char *const empty[] = { "unk_token", "continuing_subword_prefix",
					     "end_of_word_suffix" };

	if (!is_type(h, model, "BPE"))
		return unsupp(h, "a model other than", "BPE");
	for (size_t k = 0; k < sizeof(empty) / sizeof(empty[0]); k++) {
		int rc = str_field(h, model, empty[k]);

		if (rc < 0)
			return rc;
		if (h->s.len > 0)
			return unsupp(h, "the BPE setting", empty[k]);
	}
	if (bool_field(model, "byte_fallback", 0))
		return unsupp(h, "the BPE setting", "byte_fallback");
	if (drop != NULL && drop->type != CT_JV_NULL)
		return unsupp(h, "the BPE setting", "dropout");
	h->b->whole_first = bool_field(model, "ignore_merges", 0);
	h->b->nfc = is_type(h, norm, "NFC");
	if (norm != NULL && norm->type != CT_JV_NULL && !h->b->nfc) {
		str_field(h, norm, "type");
		return ct_error(CT_EUNSUPP, "%s: normalizer '%s' is not supported (known: none, "
				"NFC)", h->b->file, ct_buf_cstr(&h->s));
	}
	if (dec != NULL && dec->type != CT_JV_NULL && !is_type(h, dec, "ByteLevel"))
		return unsupp(h, "a decoder other than", "ByteLevel");
	return 0;
}

/* Token text in the byte alphabet -> bytes appended to out; -1 when a
 * character is outside the alphabet. */
static int alpha_bytes(const struct hf *h, const unsigned char *s, size_t n,
		       struct ct_buf *out)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		unsigned char c;

		i += ct_utf8_decode(s + i, n - i, &cp);
		if (cp >= CT_BPE_NALPHA || h->to_byte[cp] < 0)
			return -1;
		c = (unsigned char)h->to_byte[cp];
		if (ct_buf_append(out, &c, 1) < 0)
			return CT_ENOMEM;
	}
	return 0;
}

/* The ids of vocab and added_tokens (NULL: none): V. */
static int count_ids(struct hf *h, const struct ct_jv *vocab, const struct ct_jv *added)
{
	int64_t id;
	int rc;

	h->b->V = 0;
	for (size_t k = 0; k < vocab->n; k++) {
		rc = ct_jv_int(&vocab->items[k], 0, CT_BPE_MAX_VOCAB - 1, "a vocabulary id", &id);
		if (rc < 0)
			return rc;
		if (id >= h->b->V)
			h->b->V = (int)id + 1;
	}
	for (size_t k = 0; added != NULL && k < added->n; k++) {
		rc = ct_jv_int(ct_jv_get(&added->items[k], "id"), 0, CT_BPE_MAX_VOCAB - 1,
			       "an added token's id", &id);
		if (rc < 0)
			return rc;
		if (id >= h->b->V)
			h->b->V = (int)id + 1;
	}
	if (h->b->V < 256)
		return ct_error(CT_EFORMAT, "%s: %d ids, fewer than the 256 bytes",
				h->b->file, h->b->V);
	/* The tables are sized by the largest id, not by the file: a 3 KB
	 * file whose one id is 4,194,303 cost 100 MB (found by fuzzing).
	 * Real files number their tokens densely; holes may at most double
	 * the id space. */
	if ((size_t)h->b->V > 2 * (vocab->n + (added != NULL ? added->n : 0)))
		return ct_error(CT_EFORMAT, "%s: ids up to %d for only %zu tokens (more than "
				"half of the ids would be holes)", h->b->file, h->b->V - 1,
				vocab->n + (added != NULL ? added->n : 0));
	return 0;
}

/* Added tokens: their text and flags; refuse the strip options. */
static int read_added(struct hf *h, const struct ct_jv *added, uint32_t *start,
		      uint32_t *len, struct ct_buf *all)
{
	struct ct_bpe *b = h->b;
	int64_t id;

	b->is_added = calloc((size_t)b->V, 1);
	b->added = malloc(((added ? added->n : 0) + 1) * sizeof(*b->added));
	if (b->is_added == NULL || b->added == NULL)
		return CT_ENOMEM;
	for (size_t k = 0; added != NULL && k < added->n; k++) {
		const struct ct_jv *t = &added->items[k], *c = ct_jv_get(t, "content");

		ct_jv_int(ct_jv_get(t, "id"), 0, b->V - 1, "id", &id);	/* checked */
		if (bool_field(t, "lstrip", 0) || bool_field(t, "rstrip", 0) ||
		    bool_field(t, "single_word", 0))
			return unsupp(h, "added tokens with", "lstrip, rstrip or single_word");
		if (b->is_added[id] || b->nadded >= CT_BPE_MAX_ADDED)
			return ct_error(CT_EFORMAT, "%s: added token %lld given twice, or more "
					"than %d added tokens", b->file, (long long)id,
					CT_BPE_MAX_ADDED);
		if (c == NULL || c->type != CT_JV_STR)
			return ct_error(CT_EFORMAT, "%s: added token %lld has no content", b->file,
					(long long)id);
		start[id] = (uint32_t)all->len;
		if (ct_buf_appends(all, c->str) < 0)
			return CT_ENOMEM;
		len[id] = (uint32_t)(all->len - start[id]);
		if (len[id] == 0 || len[id] > CT_BPE_MAX_ADDED_LEN)
			return ct_error(CT_EFORMAT, "%s: added token %lld is empty or over %d bytes",
					b->file, (long long)id, CT_BPE_MAX_ADDED_LEN);
		b->is_added[id] = 1;
		b->added[b->nadded++] = (uint32_t)id;
		b->added_first[(unsigned char)all->data[start[id]]] = 1;
		if (len[id] > b->added_max)
			b->added_max = len[id];
	}
	return 0;
}

/* model.vocab: bytes of each id that is not an added token. */
static int read_vocab(struct hf *h, const struct ct_jv *vocab, uint32_t *start,
		      uint32_t *len, struct ct_buf *all)
{
	struct ct_bpe *b = h->b;
	int64_t id;

	for (size_t k = 0; k < vocab->n; k++) {
		const char *tok = vocab->keys[k];
		int rc;

		ct_jv_int(&vocab->items[k], 0, b->V - 1, "id", &id);	/* checked */
		if (b->is_added[id])
			continue;	/* an added token decodes as its text */
		if (len[id] != UINT32_MAX)
			return ct_error(CT_EFORMAT, "%s: id %lld given twice in the vocabulary",
					b->file, (long long)id);
		start[id] = (uint32_t)all->len;
		rc = alpha_bytes(h, (const unsigned char *)tok, strlen(tok), all);
		if (rc == CT_ENOMEM)
			return rc;
		len[id] = (uint32_t)(all->len - start[id]);
		if (rc < 0 || len[id] == 0)
			return ct_error(CT_EUNSUPP, "%s: vocabulary token %lld (\"%s\") is not "
					"written in GPT-2's byte alphabet (not a byte-level BPE?)",
					b->file, (long long)id, tok);
	}
	return 0;
}

/* Pack the tokens in id order (holes: empty). */
static int pack(struct ct_bpe *b, const uint32_t *start, const uint32_t *len,
		const struct ct_buf *all)
{
	b->bytes = malloc(all->len + 1);
	b->off = malloc(((size_t)b->V + 1) * sizeof(*b->off));
	if (b->bytes == NULL || b->off == NULL)
		return CT_ENOMEM;
	b->off[0] = 0;
	for (int id = 0; id < b->V; id++) {
		uint32_t l = len[id] == UINT32_MAX ? 0 : len[id];

		memcpy(b->bytes + b->off[id], all->data + start[id], l);
		b->off[id + 1] = b->off[id] + l;
	}
	return 0;
}

/* One side of a merge into bytes; -1 when not a vocabulary token. */
static int merge_side(struct hf *h, const unsigned char *s, size_t n, struct ct_buf *out)
{
	size_t at = out->len;
	int rc = alpha_bytes(h, s, n, out);

	if (rc < 0)
		return rc == CT_ENOMEM ? rc : -1;
	return ct_bpe_lookup(h->b, (const unsigned char *)out->data + at, out->len - at);
}

/* One merge, "a b" or ["a", "b"], into h->s as "a b"; *nl = length of a. */
static int merge_text(struct hf *h, const struct ct_jv *m, int rank, size_t *nl)
{
	const char *sp;

	ct_buf_reset(&h->s);
	if (m->type == CT_JV_ARR && m->n == 2 && m->items[0].type == CT_JV_STR &&
	    m->items[1].type == CT_JV_STR) {
		*nl = strlen(m->items[0].str);
		if (ct_buf_appendf(&h->s, "%s %s", m->items[0].str, m->items[1].str) < 0)
			return CT_ENOMEM;
		return 0;
	}
	sp = m->type == CT_JV_STR ? strchr(m->str, ' ') : NULL;
	if (sp == NULL || strchr(sp + 1, ' ') != NULL)
		return ct_error(CT_EFORMAT, "%s: merge %d is not \"a b\"", h->b->file, rank);
	*nl = (size_t)(sp - m->str);
	return ct_buf_appends(&h->s, m->str);
}

/* model.merges, in rank order. */
static int read_merges(struct hf *h, const struct ct_jv *merges)
{
	struct ct_bpe *b = h->b;
	struct ct_buf cat;
	int rc;

	if (merges->n > CT_BPE_MAX_MERGES)
		return ct_error(CT_ETOOBIG, "%s: more than %d merges", b->file, CT_BPE_MAX_MERGES);
	rc = ct_bpe_pair_alloc(b, merges->n);
	ct_buf_init(&cat, 0);
	for (int rank = 0; rc == 0 && (size_t)rank < merges->n; rank++) {
		const unsigned char *s;
		int l, r, id;
		size_t nl = 0;

		ct_buf_reset(&cat);
		rc = merge_text(h, &merges->items[rank], rank, &nl);
		if (rc < 0)
			break;
		s = (const unsigned char *)h->s.data;
		l = merge_side(h, s, nl, &cat);
		r = l >= 0 ? merge_side(h, s + nl + 1, h->s.len - nl - 1, &cat) : -1;
		id = r >= 0 ? ct_bpe_lookup(b, (const unsigned char *)cat.data, cat.len) : -1;
		if (l == CT_ENOMEM || r == CT_ENOMEM)
			rc = CT_ENOMEM;
		else if (id < 0)
			rc = ct_error(CT_EFORMAT, "%s: merge %d (%s) is not of two vocabulary "
				      "tokens making a third", b->file, rank, ct_buf_cstr(&h->s));
		else
			ct_bpe_pair_insert(b, (uint32_t)l, (uint32_t)r, (uint32_t)rank, (uint32_t)id);
	}
	ct_buf_free(&cat);
	return rc;
}

/* The end-of-text id: the first added token of these names. */
static void find_eot(struct ct_bpe *b)
{
	static const char *const names[] = { "<|endoftext|>", "<|end_of_text|>", "</s>" };

	b->eot = -1;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && b->eot < 0; k++)
		for (int a = 0; a < b->nadded; a++) {
			uint32_t id = b->added[a];

			if (b->off[id + 1] - b->off[id] == strlen(names[k]) &&
			    memcmp(b->bytes + b->off[id], names[k], strlen(names[k])) == 0) {
				b->eot = (int)id;
				break;
			}
		}
}

static int load_tables(struct hf *h, const struct ct_jv *model, const struct ct_jv *added)
{
	const struct ct_jv *vocab = ct_jv_get(model, "vocab"), *merges = ct_jv_get(model, "merges");
	uint32_t *start = NULL, *len = NULL;
	struct ct_buf all;
	int rc;

	if (vocab == NULL || vocab->type != CT_JV_OBJ || merges == NULL ||
	    merges->type != CT_JV_ARR)
		return ct_error(CT_EFORMAT, "%s: model.vocab or model.merges missing", h->b->file);
	if (added != NULL && added->type != CT_JV_ARR)
		added = NULL;	/* null: none */
	rc = count_ids(h, vocab, added);
	ct_buf_init(&all, 0);
	if (rc == 0) {
		start = calloc((size_t)h->b->V, sizeof(*start));
		len = malloc((size_t)h->b->V * sizeof(*len));
		rc = start && len ? 0 : CT_ENOMEM;
	}
	if (rc == 0) {
		memset(len, 0xFF, (size_t)h->b->V * sizeof(*len));
		rc = read_added(h, added, start, len, &all);
	}
	if (rc == 0)
		rc = read_vocab(h, vocab, start, len, &all);
	if (rc == 0)
		rc = pack(h->b, start, len, &all);
	if (rc == 0)
		rc = ct_bpe_build_vocab_hash(h->b);
	if (rc == 0)
		rc = ct_bpe_byte_ids(h->b);
	if (rc == 0)
		rc = read_merges(h, merges);
	ct_buf_free(&all);
	free(start);
	free(len);
	return rc;
}

int ct_bpe_load_hf(struct ct_bpe *b, const char *json, size_t n)
{
	const struct ct_jv_limits lim = { .max_bytes = MAX_BYTES, .max_values = MAX_VALUES,
					  .max_depth = 64 };
	struct ct_jv *root = NULL;
	const struct ct_jv *model;
	struct hf h = { .b = b };
	int rc;

	ct_bpe_alphabet(h.to_byte);
	ct_buf_init(&h.s, 0);
	rc = ct_jv_parse(json, n, &lim, b->file, &root);
	if (rc < 0)
		goto out;
	model = root->type == CT_JV_OBJ ? ct_jv_get(root, "model") : NULL;
	if (model == NULL) {
		rc = ct_error(CT_EFORMAT, "%s: no \"model\" (not a tokenizer.json?)", b->file);
		goto out;
	}
	rc = settings(&h, root, model);
	if (rc == 0)
		rc = pre_tokenizer(&h, root);
	if (rc == 0)
		rc = load_tables(&h, model, ct_jv_get(root, "added_tokens"));
	if (rc == 0)
		find_eot(b);
	if (rc == 0)
		rc = ct_bpe_post_processor(b, root);
out:
	ct_buf_free(&h.s);
	ct_jv_free(root);
	return rc;
}
