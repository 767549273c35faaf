/*
 * dl_host.c - the scheduler's host, device and account rows (see
 * dl_host.h): the statements with their column tables beside them.
 */
#include "dl_host.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "db.h"
#include "db_args.h"
#include "dl.h"

#define HOST_SQL "max_in_progress, consecutive_valid, nresults_valid, next_work_time, " \
	"device_sig"
#define A struct ct_host_account
#define HOST_COLS CT_DL_COL(A, max_in_progress), CT_DL_COL(A, consecutive_valid), \
	CT_DL_COL(A, nresults_valid), CT_DL_COL(A, next_work_time), CT_DL_COL(A, device_sig)
static const struct ct_dl_col account_cols[] = {
	CT_DL_COL(A, userid), CT_DL_COL(A, user_name), CT_DL_COL(A, teamid),
	CT_DL_COL(A, total_credit), CT_DL_COL(A, expavg_credit), CT_DL_COL(A, web_prefs),
	CT_DL_COL(A, web_prefs_time), CT_DL_COL(A, hostid), HOST_COLS, CT_DL_COL(A, ahead),
	CT_DL_COL(A, pending),
};
static const struct ct_dl_col caps_cols[] = { CT_DL_COL(A, hostid), HOST_COLS };
#undef A

int ct_host_account_read(struct ct_db *db, const char *hash, int64_t hostid,
			 struct ct_host_account *a)
{
	memset(a, 0, sizeof(*a));
	/* the host by its PRIMARY key, joined only when the account owns it;
	 * pending is task_state 2 (over, success, not validated yet or
	 * inconclusive: migration 036), an index range of those alone */
	return CT_DL_ONE(db, a, account_cols, "SELECT u.id, u.name, u.teamid, u.total_credit, "
			 "u.expavg_credit, COALESCE(p.prefs, ''), COALESCE(p.mod_time, 0), "
			 "COALESCE(h.id, 0), COALESCE(h.max_in_progress, 0), "
			 "COALESCE(h.consecutive_valid, 0), COALESCE(h.nresults_valid, 0), "
			 "COALESCE(h.next_work_time, 0), COALESCE(h.device_sig, ''), (SELECT "
			 "COUNT(*) FROM `user` x WHERE x.expavg_credit > u.expavg_credit), (SELECT "
			 "COUNT(*) FROM result r FORCE INDEX (result_user_task) WHERE r.userid = u.id "
			 "AND r.task_state=2) FROM `user` u LEFT JOIN user_prefs p ON "
			 "p.userid = u.id LEFT JOIN host h ON h.id = ? AND h.userid = u.id WHERE "
			 "u.auth_hash=?", hostid, hash);
}

int ct_host_caps_read(struct ct_db *db, int64_t id, struct ct_host_account *a)
{
	return CT_DL_ONE(db, a, caps_cols, "SELECT id, " HOST_SQL " FROM host WHERE id=?", id);
}

/* A device row as device_same() reads it. */
struct device_row {
	int slot, compute_units, conforming;
	int64_t global_mem;
	char name[256], vendor[256], type[33];
};

#define D struct device_row
static const struct ct_dl_col device_cols[] = {
	CT_DL_COL(D, slot), CT_DL_COL(D, name), CT_DL_COL(D, vendor), CT_DL_COL(D, type),
	CT_DL_COL(D, global_mem), CT_DL_COL(D, compute_units), CT_DL_COL(D, conforming),
};
#undef D

/* 1 if the host's device rows say what d says, 0 if not, or a db error. */
static int devices_same(struct ct_db *db, int64_t id, const struct ct_host_desc *d)
{
	struct ct_db_res *res = NULL;
	struct device_row r;
	int n = 0, same = 1, rc;

	rc = CT_DB_QUERY(db, &res, "SELECT slot, name, vendor, type, global_mem, compute_units, "
			 "conforming FROM device WHERE hostid=? ORDER BY slot", id);
	if (rc < 0)
		return rc;
	while (same && ct_db_next(res) > 0) {
		const struct ct_host_device *x = n < d->ndev ? &d->dev[n] : NULL;

		ct_dl_row(res, &r, device_cols, CT_DL_NCOLS(device_cols));
		same = x && r.slot == n && strcmp(r.name, x->name) == 0 &&
		       strcmp(r.vendor, x->vendor) == 0 && strcmp(r.type, x->type) == 0 &&
		       r.global_mem == x->global_mem && r.compute_units == x->compute_units &&
		       r.conforming == x->conforming;
		n++;
	}
	ct_db_res_free(res);
	return same && n == d->ndev;
}

/* d's devices as host id's rows; fresh: it has none yet (nothing beyond
 * them to delete). */
static int devices_write(struct ct_db *db, int64_t id, const struct ct_host_desc *d, int fresh,
			 int64_t now)
{
	int rc = 0;

	for (int i = 0; rc >= 0 && i < d->ndev; i++) {
		const struct ct_host_device *x = &d->dev[i];

		rc = CT_DB_EXEC(db, "INSERT INTO device (hostid, slot, name, vendor, type, "
				"global_mem, compute_units, conforming, update_time) "
				"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
				"name=VALUES(name), vendor=VALUES(vendor), type=VALUES(type), "
				"global_mem=VALUES(global_mem), compute_units=VALUES(compute_units), "
				"conforming=VALUES(conforming), update_time=VALUES(update_time)",
				id, i, x->name, x->vendor, x->type, x->global_mem,
				(int)x->compute_units, (int)x->conforming, now);
	}
	if (rc >= 0 && !fresh)
		rc = CT_DB_EXEC(db, "DELETE FROM device WHERE hostid=? AND slot>=?", id, d->ndev);
	return rc < 0 ? rc : 0;
}

