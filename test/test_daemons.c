/*
 * Tests of the daemons against a real embedded database: a project made by
 * ct_project_init, a job submitted with the work generator (tiny GPT-2),
 * honest results computed by the engine's CPU reference, and crafted bad
 * ones (lazy, NaN, x10, wrong shape, noise). The scheduler's part (sending
 * a result to a host, taking its report) is played by this file with the
 * same row changes the scheduler makes; everything else is the daemons'
 * own run_once functions: transitioner, validator, assimilator, file
 * deleter.
 *
 * Each case has its own fixture: a fresh project and database, a fake
 * clock starting at CT_DFX_T0 (deadlines and grace periods pass by moving it,
 * never by waiting), six users with a host each, and a job of two rounds
 * of two WUs; a case builds the history it needs (an honest round, a job
 * finished two days later) with the helpers below. The cases: honest pairs
 * validate and are credited (user, host, team; once) and recent average
 * credit decays; each bad result is rejected without credit and replaced
 * by a new replica, and disagreement raises the replication; a round
 * closes with the average of the canonical results (checked bit for bit)
 * and opens the next, also after a crash between the two; a missed
 * deadline is re-sent (not a second early); two validators racing on one
 * WU grant credit once and the job finishes; the file deleter removes
 * uploads and shards but keeps the models; the purge archives a finished
 * job's rows after its age; a job that hits its error cap is flagged and
 * its other WUs stop in the same transitioner group; a pass backs off a
 * failing item, alone also when it came in a group.
 */
#include "ct_test.h"
#include "validate/credit.h"
#include "daemon_fixture.h"
#include "data/job_state.h"
#include "data/result_state.h"
#include "data/wu_state.h"
#include "daemons/daemon_pass.h"
#include "daemons/daemons.h"
#include "daemons/eval.h"
#include "daemons/receipt.h"
#include "data/db.h"
#include "data/dl_chain.h"
#include "data/dl_web.h"
#include "web/web_int.h"
#include "web/web_json.h"
#include "cmd/roles.h"
#include "cmd/server_open.h"
#include "data/server.h"
#include "daemons/wg.h"
#include "ct_avg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_receipt.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

/* One test's world: its own project, database, fake clock, users and job.
 * Nothing is shared between tests: each builds what it needs on top. */
struct fx {
	struct ct_dfx_case c;	/* project, database, fake clock, inputs */
	int64_t jobid, team, users[6], hosts[6];
};

static double urand(struct fx *f)
{
	return ct_dfx_urand(&f->c.rng);
}

/* ---- fixture ------------------------------------------------------------------- */

static int64_t submit(struct fx *f, const char *name, int max_errors)
{
	struct ct_job_spec spec = {
		.name = name, .shards = 2, .rounds = 2, .steps = 3, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 2, .max_error_results = max_errors,
		.max_total_results = 10, .tolerance = 1e-3, .loss_margin = 0.5,
		.adaptive = 0, .model_path = f->c.model, .train_path = f->c.train,
		.eval_path = f->c.eval,
	};
	int64_t id = 0;

	assert_int_equal(ct_wg_submit(&f->c.srv, f->c.db, &spec, &id), 0);
	return id;
}

/* A team "testers", users user0..user5 (0 and 1 in the team) with a host
 * each, and a job of 2 rounds of 2 WUs. */
static void populate(struct fx *f)
{
	assert_int_equal(CT_DB_EXEC(f->c.db, "INSERT INTO team (create_time, name) VALUES (?, ?)",
				    ct_db_now(f->c.db), "testers"), 1);
	f->team = ct_db_last_id(f->c.db);
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user%d", i);
		f->users[i] = ct_dfx_add_user(f->c.db, name, i < 2 ? f->team : 0, &f->hosts[i]);
	}
	f->jobid = submit(f, "daemons job", 5);
}

static int setup(void **state)
{
	const struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 16,
					    .Vp = 64 };
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL || ct_dfx_case_open(&f->c, "daemons test", &cfg) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	populate(f);
	return 0;
}

/* ---- playing the scheduler and the clients ---------------------------------- */

struct wu {
	int64_t id;
	char model_sha[65], data_sha[65];
	struct ct_gpt2 base;
	float *honest;		/* the engine's result of this WU */
};

static void wu_free(struct wu *w)
{
	ct_gpt2_free(&w->base);
	free(w->honest);
	memset(w, 0, sizeof(*w));
}

/* Load WU `shard` of round `idx` of job, with its base and honest result. */
static void wu_load(struct fx *f, int64_t jobid, int idx, int shard, struct wu *w)
{
	struct ct_dfx_wu row;

	memset(w, 0, sizeof(*w));
	ct_dfx_wu_row(f->c.db, jobid, idx, shard, &row);
	w->id = row.id;
	memcpy(w->model_sha, row.model_sha, sizeof(w->model_sha));
	memcpy(w->data_sha, row.data_sha, sizeof(w->data_sha));
	w->honest = ct_dfx_wu_run(&f->c.srv, &row, &row.hp, &w->base, 0);
}

/* The credit of one valid result of the fixture's job (steps 3, B 2, T 8). */
static double one_credit(const struct wu *w)
{
	return ct_credit_from_flops(ct_credit_wu_flops(&w->base.cfg, 8, 2, 3));
}

/* An unsent result of the WU, sent to `host` (what the scheduler does). */
static int64_t send_to(struct fx *f, const struct wu *w, int h)
{
	int64_t rid = ct_dfx_send(f->c.db, w->id, f->hosts[h], f->users[h]);
	int64_t now = ct_db_now(f->c.db);

	assert_true(CT_DB_EXEC(f->c.db, "UPDATE workunit SET transition_time=LEAST(transition_time, ?) "
			       "WHERE id=?", now + 86400, w->id) >= 0);
	return rid;
}

/* The path of result rid's upload file (cap bytes at path). */
static void upload_of(struct fx *f, int64_t rid, char *path, size_t cap)
{
	struct ct_db_res *res = NULL;

	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT name FROM result WHERE id=?",
				     rid), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_server_upload_path(&f->c.srv, ct_db_str(res, 0), path, cap), 0);
	ct_db_res_free(res);
}

/* The client's upload and report of result rid: weights `res` (n floats)
 * encoded against the WU's base. */
/* Result rid of w reported as res (n floats), uploaded in encoding enc
 * (CT_DELTA_LOSSLESS, CT_DELTA_INT8) from a device conforming or not. */
static void report_enc(struct fx *f, const struct wu *w, int64_t rid, const float *res,
		       size_t n, int conforming, int enc)
{
	static const struct ct_delta_model dm = { 16, 64, 64, 1, 2, 16 };
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];
	char usha[65];
	int64_t now = ct_db_now(f->c.db);

	assert_int_equal(ct_hex_decode(w->model_sha, base_sha, 32), 0);
	assert_int_equal(ct_delta_encode(w->base.params, res, n, &dm, base_sha,
					 enc, -1, &out), 0);
	/* the file and its hash, as the upload handler writes them */
	ct_dfx_upload(&f->c.srv, f->c.db, rid, out.data, out.len, usha);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, upload_time=?, upload_size=?, conforming=?, "
				    "upload_sha256=? WHERE id=?", CT_RS_OVER,
				    CT_RO_SUCCESS, now, now, (int64_t)out.len, conforming, usha,
				    rid), 1);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    now, w->id), 1);
	ct_buf_free(&out);
}

static void report(struct fx *f, const struct wu *w, int64_t rid, const float *res, size_t n,
		   int conforming)
{
	report_enc(f, w, rid, res, n, conforming, CT_DELTA_LOSSLESS);
}

static void report_error(struct fx *f, const struct wu *w, int64_t rid)
{
	int64_t now = ct_db_now(f->c.db);

	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, exit_status=1 WHERE id=?",
				    CT_RS_OVER, CT_RO_CLIENT_ERROR, now, rid), 1);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    now, w->id), 1);
}

/* Run transitioner, validator, assimilator until none has work. */
static void run_daemons(struct fx *f)
{
	ct_dfx_run_daemons(&f->c.srv, f->c.db);
}

