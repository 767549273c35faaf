/*
 * sched_load.h - unsent work for the scheduler's benchmark and its scan
 * test: many work units cloned from a job's first one by SQL, each with
 * its unsent replicas (far faster than making shard files for each).
 */
#ifndef CT_SCHED_LOAD_H
#define CT_SCHED_LOAD_H

#include <stdint.h>

#include "data/db.h"

/* Add n WUs to job jobid, copies of its WU with the lowest id named
 * "<prefix>-<i>" for i = first .. first+n-1, each with `replicas` unsent
 * results "<prefix>-<i>-<k>". In transactions of at most 1,000 WUs.
 * Returns 0 or CT_EDB (what was committed before stays). */
int ct_sched_load_clone(struct ct_db *db, int64_t jobid, const char *prefix, int64_t first,
			int64_t n, int replicas);

/* Wait until the database has purged the old row versions and undo
 * records of what was committed so far (InnoDB's history list: a million
 * cloned WUs leave millions of records), so that a measurement that
 * follows does not pay for purging the set-up, and a server stopping
 * after it has no purge batch of it left to run. Needs the SUPER (or
 * SYSTEM VARIABLES ADMIN) privilege on an external server. Returns 0 or
 * CT_EDB. */
int ct_sched_load_settle(struct ct_db *db);

#endif
