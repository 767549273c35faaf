/*
 * db_url.c - database URL parsing (see db_url.h).
 */
#include "db_url.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Copy n bytes of s, decoding %XX. NULL on bad escape or no memory. */
static char *dup_decode(const char *s, size_t n)
{
	char *o = malloc(n + 1), *p = o;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			*p++ = s[i];
			continue;
		}
		if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0) {
			free(o);
			return NULL;
		}
		*p++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
		i += 2;
	}
	*p = 0;
	return o;
}

static int valid_dbname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int parse_hostport(const char *s, size_t n, struct ct_db_url *u)
{
	const char *colon = memchr(s, ':', n);
	size_t hn = colon ? (size_t)(colon - s) : n;

	if (hn > 0) {
		u->host = strndup(s, hn);
		if (u->host == NULL)
			return CT_ENOMEM;
	}
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);
		if (end != s + n || port <= 0 || port > 65535)
			return ct_error(CT_EINVAL, "database url: bad port");
		u->port = (unsigned)port;
	}
	return 0;
}

static int parse_userinfo(const char *s, size_t n, struct ct_db_url *u)
{
	const char *colon = memchr(s, ':', n);
	size_t un = colon ? (size_t)(colon - s) : n;

	u->user = dup_decode(s, un);
	if (colon)
		u->pass = dup_decode(colon + 1, n - un - 1);
	if (u->user == NULL || (colon && u->pass == NULL))
		return ct_error(CT_EINVAL, "database url: bad user or password");
	return 0;
}

int ct_db_url_parse(const char *url, struct ct_db_url *u)
{
	const char *p, *at, *slash, *q;
	int rc;

	memset(u, 0, sizeof(*u));
	if (url == NULL || *url == 0 || strcmp(url, "embedded") == 0) {
		u->embedded = 1;
		u->dbname = strdup(CT_DB_EMBEDDED_NAME);
		return u->dbname ? 0 : CT_ENOMEM;
	}
	if (strncmp(url, "mysql://", 8) != 0 && strncmp(url, "mariadb://", 10) != 0)
		return ct_error(CT_EINVAL, "database url must be 'embedded' or mysql://...");
	p = strstr(url, "://") + 3;
	slash = strchr(p, '/');
	if (slash == NULL)
		return ct_error(CT_EINVAL, "database url: no /database name");
	at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		rc = parse_userinfo(p, (size_t)(at - p), u);
		if (rc < 0)
			return rc;
		p = at + 1;
	}
	rc = parse_hostport(p, (size_t)(slash - p), u);
	if (rc < 0)
		return rc;
	q = strchr(slash + 1, '?');
	u->dbname = q ? strndup(slash + 1, (size_t)(q - slash - 1)) : strdup(slash + 1);
	if (u->dbname == NULL)
		return CT_ENOMEM;
	if (!valid_dbname(u->dbname))
		return ct_error(CT_EINVAL, "database url: bad database name");
	if (q) {
		if (strncmp(q + 1, "socket=", 7) != 0 || q[8] == 0)
			return ct_error(CT_EINVAL, "database url: only ?socket=PATH is understood");
		u->socket = strdup(q + 8);
		if (u->socket == NULL)
			return CT_ENOMEM;
	}
	return 0;
}

void ct_db_url_free(struct ct_db_url *u)
{
	free(u->user);
	free(u->pass);
	free(u->host);
	free(u->socket);
	free(u->dbname);
	memset(u, 0, sizeof(*u));
}
