/*
 * ct_engine.h - the work-unit runner: train a GPT-2 checkpoint for N steps
 * on a token shard (exactly the semantics of doc/workunit.md), step by step,
 * with an atomic save/resume of the full state in between, on a pluggable
 * compute backend ("cpu" = the C reference of ct_model.h, "opencl[:N]" =
 * engine/ct_ocl_backend.c). Also the evaluation used by validators.
 *
 * Typical use (the client daemon, `ctune train`):
 *
 *   struct ct_wu *wu;
 *   rc = ct_wu_open(&model, &tokens, &hp, "opencl", &wu);  // or ct_wu_resume()
 *   while (!ct_wu_done(wu)) {
 *           rc = ct_wu_step(wu, &loss); if (rc < 0) goto out;
 *           if (time to checkpoint) rc = ct_wu_save_state(wu, "wu.state");
 *   }
 *   rc = ct_wu_save_model(wu, "out.bin");
 *   ct_wu_close(wu);
 *
 * A WU resumed from a state file saved after any step produces exactly the
 * same bytes as an uninterrupted run (same backend arithmetic everywhere).
 */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "ct_gpt2.h"
#include "ct_lora.h"
#include "ct_model.h"
#include "ct_tokens.h"

/* ---- backends ------------------------------------------------------- */

/* Arguments of one training step (built by the engine). */
struct ct_step_args {
	int t;				/* AdamW step, 1-based */
	float grad_clip;		/* <= 0: no clipping */
	struct ct_adamw_args opt;	/* lr, betas, eps, wd, bc1, bc2 for t */
};

/* A backend's open context (each backend defines its own struct). */
struct ct_backend;

/* A compute backend. Every function returns 0 or a negative CT_E* code
 * with a one-line detail (ct_error()). The engine calls, in order:
 * open, load_state, then any number of step / eval, read_state, and close.
 * Each must compute exactly what ct_model.h specifies. */
struct ct_backend_ops {
	const char *name;		/* "cpu", "opencl" */

	/* Open `device` (the whole device string, e.g. "opencl:1") for a model
	 * of config cfg and batches of B x T tokens. training != 0: also
	 * gradients and AdamW m, v; else eval only. *out is owned by the
	 * caller and released with close. Errors: CT_EINVAL, CT_ENOTFOUND (no
	 * such device), CT_ENOMEM, CT_EDEVNOMEM (naming the size), CT_ECL. */
	int (*open)(const char *device, const struct ct_model_config *cfg,
		    int B, int T, int training, struct ct_backend **out);

	/* Set the weights (nparams floats) and, when training, the AdamW
	 * moments m, v (nparams floats each; NULL means zeros). Borrowed: the
	 * backend copies what it needs. */
	int (*load_state)(struct ct_backend *be, const float *params,
			  const float *m, const float *v);

	/* One training step on inputs and targets (B*T tokens each, < V):
	 * zero grads, forward, backward, clip, AdamW with a. *loss = the mean
	 * loss of the forward pass (before the update). */
	int (*step)(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, const struct ct_step_args *a,
		    float *loss);

	/* Forward only: *loss = mean loss of the batch. */
	int (*eval)(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, float *loss);

	/* Copy the current weights / m / v out (nparams floats each); any
	 * pointer may be NULL to skip it. */
	int (*read_state)(struct ct_backend *be, float *params, float *m, float *v);

	/* LoRA (optional, all three or none; NULL: the backend cannot train
	 * adapters, CT_EUNSUPP). open_lora opens like open with training, but
	 * the base weights are frozen (no gradients or moments for them) and
	 * the adapters of spec (rank > 0) are trained instead: step trains
	 * the adapters (ct_lora_model.h's arithmetic), eval runs base plus
	 * adapters, load_state loads the base weights (m, v must be NULL) and
	 * read_state reads them back (m, v unavailable: CT_ESTATE). Unlike
	 * open's, the params given to load_state may be kept by pointer (the
	 * cpu backend does, saving a copy of the frozen base): the caller
	 * keeps them alive and unchanged until close (ct_wu does: the model
	 * outlives the WU).
	 * lora_load sets the adapters and their AdamW moments (ct_lora_nparams
	 * floats each; m, v NULL: zeros); lora_read copies them out (any
	 * pointer NULL to skip). */
	int (*open_lora)(const char *device, const struct ct_model_config *cfg,
			 int B, int T, const struct ct_lora_spec *spec,
			 struct ct_backend **out);
	int (*lora_load)(struct ct_backend *be, const float *adapters,
			 const float *m, const float *v);
	int (*lora_read)(struct ct_backend *be, float *adapters, float *m, float *v);

