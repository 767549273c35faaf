/*
 * replay.c - the regression replay of a fuzz harness without libFuzzer:
 * feeds every file of its corpus to LLVMFuzzerTestOneInput, in name order,
 * so `make check` reruns each input that once broke a parser (and the
 * seeds) with the ordinary compiler, in seconds.
 *
 *   test/fuzz/replay_<name> [DIR|FILE ...]
 *
 * With no argument it reads $top_srcdir/test/fuzz/corpus/<name>/ (name
 * compiled in as CT_FUZZ_NAME; top_srcdir defaults to "."). A harness
 * that finds a broken promise aborts, so does a crash; an empty or missing
 * corpus fails too (a replay of nothing tests nothing).
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef CT_FUZZ_NAME
#error "CT_FUZZ_NAME names the harness's corpus"
#endif

#define REPLAY_MAX ((size_t)64 << 20)

/* Feed the file at path (exactly its bytes, so ASan sees a read past the
 * input); 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *in = NULL;
	struct stat st;
	size_t n = 0;
	int rc = -1;

	if (f == NULL || fstat(fileno(f), &st) < 0 || (size_t)st.st_size > REPLAY_MAX) {
		fprintf(stderr, "%s: cannot read (or over %zu bytes)\n", path, REPLAY_MAX);
		goto out;
	}
	n = (size_t)st.st_size;
	in = malloc(n ? n : 1);
	if (in == NULL || fread(in, 1, n, f) != n) {
		fprintf(stderr, "%s: short read\n", path);
		goto out;
	}
	LLVMFuzzerTestOneInput(in, n);
	rc = 0;
out:
	free(in);
	if (f != NULL)
		fclose(f);
	return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Feed every regular file of dir; the count fed, or -1. */
static int replay_dir(const char *dir)
{
	struct dirent **ents;
	char path[4608];
	struct stat st;
	int n = scandir(dir, &ents, NULL, by_name), fed = 0;

	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (fed >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			fed = replay_file(path) < 0 ? -1 : fed + 1;
		free(ents[i]);
	}
	free(ents);
	return fed;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char dflt[4200];
	struct stat st;
	int total = 0;

	snprintf(dflt, sizeof(dflt), "%s/test/fuzz/corpus/%s", top && *top ? top : ".",
		 CT_FUZZ_NAME);
	for (int i = argc > 1 ? 1 : 0; i < argc; i++) {
		const char *p = argc > 1 ? argv[i] : dflt;
		int fed;

		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			fed = replay_dir(p);
		else
			fed = replay_file(p) < 0 ? -1 : 1;
		if (fed < 0)
			return 1;
		total += fed;
	}
	if (total == 0) {
		fprintf(stderr, "replay %s: no inputs (want %s)\n", CT_FUZZ_NAME, dflt);
		return 1;
	}
	printf("replay %s: %d inputs, no failure\n", CT_FUZZ_NAME, total);
	return 0;
}
