/*
 * test_cl_web.c - the local control page: its request parser on good,
 * hostile and oversized heads (each refused with its status), form and
 * cookie decoding, the JSON it writes, and a real listener on a loopback
 * port with a stand-in control handler: the token, its cookie, Host and
 * Origin checks, the CSRF value on POSTs, the keys the form may set, caps
 * over the socket and the connection limit.
 */
#include "ct_test.h"

#include "cl_status.h"
#include "cl_web.h"
#include "cl_web_http.h"
#include "ct_clock.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_os.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>

/* ---- the parser ---- */

static int parse(const char *s, struct ct_web_req *rq)
{
	return ct_web_parse(s, strlen(s), rq);
}

static struct ct_web_req rq;	/* 8 KiB: not on the stack */

static void test_parse_good(void **unused)
{
	const char *post = "POST /api/prefs HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"
			   "Content-Type: application/x-www-form-urlencoded\r\n"
			   "X-Ctune-Csrf: abc\r\nOrigin: http://127.0.0.1:9\r\n"
			   "Content-Length: 4\r\nX-Other:  spaced value  \r\n\r\na=bc";

	(void)unused;
	assert_int_equal(parse("GET /?token=x&y=1 HTTP/1.1\r\nHost: h\r\nCookie: a=b\r\n\r\n", &rq), 0);
	assert_string_equal(rq.method, "GET");
	assert_string_equal(rq.path, "/");
	assert_string_equal(rq.query, "token=x&y=1");
	assert_string_equal(rq.host, "h");
	assert_string_equal(rq.cookie, "a=b");
	assert_null(rq.origin);
	assert_int_equal(rq.content_length, 0);
	assert_int_equal(parse(post, &rq), 0);
	assert_string_equal(rq.method, "POST");
	assert_string_equal(rq.path, "/api/prefs");
	assert_string_equal(rq.query, "");
	assert_string_equal(rq.csrf, "abc");
	assert_string_equal(rq.origin, "http://127.0.0.1:9");
	assert_int_equal(rq.content_length, 4);
	assert_memory_equal(post + rq.head_len, "a=bc", 4);
	/* header names are case-insensitive, HTTP/1.0 is fine */
	assert_int_equal(parse("HEAD / HTTP/1.0\r\nhOST: h\r\n\r\n", &rq), 0);
	assert_string_equal(rq.host, "h");
	/* not complete yet */
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: h\r\n", &rq), CT_EAGAIN);
	assert_int_equal(parse("GET / HT", &rq), CT_EAGAIN);
}

static void expect_status(const char *req, int rc, int status)
{
	int got = ct_web_parse(req, strlen(req), &rq);

	if (got != rc || rq.status != status)
		fail_msg("'%.60s': rc %d status %d, expected %d / %d", req, got, rq.status, rc,
			 status);
}

static void test_parse_bad(void **unused)
{
	(void)unused;
	expect_status("PUT / HTTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 405);
	expect_status("BREW / HTTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 405);
	expect_status("GET / HTTP/2.0\r\nHost: h\r\n\r\n", CT_EPROTO, 505);
	expect_status("GET / FTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET http://x/ HTTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\n\r\n", CT_EPROTO, 400);		/* no Host */
	expect_status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\nHost a\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\nHo st: a\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", CT_EPROTO, 400);
	expect_status("GET / HTTP/1.1\r\nHost: a\x7f\r\n\r\n", CT_EPROTO, 400);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\n\r\n", CT_EPROTO, 411);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", CT_EPROTO, 400);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", CT_EPROTO, 400);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
		      CT_EPROTO, 400);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4097\r\n\r\n", CT_ETOOBIG, 413);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999\r\n\r\n",
		      CT_EPROTO, 400);
	expect_status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
		      CT_EPROTO, 501);
	/* a NUL byte in the head */
	assert_int_equal(ct_web_parse("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", 28, &rq), CT_EPROTO);
	assert_int_equal(rq.status, 400);
}