static int64_t qint(struct fx *f, const char *sql, int64_t arg)
{
	return ct_dfx_qint(f->c.db, sql, arg);
}

static double qdouble(struct fx *f, const char *sql, int64_t arg)
{
	return ct_dfx_qdouble(f->c.db, sql, arg);
}

static int vstate(struct fx *f, int64_t rid)
{
	return ct_dfx_vstate(f->c.db, rid);
}

static int unsent(struct fx *f, const struct wu *w)
{
	return (int)qint(f, "SELECT COUNT(*) FROM result WHERE workunitid=? AND server_state=2",
			 w->id);
}

/* Hosts h1 and h2 return the honest result of WU (idx, shard) of the job;
 * the daemons validate it. *last (may be NULL) gets h2's result id. */
static void honest_wu(struct fx *f, int idx, int shard, int h1, int h2, int64_t *last)
{
	struct wu w;
	int64_t a, b;

	wu_load(f, f->jobid, idx, shard, &w);
	a = send_to(f, &w, h1);
	b = send_to(f, &w, h2);
	report(f, &w, a, w.honest, w.base.lay.total, 1);
	report(f, &w, b, w.honest, w.base.lay.total, 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, b), CT_VS_VALID);
	if (last != NULL)
		*last = b;
	wu_free(&w);
}

/* Every WU of round idx returned honestly (hosts 0 and 1, then 2 and 3):
 * the round closes. */
static void honest_round(struct fx *f, int idx)
{
	honest_wu(f, idx, 0, 0, 1, NULL);
	honest_wu(f, idx, 1, 2, 3, NULL);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `round` WHERE jobid=? AND status=2",
			      f->jobid), idx);
}

/* ---- the scenario --------------------------------------------------------------- */

/* The per-round counters the result triggers keep (migration 004) equal
 * a recount of every round's results. */
static void check_round_stats(struct fx *f)
{
	struct ct_db_res *res = NULL;
	size_t n = 0;

	assert_int_equal(ct_db_querya(f->c.db, &res,
		"SELECT r.id, s.n_unsent, s.n_in_progress, s.n_valid, s.n_invalid, s.n_error, "
		"s.credit, (SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid "
		"WHERE w.roundid = r.id AND x.server_state = 2), (SELECT COUNT(*) FROM result x "
		"JOIN workunit w ON w.id = x.workunitid WHERE w.roundid = r.id AND "
		"x.server_state = 4), (SELECT COUNT(*) FROM result x JOIN workunit w ON "
		"w.id = x.workunitid WHERE w.roundid = r.id AND x.validate_state = 1), "
		"(SELECT COUNT(*) FROM result x JOIN workunit w ON w.id = x.workunitid WHERE "
		"w.roundid = r.id AND x.validate_state = 2), (SELECT COUNT(*) FROM result x "
		"JOIN workunit w ON w.id = x.workunitid WHERE w.roundid = r.id AND "
		"x.server_state = 5 AND x.outcome NOT IN (1, 7)), (SELECT COALESCE(SUM("
		"granted_credit), 0) FROM result x JOIN workunit w ON w.id = x.workunitid WHERE "
		"w.roundid = r.id) FROM `round` r JOIN round_stat s ON s.roundid = r.id", NULL, 0), 0);
	while (ct_db_next(res) > 0) {
		for (int k = 1; k <= 5; k++)
			assert_int_equal(ct_db_int(res, k), ct_db_int(res, k + 6));
		assert_true(fabs(ct_db_double(res, 6) - ct_db_double(res, 12)) < 1e-9);
		n++;
	}
	ct_db_res_free(res);
	assert_int_equal(n, qint(f, "SELECT COUNT(*) FROM `round` WHERE id>?", 0));
	/* and the per-(job, user) ones a recount of valid results */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM (SELECT jobid, userid, COUNT(*) n, "
			      "SUM(granted_credit) c FROM result WHERE validate_state = 1 AND "
			      "jobid > ? GROUP BY jobid, userid) x LEFT JOIN job_user_stat s ON "
			      "s.jobid = x.jobid AND s.userid = x.userid WHERE s.nvalid IS NULL "
			      "OR s.nvalid <> x.n OR ABS(s.credit - x.c) > 1e-9", 0), 0);
	assert_true(qint(f, "SELECT SUM(nvalid) FROM job_user_stat WHERE jobid > ?", 0) ==
		    qint(f, "SELECT COUNT(*) FROM result WHERE validate_state = 1 AND jobid > ?", 0));
}

static void test_honest_pair_credited(void **state)
{
	struct fx *f = *state;
	struct wu R1[1];
	int64_t a, b, ev, canon;
	double credit1;

	wu_load(f, f->jobid, 1, 0, &R1[0]);
	a = send_to(f, &R1[0], 0);
	b = send_to(f, &R1[0], 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_INIT);	/* nothing reported yet */
	/* while its clients train, the assimilator evaluates the first
	 * round's base (test_round_average: the same loss ends on the job) */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `round` WHERE jobid=? AND idx=1 AND "
			      "status=1 AND base_eval_loss > 0", f->jobid), 1);
	report(f, &R1[0], a, R1[0].honest, R1[0].base.lay.total, 1);
	run_daemons(f);
	/* one of a quorum of 2: checked, recorded, waiting */
	assert_int_equal(vstate(f, a), CT_VS_INCONCLUSIVE);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result_check WHERE resultid=?", a), 1);
	{
		/* a checked result is not decoded again: with its upload
		 * gone, the second replica still matches it by hash */
		char path[4200], moved[4300];

		upload_of(f, a, path, sizeof(path));
		snprintf(moved, sizeof(moved), "%s.away", path);
		assert_int_equal(rename(path, moved), 0);
		report(f, &R1[0], b, R1[0].honest, R1[0].base.lay.total, 1);
		/* b's upload has a's bytes (upload_sha256): b is a's twin and
		 * is not decoded either; gone, it still validates */
		{
			char pb[4200], mb[4300];

			upload_of(f, b, pb, sizeof(pb));
			snprintf(mb, sizeof(mb), "%s.away", pb);
			assert_int_equal(rename(pb, mb), 0);
			run_daemons(f);
			assert_int_equal(rename(mb, pb), 0);
		}
		assert_int_equal(rename(moved, path), 0);
	}
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result_check WHERE resultid=?", b), 1);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, b), CT_VS_VALID);
	canon = qint(f, "SELECT canonical_resultid FROM workunit WHERE id=?", R1[0].id);
	assert_true(canon == a || canon == b);
	/* credit: from the model and the job, to both, recorded once each */
	credit1 = one_credit(&R1[0]);
	assert_true(credit1 > 0.0);
	assert_true(fabs(qdouble(f, "SELECT granted_credit FROM result WHERE id=?", a) - credit1) < 1e-12);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[0]) - credit1) < 1e-12);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM host WHERE id=?", f->hosts[1]) - credit1) < 1e-12);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM team WHERE id=?", f->team) - 2 * credit1) < 1e-12);
	assert_true(qdouble(f, "SELECT expavg_credit FROM `user` WHERE id=?", f->users[0]) > 0.0);
	assert_int_equal(qint(f, "SELECT consecutive_valid FROM host WHERE id=?", f->hosts[0]), 1);
	ev = qint(f, "SELECT COUNT(*) FROM credit_event WHERE workunitid=?", R1[0].id);
	assert_int_equal(ev, 2);
	/* a second grant for the same result changes nothing */
	assert_int_equal(ct_credit_grant(f->c.db, a, credit1, ct_db_now(f->c.db)), 0);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[0]) - credit1) < 1e-12);
	/* recent average credit decays with a 7-day half-life when the
	 * decay role runs, once per hour at most */
	{
		double rac = qdouble(f, "SELECT expavg_credit FROM `user` WHERE id=?", f->users[0]);
		int64_t t = qint(f, "SELECT expavg_time FROM `user` WHERE id=?", f->users[0]);

		assert_true(ct_credit_decay(f->c.db, t + 600) == 0);	/* < 1 h: untouched */
		assert_true(ct_credit_decay(f->c.db, t + 7 * 86400) >= 3);	/* user, host, team */
		assert_true(fabs(qdouble(f, "SELECT expavg_credit FROM `user` WHERE id=?", f->users[0]) -
				 rac / 2) < 1e-9 * rac);
		assert_int_equal(qint(f, "SELECT expavg_time FROM `user` WHERE id=?", f->users[0]),
				 t + 7 * 86400);
		assert_true(fabs(ct_credit_rac_now(rac, (double)t, (double)t + 7 * 86400) - rac / 2) <
			    1e-9 * rac);
		/* total credit is never touched */
		assert_true(fabs(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[0]) -
				 credit1) < 1e-12);
	}
	/* nothing left to validate; the validator finds no work */
	assert_int_equal(qint(f, "SELECT need_validate FROM workunit WHERE id=?", R1[0].id), 0);
	assert_int_equal(ct_validator_run_once(&f->c.srv, f->c.db), 0);
	wu_free(&R1[0]);
}

