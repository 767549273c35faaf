/*
 * assimilator.c - the daemon that closes rounds (role "assimilator";
 * DESIGN.md "Work model", daemons.h).
 *
 * A round is ready when every one of its K WUs has a canonical result.
 * Then: decode the K canonical results against the round's base model,
 * aggregate them (ct_avg: the job's method, mean by default), write the
 * new checkpoint into the content-addressed store (kept forever),
 * evaluate it on the job's eval tokens with the CPU reference, open round
 * r+1 from it with the work generator, or, after the last round, mark the
 * job done with its final model.
 *
 * Restartable and idempotent in this order: the store is content-addressed
 * (storing the same average twice is one file), ct_wg_open_round() does
 * nothing for a round that exists, and the last step is one transaction
 * that moves the round from OPEN to DONE with a conditional UPDATE and
 * marks its WUs assimilated. A crash anywhere before it repeats the work
 * (same bits: the average is deterministic); two assimilators racing on
 * one round both compute, and one of them records.
 *
 * The round check: an average that makes the job's eval loss worse than
 * its base's by more than the job's loss_margin is not applied; its WUs
 * are set aside and re-issued to other hosts (round_check()).
 *
 * WUs that failed (error_mask) are marked assimilated at once: the
 * transitioner already flagged their round and job.
 *
 * A LoRA job's round is aggregated differently: its results are adapters,
 * and the new model is the base merged with the exact mean of the shards'
 * adapter products (lora_round.h); the rest is the same. A compact-base
 * LoRA job's model is the widened base merged with the mean adapter pair,
 * and its next round opens on the same compact base, its WUs starting
 * from that pair, stored as an adapter file (store_adapters; the same
 * bits on a repeat, so one file).
 */
#include "daemons.h"
#include "daemon_pass.h"
#include "data/db.h"
#include "data/dl_job.h"
#include "data/dl_robust.h"
#include "data/dl_round.h"
#include "data/dl_workunit.h"
#include "data/dl.h"
#include "data/job_state.h"
#include "instance.h"
#include "eval.h"
#include "mean_stream.h"
#include "data/lora_job.h"
#include "validate/lora_robust.h"
#include "validate/lora_round.h"
#include "validate/robust.h"
#include "validate/robust_aside.h"
#include "sample.h"
#include "data/server.h"
#include "data/store.h"
#include "receipt.h"
#include "wg.h"
#include "data/wu_state.h"
#include "ct_avg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_file.h"
#include "ct_le.h"
#include "ct_log.h"
#include "ct_lora_file.h"
#include "ct_outer.h"
#include "ct_time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ASSIM_BATCH 4

struct around {
	struct ct_round_open_row r;	/* the round and its job (dl_round.h) */
	char out_sha[65];
	int nin;		/* WUs in the aggregate: nwus, or fewer (job.round_quorum) */
	int shards[CT_AVG_MAX_INPUTS];	/* their shards, in order (canonical_names) */
	char mom_sha[65];	/* "" when no outer step */
	float *mean;		/* a compact-base job's mean adapters (lora_round.h) */
	char ad_sha[65];	/* ... as a file of the store; "" none */
	double eval_loss;
	struct ct_gpt2 base, out;
	struct ct_tokens eval;
};

static int load_round(struct ct_db *db, int64_t roundid, struct around *a)
{
	int rc = ct_round_get_open(db, roundid, &a->r);

	if (rc == CT_ENOTFOUND) {
		a->r.id = 0;	/* not open any more */
		return 0;
	}
	if (rc < 0)
		return rc;
	a->nin = a->r.nwus;	/* canonical_names() counts a round closed early */
	if (a->r.has_base_loss || a->r.idx <= 1)
		return 0;
	if (a->r.lora_init_sha[0] != '\0') {	/* the widened base + the carried adapters */
		rc = ct_round_eval_loss(db, a->r.jobid, a->r.idx - 1, &a->r.base_loss);
		a->r.has_base_loss = rc == 0;
		return rc == CT_ENOTFOUND ? 0 : rc;
	}
	/* this round's base is the previous round's average: its loss is known */
	rc = ct_round_out_loss(db, a->r.jobid, a->r.idx - 1, a->r.model_sha, &a->r.base_loss);
	if (rc == 0)
		a->r.has_base_loss = 1;
	return rc == CT_ENOTFOUND ? 0 : rc;
}

