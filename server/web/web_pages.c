/*
 * web_pages.c - the public HTML pages: home, leaderboards of users, teams
 * and computers, a page for each of them, jobs with their loss curves, and
 * server status. Every string from the database goes through tmpl.h's
 * escaping printf; numbers through printf conversions. Pages that are the
 * same for everyone are kept in the short content cache (web.c).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_model_ops.h"
#include "data/db.h"
#include "data/lora_job.h"
#include "daemons/sample.h"
#include "data/server.h"
#include "daemons/submit_check.h"
#include "tmpl.h"
#include "page_cache.h"
#include "web_int.h"
#include "web_svg.h"

#define CONTENT_MAX (8u << 20)

/* A number cell: human text, exact value in data-v for tools and tests. */
static int credit_td(struct ct_buf *b, double v)
{
	char s[48];

	return ct_tmpl_printf(b, "<td class=\"num\" data-v=\"%.6f\">%s</td>", v,
			      ct_tmpl_credit(s, sizeof(s), v));
}

static int date_td(struct ct_buf *b, long long t, const char *cls)
{
	char s[32];

	return ct_tmpl_printf(b, "<td class=\"%s\">%s</td>", cls,
			      ct_tmpl_date(s, sizeof(s), t));
}

static int card(struct ct_buf *b, const char *k, const char *v)
{
	return ct_tmpl_printf(b, "<div class=\"card\"><div class=\"k\">%s</div>"
			      "<div class=\"v\">%s</div></div>", k, v);
}

static int card_num(struct ct_buf *b, const char *k, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	return card(b, k, s);
}

static int card_credit(struct ct_buf *b, const char *k, double v)
{
	char s[48];

	return card(b, k, ct_tmpl_credit(s, sizeof(s), v));
}

static const char *sort_arg(enum ct_web_sort s)
{
	return s == CT_WEB_SORT_TOTAL ? "total" : "rac";
}

static int sort_tabs(struct ct_buf *b, const char *base, enum ct_web_sort s)
{
	/* The class attribute is markup we choose, so it is appended raw. */
	int rc = ct_tmpl_printf(b, "<div class=\"tabs\"><a href=\"%s?sort=rac\"", base);

	if (rc == 0 && s == CT_WEB_SORT_RAC)
		rc = ct_buf_appends(b, " class=\"on\"");
	if (rc == 0)
		rc = ct_tmpl_printf(b, ">Recent average credit</a><a href=\"%s?"
				    "sort=total\"", base);
	if (rc == 0 && s == CT_WEB_SORT_TOTAL)
		rc = ct_buf_appends(b, " class=\"on\"");
	if (rc == 0)
		rc = ct_buf_appends(b, ">Total credit</a></div>");
	return rc;
}

static int page_link(struct ct_buf *b, const char *base, const struct ct_web_board *bd,
		     int64_t page, const char *rel, const char *text)
{
	if (page == bd->page)
		return ct_tmpl_printf(b, "<span class=\"on\" aria-current=\"page\">%s</span>",
				      text);
	if (rel != NULL)
		return ct_tmpl_printf(b, "<a rel=\"%s\" href=\"%s?sort=%s&amp;page=%lld\">%s</a>",
				      rel, base, sort_arg(bd->sort), (long long)page, text);
	return ct_tmpl_printf(b, "<a href=\"%s?sort=%s&amp;page=%lld\">%s</a>", base,
			      sort_arg(bd->sort), (long long)page, text);
}

/* Previous, the first page, the pages around this one, the last, next,
 * and a form to go to any page (a GET: no script needed). */
static int pager(struct ct_buf *b, const char *base, const struct ct_web_board *bd)
{
	int64_t from = bd->page - 2 > 1 ? bd->page - 2 : 1;
	int64_t to = bd->page + 2 < bd->npages ? bd->page + 2 : bd->npages;
	char num[32];
	int rc;

	if (bd->npages <= 1)
		return 0;
	rc = ct_buf_appends(b, "<nav class=\"pager\" aria-label=\"pages\">");
	if (rc == 0 && bd->page > 1)
		rc = page_link(b, base, bd, bd->page - 1, "prev", "\xe2\x86\x90 Previous");
	if (rc == 0 && from > 1)
		rc = page_link(b, base, bd, 1, NULL, "1");
	if (rc == 0 && from > 2)
		rc = ct_buf_appends(b, "<span class=\"gap\">&hellip;</span>");
	for (int64_t p = from; rc == 0 && p <= to; p++) {
		snprintf(num, sizeof(num), "%lld", (long long)p);
		rc = page_link(b, base, bd, p, NULL, num);
	}
	if (rc == 0 && to < bd->npages - 1)
		rc = ct_buf_appends(b, "<span class=\"gap\">&hellip;</span>");
	snprintf(num, sizeof(num), "%lld", (long long)bd->npages);
	if (rc == 0 && to < bd->npages)
		rc = page_link(b, base, bd, bd->npages, NULL, num);
	if (rc == 0 && bd->page < bd->npages)
		rc = page_link(b, base, bd, bd->page + 1, "next", "Next \xe2\x86\x92");
	if (rc == 0)
		rc = ct_tmpl_printf(b, "<form method=\"get\" action=\"%s\" class=\"goto\">"
			"<input type=\"hidden\" name=\"sort\" value=\"%s\"><label for=\"goto\">"
			"Page</label><input id=\"goto\" name=\"page\" type=\"number\" min=\"1\" "
			"max=\"%lld\" value=\"%lld\"><button type=\"submit\">Go</button> of %lld"
			"</form></nav>", base, sort_arg(bd->sort), (long long)bd->npages,
			(long long)bd->page, (long long)bd->npages);
	return rc;
}

/* The name search above a leaderboard (users and teams). */
static int search_form(struct ct_buf *b, const char *base, const char *what, const char *q)
{
	return ct_tmpl_printf(b, "<form method=\"get\" action=\"%s\" class=\"search\" "
		"role=\"search\"><label for=\"q\">Find a %s</label><input id=\"q\" name=\"q\" "
		"type=\"search\" maxlength=\"64\" value=\"%s\" placeholder=\"name starts with"
		"\"><button type=\"submit\" id=\"search\">Search</button></form>", base, what,
		q ? q : "");
}

