/*
 * wg.c - the work generator (see wg.h): job submission and opening rounds.
 *
 * Submission reads the checkpoint's header only (ct_base_read_config: the
 * config and the exact file size, so no model is loaded) and maps the
 * token files (ct_tokens_load), checks every token against the model's
 * vocabulary and that each shard and the evaluation file are long enough,
 * all before anything is stored. A job on a compact frozen base
 * (--base-format) then converts the model once (compact_base) and stores
 * the compact file as the job's model.
 */
#include "wg.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_base.h"
#include "ct_engine.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_log.h"
#include "ct_outer.h"
#include "ct_tokens.h"
#include "data/db.h"
#include "data/dl_job.h"
#include "data/dl_round.h"
#include "data/dl_workunit.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "data/lora_job.h"
#include "data/server.h"
#include "data/store.h"
#include "submit_check.h"
#include "validate/bisect.h"

int64_t ct_wg_wu_seed(int64_t job_seed, int round_idx, int shard)
{
	uint64_t z = (uint64_t)job_seed ^ ((uint64_t)(uint32_t)round_idx << 32) ^ (uint32_t)shard;

	z += 0x9e3779b97f4a7c15ULL;	/* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (int64_t)(z & INT64_MAX);
}

/* ---- input checks ------------------------------------------------------ */

/* The inputs of a job, mapped and checked against each other. */
struct job_inputs {
	struct ct_model_config cfg;
	struct ct_tokens train, eval;
};

static void free_inputs(struct job_inputs *in)
{
	ct_tokens_free(&in->train);
	ct_tokens_free(&in->eval);
}

/* Map a token file and check that its tokens are in the model's vocabulary
 * (the detail names the file). */
static int load_tokens(const char *path, int V, struct ct_tokens *t)
{
	char why[256];
	int rc = ct_tokens_load_any(path, t);	/* mapped, not widened */

	if (rc == 0 && ct_tokens_check_vocab(t, V) < 0) {
		snprintf(why, sizeof(why), "%s", ct_errmsg(CT_EMISMATCH));
		rc = ct_error(CT_EMISMATCH, "%s: %s", path, why);
	}
	return rc;
}

/* Shard k of K of the training tokens: [*a, *a + *cnt). n*k/K on, in
 * general; a file with a loss mask (conversations packed into rows of T
 * tokens, then one more: cmd/chat_submit.h's --train-chat) is cut between rows,
 * each shard holding whole rows and the first token of the next (a
 * target the loss never counts), so no conversation is cut. */
static void shard_range(const struct ct_tokens *t, int T, int k, int K, uint64_t *a,
			uint64_t *cnt)
{
	uint64_t rows = t->n > 0 ? (t->n - 1) / (uint64_t)T : 0;

	if (t->train == NULL) {
		*a = t->n * (uint64_t)k / (uint64_t)K;
		*cnt = t->n * (uint64_t)(k + 1) / (uint64_t)K - *a;
		return;
	}
	*a = rows * (uint64_t)k / (uint64_t)K * (uint64_t)T;
	*cnt = rows * (uint64_t)(k + 1) / (uint64_t)K * (uint64_t)T + 1 - *a;
}

/* Read the model's header and map the token files; every check that needs
 * no database is done here. */
static int load_inputs(const struct ct_job_spec *s, struct job_inputs *in)
{
	uint64_t need = (uint64_t)s->batch * (uint64_t)s->seq + 1;	/* both <= 65536 */
	int fmt, rc;

	memset(in, 0, sizeof(*in));
	rc = ct_base_read_config(s->model_path, &in->cfg, &fmt);
	if (rc == 0 && fmt != CT_BASE_F32 && s->lora.base_fmt == CT_BASE_F32)
		rc = ct_error(CT_EINVAL, "%s is a %s base: a job on it needs --lora-rank and "
			      "--base-format %s", s->model_path, ct_base_fmt_name(fmt),
			      ct_base_fmt_name(fmt));
	if (rc < 0)
		return rc;
	if (s->seq > in->cfg.maxT)
		return ct_error(CT_EINVAL, "--seq %d is longer than the model's context %d", s->seq,
				in->cfg.maxT);
	rc = load_tokens(s->eval_path, in->cfg.V, &in->eval);
	if (rc == 0 && in->eval.n < (uint64_t)s->seq + 1)
		rc = ct_error(CT_EINVAL, "%s: %" PRIu64 " tokens; evaluation needs at least "
			      "seq+1 = %d", s->eval_path, in->eval.n, s->seq + 1);
	if (rc == 0)
		rc = load_tokens(s->train_path, in->cfg.V, &in->train);
	/* the smallest of the K shards (floor(n/K) tokens without a mask) */
	if (rc == 0) {
		uint64_t a, cnt, least = UINT64_MAX;

		for (int k = 0; k < s->shards; k++) {
			shard_range(&in->train, s->seq, k, s->shards, &a, &cnt);
			least = cnt < least ? cnt : least;
		}
		if (least < need)
			rc = ct_error(CT_EINVAL, "%s: %" PRIu64 " tokens make shards of %" PRIu64
				      " tokens; each needs at least batch*seq+1 = %" PRIu64
				      " (fewer --shards?)", s->train_path, in->train.n, least, need);
	}
	if (rc < 0)
		free_inputs(in);
	return rc;
}

/* The outer optimizer of the spec (defaults filled in); CT_EINVAL when
 * its name or values are refused. */
static int spec_outer(const struct ct_job_spec *s, struct ct_outer *o)
{
	o->method = CT_OUTER_MEAN;
	o->lr = s->outer_lr > 0 ? (float)s->outer_lr : 0.7f;
	o->momentum = s->outer_momentum >= 0 ? (float)s->outer_momentum : 0.9f;
	if (s->outer != NULL && ct_outer_parse(s->outer, &o->method) < 0)
		return ct_error(CT_EINVAL, "outer optimizer '%s': want mean, sgd or nesterov",
				s->outer);
	return ct_outer_check(o);
}

static int check_spec(const struct ct_job_spec *s)
{
	if (!s->model_path || !s->train_path || !s->eval_path)
		return ct_error(CT_EINVAL, "--model, --train and --eval are required");
	if (s->shards < 1 || s->shards > 100000)
		return ct_error(CT_EINVAL, "--shards must be 1..100000");
	if (s->rounds < 1 || s->rounds > 100000)
		return ct_error(CT_EINVAL, "--rounds must be 1..100000");
	if (s->steps < 1 || s->steps > 10000000 || s->batch < 1 || s->batch > 65536 ||
	    s->seq < 1 || s->seq > 65536)
		return ct_error(CT_EINVAL, "--steps, --batch and --seq must be positive");
	if (!(s->lr > 0 && s->lr < 10))
		return ct_error(CT_EINVAL, "--lr must be in (0, 10)");
	if (s->quorum < 0 || s->replicas < 0 || s->quorum > 10 || s->replicas > 10 ||
	    (s->quorum && s->replicas && s->replicas < s->quorum))
		return ct_error(CT_EINVAL, "need 1 <= --quorum <= --replicas <= 10");
	if (s->upload_encoding && strcmp(s->upload_encoding, "lossless") != 0 &&
	    strcmp(s->upload_encoding, "int8") != 0)
		return ct_error(CT_EINVAL, "--encoding must be lossless or int8");
	if (s->name && strlen(s->name) > 128)
		return ct_error(CT_EINVAL, "--name is longer than 128 bytes");
	if (spec_outer(s, &(struct ct_outer){ 0 }) < 0)
		return CT_EINVAL;
	if (!(s->round_quorum >= 0 && s->round_quorum <= 1))
		return ct_error(CT_EINVAL, "--round-quorum must be in (0, 1]");
	if (s->round_timeout < 0 || s->round_timeout > 86400 * 365)
		return ct_error(CT_EINVAL, "--round-timeout must be 0..31536000 seconds");
	if (s->round_quorum > 0 && s->round_quorum < 1 && s->lora.rank > 0)
		return ct_error(CT_EINVAL, "--round-quorum below 1 is not supported for LoRA "
				"jobs yet (their rounds merge every shard's adapters)");
	if (s->lora.base_fmt != CT_BASE_F32 && s->outer != NULL &&
	    strcmp(s->outer, "mean") != 0)
		return ct_error(CT_EINVAL, "--base-format %s takes --outer mean: its rounds carry "
				"the mean adapters, not a float32 model an outer step could move "
				"(doc/workunit.md §13)", ct_base_fmt_name(s->lora.base_fmt));
	return ct_lora_job_check(&s->lora, NULL);
}

/* ---- shards ------------------------------------------------------------ */

/* Store shard k of K of the training tokens as its own token file (written
 * to a temp file in the store's directory in the input's version, then
 * added). */
static int store_shard(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		       const struct ct_tokens *train, int T, int k, int K)
{
	uint64_t a, cnt;
	char sha[CT_SHA256_HEXLEN + 1], tmp[PATH_MAX];
	int64_t size = 0;
	int rc;

	shard_range(train, T, k, K, &a, &cnt);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-shard-%" PRId64 "-%d", srv->download_dir, jobid, k);
	rc = ct_tokens_save_range(tmp, train, a, cnt);
	if (rc == 0)
		rc = ct_store_add_file(srv, db, tmp, "shard", jobid, 0, sha, &size);
	unlink(tmp);
	if (rc < 0)
		return rc;
	struct ct_job_shard_row r = { .size = size, .ntokens = (int64_t)cnt };

	memcpy(r.sha256, sha, sizeof(r.sha256));
	return ct_job_shard_put(db, jobid, k, &r);
}

static int make_shards(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		       const struct ct_job_spec *s, const struct job_inputs *in)
{
	int rc = 0;

	for (int k = 0; rc == 0 && k < s->shards; k++)
		rc = store_shard(srv, db, jobid, &in->train, s->seq, k, s->shards);
	return rc;
}

/* ---- submit ------------------------------------------------------------ */

struct job_files {
	char model[CT_SHA256_HEXLEN + 1], train[CT_SHA256_HEXLEN + 1],
	     eval[CT_SHA256_HEXLEN + 1];
	int64_t model_size, train_size, eval_size;
};

/* The base of a compact-base LoRA job (doc/workunit.md §13): converted
 * once here from float32 into a compact base file in the store's
 * directory (*tmp names it, to unlink), or the file itself when it is of
 * that format already (*tmp ""). */
static int compact_base(struct ct_server *srv, const struct ct_job_spec *s, char *tmp,
			size_t cap, const char **path)
{
	struct ct_gpt2 m = { 0 }, c = { 0 };
	int fmt = s->lora.base_fmt, rc;

	*tmp = '\0';
	*path = s->model_path;
	rc = ct_base_load(s->model_path, &m);
	if (rc == 0 && m.fmt != CT_BASE_F32 && m.fmt != fmt)
		rc = ct_error(CT_EINVAL, "%s is a %s base: --base-format %s wants a float32 "
			      "or %s model", s->model_path, ct_base_fmt_name(m.fmt),
			      ct_base_fmt_name(fmt), ct_base_fmt_name(fmt));
	if (rc < 0 || m.fmt == fmt)
		goto out;
	rc = ct_base_convert(&m.cfg, m.params, fmt, &c);
	if (rc == 0) {
		static _Atomic unsigned seq;	/* two submissions of one process */

		snprintf(tmp, cap, "%s/.tmp-base-%d-%u", srv->download_dir, (int)getpid(), seq++);
		rc = ct_base_save(tmp, &c);
		*path = tmp;
	}
out:
	ct_gpt2_free(&c);
	ct_gpt2_free(&m);
	return rc;
}

static int store_inputs(struct ct_server *srv, struct ct_db *db, const struct ct_job_spec *s,
			struct job_files *f)
{
	char tmp[PATH_MAX] = "";
	const char *model = s->model_path;
	int rc = 0;

	if (s->lora.base_fmt != CT_BASE_F32)
		rc = compact_base(srv, s, tmp, sizeof(tmp), &model);
	if (rc == 0)
		rc = ct_store_add_file(srv, db, model, "model", 0, 1, f->model, &f->model_size);
	if (*tmp)
		unlink(tmp);
	if (rc == 0)
		rc = ct_store_add_file(srv, db, s->train_path, "train", 0, 0, f->train,
				       &f->train_size);
	if (rc == 0)
		rc = ct_store_add_file(srv, db, s->eval_path, "eval", 0, 1, f->eval, &f->eval_size);
	return rc;
}

/* job.outer_* and job.round_*: written only when they differ from the
 * defaults, so a job without them has every earlier job's row. */
static int insert_outer(struct ct_db *db, const struct ct_job_spec *s, int64_t jobid)
{
	struct ct_outer o;
	int rc = spec_outer(s, &o);

	if (rc == 0 && o.method != CT_OUTER_MEAN)
		rc = ct_job_set_outer(db, jobid, ct_outer_name(o.method), (double)o.lr,
				      (double)o.momentum);
	if (rc >= 0 && ((s->round_quorum > 0 && s->round_quorum < 1) || s->round_timeout > 0))
		rc = ct_job_set_round_close(db, jobid, s->round_quorum > 0 ? s->round_quorum : 1.0,
					    s->round_timeout);
	return rc;
}

static int insert_job(struct ct_db *db, const struct ct_job_spec *s, const struct job_files *f,
		      int64_t *jobid)
{
	int quorum = s->quorum ? s->quorum : 2;
	int replicas = s->replicas ? s->replicas : quorum;
	struct ct_job_new j = {
		.name = s->name && *s->name ? s->name : "job", .now = ct_db_now(db),
		.model_sha256 = f->model, .model_size = f->model_size, .train_sha256 = f->train,
		.eval_sha256 = f->eval, .nshards = s->shards, .nrounds = s->rounds,
		.steps = s->steps, .batch = s->batch, .seq = s->seq, .lr = s->lr,
		.beta1 = s->beta1 ? s->beta1 : 0.9, .beta2 = s->beta2 ? s->beta2 : 0.999,
		.eps = s->eps ? s->eps : 1e-8, .weight_decay = s->weight_decay,
		.grad_clip = s->grad_clip ? s->grad_clip : 1.0, .seed = s->seed,
		.delay_bound = s->delay_bound ? s->delay_bound : 86400,
		.adaptive_replication = s->adaptive < 0 ? 1 : s->adaptive,
		.tolerance = s->tolerance ? s->tolerance : 1e-3,
		.loss_margin = s->loss_margin ? s->loss_margin : 0.05,
		.upload_encoding = s->upload_encoding ? s->upload_encoding : "lossless",
		.max_upload_bytes = f->model_size + f->model_size / 8 + (1 << 20),
		.probe_tokens = s->probe_tokens, .eval_tokens = s->eval_tokens,
		.aggregation = s->aggregation ? s->aggregation : "mean",
	};

	if (replicas < quorum)
		replicas = quorum;
	j.min_quorum = quorum;
	j.target_nresults = replicas;
	j.max_error_results = s->max_error_results ? s->max_error_results : replicas + 2;
	j.max_total_results = s->max_total_results ? s->max_total_results : replicas * 3;
	j.max_success_results = replicas + 3;
	return ct_job_insert(db, &j, jobid);
}

/* The memory a WU needs, which the scheduler holds hosts' work memory to
 * (eligibility.h): job.wu_mem_bytes on OpenCL (ct_wu_mem_bytes) and
 * job.wu_mem_ref_bytes on the C reference (ct_ref_wu_bytes); and the
 * interval of its results' hash chains: [daemons] chain_every when set
 * (> 0), else chosen from the model. */
static int put_wu_mem(struct ct_server *srv, struct ct_db *db, const struct ct_job_spec *s,
		      const struct ct_model_config *cfg, int64_t jobid)
{
	struct ct_wu_hparams hp;
	long every = 0;
	int rc;

	rc = ct_conf_get_int(srv->conf, "daemons.chain_every", 0, 0, CT_WU_MAX_STEPS, &every);
	if (rc < 0)
		return rc;
	ct_wu_hparams_default(&hp);
	hp.B = s->batch;
	hp.T = s->seq;
	rc = ct_lora_job_check(&s->lora, &hp.lora);	/* defaults filled in */
	if (rc == 0 && every == 0)
		every = ct_bisect_chain_every(cfg, &hp.lora, s->batch, s->seq, s->steps);
	if (rc == 0 && ct_chain_nlinks(s->steps, (int)every) > CT_CHAIN_MAX_LINKS)
		every = (s->steps + CT_CHAIN_MAX_LINKS - 1) / CT_CHAIN_MAX_LINKS;
	if (rc == 0)
		rc = ct_job_set_wu_needs(db, jobid, (int64_t)ct_wu_mem_bytes(cfg, &hp),
					 (int64_t)ct_ref_wu_bytes(cfg, &hp), (int)every);
	return rc;
}

int ct_wg_submit(struct ct_server *srv, struct ct_db *db, const struct ct_job_spec *spec,
		 int64_t *jobid_out)
{
	struct job_inputs in = { 0 };
	struct job_files f;
	int64_t jobid = 0;
	int rc;

	*jobid_out = 0;
	rc = check_spec(spec);
	if (rc < 0)
		return rc;
	rc = load_inputs(spec, &in);
	if (rc == 0)	/* a warning: small shards may be what the operator wants */
		ct_submit_warn_shards((int64_t)in.train.n, spec->shards, spec->steps,
				      spec->batch, spec->seq);
	if (rc == 0)
		rc = store_inputs(srv, db, spec, &f);
	if (rc == 0)
		rc = insert_job(db, spec, &f, &jobid);
	if (rc < 0)
		goto out;
	rc = ct_store_claim(db, jobid, f.model, f.train, f.eval);
	if (rc >= 0)	/* before round 1: no daemon reads the job before then */
		rc = insert_outer(db, spec, jobid);
	if (rc >= 0 && spec->lora.rank > 0)
		rc = ct_lora_job_put(db, jobid, &spec->lora, &in.cfg);
	if (rc >= 0)
		rc = put_wu_mem(srv, db, spec, &in.cfg, jobid);
	if (rc >= 0)
		rc = make_shards(srv, db, jobid, spec, &in);
	if (rc >= 0)
		rc = ct_wg_open_round(srv, db, jobid, 1, f.model);
	if (rc < 0) {
		/* leave no half-made job behind that the daemons would pick up */
		ct_job_move(db, jobid, CT_JOB_RUNNING, CT_JOB_ERROR,
			    &(struct ct_job_change){ .now = ct_db_now(db),
						     .msg = "submission failed" });
		goto out;
	}
	rc = 0;
	ct_log_info("job %" PRId64 " submitted: %d shards x %d rounds", jobid, spec->shards,
		    spec->rounds);
	*jobid_out = jobid;
out:
	free_inputs(&in);
	return rc;
}

/* ---- rounds ------------------------------------------------------------ */

struct round_txn {
	int64_t jobid;
	int idx;
	const char *model;
	const char *lora_init;	/* the adapters its WUs start from; NULL none */
};

static int insert_wu(struct ct_db *db, const struct round_txn *t, const struct ct_job_policy *p,
		     int64_t roundid, int64_t model_size, int k)
{
	struct ct_job_shard_row sh;
	char wu[64], rn[96];
	int64_t now = ct_db_now(db), wuid;
	struct ct_lora_spec lora;
	int rc;

	/* a LoRA round's shards start from the same adapters, one seed per
	 * round, so their adapter updates compare (lora_robust.h) */
	rc = ct_lora_job_get(db, t->jobid, &lora);
	if (rc == 0)
		rc = ct_job_shard_get(db, t->jobid, k, &sh);
	if (rc < 0)
		return rc;
	snprintf(wu, sizeof(wu), "j%" PRId64 "-r%d-s%d", t->jobid, t->idx, k);
	struct ct_wu_new w = {
		.name = wu, .model_sha256 = t->model, .data_sha256 = sh.sha256, .now = now,
		.jobid = t->jobid, .roundid = roundid,
		.seed = ct_wg_wu_seed(p->seed, t->idx, lora.rank > 0 ? 0 : k),
		.model_size = model_size, .data_size = sh.size, .data_tokens = sh.ntokens,
		.round_idx = t->idx, .shard = k, .target_nresults = p->target_nresults,
		.min_quorum = p->min_quorum, .max_error_results = p->max_error_results,
		.max_total_results = p->max_total_results,
		.max_success_results = p->max_success_results, .delay_bound = p->delay_bound,
	};
	rc = ct_wu_insert(db, &w, &wuid);
	for (int n = 0; rc == 0 && n < p->target_nresults; n++) {
		snprintf(rn, sizeof(rn), "%s-%d", wu, n);
		rc = ct_res_create(db, wuid, t->jobid, rn, now);
	}
	return rc < 0 ? rc : 0;
}

static int open_round_txn(struct ct_db *db, void *arg)
{
	struct round_txn *t = arg;
	struct ct_job_policy p;
	int64_t exists = 0, model_size = 0, roundid;
	int rc;

	rc = ct_job_lock_policy(db, t->jobid, &p);
	if (rc < 0)
		return rc;
	if (p.status != CT_JOB_RUNNING)
		return ct_error(CT_ESTATE, "job %" PRId64 " is %s", t->jobid,
				ct_job_status_name(p.status));
	if (t->idx < 1 || t->idx > p.nrounds)
		return ct_error(CT_ERANGE, "job %" PRId64 " has rounds 1..%d", t->jobid, p.nrounds);
	rc = ct_round_find(db, t->jobid, t->idx, &exists);
	if (rc == 0)
		return 0;	/* opened already */
	if (rc != CT_ENOTFOUND)
		return rc;
	rc = ct_store_size(db, t->model, &model_size);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "model %s is not in the store", t->model);
	if (rc < 0)
		return rc;
	if (t->lora_init != NULL) {	/* kept by the store (ct_wg_open_round_from) */
		rc = ct_store_size(db, t->lora_init, &(int64_t){ 0 });
		if (rc == CT_ENOTFOUND)
			return ct_error(CT_ENOTFOUND, "adapters %s are not in the store",
					t->lora_init);
		if (rc < 0)
			return rc;
	}
	rc = ct_round_insert(db, t->jobid, t->idx, t->model, p.nshards, ct_db_now(db), &roundid);
	if (rc == 0 && t->lora_init != NULL)
		rc = ct_round_set_lora_init(db, roundid, t->lora_init);
	if (rc < 0)
		return rc;
	for (int k = 0; k < p.nshards; k++) {
		rc = insert_wu(db, t, &p, roundid, model_size, k);
		if (rc < 0)
			return rc;
	}
	rc = ct_job_set_cur_round(db, t->jobid, t->idx, ct_db_now(db));
	return rc < 0 ? rc : 1;
}

int ct_wg_open_round(struct ct_server *srv, struct ct_db *db, int64_t jobid, int round_idx,
		     const char *model_sha256)
{
	return ct_wg_open_round_from(srv, db, jobid, round_idx, model_sha256, NULL);
}

int ct_wg_open_round_from(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			  int round_idx, const char *model_sha256, const char *lora_init)
{
	struct round_txn t = { .jobid = jobid, .idx = round_idx, .model = model_sha256,
			       .lora_init = lora_init };
	int rc;

	(void)srv;
	if (!ct_sha256_hex_valid(model_sha256) ||
	    (lora_init != NULL && !ct_sha256_hex_valid(lora_init)))
		return ct_error(CT_EINVAL, "bad model or adapter hash");
	rc = ct_db_txn(db, open_round_txn, &t);
	if (rc > 0)
		ct_log_info("job %" PRId64 ": round %d opened from model %.12s", jobid, round_idx,
			    model_sha256);
	return rc < 0 ? rc : 0;
}
