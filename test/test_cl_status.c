/*
 * test_cl_status.c - what `ctune status` and `ctune saver` show, from a
 * status document like the daemon's: projects, tasks with progress bars,
 * small credit values that stay visible, the saver's loss curve fitted to
 * the terminal, and refusal of documents that are not status documents.
 */
#include "ct_test.h"

#include "cl_status.h"
#include "ct_err.h"

static const char doc[] =
	"<status><pid>42</pid><version>0.1.0</version><device>opencl:0</device>"
	"<device_name>pthread-cpu</device_name><conforming>1</conforming>"
	"<activity>computing</activity><reason>running</reason>"
	"<tokens_per_s>23456</tokens_per_s><running>j1-r2-s5-1</running>"
	"<totals><results_done>3</results_done><results_reported>2</results_reported>"
	"<seconds>10</seconds><tokens>1000</tokens></totals>"
	"<project><url>http://h</url><user_name>alice</user_name><hostid>7</hostid>"
	"<credit>0.0022570666</credit><rac>0.0002</rac><rank>3</rank>"
	"<pending_results>2</pending_results><eta_task_s>42</eta_task_s>"
	"<eta_queue_s>150</eta_queue_s><queued_tasks>3</queued_tasks>"
	"<task><name>j1-r2-s5-1</name><state>running</state><progress>0.5</progress>"
	"<step>25</step><steps>50</steps><last_loss>3.25</last_loss><job>1</job>"
	"<round>2</round></task>"
	"<task><name>j1-r2-s6-0</name><state>ready</state><progress>0</progress></task>"
	"</project><losses><l>4</l><l>3.5</l><l>3.25</l><l>3</l></losses></status>";

static void test_parse_and_text(void **unused)
{
	struct ct_status *s = calloc(1, sizeof(*s));
	struct ct_buf b = CT_BUF_INIT(0);
	const struct ct_status_project *p = NULL;
	const struct ct_status_task *t;

	(void)unused;
	assert_int_equal(ct_status_parse(doc, strlen(doc), s), 0);
	assert_int_equal(s->nprojects, 1);
	assert_int_equal(s->projects[0].ntasks, 2);
	assert_int_equal(s->nlosses, 4);
	t = ct_status_running(s, &p);
	assert_non_null(t);
	assert_string_equal(t->round, "2");
	assert_ptr_equal(p, &s->projects[0]);
	assert_int_equal(ct_status_render_text(s, &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "[##########----------]  50%  step 25/50  loss 3.2500"));
	assert_non_null(strstr(ct_buf_cstr(&b), "credit 0.002257"));	/* not "0.00" */
	assert_non_null(strstr(ct_buf_cstr(&b), "rank #3"));
	assert_non_null(strstr(ct_buf_cstr(&b), "ETA this WU 42 s, queue 2 min (3 tasks); "
				"credit granted 0.002257, 2 results pending validation"));
	assert_non_null(strstr(ct_buf_cstr(&b), "23.5k tokens/s"));
	assert_non_null(strstr(ct_buf_cstr(&b), "opencl:0, pthread-cpu (conforming)"));
	ct_buf_free(&b);
	free(s);
}

/* Count the lines of a frame and check none is wider than cols cells. */
static void check_frame(const char *f, int cols, int rows)
{
	int lines = 1, width = 0;

	for (const unsigned char *p = (const unsigned char *)f; *p; p++) {
		if (*p == 0x1b) {		/* skip an escape sequence */
			while (*p && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
				p++;
			continue;
		}
		if (*p == '\n') {
			assert_true(width <= cols);
			width = 0;
			lines++;
		} else if ((*p & 0xc0) != 0x80) {	/* one cell per UTF-8 char */
			width++;
		}
	}
	assert_true(lines <= rows);
}

static void test_saver_frame(void **unused)
{
	struct ct_status *s = calloc(1, sizeof(*s));
	struct ct_buf b = CT_BUF_INIT(0);

	(void)unused;
	assert_int_equal(ct_status_parse(doc, strlen(doc), s), 0);
	assert_int_equal(ct_status_render_saver(s, 80, 24, &b), 0);
	assert_true(strncmp(ct_buf_cstr(&b), "\x1b[H", 3) == 0);	/* redraws from home */
	assert_non_null(strstr(ct_buf_cstr(&b), "job 1"));
	assert_non_null(strstr(ct_buf_cstr(&b), "round 2"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\xe2\x96\x88"));	/* full block: the curve */
	assert_non_null(strstr(ct_buf_cstr(&b), "   4.000"));		/* top of the axis */
	assert_non_null(strstr(ct_buf_cstr(&b), "   3.000"));
	assert_non_null(strstr(ct_buf_cstr(&b), "rank #3"));
	check_frame(ct_buf_cstr(&b), 80, 24);
	ct_buf_reset(&b);
	assert_int_equal(ct_status_render_saver(s, 40, 12, &b), 0);
	check_frame(ct_buf_cstr(&b), 40, 12);
	ct_buf_free(&b);
	free(s);
}

static void test_not_status(void **unused)
{
	struct ct_status *s = calloc(1, sizeof(*s));

	(void)unused;
	assert_int_equal(ct_status_parse("<x/>", 4, s), CT_EPROTO);
	assert_int_equal(ct_status_parse("error unknown", 13, s), CT_EXML);
	free(s);
}

CT_TEST_MAIN(test_parse_and_text, test_saver_frame, test_not_status)