	/* Optional (may be NULL: the backend takes float32 bases only): the
	 * frozen base of a backend opened with open_lora whose spec has
	 * base_fmt fmt != CT_BASE_F32, as that compact image (ct_base.h,
	 * bytes long), instead of load_state. Borrowed like load_state's
	 * params under LoRA (the caller keeps it alive until close). */
	int (*load_base)(struct ct_backend *be, int fmt, const unsigned char *img,
			 size_t bytes);

	/* Optional (may be NULL): copy the parameter gradients of the last
	 * step (after clipping, before the update) into grads (nparams). */
	int (*read_grads)(struct ct_backend *be, float *grads);

	/* Optional (may be NULL): set the n weights from float offset off
	 * (off + n <= nparams) to params[0..n), the others unchanged: the
	 * weights loaded a piece at a time, so that the caller need not hold
	 * them all beside the backend's copy (server/daemons/eval.c). Borrowed. */
	int (*load_range)(struct ct_backend *be, size_t off, const float *params, size_t n);

	/* Release everything; NULL is a no-op. */
	void (*close)(struct ct_backend *be);

	/* Optional (may be NULL; used by ct_sample.h): forward only on inputs
	 * (B*T tokens, < V; no targets) and copy the V logits of row pos
	 * (0 <= pos < B*T) into out (V floats). */
	int (*logits)(struct ct_backend *be, const ct_tok *inputs, int pos,
		      float *out);
};

/* The C reference backend (always available). */
extern const struct ct_backend_ops ct_cpu_backend_ops;

/* The OpenCL backend, defined by engine/ct_ocl_backend.c; ct_backend_find()
 * links it into every program that uses the engine. */
extern const struct ct_backend_ops ct_ocl_backend_ops;

/* Backend for a device string: "cpu" -> ct_cpu_backend_ops; "opencl" or
 * "opencl:N" (N a decimal index) -> the OpenCL backend, or CT_EUNSUPP if it
 * is not built in. Anything else -> CT_EINVAL. *out NULL on failure. */
int ct_backend_find(const char *device, const struct ct_backend_ops **out);

/* 0 if backend ops can run a model of config cfg, else CT_EUNSUPP with a
 * detail for the user: Llama models (cfg->arch CT_ARCH_LLAMA) run on the
 * C reference ("cpu") and the OpenCL backend only. Every open goes
 * through it (work units, eval, sampling). */
int ct_backend_supports(const struct ct_backend_ops *ops, const struct ct_model_config *cfg);

/* ---- work units ----------------------------------------------------- */

/* Hyperparameters of a work unit. */
struct ct_wu_hparams {
	int steps;			/* N >= 1 */
	int B, T;			/* batch size, sequence length (T <= maxT) */
	float lr;			/* >= 0 */
	float beta1, beta2;		/* [0, 1); defaults 0.9, 0.999 */
	float eps;			/* > 0; default 1e-8 */
	float weight_decay;		/* >= 0; default 0 */
	float grad_clip;		/* >= 0; 0 = no clipping (default) */
	/* LoRA: lora.rank 0 (default) trains every weight; rank > 0 freezes
	 * the weights and trains adapters started by
	 * ct_lora_init(cfg, &lora, lora_seed) (doc/workunit.md, LoRA).
	 * lora.base_fmt stores the frozen base compactly (ct_base.h,
	 * doc/workunit.md §13): the WU converts a float32 model to it (or
	 * widens a compact model to float32 for base_fmt 0) when the model
	 * given is stored otherwise. */
	struct ct_lora_spec lora;
	uint64_t lora_seed;
};

#define CT_WU_MAX_STEPS 100000000
#define CT_WU_MAX_B 65536

/* Defaults: steps 1, B 4, T 64, lr 1e-4, beta1 0.9, beta2 0.999, eps 1e-8,
 * weight_decay 0, grad_clip 0. */
void ct_wu_hparams_default(struct ct_wu_hparams *hp);

/* Validate hp for a model config and a shard of ntokens tokens: ranges
 * above, all floats finite, 1 <= T <= maxT, B*T+1 <= ntokens. Returns 0,
 * CT_EINVAL or CT_ERANGE with a detail naming the field. */
int ct_wu_hparams_check(const struct ct_wu_hparams *hp,
			const struct ct_model_config *cfg, uint64_t ntokens);

/* Start of the batch of 0-based step i (also used by eval): batches of
 * B*T+1 tokens read sequentially, each starting B*T after the previous,
 * restarting at 0 when fewer than B*T+1 tokens remain. With
 * nb = (n-1) / (B*T) batches per pass, batch i starts at (i % nb) * B*T.
 * Requires n >= B*T + 1. */
uint64_t ct_wu_batch_start(uint64_t i, uint64_t n, int B, int T);

/* The BT targets of the batch starting at token s, as a backend takes
 * them: t->tok + s + 1 itself when t has no mask, else scratch (BT ids)
 * filled with those ids, CT_TOK_UNTRAINED set on each whose flag is 0.
 * *ntrained = the trained targets (BT without a mask). */
