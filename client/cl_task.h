/*
 * cl_task.h - running one task's work unit on the engine, and turning the
 * trained weights into the upload file.
 *
 * Files of a task live in the slot directory slots/<result name>/:
 *   state        the engine's full state (ct_wu_save_state), atomic
 *   result.ctd   the upload: trained weights as a ct_delta against the base
 * Inputs stay in the content-addressed cache (cache/<sha256>); the WU's
 * "model" and "data" files name them.
 *
 * A task is resumed from `state` when it exists; a state file that the
 * engine refuses (corrupt, another WU) is discarded and the WU restarts
 * from step 0, which gives the same result, only later.
 */
#ifndef CT_CL_TASK_H
#define CT_CL_TASK_H

#include <stdint.h>

#include "cl_state.h"
#include "ct_engine.h"
#include "ct_gpt2.h"
#include "ct_tokens.h"

/* The in-memory side of a running task. Zero-initialise. */
struct ct_task_run {
	struct ct_gpt2 model;		/* the base model (borrowed by wu) */
	struct ct_tokens tokens;
	struct ct_wu_hparams hp;
	struct ct_wu *wu;
	unsigned char base_sha[32];
	int encoding;			/* CT_DELTA_LOSSLESS / CT_DELTA_INT8 */
	int resumed;			/* 1 if started from a state file */
	int chain_every;		/* the WU's chain interval S, 0: no chain */
	int state_at;			/* a state task (doc/protocol.md "State
					 * requests"): stop after this step and
					 * upload the state; 0: a result */
	float *lora_init;		/* a LoRA WU's initial adapters from its
					 * "lora_init" input (malloc'd); NULL:
					 * ct_lora_init of the seed */
};

/* 1 when r's work is done: all N steps, or a state task's state_at. */
static inline int ct_task_done(const struct ct_task_run *r)
{
	return ct_wu_done(r->wu) || (r->state_at > 0 && ct_wu_steps_done(r->wu) >= r->state_at);
}

/* Map the WU parameters of t (steps, batch, seq, lr, beta1, beta2, eps,
 * weight_decay, grad_clip) onto hp, starting from the engine's defaults.
 * A malformed or out-of-range value -> CT_EINVAL naming the parameter. */
int ct_task_hparams(const struct ct_task *t, struct ct_wu_hparams *hp);

/* The input file of t with role `role`, or NULL. */
const struct ct_task_file *ct_task_input(const struct ct_task *t, const char *role);

/* The cached copy's path (cache_dir/SHA) of t's input `role` into out
 * (cap bytes), its SHA-256 checked to be one (the jail's name form) and,
 * when sha_raw is not NULL, decoded into sha_raw[32]. Returns 0,
 * CT_EINVAL (no such input) or CT_EFORMAT (a bad SHA-256). */
int ct_task_cache_path(const char *cache_dir, const struct ct_task *t, const char *role,
		       char *out, size_t cap, unsigned char *sha_raw);

/* Load the inputs of t from cache_dir and open (or resume from
 * slot_dir/state) its WU on device. Returns 0 or a CT_E* code: input or
 * hyperparameter errors (CT_EINVAL, CT_EFORMAT, CT_EMISMATCH) are the WU's
 * fault; CT_EDEVNOMEM / CT_ECL the device's. On failure r is closed. */
int ct_task_open(struct ct_task_run *r, const struct ct_task *t, const char *cache_dir,
		 const char *slot_dir, const char *device);

/* Save the engine state into slot_dir/state (atomic). */
int ct_task_checkpoint(struct ct_task_run *r, const char *slot_dir);

/* The last part of writing a result, shared by full-weight and LoRA WUs:
 * given rc from encoding into out (CT_ETOOBIG: over max_bytes), write out
 * to slot_dir/result.ctd atomically and give its SHA-256 (hex) and size.
 * Returns rc, or the first error of the write. out stays the caller's. */
int ct_task_save_result(int rc, const struct ct_buf *out, uint64_t max_bytes,
			const char *slot_dir, char sha_hex[CT_SHA256_HEXLEN + 1], uint64_t *size);

/* After the last step: encode the trained weights against the base model
 * into slot_dir/result.ctd (atomic, at most max_bytes when not 0), and give
 * its SHA-256 (hex) and size. A state task writes the WU's state there
 * instead (ct_wu_save_state). */
int ct_task_write_result(struct ct_task_run *r, const char *slot_dir, uint64_t max_bytes,
			 char sha_hex[CT_SHA256_HEXLEN + 1], uint64_t *size);

/* The WU's hash chain (ct_chain.h) after the step just run: when a link
 * is due, its 64 hex digits into hex (else hex = ""). 0 or a CT_E* code. */
int ct_task_chain_link(struct ct_task_run *r, char hex[65]);

/* Append a link (64 hex digits) to *chain (NULL: none yet), within
 * CT_CHAIN_HEX_MAX. 0, CT_ENOMEM or CT_ETOOBIG; *chain stays on failure. */
int ct_task_chain_append(char **chain, const char *hex);

/* After a resume: keep the links of *chain up to the steps done, the run
 * recomputes the rest. A chain shorter than that (lost) is dropped
 * (*chain NULL), and the result goes without one. Returns 1 if kept. */
int ct_task_chain_trim(const struct ct_task_run *r, char **chain);

/* Free everything of r (r is zeroed). */
void ct_task_close(struct ct_task_run *r);

/* Tokens trained per step (B * T). */
static inline double ct_task_tokens_per_step(const struct ct_task_run *r)
{
	return (double)r->hp.B * r->hp.T;
}

#endif
