/*
 * test_cl_jail.c - the volunteer's machine is the client's jail
 * (cl_jail.h, cl_disk.h): the name forms, the checked join, a scheduler
 * reply or a state file with a hostile name in each field that names a
 * file is refused as a whole, and the disk-limit decision.
 * test/client_hostile.sh tries the same against real processes.
 */
#include "ct_test.h"

#include "cl_disk.h"
#include "cl_jail.h"
#include "cl_rpc.h"
#include "cl_state.h"
#include "ct_buf.h"
#include "ct_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHA_A "0a4d55a8d778e5022fab701977c5d840bbc486d0a4d55a8d778e5022fab70197"

/* Names a hostile project tries, every one to be refused. */
static const char *const bad_names[] = {
	"", ".", "..", "../x", "../../x/r0", "/etc/passwd", "a/b", ".hidden", "a..b",
	"x\ny", "r0 ", "~user", "a\\b", "%2e%2e", "r\xc3\xa9sultat",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"../../../../home/vol/keep",
};

static void test_names(void **unused)
{
	(void)unused;
	assert_true(ct_jail_name_ok("j1-r2-s5-1"));
	assert_true(ct_jail_name_ok("w0"));
	assert_true(ct_jail_name_ok("a.b_c-D9"));
	assert_true(ct_jail_name_ok(SHA_A));
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		assert_false(ct_jail_name_ok(bad_names[i]));
		assert_int_equal(ct_jail_check_name("result name", bad_names[i]), CT_EPROTO);
	}
	assert_null(strchr(ct_errmsg(CT_EPROTO), '\n'));	/* no forged log lines */
	assert_int_equal(ct_jail_check_sha("sha", SHA_A), 0);
	assert_int_equal(ct_jail_check_sha("sha", "../../../../../../../../../../../../../../"
					   "../../../../../etc/passwd"), CT_EPROTO);
	assert_int_equal(ct_jail_check_sha("sha", "0A4D55A8D778E5022FAB701977C5D840BBC486D0A4D"
					   "55A8D778E5022FAB70197"), CT_EPROTO);
	assert_int_equal(ct_jail_check_url("u", "http://127.0.0.1:80/download/x"), 0);
	assert_int_equal(ct_jail_check_url("u", "https://h/x"), 0);
	assert_int_equal(ct_jail_check_url("u", "file:///etc/passwd"), CT_EPROTO);
	assert_int_equal(ct_jail_check_url("u", "http:///x"), CT_EPROTO);
	assert_int_equal(ct_jail_check_url("u", "http://h/a b"), CT_EPROTO);
	assert_int_equal(ct_jail_check_url("u", "/upload/r0"), CT_EPROTO);
	assert_int_equal(ct_jail_check_token("t", "1795536000.42.524288000.9f8e"), 0);
	assert_int_equal(ct_jail_check_token("t", "x\r\nX-Evil: 1"), CT_EPROTO);
}

static void test_join(void **unused)
{
	char root[] = "/tmp/test_cl_jail.XXXXXX", sub[600], link[600], *p = NULL;

	(void)unused;
	assert_non_null(mkdtemp(root));
	snprintf(sub, sizeof(sub), "%s/slots", root);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(ct_jail_join(root, sub, "r0", &p), 0);
	assert_non_null(strstr(p, "/slots/r0"));
	free(p);
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		assert_int_equal(ct_jail_join(root, sub, bad_names[i], &p), CT_EPROTO);
		assert_null(p);
	}
	/* defence in depth: a directory outside root, or one that leads out */
	assert_int_equal(ct_jail_join(root, "/tmp", "r0", &p), CT_EPERM);
	snprintf(link, sizeof(link), "%s/slots/../..", root);
	assert_int_equal(ct_jail_join(root, link, "r0", &p), CT_EPERM);
	snprintf(link, sizeof(link), "%s/out", root);
	assert_int_equal(symlink("/tmp", link), 0);
	assert_int_equal(ct_jail_join(root, link, "r0", &p), CT_EPERM);
	assert_null(p);
	assert_int_equal(ct_jail_join(root, root, "out", &p), CT_EPERM);	/* a link */
	unlink(link);
	rmdir(sub);
	rmdir(root);
}