static void test_parse_caps(void **unused)
{
	char *big = malloc(CT_WEB_MAX_HEAD + 4096);
	size_t n;

	(void)unused;
	/* a target over CT_WEB_MAX_TARGET, complete or still arriving */
	n = (size_t)snprintf(big, 4096, "GET /");
	memset(big + n, 'a', CT_WEB_MAX_TARGET + 100);
	n += CT_WEB_MAX_TARGET + 100;
	assert_int_equal(ct_web_parse(big, n, &rq), CT_ETOOBIG);
	assert_int_equal(rq.status, 414);
	strcpy(big + n, " HTTP/1.1\r\nHost: a\r\n\r\n");
	expect_status(big, CT_ETOOBIG, 414);
	/* a head that reaches CT_WEB_MAX_HEAD without its blank line */
	n = (size_t)snprintf(big, 4096, "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ");
	memset(big + n, 'p', CT_WEB_MAX_HEAD);
	assert_int_equal(ct_web_parse(big, CT_WEB_MAX_HEAD, &rq), CT_ETOOBIG);
	assert_int_equal(rq.status, 431);
	assert_int_equal(ct_web_parse(big, CT_WEB_MAX_HEAD - 1, &rq), CT_EAGAIN);
	/* more headers than CT_WEB_MAX_HEADERS */
	n = (size_t)snprintf(big, 4096, "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < CT_WEB_MAX_HEADERS; i++)
		n += (size_t)snprintf(big + n, 64, "X-%d: v\r\n", i);
	strcpy(big + n, "\r\n");
	expect_status(big, CT_ETOOBIG, 431);
	free(big);
}

static void test_forms_and_cookies(void **unused)
{
	const char *q = "a=1&b=x+y%21%2f&empty=&noeq&c=%zz&d=%4&e=%00";
	char v[8];

	(void)unused;
	assert_int_equal(ct_web_param(q, strlen(q), "a", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(ct_web_param(q, strlen(q), "b", v, sizeof(v)), 0);
	assert_string_equal(v, "x y!/");
	assert_int_equal(ct_web_param(q, strlen(q), "empty", v, sizeof(v)), 0);
	assert_string_equal(v, "");
	assert_int_equal(ct_web_param(q, strlen(q), "noeq", v, sizeof(v)), 0);
	assert_int_equal(ct_web_param("c=%zz", 5, "c", v, sizeof(v)), CT_EFORMAT);
	assert_int_equal(ct_web_param("d=%4", 4, "d", v, sizeof(v)), CT_EFORMAT);
	assert_int_equal(ct_web_param("e=%00", 5, "e", v, sizeof(v)), CT_EFORMAT);
	assert_int_equal(ct_web_param("e=%0a", 5, "e", v, sizeof(v)), CT_EFORMAT);
	assert_int_equal(ct_web_param("f=12345678", 10, "f", v, sizeof(v)), CT_ETOOBIG);
	assert_int_equal(ct_web_param("a=1", 3, "z", v, sizeof(v)), CT_ENOTFOUND);
	assert_int_equal(ct_web_cookie("ctune_12=a; ctune_1=b;ctune_123=c", "ctune_1", v,
				       sizeof(v)), 0);
	assert_string_equal(v, "b");
	assert_int_equal(ct_web_cookie("xctune_1=a", "ctune_1", v, sizeof(v)), CT_ENOTFOUND);
	assert_int_equal(ct_web_cookie("ctune_1=0123456789", "ctune_1", v, sizeof(v)), CT_ETOOBIG);
	assert_int_equal(ct_web_cookie(NULL, "ctune_1", v, sizeof(v)), CT_ENOTFOUND);
}

static void test_json(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 16);
	struct ct_status *s = calloc(1, sizeof(*s));
	struct ct_conf *prefs = NULL, *cli = NULL;

	(void)unused;
	assert_int_equal(ct_web_json_str(&b, "a\"b\\<i>&\n\x01\xff\xc3\xa9"), 0);
	assert_string_equal(ct_buf_cstr(&b),
			    "\"a\\u0022b\\u005c\\u003ci\\u003e\\u0026\\u000a\\u0001\\ufffd\xc3\xa9\"");
	ct_buf_reset(&b);
	snprintf(s->activity, sizeof(s->activity), "computing");
	snprintf(s->running, sizeof(s->running), "wu</script>");
	s->nprojects = 1;
	snprintf(s->projects[0].url, sizeof(s->projects[0].url), "http://p");
	s->projects[0].ntasks = 1;
	snprintf(s->projects[0].tasks[0].name, 128, "wu</script>");
	s->projects[0].tasks[0].last_loss = NAN;
	s->nlosses = 2;
	s->losses[0] = 2.5f;
	s->losses[1] = 2.25f;
	assert_int_equal(ct_conf_parse("idle_minutes = 3\n", 17, "p", &prefs), 0);
	assert_int_equal(ct_conf_parse("always = on\n", 12, "c", &cli), 0);
	assert_int_equal(ct_web_state_json(s, prefs, cli, &b), 0);
	assert_non_null(strstr(ct_buf_cstr(&b), "\"activity\":\"computing\""));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"running\":\"wu\\u003c/script\\u003e\""));
	assert_null(strstr(ct_buf_cstr(&b), "</script>"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"last_loss\":null"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"losses\":[2.5,2.25]"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"suspended\":false"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"prefs\":{\"idle_minutes\":\"3\"},\"forced\":[\"always\"]}"));
	/* the cap holds */
	b.max = 64;
	ct_buf_reset(&b);
	assert_int_equal(ct_web_state_json(s, prefs, cli, &b), CT_ETOOBIG);
	ct_conf_free(prefs);
	ct_conf_free(cli);
	ct_buf_free(&b);
	free(s);
}