/* Render `key`'s content from the cache or with fill(arg), then the page. */
static int cached_page(struct ct_web_req *req, struct ct_web_resp *resp,
		       const char *key, const char *title, const char *api,
		       int (*fill)(struct ct_web_req *, struct ct_buf *, const void *),
		       const void *arg)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	int rc = 0;

	if (!ct_page_cache_get(req->srv->pages, key, &c)) {
		rc = fill(req, &c, arg);
		if (rc == 0)
			ct_page_cache_put(req->srv->pages, key, &c);
		else
			ct_page_cache_abandon(req->srv->pages, key);
	}
	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, api);
	ct_buf_free(&c);
	return rc;
}

/* ---- users, teams, hosts: boards ----------------------------------------- */

/* What differs between the three leaderboards' tables: the row type, the
 * cells before and after the two credit columns, the header around the
 * optional column (team, owner) and the row shown when there is none. */
struct board_view {
	const char *kind;	/* "user": ct_web_board's kind */
	size_t size, id_off, rank_off, rac_off, total_off, time_off;
	const char *head, *head_opt, *head_end, *empty;
	/* the cells after "<tr ...><td>rank</td>" up to the credit and after
	 * it up to the date; opt: the optional column */
	int (*before)(struct ct_buf *c, const void *row, int opt);
	int (*after)(struct ct_buf *c, const void *row, int opt);
};

#define BOARD_VIEW(T) .size = sizeof(T), .id_off = offsetof(T, id), \
	.rank_off = offsetof(T, rank), .rac_off = offsetof(T, expavg_credit), \
	.total_off = offsetof(T, total_credit), .time_off = offsetof(T, create_time)

static int64_t row_i64(const void *row, size_t off)
{
	int64_t v;

	memcpy(&v, (const char *)row + off, sizeof(v));
	return v;
}

static double row_dbl(const void *row, size_t off)
{
	double v;

	memcpy(&v, (const char *)row + off, sizeof(v));
	return v;
}

static int board_row(struct ct_buf *c, const struct board_view *v, const void *row, int opt)
{
	int rc = ct_tmpl_printf(c, "<tr data-id=\"%lld\"><td class=\"num\">%lld</td>",
				(long long)row_i64(row, v->id_off),
				(long long)row_i64(row, v->rank_off));

	if (rc == 0)
		rc = v->before(c, row, opt);
	if (rc == 0)
		rc = credit_td(c, row_dbl(row, v->rac_off));
	if (rc == 0)
		rc = credit_td(c, row_dbl(row, v->total_off));
	if (rc == 0)
		rc = v->after(c, row, opt);
	if (rc == 0)
		rc = date_td(c, row_i64(row, v->time_off), "hide-narrow");
	if (rc == 0)
		rc = ct_buf_appends(c, "</tr>");
	return rc;
}

static int board_table(struct ct_buf *c, const struct board_view *v,
		       const struct ct_web_board *bd, int opt)
{
	int rc = ct_buf_appends(c, v->head);

	if (rc == 0 && opt && v->head_opt)
		rc = ct_buf_appends(c, v->head_opt);
	if (rc == 0)
		rc = ct_buf_appends(c, v->head_end);
	for (size_t i = 0; i < bd->n && rc == 0; i++)
		rc = board_row(c, v, (const char *)bd->users + i * v->size, opt);
	if (rc == 0 && bd->n == 0)
		rc = ct_buf_appends(c, v->empty);
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

static int user_before(struct ct_buf *c, const void *row, int opt)
{
	const struct ct_web_user *u = row;

	(void)opt;
	return ct_tmpl_printf(c, "<td><a class=\"name\" href=\"/user/%lld\">%s</a></td>",
			      (long long)u->id, u->name);
}

static int user_after(struct ct_buf *c, const void *row, int show_team)
{
	const struct ct_web_user *u = row;
	int rc = 0;

	if (show_team)
		rc = u->teamid > 0 ?
			ct_tmpl_printf(c, "<td><a href=\"/team/%lld\">%s</a></td>",
				       (long long)u->teamid, u->team_name) :
			ct_buf_appends(c, "<td></td>");
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<td class=\"hide-narrow\">%s</td>", u->country);
	return rc;
}

static const struct board_view user_view = {
	.kind = "user", BOARD_VIEW(struct ct_web_user),
	.head = "<table class=\"board\" id=\"users\"><thead><tr>"
		"<th class=\"num\">Rank</th><th>Name</th><th class=\"num\">Recent "
		"average credit</th><th class=\"num\">Total credit</th>",
	.head_opt = "<th>Team</th>",
	.head_end = "<th class=\"hide-narrow\">Country</th>"
		"<th class=\"hide-narrow\">Member since</th></tr></thead><tbody>",
	.empty = "<tr><td colspan=\"7\" class=\"muted\">Nobody here yet.</td></tr>",
	.before = user_before, .after = user_after,
};

static int team_before(struct ct_buf *c, const void *row, int opt)
{
	const struct ct_web_team *t = row;

	(void)opt;
	return ct_tmpl_printf(c, "<td><a class=\"name\" href=\"/team/%lld\">%s</a></td>"
			      "<td class=\"num\">%lld</td>", (long long)t->id, t->name,
			      (long long)t->nusers);
}

static int no_cells(struct ct_buf *c, const void *row, int opt)
{
	(void)c;
	(void)row;
	(void)opt;
	return 0;
}

static const struct board_view team_view = {
	.kind = "team", BOARD_VIEW(struct ct_web_team),
	.head = "<p><a href=\"/teams/create\">Create a team</a></p><table class=\"board\" "
		"id=\"teams\"><thead><tr><th class=\"num\">Rank</th><th>Name</th><th "
		"class=\"num\">Members</th><th class=\"num\">Recent average credit</th>"
		"<th class=\"num\">Total credit</th><th class=\"hide-narrow\">"
		"Founded</th></tr></thead><tbody>",
	.head_end = "",
	.empty = "<tr><td colspan=\"6\" class=\"muted\">No team yet.</td></tr>",
	.before = team_before, .after = no_cells,
};

static int host_before(struct ct_buf *c, const void *row, int show_owner)
{
	const struct ct_web_host *h = row;
	int rc = ct_tmpl_printf(c, "<td><a href=\"/host/%lld\">#%lld</a></td>",
				(long long)h->id, (long long)h->id);

	if (rc == 0 && show_owner)
		rc = ct_tmpl_printf(c, "<td><a href=\"/user/%lld\">%s</a></td>",
				    (long long)h->userid, h->owner_name);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<td>%s</td><td class=\"hide-narrow\">%s</td>",
				    h->device[0] ? h->device : h->cpu_model, h->os);
	return rc;
}

