/*
 * test_cl_rpc.c - the client's side of the scheduler protocol: the reply of
 * doc/protocol.md parses and applies to the state as documented (acks,
 * NOENT re-upload, aborts, new tasks, resent results), requests carry the
 * reports and in-progress names, and malformed, hostile or oversize replies
 * are refused without touching the state. The host's description says
 * which backend its work memory is for.
 */
#include "ct_test.h"

#include "cl_host.h"
#include "cl_rpc.h"
#include "ct_err.h"
#include "ct_xml.h"

#include <math.h>

#define SHA_A "0a4d55a8d778e5022fab701977c5d840bbc486d0a4d55a8d778e5022fab70197"
#define SHA_B "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static const char reply_doc[] =
	"<?xml version=\"1.0\"?>\n<scheduler_reply>\n"
	"<host_id>42</host_id><request_delay>10</request_delay>\n"
	"<host_secret>" SHA_B "</host_secret>\n"
	"<user_name>alice</user_name><total_credit>1234.5</total_credit>\n"
	"<expavg_credit>87.25</expavg_credit><project_name>p</project_name>\n"
	"<ack><name>done-ok</name><status>accepted</status></ack>\n"
	"<ack><name>done-dup</name><status>rejected</status><code>DUP</code></ack>\n"
	"<ack><name>done-noent</name><status>rejected</status><code>NOENT</code></ack>\n"
	"<abort>running-1</abort>\n"
	"<workunit><name>j1-r2-s5</name><job_id>1</job_id><round>2</round>\n"
	"<steps>50</steps><batch>4</batch><seq>64</seq>\n"
	"<lr>0.00029999999999999997</lr><upload_encoding>lossless</upload_encoding>\n"
	"<future><nested>x</nested></future>\n"
	"<file role=\"model\"><url>http://h/download/" SHA_A "</url>\n"
	"<sha256>" SHA_A "</sha256><size>497759232</size></file>\n"
	"<file role=\"data\"><url>http://h/download/" SHA_B "</url>\n"
	"<sha256>" SHA_B "</sha256><size>2098176</size></file>\n"
	"</workunit>\n"
	"<result><name>j1-r2-s5-1</name><wu_name>j1-r2-s5</wu_name>\n"
	"<deadline>1795449600</deadline><upload_url>http://h/upload/j1-r2-s5-1</upload_url>\n"
	"<upload_token>1795536000.42.524288000.9f8e</upload_token>\n"
	"<max_upload_bytes>524288000</max_upload_bytes></result>\n"
	"<result><name>running-2</name><wu_name>j1-r2-s5</wu_name>\n"
	"<deadline>1795449600</deadline><upload_url>http://h/upload/running-2</upload_url>\n"
	"<upload_token>t</upload_token><max_upload_bytes>5</max_upload_bytes></result>\n"
	"</scheduler_reply>\n";

static struct ct_state *state_with_tasks(struct ct_project **pp)
{
	static const struct { const char *name; enum ct_task_state st; } tasks[] = {
		{ "done-ok", CT_TASK_DONE }, { "done-dup", CT_TASK_DONE },
		{ "done-noent", CT_TASK_DONE }, { "running-1", CT_TASK_RUNNING },
		{ "running-2", CT_TASK_READY }, { "failed", CT_TASK_DONE },
	};
	struct ct_state *st = NULL;
	struct ct_task *t;

	assert_int_equal(ct_state_load("/nonexistent/x.xml", &st), 0);
	assert_int_equal(ct_state_add_project(st, "http://h", "3f2a9c0d41b7e85566a10c2d9e4f7b13", pp), 0);
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		assert_int_equal(ct_project_add_task(*pp, tasks[i].name, &t), 0);
		t->state = tasks[i].st;
		memset(t->output_sha256, 'c', 64);
		t->output_size = 1000;
		t->last_loss = 2.5;
	}
	t->outcome = CT_EDEVNOMEM;
	assert_int_equal(ct_strset(&t->error, "out of device memory"), 0);
	return st;
}