static void test_token_file(void **unused)
{
	char *dir = ct_test_mkdtemp(), path[4200], t1[CT_WEB_TOKEN_HEX + 1], t2[sizeof(t1)];
	FILE *f;

	(void)unused;
	snprintf(path, sizeof(path), "%s/web_token", dir);
	assert_int_equal(ct_web_token(path, t1), 0);
	assert_int_equal(strlen(t1), CT_WEB_TOKEN_HEX);
	assert_int_equal(strspn(t1, "0123456789abcdef"), CT_WEB_TOKEN_HEX);
	assert_int_equal(ct_web_token(path, t2), 0);
	assert_string_equal(t1, t2);		/* kept across starts */
	f = fopen(path, "w");
	fputs("not a token\n", f);
	fclose(f);
	assert_int_equal(ct_web_token(path, t2), 0);
	assert_string_not_equal(t1, t2);	/* a damaged file gets a new one */
	ct_test_rmtree(dir);
	free(dir);
}

/* ---- a real listener ---- */

struct fake {
	pthread_mutex_t lock;
	char last[512];
	int calls;
};

static int fake_ctl(const char *cmd, struct ct_buf *reply, void *arg)
{
	struct fake *f = arg;

	pthread_mutex_lock(&f->lock);
	snprintf(f->last, sizeof(f->last), "%s", cmd);
	f->calls++;
	pthread_mutex_unlock(&f->lock);
	if (strcmp(cmd, "status") == 0)
		return ct_buf_appends(reply, "<status><activity>computing</activity><losses><l>2.5</l>"
				      "<l>2.25</l></losses></status>");
	if (strcmp(cmd, "prefs get") == 0)
		return ct_buf_appends(reply, "idle_minutes = 3\n");
	if (strstr(cmd, "bad") != NULL)
		return ct_buf_appends(reply, "error prefs: a bad value\n");
	return ct_buf_appends(reply, "ok\n");
}

