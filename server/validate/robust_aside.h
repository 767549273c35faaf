/*
 * robust_aside.h - what the assimilator does with a round's outliers
 * before it averages (doc/validation.md, "Cross-shard check" and
 * "Adaptive replication").
 *
 * A canonical result the cross-shard check finds unlike the others, or an
 * unreplicated canonical result of a host that has since been caught
 * (trust.h), is set aside: every valid result of its WU becomes
 * invalid (their credit revoked, their hosts' valid streak reset), the WU
 * loses its canonical result and is replicated again (at least 2), the
 * transitioner creates the new replicas, and the scheduler sends them to
 * hosts apart from every earlier replica (eligibility.h). The round is
 * averaged only once every shard has a canonical result that passes. The
 * choice is a robust_event row, a warning in the log and the job's notice.
 *
 * Stall guard: a WU already set aside daemons.robust_max_reissue times
 * (default 2) is accepted when it is an outlier again (honest but unusual
 * data), with a warning on the job page. daemons.robust_set_aside = 0
 * turns setting aside off (report only).
 */
#ifndef CT_ROBUST_ASIDE_H
#define CT_ROBUST_ASIDE_H

#include <stddef.h>
#include <stdint.h>

struct ct_conf;
struct ct_db;
struct ct_robust;

enum ct_robust_action {
	CT_ROBUST_SET_ASIDE = 1,	/* an outlier, its WU re-issued */
	CT_ROBUST_ACCEPTED = 2,		/* an outlier, accepted by the stall guard */
	CT_ROBUST_CAUGHT = 3,		/* unreplicated, of a host caught since */
	CT_ROBUST_ROUND_FAILED = 4,	/* the round's average raised the eval loss:
					 * cosine holds the base's loss, ratio the
					 * average's */
};

/* After ct_robust_verdict(): the worst outlier of round idx of job jobid
 * (lowest cosine, else the size furthest from 1) is set aside, or
 * accepted by the stall guard. One at a time: the others are judged again
 * once its replacement is in (an extreme update drags the others' mean, so
 * honest shards beside it may look odd too). Returns 1 if a result was set
 * aside (do not average), 0 if the round may be averaged, or a CT_E*
 * code. */
int ct_robust_aside_outlier(const struct ct_conf *conf, struct ct_db *db, int64_t jobid,
			    int idx, const struct ct_robust *r, const int *out);

/* Set aside every unreplicated canonical result of round idx whose host
 * has been caught (an invalid result) since. Returns the number set aside
 * (0: the round may go on) or a CT_E* code. */
int ct_robust_aside_caught(struct ct_db *db, int64_t jobid, int idx);

/* The round check failed (assimilator.c): every shard's canonical result
 * of round idx (nwus WUs) is set aside as an outlier is (invalid, credit
 * revoked, the WU re-issued to hosts apart from every earlier replica),
 * a robust_event row (CT_ROBUST_ROUND_FAILED, with base_loss and loss)
 * per shard, and msg once as the job's notice. Returns the number of WUs
 * set aside or a CT_E* code. */
int ct_robust_aside_round(struct ct_db *db, int64_t jobid, int idx, int nwus,
			  double base_loss, double loss, const char *msg);

/* First sets aside the unreplicated results of caught hosts
 * (ct_robust_aside_caught); then both passes over k updates that
 * load(ctx, i, w) decodes into w (n floats; 0 or a CT_E* code), with the
 * limits from conf (NULL: defaults); then reports each outlier: a warning
 * in the log and the job's notice (job.error_message while it runs)
 * naming round idx and the shard, and sets the worst aside
 * (ct_robust_aside_outlier). Rounds of fewer than 3 shards get no
 * cross-shard check. Returns 0 when the round may be averaged, > 0 when
 * results were set aside (the round waits for their replacements), or a
 * CT_E* code. shards (NULL: 0..k-1) names update i's shard, for a round
 * closed without some of its WUs (job.round_quorum). */
typedef int (*ct_robust_load_fn)(void *ctx, int i, float *w);
int ct_robust_check_round(const struct ct_conf *conf, struct ct_db *db, int64_t jobid,
			  int idx, int k, size_t n, const float *base,
			  ct_robust_load_fn load, void *ctx, const int *shards);

#endif
