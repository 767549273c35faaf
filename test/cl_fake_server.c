/*
 * cl_fake_server.c - a small stand-in for ctune-server that the client's
 * integration tests (test/client_*.sh) run as a real process, so that the
 * client's behaviour (backoff, resume after kill -9, idle suspend, upload
 * and report) is tested on its own, independently of the real server.
 *
 *   cl_fake_server DIR [--port P] [--results N] [--steps S] [--delay D]
 *                      [--bad-hash] [--garbage N] [--lose-acks N]
 *
 * It writes a tiny random GPT-2 model and a token file into DIR and serves
 * the protocol of doc/protocol.md: /rpc/scheduler hands out N results
 * ("r0".."rN-1", one per request that wants work), all replicas of ONE
 * work unit of S steps, so any two results must come back bit-identical;
 * /download/<sha256> serves the two inputs with Range; /upload/<name>
 * checks the token ("tok-<name>"), stores the file, decodes the delta with
 * ct_delta_decode and writes the trained weights to DIR/upload/<name>.bin
 * (an llm.c checkpoint, comparable with `ctune train --out`). Every report
 * is appended to DIR/reports.log as "NAME STATUS SHA256 SIZE" (a repeated
 * report as "DUP NAME"; an error report's SHA256 field is its error code).
 * The port goes to DIR/port when it listens. Faults for the tests of bad
 * input: --bad-hash announces a wrong SHA-256 for the data file; --garbage N
 * answers the first N scheduler requests with malformed XML; --lose-acks N
 * records the reports of the first N requests that carry some, then answers
 * them with HTTP 500 as if the reply were lost on the way.
 */
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_gzip.h"
#include "ct_hash.h"
#include "ct_tokens.h"
#include "ct_xml.h"
#include "http_fixture.h"

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake {
	const char *dir;
	int port, nresults, steps, given;
	int bad_hash, garbage, lose_acks;
	double delay;
	char model_sha[65], data_sha[65];
	char model_path[4096], data_path[4096];
	struct ct_gpt2 base;
	int reported[64];
	pthread_mutex_t lock;
};

static enum MHD_Result reply(struct MHD_Connection *c, int status, const char *type,
			     const void *data, size_t n)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)data,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Append line to the file `name` in the fake's directory (best effort). */
static void log_line(struct fake *f, const char *name, const char *line)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "a");
	if (fp != NULL) {
		fputs(line, fp);
		fclose(fp);
	}
}

static void wu_xml(struct fake *f, struct ct_buf *b, const char *host)
{
	ct_buf_appendf(b, "<workunit><name>w0</name><job_id>1</job_id><round>1</round>"
		       "<shard>0</shard><steps>%d</steps><batch>2</batch><seq>8</seq>"
		       "<lr>0.001</lr><beta1>0.9</beta1><beta2>0.999</beta2><eps>1e-08</eps>"
		       "<weight_decay>0</weight_decay><grad_clip>1</grad_clip><seed>1</seed>"
		       "<upload_encoding>lossless</upload_encoding>"
		       "<file role=\"model\"><url>http://%s/download/%s</url><sha256>%s</sha256>"
		       "<size>%llu</size></file>"
		       "<file role=\"data\"><url>http://%s/download/%s</url><sha256>%s</sha256>"
		       "<size>%llu</size></file></workunit>\n", f->steps, host, f->model_sha,
		       f->model_sha, (unsigned long long)(1024 + 4 * f->base.lay.total), host,
		       f->data_sha, f->bad_hash ? f->model_sha : f->data_sha,
		       (unsigned long long)(1024 + 2 * 4096));
}

static void handle_report(struct fake *f, xmlNodePtr r, struct ct_buf *out)
{
	char *name = NULL, *status = NULL, *sha = NULL, line[512];
	long size = 0;
	int idx;

	ct_xml_get_str(r, "name", 100, &name);
	ct_xml_get_str(r, "status", 100, &status);
	ct_xml_get_str(r, "sha256", 100, &sha);
	if (sha == NULL)
		ct_xml_get_str(r, "error_code", 100, &sha);
	ct_xml_get_long(r, "size", 0, 1L << 40, &size);
	if (name == NULL)
		goto out;
	idx = name[0] == 'r' ? atoi(name + 1) : -1;
	if (idx >= 0 && idx < 64 && f->reported[idx]) {
		snprintf(line, sizeof(line), "DUP %s\n", name);
		ct_buf_appendf(out, "<ack><name>%s</name><status>rejected</status>"
			       "<code>DUP</code></ack>\n", name);
	} else {
		if (idx >= 0 && idx < 64)
			f->reported[idx] = 1;
		snprintf(line, sizeof(line), "%s %s %s %ld\n", name, status ? status : "?",
			 sha ? sha : "-", size);
		ct_buf_appendf(out, "<ack><name>%s</name><status>accepted</status></ack>\n", name);
	}
	log_line(f, "reports.log", line);
out:
	free(name);
	free(status);
	free(sha);
}

