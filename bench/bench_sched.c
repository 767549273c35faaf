/*
 * bench_sched.c - scheduler load generator: a ctune-server front end in
 * this process (embedded database in a temporary project, or --db URL)
 * and client threads that play many simulated hosts over loopback HTTP.
 * Each host, each call, reports the results it got last time (as client
 * errors, so no uploads are involved) and asks for 4 new ones, which is
 * the steady state of a busy project. The daily quota halves with each
 * error of the last day (worklimit.c), so a host that only reports errors
 * gets nothing from its fifth call on, however high the project sets
 * the quota: a host whose call got no work is then replaced by a new host
 * of the same account (a volunteer reinstalling: a new client id, first
 * contact again), so the simulated hosts keep asking for work instead of
 * capping the rate at 16 dispatches a host (each measurement has hosts
 * of its own too). Prints dispatches/s and the RPC latency percentiles.
 *
 *   bench_sched [--clients N] [--hosts H] [--seconds S] [--wus W[,W2...]]
 *               [--jobs J] [--daemons] [--pages P] [--http-threads T]
 *               [--servers K] [--db mysql://...]...
 *
 * --wus W1,W2,...: the unsent work units at each measurement, ascending
 * (up to 1,000,000 and more): the project grows between measurements, so
 * each row is the same project with more unsent work; the scheduler's
 * goals (p50 at the largest over p50 at the smallest) follow.
 * --jobs J: the unsent work spread over J jobs. --daemons: the server
 * runs the transitioner, validator and assimilator too, and --pages P
 * has one more client fetch web pages (home, jobs, a job, users, status)
 * at P a second: the realistic mix of a busy project.
 *
 * Besides wall-clock rates, each row gives the servers' CPU time per RPC
 * and what it would take two cores to dispatch at that cost (2 CPU
 * seconds a second over CPU seconds per dispatch): the figure that the
 * load of a shared machine disturbs least (the load is beside it).
 *
 * --servers K: K scheduler front ends, each a process of its own (as K
 * `ctune-server run` instances would be) on one project directory, the
 * client threads spread over them; server i uses the i-th --db (cycled),
 * so `--servers 2 --db URL1 --db URL2` puts them on two Galera nodes.
 * More than one server needs an external database. The set-up and every
 * server run in child processes; this one only drives the load.
 * bench/bench_sched_external.sh runs it on a private mariadbd.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "rpc/account.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_time.h"
#include "ct_tokens.h"
#include "data/db.h"
#include "data/migrate_lock.h"
#include "rpc/files.h"
#include "rpc/http.h"
#include "cmd/roles.h"
#include "sched_load.h"
#include "rpc/sched_rpc.h"
#include "cmd/server_open.h"
#include "data/result_state.h"
#include "data/server.h"
#include "web/web_http.h"
#include "daemons/wg.h"

#define MAX_SERVERS 8

#define MAX_SIZES 16

struct opts {
	int clients, hosts, seconds, http_threads, servers, ndb, jobs, daemons, pages;
	int64_t wus[MAX_SIZES];
	int nsizes;
	const char *db;			/* the first --db (NULL: embedded) */
	const char *dbs[MAX_SERVERS];
};

struct host {
	char key[33], cpid[33];
	int64_t id;
	char held[8][96];
	int nheld;
};

struct client {
	const char *url;		/* its server's base URL */
	struct host *hosts;
	int nhosts;
	double *lat;		/* ms per RPC */
	size_t nlat, cap;
	int64_t dispatched, errors;
	int64_t empty;		/* RPCs that got no new work */
};

static struct ct_server g_srv;
static double g_deadline;
static char g_urls[MAX_SERVERS][128];

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_sched: %s: %s\n", what, ct_errmsg(rc));
	exit(1);
}

/* ---- set-up ------------------------------------------------------------ */

