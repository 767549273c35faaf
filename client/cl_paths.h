/*
 * cl_paths.h - where the client keeps its state.
 *
 * The state directory is, in order: the --dir option of a subcommand, the
 * CTUNE_DIR environment variable (set by `ctune --dir`), $XDG_DATA_HOME/
 * crowdtune, ~/.local/share/crowdtune. A system install (systemd system unit)
 * passes --dir /var/lib/crowdtune. The directory is created owner-only (0700)
 * and files in it are written 0600.
 */
#ifndef CT_CL_PATHS_H
#define CT_CL_PATHS_H

#include <stddef.h>

/* File names inside the state directory. */
#define CT_CL_STATE_FILE "client_state.xml"
#define CT_CL_PREFS_FILE "prefs.conf"
#define CT_CL_WEB_PREFS_FILE "prefs_web.conf"	/* the web's, from the scheduler */
#define CT_CL_SOCKET_FILE "ctune.sock"
#define CT_CL_LOCK_FILE "ctune.lock"
#define CT_CL_WEB_TOKEN_FILE "web_token"	/* the control page's (cl_web.h) */
#define CT_CL_CACHE_DIR "cache"
#define CT_CL_SLOTS_DIR "slots"

/* File names inside a task's slot directory (see cl_task.h). */
#define CT_CL_SLOT_STATE "state"
#define CT_CL_SLOT_RESULT "result.ctd"

/* Resolve the state directory (see above; `override` may be NULL) into a
 * malloc'd string in *out (caller frees). Returns 0, CT_ECONFIG when no HOME
 * is known, CT_ENOMEM. */
int ct_cl_state_dir(const char *override, char **out);

/* Open dir/ctune.lock (created 0600) and take its exclusive flock without
 * waiting: one daemon or state edit per directory. *fd gets the descriptor
 * (caller closes it, which releases the lock), -1 when it cannot be opened.
 * Returns 0 when locked, CT_EBUSY when another process holds the lock (*fd
 * still open), CT_ENOMEM, or the open error. */
int ct_cl_lock_dir(const char *dir, int *fd);

/* Create `dir` (and parents) if missing and make it mode 0700. Returns 0 or a
 * CT_E* code (CT_EPERM when it exists but belongs to someone else). */
int ct_cl_make_private_dir(const char *dir);

/* malloc'd "dir/name" (caller frees), or NULL on ENOMEM. */
char *ct_cl_path(const char *dir, const char *name);

#endif