static const char reply_head[] =
	"<scheduler_reply><workunit><name>%s</name><steps>5</steps>"
	"<file role=\"%s\"><url>%s</url><sha256>%s</sha256><size>10</size></file></workunit>"
	"<result><name>%s</name><wu_name>%s</wu_name><deadline>1</deadline>"
	"<upload_url>%s</upload_url><upload_token>%s</upload_token>"
	"<max_upload_bytes>5</max_upload_bytes></result></scheduler_reply>";

/* The fields of the reply above; field k replaced by a hostile value. */
static int parse_with(int k, const char *value)
{
	const char *f[8] = { "w0", "model", "http://h/download/" SHA_A, SHA_A, "r0", "w0",
			     "http://h/upload/r0", "1.2.3.abc" };
	struct ct_sched_reply r;
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	int rc;

	if (k >= 0)
		f[k] = value;
	assert_int_equal(ct_buf_appendf(&b, reply_head, f[0], f[1], f[2], f[3], f[4], f[5],
					f[6], f[7]), 0);
	rc = ct_rpc_parse_reply(b.data, b.len, &r);
	if (rc == 0) {	/* parsed: the item is refused, the reply not */
		assert_int_equal(r.nresults, 1);
		assert_int_equal(r.nwus, 1);
		if (r.wus[0].refused != NULL || r.results[0].refused != NULL)
			rc = CT_EPROTO;
	}
	ct_sched_reply_free(&r);
	ct_buf_free(&b);
	return rc;
}

static void test_reply_refused(void **unused)
{
	static const char *const bad_any[] = { "../../x/r0", "/abs/path", "..", "a/b" };

	(void)unused;
	assert_int_equal(parse_with(-1, NULL), 0);
	for (int k = 0; k < 7; k++)	/* every field but the token (not a path) */
		for (size_t i = 0; i < sizeof(bad_any) / sizeof(bad_any[0]); i++)
			assert_int_equal(parse_with(k, bad_any[i]), CT_EPROTO);
	assert_int_equal(parse_with(2, "file:///etc/passwd"), CT_EPROTO);
	assert_int_equal(parse_with(6, "ftp://h/upload/r0"), CT_EPROTO);
	assert_int_equal(parse_with(7, "t\r\nHost: evil"), CT_EPROTO);
	assert_non_null(strstr(ct_errmsg(CT_EPROTO), "upload token"));
}

/* A reply with a good result and a hostile one: the good one becomes a
 * task, the other nothing but an error report in the next request, once. */
static void test_refused_reported(void **unused)
{
	static const char doc[] =
		"<scheduler_reply><workunit><name>w0</name><steps>5</steps>"
		"<file role=\"model\"><url>http://h/d</url><sha256>" SHA_A "</sha256>"
		"<size>10</size></file></workunit>"
		"<result><name>r0</name><wu_name>w0</wu_name><deadline>1</deadline>"
		"<upload_url>http://h/u</upload_url><upload_token>t</upload_token>"
		"<max_upload_bytes>5</max_upload_bytes></result>"
		"<result><name>../../x/r1</name><wu_name>w0</wu_name><deadline>1</deadline>"
		"<upload_url>http://h/u</upload_url><upload_token>t</upload_token>"
		"<max_upload_bytes>5</max_upload_bytes></result></scheduler_reply>";
	struct ct_state *st = NULL;
	struct ct_project *p;
	struct ct_sched_reply r;
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	int nnew;

	(void)unused;
	assert_int_equal(ct_state_load("/nonexistent/x.xml", &st), 0);
	assert_int_equal(ct_state_add_project(st, "http://h", "k", &p), 0);
	assert_int_equal(ct_rpc_parse_reply(doc, strlen(doc), &r), 0);
	assert_int_equal(ct_rpc_apply_reply(p, &r, 0, &nnew), 0);
	ct_sched_reply_free(&r);
	assert_int_equal(nnew, 1);
	assert_int_equal(p->ntasks, 1);
	assert_string_equal(p->tasks[0].name, "r0");
	assert_int_equal(p->nrefused, 1);
	assert_int_equal(ct_rpc_build_request(st, p, NULL, 1, &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "<name>../../x/r1</name>"));
	assert_non_null(strstr(ct_buf_cstr(&b), "<status>error</status>"));
	ct_rpc_forget_refused(p, 1);
	assert_int_equal(p->nrefused, 0);
	ct_buf_reset(&b);
	assert_int_equal(ct_rpc_build_request(st, p, NULL, 1, &b), 0);
	assert_null(strstr(ct_buf_cstr(&b), "r1"));
	ct_buf_free(&b);
	ct_state_free(st);
}

