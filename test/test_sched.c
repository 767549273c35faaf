/*
 * test_sched.c - data-driven scheduler cases: each file test/data/sched/NNN-name.xml
 * is a sequence of HTTP exchanges with a real ctune-server front end
 * (libmicrohttpd, this process) on an embedded database in a temporary
 * project, checked with XPath expressions on the replies.
 *
 * Before each case the database is emptied and set up again: accounts
 * alice, bob and carol with the keys @ALICE@, @BOB@, @CAROL@, and job 1
 * (6 shards x 2 replicas, 1 round). A case file:
 *
 *   <case>
 *     <description>what it shows</description>
 *     <step>                          one POST /rpc/scheduler (or path=)
 *       <request gzip="1"> <scheduler_request>...</scheduler_request> </request>
 *           (or the body as text / CDATA, for malformed input)
 *       <expect status="200">
 *         <xpath expr="count(/scheduler_reply/result)">2</xpath>
 *       </expect>
 *       <capture var="R1" expr="string(/scheduler_reply/result[1]/name)"/>
 *       <sql query="SELECT COUNT(*) FROM device">2</sql>   (first column,
 *                                       first row, as text)
 *     </step>
 *     <upload result="@R1@" token="@T1@" data="some bytes" status="200"
 *             secret="@S@"/>   (secret: the host's, captured from the
 *                              reply's host_secret; sends X-Upload-MAC)
 *     <setup sql="INSERT INTO ..."/>  (a statement run at that point)
 *   </case>
 *
 * @NAME@ in requests, attributes and expected values is replaced by the
 * captured or predefined variable (@URL@ too); @SHA:text@ by the SHA-256
 * hex of "text".
 *
 * The harness knows exactly the elements and attributes above (the table
 * `vocab`) and refuses a case file with any other, or without a required
 * attribute, before running it: a misspelled expectation (<xpth>,
 * <sql qurey=...>) fails the case instead of asserting nothing. Only the
 * body inside <request> is free (it is what the server gets).
 */
#include "ct_test_db.h"

#include <dirent.h>
#include <inttypes.h>

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "rpc/account.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_gzip.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_tokens.h"
#include "ct_xml.h"
#include "data/db.h"
#include "rpc/files.h"
#include "rpc/http.h"
#include "rpc/sched_rpc.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "daemons/wg.h"

#define NVARS 64

static struct ct_server g_srv;
static struct ct_db *g_db;
static char *g_dir;
static char g_case_dir[4096];
static char g_names[NVARS][32], g_vals[NVARS][512];
static int g_nvars;

static const char *const KEYS[3][2] = {
	{ "ALICE", "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" },
	{ "BOB", "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" },
	{ "CAROL", "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3" },
};

static void set_var(const char *name, const char *val)
{
	for (int i = 0; i < g_nvars; i++)
		if (strcmp(g_names[i], name) == 0) {
			snprintf(g_vals[i], sizeof(g_vals[i]), "%s", val);
			return;
		}
	assert_true(g_nvars < NVARS);
	snprintf(g_names[g_nvars], sizeof(g_names[0]), "%s", name);
	snprintf(g_vals[g_nvars], sizeof(g_vals[0]), "%s", val);
	g_nvars++;
}

/* Replace @VAR@ and @SHA:text@ in s; returns a malloc'd string. */
static char *subst(const char *s)
{
	struct ct_buf b = CT_BUF_INIT(1 << 24);

	while (*s) {
		const char *at = strchr(s, '@'), *end = at ? strchr(at + 1, '@') : NULL;
		if (at == NULL || end == NULL) {
			assert_int_equal(ct_buf_appends(&b, s), 0);
			break;
		}
		assert_int_equal(ct_buf_append(&b, s, (size_t)(at - s)), 0);
		char name[512];
		snprintf(name, sizeof(name), "%.*s", (int)(end - at - 1), at + 1);
		int found = 0;
		if (strncmp(name, "SHA:", 4) == 0) {
			char hex[65];
			ct_sha256_hex(name + 4, strlen(name + 4), hex);
			assert_int_equal(ct_buf_appends(&b, hex), 0);
			found = 1;
		}
		for (int i = 0; !found && i < g_nvars; i++)
			if (strcmp(g_names[i], name) == 0) {
				assert_int_equal(ct_buf_appends(&b, g_vals[i]), 0);
				found = 1;
			}
		if (!found) {	/* not a variable: keep the text */
			assert_int_equal(ct_buf_append(&b, at, (size_t)(end - at)), 0);
			s = end;
			continue;
		}
		s = end + 1;
	}
	return (char *)ct_buf_steal(&b, NULL);
}