static void make_inputs(const char *dir, char m[4200], char t[4200], char e[4200])
{
	/* job submission checks the checkpoint's size and every token against
	 * its vocabulary: a real (zero-weight) model and in-vocabulary tokens */
	const struct ct_model_config cfg = { .maxT = 64, .V = 256, .L = 2, .NH = 2, .C = 32,
					    .Vp = 256 };
	struct ct_gpt2 model = { 0 };
	static ct_tok tok[4000];
	int rc;

	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++)
		tok[i] = 1;
	snprintf(m, 4200, "%s/model.bin", dir);
	rc = ct_gpt2_alloc(&model, &cfg);
	if (rc == 0)
		rc = ct_gpt2_save(m, &model.cfg, model.params);
	ct_gpt2_free(&model);
	snprintf(t, 4200, "%s/train.bin", dir);
	if (rc == 0)
		rc = ct_tokens_save(t, tok, sizeof(tok) / sizeof(tok[0]));
	snprintf(e, 4200, "%s/eval.bin", dir);
	if (rc == 0)
		rc = ct_tokens_save(e, tok, sizeof(tok) / sizeof(tok[0]));
	if (rc < 0)
		die("inputs", rc);
}

/* The project's database in this (child) process: *db on g_srv. */
static void open_db(const struct opts *o, const char *dir, struct ct_db **db)
{
	char p[4200], t[4200];
	int rc;

	snprintf(p, sizeof(p), "%s/proj", dir);
	rc = ct_server_load(&g_srv, p, o->db);
	snprintf(t, sizeof(t), "%s/proj/db", dir);
	if (rc == 0)
		rc = ct_db_global_init(g_srv.db_url, t, dir);
	if (rc == 0)
		rc = ct_db_open(db, g_srv.clock);
	if (rc < 0)
		die("project", rc);
}

static void close_db(struct ct_db *db)
{
	ct_db_close(db);
	ct_db_global_end();
	ct_server_free(&g_srv);
}

/* In a child process: the project, its users and o->jobs jobs of 8 shards
 * (then exit). */
static void prepare(const struct opts *o, struct host *hosts, const char *dir)
{
	struct ct_project_opts po = { .name = "bench", .listen = "127.0.0.1:0", .db_url = o->db };
	char p[4200], m[4200], t[4200], e[4200];
	struct ct_db *db = NULL;
	int64_t jobid;
	int rc;

	snprintf(p, sizeof(p), "%s/proj", dir);
	rc = ct_project_init(p, &po);
	if (rc < 0)
		die("project", rc);
	open_db(o, dir, &db);
	rc = ct_db_migrate(db);
	for (int i = 0; rc == 0 && i < o->hosts * o->nsizes; i++) {
		char hash[65], email[64];
		ct_account_key_hash(hosts[i].key, hash);
		snprintf(email, sizeof(email), "u%d@bench", i);
		rc = CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
				"auth_hash) VALUES (?, ?, ?, 'x', ?)", ct_db_now(db), email, email,
				hash);
		rc = rc < 0 ? rc : 0;
	}
	if (rc < 0)
		die("users", rc);
	make_inputs(dir, m, t, e);
	struct ct_job_spec spec = { .name = "bench", .model_path = m, .train_path = t,
		.eval_path = e, .shards = 8, .rounds = 1, .steps = 1, .batch = 1, .seq = 8,
		.lr = 1e-3, .quorum = 2, .replicas = 2, .adaptive = 0 };
	for (int j = 0; rc == 0 && j < o->jobs; j++)
		rc = ct_wg_submit(&g_srv, db, &spec, &jobid);
	if (rc < 0)
		die("job", rc);
	close_db(db);
	exit(0);
}

/* The ids of the project's jobs (o->jobs of them) into ids. */
static void job_ids(struct ct_db *db, int n, int64_t *ids)
{
	struct ct_db_res *res = NULL;
	int k = 0;

	if (ct_db_querya(db, &res, "SELECT id FROM job ORDER BY id", NULL, 0) < 0)
		die("jobs", CT_EDB);
	while (k < n && ct_db_next(res) > 0)
		ids[k++] = ct_db_int(res, 0);
	ct_db_res_free(res);
	if (k != n)
		die("jobs", CT_ENOTFOUND);
}

/* WUs with an unsent result now. */
static int64_t unsent_wus(struct ct_db *db)
{
	int64_t n = 0;

	if (CT_DB_QUERY_INT(db, &n, "SELECT COUNT(DISTINCT workunitid) FROM result WHERE "
			    "server_state=?", CT_RS_UNSENT) < 0)
		die("counting unsent work", CT_EDB);
	return n;
}

/* In a child process: the unsent WUs counted into dir/unsent (before
 * anything is added), then, when want > 0, topped up to want by WUs named
 * from `first` on, spread over the jobs, two unsent results each. */