struct srv {
	struct ct_web *w;
	struct fake f;
	char *dir;
	int port;
	char token[CT_WEB_TOKEN_HEX + 1];
	char cookie[128];		/* "Cookie: ctune_PORT=TOKEN\r\n" */
	char host[64];			/* "Host: 127.0.0.1:PORT\r\n" */
	char origin[64];
};

static void srv_start(struct srv *s)
{
	char path[4200];
	struct ct_web_conf c = { .port = 0, .ctl = fake_ctl, .ctl_arg = &s->f };
	const char *url;

	memset(s, 0, sizeof(*s));
	ct_os_no_sigpipe();
	pthread_mutex_init(&s->f.lock, NULL);
	s->dir = ct_test_mkdtemp();
	snprintf(path, sizeof(path), "%s/web_token", s->dir);
	c.token_path = path;
	c.ctl_arg = &s->f;
	assert_int_equal(ct_web_start(&c, &s->w), 0);
	url = ct_web_url(s->w);
	assert_int_equal(sscanf(url, "http://127.0.0.1:%d/?token=%64[0-9a-f]", &s->port, s->token), 2);
	snprintf(s->cookie, sizeof(s->cookie), "Cookie: ctune_%d=%s\r\n", s->port, s->token);
	snprintf(s->host, sizeof(s->host), "Host: 127.0.0.1:%d\r\n", s->port);
	snprintf(s->origin, sizeof(s->origin), "Origin: http://127.0.0.1:%d\r\n", s->port);
}

static void srv_stop(struct srv *s)
{
	ct_web_stop(s->w);
	ct_test_rmtree(s->dir);
	free(s->dir);
	pthread_mutex_destroy(&s->f.lock);
}

/* Send req (n bytes) on a fresh connection, read the reply until the
 * server closes; the status, or -1. */
static int http(int port, const char *req, size_t n, struct ct_buf *out)
{
	char chunk[4096];
	int fd, status = -1;

	ct_buf_reset(out);
	assert_int_equal(ct_os_loopback_connect(port, &fd), 0);
	while (n > 0) {
		ssize_t k = ct_os_sock_write(fd, req, n);

		if (k <= 0)
			break;		/* the server may answer before all is sent */
		req += k;
		n -= (size_t)k;
	}
	while (ct_os_sock_wait(fd, 0, 10000) > 0) {
		ssize_t k = ct_os_sock_read(fd, chunk, sizeof(chunk));

		if (k <= 0)
			break;
		assert_int_equal(ct_buf_append(out, chunk, (size_t)k), 0);
	}
	ct_os_sock_close(fd);
	sscanf(ct_buf_cstr(out), "HTTP/1.1 %d", &status);
	return status;
}