static void test_parse_and_apply(void **unused)
{
	struct ct_sched_reply r;
	struct ct_project *p;
	struct ct_state *st = state_with_tasks(&p);
	struct ct_task *t;
	int nnew = -1;

	(void)unused;
	assert_int_equal(ct_rpc_parse_reply(reply_doc, strlen(reply_doc), &r), 0);
	assert_null(r.error_code);
	assert_int_equal(r.host_id, 42);
	assert_int_equal(r.nacks, 3);
	assert_true(r.acks[1].accepted);	/* DUP counts as accepted */
	assert_false(r.acks[2].accepted);
	assert_int_equal(r.nwus, 1);
	assert_int_equal(r.wus[0].nfiles, 2);
	assert_string_equal(r.wus[0].files[1].name, "data");
	assert_int_equal(r.wus[0].files[0].size, 497759232);
	assert_int_equal(r.nresults, 2);
	assert_int_equal(r.results[0].max_upload_bytes, 524288000);

	assert_int_equal(ct_rpc_apply_reply(p, &r, 1000, &nnew), 0);
	assert_int_equal(nnew, 1);	/* running-2 was known already */
	assert_int_equal(p->hostid, 42);
	assert_true(p->request_delay_until == 1010);
	assert_true(p->credit == 1234.5 && p->rac == 87.25);
	assert_string_equal(p->user_name, "alice");
	assert_string_equal(p->host_secret, SHA_B);	/* kept for the upload MACs */
	assert_int_equal(ct_project_find_task(p, "done-ok")->state, CT_TASK_REPORTED);
	assert_int_equal(ct_project_find_task(p, "done-dup")->state, CT_TASK_REPORTED);
	assert_int_equal(ct_project_find_task(p, "done-noent")->state, CT_TASK_UPLOADING);
	t = ct_project_find_task(p, "running-1");
	assert_int_equal(t->state, CT_TASK_REPORTED);
	assert_int_equal(t->outcome, CT_ECANCELED);
	assert_int_equal(ct_project_find_task(p, "running-2")->state, CT_TASK_READY);
	assert_int_equal(ct_project_find_task(p, "failed")->state, CT_TASK_DONE);
	t = ct_project_find_task(p, "j1-r2-s5-1");
	assert_non_null(t);
	assert_int_equal(t->state, CT_TASK_DOWNLOADING);
	assert_string_equal(ct_task_param(t, "lr"), "0.00029999999999999997");
	assert_string_equal(ct_task_param(t, "steps"), "50");
	assert_null(ct_task_param(t, "future"));	/* not a leaf: ignored */
	assert_string_equal(t->upload_token, "1795536000.42.524288000.9f8e");
	assert_int_equal(t->nfiles, 2);
	assert_string_equal(t->files[0].sha256, SHA_A);
	ct_sched_reply_free(&r);
	ct_state_free(st);
}

static void test_build_request(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	struct ct_project *p;
	struct ct_state *st = state_with_tasks(&p);
	xmlDocPtr doc;
	xmlNodePtr root, n;
	int nresults = 0, nother = 0;

	(void)unused;
	p->hostid = 9;
	/* without a host secret the host id is left out (0): the server then
	 * finds the host by its cpid and sends the secret */
	assert_int_equal(ct_rpc_build_request(st, p, "", 0, &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "<host_id>0</host_id>"));
	ct_buf_free(&b);
	b = (struct ct_buf)CT_BUF_INIT(1 << 20);
	p->host_secret = strdup(SHA_B);
	assert_int_equal(ct_rpc_build_request(st, p, "<host><ncpus>2</ncpus></host>\n", 3, &b), 0);
	assert_int_equal(ct_xml_parse(b.data, b.len, 1 << 20, 8, &doc), 0);
	root = xmlDocGetRootElement(doc);
	assert_string_equal((const char *)root->name, "scheduler_request");
	for (n = ct_xml_child(root, "result"); n; n = ct_xml_next(n, "result")) {
		char *status = NULL;

		assert_int_equal(ct_xml_get_str(n, "status", 32, &status), 0);
		nresults++;
		if (strcmp(status, "error") == 0) {
			long code;

			assert_int_equal(ct_xml_get_long(n, "error_code", -100, 0, &code), 0);
			assert_int_equal(code, CT_EDEVNOMEM);
		}
		free(status);
	}
	assert_int_equal(nresults, 4);
	n = ct_xml_child(root, "other_results");
	assert_non_null(n);
	for (n = ct_xml_child(n, "name"); n; n = ct_xml_next(n, "name"))
		nother++;
	assert_int_equal(nother, 2);
	assert_non_null(ct_xml_child(root, "host"));
	{
		long want, hid;

		assert_int_equal(ct_xml_get_long(ct_xml_child(root, "work_req"), "want_results",
						 0, 16, &want), 0);
		assert_int_equal(want, 3);
		assert_int_equal(ct_xml_get_long(root, "host_id", 0, 100, &hid), 0);
		assert_int_equal(hid, 9);
	}
	xmlFreeDoc(doc);
	ct_buf_free(&b);
	ct_state_free(st);
}

