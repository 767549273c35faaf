/*
 * quorum.h - the validator's checks and quorum decision, and the adaptive
 * replication decision, as pure functions (quorum.c; no database): the
 * validator (daemons/validator.c) and the scheduler call them, the tests
 * and benches drive them directly.
 */
#ifndef CT_QUORUM_H
#define CT_QUORUM_H

#include <stddef.h>
#include <stdint.h>

/* ---- adaptive replication ------------------------------------------------- */

/* BOINC's adaptive replication: a host with n >= 10 valid results in a row
 * may get a WU without replication with probability 1 - 1/n. `u` is a
 * uniform random number in [0, 1) the caller draws. Returns 1 when the WU
 * this host is being sent should be accepted on its result alone. */
int ct_adaptive_decide(int consecutive_valid, double u);

/* ---- validator checks ------------------------------------------ */

/* Why a result failed its sanity checks (0: it passed). */
enum ct_val_reason {
	CT_VAL_OK = 0,
	CT_VAL_UNREADABLE,	/* upload missing, over the cap, or not decodable */
	CT_VAL_WRONG_BASE,	/* delta against another model */
	CT_VAL_WRONG_SHAPE,	/* other config or parameter count */
	CT_VAL_NONFINITE,	/* NaN or Inf weights */
	CT_VAL_NO_UPDATE,	/* weights equal the base: free-riding */
	CT_VAL_TOO_LARGE,	/* update larger than training can produce */
	CT_VAL_LOSS,		/* probe loss worse than the base's + margin */
	CT_VAL_FALSE_CHAIN,	/* its hash chain is malformed or does not end in
				 * its hash (validate/bisect.h) */
};

/* Short name of a reason ("no_update"), for logs and error_message. */
const char *ct_val_reason_name(int reason);

/* Hyperparameters that bound how far AdamW can move a weight. */
struct ct_val_bound {
	int steps;
	double lr, beta1, beta2, weight_decay;
};

/* The largest |result[i] - base[i]| that `steps` AdamW steps can produce
 * for a weight starting at |base[i]| <= pmax, whatever the gradients: per
 * step |m_hat / (sqrt(v_hat) + eps)| is at most
 *   (1-b1) sqrt(1-b2^t) / ((1-b1^t) sqrt(1-b2)) * sqrt((1-r^t) / (1-r)),
 *   r = b1^2 / b2 (Cauchy-Schwarz on the two moving sums; 1 at t = 1),
 * plus weight decay, plus float rounding and 1% slack. A scaled-up update
 * (the x10 attack) exceeds it wherever honest Adam steps were near their
 * usual size (about lr per step). Requires b1^2 < b2; otherwise returns
 * +Inf (no bound). */
double ct_val_adam_bound(const struct ct_val_bound *b, double pmax);

/* Update statistics of result w against base (n floats), in double. */
struct ct_val_stats {
	double base_norm;	/* ||b|| */
	double update_norm;	/* ||w - b|| */
	double update_max;	/* max |w_i - b_i| */
	double base_max;	/* max |b_i| */
	int finite;		/* every w_i finite */
};
void ct_val_stats(const float *base, const float *w, size_t n, struct ct_val_stats *st);

/* Sanity verdict from the statistics: CT_VAL_NONFINITE, CT_VAL_NO_UPDATE,
 * CT_VAL_TOO_LARGE (update_max over ct_val_adam_bound(), or
 * update_norm / base_norm over max_ratio when max_ratio > 0), else
 * CT_VAL_OK. The probe loss is checked separately (ct_val_loss_ok). */
int ct_val_sanity(const struct ct_val_stats *st, const struct ct_val_bound *b,
		  double max_ratio);

/* Batch size for evaluating on a file of ntokens tokens at sequence
 * length seq: the job's batch, or fewer sequences when the file is shorter
 * than batch * seq + 1 tokens (the work generator only guarantees seq + 1);
 * at least 1. */
