/*
 * bench_daemons.c - a backlog for the validator and assimilator daemons,
 * to measure their throughput with one and with several instances
 * (bench/bench_daemons.sh runs `ctune-server run --roles validator`
 * processes on it, then assimilators, and times them).
 *
 *   bench_daemons --dir DIR --db mysql://... [--jobs M] [--shards S]
 *
 * Makes the project DIR (which must not exist) on the external database,
 * M jobs of one round of S shards each (a tiny model, quorum 2), and
 * uploads both replicas of every WU (the same bytes from two hosts, as
 * conforming clients send them) with the WU flagged for validation: what
 * the validator finds after a burst of reports. Prints the number of WUs.
 */
#include "data/db.h"
#include "data/result_state.h"
#include "data/migrate_lock.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "daemons/wg.h"
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_tokens.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	const char *dir, *db;
	int jobs, shards;
};

static int make_inputs(const char *dir, const struct ct_model_config *cfg, char *model,
		       char *train, char *eval)
{
	static ct_tok tok[20000];
	struct ct_gpt2 m = { 0 };
	int rc;

	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++)
		tok[i] = (ct_tok)((i * 2654435761u) % (unsigned)cfg->V);
	rc = ct_path_join(model, 4096, dir, "bench-model.bin");
	if (rc == 0) rc = ct_path_join(train, 4096, dir, "bench-train.bin");
	if (rc == 0) rc = ct_path_join(eval, 4096, dir, "bench-eval.bin");
	if (rc == 0) rc = ct_gpt2_alloc(&m, cfg);
	if (rc == 0) rc = ct_gpt2_init_random(cfg, 42, m.params);
	if (rc == 0) rc = ct_gpt2_save(model, cfg, m.params);
	if (rc == 0) rc = ct_tokens_save(train, tok, 16000);
	if (rc == 0) rc = ct_tokens_save(eval, tok + 16000, 4000);
	ct_gpt2_free(&m);
	return rc;
}

/* The update every replica uploads: base + about lr per weight. */
static int make_delta(struct ct_server *srv, const char *msha, struct ct_buf *out)
{
	struct ct_gpt2 base = { 0 };
	unsigned char bsha[32];
	char path[4096];
	float *w = NULL;
	int rc;

	rc = ct_server_download_path(srv, msha, path, sizeof(path));
	if (rc == 0) rc = ct_gpt2_load(path, &base);
	if (rc == 0) rc = ct_hex_decode(msha, bsha, 32);
	if (rc == 0 && (w = malloc(base.lay.total * sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0) {
		const struct ct_delta_model dm = { (uint32_t)base.cfg.maxT, (uint32_t)base.cfg.V,
			(uint32_t)base.cfg.Vp, (uint32_t)base.cfg.L, (uint32_t)base.cfg.NH,
			(uint32_t)base.cfg.C };
		for (size_t i = 0; i < base.lay.total; i++)
			w[i] = base.params[i] + ((i * 7 + 3) % 5 == 0 ? 5e-4f : -5e-4f);
		rc = ct_delta_encode(base.params, w, base.lay.total, &dm, bsha, CT_DELTA_LOSSLESS,
				     -1, out);
	}
	free(w);
	ct_gpt2_free(&base);
	return rc < 0 ? rc : 0;
}

/* Two users with a host each: ids in uid[2], hid[2]. */
static int make_hosts(struct ct_db *db, int64_t uid[2], int64_t hid[2])
{
	int64_t now = ct_db_now(db);
	int rc = 0;

	for (int k = 0; rc >= 0 && k < 2; k++) {
		char uname[32], auth[65];
		snprintf(uname, sizeof(uname), "bench%d", k);
		ct_sha256_hex(uname, strlen(uname), auth);
		rc = CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
				"auth_hash) VALUES (?,?,?,?,?)", now, uname, uname, "x", auth);
		uid[k] = ct_db_last_id(db);
		if (rc >= 0)
			rc = CT_DB_EXEC(db, "INSERT INTO host (create_time, userid, host_cpid) "
					"VALUES (?,?,?)", now, uid[k], auth + 32);
		hid[k] = ct_db_last_id(db);
	}
	return rc < 0 ? rc : 0;
}

/* Every unsent result of the project: reported by host (result index in
 * its WU) with the delta uploaded. */
static int report_all(struct ct_server *srv, struct ct_db *db, const int64_t uid[2],
		      const int64_t hid[2], const struct ct_buf *delta)
{
	struct ct_db_res *res = NULL;
	int64_t now = ct_db_now(db);
	char path[4096];
	int rc, n = 0;

	rc = CT_DB_QUERY(db, &res, "SELECT id, name FROM result WHERE server_state=? ORDER BY id",
			 CT_RS_UNSENT);
	while (rc >= 0 && ct_db_next(res) > 0) {
		int k = n++ % 2;
		rc = ct_server_upload_path(srv, ct_db_str(res, 1), path, sizeof(path));
		if (rc >= 0)
			rc = ct_file_write_atomic(path, delta->data, delta->len, 0600);
		if (rc >= 0)
			rc = CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=?, hostid=?, "
					"userid=?, sent_time=?, received_time=?, upload_time=?, "
					"upload_size=?, conforming=1 WHERE id=?",
					CT_RS_OVER, CT_RO_SUCCESS, hid[k], uid[k], now, now, now,
					(int64_t)delta->len, ct_db_int(res, 0));
	}
	ct_db_res_free(res);
	if (rc >= 0)
		rc = ct_db_execa(db, "UPDATE workunit SET need_validate=1", NULL, 0);
	return rc < 0 ? rc : 0;
}