static const struct board_view host_view = {
	.kind = "host", BOARD_VIEW(struct ct_web_host),
	.head = "<table class=\"board\" id=\"hosts\"><thead><tr>"
		"<th class=\"num\">Rank</th><th>Computer</th>",
	.head_opt = "<th>Owner</th>",
	.head_end = "<th>Device</th><th class=\"hide-narrow\">OS</th><th class=\"num\">"
		"Recent average credit</th><th class=\"num\">Total credit</th><th class="
		"\"hide-narrow\">Since</th></tr></thead><tbody>",
	.empty = "<tr><td colspan=\"8\" class=\"muted\">No computer yet.</td></tr>",
	.before = host_before, .after = no_cells,
};

/* The leaderboard's search: the matching rows, or a line saying none. */
static int fill_search(struct ct_web_req *req, struct ct_buf *c, const struct board_view *v,
		       const char *base, const char *q)
{
	struct ct_web_board bd;
	int rc = ct_web_search(req->db, v->kind, q, &bd);

	if (rc < 0)
		return rc;
	rc = search_form(c, base, v->kind[0] == 'u' ? "participant" : "team", q);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<p id=\"search-result\">%lld %s whose name starts with "
				    "\"%s\"%s (ranks on their pages). <a href=\"%s\">The whole "
				    "leaderboard</a></p>", (long long)bd.n, bd.n == 1 ? "match" :
				    "matches", q, bd.n >= CT_WEB_SEARCH_MAX ? ", the first ones" : "",
				    base);
	if (rc == 0 && bd.n > 0)
		rc = board_table(c, v, &bd, 1);
	ct_web_board_free(&bd);
	return rc;
}

/* A leaderboard page: its content is the same for everyone (cached). */
static int fill_board(struct ct_web_req *req, struct ct_buf *c, const void *arg)
{
	const struct board_view *v = arg;
	const char *q = ct_web_arg(req, "q");
	struct ct_web_board bd;
	char base[16];
	int rc;

	snprintf(base, sizeof(base), "/%ss", v->kind);
	if (q != NULL && q[0] != '\0' && v->kind[0] != 'h')
		return fill_search(req, c, v, base, q);
	rc = ct_web_board(req->db, v->kind, ct_web_arg_sort(req), ct_web_arg_page(req), 0,
			  &bd);
	if (rc < 0)
		return rc;
	rc = v->kind[0] != 'h' ? search_form(c, base, v->kind[0] == 'u' ? "participant" :
					     "team", NULL) : 0;
	if (rc == 0)
		rc = sort_tabs(c, base, bd.sort);
	if (rc == 0)
		rc = board_table(c, v, &bd, 1);
	if (rc == 0)
		rc = pager(c, base, &bd);
	ct_web_board_free(&bd);
	return rc;
}

static int board_page(struct ct_web_req *req, struct ct_web_resp *resp,
		      const struct board_view *v, const char *title)
{

	const char *q = ct_web_arg(req, "q");
	char key[160], api[32];

	snprintf(key, sizeof(key), "%ss?sort=%s&page=%lld&q=%.64s", v->kind,
		 sort_arg(ct_web_arg_sort(req)), (long long)ct_web_arg_page(req), q ? q : "");
	snprintf(api, sizeof(api), "/api/v1/%ss", v->kind);
	return cached_page(req, resp, key, title, api, fill_board, v);
}

int ct_web_page_users(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return board_page(req, resp, &user_view, "Top participants");
}

int ct_web_page_teams(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return board_page(req, resp, &team_view, "Top teams");
}

int ct_web_page_hosts(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return board_page(req, resp, &host_view, "Top computers");
}

/* ---- one user, team, host ------------------------------------------------ */

/* Keep the rows of bd with total credit above 0 (in order, at the front);
 * returns how many there are. */
static size_t with_credit(const struct board_view *v, struct ct_web_board *bd)
{
	char *rows = (char *)bd->users;
	size_t k = 0;

	for (size_t i = 0; i < bd->n; i++)
		if (row_dbl(rows + i * v->size, v->total_off) > 0) {
			if (k != i)
				memcpy(rows + k * v->size, rows + i * v->size, v->size);
			k++;
		}
	return k;
}

/* <h2>heading</h2> and the first `max` rows of board v (RAC order) whose
 * owner is `owner` (0: everyone who has earned credit). */
static int board_section(struct ct_web_req *req, struct ct_buf *c, const char *heading,
			 const struct board_view *v, int64_t owner, size_t max)
{
	struct ct_web_board bd;
	int rc;

	rc = ct_web_board(req->db, v->kind, CT_WEB_SORT_RAC, 1, owner, &bd);
	if (rc < 0)
		return rc;
	if (owner == 0)		/* the home page's top: only who has earned credit */
		bd.n = with_credit(v, &bd);
	if (bd.n > max)
		bd.n = max;
	rc = ct_tmpl_printf(c, "<h2>%s</h2>", heading);
	if (rc == 0)
		rc = board_table(c, v, &bd, owner == 0);
	ct_web_board_free(&bd);
	return rc;
}

/* The cards of a user's, team's or host's page as a table: a label and a
 * member of the row, shown as text (.none when empty: "" leaves the card
 * out), a number, credit, a date or bytes in GiB. */
enum card_kind { CARD_STR, CARD_NUM, CARD_CREDIT, CARD_DATE, CARD_GIB };

struct card_def {
	const char *label;
	enum card_kind kind;
	size_t off;
	const char *none;	/* CARD_STR: shown when the text is empty */
};

#define CARD(T, l, k, m, ...) { .label = (l), .kind = (k), .off = offsetof(T, m), \
	__VA_ARGS__ }
/* the three every page opens with */
#define CREDIT_CARDS(T) CARD(T, "Total credit", CARD_CREDIT, total_credit), \
	CARD(T, "Recent average credit", CARD_CREDIT, expavg_credit), \
	CARD(T, "Rank (recent average)", CARD_NUM, rank)