/* weights for the bad results of WU (1, 1) */
static float *variant(struct fx *f, const struct wu *w, const char *what)
{
	size_t n = w->base.lay.total;
	float *v = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++) {
		float b = w->base.params[i], d = w->honest[i] - b;

		if (strcmp(what, "lazy") == 0)
			v[i] = b;
		else if (strcmp(what, "x10") == 0)
			v[i] = b + 10.0f * d;
		else if (strcmp(what, "noise") == 0)
			v[i] = b + (float)((urand(f) - 0.5) * 4e-3);
		else
			v[i] = w->honest[i];
	}
	if (strcmp(what, "nan") == 0)
		v[n / 2] = NAN;
	return v;
}

static void test_bad_results_rejected(void **state)
{
	struct fx *f = *state;
	struct wu wu, *w = &wu;
	size_t n;
	const char *bad[] = { "lazy", "nan", "x10", "shape" };
	int64_t honest, rid, noise, third;
	int64_t canon;
	float *v;

	wu_load(f, f->jobid, 1, 1, w);
	n = w->base.lay.total;
	honest = send_to(f, w, 1);
	report(f, w, honest, w->honest, n, 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		rid = send_to(f, w, 2);
		v = variant(f, w, bad[k]);
		report(f, w, rid, v, strcmp(bad[k], "shape") == 0 ? n - 1 : n, 0);
		free(v);
		run_daemons(f);
		assert_int_equal(vstate(f, rid), CT_VS_INVALID);
		assert_int_equal(qint(f, "SELECT outcome FROM result WHERE id=?", rid),
				 CT_RO_VALIDATE_ERROR);
		assert_int_equal(qint(f, "SELECT COUNT(*) FROM credit_event WHERE resultid=?", rid), 0);
		/* the honest one waits; a replacement replica is out */
		assert_int_equal(vstate(f, honest), CT_VS_INCONCLUSIVE);
		assert_int_equal(unsent(f, w), 1);
	}
	assert_int_equal(qint(f, "SELECT consecutive_valid FROM host WHERE id=?", f->hosts[2]), 0);
	assert_int_equal(qint(f, "SELECT nresults_invalid FROM host WHERE id=?", f->hosts[2]), 4);
	assert_int_equal(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[2]), 0);
	/* noise passes the sanity checks but disagrees: one more replica */
	noise = send_to(f, w, 3);
	v = variant(f, w, "noise");
	report(f, w, noise, v, n, 0);
	free(v);
	run_daemons(f);
	assert_int_equal(vstate(f, noise), CT_VS_INCONCLUSIVE);
	assert_int_equal(qint(f, "SELECT target_nresults FROM workunit WHERE id=?", w->id), 3);
	assert_int_equal(unsent(f, w), 1);
	assert_int_equal(qint(f, "SELECT canonical_resultid FROM workunit WHERE id=?", w->id), 0);
	/* the third replica agrees with the honest one */
	third = send_to(f, w, 4);
	report(f, w, third, w->honest, n, 0);
	run_daemons(f);
	canon = qint(f, "SELECT canonical_resultid FROM workunit WHERE id=?", w->id);
	assert_true(canon == honest || canon == third);
	assert_int_equal(vstate(f, honest), CT_VS_VALID);
	assert_int_equal(vstate(f, third), CT_VS_VALID);
	assert_int_equal(vstate(f, noise), CT_VS_INVALID);
	assert_int_equal(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[3]), 0);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[1]) -
			 one_credit(w)) < 1e-12);
	assert_true(qdouble(f, "SELECT probe_loss FROM result WHERE id=?", honest) > 0.0);
	wu_free(w);
}

static void test_round_average(void **state)
{
	struct fx *f = *state;
	struct wu R1[2];
	const float *in[2];
	struct ct_gpt2 got = { 0 };
	size_t n;
	float *want;
	struct ct_db_res *res = NULL;
	char sha[65], path[4200];

	honest_round(f, 1);
	wu_load(f, f->jobid, 1, 0, &R1[0]);
	wu_load(f, f->jobid, 1, 1, &R1[1]);
	in[0] = R1[0].honest;
	in[1] = R1[1].honest;
	n = R1[0].base.lay.total;
	want = malloc(n * sizeof(float));
	/* run_daemons() already closed round 1 and opened round 2 */
	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT status, out_model_sha256, eval_loss, "
				     "base_eval_loss FROM `round` WHERE jobid=? AND idx=1",
				     f->jobid), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_ROUND_DONE);
	snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 1));
	assert_false(ct_db_isnull(res, 2));
	/* training on the learnable data helped */
	assert_true(ct_db_double(res, 2) < ct_db_double(res, 3));
	/* the base loss computed ahead is the job's base loss */
	assert_true(qdouble(f, "SELECT base_eval_loss FROM job WHERE id=?", f->jobid) ==
		    ct_db_double(res, 3));
	ct_db_res_free(res);
	/* the page can say what the losses are over: the default size, or
	 * the whole eval file when it is shorter */
	{
		int64_t nt = qint(f, "SELECT eval_ntokens FROM `round` WHERE jobid=? AND idx=1", f->jobid);

		assert_true(nt > 0 && nt <= CT_SEVAL_DEFAULT_TOKENS);
		assert_int_equal(nt % 16, 0);	/* whole batches of B x T = 2 x 8 */
	}
	assert_int_equal(ct_avg(want, in, 2, n, CT_AVG_MEAN, 0), 0);
	assert_int_equal(ct_server_download_path(&f->c.srv, sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &got), 0);
	assert_memory_equal(got.params, want, n * sizeof(float));
	assert_int_equal(qint(f, "SELECT keep FROM `file` WHERE sha256=(SELECT out_model_sha256 "
			      "FROM `round` WHERE jobid=? AND idx=1)", f->jobid), 1);
	/* round 2 starts from it */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit w JOIN `round` r ON "
			      "r.jobid = w.jobid AND r.idx = 1 WHERE w.jobid=? AND "
			      "w.round_idx=2 AND w.model_sha256 = r.out_model_sha256", f->jobid), 2);
	assert_int_equal(qint(f, "SELECT assimilate_state FROM workunit WHERE id=?", R1[0].id),
			 CT_AS_DONE);
	/* A crash after round 2 was opened but before round 1 was recorded:
	 * the next pass redoes the work, gets the same model, and opens
	 * nothing twice. */
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE `round` SET status=?, out_model_sha256='' "
				    "WHERE jobid=? AND idx=1", CT_ROUND_OPEN, f->jobid), 1);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET assimilate_state=? WHERE jobid=? "
				    "AND round_idx=1", CT_AS_READY, f->jobid), 2);
	assert_int_equal(ct_assimilator_run_once(&f->c.srv, f->c.db), 1);
	assert_int_equal(ct_assimilator_run_once(&f->c.srv, f->c.db), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `round` r1 JOIN `round` r2 ON r2.jobid = "
			      "r1.jobid AND r2.idx = 2 WHERE r1.jobid=? AND r1.idx=1 AND "
			      "r1.status=2 AND r1.out_model_sha256 = r2.model_sha256", f->jobid), 1);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=2",
			      f->jobid), 2);
	check_round_stats(f);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result WHERE jobid=? AND name LIKE '%-r2-%'",
			      f->jobid), 4);
	ct_gpt2_free(&got);
	free(want);
	for (int i = 0; i < 2; i++)
		wu_free(&R1[i]);
}

