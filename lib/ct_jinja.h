/*
 * ct_jinja.h - a small Jinja interpreter for the chat templates of Hugging
 * Face models (the `chat_template` of tokenizer_config.json): it runs the
 * real templates of Llama 3/3.1/3.2, Qwen2.5, Qwen3 and SmolLM2 unchanged,
 * with Python Jinja's semantics as transformers configures them
 * (trim_blocks and lstrip_blocks on, one trailing newline dropped, the
 * default Undefined, loop controls). What it knows is in doc/chat.md;
 * anything else (includes, call blocks, a filter it lacks, ...) is refused by
 * name with the template's line, when the template is parsed where that
 * can be known then, else when it runs.
 *
 * A template is text from a stranger, and so are the values it runs on:
 * every size and every amount of work is capped (struct ct_jinja_limits),
 * there is no loop without an end (for runs over finite lists; there is no
 * while; macro calls, recursive ones too, nest at most 20 deep),
 * and nothing reaches the outside world but the clock of strftime_now.
 *
 *   struct ct_jinja *t;
 *   rc = ct_jinja_parse(src, n, NULL, "chat_template", &t);
 *   struct ct_jinja_var vars[] = { { "messages", msgs }, { "bos_token", bos } };
 *   struct ct_jinja_env env = { vars, 2, NULL, NULL };
 *   rc = ct_jinja_render(t, &env, NULL, &out);   (out: a ct_buf)
 *   ct_jinja_free(t);
 *
 * A parsed template is read-only: threads may render it at once.
 */
#ifndef CT_JINJA_H
#define CT_JINJA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ct_buf.h"
#include "ct_jv.h"

struct ct_jinja_limits {
	size_t max_src;		/* template bytes */
	size_t max_out;		/* bytes one render writes */
	size_t max_mem;		/* bytes of values one render may allocate */
	uint64_t max_steps;	/* units of work one render may do */
	int max_depth;		/* nesting of statements and of expressions */
};

/* The defaults: 1 MiB of template, 64 MiB out, 256 MiB of values,
 * 10^7 steps (a second or two), depth 64. A real chat template takes a
 * few thousand steps a conversation. */
void ct_jinja_limits_default(struct ct_jinja_limits *lim);

struct ct_jinja;

/* Parse n bytes of template text; `name` (e.g. "chat_template") starts
 * every error message, with the line. lim NULL: the defaults (kept with
 * the template for its renders). Returns 0; CT_EFORMAT (a syntax error),
 * CT_EUNSUPP (a construct this interpreter does not have: its name and
 * line in the detail), CT_ETOOBIG (over max_src or max_depth) or
 * CT_ENOMEM. *out owned by the caller (ct_jinja_free); NULL on failure. */
int ct_jinja_parse(const char *src, size_t n, const struct ct_jinja_limits *lim,
		   const char *name, struct ct_jinja **out);

/* Release t; NULL is a no-op. */
void ct_jinja_free(struct ct_jinja *t);

/* A top-level variable: name -> a JSON value (not copied: it must stay
 * valid through the render). A JSON integer is an int, a number with a
 * fraction or exponent a float; objects keep their key order. */
struct ct_jinja_var {
	const char *name;
	const struct ct_jv *value;
};

/* What a render sees: its variables (over the builtins raise_exception,
 * strftime_now, namespace, range, dict) and the clock of strftime_now
 * (now() fills *tm with the local time and returns 0; NULL: the system's
 * local time), a seam for tests. */
struct ct_jinja_env {
	const struct ct_jinja_var *vars;
	size_t nvars;
	int (*now)(void *arg, struct tm *tm);
	void *now_arg;
};

/* Render t with env, appending the text to *out (whose own cap also
 * holds). Returns 0; CT_EINVAL for an error of the template at run time
 * (a type error, an undefined value used, raise_exception: the detail
 * says "NAME line N: ..." and, for raise_exception, the template's
 * message); CT_EUNSUPP (something only known to be missing at run time,
 * like a string method it lacks); CT_ETOOBIG (over max_out, max_mem,
 * max_steps or max_depth); CT_ENOMEM. On failure *out may hold part of
 * the text. When raised is not NULL it is set to 1 when the failure is
 * the template's raise_exception, else 0. */
int ct_jinja_render(const struct ct_jinja *t, const struct ct_jinja_env *env,
		    int *raised, struct ct_buf *out);

#endif