/* The digest of d's devices into sig (hex): each device's fields, every
 * string with its length, so that no two descriptions run together. */
static int devices_sig(const struct ct_host_desc *d, char sig[CT_SHA256_HEXLEN + 1])
{
	struct ct_sha256_ctx *ctx = NULL;
	unsigned char raw[CT_SHA256_LEN];
	char num[96];
	int rc;

	rc = ct_sha256_init(&ctx);
	for (int i = 0; rc == 0 && i < d->ndev; i++) {
		const struct ct_host_device *x = &d->dev[i];
		const char *str[3] = { x->name, x->vendor, x->type };

		for (int k = 0; rc == 0 && k < 3; k++) {
			snprintf(num, sizeof(num), "%zu:", strlen(str[k]));
			rc = ct_sha256_update(ctx, num, strlen(num));
			if (rc == 0)
				rc = ct_sha256_update(ctx, str[k], strlen(str[k]));
		}
		snprintf(num, sizeof(num), "|%" PRId64 "|%ld|%ld;", x->global_mem,
			 x->compute_units, x->conforming);
		if (rc == 0)
			rc = ct_sha256_update(ctx, num, strlen(num));
	}
	if (rc < 0) {
		ct_sha256_abort(ctx);
		return rc;
	}
	rc = ct_sha256_final(ctx, raw);
	if (rc == 0)
		ct_hex_encode(raw, sizeof(raw), sig);
	return rc;
}

int ct_host_rpc_update(struct ct_db *db, int64_t id, const struct ct_host_desc *d, int errors,
		       int64_t now)
{
	char sig[CT_SHA256_HEXLEN + 1];
	int rc, same = 1;

	rc = devices_sig(d, sig);
	if (rc < 0)
		return rc;
	/* the devices as the host's last RPC said them: no device row read */
	if (d->device_sig == NULL || strcmp(d->device_sig, sig) != 0)
		same = devices_same(db, id, d);
	if (same == 0)
		rc = devices_write(db, id, d, 0, now);
	if (same < 0 || rc < 0)
		return same < 0 ? same : rc;
	rc = CT_DB_EXEC(db, "UPDATE host SET hostname=?, os=?, cpu_model=?, ncpus=?, "
			"ram_bytes=?, client_version=?, last_ip=?, rpc_time=?, nrpc=nrpc+1, "
			"nresults_error=nresults_error+?, device_sig=? WHERE id=?", d->hostname,
			d->os, d->cpu_model, (int)d->ncpus, d->ram_bytes, d->client_version,
			d->last_ip, now, errors, sig, id);
	return rc < 0 ? rc : 0;
}

/* The new host's row with its description and first RPC, then its
 * devices (it has none yet). Returns 0, CT_EDUP (the host is there) or a
 * db error. */
static int host_add(struct ct_db *db, int64_t userid, const char *cpid,
		    const struct ct_host_desc *d, int64_t now, int64_t *id)
{
	char sig[CT_SHA256_HEXLEN + 1];
	int rc;

	rc = devices_sig(d, sig);
	if (rc == 0)
		rc = CT_DB_EXEC(db, "INSERT INTO host (create_time, userid, host_cpid, hostname, os, "
				"cpu_model, ncpus, ram_bytes, client_version, last_ip, rpc_time, nrpc, "
				"device_sig) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)", now,
				userid, cpid, d->hostname, d->os, d->cpu_model, (int)d->ncpus,
				d->ram_bytes, d->client_version, d->last_ip, now, sig);
	if (rc < 0)
		return rc;
	*id = ct_db_last_id(db);
	return d->ndev > 0 ? devices_write(db, *id, d, 1, now) : 0;
}

int ct_host_find_or_add(struct ct_db *db, int64_t userid, const char *cpid,
			const struct ct_host_desc *d, int64_t now, int64_t *id, int *added)
{
	int rc;

	*added = 0;
	/* the insert first: a request without a host id is mostly a new
	 * computer's (a client that lost its id finds its row again) */
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = host_add(db, userid, cpid, d, now, id);
		if (rc == 0) {
			*added = 1;
			return 0;
		}
		if (rc != CT_EDUP)
			return rc;
		rc = CT_DB_QUERY_INT(db, id, "SELECT id FROM host WHERE userid=? AND host_cpid=?",
				     userid, cpid);
		if (rc != CT_ENOTFOUND)	/* gone again: make it again */
			return rc;
	}
	return ct_error(CT_EINTERNAL, "could not register host");
}

int ct_host_set_next_work(struct ct_db *db, int64_t id, int64_t t)
{
	int rc = CT_DB_EXEC(db, "UPDATE host SET next_work_time=? WHERE id=?", t, id);

	return rc < 0 ? rc : 0;
}

int ct_host_count_valid(struct ct_db *db, int64_t id)
{
	int rc = CT_DB_EXEC(db, "UPDATE host SET consecutive_valid=consecutive_valid+1, "
			    "nresults_valid=nresults_valid+1 WHERE id=?", id);

	return rc < 0 ? rc : 0;
}

int ct_host_count_invalid(struct ct_db *db, int64_t id)
{
	int rc = CT_DB_EXEC(db, "UPDATE host SET consecutive_valid=0, nresults_invalid="
			    "nresults_invalid+1 WHERE id=?", id);

	return rc < 0 ? rc : 0;
}

int ct_host_count_error(struct ct_db *db, int64_t id)
{
	int rc = CT_DB_EXEC(db, "UPDATE host SET nresults_error=nresults_error+1 WHERE id=?", id);

	return rc < 0 ? rc : 0;
}
