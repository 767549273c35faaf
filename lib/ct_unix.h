/*
 * ct_unix.h - small helpers for local Unix-domain stream sockets: the
 * address check, connecting to a socket file, and listening on one that
 * only its owner may use (mode 0600). Shared by the client's control socket
 * and the server's admin socket.
 */
#ifndef CT_UNIX_H
#define CT_UNIX_H

/* Connect a blocking SOCK_STREAM (close-on-exec) socket to path; *out gets
 * the fd (caller closes), -1 on failure. Returns 0; CT_ETOOBIG if path does
 * not fit in sun_path; CT_ENOENT if no socket file exists; CT_ENET if the
 * file exists but nobody listens (connection refused); another CT_E* code
 * (errno detail) for other failures. */
int ct_unix_connect(const char *path, int *out);

/* Replace any stale file at path with a listening socket (backlog 8,
 * close-on-exec, plus extra socket() type flags such as SOCK_NONBLOCK),
 * created owner-only and chmod-ed to 0600. *out gets the fd (caller
 * closes), -1 on failure. Returns 0 or a CT_E* code. The caller decides
 * beforehand whether a live listener may be replaced. */
int ct_unix_listen(const char *path, int type_flags, int *out);

#endif