static void grow(const struct opts *o, const char *dir, int64_t first, int64_t want)
{
	int64_t ids[64], have, add;
	struct ct_db *db = NULL;
	char path[4200];
	FILE *f;
	int rc = 0;

	open_db(o, dir, &db);
	have = unsent_wus(db);
	snprintf(path, sizeof(path), "%s/unsent", dir);
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%" PRId64 "\n", have) < 0 || fclose(f) != 0)
		die(path, CT_EIO);
	add = want > have ? want - have : 0;
	job_ids(db, o->jobs, ids);
	for (int j = 0; rc == 0 && add > 0 && j < o->jobs; j++) {
		int64_t lo = add * j / o->jobs, hi = add * (j + 1) / o->jobs;
		rc = ct_sched_load_clone(db, ids[j], "bench", first + lo, hi - lo, 2);
	}
	if (rc < 0)
		die("unsent work", rc);
	if (add > 0 && (rc = ct_sched_load_settle(db)) < 0)
		die("purging the set-up", rc);
	close_db(db);
	exit(0);
}

/* What the last grow() counted. */
static int64_t read_unsent(const char *dir)
{
	char path[4200];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/unsent", dir);
	f = fopen(path, "r");
	if (f == NULL || fscanf(f, "%lld", &n) != 1)
		die(path, CT_EIO);
	fclose(f);
	return n;
}

static void *roles_main(void *arg)
{
	int rc = ct_roles_run(arg, "transitioner,validator,assimilator");

	if (rc < 0)
		die("daemons", rc);
	return NULL;
}

/* In a child process: scheduler front end `idx` on the project in dir and
 * its database (with --daemons, the web pages and the daemons too);
 * writes its port to fd, serves until SIGTERM. */
static void serve(const struct opts *o, int idx, const char *dir, int fd)
{
	const char *url = o->ndb ? o->dbs[idx % o->ndb] : NULL;
	char p[4200], t[4200], thr[16];
	pthread_t roles;
	sigset_t set;
	int port = 0, sig, rc;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	snprintf(p, sizeof(p), "%s/proj", dir);
	rc = ct_server_load(&g_srv, p, url);
	snprintf(thr, sizeof(thr), "%d", o->http_threads);
	if (rc == 0)
		rc = ct_conf_set(g_srv.conf, "http.threads", thr);
	/* the simulated hosts report every result as an error: the daily
	 * quota, halved per error, would soon leave them nothing (each
	 * measurement has hosts of its own too) */
	if (rc == 0)
		rc = ct_conf_set(g_srv.conf, "sched.daily_quota", "1000000");
	if (rc == 0)
		rc = ct_conf_set(g_srv.conf, "sched.daily_quota_max", "10000000");
	snprintf(t, sizeof(t), "%s/proj/db", dir);
	if (rc == 0)
		rc = ct_db_global_init(g_srv.db_url, t, dir);
	if (rc < 0)
		die("server", rc);
	ct_http_register_routes(&g_srv, ct_sched_routes);
	ct_http_register_routes(&g_srv, ct_files_routes);
	if (o->daemons && (rc = ct_web_register(&g_srv)) < 0)
		die("web", rc);
	rc = ct_http_start(&g_srv, "127.0.0.1:0", &port);
	if (rc < 0)
		die("http", rc);
	if (o->daemons && pthread_create(&roles, NULL, roles_main, &g_srv) != 0)
		die("daemons", CT_ENOMEM);
	if (write(fd, &port, sizeof(port)) != (ssize_t)sizeof(port))
		die("port", CT_EIO);
	close(fd);
	sigwait(&set, &sig);
	atomic_store(&g_srv.stop, 1);
	if (o->daemons)
		pthread_join(roles, NULL);
	ct_http_stop(&g_srv);
	ct_db_global_end();
	ct_server_free(&g_srv);
	exit(0);
}

/* Exit unless waitpid() returned `got` == `want` with status `st` of a
 * clean exit, saying why. */