static int req(struct srv *s, struct ct_buf *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int req(struct srv *s, struct ct_buf *out, const char *fmt, ...)
{
	char buf[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	return http(s->port, buf, (size_t)n, out);
}

static void test_server_auth(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	struct srv s;
	char want[256];

	(void)unused;
	srv_start(&s);
	/* no token, a wrong one, the right one in the address */
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\n%s\r\n", s.host), 403);
	assert_int_equal(req(&s, &b, "GET /?token=%064d HTTP/1.1\r\n%s\r\n", 0, s.host), 403);
	snprintf(want, sizeof(want), "%.63s%c", s.token, s.token[63] == '0' ? '1' : '0');
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\n%sCookie: ctune_%d=%s\r\n\r\n",
			     s.host, s.port, want), 403);
	assert_int_equal(req(&s, &b, "GET /?token=%s HTTP/1.1\r\n%s\r\n", s.token, s.host), 303);
	snprintf(want, sizeof(want), "Set-Cookie: ctune_%d=%s; Path=/; HttpOnly; SameSite=Strict",
		 s.port, s.token);
	assert_non_null(strstr(ct_buf_cstr(&b), want));
	assert_non_null(strstr(ct_buf_cstr(&b), "\r\nLocation: /\r\n"));
	/* the cookie opens the API; localhost is the same machine */
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\n%s%s\r\n", s.host, s.cookie), 200);
	assert_non_null(strstr(ct_buf_cstr(&b), "\"activity\":\"computing\""));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"losses\":[2.5,2.25]"));
	assert_non_null(strstr(ct_buf_cstr(&b), "\"prefs\":{\"idle_minutes\":\"3\"}"));
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\nHost: LOCALHOST:%d\r\n%s\r\n",
			     s.port, s.cookie), 200);
	/* DNS rebinding: the right cookie under another name is refused */
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\nHost: evil.example:%d\r\n%s\r\n",
			     s.port, s.cookie), 403);
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n",
			     s.port + 1, s.cookie), 403);
	assert_int_equal(req(&s, &b, "GET /api/state HTTP/1.1\r\n%s%sOrigin: http://evil.example\r\n"
			     "\r\n", s.host, s.cookie), 403);
	assert_int_equal(req(&s, &b, "GET /nowhere HTTP/1.1\r\n%s%s\r\n", s.host, s.cookie), 404);
	assert_int_equal(req(&s, &b, "POST /api/state HTTP/1.1\r\n%s%sContent-Length: 0\r\n\r\n",
			     s.host, s.cookie), 405);
	srv_stop(&s);
	ct_buf_free(&b);
}

/* The page: CSP with this response's nonce on its script, the CSRF value. */
static void page_csrf(struct srv *s, struct ct_buf *b, char *csrf)
{
	char nonce[40], script[80];
	const char *p;

	assert_int_equal(req(s, b, "GET / HTTP/1.1\r\n%s%s\r\n", s->host, s->cookie), 200);
	p = strstr(ct_buf_cstr(b), "script-src 'nonce-");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "script-src 'nonce-%32[0-9a-f]'", nonce), 1);
	snprintf(script, sizeof(script), "<script nonce=\"%s\">", nonce);
	assert_non_null(strstr(ct_buf_cstr(b), script));
	p = strstr(ct_buf_cstr(b), "<meta name=\"csrf\" content=\"");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "<meta name=\"csrf\" content=\"%64[0-9a-f]\"", csrf), 1);
	assert_int_equal(strlen(csrf), 64);
	assert_null(strstr(ct_buf_cstr(b), s->token));	/* the page never shows it */
}

static int post(struct srv *s, struct ct_buf *b, const char *path, const char *csrf,
		const char *origin, const char *body)
{
	return req(s, b, "POST %s HTTP/1.1\r\n%s%s%sX-Ctune-Csrf: %s\r\n"
		   "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\n%s",
		   path, s->host, s->cookie, origin, csrf, strlen(body), body);
}