/* Decode result `result_name` against the round's base into w (n floats). */
static int decode_canonical(struct ct_server *srv, const struct around *a,
			    const char *result_name, float *w)
{
	struct ct_mmap map = { 0 };
	char path[4096];
	int rc;

	rc = ct_server_upload_path(srv, result_name, path, sizeof(path));
	if (rc == 0)
		rc = ct_file_map(path, &map);
	if (rc == 0)
		rc = ct_delta_decode(map.addr, map.len, a->base.params, a->base.lay.total,
				     w, NULL);
	ct_file_unmap(&map);
	if (rc < 0)
		ct_log_error("assimilator: round %d of job %lld: result %s: %s", a->r.idx,
			     (long long)a->r.jobid, result_name, ct_errmsg(rc));
	return rc;
}

/* Names of the canonical results handed to the assimilator, in shard
 * order: names[k] (96 bytes each, malloc'd here; the caller frees), their
 * count a->nin (a->r.nwus, or fewer in a round that closes early) and their
 * shards a->shards. */
static int canonical_names(struct ct_db *db, struct around *a, char (**names)[96])
{
	struct ct_canonical_row *rows = NULL;
	size_t n = 0;
	int rc;

	*names = NULL;
	rc = ct_wu_canonicals(db, a->r.id, &rows, &n);
	if (rc < 0)
		return rc;
	/* a round that closes without its last WUs (job.round_quorum): the
	 * aggregate is over the WUs in now, in shard order */
	if (n < 1 || n > (size_t)a->r.nwus) {
		rc = ct_error(CT_ESTATE, "round %lld: %zu canonical results of %d",
			      (long long)a->r.id, n, a->r.nwus);
		goto out;
	}
	a->nin = (int)n;
	*names = calloc(n, sizeof(**names));
	if (*names == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n && k < CT_AVG_MAX_INPUTS; k++) {
		a->shards[k] = rows[k].shard;
		snprintf((*names)[k], 96, "%s", rows[k].name);
	}
out:
	free(rows);
	return rc;
}

/* The mean, streamed from the files (mean_stream.h): the deltas' base is
 * read from its file a chunk at a time, so the base is dropped first and
 * the sum is the only model this daemon holds meanwhile. Decoding threads:
 * $CTUNE_THREADS (daemons.eval_threads sets it), else the online CPUs. */
static int mean_files(struct ct_server *srv, struct around *a, char (*names)[96])
{
	struct ct_model_config cfg = a->base.cfg;
	long threads = ct_opt_int(CT_OPT_THREADS, sysconf(_SC_NPROCESSORS_ONLN));
	char base_path[4096], (*paths)[4096] = calloc((size_t)a->nin, sizeof(*paths));
	const char **pp = calloc((size_t)a->nin, sizeof(*pp));
	int rc = paths && pp ? 0 : CT_ENOMEM;

	for (int k = 0; rc == 0 && k < a->nin; k++) {
		rc = ct_server_upload_path(srv, names[k], paths[k], sizeof(paths[k]));
		pp[k] = paths[k];
	}
	if (rc == 0)
		rc = ct_server_download_path(srv, a->r.model_sha, base_path, sizeof(base_path));
	ct_gpt2_free(&a->base);
	if (rc == 0)
		rc = ct_gpt2_alloc(&a->out, &cfg);
	if (rc == 0)
		rc = ct_mean_stream(base_path, a->out.lay.total, pp, a->nin,
				    threads < 1 ? 1 : (int)threads, a->out.params);
	if (rc < 0)
		ct_log_error("assimilator: round %d of job %lld: mean: %s", a->r.idx,
			     (long long)a->r.jobid, ct_errmsg(rc));
	free(paths);
	free(pp);
	return rc;
}

/* The robust methods need the K results together. */
static int robust(struct ct_server *srv, struct around *a, char (*names)[96],
		  enum ct_avg_method m, size_t trim)
{
	size_t n = a->out.lay.total;
	float **ws = calloc((size_t)a->nin, sizeof(*ws));
	int rc = 0;