static void check_child(pid_t got, pid_t want, int st, const char *what)
{
	if (got == want && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (got != want)
		fprintf(stderr, "bench_sched: %s failed: no status (waitpid)\n", what);
	else if (WIFSIGNALED(st))
		fprintf(stderr, "bench_sched: %s failed: killed by signal %d\n", what, WTERMSIG(st));
	else
		fprintf(stderr, "bench_sched: %s failed: exit status %d\n", what,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	exit(1);
}

static void wait_child(pid_t pid, const char *what)
{
	int st = 0;

	check_child(waitpid(pid, &st, 0), pid, st, what);
}

/* Run fn(o, dir, a, b) in a child process and wait for it. */
static void in_child(void (*fn)(const struct opts *, const char *, int64_t, int64_t),
		     const struct opts *o, const char *dir, int64_t a, int64_t b, const char *what)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		fn(o, dir, a, b);
	wait_child(pid, what);
}

/* The o->servers front ends; their PIDs in pids, their URLs in g_urls. */
static void start_servers(const struct opts *o, const char *dir, pid_t *pids)
{
	for (int i = 0; i < o->servers; i++) {
		int fds[2], port = 0;
		if (pipe(fds) < 0)
			die("pipe", CT_EIO);
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			close(fds[0]);
			serve(o, i, dir, fds[1]);
		}
		close(fds[1]);
		if (read(fds[0], &port, sizeof(port)) != (ssize_t)sizeof(port))
			die("a server did not start", CT_EIO);
		close(fds[0]);
		snprintf(g_urls[i], sizeof(g_urls[i]), "http://127.0.0.1:%d", port);
	}
}

/* A server stops in seconds (its database's shutdown included); one that
 * has not after STOP_S is killed and the run fails, rather than waiting
 * on it for minutes. */
#define STOP_S 120

static void stop_servers(const struct opts *o, pid_t *pids)
{
	for (int i = 0; i < o->servers; i++)
		kill(pids[i], SIGTERM);
	for (int i = 0; i < o->servers; i++) {
		double until = ct_time_mono_s() + STOP_S;
		int st = 0;
		pid_t got;

		while ((got = waitpid(pids[i], &st, WNOHANG)) == 0 && ct_time_mono_s() < until)
			usleep(50000);
		if (got == 0) {
			fprintf(stderr, "bench_sched: a server did not stop in %d s: killed\n", STOP_S);
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &st, 0);
			exit(1);
		}
		check_child(got, pids[i], st, "a server");
	}
}

/* The project (in a child), in a new temporary directory (*dir_out). */
static void setup(const struct opts *o, struct host *hosts, char **dir_out)
{
	char *dir = malloc(4200);
	pid_t pid;

	snprintf(dir, 4200, "%s/ctune-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		die("mkdtemp", CT_EIO);
	for (int i = 0; i < o->hosts * o->nsizes; i++) {
		unsigned char raw[16];
		ct_random_bytes(raw, sizeof(raw));
		ct_hex_encode(raw, sizeof(raw), hosts[i].key);
		ct_random_bytes(raw, sizeof(raw));
		ct_hex_encode(raw, sizeof(raw), hosts[i].cpid);
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		prepare(o, hosts, dir);
	wait_child(pid, "set-up");
	*dir_out = dir;
}

/* ---- the load ---------------------------------------------------------- */

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	return ct_buf_append(ud, p, sz * n) == 0 ? sz * n : 0;
}

static void build_request(struct ct_buf *b, struct host *h)
{
	ct_buf_reset(b);
	ct_buf_appendf(b, "<scheduler_request><authenticator>%s</authenticator><host_id>%" PRId64
		       "</host_id><host_cpid>%s</host_cpid><host><hostname>sim</hostname>"
		       "<ncpus>4</ncpus><device><name>sim</name><type>gpu</type><conforming>1"
		       "</conforming></device></host>", h->key, h->id, h->cpid);
	for (int i = 0; i < h->nheld; i++)
		ct_buf_appendf(b, "<result><name>%s</name><status>error</status><error_code>-1"
			       "</error_code></result>", h->held[i]);
	ct_buf_appends(b, "<other_results/><work_req><want_results>4</want_results></work_req>"
		       "</scheduler_request>");
}

/* Pick host id and result names out of the reply (the format is ours). */
static int parse_reply(const char *r, struct host *h)
{
	const char *p = strstr(r, "<host_id>");
	int got = 0;

	if (p)
		h->id = strtoll(p + 9, NULL, 10);
	h->nheld = 0;
	for (p = strstr(r, "<result>"); p; p = strstr(p + 1, "<result>")) {
		const char *n = strstr(p, "<name>"), *e = n ? strstr(n, "</name>") : NULL;
		if (!n || !e || h->nheld == 8)
			break;
		snprintf(h->held[h->nheld++], sizeof(h->held[0]), "%.*s", (int)(e - n - 6), n + 6);
		got++;
	}
	return strstr(r, "<error>") ? -1 : got;
}

/* h's quota spent: a new host of the same account from its next call
 * on (a new client id, no host id yet; it holds nothing). */
static void renew_host(struct host *h)
{
	unsigned char raw[16];

	ct_random_bytes(raw, sizeof(raw));
	ct_hex_encode(raw, sizeof(raw), h->cpid);
	h->id = 0;
	h->nheld = 0;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct ct_buf req = CT_BUF_INIT(1 << 20), reply = CT_BUF_INIT(1 << 24);
	CURL *curl = curl_easy_init();
	char url[256];
	int i = 0;

	snprintf(url, sizeof(url), "%s/rpc/scheduler", c->url);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
	while (ct_time_mono_s() < g_deadline) {
		struct host *h = &c->hosts[i++ % c->nhosts];
		build_request(&req, h);
		ct_buf_reset(&reply);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.data);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)req.len);
		double t0 = ct_time_mono_s();
		CURLcode cc = curl_easy_perform(curl);
		double ms = (ct_time_mono_s() - t0) * 1000;
		int got = cc == CURLE_OK ? parse_reply(ct_buf_cstr(&reply), h) : -1;
		if (got < 0) {
			c->errors++;
			continue;
		}
		if (got == 0)
			renew_host(h);
		c->dispatched += got;
		c->empty += got == 0;
		if (c->nlat == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 4096;
			c->lat = realloc(c->lat, c->cap * sizeof(double));
		}
		c->lat[c->nlat++] = ms;
	}
	curl_easy_cleanup(curl);
	ct_buf_free(&req);
	ct_buf_free(&reply);
	return NULL;
}

