/*
 * ct_tokenizer.c - the tokenizer registry, the token-id vector, and the
 * "bytes" tokenizer (see ct_tokenizer.h). Byte-level BPE (GPT-2's, and
 * those of a tokenizer.json) lives in ct_bpe*.c; this file only
 * dispatches to it.
 */
#include "config.h"
#include "ct_tokenizer.h"
#include "ct_bpe.h"
#include "ct_err.h"
#include "ct_os.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum tk_kind { TK_BYTES, TK_GPT2, TK_HF };

struct ct_tokenizer {
	enum tk_kind kind;
	struct ct_bpe *bpe;		/* TK_GPT2, TK_HF */
	unsigned char bytes[256];	/* TK_BYTES: id -> its byte */
	char *path;			/* TK_HF: the tokenizer.json */
};

int ct_tokvec_push(struct ct_tokvec *tv, uint32_t id)
{
	if (tv->n == tv->cap) {
		size_t cap = tv->cap ? tv->cap * 2 : 4096;
		uint32_t *v;

		if (tv->n >= (size_t)INT32_MAX)
			return ct_error(CT_ETOOBIG, "more than %d tokens", INT32_MAX);
		v = realloc(tv->v, cap * sizeof(*v));
		if (v == NULL)
			return CT_ENOMEM;
		tv->v = v;
		tv->cap = cap;
	}
	tv->v[tv->n++] = id;
	return 0;
}

void ct_tokvec_free(struct ct_tokvec *tv)
{
	free(tv->v);
	memset(tv, 0, sizeof(*tv));
}

int ct_tokenizer_is_path(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n > 0 && (strchr(name, '/') != NULL ||
			 (n > 5 && strcmp(name + n - 5, ".json") == 0));
}

/* A directory stands for its tokenizer.json. */
static int open_hf(struct ct_tokenizer *tk, const char *name)
{
	struct stat st;
	size_t n = strlen(name);

	if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
		tk->path = malloc(n + sizeof("/tokenizer.json"));
		if (tk->path != NULL)
			snprintf(tk->path, n + sizeof("/tokenizer.json"), "%s%stokenizer.json",
				 name, n > 0 && name[n - 1] == '/' ? "" : "/");
	} else {
		tk->path = strdup(name);
	}
	if (tk->path == NULL)
		return CT_ENOMEM;
	return ct_bpe_open_hf(tk->path, &tk->bpe);
}

int ct_tokenizer_open(const char *name, struct ct_tokenizer **out)
{
	struct ct_tokenizer *tk;
	int rc = 0;

	*out = NULL;
	tk = calloc(1, sizeof(*tk));
	if (tk == NULL)
		return CT_ENOMEM;
	if (name != NULL && strcmp(name, "bytes") == 0) {
		tk->kind = TK_BYTES;
		for (int i = 0; i < 256; i++)
			tk->bytes[i] = (unsigned char)i;
	} else if (name != NULL && strcmp(name, "gpt2") == 0) {
		tk->kind = TK_GPT2;
		rc = ct_bpe_open_gpt2(&tk->bpe);
	} else if (ct_tokenizer_is_path(name)) {
		tk->kind = TK_HF;
		rc = open_hf(tk, name);
	} else {
		rc = ct_error(CT_EINVAL, "unknown tokenizer '%s' (known: bytes, gpt2, or "
			      "the path of a tokenizer.json)", name ? name : "");
	}
	if (rc < 0) {
		ct_tokenizer_free(tk);
		return rc;
	}
	*out = tk;
	return 0;
}

void ct_tokenizer_free(struct ct_tokenizer *tk)
{
	if (tk == NULL)
		return;
	ct_bpe_free(tk->bpe);
	free(tk->path);
	free(tk);
}

const char *ct_tokenizer_name(const struct ct_tokenizer *tk)
{
	if (tk->kind == TK_HF)
		return tk->path;
	return tk->kind == TK_BYTES ? "bytes" : "gpt2";
}

