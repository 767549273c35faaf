/*
 * receipt.h - writing each closed round's signed receipt (doc/receipts.md).
 *
 * The assimilator runs ct_receipt_pass after its rounds: every done round
 * without a receipt (this one, or rounds closed before receipts existed,
 * or before a crash) gets one, in round order per job, since each receipt
 * names the previous one's hash. A receipt is a pure function of the
 * round's rows and the project key (Ed25519 is deterministic and the time
 * in it is the round's finish time), so two assimilators writing one
 * round write the same bytes, and the first row stays.
 */
#ifndef CT_RECEIPT_DAEMON_H
#define CT_RECEIPT_DAEMON_H

#include <stdint.h>

struct ct_server;
struct ct_db;

/* Write the receipt of done round `roundid`: into the store (kind
 * "receipt", kept) and its round_receipt row. 1 when written, 0 when it
 * cannot be yet (the previous round's receipt is missing) or is there
 * already, or a CT_E* code. */
int ct_receipt_write_round(struct ct_server *srv, struct ct_db *db, int64_t roundid);

/* Receipts for up to 64 done rounds that lack one, of this instance's
 * share of jobs. Returns the number written or a db error (a round that
 * fails otherwise is logged and left for the next pass). */
int ct_receipt_pass(struct ct_server *srv, struct ct_db *db);

#endif
