/*
 * ct_chat.c - a model's chat template with its special tokens
 * (tokenizer_config.json) and the lines of chat JSONL files; see
 * ct_chat.h. Rendering hands lib/ct_jinja the variables in the order
 * transformers' apply_chat_template builds them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ct_chat.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jinja.h"

/* The special tokens apply_chat_template passes, in its order. */
static const char *const special_names[] = {
	"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
	"cls_token", "mask_token",
};
#define NSPECIAL (sizeof(special_names) / sizeof(special_names[0]))

struct ct_chat {
	struct ct_jinja *tmpl;
	struct ct_jv tok[NSPECIAL];	/* CT_JV_STR, or CT_JV_NULL: not set */
	char *tokstr[NSPECIAL];
};

void ct_chat_free(struct ct_chat *c)
{
	size_t i;

	if (c == NULL)
		return;
	ct_jinja_free(c->tmpl);
	for (i = 0; i < NSPECIAL; i++)
		free(c->tokstr[i]);
	free(c);
}

static int set_token(struct ct_chat *c, size_t i, const char *s)
{
	c->tok[i].type = CT_JV_NULL;
	if (s == NULL)
		return 0;
	c->tokstr[i] = strdup(s);
	if (c->tokstr[i] == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	c->tok[i].type = CT_JV_STR;
	c->tok[i].str = c->tokstr[i];
	return 0;
}

static int chat_new(const char *tmpl, size_t n, const char *name, struct ct_chat **out)
{
	struct ct_chat *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (c == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	rc = ct_jinja_parse(tmpl, n, NULL, name, &c->tmpl);
	if (rc < 0) {
		ct_chat_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int ct_chat_open_template(const char *tmpl, size_t n, const char *bos,
			  const char *eos, struct ct_chat **out)
{
	int rc = chat_new(tmpl, n, "chat_template", out);

	if (rc >= 0)
		rc = set_token(*out, 0, bos);
	if (rc >= 0)
		rc = set_token(*out, 1, eos);
	if (rc < 0) {
		ct_chat_free(*out);
		*out = NULL;
	}
	return rc;
}

/* A token of tokenizer_config.json: a string, or an AddedToken object. */
static const char *token_text(const struct ct_jv *v)
{
	if (v != NULL && v->type == CT_JV_OBJ)
		v = ct_jv_get(v, "content");
	return v != NULL && v->type == CT_JV_STR ? v->str : NULL;
}

/* chat_template: a string, or [{"name": "default", "template": ...}, ...]. */
static const struct ct_jv *find_template(const struct ct_jv *cfg)
{
	const struct ct_jv *t = ct_jv_get(cfg, "chat_template");
	size_t i;

	if (t == NULL || t->type != CT_JV_ARR)
		return t;
	for (i = 0; i < t->n; i++) {
		const struct ct_jv *name = ct_jv_get(&t->items[i], "name");

		if (name != NULL && name->type == CT_JV_STR && strcmp(name->str, "default") == 0)
			return ct_jv_get(&t->items[i], "template");
	}
	return NULL;
}

int ct_chat_open(const char *path, struct ct_chat **out)
{
	struct ct_jv_limits lim = { 64u << 20, 1u << 22, 64 };
	char file[4096];
	unsigned char *data = NULL;
	struct ct_jv *cfg = NULL;
	const struct ct_jv *t;
	struct stat st;
	size_t n, i;
	int rc;

	*out = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/tokenizer_config.json", path);
	else
		snprintf(file, sizeof(file), "%s", path);
	rc = ct_file_read_all(file, lim.max_bytes, &data, &n);
	if (rc >= 0)
		rc = ct_jv_parse((const char *)data, n, &lim, file, &cfg);
	if (rc < 0)
		goto out;
	t = find_template(cfg);
	if (t == NULL || t->type != CT_JV_STR) {
		rc = ct_error(CT_EFORMAT, "%s: no chat_template (a string, or the one named "
			      "\"default\"): this model has no chat format", file);
		goto out;
	}
	rc = chat_new(t->str, strlen(t->str), "chat_template", out);
	for (i = 0; rc >= 0 && i < NSPECIAL; i++)
		rc = set_token(*out, i, token_text(ct_jv_get(cfg, special_names[i])));
out:
	if (rc < 0) {
		ct_chat_free(*out);
		*out = NULL;
	}
	ct_jv_free(cfg);
	free(data);
	return rc;
}

const char *ct_chat_special(const struct ct_chat *c, const char *name)
{
	for (size_t i = 0; i < NSPECIAL; i++)
		if (strcmp(special_names[i], name) == 0)
			return c->tok[i].type == CT_JV_STR ? c->tok[i].str : NULL;
	return NULL;
}

int ct_chat_render(const struct ct_chat *c, const struct ct_jv *conv,
		   int add_generation_prompt, struct ct_buf *out)
{
	static const struct ct_jv yes = { .type = CT_JV_TRUE }, no = { .type = CT_JV_FALSE };
	struct ct_jinja_var vars[4 + NSPECIAL];
	struct ct_jinja_env env = { vars, 0, NULL, NULL };
	const char *own[] = { "tools", "documents" };
	size_t i;

	vars[env.nvars++] = (struct ct_jinja_var){ "messages", ct_jv_get(conv, "messages") };
	vars[env.nvars++] = (struct ct_jinja_var){ "add_generation_prompt",
						   add_generation_prompt ? &yes : &no };
	for (i = 0; i < 2; i++)
		if (ct_jv_get(conv, own[i]) != NULL)
			vars[env.nvars++] = (struct ct_jinja_var){ own[i], ct_jv_get(conv, own[i]) };
	for (i = 0; i < NSPECIAL; i++)
		if (c->tok[i].type == CT_JV_STR)
			vars[env.nvars++] = (struct ct_jinja_var){ special_names[i], &c->tok[i] };
	return ct_jinja_render(c->tmpl, &env, NULL, out);
}

int ct_chat_json_str(struct ct_buf *out, const char *s, size_t n)
{
	static const char esc[] = { ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
				    ['\f'] = 'f', ['\r'] = 'r' };
	const unsigned char *p = (const unsigned char *)s;
	int rc = ct_buf_append(out, "\"", 1);

	for (size_t i = 0; rc >= 0 && i < n; i++) {
		if (p[i] == '"' || p[i] == '\\')
			rc = ct_buf_appendf(out, "\\%c", p[i]);
		else if (p[i] < sizeof(esc) && esc[p[i]])
			rc = ct_buf_appendf(out, "\\%c", esc[p[i]]);
		else if (p[i] < 0x20)
			rc = ct_buf_appendf(out, "\\u%04x", p[i]);
		else
			rc = ct_buf_append(out, &p[i], 1);
	}
	return rc < 0 ? rc : ct_buf_append(out, "\"", 1);
}

/* ---- chat JSONL ---- */

static int line_err(const char *name, long lineno, const char *what)
{
	return ct_error(CT_EFORMAT, "%s:%ld: %s", name, lineno, what);
}

static int check_message(const struct ct_jv *m, size_t i, const char *name, long lineno)
{
	static const char *const roles[] = { "system", "user", "assistant", "tool" };
	const struct ct_jv *role = ct_jv_get(m, "role"), *content = ct_jv_get(m, "content");
	char what[160];
	size_t k;

	if (m->type != CT_JV_OBJ)
		snprintf(what, sizeof(what), "message %zu is not an object", i + 1);
	else if (role == NULL || role->type != CT_JV_STR)
		snprintf(what, sizeof(what), "message %zu has no \"role\" string", i + 1);
	else if (content == NULL || (content->type != CT_JV_STR &&
		 !(content->type == CT_JV_NULL && ct_jv_get(m, "tool_calls") != NULL)))
		snprintf(what, sizeof(what), "message %zu has no \"content\" string", i + 1);
	else
		what[0] = '\0';
	for (k = 0; what[0] == '\0' && k < sizeof(roles) / sizeof(roles[0]); k++)
		if (strcmp(role->str, roles[k]) == 0)
			return 0;
	if (what[0] == '\0')
		snprintf(what, sizeof(what), "message %zu: role \"%.40s\" is not system, user, "
			 "assistant or tool", i + 1, role->str);
	return line_err(name, lineno, what);
}

static int json_str(struct ct_buf *b, const char *s)
{
	int rc = ct_buf_append(b, "\"", 1);

	for (; rc >= 0 && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			rc = ct_buf_appendf(b, "\\%c", c);
		else if (c < 0x20)
			rc = ct_buf_appendf(b, "\\u%04x", c);
		else
			rc = ct_buf_append(b, s, 1);
	}
	return rc < 0 ? rc : ct_buf_append(b, "\"", 1);
}

/* Alpaca's record as {"messages": [user, assistant]}. */
static int from_alpaca(const struct ct_jv *rec, const char *name, long lineno,
		       const struct ct_jv_limits *lim, struct ct_jv **conv)
{
	const struct ct_jv *ins = ct_jv_get(rec, "instruction"), *in = ct_jv_get(rec, "input");
	const struct ct_jv *outp = ct_jv_get(rec, "output");
	struct ct_buf b = CT_BUF_INIT(lim->max_bytes), user = CT_BUF_INIT(lim->max_bytes);
	int rc;

	if (ins == NULL || ins->type != CT_JV_STR || outp == NULL || outp->type != CT_JV_STR ||
	    (in != NULL && in->type != CT_JV_STR))
		return line_err(name, lineno, "neither {\"messages\": [...]} nor Alpaca's "
				"{\"instruction\", \"input\", \"output\"} strings");
	rc = ct_buf_appends(&user, ins->str);
	if (rc >= 0 && in != NULL && in->str[0] != '\0')
		rc = ct_buf_appendf(&user, "\n\n%s", in->str);
	if (rc >= 0)
		rc = ct_buf_appends(&b, "{\"messages\": [{\"role\": \"user\", \"content\": ");
	if (rc >= 0)
		rc = json_str(&b, ct_buf_cstr(&user));
	if (rc >= 0)
		rc = ct_buf_appends(&b, "}, {\"role\": \"assistant\", \"content\": ");
	if (rc >= 0)
		rc = json_str(&b, outp->str);
	if (rc >= 0)
		rc = ct_buf_appends(&b, "}]}");
	if (rc >= 0)
		rc = ct_jv_parse(ct_buf_cstr(&b), b.len, lim, name, conv);
	ct_buf_free(&b);
	ct_buf_free(&user);
	return rc < 0 && rc != CT_EFORMAT ? line_err(name, lineno, ct_strerror(rc)) : rc;
}

int ct_chat_parse_line(const char *line, size_t n, const char *name, long lineno,
		       struct ct_jv **conv)
{
	struct ct_jv_limits lim = { 64u << 20, 1000000, 64 };
	struct ct_jv *rec = NULL;
	const struct ct_jv *msgs;
	char where[300];
	size_t i;
	int rc;

	*conv = NULL;
	snprintf(where, sizeof(where), "%s:%ld", name, lineno);
	rc = ct_jv_parse(line, n, &lim, where, &rec);	/* "FILE:LINE: bad JSON: ..." */
	if (rc < 0)
		return rc;
	if (rec->type != CT_JV_OBJ) {
		ct_jv_free(rec);
		return line_err(name, lineno, "not a JSON object");
	}
	msgs = ct_jv_get(rec, "messages");
	if (msgs == NULL) {
		rc = from_alpaca(rec, name, lineno, &lim, conv);
		ct_jv_free(rec);
		return rc;
	}
	if (msgs->type != CT_JV_ARR || msgs->n == 0)
		rc = line_err(name, lineno, "\"messages\" is not a non-empty array");
	for (i = 0; rc >= 0 && i < msgs->n; i++)
		rc = check_message(&msgs->items[i], i, name, lineno);
	if (rc < 0) {
		ct_jv_free(rec);
		return rc;
	}
	*conv = rec;
	return 0;
}
