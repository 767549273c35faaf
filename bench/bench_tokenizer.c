/*
 * bench_tokenizer.c - encode throughput of a ctune tokenizer on one file,
 * in-process (the data files are loaded before the clock starts, as
 * tiktoken's are in test/tiktoken_ref.mjs's bench).
 *
 *   bench/bench_tokenizer [--tokenizer gpt2] FILE [ROUNDS]
 *
 * Prints "ctune MB/s tokens" for the best of ROUNDS (default 5) encodes of
 * the whole file. bench/bench_tokenizer.sh runs it beside tiktoken on one
 * core and prints the comparison table.
 */
#include "config.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_time.h"
#include "ct_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *name = "gpt2";
	struct ct_tokenizer *tk = NULL;
	unsigned char *text = NULL;
	size_t n, ntok = 0;
	double best = 1e30;
	int rounds = 5, rc, a = 1;

	if (argc > 2 && strcmp(argv[1], "--tokenizer") == 0) {
		name = argv[2];
		a = 3;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: bench_tokenizer [--tokenizer NAME] FILE [ROUNDS]\n");
		return 2;
	}
	if (a + 1 < argc)
		rounds = atoi(argv[a + 1]);
	rc = ct_tokenizer_open(name, &tk);
	if (rc == 0)
		rc = ct_file_read_all(argv[a], 0, &text, &n);
	for (int r = 0; rc == 0 && r < rounds; r++) {
		struct ct_tokvec ids = { 0 };
		double t0 = ct_time_mono_s(), dt;

		rc = ct_tokenizer_encode(tk, text, n, &ids);
		dt = ct_time_mono_s() - t0;
		if (dt < best)
			best = dt;
		ntok = ids.n;
		ct_tokvec_free(&ids);
	}
	if (rc == 0)
		printf("ctune %.2f %zu\n", n / 1e6 / best, ntok);
	else
		fprintf(stderr, "bench_tokenizer: %s\n", ct_errmsg(rc));
	free(text);
	ct_tokenizer_free(tk);
	return rc < 0 ? 1 : 0;
}
