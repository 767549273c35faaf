/*
 * cl_ctl.h - the daemon's control socket (ctune.sock in the state directory).
 *
 * A Unix stream socket, mode 0600 inside the 0700 state directory, so only
 * the owner can talk to the daemon. The protocol is one request line per
 * connection, answered by one reply and a close:
 *
 *   "status\n"   -> an XML <status> document (see cl_status.h)
 *   "suspend\n"  -> "ok\n"  (stop computing until "resume")
 *   "resume\n"   -> "ok\n"
 *   "quit\n"     -> "ok\n"  (the daemon checkpoints and exits)
 *   "prefs reload\n", "prefs set KEY=VALUE...\n" -> "ok\n" or "error ...\n"
 *   "prefs get\n" -> the preferences in force, prefs.conf lines
 *   "attach URL KEY [CAFILE]\n", "detach URL\n" -> "ok\n" or "error ...\n"
 *   "project suspend URL\n", "project resume URL\n" -> "ok\n" or "error ...\n"
 *                (that project's tasks stop and it is asked for no work)
 *   "web\n"      -> the control page's address (cl_web.h), or "error ...\n"
 *
 * Request lines are capped at 256 bytes, replies read by clients at 4 MiB.
 */
#ifndef CT_CL_CTL_H
#define CT_CL_CTL_H

#include "ct_buf.h"

#define CT_CTL_MAX_LINE 256
#define CT_CTL_MAX_REPLY (4u << 20)

/* Bind and listen on path (an old socket file there is replaced if no
 * daemon answers on it; CT_EBUSY if one does). *fd gets the listening
 * socket (non-blocking, close-on-exec). Returns 0 or a CT_E* code. */
int ct_ctl_listen(const char *path, int *fd);

/* Answer one connection waiting on listen_fd (call when it is readable):
 * reads the request line and calls handler(cmd, reply, arg), which appends
 * its reply; then writes it and closes. Returns 0, CT_EAGAIN when no
 * connection was waiting, or a CT_E* code for a broken client (the daemon
 * just logs it). The handler's return value is ignored. */
int ct_ctl_serve_one(int listen_fd, int (*handler)(const char *cmd, struct ct_buf *reply,
						   void *arg), void *arg);

/* Client side: connect to path, send cmd, read the whole reply into reply
 * (capped by reply->max). CT_ENOENT/CT_NET when no daemon listens there
 * ("is ctune run running?" in the detail), CT_ETIMEOUT after timeout_s. */
int ct_ctl_request(const char *path, const char *cmd, double timeout_s, struct ct_buf *reply);

#endif