static int cards(struct ct_buf *c, const struct card_def *d, size_t n, const void *row)
{
	int rc = ct_buf_appends(c, "<div class=\"cards\">");

	for (size_t i = 0; rc == 0 && i < n; i++) {
		const char *p = (const char *)row + d[i].off;
		char s[64];

		if (d[i].kind == CARD_STR && p[0] == '\0' && d[i].none != NULL && !d[i].none[0])
			continue;
		if (d[i].kind == CARD_STR)
			rc = card(c, d[i].label, p[0] || d[i].none == NULL ? p : d[i].none);
		else if (d[i].kind == CARD_NUM)
			rc = card_num(c, d[i].label, row_i64(row, d[i].off));
		else if (d[i].kind == CARD_CREDIT)
			rc = card_credit(c, d[i].label, row_dbl(row, d[i].off));
		else if (d[i].kind == CARD_DATE)
			rc = card(c, d[i].label, ct_tmpl_date(s, sizeof(s), row_i64(row, d[i].off)));
		else {
			snprintf(s, sizeof(s), "%.1f GiB", row_i64(row, d[i].off) / 1073741824.0);
			rc = card(c, d[i].label, s);
		}
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</div>");
	return rc;
}

static int history_chart(struct ct_web_req *req, struct ct_buf *c,
			 const char *kind, int64_t id, double total)
{
	double *t = NULL, *v = NULL;
	size_t n = 0;
	const struct ct_svg_opts o = { .title = "Total credit over time",
		.id = "credit-history", .x_is_time = 1, .y_from_zero = 1,
		.ylabel = "credit" };
	int rc;

	rc = ct_web_history(req->db, kind, id, total, &t, &v, &n);
	if (rc == 0)
		rc = ct_buf_appends(c, "<h2>Credit history</h2>");
	if (rc == 0)
		rc = ct_svg_line_chart(c, t, v, n, &o);
	free(t);
	free(v);
	return rc;
}

/* ---- the pages of one user, team or host ---------------------------------- */

/* Join or leave button for the signed-in user on a team's page. */
static int team_action(struct ct_web_req *req, struct ct_buf *c, int64_t id)
{
	int rc;

	if (req->userid <= 0)
		return ct_buf_appends(c, "<p><a href=\"/account/login\">Sign in</a> "
				      "to join this team.</p>");
	rc = ct_tmpl_printf(c, "<form method=\"post\" action=\"/teams/%s\">",
			    req->user_teamid == id ? "leave" : "join");
	if (rc == 0)
		rc = ct_web_csrf_field(req, c);
	if (rc == 0)
		rc = ct_tmpl_printf(c, "<input type=\"hidden\" name=\"team\" "
			"value=\"%lld\"><button type=\"submit\" id=\"team-%s\">%s"
			"</button></form>", (long long)id,
			req->user_teamid == id ? "leave" : "join",
			req->user_teamid == id ? "Leave this team" : "Join this team");
	return rc;
}

static int user_text(struct ct_web_req *req, struct ct_buf *c, int64_t id, const void *row)
{
	const struct ct_web_user *u = row;

	int rc = 0;

	(void)req;
	(void)id;
	if (u->profile[0])	/* text only: escaped, newlines kept by the CSS */
		rc = ct_tmpl_printf(c, "<p class=\"profile\" id=\"profile\">%s</p>", u->profile);
	if (rc == 0 && u->teamid > 0)
		rc = ct_tmpl_printf(c, "<p>Member of <a href=\"/team/%lld\">%s</a>.</p>",
				    (long long)u->teamid, u->team_name);
	return rc;
}

/* Why the team's total is not its members' sum (credit.c adds a grant to
 * the team the user is in at that moment). */
static int team_credit_note(struct ct_buf *c, const struct ct_web_team *t)
{
	char team[48], members[48];

	ct_tmpl_credit(team, sizeof(team), t->total_credit);
	ct_tmpl_credit(members, sizeof(members), t->members_credit);
	return ct_tmpl_printf(c, "<p class=\"muted\" id=\"team-credit-note\">The team's total "
		"credit (%s) counts what members earned while in the team. Its %lld "
		"member%s today have earned %s in all, credit from before they joined "
		"included; members who left took nothing away.</p>", team,
		(long long)t->nusers, t->nusers == 1 ? "" : "s", members);
}

static int team_text(struct ct_web_req *req, struct ct_buf *c, int64_t id, const void *row)
{
	const struct ct_web_team *t = row;
	int rc = 0;

	if (t->description[0])
		rc = ct_tmpl_printf(c, "<p class=\"description\">%s</p>", t->description);
	if (rc == 0)
		rc = team_credit_note(c, t);
	if (rc == 0)
		rc = team_action(req, c, id);
	return rc;
}

static int host_text(struct ct_web_req *req, struct ct_buf *c, int64_t id, const void *row)
{
	const struct ct_web_host *h = row;

	(void)req;
	(void)id;
	return ct_tmpl_printf(c, "<p>Owned by <a href=\"/user/%lld\">%s</a>.</p>",
			      (long long)h->userid, h->owner_name);
}

/* What differs between the pages of a user, a team and a host: the cards,
 * the text after them, the title (the row's name, or "Computer #ID" where
 * name_off is 0) and the board of the rows it owns, if any. The credit
 * history chart comes between the text and that board. */
struct entity_view {
	const char *kind;	/* ct_web_get's */
	const struct card_def *cards;
	size_t ncards, name_off, total_off;
	int (*text)(struct ct_web_req *req, struct ct_buf *c, int64_t id, const void *row);
	const char *owned_heading;	/* NULL: none */
	const struct board_view *owned;
};

#define ENTITY_VIEW(T, k, cards_) .kind = (k), .cards = (cards_), \
	.ncards = sizeof(cards_) / sizeof((cards_)[0]), .total_off = offsetof(T, total_credit)

#define U struct ct_web_user
#define T struct ct_web_team
#define H struct ct_web_host
static const struct card_def user_cards[] = {
	CREDIT_CARDS(U), CARD(U, "Team", CARD_STR, team_name, .none = "none"),
	CARD(U, "Country", CARD_STR, country, .none = ""),
	CARD(U, "Member since", CARD_DATE, create_time),
	CARD(U, "Computers", CARD_NUM, nhosts),
};
static const struct card_def team_cards[] = {
	CREDIT_CARDS(T), CARD(T, "Members", CARD_NUM, nusers),
	CARD(T, "Founded", CARD_DATE, create_time), CARD(T, "Founder", CARD_STR, founder_name),
};
static const struct card_def host_cards[] = {
	CREDIT_CARDS(H), CARD(H, "Owner", CARD_STR, owner_name),
	CARD(H, "Device", CARD_STR, device, .none = "CPU reference"),
	CARD(H, "CPU", CARD_STR, cpu_model), CARD(H, "Operating system", CARD_STR, os),
	CARD(H, "CPU cores", CARD_NUM, ncpus), CARD(H, "Memory", CARD_GIB, ram_bytes),
	CARD(H, "Client", CARD_STR, client_version),
	CARD(H, "Valid results", CARD_NUM, nresults_valid),
	CARD(H, "Invalid results", CARD_NUM, nresults_invalid),
	CARD(H, "Last contact", CARD_DATE, rpc_time),
};

enum { PAGE_USER, PAGE_TEAM, PAGE_HOST };
static const struct entity_view entity_pages[] = {
	[PAGE_USER] = { ENTITY_VIEW(U, "user", user_cards), .name_off = offsetof(U, name),
			.text = user_text, .owned_heading = "Computers", .owned = &host_view },
	[PAGE_TEAM] = { ENTITY_VIEW(T, "team", team_cards), .name_off = offsetof(T, name),
			.text = team_text, .owned_heading = "Members", .owned = &user_view },
	[PAGE_HOST] = { ENTITY_VIEW(H, "host", host_cards), .text = host_text },
};
#undef U
#undef T
#undef H

static int fill_entity(struct ct_web_req *req, struct ct_buf *c, int64_t id, char *title,
		       size_t cap, const void *arg)
{
	const struct entity_view *v = arg;
	union { struct ct_web_user u; struct ct_web_team t; struct ct_web_host h; } row;
	int rc;

	rc = ct_web_get(req->db, v->kind, id, &row);
	if (rc < 0)
		return rc;
	if (v->name_off)
		snprintf(title, cap, "%s", (const char *)&row + v->name_off);
	else
		snprintf(title, cap, "Computer #%lld", (long long)id);
	rc = cards(c, v->cards, v->ncards, &row);
	if (rc == 0)
		rc = v->text(req, c, id, &row);
	if (rc == 0)
		rc = history_chart(req, c, v->kind, id, row_dbl(&row, v->total_off));
	if (rc == 0 && v->kind[0] != 't')	/* a computer's or a user's tasks */
		rc = ct_web_tasks_section(req, c, v->kind, id);
	if (rc == 0 && v->owned)
		rc = board_section(req, c, v->owned_heading, v->owned, id, SIZE_MAX);
	return rc;
}

/* The page /KIND/ID: fill(arg) reads the row, writes the content and
 * names the page; `none` is the 404's message. */
static int one_page(struct ct_web_req *req, struct ct_web_resp *resp, const char *kind,
		    const char *none,
		    int (*fill)(struct ct_web_req *, struct ct_buf *, int64_t, char *, size_t,
				const void *),
		    const void *arg)
{
	struct ct_buf c = CT_BUF_INIT(CONTENT_MAX);
	char path[16], api[64], title[320];
	int64_t id;
	int rc;

	snprintf(path, sizeof(path), "/%s/", kind);
	id = ct_web_path_id(req->path, path);
	if (id <= 0)
		return ct_error(CT_ENOTFOUND, "%s", none);
	rc = fill(req, &c, id, title, sizeof(title), arg);
	snprintf(api, sizeof(api), "/api/v1/%s/%lld", kind, (long long)id);
	if (rc == 0)
		rc = ct_web_render(req, resp, title, &c, api);
	ct_buf_free(&c);
	return rc;
}

int ct_web_page_user(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return one_page(req, resp, "user", "no such user", fill_entity,
			&entity_pages[PAGE_USER]);
}

int ct_web_page_team(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return one_page(req, resp, "team", "no such team", fill_entity,
			&entity_pages[PAGE_TEAM]);
}

int ct_web_page_host(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return one_page(req, resp, "host", "no such computer", fill_entity,
			&entity_pages[PAGE_HOST]);
}

/* ---- jobs ---------------------------------------------------------------- */

static int progress_bar(struct ct_buf *b, int64_t done, int64_t total)
{
	return ct_tmpl_printf(b, "<progress class=\"progress\" value=\"%lld\" "
		"max=\"%lld\" title=\"%lld of %lld work units done\">%lld / %lld"
		"</progress>", (long long)done, (long long)(total > 0 ? total : 1),
		(long long)done, (long long)total, (long long)done, (long long)total);
}

static double latest_loss(const struct ct_web_job *j)
{
	return isfinite(j->final_eval_loss) ? j->final_eval_loss : NAN;
}

static int jobs_rows(struct ct_web_req *req, struct ct_buf *c,
		     const struct ct_web_job *jobs, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct ct_web_job *j = &jobs[i];
		char loss[32];

		if (isfinite(latest_loss(j)))
			snprintf(loss, sizeof(loss), "%.4f", latest_loss(j));
		else
			snprintf(loss, sizeof(loss), "-");
		rc = ct_tmpl_printf(c, "<tr data-id=\"%lld\"><td class=\"num\">%lld"
			"</td><td><a class=\"name\" href=\"/job/%lld\">%s</a></td>"
			"<td>%s</td><td class=\"num\">%lld / %lld</td><td>",
			(long long)j->id, (long long)j->id, (long long)j->id,
			j->name, j->status_name, (long long)j->cur_round,
			(long long)j->nrounds);
		if (rc == 0)
			rc = progress_bar(c, j->nwus_done, j->nshards * j->nrounds);
		if (rc == 0)
			rc = ct_tmpl_printf(c, "</td><td class=\"num\">%lld</td>"
				"<td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
				"<td class=\"num\">%s</td>",
				(long long)j->res_in_progress, (long long)j->res_valid,
				(long long)j->res_invalid, loss);
		if (rc == 0)
			rc = date_td(c, j->create_time, "hide-narrow");
		if (rc == 0)
			rc = ct_buf_appends(c, "</tr>");
	}
	(void)req;
	return rc;
}