/* --pages: one client fetching web pages at o->pages a second. */
struct pager {
	const char *url;
	int rate;
	int64_t pages, errors;
};

static size_t on_discard(char *p, size_t sz, size_t n, void *ud)
{
	(void)p, (void)ud;
	return sz * n;
}

static void *pager_main(void *arg)
{
	static const char *const paths[] = { "/", "/jobs", "/job/1", "/users", "/status",
					     "/hosts" };
	struct pager *pg = arg;
	CURL *curl = curl_easy_init();
	char url[256];
	long code = 0;

	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_discard);
	for (int i = 0; ct_time_mono_s() < g_deadline; i++) {
		double t0 = ct_time_mono_s();
		snprintf(url, sizeof(url), "%s%s", pg->url, paths[i % 6]);
		curl_easy_setopt(curl, CURLOPT_URL, url);
		if (curl_easy_perform(curl) == CURLE_OK &&
		    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200)
			pg->pages++;
		else
			pg->errors++;
		double left = 1.0 / pg->rate - (ct_time_mono_s() - t0);
		if (left > 0)
			usleep((useconds_t)(left * 1e6));
	}
	curl_easy_cleanup(curl);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct row {
	int64_t wus, after, rpcs, errors, dispatched, empty, pages;
	double seconds, p50, p99, load, server_cpu;
};

/* CPU seconds (user + system) the servers' processes used so far. */
static double servers_cpu(const struct opts *o, const pid_t *pids)
{
	double sum = 0;

	for (int i = 0; i < o->servers; i++) {
		char path[64], buf[1024], *p;
		unsigned long ut = 0, st = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			   &st) == 2)
			sum += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		fclose(f);
	}
	return sum;
}

/* One measurement on the running servers: o->clients clients, each on
 * its share of the hosts, for o->seconds. */
static void measure(const struct opts *o, struct host *hosts, const pid_t *pids,
		    struct row *r)
{
	struct client *cl = calloc((size_t)o->clients, sizeof(*cl));
	pthread_t *tid = calloc((size_t)o->clients, sizeof(*tid)), ptid;
	struct pager pg = { .url = g_urls[0], .rate = o->pages };
	int per = o->hosts / o->clients;
	size_t n = 0;
	double t0 = ct_time_mono_s(), cpu0 = servers_cpu(o, pids);
	FILE *f;

