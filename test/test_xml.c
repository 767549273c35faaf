/*
 * Unit tests for lib/ct_xml: parsing with typed getters, the size and depth
 * limits, refusal of DOCTYPE/entity documents (billion laughs, XXE) without
 * expanding or fetching anything, silence on stderr, parsing from several
 * threads, the escaping writer, and the node and text caps of
 * ct_xml_parse_lim.
 */
#include "ct_test.h"
#include "ct_err.h"
#include "ct_xml.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>

static const char *const DOC =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<scheduler_request>\n"
	"  <hostid> 42 </hostid>\n"
	"  <name>\n  a &amp; b &lt;c&gt;  </name>\n"
	"  <lr>3.0e-4</lr>\n"
	"  <bytes>9223372036854775807</bytes>\n"
	"  <file>a</file><other/><file>b</file>\n  <file>c</file>\n"
	"  <bad>12abc</bad><nan>nan</nan><inf>-inf</inf><empty>  </empty>\n"
	"</scheduler_request>\n";

static xmlDocPtr parse_ok(const char *text, int max_depth)
{
	xmlDocPtr doc = NULL;
	int rc = ct_xml_parse(text, strlen(text), 1 << 20, max_depth, &doc);

	if (rc < 0)
		fail_msg("parse failed: %s", ct_errmsg(rc));
	assert_non_null(doc);
	return doc;
}

static int parse_rc(const char *text, size_t max_bytes, int max_depth)
{
	xmlDocPtr doc = (xmlDocPtr)1;
	int rc = ct_xml_parse(text, strlen(text), max_bytes, max_depth, &doc);

	if (rc == 0)
		xmlFreeDoc(doc);
	else
		assert_null(doc);
	return rc;
}

static void test_parse_and_get(void **state)
{
	xmlDocPtr doc = parse_ok(DOC, 8);
	xmlNodePtr root = xmlDocGetRootElement(doc), n;
	const char *want[] = { "a", "b", "c" };
	char *s = NULL;
	long l = 0;
	int64_t i64 = 0;
	double d = 0;
	int count = 0;

	(void)state;
	assert_string_equal((const char *)root->name, "scheduler_request");
	assert_int_equal(ct_xml_get_long(root, "hostid", 1, LONG_MAX, &l), 0);
	assert_int_equal(l, 42);
	assert_int_equal(ct_xml_get_int64(root, "bytes", 0, INT64_MAX, &i64), 0);
	assert_true(i64 == INT64_MAX);
	assert_int_equal(ct_xml_get_double(root, "lr", 0, 1, &d), 0);
	assert_true(d == 3.0e-4);
	assert_int_equal(ct_xml_get_str(root, "name", 100, &s), 0);
	assert_string_equal(s, "a & b <c>");
	free(s);
	for (n = ct_xml_child(root, "file"); n != NULL; n = ct_xml_next(n, "file")) {
		xmlChar *text = xmlNodeGetContent(n);

		assert_true(count < 3);
		assert_string_equal((const char *)text, want[count]);
		xmlFree(text);
		count++;
	}
	assert_int_equal(count, 3);
	assert_string_equal((const char *)ct_xml_child(root, NULL)->name, "hostid");
	assert_null(ct_xml_child(root, "nope"));
	assert_null(ct_xml_child(NULL, "x"));
	assert_null(ct_xml_next(NULL, "x"));
	xmlFreeDoc(doc);
}