int ct_eval_batch(int batch, int seq, uint64_t ntokens);

/* 1 if a probe loss is acceptable: finite and <= base_loss + margin. */
int ct_val_loss_ok(double loss, double base_loss, double margin);

/* The probe-loss margin a job gets: its absolute `margin` (job.loss_margin,
 * nats) or rel * base_loss, whichever is larger, so the margin scales with
 * the job's loss (a job continuing a fine-tuned model has honest updates
 * that cost more than 0.05 nats on the probe). rel is the project's
 * daemons.loss_margin_rel (default 0.2; 0 = absolute only). */
double ct_val_margin(double margin, double rel, double base_loss);

/* The probe's size, in eval tokens, for a job whose WUs train `steps`
 * steps of batch x seq: job.probe_tokens when > 0, else a quarter of the
 * tokens a WU trains on (a forward pass over them costs the server about
 * 1/12 of the WU's forward + backward), at least one sequence, at most
 * CT_VAL_PROBE_TOKENS (doc/validation.md, "The probe"). */
#define CT_VAL_PROBE_TOKENS 1024
int ct_val_probe_tokens(int steps, int batch, int seq, int probe_tokens);

/* One result taking part in a quorum decision. */
struct ct_val_cand {
	int64_t id;
	int state;		/* CT_VS_INIT, CT_VS_INCONCLUSIVE, or CT_VS_VALID (the canonical) */
	int conforming;		/* computed on a conforming device */
	unsigned char sha[32];	/* SHA-256 of the decoded weights */
	const float *w;		/* decoded weights, n floats (borrowed) */
	double update_norm;	/* ||w - base|| */
	double probe_loss;
	double quant_error;	/* bound on ||w - trained weights||: int8 uploads; 0 exact */
	int new_state;		/* out: CT_VS_VALID, CT_VS_INVALID or CT_VS_INCONCLUSIVE */
};

/* Whether two results agree: equal weights hashes; else, unless both are
 * exact uploads from conforming devices (which must match bit for bit),
 * ||w_a - w_b|| <= tolerance * max(||d_a||, ||d_b||) + quant_error_a +
 * quant_error_b (what int8 quantisation may add) and the probe losses
 * differ by at most tolerance * max(|loss|) (+1e-7). */
int ct_val_agree(const struct ct_val_cand *a, const struct ct_val_cand *b,
		 size_t n, double tolerance);

/* Quorum over the sane results c[0..nc) of one WU (n weights each). If one
 * of them is already VALID it is the canonical result: every other gets
 * VALID when it agrees with it, else INVALID. Otherwise the result agreeing
 * with the most others (itself included; ties: lowest index) becomes
 * canonical if that count reaches min_quorum, the ones agreeing with it
 * VALID and the rest INVALID; with no such result every one is
 * INCONCLUSIVE. Returns the canonical index (>= 0) or -1 (no consensus:
 * more replicas are needed). */
int ct_val_decide(struct ct_val_cand *c, size_t nc, size_t n, int min_quorum,
		  double tolerance);

/* The most candidates ct_val_decide_fn takes. */
#define CT_VAL_MAX_CANDS 16

/* ||w_i - w_j|| of candidates i < j, computed by the caller (streaming
 * both uploads). 0 or a CT_E* code. */
typedef int (*ct_val_dist_fn)(void *ctx, size_t i, size_t j, double *dist);

/* ct_val_decide without the weights in memory (c[].w unused): agreement is
 * decided by hash first, and dist() is asked only for pairs whose hashes
 * differ and which may agree within the tolerance, at most once per pair.
 * The same decisions as ct_val_decide. nc <= CT_VAL_MAX_CANDS (else
 * CT_EINVAL). *best = the canonical index or -1. Returns 0, or dist()'s
 * error (then no new_state is meaningful). */
int ct_val_decide_fn(struct ct_val_cand *c, size_t nc, int min_quorum, double tolerance,
		     ct_val_dist_fn dist, void *ctx, int *best);

#endif
