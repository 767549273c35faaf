/*
 * web_stats.c - machine-readable views for other programs:
 *
 *  - the stats export in BOINC db_dump's XML shape, so the third-party
 *    stats sites that read BOINC projects can read a crowdtune project:
 *    PROJECT/html/stats/tables.xml (totals) and user.gz, team.gz, host.gz
 *    (gzip'd XML, one element per row), rewritten atomically by the
 *    "stats" role every web.stats_interval seconds and served under
 *    /stats/;
 *  - /metrics in the Prometheus text exposition format.
 *
 * Exports read the tables in id order, 1000 rows per statement (keyset
 * paging), so the database never materialises a whole table at once.
 * BOINC exports a cross-project id (cpid) per user; crowdtune has no
 * cross-project ids, so the cpid here is a stable keyed hash of the user's
 * id (32 hex digits, as BOINC's): sites can follow a user across exports
 * but learn nothing about the e-mail address.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_gzip.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_xml.h"
#include "data/db.h"
#include "data/server.h"
#include "tmpl.h"
#include "page_cache.h"
#include "data/dl_web.h"
#include "web_int.h"

#define EXPORT_MAX (512u << 20)	/* uncompressed XML of one table */
#define BATCH 1000

static const char *const stats_files[] = {
	"tables.xml", "user.gz", "team.gz", "host.gz", NULL,
};

static int stats_dir(const struct ct_server *srv, char *out, size_t cap)
{
	if (snprintf(out, cap, "%s/html/stats", srv->dir) >= (int)cap)
		return ct_error(CT_ETOOBIG, "stats: path too long");
	return 0;
}

static void cpid_of(const struct ct_server *srv, const char *what, int64_t id,
		    char out[33])
{
	unsigned char key[32], mac[32];
	char msg[64];

	ct_web_key(srv, "ctune stats cpid v1", key);
	snprintf(msg, sizeof(msg), "%s:%lld", what, (long long)id);
	ct_hmac_sha256(key, sizeof(key), msg, strlen(msg), mac);
	ct_hex_encode(mac, 16, out);
}

/* ---- one table at a time -------------------------------------------------- */

/* A row's XML element as a table of children, in BOINC's order: a member
 * of the leaderboard's row struct (dl_web.h, read through the data
 * layer's mapper), the row's cpid, or a constant. */
enum xe_type {
	XE_INT, XE_DBL, XE_STR,
	XE_STR_OPT,		/* member, left out when empty */
	XE_CPID,		/* cpid_of() the row's kind and id */
	XE_LONG, XE_CONST_STR,	/* constants .v / .s */
};

struct xelem {
	const char *tag;
	enum xe_type type;
	size_t off;		/* the member's place in the row */
	long v;
	const char *s;
};

/* Member m of row type T as element `t`; its C type picks how. */
#define XM(T, t, m) { .tag = (t), .off = offsetof(T, m), .type = _Generic( \
	(((T *)0)->m), int64_t: XE_INT, double: XE_DBL, char *: XE_STR) }

/* One exported table: ct_web_board_after's rows of `kind` (row struct of
 * `size` bytes), element `kind` each, in file `file` under <plural>. */
struct export_kind {
	const char *kind, *plural, *file;
	size_t size;
	const struct xelem *elems;	/* ends with .tag NULL */
};

#define U struct ct_web_user
static const struct xelem user_elems[] = {
	XM(U, "id", id), XM(U, "name", name), XM(U, "country", country),
	XM(U, "create_time", create_time), XM(U, "total_credit", total_credit),
	XM(U, "expavg_credit", expavg_credit), XM(U, "expavg_time", expavg_time),
	{ .tag = "cpid", .type = XE_CPID }, XM(U, "teamid", teamid),
	{ .tag = "url", .type = XE_STR_OPT, .off = offsetof(U, url) },
	{ .tag = "has_profile", .type = XE_LONG, .v = 0 },
	{ .tag = NULL },
};
#undef U

#define T struct ct_web_team
static const struct xelem team_elems[] = {
	XM(T, "id", id), { .tag = "type", .type = XE_LONG, .v = 1 }, XM(T, "name", name),
	XM(T, "userid", userid), XM(T, "total_credit", total_credit),
	XM(T, "expavg_credit", expavg_credit), XM(T, "expavg_time", expavg_time),
	XM(T, "founder_name", founder_name), XM(T, "create_time", create_time),
	XM(T, "url", url), XM(T, "description", description),
	{ .tag = "country", .type = XE_CONST_STR, .s = "" }, XM(T, "nusers", nusers),
	{ .tag = NULL },
};
#undef T

