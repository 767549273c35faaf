/*
 * ct_gguf_tok.c - tokenizer.json + tokenizer_config.json into GGUF's
 * tokenizer keys (see ct_gguf_tok.h). Reads the files as JSON trees
 * (ct_jv) independently of the encoder in ct_bpe*: the GGUF wants the
 * vocabulary's strings as the file spells them, not their bytes.
 */
#include "ct_gguf_tok.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_jv.h"
#include "ct_tok.h"

#define TOK_JSON_MAX ((size_t)256 << 20)
#define TOK_CONFIG_MAX ((size_t)64 << 20)

enum { TT_NORMAL = 1, TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5 };

/* The split patterns of Llama 3 and Qwen2 (tokenizer.json's Split Regex). */
static const char llama3_split[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
	"\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char qwen2_split[] =
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}"
	"\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static const char *jstr(const struct ct_jv *o, const char *key)
{
	const struct ct_jv *v = ct_jv_get(o, key);

	return v != NULL && v->type == CT_JV_STR ? v->str : NULL;
}

static int is_type(const struct ct_jv *o, const char *type)
{
	const char *t = jstr(o, "type");

	return t != NULL && strcmp(t, type) == 0;
}

/* GGUF's name of the pre-tokenizer p (tokenizer.json's pre_tokenizer). */
static const char *pre_name(const struct ct_jv *p)
{
	const struct ct_jv *seq = ct_jv_get(p, "pretokenizers");
	const struct ct_jv *a, *b;
	const struct ct_jv *use_regex;

	if (is_type(p, "ByteLevel")) {
		use_regex = ct_jv_get(p, "use_regex");
		return use_regex == NULL || use_regex->type == CT_JV_TRUE ? "gpt2" : "default";
	}
	if (!is_type(p, "Sequence") || seq == NULL || seq->type != CT_JV_ARR || seq->n != 2)
		return "default";
	a = &seq->items[0];
	b = &seq->items[1];
	if (is_type(a, "Split") && is_type(b, "ByteLevel")) {
		const char *re = jstr(ct_jv_get(a, "pattern"), "Regex");

		if (re != NULL && strcmp(re, llama3_split) == 0)
			return "llama-bpe";
		if (re != NULL && strcmp(re, qwen2_split) == 0)
			return "qwen2";
	}
	if (is_type(a, "Digits") && is_type(b, "ByteLevel")) {
		const struct ct_jv *ind = ct_jv_get(a, "individual_digits");

		use_regex = ct_jv_get(b, "use_regex");
		if (ind != NULL && ind->type == CT_JV_TRUE &&
		    (use_regex == NULL || use_regex->type == CT_JV_TRUE))
			return "smollm";
	}
	return "default";
}

/* What the tokens and merges arrays are built from. */
struct vocab {
	const char **s;		/* V strings, borrowed from the tree or pads[] */
	size_t *len;
	int32_t *type;
	char *pads;		/* "[PAD<id>]" texts, 16 bytes each */
	int V, n;		/* n: the tokenizer's own ids, 0..n-1 */
};

static void vocab_free(struct vocab *v)
{
	free(v->s);
	free(v->len);
	free(v->type);
	free(v->pads);
}

static int set_id(struct vocab *v, int64_t id, const char *s, int type, const char *file)
{
	if (id >= v->V)
		return ct_error(CT_EMISMATCH, "%s: token id %lld, the model has %d rows", file,
				(long long)id, v->V);
	v->s[id] = s;
	v->len[id] = strlen(s);
	v->type[id] = type;
	if (id + 1 > v->n)
		v->n = (int)id + 1;
	return 0;
}

/* model.vocab and added_tokens of tokenizer.json into v (V slots). */
static int read_vocab(const struct ct_jv *root, int V, const char *file, struct vocab *v)
{
	const struct ct_jv *voc = ct_jv_get(ct_jv_get(root, "model"), "vocab");
	const struct ct_jv *added = ct_jv_get(root, "added_tokens");
	int64_t id;
	int rc = 0;

	if (voc == NULL || voc->type != CT_JV_OBJ)
		return ct_error(CT_EFORMAT, "%s: model.vocab is not an object", file);
	v->V = V;
	v->s = calloc((size_t)V, sizeof(*v->s));
	v->len = calloc((size_t)V, sizeof(*v->len));
	v->type = calloc((size_t)V, sizeof(*v->type));
	v->pads = calloc((size_t)V, 16);
	if (!v->s || !v->len || !v->type || !v->pads)
		return ct_error(CT_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < voc->n; i++) {
		rc = ct_jv_int(&voc->items[i], 0, CT_VOCAB_MAX - 1, "model.vocab id", &id);
		if (rc == 0)
			rc = set_id(v, id, voc->keys[i], TT_NORMAL, file);
	}
	for (size_t i = 0; rc == 0 && added != NULL && i < added->n; i++) {
		const struct ct_jv *a = &added->items[i], *sp = ct_jv_get(a, "special");
		const char *content = jstr(a, "content");

		rc = ct_jv_int(ct_jv_get(a, "id"), 0, CT_VOCAB_MAX - 1, "added_tokens id", &id);
		if (rc == 0 && content == NULL)
			rc = ct_error(CT_EFORMAT, "%s: added_tokens[%zu] has no content", file, i);
		if (rc == 0)
			rc = set_id(v, id, content, sp != NULL && sp->type == CT_JV_TRUE ? TT_CONTROL
									   : TT_USER, file);
	}
	for (int i = 0; rc == 0 && i < V; i++) {
		if (v->s[i] != NULL)
			continue;
		snprintf(v->pads + 16 * (size_t)i, 16, "[PAD%d]", i);
		v->s[i] = v->pads + 16 * (size_t)i;
		v->len[i] = strlen(v->s[i]);
		v->type[i] = TT_UNUSED;
	}
	return rc < 0 ? ct_error(rc, "%s: %s", file, ct_errmsg(rc)) : 0;
}

