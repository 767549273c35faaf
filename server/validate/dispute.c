/*
 * dispute.c - see dispute.h.
 */
#include "dispute.h"
#include "bisect.h"
#include "data/db.h"
#include "data/dl_chain.h"
#include "data/server.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Both chains, and the plan they give. */
struct dispute {
	const struct ct_dispute_wu *w;
	char chain[2][CT_CHAIN_HEX_MAX + 1];
	struct ct_bisect_plan plan;
};

static int load_chains(struct ct_db *db, struct dispute *d)
{
	int rc = 0;

	for (int i = 0; i < 2 && rc >= 0; i++)
		rc = ct_dl_chain_get(db, d->w->r[i].id, d->chain[i]);
	return rc < 0 ? rc : 0;
}

static void plan(struct dispute *d)
{
	struct ct_bisect_side s[2];

	for (int i = 0; i < 2; i++) {
		s[i].chain = d->chain[i];
		memcpy(s[i].sha, d->w->r[i].sha, 32);
		s[i].exact = d->w->r[i].exact;
	}
	ct_bisect_plan(&s[0], &s[1], d->w->hp.steps, d->w->every, &d->plan);
}

/* Recompute the plan's segment from the WU's start or the state at path:
 * its link into out. */
static int recompute(struct ct_server *srv, const struct dispute *d, const char *state,
		     unsigned char out[32], int *steps_run)
{
	const struct ct_dispute_wu *w = d->w;
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_bisect_inputs in = { .model = &model, .tokens = &tok, .hp = &w->hp,
				       .state_path = state, .device = w->device,
				       .lora_init = w->lora_init };
	char path[4096];
	int rc;

	rc = ct_server_download_path(srv, w->model_sha, path, sizeof(path));
	if (rc == 0)	/* as the client loads it: float32 or the compact base */
		rc = ct_base_load(path, &model);
	if (rc == 0)
		rc = ct_server_download_path(srv, w->data_sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_tokens_load(path, &tok);
	if (rc == 0)
		rc = ct_bisect_segment(&in, &d->plan, out, steps_run);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
	return rc;
}

/* The bytes a state of this WU takes (ct_wu_state_bytes: header, the
 * trained floats, m and v, digest), with room for the header. */
static int64_t state_bytes(const struct ct_dispute_wu *w, const char *model_path)
{
	struct ct_model_config cfg;
	struct ct_gpt2_layout lay;
	double n;

	if (ct_base_read_config(model_path, &cfg, NULL) < 0)
		return 0;
	ct_gpt2_layout(&cfg, &lay);
	n = w->hp.lora.rank > 0 ? (double)ct_lora_nparams(&cfg, &w->hp.lora) : (double)lay.total;
	return (int64_t)(12.0 * n) + 65536;
}

/* Ask the host of r[0] for the agreed state (it reported first; either
 * host's state will do, it is checked against the agreed digest). */
static int ask_state(struct ct_server *srv, struct ct_db *db, const struct dispute *d)
{
	const struct ct_dispute_wu *w = d->w;
	struct ct_dl_state_req q = { 0 };
	char path[4096];
	long deadline = 900;
	int rc;

	rc = ct_conf_get_int(srv->conf, "daemons.state_deadline", 900, 1, 30 * 86400, &deadline);
	if (rc == 0)
		rc = ct_server_download_path(srv, w->model_sha, path, sizeof(path));
	if (rc < 0)
		return rc;
	q.workunitid = w->wuid;
	q.resultid = w->r[0].id;
	q.hostid = w->r[0].hostid;
	q.other_resultid = w->r[1].id;
	q.link = d->plan.link;
	q.step = d->plan.step;
	ct_hex_encode(d->plan.agreed, 32, q.agreed_sha);
	q.create_time = ct_db_now(db);
	q.deadline = q.create_time + deadline;
	q.max_bytes = state_bytes(w, path);
	rc = ct_dl_state_req_put(db, &q);
	if (rc > 0)
		ct_log_info("validator: %s: %s and %s part at link %d (steps %d..%d of %d): "
			    "asked host %" PRId64 " for the state after step %d", w->wu_name,
			    w->r[0].name, w->r[1].name, d->plan.link, d->plan.step, d->plan.end,
			    w->hp.steps, q.hostid, d->plan.step);
	return rc < 0 ? rc : 0;
}

/* Which side the recomputed link agrees with. */
static int judge(const struct dispute *d, const unsigned char got[32], int steps_run,
		 double secs, int64_t upload_bytes)
{
	const struct ct_dispute_wu *w = d->w;
	int first = memcmp(got, d->plan.want_a, 32) == 0;
	int second = memcmp(got, d->plan.want_b, 32) == 0;

	if (!first && !second) {
		ct_log_info("validator: %s: the recomputed link %d matches neither %s nor %s: "
			    "more replicas", w->wu_name, d->plan.link, w->r[0].name, w->r[1].name);
		return CT_DISPUTE_NONE;
	}
	/* bench/bench_job.sh --dispute reads this line */
	ct_log_info("validator: %s: dispute settled by bisection at link %d: recomputed %d "
		    "of %d steps (%.1f%%) in %.2f s, state upload %" PRId64 " bytes; %s valid, "
		    "%s invalid", w->wu_name, d->plan.link, steps_run, w->hp.steps,
		    100.0 * steps_run / w->hp.steps, secs, upload_bytes,
		    w->r[first ? 0 : 1].name, w->r[first ? 1 : 0].name);
	return first ? CT_DISPUTE_FIRST : CT_DISPUTE_SECOND;
}

/* The uploaded state is there: check it is the one uploaded, recompute. */
static int settle_uploaded(struct ct_server *srv, struct ct_db *db, const struct dispute *d,
			   const struct ct_dl_state_req *q, int *out)
{
	const struct ct_dispute_wu *w = d->w;
	char name[128], path[4096], sha[CT_SHA256_HEXLEN + 1];
	unsigned char got[32];
	int steps_run = 0, rc, asked = q->resultid == w->r[0].id ? 0 : 1;
	double t0 = ct_time_mono_s();

	snprintf(name, sizeof(name), "%s%s", q->result_name, CT_STATE_SUFFIX);
	rc = ct_server_upload_path(srv, name, path, sizeof(path));
	if (rc == 0)
		rc = ct_sha256_file_hex(path, sha);
	if (rc == 0 && strcmp(sha, q->upload_sha) != 0)
		rc = ct_error(CT_EHASH, "the state file is not the one uploaded");
	if (rc == 0)
		rc = recompute(srv, d, path, got, &steps_run);
	if (rc == CT_ENOMEM || rc == CT_EDB)
		return rc;
	if (ct_dl_state_req_move(db, w->wuid, CT_SRQ_UPLOADED, CT_SRQ_SETTLED) < 0)
		return CT_EDB;
	unlink(path);	/* used once; the request is settled */
	if (rc == CT_EMISMATCH || rc == CT_EFORMAT || rc == CT_ECORRUPT) {
		/* an honest host's state at the agreed link has the agreed digest */
		ct_log_info("validator: %s: the state %s sent is not the agreed one (%s): %s "
			    "invalid", w->wu_name, w->r[asked].name, ct_errmsg(rc),
			    w->r[asked].name);
		*out = asked ? CT_DISPUTE_SECOND_FALSE : CT_DISPUTE_FIRST_FALSE;
		return 0;
	}
	if (rc < 0) {
		ct_log_warn("validator: %s: recomputing the segment failed: %s; more replicas",
			    w->wu_name, ct_errmsg(rc));
		*out = CT_DISPUTE_NONE;
		return 0;
	}
	*out = judge(d, got, steps_run, ct_time_mono_s() - t0, q->upload_size);
	return 0;
}

/* A segment from the WU's start: no upload needed. */
static int settle_from_start(struct ct_server *srv, const struct dispute *d, int *out)
{
	unsigned char got[32];
	int steps_run = 0, rc;
	double t0 = ct_time_mono_s();

	rc = recompute(srv, d, NULL, got, &steps_run);
	if (rc == CT_ENOMEM)
		return rc;
	if (rc < 0) {
		ct_log_warn("validator: %s: recomputing the first segment failed: %s; more "
			    "replicas", d->w->wu_name, ct_errmsg(rc));
		*out = CT_DISPUTE_NONE;
		return 0;
	}
	*out = judge(d, got, steps_run, ct_time_mono_s() - t0, 0);
	return 0;
}

/* The request of this dispute, advanced one move. */
static int settle_segment(struct ct_server *srv, struct ct_db *db, const struct dispute *d,
			  int *out)
{
	const struct ct_dispute_wu *w = d->w;
	struct ct_dl_state_req q;
	int rc;

	if (d->plan.step == 0)
		return settle_from_start(srv, d, out);
	rc = ct_dl_state_req_get(db, w->wuid, &q);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		*out = CT_DISPUTE_WAIT;
		return ask_state(srv, db, d);
	}
	if ((q.resultid != w->r[0].id && q.resultid != w->r[1].id) ||
	    (q.other_resultid != w->r[0].id && q.other_resultid != w->r[1].id))
		return ct_dispute_close(srv, db, w->wuid);	/* of other results: replicas
								 * decide */
	if (q.status == CT_SRQ_ASKED && q.deadline > ct_db_now(db)) {
		*out = CT_DISPUTE_WAIT;
		return 0;
	}
	if (q.status == CT_SRQ_ASKED) {
		rc = ct_dl_state_req_move(db, w->wuid, CT_SRQ_ASKED, CT_SRQ_EXPIRED);
		if (rc > 0)
			ct_log_info("validator: %s: no state from host %" PRId64 " before its "
				    "deadline: a third replica", w->wu_name, q.hostid);
		return rc < 0 ? rc : 0;
	}
	if (q.status == CT_SRQ_UPLOADED)
		return settle_uploaded(srv, db, d, &q, out);
	return 0;	/* settled or expired before: replicas decide */
}