/* Round idx's receipt, read from the store and parsed into r; its file's
 * hash into sha. */
static void load_receipt(struct fx *f, int idx, struct ct_receipt *r, char sha[65])
{
	struct ct_db_res *res = NULL;
	unsigned char *data = NULL;
	char path[4200];
	size_t len = 0;

	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT sha256 FROM round_receipt WHERE "
				     "jobid=? AND idx=?", f->jobid, idx), 0);
	assert_int_equal(ct_db_next(res), 1);
	snprintf(sha, 65, "%s", ct_db_str(res, 0));
	ct_db_res_free(res);
	assert_int_equal(ct_server_download_path(&f->c.srv, sha, path, sizeof(path)), 0);
	assert_int_equal(ct_file_read_all(path, CT_RECEIPT_MAX_BYTES, &data, &len), 0);
	assert_int_equal(ct_receipt_parse(data, len, r), 0);
	assert_int_equal(ct_receipt_verify(r, f->c.srv.sign_pub), 0);
	free(data);
}

/* Each closed round has one signed receipt (doc/receipts.md) that states
 * its inputs, the honest results' hashes and hosts, the model out, and
 * names the previous receipt; it is written once, and again the same
 * bytes when its row is lost. */
static void test_round_receipts(void **state)
{
	struct fx *f = *state;
	struct ct_receipt r1, r2;
	struct wu w;
	char sha1[65], sha2[65], again[65], want[65];

	honest_round(f, 1);
	load_receipt(f, 1, &r1, sha1);
	assert_int_equal(r1.job, f->jobid);
	assert_int_equal(r1.round, 1);
	assert_string_equal(r1.prev, "");
	assert_int_equal(r1.nwus, 2);
	assert_int_equal(r1.nwus_round, 2);
	for (int k = 0; k < 2; k++) {
		wu_load(f, f->jobid, 1, k, &w);
		assert_string_equal(r1.model_sha, w.model_sha);
		assert_string_equal(r1.wus[k].data_sha, w.data_sha);
		ct_sha256_hex(w.honest, w.base.lay.total * sizeof(float), want);
		assert_string_equal(r1.wus[k].result_sha, want);
		assert_int_equal(r1.wus[k].tolerance, 0);
		assert_int_equal(r1.wus[k].nhosts, 2);	/* hosts 0 and 1, then 2 and 3 */
		{
			int64_t a = f->hosts[2 * k], b = f->hosts[2 * k + 1];

			assert_int_equal(r1.wus[k].hosts[0], a < b ? a : b);
			assert_int_equal(r1.wus[k].hosts[1], a < b ? b : a);
		}
		wu_free(&w);
	}
	honest_round(f, 2);
	load_receipt(f, 2, &r2, sha2);
	assert_string_equal(r2.prev, sha1);
	assert_string_equal(r2.model_sha, r1.out_sha);
	/* written once: a pass finds nothing to do */
	assert_int_equal(ct_receipt_pass(&f->c.srv, f->c.db), 0);
	/* a lost row is written again with the very same bytes */
	assert_int_equal(CT_DB_EXEC(f->c.db, "DELETE FROM round_receipt WHERE jobid=?",
				    f->jobid), 2);
	assert_int_equal(ct_receipt_pass(&f->c.srv, f->c.db), 2);
	ct_receipt_free(&r2);
	load_receipt(f, 2, &r2, again);
	assert_string_equal(again, sha2);
	ct_receipt_free(&r1);
	ct_receipt_free(&r2);
}

/* A made-up chain of 3 links (a link every step of the job's 3) whose
 * first `same` links are the honest run's and whose last is the hash of
 * the n floats res, as a client reports it with that result. */
static void chain_of(const float *res, size_t n, int same, const char *tag, char *hex)
{
	for (int k = 0; k < 2; k++) {
		char seed[32];

		snprintf(seed, sizeof(seed), "%s %d", k < same ? "honest" : tag, k);
		ct_sha256_hex(seed, strlen(seed), hex + 64 * k);
	}
	ct_sha256_hex(res, n * sizeof(float), hex + 128);
}

/* One replica of w sent to host h, reported as res (conforming or not)
 * with the chain hex; its result id. */
static int64_t chained_enc(struct fx *f, const struct wu *w, int h, const float *res,
			   int conforming, int enc, const char *hex)
{
	int64_t rid = send_to(f, w, h);

	report_enc(f, w, rid, res, w->base.lay.total, conforming, enc);
	assert_int_equal(ct_dl_chain_put(f->c.db, rid, hex), 0);
	return rid;
}

static int64_t chained(struct fx *f, const struct wu *w, int h, const float *res,
		       int conforming, const char *hex)
{
	return chained_enc(f, w, h, res, conforming, CT_DELTA_LOSSLESS, hex);
}

static int64_t canonical_of(struct fx *f, const struct wu *w)
{
	return qint(f, "SELECT canonical_resultid FROM workunit WHERE id=?", w->id);
}

/* Replicas compared by tolerance (one device does not conform): the job
 * page and its API say where their chains part, from the stored chains;
 * the round's receipt states each WU's canonical chain (a file of the
 * store, by hash), by tolerance the canonical's own and by hash only one
 * that a second replica reported too. */
static void test_chains_parting_and_receipt(void **state)
{
	struct fx *f = *state;
	struct ct_web_req req = { .srv = &f->c.srv, .db = f->c.db };
	struct ct_web_parting *p = NULL;
	struct ct_buf page = CT_BUF_INIT(0);
	struct ct_receipt r;
	struct wu w0, w1;
	char ca[193], cb[193], cc[193], sha[65], want[65], path[4200];
	unsigned char *data = NULL;
	float *near;
	size_t n = 0, len = 0;
	int64_t a, b, c, d;

	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE job SET chain_every=1 WHERE id=?",
				    f->jobid), 1);
	wu_load(f, f->jobid, 1, 0, &w0);
	wu_load(f, f->jobid, 1, 1, &w1);
	/* WU 0: host 1's device rounds a few weights otherwise, from step 2 on */
	near = malloc(w0.base.lay.total * sizeof(float));
	for (size_t i = 0; i < w0.base.lay.total; i++)
		near[i] = i % 97 == 0 ? w0.base.params[i] + 1.0001f * (w0.honest[i] -
			  w0.base.params[i]) : w0.honest[i];
	chain_of(w0.honest, w0.base.lay.total, 3, "", ca);
	chain_of(near, w0.base.lay.total, 1, "host 1", cb);
	a = chained(f, &w0, 0, w0.honest, 1, ca);
	b = chained(f, &w0, 1, near, 0, cb);
	/* WU 1: two conforming replicas, one chain */
	chain_of(w1.honest, w1.base.lay.total, 3, "", cc);
	c = chained(f, &w1, 2, w1.honest, 1, cc);
	d = chained(f, &w1, 3, w1.honest, 1, cc);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, b), CT_VS_VALID);
	assert_int_equal(vstate(f, c), CT_VS_VALID);
	assert_int_equal(vstate(f, d), CT_VS_VALID);

	/* the page's data: WU 0 only, apart after step 1, by step 2 */
	assert_int_equal(ct_web_job_partings(f->c.db, f->jobid, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].round, 1);
	assert_int_equal(p[0].shard, 0);
	assert_int_equal(p[0].link, 1);
	assert_int_equal(p[0].agreed, 1);
	assert_int_equal(p[0].parted, 2);
	free(p);
	assert_int_equal(ct_web_partings_html(&req, &page, f->jobid), 0);
	assert_non_null(strstr(ct_buf_cstr(&page), "agree up to step 1, part at step 2"));
	ct_buf_reset(&page);
	{	/* and the API's job object */
		struct ct_json j;

		ct_json_init(&j, &page);
		ct_json_obj_begin(&j);
		assert_int_equal(ct_web_partings_json(&req, &j, f->jobid), 0);
		ct_json_obj_end(&j);
		assert_int_equal(ct_json_finish(&j), 0);
		assert_non_null(strstr(ct_buf_cstr(&page), "\"shard\":0,\"wu\":\"j1-r1-s0\""));
		assert_non_null(strstr(ct_buf_cstr(&page), "\"first_link\":1,\"agreed_step\":1,"
				       "\"parted_step\":2}"));
	}
	ct_buf_free(&page);

	/* the receipt: WU 0's canonical chain (tolerance), WU 1's (vouched) */
	load_receipt(f, 1, &r, sha);
	assert_int_equal(r.version, CT_RECEIPT_VERSION);
	assert_string_equal(r.base_format, "f32");	/* a float32 job: nothing carried */
	assert_string_equal(r.lora_init_sha, "");
	assert_int_equal(r.wus[0].tolerance, 1);
	assert_int_equal(r.wus[0].chain_every, 1);
	ct_sha256_hex(canonical_of(f, &w0) == a ? ca : cb, 192, want);
	assert_string_equal(r.wus[0].chain_sha, want);
	assert_int_equal(r.wus[1].tolerance, 0);
	assert_int_equal(r.wus[1].chain_every, 1);
	ct_sha256_hex(cc, 192, want);
	assert_string_equal(r.wus[1].chain_sha, want);
	/* the chain's text is in the store under that hash */
	assert_int_equal(ct_server_download_path(&f->c.srv, want, path, sizeof(path)), 0);
	assert_int_equal(ct_file_read_all(path, 1 << 20, &data, &len), 0);
	assert_int_equal(len, 192);
	assert_memory_equal(data, cc, 192);
	free(data);
	ct_receipt_free(&r);
	free(near);
	wu_free(&w0);
	wu_free(&w1);
}