/* model.merges: "a b" strings, or [a, b] pairs joined here (into *joined). */
static int add_merges(struct ct_gguf *g, const struct ct_jv *root, const char *file)
{
	const struct ct_jv *m = ct_jv_get(ct_jv_get(root, "model"), "merges");
	const char **s = NULL;
	size_t *len = NULL, total = 0;
	char *joined = NULL, *p;
	int rc = 0;

	if (m == NULL || m->type != CT_JV_ARR)
		return ct_error(CT_EFORMAT, "%s: model.merges is not an array", file);
	for (size_t i = 0; i < m->n; i++) {
		const struct ct_jv *e = &m->items[i];

		if (e->type == CT_JV_ARR && e->n == 2 && e->items[0].type == CT_JV_STR &&
		    e->items[1].type == CT_JV_STR)
			total += strlen(e->items[0].str) + strlen(e->items[1].str) + 2;
		else if (e->type != CT_JV_STR)
			return ct_error(CT_EFORMAT, "%s: model.merges[%zu] is neither \"a b\" nor "
					"[a, b]", file, i);
	}
	s = calloc(m->n + 1, sizeof(*s));
	len = calloc(m->n + 1, sizeof(*len));
	p = joined = malloc(total + 1);
	if (s == NULL || len == NULL || joined == NULL) {
		rc = ct_error(CT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct ct_jv *e = &m->items[i];

		if (e->type == CT_JV_STR) {
			s[i] = e->str;
			len[i] = strlen(e->str);
			continue;
		}
		len[i] = (size_t)sprintf(p, "%s %s", e->items[0].str, e->items[1].str);
		s[i] = p;
		p += len[i] + 1;
	}
	rc = ct_gguf_kv_arr_str(g, "tokenizer.ggml.merges", s, len, m->n);
out:
	free(s);
	free(len);
	free(joined);
	return rc;
}

/* The id of token text t (an added token first, as Hugging Face looks
 * them up), or -1. */
static int64_t find_id(const struct vocab *v, const char *t)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < v->n; i++)
			if ((pass == 0) == (v->type[i] != TT_NORMAL) && strcmp(v->s[i], t) == 0)
				return i;
	return -1;
}

/* A token of tokenizer_config.json: a string, or an AddedToken object. */
static const char *token_text(const struct ct_jv *cfg, const char *key)
{
	const struct ct_jv *t = ct_jv_get(cfg, key);

	if (t != NULL && t->type == CT_JV_OBJ)
		t = ct_jv_get(t, "content");
	return t != NULL && t->type == CT_JV_STR ? t->str : NULL;
}

static const struct ct_jv *chat_template(const struct ct_jv *cfg)
{
	const struct ct_jv *t = ct_jv_get(cfg, "chat_template");

	for (size_t i = 0; t != NULL && t->type == CT_JV_ARR && i < t->n; i++) {
		const char *name = jstr(&t->items[i], "name");

		if (name != NULL && strcmp(name, "default") == 0)
			return ct_jv_get(&t->items[i], "template");
	}
	return t;
}

/* Does tokenizer.json's post_processor template start with bos? */
static int template_adds_bos(const struct ct_jv *root, const char *bos)
{
	const struct ct_jv *pp = ct_jv_get(root, "post_processor"), *single, *first;

	if (pp != NULL && is_type(pp, "Sequence")) {	/* ByteLevel + TemplateProcessing */
		const struct ct_jv *procs = ct_jv_get(pp, "processors");

		for (size_t i = 0; procs != NULL && procs->type == CT_JV_ARR && i < procs->n; i++)
			if (is_type(&procs->items[i], "TemplateProcessing"))
				pp = &procs->items[i];
	}
	if (pp == NULL || bos == NULL || !is_type(pp, "TemplateProcessing"))
		return 0;
	single = ct_jv_get(pp, "single");
	if (single == NULL || single->type != CT_JV_ARR || single->n == 0)
		return 0;
	first = ct_jv_get(&single->items[0], "SpecialToken");
	return first != NULL && jstr(first, "id") != NULL && strcmp(jstr(first, "id"), bos) == 0;
}