	if (ws == NULL)
		return CT_ENOMEM;
	for (int k = 0; rc == 0 && k < a->nin; k++) {
		ws[k] = malloc(n * sizeof(float));
		rc = ws[k] == NULL ? CT_ENOMEM : decode_canonical(srv, a, names[k], ws[k]);
	}
	if (rc == 0)
		rc = ct_avg(a->out.params, (const float *const *)ws, (size_t)a->nin, n, m, trim);
	for (int k = 0; k < a->nin; k++)
		free(ws[k]);
	free(ws);
	return rc;
}

/* A LoRA round: base + the exact mean of the shards' adapter products
 * (lora_round.h), whatever the job's aggregation says. */
static int lora_aggregate(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	int rc;

	if (strcmp(a->r.aggregation, "mean") != 0 && a->r.aggregation[0] != '\0')
		ct_log_warn("assimilator: job %lld is a LoRA job: exact mean of the adapter "
			    "products, aggregation '%s' not applied", (long long)a->r.jobid,
			    a->r.aggregation);
	rc = ct_lora_robust_check(srv, db, a->r.jobid, a->r.idx, a->r.id, a->r.nwus, &a->base);
	if (rc != 0)
		return rc;	/* > 0: results set aside (robust.h) */
	rc = ct_gpt2_alloc(&a->out, &a->base.cfg);
	if (rc == 0)
		rc = ct_lora_round_merge(srv, db, a->r.jobid, a->r.id, a->r.nwus, &a->base,
					 a->out.params, &a->mean);
	return rc;
}

/* A compact-base job's mean adapters as an adapter file of the store
 * (ct_lora_file.h; kept): what the next round's WUs start from
 * (doc/workunit.md §13). a->ad_sha; nothing for other jobs. */
static int store_adapters(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	unsigned char hdr[CT_LORA_FILE_HDR];
	struct ct_lora_spec spec;
	const void *parts[2] = { hdr, a->mean };
	size_t sizes[2] = { sizeof(hdr), 0 };
	int rc;

	if (a->mean == NULL || a->r.idx >= a->r.nrounds)
		return 0;
	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "assimilator: big-endian hosts are not supported");
	rc = ct_lora_job_get(db, a->r.jobid, &spec);
	if (rc < 0)
		return rc;
	ct_lora_file_header(&a->out.cfg, &spec, hdr);
	sizes[1] = ct_lora_nparams(&a->out.cfg, &spec) * sizeof(float);
	return ct_store_add_parts(srv, db, parts, sizes, 2, "lora_adapters", a->r.jobid, 1,
				  a->ad_sha);
}

/* The cross-shard check (robust.h) reads the canonical results through
 * this. */
struct robust_src {
	struct ct_server *srv;
	const struct around *a;
	char (*names)[96];
};

static int robust_load(void *ctx, int i, float *w)
{
	struct robust_src *s = ctx;

	return decode_canonical(s->srv, s->a, s->names[i], w);
}

/* Aggregate the canonical results into a->out (allocated here). */
static int aggregate(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	enum ct_avg_method m = CT_AVG_MEAN;
	char (*names)[96] = NULL;
	struct ct_lora_spec lora;
	size_t trim = 0;
	int rc;

	if (a->r.nwus < 1 || a->r.nwus > CT_AVG_MAX_INPUTS)
		return ct_error(CT_ERANGE, "round %lld: %d WUs", (long long)a->r.id, a->r.nwus);
	rc = ct_lora_job_get(db, a->r.jobid, &lora);
	if (rc == 0 && lora.rank > 0)
		rc = lora_aggregate(srv, db, a);
	if (rc < 0 || lora.rank > 0)
		return rc;
	if (ct_avg_parse_method(a->r.aggregation, &m) < 0)
		ct_log_warn("assimilator: job %lld: aggregation '%s' unknown, using the mean",
			    (long long)a->r.jobid, a->r.aggregation);
	rc = canonical_names(db, a, &names);
	if (rc == 0 && m == CT_AVG_TRIMMED) {
		trim = (size_t)a->nin / 10 > 0 ? (size_t)a->nin / 10 : 1;
		if (2 * trim >= (size_t)a->nin)
			m = CT_AVG_MEAN, trim = 0;
	}
	if (rc == 0) {
		struct robust_src src = { srv, a, names };

		rc = ct_robust_check_round(srv->conf, db, a->r.jobid, a->r.idx, a->nin,
					   a->base.lay.total, a->base.params, robust_load, &src,
					   a->shards);
	}
	if (rc == 0 && m == CT_AVG_MEAN)
		rc = mean_files(srv, a, names);
	else if (rc == 0 && (rc = ct_gpt2_alloc(&a->out, &a->base.cfg)) == 0)
		rc = robust(srv, a, names, m, trim);
	free(names);
	return rc;
}