	g_deadline = t0 + o->seconds;
	for (int i = 0; i < o->clients; i++) {
		cl[i].url = g_urls[i % o->servers];
		cl[i].hosts = hosts + i * per;
		cl[i].nhosts = per;
		pthread_create(&tid[i], NULL, client_main, &cl[i]);
	}
	if (o->pages > 0)
		pthread_create(&ptid, NULL, pager_main, &pg);
	for (int i = 0; i < o->clients; i++)
		pthread_join(tid[i], NULL);
	if (o->pages > 0)
		pthread_join(ptid, NULL);
	r->seconds = ct_time_mono_s() - t0;
	r->server_cpu = servers_cpu(o, pids) - cpu0;
	for (int i = 0; i < o->clients; i++)
		n += cl[i].nlat;
	double *all = malloc((n ? n : 1) * sizeof(double));
	n = 0;
	for (int i = 0; i < o->clients; i++) {
		memcpy(all + n, cl[i].lat, cl[i].nlat * sizeof(double));
		n += cl[i].nlat;
		r->dispatched += cl[i].dispatched;
		r->empty += cl[i].empty;
		r->errors += cl[i].errors;
		free(cl[i].lat);
	}
	qsort(all, n, sizeof(double), cmp_d);
	r->rpcs = (int64_t)n;
	r->p50 = n ? all[n / 2] : 0;
	r->p99 = n ? all[(size_t)(n * 0.99)] : 0;
	r->pages = pg.pages;
	r->errors += pg.errors;
	f = fopen("/proc/loadavg", "r");
	if (f == NULL || fscanf(f, "%lf", &r->load) != 1)
		r->load = -1;
	if (f)
		fclose(f);
	free(all);
	free(cl);
	free(tid);
}

static void print_row(const struct opts *o, const struct row *r)
{
	printf("| %s | %d | %d | %d | %" PRId64 " | %" PRId64 " | %d | %s | %d | %.1f | %" PRId64
	       " | %" PRId64 " | %" PRId64 " | %" PRId64 " | %.0f | %.2f | %.2f | %.2f | %.0f | %"
	       PRId64 " | %.2f |\n",
	       o->ndb > 1 ? "external (several)" : o->db ? "external" : "embedded", o->servers,
	       o->clients, o->hosts, r->wus, r->after, o->jobs, o->daemons ? "yes" : "no", o->pages,
	       r->seconds, r->rpcs, r->errors, r->empty, r->dispatched,
	       r->dispatched / r->seconds, r->p50,
	       r->p99, r->rpcs ? r->server_cpu * 1000 / r->rpcs : 0.0,
	       r->dispatched ? 2 * r->dispatched / r->server_cpu : 0.0, r->pages, r->load);
	fflush(stdout);
}

/* The scheduler's rate goal, for the row at 100,000 unsent WUs when the run
 * has its conditions (4 clients or more, the daemons, pages). */
static void print_rate_goal(const struct opts *o, const struct row *rows)
{
	for (int k = 0; k < o->nsizes; k++) {
		double rate = rows[k].seconds > 0 ? rows[k].dispatched / rows[k].seconds : 0;

		if (rows[k].wus != 100000 || o->clients < 4 || !o->daemons || o->pages < 1)
			continue;
		printf("dispatches/s at 100000 unsent WUs, %d clients, daemons and %d pages/s: "
		       "%.0f (goal >= 2000: %s; load %.2f)\n", o->clients, o->pages, rate,
		       rate >= 2000 ? "met" : "not met", rows[k].load);
	}
}

