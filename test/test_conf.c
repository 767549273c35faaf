/*
 * Unit tests for lib/ct_conf: typed getters, comments, quoting, sections,
 * syntax and value errors that name file:line, and save/load round trips.
 */
#include "ct_test.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"

#include <limits.h>

static struct ct_conf *parse_ok(const char *text)
{
	struct ct_conf *c = NULL;
	int rc = ct_conf_parse(text, strlen(text), "prefs.conf", &c);

	if (rc < 0)
		fail_msg("parse failed: %s", ct_errmsg(rc));
	assert_non_null(c);
	return c;
}

/* Parse must fail with CT_ECONFIG and exactly this detail. */
static void parse_fails(const char *text, const char *msg)
{
	struct ct_conf *c = (struct ct_conf *)1;
	int rc = ct_conf_parse(text, strlen(text), "prefs.conf", &c);

	assert_int_equal(rc, CT_ECONFIG);
	assert_null(c);
	assert_string_equal(ct_errmsg(rc), msg);
}

static void test_types(void **state)
{
	struct ct_conf *c = parse_ok(
		"# crowdtune prefs\n"
		"idle_minutes = 3\n"
		"neg=-42\n"
		"hex = 0x1F\n"
		"octal_looking = 010\n"
		"ratio = 0.25\n"
		"flag1 = yes\n flag2 = OFF \nflag3=1\n"
		"disk = 5M\n disk2 = 10k\n disk3 = 2GiB\n disk4 = 123\n"
		"name = plain text value   ; trailing comment\n");
	const char *s;
	long l;
	double d;
	int b;
	uint64_t sz;

	(void)state;
	assert_int_equal(ct_conf_get_int(c, "idle_minutes", 0, 1, 60, &l), 0);
	assert_int_equal(l, 3);
	assert_int_equal(ct_conf_get_int(c, "neg", 0, -100, 100, &l), 0);
	assert_int_equal(l, -42);
	assert_int_equal(ct_conf_get_int(c, "hex", 0, 0, 100, &l), 0);
	assert_int_equal(l, 31);
	assert_int_equal(ct_conf_get_int(c, "octal_looking", 0, 0, 100, &l), 0);
	assert_int_equal(l, 10);
	assert_int_equal(ct_conf_get_int(c, "absent", 77, 0, 10, &l), 0);
	assert_int_equal(l, 77);
	assert_int_equal(ct_conf_get_double(c, "ratio", 0, 0, 1, &d), 0);
	assert_true(d == 0.25);
	assert_int_equal(ct_conf_get_bool(c, "flag1", 0, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(ct_conf_get_bool(c, "flag2", 1, &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(ct_conf_get_bool(c, "flag3", 0, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(ct_conf_get_bool(c, "absent", 1, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(ct_conf_get_size(c, "disk", 0, &sz), 0);
	assert_int_equal(sz, 5u << 20);
	assert_int_equal(ct_conf_get_size(c, "disk2", 0, &sz), 0);
	assert_int_equal(sz, 10240);
	assert_int_equal(ct_conf_get_size(c, "disk3", 0, &sz), 0);
	assert_int_equal(sz, 2ull << 30);
	assert_int_equal(ct_conf_get_size(c, "disk4", 0, &sz), 0);
	assert_int_equal(sz, 123);
	assert_int_equal(ct_conf_get_str(c, "name", "x", &s), 0);
	assert_string_equal(s, "plain text value");
	assert_int_equal(ct_conf_get_str(c, "absent", "dflt", &s), 0);
	assert_string_equal(s, "dflt");
	assert_null(ct_conf_get(c, "absent"));
	ct_conf_free(c);
}

static void test_value_errors(void **state)
{
	struct ct_conf *c = parse_ok(
		"a = 1\n"
		"idle_minutes = 3x\n"
		"\n"
		"big = 99\n"
		"r = nan\n"
		"b = maybe\n"
		"s = 5Q\n"
		"huge = 99999999999999999999\n"
		"hugesize = 20000000000T\n");
	long l = -1;
	double d = -1;
	int b = -1;
	uint64_t sz = 7;

	(void)state;
	assert_int_equal(ct_conf_get_int(c, "idle_minutes", 0, 0, 100, &l), CT_ECONFIG);
	assert_string_equal(ct_errmsg(CT_ECONFIG),
			    "prefs.conf:2: idle_minutes: '3x' is not an integer");
	assert_int_equal(l, -1);	/* untouched on failure */
	assert_int_equal(ct_conf_get_int(c, "big", 0, 0, 10, &l), CT_ECONFIG);
	assert_string_equal(ct_errmsg(CT_ECONFIG),
			    "prefs.conf:4: big: '99' is out of range [0, 10]");
	assert_int_equal(ct_conf_get_int(c, "huge", 0, LONG_MIN, LONG_MAX, &l), CT_ECONFIG);
	assert_int_equal(ct_conf_get_double(c, "r", 0, -1e9, 1e9, &d), CT_ECONFIG);
	assert_non_null(strstr(ct_errmsg(CT_ECONFIG), "prefs.conf:5: r:"));
	assert_int_equal(ct_conf_get_double(c, "idle_minutes", 0, 0, 1, &d), CT_ECONFIG);
	assert_int_equal(ct_conf_get_double(c, "big", 0, 0, 1, &d), CT_ECONFIG);
	assert_true(d == -1);
	assert_int_equal(ct_conf_get_bool(c, "b", 0, &b), CT_ECONFIG);
	assert_non_null(strstr(ct_errmsg(CT_ECONFIG), "prefs.conf:6: b: 'maybe'"));
	assert_int_equal(b, -1);
	assert_int_equal(ct_conf_get_size(c, "s", 0, &sz), CT_ECONFIG);
	assert_non_null(strstr(ct_errmsg(CT_ECONFIG), "prefs.conf:7: s: '5Q'"));
	assert_int_equal(ct_conf_get_size(c, "hugesize", 0, &sz), CT_ECONFIG);
	assert_int_equal(ct_conf_get_size(c, "r", 0, &sz), CT_ECONFIG);
	assert_int_equal(sz, 7);
	ct_conf_free(c);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_fails("a = 1\n# ok\njust some words\n", "prefs.conf:3: expected 'key = value'");
	parse_fails("= 5\n", "prefs.conf:1: expected 'key = value'");
	parse_fails("a = 1\nb = 2\na = 3\n",
		    "prefs.conf:3: duplicate key 'a' (first on line 1)");
	parse_fails("s = \"open\n", "prefs.conf:1: unterminated quoted value");
	parse_fails("s = \"a\\n\"\n",
		    "prefs.conf:1: bad escape in quoted value (only \\\" and \\\\)");
	parse_fails("s = \"a\" b\n", "prefs.conf:1: text after the closing quote");
	parse_fails("\n[sec\n", "prefs.conf:2: expected '[section]'");
	parse_fails("[bad name]\n", "prefs.conf:1: bad section name");
	parse_fails("[s]\nx=1\n[t]\nx=1\n[s]\nx = 2\n",
		    "prefs.conf:6: duplicate key 's.x' (first on line 2)");
	parse_fails("a = b\x01\n", "prefs.conf:1: control character in line");
}

static void test_nul_byte(void **state)
{
	struct ct_conf *c = (struct ct_conf *)1;

	(void)state;
	assert_int_equal(ct_conf_parse("a = 1\0b = 2\n", 12, "x.conf", &c), CT_ECONFIG);
	assert_null(c);
	assert_string_equal(ct_errmsg(CT_ECONFIG), "x.conf: contains a NUL byte");
}

static void test_quotes_sections(void **state)
{
	struct ct_conf *c = parse_ok(
		"top = 1\r\n"
		"q = \"say \\\"hi\\\" \\\\ # not a comment ; nor this\"  # comment\n"
		"url = http://example.org/#frag;x\n"
		"spaces = \"  padded  \"\n"
		"empty =\n"
		"empty2 = \"\"\n"
		"[server]\n"
		"  port = 8080\n"
		"dotted.key = v\n"
		"[client] ; comment\n"
		"port = 9\n");

	(void)state;
	assert_string_equal(ct_conf_get(c, "top"), "1");
	assert_string_equal(ct_conf_get(c, "q"), "say \"hi\" \\ # not a comment ; nor this");
	assert_string_equal(ct_conf_get(c, "url"), "http://example.org/#frag;x");
	assert_string_equal(ct_conf_get(c, "spaces"), "  padded  ");
	assert_string_equal(ct_conf_get(c, "empty"), "");
	assert_string_equal(ct_conf_get(c, "empty2"), "");
	assert_string_equal(ct_conf_get(c, "server.port"), "8080");
	assert_string_equal(ct_conf_get(c, "server.dotted.key"), "v");
	assert_string_equal(ct_conf_get(c, "client.port"), "9");
	assert_null(ct_conf_get(c, "port"));
	assert_int_equal(ct_conf_count(c), 9);
	assert_string_equal(ct_conf_key_at(c, 0), "top");
	assert_string_equal(ct_conf_key_at(c, 8), "client.port");
	assert_null(ct_conf_key_at(c, 9));
	ct_conf_free(c);
}

static void test_save_load_roundtrip(void **state)
{
	static const char *const kv[][2] = {
		{ "plain", "value" },
		{ "empty", "" },
		{ "padded", "  both ends\t" },
		{ "quotes", "\"quoted\" and \\backslash\\" },
		{ "comment_chars", "a # b ; c" },
		{ "tab", "x\ty" },
		{ "server.port", "8080" },
	};
	const size_t n = sizeof(kv) / sizeof(kv[0]);
	struct ct_conf *c = NULL, *back = NULL;
	char *dir = ct_test_mkdtemp();
	char path[4200];
	long port = 0;
	int rc;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/prefs.conf", dir);
	assert_int_equal(ct_conf_new(&c), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ct_conf_set(c, kv[i][0], "first"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ct_conf_set(c, kv[i][0], kv[i][1]), 0);	/* replace */
	assert_int_equal(ct_conf_count(c), n);
	assert_int_equal(ct_conf_set(c, "bad key", "x"), CT_EINVAL);
	assert_int_equal(ct_conf_set(c, "k", "line\nbreak"), CT_EINVAL);
	/* A set value has no line: errors name the config only. */
	assert_int_equal(ct_conf_set(c, "num", "abc"), 0);
	assert_int_equal(ct_conf_get_int(c, "num", 0, 0, 1, &port), CT_ECONFIG);
	assert_string_equal(ct_errmsg(CT_ECONFIG), "(new): num: 'abc' is not an integer");
	assert_int_equal(ct_conf_save(c, path), 0);

	assert_int_equal(ct_conf_load(path, &back), 0);
	assert_int_equal(ct_conf_count(back), n + 1);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(ct_conf_key_at(back, i), kv[i][0]);
		assert_string_equal(ct_conf_get(back, kv[i][0]), kv[i][1]);
	}
	assert_int_equal(ct_conf_get_int(back, "server.port", 0, 1, 65535, &port), 0);
	assert_int_equal(port, 8080);
	/* Errors from a loaded file name its path and line. */
	assert_int_equal(ct_conf_get_int(back, "num", 0, 0, 1, &port), CT_ECONFIG);
	assert_non_null(strstr(ct_errmsg(CT_ECONFIG), "prefs.conf:8: num: 'abc'"));
	ct_conf_free(back);
	ct_conf_free(c);

	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	back = (struct ct_conf *)1;
	rc = ct_conf_load(path, &back);
	assert_int_equal(rc, CT_ENOENT);
	assert_null(back);
	assert_non_null(strstr(ct_errmsg(rc), "missing.conf"));
	ct_conf_free(NULL);
	ct_test_rmtree(dir);
	free(dir);
}

CT_TEST_MAIN(test_types, test_value_errors, test_syntax_errors, test_nul_byte,
	test_quotes_sections, test_save_load_roundtrip)