static void test_get_errors(void **state)
{
	xmlDocPtr doc = parse_ok(DOC, 8);
	xmlNodePtr root = xmlDocGetRootElement(doc);
	char *s = (char *)1;
	long l = -5;
	double d = -5;
	int rc;

	(void)state;
	assert_int_equal(ct_xml_get_str(root, "missing", 10, &s), CT_ENOTFOUND);
	assert_null(s);
	rc = ct_xml_get_str(root, "name", 8, &s);	/* "a & b <c>" is 9 */
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(ct_errmsg(rc), "<name>"));
	assert_int_equal(ct_xml_get_long(root, "missing", 0, 10, &l), CT_ENOTFOUND);
	assert_int_equal(ct_xml_get_long(root, "bad", 0, 100, &l), CT_EFORMAT);
	assert_int_equal(ct_xml_get_long(root, "empty", 0, 100, &l), CT_EFORMAT);
	assert_int_equal(ct_xml_get_long(root, "name", 0, 100, &l), CT_EFORMAT);
	assert_int_equal(ct_xml_get_long(root, "hostid", 0, 41, &l), CT_ERANGE);
	assert_int_equal(ct_xml_get_long(root, "hostid", 43, 100, &l), CT_ERANGE);
	assert_int_equal(l, -5);
	assert_int_equal(ct_xml_get_double(root, "nan", -1e9, 1e9, &d), CT_ENONFINITE);
	assert_int_equal(ct_xml_get_double(root, "inf", -INFINITY, INFINITY, &d), CT_ENONFINITE);
	assert_int_equal(ct_xml_get_double(root, "lr", 0, 1e-4, &d), CT_ERANGE);
	assert_int_equal(ct_xml_get_double(root, "bad", 0, 1e9, &d), CT_EFORMAT);
	assert_true(d == -5);
	xmlFreeDoc(doc);
}

/* "<a><a>...</a></a>" nested depth times. */
static char *nested(int depth)
{
	char *p = malloc((size_t)depth * 7 + 1), *w = p;

	assert_non_null(p);
	for (int i = 0; i < depth; i++)
		w += sprintf(w, "<a>");
	for (int i = 0; i < depth; i++)
		w += sprintf(w, "</a>");
	return p;
}

static void test_limits(void **state)
{
	char *ok = nested(10), *deep = nested(11), *very = nested(100000);
	int rc;

	(void)state;
	assert_int_equal(parse_rc(ok, 1 << 20, 10), 0);
	rc = parse_rc(deep, 1 << 20, 10);
	assert_int_equal(rc, CT_ETOOBIG);
	assert_non_null(strstr(ct_errmsg(rc), "deeper than 10"));
	assert_int_equal(parse_rc(very, 1 << 20, 32), CT_ETOOBIG);
	/* Size: the limit is inclusive. */
	assert_int_equal(parse_rc(ok, strlen(ok), 10), 0);
	rc = parse_rc(ok, strlen(ok) - 1, 10);
	assert_int_equal(rc, CT_ETOOBIG);
	free(ok);
	free(deep);
	free(very);
}

static void test_malformed_is_quiet(void **state)
{
	char *dir = ct_test_mkdtemp(), path[4200];
	int saved, fd, rc;
	off_t size;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	rc = parse_rc("<a>\n<b></a>", 1000, 10);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size = lseek(fd, 0, SEEK_END);
	close(fd);
	assert_int_equal(rc, CT_EXML);
	assert_non_null(strstr(ct_errmsg(rc), "line 2"));
	assert_int_equal(size, 0);	/* libxml2 printed nothing */
	assert_int_equal(parse_rc("", 1000, 10), CT_EXML);
	assert_int_equal(parse_rc("   ", 1000, 10), CT_EXML);
	assert_int_equal(parse_rc("<a>text", 1000, 10), CT_EXML);
	assert_int_equal(parse_rc("<a></a><b></b>", 1000, 10), CT_EXML);
	assert_int_equal(parse_rc("<a>&undefined;</a>", 1000, 10), CT_EXML);
	assert_int_equal(parse_rc("<a>\x01</a>", 1000, 10), CT_EXML);
	ct_test_rmtree(dir);
	free(dir);
}