static void run(const struct opts *o)
{
	struct host *hosts = calloc((size_t)(o->hosts * o->nsizes), sizeof(*hosts));
	struct row rows[MAX_SIZES] = { 0 };
	pid_t pids[MAX_SERVERS];
	char *dir = NULL;
	int64_t have = 0;

	setup(o, hosts, &dir);
	printf("| db | servers | clients | hosts | unsent WUs | after | jobs | daemons | pages/s | seconds "
	       "| RPCs | errors | RPCs without work | dispatches | dispatches/s | RPC p50 ms | RPC p99 ms "
	       "| server CPU ms/RPC | dispatches/s on 2 cores | pages | load |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	       "---|\n");
	for (int k = 0; k < o->nsizes; k++) {
		/* each measurement starts from its size of unsent WUs (what the
		 * last one dispatched is topped up); "after" says how much of it
		 * was left at its end */
		in_child(grow, o, dir, have, o->wus[k], "growing the unsent work");
		if (read_unsent(dir) < o->wus[k])
			have += o->wus[k] - read_unsent(dir);
		start_servers(o, dir, pids);
		rows[k].wus = o->wus[k];
		measure(o, hosts + k * o->hosts, pids, &rows[k]);
		stop_servers(o, pids);
		in_child(grow, o, dir, have, 0, "counting the unsent work");
		rows[k].after = read_unsent(dir);
		print_row(o, &rows[k]);
	}
	if (o->nsizes > 1)
		printf("\nRPC p50 at %" PRId64 " unsent WUs over p50 at %" PRId64 ": %.2fx (goal <= 2x)\n",
		       o->wus[o->nsizes - 1], o->wus[0], rows[o->nsizes - 1].p50 / rows[0].p50);
	print_rate_goal(o, rows);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(dir);
	free(hosts);
}

/* "1000,10000,1000000" into o->wus, ascending. Returns 0 or -1. */
static int parse_sizes(const char *arg, struct opts *o)
{
	char *end;

	o->nsizes = 0;
	for (const char *p = arg; *p; p = *end ? end + 1 : end) {
		long long v = strtoll(p, &end, 10);
		if (end == p || v < 1 || (*end && *end != ',') || o->nsizes == MAX_SIZES ||
		    (o->nsizes > 0 && v <= o->wus[o->nsizes - 1]))
			return -1;
		o->wus[o->nsizes++] = v;
	}
	return o->nsizes > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "clients", 1, NULL, 'c' }, { "hosts", 1, NULL, 'H' }, { "seconds", 1, NULL, 's' },
		{ "wus", 1, NULL, 'w' }, { "http-threads", 1, NULL, 't' }, { "db", 1, NULL, 'd' },
		{ "servers", 1, NULL, 'S' }, { "jobs", 1, NULL, 'j' }, { "daemons", 0, NULL, 'D' },
		{ "pages", 1, NULL, 'p' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct opts o = { .clients = 4, .hosts = 200, .seconds = 10, .wus = { 20000 }, .nsizes = 1,
			  .http_threads = 4, .servers = 1, .jobs = 1 };
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o.clients = atoi(optarg); break;
		case 'H': o.hosts = atoi(optarg); break;
		case 's': o.seconds = atoi(optarg); break;
		case 'w':
			if (parse_sizes(optarg, &o) < 0) {
				fprintf(stderr, "bench_sched: --wus: ascending counts, comma-separated "
					"(at most %d)\n", MAX_SIZES);
				return 2;
			}
			break;
		case 'j': o.jobs = atoi(optarg); break;
		case 'D': o.daemons = 1; break;
		case 'p': o.pages = atoi(optarg); break;
		case 't': o.http_threads = atoi(optarg); break;
		case 'd':
			if (o.ndb == MAX_SERVERS) {
				fprintf(stderr, "bench_sched: at most %d --db\n", MAX_SERVERS);
				return 2;
			}
			o.dbs[o.ndb++] = optarg;
			o.db = o.dbs[0];
			break;
		case 'S': o.servers = atoi(optarg); break;
		default:
			printf("usage: bench_sched [--clients N] [--hosts H] [--seconds S] "
			       "[--wus W[,W2...]] [--jobs J] [--daemons] [--pages P] "
			       "[--http-threads T] [--servers K] [--db mysql://...]...\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (o.servers > 1 && o.db == NULL) {
		fprintf(stderr, "bench_sched: --servers %d needs --db (the embedded database "
			"is one process's)\n", o.servers);
		return 2;
	}
	if (o.clients < 1 || o.hosts < o.clients || o.seconds < 1 || o.jobs < 1 || o.jobs > 64 ||
	    o.pages < 0 || o.http_threads < 1 || o.servers < 1 || o.servers > MAX_SERVERS) {
		fprintf(stderr, "bench_sched: bad arguments\n");
		return 2;
	}
	ct_log_set_level(CT_LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	run(&o);
	curl_global_cleanup();
	return 0;
}
