/*
 * db.c - the database layer (see db.h): libmariadbd for both the embedded
 * server and remote MySQL/MariaDB servers, a per-connection cache of
 * prepared statements, result sets read fully into memory, transactions
 * with deadlock retry.
 *
 * The schema and migrations come from db_sql.c, generated at build time
 * from db/schema.sql and db/migrations/ (db/sql2c.sh).
 */
#include "db.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include "ct_clock.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "db_url.h"
#include "db_args.h"
#include "db_profile.h"

#define CT_DB_MAX_PARAMS 48
#define CT_DB_STMT_CACHE 160
#define CT_DB_MAX_CELLS 1000000


struct fetch_ctx {
	MYSQL_BIND *b;
	long long *ll;
	double *d;
	char **buf;
	unsigned long *len;
	my_bool *isnull;
	int *kind;
};

struct stmt_entry {
	char *sql;		/* owned copy */
	MYSQL_STMT *st;
	/* The result buffers last bound to st. They must live as long as the
	 * statement: the embedded server writes the next execution's first
	 * row into them before the new buffers are bound. */
	struct fetch_ctx fc;
	int fc_ncols;
};

struct ct_db {
	MYSQL *my;
	const struct ct_clock *clock;	/* what ct_db_now(db) reads; not owned */
	struct stmt_entry cache[CT_DB_STMT_CACHE];
	int ncache;
	int in_txn;		/* between ct_db_begin and commit/rollback */
	ct_db_trace_fn *trace;	/* ct_db_set_trace(); NULL: none */
	void *trace_arg;
};

struct cell {
	int64_t i;
	double d;
	char *s;		/* text form (owned), NULL until needed for numbers */
	size_t len;
	unsigned char kind;	/* 'i', 'd', 's' */
	unsigned char null;
};

struct ct_db_res {
	struct cell *cells;
	size_t nrows, cap_rows;
	int ncols;
	long cur;		/* -1 before the first row */
};

/* ---- process-wide state ------------------------------------------------- */

static struct ct_db_url g_url;
static int g_inited;
static int g_embedded;
static int g_lockfd = -1;
static char *g_scratch;		/* scratch datadir for remote-only use */

int64_t ct_db_now(const struct ct_db *db)
{
	return ct_clock_now_s(db->clock);
}

int ct_db_global_is_embedded(void)
{
	return g_embedded;
}

static int lock_datadir(const char *datadir)
{
	char path[4096];
	int fd;

	if (snprintf(path, sizeof(path), "%s.lock", datadir) >= (int)sizeof(path))
		return ct_error(CT_ETOOBIG, "%s: path too long", datadir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return ct_error_errno("%s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return ct_error(CT_EBUSY, "%s: the database is in use by another "
				"process (is `ctune-server run` running?)", datadir);
	}
	g_lockfd = fd;
	return 0;
}

/* argv for mysql_library_init(); strings are static or from `store`. */
static int build_server_args(const char *datadir, const char *logdir, int embedded,
			     char store[3][4200], char **argv)
{
	int n = 0;

	argv[n++] = "ctune-server";
	argv[n++] = "--no-defaults";
	snprintf(store[0], sizeof(store[0]), "--datadir=%s", datadir);
	argv[n++] = store[0];
	argv[n++] = "--skip-grant-tables";
	argv[n++] = "--character-set-server=utf8mb4";
	argv[n++] = "--collation-server=utf8mb4_general_ci";
	if (embedded) {
		argv[n++] = "--default-storage-engine=InnoDB";
		/* write the log at commit, fsync once a second: a killed
		 * process loses nothing, an OS crash at most ~1 s */
		argv[n++] = "--innodb-flush-log-at-trx-commit=2";
		argv[n++] = "--innodb-buffer-pool-size=128M";
		/* the default reserves 8 TB of address space, which valgrind
		 * and some ulimits refuse */
		argv[n++] = "--innodb-buffer-pool-size-max=1G";
		argv[n++] = "--innodb-log-file-size=64M";
		argv[n++] = "--innodb-lock-wait-timeout=20";
		/* io_uring needs locked memory that containers and valgrind
		 * lack; plain pread/pwrite is plenty for this load */
		argv[n++] = "--innodb-use-native-aio=0";
	} else {
		argv[n++] = "--skip-innodb";
		argv[n++] = "--default-storage-engine=MyISAM";
		argv[n++] = "--default-tmp-storage-engine=MyISAM";
	}
	snprintf(store[1], sizeof(store[1]), "--log-error=%s/mariadb.log",
		 logdir ? logdir : datadir);
	argv[n++] = store[1];
	argv[n] = NULL;
	return n;
}