/* int8 uploads compared by tolerance: their chains were not checked
 * (the last link is the trained floats' hash, which an int8 upload does
 * not give), so the job page shows no parting for them and the receipt
 * states no chain that a second replica does not vouch for; two int8
 * replicas that report the same chain have it stated. */
static void test_chains_int8(void **state)
{
	struct fx *f = *state;
	struct ct_web_parting *p = NULL;
	struct ct_receipt r;
	struct wu w0, w1;
	char ca[193], cb[193], cc[193], sha[65], want[65];
	float *near;
	size_t n = 9;
	int64_t a, b, c, d;

	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE job SET chain_every=1, upload_encoding="
				    "'int8' WHERE id=?", f->jobid), 1);
	wu_load(f, f->jobid, 1, 0, &w0);
	wu_load(f, f->jobid, 1, 1, &w1);
	near = malloc(w0.base.lay.total * sizeof(float));
	for (size_t i = 0; i < w0.base.lay.total; i++)
		near[i] = i % 97 == 0 ? w0.base.params[i] + 0.95f * (w0.honest[i] -
			  w0.base.params[i]) : w0.honest[i];
	/* WU 0: the chains part at link 1, as a tolerance pair's would */
	chain_of(w0.honest, w0.base.lay.total, 3, "", ca);
	chain_of(near, w0.base.lay.total, 1, "host 1", cb);
	a = chained_enc(f, &w0, 0, w0.honest, 1, CT_DELTA_INT8, ca);
	b = chained_enc(f, &w0, 1, near, 0, CT_DELTA_INT8, cb);
	/* WU 1: two int8 replicas, one chain */
	chain_of(w1.honest, w1.base.lay.total, 3, "", cc);
	c = chained_enc(f, &w1, 2, w1.honest, 1, CT_DELTA_INT8, cc);
	d = chained_enc(f, &w1, 3, w1.honest, 1, CT_DELTA_INT8, cc);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, b), CT_VS_VALID);
	assert_int_equal(vstate(f, c), CT_VS_VALID);
	assert_int_equal(vstate(f, d), CT_VS_VALID);
	{	/* the validator took them as int8: an error bound, no exact hash */
		double q = 0.0;

		assert_int_equal(CT_DB_QUERY_DOUBLE(f->c.db, &q, "SELECT quant_error FROM "
						    "result_check WHERE resultid=?", b), 0);
		assert_true(q > 0.0);
	}

	assert_int_equal(ct_web_job_partings(f->c.db, f->jobid, &p, &n), 0);
	assert_int_equal(n, 0);
	free(p);
	load_receipt(f, 1, &r, sha);
	assert_int_equal(r.wus[0].tolerance, 1);
	assert_int_equal(r.wus[0].chain_every, 0);
	assert_string_equal(r.wus[0].chain_sha, "");
	assert_int_equal(r.wus[1].chain_every, 1);
	ct_sha256_hex(cc, 192, want);
	assert_string_equal(r.wus[1].chain_sha, want);
	ct_receipt_free(&r);
	free(near);
	wu_free(&w0);
	wu_free(&w1);
}

/* A WU settled by bisection keeps one valid replica: its receipt states
 * that replica's chain all the same (its links before the recomputed one
 * are the loser's too, that one the server's own, its last its hash). */
static void test_receipt_settled_chain(void **state)
{
	struct fx *f = *state;
	struct ct_receipt r;
	struct wu w;
	char ca[193], sha[65], want[65];
	int64_t a;

	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE job SET chain_every=1 WHERE id=?",
				    f->jobid), 1);
	wu_load(f, f->jobid, 1, 0, &w);
	chain_of(w.honest, w.base.lay.total, 3, "", ca);
	a = chained(f, &w, 0, w.honest, 1, ca);
	chained(f, &w, 1, w.honest, 1, ca);
	/* as the validator records a won dispute (validator.c apply_wu) */
	assert_int_equal(ct_dl_chain_settled(f->c.db, a, 1), 1);
	assert_int_equal(ct_dl_chain_settled(f->c.db, a + 1000, 1), 0);
	assert_int_equal(CT_DB_EXEC(f->c.db, "DELETE FROM result_chain WHERE resultid<>?", a), 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	honest_wu(f, 1, 1, 2, 3, NULL);
	load_receipt(f, 1, &r, sha);
	assert_int_equal(r.wus[0].chain_every, 1);
	ct_sha256_hex(ca, 192, want);
	assert_string_equal(r.wus[0].chain_sha, want);
	ct_receipt_free(&r);
	wu_free(&w);
}

/* A chain only the canonical's host reported, on a WU agreed by hash, is
 * not stated: nobody else vouches for its links before the last. */
static void test_receipt_unvouched_chain(void **state)
{
	struct fx *f = *state;
	struct ct_receipt r;
	struct wu w;
	char ca[193], cb[193], sha[65];
	int64_t a, b;

	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE job SET chain_every=1 WHERE id=?",
				    f->jobid), 1);
	wu_load(f, f->jobid, 1, 0, &w);
	chain_of(w.honest, w.base.lay.total, 3, "", ca);
	chain_of(w.honest, w.base.lay.total, 0, "b", cb);
	a = chained(f, &w, 0, w.honest, 1, ca);
	/* b's host reports another chain: nothing in common with a's before
	 * the last link, the result's hash */
	b = chained(f, &w, 1, w.honest, 1, cb);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, b), CT_VS_VALID);
	honest_wu(f, 1, 1, 2, 3, NULL);
	load_receipt(f, 1, &r, sha);
	assert_int_equal(r.wus[0].chain_every, 0);
	assert_string_equal(r.wus[0].chain_sha, "");
	assert_int_equal(r.wus[1].chain_every, 0);	/* no chains reported at all */
	ct_receipt_free(&r);
	wu_free(&w);
}

