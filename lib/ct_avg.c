/*
 * ct_avg.c - see ct_avg.h.
 *
 * The mean keeps the sums of 16 coordinates in registers while it walks the
 * K inputs, so each input is read once, the output written once, and no
 * partial sums go through memory (an L1-blocked version with the sums in
 * an array reached only ~0.2-0.4x memcpy here, being load/store bound).
 * Sums are float, in the order 0..K-1: with K up to tens of inputs the
 * rounding error (< K ulp) is far below what training changes, and double
 * sums cost 2-3x on SSE2-only builds (measured).
 */
#include "ct_avg.h"
#include "ct_err.h"

#include <string.h>

/* Four SSE-sized vectors: 16 floats of running sums held in registers. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void store4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* Inputs summed per pass over a block: more concurrent streams than this
 * defeat the hardware prefetchers (K = 16 in one pass ran at half speed). */
#define AVG_GROUP 8
/* Coordinates per block: the partial sums (16 KiB) stay in L1 between the
 * passes of a block. */
#define AVG_BLOCK 4096

/* For i in [i0, i1): out[i] = (first ? in[j0][i] : out[i]) + in[j0 or
 * j0+1][i] + ... + in[j1-1][i], then divided by fk when `last`. */
static void mean_pass(float *out, const float *const *in, size_t j0, size_t j1,
		      int first, int last, float fk, size_t i0, size_t i1)
{
	const v4f vk = { fk, fk, fk, fk };
	const float *p = first ? in[j0] : out;
	size_t js = first ? j0 + 1 : j0, i = i0;

	for (; i + 16 <= i1; i += 16) {
		v4f a0 = load4(p + i), a1 = load4(p + i + 4);
		v4f a2 = load4(p + i + 8), a3 = load4(p + i + 12);

		for (size_t j = js; j < j1; j++) {
			const float *s = in[j] + i;

			a0 += load4(s);
			a1 += load4(s + 4);
			a2 += load4(s + 8);
			a3 += load4(s + 12);
		}
		if (last) {
			a0 /= vk, a1 /= vk, a2 /= vk, a3 /= vk;
		}
		store4(out + i, a0);
		store4(out + i + 4, a1);
		store4(out + i + 8, a2);
		store4(out + i + 12, a3);
	}
	for (; i < i1; i++) {
		float a = p[i];

		for (size_t j = js; j < j1; j++)
			a += in[j][i];
		out[i] = last ? a / fk : a;
	}
}

/* out[i] = (in[0][i] + in[1][i] + ... + in[k-1][i]) / k, in float, in that
 * order: the vector and scalar paths and the grouping into passes all do
 * the same IEEE operations per coordinate, so the bits depend on nothing
 * but the inputs. */
static void mean(float *out, const float *const *in, size_t k, size_t n)
{
	const float fk = (float)k;

	for (size_t i0 = 0; i0 < n; i0 += AVG_BLOCK) {
		size_t i1 = n - i0 < AVG_BLOCK ? n : i0 + AVG_BLOCK;

		for (size_t j0 = 0; j0 < k; j0 += AVG_GROUP) {
			size_t j1 = k - j0 < AVG_GROUP ? k : j0 + AVG_GROUP;

			mean_pass(out, in, j0, j1, j0 == 0, j1 == k, fk, i0, i1);
		}
	}
}

void ct_avg_accumulate(float *acc, const float *x, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		store4(acc + i, load4(acc + i) + load4(x + i));
		store4(acc + i + 4, load4(acc + i + 4) + load4(x + i + 4));
	}
	for (; i < n; i++)
		acc[i] += x[i];
}

void ct_avg_finish(float *acc, size_t k, size_t n)
{
	const float fk = (float)k;
	const v4f vk = { fk, fk, fk, fk };
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		store4(acc + i, load4(acc + i) / vk);
	for (; i < n; i++)
		acc[i] /= fk;
}

/* Insertion sort: K is small (tens) and the inputs nearly random. */
static void sort_small(float *v, size_t k)
{
	for (size_t i = 1; i < k; i++) {
		float x = v[i];
		size_t j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static void sorted(float *out, const float *const *in, size_t k, size_t n,
		   enum ct_avg_method method, size_t trim)
{
	float v[CT_AVG_MAX_INPUTS];

	for (size_t i = 0; i < n; i++) {
		double acc = 0.0;

		for (size_t j = 0; j < k; j++)
			v[j] = in[j][i];
		sort_small(v, k);
		if (method == CT_AVG_MEDIAN) {
			out[i] = k % 2 ? v[k / 2]
				       : (float)(((double)v[k / 2 - 1] + (double)v[k / 2]) / 2.0);
			continue;
		}
		for (size_t j = trim; j < k - trim; j++)
			acc += (double)v[j];
		out[i] = (float)(acc / (double)(k - 2 * trim));
	}
}

int ct_avg(float *out, const float *const *in, size_t k, size_t n,
	   enum ct_avg_method method, size_t trim)
{
	if (k == 0 || k > CT_AVG_MAX_INPUTS)
		return ct_error(CT_EINVAL, "average of %zu inputs", k);
	switch (method) {
	case CT_AVG_MEAN:
		mean(out, in, k, n);
		return 0;
	case CT_AVG_TRIMMED:
		if (2 * trim >= k)
			return ct_error(CT_EINVAL, "trimmed mean: trim %zu of %zu inputs", trim, k);
		sorted(out, in, k, n, method, trim);
		return 0;
	case CT_AVG_MEDIAN:
		sorted(out, in, k, n, method, 0);
		return 0;
	}
	return ct_error(CT_EINVAL, "unknown averaging method %d", (int)method);
}

int ct_avg_parse_method(const char *s, enum ct_avg_method *out)
{
	static const struct {
		const char *name;
		enum ct_avg_method m;
	} names[] = {
		{ "mean", CT_AVG_MEAN },
		{ "trimmed", CT_AVG_TRIMMED },
		{ "median", CT_AVG_MEDIAN },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (s != NULL && strcmp(s, names[i].name) == 0) {
			*out = names[i].m;
			return 0;
		}
	}
	return ct_error(CT_EINVAL, "unknown averaging method '%s'", s ? s : "(null)");
}
