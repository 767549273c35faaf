/*
 * bench_avg - speed of lib/ct_avg against memcpy.
 *
 * Averages K vectors of N floats (default 16 Mi floats, K = 2, 4, 8, 16)
 * and prints GB/s counted as bytes read + bytes written, next to memcpy of
 * one vector (read + write) on the same machine: the mean should reach
 * about 0.8x memcpy, as it streams each input once. Also the streaming
 * form the assimilator uses (one input in memory at a time: it re-reads
 * and re-writes the sum per input, so it is slower per useful byte), and
 * the robust methods for K = 8.
 *
 *   bench/bench_avg [N]
 */
#include "ct_avg.h"
#include "ct_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double best_memcpy(float *dst, const float *src, size_t n)
{
	double best = 1e30;

	for (int rep = 0; rep < 5; rep++) {
		double t = ct_time_mono_s();

		memcpy(dst, src, n * sizeof(float));
		t = ct_time_mono_s() - t;
		best = t < best ? t : best;
	}
	return 2.0 * (double)n * sizeof(float) / best / 1e9;
}

static double best_avg(float *out, const float *const *in, size_t k, size_t n,
		       enum ct_avg_method m, size_t trim, int reps)
{
	double best = 1e30;

	for (int rep = 0; rep < reps; rep++) {
		double t = ct_time_mono_s();

		if (ct_avg(out, in, k, n, m, trim) < 0)
			return 0.0;
		t = ct_time_mono_s() - t;
		best = t < best ? t : best;
	}
	return (double)(k + 1) * (double)n * sizeof(float) / best / 1e9;
}

/* ct_avg_accumulate/finish (the assimilator's way): counted like the mean,
 * (K + 1) vectors of useful traffic, though it moves 3 per input. */
static double best_stream(float *out, const float *const *in, size_t k, size_t n)
{
	double best = 1e30;

	for (int rep = 0; rep < 3; rep++) {
		double t = ct_time_mono_s();

		memcpy(out, in[0], n * sizeof(float));
		for (size_t j = 1; j < k; j++)
			ct_avg_accumulate(out, in[j], n);
		ct_avg_finish(out, k, n);
		t = ct_time_mono_s() - t;
		best = t < best ? t : best;
	}
	return (double)(k + 1) * (double)n * sizeof(float) / best / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)16 << 20;
	const size_t kmax = 16;
	float *in[16], *out = malloc(n * sizeof(float));
	double mc;

	if (out == NULL || n == 0)
		return 1;
	for (size_t j = 0; j < kmax; j++) {
		in[j] = malloc(n * sizeof(float));
		if (in[j] == NULL)
			return 1;
		for (size_t i = 0; i < n; i++)
			in[j][i] = (float)((i + j) % 1000) * 1e-3f;
	}
	memset(out, 0, n * sizeof(float));
	mc = best_memcpy(out, in[0], n);
	printf("N = %zu floats (%.0f MiB per vector), best of 5\n", n,
	       (double)n * 4 / 1048576.0);
	printf("%-22s %8s %10s %8s\n", "method", "K", "GB/s", "x memcpy");
	printf("%-22s %8s %10.2f %8.2f\n", "memcpy", "-", mc, 1.0);
	for (size_t k = 2; k <= kmax; k *= 2) {
		double g = best_avg(out, (const float *const *)in, k, n, CT_AVG_MEAN, 0, 5);

		printf("%-22s %8zu %10.2f %8.2f\n", "mean", k, g, g / mc);
	}
	for (size_t k = 2; k <= kmax; k *= 4) {
		double g = best_stream(out, (const float *const *)in, k, n);

		printf("%-22s %8zu %10.2f %8.2f\n", "mean, streaming", k, g, g / mc);
	}
	double g = best_avg(out, (const float *const *)in, 8, n, CT_AVG_TRIMMED, 1, 1);
	printf("%-22s %8d %10.2f %8.2f\n", "trimmed (1)", 8, g, g / mc);
	g = best_avg(out, (const float *const *)in, 8, n, CT_AVG_MEDIAN, 0, 1);
	printf("%-22s %8d %10.2f %8.2f\n", "median", 8, g, g / mc);
	for (size_t j = 0; j < kmax; j++)
		free(in[j]);
	free(out);
	return 0;
}
