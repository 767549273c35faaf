/*
 * lora_robust.c - see lora_robust.h.
 */
#include "lora_robust.h"

#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_log.h"
#include "ct_lora.h"
#include "data/dl_workunit.h"
#include "data/lora_job.h"
#include "lora_round.h"
#include "robust.h"
#include "robust_aside.h"
#include "data/server.h"

struct lora_src {
	float **ads;	/* the K canonical adapter sets */
	size_t n;	/* floats each */
};

static int load_adapters(void *ctx, int i, float *w)
{
	const struct lora_src *s = ctx;

	memcpy(w, s->ads[i], s->n * sizeof(float));
	return 0;
}

/* The one seed of the round's WUs; *one = 0 when they differ. */
static int round_seed(struct ct_db *db, int64_t roundid, int64_t *seed, int *one)
{
	int64_t nseeds = 0;
	int rc;

	rc = ct_wu_round_seeds(db, roundid, &nseeds, seed);
	*one = rc == 0 && nseeds == 1;
	return rc;
}

int ct_lora_robust_check(struct ct_server *srv, struct ct_db *db, int64_t jobid, int idx,
			 int64_t roundid, int nwus, const struct ct_gpt2 *base)
{
	struct ct_lora_spec spec;
	struct lora_src src = { NULL, 0 };
	int64_t seed = 0;
	float *init = NULL;
	int rc, one = 0;

	if (nwus < 1 || nwus > CT_ROBUST_MAX_K)
		return ct_error(CT_ERANGE, "round %lld: %d WUs", (long long)roundid, nwus);
	rc = ct_lora_job_get(db, jobid, &spec);
	if (rc == 0 && spec.rank == 0)
		rc = ct_error(CT_EINVAL, "job %lld is not a LoRA job", (long long)jobid);
	if (rc == 0)
		rc = round_seed(db, roundid, &seed, &one);
	if (rc < 0)
		return rc;
	if (nwus < 3 || !one) {	/* no check (robust.h), or nothing to compare */
		if (nwus >= 3)	/* a round opened before its shards shared a seed */
			ct_log_warn("assimilator: job %lld round %d: its shards started from "
				    "different adapters: no cross-shard check", (long long)jobid,
				    idx);
		return ct_robust_aside_caught(db, jobid, idx);
	}
	src.n = ct_lora_nparams(&base->cfg, &spec);
	src.ads = calloc((size_t)nwus, sizeof(*src.ads));
	init = malloc(src.n * sizeof(float));
	if (src.ads == NULL || init == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	rc = ct_lora_round_init(srv, db, roundid, &base->cfg, &spec, (uint64_t)seed, init);
	if (rc >= 0)
		rc = ct_lora_round_adapters(srv, db, roundid, nwus, &base->cfg, &spec, src.ads);
	if (rc == 0)
		rc = ct_robust_check_round(srv->conf, db, jobid, idx, nwus, src.n, init,
					   load_adapters, &src, NULL);
out:
	for (int k = 0; src.ads && k < nwus; k++)
		free(src.ads[k]);
	free(src.ads);
	free(init);
	return rc;
}
