/*
 * fuzz_file.c - the scratch files of fuzz.h. One private directory per
 * process (mkdtemp), each name in it rewritten in place for every input,
 * the directory removed at exit.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NAMES 8

static char dir[4096];
static char paths[MAX_NAMES][4200];
static int npaths;

void ct_fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
	abort();
}

static void cleanup(void)
{
	for (int i = 0; i < npaths; i++)
		unlink(paths[i]);
	if (dir[0] != '\0')
		rmdir(dir);
}

static const char *path_of(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	int i;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "%s/ctfuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL)
			ct_fuzz_fail(__FILE__, __LINE__, "mkdtemp");
		atexit(cleanup);
	}
	for (i = 0; i < npaths; i++)
		if (strcmp(strrchr(paths[i], '/') + 1, name) == 0)
			return paths[i];
	if (npaths == MAX_NAMES)
		ct_fuzz_fail(__FILE__, __LINE__, "too many scratch files");
	snprintf(paths[npaths], sizeof(paths[0]), "%s/%s", dir, name);
	return paths[npaths++];
}

const char *ct_fuzz_file(const char *name, const void *data, size_t n)
{
	const char *path = path_of(name);
	const unsigned char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		ct_fuzz_fail(__FILE__, __LINE__, "open scratch file");
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			ct_fuzz_fail(__FILE__, __LINE__, "write scratch file");
		p += w;
		n -= (size_t)w;
	}
	close(fd);
	return path;
}