static void expect_refused(const char *doc, int code)
{
	struct ct_sched_reply r;

	assert_int_equal(ct_rpc_parse_reply(doc, strlen(doc), &r), code);
	ct_sched_reply_free(&r);
}

/* The reply parses, but its one workunit is refused (cl_rpc.h). */
static void expect_wu_refused(const char *doc)
{
	struct ct_sched_reply r;

	assert_int_equal(ct_rpc_parse_reply(doc, strlen(doc), &r), 0);
	assert_int_equal(r.nwus, 1);
	assert_non_null(r.wus[0].refused);
	ct_sched_reply_free(&r);
}

static void test_malformed(void **unused)
{
	(void)unused;
	expect_refused("<scheduler_reply><host_id>1</host_id>", CT_EXML);
	expect_refused("", CT_EXML);
	expect_refused("<other_reply/>", CT_EPROTO);
	expect_refused("<scheduler_reply><host_id>-5</host_id></scheduler_reply>", CT_ERANGE);
	expect_refused("<scheduler_reply><request_delay>soon</request_delay></scheduler_reply>",
		       CT_EFORMAT);
	expect_refused("<scheduler_reply><ack><status>accepted</status></ack></scheduler_reply>",
		       CT_EPROTO);
	expect_wu_refused("<scheduler_reply><workunit><name>w</name><file role=\"model\">"
			  "<url>http://h/d</url><sha256>nothex</sha256><size>1</size></file>"
			  "</workunit></scheduler_reply>");
	expect_wu_refused("<scheduler_reply><workunit><name>w</name><file>"
			  "<url>http://h/d</url><sha256>" SHA_A "</sha256><size>1</size></file>"
			  "</workunit></scheduler_reply>");
	expect_refused("<scheduler_reply><result><name>r</name></result></scheduler_reply>",
		       CT_EPROTO);
	/* entity tricks are refused, never expanded */
	expect_refused("<!DOCTYPE x [<!ENTITY a \"aaaa\">]><scheduler_reply>&a;</scheduler_reply>",
		       CT_EXML);
}

/* The reply in b is refused as too big; b is emptied for the next. */
static void refused_too_big(struct ct_buf *b)
{
	struct ct_sched_reply r;

	assert_int_equal(ct_rpc_parse_reply(b->data, b->len, &r), CT_ETOOBIG);
	ct_sched_reply_free(&r);
	ct_buf_reset(b);
}