/* ---- fixtures ---------------------------------------------------------- */

static void make_inputs(void)
{
	char path[4200];
	struct ct_model_config cfg = { .maxT = 64, .V = 256, .L = 1, .NH = 2, .C = 8, .Vp = 256 };
	struct ct_gpt2 m = { 0 };

	assert_int_equal(ct_gpt2_alloc(&m, &cfg), 0);
	for (size_t i = 0; i < m.lay.total; i++)
		m.params[i] = (float)(i % 7) * 0.01f;
	snprintf(path, sizeof(path), "%s/model.bin", g_dir);
	assert_int_equal(ct_gpt2_save(path, &m.cfg, m.params), 0);
	ct_gpt2_free(&m);
	for (int k = 0; k < 2; k++) {
		int n = k ? 1000 : 6000;
		ct_tok *t = calloc((size_t)n, sizeof(*t));
		assert_non_null(t);
		for (int i = 0; i < n; i++)
			t[i] = (ct_tok)((i * 13 + k) % cfg.V);
		snprintf(path, sizeof(path), "%s/%s.bin", g_dir, k ? "eval" : "train");
		assert_int_equal(ct_tokens_save(path, t, (uint64_t)n), 0);
		free(t);
	}
}

static void reset_project(void)
{
	static const char *const tables[] = { "user", "team", "host", "device", "file", "job",
		"job_shard", "round", "workunit", "result", "credit_event", "role_heartbeat", "job_lora",
		/* after the results: their delete triggers write these */
		"round_stat", "task_stat", "job_user_stat", NULL };
	char sql[128], m[4200], tr[4200], ev[4200], cmd[4400];
	int64_t jobid = 0;

	for (int i = 0; tables[i]; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM `%s`", tables[i]);
		assert_true(ct_db_execa(g_db, sql, NULL, 0) >= 0);
		snprintf(sql, sizeof(sql), "ALTER TABLE `%s` AUTO_INCREMENT=1", tables[i]);
		assert_true(ct_db_execa(g_db, sql, NULL, 0) >= 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/* '%s'/.tmp-*", g_srv.upload_dir, g_srv.upload_dir);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < 3; i++) {
		char hash[65], email[64];
		assert_int_equal(ct_account_key_hash(KEYS[i][1], hash), 0);
		snprintf(email, sizeof(email), "%s@example.org", KEYS[i][0]);
		assert_int_equal(CT_DB_EXEC(g_db, "INSERT INTO `user` (create_time, name, email, "
					    "passwd_hash, auth_hash) VALUES (?, ?, ?, 'x', ?)",
					    ct_db_now(g_db), KEYS[i][0], email, hash), 1);
	}
	snprintf(m, sizeof(m), "%s/model.bin", g_dir);
	snprintf(tr, sizeof(tr), "%s/train.bin", g_dir);
	snprintf(ev, sizeof(ev), "%s/eval.bin", g_dir);
	struct ct_job_spec spec = { .name = "cases", .model_path = m, .train_path = tr,
		.eval_path = ev, .shards = 6, .rounds = 1, .steps = 3, .batch = 2, .seq = 16,
		.lr = 1e-3, .quorum = 2, .replicas = 2, .adaptive = 0 };
	assert_int_equal(ct_wg_submit(&g_srv, g_db, &spec, &jobid), 0);
	assert_int_equal(jobid, 1);
	g_nvars = 0;
	for (int i = 0; i < 3; i++)
		set_var(KEYS[i][0], KEYS[i][1]);
	set_var("URL", g_srv.base_url);
}

static int setup_all(void **state)
{
	struct ct_project_opts o = { .name = "cases", .listen = "127.0.0.1:0" };
	char url[128];
	int port = 0;

	ct_log_set_level(CT_LOG_WARN);
	if (ct_test_project_open(&o, &g_dir, &g_srv, &g_db) < 0)
		return -1;
	if (ct_http_register_routes(&g_srv, ct_sched_routes) < 0 ||
	    ct_http_register_routes(&g_srv, ct_files_routes) < 0 ||
	    ct_http_register_routes(&g_srv, ct_account_routes) < 0 ||
	    ct_http_start(&g_srv, "127.0.0.1:0", &port) < 0)
		return -1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	ct_server_set_base_url(&g_srv, url);
	make_inputs();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const char *src = getenv("top_srcdir");
	snprintf(g_case_dir, sizeof(g_case_dir), "%s/test/data/sched", src ? src : ".");
	return 0;
}

static int teardown_all(void **state)
{
	ct_http_stop(&g_srv);
	ct_db_close(g_db);
	ct_db_global_end();
	ct_server_free(&g_srv);
	ct_test_rmtree(g_dir);
	free(g_dir);
	curl_global_cleanup();
	return 0;
}

/* ---- HTTP -------------------------------------------------------------- */

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	return ct_buf_append(ud, p, sz * n) == 0 ? sz * n : 0;
}

/* POST body to path; headers may be NULL. Returns the status. */
static long post(const char *path, const void *body, size_t n, struct curl_slist *headers,
		 struct ct_buf *reply)
{
	CURL *c = curl_easy_init();
	char url[1024];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", g_srv.base_url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, reply);
	if (headers)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

/* ---- the case file's vocabulary --------------------------------------- */

/* An element a case file may hold: where, with which attributes (the
 * required ones first, `nreq` of them) and which child elements. */
struct vocab {
	const char *name;
	const char *parent;		/* NULL: the root */
	const char *attrs[5];		/* NULL-terminated */
	int nreq;
	int free_body;			/* children are not harness elements */
};

static const struct vocab vocab[] = {
	{ .name = "case", .parent = NULL },
	{ .name = "description", .parent = "case" },
	{ .name = "step", .parent = "case", .attrs = { "path" } },
	{ .name = "upload", .parent = "case",
	  .attrs = { "result", "token", "data", "status", "secret" }, .nreq = 2 },
	{ .name = "request", .parent = "step", .attrs = { "gzip" }, .free_body = 1 },
	{ .name = "expect", .parent = "step", .attrs = { "status" } },
	{ .name = "xpath", .parent = "expect", .attrs = { "expr" }, .nreq = 1 },
	{ .name = "capture", .parent = "step", .attrs = { "var", "expr" }, .nreq = 2 },
	{ .name = "sql", .parent = "step", .attrs = { "query" }, .nreq = 1 },
	{ .name = "setup", .parent = "case", .attrs = { "sql" }, .nreq = 1 },
};

static const struct vocab *vocab_find(const char *name, const char *parent)
{
	for (size_t i = 0; i < sizeof(vocab) / sizeof(vocab[0]); i++)
		if (strcmp(vocab[i].name, name) == 0 &&
		    (vocab[i].parent == NULL ? parent == NULL :
		     parent != NULL && strcmp(vocab[i].parent, parent) == 0))
			return &vocab[i];
	return NULL;
}

static int vocab_has_attr(const struct vocab *v, const char *name)
{
	for (int i = 0; v->attrs[i] != NULL; i++)
		if (strcmp(v->attrs[i], name) == 0)
			return 1;
	return 0;
}

/* Check element n (whose parent element is named parent, NULL for the
 * root) and its subtree against `vocab`. Returns 0, or CT_EFORMAT with
 * what is wrong in why. */
static int case_check(xmlNodePtr n, const char *parent, char *why, size_t cap)
{
	const char *name = (const char *)n->name;
	const struct vocab *v = vocab_find(name, parent);

	if (v == NULL) {
		snprintf(why, cap, "line %ld: unknown element <%s> in <%s>", xmlGetLineNo(n), name,
			 parent ? parent : "(document)");
		return CT_EFORMAT;
	}
	for (xmlAttrPtr a = n->properties; a != NULL; a = a->next)
		if (!vocab_has_attr(v, (const char *)a->name)) {
			snprintf(why, cap, "line %ld: <%s> has no attribute %s", xmlGetLineNo(n),
				 name, (const char *)a->name);
			return CT_EFORMAT;
		}
	for (int i = 0; i < v->nreq; i++)
		if (!xmlHasProp(n, (const xmlChar *)v->attrs[i])) {
			snprintf(why, cap, "line %ld: <%s> needs attribute %s", xmlGetLineNo(n),
				 name, v->attrs[i]);
			return CT_EFORMAT;
		}
	if (v->free_body)
		return 0;
	for (xmlNodePtr c = ct_xml_child(n, NULL); c != NULL; c = ct_xml_next(c, NULL)) {
		int rc = case_check(c, name, why, cap);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- case steps -------------------------------------------------------- */

static char *attr(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	char *s = v ? subst((const char *)v) : NULL;

	xmlFree(v);
	return s;
}

static char *node_text(xmlNodePtr n)
{
	xmlChar *t = xmlNodeGetContent(n);
	char *s = subst(t ? (const char *)t : "");

	xmlFree(t);
	return s;
}

/* The request body: child elements serialised, else the text. */
static char *request_body(xmlNodePtr req)
{
	xmlNodePtr el = ct_xml_child(req, NULL);
	char *out;

	if (el == NULL)
		return node_text(req);
	xmlBufferPtr xb = xmlBufferCreate();
	xmlNodeDump(xb, req->doc, el, 0, 0);
	out = subst((const char *)xmlBufferContent(xb));
	xmlBufferFree(xb);
	return out;
}

static char *xpath_string(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	xmlChar *s;
	char *out;

	if (obj == NULL)
		fail_msg("bad XPath expression %s", expr);
	s = xmlXPathCastToString(obj);
	out = strdup((const char *)s);
	xmlFree(s);
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	return out;
}

static void check_reply(const char *name, int stepno, xmlNodePtr step, long status,
			const struct ct_buf *reply)
{
	xmlNodePtr ex = ct_xml_child(step, "expect"), x;
	xmlDocPtr doc;

	doc = xmlReadMemory((const char *)reply->data, (int)reply->len, "reply.xml", NULL,
			    XML_PARSE_NONET);
	if (ex) {
		char *want = attr(ex, "status");
		if (want && atol(want) != status)
			fail_msg("%s step %d: HTTP %ld, want %s\n%s", name, stepno, status, want,
				 ct_buf_cstr(reply));
		free(want);
	}
	for (x = ex ? ct_xml_child(ex, "xpath") : NULL; x; x = ct_xml_next(x, "xpath")) {
		char *expr = attr(x, "expr"), *want = node_text(x), *got;
		if (doc == NULL)
			fail_msg("%s step %d: reply is not XML: %s", name, stepno, ct_buf_cstr(reply));
		got = xpath_string(doc, expr);
		if (strcmp(got, want) != 0)
			fail_msg("%s step %d: %s = '%s', want '%s'\n%s", name, stepno, expr, got, want,
				 ct_buf_cstr(reply));
		free(expr);
		free(want);
		free(got);
	}
	for (x = ct_xml_child(step, "sql"); x; x = ct_xml_next(x, "sql")) {
		char *q = attr(x, "query"), *want = node_text(x);
		struct ct_db_res *res = NULL;
		assert_int_equal(ct_db_querya(g_db, &res, q, NULL, 0), 0);
		const char *got = ct_db_next(res) > 0 ? ct_db_str(res, 0) : "(no row)";
		if (strcmp(got, want) != 0)
			fail_msg("%s step %d: %s = '%s', want '%s'", name, stepno, q, got, want);
		ct_db_res_free(res);
		free(q);
		free(want);
	}
	for (x = ct_xml_child(step, "capture"); x; x = ct_xml_next(x, "capture")) {
		char *var = attr(x, "var"), *expr = attr(x, "expr");
		char *got = doc ? xpath_string(doc, expr) : strdup("");
		set_var(var, got);
		free(var);
		free(expr);
		free(got);
	}
	xmlFreeDoc(doc);
}

/* The counters the result triggers and the scheduler's batched sends and
 * reports keep (round_stat, task_stat) disagree with a recount of the
 * results in no row, either way round. */
static void check_counters(const char *name, int stepno)
{
	int64_t bad[4] = { -1, -1, -1, -1 };
	static const char *const sql[4] = {
		"SELECT COUNT(*) FROM round_stat s LEFT JOIN (SELECT w.roundid, "
		"SUM(x.server_state = 2) u, SUM(x.server_state = 4) p, SUM(x.validate_state = 1) v, "
		"SUM(x.validate_state = 2) i, SUM(x.server_state = 5 AND x.outcome NOT IN (1, 7)) e "
		"FROM result x JOIN workunit w ON w.id = x.workunitid GROUP BY w.roundid) c ON "
		"c.roundid = s.roundid WHERE s.n_unsent <> COALESCE(c.u, 0) OR s.n_in_progress <> "
		"COALESCE(c.p, 0) OR s.n_valid <> COALESCE(c.v, 0) OR s.n_invalid <> COALESCE(c.i, 0) "
		"OR s.n_error <> COALESCE(c.e, 0)",
		"SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid LEFT JOIN "
		"round_stat s ON s.roundid = w.roundid WHERE s.roundid IS NULL",
		"SELECT COUNT(*) FROM (SELECT s.kind FROM task_stat s LEFT JOIN (SELECT 0 AS kind, "
		"hostid AS ownerid, jobid, task_state FROM result UNION ALL SELECT 1, userid, jobid, "
		"task_state FROM result) r ON r.kind = s.kind AND r.ownerid = s.ownerid AND "
		"r.jobid = s.jobid AND r.task_state > 0 GROUP BY s.kind, s.ownerid, s.jobid HAVING "
		"MIN(s.n_in_progress) <> COALESCE(SUM(r.task_state = 1), 0) OR MIN(s.n_pending) <> "
		"COALESCE(SUM(r.task_state = 2), 0) OR MIN(s.n_error) <> "
		"COALESCE(SUM(r.task_state = 5), 0)) x",
		"SELECT COUNT(*) FROM (SELECT 0 AS kind, hostid AS ownerid, jobid FROM result WHERE "
		"task_state > 0 UNION SELECT 1, userid, jobid FROM result WHERE task_state > 0) g "
		"LEFT JOIN task_stat s ON s.kind = g.kind AND s.ownerid = g.ownerid AND "
		"s.jobid = g.jobid WHERE s.kind IS NULL",
	};

	for (int k = 0; k < 4; k++) {
		assert_int_equal(ct_db_query_inta(g_db, &bad[k], sql[k], NULL, 0), 0);
		if (bad[k] != 0)
			fprintf(stderr, "%s step %d: %" PRId64 " counter rows wrong (check %d)\n",
				name, stepno, bad[k], k);
		assert_int_equal(bad[k], 0);
	}
}

static void run_step(const char *name, int stepno, xmlNodePtr step)
{
	xmlNodePtr req = ct_xml_child(step, "request");
	char *body = req ? request_body(req) : strdup(""), *path = attr(step, "path");
	char *gz = req ? attr(req, "gzip") : NULL;
	struct ct_buf reply = CT_BUF_INIT(1 << 24), zbody = CT_BUF_INIT(1 << 26);
	struct curl_slist *h = NULL;
	const void *p = body;
	size_t n = strlen(body);
	long status;

	if (gz && strcmp(gz, "1") == 0) {
		assert_int_equal(ct_gzip_compress(body, n, 6, &zbody), 0);
		p = zbody.data;
		n = zbody.len;
		h = curl_slist_append(h, "Content-Encoding: gzip");
	}
	status = post(path ? path : "/rpc/scheduler", p, n, h, &reply);
	check_reply(name, stepno, step, status, &reply);
	check_counters(name, stepno);
	curl_slist_free_all(h);
	ct_buf_free(&reply);
	ct_buf_free(&zbody);
	free(body);
	free(path);
	free(gz);
}

/* The X-Upload-MAC header of data for result under the host secret sec
 * (doc/protocol.md) into hdr. */
static void upload_mac(const char *sec, const char *result, const char *data,
		       char *hdr, size_t cap)
{
	unsigned char d[CT_SHA256_LEN];
	char sha[CT_SHA256_HEXLEN + 1], mac[CT_SHA256_HEXLEN + 1], msg[300];
	int n;

	ct_sha256(data, strlen(data), d);
	ct_hex_encode(d, sizeof(d), sha);
	n = snprintf(msg, sizeof(msg), "ctune-upload-mac\n%s\n%s", result, sha);
	ct_hmac_sha256(sec, strlen(sec), msg, (size_t)n, d);
	ct_hex_encode(d, sizeof(d), mac);
	snprintf(hdr, cap, "X-Upload-MAC: %s", mac);
}

static void run_upload(const char *name, int stepno, xmlNodePtr up)
{
	char *result = attr(up, "result"), *token = attr(up, "token"), *data = attr(up, "data");
	char *want = attr(up, "status"), *sec = attr(up, "secret"), hdr[512];
	struct ct_buf reply = CT_BUF_INIT(1 << 20);
	struct curl_slist *h = NULL;
	char path[256];
	long status;

	snprintf(hdr, sizeof(hdr), "X-Upload-Token: %s", token ? token : "");
	h = curl_slist_append(h, hdr);
	if (sec != NULL) {
		upload_mac(sec, result, data ? data : "", hdr, sizeof(hdr));
		h = curl_slist_append(h, hdr);
	}
	snprintf(path, sizeof(path), "/upload/%s", result);
	status = post(path, data ? data : "", data ? strlen(data) : 0, h, &reply);
	if (want && atol(want) != status)
		fail_msg("%s upload %d: HTTP %ld, want %s\n%s", name, stepno, status, want,
			 ct_buf_cstr(&reply));
	curl_slist_free_all(h);
	ct_buf_free(&reply);
	free(result);
	free(token);
	free(data);
	free(want);
	free(sec);
}

/* <setup sql="..."/>: a statement on the case's database (to give job 1
 * a shape the standard project lacks), which must succeed. */
static void run_setup(const char *name, xmlNodePtr n)
{
	char *sql = attr(n, "sql");

	if (sql == NULL || ct_db_execa(g_db, sql, NULL, 0) < 0)
		fail_msg("%s: setup failed: %s", name, sql ? sql : "(no sql attribute)");
	free(sql);
}

static void run_case(const char *file)
{
	char path[4400];
	xmlDocPtr doc;
	xmlNodePtr root, n;
	int stepno = 0;

	snprintf(path, sizeof(path), "%s/%s", g_case_dir, file);
	doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOCDATA);
	if (doc == NULL)
		fail_msg("%s: not XML", file);
	root = xmlDocGetRootElement(doc);
	{
		char why[256];

		if (root == NULL || case_check(root, NULL, why, sizeof(why)) < 0)
			fail_msg("%s: %s", file, root ? why : "empty");
	}
	reset_project();
	for (n = ct_xml_child(root, NULL); n; n = ct_xml_next(n, NULL)) {
		if (strcmp((const char *)n->name, "step") == 0)
			run_step(file, ++stepno, n);
		else if (strcmp((const char *)n->name, "upload") == 0)
			run_upload(file, ++stepno, n);
		else if (strcmp((const char *)n->name, "setup") == 0)
			run_setup(file, n);
	}
	xmlFreeDoc(doc);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_case(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".xml") == 0;
}

static void test_cases(void **state)
{
	struct dirent **list;
	int n = scandir(g_case_dir, &list, is_case, by_name);

	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		fprintf(stderr, "# case %s\n", list[i]->d_name);
		run_case(list[i]->d_name);
		free(list[i]);
	}
	free(list);
}

/* The vocabulary check refuses what a typo makes of a case file, and
 * accepts the real thing. */
static void test_case_typos_refused(void **state)
{
	static const struct {
		const char *xml, *why;		/* why: part of the refusal; NULL: fine */
	} c[] = {
		{ "<case><step><request><scheduler_request><anything/></scheduler_request>"
		  "</request><expect status=\"200\"><xpath expr=\"1\">1</xpath></expect>"
		  "<capture var=\"A\" expr=\"1\"/><sql query=\"SELECT 1\">1</sql></step>"
		  "<upload result=\"r\" token=\"t\"/></case>", NULL },
		{ "<case><step><expect><xpth expr=\"1\">2</xpth></expect></step></case>",
		  "unknown element <xpth> in <expect>" },
		{ "<case><stpe/></case>", "unknown element <stpe>" },
		{ "<case><step><sql qurey=\"SELECT 1\">1</sql></step></case>",
		  "<sql> has no attribute qurey" },
		{ "<case><step><expect stauts=\"200\"/></step></case>",
		  "<expect> has no attribute stauts" },
		{ "<case><step><capture var=\"A\"/></step></case>",
		  "<capture> needs attribute expr" },
		{ "<case><step><xpath expr=\"1\">1</xpath></step></case>",
		  "unknown element <xpath> in <step>" },	/* outside <expect> */
		{ "<cases/>", "unknown element <cases>" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		xmlDocPtr doc = xmlReadMemory(c[i].xml, (int)strlen(c[i].xml), "case.xml", NULL,
					      XML_PARSE_NONET);
		char why[256] = "";
		int rc;

		assert_non_null(doc);
		rc = case_check(xmlDocGetRootElement(doc), NULL, why, sizeof(why));
		if (c[i].why == NULL) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, CT_EFORMAT);
			if (strstr(why, c[i].why) == NULL)
				fail_msg("case %zu: '%s' does not say '%s'", i, why, c[i].why);
		}
		xmlFreeDoc(doc);
	}
}

/* Route tables belong to a server: two servers in one process register
 * their own; a table twice is one; past CT_SERVER_MAX_ROUTE_TABLES the
 * answer is CT_ETOOBIG. */
static void test_routes_per_server(void **state)
{
	static const struct ct_http_route empty[CT_SERVER_MAX_ROUTE_TABLES + 1][1];
	struct ct_server a = { 0 }, b = { 0 };

	(void)state;
	assert_int_equal(ct_http_register_routes(&a, ct_sched_routes), 0);
	assert_int_equal(ct_http_register_routes(&a, ct_sched_routes), 0);
	assert_int_equal(a.nroutes, 1);
	assert_int_equal(b.nroutes, 0);
	for (int i = 0; i < CT_SERVER_MAX_ROUTE_TABLES; i++)
		assert_int_equal(ct_http_register_routes(&b, empty[i]), 0);
	assert_int_equal(ct_http_register_routes(&b, empty[CT_SERVER_MAX_ROUTE_TABLES]),
			 CT_ETOOBIG);
	assert_int_equal(a.nroutes, 1);
	assert_ptr_equal(a.routes[0], ct_sched_routes);
}

CT_TEST_MAIN_GROUP(setup_all, teardown_all, test_case_typos_refused,
	test_routes_per_server, test_cases)