const ct_tok *ct_wu_targets(const struct ct_tokens *t, uint64_t s, int BT,
			    ct_tok *scratch, int *ntrained);

struct ct_wu;

/* Open a work unit at step 0: checks hp and the tokens' vocabulary against
 * the model (CT_EMISMATCH), opens the backend for `device` and loads the
 * weights with zero AdamW state. model and tokens are borrowed and must
 * outlive the WU. *out owned by the caller (ct_wu_close); NULL on failure. */
int ct_wu_open(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	       const struct ct_wu_hparams *hp, const char *device,
	       struct ct_wu **out);

/* Start a LoRA WU from the adapters ad (ct_wu_nparams_trained floats,
 * copied) instead of ct_lora_init's, their AdamW moments zero: a
 * compact-base job's round r+1 starts from round r's aggregate
 * (ct_lora_file.h, doc/workunit.md §13). Only right after ct_wu_open,
 * before the first step. Returns 0, CT_ESTATE (a full-weight WU, or steps
 * done) or the backend's error. */
int ct_wu_set_adapters(struct ct_wu *wu, const float *ad);

/* Open a work unit from a state file written by ct_wu_save_state(). The
 * model, tokens and hp must be the very ones of the saved run: config,
 * hyperparameters and the SHA-256 of the base weights and of the tokens are
 * compared (CT_EMISMATCH naming what differs); a malformed, truncated or
 * corrupted state file gives CT_EFORMAT / CT_ECORRUPT. device may differ
 * from the saved run's. Returns like ct_wu_open(). */
int ct_wu_resume(const char *state_path, const struct ct_gpt2 *model,
		 const struct ct_tokens *tokens, const struct ct_wu_hparams *hp,
		 const char *device, struct ct_wu **out);

/* Run the next step; *loss = its mean loss. CT_ESTATE when all N steps
 * are done. A backend failure leaves the WU unusable (close it; resume
 * from the last saved state). */
int ct_wu_step(struct ct_wu *wu, float *loss);

/* Steps done so far (0..N), and whether all N are done. */
int ct_wu_steps_done(const struct ct_wu *wu);
int ct_wu_done(const struct ct_wu *wu);

/* Loss of the last step run (NaN before the first one; restored by
 * resume). */
float ct_wu_last_loss(const struct ct_wu *wu);

/* Name of the backend in use ("cpu", "opencl"). */
const char *ct_wu_backend_name(const struct ct_wu *wu);

/* Write the full state (weights, AdamW m and v, steps done, next data
 * position, hyperparameters, config, input hashes, last loss) to path
 * atomically (0600), followed by a SHA-256 of the file's contents. The
 * format is in doc/workunit.md. Returns 0 or a CT_E* code; the old file
 * stays intact on failure. */
int ct_wu_save_state(struct ct_wu *wu, const char *path);

/* A link of the WU's hash chain (doc/workunit.md §14): SHA-256 of the
 * bytes "CTCHAIN1", the steps done (uint32, little-endian), then the
 * trained floats, their AdamW m and their v (ct_wu_nparams_trained floats
 * each, little-endian float32, as the state file holds them). Everything
 * the next step reads besides the WU's fixed inputs, so two runs whose
 * digests agree at step k agree on every later step. Memory: one array of
 * the trained floats. Returns 0 or a CT_E* code. */
int ct_wu_state_digest(struct ct_wu *wu, unsigned char out[32]);

/* The chain's link where the WU stands now (doc/workunit.md §14): the
 * state's digest (ct_wu_state_digest), or once all N steps are done the
 * result's hash, SHA-256 of the trained floats alone (little-endian
 * float32, ct_wu_read_trained), which is what the validator compares.
 * Returns 0 or a CT_E* code. */
int ct_wu_chain_link(struct ct_wu *wu, unsigned char out[32]);

/* Copy the current weights (nparams floats) into params. */
int ct_wu_read_params(struct ct_wu *wu, float *params);

/* What a work unit trains, for its result: ct_wu_nparams_trained() floats
 * (the model's nparams, or for a LoRA WU ct_lora_nparams of hp.lora).
 * ct_wu_read_adapters copies a LoRA WU's current adapter array (layout of
 * ct_lora.h; CT_ESTATE for a full WU); ct_wu_read_trained copies whichever
 * the WU trains (adapters or weights). The initial adapters, which a LoRA
 * result is delta-encoded against, are ct_lora_init(cfg, &hp.lora,
 * hp.lora_seed). */
size_t ct_wu_nparams_trained(const struct ct_wu *wu);

