/*
 * ct_lora_merge.c - the exact lo-fi merge of K shards' LoRA adapters into
 * full weights (ct_lora_merge in ct_lora.h).
 *
 * Every W element gets the arithmetic the header spells out, in that
 * order: per shard k a float fmaf chain over j = 0..r-1 (d), a float sum
 * of the K chains in shard order (acc), then W + s * (acc / K). The loops
 * are arranged so the compiler can vectorise across the elements of a
 * row (one chain per lane, fmaf a real fused multiply-add on every lane)
 * without changing any element's operations; rows are shared out to
 * threads, which changes nothing either: every element is computed by
 * exactly one thread from inputs no thread writes.
 */
#include "config.h"
#include "ct_lora.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_isa.h"
#include "ct_os.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MERGE_MAX_THREADS 64
#define MERGE_MAX_K (1 << 20)	/* (float)K stays exact, far above any round */
#define ROW_BLOCK 8		/* rows a thread takes at a time */

struct merge_args {
	const struct ct_model_config *cfg;
	const struct ct_lora_spec *spec;
	float *params;
	const float *const *adapters;
	int K, nslots, nthreads, id;
	float s;
	float *scratch;		/* 2 * width floats of this worker */
	size_t width;		/* the widest W row (largest `in`) */
};

/* Row o of slot sl: w[i] += s * ((sum_k chain_k[i]) / K), i < in.
 * acc and d hold `in` floats of scratch. */
static CT_KERNEL(merge_row,
		 (float *restrict w, const struct merge_args *m,
		  const struct ct_lora_slot *sl, int o, float *restrict acc,
		  float *restrict d),
		 (w, m, sl, o, acc, d))
{
	const int r = m->spec->rank, in = sl->in;
	const float Kf = (float)m->K, s = m->s;

	for (int i = 0; i < in; i++)
		acc[i] = 0.0f;
	for (int k = 0; k < m->K; k++) {
		const float *A = m->adapters[k] + sl->a_off;
		const float *B = m->adapters[k] + sl->b_off + (size_t)o * r;

		for (int i = 0; i < in; i++)
			d[i] = 0.0f;
		for (int j = 0; j < r; j++) {
			const float b = B[j];
			const float *restrict a = A + (size_t)j * in;

			for (int i = 0; i < in; i++)
				d[i] = fmaf(b, a[i], d[i]);
		}
		for (int i = 0; i < in; i++)
			acc[i] = acc[i] + d[i];
	}
	for (int i = 0; i < in; i++)
		w[i] = w[i] + s * (acc[i] / Kf);
}

static void *merge_worker(void *arg)
{
	struct merge_args *m = arg;

	for (int si = 0; si < m->nslots; si++) {
		struct ct_lora_slot sl;

		ct_lora_slot(m->cfg, m->spec, si, &sl);
		for (int o0 = m->id * ROW_BLOCK; o0 < sl.out; o0 += m->nthreads * ROW_BLOCK)
			for (int o = o0; o < o0 + ROW_BLOCK && o < sl.out; o++)
				merge_row(m->params + sl.w_off + (size_t)o * sl.in, m, &sl, o,
					  m->scratch, m->scratch + m->width);
	}
	return NULL;
}

/* $CTUNE_THREADS, else the online CPUs; one thread for small merges. */
static int merge_threads(double work)
{
	long n = ct_opt_int(CT_OPT_THREADS, ct_os_ncpus());

	if (work < 4e6)
		return 1;
	return n < 1 ? 1 : n > MERGE_MAX_THREADS ? MERGE_MAX_THREADS : (int)n;
}

int ct_lora_merge(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		  float *params, const float *const *adapters, int K)
{
	struct merge_args args[MERGE_MAX_THREADS];
	pthread_t tid[MERGE_MAX_THREADS];
	int ok[MERGE_MAX_THREADS] = { 0 };
	float *scratch = NULL;
	size_t width = 0;
	double work = 0.0;
	int rc, nt, nslots;

	rc = ct_lora_spec_check(spec, cfg);
	if (rc < 0)
		return rc;
	if (spec->rank == 0)
		return ct_error(CT_EINVAL, "LoRA merge: rank 0 has no adapters");
	if (K < 1 || K > MERGE_MAX_K || params == NULL || adapters == NULL)
		return ct_error(CT_EINVAL, "LoRA merge: K = %d shards (want 1..%d)", K,
				MERGE_MAX_K);
	for (int k = 0; k < K; k++)
		if (adapters[k] == NULL)
			return ct_error(CT_EINVAL, "LoRA merge: shard %d has no adapters", k);
	nslots = ct_lora_nslots(cfg, spec);
	for (int i = 0; i < nslots; i++) {
		struct ct_lora_slot sl;

		ct_lora_slot(cfg, spec, i, &sl);
		width = (size_t)sl.in > width ? (size_t)sl.in : width;
		work += (double)sl.out * sl.in * spec->rank * K;
	}
	nt = merge_threads(work);
	/* all scratch up front: a failure leaves params untouched */
	scratch = malloc((size_t)nt * 2 * width * sizeof(float));
	if (scratch == NULL)
		return ct_error(CT_ENOMEM, "LoRA merge: %zu bytes of scratch",
				(size_t)nt * 2 * width * sizeof(float));
	for (int i = 0; i < nt; i++) {
		args[i] = (struct merge_args){ .cfg = cfg, .spec = spec, .params = params,
					       .adapters = adapters, .K = K, .nslots = nslots,
					       .nthreads = nt, .id = i,
					       .s = spec->alpha / (float)spec->rank,
					       .scratch = scratch + (size_t)i * 2 * width,
					       .width = width };
		if (i > 0)
			ok[i] = pthread_create(&tid[i], NULL, merge_worker, &args[i]) == 0;
	}
	merge_worker(&args[0]);
	for (int i = 1; i < nt; i++) {
		if (ok[i])
			pthread_join(tid[i], NULL);
		else
			merge_worker(&args[i]);	/* same rows on this thread */
	}
	free(scratch);
	return 0;
}
