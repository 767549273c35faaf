/*
 * dl_chain.c - see dl_chain.h.
 */
#include "dl_chain.h"
#include "db.h"
#include "dl.h"
#include "ct_err.h"

#include <string.h>

struct chain_row {
	char links[CT_CHAIN_HEX_MAX + 1];
};

static const struct ct_dl_col chain_cols[] = {
	CT_DL_COL(struct chain_row, links),
};

int ct_dl_chain_put(struct ct_db *db, int64_t resultid, const char *links)
{
	int rc = CT_DB_EXEC(db, "INSERT IGNORE INTO result_chain (resultid, links) VALUES (?, ?)",
			    resultid, links);

	return rc < 0 ? rc : 0;
}

int ct_dl_chain_get(struct ct_db *db, int64_t resultid, char *links)
{
	static _Thread_local struct chain_row row;
	int rc;

	links[0] = '\0';
	rc = CT_DL_ONE(db, &row, chain_cols, "SELECT links FROM result_chain WHERE resultid=?",
		       resultid);
	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	memcpy(links, row.links, sizeof(row.links));
	return 1;
}

int ct_dl_chain_settled(struct ct_db *db, int64_t resultid, int link)
{
	int rc = CT_DB_EXEC(db, "UPDATE result_chain SET settled_link=? WHERE resultid=?", link,
			    resultid);

	return rc < 0 ? rc : rc > 0;
}

#define Q struct ct_dl_state_req
static const struct ct_dl_col req_cols[] = {
	CT_DL_COL(Q, workunitid), CT_DL_COL(Q, resultid), CT_DL_COL(Q, hostid),
	CT_DL_COL(Q, other_resultid), CT_DL_COL(Q, link), CT_DL_COL(Q, step),
	CT_DL_COL(Q, status), CT_DL_COL(Q, create_time), CT_DL_COL(Q, deadline),
	CT_DL_COL(Q, max_bytes), CT_DL_COL(Q, upload_size), CT_DL_COL(Q, agreed_sha), CT_DL_COL(Q, upload_sha),
	CT_DL_COL(Q, result_name),
};
#undef Q

#define REQ_SELECT "SELECT q.workunitid, q.resultid, q.hostid, q.other_resultid, q.link, " \
	"q.step, q.status, q.create_time, q.deadline, q.max_bytes, q.upload_size, " \
	"q.agreed_sha256, " \
	"q.upload_sha256, r.name FROM state_request q JOIN result r ON r.id = q.resultid "

static int one_req(int rc)
{
	return rc == CT_ENOTFOUND ? 0 : rc < 0 ? rc : 1;
}

int ct_dl_state_req_get(struct ct_db *db, int64_t wuid, struct ct_dl_state_req *q)
{
	memset(q, 0, sizeof(*q));
	return one_req(CT_DL_ONE(db, q, req_cols, REQ_SELECT "WHERE q.workunitid=?", wuid));
}

int ct_dl_state_req_put(struct ct_db *db, const struct ct_dl_state_req *q)
{
	return CT_DB_EXEC(db, "INSERT IGNORE INTO state_request (workunitid, resultid, hostid, "
			  "other_resultid, link, step, agreed_sha256, status, create_time, "
			  "deadline, max_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			  q->workunitid, q->resultid, q->hostid, q->other_resultid, q->link,
			  q->step, q->agreed_sha, CT_SRQ_ASKED, q->create_time, q->deadline,
			  q->max_bytes);
}

int ct_dl_state_req_move(struct ct_db *db, int64_t wuid, int from, int to)
{
	return CT_DB_EXEC(db, "UPDATE state_request SET status=? WHERE workunitid=? AND status=?",
			  to, wuid, from);
}

int ct_dl_state_req_for_host(struct ct_db *db, int64_t hostid, int64_t now, size_t max,
			     struct ct_dl_state_req **out, size_t *n)
{
	return CT_DL_LIST(db, out, n, req_cols, "state requests", REQ_SELECT
			  "WHERE q.hostid=? AND q.status=? AND q.deadline>? ORDER BY "
			  "q.workunitid LIMIT ?", hostid, CT_SRQ_ASKED, now, (int64_t)max);
}

int ct_dl_state_req_by_name(struct ct_db *db, const char *name, int64_t hostid,
			    struct ct_dl_state_req *q)
{
	memset(q, 0, sizeof(*q));
	return one_req(CT_DL_ONE(db, q, req_cols, REQ_SELECT "WHERE r.name=? AND q.hostid=? "
				 "AND q.status=?", name, hostid, CT_SRQ_ASKED));
}

int ct_dl_state_req_uploaded(struct ct_db *db, int64_t wuid, int64_t hostid,
			     const char *sha, int64_t size)
{
	return CT_DB_EXEC(db, "UPDATE state_request SET status=?, upload_sha256=?, "
			  "upload_size=? WHERE workunitid=? AND hostid=? AND status=?",
			  CT_SRQ_UPLOADED, sha, size, wuid, hostid, CT_SRQ_ASKED);
}

int ct_dl_state_req_due(struct ct_db *db, int64_t now, int64_t *ids, size_t max, size_t *n)
{
	return CT_DL_IDS(db, ids, max, n, "SELECT workunitid FROM state_request WHERE status=? "
			 "OR (status=? AND deadline<=?) ORDER BY workunitid LIMIT ?",
			 CT_SRQ_UPLOADED, CT_SRQ_ASKED, now, (int64_t)max);
}

int ct_dl_state_req_close(struct ct_db *db, int64_t wuid)
{
	return CT_DB_EXEC(db, "UPDATE state_request SET status=? WHERE workunitid=? AND "
			  "status IN (?, ?)", CT_SRQ_SETTLED, wuid, CT_SRQ_ASKED, CT_SRQ_UPLOADED);
}