static int make_scratch(const char *datadir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.client-XXXXXX", datadir ? datadir : "/tmp/ctune-db");
	if (mkdtemp(path) == NULL) {
		snprintf(path, sizeof(path), "/tmp/ctune-db-client-XXXXXX");
		if (mkdtemp(path) == NULL)
			return ct_error_errno("mkdtemp %s", path);
	}
	g_scratch = strdup(path);
	return g_scratch ? 0 : CT_ENOMEM;
}

int ct_db_global_init(const char *url, const char *datadir, const char *logdir)
{
	char store[3][4200], *argv[24];
	int argc, rc;

	if (g_inited)
		return ct_error(CT_ESTATE, "database library initialised twice");
	rc = ct_db_url_parse(url, &g_url);
	if (rc < 0)
		return rc;
	g_embedded = g_url.embedded;
	if (g_embedded) {
		if (datadir == NULL)
			return ct_error(CT_EINVAL, "embedded database needs a data directory");
		rc = ct_mkdir_p(datadir, 0700);
		if (rc < 0)
			goto fail;
		rc = lock_datadir(datadir);
		if (rc < 0)
			goto fail;
		argc = build_server_args(datadir, logdir, 1, store, argv);
	} else {
		rc = make_scratch(datadir);
		if (rc < 0)
			goto fail;
		argc = build_server_args(g_scratch, g_scratch, 0, store, argv);
	}
	/* --log-error makes the library reopen stderr onto its log file: keep
	 * ours (the server's own log) and put it back afterwards */
	int saved = dup(2);
	int bad = mysql_library_init(argc, argv, NULL) != 0;
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	if (bad) {
		rc = ct_error(CT_EDB, "could not start the %s database library (see %s/mariadb.log)",
			      g_embedded ? "embedded" : "client",
			      g_embedded ? (logdir ? logdir : datadir) : g_scratch);
		goto fail;
	}
	g_inited = 1;
	return 0;
fail:
	ct_db_global_end();
	return rc;
}

static void rm_scratch(void)
{
	const char *names[] = { "aria_log.00000001", "aria_log_control", "mariadb.log",
				"ddl_recovery.log", "ddl_recovery-backup.log", NULL };
	char path[4200];

	if (g_scratch == NULL)
		return;
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", g_scratch, names[i]);
		unlink(path);
	}
	if (rmdir(g_scratch) < 0)
		ct_log_debug("could not remove %s", g_scratch);
	free(g_scratch);
	g_scratch = NULL;
}

/* The embedded server's InnoDB purge stopped while the SQL layer is whole,
 * as mysqld does (its ha_pre_shutdown() before clean_up()).
 * mysql_library_end() goes straight to clean_up(), which shuts the table
 * cache down before it stops the engines, so a purge batch still running
 * then opens its tables through a table cache in shutdown: purge computes
 * `result`'s indexed virtual columns (task_state) with the SQL layer's
 * TABLE (open_purge_table). After a large change (bench_sched's million
 * cloned WUs) that batch ran for minutes and grew the process past 20 GiB.
 * Stopped first, purge leaves what it had not done to the next start; the
 * shutdown stays fast (innodb_fast_shutdown's default). The function is
 * the server's own (C++, not in the client API): looked up, and skipped
 * where the library has no such symbol. */
static void embedded_pre_shutdown(void)
{
	void (*pre)(void) = NULL;

	*(void **)&pre = dlsym(RTLD_DEFAULT, "_Z15ha_pre_shutdownv");
	if (pre != NULL)
		pre();
}

