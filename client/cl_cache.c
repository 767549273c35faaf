/*
 * cl_cache.c - see cl_cache.h.
 */
#include "config.h"
#include "cl_cache.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_hash.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAX_FILES 4096

struct entry {
	char sha[CT_SHA256_HEXLEN + 1];
	uint64_t size;
	double used;
};

void ct_cache_touch(const char *cache_dir, const char *sha)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", cache_dir, sha);
	ct_os_touch(path);
}

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

static int is_sha_name(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == CT_SHA256_HEXLEN && s[n] == '\0';
}

int ct_cache_trim(const char *cache_dir, uint64_t max_bytes,
		  int (*needed)(void *ctx, const char *sha), void *ctx, uint64_t *kept)
{
	struct entry *e = calloc(CACHE_MAX_FILES, sizeof(*e));
	uint64_t total = 0;
	struct dirent *de;
	size_t n = 0;
	char path[4200];
	DIR *d;

	if (e == NULL)
		return CT_ENOMEM;
	d = opendir(cache_dir);
	if (d == NULL) {
		free(e);
		return ct_error_errno("%s", cache_dir);
	}
	while ((de = readdir(d)) != NULL && n < CACHE_MAX_FILES) {
		struct stat st;

		if (!is_sha_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_dir, de->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		memcpy(e[n].sha, de->d_name, CT_SHA256_HEXLEN + 1);
		e[n].size = (uint64_t)st.st_size;
		e[n].used = ct_os_mtime(&st);
		total += e[n].size;
		n++;
	}
	closedir(d);
	qsort(e, n, sizeof(*e), older_first);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		if (needed != NULL && needed(ctx, e[i].sha))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_dir, e[i].sha);
		if (unlink(path) == 0)
			total -= e[i].size;
	}
	if (kept != NULL)
		*kept = total;
	free(e);
	return 0;
}
