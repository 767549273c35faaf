/*
 * cl_attach.h - what an attach checks and asks the project before the
 * state changes: the URL and key are well-formed, the account of an
 * e-mail address and password (made or looked up), or the key known to
 * the project (one scheduler RPC asking for no work). `ctune attach`
 * (cmd_attach.c) and the control page (cl_web.c) both use it; neither
 * function prints, and the errors name the URL and say what to do.
 */
#ifndef CT_CL_ATTACH_H
#define CT_CL_ATTACH_H

struct ct_state;

/* An http:// or https:// URL of at most 1000 bytes without blanks: 0 or
 * CT_EUSAGE. */
int ct_attach_check_url(const char *url);

/* An account key: 1-255 letters and digits. 0 or CT_EUSAGE. */
int ct_attach_check_key(const char *key);

/* The largest CA file an attach takes: a bundle of a few hundred
 * certificates (the system's whole bundle is ~220 kB). */
#define CT_ATTACH_CA_MAX (1024 * 1024)

/* A CA file for a project with its own CA, as `ctune attach --ca-file`
 * and the control page take it: path names an existing regular file the
 * client can read, of at most CT_ATTACH_CA_MAX bytes, that holds a PEM
 * certificate ("-----BEGIN CERTIFICATE-----" ... "-----END
 * CERTIFICATE-----"), whose absolute path has no blanks and is under 1,000
 * bytes (the daemon's control line carries it). *out is that absolute
 * path, malloc'd for the caller; NULL on failure. Returns 0 or CT_EUSAGE
 * naming the file and what is wrong. */
int ct_attach_check_ca(const char *path, char **out);

/* Create (name not NULL) or look up the account of email and password on
 * the project at url (ca: a CA file or pin, NULL: the system's). *key and
 * *user_name (NULL when the project sent none) are malloc'd for the
 * caller; both NULL on failure. Returns 0, CT_EAUTH (no such account
 * or a refused password), CT_EEXISTS, CT_EPROTO (not a crowdtune server,
 * or a refusal), CT_ENET / CT_ETIMEOUT (cannot reach it). */
int ct_attach_account(const char *url, const char *name, const char *email,
		      const char *password, const char *ca, char **key, char **user_name);

/* One scheduler RPC with key that asks for no work: proves the URL, TLS,
 * that it is a crowdtune server and that it knows the key. st gives the
 * cpid (so the server finds the host record the daemon will use) and gets
 * the project added in memory only (the caller does not save it).
 * *user_name (malloc'd, may be NULL) is the account's name. Returns 0,
 * CT_EEXISTS (already attached in st), CT_EAUTH, CT_EDENIED, CT_EPROTO,
 * CT_ENET, CT_ETIMEOUT. */
int ct_attach_verify(struct ct_state *st, const char *url, const char *key, const char *ca,
		     char **user_name);

#endif
