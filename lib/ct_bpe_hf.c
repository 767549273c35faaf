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
#include "ct_jread.h"
#include "ct_unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES (1 << 22)	/* Llama 3: 0.7 M values; 80 MB of nodes at most */

/* The Split regexes this engine implements (ct_bpe_split.c). */
static const char LLAMA3_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
	" ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_RE[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
	" ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct hf {
	struct ct_bpe *b;
	const struct ct_jread *j;
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
static int str_field(struct hf *h, int obj, const char *key)
{
	int v = ct_jread_get(h->j, obj, key);

	ct_buf_reset(&h->s);
	if (v >= 0 && ct_jread_type(h->j, v) == CT_JREAD_STRING)
		return ct_jread_str(h->j, v, &h->s) < 0 ? CT_EFORMAT : ct_buf_append(&h->s, "", 0);
	if (v >= 0 && ct_jread_type(h->j, v) != CT_JREAD_NULL)
		return ct_error(CT_EFORMAT, "%s: \"%s\" is not a string", h->b->file, key);
	return ct_buf_append(&h->s, "", 0);
}

/* A boolean field: 1, 0, or dflt when missing or null. */
static int bool_field(const struct hf *h, int obj, const char *key, int dflt)
{
	int v = ct_jread_get(h->j, obj, key);

	if (v < 0 || ct_jread_type(h->j, v) == CT_JREAD_NULL)
		return dflt;
	return ct_jread_type(h->j, v) == CT_JREAD_TRUE;
}

static int is_type(struct hf *h, int obj, const char *type)
{
	return obj >= 0 && ct_jread_type(h->j, obj) == CT_JREAD_OBJECT &&
	       str_field(h, obj, "type") == 0 && strcmp(ct_buf_cstr(&h->s), type) == 0;
}

/* ByteLevel pre-tokeniser with no prefix space; its use_regex into *re.
 * 0, 1 when pt is not a ByteLevel, or CT_EUNSUPP. */
static int byte_level(struct hf *h, int pt, int *re)
{
	if (!is_type(h, pt, "ByteLevel"))
		return 1;
	if (bool_field(h, pt, "add_prefix_space", 0))
		return unsupp(h, "ByteLevel with", "add_prefix_space");
	*re = bool_field(h, pt, "use_regex", 1);
	return 0;
}

/* Recognise the pre-tokeniser: one ByteLevel, or a Sequence of a known
 * Split or Digits and a ByteLevel. */