static int fill_jobs(struct ct_web_req *req, struct ct_buf *c, const void *arg)
{
	struct ct_web_job *jobs = NULL;
	size_t n = 0;
	int rc;

	(void)arg;
	rc = ct_web_jobs(req->db, &jobs, &n);
	if (rc < 0)
		return rc;
	rc = ct_buf_appends(c, "<table class=\"board\" id=\"jobs\"><thead><tr>"
		"<th class=\"num\">#</th><th>Job</th><th>Status</th><th class=\"num\">"
		"Round</th><th>Progress</th><th class=\"num\">In progress</th>"
		"<th class=\"num\">Valid</th><th class=\"num\">Invalid</th>"
		"<th class=\"num\">Final loss</th><th class=\"hide-narrow\">Submitted"
		"</th></tr></thead><tbody>");
	if (rc == 0)
		rc = jobs_rows(req, c, jobs, n);
	if (rc == 0 && n == 0)
		rc = ct_buf_appends(c, "<tr><td colspan=\"10\" class=\"muted\">"
				    "No job yet.</td></tr>");
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	free(jobs);
	return rc;
}

int ct_web_page_jobs(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return cached_page(req, resp, "jobs", "Jobs", "/api/v1/jobs", fill_jobs, NULL);
}

static int sha_link(struct ct_buf *c, const char *sha, const char *label)
{
	if (sha[0] == '\0')
		return ct_buf_appends(c, "<span class=\"muted\">-</span>");
	return ct_tmpl_printf(c, "<a class=\"download\" href=\"/download/%s\" "
			      "title=\"%s\">%s</a>", sha, sha, label);
}

