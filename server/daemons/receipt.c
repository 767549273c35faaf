/*
 * receipt.c - see receipt.h.
 */
#include "receipt.h"
#include "instance.h"
#include "data/db.h"
#include "data/dl_receipt.h"
#include "data/server.h"
#include "data/store.h"
#include "ct_err.h"
#include "ct_log.h"
#include "ct_receipt.h"

#include <stdio.h>
#include <string.h>

#define PASS_MAX 64

/* A stated chain: a file of the store (kind "chain", kept with the
 * receipt that names it), served at /download/SHA like every object. */
struct chain_keep {
	struct ct_server *srv;
	struct ct_db *db;
};

static int keep_chain(void *arg, int64_t jobid, const char *links, char *sha)
{
	const struct chain_keep *k = arg;

	return ct_store_add_buf(k->srv, k->db, links, strlen(links), "chain", jobid, 1, sha);
}

int ct_receipt_write_round(struct ct_server *srv, struct ct_db *db, int64_t roundid)
{
	struct chain_keep keep = { srv, db };
	const struct ct_dl_receipt_chain_sink sink = { keep_chain, &keep };
	struct ct_buf b = CT_BUF_INIT(CT_RECEIPT_MAX_BYTES);
	struct ct_receipt r;
	char sha[CT_SHA256_HEXLEN + 1];
	int64_t size = 0;
	int rc;

	if (srv->sign_key == NULL)
		return ct_error(CT_ESTATE, "receipts: the project has no signing key");
	rc = ct_dl_receipt_round(db, roundid, &sink, &r);
	if (rc < 0)
		goto out;
	rc = ct_dl_receipt_get(db, r.job, r.round, sha, &size);
	if (rc != 0) {		/* there is one */
		rc = rc < 0 ? rc : 0;
		goto out;
	}
	if (r.round > 1) {	/* 0: the previous round's is not written yet */
		rc = ct_dl_receipt_get(db, r.job, r.round - 1, r.prev, &size);
		if (rc <= 0)
			goto out;
	}
	rc = ct_receipt_sign(&r, srv->sign_key, &b);
	if (rc == 0)
		rc = ct_store_add_buf(srv, db, b.data, b.len, "receipt", r.job, 1, sha);
	if (rc == 0)
		rc = ct_dl_receipt_put(db, roundid, r.job, r.round, sha, (int64_t)b.len,
				       ct_db_now(db));
	if (rc == 1)
		ct_log_info("receipt: job %lld round %d: %s (%zu bytes, %d work units)",
			    (long long)r.job, r.round, sha, b.len, r.nwus);
out:
	ct_receipt_free(&r);
	ct_buf_free(&b);
	return rc;
}

/* One batch of pending rounds: the number written, or a db error. */
static int pass_once(struct ct_server *srv, struct ct_db *db, int64_t n, int64_t k, int max)
{
	int64_t ids[PASS_MAX];
	size_t nids = 0;
	int rc, done = 0;

	rc = ct_dl_receipt_pending(db, n, k, ids, (size_t)max, &nids);
	for (size_t i = 0; rc >= 0 && i < nids && !ct_server_stopping(srv); i++) {
		rc = ct_receipt_write_round(srv, db, ids[i]);
		if (rc > 0)
			done++;
		if (rc < 0 && rc != CT_EDB && rc != CT_EAGAIN) {
			ct_log_error("receipt: round %lld: %s", (long long)ids[i], ct_errmsg(rc));
			rc = 0;
		}
	}
	return rc < 0 ? rc : done;
}

int ct_receipt_pass(struct ct_server *srv, struct ct_db *db)
{
	int64_t n, k;
	int rc, done = 0;

	rc = ct_instance_share(db, &n, &k);
	/* a batch holds one round per job (the next waits for its previous
	 * receipt): again while it writes, up to PASS_MAX in all */
	while (rc == 0 && done < PASS_MAX) {
		rc = pass_once(srv, db, n, k, PASS_MAX - done);
		if (rc <= 0)
			break;
		done += rc;
		rc = 0;
	}
	return rc < 0 ? rc : done;
}