static int run(const struct opts *o)
{
	const struct ct_model_config cfg = { .maxT = 64, .V = 256, .L = 1, .NH = 2, .C = 32,
					    .Vp = 256 };
	struct ct_project_opts po = { .name = "bench", .listen = "127.0.0.1:0", .db_url = o->db };
	char model[4096], train[4096], eval[4096], datadir[4200];
	struct ct_server srv;
	struct ct_db *db = NULL;
	struct ct_buf delta = CT_BUF_INIT(0);
	int64_t jobid = 0, uid[2], hid[2], nwu = 0;
	char msha[65] = "";
	int rc;

	rc = ct_project_init(o->dir, &po);
	if (rc == 0) rc = ct_server_load(&srv, o->dir, NULL);
	if (rc == 0) rc = ct_path_join(datadir, sizeof(datadir), srv.dir, "db");
	if (rc == 0) rc = ct_db_global_init(srv.db_url, datadir, o->dir);
	if (rc == 0) rc = ct_db_open(&db, srv.clock);
	if (rc == 0) rc = ct_db_migrate(db);
	if (rc == 0) rc = make_inputs(o->dir, &cfg, model, train, eval);
	for (int j = 0; rc == 0 && j < o->jobs; j++) {
		struct ct_job_spec spec = {
			.name = "bench", .shards = o->shards, .rounds = 1, .steps = 1, .batch = 2,
			.seq = 16, .lr = 1e-3, .quorum = 2, .replicas = 2, .max_error_results = 8,
			.max_total_results = 4, .tolerance = 1e-3, .loss_margin = 1.0,
			.adaptive = 0, .model_path = model, .train_path = train, .eval_path = eval,
		};
		rc = ct_wg_submit(&srv, db, &spec, &jobid);
	}
	if (rc == 0) {
		struct ct_db_res *res = NULL;
		rc = ct_db_querya(db, &res, "SELECT model_sha256 FROM workunit LIMIT 1", NULL, 0);
		if (rc == 0 && ct_db_next(res) > 0)
			snprintf(msha, sizeof(msha), "%s", ct_db_str(res, 0));
		ct_db_res_free(res);
	}
	if (rc == 0) rc = make_delta(&srv, msha, &delta);
	if (rc == 0) rc = make_hosts(db, uid, hid);
	if (rc == 0) rc = report_all(&srv, db, uid, hid, &delta);
	if (rc == 0) rc = ct_db_query_inta(db, &nwu, "SELECT COUNT(*) FROM workunit", NULL, 0);
	if (rc == 0)
		printf("%lld\n", (long long)nwu);
	ct_buf_free(&delta);
	ct_db_close(db);
	ct_db_global_end();
	if (rc < 0)
		fprintf(stderr, "bench_daemons: %s\n", ct_errmsg(rc));
	return rc < 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", 1, NULL, 'd' }, { "db", 1, NULL, 'D' }, { "jobs", 1, NULL, 'j' },
		{ "shards", 1, NULL, 's' }, { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct opts o = { .jobs = 20, .shards = 4 };
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'D': o.db = optarg; break;
		case 'j': o.jobs = atoi(optarg); break;
		case 's': o.shards = atoi(optarg); break;
		default:
			printf("usage: bench_daemons --dir DIR --db mysql://... [--jobs M] "
			       "[--shards S]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (o.dir == NULL || o.db == NULL || o.jobs < 1 || o.shards < 1) {
		fprintf(stderr, "bench_daemons: --dir and --db are needed, --jobs and --shards > 0\n");
		return 2;
	}
	ct_log_set_level(CT_LOG_WARN);
	return run(&o);
}
