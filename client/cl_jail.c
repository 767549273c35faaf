/*
 * cl_jail.c - see cl_jail.h.
 */
#include "config.h"
#include "cl_jail.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_hash.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A printable copy of a peer's value for a message: at most 60 bytes,
 * anything outside printable ASCII as '?', "(none)" for NULL. */
static const char *shown(const char *s, char out[64])
{
	size_t i;

	if (s == NULL)
		return "(none)";
	for (i = 0; s[i] != '\0' && i < 60; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[i] = '\0';
	if (s[i] != '\0' && i >= 3)
		memcpy(out + i - 3, "...", 3);
	return out;
}

static int refuse(const char *what, const char *s, const char *form)
{
	char buf[64];

	return ct_error(CT_EPROTO, "refused %s '%s': %s", what, shown(s, buf), form);
}

int ct_jail_name_ok(const char *s)
{
	size_t n;

	if (s == NULL || s[0] == '\0' || s[0] == '.')
		return 0;
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
	return n == strlen(s) && n <= CT_JAIL_NAME_MAX && strstr(s, "..") == NULL;
}

int ct_jail_check_name(const char *what, const char *s)
{
	if (ct_jail_name_ok(s))
		return 0;
	return refuse(what, s, "not a plain name ([A-Za-z0-9._-], 1 to 80 bytes, not "
		      "starting with '.', no '..')");
}

int ct_jail_check_sha(const char *what, const char *s)
{
	if (ct_sha256_hex_valid(s))
		return 0;
	return refuse(what, s, "not a SHA-256 (64 lowercase hex digits)");
}

int ct_jail_check_url(const char *what, const char *s)
{
	size_t n = s ? strlen(s) : 0, skip = 0;

	if (s != NULL && strncmp(s, "http://", 7) == 0)
		skip = 7;
	else if (s != NULL && strncmp(s, "https://", 8) == 0)
		skip = 8;
	if (skip == 0 || n > CT_JAIL_URL_MAX || n == skip || s[skip] == '/')
		return refuse(what, s, "not an http:// or https:// URL with a host (at most "
			      "2048 bytes)");
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return refuse(what, s, "a URL with a space, quote or non-ASCII byte");
	return 0;
}

int ct_jail_check_token(const char *what, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > CT_JAIL_TOKEN_MAX ||
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-") != n)
		return refuse(what, s, "not a token (1 to 256 bytes of [A-Za-z0-9._~+/=-])");
	return 0;
}

/* Whether path is root itself or lexically below it ("root/..."), with no
 * "." or ".." component after root. */
static int lexically_under(const char *root, const char *path)
{
	size_t n = strlen(root);
	const char *p;

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(root, path, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return 0;
	for (p = path + n; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		if ((p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')))
			return 0;
	}
	return 1;
}

/* dir exists and resolves outside root's real path: 1; else 0. */
static int resolves_outside(const char *root, const char *dir)
{
	char *r = realpath(root, NULL), *d = realpath(dir, NULL);
	int out = 0;

	if (r != NULL && d != NULL) {
		size_t n = strlen(r);

		out = !(strncmp(r, d, n) == 0 && (d[n] == '\0' || d[n] == '/' ||
						  (n == 1 && r[0] == '/')));
	}
	free(r);
	free(d);
	return out;
}

int ct_jail_join(const char *root, const char *dir, const char *name, char **out)
{
	struct stat st;
	int rc;

	*out = NULL;
	rc = ct_jail_check_name("name", name);
	if (rc < 0)
		return rc;
	if (!lexically_under(root, dir))
		return ct_error(CT_EPERM, "refused: %s is not under the client directory %s",
				dir, root);
	if (resolves_outside(root, dir))
		return ct_error(CT_EPERM, "refused: %s leads outside the client directory %s "
				"(a symbolic link?)", dir, root);
	if (asprintf(out, "%s/%s", dir, name) < 0) {
		*out = NULL;
		return CT_ENOMEM;
	}
	if (lstat(*out, &st) == 0 && S_ISLNK(st.st_mode)) {
		rc = ct_error(CT_EPERM, "refused: %s is a symbolic link", *out);
		free(*out);
		*out = NULL;
	}
	return rc;
}
