/*
 * eval.h - the server's own compute: loading models without a transient
 * second copy, and evaluations (validator probes, round losses) on the
 * engine's backends.
 *
 * The device is `daemons.eval_device`: "auto" (default) runs the OpenCL
 * conformance self-test once per process and uses "opencl" when it passes,
 * else "cpu"; "cpu" or "opencl[:N]" name one. Both give the same bits
 * (that is what conformance means), so the losses a page shows are the C
 * reference's whichever ran. `daemons.eval_threads` (0 = every CPU) sets
 * the C reference's worker threads. Evaluations of one process run one at
 * a time (one backend's memory at once; two on a 2-core machine would only
 * share the cores). Thread-safe.
 */
#ifndef CT_SERVER_EVAL_H
#define CT_SERVER_EVAL_H

#include <stdint.h>

#include "ct_gpt2.h"
#include "ct_tokens.h"

struct ct_server;
struct ct_db;

/* Default tokens of a round evaluation when neither the job
 * (job.eval_tokens) nor the config (daemons.eval_tokens) says. */
#define CT_SEVAL_DEFAULT_TOKENS 1024

/* The OpenCL backend, referenced strongly so that linking eval.o links it
 * in (ct_engine.h's note on static linking). */
struct ct_backend_ops;
extern const struct ct_backend_ops *const ct_seval_ocl_ops;

/* The process's turn at holding models: the validator takes it for a WU,
 * the assimilator for a round, so that the two daemons of one process
 * never hold their models at the same time (two models at most in the
 * process, not four). Blocks; pair each hold with a release. */
void ct_seval_hold(void);
void ct_seval_release(void);

/* The most tokens a job may ask its rounds to be evaluated on. */
#define CT_SEVAL_MAX_TOKENS ((int64_t)1 << 32)

/* Record that round `roundid`'s losses are over `ntokens` tokens
 * (round.eval_ntokens, shown on the job page). 0 or a db error. */
int ct_seval_record_round(struct ct_db *db, int64_t roundid, int64_t ntokens);

/* Load an llm.c checkpoint like ct_gpt2_load(), but read the weights with
 * read() into the allocation instead of copying them out of a mapping, so
 * the process's resident size grows by one model, not two. A compact base
 * file (a LoRA job's, ct_base.h) is read whole and widened to float32
 * (ct_base_widen_model): the exact float32 weights every client's WU
 * computes with, so the server's merges and losses are those of the
 * widened base (doc/workunit.md §13). *m owned by the
 * caller (ct_gpt2_free). Errors as ct_gpt2_load (CT_ENOENT, CT_EFORMAT,
 * CT_ENOMEM, CT_EIO). */
int ct_seval_model_load(const char *path, struct ct_gpt2 *m);

/* The device evaluations run on ("cpu", "opencl", "opencl:1"), decided on
 * the first call (see above). Never NULL; static storage. */
const char *ct_seval_device(struct ct_server *srv);

/* Mean loss of m on about want_tokens tokens of tok (want_tokens <= 0: one
 * pass over the file) read like ct_eval's batches: sequences of T, batches
 * of at most `batch` sequences (fewer when the file or want_tokens is
 * short), whole batches, at least one, never more than one pass. Runs on
 * ct_seval_device(); if the OpenCL device fails (CT_ECL, CT_EDEVNOMEM,
 * CT_EUNSUPP) it is run again on "cpu" (same bits). *ntokens (may be
 * NULL) = the tokens the loss is over (batches x B x T). Errors of
 * ct_eval. */
int ct_seval_loss(struct ct_server *srv, const struct ct_gpt2 *m, const struct ct_tokens *tok,
		  int batch, int T, int64_t want_tokens, float *loss, int64_t *ntokens);

/* ct_seval_loss, but m's weights MOVE to the device: they are written to
 * it a piece at a time and the host pages released behind each piece
 * (eval_handover.c), so the process never holds the model twice. On
 * return *consumed says whether m->params was used up that way (then its
 * contents are gone: free it, or load it again); 0 when the backend has
 * no load_range and copied it whole. A device failure before anything was
 * consumed falls back to "cpu" as ct_seval_loss does; after, it is
 * returned. Same loss bits as ct_seval_loss. */
int ct_seval_loss_handover(struct ct_server *srv, struct ct_gpt2 *m,
			   const struct ct_tokens *tok, int batch, int T, int64_t want_tokens,
			   float *loss, int64_t *ntokens, int *consumed);

/* The evaluation itself on `device`: nb batches of B x T (ct_eval's
 * batches and sum), the weights handed over as above. For eval.c. */
int ct_seval_run_handover(const char *device, struct ct_gpt2 *m, const struct ct_tokens *tok,
			  int B, int T, int nb, float *loss, int *consumed);

/* A model file to stream to a backend (ct_seval_load_file). */
struct ct_seval_file {
	const char *path;	/* an llm.c checkpoint (header + weights) */
	size_t nparams;		/* its weights (lay.total) */
};

/* A ct_sample_params.load: set the weights of backend be from the file
 * arg (struct ct_seval_file *) 4 MiB at a time (load_range), never
 * holding the model in host memory; without load_range, the whole model
 * once. 0 or CT_EIO / CT_ENOMEM / the backend's error. */
struct ct_backend;
int ct_seval_load_file(void *arg, const struct ct_backend_ops *ops, struct ct_backend *be);

/* pread exactly len bytes at off of fd (path for the message): 0 or
 * CT_EIO ("file shrank" on a short file). */
int ct_seval_pread(int fd, const char *path, void *dst, size_t len, uint64_t off);

/* Tokens a round evaluation of job `jobid` is over: job.eval_tokens when
 * > 0, else daemons.eval_tokens (default CT_SEVAL_DEFAULT_TOKENS; 0 = the
 * whole eval file). Returns 0 or a db / config error. */
int ct_seval_job_tokens(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			int64_t *tokens);

#endif
