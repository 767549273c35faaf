/*
 * test_ct_jinja.c - lib/ct_jinja: the pieces of the Jinja language the
 * chat templates use (whitespace control, expressions, filters, tests,
 * string methods, loops, namespaces, raise_exception, strftime_now), what
 * it refuses (by name and line), its caps, and the real templates of
 * test/data/chat on a conversation with the expected text written out;
 * and lib/ct_chat (tokenizer_config.json's forms, chat JSONL lines).
 */
#include "ct_test.h"

#include "ct_buf.h"
#include "ct_chat.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jinja.h"
#include "ct_jv.h"

static int clock_fixed(void *arg, struct tm *tm)
{
	(void)arg;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = 124;	/* 2024-07-26 */
	tm->tm_mon = 6;
	tm->tm_mday = 26;
	tm->tm_wday = 5;
	return 0;
}

/* Render src with the variables of the JSON object vars (NULL: none)
 * under lim (NULL: the defaults): 0 and the text in *out, or the error
 * code with ct_errmsg's text in *out. raised may be NULL. */
static int render_lim(const char *src, const char *vars, const struct ct_jinja_limits *lim,
		      int *raised, char **out)
{
	struct ct_jv_limits jl = { 1 << 20, 1 << 16, 32 };
	struct ct_jinja_var v[16];
	struct ct_jinja_env env = { v, 0, clock_fixed, NULL };
	struct ct_buf b = CT_BUF_INIT(0);
	struct ct_jinja *t = NULL;
	struct ct_jv *root = NULL;
	int rc;

	rc = ct_jinja_parse(src, strlen(src), lim, "tpl", &t);
	if (rc >= 0 && vars != NULL) {
		rc = ct_jv_parse(vars, strlen(vars), &jl, "vars", &root);
		assert_int_equal(rc, 0);
		for (size_t i = 0; i < root->n && i < 16; i++) {
			v[i].name = root->keys[i];
			v[i].value = &root->items[i];
			env.nvars++;
		}
	}
	if (rc >= 0)
		rc = ct_jinja_render(t, &env, raised, &b);
	*out = strdup(rc >= 0 ? ct_buf_cstr(&b) : ct_errmsg(rc));
	ct_buf_free(&b);
	ct_jv_free(root);
	ct_jinja_free(t);
	return rc;
}

static int render(const char *src, const char *vars, char **out)
{
	return render_lim(src, vars, NULL, NULL, out);
}

/* src renders to want. */
#define OK(src, vars, want) do { \
	char *o_; \
	int rc_ = render((src), (vars), &o_); \
	if (rc_ != 0) \
		fail_msg("%s: %s", (src), o_); \
	assert_string_equal(o_, (want)); \
	free(o_); \
} while (0)

/* src fails with code and a message holding each of the strings. */
#define BAD(src, vars, code, part) do { \
	char *o_; \
	int rc_ = render((src), (vars), &o_); \
	if (rc_ != (code) || strstr(o_, (part)) == NULL) \
		fail_msg("%s: rc %d '%s', want %d '%s'", (src), rc_, o_, (code), (part)); \
	free(o_); \
} while (0)

static void test_whitespace(void **state)
{
	(void)state;
	/* trim_blocks: the newline after a block tag goes; after {{ }} it stays */
	OK("{% if true %}\nyes\n{% endif %}\n", NULL, "yes\n");
	OK("{{ 'a' }}\nb\n", NULL, "a\nb");	/* and one trailing newline */
	/* lstrip_blocks: blanks before a block tag alone on its line */
	OK("x\n    {% if true %}\n    y\n    {% endif %}\nz", NULL, "x\n    y\nz");
	OK("x  {% if true %}y{% endif %}", NULL, "x  y");	/* not at a line start */
	OK("  {%+ if true %}y{% endif %}", NULL, "  y");
	/* - strips all white space, newlines too */
	OK("a  \n {{- 'b' -}} \n\n c", NULL, "abc");
	OK("a\n{%- if true -%}\n  b  \n{%- endif %}", NULL, "ab");
	OK("a{# a comment #}b\n{#- another -#}\n c", NULL, "abc");
	OK("a\r\nb\rc", NULL, "a\nb\nc");	/* newlines are \n */
	OK("", NULL, "");
}