/* The momentum buffer of the outer step, as the store keeps it: "CTMOMv1\0",
 * the number of floats (u64, little-endian), the floats (little-endian). */
#define MOM_MAGIC "CTMOMv1"

/* The buffer the previous round's outer step left, into mom (n floats):
 * 1 when there is one, 0 in a job's first outer step. */
static int load_momentum(struct ct_server *srv, struct ct_db *db, const struct around *a,
			 float *mom, size_t n)
{
	struct ct_mmap map = { 0 };
	char sha[65] = "", path[4096];
	uint64_t have = 0;
	int rc;

	if (a->r.idx <= 1)
		return 0;
	rc = ct_round_momentum(db, a->r.jobid, a->r.idx - 1, sha);
	if (rc < 0)
		return rc;
	if (sha[0] == '\0')	/* the previous round had none (or is gone) */
		return 0;
	if (rc == 0)
		rc = ct_server_download_path(srv, sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_file_map(path, &map);
	if (rc == 0 && map.len >= 16)
		have = ct_le_get64((const unsigned char *)map.addr + 8);
	if (rc == 0 && (map.len != 16 + n * sizeof(float) || have != n ||
			memcmp(map.addr, MOM_MAGIC, 8) != 0))
		rc = ct_error(CT_EFORMAT, "momentum %.12s: not a buffer of %zu floats", sha, n);
	if (rc == 0)
		memcpy(mom, (const unsigned char *)map.addr + 16, n * sizeof(float));
	ct_file_unmap(&map);
	return rc < 0 ? rc : 1;
}

/* The outer step (ct_outer.h) on the aggregate in a->out: the round's start
 * model is read back (the streamed mean dropped it), the previous round's
 * momentum from the store, and the new buffer stored (kept: a restart or
 * the next round reads it; a->mom_sha, recorded with the round). */
static int outer_step(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	struct ct_outer o = { CT_OUTER_MEAN, (float)a->r.outer_lr, (float)a->r.outer_momentum };
	size_t n = a->out.lay.total;
	unsigned char hdr[16] = MOM_MAGIC;
	char path[4096];
	float *mom = NULL;
	int rc, have;

	if (ct_outer_parse(a->r.outer_method, &o.method) < 0)
		return ct_error(CT_EFORMAT, "job %lld: outer optimizer '%s' unknown",
				(long long)a->r.jobid, a->r.outer_method);
	if (o.method == CT_OUTER_MEAN)
		return 0;
	rc = ct_outer_check(&o);
	if (rc == 0 && a->base.params == NULL) {
		rc = ct_server_download_path(srv, a->r.model_sha, path, sizeof(path));
		if (rc == 0)
			rc = ct_seval_model_load(path, &a->base);
	}
	if (rc == 0 && a->base.lay.total != n)
		rc = ct_error(CT_EMISMATCH, "round %d: base of %zu weights, aggregate of %zu",
			      a->r.idx, a->base.lay.total, n);
	if (rc == 0 && (mom = malloc(n * sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	have = rc == 0 ? load_momentum(srv, db, a, mom, n) : 0;
	if (rc == 0 && have < 0)
		rc = have;
	if (rc == 0) {
		const void *parts[2] = { hdr, mom };
		size_t sizes[2] = { sizeof(hdr), n * sizeof(float) };

		ct_outer_step(&o, a->base.params, a->out.params, mom, have, n);
		ct_le_put64(hdr + 8, (uint64_t)n);
		rc = ct_store_add_parts(srv, db, parts, sizes, 2, "momentum", a->r.jobid, 1,
					a->mom_sha);
	}
	if (rc < 0)
		ct_log_error("assimilator: round %d of job %lld: outer step: %s", a->r.idx,
			     (long long)a->r.jobid, ct_errmsg(rc));
	free(mom);
	return rc;
}

/* Write a->out as a checkpoint into the store (kept); a->out_sha. The
 * bytes are ct_gpt2_save's, written and hashed once, straight into the
 * store. */
static int store_model(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	int32_t hdr[CT_GPT2_HEADER_INTS];
	const void *parts[2] = { hdr, a->out.params };
	size_t sizes[2] = { sizeof(hdr), a->out.lay.total * sizeof(float) };

	if (!ct_le_host())
		return ct_error(CT_EUNSUPP, "assimilator: big-endian hosts are not supported");
	ct_gpt2_file_header(&a->out.cfg, (unsigned char *)hdr);	/* as ct_gpt2_save */
	return ct_store_add_parts(srv, db, parts, sizes, 2, "round_model", a->r.jobid, 1,
				  a->out_sha);
}

/* Losses of the base and the average on the job's eval tokens, on the
 * server's evaluation device (eval.h), over the job's evaluation size,
 * once the average is stored: one model in memory at a time besides the
 * evaluation backend's copy (the average is read back from the store when
 * the base had to be evaluated first; an OpenCL runtime may keep the
 * memory of a released buffer for the next one, so two models at once
 * plus that copy would be three). */
static int evaluate(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	char path[4096];
	int64_t want = 0, used = 0;
	float l = NAN;
	int rc, gone = 0;

	rc = ct_server_download_path(srv, a->r.eval_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_tokens_load(path, &a->eval);
	if (rc == 0)
		rc = ct_seval_job_tokens(srv, db, a->r.jobid, &want);
	if (rc < 0)
		return rc;
	if (!a->r.has_base_loss) {
		ct_gpt2_free(&a->out);
		if (a->base.params == NULL)	/* the streamed mean dropped it */
			rc = ct_server_download_path(srv, a->r.model_sha, path, sizeof(path));
		if (rc == 0 && a->base.params == NULL)
			rc = ct_seval_model_load(path, &a->base);
		if (rc == 0)	/* the weights move to the device (eval.h) */
			rc = ct_seval_loss_handover(srv, &a->base, &a->eval, a->r.batch, a->r.seq,
						    want, &l, &used, &gone);
		a->r.base_loss = l;
		a->r.has_base_loss = rc == 0;
	}
	ct_gpt2_free(&a->base);
	if (rc == 0 && a->out.params == NULL) {
		rc = ct_server_download_path(srv, a->out_sha, path, sizeof(path));
		if (rc == 0)
			rc = ct_seval_model_load(path, &a->out);
	}
	if (rc == 0)	/* stored already: its weights can move to the device */
		rc = ct_seval_loss_handover(srv, &a->out, &a->eval, a->r.batch, a->r.seq, want, &l,
					    &used, &gone);
	if (gone)	/* the sample reads it back from the store */
		ct_gpt2_free(&a->out);
	a->eval_loss = l;
	if (rc == 0)
		rc = ct_seval_record_round(db, a->r.id, used);
	return rc;
}

/* The last step, one transaction: the round is done, its WUs assimilated,
 * and after the last round the job too. */
static int finish_txn(struct ct_db *db, void *arg)
{
	struct around *a = arg;
	int64_t now = ct_db_now(db);
	int rc;

	rc = ct_round_move(db, a->r.id, CT_ROUND_OPEN, CT_ROUND_DONE,
			   &(struct ct_round_change){ .now = now, .out_sha = a->out_sha,
						      .eval_loss = a->eval_loss,
						      .base_loss = a->r.base_loss, .nin = a->nin });
	if (rc <= 0)
		return rc;	/* another assimilator recorded it */
	rc = ct_wu_done_ready(db, a->r.id, now);
	if (rc >= 0 && a->nin < a->r.nwus) {	/* the WUs not in: abandoned */
		rc = ct_wu_abandon_round(db, a->r.id, now);
		if (rc > 0)
			ct_log_info("assimilator: job %lld round %d closed with %d of %d work "
				    "units; %d abandoned", (long long)a->r.jobid, a->r.idx, a->nin,
				    a->r.nwus, rc);
	}
	if (rc >= 0 && a->mom_sha[0] != '\0')	/* the next round's outer step reads it */
		rc = ct_round_set_momentum(db, a->r.id, a->mom_sha);
	if (rc >= 0 && a->r.idx == 1)
		rc = ct_job_set_base_loss(db, a->r.jobid, a->r.base_loss);
	if (rc >= 0 && a->r.idx >= a->r.nrounds)
		rc = ct_job_move(db, a->r.jobid, CT_JOB_RUNNING, CT_JOB_DONE,
				 &(struct ct_job_change){ .now = now, .out_sha = a->out_sha,
							  .eval_loss = a->eval_loss });
	else if (rc >= 0)
		rc = ct_job_touch(db, a->r.jobid, now);
	return rc < 0 ? rc : 1;
}

/* The round check failed round_max_retry times: the round and its job
 * stop, with msg as the job's error (one transaction). */
static int stop_job_txn(struct ct_db *db, void *arg)
{
	const struct around *a = ((const struct around **)arg)[0];
	const char *msg = ((const char **)arg)[1];
	int64_t now = ct_db_now(db);
	int rc;

	rc = ct_round_move(db, a->r.id, CT_ROUND_OPEN, CT_ROUND_ERROR,
			   &(struct ct_round_change){ .now = now });
	if (rc <= 0)
		return rc;
	rc = ct_wu_done_ready(db, a->r.id, now);
	if (rc >= 0)
		rc = ct_job_move(db, a->r.jobid, CT_JOB_RUNNING, CT_JOB_ERROR,
				 &(struct ct_job_change){ .now = now, .msg = msg });
	return rc < 0 ? rc : 1;
}

/* The round check (doc/validation.md, "A round no small group can
 * capture"): an average whose eval loss is worse than its base's by more
 * than the job's loss_margin (nats, --loss-margin; not the probe's
 * relative margin, which at 20% of the loss would let any poisoning
 * through; NaN fails) is not applied: every
 * shard's canonical result is set aside and its WU re-issued to hosts
 * apart from every earlier replica (robust_aside.h), and the job's notice
 * says so. After daemons.round_max_retry (2) such re-issues the job stops
 * with that error rather than take the round. daemons.round_check = 0
 * turns it off. Returns 1 (not applied), 0 (passes) or a CT_E* code. */
static int round_check(struct ct_server *srv, struct ct_db *db, struct around *a)
{
	double margin = 0.05;
	int64_t fails = 0;
	long on = 1, maxre = 2;
	char msg[256];
	int rc;

	rc = ct_conf_get_int(srv->conf, "daemons.round_check", 1, 0, 1, &on);
	if (rc == 0)
		rc = ct_conf_get_int(srv->conf, "daemons.round_max_retry", 2, 0, 1000, &maxre);
	if (rc == 0 && on && a->r.has_base_loss)
		rc = ct_job_loss_margin(db, a->r.jobid, &margin);
	if (rc < 0 || !on || !a->r.has_base_loss || a->eval_loss <= a->r.base_loss + margin)
		return rc < 0 ? rc : 0;
	rc = ct_robust_round_events(db, a->r.jobid, a->r.idx, CT_ROBUST_ROUND_FAILED, &fails);
	if (rc < 0)
		return rc;
	if (fails >= maxre) {
		snprintf(msg, sizeof(msg), "round %d: its average raised the eval loss from %.4f "
			 "to %.4f (margin %.4f) again after %lld re-issues: job stopped", a->r.idx,
			 a->r.base_loss, a->eval_loss, margin, (long long)fails);
		ct_log_warn("assimilator: job %lld: %s", (long long)a->r.jobid, msg);
		rc = ct_db_txn(db, stop_job_txn, (void *[]){ a, msg });
		return rc < 0 ? rc : 1;
	}
	snprintf(msg, sizeof(msg), "round %d not applied: its average raised the eval loss "
		 "from %.4f to %.4f (margin %.4f); its %d work units re-issued to other hosts "
		 "(%lld of %ld)", a->r.idx, a->r.base_loss, a->eval_loss, margin, a->nin,
		 (long long)fails + 1, maxre);
	/* the base's loss stays known for the next try (round 1 computed it) */
	rc = ct_round_set_base_loss(db, a->r.id, a->r.base_loss);
	if (rc >= 0)
		rc = ct_robust_aside_round(db, a->r.jobid, a->r.idx, a->r.nwus, a->r.base_loss,
					   a->eval_loss, msg);
	return rc < 0 ? rc : 1;
}

/* The job stopped: the round will not be averaged. */
static int drop_round(struct ct_db *db, const struct around *a)
{
	int64_t now = ct_db_now(db);
	int rc;

	rc = ct_round_move(db, a->r.id, CT_ROUND_OPEN, CT_ROUND_CANCELED,
			   &(struct ct_round_change){ .now = now });
	if (rc >= 0)
		rc = ct_wu_done_ready(db, a->r.id, now);
	return rc < 0 ? rc : 0;
}

static void around_free(struct around *a)
{
	ct_gpt2_free(&a->base);
	ct_gpt2_free(&a->out);
	ct_tokens_free(&a->eval);
	free(a->mean);
	free(a);
}

static int assimilate_round(struct ct_server *srv, struct ct_db *db, int64_t roundid)
{
	struct around *a = calloc(1, sizeof(*a));
	double t0 = ct_time_mono_s(), t1, t2;
	char path[4096];
	int rc, held = 0;

	if (a == NULL)
		return CT_ENOMEM;
	rc = load_round(db, roundid, a);
	if (rc < 0 || a->r.id == 0)
		goto out;
	if (a->r.job_status != CT_JOB_RUNNING) {
		rc = drop_round(db, a);
		goto out;
	}
	ct_seval_hold();	/* the validator's models are not in memory meanwhile */
	held = 1;
	rc = ct_server_download_path(srv, a->r.model_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_seval_model_load(path, &a->base);
	t1 = ct_time_mono_s();
	if (rc == 0)
		rc = aggregate(srv, db, a);
	if (rc > 0) {	/* results set aside (robust_aside.h): not averaged yet */
		rc = 0;
		goto out;
	}
	if (rc == 0)
		rc = outer_step(srv, db, a);
	if (rc == 0)
		rc = store_model(srv, db, a);
	if (rc == 0)
		rc = store_adapters(srv, db, a);
	t2 = ct_time_mono_s();
	if (rc == 0)
		rc = evaluate(srv, db, a);
	if (rc == 0)	/* bench/bench_job.sh reads this line */
		ct_log_info("assimilator: job %lld round %d: %.2f s (average %.2f s, evaluations "
			    "%.2f s on %s)", (long long)a->r.jobid, a->r.idx, ct_time_mono_s() - t0,
			    t2 - t1, ct_time_mono_s() - t0 - (t2 - t1), ct_seval_device(srv));
	if (rc == 0) {
		rc = round_check(srv, db, a);
		if (rc > 0) {	/* not applied: its WUs go out again */
			rc = 0;
			goto out;
		}
	}
	/* a compact-base job keeps its base and carries the adapters */
	if (rc == 0 && a->r.idx < a->r.nrounds && a->ad_sha[0] != '\0')
		rc = ct_wg_open_round_from(srv, db, a->r.jobid, a->r.idx + 1, a->r.model_sha,
					   a->ad_sha);
	else if (rc == 0 && a->r.idx < a->r.nrounds)
		rc = ct_wg_open_round(srv, db, a->r.jobid, a->r.idx + 1, a->out_sha);
	/* best effort, once per round (sample.h); after the next round
	 * opened, since sampling on the C reference can take minutes at 124M
	 * while clients wait for work, and before the round is done, so that
	 * a finished job has its samples */
	t1 = ct_time_mono_s();
	if (rc == 0)
		ct_sample_after_round(srv, db, a->r.jobid, a->r.idx, a->r.model_sha, a->out_sha,
				      &a->out);
	t2 = ct_time_mono_s() - t1;
	if (rc == 0)
		rc = ct_db_txn(db, finish_txn, a);
	if (rc > 0)	/* bench/bench_job.sh reads "sample" */
		ct_log_info("assimilator: job %lld round %d done: model %.12s eval loss %.4f "
			    "(base %.4f), sample %.2f s%s", (long long)a->r.jobid, a->r.idx,
			    a->out_sha, a->eval_loss, a->r.base_loss, t2,
			    a->r.idx >= a->r.nrounds ? ", job done" : "");
out:
	around_free(a);
	if (held)
		ct_seval_release();
	return rc;
}

/* The loss of an open first round's base, computed while its clients
 * train (nothing to assimilate meanwhile), so that the round's
 * assimilation runs one evaluation, not two (load_round reads it back).
 * One round per call; 1 if one was evaluated. */
static int base_loss_ahead(struct ct_server *srv, struct ct_db *db, int64_t n, int64_t k)
{
	struct around *a = calloc(1, sizeof(*a));
	int64_t id = 0, want = 0, used = 0, jobid;
	double t0 = ct_time_mono_s();
	char path[4096];
	float l = NAN;
	int rc = a ? 0 : CT_ENOMEM;

	if (rc == 0)
		rc = ct_round_next_base_loss(db, n, k, &id);
	if (rc == CT_ENOTFOUND)
		rc = 0, id = 0;
	if (rc == 0 && id > 0)
		rc = load_round(db, id, a);
	if (rc < 0 || id <= 0 || a->r.id == 0 || a->r.has_base_loss) {
		free(a);
		return rc;
	}
	jobid = a->r.jobid;
	ct_seval_hold();
	rc = ct_server_download_path(srv, a->r.eval_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_tokens_load(path, &a->eval);
	if (rc == 0)
		rc = ct_seval_job_tokens(srv, db, a->r.jobid, &want);
	if (rc == 0)
		rc = ct_server_download_path(srv, a->r.model_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_seval_model_load(path, &a->base);
	if (rc == 0)
		rc = ct_seval_loss_handover(srv, &a->base, &a->eval, a->r.batch, a->r.seq, want, &l,
					    &used, &(int){ 0 });
	around_free(a);
	ct_seval_release();
	if (rc == 0)
		rc = ct_round_set_base_loss(db, id, (double)l);
	if (rc >= 0)
		ct_log_info("assimilator: job %lld round 1: base loss %.4f on %lld tokens, "
			    "ahead of the round, in %.2f s", (long long)jobid, l, (long long)used,
			    ct_time_mono_s() - t0);	/* bench/bench_job.sh reads it */
	return rc < 0 ? rc : 1;
}

/* What the assimilator's claim did besides finding rounds. */
struct assim_claim {
	int failed_wus;		/* failed WUs marked done (nothing to average) */
};

/* The rounds ready to average, of this instance's share: every WU has its
 * canonical result, or (job.round_quorum < 1) enough of them have,
 * round_timeout seconds after the round opened. Before that, failed WUs
 * are marked done; with no round ready, the next round's base loss is
 * computed ahead. */
static int claim_ready(struct ct_server *srv, struct ct_db *db, int64_t *ids, size_t cap,
		       size_t *n, void *arg)
{
	struct assim_claim *c = arg;
	int64_t nshare, k;
	int rc;

	rc = ct_instance_share(db, &nshare, &k);	/* this instance's rounds (instance.h) */
	if (rc < 0)
		return rc;
	rc = ct_wu_done_ready(db, 0, ct_db_now(db));
	if (rc < 0)
		return rc;
	c->failed_wus = rc;
	rc = ct_round_ready_ids(db, ct_db_now(db), nshare, k, ids, cap, n);
	if (rc < 0 || *n > 0 || ct_server_stopping(srv))
		return rc;
	rc = base_loss_ahead(srv, db, nshare, k);
	if (rc == CT_EDB || rc == CT_EAGAIN)
		return rc;
	if (rc < 0)
		ct_log_error("assimilator: base loss ahead: %s", ct_errmsg(rc));
	return 0;
}

static int assimilate_item(struct ct_server *srv, struct ct_db *db, int64_t roundid, void *arg)
{
	(void)arg;
	return assimilate_round(srv, db, roundid);
}

static struct ct_pass_backoff assimilator_backoff = CT_PASS_BACKOFF_INIT;

int ct_assimilator_run_once(struct ct_server *srv, struct ct_db *db)
{
	static const struct ct_pass pass = {
		.name = "assimilator: round", .batch = ASSIM_BATCH, .claim = claim_ready,
		.handle = assimilate_item, .backoff = &assimilator_backoff,
	};
	struct assim_claim c = { 0 };
	int rc = ct_pass_run(srv, db, &pass, &c), nrec;

	if (rc < 0)
		return rc;
	/* the rounds just closed, and any closed without one, get receipts */
	nrec = ct_server_stopping(srv) ? 0 : ct_receipt_pass(srv, db);
	return nrec < 0 ? nrec : rc + c.failed_wus + nrec;
}
