/*
 * cl_disk.c - see cl_disk.h.
 */
#include "config.h"
#include "cl_disk.h"
#include "ct_err.h"
#include "ct_os.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define USAGE_MAX_DEPTH 8

static uint64_t gb_bytes(double gb)
{
	double b = gb * 1e9;

	return b <= 0 ? 0 : b >= 1.8e19 ? UINT64_MAX : (uint64_t)b;
}

int ct_disk_fits(uint64_t used, uint64_t avail, uint64_t need, double max_gb,
		 double min_free_gb, int *never)
{
	uint64_t max = gb_bytes(max_gb), min_free = gb_bytes(min_free_gb);
	int over_max = need > max || used > max - need;
	int under_free = avail < min_free || need > avail - min_free;

	if (need == 0) {	/* all in the cache already */
		if (never != NULL)
			*never = 0;
		return 0;
	}
	if (never != NULL)
		*never = need > max || (avail + used < min_free || need > avail + used - min_free);
	if (over_max)
		return ct_error(CT_ENOSPC, "the inputs need %.3f GB more, the client's directory "
				"holds %.3f GB and disk_max_gb is %g", need / 1e9, used / 1e9,
				max_gb);
	if (under_free)
		return ct_error(CT_ENOSPC, "the inputs need %.3f GB, %.3f GB are free and "
				"disk_min_free_gb is %g", need / 1e9, avail / 1e9, min_free_gb);
	return 0;
}

static int usage_at(const char *dir, int depth, uint64_t *bytes)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (d == NULL)
		return ct_error_errno("%s", dir);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (lstat(path, &st) < 0)
			continue;	/* gone meanwhile */
		if (S_ISREG(st.st_mode))
			*bytes += (uint64_t)st.st_size;
		else if (S_ISDIR(st.st_mode) && depth < USAGE_MAX_DEPTH)
			rc = usage_at(path, depth + 1, bytes);
	}
	closedir(d);
	return rc;
}

int ct_disk_usage(const char *dir, uint64_t *bytes)
{
	*bytes = 0;
	return usage_at(dir, 0, bytes);
}

int ct_disk_avail(const char *dir, uint64_t *bytes)
{
	uint64_t total;

	*bytes = 0;
	return ct_os_disk_space(dir, bytes, &total);
}

int ct_disk_check(const char *dir, uint64_t need, double max_gb, double min_free_gb,
		  int *never)
{
	uint64_t used, avail;
	int rc;

	if (never != NULL)
		*never = 0;
	rc = ct_disk_usage(dir, &used);
	if (rc == 0) rc = ct_disk_avail(dir, &avail);
	if (rc == 0) rc = ct_disk_fits(used, avail, need, max_gb, min_free_gb, never);
	return rc;
}