static int loss_chart(struct ct_buf *c, const struct ct_web_job *j,
		      const struct ct_web_round *r, size_t n)
{
	double *x = calloc(n + 1, sizeof(double)), *y = calloc(n + 1, sizeof(double));
	const struct ct_svg_opts o = { .title = "Evaluation loss by round",
		.id = "loss-curve", .xlabel = "round", .ylabel = "eval loss",
		.x_integer = 1 };
	size_t k = 0;
	int rc;

	if (x == NULL || y == NULL) {
		free(x);
		free(y);
		return ct_error(CT_ENOMEM, "web: loss chart");
	}
	/* Round 0 is the base model; round r's point is its averaged model. */
	x[k] = 0;
	y[k++] = isfinite(j->base_eval_loss) ? j->base_eval_loss :
		 n > 0 ? r[0].base_eval_loss : NAN;
	for (size_t i = 0; i < n; i++) {
		x[k] = (double)r[i].idx;
		y[k++] = r[i].eval_loss;
	}
	rc = ct_svg_line_chart(c, x, y, k, &o);
	free(x);
	free(y);
	return rc;
}

/* A notice when the eval loss rose two rounds in a row (submit_check.h),
 * over the same points as the chart: the base model, then each round. */
static int loss_warning(struct ct_buf *c, const struct ct_web_job *j,
			const struct ct_web_round *r, size_t n)
{
	double *y = calloc(n + 1, sizeof(double));
	char note[256];
	int rc = 0;

	if (y == NULL)
		return ct_error(CT_ENOMEM, "web: loss warning");
	y[0] = isfinite(j->base_eval_loss) ? j->base_eval_loss : n > 0 ? r[0].base_eval_loss : NAN;
	for (size_t i = 0; i < n; i++)
		y[i + 1] = r[i].eval_loss;
	if (ct_submit_loss_rises(y, n + 1, note, sizeof(note)) >= 0)
		rc = ct_tmpl_printf(c, "<p class=\"notice error\" id=\"loss-rising\">%s</p>",
				    note);
	free(y);
	return rc;
}

