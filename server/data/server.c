/*
 * server.c - a loaded project's paths, clock and base URL (see server.h;
 * creating and loading one is cmd/server_open.c's).
 */
#include "server.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_clock.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
int64_t ct_server_now(const struct ct_server *srv)
{
	return ct_clock_now_s(srv->clock);
}

int ct_server_set_base_url(struct ct_server *srv, const char *url)
{
	char *p = strdup(url);

	if (p == NULL)
		return CT_ENOMEM;
	free(srv->base_url);
	srv->base_url = p;
	size_t n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		p[--n] = 0;
	return 0;
}

int ct_server_download_path(const struct ct_server *srv, const char *sha256,
			    char *out, size_t cap)
{
	int n;

	if (!ct_sha256_hex_valid(sha256))
		return ct_error(CT_EINVAL, "not a SHA-256: %.70s", sha256 ? sha256 : "(null)");
	n = snprintf(out, cap, "%s/%.2s/%s", srv->download_dir, sha256, sha256);
	return n < 0 || (size_t)n >= cap ? CT_ETOOBIG : 0;
}

int ct_result_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 80 || strstr(s, "..") || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int ct_server_upload_path(const struct ct_server *srv, const char *result_name,
			  char *out, size_t cap)
{
	int n;

	if (!ct_result_name_valid(result_name))
		return ct_error(CT_EINVAL, "bad result name");
	n = snprintf(out, cap, "%s/%s", srv->upload_dir, result_name);
	return n < 0 || (size_t)n >= cap ? CT_ETOOBIG : 0;
}

int ct_server_map_upload(const struct ct_server *srv, const char *result_name,
			 struct ct_mmap *map)
{
	char path[4096];
	int rc;

	memset(map, 0, sizeof(*map));
	rc = ct_server_upload_path(srv, result_name, path, sizeof(path));
	return rc < 0 ? rc : ct_file_map(path, map);
}