static void test_deadline_resends(void **state)
{
	struct fx *f = *state;
	struct wu w;
	int64_t a, b, c;

	/* the deadline alone: no early re-issue (test_early_reissue) */
	assert_int_equal(ct_conf_set(f->c.srv.conf, "sched.reissue_factor", "0"), 0);
	wu_load(f, f->jobid, 1, 0, &w);
	a = send_to(f, &w, 0);
	b = send_to(f, &w, 1);
	report(f, &w, a, w.honest, w.base.lay.total, 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_INCONCLUSIVE);
	assert_int_equal(unsent(f, &w), 0);	/* b may still come back */
	assert_int_equal(qint(f, "SELECT server_state FROM result WHERE id=?", b), CT_RS_IN_PROGRESS);
	f->c.t += 86399;		/* a second before b's deadline: it may still come */
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 0);
	assert_int_equal(qint(f, "SELECT server_state FROM result WHERE id=?", b), CT_RS_IN_PROGRESS);
	f->c.t += 86401;		/* b's deadline has passed */
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 1);	/* resent */
	assert_int_equal(qint(f, "SELECT outcome FROM result WHERE id=?", b), CT_RO_NO_REPLY);
	assert_int_equal(qint(f, "SELECT nresults_error FROM host WHERE id=?", f->hosts[1]), 1);
	c = send_to(f, &w, 4);
	report(f, &w, c, w.honest, w.base.lay.total, 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, c), CT_VS_VALID);
	assert_int_equal(qint(f, "SELECT granted_credit > 0 FROM result WHERE id=?", b), 0);
	wu_free(&w);
}

/* A replica unreported while its WU's other replica is done is re-issued
 * after sched.reissue_factor x that replica's time (at least
 * sched.reissue_min), long before its deadline, and may still report. */
static void test_early_reissue(void **state)
{
	struct fx *f = *state;
	struct wu w;
	int64_t a, b, c;

	assert_int_equal(ct_conf_set(f->c.srv.conf, "sched.reissue_min", "30"), 0);
	wu_load(f, f->jobid, 1, 0, &w);
	a = send_to(f, &w, 0);
	b = send_to(f, &w, 1);
	f->c.t += 20;			/* a takes 20 s: b is overdue after 60 */
	report(f, &w, a, w.honest, w.base.lay.total, 1);
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 0);
	f->c.t += 39;			/* b out 59 s */
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 0);
	f->c.t += 2;			/* 61 s: re-issued, b still in progress */
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 1);
	assert_int_equal(qint(f, "SELECT server_state FROM result WHERE id=?", b), CT_RS_IN_PROGRESS);
	f->c.t += 100;			/* one new replica, not one a pass */
	run_daemons(f);
	assert_int_equal(unsent(f, &w), 1);
	c = send_to(f, &w, 4);
	report(f, &w, c, w.honest, w.base.lay.total, 1);
	run_daemons(f);
	assert_int_equal(vstate(f, a), CT_VS_VALID);
	assert_int_equal(vstate(f, c), CT_VS_VALID);
	assert_int_equal(qint(f, "SELECT server_state FROM result WHERE id=?", b), CT_RS_IN_PROGRESS);
	wu_free(&w);
}

struct racer {
	struct ct_server *srv;
	int handled;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct ct_db *db = NULL;

	if (ct_db_open(&db, r->srv->clock) == 0) {
		r->handled = ct_validator_run_once(r->srv, db);
		ct_db_close(db);
	} else {
		r->handled = -1;
	}
	return NULL;
}

/* Two validators race on round 2's last WU: credit is granted once; the
 * job then finishes. */
static void test_racing_validators_and_job_done(void **state)
{
	struct fx *f = *state;
	struct racer r[2] = { { &f->c.srv, 0 }, { &f->c.srv, 0 } };
	pthread_t t[2];
	struct wu w;
	int64_t a, b;
	double total;

	honest_round(f, 1);
	honest_wu(f, 2, 0, 0, 1, NULL);
	wu_load(f, f->jobid, 2, 1, &w);
	a = send_to(f, &w, 0);
	b = send_to(f, &w, 5);
	report(f, &w, a, w.honest, w.base.lay.total, 1);
	report(f, &w, b, w.honest, w.base.lay.total, 1);
	assert_true(ct_transitioner_run_once(&f->c.srv, f->c.db) >= 1);
	assert_int_equal(qint(f, "SELECT need_validate FROM workunit WHERE id=?", w.id), 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_true(r[0].handled >= 0 && r[1].handled >= 0);
	assert_int_equal(r[0].handled + r[1].handled, 1);	/* exactly one decided */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM credit_event WHERE workunitid=?", w.id), 2);
	/* totals agree with the events: nothing granted twice */
	total = qdouble(f, "SELECT SUM(credit) FROM credit_event WHERE userid=?", f->users[0]);
	assert_true(fabs(qdouble(f, "SELECT total_credit FROM `user` WHERE id=?", f->users[0]) - total) < 1e-12);
	assert_true(fabs(total - 3 * one_credit(&w)) < 1e-12);	/* (1,0), (2,0), this */
	run_daemons(f);
	assert_int_equal(qint(f, "SELECT status FROM job WHERE id=?", f->jobid), CT_JOB_DONE);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM job j JOIN `round` r ON r.jobid = j.id AND "
			      "r.idx = 2 WHERE j.id=? AND j.final_model_sha256 = r.out_model_sha256 "
			      "AND j.final_eval_loss IS NOT NULL", f->jobid), 1);
	/* round 2 started where round 1 ended, loss included */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `round` r1 JOIN `round` r2 ON "
			      "r2.jobid = r1.jobid AND r2.idx = 2 WHERE r1.jobid=? AND r1.idx = 1 "
			      "AND r2.base_eval_loss = r1.eval_loss", f->jobid), 1);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM job WHERE id=? AND base_eval_loss IS NOT NULL",
			      f->jobid), 1);
	wu_free(&w);
}

/* Ensure round 1 is done at CT_DFX_T0 and round 2 two days later (the job ends
 * then); *wu10 gets WU (1,0)'s id, *canon its canonical result, *last the
 * last result reported. */
static void job_over_two_days(struct fx *f, int64_t *wu10, int64_t *canon, int64_t *last)
{
	honest_round(f, 1);
	*wu10 = qint(f, "SELECT id FROM workunit WHERE round_idx=1 AND shard=0 AND jobid=?",
		     f->jobid);
	*canon = qint(f, "SELECT canonical_resultid FROM workunit WHERE id=?", *wu10);
	f->c.t += 2 * 86400;
	honest_wu(f, 2, 0, 0, 1, NULL);
	honest_wu(f, 2, 1, 2, 3, last);
	assert_int_equal(qint(f, "SELECT status FROM job WHERE id=?", f->jobid), CT_JOB_DONE);
}

static void test_file_deleter(void **state)
{
	struct fx *f = *state;
	char path[4200], recent[4200], sha[65];
	struct ct_db_res *res = NULL;
	int64_t wu10, canon, last;
	int n;

	job_over_two_days(f, &wu10, &canon, &last);
	upload_of(f, canon, path, sizeof(path));	/* two days old */
	upload_of(f, last, recent, sizeof(recent));	/* just uploaded */
	assert_true(ct_file_exists(path));
	assert_true(ct_file_exists(recent));
	/* canonical uploads kept on request, the other replicas go */
	{
		char other[4200];
		int64_t b = qint(f, "SELECT MAX(id) FROM result WHERE workunitid=? AND "
				 "validate_state=1 AND NOT EXISTS (SELECT 1 FROM workunit w "
				 "WHERE w.canonical_resultid = result.id)", wu10);

		upload_of(f, b, other, sizeof(other));
		assert_true(ct_file_exists(other));
		assert_int_equal(ct_conf_set(f->c.srv.conf, "daemons.keep_canonical", "yes"), 0);
		assert_int_equal(ct_conf_set(f->c.srv.conf, "daemons.upload_grace", "3600"), 0);
		assert_true(ct_file_deleter_run_once(&f->c.srv, f->c.db) >= 1);
		assert_true(ct_file_exists(path));
		assert_false(ct_file_exists(other));
		assert_int_equal(ct_conf_set(f->c.srv.conf, "daemons.keep_canonical", "no"), 0);
	}
	n = ct_file_deleter_run_once(&f->c.srv, f->c.db);
	assert_true(n >= 2);	/* round 1's canonical uploads */
	assert_false(ct_file_exists(path));
	assert_true(ct_file_exists(recent));	/* within the grace period */
	/* the job ended just now: its shards are still in their grace period */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `file` WHERE jobid=? AND kind='shard' AND "
			      "file_delete_state=0", f->jobid), 2);
	f->c.t += 3 * 86400;
	n = ct_file_deleter_run_once(&f->c.srv, f->c.db);
	assert_true(n >= 2);
	assert_false(ct_file_exists(recent));
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result WHERE jobid=? AND file_delete_state<>2 "
			      "AND outcome=1", f->jobid), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `file` WHERE jobid=? AND kind='shard' AND "
			      "file_delete_state=2", f->jobid), 2);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=? AND "
			      "file_delete_state<>2", f->jobid), 0);
	check_round_stats(f);
	/* with no grace (the default), an upload goes as soon as it may */
	assert_int_equal(ct_conf_set(f->c.srv.conf, "daemons.upload_grace", "0"), 0);
	/* every round's model and the job's base model stay */
	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT model_sha256 FROM `round` WHERE jobid=? "
				     "UNION SELECT out_model_sha256 FROM `round` WHERE jobid=?",
				     f->jobid, f->jobid), 0);
	assert_int_equal(ct_db_nrows(res), 3);
	while (ct_db_next(res) > 0) {
		snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 0));
		assert_int_equal(ct_server_download_path(&f->c.srv, sha, path, sizeof(path)), 0);
		assert_true(ct_file_exists(path));
	}
	ct_db_res_free(res);
}

