/*
 * lora_robust.h - the cross-shard check (robust.h) of a LoRA round
 * before its adapters are merged (doc/validation.md, "Cross-shard check").
 *
 * What is compared is each shard's adapter update, its adapters against
 * the round's initial adapters: the work generator gives the WUs of a
 * LoRA round one seed (wg.h), so every shard trains from the same A and B
 * and their updates live in the same coordinates, like full-weight
 * updates. (With a seed per shard, shard k's B_k is trained against its
 * own random A_k, and even the merged updates B_k A_k of honest shards
 * were about orthogonal: cosines of -0.004 and 0.01 beside a flipped
 * shard's -0.011 on test/server_crossshard_lora.sh's job.) The check is
 * cheap: the adapters are a few MB. A round whose WUs still have seeds of
 * their own (opened by an older server) gets no cross-shard check, with a
 * warning; the unreplicated results of caught hosts are set aside all the
 * same.
 */
#ifndef CT_LORA_ROBUST_H
#define CT_LORA_ROBUST_H

#include <stdint.h>

#include "ct_gpt2.h"

struct ct_db;
struct ct_server;

/* ct_robust_check_round() for LoRA round idx (id roundid, nwus WUs) of job
 * jobid, base its model: decodes the K canonical adapter sets (held at
 * once, K x ct_lora_nparams floats, as the merge holds them) and checks
 * them against the round's initial adapters. Returns 0 when the round may
 * be merged, > 0 when results were set aside, or a CT_E* code. */
int ct_lora_robust_check(struct ct_server *srv, struct ct_db *db, int64_t jobid, int idx,
			 int64_t roundid, int nwus, const struct ct_gpt2 *base);

#endif
