/*
 * web_news.c - what a visitor reads before joining: the project page
 * (/about: the operator's description, the jobs and what each trains, the
 * client downloads, how to join in five steps), the news the operator
 * posts with `ctune-server news add` (/news, and /news.atom for feed
 * readers), and the client packages under PROJECT/html/client/, served
 * at /client/NAME.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ct_err.h"
#include "ct_file.h"
#include "data/db.h"
#include "data/server.h"
#include "tmpl.h"
#include "web_int.h"

#define CONTENT_MAX (2u << 20)
#define NEWS_PAGE 50
#define CLIENT_FILES_MAX 32
#define CLIENT_FILE_MAX (CT_WEB_MAX_BODY - 1)

/* ---- client downloads -------------------------------------------------- */

/* A name /client/ serves: letters, digits, '.', '_', '-', not starting
 * with '.', at most 128 bytes (so never a path). */
static int client_name_ok(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > 128 || n[0] == '.')
		return 0;
	for (const char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

static int client_dir(const struct ct_server *srv, char *out, size_t cap)
{
	return ct_path_join(out, cap, srv->dir, "html/client");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* The table of client packages (none: a line saying how to build one). */
static int downloads(struct ct_web_req *req, struct ct_buf *c)
{
	char dir[4200], names[CLIENT_FILES_MAX][129], path[4400];
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int rc;

	if (client_dir(req->srv, dir, sizeof(dir)) == 0 && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL && n < CLIENT_FILES_MAX)
			if (client_name_ok(de->d_name))	/* so at most 128 bytes */
				memcpy(names[n++], de->d_name, strlen(de->d_name) + 1);
		closedir(d);
	}
	qsort(names, n, sizeof(names[0]), cmp_name);
	if (n == 0)
		return ct_buf_appends(c, "<p id=\"downloads\" class=\"muted\">No package here yet: "
				      "build <code>ctune</code> from source (doc/install.md).</p>");
	rc = ct_buf_appends(c, "<table id=\"downloads\"><thead><tr><th>Package</th><th class="
			    "\"num\">Size</th></tr></thead><tbody>");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct stat st;

		if (ct_path_join(path, sizeof(path), dir, names[i]) < 0 || stat(path, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		rc = ct_tmpl_printf(c, "<tr><td><a class=\"download\" href=\"/client/%s\">%s</a>"
				    "</td><td class=\"num\">%.1f MB</td></tr>", names[i], names[i],
				    (double)st.st_size / 1e6);
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

int ct_web_client_file(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *name = req->path + strlen("/client/");
	char dir[4200], path[4400];
	unsigned char *data = NULL;
	size_t len = 0;
	int rc;

	if (!client_name_ok(name))
		return ct_error(CT_ENOTFOUND, "no such package");
	rc = client_dir(req->srv, dir, sizeof(dir));
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, name);
	if (rc == 0)
		rc = ct_file_read_all(path, CLIENT_FILE_MAX, &data, &len);
	if (rc == CT_ENOENT)
		return ct_error(CT_ENOTFOUND, "no such package");
	if (rc == 0)
		rc = ct_buf_append(&resp->body, data, len);
	free(data);
	resp->content_type = "application/octet-stream";
	snprintf(resp->cache_control, sizeof(resp->cache_control), "public, max-age=3600");
	return rc;
}

/* ---- news ---------------------------------------------------------------- */

static int news_items(struct ct_buf *c, const struct ct_web_news *it, size_t n, int brief)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		char when[32];

		ct_tmpl_date(when, sizeof(when), it[i].create_time);
		rc = ct_tmpl_printf(c, "<article class=\"news\" id=\"news-%lld\"><h3>%s</h3><p "
				    "class=\"muted\">%s</p>", (long long)it[i].id, it[i].title, when);
		if (rc == 0 && !brief)
			rc = ct_tmpl_printf(c, "<p class=\"profile\">%s</p>", it[i].body);
		if (rc == 0)
			rc = ct_buf_appends(c, "</article>");
	}
	if (rc == 0 && n == 0)
		rc = ct_buf_appends(c, "<p class=\"muted\">No news yet.</p>");
	return rc;
}

int ct_web_news_section(struct ct_web_req *req, struct ct_buf *c, size_t max)
{
	struct ct_web_news *it = NULL;
	size_t n = 0;
	int rc = ct_web_news(req->db, max, &it, &n);

	if (rc == 0)
		rc = ct_buf_appends(c, "<h2>News</h2>");
	if (rc == 0)
		rc = news_items(c, it, n, 1);
	if (rc == 0)
		rc = ct_buf_appends(c, "<p><a href=\"/news\">All news</a> · <a href=\"/news.atom\">"
				    "Atom feed</a></p>");
	free(it);
	return rc;
}

int ct_web_page_news(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	struct ct_web_news *it = NULL;
	size_t n = 0;
	int rc = ct_web_news(req->db, NEWS_PAGE, &it, &n);

	if (rc == 0)
		rc = ct_buf_appends(&c, "<p><a href=\"/news.atom\" id=\"atom-link\">Atom feed</a></p>");
	if (rc == 0)
		rc = news_items(&c, it, n, 0);
	if (rc == 0)
		rc = ct_web_render(req, resp, "News", &c, NULL);
	free(it);
	ct_buf_free(&c);
	return rc;
}

/* RFC 3339 in UTC, as Atom wants. */
static void atom_time(char *out, size_t cap, long long t)
{
	time_t tt = (time_t)(t > 0 ? t : 0);
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Atom (RFC 4287): every string through the escaping printf, which
 * escapes for XML as well as for HTML. */
int ct_web_news_atom(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_web_news *it = NULL;
	char url[300], when[32];
	size_t n = 0;
	int rc = ct_web_news(req->db, NEWS_PAGE, &it, &n);

	ct_web_project_url(req->srv, url, sizeof(url));
	atom_time(when, sizeof(when), n > 0 ? it[0].create_time : ct_db_now(req->db));
	if (rc == 0)
		rc = ct_tmpl_printf(&resp->body, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
			"<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>%s news</title>"
			"<id>%s/news</id><link rel=\"alternate\" href=\"%s/news\"/><link rel=\"self\" "
			"href=\"%s/news.atom\"/><updated>%s</updated><author><name>%s</name></author>",
			ct_web_project_name(req->srv), url, url, url, when,
			ct_web_project_name(req->srv));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		atom_time(when, sizeof(when), it[i].create_time);
		rc = ct_tmpl_printf(&resp->body, "<entry><title>%s</title><id>%s/news#news-%lld"
			"</id><link href=\"%s/news#news-%lld\"/><updated>%s</updated><content "
			"type=\"text\">%s</content></entry>", it[i].title, url, (long long)it[i].id,
			url, (long long)it[i].id, when, it[i].body);
	}
	if (rc == 0)
		rc = ct_buf_appends(&resp->body, "</feed>\n");
	resp->content_type = "application/atom+xml";
	snprintf(resp->cache_control, sizeof(resp->cache_control), "max-age=300");
	free(it);
	return rc;
}

/* ---- the project page ------------------------------------------------------ */

int ct_web_page_about(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	const char *desc = req->srv->conf ? ct_conf_get(req->srv->conf, "project_description")
					  : NULL;
	char url[300];
	int rc;

	ct_web_project_url(req->srv, url, sizeof(url));
	rc = ct_tmpl_printf(&c, "<p class=\"profile\" id=\"description\">%s</p>",
			    desc && *desc ? desc : "This project fine-tunes language models on "
			    "volunteers' computers. Every work unit is computed twice and the "
			    "results compared; every valid result earns credit.");
	if (rc == 0)
		rc = ct_tmpl_printf(&c, "<h2>Join in five steps</h2><ol id=\"join-steps\">"
			"<li><a href=\"/account/create\">Create an account</a>: the next page shows "
			"your account key.</li><li>Install <code>ctune</code>: a package below, or "
			"build it (doc/install.md).</li><li>Attach the computer: <pre class=\"cmd\">"
			"ctune attach %s --key YOUR_KEY</pre></li><li>Start it: <code>ctune run</code>"
			" (or <code>ctune service install</code> to start with the computer).</li>"
			"<li>Watch it work: <code>ctune status</code>, and your tasks and credit on "
			"<a href=\"/account\">your page</a>.</li></ol>", url);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<h2>Download the client</h2>");
	if (rc == 0)
		rc = downloads(req, &c);
	if (rc == 0)
		rc = ct_buf_appends(&c, "<h2>What it trains</h2><p>Each <a href=\"/jobs\">job</a> "
				    "fine-tunes one model on one data set; its page names the "
				    "model, the tokenizer, LoRA or full fine-tuning and the data, "
				    "and plots the loss round by round.</p>");
	if (rc == 0)
		rc = ct_web_news_section(req, &c, 5);
	if (rc == 0)
		rc = ct_web_render(req, resp, "About this project", &c, NULL);
	ct_buf_free(&c);
	return rc;
}