static void test_server_posts(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	char csrf[80], other[80];
	struct srv s;
	int calls;

	(void)unused;
	srv_start(&s);
	page_csrf(&s, &b, csrf);
	snprintf(other, sizeof(other), "%064d", 7);
	calls = s.f.calls;
	/* without the page's CSRF value, without Origin, from another origin */
	assert_int_equal(post(&s, &b, "/api/suspend", other, s.origin, "x=1"), 403);
	assert_int_equal(post(&s, &b, "/api/suspend", csrf, "", "x=1"), 403);
	assert_int_equal(post(&s, &b, "/api/suspend", csrf, "Origin: http://evil.example\r\n", "x=1"),
			 403);
	assert_int_equal(req(&s, &b, "POST /api/suspend HTTP/1.1\r\n%s%s%sX-Ctune-Csrf: %s\r\n"
			     "Content-Type: text/plain\r\nContent-Length: 0\r\n\r\n", s.host,
			     s.cookie, s.origin, csrf), 403);
	assert_int_equal(req(&s, &b, "POST /api/suspend HTTP/1.1\r\n%s%s%sX-Ctune-Csrf: %s\r\n"
			     "Sec-Fetch-Site: cross-site\r\nContent-Type: "
			     "application/x-www-form-urlencoded\r\nContent-Length: 0\r\n\r\n",
			     s.host, s.cookie, s.origin, csrf), 403);
	assert_int_equal(s.f.calls, calls);	/* none reached the daemon */
	assert_int_equal(post(&s, &b, "/api/suspend", csrf, s.origin, "x=1"), 200);
	assert_string_equal(s.f.last, "suspend");
	assert_int_equal(post(&s, &b, "/api/resume", csrf, s.origin, ""), 200);
	assert_string_equal(s.f.last, "resume");
	/* preferences: the form's keys, decoded, as one command */
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin,
			      "idle_minutes=5&run_hours=22%3A00-07%3A00&always=on"), 200);
	assert_string_equal(s.f.last, "prefs set idle_minutes=5 run_hours=22:00-07:00 always=on");
	calls = s.f.calls;
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin, "web=off"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "the page does not set 'web'"));
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin, "idle_minutes=1+2"), 400);
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin, "idle_minutes=1%3D2"), 400);
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin, ""), 400);
	assert_int_equal(s.f.calls, calls);
	/* the daemon's refusal reaches the page */
	assert_int_equal(post(&s, &b, "/api/prefs", csrf, s.origin, "idle_minutes=bad"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "{\"error\":\"prefs: a bad value\"}"));
	srv_stop(&s);
	ct_buf_free(&b);
}

/* The projects' POSTs: CSRF-checked as the rest, each the daemon's command
 * for one URL; an attach is checked before the daemon hears of it. */
static void test_server_project_posts(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	char csrf[80], other[80];
	struct srv s;
	int calls;

	(void)unused;
	srv_start(&s);
	page_csrf(&s, &b, csrf);
	snprintf(other, sizeof(other), "%064d", 7);
	calls = s.f.calls;
	assert_int_equal(post(&s, &b, "/api/detach", other, s.origin, "url=http%3A%2F%2Fp.example"),
			 403);
	assert_int_equal(post(&s, &b, "/api/project_suspend", csrf, "Origin: http://evil.example\r\n",
			      "url=http%3A%2F%2Fp.example"), 403);
	assert_int_equal(post(&s, &b, "/api/attach", other, s.origin,
			      "url=http%3A%2F%2Fp.example&key=abc"), 403);
	assert_int_equal(req(&s, &b, "GET /api/detach HTTP/1.1\r\n%s%s\r\n", s.host, s.cookie), 405);
	assert_int_equal(s.f.calls, calls);
	assert_int_equal(post(&s, &b, "/api/project_suspend", csrf, s.origin,
			      "url=http%3A%2F%2Fp.example%3A8080"), 200);
	assert_string_equal(s.f.last, "project suspend http://p.example:8080");
	assert_int_equal(post(&s, &b, "/api/project_resume", csrf, s.origin,
			      "url=http%3A%2F%2Fp.example%3A8080"), 200);
	assert_string_equal(s.f.last, "project resume http://p.example:8080");
	assert_int_equal(post(&s, &b, "/api/detach", csrf, s.origin, "url=https%3A%2F%2Fq.example"),
			 200);
	assert_string_equal(s.f.last, "detach https://q.example");
	/* refused before the daemon: no URL, not a URL, a space in it, no key
	 * nor password, a key that is not one, a project that does not answer */
	calls = s.f.calls;
	assert_int_equal(post(&s, &b, "/api/detach", csrf, s.origin, "x=1"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "no project URL given"));
	assert_int_equal(post(&s, &b, "/api/project_suspend", csrf, s.origin, "url=ftp%3A%2F%2Fp"),
			 400);
	assert_int_equal(post(&s, &b, "/api/detach", csrf, s.origin, "url=http%3A%2F%2Fp+status"),
			 400);
	assert_int_equal(post(&s, &b, "/api/attach", csrf, s.origin, "url=http%3A%2F%2Fp.example"),
			 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "give the account key, or the e-mail address"));
	assert_int_equal(post(&s, &b, "/api/attach", csrf, s.origin,
			      "url=http%3A%2F%2Fp.example&email=a%40b.example"), 400);
	assert_int_equal(post(&s, &b, "/api/attach", csrf, s.origin,
			      "url=http%3A%2F%2Fp.example&key=ab+cd"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "bad account key"));
	assert_int_equal(post(&s, &b, "/api/attach", csrf, s.origin,
			      "url=http%3A%2F%2F127.0.0.1%3A1&key=abcd"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "cannot reach http://127.0.0.1:1"));
	assert_int_equal(s.f.calls, calls);
	/* the daemon's refusal reaches the page */
	assert_int_equal(post(&s, &b, "/api/project_suspend", csrf, s.origin,
			      "url=http%3A%2F%2Fbad.example"), 400);
	assert_non_null(strstr(ct_buf_cstr(&b), "{\"error\":\"prefs: a bad value\"}"));
	srv_stop(&s);
	ct_buf_free(&b);
}

