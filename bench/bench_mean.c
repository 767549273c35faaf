/*
 * bench_mean - what averaging a round costs the assimilator: K lossless
 * full-weight results of a model shape (synthetic: base ~ N(0, 0.02), each
 * result moved by N(0, 2e-5), encoded as clients do) averaged
 *   - "one at a time": the previous way, the base held in memory and each
 *     result decoded in turn into the sum (ct_delta_reader, ct_avg
 *     accumulate), so base + sum are two models;
 *   - "streamed": server/daemons/mean_stream.h, the base read from its file a
 *     chunk at a time, T decoding threads, the sum the only model.
 * Prints wall and process CPU seconds per method and checks that every
 * method gives the same bits.
 *
 *   bench/bench_mean [--shape 124m|small] [-k K] [--dir DIR]
 *
 * The files go to DIR (default $TMPDIR or /tmp) and are removed at the end.
 */
#include "config.h"
#include "ct_avg.h"
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_rng.h"
#include "ct_time.h"
#include "daemons/mean_stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ct_rng rng;

static double gauss(void)
{
	return (double)ct_rng_normal(&rng);
}

static int write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
	FILE *f = fopen(path, "wb");
	int ok = f != NULL && fwrite(a, 1, na, f) == na && (nb == 0 || fwrite(b, 1, nb, f) == nb);

	if (f != NULL && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : ct_error(CT_EIO, "%s: write", path);
}

/* The previous assimilator's mean: base in memory, one result at a time. */
static int one_at_a_time(const float *base, size_t n, char (*paths)[4200], int k, float *out)
{
	float *chunk = malloc(CT_DELTA_CHUNK * sizeof(float));
	int rc = chunk ? 0 : CT_ENOMEM;

	for (int j = 0; rc == 0 && j < k; j++) {
		struct ct_delta_reader *rd = NULL;
		size_t f = 0, m = 0, next = 0;

		rc = ct_delta_reader_open(paths[j], 0, n, &rd);
		while (rc >= 0) {
			rc = ct_delta_reader_next(rd, base + next, j == 0 ? out + next : chunk, &f, &m);
			if (rc <= 0)
				break;
			if (j > 0)
				ct_avg_accumulate(out + f, chunk, m);
			next = f + m;
		}
		ct_delta_reader_close(rd);
	}
	if (rc == 0)
		ct_avg_finish(out, (size_t)k, n);
	free(chunk);
	return rc;
}

static void row(const char *what, double wall, double cpu, int same)
{
	printf("| %s | %.2f | %.2f | %s |\n", what, wall, cpu, same ? "yes" : "NO");
	fflush(stdout);
}

static int run(const char *dir, const struct ct_model_config *cfg, int k)
{
	struct ct_gpt2_layout lay;
	struct ct_delta_model dm = { (uint32_t)cfg->maxT, (uint32_t)cfg->V, (uint32_t)cfg->Vp,
				     (uint32_t)cfg->L, (uint32_t)cfg->NH, (uint32_t)cfg->C };
	int32_t hdr[CT_GPT2_HEADER_INTS];
	unsigned char sha[32] = { 0 };
	char base_path[4200], (*paths)[4200] = calloc((size_t)k, sizeof(*paths));
	const char **pp = calloc((size_t)k, sizeof(*pp));
	float *base, *w, *ref, *got;
	double t, c;
	int rc = 0;

	ct_gpt2_layout(cfg, &lay);
	ct_rng_seed(&rng, 1);
	base = malloc(lay.total * sizeof(float));
	w = malloc(lay.total * sizeof(float));
	ref = malloc(lay.total * sizeof(float));
	got = malloc(lay.total * sizeof(float));
	if (!paths || !pp || !base || !w || !ref || !got)
		return CT_ENOMEM;
	for (size_t i = 0; i < lay.total; i++)
		base[i] = (float)(0.02 * gauss());
	ct_gpt2_header(cfg, hdr);
	snprintf(base_path, sizeof(base_path), "%s/bench-mean-base.bin", dir);
	rc = write_file(base_path, hdr, sizeof(hdr), base, lay.total * sizeof(float));
	for (int j = 0; rc == 0 && j < k; j++) {
		struct ct_buf out = CT_BUF_INIT(0);

		for (size_t i = 0; i < lay.total; i++)
			w[i] = base[i] + (float)(2e-5 * gauss());
		rc = ct_delta_encode(base, w, lay.total, &dm, sha, CT_DELTA_LOSSLESS, -1, &out);
		snprintf(paths[j], sizeof(paths[j]), "%s/bench-mean-%d.bin", dir, j);
		pp[j] = paths[j];
		if (rc == 0)
			rc = write_file(paths[j], out.data, out.len, NULL, 0);
		ct_buf_free(&out);
	}
	if (rc == 0) {
		printf("%zu weights, %d results\n\n| method | wall s | CPU s | same bits |\n"
		       "|---|---|---|---|\n", lay.total, k);
		t = ct_time_mono_s(), c = ct_time_cpu_s();
		rc = one_at_a_time(base, lay.total, paths, k, ref);
		row("one at a time, base in memory", ct_time_mono_s() - t, ct_time_cpu_s() - c, 1);
	}
	for (int th = 1; rc == 0 && th <= 2; th++) {
		char what[64];

		snprintf(what, sizeof(what), "streamed, %d thread%s", th, th > 1 ? "s" : "");
		t = ct_time_mono_s(), c = ct_time_cpu_s();
		rc = ct_mean_stream(base_path, lay.total, pp, k, th, got);
		if (rc == 0)
			row(what, ct_time_mono_s() - t, ct_time_cpu_s() - c,
			    memcmp(got, ref, lay.total * sizeof(float)) == 0);
	}
	unlink(base_path);
	for (int j = 0; j < k; j++)
		if (paths[j][0] != '\0')
			unlink(paths[j]);
	free(paths), free(pp), free(base), free(w), free(ref), free(got);
	return rc;
}

int main(int argc, char **argv)
{
	struct ct_model_config cfg = { .maxT = 1024, .V = 50257, .Vp = 50304, .L = 12, .NH = 12,
				      .C = 768 };
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int k = 2, rc;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v != NULL && strcmp(argv[i], "-k") == 0)
			k = atoi(v), i++;
		else if (v != NULL && strcmp(argv[i], "--dir") == 0)
			dir = v, i++;
		else if (v != NULL && strcmp(argv[i], "--shape") == 0 && strcmp(v, "small") == 0)
			cfg.L = 4, cfg.NH = 4, cfg.C = 256, i++;
		else if (v != NULL && strcmp(argv[i], "--shape") == 0 && strcmp(v, "124m") == 0)
			i++;
		else {
			fprintf(stderr, "usage: bench_mean [--shape 124m|small] [-k K] [--dir DIR]\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	if (k < 1 || k > CT_AVG_MAX_INPUTS) {
		fprintf(stderr, "bench_mean: -k 1..%d\n", CT_AVG_MAX_INPUTS);
		return 2;
	}
	rc = run(dir, &cfg, k);
	if (rc < 0)
		fprintf(stderr, "bench_mean: %s\n", ct_errmsg(rc));
	return rc < 0 ? 1 : 0;
}
