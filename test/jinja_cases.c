/*
 * jinja_cases.c - the C side of test/chat_template.sh: renders one
 * template (a file of Jinja text) with each line of a JSONL file of
 * variables ({"messages": [...], "add_generation_prompt": true, ...}) and
 * prints one JSON line per case as test/chat_ref.mjs does (the same
 * bytes as JavaScript's JSON.stringify): {"text": ..., "ids": [...]}
 * (ids with a TOKENIZER, a tokenizer.json or its directory),
 * {"raised": MESSAGE} for the template's raise_exception, {"error": ...}
 * for anything else lib/ct_jinja refuses. strftime_now sees a fixed
 * clock, 2026-02-03 04:05:06 (chat_ref.mjs sets the same).
 *
 *   jinja_cases TEMPLATE CASES.jsonl [TOKENIZER]
 *   jinja_cases --bench SECONDS TEMPLATE CASES.jsonl TOKENIZER
 *       prints "c N conversations/s" (render and encode, one thread)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jinja.h"
#include "ct_jv.h"
#include "ct_time.h"
#include "ct_tokenizer.h"

static int fixed_now(void *arg, struct tm *tm)
{
	(void)arg;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = 126;
	tm->tm_mon = 1;
	tm->tm_mday = 3;
	tm->tm_hour = 4;
	tm->tm_min = 5;
	tm->tm_sec = 6;
	tm->tm_wday = 2;
	tm->tm_yday = 33;
	return 0;
}

static void put_json(const char *s, size_t n)
{
	static const char esc[] = { ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
				    ['\f'] = 'f', ['\r'] = 'r' };
	size_t i;

	putchar('"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < sizeof(esc) && esc[c])
			printf("\\%c", esc[c]);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* One case: its variables are the members of the line's object. */
static int render_case(const struct ct_jinja *t, const char *line, size_t n,
		       int *raised, struct ct_buf *out)
{
	struct ct_jv_limits lim = { 1 << 24, 1 << 20, 64 };
	struct ct_jinja_var vars[32];
	struct ct_jinja_env env = { vars, 0, fixed_now, NULL };
	struct ct_jv *root = NULL;
	size_t i;
	int rc;

	*raised = 0;
	rc = ct_jv_parse(line, n, &lim, "case", &root);
	if (rc >= 0 && (root->type != CT_JV_OBJ || root->n > 32))
		rc = ct_error(CT_EFORMAT, "a case is an object of at most 32 variables");
	for (i = 0; rc >= 0 && i < root->n; i++) {
		vars[i].name = root->keys[i];
		vars[i].value = &root->items[i];
		env.nvars++;
	}
	if (rc >= 0)
		rc = ct_jinja_render(t, &env, raised, out);
	ct_jv_free(root);
	return rc;
}

static void one_case(const struct ct_jinja *t, const struct ct_tokenizer *tk,
		     const char *line, size_t n)
{
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_tokvec ids = { 0 };
	const char *msg;
	int rc, raised;

	rc = render_case(t, line, n, &raised, &out);
	if (rc >= 0 && tk != NULL)
		rc = ct_tokenizer_encode(tk, ct_buf_cstr(&out), out.len, &ids);
	if (rc >= 0) {
		fputs("{\"text\":", stdout);
		put_json(ct_buf_cstr(&out), out.len);
		for (size_t i = 0; tk != NULL && i < ids.n; i++)
			printf("%s%u", i ? "," : ",\"ids\":[", ids.v[i]);
		fputs(tk != NULL ? (ids.n ? "]}" : ",\"ids\":[]}") : "}", stdout);
	} else {
		msg = ct_errmsg(rc);
		if (raised && strstr(msg, "raise_exception: ") != NULL)
			msg = strstr(msg, "raise_exception: ") + strlen("raise_exception: ");
		fputs(raised ? "{\"raised\":" : "{\"error\":", stdout);
		put_json(msg, strlen(msg));
		putchar('}');
	}
	putchar('\n');
	ct_tokvec_free(&ids);
	ct_buf_free(&out);
}

/* Render and encode every case for `seconds` (those the template raises
 * on are skipped); conversations a second. */
static int bench(const struct ct_jinja *t, const struct ct_tokenizer *tk,
		 const char *cases, size_t cn, double seconds)
{
	double t0 = ct_time_mono_s(), el;
	uint64_t k = 0;
	int rc = 0, raised;

	do {
		for (const char *p = cases, *e = p + cn; rc >= 0 && p < e;) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
			struct ct_buf out = CT_BUF_INIT(0);
			struct ct_tokvec ids = { 0 };

			if (len > 0) {
				rc = render_case(t, p, len, &raised, &out);
				if (rc >= 0)
					rc = ct_tokenizer_encode(tk, ct_buf_cstr(&out), out.len, &ids);
				k += rc >= 0;
				rc = raised ? 0 : rc;
			}
			ct_tokvec_free(&ids);
			ct_buf_free(&out);
			p += len + 1;
		}
		el = ct_time_mono_s() - t0;
	} while (rc >= 0 && el < seconds);
	if (rc < 0)
		return rc;
	printf("c %.0f conversations/s\n", (double)k / el);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *src = NULL, *cases = NULL;
	struct ct_tokenizer *tk = NULL;
	struct ct_jinja *t = NULL;
	double seconds = 0;
	size_t n, cn;
	int rc;

	if (argc > 2 && strcmp(argv[1], "--bench") == 0) {
		seconds = atof(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3 || argc > 4 || (seconds > 0 && argc != 4)) {
		fprintf(stderr, "usage: jinja_cases [--bench SECONDS] TEMPLATE CASES.jsonl [TOKENIZER]\n");
		return 2;
	}
	rc = ct_file_read_all(argv[1], 1 << 20, &src, &n);
	if (rc >= 0)
		rc = ct_file_read_all(argv[2], 1 << 26, &cases, &cn);
	if (rc >= 0)
		rc = ct_jinja_parse((const char *)src, n, NULL, argv[1], &t);
	if (rc >= 0 && argc == 4)
		rc = ct_tokenizer_open(argv[3], &tk);
	if (rc >= 0 && seconds > 0)
		rc = bench(t, tk, (const char *)cases, cn, seconds);
	for (const char *p = (const char *)cases, *e = p + cn; rc >= 0 && seconds == 0 && p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);

		if (len > 0)
			one_case(t, tk, p, len);
		p += len + 1;
	}
	if (rc < 0)
		fprintf(stderr, "jinja_cases: %s\n", ct_errmsg(rc));
	ct_tokenizer_free(tk);
	ct_jinja_free(t);
	free(src);
	free(cases);
	return rc < 0;
}
