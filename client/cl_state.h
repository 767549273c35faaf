/*
 * cl_state.h - everything the client must not forget, in one file.
 *
 * client_state.xml in the state directory holds the attached projects (URL,
 * account key, host id and authenticator, backoff and request_delay), their
 * tasks (one per result the server sent: WU parameters, input files, state,
 * checkpoint, progress, upload token) and totals. It is rewritten atomically
 * (ct_file_write_atomic: temp + fsync + rename) on every change, so a
 * kill -9 or a power cut leaves either the previous or the next version.
 *
 * Crash safety follows from the order of effects:
 *  - a task is saved as DOWNLOADING before any download starts;
 *  - the engine checkpoint is written (atomically) before the state records
 *    its step, so the state never points past a checkpoint that exists;
 *  - UPLOADING is saved with the output's hash before the upload; after a
 *    crash the same file is uploaded again (the server accepts an identical
 *    re-upload);
 *  - a task is only REPORTED (and then dropped) after a scheduler reply that
 *    acknowledges it; a crash in between reports it once more and the server
 *    ignores a result it already has.
 *
 * Not thread-safe: the daemon holds its mutex around every access.
 */
#ifndef CT_CL_STATE_H
#define CT_CL_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_hash.h"

enum ct_task_state {
	CT_TASK_DOWNLOADING = 0,	/* inputs being fetched */
	CT_TASK_READY,			/* inputs verified, not started */
	CT_TASK_RUNNING,		/* started (may be suspended, has a checkpoint) */
	CT_TASK_UPLOADING,		/* output computed, upload pending */
	CT_TASK_DONE,			/* uploaded or failed: to report */
	CT_TASK_REPORTED,		/* acknowledged by the server */
	CT_TASK_NSTATES
};

/* "downloading", "ready", ...; parse back with ct_task_state_parse (0 or
 * CT_EFORMAT). */
const char *ct_task_state_str(enum ct_task_state s);
int ct_task_state_parse(const char *s, enum ct_task_state *out);

/* A work-unit parameter exactly as the server sent it. */
struct ct_param {
	char *name;
	char *value;
};

/* An input file of a task. */
struct ct_task_file {
	char *name;			/* role in the WU: "model", "train", ... */
	char *url;			/* where to download it */
	char sha256[CT_SHA256_HEXLEN + 1];
	uint64_t size;
};

struct ct_task {
	char *name;			/* result name (unique per project) */
	char *wu_name;
	enum ct_task_state state;
	double received;		/* wall time it arrived */
	double deadline;		/* report deadline, wall time */
	struct ct_param *params;
	size_t nparams;
	struct ct_task_file *files;
	size_t nfiles;
	char *upload_url;
	char *upload_token;
	uint64_t upload_max;		/* bytes the token allows */
	char *checkpoint;		/* engine state file, NULL before the first */
	long step;			/* steps done (as of the checkpoint) */
	long live_step;			/* steps done now; not saved (the file keeps
					 * `step`, which never passes a checkpoint) */
	long steps;			/* steps in the WU */
	double progress;		/* 0..1 */
	double last_loss;		/* training loss of the last step, or NaN */
	double elapsed;			/* seconds computed */
	char *device;			/* device it ran on ("cpu", "opencl:0") */
	int conforming;			/* that device passed the self-test */
	char output_sha256[CT_SHA256_HEXLEN + 1];	/* of the upload file */
	uint64_t output_size;
	char *chain;			/* the WU's hash chain so far (ct_chain.h:
					 * hex links), NULL when it has none */
	double eval_loss;		/* held-out loss of the output, or NaN */
	int outcome;			/* 0 success, else a CT_E* code */
	char *error;			/* message for a failed task, or NULL */
	int nfailures;			/* consecutive download/upload failures */
	double next_try;		/* wall time before which not to retry */
};

#define CT_PROJECT_MAX_REFUSED 16

