/*
 * project_init.c - `ctune-server init` as one step (project_init.h): note
 * what DIR held before, create the project and its database, and on a
 * failure remove what was made, so that the user can fix the cause (a
 * wrong password, a database in use) and run the same init again.
 */
#include "config.h"

#include "project_init.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_log.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "data/db_url.h"
#include "cmd/server_open.h"
#include "data/server.h"

#define MAX_BEFORE 100000	/* entries of an existing DIR we remember */

/* What was there before init: the topmost path init will create (empty
 * when DIR existed), else DIR's entry names. */
struct before {
	char top[PATH_MAX];
	char **names;
	size_t n;
};

static void before_free(struct before *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->names[i]);
	free(b->names);
}

static int list_entries(const char *dir, struct before *b)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return ct_error_errno("%s", dir);
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char **p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (b->n >= MAX_BEFORE)
			rc = ct_error(CT_ETOOBIG, "%s: more than %d entries", dir, MAX_BEFORE);
		p = rc == 0 ? realloc(b->names, (b->n + 1) * sizeof(*p)) : NULL;
		if (rc == 0 && p == NULL)
			rc = CT_ENOMEM;
		if (rc == 0) {
			b->names = p;
			b->names[b->n] = strdup(e->d_name);
			rc = b->names[b->n] ? 0 : CT_ENOMEM;
			b->n += rc == 0;
		}
	}
	closedir(d);
	return rc;
}

/* Note the first component of dir that does not exist yet, or DIR's
 * entries when it does. */
static int note_before(const char *dir, struct before *b)
{
	struct stat st;
	size_t len = strlen(dir);

	memset(b, 0, sizeof(*b));
	if (len == 0 || len >= sizeof(b->top))
		return ct_error(CT_EINVAL, "bad project directory '%s'", dir);
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? list_entries(dir, b)
					   : ct_error(CT_EEXISTS, "%s is not a directory", dir);
	for (size_t i = 1; i <= len; i++) {
		if (i < len && dir[i] != '/')
			continue;
		snprintf(b->top, sizeof(b->top), "%.*s", (int)i, dir);
		if (stat(b->top, &st) != 0)
			return 0;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT)
		ct_log_warn("init: could not remove %s: %s", path, strerror(errno));
	return 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Remove what init made after b was noted. */
static void roll_back(const char *dir, const struct before *b)
{
	struct before now = { .n = 0 };

	if (b->top[0]) {
		rm_tree(b->top);
		return;
	}
	if (list_entries(dir, &now) < 0)
		return;
	for (size_t i = 0; i < now.n; i++) {
		size_t j = 0;
		char path[PATH_MAX];

		while (j < b->n && strcmp(b->names[j], now.names[i]) != 0)
			j++;
		if (j == b->n && ct_path_join(path, sizeof(path), dir, now.names[i]) == 0)
			rm_tree(path);
	}
	before_free(&now);
}

/* CT_EEXISTS when the open database already holds a crowdtune project. */
static int check_unused(struct ct_db *db, const char *url)
{
	struct ct_db_url u = { 0 };
	int ver = 0, rc;

	rc = ct_db_schema_version(db, &ver);
	if (rc < 0 || ver == 0)
		return rc;
	if (ct_db_url_parse(url, &u) == 0 && !u.embedded)
		rc = ct_error(CT_EEXISTS, "database '%s' on %s already holds a crowdtune project "
			      "(schema %d): give init another database with --db "
			      "mysql://USER:PASS@HOST/NAME (CREATE DATABASE NAME first)",
			      u.dbname, u.socket ? u.socket : u.host ? u.host : "localhost",
			      ver);
	else
		rc = ct_error(CT_EEXISTS, "the project's database already holds a crowdtune "
			      "project (schema %d)", ver);
	ct_db_url_free(&u);
	return rc;
}

int ct_project_db_start(struct ct_server *srv, int fresh)
{
	char datadir[PATH_MAX], logdir[PATH_MAX];
	struct ct_db *db = NULL;
	int rc;

	rc = ct_path_join(datadir, sizeof(datadir), srv->dir, "db");
	if (rc == 0)
		rc = ct_path_join(logdir, sizeof(logdir), srv->dir, "log");
	if (rc == 0)
		rc = ct_db_global_init(srv->db_url, datadir, logdir);
	if (rc == 0)
		rc = ct_db_open(&db, srv->clock);
	if (rc == 0 && fresh)
		rc = check_unused(db, srv->db_url);
	if (rc == 0)
		rc = ct_db_migrate(db);
	ct_db_close(db);
	return rc;
}

int ct_project_create(const char *dir, const struct ct_project_opts *o)
{
	struct ct_server srv;
	struct before b;
	char msg[512];
	int rc;

	rc = note_before(dir, &b);
	if (rc < 0) {
		before_free(&b);
		return rc;
	}
	rc = ct_project_init(dir, o);
	if (rc == CT_EEXISTS) {		/* a project already: nothing was made */
		before_free(&b);
		return rc;
	}
	if (rc == 0)
		rc = ct_server_load(&srv, dir, NULL);
	if (rc == 0) {
		rc = ct_project_db_start(&srv, 1);
		snprintf(msg, sizeof(msg), "%s", rc < 0 ? ct_errmsg(rc) : "");
		ct_db_global_end();
		ct_server_free(&srv);
	} else {
		snprintf(msg, sizeof(msg), "%s", ct_errmsg(rc));
	}
	if (rc < 0) {
		roll_back(dir, &b);
		rc = ct_error(rc, "%s (nothing was kept: fix that and run init again)", msg);
	}
	before_free(&b);
	return rc;
}
