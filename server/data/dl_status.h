/*
 * dl_status.h - the counts `ctune-server status` prints: how much is in
 * the database and how much work waits for which daemon.
 */
#ifndef CT_DL_STATUS_H
#define CT_DL_STATUS_H

#include <stdint.h>

struct ct_db;

/* n[i], in this order: users, hosts, jobs running, results unsent, in
 * progress and over, WUs waiting to validate and to assimilate. */
enum { CT_STATUS_NCOUNTS = 8 };

/* Count them into n[0..CT_STATUS_NCOUNTS). Returns 0 or a db error. */
int ct_status_counts(struct ct_db *db, int64_t n[CT_STATUS_NCOUNTS]);

#endif
