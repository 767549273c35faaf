/*
 * lock_order.h - the one order in which transactions lock rows:
 * work unit rows first, by id ascending, then their results' rows, then
 * what triggers on results update (round_stat: one row per round, shared
 * by every WU of the round). A transaction that touches several WUs (the
 * scheduler's reports of one RPC) locks all of them first, in this order,
 * before changing any result; so does the scheduler's claim of several
 * results of different WUs (all the WUs locked first, by one statement in
 * id order, then the results in WU order); so does the transitioner's
 * group of up to 32 WUs (ct_wu_lock_rows); the validator's changes are a
 * transaction a WU. So no two
 * transactions wait for each other in a cycle; lock waits that remain are
 * retried by ct_db_txn() (db.h) with backoff.
 */
#ifndef CT_LOCK_ORDER_H
#define CT_LOCK_ORDER_H

#include <stdint.h>

/* <0, 0, >0 as (wu_a, id_a) sorts before, with, after (wu_b, id_b). */
int ct_lock_order_cmp(int64_t wu_a, int64_t id_a, int64_t wu_b, int64_t id_b);

#endif
