/*
 * submit_check.c - `job submit`'s checks of inputs that parse but cannot
 * give a good model (see submit_check.h). The compressed formats are a
 * table of magic numbers and the command that gives the text back.
 */
#include "submit_check.h"
#include "ct_base.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ct_engine.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_log.h"
#include "ct_tokens.h"
#include "eval.h"

/* The formats a text file is most often handed over in by mistake. */
static const struct packed_kind {
	const char *name;
	unsigned char magic[6];
	size_t len;
	const char *undo;	/* the command that writes the text back */
} packed_kinds[] = {
	{ "gzip", { 0x1f, 0x8b }, 2, "zcat" },
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstdcat" },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, "xzcat" },
	{ "bzip2", { 'B', 'Z', 'h' }, 3, "bzcat" },
	{ "zip", { 'P', 'K', 3, 4 }, 4, "unzip -p" },
};

int ct_submit_check_text(const char *opt, const char *name, const void *data, size_t len)
{
	const unsigned char *p = data, *nul;

	for (size_t i = 0; i < sizeof(packed_kinds) / sizeof(packed_kinds[0]); i++) {
		const struct packed_kind *k = &packed_kinds[i];

		if (len >= k->len && memcmp(p, k->magic, k->len) == 0)
			return ct_error(CT_EFORMAT, "%s %s is %s-compressed, not text: pass the "
					"text itself (%s %s > FILE; %s FILE)", opt, name,
					k->name, k->undo, name, opt);
	}
	nul = memchr(p, 0, len);
	if (nul != NULL)
		return ct_error(CT_EFORMAT, "%s %s is binary, not text (a NUL byte at offset "
				"%zu): pass text files (UTF-8); a token file goes with %s",
				opt, name, (size_t)(nul - p),
				strcmp(opt, "--eval-text") == 0 ? "--eval" : "--train");
	return 0;
}

double ct_submit_passes(int64_t shard_tokens, int steps, int batch, int seq)
{
	if (shard_tokens <= 0)
		return 0;
	return (double)steps * batch * seq / (double)shard_tokens;
}

int ct_submit_warn_shards(int64_t train_tokens, int shards, int steps, int batch, int seq)
{
	int64_t shard = shards > 0 ? train_tokens / shards : 0;
	int64_t wu = (int64_t)steps * batch * seq;
	double passes = ct_submit_passes(shard, steps, batch, seq);
	int64_t most = wu > 0 ? train_tokens / wu : 0;

	if (passes <= 1.0)
		return 0;
	ct_log_warn("job submit: each WU trains on %" PRId64 " tokens (steps x batch x seq) "
		    "but its shard holds %" PRId64 ": %.1f passes over the same tokens per WU "
		    "(overfits); use --shards %" PRId64 " or fewer, or --steps %" PRId64
		    " or fewer", wu, shard, passes, most > 0 ? most : 1,
		    (int64_t)((double)shard / ((double)batch * seq)) > 0
			    ? (int64_t)((double)shard / ((double)batch * seq)) : 1);
	return 1;
}

int ct_submit_loss_rises(const double *loss, size_t n, char *note, size_t cap)
{
	if (cap > 0)
		note[0] = 0;
	for (size_t r = 2; r < n; r++) {
		/* NaN compares false: a round not evaluated ends the run */
		if (!(loss[r - 2] < loss[r - 1] && loss[r - 1] < loss[r]))
			continue;
		if (cap > 0)
			snprintf(note, cap, "eval loss rose two rounds in a row (round %zu %.4f, "
				 "%zu %.4f, %zu %.4f; round 0 is the base model): training is "
				 "making the model worse (shards smaller than a WU? --lr too "
				 "high?)", r - 2, loss[r - 2], r - 1, loss[r - 1], r, loss[r]);
		return (int)r;
	}
	return -1;
}

int ct_submit_check_base(const char *model_path, const struct ct_tokens *eval, int V, int seq)
{
	struct ct_tokens head = { 0 };
	struct ct_gpt2 m = { 0 };
	uint64_t nseq = eval->n > 0 ? (eval->n - 1) / (uint64_t)seq : 0;
	uint64_t ntok = (nseq > 4 ? 4 : nseq) * (uint64_t)seq + 1;
	ct_tok *ids = NULL;
	double logv = log((double)V);
	float loss = 0;
	int rc;

	if (nseq == 0 || V < 2)
		return 0;	/* wg.c refuses an eval file shorter than seq+1 */
	ids = malloc(ntok * sizeof(*ids));
	if (ids == NULL)
		return ct_error(CT_ENOMEM, "base model check");
	for (uint64_t i = 0; i < ntok; i++)	/* eval may be mapped, not widened */
		ids[i] = ct_tokens_get(eval, i);
	rc = ct_tokens_from_array(&head, ids, ntok);
	free(ids);
	if (rc == 0)
		rc = ct_seval_model_load(model_path, &m);
	if (rc == 0)
		rc = ct_eval(&m, &head, 1, seq, (int)((ntok - 1) / (uint64_t)seq), "cpu", &loss);
	ct_gpt2_free(&m);
	ct_tokens_free(&head);
	if (rc < 0)
		return rc;
	if (loss >= CT_SUBMIT_UNTRAINED_FRACTION * logv)
		return ct_error(CT_EINVAL, "the base model looks untrained: its eval loss %.3f is "
				"not clearly below log V = %.3f, what a model that predicts "
				"every token alike scores; start from a model pretrained on "
				"similar text, or pass --allow-random-base",
				loss, logv);
	ct_log_info("job submit: base model eval loss %.3f (log V = %.3f)", loss, logv);
	return 0;
}

int ct_submit_check_base_file(const char *model_path, const char *eval_path, int seq)
{
	struct ct_model_config cfg;
	struct ct_tokens eval = { 0 };
	int rc;

	if (model_path == NULL || eval_path == NULL || seq < 1)
		return 0;
	if (ct_base_read_config(model_path, &cfg, NULL) < 0 || seq > cfg.maxT ||
	    ct_tokens_load_any(eval_path, &eval) < 0)
		return 0;
	rc = ct_tokens_check_vocab(&eval, cfg.V) < 0 ? 0
		: ct_submit_check_base(model_path, &eval, cfg.V, seq);
	ct_tokens_free(&eval);
	return rc;
}