static const char state_doc[] =
	"<client_state><cpid>0123456789abcdef0123456789abcdef</cpid><project>"
	"<url>http://h</url><key>k</key><task><name>%s</name><wu_name>%s</wu_name>"
	"<state>running</state><upload_url>http://h/upload/r0</upload_url>"
	"<file><name>model</name><url>http://h/d</url><sha256>%s</sha256><size>1</size></file>"
	"</task></project></client_state>";

static int load_with(const char *name, const char *wu, const char *sha)
{
	struct ct_state *st = NULL;
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	int rc;

	assert_int_equal(ct_buf_appendf(&b, state_doc, name, wu, sha), 0);
	rc = ct_state_from_xml(b.data, b.len, "client_state.xml", &st);
	if (rc < 0)
		assert_null(st);
	ct_state_free(st);
	ct_buf_free(&b);
	return rc;
}

static void test_state_refused(void **unused)
{
	(void)unused;
	assert_int_equal(load_with("r0", "w0", SHA_A), 0);
	assert_int_equal(load_with("../../../../home/vol/keep", "w0", SHA_A), CT_EFORMAT);
	assert_non_null(strstr(ct_errmsg(CT_EFORMAT), "task name in the state file"));
	assert_int_equal(load_with("r0", "../w", SHA_A), CT_EFORMAT);
	assert_int_equal(load_with("r0", "w0", "../../../../x"), CT_EFORMAT);
	assert_int_equal(load_with("/etc", "w0", SHA_A), CT_EFORMAT);
}

static void test_disk_fits(void **unused)
{
	int never;

	(void)unused;
	/* 1 GB used, 100 GB free, limits 50 GB / 0.1 GB */
	assert_int_equal(ct_disk_fits(1000000000, 100000000000ull, 2000000000, 50, 0.1, &never), 0);
	assert_int_equal(never, 0);
	/* the 2^63-1 a hostile server announced */
	assert_int_equal(ct_disk_fits(0, 100000000000ull, INT64_MAX, 50, 0.1, &never), CT_ENOSPC);
	assert_int_equal(never, 1);
	assert_non_null(strstr(ct_errmsg(CT_ENOSPC), "disk_max_gb"));
	/* fits disk_max_gb only once other files go: later, not never */
	assert_int_equal(ct_disk_fits(49000000000ull, 100000000000ull, 2000000000, 50, 0.1,
				      &never), CT_ENOSPC);
	assert_int_equal(never, 0);
	/* would leave less than disk_min_free_gb */
	assert_int_equal(ct_disk_fits(0, 3000000000ull, 2950000000ull, 50, 0.1, &never),
			 CT_ENOSPC);
	assert_non_null(strstr(ct_errmsg(CT_ENOSPC), "disk_min_free_gb"));
	assert_int_equal(never, 1);
	assert_int_equal(ct_disk_fits(0, 50000000, 1, 50, 0.1, &never), CT_ENOSPC);
	assert_int_equal(ct_disk_fits(0, 50000000, 0, 50, 0.1, &never), 0);	/* cached */
}

CT_TEST_MAIN(test_names, test_join, test_reply_refused, test_refused_reported,
	test_state_refused, test_disk_fits)
