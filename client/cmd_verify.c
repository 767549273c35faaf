/*
 * cmd_verify.c - `ctune verify URL JOB`: check a project's work without
 * trusting it (doc/receipts.md).
 *
 * It fetches the job's round receipts, checks each one's signature, that
 * each names the previous one's hash and starts from the model the one
 * before ended with, then downloads the inputs of the work units it
 * picks by their hashes (so the server cannot hand it other bytes),
 * recomputes those WUs on the local device and compares the hash of each
 * result with the one the receipt states, and where the receipt (version
 * 2) states the result's hash chain, the chain too, link by link, so a
 * difference names the first step where the runs part. A compact-base
 * job's round that starts from carried adapters (receipt version 3,
 * lora_init) is recomputed from that file, on the base as stored. With
 * --all it recomputes every WU of a round, aggregates them as the server
 * says it did (the mean, a robust mean, the LoRA merge or a compact
 * base's mean adapters, then the outer step) and compares the model too. The first difference stops it: the exit status is 1 and the
 * message names the round, the WU and both hashes.
 *
 * Everything the server sends is hostile: receipts are capped in size and
 * read only in their canonical form (ct_receipt.h), the number of rounds
 * is capped, every file is fetched by hash with the size the signed
 * receipt gives (and at most --max-download), and files only ever go into
 * the cache directory under their checked hash names.
 */
#include "config.h"
#include "commands.h"
#include "cl_http.h"
#include "cl_paths.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ct_avg.h"
#include "ct_base.h"
#include "ct_chain.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_hash.h"
#include "ct_le.h"
#include "ct_lora.h"
#include "ct_lora_file.h"
#include "ct_os.h"
#include "ct_outer.h"
#include "ct_receipt.h"
#include "ct_time.h"
#include "ct_tokens.h"

#define MAX_ROUNDS 100000
/* all receipts of a job together: what is held in memory stays bounded */
#define MAX_RECEIPT_TOTAL ((uint64_t)256 << 20)
#define MOM_MAGIC "CTMOMv1"

struct vround {
	struct ct_receipt r;
	char sha[CT_SHA256_HEXLEN + 1];	/* of the receipt's bytes */
	/* --all, a compact-base job: the adapter file of the recomputed mean
	 * (what the next round's lora_init must be); "" not computed */
	char mean_sha[CT_SHA256_HEXLEN + 1];
};

struct verify {
	char url[1024];			/* base URL, no trailing slash */
	int64_t job;
	int only_round;			/* 0: every round */
	long sample;			/* WUs to recompute; -1: --all */
	uint64_t seed;			/* for the sample's choice */
	const char *device;
	char cache[PATH_MAX];
	int tmp_cache;			/* made here: removed at the end */
	unsigned char key[CT_SIGN_PUB_LEN];
	int have_key;
	uint64_t max_download;
	struct ct_http_opts http;
	struct vround *rounds;
	int nrounds;
	uint64_t downloaded;
	int nchecked, nagg, nskipped, nchains;
	double t_compute;
};

/* ---- receipts ------------------------------------------------------------ */

/* Receipt idx into *body: 1, 0 when the server has none (404), or CT_E*. */
static int get_receipt(struct verify *v, int idx, struct ct_buf *body)
{
	char url[1200];
	long status = 0;
	int rc;

	snprintf(url, sizeof(url), "%s/job/%" PRId64 "/round/%d/receipt", v->url, v->job, idx);
	ct_buf_reset(body);
	rc = ct_http_get(url, &v->http, body, &status);
	if (rc == CT_EHTTP && status == 404)
		return 0;
	if (rc == CT_ETOOBIG)
		return ct_error(CT_ETOOBIG, "receipt of round %d: over %zu bytes", idx,
				CT_RECEIPT_MAX_BYTES);
	return rc < 0 ? rc : 1;
}

/* A round that starts from carried adapters (a compact-base job's round
 * >= 2, doc/workunit.md §13) keeps the previous round's base: same file,
 * same format. Whether the adapters are the previous round's mean is
 * checked by --all, which recomputes that mean (check_round_all). */
static int carried(const struct ct_receipt *r, const struct ct_receipt *p)
{
	if (p == NULL || strcmp(r->base_format, "f32") == 0 ||
	    strcmp(r->base_format, p->base_format) != 0)
		return ct_error(CT_EMISMATCH, "round %d: carried adapters on a %s base after a "
				"%s one", r->round, r->base_format, p ? p->base_format : "no");
	if (strcmp(r->model_sha, p->model_sha) != 0 || r->model_size != p->model_size)
		return ct_error(CT_EMISMATCH, "round %d carries adapters but starts from base "
				"%.16s, not round %d's %.16s", r->round, r->model_sha, p->round,
				p->model_sha);
	return 0;
}

