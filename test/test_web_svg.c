/* Unit tests for server/web/web_svg: the chart is well-formed XML (parsed with
 * libxml2), plots the points where they belong, escapes its labels, skips
 * non-finite points, says so when there is no data; nice ticks. */
#include <math.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "ct_test.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "web/web_svg.h"

/* Parse `svg`; fail the test if it is not well-formed. Caller frees. */
static xmlDocPtr parse(const struct ct_buf *b)
{
	xmlDocPtr doc = xmlReadMemory((const char *)b->data, (int)b->len,
				      "chart.svg", NULL, XML_PARSE_NONET);

	assert_non_null(doc);
	return doc;
}

static xmlNodePtr find(xmlNodePtr n, const char *name, int nth)
{
	for (; n != NULL; n = n->next) {
		xmlNodePtr c;

		if (n->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)n->name, name) == 0 && nth-- == 0)
			return n;
		c = find(n->children, name, 0);
		if (c != NULL && nth == 0)
			return c;
	}
	return NULL;
}

static int count(xmlNodePtr n, const char *name)
{
	int k = 0;

	for (; n != NULL; n = n->next) {
		if (n->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)n->name, name) == 0)
			k++;
		k += count(n->children, name);
	}
	return k;
}

static double attr(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	double d;

	assert_non_null(v);
	d = strtod((const char *)v, NULL);
	xmlFree(v);
	return d;
}

static void test_loss_curve_geometry(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const double x[] = { 0, 1, 2, 3 };
	const double y[] = { 4.0, 3.5, 3.2, 3.1 };
	const struct ct_svg_opts o = { .title = "eval loss", .id = "loss",
				       .xlabel = "round", .ylabel = "loss" };
	xmlDocPtr doc;
	xmlNodePtr root, first, last, mid;

	(void)state;
	assert_int_equal(ct_svg_line_chart(&b, x, y, 4, &o), 0);
	doc = parse(&b);
	root = xmlDocGetRootElement(doc);
	assert_string_equal((const char *)root->name, "svg");
	assert_int_equal(count(root, "circle"), 4);
	assert_int_equal(count(root, "polyline"), 1);
	first = find(root->children, "circle", 0);
	mid = find(root->children, "circle", 1);
	last = find(root->children, "circle", 3);
	assert_non_null(first);
	assert_non_null(last);
	/* x grows to the right; lower loss is drawn lower (larger y). */
	assert_true(attr(first, "cx") < attr(mid, "cx"));
	assert_true(attr(mid, "cx") < attr(last, "cx"));
	assert_true(attr(first, "cy") < attr(mid, "cy"));
	assert_true(attr(mid, "cy") < attr(last, "cy"));
	/* inside the viewBox */
	assert_true(attr(first, "cx") >= 0 && attr(last, "cx") <= 600);
	assert_true(attr(first, "cy") >= 0 && attr(last, "cy") <= 220);
	assert_non_null(strstr(ct_buf_cstr(&b), "id=\"loss\""));
	assert_non_null(strstr(ct_buf_cstr(&b), "aria-label=\"eval loss\""));
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_labels_escaped(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const double x[] = { 1, 2 }, y[] = { 1, 2 };
	const struct ct_svg_opts o = { .title = "<script>alert(1)</script>",
				       .xlabel = "a&b", .ylabel = "\"q\"" };
	xmlDocPtr doc;
	xmlNodePtr t;

	(void)state;
	assert_int_equal(ct_svg_line_chart(&b, x, y, 2, &o), 0);
	assert_null(strstr(ct_buf_cstr(&b), "<script"));
	doc = parse(&b);
	t = find(xmlDocGetRootElement(doc)->children, "title", 0);
	assert_non_null(t);
	{
		xmlChar *txt = xmlNodeGetContent(t);
		assert_string_equal((const char *)txt, "<script>alert(1)</script>");
		xmlFree(txt);
	}
	assert_int_equal(count(xmlDocGetRootElement(doc), "script"), 0);
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_nonfinite_skipped_and_empty(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const double x[] = { 0, 1, 2 }, y[] = { 1, NAN, INFINITY };
	const struct ct_svg_opts o = { 0 };
	xmlDocPtr doc;

	(void)state;
	assert_int_equal(ct_svg_line_chart(&b, x, y, 3, &o), 0);
	doc = parse(&b);
	assert_int_equal(count(xmlDocGetRootElement(doc), "circle"), 1);
	assert_null(strstr(ct_buf_cstr(&b), "nan"));
	assert_null(strstr(ct_buf_cstr(&b), "inf"));
	xmlFreeDoc(doc);

	ct_buf_reset(&b);
	assert_int_equal(ct_svg_line_chart(&b, x, y + 1, 2 - 1, &o), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "no data yet"));
	doc = parse(&b);
	assert_int_equal(count(xmlDocGetRootElement(doc), "polyline"), 0);
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_time_axis_and_flat_series(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const double x[] = { 1795305600, 1795392000 }, y[] = { 50, 50 };
	const struct ct_svg_opts o = { .x_is_time = 1, .y_from_zero = 1 };
	xmlDocPtr doc;

	(void)state;
	assert_int_equal(ct_svg_line_chart(&b, x, y, 2, &o), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "2026-11-22"));
	doc = parse(&b);
	xmlFreeDoc(doc);
	ct_buf_free(&b);
}

static void test_integer_x_axis(void **state)
{
	struct ct_buf b = CT_BUF_INIT(0);
	const double x[] = { 0, 1, 2 }, y[] = { 4.16, 4.162, 4.1601 };
	const struct ct_svg_opts o = { .x_integer = 1 };

	(void)state;
	assert_int_equal(ct_svg_line_chart(&b, x, y, 3, &o), 0);
	/* rounds 0, 1, 2 are labelled; no half rounds */
	assert_non_null(strstr(ct_buf_cstr(&b), ">1</text>"));
	assert_non_null(strstr(ct_buf_cstr(&b), ">2</text>"));
	assert_null(strstr(ct_buf_cstr(&b), ">0.5</text>"));
	assert_null(strstr(ct_buf_cstr(&b), ">1.5</text>"));
	ct_buf_free(&b);
}

static void test_ticks(void **state)
{
	double t[8];
	size_t n;

	(void)state;
	n = ct_svg_ticks(0, 10, t, 8);
	assert_true(n >= 3 && n <= 6);
	assert_true(t[0] >= 0 && t[n - 1] <= 10);
	for (size_t i = 1; i < n; i++)
		assert_true(t[i] > t[i - 1]);
	n = ct_svg_ticks(3.1, 4.0, t, 8);
	assert_true(n >= 2);
	assert_true(fabs(t[0] - 3.2) < 1e-9 || fabs(t[0] - 3.25) < 1e-9 ||
		    fabs(t[0] - 3.4) < 1e-9 || fabs(t[0] - 3.5) < 1e-9);
	assert_int_equal(ct_svg_ticks(5, 5, t, 8), 1);
	assert_int_equal(ct_svg_ticks(NAN, 5, t, 8), 0);
}

CT_TEST_MAIN(test_loss_curve_geometry, test_labels_escaped,
	test_nonfinite_skipped_and_empty, test_time_axis_and_flat_series,
	test_integer_x_axis, test_ticks)
