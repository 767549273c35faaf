/*
 * ct_chat_mask.c - conversations as ids and trained flags (ct_chat_mask.h).
 *
 * The whole conversation is rendered once and encoded once, so the ids
 * are exactly those of its text. Each assistant message j is then placed
 * in that text by rendering prefixes of the conversation: messages
 * [0, j) with the generation prompt end where the reply starts (that
 * rendering must be a prefix of the whole); the reply's content is
 * looked up from there, and the text after it that the whole and the
 * rendering of messages [0, j] share bounds the end of the turn (Qwen3
 * renders earlier replies without their empty <think> block, Llama 3's
 * base template always appends a generation prompt: neither is a prefix
 * of the whole). The trained tokens run from the reply's start through
 * the first special token after its content (doc/chat.md).
 */
#include "config.h"
#include "ct_chat_mask.h"
#include "ct_err.h"
#include "ct_tokens.h"

#include <stdlib.h>
#include <string.h>

#define CHAT_TEXT_MAX (64u << 20)

struct span {
	size_t a;		/* where the reply starts in the rendered text */
	size_t ce;		/* where its content ends (a when not found) */
	size_t lim;		/* how far the whole agrees with its own rendering */
};

/* Render conv with only its first k messages. The copy is shallow: the
 * object's members are copied as structs, the messages array's length
 * cut to k; nothing below is duplicated. */