static void test_entities_refused(void **state)
{
	const char *laughs =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE lolz [\n"
		" <!ENTITY lol \"lol\">\n"
		" <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
		" <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
		" <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
		" <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
		" <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
		" <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
		" <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
		" <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
		" <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
		"]>\n<lolz>&lol9;</lolz>\n";
	const char *xxe =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<r>&x;</r>\n";
	const char *ext_dtd =
		"<!DOCTYPE r SYSTEM \"http://127.0.0.1:9/evil.dtd\"><r/>\n";
	const char *plain_doctype = "<!DOCTYPE r><r>ok</r>";
	int rc;

	(void)state;
	rc = parse_rc(laughs, 1 << 20, 32);
	assert_int_equal(rc, CT_EXML);
	assert_non_null(strstr(ct_errmsg(rc), "DOCTYPE"));
	rc = parse_rc(xxe, 1 << 20, 32);
	assert_int_equal(rc, CT_EXML);
	assert_null(strstr(ct_errmsg(rc), "root:"));
	assert_int_equal(parse_rc(ext_dtd, 1 << 20, 32), CT_EXML);
	assert_int_equal(parse_rc(plain_doctype, 1 << 20, 32), CT_EXML);
}

struct thread_arg {
	int ok;
};

static void *parse_many(void *p)
{
	struct thread_arg *a = p;

	a->ok = 1;
	for (int i = 0; i < 200; i++) {
		xmlDocPtr doc = NULL;
		long l = 0;

		if (ct_xml_parse(DOC, strlen(DOC), 1 << 20, 8, &doc) != 0 ||
		    ct_xml_get_long(xmlDocGetRootElement(doc), "hostid", 0, 100, &l) != 0 ||
		    l != 42)
			a->ok = 0;
		xmlFreeDoc(doc);
		doc = NULL;
		if (ct_xml_parse("<a><b></a>", 10, 100, 8, &doc) != CT_EXML || doc != NULL)
			a->ok = 0;
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	struct thread_arg a[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, parse_many, &a[i]), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(a[i].ok, 1);
	}
}

static void test_writer(void **state)
{
	struct ct_buf b = CT_BUF_INIT(4096);
	const unsigned char raw[3] = { 0x00, 0xab, 0xff };
	const char *tricky = "<script>&\"'\ttab\nline\rcr";
	xmlDocPtr doc;
	char *s = NULL;
	int64_t v = 0;

	(void)state;
	assert_int_equal(ct_xml_open(&b, "reply"), 0);
	assert_int_equal(ct_xml_elem_str(&b, "msg", "<script>&\"'"), 0);
	assert_int_equal(ct_xml_elem_long(&b, "n", -7), 0);
	assert_int_equal(ct_xml_elem_int64(&b, "big", INT64_MIN), 0);
	assert_int_equal(ct_xml_elem_hex(&b, "sha", raw, sizeof(raw)), 0);
	assert_int_equal(ct_xml_close(&b, "reply"), 0);
	assert_string_equal(ct_buf_cstr(&b),
			    "<reply>\n"
			    "<msg>&lt;script&gt;&amp;&quot;&apos;</msg>\n"
			    "<n>-7</n>\n"
			    "<big>-9223372036854775808</big>\n"
			    "<sha>00abff</sha>\n"
			    "</reply>\n");
	ct_buf_reset(&b);
	/* What the writer escapes, the parser gives back unchanged. */
	assert_int_equal(ct_xml_open(&b, "r"), 0);
	assert_int_equal(ct_xml_elem_str(&b, "t", tricky), 0);
	assert_int_equal(ct_xml_elem_int64(&b, "big", INT64_MIN), 0);
	assert_int_equal(ct_xml_close(&b, "r"), 0);
	doc = parse_ok(ct_buf_cstr(&b), 4);
	assert_int_equal(ct_xml_get_str(xmlDocGetRootElement(doc), "t", 100, &s), 0);
	assert_string_equal(s, tricky);
	free(s);
	assert_int_equal(ct_xml_get_int64(xmlDocGetRootElement(doc), "big", INT64_MIN, 0, &v), 0);
	assert_true(v == INT64_MIN);
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_attributes(void **state)
{
	struct ct_buf b = CT_BUF_INIT(1024);
	const char *tricky = "a\"b'c<d>&e\tf\ng";
	xmlNodePtr root, file;
	xmlDocPtr doc;
	char *s = (char *)1;

	(void)state;
	assert_int_equal(ct_xml_open(&b, "wu"), 0);
	assert_int_equal(ct_xml_open_attr(&b, "file", "role", "model"), 0);
	assert_int_equal(ct_xml_close(&b, "file"), 0);
	assert_int_equal(ct_xml_open_attr(&b, "file", "role", tricky), 0);
	assert_int_equal(ct_xml_close(&b, "file"), 0);
	assert_int_equal(ct_xml_close(&b, "wu"), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "<file role=\"model\">\n"));
	assert_int_equal(ct_xml_open_attr(&b, "file", "bad attr", "x"), CT_EINVAL);
	assert_int_equal(ct_xml_open_attr(&b, "file", "role", "\x01"), CT_EINVAL);

	doc = parse_ok(ct_buf_cstr(&b), 4);
	root = xmlDocGetRootElement(doc);
	file = ct_xml_child(root, "file");
	assert_int_equal(ct_xml_get_attr(file, "role", 5, &s), 0);
	assert_string_equal(s, "model");
	free(s);
	assert_int_equal(ct_xml_get_attr(file, "role", 4, &s), CT_ETOOBIG);
	assert_null(s);
	assert_int_equal(ct_xml_get_attr(file, "size", 4, &s), CT_ENOTFOUND);
	/* Quotes, markup, TAB and LF survive the round trip. */
	assert_int_equal(ct_xml_get_attr(ct_xml_next(file, "file"), "role", 100, &s), 0);
	assert_string_equal(s, tricky);
	free(s);
	assert_int_equal(ct_xml_get_attr(NULL, "role", 100, &s), CT_ENOTFOUND);
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_writer_errors(void **state)
{
	struct ct_buf b = CT_BUF_INIT(32);

	(void)state;
	assert_int_equal(ct_buf_appends(&b, "<r>"), 0);
	assert_int_equal(ct_xml_elem_str(&b, "m", "bell\a"), CT_EINVAL);
	assert_int_equal(ct_xml_elem_str(&b, "m", "del\x7f"), CT_EINVAL);
	assert_string_equal(ct_buf_cstr(&b), "<r>");	/* left as it was */
	assert_int_equal(ct_xml_elem_str(&b, "bad tag", "x"), CT_EINVAL);
	assert_int_equal(ct_xml_elem_str(&b, "1x", "x"), CT_EINVAL);
	assert_int_equal(ct_xml_open(&b, "a<b"), CT_EINVAL);
	assert_int_equal(ct_xml_elem_str(&b, "m", "far too long for a 32 byte cap"), CT_ETOOBIG);
	assert_string_equal(ct_buf_cstr(&b), "<r>");
	assert_int_equal(ct_xml_elem_double(&b, "d", NAN), CT_ENONFINITE);
	assert_int_equal(ct_xml_elem_double(&b, "d", -INFINITY), CT_ENONFINITE);
	ct_buf_free(&b);
}

static void test_double_roundtrip(void **state)
{
	const double vals[] = { 0.1, 1.0 / 3.0, -2.5e-300, 1.7976931348623157e308, 3e-4,
				4.9e-324, -0.0, 123456789.123456789 };
	struct ct_buf b = CT_BUF_INIT(0);

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		xmlDocPtr doc;
		double back = 0;

		ct_buf_reset(&b);
		assert_int_equal(ct_xml_open(&b, "r"), 0);
		assert_int_equal(ct_xml_elem_double(&b, "d", vals[i]), 0);
		assert_int_equal(ct_xml_close(&b, "r"), 0);
		doc = parse_ok(ct_buf_cstr(&b), 4);
		assert_int_equal(ct_xml_get_double(xmlDocGetRootElement(doc), "d", -INFINITY,
						   INFINITY, &back), 0);
		assert_memory_equal(&back, &vals[i], sizeof(double));	/* bit-identical */
		xmlFreeDoc(doc);
	}
	ct_buf_free(&b);
}

/* n copies of unit between open and close, malloc'd. */
static char *repeat(const char *open, const char *unit, size_t n, const char *close)
{
	size_t u = strlen(unit), len = strlen(open) + u * n + strlen(close);
	char *s = malloc(len + 1), *p = s;

	assert_non_null(s);
	p += sprintf(p, "%s", open);
	for (size_t i = 0; i < n; i++, p += u)
		memcpy(p, unit, u);
	sprintf(p, "%s", close);
	return s;
}

static int parse_lim(const char *doc, long nodes, size_t text)
{
	struct ct_xml_limits lim = { .max_bytes = 64u << 20, .max_depth = 16,
				     .max_nodes = nodes, .max_text = text };
	xmlDocPtr d = NULL;
	int rc = ct_xml_parse_lim(doc, strlen(doc), &lim, &d);

	if (rc == 0)
		assert_non_null(d);
	else
		assert_null(d);
	xmlFreeDoc(d);
	return rc;
}

/* The node and text caps: a document at the cap parses, one
 * node or byte over it does not, whatever the kind of node; attribute
 * bombs are refused before libxml2 reads the tag; no caps is the old
 * parse. */
static void test_node_caps(void **state)
{
	char *d;

	(void)state;
	d = repeat("<r>", "<a/>", 99, "</r>");	/* 100 elements */
	assert_int_equal(parse_lim(d, 100, 0), 0);
	assert_int_equal(parse_lim(d, 99, 0), CT_ETOOBIG);
	free(d);
	d = repeat("<r>", "<a>x</a>", 50, "</r>");	/* 1 + 50 elements + 50 texts */
	assert_int_equal(parse_lim(d, 101, 0), 0);
	assert_int_equal(parse_lim(d, 100, 0), CT_ETOOBIG);
	assert_int_equal(parse_lim(d, 0, 50), 0);
	assert_int_equal(parse_lim(d, 0, 49), CT_ETOOBIG);
	free(d);
	d = repeat("<r>", "<!--c-->", 100, "</r>");	/* comments count */
	assert_int_equal(parse_lim(d, 50, 0), CT_ETOOBIG);
	free(d);
	d = repeat("<r>", "<?p x?>", 100, "</r>");	/* PIs too */
	assert_int_equal(parse_lim(d, 50, 0), CT_ETOOBIG);
	free(d);
	d = repeat("<r>", "<![CDATA[x]]><a/>", 100, "</r>");
	assert_int_equal(parse_lim(d, 150, 0), CT_ETOOBIG);
	free(d);
	d = repeat("<r>", "x", 1u << 20, "</r>");	/* one long text */
	assert_int_equal(parse_lim(d, 10, 1u << 20), 0);
	assert_int_equal(parse_lim(d, 10, (1u << 20) - 1), CT_ETOOBIG);
	free(d);
	/* 3,000 distinct attributes of one element: refused before parsing */
	size_t n = 3000, len = 0;
	char *a = malloc(n * 12 + 16);
	assert_non_null(a);
	len += (size_t)sprintf(a, "<r ");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(a + len, "a%zu='' ", i);
	sprintf(a + len, "/>");
	assert_int_equal(parse_lim(a, 2000, 0), CT_ETOOBIG);
	assert_non_null(strstr(ct_errmsg(CT_ETOOBIG), "more than 2000 "));
	assert_int_equal(parse_lim(a, 0, 0), 0);	/* no caps: as before */
	free(a);
	d = repeat("<r>", "<a/>", 200000, "</r>");
	assert_int_equal(parse_lim(d, 0, 0), 0);
	assert_int_equal(parse_lim(d, 20000, 1u << 20), CT_ETOOBIG);
	free(d);
}

CT_TEST_MAIN(test_parse_and_get, test_get_errors, test_limits, test_malformed_is_quiet,
	test_entities_refused, test_threads, test_writer, test_attributes,
	test_writer_errors, test_double_roundtrip, test_node_caps)