int ct_tokenizer_vocab(const struct ct_tokenizer *tk)
{
	return tk->kind == TK_BYTES ? 256 : ct_bpe_vocab(tk->bpe);
}

int ct_tokenizer_eot(const struct ct_tokenizer *tk)
{
	return tk->kind == TK_BYTES ? -1 : ct_bpe_eot(tk->bpe);
}

int ct_tokenizer_is_special(const struct ct_tokenizer *tk, uint32_t id)
{
	if (tk->kind == TK_BYTES)
		return 0;
	return (int)id == ct_bpe_eot(tk->bpe) || ct_bpe_is_added(tk->bpe, id);
}

static int push_all(struct ct_tokvec *out, const uint32_t *ids, int n)
{
	int rc = 0;

	for (int i = 0; rc == 0 && i < n; i++)
		rc = ct_tokvec_push(out, ids[i]);
	return rc;
}

int ct_tokenizer_doc_open(const struct ct_tokenizer *tk, struct ct_tokvec *out)
{
	const uint32_t *pre, *post;
	int npre, npost, eot = ct_tokenizer_eot(tk);

	if (tk->kind != TK_BYTES && ct_bpe_template(tk->bpe, &pre, &npre, &post, &npost))
		return push_all(out, pre, npre);
	return eot >= 0 ? ct_tokvec_push(out, (uint32_t)eot) : 0;
}

int ct_tokenizer_has_template(const struct ct_tokenizer *tk)
{
	const uint32_t *pre, *post;
	int npre, npost;

	return tk->kind != TK_BYTES && ct_bpe_template(tk->bpe, &pre, &npre, &post, &npost);
}

int ct_tokenizer_doc_close(const struct ct_tokenizer *tk, struct ct_tokvec *out)
{
	const uint32_t *pre, *post;
	int npre, npost;

	if (tk->kind != TK_BYTES && ct_bpe_template(tk->bpe, &pre, &npre, &post, &npost))
		return push_all(out, post, npost);
	return 0;
}

int ct_tokenizer_encode(const struct ct_tokenizer *tk, const void *text,
			size_t n, struct ct_tokvec *out)
{
	const unsigned char *p = text;
	int rc;

	if (tk->kind != TK_BYTES)
		return ct_bpe_encode(tk->bpe, p, n, out);
	for (size_t i = 0; i < n; i++) {
		rc = ct_tokvec_push(out, p[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ct_tokenizer_encode_part(const struct ct_tokenizer *tk, const void *text,
			     size_t n, int final, struct ct_tokvec *out,
			     size_t *used)
{
	int rc;

	*used = 0;
	if (tk->kind != TK_BYTES)
		return ct_bpe_encode_part(tk->bpe, text, n, final, out, used);
	rc = ct_tokenizer_encode(tk, text, n, out);
	if (rc == 0)
		*used = n;
	return rc;
}

const unsigned char *ct_tokenizer_token(const struct ct_tokenizer *tk,
					int id, size_t *len)
{
	if (tk->kind != TK_BYTES)
		return ct_bpe_token(tk->bpe, id, len);
	if (id < 0 || id > 255) {
		*len = 0;
		return NULL;
	}
	*len = 1;
	return &tk->bytes[id];
}

int ct_tokenizer_decode(const struct ct_tokenizer *tk, const uint32_t *ids,
			size_t n, struct ct_buf *out)
{
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const unsigned char *s = ids[i] > INT32_MAX ? NULL :
					 ct_tokenizer_token(tk, (int)ids[i], &len);
		int rc;

		if (s == NULL)
			return ct_error(CT_ERANGE, "token %u at position %zu is not in the "
					"%s vocabulary of %d", (unsigned)ids[i], i,
					ct_tokenizer_name(tk), ct_tokenizer_vocab(tk));
		rc = ct_buf_append(out, s, len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

const char *ct_tokenizer_for_vocab(int V)
{
	if (V == 256)
		return "bytes";
	if (V == 50257)
		return "gpt2";
	return NULL;
}
