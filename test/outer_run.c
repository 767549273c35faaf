/*
 * outer_run.c - test/outer_torch.sh's driver of ct_outer_step: R rounds of
 * an outer optimizer from theta0, round r's aggregate being theta - delta_r.
 *
 *   outer_run METHOD LR MU N R IN OUT
 *
 * IN holds theta0 and the R deltas (N little-endian floats each), OUT
 * gets the model after each round (R x N floats).
 */
#include "ct_err.h"
#include "ct_outer.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct ct_outer o;
	FILE *in, *out;
	size_t n, r;
	float *theta, *agg, *mom, *delta;

	if (argc != 8 || ct_outer_parse(argv[1], &o.method) < 0) {
		fprintf(stderr, "usage: outer_run mean|sgd|nesterov LR MU N R IN OUT\n");
		return 2;
	}
	o.lr = strtof(argv[2], NULL);
	o.momentum = strtof(argv[3], NULL);
	n = strtoul(argv[4], NULL, 10);
	r = strtoul(argv[5], NULL, 10);
	theta = malloc(n * 4), agg = malloc(n * 4), mom = malloc(n * 4), delta = malloc(n * 4);
	in = fopen(argv[6], "rb");
	out = fopen(argv[7], "wb");
	if (ct_outer_check(&o) < 0 || n == 0 || r == 0 || !theta || !agg || !mom || !delta ||
	    !in || !out || fread(theta, 4, n, in) != n) {
		fprintf(stderr, "outer_run: bad arguments or input\n");
		return 1;
	}
	for (size_t k = 0; k < r; k++) {
		if (fread(delta, 4, n, in) != n) {
			fprintf(stderr, "outer_run: short input\n");
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			agg[i] = theta[i] - delta[i];
		ct_outer_step(&o, theta, agg, mom, k > 0, n);
		for (size_t i = 0; i < n; i++)
			theta[i] = agg[i];
		if (fwrite(theta, 4, n, out) != n)
			return 1;
	}
	return fclose(out) == 0 ? 0 : 1;
}