static void test_server_caps(void **unused)
{
	struct ct_buf b = CT_BUF_INIT(1 << 20);
	char *big = malloc(3 * CT_WEB_MAX_HEAD);
	int fds[CT_WEB_MAX_CONN], n;
	struct srv s;

	(void)unused;
	srv_start(&s);
	/* a head past the cap, a body past the cap, garbage */
	n = snprintf(big, 256, "GET / HTTP/1.1\r\n%sX-Pad: ", s.host);
	memset(big + n, 'p', 2 * CT_WEB_MAX_HEAD);
	assert_int_equal(http(s.port, big, (size_t)n + 2 * CT_WEB_MAX_HEAD, &b), 431);
	assert_int_equal(req(&s, &b, "POST /api/prefs HTTP/1.1\r\n%s%sContent-Length: 5000\r\n\r\n",
			     s.host, s.cookie), 413);
	assert_int_equal(http(s.port, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15, &b),
			 400);
	/* CT_WEB_MAX_CONN idle connections: the next one is told to come back
	 * (once the server has taken them all in: polled, as a loaded machine
	 * may take a while; each idle one holds its slot for the 5 s deadline) */
	for (int i = 0; i < CT_WEB_MAX_CONN; i++)
		assert_int_equal(ct_os_loopback_connect(s.port, &fds[i]), 0);
	int code = 0;
	double until = ct_clock_mono(&ct_clock_system) + 0.8 * CT_WEB_DEADLINE_S;
	while (code != 503 && ct_clock_mono(&ct_clock_system) < until) {
		ct_os_sleep(0.05);
		code = req(&s, &b, "GET /api/state HTTP/1.1\r\n%s%s\r\n", s.host, s.cookie);
	}
	assert_int_equal(code, 503);
	for (int i = 0; i < CT_WEB_MAX_CONN; i++)
		ct_os_sock_close(fds[i]);
	/* the slots come back as their threads see the closes (polled: on a
	 * loaded machine those threads may wait their turn) */
	until = ct_clock_mono(&ct_clock_system) + 2 * CT_WEB_DEADLINE_S;
	do {
		ct_os_sleep(0.1);
		code = req(&s, &b, "GET /api/state HTTP/1.1\r\n%s%s\r\n", s.host, s.cookie);
	} while (code != 200 && ct_clock_mono(&ct_clock_system) < until);
	assert_int_equal(code, 200);
	srv_stop(&s);
	ct_buf_free(&b);
	free(big);
}

CT_TEST_MAIN(test_parse_good, test_parse_bad, test_parse_caps, test_forms_and_cookies,
	test_json, test_token_file, test_server_auth, test_server_posts, test_server_project_posts,
	test_server_caps)
