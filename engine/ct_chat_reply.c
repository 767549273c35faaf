/*
 * ct_chat_reply.c - a conversation's next assistant message (see
 * ct_chat_reply.h).
 */
#include "ct_chat_reply.h"

#include <string.h>

#include "ct_err.h"

#define REPLY_MARKER "ctune-reply-marker-7c1e"
#define RENDER_MAX ((size_t)64 << 20)

/* The id of special token text s when it encodes to exactly one special
 * id, else -1. */
static int64_t special_id(const struct ct_tokenizer *tk, const char *s, size_t n)
{
	struct ct_tokvec v = { 0 };
	int64_t id = -1;

	if (ct_tokenizer_encode(tk, s, n, &v) == 0 && v.n >= 1 &&
	    ct_tokenizer_is_special(tk, v.v[0]))
		id = v.v[0];
	ct_tokvec_free(&v);
	return id;
}

/* The first token of what the template writes after a reply. */
static int64_t end_of_turn(const struct ct_chat *c, const struct ct_tokenizer *tk)
{
	static const char conv_text[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, "
		"{\"role\": \"assistant\", \"content\": \"" REPLY_MARKER "\"}]}";
	struct ct_buf text = CT_BUF_INIT(RENDER_MAX);
	struct ct_jv *conv = NULL;
	const char *at;
	int64_t id = -1;

	if (ct_chat_parse_line(conv_text, sizeof(conv_text) - 1, "marker", 1, &conv) == 0 &&
	    ct_chat_render(c, conv, 0, &text) == 0 &&
	    (at = strstr(ct_buf_cstr(&text), REPLY_MARKER)) != NULL) {
		at += strlen(REPLY_MARKER);
		id = special_id(tk, at, text.len - (size_t)(at - (const char *)text.data));
	}
	ct_error_clear();	/* a template that refuses the marker: eos alone */
	ct_jv_free(conv);
	ct_buf_free(&text);
	return id;
}

int ct_chat_stop_ids(const struct ct_chat *c, const struct ct_tokenizer *tk,
		     uint32_t ids[CT_CHAT_MAX_STOP], int *n)
{
	const char *eos = ct_chat_special(c, "eos_token");
	int64_t e = eos != NULL ? special_id(tk, eos, strlen(eos)) : -1;
	int64_t t = end_of_turn(c, tk);

	*n = 0;
	if (e < 0)
		e = ct_tokenizer_eot(tk);
	if (e >= 0)
		ids[(*n)++] = (uint32_t)e;
	if (t >= 0 && t != e)
		ids[(*n)++] = (uint32_t)t;
	return 0;
}

struct reply_run {
	const struct ct_tokenizer *tk;
	uint32_t stop[CT_CHAT_MAX_STOP];
	int nstop, ended;
	int (*on_text)(void *arg, const unsigned char *s, size_t n);
	void *arg;
};

static int on_token(void *arg, ct_tok id)
{
	struct reply_run *r = arg;
	const unsigned char *s;
	size_t n;

	for (int i = 0; i < r->nstop; i++)
		if (id == r->stop[i]) {
			r->ended = 1;
			return 1;
		}
	s = ct_tokenizer_token(r->tk, (int)id, &n);
	if (r->on_text != NULL && s != NULL)
		return r->on_text(r->arg, s, n);
	return 0;
}

int ct_chat_reply(const struct ct_gpt2 *model, const struct ct_chat *c,
		  const struct ct_tokenizer *tk, const struct ct_jv *conv,
		  const char *device, const struct ct_sample_params *sp,
		  int (*on_text)(void *arg, const unsigned char *s, size_t n), void *arg,
		  struct ct_buf *out, int *ended)
{
	struct ct_buf text = CT_BUF_INIT(RENDER_MAX);
	struct ct_tokvec in = { 0 }, gen = { 0 };
	struct reply_run r = { .tk = tk, .on_text = on_text, .arg = arg };
	size_t keep;
	int rc;

	rc = ct_chat_stop_ids(c, tk, r.stop, &r.nstop);
	if (rc == 0)
		rc = ct_chat_render(c, conv, 1, &text);
	if (rc == 0)	/* the template writes the special tokens: none added */
		rc = ct_tokenizer_encode(tk, text.data ? text.data : (unsigned char *)"", text.len, &in);
	if (rc == 0 && in.n == 0)
		rc = ct_error(CT_EINVAL, "the conversation renders to nothing");
	if (rc == 0 && in.n >= (size_t)model->cfg.maxT)
		rc = ct_error(CT_ETOOBIG, "the conversation is %zu tokens, the model reads at "
			      "most %d: start a shorter one", in.n, model->cfg.maxT - 1);
	if (rc == 0)
		rc = ct_sample_generate(model, device, in.v, in.n, sp, on_token, &r, &gen);
	keep = r.ended && gen.n > 0 ? gen.n - 1 : gen.n;
	if (rc == 0)
		rc = ct_tokenizer_decode(tk, gen.v, keep, out);
	if (ended != NULL)
		*ended = r.ended;
	ct_tokvec_free(&in);
	ct_tokvec_free(&gen);
	ct_buf_free(&text);
	return rc;
}