/* The checks one receipt must pass against the one before it. */
static int check_receipt(struct verify *v, struct vround *vr, int idx)
{
	const struct ct_receipt *r = &vr->r, *p = idx > 1 ? &v->rounds[idx - 2].r : NULL;
	int rc;

	if (!v->have_key) {	/* not pinned: the first receipt's, printed */
		memcpy(v->key, r->key, CT_SIGN_PUB_LEN);
		v->have_key = 1;
	}
	rc = ct_receipt_verify(r, v->key);
	if (rc < 0)
		return rc;
	if (r->job != v->job || r->round != idx)
		return ct_error(CT_EMISMATCH, "receipt %d says job %" PRId64 " round %d", idx,
				r->job, r->round);
	if (p != NULL && strcmp(r->prev, v->rounds[idx - 2].sha) != 0)
		return ct_error(CT_EMISMATCH, "round %d: its receipt names %.16s as the previous "
				"one, which is %.16s", idx, r->prev, v->rounds[idx - 2].sha);
	if (r->lora_init_sha[0] != '\0')	/* the same compact base, carried adapters */
		return carried(r, p);
	if (p != NULL && (strcmp(r->model_sha, p->out_sha) != 0 || r->model_size != p->out_size))
		return ct_error(CT_EMISMATCH, "round %d starts from model %.16s, but round %d "
				"ended with %.16s", idx, r->model_sha, idx - 1, p->out_sha);
	return 0;
}

static int fetch_receipts(struct verify *v)
{
	struct ct_buf body = CT_BUF_INIT(CT_RECEIPT_MAX_BYTES);
	int last = v->only_round ? v->only_round : MAX_ROUNDS, rc = 0;
	uint64_t total = 0;

	v->rounds = calloc(1, sizeof(*v->rounds));
	for (int idx = 1; rc == 0 && v->rounds != NULL && idx <= last; idx++) {
		struct vround *vr, *grown;

		rc = get_receipt(v, idx, &body);
		if (rc == 0) {
			if (idx == 1 || v->only_round)
				rc = ct_error(CT_ENOTFOUND, "job %" PRId64 " has no receipt for "
					      "round %d at %s", v->job, idx, v->url);
			break;
		}
		if (rc < 0)
			break;
		total += body.len;
		if (total > MAX_RECEIPT_TOTAL) {
			rc = ct_error(CT_ETOOBIG, "job %" PRId64 ": receipts over %llu MiB in all",
				      v->job, (unsigned long long)(MAX_RECEIPT_TOTAL >> 20));
			break;
		}
		grown = realloc(v->rounds, (size_t)idx * sizeof(*v->rounds));
		if (grown == NULL) {
			rc = CT_ENOMEM;
			break;
		}
		v->rounds = grown;
		vr = &v->rounds[idx - 1];
		memset(vr, 0, sizeof(*vr));
		v->nrounds = idx;
		ct_sha256_hex(body.data, body.len, vr->sha);
		rc = ct_receipt_parse(body.data, body.len, &vr->r);
		if (rc < 0)
			rc = ct_error(rc, "round %d: %s", idx, ct_errmsg(rc));
		else
			rc = check_receipt(v, vr, idx);
	}
	if (v->rounds == NULL)
		rc = CT_ENOMEM;
	ct_buf_free(&body);
	return rc;
}

/* ---- inputs ---------------------------------------------------------------- */

/* The store file sha (size bytes, as a signed receipt says) into the cache;
 * its path into path. A file the server changed fails here, named. */
static int fetch(struct verify *v, const char *sha, int64_t size, const char *what,
		 char path[PATH_MAX])
{
	char url[1200];
	int had, rc;

	if (!ct_sha256_hex_valid(sha))
		return ct_error(CT_EFORMAT, "%s: not a hash", what);
	if (size < 0 || (uint64_t)size > v->max_download)
		return ct_error(CT_ETOOBIG, "%s is %" PRId64 " bytes, over --max-download",
				what, size);
	rc = ct_path_join(path, PATH_MAX, v->cache, sha);
	if (rc < 0)
		return rc;
	had = ct_file_exists(path);
	snprintf(url, sizeof(url), "%s/download/%s", v->url, sha);
	rc = ct_http_fetch_cached(url, v->cache, sha, (uint64_t)size, &v->http);
	if (rc == CT_EHASH || rc == CT_ETOOBIG)
		return ct_error(CT_EMISMATCH, "%s %.16s: the server sent other bytes (%s)", what,
				sha, rc == CT_EHASH ? "another hash" : "more bytes than the receipt says");
	if (rc == 0 && !had)
		v->downloaded += (uint64_t)size;
	return rc < 0 ? ct_error(rc, "%s %.16s: %s", what, sha, ct_errmsg(rc)) : 0;
}

/* The round's model, loaded as a client loads it (a compact base stays
 * compact: ct_base_load), or widened to float32 when wide (what the
 * server merges). Its format must be the receipt's. */
static int load_model(struct verify *v, const struct ct_receipt *r, int wide, struct ct_gpt2 *m)
{
	char path[PATH_MAX], what[64];
	int rc, fmt = CT_BASE_F32;

	snprintf(what, sizeof(what), "round %d's model", r->round);
	rc = ct_base_fmt_parse(r->base_format, &fmt);
	if (rc == 0)
		rc = fetch(v, r->model_sha, r->model_size, what, path);
	if (rc == 0)
		rc = wide ? ct_base_load_f32(path, m) : ct_base_load(path, m);
	if (rc == 0 && !wide && m->fmt != fmt)
		rc = ct_error(CT_EMISMATCH, "%s is a %s base, the receipt says %s", what,
			      ct_base_fmt_name(m->fmt), r->base_format);
	return rc;
}

/* ---- recomputing --------------------------------------------------------- */