/* The special tokens, add_bos_token and the chat template of
 * tokenizer_config.json (when dir has one). */
static int add_config(struct ct_gguf *g, const char *dir, const struct ct_jv *root,
		      const struct vocab *v)
{
	static const struct { const char *cfg, *gguf; } ids[] = {
		{ "bos_token", "tokenizer.ggml.bos_token_id" },
		{ "eos_token", "tokenizer.ggml.eos_token_id" },
		{ "unk_token", "tokenizer.ggml.unknown_token_id" },
		{ "pad_token", "tokenizer.ggml.padding_token_id" },
	};
	struct ct_jv_limits lim = { TOK_CONFIG_MAX, 1u << 22, 64 };
	struct ct_jv *cfg = NULL;
	const struct ct_jv *t, *ab;
	unsigned char *data = NULL;
	char path[4096];
	size_t n;
	int rc = ct_path_join(path, sizeof(path), dir, "tokenizer_config.json");

	if (rc == 0 && !ct_file_exists(path))
		return 0;
	if (rc == 0)
		rc = ct_file_read_all(path, lim.max_bytes, &data, &n);
	if (rc == 0)
		rc = ct_jv_parse((const char *)data, n, &lim, path, &cfg);
	for (size_t i = 0; rc == 0 && i < sizeof(ids) / sizeof(ids[0]); i++) {
		const char *text = token_text(cfg, ids[i].cfg);
		int64_t id = text != NULL ? find_id(v, text) : -1;

		if (id >= 0)
			rc = ct_gguf_kv_u32(g, ids[i].gguf, (uint32_t)id);
	}
	ab = ct_jv_get(cfg, "add_bos_token");
	if (rc == 0 && ab != NULL && (ab->type == CT_JV_TRUE || ab->type == CT_JV_FALSE))
		rc = ct_gguf_kv_bool(g, "tokenizer.ggml.add_bos_token", ab->type == CT_JV_TRUE);
	else if (rc == 0 && template_adds_bos(root, token_text(cfg, "bos_token")))
		rc = ct_gguf_kv_bool(g, "tokenizer.ggml.add_bos_token", 1);
	t = rc == 0 ? chat_template(cfg) : NULL;
	if (t != NULL && t->type == CT_JV_STR)
		rc = ct_gguf_kv_str(g, "tokenizer.chat_template", t->str);
	ct_jv_free(cfg);
	free(data);
	return rc;
}

int ct_gguf_add_tokenizer(struct ct_gguf *g, const char *dir, int V, const char **pre)
{
	struct ct_jv_limits lim = { TOK_JSON_MAX, 1u << 24, 64 };
	struct ct_jv *root = NULL;
	struct vocab v = { 0 };
	const struct ct_jv *model, *bf;
	unsigned char *data = NULL;
	const char *p = "default";
	char path[4096];
	size_t n;
	int rc = ct_path_join(path, sizeof(path), dir, "tokenizer.json");

	if (rc == 0)
		rc = ct_file_read_all(path, lim.max_bytes, &data, &n);
	if (rc == 0)
		rc = ct_jv_parse((const char *)data, n, &lim, path, &root);
	if (rc < 0)
		goto out;
	model = ct_jv_get(root, "model");
	bf = ct_jv_get(model, "byte_fallback");
	if (!is_type(model, "BPE") || (bf != NULL && bf->type == CT_JV_TRUE) ||
	    !is_type(ct_jv_get(root, "decoder"), "ByteLevel")) {
		rc = ct_error(CT_EUNSUPP, "%s: only byte-level BPE tokenizers (GPT-2, Llama 3, "
			      "Qwen, SmolLM2) go into GGUF; this one is %s%s", path,
			      jstr(model, "type") ? jstr(model, "type") : "of no known type",
			      bf != NULL && bf->type == CT_JV_TRUE ? " with byte fallback "
			      "(SentencePiece style)" : "");
		goto out;
	}
	p = pre_name(ct_jv_get(root, "pre_tokenizer"));
	rc = read_vocab(root, V, path, &v);
	if (rc == 0)
		rc = ct_gguf_kv_str(g, "tokenizer.ggml.model", "gpt2");
	if (rc == 0)
		rc = ct_gguf_kv_str(g, "tokenizer.ggml.pre", p);
	if (rc == 0)
		rc = ct_gguf_kv_arr_str(g, "tokenizer.ggml.tokens", v.s, v.len, (size_t)V);
	if (rc == 0)
		rc = ct_gguf_kv_arr_i32(g, "tokenizer.ggml.token_type", v.type, (size_t)V);
	if (rc == 0)
		rc = add_merges(g, root, path);
	if (rc == 0)
		rc = add_config(g, dir, root, &v);
	if (rc == 0 && pre != NULL)
		*pre = p;
out:
	vocab_free(&v);
	ct_jv_free(root);
	free(data);
	return rc;
}