/* BOINC's names: p_model the CPU, m_nbytes the memory, coprocs the device */
#define H struct ct_web_host
static const struct xelem host_elems[] = {
	XM(H, "id", id), XM(H, "userid", userid), XM(H, "total_credit", total_credit),
	XM(H, "expavg_credit", expavg_credit), XM(H, "expavg_time", expavg_time),
	XM(H, "p_model", cpu_model), XM(H, "os_name", os), XM(H, "create_time", create_time),
	XM(H, "rpc_time", rpc_time), XM(H, "ncpus", ncpus), XM(H, "m_nbytes", ram_bytes),
	{ .tag = "host_cpid", .type = XE_CPID }, XM(H, "coprocs", device),
	{ .tag = NULL },
};
#undef H

static const struct export_kind exports[] = {
	{ "user", "users", "user.gz", sizeof(struct ct_web_user), user_elems },
	{ "team", "teams", "team.gz", sizeof(struct ct_web_team), team_elems },
	{ "host", "hosts", "host.gz", sizeof(struct ct_web_host), host_elems },
};

/* One child element of `row` (its id `id`). */
static int xelem_write(struct ct_server *srv, struct ct_buf *x,
		       const struct export_kind *k, const struct xelem *e,
		       const char *row, int64_t id)
{
	const char *p = row + e->off;
	char cpid[33];
	int64_t i;
	double d;

	switch (e->type) {
	case XE_INT:
		memcpy(&i, p, sizeof(i));
		return ct_xml_elem_int64(x, e->tag, i);
	case XE_DBL:
		memcpy(&d, p, sizeof(d));
		return ct_xml_elem_double(x, e->tag, d);
	case XE_STR_OPT:
		if (p[0] == '\0')
			return 0;
		/* fall through */
	case XE_STR:
		return ct_xml_elem_str(x, e->tag, p);
	case XE_CPID:
		cpid_of(srv, k->kind, id, cpid);
		return ct_xml_elem_str(x, e->tag, cpid);
	case XE_LONG:
		return ct_xml_elem_long(x, e->tag, e->v);
	case XE_CONST_STR:
		return ct_xml_elem_str(x, e->tag, e->s);
	}
	return ct_error(CT_EINVAL, "stats: element type %d", (int)e->type);
}

/* The next BATCH rows of `k` after id *after; *more = 1 if there may be more. */
static int export_rows(struct ct_server *srv, struct ct_db *db, struct ct_buf *x,
		       const struct export_kind *k, int64_t *after, int *more)
{
	struct ct_web_board b;
	int rc;

	rc = ct_web_board_after(db, k->kind, *after, BATCH, &b);
	if (rc < 0)
		return rc;
	*more = b.n == BATCH;
	for (size_t i = 0; rc == 0 && i < b.n; i++) {
		const char *row = (const char *)b.users + i * k->size;

		memcpy(after, row, sizeof(*after));	/* id: each row struct's first member */
		rc = ct_xml_open(x, k->kind);
		for (const struct xelem *e = k->elems; rc == 0 && e->tag; e++)
			rc = xelem_write(srv, x, k, e, row, *after);
		if (rc == 0)
			rc = ct_xml_close(x, k->kind);
	}
	ct_web_board_free(&b);
	return rc;
}

/* Build <plural> ... </plural>, gzip it, write dir/file atomically. */
static int export_table(struct ct_server *srv, struct ct_db *db,
			const char *dir, const struct export_kind *k)
{
	struct ct_buf x = CT_BUF_INIT(EXPORT_MAX), gz = CT_BUF_INIT(EXPORT_MAX);
	char path[4200];
	int64_t after = 0;
	int more = 1, rc;

	rc = ct_buf_appends(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rc == 0)
		rc = ct_xml_open(&x, k->plural);
	while (rc == 0 && more)
		rc = export_rows(srv, db, &x, k, &after, &more);
	if (rc == 0)
		rc = ct_xml_close(&x, k->plural);
	if (rc == 0)
		rc = ct_gzip_compress(x.data, x.len, CT_GZIP_DEFAULT_LEVEL, &gz);
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, k->file);
	if (rc == 0)
		rc = ct_file_write_atomic(path, gz.data, gz.len, 0644);
	ct_buf_free(&x);
	ct_buf_free(&gz);
	return rc;
}