static int scheduler(struct fake *f, struct MHD_Connection *c, const struct ct_buf *body,
		     struct ct_buf *out)
{
	struct ct_buf plain = CT_BUF_INIT(16 << 20);
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	xmlDocPtr doc = NULL;
	xmlNodePtr root, n;
	long want = 0;
	int rc;

	if (ct_gzip_is_gzip(body->data, body->len))
		rc = ct_gzip_decompress(body->data, body->len, &plain);
	else
		rc = ct_buf_append(&plain, body->data, body->len);
	if (rc == 0)
		rc = ct_xml_parse(plain.data, plain.len, 16 << 20, 32, &doc);
	ct_buf_free(&plain);
	if (rc < 0)
		return 400;
	if (f->garbage > 0) {
		f->garbage--;
		xmlFreeDoc(doc);
		ct_buf_appends(out, "<scheduler_reply><host_id>7</scheduler_reply>");
		return 200;
	}
	root = xmlDocGetRootElement(doc);
	ct_buf_appendf(out, "<scheduler_reply>\n<host_id>7</host_id>"
		       "<host_secret>00112233445566778899aabbccddeeff"
		       "00112233445566778899aabbccddeeff</host_secret>"
		       "<request_delay>%g</request_delay><user_name>tester</user_name>"
		       "<total_credit>%d.5</total_credit><expavg_credit>1.25</expavg_credit>\n",
		       f->delay, f->given);
	pthread_mutex_lock(&f->lock);
	for (n = ct_xml_child(root, "result"); n; n = ct_xml_next(n, "result"))
		handle_report(f, n, out);
	n = ct_xml_child(root, "work_req");
	if (n != NULL)
		ct_xml_get_long(n, "want_results", 0, 16, &want);
	if (want > 0 && f->given < f->nresults) {
		int i = f->given++;

		wu_xml(f, out, host ? host : "127.0.0.1");
		ct_buf_appendf(out, "<result><name>r%d</name><wu_name>w0</wu_name>"
			       "<deadline>4000000000</deadline>"
			       "<upload_url>http://%s/upload/r%d</upload_url>"
			       "<upload_token>tok-r%d</upload_token>"
			       "<max_upload_bytes>100000000</max_upload_bytes></result>\n",
			       i, host ? host : "127.0.0.1", i, i);
	}
	if (f->lose_acks > 0 && ct_xml_child(root, "result") != NULL) {
		f->lose_acks--;
		pthread_mutex_unlock(&f->lock);
		xmlFreeDoc(doc);
		ct_buf_reset(out);
		return 500;
	}
	pthread_mutex_unlock(&f->lock);
	ct_buf_appends(out, "</scheduler_reply>\n");
	xmlFreeDoc(doc);
	return 200;
}

/* Decode an upload against the base model and save the trained weights. */
static int store_upload(struct fake *f, const char *name, const struct ct_buf *body)
{
	size_t n = f->base.lay.total;
	float *w = malloc(n * sizeof(float));
	char path[4200];
	int rc;

	if (w == NULL)
		return CT_ENOMEM;
	snprintf(path, sizeof(path), "%s/upload/%s", f->dir, name);
	rc = ct_file_write_atomic(path, body->data, body->len, 0644);
	if (rc == 0) rc = ct_delta_decode(body->data, body->len, f->base.params, n, w, NULL);
	snprintf(path, sizeof(path), "%s/upload/%s.bin", f->dir, name);
	if (rc == 0) rc = ct_gpt2_save(path, &f->base.cfg, w);
	free(w);
	return rc;
}

static int upload(struct fake *f, struct MHD_Connection *c, const char *name,
		  const struct ct_buf *body, struct ct_buf *out)
{
	const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Upload-Token");
	const char *sha = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Content-SHA256");
	char want[128], got[65];

	snprintf(want, sizeof(want), "tok-%s", name);
	if (tok == NULL || strcmp(tok, want) != 0) {
		ct_buf_appends(out, "<upload_reply><error><code>AUTH</code></error></upload_reply>");
		return 401;
	}
	ct_sha256_hex(body->data, body->len, got);
	if (sha != NULL && strcmp(sha, got) != 0) {
		ct_buf_appends(out, "<upload_reply><error><code>HASH</code></error></upload_reply>");
		return 400;
	}
	if (store_upload(f, name, body) < 0) {
		ct_buf_appendf(out, "<upload_reply><error><code>FORMAT</code><message>%s</message>"
			       "</error></upload_reply>", ct_errmsg(CT_EFORMAT));
		return 400;
	}
	ct_buf_appendf(out, "<upload_reply><status>ok</status><sha256>%s</sha256>"
		       "<size>%zu</size></upload_reply>", got, body->len);
	return 200;
}

