/*
 * bisect.h - disputes between two replicas settled by bisection of their
 * hash chains (doc/validation.md "Disputes settled by bisection",
 * doc/workunit.md §14), instead of a third replica.
 *
 * Two results of a WU from conforming devices whose hashes differ both
 * carry a chain (lib/ct_chain.h) whose last link must be the result's own
 * hash. Their first differing link k says where they part: the state
 * after link k-1's step is agreed (both chains say so), and one segment,
 * link k-1 to link k, settles which one computed the WU. The agreed state
 * at step 0 is the WU's own start, which the server makes itself; any
 * later one is uploaded by one of the two hosts and checked against the
 * agreed digest before it is used. The server recomputes the segment
 * (ct_bisect_segment, on the C reference) and the result whose link k
 * matches is valid, the other invalid.
 *
 * ct_bisect_plan is the pure decision; ct_bisect_segment the computation;
 * the validator (daemons/validator.c) feeds them and applies the outcome.
 */
#ifndef CT_BISECT_H
#define CT_BISECT_H

#include <stdint.h>

#include "ct_chain.h"
#include "ct_engine.h"
#include "ct_gpt2.h"
#include "ct_lora.h"
#include "ct_tokens.h"

/* The chain interval of a job's WUs (ct_chain_every) from its shape:
 * a link hashes the trained floats (weights, or the LoRA adapters) and
 * their moments; a step costs the credit's FLOPs of B x T tokens. */
int ct_bisect_chain_every(const struct ct_model_config *cfg, const struct ct_lora_spec *lora,
			  int batch, int seq, int steps);

/* 1 if chain (hex links) is well formed for a WU of steps steps with
 * interval every and its last link is sha, the result's hash. */
int ct_bisect_chain_true(const char *chain, int steps, int every, const unsigned char sha[32]);

/* One side of a dispute. */
struct ct_bisect_side {
	const char *chain;		/* hex links, "" when the result has none */
	unsigned char sha[32];		/* the result's hash (decoded trained floats) */
	int exact;			/* lossless upload: its hash is the trained floats' */
};

enum ct_bisect_verdict {
	CT_BISECT_NONE = 0,	/* no chains to bisect: today's third replica */
	CT_BISECT_FALSE_A,	/* a's chain is malformed or does not end in its hash */
	CT_BISECT_FALSE_B,	/* the same for b */
	CT_BISECT_SEGMENT,	/* recompute segment `link` (from `step` to `end`) */
};

struct ct_bisect_plan {
	enum ct_bisect_verdict verdict;
	int link;		/* the first link where the chains differ (0-based) */
	int step, end;		/* the segment: from the state after `step` (0: the
				 * WU's start) to the one after `end` */
	unsigned char agreed[32];	/* the digest after `step` (step > 0) */
	unsigned char want_a[32], want_b[32];	/* each side's link `link` */
};

/* The plan for two results of a WU of `steps` steps with interval every
 * (> 0). A chain that is malformed (ct_chain_check) or whose last link is
 * not its result's hash is false: that side loses without any compute.
 * Chains that agree everywhere while the hashes differ cannot happen for
 * checked chains (the last link is the hash). Sides without an exact
 * hash (a lossy upload), or without chains on both sides, give NONE. */
void ct_bisect_plan(const struct ct_bisect_side *a, const struct ct_bisect_side *b,
		    int steps, int every, struct ct_bisect_plan *p);

/* The inputs of one segment's recomputation. Borrowed. */
struct ct_bisect_inputs {
	const struct ct_gpt2 *model;	/* the WU's model */
	const struct ct_tokens *tokens;	/* its shard */
	const struct ct_wu_hparams *hp;	/* its hyperparameters (hp->steps = N) */
	const char *state_path;		/* the uploaded state at plan->step, NULL
					 * when plan->step is 0 */
	const char *device;		/* "cpu" (the C reference) or the server's
					 * evaluation device */
	const float *lora_init;		/* a LoRA WU's initial adapters when its
					 * round carries them (ct_wu_set_adapters),
					 * NULL: the seed's */
};

/* Recompute plan's segment: open the WU at step 0 or from the uploaded
 * state, check the state's digest against plan->agreed (a state that is
 * not the agreed one: CT_EMISMATCH, the host that sent it gains nothing),
 * run the steps to plan->end and take its link into out (32 bytes).
 * *steps_run = the steps it ran. Returns 0 or a CT_E* code. */
int ct_bisect_segment(const struct ct_bisect_inputs *in, const struct ct_bisect_plan *plan,
		      unsigned char out[32], int *steps_run);

#endif