/* The finished job's WUs and results go to the archive and out of the
 * database; rounds and their counters stay. */
static void test_purge(void **state)
{
	struct fx *f = *state;
	int64_t nwu, nres, valid, wu10, canon, last, done;
	char path[4200], name[64], line[1024];
	time_t now;
	struct tm tm;
	int64_t lw = 0, lr = 0;
	FILE *fp;

	job_over_two_days(f, &wu10, &canon, &last);
	done = ct_db_now(f->c.db);
	f->c.t += 3 * 86400;	/* past every file's grace: the deleter empties the job */
	while (ct_file_deleter_run_once(&f->c.srv, f->c.db) > 0)
		;
	nwu = qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=?", f->jobid);
	nres = qint(f, "SELECT COUNT(*) FROM result WHERE jobid=?", f->jobid);
	valid = qint(f, "SELECT SUM(n_valid) FROM round_stat WHERE jobid=?", f->jobid);
	assert_true(nwu >= 4 && nres > nwu);
	/* within its age (7 days by default, from the job's end) nothing goes */
	assert_int_equal(ct_purge_run_once(&f->c.srv, f->c.db), 0);
	f->c.t = (double)done + 7 * 86400 - 1;
	assert_int_equal(ct_purge_run_once(&f->c.srv, f->c.db), 0);
	f->c.t += 1;
	assert_int_equal(ct_purge_run_once(&f->c.srv, f->c.db), nwu);
	assert_int_equal(ct_purge_run_once(&f->c.srv, f->c.db), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=?", f->jobid), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result WHERE jobid=?", f->jobid), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result_check c LEFT JOIN result r ON "
			      "r.id = c.resultid WHERE r.id IS NULL AND c.resultid>?", 0), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM `round` WHERE jobid=?", f->jobid), 2);
	assert_int_equal(qint(f, "SELECT SUM(n_valid) FROM round_stat WHERE jobid=?", f->jobid),
			 valid);
	/* archived in the server clock's month */
	now = (time_t)f->c.t;
	gmtime_r(&now, &tm);
	strftime(name, sizeof(name), "archive/purge-%Y-%m.tsv", &tm);
	assert_int_equal(ct_path_join(path, sizeof(path), f->c.srv.dir, name), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		int tabs = 0;

		for (const char *c = line; *c; c++)
			tabs += *c == '\t';
		lw += strncmp(line, "wu\t", 3) == 0;
		lr += strncmp(line, "result\t", 7) == 0;
		/* the table, then its 10 (wu) or 15 (result) columns */
		assert_int_equal(tabs, line[0] == 'w' ? 10 : 15);
	}
	fclose(fp);
	assert_int_equal(lw, nwu);
	assert_int_equal(lr, nres);
}

/* A job whose WU hits its error cap (1) is flagged, with its round, and
 * its other WU stops in the same pass. */
static void test_error_cap_flags_job(void **state)
{
	int64_t job2, a, b;
	struct wu w;
	char msg[256];
	struct ct_db_res *res = NULL;
	struct fx *f = *state;

	/* errors of hosts with no valid result do not count against a WU's
	 * cap (worklimit.h): the two failing hosts have proven themselves */
	honest_wu(f, 1, 0, 0, 1, NULL);
	job2 = submit(f, "doomed job", 1);
	wu_load(f, job2, 1, 0, &w);
	run_daemons(f);
	a = send_to(f, &w, 0);
	report_error(f, &w, a);
	run_daemons(f);
	assert_int_equal(qint(f, "SELECT status FROM job WHERE id=?", job2), CT_JOB_RUNNING);
	b = send_to(f, &w, 1);
	report_error(f, &w, b);
	/* the job's other WU is due at once too: one transaction handles both
	 * (the lower id first) and must see the job stopped by the first */
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET transition_time=? WHERE "
				    "jobid=? AND id>?", ct_db_now(f->c.db), job2, w.id), 1);
	assert_true(ct_transitioner_run_once(&f->c.srv, f->c.db) >= 2);
	assert_int_equal(qint(f, "SELECT error_mask FROM workunit WHERE id=?", w.id),
			 CT_WU_ERR_TOO_MANY_ERRORS);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=1 "
			      "AND error_mask=0", job2), 0);
	run_daemons(f);
	assert_int_equal(qint(f, "SELECT error_mask FROM workunit WHERE id=?", w.id),
			 CT_WU_ERR_TOO_MANY_ERRORS);
	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT status, error_message FROM job WHERE id=?",
				     job2), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_JOB_ERROR);
	snprintf(msg, sizeof(msg), "%s", ct_db_str(res, 1));
	ct_db_res_free(res);
	assert_non_null(strstr(msg, "too many errors"));
	assert_int_equal(qint(f, "SELECT status FROM `round` WHERE jobid=? AND idx=1", job2),
			 CT_ROUND_ERROR);
	/* nothing of the job is handed out any more */
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM result WHERE jobid=? AND server_state=2", job2), 0);
	assert_int_equal(qint(f, "SELECT COUNT(*) FROM workunit WHERE jobid=? AND assimilate_state<>2",
			      job2), 0);
	wu_free(&w);
}

/* ---- one pass, one error policy (daemon_pass.h) ---------------------------- */

/* A fake daemon: ids 1..3 are due; the handler fails for `bad` and records
 * which ids it saw. */
struct fake_daemon {
	int64_t bad;
	int seen[4];
};

static int fake_claim(struct ct_server *srv, struct ct_db *db, int64_t *ids, size_t cap,
		      size_t *n, void *arg)
{
	(void)srv;
	(void)db;
	(void)arg;
	*n = 0;
	for (int64_t id = 1; id <= 3 && *n < cap; id++)
		ids[(*n)++] = id;
	return 0;
}

static int fake_handle(struct ct_server *srv, struct ct_db *db, int64_t id, void *arg)
{
	struct fake_daemon *d = arg;

	(void)srv;
	(void)db;
	d->seen[id]++;
	return id == d->bad ? ct_error(CT_EINVAL, "item %lld is poisoned", (long long)id) : 1;
}

/* Pass with a fresh record of what the handler saw; returns the pass's rc. */
static int fake_pass(struct fx *f, const struct ct_pass *p, struct fake_daemon *d)
{
	memset(d->seen, 0, sizeof(d->seen));
	return ct_pass_run(&f->c.srv, f->c.db, p, d);
}

/* An item that always fails is logged, backed off 10 s, 20 s, ... and the
 * items behind it are handled in every pass, also when the batch is
 * smaller than the claim; once it succeeds its failures are forgotten. */