struct ct_project {
	char *url;			/* master URL, normalised without trailing '/' */
	char *key;			/* account key (authenticator) */
	char *user_name;
	long hostid;			/* 0 until the server assigns one */
	char *host_auth;		/* host authenticator from the server, or NULL */
	char *host_secret;		/* upload MAC key, sent once by the server, or NULL */
	char *ca_file;			/* CA bundle for this project (attach --ca-file) */
	double credit;			/* as last reported by the server */
	double rac;
	long rank;			/* 0 unknown */
	long pending_results;		/* reported, awaiting validation (server) */
	int nfailures;			/* consecutive failed scheduler RPCs */
	double next_rpc;		/* earliest next RPC (backoff), wall time */
	double request_delay_until;	/* from the server's request_delay */
	double last_rpc;		/* wall time of the last successful RPC */
	int no_work_until_set;		/* the server had no work: wait */
	int suspended;			/* by the user: no work asked, none computed */
	char *refused[CT_PROJECT_MAX_REFUSED];	/* results the client refused (cl_jail.h),
					 * to report as errors; not saved */
	size_t nrefused;
	struct ct_task *tasks;
	size_t ntasks;
};

struct ct_totals {
	long results_done;		/* computed and uploaded */
	long results_reported;
	double seconds;			/* computing time */
	double tokens;			/* tokens trained */
};

struct ct_state {
	char *path;			/* file it lives in */
	char cpid[33];			/* random client id (hex), made once */
	struct ct_project *projects;
	size_t nprojects;
	struct ct_totals totals;
};

/* Load path into *out (a new state the caller frees with ct_state_free()).
 * A missing file gives an empty state (with a fresh cpid), not an error.
 * Malformed or oversize (> 16 MiB) -> CT_EXML/CT_ETOOBIG/CT_EFORMAT with the
 * path in the detail; *out = NULL on failure. */
int ct_state_load(const char *path, struct ct_state **out);

/* Serialise st into b (an XML document). */
int ct_state_to_xml(const struct ct_state *st, struct ct_buf *b);

/* Parse a document made by ct_state_to_xml into a new state (path copied).
 * Errors as ct_state_load. */
int ct_state_from_xml(const void *data, size_t n, const char *path, struct ct_state **out);

/* Write st to st->path atomically (mode 0600). 0 or a CT_E* code; on
 * failure the old file is intact. */
int ct_state_save(const struct ct_state *st);

/* Free st and everything in it; NULL is a no-op. */
void ct_state_free(struct ct_state *st);

/* Project by URL (normalised the same way as in attach), or NULL. */
struct ct_project *ct_state_find_project(struct ct_state *st, const char *url);

/* Add a project (url normalised; key copied). CT_EEXISTS if attached. On
 * success *out (may be NULL) points into st (valid until the next add or
 * remove). */
int ct_state_add_project(struct ct_state *st, const char *url, const char *key,
			 struct ct_project **out);

/* Remove the project with that URL. 0 or CT_ENOTFOUND. */
int ct_state_remove_project(struct ct_state *st, const char *url);

/* Task by result name, or NULL. */
struct ct_task *ct_project_find_task(struct ct_project *p, const char *name);

/* Append a zeroed task with that name (copied) in state DOWNLOADING;
 * CT_EEXISTS if present. *out points into p (valid until the next add or
 * remove). */
int ct_project_add_task(struct ct_project *p, const char *name, struct ct_task **out);

/* Remove the task at index i (frees it). */
void ct_project_remove_task(struct ct_project *p, size_t i);

/* Value of a WU parameter, or NULL. */
const char *ct_task_param(const struct ct_task *t, const char *name);

/* Add a parameter (copied). 0 or CT_ENOMEM. */
int ct_task_add_param(struct ct_task *t, const char *name, const char *value);

/* Add a zeroed file entry; *out points into t. */
int ct_task_add_file(struct ct_task *t, struct ct_task_file **out);

/* Free n parameters / n input files and the array itself (NULL-safe); the
 * scheduler reply (cl_rpc.c) holds the same two lists. */
void ct_params_free(struct ct_param *p, size_t n);
void ct_task_files_free(struct ct_task_file *f, size_t n);

/* Replace *dst with a copy of src (NULL allowed). 0 or CT_ENOMEM. */
int ct_strset(char **dst, const char *src);

/* Strip trailing '/' characters from a URL in place. */
void ct_url_normalise(char *url);

#endif
