/*
 * bench_validate.c - what validating one work unit costs the server, by
 * model shape and quorum: a project with the embedded database, a job of
 * one WU whose Q replicas are uploaded (lossless deltas, as clients send
 * them), then the real validator daemon (ct_validator_run_once) decides
 * it. Prints one table row: time, peak RSS of the validation (VmHWM after
 * resetting it with /proc/self/clear_refs, less nothing: the absolute
 * figure, and the growth over the process before it), both against the
 * model's size.
 *
 *   bench_validate [--shape 124m|tiny] [--quorum Q] [--distinct]
 *                  [--probe-tokens N] [--eval-device D]
 *
 * --eval-device: the project's daemons.eval_device (auto, cpu, opencl).
 *
 * --distinct: each replica differs from the others by a tiny amount and
 * reports a non-conforming device, so the quorum cannot agree by hash and
 * streams the uploads pair by pair (the tolerance path); without it the
 * replicas are identical (conforming devices) and agree by hash.
 */
#include "daemons/daemons.h"
#include "data/db.h"
#include "data/result_state.h"
#include "data/migrate_lock.h"
#include "cmd/roles.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "daemons/wg.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_time.h"
#include "ct_tokens.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	const char *shape, *eval_device;
	int quorum, distinct, probe_tokens;
};

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f != NULL)
		fclose(f);
	return v;
}

static int reset_hwm(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f == NULL)
		return -1;
	fputs("5", f);
	return fclose(f);
}

static int make_inputs(const char *dir, const struct ct_model_config *cfg, char *model,
		       char *train, char *eval)
{
	size_t n = 20000;
	ct_tok *tok = malloc(n * sizeof(ct_tok));
	struct ct_gpt2 m = { 0 };
	int rc;

	if (tok == NULL)
		return CT_ENOMEM;
	for (size_t i = 0; i < n; i++)
		tok[i] = (ct_tok)((i * 2654435761u) % (unsigned)cfg->V);
	rc = ct_path_join(model, 4096, dir, "model.bin");
	if (rc == 0) rc = ct_path_join(train, 4096, dir, "train.bin");
	if (rc == 0) rc = ct_path_join(eval, 4096, dir, "eval.bin");
	if (rc == 0) rc = ct_gpt2_alloc(&m, cfg);
	if (rc == 0) rc = ct_gpt2_init_random(cfg, 42, m.params);
	if (rc == 0) rc = ct_gpt2_save(model, cfg, m.params);
	if (rc == 0) rc = ct_tokens_save(train, tok, 10000);
	if (rc == 0) rc = ct_tokens_save(eval, tok + 10000, 10000);
	ct_gpt2_free(&m);
	free(tok);
	return rc;
}

