/*
 * bench_sched.c - scheduler load generator: a ctune-server front end in
 * this process (embedded database in a temporary project, or --db URL)
 * and client threads that play many simulated hosts over loopback HTTP.
 * Each host, each call, reports the results it got last time (as client
 * errors, so no uploads are involved) and asks for 4 new ones, which is
 * the steady state of a busy project. Prints dispatches/s and the RPC
 * latency percentiles.
 *
 *   bench_sched [--clients N] [--hosts H] [--seconds S] [--wus W]
 *               [--http-threads T] [--servers K] [--db mysql://...]...
 *
 * --servers K: K scheduler front ends, each a process of its own (as K
 * `ctune-server run` instances would be) on one project directory, the
 * client threads spread over them; server i uses the i-th --db (cycled),
 * so `--servers 2 --db URL1 --db URL2` puts them on two Galera nodes.
 * More than one server needs an external database. The set-up and every
 * server run in child processes; this one only drives the load.
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

#include "account.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_time.h"
#include "ct_tokens.h"
#include "db.h"
#include "files.h"
#include "http.h"
#include "sched_load.h"
#include "sched_rpc.h"
#include "server.h"
#include "wg.h"

#define MAX_SERVERS 8

struct opts {
	int clients, hosts, seconds, wus, http_threads, servers, ndb;
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
	const struct ct_gpt2_config cfg = { .maxT = 64, .V = 256, .L = 2, .NH = 2, .C = 32,
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

/* In a child process: the project, its users and the job (then exit). */
static void prepare(const struct opts *o, struct host *hosts, const char *dir)
{
	struct ct_project_opts po = { .name = "bench", .listen = "127.0.0.1:0" };
	char p[4200], m[4200], t[4200], e[4200];
	struct ct_db *db = NULL;
	int64_t jobid;
	int rc;

	snprintf(p, sizeof(p), "%s/proj", dir);
	po.db_url = o->db;
	rc = ct_project_init(p, &po);
	if (rc == 0)
		rc = ct_server_load(&g_srv, p, o->db);
	snprintf(t, sizeof(t), "%s/proj/db", dir);
	if (rc == 0)
		rc = ct_db_global_init(g_srv.db_url, t, dir);
	if (rc == 0)
		rc = ct_db_open(&db, g_srv.clock);
	if (rc == 0)
		rc = ct_db_migrate(db);
	if (rc < 0)
		die("project", rc);
	for (int i = 0; i < o->hosts; i++) {
		char hash[65], email[64];
		ct_account_key_hash(hosts[i].key, hash);
		snprintf(email, sizeof(email), "u%d@bench", i);
		rc = ct_db_exec(db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
				"auth_hash) VALUES (?, ?, ?, 'x', ?)", "lsss", ct_db_now(db), email, email,
				hash);
		if (rc < 0)
			die("users", rc);
	}
	make_inputs(dir, m, t, e);
	struct ct_job_spec spec = { .name = "bench", .model_path = m, .train_path = t,
		.eval_path = e, .shards = 8, .rounds = 1, .steps = 1, .batch = 1, .seq = 8,
		.lr = 1e-3, .quorum = 2, .replicas = 2, .adaptive = 0 };
	rc = ct_wg_submit(&g_srv, db, &spec, &jobid);
	if (rc == 0)
		rc = ct_sched_load_clone(db, jobid, "bench", 0, o->wus, 2);
	if (rc < 0)
		die("job", rc);
	ct_db_close(db);
	ct_db_global_end();
	ct_server_free(&g_srv);
	exit(0);
}

/* In a child process: scheduler front end `idx` on the project in dir and
 * its database; writes its port to fd, serves until SIGTERM. */
static void serve(const struct opts *o, int idx, const char *dir, int fd)
{
	const char *url = o->ndb ? o->dbs[idx % o->ndb] : NULL;
	char p[4200], t[4200], thr[16];
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
	snprintf(t, sizeof(t), "%s/proj/db", dir);
	if (rc == 0)
		rc = ct_db_global_init(g_srv.db_url, t, dir);
	if (rc < 0)
		die("server", rc);
	ct_http_register_routes(&g_srv, ct_sched_routes);
	ct_http_register_routes(&g_srv, ct_files_routes);
	rc = ct_http_start(&g_srv, "127.0.0.1:0", &port);
	if (rc < 0)
		die("http", rc);
	if (write(fd, &port, sizeof(port)) != (ssize_t)sizeof(port))
		die("port", CT_EIO);
	close(fd);
	sigwait(&set, &sig);
	ct_http_stop(&g_srv);
	ct_db_global_end();
	ct_server_free(&g_srv);
	exit(0);
}

