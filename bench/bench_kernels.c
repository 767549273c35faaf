/*
 * bench_kernels.c - speed of crowdtune's OpenCL kernels.
 *
 *   bench/bench_kernels [--device opencl[:N]] [--kernel NAME] [--reps N]
 *                       [--shape M,N,K] [--pack[=FLOATS]] [--tr=FLOATS]
 *
 * Prints one table row per kernel and shape: milliseconds per call (best of
 * --reps after a warm-up) and GFLOP/s, then the process CPU time per call
 * and GFLOP per CPU-second (on a shared machine the wall clock mostly
 * measures the neighbours; per-core efficiency x cores = the wall figure
 * on an idle machine). Default shape 1024x3072x768 (BT =
 * 1024 positions, C = 768 inputs, OC = 3072 outputs: GPT-2 124M's MLP).
 * Results are also checked once against a plain C product on a few
 * outputs, so a fast but wrong kernel does not go unnoticed.
 * --pack packs every B whose rows are contiguous (dinp's w, dweight's
 * inp) as the GPT-2 backend does within its scratch bound (ops.pack_max);
 * without it they are read in place. --pack=FLOATS packs B only within
 * that bound, as the backend's ops.pack_max does: a B too big to pack
 * whole is packed one k piece at a time where a piece fits.
 * --tr=FLOATS lets the weight gradient make dout^T row-major first, in
 * row blocks of at most FLOATS (the backend's ops.tr_max: 1048576 for
 * 124M at B=4 T=64); without it dout is read in place, strided.
 * On PoCL set POCL_DEVICES=pthread (and POCL_CACHE_DIR to reuse builds).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_time.h"
#include "ct_log.h"
#include "ct_ocl.h"
#include "ct_ocl_ops.h"

struct bench {
	struct ct_ocl *ocl;
	struct ct_ocl_ops ops;
	int M, N, K, reps;
	cl_mem inp, w, bias, out, dout, dinp, dw, dbias;
	float *h_inp, *h_w, *h_bias;
};

static float rnd(unsigned long long *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((*s >> 40) & 0xffffff) / 16777216.0f - 0.5f;
}

static int upload(struct bench *b, cl_mem *m, float **keep, size_t n, unsigned long long seed)
{
	float *h = malloc(n * sizeof(float));
	int rc;

	if (h == NULL)
		return CT_ENOMEM;
	for (size_t i = 0; i < n; i++)
		h[i] = rnd(&seed);
	rc = ct_ocl_alloc(b->ocl, n * sizeof(float), CL_MEM_READ_WRITE, m);
	if (rc == 0)
		rc = ct_ocl_write(&b->ops, ct_dten_at(*m, 0), h, n);
	if (keep != NULL && rc == 0)
		*keep = h;
	else
		free(h);
	return rc;
}

static int setup(struct bench *b)
{
	size_t M = b->M, N = b->N, K = b->K;
	int rc;

	rc = upload(b, &b->inp, &b->h_inp, M * K, 1);
	if (rc == 0) rc = upload(b, &b->w, &b->h_w, N * K, 2);
	if (rc == 0) rc = upload(b, &b->bias, &b->h_bias, N, 3);
	if (rc == 0) rc = upload(b, &b->out, NULL, M * N, 4);
	if (rc == 0) rc = upload(b, &b->dout, NULL, M * N, 5);
	if (rc == 0) rc = upload(b, &b->dinp, NULL, M * K, 6);
	if (rc == 0) rc = upload(b, &b->dw, NULL, N * K, 7);
	if (rc == 0) rc = upload(b, &b->dbias, NULL, N, 8);
	return rc;
}

/* Spot-check the forward product against C on a few outputs. */
static int check_forward(struct bench *b)
{
	float *out = malloc((size_t)b->M * b->N * sizeof(float));
	int rc, bad = 0;

	if (out == NULL)
		return CT_ENOMEM;
	rc = ct_ocl_matmul_forward(&b->ops, ct_dten_at(b->out, 0), ct_dten_at(b->inp, 0),
				   ct_dten_at(b->w, 0), ct_dten_at(b->bias, 0), 1,
				   b->M, b->K, b->N);
	if (rc == 0)
		rc = ct_ocl_read(&b->ops, out, ct_dten_at(b->out, 0), (size_t)b->M * b->N);
	for (int t = 0; rc == 0 && t < 64; t++) {
		int m = (int)((t * 7919u) % b->M), n = (int)((t * 104729u) % b->N);
		float acc = b->h_bias[n];

		for (int k = 0; k < b->K; k++)
			acc = fmaf(b->h_inp[(size_t)m * b->K + k], b->h_w[(size_t)n * b->K + k], acc);
		if (memcmp(&acc, &out[(size_t)m * b->N + n], sizeof(acc)) != 0)
			bad++;
	}
	free(out);
	if (rc == 0 && bad)
		rc = ct_error(CT_EMISMATCH, "matmul forward differs from C on %d of 64 outputs", bad);
	return rc;
}

typedef int (*bench_fn)(struct bench *b);

static int run_fwd(struct bench *b)
{
	return ct_ocl_matmul_forward(&b->ops, ct_dten_at(b->out, 0), ct_dten_at(b->inp, 0),
				     ct_dten_at(b->w, 0), ct_dten_at(b->bias, 0), 1,
				     b->M, b->K, b->N);
}