static void test_expressions(void **state)
{
	(void)state;
	OK("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }}",
	   NULL, "7 9 3 -4 1 2");
	OK("{{ 7 / 2 }} {{ 1.0 }} {{ 2 ** 10 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1.5e-5 }}", NULL,
	   "3.5 1.0 1024 0.30000000000000004 1e+20 1.5e-05");
	OK("{{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' * 3 }} {{ [1] + [2] }}", NULL,
	   "a1NoneTrue ababab [1, 2]");
	OK("{{ 'x' if 1 > 2 else 'y' }}{{ 'z' if false }}|", NULL, "y|");
	OK("{{ 0 or 'b' }} {{ 'a' and 'b' }} {{ none or [] }} {{ not 0 }}", NULL, "b b [] True");
	OK("{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 'b' > 'a' }} {{ [1, 2] < [1, 3] }}", NULL,
	   "True True True True");
	OK("{{ 'ell' in 'hello' }} {{ 3 not in [1, 2] }} {{ 'k' in {'k': 1} }}", NULL, "True True True");
	OK("{{ m[1:] }} {{ m[::-1] }} {{ m[-1] }} {{ m[5] }}|{{ 'héllo'[1] }}{{ 'héllo'[1:3] }}{{ 'abc'[::-1] }}",
	   "{\"m\": [1, 2, 3]}", "[2, 3] [3, 2, 1] 3 |éélcba");
	OK("{{ {'a': 1, 'b': [true, none, 'x\\'y']} }} {{ (1, 2) }} {{ (1,) }}", NULL,
	   "{'a': 1, 'b': [True, None, \"x'y\"]} (1, 2) (1,)");
	OK("{{ \"a\\n\\t\\u00e9\\x41\" 'b' }}", NULL, "a\n\té" "Ab");
	OK("{{ m.a.b }}{{ m['a']['b'] }}{{ m.a.get('c', 'd') }}", "{\"m\": {\"a\": {\"b\": 5}}}", "55d");
}

