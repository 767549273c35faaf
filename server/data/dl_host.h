/*
 * dl_host.h - the `host` and `device` rows a scheduler RPC reads and
 * writes, with the account it authenticates (the data layer, dl.h).
 */
#ifndef CT_DL_HOST_H
#define CT_DL_HOST_H

#include <stdint.h>

struct ct_db;

/* An account by its key's hash, and one of its hosts, read together. */
struct ct_host_account {
	int64_t userid, teamid;
	char user_name[65];
	double total_credit, expavg_credit;
	char web_prefs[2049];		/* user_prefs.prefs, "" none */
	int64_t web_prefs_time;		/* user_prefs.mod_time, 0 none */
	/* the host asked for, when it is this account's (else all 0) */
	int64_t hostid, max_in_progress, nresults_valid, next_work_time;
	int consecutive_valid;
	char device_sig[65];		/* its devices' digest (ct_host_rpc_update), "" none */
	/* the account's standing: accounts with more recent average credit,
	 * its results reported and not yet validated */
	int64_t ahead, pending;
};

/* The account whose auth_hash is `hash` with its standing and, when
 * hostid > 0 and the host is that account's, the host's columns, in one
 * statement. Returns 0,
 * CT_ENOTFOUND (no such account) or a db error. */
int ct_host_account_read(struct ct_db *db, const char *hash, int64_t hostid,
			 struct ct_host_account *a);

/* The host columns of ct_host_account for host id (any owner) into a.
 * Returns 0, CT_ENOTFOUND or a db error. */
int ct_host_caps_read(struct ct_db *db, int64_t id, struct ct_host_account *a);


/* A device as a request describes it (strings borrowed). */
struct ct_host_device {
	const char *name, *vendor, *type;
	int64_t global_mem;
	long compute_units, conforming;
};

/* What a request says of its host (strings borrowed). */
struct ct_host_desc {
	const char *hostname, *os, *cpu_model, *client_version, *last_ip;
	long ncpus;
	int64_t ram_bytes;
	const struct ct_host_device *dev;
	int ndev;
	const char *device_sig;		/* the host's as read (ct_host_account), NULL: unknown */
};

/* Account userid's host with client id cpid into *id, made when there is
 * none (created at now, with what ct_host_rpc_update writes: description
 * d, the RPC, the devices); a concurrent maker's row is found again.
 * *added: 1 when this call made it (then the RPC is written), 0 when the
 * host was there (the caller's ct_host_rpc_update writes it). Returns 0
 * or a db error. */
int ct_host_find_or_add(struct ct_db *db, int64_t userid, const char *cpid,
			const struct ct_host_desc *d, int64_t now, int64_t *id, int *added);

/* Host id made an RPC at now: its description, one more RPC, `errors`
 * more client errors; its device rows written only when they differ from
 * d's (device.update_time is when the description last changed), and
 * read only when the digest of d's devices is not d->device_sig (the
 * host's device_sig, written with the host). Returns 0 or a db error. */
int ct_host_rpc_update(struct ct_db *db, int64_t id, const struct ct_host_desc *d, int errors,
		       int64_t now);

/* host.next_work_time := t (too soon before it: no new work). Returns 0
 * or a db error. */
int ct_host_set_next_work(struct ct_db *db, int64_t id, int64_t t);

/* A host's result counters: a valid result (one more in a row, and in
 * all), an invalid one (the run back to 0) and an error (no reply in
 * time). Return 0 or a db error. */
int ct_host_count_valid(struct ct_db *db, int64_t id);
int ct_host_count_invalid(struct ct_db *db, int64_t id);
int ct_host_count_error(struct ct_db *db, int64_t id);

#endif
