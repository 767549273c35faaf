/*
 * stall.h - say why a job cannot make progress when honest work is what
 * gets refused (doc/validation.md, "Honest work never stalls a job").
 *
 * Replicas from different hosts that are the same bytes and are refused
 * by the same check are not cheats (cheaters rarely agree bit for bit with
 * each other by chance, and the network rule keeps colluders' replicas
 * apart): the check, or the job's parameters (--loss-margin, an update
 * bound for an unusual learning rate), is what is wrong. The first time a
 * WU shows this, the job's page and `job show` get the reason (in
 * job.error_message while the job runs) and the operator's log a warning.
 */
#ifndef CT_STALL_H
#define CT_STALL_H

#include <stdint.h>

struct ct_db;

/* Check WU wuid (named wu_name) of job jobid; inside the caller's
 * transaction (the WU row locked). Returns 1 when it recorded a new
 * notice, 0 when there was nothing (new) to say, or CT_EDB. */
int ct_stall_check(struct ct_db *db, int64_t jobid, int64_t wuid, const char *wu_name);

#endif