static int run_dinp(struct bench *b)
{
	return ct_ocl_matmul_dinp(&b->ops, ct_dten_at(b->dinp, 0), ct_dten_at(b->dout, 0),
				  ct_dten_at(b->w, 0), b->M, b->K, b->N);
}

static int run_dweight(struct bench *b)
{
	return ct_ocl_matmul_dweight(&b->ops, ct_dten_at(b->dw, 0), ct_dten_at(b->dbias, 0), 1,
				     ct_dten_at(b->dout, 0), ct_dten_at(b->inp, 0),
				     b->M, b->K, b->N);
}

struct kernel_entry {
	const char *name;
	bench_fn fn;
	double flops_per_mnk;	/* FLOPs = this * M * N * K */
};

static const struct kernel_entry kernels[] = {
	{ .name = "matmul_forward", .fn = run_fwd, .flops_per_mnk = 2.0 },
	{ .name = "matmul_dinp", .fn = run_dinp, .flops_per_mnk = 2.0 },
	{ .name = "matmul_dweight", .fn = run_dweight, .flops_per_mnk = 2.0 },
};

static int time_kernel(struct bench *b, const struct kernel_entry *e)
{
	double best = 1e30, bestcpu = 1e30;
	int rc;

	rc = e->fn(b);	/* warm-up */
	if (rc == 0)
		rc = ct_ocl_check(clFinish(b->ocl->queue), "clFinish");
	for (int r = 0; rc == 0 && r < b->reps; r++) {
		double t0 = ct_time_mono_s(), c0 = ct_time_cpu_s(), dt, dc;

		rc = e->fn(b);
		if (rc == 0)
			rc = ct_ocl_check(clFinish(b->ocl->queue), "clFinish");
		dt = ct_time_mono_s() - t0;
		dc = ct_time_cpu_s() - c0;
		if (dt < best)
			best = dt;
		if (dc < bestcpu)
			bestcpu = dc;
	}
	if (rc == 0) {
		char shape[64];

		snprintf(shape, sizeof(shape), "%dx%dx%d", b->M, b->N, b->K);
		printf("%-18s %-17s %10.3f %10.1f %10.3f %10.1f\n", e->name, shape, best * 1e3,
		       e->flops_per_mnk * b->M * b->N * b->K / best / 1e9, bestcpu * 1e3,
		       e->flops_per_mnk * b->M * b->N * b->K / bestcpu / 1e9);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "reps", required_argument, NULL, 'r' },
		{ "shape", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "pack", optional_argument, NULL, 'p' },
		{ "tr", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench b = { .M = 1024, .N = 3072, .K = 768, .reps = 5 };
	const char *device = "opencl", *only = NULL;
	int c, rc, pack = 0;
	size_t pack_max = (size_t)-1, tr_max = 0;

	while ((c = getopt_long(argc, argv, "d:k:r:s:vpt:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': device = optarg; break;
		case 'k': only = optarg; break;
		case 'r': b.reps = atoi(optarg); break;
		case 'v': ct_log_set_level(CT_LOG_DEBUG); break;
		case 'p':
			pack = 1;
			if (optarg != NULL)
				pack_max = (size_t)strtoull(optarg, NULL, 10);
			break;
		case 't':
			tr_max = (size_t)strtoull(optarg, NULL, 10);
			break;
		case 's':
			if (sscanf(optarg, "%d,%d,%d", &b.M, &b.N, &b.K) != 3 ||
			    b.M < 1 || b.N < 1 || b.K < 1) {
				fprintf(stderr, "bad --shape %s (want M,N,K)\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [--device D] [--kernel NAME] "
				"[--reps N] [--shape M,N,K] [--verbose] [--pack[=FLOATS]] "
				"[--tr=FLOATS]\n", argv[0]);
			return 2;
		}
	}
	if (b.reps < 1)
		b.reps = 1;
	rc = ct_ocl_open(device, NULL, &b.ocl);
	if (rc == 0)
		rc = ct_ocl_ops_init(&b.ops, b.ocl);
	if (rc == 0) {
		b.ops.pack_max = pack ? pack_max : 0;
		b.ops.tr_max = tr_max;
		printf("device: %s (%s), matmul blocking R=%d VW=%d NV=%d, B %s\n",
		       b.ocl->info.name, b.ocl->info.platform, b.ocl->mm_r,
		       b.ocl->mm_vw, b.ocl->mm_nv, pack ? "packed" : "read in place");
		rc = setup(&b);
	}
	if (rc == 0)
		rc = check_forward(&b);
	if (rc == 0)
		printf("%-18s %-17s %10s %10s %10s %10s\n", "kernel", "shape MxNxK", "ms",
		       "GFLOP/s", "cpu ms", "GF/cpu-s");
	for (size_t i = 0; rc == 0 && i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (only == NULL || strcmp(only, kernels[i].name) == 0)
			rc = time_kernel(&b, &kernels[i]);
	if (rc < 0)
		fprintf(stderr, "bench_kernels: %s\n", ct_errmsg(rc));
	/* process exit releases the device buffers; this prints the profile
	 * when CT_OCL_PROFILE=1 */
	if (b.ocl != NULL)
		ct_ocl_ops_free(&b.ops);
	return rc < 0 ? 1 : 0;
}