/* Q users and hosts; each gets one replica of the WU, uploaded. */
static int upload_replicas(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			   const struct opts *o)
{
	struct ct_db_res *res = NULL;
	struct ct_gpt2 base = { 0 };
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char bsha[32];
	char msha[65] = "", path[4096], name[96];
	int64_t wuid = 0, now = ct_db_now(db);
	float *w = NULL;
	int rc;

	rc = CT_DB_QUERY(db, &res, "SELECT id, model_sha256 FROM workunit WHERE jobid=?",
			 jobid);
	if (rc == 0 && ct_db_next(res) > 0) {
		wuid = ct_db_int(res, 0);
		snprintf(msha, sizeof(msha), "%s", ct_db_str(res, 1));
	}
	ct_db_res_free(res);
	if (rc == 0) rc = ct_server_download_path(srv, msha, path, sizeof(path));
	if (rc == 0) rc = ct_gpt2_load(path, &base);
	if (rc == 0) rc = ct_hex_decode(msha, bsha, 32);
	if (rc < 0)
		return rc;
	w = malloc(base.lay.total * sizeof(float));
	if (w == NULL)
		return CT_ENOMEM;
	for (int k = 0; rc == 0 && k < o->quorum; k++) {
		const struct ct_delta_model dm = { (uint32_t)base.cfg.maxT, (uint32_t)base.cfg.V,
			(uint32_t)base.cfg.Vp, (uint32_t)base.cfg.L, (uint32_t)base.cfg.NH,
			(uint32_t)base.cfg.C };
		char uname[32], auth[65];
		int64_t uid, hid, rid = 0;

		/* an update of about lr per weight, as one AdamW step makes */
		for (size_t i = 0; i < base.lay.total; i++)
			w[i] = base.params[i] + ((i * 7 + 3) % 5 == 0 ? 5e-4f : -5e-4f) +
			       (o->distinct ? 1e-7f * (float)k : 0.0f);
		snprintf(uname, sizeof(uname), "user%d", k);
		ct_sha256_hex(uname, strlen(uname), auth);
		rc = CT_DB_EXEC(db, "INSERT INTO `user` (create_time, name, email, passwd_hash, "
				"auth_hash) VALUES (?,?,?,?,?)", now, uname, uname, "x",
				auth);
		uid = ct_db_last_id(db);
		if (rc >= 0)
			rc = CT_DB_EXEC(db, "INSERT INTO host (create_time, userid, host_cpid) "
					"VALUES (?,?,?)", now, uid, auth + 32);
		hid = ct_db_last_id(db);
		if (rc >= 0)
			rc = CT_DB_QUERY(db, &res, "SELECT id, name FROM result WHERE workunitid=? "
					 "AND server_state=? ORDER BY id LIMIT 1", wuid,
					 CT_RS_UNSENT);
		if (rc >= 0 && ct_db_next(res) > 0) {
			rid = ct_db_int(res, 0);
			snprintf(name, sizeof(name), "%s", ct_db_str(res, 1));
		}
		ct_db_res_free(res);
		res = NULL;
		out.len = 0;
		if (rc >= 0)
			rc = ct_delta_encode(base.params, w, base.lay.total, &dm, bsha,
					     CT_DELTA_LOSSLESS, -1, &out);
		if (rc >= 0)
			rc = ct_server_upload_path(srv, name, path, sizeof(path));
		if (rc >= 0)
			rc = ct_file_write_atomic(path, out.data, out.len, 0600);
		if (rc >= 0)
			rc = CT_DB_EXEC(db, "UPDATE result SET server_state=?, outcome=?, hostid=?, "
					"userid=?, sent_time=?, received_time=?, upload_time=?, "
					"upload_size=?, conforming=? WHERE id=?",
					CT_RS_OVER, CT_RO_SUCCESS, hid, uid, now, now, now,
					(int64_t)out.len, !o->distinct, rid);
		rc = rc < 0 ? rc : 0;
	}
	if (rc == 0)
		rc = CT_DB_EXEC(db, "UPDATE workunit SET need_validate=1, target_nresults=? "
				"WHERE id=?", o->quorum, wuid);
	free(w);
	ct_gpt2_free(&base);
	ct_buf_free(&out);
	return rc < 0 ? rc : 0;
}

/* daemons.eval_device = dev in the new project's config (its last
 * section is [daemons]). */
static int set_eval_device(const char *dir, const char *dev)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, CT_SERVER_CONF);
	f = fopen(path, "a");
	if (f == NULL)
		return ct_error(CT_EIO, "%s: cannot append", path);
	fprintf(f, "\n[daemons]\neval_device = %s\n", dev);
	return fclose(f) == 0 ? 0 : ct_error(CT_EIO, "%s: write", path);
}