/* The WU's hyperparameters, as the client parses them from the same text. */
static int wu_hparams(const struct ct_receipt *r, const struct ct_receipt_wu *w,
		      struct ct_wu_hparams *hp)
{
	int rc = 0;

	ct_wu_hparams_default(hp);
	hp->steps = r->steps, hp->B = r->batch, hp->T = r->seq;
	hp->lr = (float)r->lr, hp->beta1 = (float)r->beta1, hp->beta2 = (float)r->beta2;
	hp->eps = (float)r->eps, hp->weight_decay = (float)r->weight_decay;
	hp->grad_clip = (float)r->grad_clip;
	if (r->lora_rank > 0) {
		hp->lora.rank = r->lora_rank;
		hp->lora.alpha = (float)r->lora_alpha;
		rc = ct_lora_targets_parse(r->lora_targets, &hp->lora.targets);
		if (rc == 0)
			rc = ct_base_fmt_parse(r->base_format, &hp->lora.base_fmt);
		hp->lora_seed = w->seed;
	}
	return rc;
}

/* Train the WU to its end, from the adapters init when not NULL (as a
 * client does with its lora_init input), its trained floats into out;
 * with every > 0 the chain's links as the client records them
 * (ct_chain.h) into hex (CT_CHAIN_HEX_MAX + 1 bytes). */
static int train(const struct ct_gpt2 *base, const struct ct_tokens *tok,
		 const struct ct_wu_hparams *hp, const char *device, const float *init,
		 int every, float *out, char *hex)
{
	struct ct_wu *wu = NULL;
	unsigned char d[32];
	float loss;
	int rc, k = 0;

	if (every <= 0 && init == NULL)
		return ct_wu_run(base, tok, hp, device, out, NULL);
	rc = ct_wu_open(base, tok, hp, device, &wu);
	if (rc == 0 && init != NULL)
		rc = ct_wu_set_adapters(wu, init);
	while (rc == 0 && !ct_wu_done(wu)) {
		rc = ct_wu_step(wu, &loss);
		if (rc == 0 && ct_chain_due(ct_wu_steps_done(wu), hp->steps, every) &&
		    k < CT_CHAIN_MAX_LINKS) {
			rc = ct_wu_chain_link(wu, d);
			if (rc == 0)
				ct_hex_encode(d, sizeof(d), hex + 64 * k++);
		}
	}
	hex[64 * k] = '\0';
	if (rc == 0)
		rc = ct_wu_read_trained(wu, out);
	ct_wu_close(wu);
	return rc;
}

/* The adapters round r's WUs start from, when the receipt names a file
 * (n floats, malloc'd into *init: the caller frees), fetched by hash with
 * the receipt's size and checked against the WU's spec; NULL when none. */