static int export_tables_xml(struct ct_db *db, const char *dir)
{
	struct ct_buf x = CT_BUF_INIT(1 << 16);
	struct ct_web_totals tot;
	char path[4200];
	int rc;

	rc = ct_web_get_totals(db, &tot);
	if (rc == 0) rc = ct_buf_appends(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rc == 0) rc = ct_xml_open(&x, "tables");
	if (rc == 0) rc = ct_xml_elem_int64(&x, "update_time", ct_db_now(db));
	if (rc == 0) rc = ct_xml_elem_int64(&x, "nusers_total", tot.users);
	if (rc == 0) rc = ct_xml_elem_int64(&x, "nteams_total", tot.teams);
	if (rc == 0) rc = ct_xml_elem_int64(&x, "nhosts_total", tot.hosts);
	if (rc == 0) rc = ct_xml_elem_double(&x, "total_credit", tot.credit);
	if (rc == 0) rc = ct_xml_close(&x, "tables");
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, "tables.xml");
	if (rc == 0)
		rc = ct_file_write_atomic(path, x.data, x.len, 0644);
	ct_buf_free(&x);
	return rc;
}

int ct_stats_export(struct ct_server *srv, struct ct_db *db)
{
	char dir[4096];
	int rc;

	rc = stats_dir(srv, dir, sizeof(dir));
	if (rc == 0)
		rc = ct_mkdir_p(dir, 0755);
	for (size_t i = 0; rc == 0 && i < sizeof(exports) / sizeof(exports[0]); i++)
		rc = export_table(srv, db, dir, &exports[i]);
	/* tables.xml last: its mtime says when the whole export was done. */
	if (rc == 0)
		rc = export_tables_xml(db, dir);
	return rc;
}

/* When this process started: an export older than that is redone. */
static time_t started;

__attribute__((constructor)) static void note_start(void)
{
	started = time(NULL);
}

int ct_stats_export_run_once(struct ct_server *srv, struct ct_db *db)
{
	char dir[4096], path[4200];
	long interval = 3600;
	struct stat st;
	int rc;

	if (srv->conf != NULL) {
		rc = ct_conf_get_int(srv->conf, "web.stats_interval", 3600, 1,
				     86400 * 30, &interval);
		if (rc < 0)
			return rc;
	}
	rc = stats_dir(srv, dir, sizeof(dir));
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, "tables.xml");
	if (rc < 0)
		return rc;
	/* An export older than this process is redone at once: a restart
	 * must not leave the numbers of the last run for an interval. */
	if (stat(path, &st) == 0 && st.st_mtime >= started &&
	    time(NULL) - st.st_mtime < interval)
		return 0;
	/* Housekeeping that shares the export's pace: expired web sessions. */
	rc = ct_web_session_purge(db, ct_db_now(db));
	if (rc < 0)
		return rc;
	rc = ct_stats_export(srv, db);
	if (rc < 0)
		return rc;
	ct_log_info("stats: exported %s", dir);
	return 1;
}

/* ---- serving /stats/ ----------------------------------------------------- */

static int stats_index(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_buf c = CT_BUF_INIT(1 << 16);
	int rc;

	rc = ct_buf_appends(&c, "<p>Statistics of this project in the XML "
		"format of BOINC's db_dump, for stats sites. They are rewritten "
		"periodically.</p><ul>");
	for (int i = 0; stats_files[i] != NULL && rc == 0; i++)
		rc = ct_tmpl_printf(&c, "<li><a href=\"/stats/%s\">%s</a></li>",
				    stats_files[i], stats_files[i]);
	if (rc == 0)
		rc = ct_buf_appends(&c, "</ul>");
	if (rc == 0)
		rc = ct_web_render(req, resp, "Statistics export", &c, NULL);
	ct_buf_free(&c);
	return rc;
}

int ct_web_stats_file(struct ct_web_req *req, struct ct_web_resp *resp)
{
	const char *name = req->path + strlen("/stats/");
	char dir[4096], path[4200];
	unsigned char *data = NULL;
	size_t len = 0;
	int i, rc;

	if (*name == '\0')
		return stats_index(req, resp);
	for (i = 0; stats_files[i] != NULL; i++)
		if (strcmp(stats_files[i], name) == 0)
			break;
	if (stats_files[i] == NULL)
		return ct_error(CT_ENOTFOUND, "no stats file %.64s", name);
	rc = stats_dir(req->srv, dir, sizeof(dir));
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, name);
	if (rc == 0)
		rc = ct_file_read_all(path, CT_WEB_MAX_BODY, &data, &len);
	if (rc == CT_ENOENT)
		return ct_error(CT_ENOTFOUND, "statistics not exported yet");
	if (rc < 0)
		return rc;
	rc = ct_buf_append(&resp->body, data, len);
	free(data);
	resp->content_type = strcmp(name, "tables.xml") == 0 ?
		"application/xml" : "application/gzip";
	snprintf(resp->cache_control, sizeof(resp->cache_control), "max-age=300");
	return rc;
}