static int render_prefix(const struct ct_chat *c, const struct ct_jv *conv, size_t k,
			 int agp, struct ct_buf *out)
{
	struct ct_jv top = *conv, msgs;
	struct ct_jv *items = malloc(conv->n * sizeof(*items));
	int rc;

	if (items == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	memcpy(items, conv->items, conv->n * sizeof(*items));
	for (size_t i = 0; i < conv->n; i++) {
		if (strcmp(conv->keys[i], "messages") != 0)
			continue;
		msgs = items[i];
		msgs.n = k < msgs.n ? k : msgs.n;
		items[i] = msgs;
	}
	top.items = items;
	ct_buf_reset(out);
	rc = ct_chat_render(c, &top, agp, out);
	free(items);
	return rc;
}

/* The marker put in place of an empty reply's content, to see where the
 * template writes it (no conversation holds it: JSON text cannot carry
 * these control characters unescaped, and chat lines come from JSON). */
static const char marker[] = "\x01\x02ctune-reply\x02\x01";

/* Render conv's first k messages with the content of message k - 1
 * replaced by the marker (the same shallow copies as render_prefix). */
static int render_marked(const struct ct_chat *c, const struct ct_jv *conv, size_t k,
			 struct ct_buf *out)
{
	struct ct_jv top = *conv, *items = malloc(conv->n * sizeof(*items));
	struct ct_jv *msgv = NULL, *keyv = NULL, mark = { .type = CT_JV_STR };
	int rc = 0;

	mark.str = (char *)marker;
	if (items == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	memcpy(items, conv->items, conv->n * sizeof(*items));
	for (size_t i = 0; i < conv->n && rc == 0; i++) {
		struct ct_jv *m;

		if (strcmp(conv->keys[i], "messages") != 0 || items[i].n < k || k == 0)
			continue;
		msgv = malloc(k * sizeof(*msgv));
		m = msgv ? &msgv[k - 1] : NULL;
		if (m != NULL) {
			memcpy(msgv, items[i].items, k * sizeof(*msgv));
			keyv = malloc((m->n ? m->n : 1) * sizeof(*keyv));
		}
		if (keyv == NULL) {
			rc = ct_error(CT_ENOMEM, "out of memory");
			break;
		}
		memcpy(keyv, m->items, m->n * sizeof(*keyv));
		for (size_t q = 0; q < m->n; q++)
			if (strcmp(m->keys[q], "content") == 0)
				keyv[q] = mark;
		m->items = keyv;
		items[i].items = msgv;
		items[i].n = k;
	}
	top.items = items;
	ct_buf_reset(out);
	if (rc == 0)
		rc = ct_chat_render(c, &top, 0, out);
	free(keyv);
	free(msgv);
	free(items);
	return rc;
}

static int is_prefix(const struct ct_buf *p, const struct ct_buf *full)
{
	return p->len <= full->len && (p->len == 0 || memcmp(p->data, full->data, p->len) == 0);
}

/* Bytes x[0..) and y[0..) have in common at their start. */
static size_t common(const unsigned char *x, size_t nx, const unsigned char *y, size_t ny)
{
	size_t i = 0;

	while (i < nx && i < ny && x[i] == y[i])
		i++;
	return i;
}

/* The first occurrence of needle (n > 0 bytes) in hay from `from` on, or -1. */
static long find_from(const struct ct_buf *hay, size_t from, const char *needle, size_t n)
{
	for (size_t i = from; n > 0 && i + n <= hay->len; i++)
		if (memcmp(hay->data + i, needle, n) == 0)
			return (long)i;
	return -1;
}

/* The last occurrence of needle (n > 0 bytes) in hay, or -1. */
static long find_last(const struct ct_buf *hay, const char *needle, size_t n)
{
	for (size_t i = hay->len >= n ? hay->len - n + 1 : 0; n > 0 && i-- > 0;)
		if (memcmp(hay->data + i, needle, n) == 0)
			return (long)i;
	return -1;
}

static int is_space(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* The reply's content in full from sp->a on (as given, else without the
 * white space around it, which templates often trim): sp->ce after it,
 * sp->lim after the text that follows it both in full and in q (its
 * rendering as the last message). 0, or -1 when it is not there. */
static int place_content(const struct ct_buf *full, const struct ct_buf *q,
			 const struct ct_jv *msg, struct span *sp)
{
	const struct ct_jv *content = ct_jv_get(msg, "content");
	const char *s;
	size_t n;
	long inf, inq;

	if (content == NULL || content->type != CT_JV_STR)
		return -1;
	s = content->str;
	n = strlen(s);
	inf = find_from(full, sp->a, s, n);
	if (inf < 0) {	/* trimmed */
		while (n > 0 && is_space((unsigned char)*s)) {
			s++;
			n--;
		}
		while (n > 0 && is_space((unsigned char)s[n - 1]))
			n--;
		inf = find_from(full, sp->a, s, n);
	}
	inq = inf < 0 ? -1 : find_last(q, s, n);
	if (inq < 0)
		return -1;
	sp->ce = (size_t)inf + n;
	sp->lim = sp->ce + common(full->data + sp->ce, full->len - sp->ce,
				  q->data + (size_t)inq + n, q->len - ((size_t)inq + n));
	return 0;
}

/* The reply's content as the marker in q (render_marked's): sp->ce where
 * the marker is, when full and q agree from sp->a up to it, sp->lim after
 * the text both have after it. 0, or -1 when that is not so. */
static int place_marker(const struct ct_buf *full, const struct ct_buf *q, struct span *sp)
{
	long at = find_from(q, sp->a, marker, sizeof(marker) - 1);
	size_t p = at < 0 ? 0 : (size_t)at, after = p + sizeof(marker) - 1;

	if (at < 0 || p > full->len ||
	    memcmp(q->data + sp->a, full->data + sp->a, p - sp->a) != 0)
		return -1;
	sp->ce = p;
	sp->lim = p + common(full->data + p, full->len - p, q->data + after, q->len - after);
	return 0;
}

/* The span of assistant message j in full. */
static int reply_span(const struct ct_chat *c, const struct ct_jv *conv, size_t j,
		      const struct ct_buf *full, struct ct_buf *tmp, const char *name,
		      long lineno, struct span *sp)
{
	const struct ct_jv *msg = &ct_jv_get(conv, "messages")->items[j];
	int rc = render_prefix(c, conv, j, 1, tmp);

	if (rc < 0)
		return rc;
	if (!is_prefix(tmp, full))
		return ct_error(CT_EINVAL, "%s:%ld: message %zu: the chat template renders the "
				"conversation before this reply differently from the whole "
				"conversation: cannot tell where the reply starts", name, lineno,
				j + 1);
	sp->a = tmp->len;
	rc = render_prefix(c, conv, j + 1, 0, tmp);
	if (rc < 0)
		return rc;
	if (place_content(full, tmp, msg, sp) == 0)
		return 0;
	/* an empty content: where the template writes the marker instead */
	rc = render_marked(c, conv, j + 1, tmp);
	if (rc < 0 || place_marker(full, tmp, sp) == 0)
		return rc < 0 ? rc : 0;
	rc = render_prefix(c, conv, j + 1, 0, tmp);
	if (rc < 0)
		return rc;
	/* no content to find (tool calls): as far as both agree */
	sp->ce = sp->a;
	sp->lim = common(full->data, full->len, tmp->data, tmp->len);
	if (sp->lim <= sp->a)
		return ct_error(CT_EINVAL, "%s:%ld: message %zu: the chat template renders this "
				"reply differently once the conversation goes on: cannot tell "
				"where it ends", name, lineno, j + 1);
	return 0;
}

/* Trained: the tokens of ids (at byte offsets off) from the one that
 * overlaps sp->a through the first special token (the end-of-turn) that
 * starts at or after sp->ce, before sp->lim; without one, those before
 * sp->lim less the white space ending there. */
static void mark_span(const struct ct_tokenizer *tk, const uint32_t *ids, const size_t *off,
		      size_t n, const struct ct_buf *full, const struct span *sp,
		      uint8_t *flags)
{
	size_t trim = sp->lim;

	while (trim > sp->a && is_space(full->data[trim - 1]))
		trim--;
	for (size_t k = 1; k < n && off[k] < sp->lim; k++) {
		if (off[k + 1] <= sp->a)
			continue;
		if (off[k] >= sp->ce && ct_tokenizer_is_special(tk, ids[k])) {
			flags[k] |= CT_TOKENS_TRAINED;
			return;
		}
		if (off[k] < trim)
			flags[k] |= CT_TOKENS_TRAINED;
	}
}

/* The flags of ids (the bytes of full) against the spans. */
static int put_flags(const struct ct_tokenizer *tk, const uint32_t *ids, size_t n,
		     const struct ct_buf *full, const struct span *sp, size_t nsp,
		     const char *name, long lineno, struct ct_buf *flags)
{
	size_t *off = malloc((n + 1) * sizeof(*off));
	uint8_t *f;
	int rc;

	if (off == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	off[0] = 0;
	for (size_t k = 0; k < n; k++) {
		size_t len;

		(void)ct_tokenizer_token(tk, (int)ids[k], &len);
		off[k + 1] = off[k] + len;
	}
	rc = off[n] == full->len ? ct_buf_reserve(flags, n) :
	     ct_error(CT_EINVAL, "%s:%ld: the tokenizer changes the text (%zu bytes rendered, "
		      "%zu encoded: a normaliser?), the replies cannot be placed", name,
		      lineno, full->len, off[n]);
	if (rc == 0 && n > 0) {
		f = flags->data + flags->len;
		memset(f, 0, n);
		f[0] = CT_TOKENS_START;
		for (size_t s = 0; s < nsp; s++)
			mark_span(tk, ids, off, n, full, &sp[s], f);
		flags->len += n;
	}
	free(off);
	return rc;
}

int ct_chat_encode(const struct ct_chat *c, const struct ct_tokenizer *tk,
		   const struct ct_jv *conv, const char *name, long lineno,
		   struct ct_tokvec *ids, struct ct_buf *flags)
{
	struct ct_buf full = CT_BUF_INIT(CHAT_TEXT_MAX), tmp = CT_BUF_INIT(CHAT_TEXT_MAX);
	const struct ct_jv *msgs = ct_jv_get(conv, "messages");
	size_t n0 = ids->n, f0 = flags->len, nsp = 0;
	struct span *sp = NULL;
	int rc;

	if (msgs == NULL || msgs->type != CT_JV_ARR)
		return ct_error(CT_EINVAL, "%s:%ld: no messages", name, lineno);
	sp = calloc(msgs->n + 1, sizeof(*sp));
	rc = sp == NULL ? ct_error(CT_ENOMEM, "out of memory") : 0;
	if (rc == 0)
		rc = ct_chat_render(c, conv, 0, &full);
	for (size_t j = 0; j < msgs->n && rc == 0; j++) {
		const struct ct_jv *role = ct_jv_get(&msgs->items[j], "role");

		if (role == NULL || role->type != CT_JV_STR || strcmp(role->str, "assistant") != 0)
			continue;
		rc = reply_span(c, conv, j, &full, &tmp, name, lineno, &sp[nsp]);
		nsp += rc == 0;
	}
	if (rc == 0)
		rc = ct_tokenizer_encode(tk, full.data, full.len, ids);
	if (rc == 0)
		rc = put_flags(tk, ids->v + n0, ids->n - n0, &full, sp, nsp, name, lineno, flags);
	if (rc < 0) {
		ids->n = n0;
		flags->len = f0;
	}
	free(sp);
	ct_buf_free(&full);
	ct_buf_free(&tmp);
	return rc;
}

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_space((unsigned char)s[i]))
			return 0;
	return 1;
}

int ct_chat_encode_lines(const struct ct_chat *c, const struct ct_tokenizer *tk,
			 const char *text, size_t n, const char *name,
			 ct_chat_conv_fn fn, void *arg)
{
	struct ct_tokvec ids = { 0 };
	struct ct_buf flags = CT_BUF_INIT(0);
	long lineno = 0;
	int rc = 0;

	for (size_t p = 0; rc == 0 && p < n;) {
		const char *s = text + p, *nl = memchr(s, '\n', n - p);
		size_t len = nl ? (size_t)(nl - s) : n - p;
		struct ct_jv *conv = NULL;

		lineno++;
		p += len + 1;
		if (blank(s, len))
			continue;
		ids.n = 0;
		ct_buf_reset(&flags);
		rc = ct_chat_parse_line(s, len, name, lineno, &conv);
		if (rc == 0)
			rc = ct_chat_encode(c, tk, conv, name, lineno, &ids, &flags);
		else
			conv = NULL;
		if (rc < 0 && conv != NULL && strstr(ct_errmsg(rc), name) == NULL)
			rc = ct_error(rc, "%s:%ld: %s", name, lineno, ct_errmsg(rc));
		if (rc == 0)
			rc = fn(arg, lineno, ids.v, flags.data, ids.n);
		ct_jv_free(conv);
	}
	ct_tokvec_free(&ids);
	ct_buf_free(&flags);
	return rc;
}