static void test_filters(void **state)
{
	(void)state;
	OK("{{ '  a b \\n' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ '\\u3000a\\u00a0' | trim }}", NULL,
	   "a b|a|a");
	OK("{{ m | tojson }}", "{\"m\": {\"k\": [1, 2.5, \"é\\\"\\n\", null, true]}}",
	   "{\"k\": [1, 2.5, \"é\\\"\\n\", null, true]}");
	OK("{{ m | tojson(indent=2) }}", "{\"m\": {\"a\": [1], \"b\": {}}}",
	   "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
	OK("{{ m | tojson(sort_keys=true) }}", "{\"m\": {\"b\": 1, \"a\": 2}}", "{\"a\": 2, \"b\": 1}");
	OK("{{ 'héllo' | length }} {{ [1, 2] | length }} {{ x | length }} {{ m | count }}",
	   "{\"m\": {\"a\": 1}}", "5 2 0 1");
	OK("{{ x | default('d') }} {{ '' | default('e', true) }} {{ 'v' | d('no') }}", NULL, "d e v");
	OK("{{ [1, 'a', none] | join(', ') }} {{ m | join('-', attribute='n') }}",
	   "{\"m\": [{\"n\": \"x\"}, {\"n\": \"y\"}]}", "1, a, None x-y");
	OK("{{ 'aBc' | upper }} {{ 'aBc' | lower }} {{ 'hello world' | title }} {{ 'hi there' | capitalize }}",
	   NULL, "ABC abc Hello World Hi there");
	OK("{% for k, v in m | items %}{{ k }}={{ v }};{% endfor %}", "{\"m\": {\"a\": 1, \"b\": 2}}",
	   "a=1;b=2;");
	OK("{{ [3, 4] | first }} {{ [3, 4] | last }} {{ 'xyz' | first }} {{ [1, 2] | reverse }}", NULL,
	   "3 4 x [2, 1]");
	OK("{{ ['a', 'code', 'b'] | reject('equalto', 'code') | join(',') }} "
	   "{{ [1, 2, 3, 4] | select('even') | list }}", NULL, "a,b [2, 4]");
	OK("{{ m | map(attribute='n') | join }} {{ m | selectattr('n', 'equalto', 'y') | list | length }}",
	   "{\"m\": [{\"n\": \"x\"}, {\"n\": \"y\"}]}", "xy 1");
	OK("{{ '42' | int + 1 }} {{ '2.5' | float }} {{ 'x' | int }} {{ 3.9 | int }} {{ 5 | string ~ 'a' }}",
	   NULL, "43 2.5 0 3 5a");
	OK("{{ 'a-b-a' | replace('a', 'x') }} {{ -3 | abs }}", NULL, "x-b-x 3");
}

static void test_methods(void **state)
{
	(void)state;
	OK("{{ 'hello'.startswith('he') }} {{ 'hello'.endswith(('x', 'lo')) }} {{ 'a'.startswith('ab') }}",
	   NULL, "True True False");
	OK("{{ 'a</think>b</think>c'.split('</think>') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }}",
	   NULL, "['a', 'b', 'c'] ['a', 'b'] ['a', 'b,c']");
	OK("[{{ '\\n\\n x\\n'.lstrip('\\n') }}][{{ '\\n x\\n\\n'.rstrip('\\n') }}][{{ '\\nx\\n'.strip('\\n') }}]"
	   "[{{ ' x '.strip() }}][{{ 'ééxé'.lstrip('é') }}]", NULL, "[ x\n][\n x][x][x][xé]");
	OK("{{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.replace('', '-') }} {{ 'héllo'.find('l') }} {{ 'aXaXa'.count('X') }}",
	   NULL, "bba -a-b- 2 2");
	OK("{{ ', '.join(['x', 'y']) }} {{ 'AbC'.lower() }} {{ 'AbC'.upper() }}", NULL, "x, y abc ABC");
	OK("{{ m.keys() | list }} {{ m.values() | list }} {{ m.items() | list }} {{ m.get('zz') }}",
	   "{\"m\": {\"a\": 1}}", "['a'] [1] [('a', 1)] None");
}

static void test_tests(void **state)
{
	(void)state;
	OK("{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 'a' is string }} {{ 1 is string }}",
	   NULL, "False True True True False");
	OK("{{ m is mapping }} {{ 'a' is iterable }} {{ 3 is number }} {{ 3.0 is integer }} {{ true is boolean }}",
	   "{\"m\": {}}", "True True True False True");
	OK("{{ false is false }} {{ 0 is false }} {{ true is true }} {{ x is sameas false }} {{ none is sameas none }}",
	   "{\"x\": false}", "True False True True True");
	OK("{{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby 3 }} {{ 2 is not in [1] }} {{ 'a' is eq 'a' }}",
	   NULL, "True True True True True");
	OK("{% if m.r is defined and m.r is not none %}r{% else %}n{% endif %}", "{\"m\": {\"r\": null}}", "n");
}

static void test_loops(void **state)
{
	(void)state;
	OK("{% for x in [5, 6, 7] %}{{ loop.index0 }}{{ loop.index }}{{ loop.first }}{{ loop.last }}"
	   "{{ loop.length }}{{ loop.revindex0 }};{% endfor %}", NULL,
	   "01TrueFalse32;12FalseFalse31;23FalseTrue30;");
	OK("{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}", NULL,
	   "1/5 3/5 5/5 7/5 9/5 ");
	OK("{% for x in [] %}a{% else %}empty{% endfor %}", NULL, "empty");
	OK("{% for x in [1, 2, 3, 4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}"
	   "{% endif %}{{ x }}{% endfor %}", NULL, "13");
	OK("{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }} {% endfor %}"
	   "{{ loop.index }}|{% endfor %}", NULL, "1x1 1y2 1|2x1 2y2 2|");
	OK("{% for x in [1, 2] %}{{ loop.previtem }}-{{ loop.nextitem }} {% endfor %}", NULL, "-2 1- ");
	/* set in a loop stays in it; a namespace carries out */
	OK("{% set n = 0 %}{% set ns = namespace(n=0, f=false) %}{% for x in [1, 2, 3] %}{% set n = n + x %}"
	   "{% set ns.n = ns.n + x %}{% endfor %}{{ n }} {{ ns.n }} {{ ns.f }}", NULL, "0 6 False");
	OK("{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}{% for x in undefined_thing %}no{% endfor %}",
	   NULL, "ab");
	OK("{% for m in messages[::-1] %}{{ m.role }}{% endfor %}",
	   "{\"messages\": [{\"role\": \"a\"}, {\"role\": \"b\"}]}", "ba");
}

static void test_statements(void **state)
{
	(void)state;
	OK("{% if 0 %}a{% elif 1 %}b{% else %}c{% endif %}{% if 0 %}a{% else %}{% if 1 %}d{% endif %}e{% endif %}",
	   NULL, "bde");
	OK("{% set x %}in {{ 'block' }}{% endset %}[{{ x }}]", NULL, "[in block]");
	OK("a{% generation %}{{ 'b' }}{% endgeneration %}c", NULL, "abc");
	OK("{% filter trim|upper %}  shout \n{% endfilter %}|{% filter replace('a', 'o') %}bar{% endfilter %}",
	   NULL, "SHOUT|bor");
}

static void test_macros(void **state)
{
	(void)state;
	OK("{% macro tag(name, kind='req') %}<{{ kind }}:{{ name }}>{% endmacro %}"
	   "{{ tag('a') }}{{ tag('b', 'opt') }}{{ tag(kind='k', name='c') }}{{ tag() }}", NULL,
	   "<req:a><opt:b><k:c><req:>");
	/* the caller's loop names are not the macro's; the template's are */
	OK("{% set g = 'G' %}{% macro m() %}{{ x }}{{ g }}{% set g = 'inner' %}{% endmacro %}"
	   "{% for x in [1] %}{{ m() }}{% endfor %}{{ g }}", NULL, "GG");
	OK("{% macro twice(s) %}{{ s ~ s }}{% endmacro %}{{ twice(twice('ab')) | length }}", NULL, "8");
	OK("{% macro rec(n) %}{% if n > 0 %}{{ n }}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}",
	   NULL, "54321");
	BAD("{% macro rec(n) %}{{ rec(n + 1) }}{% endmacro %}{{ rec(0) }}", NULL, CT_ETOOBIG,
	    "macro calls nested more than");
	BAD("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", NULL, CT_EINVAL, "takes 1 arguments, not 2");
	BAD("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}", NULL, CT_EINVAL, "has no parameter 'b'");
	BAD("{% for x in [1] %}{% macro m() %}{% break %}{% endmacro %}{% endfor %}", NULL, CT_EFORMAT,
	    "break outside a loop");
	OK("{% set a, b = [1, 2] %}{{ b }}{{ a }}", NULL, "21");
	OK("{% set messages = messages[1:] %}{{ messages | length }}", "{\"messages\": [1, 2, 3]}", "2");
	OK("{{ x }}|{{ x.y is defined }}", "{\"x\": {}}", "{}|False");
}

static void test_raise_and_clock(void **state)
{
	char *o;
	int raised = 0, rc;

	(void)state;
	rc = render_lim("a\n{% if true %}{{ raise_exception('Roles must alternate') }}{% endif %}", NULL,
			NULL, &raised, &o);
	assert_int_equal(rc, CT_EINVAL);
	assert_int_equal(raised, 1);
	assert_non_null(strstr(o, "tpl line 2: raise_exception: Roles must alternate"));
	free(o);
	rc = render_lim("{{ x + 1 }}", NULL, NULL, &raised, &o);
	assert_int_equal(rc, CT_EINVAL);
	assert_int_equal(raised, 0);
	assert_non_null(strstr(o, "'x' is undefined"));
	free(o);
	OK("{{ strftime_now('%d %b %Y') }} {{ strftime_now is defined }}", NULL, "26 Jul 2024 True");
}

static void test_undefined(void **state)
{
	(void)state;
	OK("[{{ nothing }}][{{ nothing ~ 'x' }}][{{ m.nope }}][{{ m['nope'] }}]", "{\"m\": {}}", "[][x][][]");
	BAD("{{ nothing + 'x' }}", NULL, CT_EINVAL, "'nothing' is undefined");
	BAD("\n{{ nothing.attr }}", NULL, CT_EINVAL, "tpl line 2: 'nothing' is undefined");
	BAD("{{ m.a.b }}", "{\"m\": {}}", CT_EINVAL, "'a' is undefined");
	BAD("{{ 'a' + 1 }}", NULL, CT_EINVAL, "unsupported operand types: string and int");
	BAD("{{ 1 // 0 }}", NULL, CT_EINVAL, "by zero");
	BAD("{% set x.y = 1 %}", "{\"x\": {}}", CT_EINVAL, "only of a namespace");
	BAD("{{ 5() }}", NULL, CT_EINVAL, "not callable");
}

static void test_refusals(void **state)
{
	(void)state;
	BAD("a\n{% with x = 1 %}x{% endwith %}", NULL, CT_EUNSUPP, "tpl line 2: statement 'with' is not supported");
	BAD("{% extends 'base' %}", NULL, CT_EUNSUPP, "statement 'extends' is not supported");
	BAD("{% include 'x.html' %}", NULL, CT_EUNSUPP, "statement 'include' is not supported");
	BAD("{% raw %}x{% endraw %}", NULL, CT_EUNSUPP, "statement 'raw' is not supported");
	BAD("{% call f() %}{% endcall %}", NULL, CT_EUNSUPP, "'call' is not supported");
	BAD("\n\n{{ x | wordwrap }}", NULL, CT_EUNSUPP, "tpl line 3: filter 'wordwrap' is not supported");
	BAD("{{ x is escaped }}", NULL, CT_EUNSUPP, "test 'escaped' is not supported");
	BAD("{{ '{}'.format(1) }}", NULL, CT_EUNSUPP, "string method 'format' is not supported");
	BAD("{{ '%s' % 1 }}", NULL, CT_EUNSUPP, "string formatting with % is not supported");
	BAD("{% for x in y recursive %}{% endfor %}", NULL, CT_EUNSUPP, "recursive loops");
	BAD("{{ f(*args) }}", NULL, CT_EUNSUPP, "*args");
	BAD("{{ 1 < 2 < 3 }}", NULL, CT_EUNSUPP, "chained comparisons");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	BAD("{{ 1 + }}", NULL, CT_EFORMAT, "expected an expression, got '}}'");
	BAD("a\n{% if x %}", NULL, CT_EFORMAT, "missing {% endif %}");
	BAD("{% for x in y %}", NULL, CT_EFORMAT, "missing {% endfor %}");
	BAD("x\n\n{% endif %}", NULL, CT_EFORMAT, "tpl line 3: unexpected 'endif'");
	BAD("{% else %}", NULL, CT_EFORMAT, "unexpected 'else'");
	BAD("{% break %}", NULL, CT_EFORMAT, "break outside a loop");
	BAD("{{ 'abc }}", NULL, CT_EFORMAT, "unterminated string");
	BAD("{{ x ", NULL, CT_EFORMAT, "ends inside a tag");
	BAD("{# x ", NULL, CT_EFORMAT, "unterminated comment");
	BAD("{{ a ? b }}", NULL, CT_EFORMAT, "unexpected character '?'");
	BAD("{% if %}{% endif %}", NULL, CT_EFORMAT, "expected an expression");
}

static void test_limits(void **state)
{
	struct ct_jinja_limits lim;
	char *o, *deep;
	int rc, i;

	(void)state;
	ct_jinja_limits_default(&lim);
	lim.max_out = 1000;
	rc = render_lim("{% for i in range(100) %}0123456789-{% endfor %}", NULL, &lim, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(o, "over the limit of 1000 bytes"));
	free(o);
	ct_jinja_limits_default(&lim);
	lim.max_steps = 100000;
	rc = render_lim("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
			NULL, &lim, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(o, "steps"));
	free(o);
	ct_jinja_limits_default(&lim);
	lim.max_mem = 1 << 20;
	rc = render_lim("{{ 'x' * 10000000 }}", NULL, &lim, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	free(o);
	rc = render_lim("{% set s = 'xxxxxxxxxxxxxxxx' %}{% for i in range(20) %}{% set s = s ~ s %}{% endfor %}",
			NULL, &lim, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	free(o);
	deep = calloc(1, 4000);
	strcpy(deep, "{{ ");
	for (i = 0; i < 1000; i++)
		strcat(deep, "(");
	strcat(deep, "1");
	for (i = 0; i < 1000; i++)
		strcat(deep, ")");
	strcat(deep, " }}");
	rc = render(deep, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(o, "nested more than"));
	free(o);
	free(deep);
	ct_jinja_limits_default(&lim);
	lim.max_src = 10;
	rc = render_lim("{{ 'longer than ten' }}", NULL, &lim, NULL, &o);
	assert_int_equal(rc, CT_ETOOBIG);
	free(o);
}

/* The real templates on one conversation, the text as the models' cards
 * show it. */
static char *real(const char *name, const char *vars)
{
	char path[4096];
	unsigned char *src = NULL;
	const char *top = getenv("top_srcdir");
	size_t n;
	char *o;
	int rc;

	snprintf(path, sizeof(path), "%s/test/data/chat/%s.jinja", top ? top : "..", name);
	rc = ct_file_read_all(path, 1 << 20, &src, &n);
	assert_int_equal(rc, 0);
	rc = render((const char *)src, vars, &o);
	if (rc != 0)
		fail_msg("%s: %s", name, o);
	free(src);
	return o;
}

static void test_real_templates(void **state)
{
	const char *conv = "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"}, "
		"{\"role\": \"user\", \"content\": \" Hi! \"}, {\"role\": \"assistant\", \"content\": "
		"\"<think>\\nhm\\n</think>\\n\\nHello.\"}, {\"role\": \"user\", \"content\": \"Bye\"}], "
		"\"add_generation_prompt\": true, \"bos_token\": \"<|begin_of_text|>\"}";
	char *o;

	(void)state;
	o = real("smollm2", conv);
	assert_string_equal(o, "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\n Hi! <|im_end|>\n"
			    "<|im_start|>assistant\n<think>\nhm\n</think>\n\nHello.<|im_end|>\n"
			    "<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
	free(o);
	o = real("qwen3", conv);	/* reasoning before the last query is dropped */
	assert_string_equal(o, "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\n Hi! <|im_end|>\n"
			    "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
			    "<|im_start|>assistant\n");
	free(o);
	o = real("llama3_2", conv);	/* strftime_now's date, contents trimmed */
	assert_string_equal(o, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
			    "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe kind.<|eot_id|>"
			    "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
			    "<|start_header_id|>assistant<|end_header_id|>\n\n<think>\nhm\n</think>\n\nHello.<|eot_id|>"
			    "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
			    "<|start_header_id|>assistant<|end_header_id|>\n\n");
	free(o);
	o = real("qwen2_5", "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}");
	assert_string_equal(o, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
			    "helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
	free(o);
	o = real("llama3_1", "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"bos_token\": \"B\"}");
	assert_string_equal(o, "B<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
			    "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user"
			    "<|end_header_id|>\n\nHi<|eot_id|>");
	free(o);
	o = real("llama3", "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"bos_token\": \"B\"}");
	assert_string_equal(o, "B<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
			    "<|start_header_id|>assistant<|end_header_id|>\n\n");
	free(o);
}

/* tokenizer_config.json: a list of named templates, AddedToken objects. */
static void test_chat_config(void **state)
{
	const char *cfg = "{\"bos_token\": {\"content\": \"<s>\", \"lstrip\": false}, "
		"\"eos_token\": \"</s>\", \"chat_template\": [{\"name\": \"tool_use\", "
		"\"template\": \"T\"}, {\"name\": \"default\", \"template\": "
		"\"{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}{{ eos_token }}"
		"{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}\"}]}";
	char *dir = ct_test_mkdtemp(), path[4200];
	struct ct_buf out = CT_BUF_INIT(0);
	struct ct_chat *c;
	struct ct_jv *conv;
	int rc;

	(void)state;
	snprintf(path, sizeof(path), "%s/tokenizer_config.json", dir);
	assert_int_equal(ct_file_write_atomic(path, cfg, strlen(cfg), 0644), 0);
	assert_int_equal(ct_chat_open(dir, &c), 0);
	rc = ct_chat_parse_line("{\"instruction\": \"Hi\", \"input\": \"there\", \"output\": \"yo\"}",
				strlen("{\"instruction\": \"Hi\", \"input\": \"there\", \"output\": \"yo\"}"),
				"f.jsonl", 3, &conv);
	assert_int_equal(rc, 0);
	assert_int_equal(ct_chat_render(c, conv, 1, &out), 0);
	assert_string_equal(ct_buf_cstr(&out), "<s>user:Hi\n\nthere</s>assistant:yo</s>assistant:");
	ct_jv_free(conv);
	ct_chat_free(c);
	ct_buf_free(&out);
	assert_int_equal(ct_file_write_atomic(path, "{}", 2, 0644), 0);
	assert_int_equal(ct_chat_open(path, &c), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "no chat_template"));
	assert_null(c);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_chat_lines(void **state)
{
	static const struct { const char *line, *err; } bad[] = {
		{ "{\"messages\": {}}", "f.jsonl:9: \"messages\" is not a non-empty array" },
		{ "{\"messages\": [1]}", "f.jsonl:9: message 1 is not an object" },
		{ "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}", "message 1 has no \"content\"" },
		{ "{\"instruction\": \"x\", \"output\": 1}", "neither" },
		{ "\"text\"", "f.jsonl:9: not a JSON object" },
		{ "{\"messages\": [", "f.jsonl:9: bad JSON" },
	};
	struct ct_jv *conv;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ct_chat_parse_line(bad[i].line, strlen(bad[i].line), "f.jsonl", 9, &conv),
				 CT_EFORMAT);
		if (strstr(ct_errmsg(CT_EFORMAT), bad[i].err) == NULL)
			fail_msg("%s: %s", bad[i].line, ct_errmsg(CT_EFORMAT));
		assert_null(conv);
	}
	/* content null is fine beside tool_calls */
	const char *ok = "{\"messages\": [{\"role\": \"assistant\", \"content\": null, \"tool_calls\": []}]}";

	assert_int_equal(ct_chat_parse_line(ok, strlen(ok), "f.jsonl", 1, &conv), 0);
	ct_jv_free(conv);
}

CT_TEST_MAIN(test_whitespace, test_expressions, test_filters, test_methods, test_tests,
	     test_loops, test_statements, test_macros, test_raise_and_clock, test_undefined, test_refusals,
	     test_syntax_errors, test_limits, test_real_templates, test_chat_config,
	     test_chat_lines)