static void wait_child(pid_t pid, const char *what)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_sched: %s failed\n", what);
		exit(1);
	}
}

/* The project (in a child), then o->servers front ends; their PIDs in
 * pids, their URLs in g_urls. */
static void setup(const struct opts *o, struct host *hosts, char **dir_out, pid_t *pids)
{
	char *dir = malloc(4200);
	pid_t pid;

	snprintf(dir, 4200, "%s/ctune-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		die("mkdtemp", CT_EIO);
	for (int i = 0; i < o->hosts; i++) {
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
		c->dispatched += got;
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

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run(const struct opts *o)
{
	struct host *hosts = calloc((size_t)o->hosts, sizeof(*hosts));
	struct client *cl = calloc((size_t)o->clients, sizeof(*cl));
	pthread_t *tid = calloc((size_t)o->clients, sizeof(*tid));
	int64_t disp = 0, errs = 0;
	size_t n = 0;
	pid_t pids[MAX_SERVERS];
	char *dir = NULL;
	double t0;

	setup(o, hosts, &dir, pids);
	int per = o->hosts / o->clients;
	t0 = ct_time_mono_s();
	g_deadline = t0 + o->seconds;
	for (int i = 0; i < o->clients; i++) {
		cl[i].url = g_urls[i % o->servers];
		cl[i].hosts = hosts + i * per;
		cl[i].nhosts = per;
		pthread_create(&tid[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < o->clients; i++)
		pthread_join(tid[i], NULL);
	double el = ct_time_mono_s() - t0;
	for (int i = 0; i < o->clients; i++)
		n += cl[i].nlat;
	double *all = malloc((n ? n : 1) * sizeof(double));
	n = 0;
	for (int i = 0; i < o->clients; i++) {
		memcpy(all + n, cl[i].lat, cl[i].nlat * sizeof(double));
		n += cl[i].nlat;
		disp += cl[i].dispatched;
		errs += cl[i].errors;
	}
	qsort(all, n, sizeof(double), cmp_d);
	printf("| db | servers | clients | hosts | http threads | seconds | RPCs | errors | dispatches | dispatches/s | RPC p50 ms | RPC p99 ms |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	printf("| %s | %d | %d | %d | %d | %.1f | %zu | %" PRId64 " | %" PRId64 " | %.0f | %.2f | %.2f |\n",
	       o->ndb > 1 ? "external (several)" : o->db ? "external" : "embedded", o->servers,
	       o->clients, o->hosts, o->http_threads, el, n, errs, disp, disp / el,
	       n ? all[n / 2] : 0.0, n ? all[(size_t)(n * 0.99)] : 0.0);
	for (int i = 0; i < o->servers; i++)
		kill(pids[i], SIGTERM);
	for (int i = 0; i < o->servers; i++)
		wait_child(pids[i], "a server");
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(dir);
	free(all);
	for (int i = 0; i < o->clients; i++)
		free(cl[i].lat);
	free(cl);
	free(tid);
	free(hosts);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "clients", 1, NULL, 'c' }, { "hosts", 1, NULL, 'H' }, { "seconds", 1, NULL, 's' },
		{ "wus", 1, NULL, 'w' }, { "http-threads", 1, NULL, 't' }, { "db", 1, NULL, 'd' },
		{ "servers", 1, NULL, 'S' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct opts o = { .clients = 4, .hosts = 200, .seconds = 10, .wus = 20000,
			  .http_threads = 4, .servers = 1 };
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o.clients = atoi(optarg); break;
		case 'H': o.hosts = atoi(optarg); break;
		case 's': o.seconds = atoi(optarg); break;
		case 'w': o.wus = atoi(optarg); break;
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
			printf("usage: bench_sched [--clients N] [--hosts H] [--seconds S] [--wus W] "
			       "[--http-threads T] [--servers K] [--db mysql://...]...\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (o.servers > 1 && o.db == NULL) {
		fprintf(stderr, "bench_sched: --servers %d needs --db (the embedded database "
			"is one process's)\n", o.servers);
		return 2;
	}
	if (o.clients < 1 || o.hosts < o.clients || o.seconds < 1 || o.wus < 1 ||
	    o.http_threads < 1 || o.servers < 1 || o.servers > MAX_SERVERS) {
		fprintf(stderr, "bench_sched: bad arguments\n");
		return 2;
	}
	ct_log_set_level(CT_LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	run(&o);
	curl_global_cleanup();
	return 0;
}
