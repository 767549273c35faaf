/*
 * admin.h - the admin socket: while `ctune-server run` holds a project (and
 * its embedded database, which only one process may open), other
 * ctune-server commands send their argv over PROJECT/admin.sock and the
 * server runs them (commands.h) and sends back the exit code and output.
 *
 * The socket is 0600 and the server also checks the peer's uid
 * (SO_PEERCRED) is its own. Wire format: request = u32 length (host order)
 * + cwd NUL argv[0] NUL argv[1] NUL ...; reply = i32 rc, u32 n, n bytes of
 * output, u32 m, m bytes of error message. Requests are capped at 64 KiB,
 * output at 16 MiB.
 */
#ifndef CT_ADMIN_H
#define CT_ADMIN_H

struct ct_server;

#define CT_ADMIN_SOCK "admin.sock"

/* Listen on srv->dir/admin.sock and serve requests in a thread (one at a
 * time) until ct_admin_stop(); the listener lives in srv->admin meanwhile.
 * Returns 0, CT_ESTATE (already listening) or another CT_E* code. */
int ct_admin_start(struct ct_server *srv);
void ct_admin_stop(struct ct_server *srv);

/* Client side: if a server listens on dir/admin.sock, run argv there,
 * print its output to stdout and its error to stderr, set *cmd_rc, and
 * return 1. Return 0 when no server is running (the caller runs the
 * command itself), < 0 on a transport error. */
int ct_admin_call(const char *dir, int argc, char **argv, int *cmd_rc);

#endif