static void test_oversize(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(0);

	(void)unused;
	/* more than 4 MiB */
	ct_buf_appends(&b, "<scheduler_reply><user_name>");
	for (int i = 0; i < (5 << 20) / 64; i++)
		ct_buf_appends(&b, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	ct_buf_appends(&b, "</user_name></scheduler_reply>");
	refused_too_big(&b);
	/* too deep */
	ct_buf_appends(&b, "<scheduler_reply>");
	for (int i = 0; i < 40; i++) ct_buf_appends(&b, "<a>");
	for (int i = 0; i < 40; i++) ct_buf_appends(&b, "</a>");
	ct_buf_appends(&b, "</scheduler_reply>");
	refused_too_big(&b);
	/* too many acks */
	ct_buf_appends(&b, "<scheduler_reply>");
	for (int i = 0; i < CT_RPC_MAX_ACKS + 1; i++)
		ct_buf_appendf(&b, "<ack><name>r%d</name><status>accepted</status></ack>", i);
	ct_buf_appends(&b, "</scheduler_reply>");
	refused_too_big(&b);
	/* an over-long string */
	ct_buf_appends(&b, "<scheduler_reply><user_name>");
	for (int i = 0; i < 5000; i++) ct_buf_appends(&b, "x");
	ct_buf_appends(&b, "</user_name></scheduler_reply>");
	refused_too_big(&b);
	ct_buf_free(&b);
}

static void test_error_reply(void **unused)
{
	static const char doc[] = "<scheduler_reply><request_delay>60</request_delay>"
		"<error><code>AUTH</code><message>unknown account key</message></error>"
		"</scheduler_reply>";
	struct ct_sched_reply r;

	(void)unused;
	assert_int_equal(ct_rpc_parse_reply(doc, strlen(doc), &r), 0);
	assert_string_equal(r.error_code, "AUTH");
	assert_string_equal(r.error_message, "unknown account key");
	assert_true(r.request_delay == 60);
	ct_sched_reply_free(&r);
}

static void test_account(void **unused)
{
	static const char ok[] = "<account_reply><user_id>7</user_id><name>alice</name>"
		"<authenticator>3f2a9c0d41b7e85566a10c2d9e4f7b13</authenticator></account_reply>";
	static const char taken[] = "<account_reply><error><code>EXISTS</code>"
		"<message>an account with this email address exists</message></error></account_reply>";
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	char *key, *name;

	(void)unused;
	assert_int_equal(ct_rpc_parse_account(ok, strlen(ok), &key, &name), 0);
	assert_string_equal(key, "3f2a9c0d41b7e85566a10c2d9e4f7b13");
	assert_string_equal(name, "alice");
	free(key);
	free(name);
	assert_int_equal(ct_rpc_parse_account(taken, strlen(taken), &key, &name), CT_EEXISTS);
	assert_non_null(strstr(ct_errmsg(CT_EEXISTS), "email address exists"));
	assert_null(key);
	assert_int_equal(ct_rpc_build_account("create", "a<b", "a@b.c", "pw&", &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "<name>a&lt;b</name>"));
	assert_non_null(strstr(ct_buf_cstr(&b), "<password>pw&amp;</password>"));
	ct_buf_free(&b);
}

/* host/work_mem and host/work_backend name the same device: the chosen
 * OpenCL device's memory with "opencl", else the RAM with "cpu" (the C
 * reference, which the server holds to its larger bound). */
static void expect_work(struct ct_host *h, const char *mem, const char *backend)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	char want[128];

	assert_int_equal(ct_host_to_xml(h, &b), 0);
	snprintf(want, sizeof want, "<work_mem>%s</work_mem>", mem);
	assert_non_null(strstr((const char *)b.data, want));
	snprintf(want, sizeof want, "<work_backend>%s</work_backend>", backend);
	assert_non_null(strstr((const char *)b.data, want));
	ct_buf_free(&b);
}

static void test_host_work_backend(void **state)
{
	struct ct_host_device dev = { .name = "g", .type = "gpu", .global_mem = 4294967296ull };
	struct ct_host h = { .hostname = "h", .ncpus = 2, .ram_bytes = 8589934592ull,
			     .devices = &dev, .ndevices = 1, .device = "cpu" };

	(void)state;
	expect_work(&h, "8589934592", "cpu");
	snprintf(h.device, sizeof h.device, "opencl:0");
	expect_work(&h, "4294967296", "opencl");
	snprintf(h.device, sizeof h.device, "opencl:3");	/* no such device */
	expect_work(&h, "8589934592", "cpu");
}

CT_TEST_MAIN(test_parse_and_apply, test_build_request, test_malformed, test_oversize,
	test_error_reply, test_account, test_host_work_backend)