static int pre_tokenizer(struct hf *h, int root)
{
	int pt = ct_jread_get(h->j, root, "pre_tokenizer"), list, a, bl, re = 0, rc;

	rc = pt >= 0 ? byte_level(h, pt, &re) : 1;
	if (rc < 0)
		return rc;
	if (rc == 0) {
		if (!re)
			return unsupp(h, "a ByteLevel pre-tokeniser without", "its regex");
		h->b->pre = CT_BPE_PRE_GPT2;
		return 0;
	}
	list = pt >= 0 && is_type(h, pt, "Sequence") ? ct_jread_get(h->j, pt, "pretokenizers") : -1;
	if (list < 0 || ct_jread_type(h->j, list) != CT_JREAD_ARRAY || ct_jread_count(h->j, list) != 2) {
		if (pt >= 0)
			str_field(h, pt, "type");
		return ct_error(CT_EUNSUPP, "%s: pre-tokeniser '%s' is not supported (known: "
				"ByteLevel, or a Sequence of Split or Digits and ByteLevel)",
				h->b->file, pt >= 0 ? ct_buf_cstr(&h->s) : "none");
	}
	a = ct_jread_first(h->j, list);
	bl = ct_jread_next(h->j, a);
	rc = byte_level(h, bl, &re);
	if (rc != 0)
		return rc < 0 ? rc : unsupp(h, "a pre-tokeniser Sequence that does not end in",
					    "ByteLevel");
	if (is_type(h, a, "Digits")) {
		if (!bool_field(h, a, "individual_digits", 0) || !re)
			return unsupp(h, "Digits pre-tokeniser other than", "individual digits then GPT-2's regex");
		h->b->pre = CT_BPE_PRE_DIGITS_GPT2;
		return 0;
	}
	if (!is_type(h, a, "Split") || re)
		return unsupp(h, "this pre-tokeniser Sequence", "(known: Split+ByteLevel, Digits+ByteLevel)");
	if (bool_field(h, a, "invert", 0) || str_field(h, a, "behavior") < 0 ||
	    strcmp(ct_buf_cstr(&h->s), "Isolated") != 0)
		return unsupp(h, "Split other than", "behavior Isolated, invert false");
	if (str_field(h, ct_jread_get(h->j, a, "pattern") >= 0 ?
		      ct_jread_get(h->j, a, "pattern") : a, "Regex") < 0)
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
static int settings(struct hf *h, int root, int model)
{
	int norm = ct_jread_get(h->j, root, "normalizer");
	int dec = ct_jread_get(h->j, root, "decoder");
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
	if (bool_field(h, model, "byte_fallback", 0))
		return unsupp(h, "the BPE setting", "byte_fallback");
	if (ct_jread_get(h->j, model, "dropout") >= 0 &&
	    ct_jread_type(h->j, ct_jread_get(h->j, model, "dropout")) != CT_JREAD_NULL)
		return unsupp(h, "the BPE setting", "dropout");
	h->b->whole_first = bool_field(h, model, "ignore_merges", 0);
	h->b->nfc = norm >= 0 && is_type(h, norm, "NFC");
	if (norm >= 0 && ct_jread_type(h->j, norm) != CT_JREAD_NULL && !h->b->nfc) {
		str_field(h, norm, "type");
		return ct_error(CT_EUNSUPP, "%s: normalizer '%s' is not supported (known: none, "
				"NFC)", h->b->file, ct_buf_cstr(&h->s));
	}
	if (dec >= 0 && ct_jread_type(h->j, dec) != CT_JREAD_NULL && !is_type(h, dec, "ByteLevel"))
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

/* The ids of vocab and added_tokens: V, and each id used once. */
static int count_ids(struct hf *h, int vocab, int added)
{
	long long id;
	int rc;

	h->b->V = 0;
	for (int k = ct_jread_first(h->j, vocab); k >= 0; k = ct_jread_next(h->j, k)) {
		rc = ct_jread_int(h->j, k + 1, 0, CT_BPE_MAX_VOCAB - 1, &id);
		if (rc < 0)
			return rc;
		if (id >= h->b->V)
			h->b->V = (int)id + 1;
	}
	for (int k = added < 0 ? -1 : ct_jread_first(h->j, added); k >= 0;
	     k = ct_jread_next(h->j, k)) {
		int v = ct_jread_get(h->j, k, "id");

		if (v < 0 || (rc = ct_jread_int(h->j, v, 0, CT_BPE_MAX_VOCAB - 1, &id)) < 0)
			return ct_error(CT_EFORMAT, "%s: an added token without a valid id",
					h->b->file);
		if (id >= h->b->V)
			h->b->V = (int)id + 1;
	}
	if (h->b->V < 256)
		return ct_error(CT_EFORMAT, "%s: %d ids, fewer than the 256 bytes",
				h->b->file, h->b->V);
	return 0;
}

/* Added tokens: their text and flags; refuse the strip options. */
static int read_added(struct hf *h, int added, uint32_t *start, uint32_t *len,
		      struct ct_buf *all)
{
	struct ct_bpe *b = h->b;
	long long id;

	b->is_added = calloc((size_t)b->V, 1);
	b->added = malloc(((size_t)(added < 0 ? 0 : ct_jread_count(h->j, added)) + 1) *
			  sizeof(*b->added));
	if (b->is_added == NULL || b->added == NULL)
		return CT_ENOMEM;
	for (int k = added < 0 ? -1 : ct_jread_first(h->j, added); k >= 0;
	     k = ct_jread_next(h->j, k)) {
		int c = ct_jread_get(h->j, k, "content"), rc;

		ct_jread_int(h->j, ct_jread_get(h->j, k, "id"), 0, b->V - 1, &id);
		if (bool_field(h, k, "lstrip", 0) || bool_field(h, k, "rstrip", 0) ||
		    bool_field(h, k, "single_word", 0))
			return unsupp(h, "added tokens with", "lstrip, rstrip or single_word");
		if (b->is_added[id] || b->nadded >= CT_BPE_MAX_ADDED)
			return ct_error(CT_EFORMAT, "%s: added token %lld given twice, or more "
					"than %d added tokens", b->file, id, CT_BPE_MAX_ADDED);
		start[id] = (uint32_t)all->len;
		if (c < 0 || (rc = ct_jread_str(h->j, c, all)) < 0)
			return ct_error(CT_EFORMAT, "%s: added token %lld has no content", b->file, id);
		len[id] = (uint32_t)(all->len - start[id]);
		if (len[id] == 0 || len[id] > CT_BPE_MAX_ADDED_LEN)
			return ct_error(CT_EFORMAT, "%s: added token %lld is empty or over %d bytes",
					b->file, id, CT_BPE_MAX_ADDED_LEN);
		b->is_added[id] = 1;
		b->added[b->nadded++] = (uint32_t)id;
		b->added_first[(unsigned char)all->data[start[id]]] = 1;
		if (len[id] > b->added_max)
			b->added_max = len[id];
	}
	return 0;
}

/* model.vocab: bytes of each id that is not an added token. */
static int read_vocab(struct hf *h, int vocab, uint32_t *start, uint32_t *len,
		      struct ct_buf *all)
{
	struct ct_bpe *b = h->b;
	long long id;

	for (int k = ct_jread_first(h->j, vocab); k >= 0; k = ct_jread_next(h->j, k)) {
		int rc;

		ct_jread_int(h->j, k + 1, 0, b->V - 1, &id);
		if (b->is_added[id])
			continue;	/* an added token decodes as its text */
		if (len[id] != UINT32_MAX)
			return ct_error(CT_EFORMAT, "%s: id %lld given twice in the vocabulary",
					b->file, id);
		ct_buf_reset(&h->s);
		rc = ct_jread_str(h->j, k, &h->s);
		if (rc < 0)
			return rc;
		start[id] = (uint32_t)all->len;
		rc = alpha_bytes(h, (const unsigned char *)h->s.data, h->s.len, all);
		if (rc == CT_ENOMEM)
			return rc;
		len[id] = (uint32_t)(all->len - start[id]);
		if (rc < 0 || len[id] == 0)
			return ct_error(CT_EUNSUPP, "%s: vocabulary token %lld (\"%s\") is not "
					"written in GPT-2's byte alphabet (not a byte-level BPE?)",
					b->file, id, ct_buf_cstr(&h->s));
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

/* model.merges, in rank order. */
static int read_merges(struct hf *h, int merges)
{
	struct ct_bpe *b = h->b;
	struct ct_buf cat;
	int rank = 0, rc;

	if (ct_jread_count(h->j, merges) > CT_BPE_MAX_MERGES)
		return ct_error(CT_ETOOBIG, "%s: more than %d merges", b->file, CT_BPE_MAX_MERGES);
	rc = ct_bpe_pair_alloc(b, (size_t)ct_jread_count(h->j, merges));
	ct_buf_init(&cat, 0);
	for (int k = ct_jread_first(h->j, merges); k >= 0 && rc == 0; k = ct_jread_next(h->j, k), rank++) {
		const unsigned char *s;
		const unsigned char *sp;
		int l, r, id;
		size_t nl;

		ct_buf_reset(&h->s);
		ct_buf_reset(&cat);
		if (ct_jread_type(h->j, k) == CT_JREAD_ARRAY && ct_jread_count(h->j, k) == 2) {
			int a = ct_jread_first(h->j, k), c;

			rc = ct_jread_str(h->j, a, &h->s);
			nl = h->s.len;
			c = ct_buf_append(&h->s, " ", 1);
			if (rc == 0 && c == 0)
				rc = ct_jread_str(h->j, ct_jread_next(h->j, a), &h->s);
		} else {
			rc = ct_jread_str(h->j, k, &h->s);
			sp = rc == 0 ? memchr(h->s.data, ' ', h->s.len) : NULL;
			nl = sp ? (size_t)(sp - h->s.data) : 0;
			if (rc == 0 && (sp == NULL || memchr(sp + 1, ' ', h->s.len - nl - 1)))
				rc = ct_error(CT_EFORMAT, "%s: merge %d is not \"a b\"", b->file, rank);
		}
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

static int load_tables(struct hf *h, int model, int added)
{
	int vocab = ct_jread_get(h->j, model, "vocab"), merges = ct_jread_get(h->j, model, "merges");
	uint32_t *start = NULL, *len = NULL;
	struct ct_buf all;
	int rc;

	if (vocab < 0 || ct_jread_type(h->j, vocab) != CT_JREAD_OBJECT || merges < 0 ||
	    ct_jread_type(h->j, merges) != CT_JREAD_ARRAY)
		return ct_error(CT_EFORMAT, "%s: model.vocab or model.merges missing", h->b->file);
	if (added >= 0 && ct_jread_type(h->j, added) != CT_JREAD_ARRAY)
		added = -1;	/* null: none */
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
	struct ct_jread *j = NULL;
	struct hf h = { .b = b };
	int rc, root, model;

	ct_bpe_alphabet(h.to_byte);
	ct_buf_init(&h.s, 0);
	rc = ct_jread_parse(json, n, MAX_NODES, &j);
	if (rc < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", ct_errmsg(rc));
		rc = ct_error(rc, "%s: %s", b->file, msg);
		goto out;
	}
	h.j = j;
	root = ct_jread_root(j);
	model = ct_jread_type(j, root) == CT_JREAD_OBJECT ? ct_jread_get(j, root, "model") : -1;
	if (model < 0) {
		rc = ct_error(CT_EFORMAT, "%s: no \"model\" (not a tokenizer.json?)", b->file);
		goto out;
	}
	rc = settings(&h, root, model);
	if (rc == 0)
		rc = pre_tokenizer(&h, root);
	if (rc == 0)
		rc = load_tables(&h, model, ct_jread_get(j, root, "added_tokens"));
	if (rc == 0)
		find_eot(b);
out:
	ct_buf_free(&h.s);
	ct_jread_free(j);
	return rc;
}