/* Memory a WU of this shape needs, in bytes (doc/workunit.md §13,
 * "Memory"): the scheduler sends a WU only to a host whose work memory
 * (the memory of the device it computes on) is at least this. The
 * device memory the OpenCL backend holds for it, ct_ocl_wu_bytes: what
 * the engine allocates (Llama in lean mode where it runs lean, a LoRA
 * base compact and in per-layer pieces, the head in pieces), an upper
 * bound on its measured peak (test_ocl_base holds it within 1.5x of
 * it). The C reference keeps every layer's activations and may need
 * more at big shapes: its bound is ct_ref_wu_bytes. cfg valid, hp
 * checked (ct_wu_hparams_check). */
uint64_t ct_wu_mem_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp);

/* Memory a WU of this shape needs on the C reference ("cpu"), in bytes
 * (doc/workunit.md §13, "Memory"): the scheduler holds a host that
 * computes on the C reference to this. More than ct_wu_mem_bytes at real
 * shapes (4x for a Llama-3.2-1B nf4 LoRA WU at B=4 T=512), though at toy
 * shapes OpenCL's fixed scratch can outweigh it. An upper bound on what
 * one process holds for it:
 *   the model as the client read it, and the backend's copy: 2 x the
 *     stored weights (4 x nparams, or the compact image's bytes);
 *   a full-weight WU: gradients and AdamW moments, 12 x nparams bytes;
 *   the activations and the backward scratch (ct_model_act_floats);
 *   a LoRA WU: the adapters' state (ct_lora_state_floats, training);
 *   a compact base: OpenCL's widening scratch, max(2^20, 64 x the longest
 *     side of a matrix) floats.
 * cfg valid, hp checked (ct_wu_hparams_check). */
uint64_t ct_ref_wu_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp);

/* Device memory the OpenCL backend holds for a WU of this shape, in
 * bytes (doc/workunit.md §13, "Memory"), *largest (NULL: not wanted) its
 * largest buffer: the weights as ct_ocl_weights.h keeps them (a Llama
 * LoRA base in per-layer pieces), a full WU's gradients and moments, the
 * activations and backward scratch (Llama: exactly what the backend
 * allocates, in lean mode where it runs lean by default or as
 * CT_OCL_LEAN forces in this process, a lean LoRA pass's MLP in row
 * blocks; GPT-2: the C reference's layout, more than the backend's), the
 * adapters' state (the MLP's adapter rows as the pass holds them), the
 * tokens, and a bound on the matmul and attention scratch grown on
 * demand. cfg valid, hp checked. */
uint64_t ct_ocl_wu_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp,
			 uint64_t *largest);

/* Bytes of the file ct_wu_save_state writes (the trained floats, their
 * two AdamW moments, header and digest). */
double ct_wu_state_bytes(const struct ct_wu *wu);
int ct_wu_read_adapters(struct ct_wu *wu, float *adapters);
int ct_wu_read_trained(struct ct_wu *wu, float *out);

/* Write the current weights as an llm.c checkpoint, atomically (0644).
 * For a LoRA WU these are the frozen base weights (merge the adapters with
 * ct_lora_merge). */
int ct_wu_save_model(struct ct_wu *wu, const char *path);

/* Close the backend and free the WU. NULL is a no-op. */
void ct_wu_close(struct ct_wu *wu);

/* Convenience: run a whole WU on device; the trained weights go into
 * params_out (ct_wu_nparams_trained floats: the weights, or for a LoRA WU
 * the adapters) and, when losses is not NULL, the N step
 * losses into losses. Returns 0 or a CT_E* code. */
int ct_wu_run(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	      const struct ct_wu_hparams *hp, const char *device,
	      float *params_out, float *losses);

/* ---- evaluation ----------------------------------------------------- */

/* Mean loss of `model` over nbatches batches of B x T tokens read like a
 * WU's batches from the start of the file (ct_wu_batch_start); nbatches <= 0
 * means one pass, (n-1)/(B*T) batches. Mean = (acc over batches of
 * acc + batch loss) / (float)K, K the batches with a trained target (a
 * batch without one is skipped; K = nbatches without a mask; K = 0 is
 * CT_EINVAL). Tokens are checked against the
 * vocabulary (CT_EMISMATCH), T against maxT (CT_EINVAL), and B*T+1 against
 * the file (CT_ERANGE). Returns 0 and *mean_loss, or a CT_E* code. */
int ct_eval(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	    int B, int T, int nbatches, const char *device, float *mean_loss);

/* ct_eval's loop on an open evaluating backend be (B x T, weights
 * loaded): nbatches >= 1 batches, the mean as ct_eval says. Returns 0 and
 * *mean_loss, CT_EINVAL (no trained target), CT_ENOMEM or be's errors. */
int ct_eval_batches(const struct ct_backend_ops *ops, struct ct_backend *be,
		    const struct ct_tokens *tokens, int B, int T, int nbatches,
		    float *mean_loss);

#endif