static int download(struct fake *f, struct MHD_Connection *c, const char *sha,
		    struct MHD_Response **resp)
{
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
	const char *path = strcmp(sha, f->model_sha) == 0 ? f->model_path :
			   strcmp(sha, f->data_sha) == 0 ? f->data_path : NULL;
	unsigned char *data = NULL;
	unsigned long long a = 0, b;
	size_t len;
	char line[256], cr[128];
	int status = 200;

	if (path == NULL || ct_file_read_all(path, 0, &data, &len) < 0)
		return 404;
	b = len - 1;
	if (range != NULL) {
		if (sscanf(range, "bytes=%llu-%llu", &a, &b) < 1 || a >= len || b >= len || a > b) {
			free(data);
			return 416;
		}
		status = 206;
	}
	snprintf(line, sizeof(line), "GET %s %llu\n", sha, a);
	log_line(f, "downloads.log", line);
	*resp = MHD_create_response_from_buffer((size_t)(b - a + 1), data + a, MHD_RESPMEM_MUST_COPY);
	free(data);
	if (status == 206) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%zu", a, b, len);
		MHD_add_response_header(*resp, "Content-Range", cr);
	}
	return status;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *size, void **con_cls)
{
	struct fake *f = cls;
	struct ct_fx_conn *cn;
	struct ct_buf out = CT_BUF_INIT(0);
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	int status = 404;

	(void)version;
	if (ct_fx_collect(con_cls, data, size, 200 << 20, &cn))
		return MHD_YES;
	if (strcmp(method, "POST") == 0 && strcmp(url, "/rpc/scheduler") == 0)
		status = scheduler(f, c, &cn->body, &out);
	else if (strcmp(method, "POST") == 0 && strncmp(url, "/upload/", 8) == 0)
		status = upload(f, c, url + 8, &cn->body, &out);
	else if (strcmp(method, "GET") == 0 && strncmp(url, "/download/", 10) == 0)
		status = download(f, c, url + 10, &resp);
	if (resp != NULL) {
		ret = MHD_queue_response(c, (unsigned)status, resp);
		MHD_destroy_response(resp);
	} else {
		ret = reply(c, status, "application/xml", out.data ? (void *)out.data : "", out.len);
	}
	ct_buf_free(&out);
	return ret;
}

static int make_inputs(struct fake *f)
{
	struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 16, .Vp = 64 };
	ct_tok tok[4096];
	int rc;

	rc = ct_gpt2_alloc(&f->base, &cfg);
	if (rc == 0) rc = ct_gpt2_init_random(&cfg, 42, f->base.params);
	snprintf(f->model_path, sizeof(f->model_path), "%s/base.bin", f->dir);
	snprintf(f->data_path, sizeof(f->data_path), "%s/data.bin", f->dir);
	if (rc == 0) rc = ct_gpt2_save(f->model_path, &cfg, f->base.params);
	for (int i = 0; i < 4096; i++)	/* a learnable pattern */
		tok[i] = (ct_tok)((i * 7 + (i / 5) % 3) % 64);
	if (rc == 0) rc = ct_tokens_save(f->data_path, tok, 4096);
	if (rc == 0) rc = ct_sha256_file_hex(f->model_path, f->model_sha);
	if (rc == 0) rc = ct_sha256_file_hex(f->data_path, f->data_sha);
	return rc;
}

int main(int argc, char **argv)
{
	struct fake f = { .nresults = 1, .steps = 20, .delay = 0.5 };
	struct MHD_Daemon *d;
	char path[4200];
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: cl_fake_server DIR [--port P] [--results N] "
			"[--steps S] [--delay D]\n");
		return 2;
	}
	f.dir = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "0";

		if (strcmp(argv[i], "--bad-hash") == 0) {
			f.bad_hash = 1;
			continue;
		}
		if (strcmp(argv[i], "--port") == 0) f.port = atoi(v);
		else if (strcmp(argv[i], "--results") == 0) f.nresults = atoi(v);
		else if (strcmp(argv[i], "--steps") == 0) f.steps = atoi(v);
		else if (strcmp(argv[i], "--delay") == 0) f.delay = atof(v);
		else if (strcmp(argv[i], "--garbage") == 0) f.garbage = atoi(v);
		else if (strcmp(argv[i], "--lose-acks") == 0) f.lose_acks = atoi(v);
		i++;
	}
	pthread_mutex_init(&f.lock, NULL);
	snprintf(path, sizeof(path), "%s/upload", f.dir);
	mkdir(path, 0755);
	rc = make_inputs(&f);
	if (rc < 0) {
		fprintf(stderr, "cl_fake_server: %s\n", ct_errmsg(rc));
		return 1;
	}
	d = ct_fx_start(f.dir, f.port, handler, &f);
	if (d == NULL) {
		fprintf(stderr, "cl_fake_server: cannot listen on port %d\n", f.port);
		return 1;
	}
	ct_fx_wait_signal();
	MHD_stop_daemon(d);
	ct_gpt2_free(&f.base);
	return 0;
}