void ct_db_global_end(void)
{
	ct_db_profile_dump();
	if (g_inited && g_embedded)
		embedded_pre_shutdown();
	if (g_inited)
		mysql_library_end();
	g_inited = 0;
	rm_scratch();
	if (g_lockfd >= 0)
		close(g_lockfd);
	g_lockfd = -1;
	ct_db_url_free(&g_url);
	g_embedded = 0;
}

static void fetch_ctx_free(struct fetch_ctx *f, int ncols);

/* ---- connections -------------------------------------------------------- */

/* The server's error code of this thread's last failed statement. */
static __thread unsigned g_last_errno;

static int db_error(MYSQL *my, unsigned err, const char *errmsg, const char *what)
{
	g_last_errno = err;
	if (err == ER_LOCK_DEADLOCK || err == ER_LOCK_WAIT_TIMEOUT)
		return ct_error(CT_EAGAIN, "%s: %s", what, errmsg);
	if (err == ER_DUP_ENTRY || err == ER_DUP_KEY)
		return ct_error(CT_EDUP, "%s: %s", what, errmsg);
	(void)my;
	return ct_error(CT_EDB, "%s: %s (%u)", what, errmsg, err);
}

static int raw_exec(struct ct_db *db, const char *sql)
{
	struct ct_db_prof_mark pm;
	MYSQL_RES *r;

	ct_db_profile_begin(&pm);
	if (mysql_real_query(db->my, sql, strlen(sql)) != 0)
		return db_error(db->my, mysql_errno(db->my), mysql_error(db->my), sql);
	/* drop a result set if the statement made one */
	r = mysql_store_result(db->my);
	if (r)
		mysql_free_result(r);
	ct_db_profile_end(&pm, sql);
	return 0;
}

int ct_db_exec_script(struct ct_db *db, const char *sql, unsigned *err, char *msg, size_t cap)
{
	int rc = raw_exec(db, sql);

	*err = rc < 0 ? mysql_errno(db->my) : 0;
	snprintf(msg, cap, "%s", rc < 0 ? mysql_error(db->my) : "");
	return rc;
}