int ct_dispute_run(struct ct_server *srv, struct ct_db *db, const struct ct_dispute_wu *w,
		   int *out, int *link)
{
	struct dispute *d = calloc(1, sizeof(*d));
	int rc;

	*out = CT_DISPUTE_NONE;
	*link = -1;
	if (d == NULL)
		return CT_ENOMEM;
	d->w = w;
	rc = w->every > 0 ? load_chains(db, d) : 0;
	if (rc < 0 || w->every <= 0)
		goto out;
	plan(d);
	if (d->plan.verdict == CT_BISECT_FALSE_A || d->plan.verdict == CT_BISECT_FALSE_B) {
		int liar = d->plan.verdict == CT_BISECT_FALSE_B;

		ct_log_info("validator: %s: %s's hash chain is false (malformed, or it does not "
			    "end in its result's hash): %s invalid", w->wu_name, w->r[liar].name,
			    w->r[liar].name);
		*out = liar ? CT_DISPUTE_SECOND_FALSE : CT_DISPUTE_FIRST_FALSE;
		goto out;
	}
	if (d->plan.verdict != CT_BISECT_SEGMENT)
		goto out;
	if (!w->r[0].conforming || !w->r[1].conforming) {
		/* tolerance replicas part somewhere honestly: say where, decide nothing */
		ct_log_info("validator: %s: the chains of %s and %s part at link %d: they agree "
			    "up to step %d and part by step %d of %d (the job page shows it)",
			    w->wu_name, w->r[0].name, w->r[1].name, d->plan.link, d->plan.step,
			    d->plan.end, w->hp.steps);
		goto out;
	}
	rc = settle_segment(srv, db, d, out);
	if (rc == 0 && (*out == CT_DISPUTE_FIRST || *out == CT_DISPUTE_SECOND))
		*link = d->plan.link;
out:
	free(d);
	return rc;
}

int ct_dispute_close(struct ct_server *srv, struct ct_db *db, int64_t wuid)
{
	struct ct_dl_state_req q;
	char name[128], path[4096];
	int rc = ct_dl_state_req_get(db, wuid, &q);

	if (rc <= 0 || (q.status != CT_SRQ_ASKED && q.status != CT_SRQ_UPLOADED))
		return rc < 0 ? rc : 0;
	rc = ct_dl_state_req_close(db, wuid);
	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "%s%s", q.result_name, CT_STATE_SUFFIX);
	if (q.status == CT_SRQ_UPLOADED &&
	    ct_server_upload_path(srv, name, path, sizeof(path)) == 0)
		unlink(path);
	return 0;
}
