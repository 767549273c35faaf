/*
 * db_url.h - parse the database URL of a project:
 *   "" / NULL / "embedded"                      embedded server
 *   mysql://user:pass@host:port/name            TCP
 *   mysql://user:pass@localhost/name?socket=/run/mysqld/mysqld.sock
 * user, pass and the port may be left out; %XX escapes are decoded in the
 * user and password. The database name is [A-Za-z0-9_]{1,64}.
 */
#ifndef CT_DB_URL_H
#define CT_DB_URL_H

/* The database of the embedded server, and an URL's without a name. */
#define CT_DB_EMBEDDED_NAME "ctune"

struct ct_db_url {
	int embedded;
	char *user, *pass, *host, *socket;	/* NULL when absent; owned */
	char *dbname;				/* owned; "ctune" when embedded */
	unsigned port;				/* 0: default */
};

/* Parse url into a zeroed *out. Returns 0 or CT_EINVAL (detail says what is
 * wrong, without the password). Free with ct_db_url_free(), also after a
 * failure. */
int ct_db_url_parse(const char *url, struct ct_db_url *out);

void ct_db_url_free(struct ct_db_url *u);

#endif