static int load_init(struct verify *v, const struct ct_receipt *r, const struct ct_gpt2 *base,
		     const struct ct_wu_hparams *hp, size_t n, float **init)
{
	char path[PATH_MAX], what[64];
	int rc;

	*init = NULL;
	if (r->lora_init_sha[0] == '\0')
		return 0;
	snprintf(what, sizeof(what), "round %d's carried adapters", r->round);
	if ((uint64_t)r->lora_init_size != ct_lora_file_size(&base->cfg, &hp->lora))
		return ct_error(CT_EFORMAT, "%s: %" PRId64 " bytes, not an adapter file of the "
				"job's spec", what, r->lora_init_size);
	rc = fetch(v, r->lora_init_sha, r->lora_init_size, what, path);
	if (rc == 0 && (*init = malloc(n * sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0)
		rc = ct_lora_file_load(path, &base->cfg, &hp->lora, *init);
	if (rc < 0) {
		free(*init);
		*init = NULL;
		return ct_error(rc, "%s: %s", what, ct_errmsg(rc));
	}
	return 0;
}

/* Recompute WU w of round r from base; its trained floats into *out (n
 * floats, malloc'd: the caller frees) and, when the receipt states a
 * chain, its recomputed chain into hex. */
static int run_wu(struct verify *v, const struct ct_receipt *r, const struct ct_receipt_wu *w,
		  const struct ct_gpt2 *base, float **out, size_t *n, char *hex)
{
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	char path[PATH_MAX], what[64];
	float *init = NULL;
	double t0;
	int rc;

	*out = NULL;
	snprintf(what, sizeof(what), "round %d shard %d's tokens", r->round, w->shard);
	rc = wu_hparams(r, w, &hp);
	if (rc == 0)
		rc = fetch(v, w->data_sha, w->data_size, what, path);
	if (rc == 0)
		rc = ct_tokens_load(path, &tok);
	if (rc == 0)
		rc = ct_wu_hparams_check(&hp, &base->cfg, tok.n);
	*n = hp.lora.rank > 0 ? ct_lora_nparams(&base->cfg, &hp.lora) : base->lay.total;
	if (rc == 0 && (*out = malloc(*n * sizeof(float))) == NULL)
		rc = CT_ENOMEM;
	if (rc == 0 && hp.lora.rank > 0)
		rc = load_init(v, r, base, &hp, *n, &init);
	t0 = ct_time_mono_s();
	if (rc == 0)
		rc = train(base, &tok, &hp, v->device, init, w->chain_every, *out, hex);
	v->t_compute += ct_time_mono_s() - t0;
	free(init);
	ct_tokens_free(&tok);
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* The chain the receipt states for w, fetched by its hash (the size its
 * interval gives), into hex (CT_CHAIN_HEX_MAX + 1 bytes). */
static int receipt_chain(struct verify *v, const struct ct_receipt *r,
			 const struct ct_receipt_wu *w, char *hex)
{
	int nlinks = ct_chain_nlinks(r->steps, w->chain_every);
	unsigned char *data = NULL;
	char path[PATH_MAX], what[64];
	size_t len = 0;
	int rc;

	snprintf(what, sizeof(what), "round %d shard %d's hash chain", r->round, w->shard);
	rc = fetch(v, w->chain_sha, (int64_t)nlinks * 64, what, path);
	if (rc == 0)
		rc = ct_file_read_all(path, CT_CHAIN_HEX_MAX, &data, &len);
	if (rc == 0 && len != (size_t)nlinks * 64)
		rc = ct_error(CT_EFORMAT, "%s: %zu bytes, not %d links", what, len, nlinks);
	if (rc == 0) {
		memcpy(hex, data, len);
		hex[len] = '\0';
		rc = ct_chain_check(hex, r->steps, w->chain_every);
		if (rc < 0)
			rc = ct_error(rc, "%s: %s", what, ct_errmsg(rc));
	}
	free(data);
	return rc;
}

/* The recomputed chain got against the receipt's: link by link. For a
 * WU the receipt says was agreed by hash the first differing link fails
 * the check, naming its step; otherwise (by tolerance, lossy uploads) it
 * is said and nothing more. */
static int check_chain(struct verify *v, const struct ct_receipt *r,
		       const struct ct_receipt_wu *w, const char *got, int comparable)
{
	static char want[CT_CHAIN_HEX_MAX + 1];
	int agreed, parted, k, rc = receipt_chain(v, r, w, want);

	if (rc < 0)
		return rc;
	k = ct_chain_parting(got, want, r->steps, w->chain_every, &agreed, &parted);
	if (k < 0) {
		printf("round %d shard %d: hash chain of %d links (a link every %d steps) "
		       "equal to the receipt's, link by link\n", r->round, w->shard,
		       ct_chain_nlinks(r->steps, w->chain_every), w->chain_every);
		v->nchains++;
		return 0;
	}
	printf("round %d shard %d: hash chain agrees with the receipt's up to step %d and "
	       "differs at link %d (after step %d): recomputed %.64s, the receipt says %.64s%s\n",
	       r->round, w->shard, agreed, k, parted, got + 64 * k, want + 64 * k,
	       comparable ? "" : " (not a mismatch: the replicas were not compared by hash)");
	if (!comparable)
		return 0;
	return ct_error(CT_EMISMATCH, "round %d shard %d: the recomputed hash chain parts from "
			"the receipt's at link %d: they agree up to step %d, differ by step %d",
			r->round, w->shard, k, agreed, parted);
}

/* The hash of n floats as the result files give it (little-endian). */
static void floats_sha(const float *x, size_t n, char hex[CT_SHA256_HEXLEN + 1])
{
	ct_sha256_hex(x, n * sizeof(float), hex);
}

/* Recompute one WU and compare, its chain first when the receipt states
 * one (so a mismatch names its first step); *out keeps its result when
 * out is not NULL (for the aggregate). */
static int check_wu(struct verify *v, const struct ct_receipt *r, int i,
		    const struct ct_gpt2 *base, float **out)
{
	static char chain[CT_CHAIN_HEX_MAX + 1];
	const struct ct_receipt_wu *w = &r->wus[i];
	char got[CT_SHA256_HEXLEN + 1];
	float *x = NULL;
	size_t n = 0;
	double t0 = v->t_compute;
	int comparable = strcmp(r->encoding, "lossless") == 0 && !w->tolerance &&
			 w->result_sha[0] != '\0';
	int rc = run_wu(v, r, w, base, &x, &n, chain);

	if (rc < 0)
		return ct_error(rc, "round %d shard %d: %s", r->round, w->shard, ct_errmsg(rc));
	floats_sha(x, n, got);
	if (w->chain_every > 0)
		rc = check_chain(v, r, w, chain, comparable);
	if (rc == 0)
		printf("round %d shard %d: recomputed on %s in %.2f s: %s ", r->round, w->shard,
		       v->device, v->t_compute - t0, got);
	if (rc < 0) {
		/* named by the chain */
	} else if (!comparable) {
		printf("(not comparable: %s)\n", w->result_sha[0] == '\0' ? "the server did not "
		       "record the result's hash" : w->tolerance ? "its replicas agreed by "
		       "tolerance, not by hash" : "lossy uploads");
		v->nskipped++;
	} else if (strcmp(got, w->result_sha) == 0) {
		printf("matches the receipt\n");
		v->nchecked++;
	} else {
		printf("DIFFERS\n");
		rc = ct_error(CT_EMISMATCH, "round %d shard %d: the recomputed result is %s, the "
			      "receipt says %s (hosts of the agreed result: %d)", r->round,
			      w->shard, got, w->result_sha, w->nhosts);
	}
	fflush(stdout);
	if (rc == 0 && out != NULL)
		*out = x;
	else
		free(x);
	return rc;
}

/* ---- the aggregate ---------------------------------------------------------- */

/* SHA-256 of a file made of a header (hlen bytes) and n floats. */
static int file_sha(const void *hdr, size_t hlen, const float *x, size_t n,
		    char hex[CT_SHA256_HEXLEN + 1])
{
	struct ct_sha256_ctx *h = NULL;
	unsigned char d[CT_SHA256_LEN];
	int rc = ct_sha256_init(&h);

	if (rc == 0) rc = ct_sha256_update(h, hdr, hlen);
	if (rc == 0) rc = ct_sha256_update(h, x, n * sizeof(float));
	if (rc == 0) {
		rc = ct_sha256_final(h, d);
		h = NULL;
	}
	ct_sha256_abort(h);
	if (rc == 0)
		ct_hex_encode(d, CT_SHA256_LEN, hex);
	return rc;
}

/* SHA-256 of the adapter file (ct_lora_file.h) the n floats ad make. */
static int adapters_sha(const struct ct_gpt2 *base, const struct ct_lora_spec *spec,
			const float *ad, size_t n, char hex[CT_SHA256_HEXLEN + 1])
{
	unsigned char hdr[CT_LORA_FILE_HDR];

	ct_lora_file_header(&base->cfg, spec, hdr);
	return file_sha(hdr, sizeof(hdr), ad, n, hex);
}

/* A compact-base round's aggregate (the server's merge_mean_adapters):
 * the mean of the K adapter arrays, merged alone into agg (the widened
 * base's weights); the mean's adapter file hash into mean_sha. */
static int merge_mean(const struct ct_gpt2 *base, const struct ct_lora_spec *spec,
		      float **res, size_t k, float *agg, char *mean_sha)
{
	size_t n = ct_lora_nparams(&base->cfg, spec);
	float *mean = malloc(n * sizeof(float));
	int rc = mean ? 0 : CT_ENOMEM;

	if (rc == 0)
		rc = ct_avg(mean, (const float *const *)res, k, n, CT_AVG_MEAN, 0);
	if (rc == 0)
		rc = ct_lora_merge(&base->cfg, spec, agg, (const float *const *)&mean, 1);
	if (rc == 0)
		rc = adapters_sha(base, spec, mean, n, mean_sha);
	free(mean);
	return rc;
}

/* The aggregate of the K results into agg (the model's weights), as the
 * assimilator computes it; a compact-base round's mean adapters' file
 * hash into mean_sha (else ""). */
static int aggregate(const struct ct_receipt *r, const struct ct_gpt2 *base, float **res,
		     float *agg, char *mean_sha)
{
	enum ct_avg_method m = CT_AVG_MEAN;
	size_t k = (size_t)r->nwus, trim = 0;
	struct ct_wu_hparams hp;
	int rc;

	mean_sha[0] = '\0';
	if (r->lora_rank > 0) {	/* base + the mean of the K adapter products */
		rc = wu_hparams(r, &r->wus[0], &hp);
		memcpy(agg, base->params, base->lay.total * sizeof(float));
		if (rc == 0 && hp.lora.base_fmt != CT_BASE_F32)
			return merge_mean(base, &hp.lora, res, k, agg, mean_sha);
		return rc < 0 ? rc : ct_lora_merge(&base->cfg, &hp.lora, agg,
						   (const float *const *)res, (int)k);
	}
	rc = ct_avg_parse_method(r->aggregation, &m);
	if (rc == 0 && m == CT_AVG_TRIMMED) {	/* assimilator.c's trim */
		trim = k / 10 > 0 ? k / 10 : 1;
		if (2 * trim >= k)
			m = CT_AVG_MEAN, trim = 0;
	}
	return rc < 0 ? rc : ct_avg(agg, (const float *const *)res, k, base->lay.total, m, trim);
}

/* The outer step, the momentum buffers read and written checked by hash. */
static int outer(struct verify *v, const struct ct_receipt *r, const struct ct_gpt2 *base,
		 float *agg)
{
	struct ct_outer o = { CT_OUTER_MEAN, (float)r->outer_lr, (float)r->outer_momentum };
	size_t n = base->lay.total;
	unsigned char hdr[16] = MOM_MAGIC;
	struct ct_mmap map = { 0 };
	char path[PATH_MAX], got[CT_SHA256_HEXLEN + 1], what[64];
	float *mom = NULL;
	int rc = ct_outer_parse(r->outer, &o.method), have = r->mom_in[0] != '\0';

	if (rc < 0 || o.method == CT_OUTER_MEAN)
		return rc;
	snprintf(what, sizeof(what), "round %d's momentum in", r->round);
	if ((mom = calloc(n, sizeof(float))) == NULL)
		return CT_ENOMEM;
	if (have)
		rc = fetch(v, r->mom_in, (int64_t)(16 + n * sizeof(float)), what, path);
	if (rc == 0 && have)
		rc = ct_file_map(path, &map);
	if (rc == 0 && have && (map.len != 16 + n * sizeof(float) ||
				memcmp(map.addr, MOM_MAGIC, 8) != 0 ||
				ct_le_get64((const unsigned char *)map.addr + 8) != n))
		rc = ct_error(CT_EFORMAT, "%s: not a buffer of %zu floats", what, n);
	if (rc == 0 && have)
		memcpy(mom, (const unsigned char *)map.addr + 16, n * sizeof(float));
	ct_file_unmap(&map);
	if (rc == 0) {
		ct_outer_step(&o, base->params, agg, mom, have, n);
		ct_le_put64(hdr + 8, (uint64_t)n);
		rc = file_sha(hdr, sizeof(hdr), mom, n, got);
	}
	if (rc == 0 && strcmp(got, r->mom_out) != 0)
		rc = ct_error(CT_EMISMATCH, "round %d: the outer step's momentum is %s, the receipt "
			      "says %s", r->round, got, r->mom_out[0] ? r->mom_out : "none");
	free(mom);
	return rc;
}

/* The hash of the checkpoint the weights make (the assimilator's bytes). */
static int model_sha(const struct ct_gpt2 *base, const float *w, char hex[CT_SHA256_HEXLEN + 1])
{
	unsigned char hdr[CT_GPT2_HEADER_BYTES];

	ct_gpt2_file_header(&base->cfg, hdr);
	return file_sha(hdr, sizeof(hdr), w, base->lay.total, hex);
}

/* The round's aggregate from the K recomputed results res against the
 * model the server merges into (base; widened for a compact base). */
static int check_aggregate(struct verify *v, struct vround *vr, const struct ct_gpt2 *base,
			   float **res)
{
	const struct ct_receipt *r = &vr->r;
	char got[CT_SHA256_HEXLEN + 1];
	float *agg = malloc(base->lay.total * sizeof(float));
	int rc = agg ? 0 : CT_ENOMEM;

	if (rc == 0)
		rc = aggregate(r, base, res, agg, vr->mean_sha);
	if (rc == 0)
		rc = outer(v, r, base, agg);
	if (rc == 0)
		rc = model_sha(base, agg, got);
	free(agg);
	if (rc < 0)
		return ct_error(rc, "round %d: aggregate: %s", r->round, ct_errmsg(rc));
	printf("round %d: aggregate of %d results (%s%s%s): model %s ", r->round, r->nwus,
	       vr->mean_sha[0] ? "LoRA mean adapters" : r->lora_rank > 0 ? "LoRA merge" :
	       r->aggregation,
	       strcmp(r->outer, "mean") ? ", outer " : "", strcmp(r->outer, "mean") ? r->outer : "",
	       got);
	if (strcmp(got, r->out_sha) != 0) {
		printf("DIFFERS\n");
		return ct_error(CT_EMISMATCH, "round %d: the aggregate of the recomputed results "
				"is model %s, the receipt says %s", r->round, got, r->out_sha);
	}
	printf("matches the receipt\n");
	fflush(stdout);
	v->nagg++;
	return 0;
}

/* Round idx's carried adapters against the mean --all recomputed for
 * the round before, when it did. */
static int check_carried(struct verify *v, int idx)
{
	const struct ct_receipt *r = &v->rounds[idx - 1].r;
	const char *mean = idx > 1 ? v->rounds[idx - 2].mean_sha : "";

	if (r->lora_init_sha[0] == '\0' || mean[0] == '\0')
		return 0;
	if (strcmp(mean, r->lora_init_sha) != 0)
		return ct_error(CT_EMISMATCH, "round %d starts from adapters %s, but round %d's "
				"recomputed mean is %s", idx, r->lora_init_sha, idx - 1, mean);
	printf("round %d: starts from round %d's recomputed mean adapters %s\n", idx, idx - 1,
	       mean);
	fflush(stdout);
	return 0;
}

/* --all on round idx: every WU, then the aggregate (merged into the
 * widened base when the base is compact). */
static int check_round_all(struct verify *v, int idx)
{
	struct vround *vr = &v->rounds[idx - 1];
	const struct ct_receipt *r = &vr->r;
	struct ct_gpt2 base = { 0 }, wide = { 0 };
	int compact = strcmp(r->base_format, "f32") != 0;
	float **res = calloc(r->nwus ? (size_t)r->nwus : 1, sizeof(*res));
	int rc = res ? check_carried(v, idx) : CT_ENOMEM;

	if (rc == 0)
		rc = load_model(v, r, 0, &base);
	for (int i = 0; rc == 0 && i < r->nwus; i++)
		rc = check_wu(v, r, i, &base, &res[i]);
	if (rc == 0 && compact && r->nwus > 0)
		rc = load_model(v, r, 1, &wide);
	if (rc == 0 && r->nwus > 0 && strcmp(r->encoding, "lossless") == 0)
		rc = check_aggregate(v, vr, compact ? &wide : &base, res);
	for (int i = 0; res != NULL && i < r->nwus; i++)
		free(res[i]);
	free(res);
	ct_gpt2_free(&base);
	ct_gpt2_free(&wide);
	return rc;
}

/* ---- the sample ----------------------------------------------------------- */

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* N WUs of the chosen rounds, uniformly without replacement, recomputed
 * in round order. */
static int check_sample(struct verify *v, int first, int last)
{
	size_t total = 0, k = 0, want;
	uint64_t *pick, s = v->seed;
	struct ct_gpt2 base = { 0 };
	int rc = 0, loaded = 0;

	for (int i = first; i <= last; i++)
		total += (size_t)v->rounds[i - 1].r.nwus;
	want = (size_t)v->sample < total ? (size_t)v->sample : total;
	if ((pick = malloc((total ? total : 1) * sizeof(*pick))) == NULL)
		return CT_ENOMEM;
	for (int i = first; i <= last; i++)	/* (round << 32) | WU index */
		for (int w = 0; w < v->rounds[i - 1].r.nwus; w++)
			pick[k++] = ((uint64_t)i << 32) | (uint64_t)w;
	for (size_t i = 0; i < want; i++) {	/* a partial Fisher-Yates shuffle */
		size_t j = i + (size_t)(next_rand(&s) % (total - i));
		uint64_t t = pick[i];

		pick[i] = pick[j], pick[j] = t;
	}
	for (size_t i = 1; i < want; i++)	/* sorted: one model load per round */
		for (size_t j = i; j > 0 && pick[j - 1] > pick[j]; j--) {
			uint64_t t = pick[j];

			pick[j] = pick[j - 1], pick[j - 1] = t;
		}
	for (size_t i = 0; rc == 0 && i < want; i++) {
		const struct ct_receipt *r = &v->rounds[(pick[i] >> 32) - 1].r;

		if (loaded != r->round) {
			ct_gpt2_free(&base);
			rc = load_model(v, r, 0, &base);
			loaded = r->round;
		}
		if (rc == 0)
			rc = check_wu(v, r, (int)(pick[i] & 0xffffffffu), &base, NULL);
	}
	ct_gpt2_free(&base);
	free(pick);
	return rc;
}

/* ---- the command ---------------------------------------------------------- */

static int run(struct verify *v)
{
	int first, last, rc;
	char key[2 * CT_SIGN_PUB_LEN + 1];

	rc = fetch_receipts(v);
	if (rc < 0)
		return rc;
	ct_hex_encode(v->key, CT_SIGN_PUB_LEN, key);
	printf("job %" PRId64 " at %s: %d receipts, signed by %s, chained from round 1's "
	       "model %.16s to round %d's %.16s\n", v->job, v->url, v->nrounds, key,
	       v->rounds[0].r.model_sha, v->nrounds, v->rounds[v->nrounds - 1].r.out_sha);
	fflush(stdout);
	first = v->only_round ? v->only_round : 1;
	last = v->only_round ? v->only_round : v->nrounds;
	if (v->sample >= 0)
		return check_sample(v, first, last);
	for (int i = first; rc == 0 && i <= last; i++)
		rc = check_round_all(v, i);
	return rc;
}

/* A fresh cache in the client's state directory (`ctune --dir`), removed
 * at the end, unless --cache names one. */
static int open_cache(struct verify *v, const char *dir)
{
	char *state = NULL;
	int rc;

	if (dir != NULL) {
		snprintf(v->cache, sizeof(v->cache), "%s", dir);
		return ct_mkdir_p(v->cache, 0700);
	}
	rc = ct_cl_state_dir(NULL, &state);
	if (rc == 0)
		rc = ct_cl_make_private_dir(state);
	if (rc == 0 && snprintf(v->cache, sizeof(v->cache), "%s/verify-XXXXXX", state) >=
			       (int)sizeof(v->cache))
		rc = ct_error(CT_ETOOBIG, "%s: path too long", state);
	free(state);
	if (rc == 0 && mkdtemp(v->cache) == NULL)
		rc = ct_error_errno("%s", v->cache);
	v->tmp_cache = rc == 0;
	return rc;
}

/* Remove the cache's file of that hash, and a partial download of it. */
static void unlink_named(const struct verify *v, const char *sha)
{
	char path[PATH_MAX];
	int n;

	if (!ct_sha256_hex_valid(sha))
		return;
	n = snprintf(path, sizeof(path), "%s/%s", v->cache, sha);
	if (n > 0 && (size_t)n < sizeof(path) - 5) {
		unlink(path);
		memcpy(path + n, ".part", 6);
		unlink(path);
	}
}

static void close_cache(struct verify *v)
{
	if (!v->tmp_cache)
		return;
	for (int i = 0; i < v->nrounds; i++) {	/* only the names this run used */
		const struct ct_receipt *r = &v->rounds[i].r;

		unlink_named(v, r->model_sha);
		unlink_named(v, r->mom_in);
		unlink_named(v, r->lora_init_sha);
		for (int w = 0; w < r->nwus; w++) {
			unlink_named(v, r->wus[w].data_sha);
			unlink_named(v, r->wus[w].chain_sha);
		}
	}
	rmdir(v->cache);
}

static const struct option verify_long[] = {
	{ "round", required_argument, NULL, 'r' },
	{ "sample", required_argument, NULL, 'n' },
	{ "all", no_argument, NULL, 'a' },
	{ "device", required_argument, NULL, 'D' },
	{ "key", required_argument, NULL, 'k' },
	{ "seed", required_argument, NULL, 's' },
	{ "cache", required_argument, NULL, 'c' },
	{ "max-download", required_argument, NULL, 'm' },
	{ NULL, 0, NULL, 0 },
};

static int usage(const char *what)
{
	fprintf(stderr, "ctune verify: %s (see 'ctune verify --help')\n", what);
	return CT_EXIT_USAGE;
}

static int number(const char *s, long long lo, long long hi, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && *out >= lo && *out <= hi ? 0 : -1;
}

/* The options into v; 0 or an exit status. */
static int parse(struct verify *v, int argc, char **argv, const char **cache)
{
	long long x;
	int c, all = 0, sampled = 0;

	while ((c = getopt_long(argc, argv, "", verify_long, NULL)) != -1) {
		switch (c) {
		case 'r': if (number(optarg, 1, MAX_ROUNDS, &x) < 0) return usage("bad --round");
			v->only_round = (int)x; break;
		case 'n': if (number(optarg, 0, INT_MAX, &x) < 0) return usage("bad --sample");
			v->sample = (long)x; sampled = 1; break;
		case 'a': all = 1; break;
		case 'D': v->device = optarg; break;
		case 'k': if (ct_hex_decode(optarg, v->key, CT_SIGN_PUB_LEN) < 0)
				return usage("--key takes the project's 64-hex public key");
			v->have_key = 1; break;
		case 's': if (number(optarg, 0, LLONG_MAX, &x) < 0) return usage("bad --seed");
			v->seed = (uint64_t)x; break;
		case 'c': *cache = optarg; break;
		case 'm': if (number(optarg, 1, LLONG_MAX, &x) < 0) return usage("bad --max-download");
			v->max_download = (uint64_t)x; break;
		default: return usage("bad option");
		}
	}
	if (all && sampled)
		return usage("--sample and --all exclude each other");
	if (all)
		v->sample = -1;
	if (argc - optind != 2)
		return usage("give the project URL and the job number");
	snprintf(v->url, sizeof(v->url), "%s", argv[optind]);
	for (size_t n = strlen(v->url); n > 0 && v->url[n - 1] == '/'; n--)
		v->url[n - 1] = '\0';
	if (strncmp(v->url, "http://", 7) != 0 && strncmp(v->url, "https://", 8) != 0)
		return usage("the URL must start with http:// or https://");
	if (number(argv[optind + 1], 1, INT64_MAX, &x) < 0)
		return usage("bad job number");
	v->job = x;
	return 0;
}

static int cmd_verify(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct verify *v = calloc(1, sizeof(*v));
	const char *cache = NULL;
	int rc, st;

	(void)ctx;
	if (v == NULL)
		return CT_EXIT_FAIL;
	v->sample = 1;
	v->device = "cpu";
	v->max_download = (uint64_t)64 << 30;
	if (ct_random_bytes(&v->seed, sizeof(v->seed)) < 0)
		v->seed = (uint64_t)time(NULL);
	st = parse(v, argc, argv, &cache);
	rc = st ? 0 : open_cache(v, cache);
	if (st == 0 && rc == 0)
		rc = run(v);
	if (st == 0 && rc == 0)
		printf("verified: %d receipts; %d work units recomputed and equal%s%d not "
		       "comparable by hash; %d hash chains equal link by link; %d aggregates "
		       "equal; %.2f s of compute on %s, %.1f MB downloaded\n", v->nrounds,
		       v->nchecked, ", ", v->nskipped, v->nchains, v->nagg, v->t_compute,
		       v->device, (double)v->downloaded / 1e6);
	else if (st == 0)
		fprintf(stderr, "ctune verify: FAILED: %s\n", ct_errmsg(rc));
	if (st == 0)
		close_cache(v);
	for (int i = 0; i < v->nrounds; i++)
		ct_receipt_free(&v->rounds[i].r);
	free(v->rounds);
	free(v);
	return st ? st : rc < 0 ? CT_EXIT_FAIL : CT_EXIT_OK;
}

const struct ct_cmd_def ct_verify_cmd = {
	.name = "verify", .fn = cmd_verify, .opts = verify_long, .min_args = 2, .max_args = 2,
	.summary = "check a project's job: receipts, signatures, and recomputed work units",
	.usage = "URL JOB [--round R] [--sample N | --all] [--device D] [--key HEX]\n"
	"                    [--seed S] [--cache DIR] [--max-download BYTES]",
	.help = "Fetch job JOB's round receipts from the project at URL (no account\n"
	"needed), check each one's Ed25519 signature (against --key when given,\n"
	"else the first receipt's key, which is printed: compare it with the\n"
	"project's home page), that each names the previous receipt's hash and\n"
	"starts from the model the round before ended with. Then download the\n"
	"inputs by hash and recompute N randomly chosen work units (--sample N,\n"
	"default 1; --seed S fixes the choice) of every round, or of round R\n"
	"only, on the device D (default cpu), and compare each result's hash\n"
	"with the receipt's (and, where the receipt states the result's hash\n"
	"chain, the recomputed chain with it link by link, naming the first\n"
	"step where they part). --all recomputes every work unit and then each\n"
	"round's aggregate (the mean, the LoRA merge or, on a compact base, the\n"
	"mean adapters, and the outer step) and\n"
	"compares the model: that costs the whole job's training compute once,\n"
	"and the memory of a round's results side by side (K models for a\n"
	"full-weight job; adapters only for LoRA). The first difference stops\n"
	"the check with exit status 1 and a message that names the round, the\n"
	"shard and both hashes. Downloads go to a temporary directory removed at\n"
	"the end, or to --cache DIR (kept, reused); each file is at most\n"
	"--max-download bytes (default 64 GiB).\n",
};