static int db_select_database(struct ct_db *db)
{
	char sql[300];
	const char *name = g_url.dbname;

	if (g_embedded) {
		snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s` "
			 "CHARACTER SET utf8mb4", name);
		int rc = raw_exec(db, sql);
		if (rc < 0)
			return rc;
	}
	if (mysql_select_db(db->my, name) != 0)
		return ct_error(CT_EDB, "database %s: %s", name, mysql_error(db->my));
	return 0;
}

int ct_db_open(struct ct_db **out, const struct ct_clock *clock)
{
	struct ct_db *db;
	unsigned timeout = 10;
	int rc;

	*out = NULL;
	if (!g_inited)
		return ct_error(CT_ESTATE, "ct_db_global_init() was not called");
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return CT_ENOMEM;
	db->clock = clock != NULL ? clock : &ct_clock_system;
	mysql_thread_init();
	db->my = mysql_init(NULL);
	if (db->my == NULL) {
		free(db);
		return CT_ENOMEM;
	}
	mysql_options(db->my, g_embedded ? MYSQL_OPT_USE_EMBEDDED_CONNECTION
			      : MYSQL_OPT_USE_REMOTE_CONNECTION, NULL);
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	if (mysql_real_connect(db->my, g_url.host, g_url.user, g_url.pass, NULL,
			       g_url.port, g_url.socket, CLIENT_FOUND_ROWS) == NULL) {
		rc = ct_error(CT_EDB, "connecting to the database: %s", mysql_error(db->my));
		goto fail;
	}
	rc = db_select_database(db);
	if (rc < 0)
		goto fail;
	rc = raw_exec(db, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if (rc == 0)
		rc = raw_exec(db, "SET SESSION sql_mode='STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'");
	if (rc == 0)
		rc = raw_exec(db, "SET autocommit=1");
	/* no engine-independent statistics: MariaDB otherwise opens its
	 * mysql.*_stats tables for every statement (~8% of a scheduler RPC's
	 * CPU, perf), and this project never collects them (ANALYZE ...
	 * PERSISTENT), so the plans are the same: test_sched_scan checks them */
	if (rc == 0)
		rc = raw_exec(db, "SET SESSION use_stat_tables='never'");
	if (rc < 0)
		goto fail;
	*out = db;
	return 0;
fail:
	ct_db_close(db);
	return rc;
}

void ct_db_close(struct ct_db *db)
{
	if (db == NULL)
		return;
	/* a no-op normally; from a thread-exit destructor (HTTP workers) the
	 * library's own per-thread state may be gone already: make it again */
	mysql_thread_init();
	for (int i = 0; i < db->ncache; i++) {
		mysql_stmt_close(db->cache[i].st);
		fetch_ctx_free(&db->cache[i].fc, db->cache[i].fc_ncols);
		free(db->cache[i].sql);
	}
	if (db->my)
		mysql_close(db->my);
	free(db);
	mysql_thread_end();
}

/* ---- statements --------------------------------------------------------- */

static int stmt_get(struct ct_db *db, const char *sql, struct stmt_entry **out)
{
	struct stmt_entry *e;
	MYSQL_STMT *st = NULL;
	my_bool one = 1;

	for (int i = 0; i < db->ncache; i++)
		/* by text: the same buffer may hold different SQL over time */
		if (strcmp(db->cache[i].sql, sql) == 0) {
			*out = &db->cache[i];
			return 0;
		}
	st = mysql_stmt_init(db->my);
	if (st == NULL)
		return CT_ENOMEM;
	if (mysql_stmt_prepare(st, sql, strlen(sql)) != 0) {
		int rc = db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
		mysql_stmt_close(st);
		return rc;
	}
	mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &one);
	if (db->ncache == CT_DB_STMT_CACHE) {	/* full: evict the oldest */
		mysql_stmt_close(db->cache[0].st);
		fetch_ctx_free(&db->cache[0].fc, db->cache[0].fc_ncols);
		free(db->cache[0].sql);
		memmove(&db->cache[0], &db->cache[1], sizeof(db->cache[0]) * (CT_DB_STMT_CACHE - 1));
		db->ncache--;
	}
	e = &db->cache[db->ncache];
	memset(e, 0, sizeof(*e));
	e->sql = strdup(sql);
	if (e->sql == NULL) {
		mysql_stmt_close(st);
		return CT_ENOMEM;
	}
	e->st = st;
	db->ncache++;
	*out = e;
	return 0;
}

/* MySQL's binding of argument a (lens: where its length lives). */
static int bind_arg(const char *sql, const struct ct_db_arg *a, MYSQL_BIND *b,
		    unsigned long *len)
{
	switch (a->type) {
	case 'i':
	case 'l':
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = (void *)&a->v.l;
		break;
	case 'd':
		b->buffer_type = MYSQL_TYPE_DOUBLE;
		b->buffer = (void *)&a->v.d;
		break;
	case 's':
		if (a->v.s == NULL) {
			b->buffer_type = MYSQL_TYPE_NULL;
			break;
		}
		*len = strlen(a->v.s);
		b->buffer_type = MYSQL_TYPE_STRING;
		b->buffer = (void *)a->v.s;
		b->buffer_length = *len;
		b->length = len;
		break;
	case 'b':
		*len = (unsigned long)a->v.b.n;
		b->buffer_type = MYSQL_TYPE_BLOB;
		b->buffer = (void *)a->v.b.p;
		b->buffer_length = *len;
		b->length = len;
		break;
	case 'n':
		b->buffer_type = MYSQL_TYPE_NULL;
		break;
	default:
		return ct_error(CT_EINVAL, "bad parameter type '%c': %s", a->type, sql);
	}
	return 0;
}

/* Bind the arguments a[0..n) and execute. */
static int stmt_run(struct ct_db *db, const char *sql, const struct ct_db_arg *a, size_t n,
		    struct stmt_entry **out)
{
	MYSQL_BIND b[CT_DB_MAX_PARAMS];
	unsigned long lens[CT_DB_MAX_PARAMS];
	struct stmt_entry *e = NULL;
	MYSQL_STMT *st;
	int rc;

	rc = stmt_get(db, sql, &e);
	if (rc < 0)
		return rc;
	if (db->trace)
		db->trace(db->trace_arg, sql, a, n);
	st = e->st;
	if (n != mysql_stmt_param_count(st) || n > CT_DB_MAX_PARAMS)
		return ct_error(CT_EINVAL, "%zu parameter types for %lu placeholders: %s",
				n, (unsigned long)mysql_stmt_param_count(st), sql);
	memset(b, 0, sizeof(b[0]) * (n ? n : 1));
	for (size_t i = 0; i < n; i++) {
		rc = bind_arg(sql, &a[i], &b[i], &lens[i]);
		if (rc < 0)
			return rc;
	}
	if (n > 0 && mysql_stmt_bind_param(st, b) != 0)
		return db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
	if (mysql_stmt_execute(st) != 0)
		return db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
	*out = e;
	return 0;
}

static void backoff_wait(int attempt);

static int execa_once(struct ct_db *db, const char *sql, const struct ct_db_arg *a, size_t n)
{
	struct ct_db_prof_mark pm;
	struct stmt_entry *e = NULL;
	MYSQL_STMT *st;
	my_ulonglong nrows;
	int rc;

	ct_db_profile_begin(&pm);
	rc = stmt_run(db, sql, a, n, &e);
	if (rc < 0)
		return rc;
	st = e->st;
	nrows = mysql_stmt_affected_rows(st);
	if (nrows == (my_ulonglong)-1)	/* the statement returned rows */
		mysql_stmt_free_result(st);
	ct_db_profile_end(&pm, sql);
	if (nrows == (my_ulonglong)-1)
		return 0;
	return nrows > INT32_MAX ? INT32_MAX : (int)nrows;
}

int ct_db_execa(struct ct_db *db, const char *sql, const struct ct_db_arg *a, size_t n)
{
	/* An autocommit statement is a transaction of its own: one that
	 * Galera aborts at commit (certification failure, reported as a
	 * deadlock) or that hits a deadlock is run again like ct_db_txn does
	 * (not a lock wait timeout: that one already waited its 50 s).
	 * Inside a transaction the caller's ct_db_txn retries the whole. */
	for (int attempt = 0;; attempt++) {
		int rc = execa_once(db, sql, a, n);
		if (rc != CT_EAGAIN || db->in_txn || g_last_errno != ER_LOCK_DEADLOCK ||
		    attempt + 1 >= CT_DB_TXN_TRIES)
			return rc;
		backoff_wait(attempt);
	}
}

int ct_db_param_count(struct ct_db *db, const char *sql)
{
	struct stmt_entry *e = NULL;
	int rc = stmt_get(db, sql, &e);

	return rc < 0 ? rc : (int)mysql_stmt_param_count(e->st);
}

int64_t ct_db_last_id(struct ct_db *db)
{
	return (int64_t)mysql_insert_id(db->my);
}

/* ---- result sets -------------------------------------------------------- */

static int col_kind(enum enum_field_types t)
{
	switch (t) {
	case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_LONG:
	case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_YEAR:
		return 'i';
	case MYSQL_TYPE_FLOAT: case MYSQL_TYPE_DOUBLE:
		return 'd';
	default:
		return 's';
	}
}

static int res_add_row(struct ct_db_res *res, const struct fetch_ctx *f)
{
	struct cell *row;

	if ((res->nrows + 1) * (size_t)res->ncols > CT_DB_MAX_CELLS)
		return ct_error(CT_ETOOBIG, "query result over %d cells", CT_DB_MAX_CELLS);
	if (res->nrows == res->cap_rows) {
		size_t nc = res->cap_rows ? res->cap_rows * 2 : 16;
		struct cell *c = realloc(res->cells, nc * res->ncols * sizeof(*c));
		if (c == NULL)
			return CT_ENOMEM;
		res->cells = c;
		res->cap_rows = nc;
	}
	row = &res->cells[res->nrows * res->ncols];
	memset(row, 0, sizeof(*row) * res->ncols);
	for (int c = 0; c < res->ncols; c++) {
		row[c].kind = (unsigned char)f->kind[c];
		row[c].null = f->isnull[c] ? 1 : 0;
		if (row[c].null)
			continue;
		if (f->kind[c] == 'i') {
			row[c].i = f->ll[c];
			row[c].d = (double)f->ll[c];
		} else if (f->kind[c] == 'd') {
			row[c].d = f->d[c];
			row[c].i = (int64_t)f->d[c];
		} else {
			row[c].s = malloc(f->len[c] + 1);
			if (row[c].s == NULL)
				return CT_ENOMEM;
			memcpy(row[c].s, f->buf[c], f->len[c]);
			row[c].s[f->len[c]] = 0;
			row[c].len = f->len[c];
			row[c].i = strtoll(row[c].s, NULL, 10);
			row[c].d = strtod(row[c].s, NULL);
		}
	}
	res->nrows++;
	return 0;
}

static void fetch_ctx_free(struct fetch_ctx *f, int ncols)
{
	if (f == NULL)
		return;
	if (f->buf)
		for (int c = 0; c < ncols; c++)
			free(f->buf[c]);
	free(f->b); free(f->ll); free(f->d); free(f->buf);
	free(f->len); free(f->isnull); free(f->kind);
}

static int fetch_all(struct ct_db *db, struct stmt_entry *e, const char *sql,
		     struct ct_db_res *res)
{
	MYSQL_STMT *st = e->st;
	struct fetch_ctx f = { 0 };
	int bound = 0;
	MYSQL_RES *meta = NULL;
	MYSQL_FIELD *fields;
	int n, rc = 0;

	if (mysql_stmt_store_result(st) != 0)
		return db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
	meta = mysql_stmt_result_metadata(st);
	if (meta == NULL)
		goto out;
	n = (int)mysql_num_fields(meta);
	fields = mysql_fetch_fields(meta);
	res->ncols = n;
	f.b = calloc(n, sizeof(*f.b)); f.ll = calloc(n, sizeof(*f.ll));
	f.d = calloc(n, sizeof(*f.d)); f.buf = calloc(n, sizeof(*f.buf));
	f.len = calloc(n, sizeof(*f.len)); f.isnull = calloc(n, sizeof(*f.isnull));
	f.kind = calloc(n, sizeof(*f.kind));
	if (!f.b || !f.ll || !f.d || !f.buf || !f.len || !f.isnull || !f.kind) {
		rc = CT_ENOMEM;
		goto out;
	}
	for (int c = 0; c < n; c++) {
		f.kind[c] = col_kind(fields[c].type);
		f.b[c].is_null = &f.isnull[c];
		f.b[c].length = &f.len[c];
		if (f.kind[c] == 'i') {
			f.b[c].buffer_type = MYSQL_TYPE_LONGLONG;
			f.b[c].buffer = &f.ll[c];
		} else if (f.kind[c] == 'd') {
			f.b[c].buffer_type = MYSQL_TYPE_DOUBLE;
			f.b[c].buffer = &f.d[c];
		} else {
			unsigned long cap = fields[c].max_length + 1;
			f.buf[c] = malloc(cap);
			if (f.buf[c] == NULL) {
				rc = CT_ENOMEM;
				goto out;
			}
			f.b[c].buffer_type = MYSQL_TYPE_BLOB;
			f.b[c].buffer = f.buf[c];
			f.b[c].buffer_length = cap;
		}
	}
	if (mysql_stmt_bind_result(st, f.b) != 0) {
		rc = db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
		goto out;
	}
	bound = 1;
	for (;;) {
		int r = mysql_stmt_fetch(st);
		if (r == MYSQL_NO_DATA)
			break;
		if (r == 1) {
			rc = db_error(db->my, mysql_stmt_errno(st), mysql_stmt_error(st), sql);
			goto out;
		}
		rc = res_add_row(res, &f);	/* MYSQL_DATA_TRUNCATED cannot happen:
						 * buffers are max_length + 1 */
		if (rc < 0)
			goto out;
	}
out:
	if (meta)
		mysql_free_result(meta);
	mysql_stmt_free_result(st);
	if (bound) {	/* these buffers are bound now: keep them, drop the old */
		fetch_ctx_free(&e->fc, e->fc_ncols);
		e->fc = f;
		e->fc_ncols = res->ncols;
	} else {
		fetch_ctx_free(&f, res->ncols);
	}
	return rc;
}

void ct_db_set_trace(struct ct_db *db, ct_db_trace_fn *fn, void *arg)
{
	db->trace = fn;
	db->trace_arg = arg;
}

int ct_db_querya(struct ct_db *db, struct ct_db_res **out, const char *sql,
		 const struct ct_db_arg *a, size_t n)
{
	struct ct_db_prof_mark pm;
	struct ct_db_res *res;
	struct stmt_entry *e = NULL;
	int rc;

	*out = NULL;
	res = calloc(1, sizeof(*res));
	if (res == NULL)
		return CT_ENOMEM;
	res->cur = -1;
	ct_db_profile_begin(&pm);
	rc = stmt_run(db, sql, a, n, &e);
	if (rc < 0)
		goto fail;
	rc = fetch_all(db, e, sql, res);
	if (rc < 0)
		goto fail;
	ct_db_profile_end(&pm, sql);
	*out = res;
	return 0;
fail:
	ct_db_res_free(res);
	return rc;
}

int ct_db_next(struct ct_db_res *res)
{
	if (res == NULL || (size_t)(res->cur + 1) >= res->nrows) {
		if (res)
			res->cur = (long)res->nrows;
		return 0;
	}
	res->cur++;
	return 1;
}

size_t ct_db_nrows(const struct ct_db_res *res)
{
	return res ? res->nrows : 0;
}

int ct_db_ncols(const struct ct_db_res *res)
{
	return res ? res->ncols : 0;
}

static struct cell *cell_at(const struct ct_db_res *res, int col)
{
	if (res == NULL || col < 0 || col >= res->ncols || res->cur < 0 ||
	    (size_t)res->cur >= res->nrows)
		return NULL;
	return &res->cells[res->cur * res->ncols + col];
}

int64_t ct_db_int(const struct ct_db_res *res, int col)
{
	struct cell *c = cell_at(res, col);

	return c && !c->null ? c->i : 0;
}

double ct_db_double(const struct ct_db_res *res, int col)
{
	struct cell *c = cell_at(res, col);

	return c && !c->null ? c->d : 0.0;
}

const char *ct_db_str(const struct ct_db_res *res, int col)
{
	struct cell *c = cell_at(res, col);
	char tmp[64];

	if (c == NULL || c->null)
		return "";
	if (c->s == NULL) {	/* format a number once, on demand */
		if (c->kind == 'i')
			snprintf(tmp, sizeof(tmp), "%" PRId64, c->i);
		else
			snprintf(tmp, sizeof(tmp), "%.17g", c->d);
		c->s = strdup(tmp);
		if (c->s == NULL)
			return "";
		c->len = strlen(c->s);
	}
	return c->s;
}

size_t ct_db_len(const struct ct_db_res *res, int col)
{
	struct cell *c = cell_at(res, col);

	if (c == NULL || c->null)
		return 0;
	if (c->s == NULL)
		ct_db_str(res, col);
	return c->len;
}

int ct_db_isnull(const struct ct_db_res *res, int col)
{
	struct cell *c = cell_at(res, col);

	return c ? c->null : 1;
}

void ct_db_res_free(struct ct_db_res *res)
{
	if (res == NULL)
		return;
	for (size_t i = 0; i < res->nrows * (size_t)res->ncols; i++)
		free(res->cells[i].s);
	free(res->cells);
	free(res);
}

static int query_first(struct ct_db *db, struct ct_db_res **res, const char *sql,
		       const struct ct_db_arg *a, size_t n)
{
	int rc = ct_db_querya(db, res, sql, a, n);

	if (rc < 0)
		return rc;
	if (ct_db_next(*res) <= 0 || (*res)->ncols < 1) {
		ct_db_res_free(*res);
		*res = NULL;
		return CT_ENOTFOUND;
	}
	return 0;
}

/* The first column of the first row as an int64 (*i) or, with i NULL, a
 * double (*d). */
static int query_scalar(struct ct_db *db, int64_t *i, double *d, const char *sql,
			const struct ct_db_arg *a, size_t n)
{
	struct ct_db_res *res = NULL;
	int rc = query_first(db, &res, sql, a, n);

	if (rc < 0)
		return rc;
	if (i)
		*i = ct_db_int(res, 0);
	else
		*d = ct_db_double(res, 0);
	ct_db_res_free(res);
	return 0;
}

int ct_db_alive(struct ct_db *db)
{
	int64_t one = 0;

	return ct_db_query_inta(db, &one, "SELECT 1", NULL, 0) == 0 && one == 1;
}

int ct_db_query_inta(struct ct_db *db, int64_t *out, const char *sql,
		     const struct ct_db_arg *a, size_t n)
{
	return query_scalar(db, out, NULL, sql, a, n);
}

int ct_db_query_doublea(struct ct_db *db, double *out, const char *sql,
			const struct ct_db_arg *a, size_t n)
{
	return query_scalar(db, NULL, out, sql, a, n);
}

/* ---- transactions ------------------------------------------------------- */

int ct_db_begin(struct ct_db *db)
{
	int rc = raw_exec(db, "START TRANSACTION");

	db->in_txn = rc == 0;
	return rc;
}

int ct_db_commit(struct ct_db *db)
{
	struct ct_db_prof_mark pm;
	int bad;

	db->in_txn = 0;
	ct_db_profile_begin(&pm);
	bad = mysql_commit(db->my) != 0;
	ct_db_profile_end(&pm, "COMMIT");
	if (bad)
		return db_error(db->my, mysql_errno(db->my), mysql_error(db->my), "COMMIT");
	return 0;
}

void ct_db_rollback(struct ct_db *db)
{
	db->in_txn = 0;
	if (mysql_rollback(db->my) != 0)
		ct_log_warn("ROLLBACK failed: %s", mysql_error(db->my));
}

/* Exponential backoff, capped, with jitter of up to as much again
 * (ct_random_bytes: rand() is not for threads). */
static void backoff_wait(int attempt)
{
	unsigned jitter, wait_us;

	wait_us = attempt < 8 ? 1000u << attempt : CT_DB_TXN_MAX_WAIT_US;
	if (wait_us > CT_DB_TXN_MAX_WAIT_US)
		wait_us = CT_DB_TXN_MAX_WAIT_US;
	if (ct_random_bytes(&jitter, sizeof(jitter)) < 0)
		jitter = 0;
	usleep(wait_us + jitter % wait_us);
}

int ct_db_txn(struct ct_db *db, int (*fn)(struct ct_db *db, void *arg), void *arg)
{
	int rc = CT_EAGAIN;

	for (int attempt = 0; attempt < CT_DB_TXN_TRIES; attempt++) {
		rc = ct_db_begin(db);
		if (rc < 0)
			return rc;
		rc = fn(db, arg);
		if (rc >= 0) {
			int c = ct_db_commit(db);
			if (c == 0)
				return rc;
			rc = c;
		}
		ct_db_rollback(db);
		if (rc != CT_EAGAIN)
			return rc;
		backoff_wait(attempt);
	}
	ct_log_warn("database: transaction still deadlocked after %d tries", CT_DB_TXN_TRIES);
	return rc;
}

/* ---- schema migrations -------------------------------------------------- */

/* Whether err says that what a DDL statement makes or drops is already so:
 * after a crash between a statement and its progress record, the first
 * statement a resumed migration runs may have been applied. */