static int run(const struct opts *o, const struct ct_model_config *cfg)
{
	const struct ct_project_opts po = { .name = "bench", .listen = "127.0.0.1:0" };
	char tmpl[] = "/tmp/bench-validate-XXXXXX", *dir = mkdtemp(tmpl);
	char model[4096], train[4096], eval[4096], datadir[4200], logdir[4200];
	struct ct_server srv;
	struct ct_db *db = NULL;
	int64_t jobid = 0, nvalid = 0;
	double t0, dt;
	long rss0, hwm;
	int rc;

	if (dir == NULL)
		return CT_EIO;
	rc = ct_project_init(dir, &po);
	if (rc == 0 && o->eval_device != NULL) rc = set_eval_device(dir, o->eval_device);
	if (rc == 0) rc = ct_server_load(&srv, dir, NULL);
	if (rc == 0) rc = ct_path_join(datadir, sizeof(datadir), srv.dir, "db");
	if (rc == 0) rc = ct_path_join(logdir, sizeof(logdir), srv.dir, "log");
	if (rc == 0) rc = ct_db_global_init(srv.db_url, datadir, logdir);
	if (rc == 0) rc = ct_db_open(&db, srv.clock);
	if (rc == 0) rc = ct_db_migrate(db);
	if (rc == 0) rc = make_inputs(dir, cfg, model, train, eval);
	if (rc == 0) {
		struct ct_job_spec spec = {
			.name = "bench", .shards = 1, .rounds = 1, .steps = 1, .batch = 2,
			.seq = 64, .lr = 1e-3, .quorum = o->quorum, .replicas = o->quorum,
			.max_error_results = 8, .max_total_results = 2 * o->quorum,
			.tolerance = 1e-3, .loss_margin = 1.0, .adaptive = 0,
			.model_path = model, .train_path = train, .eval_path = eval,
		};

		rc = ct_wg_submit(&srv, db, &spec, &jobid);
	}
	if (rc == 0 && o->probe_tokens > 0)
		rc = CT_DB_EXEC(db, "UPDATE job SET probe_tokens=? WHERE id=?",
				o->probe_tokens, jobid) < 0 ? CT_EDB : 0;
	if (rc == 0)
		rc = upload_replicas(&srv, db, jobid, o);
	if (rc < 0)
		goto out;
	rss0 = status_kb("VmRSS:");
	if (reset_hwm() < 0)
		fprintf(stderr, "bench_validate: cannot reset VmHWM; the peak includes the setup\n");
	t0 = ct_time_mono_s();
	rc = ct_validator_run_once(&srv, db);
	dt = ct_time_mono_s() - t0;
	hwm = status_kb("VmHWM:");
	if (rc >= 0)
		rc = CT_DB_QUERY_INT(db, &nvalid, "SELECT COUNT(*) FROM result WHERE jobid=? AND "
				     "validate_state=?", jobid, CT_VS_VALID);
	if (rc >= 0) {
		struct ct_gpt2_layout lay;
		double mb;

		ct_gpt2_layout(cfg, &lay);
		mb = (double)lay.total * 4.0 / 1048576.0;

		printf("| %s | %d | %s | %lld | %.1f | %.0f | %.0f (%.2fx) | %.0f (%.2fx) |\n",
		       o->shape, o->quorum, o->distinct ? "tolerance" : "hash",
		       (long long)nvalid, dt, mb, hwm / 1024.0, hwm / 1024.0 / mb,
		       (hwm - rss0) / 1024.0, (hwm - rss0) / 1024.0 / mb);
		rc = 0;
	}
out:
	ct_db_close(db);
	ct_db_global_end();
	if (rc < 0)
		fprintf(stderr, "bench_validate: %s\n", ct_errmsg(rc));
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_validate: could not remove %s\n", dir);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "shape", 1, NULL, 's' }, { "quorum", 1, NULL, 'q' },
		{ "distinct", 0, NULL, 'd' }, { "probe-tokens", 1, NULL, 'p' },
		{ "eval-device", 1, NULL, 'e' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct opts o = { .shape = "tiny", .quorum = 2 };
	struct ct_model_config cfg;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.shape = optarg; break;
		case 'q': o.quorum = atoi(optarg); break;
		case 'd': o.distinct = 1; break;
		case 'p': o.probe_tokens = atoi(optarg); break;
		case 'e': o.eval_device = optarg; break;
		default:
			printf("usage: bench_validate [--shape 124m|tiny] [--quorum Q] [--distinct] "
			       "[--probe-tokens N] [--eval-device D]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (strcmp(o.shape, "124m") == 0)
		cfg = (struct ct_model_config){ .maxT = 1024, .V = 50257, .Vp = 50304, .L = 12,
					       .NH = 12, .C = 768 };
	else if (strcmp(o.shape, "tiny") == 0)
		cfg = (struct ct_model_config){ .maxT = 64, .V = 29, .Vp = 32, .L = 2, .NH = 4,
					       .C = 64 };
	else {
		fprintf(stderr, "bench_validate: --shape 124m or tiny\n");
		return 2;
	}
	if (o.quorum < 1 || o.quorum > 16) {
		fprintf(stderr, "bench_validate: --quorum 1..16\n");
		return 2;
	}
	printf("| shape | quorum | agreement | valid | validate s | model MiB | peak RSS MiB "
	       "(x model) | growth MiB (x model) |\n|---|---|---|---|---|---|---|---|\n");
	return run(&o, &cfg) < 0 ? 1 : 0;
}
