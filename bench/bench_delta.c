/*
 * bench_delta - size and speed of the result upload encodings (engine/ct_delta).
 *
 * Synthetic weights w ~ N(0, 0.02) (GPT-2's init scale) and a trained
 * result w + N(0, 0.02 * rel) for rel = 1e-4, 1e-3, 1e-2 (a fine-tuning WU
 * moves weights by about 1e-3 relative). For each encoding: bytes per
 * weight, encode and decode speed in MB/s of float32 weights, and for int8
 * the relative error of the decoded update, ||dec - r|| / ||r - b||.
 *
 *   bench/bench_delta [N]      (default 16 Mi weights)
 */
#include "ct_buf.h"
#include "ct_delta.h"
#include "ct_time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double gauss(void)
{
	double u, v;

	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	u = (double)(rng >> 11) / 9007199254740992.0 + 1e-12;
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	v = (double)(rng >> 11) / 9007199254740992.0;
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void run(const float *b, const float *r, float *d, size_t n, double rel,
		const char *name, int enc, int level)
{
	static const struct ct_delta_model m = { 1024, 50257, 50304, 12, 12, 768 };
	unsigned char sha[32] = { 0 };
	struct ct_buf out = CT_BUF_INIT(0);
	double te, td, err = 0.0, upd = 0.0;

	te = ct_time_mono_s();
	if (ct_delta_encode(b, r, n, &m, sha, enc, level, &out) < 0) {
		printf("encode failed\n");
		return;
	}
	te = ct_time_mono_s() - te;
	td = ct_time_mono_s();
	if (ct_delta_decode(out.data, out.len, b, n, d, NULL) < 0) {
		printf("decode failed\n");
		return;
	}
	td = ct_time_mono_s() - td;
	for (size_t i = 0; i < n; i++) {
		err += ((double)d[i] - r[i]) * ((double)d[i] - r[i]);
		upd += ((double)r[i] - b[i]) * ((double)r[i] - b[i]);
	}
	printf("%-8.0e %-14s %10.3f %10.0f %10.0f %12.2e\n", rel, name,
	       (double)out.len / (double)n, (double)n * 4 / te / 1e6,
	       (double)n * 4 / td / 1e6, sqrt(err / upd));
	ct_buf_free(&out);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)16 << 20;
	float *b = malloc(n * 4), *r = malloc(n * 4), *d = malloc(n * 4);
	const double rels[] = { 1e-4, 1e-3, 1e-2 };

	if (b == NULL || r == NULL || d == NULL || n == 0)
		return 1;
	printf("N = %zu weights; sizes in bytes per weight (float32 = 4)\n", n);
	printf("%-8s %-14s %10s %10s %10s %12s\n", "rel upd", "encoding",
	       "B/weight", "enc MB/s", "dec MB/s", "rel err");
	for (size_t k = 0; k < sizeof(rels) / sizeof(rels[0]); k++) {
		for (size_t i = 0; i < n; i++) {
			b[i] = (float)(0.02 * gauss());
			r[i] = b[i] + (float)(0.02 * rels[k] * gauss());
		}
		run(b, r, d, n, rels[k], "lossless z1", CT_DELTA_LOSSLESS, 1);
		run(b, r, d, n, rels[k], "lossless z6", CT_DELTA_LOSSLESS, 6);
		run(b, r, d, n, rels[k], "int8 z1", CT_DELTA_INT8, 1);
	}
	free(b), free(r), free(d);
	return 0;
}