static int rounds_table(struct ct_buf *c, const struct ct_web_round *r, size_t n)
{
	int rc = ct_buf_appends(c, "<table id=\"rounds\"><thead><tr><th class=\"num\">"
		"Round</th><th>Status</th><th class=\"num\">WUs done</th>"
		"<th class=\"num\">In progress</th><th class=\"num\">Valid</th>"
		"<th class=\"num\">Invalid</th><th class=\"num\">Eval loss</th>"
		"<th>Base model</th><th>Averaged model</th></tr></thead><tbody>");

	for (size_t i = 0; i < n && rc == 0; i++) {
		char loss[64], status[96];

		if (isfinite(r[i].eval_loss) && r[i].eval_ntokens > 0)
			snprintf(loss, sizeof(loss), "%.4f over %lld tokens", r[i].eval_loss,
				 (long long)r[i].eval_ntokens);
		else if (isfinite(r[i].eval_loss))
			snprintf(loss, sizeof(loss), "%.4f", r[i].eval_loss);
		else
			snprintf(loss, sizeof(loss), "-");
		/* the round check refused its average this often (assimilator.c) */
		snprintf(status, sizeof(status), r[i].nfailed > 0 ? "%s (not applied %lldx)" : "%s",
			 r[i].status_name, (long long)r[i].nfailed);
		rc = ct_tmpl_printf(c, "<tr><td class=\"num\">%lld</td><td>%s</td>"
			"<td class=\"num\">%lld / %lld</td><td class=\"num\">%lld</td>"
			"<td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
			"<td class=\"num\">%s</td><td>", (long long)r[i].idx,
			status, (long long)r[i].nwus_done,
			(long long)r[i].nwus, (long long)r[i].res_in_progress,
			(long long)r[i].res_valid, (long long)r[i].res_invalid, loss);
		if (rc == 0)
			rc = sha_link(c, r[i].model_sha256, "download");
		if (rc == 0)
			rc = ct_buf_appends(c, "</td><td>");
		if (rc == 0)
			rc = sha_link(c, r[i].out_model_sha256, "download");
		if (rc == 0)
			rc = ct_buf_appends(c, "</td></tr>");
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

static int contrib_table(struct ct_buf *c, const struct ct_web_contrib *k, size_t n)
{
	int rc = ct_buf_appends(c, "<h2>Contributors</h2><table id=\"contributors\">"
		"<thead><tr><th>Name</th><th class=\"num\">Valid results</th>"
		"<th class=\"num\">Credit</th></tr></thead><tbody>");

	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = ct_tmpl_printf(c, "<tr><td><a href=\"/user/%lld\">%s</a></td>"
			"<td class=\"num\">%lld</td>", (long long)k[i].userid,
			k[i].name, (long long)k[i].nresults);
		if (rc == 0)
			rc = credit_td(c, k[i].credit);
		if (rc == 0)
			rc = ct_buf_appends(c, "</tr>");
	}
	if (rc == 0 && n == 0)
		rc = ct_buf_appends(c, "<tr><td colspan=\"3\" class=\"muted\">"
				    "No validated result yet.</td></tr>");
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

static int job_cards(struct ct_buf *c, const struct ct_web_job *j)
{
	char s[96];
	int rc = ct_buf_appends(c, "<div class=\"cards\">");

	if (rc == 0) rc = card(c, "Status", j->status_name);
	if (rc == 0) {
		snprintf(s, sizeof(s), "%lld of %lld", (long long)j->cur_round,
			 (long long)j->nrounds);
		rc = card(c, "Round", s);
	}
	if (rc == 0) {
		snprintf(s, sizeof(s), "%lld of %lld", (long long)j->nwus_done,
			 (long long)(j->nshards * j->nrounds));
		rc = card(c, "Work units done", s);
	}
	if (rc == 0) rc = card_num(c, "Results in progress", j->res_in_progress);
	if (rc == 0) rc = card_num(c, "Valid results", j->res_valid);
	if (rc == 0) rc = card_num(c, "Invalid results", j->res_invalid);
	if (rc == 0) rc = card_credit(c, "Credit granted", j->credit);
	if (rc == 0) {
		snprintf(s, sizeof(s), "B=%lld T=%lld, %lld steps, lr %g",
			 (long long)j->batch, (long long)j->seq,
			 (long long)j->steps, j->lr);
		rc = card(c, "Each work unit", s);
	}
	if (rc == 0) {	/* how a round's results become the next model */
		if (strcmp(j->outer_method, "mean") == 0 || j->outer_method[0] == '\0')
			snprintf(s, sizeof(s), "%s", j->aggregation);
		else
			snprintf(s, sizeof(s), "%s, then %s (lr %g, momentum %g)", j->aggregation,
				 j->outer_method, j->outer_lr, j->outer_momentum);
		rc = card(c, "Rounds combined by", s);
	}
	if (rc == 0 && j->round_quorum < 1) {
		snprintf(s, sizeof(s), "with %.0f%% of their work units done",
			 100.0 * j->round_quorum);
		rc = card(c, "Rounds close", s);
	}
	if (rc == 0) rc = ct_buf_appends(c, "</div>");
	if (rc == 0)
		rc = progress_bar(c, j->nwus_done, j->nshards * j->nrounds);
	if (rc == 0 && j->error_message[0])
		rc = ct_tmpl_printf(c, "<p class=\"notice error\">%s</p>", j->error_message);
	return rc;
}

/* "GPT-2, 1 layer, width 8, ..." from the model file's header, or a note
 * when the file is gone (its size from the job row). */
static void model_text(struct ct_web_req *req, const struct ct_web_job_inputs *in,
		       char *out, size_t cap)
{
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	char path[4200];

	if (ct_server_download_path(req->srv, in->model_sha256, path, sizeof(path)) < 0 ||
	    ct_gpt2_read_config(path, &cfg) < 0) {
		snprintf(out, cap, "a checkpoint of %.1f MB (file no longer on the server)",
			 (double)in->model_size / 1e6);
		return;
	}
	ct_gpt2_layout(&cfg, &lay);
	snprintf(out, cap, "%s, %d layer%s, width %d, %d heads, vocabulary %d, context %d "
		 "tokens; %.4g million parameters", ct_model_ops_for(&cfg)->name, cfg.L, cfg.L == 1 ? "" : "s", cfg.C, cfg.NH, cfg.V, cfg.maxT,
		 (double)lay.total / 1e6);
}

static int inputs_row(struct ct_buf *c, const char *k, const char *v, const char *sha)
{
	int rc = ct_tmpl_printf(c, "<tr><th scope=\"row\">%s</th><td>%s", k, v);

	if (rc == 0 && sha != NULL && sha[0]) {
		rc = ct_buf_appends(c, " (");
		if (rc == 0)
			rc = sha_link(c, sha, "download");
		if (rc == 0)
			rc = ct_buf_appends(c, ")");
	}
	if (rc == 0)
		rc = ct_buf_appends(c, "</td></tr>");
	return rc;
}

/* What the job trains and on what: model, tokenizer, LoRA or full
 * fine-tuning, training and held-out data. */
static int job_inputs(struct ct_web_req *req, struct ct_buf *c, const struct ct_web_job *j)
{
	struct ct_web_job_inputs in;
	char v[512], t[64];
	int rc = ct_web_get_job_inputs(req->db, j->id, &in);

	if (rc < 0)
		return rc;
	rc = ct_buf_appends(c, "<h2>Model and data</h2><table id=\"job-inputs\"><tbody>");
	model_text(req, &in, v, sizeof(v));
	if (rc == 0)
		rc = inputs_row(c, "Model", v, in.model_sha256);
	if (in.tokenizer_files[0])
		snprintf(v, sizeof(v), "%s (%s)", in.tokenizer[0] ? in.tokenizer : "from files",
			 in.tokenizer_files);
	else
		snprintf(v, sizeof(v), "%s", in.tokenizer[0] ? in.tokenizer :
			 "none recorded (the job was submitted as token ids)");
	if (rc == 0)
		rc = inputs_row(c, "Tokenizer", v, NULL);
	ct_lora_targets_str((unsigned)in.lora_targets, t, sizeof(t));
	if (in.lora_rank > 0)
		snprintf(v, sizeof(v), "LoRA adapters of rank %lld (alpha %g) on %s; the base "
			 "stays frozen", (long long)in.lora_rank, in.lora_alpha, t);
	else
		snprintf(v, sizeof(v), "full fine-tuning (every weight)");
	if (rc == 0)
		rc = inputs_row(c, "Training", v, NULL);
	snprintf(v, sizeof(v), "%lld tokens in %lld shard%s, one per work unit of a round",
		 (long long)in.train_tokens, (long long)j->nshards, j->nshards == 1 ? "" : "s");
	if (rc == 0)
		rc = inputs_row(c, "Training data", v, in.train_sha256);
	if (in.eval_tokens > 0)
		snprintf(v, sizeof(v), "a held-out file, up to %lld tokens of it",
			 (long long)in.eval_tokens);
	else	/* daemons.eval_tokens (eval.c) */
		snprintf(v, sizeof(v), "a held-out file, up to the project's default "
			 "number of tokens");
	if (rc == 0)
		rc = inputs_row(c, "Evaluation data", v, in.eval_sha256);
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

static int fill_job(struct ct_web_req *req, struct ct_buf *c, int64_t id, char *title,
		    size_t cap, const void *arg)
{
	struct ct_web_round *r = NULL;
	struct ct_web_contrib *k = NULL;
	struct ct_web_job job, *j = &job;
	size_t nr = 0, nk = 0;
	int rc;

	(void)arg;
	rc = ct_web_get_job(req->db, id, j, &r, &nr, &k, &nk);
	if (rc < 0)
		return rc;
	snprintf(title, cap, "Job %lld: %s", (long long)id, j->name);
	rc = job_cards(c, j);
	if (rc == 0)
		rc = job_inputs(req, c, j);
	if (rc == 0)
		rc = ct_buf_appends(c, "<h2>Evaluation loss</h2>");
	if (rc == 0)
		rc = loss_chart(c, j, r, nr);
	if (rc == 0)
		rc = loss_warning(c, j, r, nr);
	if (rc == 0)
		rc = ct_buf_appends(c, "<h2>Models</h2><p>Base model: ");
	if (rc == 0)
		rc = sha_link(c, j->model_sha256, "download");
	if (rc == 0)
		rc = ct_buf_appends(c, " · Final model: ");
	if (rc == 0)
		rc = sha_link(c, j->final_model_sha256, "download final model");
	if (rc == 0)
		rc = ct_buf_appends(c, "</p><h2>Rounds</h2>");
	if (rc == 0)
		rc = rounds_table(c, r, nr);
	if (rc == 0)
		rc = ct_web_partings_html(req, c, id);
	if (rc == 0)
		rc = ct_web_job_samples_html(req->db, c, id);
	if (rc == 0)
		rc = ct_web_receipt_job_html(req, c, id);
	if (rc == 0)
		rc = contrib_table(c, k, nk);
	free(r);
	free(k);
	return rc;
}

int ct_web_page_job(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return one_page(req, resp, "job", "no such job", fill_job, NULL);
}

/* ---- status and home ----------------------------------------------------- */

static int status_cards(struct ct_buf *c, const struct ct_web_status *st)
{
	char s[48];
	int rc = ct_buf_appends(c, "<div class=\"cards\" id=\"status\">");

	if (rc == 0) rc = card_num(c, "Results ready to send", st->res_unsent);
	if (rc == 0) rc = card_num(c, "Results in progress", st->res_in_progress);
	if (rc == 0) rc = card_num(c, "Awaiting validation", st->wu_need_validate);
	if (rc == 0) rc = card_num(c, "Awaiting assimilation", st->wu_need_assimilate);
	if (rc == 0) rc = card_num(c, "Computers active (24 h)", st->hosts_active_24h);
	if (rc == 0) {
		/* from the credit of the last 24 h (doc/credit.md) */
		rc = card(c, "Computing speed (24 h)", ct_tmpl_flops(s, sizeof(s),
								       st->tflops * 1e12));
	}
	if (rc == 0) rc = card_num(c, "Participants", st->users);
	if (rc == 0) rc = card_num(c, "Teams", st->teams);
	if (rc == 0) rc = card_num(c, "Jobs running", st->jobs_running);
	if (rc == 0) rc = card_credit(c, "Total credit", st->total_credit);
	if (rc == 0) rc = ct_buf_appends(c, "</div>");
	return rc;
}

static int roles_table(struct ct_buf *c, const struct ct_web_status *st)
{
	int rc = ct_buf_appends(c, "<h2>Server roles</h2><table id=\"roles\"><thead>"
		"<tr><th>Role</th><th>Instance</th><th>State</th><th class=\"num\">"
		"Runs</th><th class=\"num\">Items</th><th>Last error</th></tr>"
		"</thead><tbody>");

	for (size_t i = 0; i < st->nroles && rc == 0; i++) {
		const struct ct_web_role *r = &st->roles[i];

		rc = ct_tmpl_printf(c, "<tr><td>%s</td><td>%s</td><td class=\"%s\">"
			"%s (%llds ago)</td><td class=\"num\">%lld</td><td class=\"num\">"
			"%lld</td><td>%s</td></tr>", r->role, r->instance,
			r->alive ? "ok" : "bad", r->alive ? "running" : "not running",
			(long long)(st->now - r->beat_time), (long long)r->nruns,
			(long long)r->nitems, r->last_error);
	}
	if (rc == 0 && st->nroles == 0)
		rc = ct_buf_appends(c, "<tr><td colspan=\"6\" class=\"muted\">"
				    "No role has reported yet.</td></tr>");
	if (rc == 0)
		rc = ct_buf_appends(c, "</tbody></table>");
	return rc;
}

static int fill_status(struct ct_web_req *req, struct ct_buf *c, const void *arg)
{
	struct ct_web_status st;
	int rc = ct_web_get_status(req->db, &st);

	(void)arg;
	if (rc == 0)
		rc = status_cards(c, &st);
	if (rc == 0)
		rc = roles_table(c, &st);
	return rc;
}

int ct_web_page_status(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return cached_page(req, resp, "status", "Server status", "/api/v1/status",
			   fill_status, NULL);
}

static int fill_home(struct ct_web_req *req, struct ct_buf *c, const void *arg)
{
	struct ct_web_status st;
	int rc;

	(void)arg;
	rc = ct_tmpl_printf(c, "<p>%s fine-tunes language models on volunteers' "
		"computers. Every work unit is checked by replication, and every "
		"valid result earns credit.</p><p><a href=\"/about\" id=\"how-to-join\">"
		"How to join</a>: an account, the <code>ctune</code> client, one "
		"command.</p>", ct_web_project_name(req->srv));
	if (rc == 0)
		rc = ct_web_get_status(req->db, &st);
	if (rc == 0)
		rc = status_cards(c, &st);
	if (rc == 0)
		rc = board_section(req, c, "Top participants", &user_view, 0, 10);
	if (rc == 0)
		rc = ct_web_news_section(req, c, 3);
	if (rc == 0)
		rc = ct_buf_appends(c, "<p><a href=\"/users\">All participants</a> · "
			"<a href=\"/teams\">Teams</a> · <a href=\"/jobs\">Jobs</a></p>");
	if (rc == 0)
		rc = ct_web_receipt_home_html(req, c);
	return rc;
}

int ct_web_page_home(struct ct_web_req *req, struct ct_web_resp *resp)
{
	return cached_page(req, resp, "home", ct_web_project_name(req->srv),
			   "/api/v1/status", fill_home, NULL);
}
