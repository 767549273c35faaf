/*
 * cl_jail.h - the volunteer's machine is the client's jail: every name a
 * peer (the project's scheduler reply, or a state file someone edited)
 * sends that the client turns into a path or a request goes through one of
 * these checks first, and every path built from such a name is built by
 * ct_jail_join, which refuses anything that would leave the client's
 * directory.
 *
 * The forms (doc/volunteer.md, "What a project can do to your machine"):
 *   name     result, WU and file-role names: [A-Za-z0-9._-], 1..80 bytes,
 *            not starting with '.', no ".." anywhere (so never "." or "..",
 *            never a '/', never absolute);
 *   sha256   64 lowercase hex digits (the cache's file names);
 *   url      http:// or https://, a non-empty host, printable ASCII without
 *            spaces or quotes, at most 2048 bytes (downloads and uploads
 *            go through curl limited to http and https);
 *   token    an upload token: 1..256 bytes of [A-Za-z0-9._~+/=-] (it goes
 *            into an HTTP header, so never a CR or LF).
 * The checks return 0 or CT_EPROTO with a message that names the field
 * and shows the offending value (non-printable bytes as '?', cut to 60).
 */
#ifndef CT_CL_JAIL_H
#define CT_CL_JAIL_H

#define CT_JAIL_NAME_MAX 80
#define CT_JAIL_URL_MAX 2048
#define CT_JAIL_TOKEN_MAX 256

/* 1 when s has the name form above, else 0 (NULL: 0). */
int ct_jail_name_ok(const char *s);

/* The checks of the forms above for the field `what` ("result name",
 * "file sha256", ...): 0, or CT_EPROTO naming what and the value. */
int ct_jail_check_name(const char *what, const char *s);
int ct_jail_check_sha(const char *what, const char *s);
int ct_jail_check_url(const char *what, const char *s);
int ct_jail_check_token(const char *what, const char *s);

/* The path dir/name in *out (malloc'd, caller frees; NULL on failure) for
 * a name from a peer, where dir is the client's directory `root` or one
 * of its subdirectories (cache, slots). Refused with CT_EPROTO when name
 * is not of the name form, and with CT_EPERM (defence in depth) when dir
 * is not lexically under root, when dir exists but resolves (symbolic
 * links followed) outside root's real path, or when dir/name exists as a
 * symbolic link. CT_ENOMEM. */
int ct_jail_join(const char *root, const char *dir, const char *name, char **out);

#endif