static void test_pass_backs_off_failing_items(void **state)
{
	struct fx *f = *state;
	static struct ct_pass_backoff bo = CT_PASS_BACKOFF_INIT;
	const struct ct_pass p = { .name = "fake", .batch = 2, .claim = fake_claim,
				   .handle = fake_handle, .backoff = &bo };
	struct fake_daemon d = { .bad = 1 };

	assert_int_equal(fake_pass(f, &p, &d), 1);	/* 1 failed, 2 done; 3 beyond the batch */
	assert_int_equal(d.seen[1] + d.seen[2] + d.seen[3], 2);
	assert_int_equal(d.seen[3], 0);
	assert_int_equal(ct_pass_failures(&bo, 1), 1);
	assert_int_equal(fake_pass(f, &p, &d), 2);	/* 1 left out: 2 and 3 */
	assert_int_equal(d.seen[1], 0);
	assert_int_equal(d.seen[2] + d.seen[3], 2);
	f->c.t += CT_PASS_BACKOFF_FIRST;		/* its 10 s are over */
	assert_int_equal(fake_pass(f, &p, &d), 1);
	assert_int_equal(d.seen[1], 1);
	assert_int_equal(ct_pass_failures(&bo, 1), 2);
	f->c.t += CT_PASS_BACKOFF_FIRST;		/* 10 of its 20 s */
	fake_pass(f, &p, &d);
	assert_int_equal(d.seen[1], 0);
	f->c.t += CT_PASS_BACKOFF_FIRST;
	d.bad = 0;					/* mended */
	assert_int_equal(fake_pass(f, &p, &d), 2);
	assert_int_equal(d.seen[1], 1);
	assert_int_equal(ct_pass_failures(&bo, 1), 0);
}

/* Groups: ids 1..3 two at a time; a group that holds the bad one fails
 * whole (as one transaction), its ids are then handled alone, and only
 * the bad one is backed off. */
static int fake_handle_many(struct ct_server *srv, struct ct_db *db, const int64_t *ids,
			    size_t n, void *arg)
{
	struct fake_daemon *d = arg;

	(void)srv;
	(void)db;
	assert_true(n >= 1 && n <= 2);
	for (size_t i = 0; i < n; i++)
		if (ids[i] == d->bad)
			return ct_error(CT_EINVAL, "a group with item %lld", (long long)d->bad);
	for (size_t i = 0; i < n; i++)
		d->seen[ids[i]] += 10;	/* by the group */
	return (int)n;
}

static void test_pass_groups_fall_back_alone(void **state)
{
	struct fx *f = *state;
	static struct ct_pass_backoff bo = CT_PASS_BACKOFF_INIT;
	const struct ct_pass p = { .name = "fake", .batch = 3, .claim = fake_claim,
				   .handle = fake_handle, .handle_many = fake_handle_many,
				   .group = 2, .backoff = &bo };
	struct fake_daemon d = { .bad = 2 };

	/* {1, 2} fails, 1 and 2 alone: 1 done, 2 backed off; {3} as a group */
	assert_int_equal(fake_pass(f, &p, &d), 2);
	assert_int_equal(d.seen[1], 1);
	assert_int_equal(d.seen[2], 1);
	assert_int_equal(d.seen[3], 10);
	assert_int_equal(ct_pass_failures(&bo, 1), 0);
	assert_int_equal(ct_pass_failures(&bo, 2), 1);
	/* 2 left out: {1, 3} as one group */
	assert_int_equal(fake_pass(f, &p, &d), 2);
	assert_int_equal(d.seen[1] + d.seen[2] + d.seen[3], 20);
	assert_int_equal(d.seen[2], 0);
}

/* Rows of no WU named "<WU wuid's name>-lo" .. "-hi"; the WU's name into
 * wname (cap bytes) when it is not NULL. */
static void take_names(struct fx *f, int64_t wuid, int lo, int hi, char *wname, size_t cap)
{
	struct ct_db_res *res = NULL;
	char name[96];

	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT name FROM workunit WHERE id=?",
				     wuid), 0);
	assert_int_equal(ct_db_next(res), 1);
	for (int i = lo; i <= hi; i++) {
		snprintf(name, sizeof(name), "%s-%d", ct_db_str(res, 0), i);
		assert_int_equal(CT_DB_EXEC(f->c.db, "INSERT INTO result (workunitid, jobid, name, "
					    "create_time) VALUES (0, 0, ?, ?)", name,
					    ct_db_now(f->c.db)), 1);
	}
	if (wname)
		snprintf(wname, cap, "%s", ct_db_str(res, 0));
	ct_db_res_free(res);
}

/* A WU whose transition always fails (the names of the result it must
 * create are taken by other rows) heads the transitioner's batch, ordered
 * by transition_time; the WU behind it is still handled: its errored
 * replica is replaced in the same pass. */
static void test_poisoned_wu_does_not_stall(void **state)
{
	struct fx *f = *state;
	struct wu w0, w1;
	int64_t a;

	wu_load(f, f->jobid, 1, 0, &w0);
	wu_load(f, f->jobid, 1, 1, &w1);
	/* w0 wants a third replica; the names it tries, <w0>-2 .. -5, are taken
	 * by rows of no WU */
	take_names(f, w0.id, 2, 5, NULL, 0);
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET target_nresults=3, "
				    "transition_time=1 WHERE id=?", w0.id), 1);
	/* w1's replica fails on its host: the transitioner must replace it */
	a = send_to(f, &w1, 0);
	report_error(f, &w1, a);
	assert_int_equal(unsent(f, &w1), 1);
	assert_true(ct_transitioner_run_once(&f->c.srv, f->c.db) >= 1);
	assert_int_equal(unsent(f, &w1), 2);		/* replaced behind the poisoned WU */
	assert_int_equal(qint(f, "SELECT transition_time FROM workunit WHERE id=?", w0.id), 1);
	/* the next pass leaves w0 out and does not fail */
	assert_true(ct_transitioner_run_once(&f->c.srv, f->c.db) >= 0);
	check_round_stats(f);	/* the group's rolled-back insert counted nothing */
	wu_free(&w0);
	wu_free(&w1);
}

/* A new replica's name taken by a row of no WU: the WU's next name is
 * used, in the same pass as another WU's new replica, and every round's
 * counters still equal a recount. */
static void test_taken_name_skipped(void **state)
{
	struct fx *f = *state;
	struct wu w0, w1;
	struct ct_db_res *res = NULL;
	char name[96], wname[72];
	int64_t a;

	wu_load(f, f->jobid, 1, 0, &w0);
	wu_load(f, f->jobid, 1, 1, &w1);
	take_names(f, w0.id, 2, 2, wname, sizeof(wname));
	assert_int_equal(CT_DB_EXEC(f->c.db, "UPDATE workunit SET target_nresults=3, "
				    "transition_time=1 WHERE id=?", w0.id), 1);
	a = send_to(f, &w1, 0);
	report_error(f, &w1, a);
	assert_true(ct_transitioner_run_once(&f->c.srv, f->c.db) >= 2);
	snprintf(name, sizeof(name), "%s-3", wname);
	assert_int_equal(CT_DB_QUERY(f->c.db, &res, "SELECT workunitid, server_state FROM result "
				     "WHERE name=?", name), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), w0.id);
	assert_int_equal(ct_db_int(res, 1), CT_RS_UNSENT);
	ct_db_res_free(res);
	assert_int_equal(unsent(f, &w0), 3);
	assert_int_equal(unsent(f, &w1), 2);	/* replaced in the same pass */
	check_round_stats(f);
	wu_free(&w0);
	wu_free(&w1);
}

/* Each case runs on its own fixture (setup/teardown): any one of them can
 * run alone, in any order (`test_daemons 'test_purge'`: a cmocka filter
 * pattern, * and ? allowed). */
CT_DFX_MAIN("test_daemons", setup, test_honest_pair_credited, test_bad_results_rejected,
	test_round_average, test_round_receipts, test_chains_parting_and_receipt,
	test_chains_int8, test_receipt_settled_chain,
	test_receipt_unvouched_chain, test_deadline_resends, test_early_reissue,
	test_racing_validators_and_job_done,
	test_file_deleter, test_purge, test_error_cap_flags_job,
	test_pass_backs_off_failing_items, test_pass_groups_fall_back_alone,
	test_poisoned_wu_does_not_stall, test_taken_name_skipped)