/* ---- /metrics ------------------------------------------------------------ */

static int metric(struct ct_buf *b, const char *name, const char *help,
		  const char *type, double v)
{
	return ct_buf_appendf(b, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name,
			      help, name, type, name, v);
}

/* Prometheus label values escape \, " and newline. */
static int label_value(struct ct_buf *b, const char *s)
{
	int rc = 0;

	for (; *s != '\0' && rc == 0; s++) {
		if (*s == '\\' || *s == '"')
			rc = ct_buf_appendf(b, "\\%c", *s);
		else if (*s == '\n')
			rc = ct_buf_appends(b, "\\n");
		else
			rc = ct_buf_append(b, s, 1);
	}
	return rc;
}

static int role_metrics(struct ct_buf *b, const struct ct_web_status *st)
{
	int rc = ct_buf_appends(b, "# HELP ctune_role_up 1 if the role instance "
		"beat in the last 2 minutes\n# TYPE ctune_role_up gauge\n");

	for (size_t i = 0; i < st->nroles && rc == 0; i++) {
		rc = ct_buf_appends(b, "ctune_role_up{role=\"");
		if (rc == 0) rc = label_value(b, st->roles[i].role);
		if (rc == 0) rc = ct_buf_appends(b, "\",instance=\"");
		if (rc == 0) rc = label_value(b, st->roles[i].instance);
		if (rc == 0) rc = ct_buf_appendf(b, "\"} %d\n", st->roles[i].alive);
	}
	return rc;
}

int ct_web_metrics(struct ct_web_req *req, struct ct_web_resp *resp)
{
	struct ct_web_status st;
	struct ct_buf *b = &resp->body;
	int rc;

	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	if (ct_page_cache_get(req->srv->pages, "metrics", b))
		return 0;
	rc = ct_web_get_status(req->db, &st);
	if (rc < 0) {
		ct_page_cache_abandon(req->srv->pages, "metrics");
		return rc;
	}
	rc = metric(b, "ctune_results_unsent", "Results ready to send", "gauge",
		    (double)st.res_unsent);
	if (rc == 0) rc = metric(b, "ctune_results_in_progress", "Results sent "
		"and not yet reported", "gauge", (double)st.res_in_progress);
	if (rc == 0) rc = metric(b, "ctune_workunits_awaiting_validation",
		"Work units waiting for the validator", "gauge",
		(double)st.wu_need_validate);
	if (rc == 0) rc = metric(b, "ctune_workunits_awaiting_assimilation",
		"Work units waiting for the assimilator", "gauge",
		(double)st.wu_need_assimilate);
	if (rc == 0) rc = metric(b, "ctune_users", "Accounts", "gauge", (double)st.users);
	if (rc == 0) rc = metric(b, "ctune_teams", "Teams", "gauge", (double)st.teams);
	if (rc == 0) rc = metric(b, "ctune_hosts", "Computers", "gauge", (double)st.hosts);
	if (rc == 0) rc = metric(b, "ctune_hosts_active_24h", "Computers that "
		"contacted the scheduler in the last 24 h", "gauge",
		(double)st.hosts_active_24h);
	if (rc == 0) rc = metric(b, "ctune_jobs_running", "Jobs running", "gauge",
		(double)st.jobs_running);
	if (rc == 0) rc = metric(b, "ctune_credit_total", "Credit granted to users "
		"(cobblestones)", "gauge", st.total_credit);
	if (rc == 0) rc = metric(b, "ctune_credit_24h", "Credit granted in the "
		"last 24 h (cobblestones)", "gauge", st.credit_24h);
	if (rc == 0) rc = metric(b, "ctune_tflops", "Computing rate over the last "
		"24 h from granted credit (TFLOPS)", "gauge", st.tflops);
	if (rc == 0)
		rc = role_metrics(b, &st);
	if (rc == 0)
		ct_page_cache_put(req->srv->pages, "metrics", b);
	else
		ct_page_cache_abandon(req->srv->pages, "metrics");
	return rc;
}
