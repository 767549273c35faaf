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
 * One job goes through both rounds: honest pairs validate and are credited
 * (user, host, team; once); each bad result is rejected without credit and
 * replaced by a new replica; disagreement raises the replication; the
 * round closes with the average of the canonical results (checked bit for
 * bit) and opens the next; a missed deadline is re-sent; two validators
 * racing on one WU grant credit once; the job finishes; the file deleter
 * removes uploads and shards but keeps the models. A second job hits its
 * error cap and is flagged.
 */
#include "ct_test.h"
#include "credit.h"
#include "daemon_fixture.h"
#include "daemons.h"
#include "eval.h"
#include "db.h"
#include "roles.h"
#include "server.h"
#include "wg.h"
#include "ct_avg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

struct fx {
	char *dir;
	struct ct_server srv;
	struct ct_db *db;
	char model[4200], train[4200], eval[4200];
	int64_t jobid, team, users[6], hosts[6];
};

static struct fx F;

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double urand(void)
{
	return ct_dfx_urand(&rng);
}

/* ---- fixture ------------------------------------------------------------------- */

static int make_inputs(void)
{
	const struct ct_gpt2_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 16,
					    .Vp = 64 };

	return ct_dfx_make_inputs(&cfg, F.dir, &rng, F.model, F.train, F.eval);
}

static int64_t add_user(const char *name, int64_t team, int64_t *hostid)
{
	return ct_dfx_add_user(F.db, name, team, hostid);
}

static int64_t submit(const char *name, int max_errors)
{
	struct ct_job_spec spec = {
		.name = name, .shards = 2, .rounds = 2, .steps = 3, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 2, .max_error_results = max_errors,
		.max_total_results = 10, .tolerance = 1e-3, .loss_margin = 0.5,
		.adaptive = 0, .model_path = F.model, .train_path = F.train,
		.eval_path = F.eval,
	};
	int64_t id = 0;

	assert_int_equal(ct_wg_submit(&F.srv, F.db, &spec, &id), 0);
	return id;
}

static int setup(void **state)
{
	int rc;

	(void)state;
	rc = ct_dfx_open("daemons test", NULL, 1, &F.dir, &F.srv, &F.db);
	if (rc == 0) rc = make_inputs();
	if (rc < 0) {
		fprintf(stderr, "setup: %s\n", ct_errmsg(rc));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ct_dfx_close(F.dir, &F.srv, F.db);
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
static void wu_load(int64_t jobid, int idx, int shard, struct wu *w)
{
	struct ct_dfx_wu row;

	memset(w, 0, sizeof(*w));
	ct_dfx_wu_row(F.db, jobid, idx, shard, &row);
	w->id = row.id;
	memcpy(w->model_sha, row.model_sha, sizeof(w->model_sha));
	memcpy(w->data_sha, row.data_sha, sizeof(w->data_sha));
	w->honest = ct_dfx_wu_run(&F.srv, &row, &row.hp, &w->base, 0);
}

/* An unsent result of the WU, sent to `host` (what the scheduler does). */
static int64_t send_to(const struct wu *w, int h)
{
	int64_t rid = 0, now = ct_db_now();

	assert_int_equal(ct_db_query_int(F.db, &rid, "SELECT id FROM result WHERE workunitid=? "
					 "AND server_state=? ORDER BY id LIMIT 1", "li", w->id,
					 CT_RS_UNSENT), 0);
	assert_int_equal(ct_db_exec(F.db, "UPDATE result SET server_state=?, hostid=?, userid=?, "
				    "sent_time=?, report_deadline=? WHERE id=? AND server_state=?",
				    "illllli", CT_RS_IN_PROGRESS, F.hosts[h], F.users[h], now,
				    now + 86400, rid, CT_RS_UNSENT), 1);
	assert_true(ct_db_exec(F.db, "UPDATE workunit SET transition_time=LEAST(transition_time, ?) "
			       "WHERE id=?", "ll", now + 86400, w->id) >= 0);
	return rid;
}

/* The client's upload and report of result rid: weights `res` (n floats)
 * encoded against the WU's base. */
static void report(const struct wu *w, int64_t rid, const float *res, size_t n, int conforming)
{
	static const struct ct_delta_model dm = { 16, 64, 64, 1, 2, 16 };
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];
	char usha[65];
	int64_t now = ct_db_now();

	assert_int_equal(ct_hex_decode(w->model_sha, base_sha, 32), 0);
	assert_int_equal(ct_delta_encode(w->base.params, res, n, &dm, base_sha,
					 CT_DELTA_LOSSLESS, -1, &out), 0);
	/* the file and its hash, as the upload handler writes them */
	ct_dfx_upload(&F.srv, F.db, rid, out.data, out.len, usha);
	assert_int_equal(ct_db_exec(F.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, upload_time=?, upload_size=?, conforming=?, "
				    "upload_sha256=? WHERE id=?", "iilllisl", CT_RS_OVER,
				    CT_RO_SUCCESS, now, now, (int64_t)out.len, conforming, usha,
				    rid), 1);
	assert_int_equal(ct_db_exec(F.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    "ll", now, w->id), 1);
	ct_buf_free(&out);
}

static void report_error(const struct wu *w, int64_t rid)
{
	int64_t now = ct_db_now();

	assert_int_equal(ct_db_exec(F.db, "UPDATE result SET server_state=?, outcome=?, "
				    "received_time=?, exit_status=1 WHERE id=?", "iill",
				    CT_RS_OVER, CT_RO_CLIENT_ERROR, now, rid), 1);
	assert_int_equal(ct_db_exec(F.db, "UPDATE workunit SET transition_time=? WHERE id=?",
				    "ll", now, w->id), 1);
}

/* Run transitioner, validator, assimilator until none has work. */
static void run_daemons(void)
{
	ct_dfx_run_daemons(&F.srv, F.db);
}

static int64_t qint(const char *sql, int64_t arg)
{
	return ct_dfx_qint(F.db, sql, arg);
}

static double qdouble(const char *sql, int64_t arg)
{
	return ct_dfx_qdouble(F.db, sql, arg);
}

static int vstate(int64_t rid)
{
	return (int)qint("SELECT validate_state FROM result WHERE id=?", rid);
}

static int unsent(const struct wu *w)
{
	return (int)qint("SELECT COUNT(*) FROM result WHERE workunitid=? AND server_state=2", w->id);
}

/* ---- the scenario --------------------------------------------------------------- */

static struct wu R1[2];		/* round 1's WUs */
static int64_t canon1[2];	/* their canonical results */
static double credit1;		/* credit of one result */

/* The per-round counters the result triggers keep (migration 004) equal
 * a recount of every round's results. */
static void check_round_stats(void)
{
	struct ct_db_res *res = NULL;
	size_t n = 0;

	assert_int_equal(ct_db_query(F.db, &res,
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
		"w.roundid = r.id) FROM `round` r JOIN round_stat s ON s.roundid = r.id", ""), 0);
	while (ct_db_next(res) > 0) {
		for (int k = 1; k <= 5; k++)
			assert_int_equal(ct_db_int(res, k), ct_db_int(res, k + 6));
		assert_true(fabs(ct_db_double(res, 6) - ct_db_double(res, 12)) < 1e-9);
		n++;
	}
	ct_db_res_free(res);
	assert_int_equal(n, qint("SELECT COUNT(*) FROM `round` WHERE id>?", 0));
	/* and the per-(job, user) ones a recount of valid results */
	assert_int_equal(qint("SELECT COUNT(*) FROM (SELECT jobid, userid, COUNT(*) n, "
			      "SUM(granted_credit) c FROM result WHERE validate_state = 1 AND "
			      "jobid > ? GROUP BY jobid, userid) x LEFT JOIN job_user_stat s ON "
			      "s.jobid = x.jobid AND s.userid = x.userid WHERE s.nvalid IS NULL "
			      "OR s.nvalid <> x.n OR ABS(s.credit - x.c) > 1e-9", 0), 0);
	assert_true(qint("SELECT SUM(nvalid) FROM job_user_stat WHERE jobid > ?", 0) ==
		    qint("SELECT COUNT(*) FROM result WHERE validate_state = 1 AND jobid > ?", 0));
}

static void test_honest_pair_credited(void **state)
{
	int64_t a, b, ev;

	(void)state;
	F.team = 0;
	assert_int_equal(ct_db_exec(F.db, "INSERT INTO team (create_time, name) VALUES (?, ?)",
				    "ls", ct_db_now(), "testers"), 1);
	F.team = ct_db_last_id(F.db);
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user%d", i);
		F.users[i] = add_user(name, i < 2 ? F.team : 0, &F.hosts[i]);
	}
	F.jobid = submit("daemons job", 5);
	wu_load(F.jobid, 1, 0, &R1[0]);
	wu_load(F.jobid, 1, 1, &R1[1]);
	a = send_to(&R1[0], 0);
	b = send_to(&R1[0], 1);
	run_daemons();
	assert_int_equal(vstate(a), CT_VS_INIT);	/* nothing reported yet */
	/* while its clients train, the assimilator evaluates the first
	 * round's base (test_round_average: the same loss ends on the job) */
	assert_int_equal(qint("SELECT COUNT(*) FROM `round` WHERE jobid=? AND idx=1 AND "
			      "status=1 AND base_eval_loss > 0", F.jobid), 1);
	report(&R1[0], a, R1[0].honest, R1[0].base.lay.total, 1);
	run_daemons();
	/* one of a quorum of 2: checked, recorded, waiting */
	assert_int_equal(vstate(a), CT_VS_INCONCLUSIVE);
	assert_int_equal(qint("SELECT COUNT(*) FROM result_check WHERE resultid=?", a), 1);
	{
		/* a checked result is not decoded again: with its upload
		 * gone, the second replica still matches it by hash */
		char path[4200], moved[4300];

		{
			struct ct_db_res *res = NULL;

			assert_int_equal(ct_db_query(F.db, &res, "SELECT name FROM result "
						     "WHERE id=?", "l", a), 0);
			assert_int_equal(ct_db_next(res), 1);
			assert_int_equal(ct_server_upload_path(&F.srv, ct_db_str(res, 0), path,
							       sizeof(path)), 0);
			ct_db_res_free(res);
		}
		snprintf(moved, sizeof(moved), "%s.away", path);
		assert_int_equal(rename(path, moved), 0);
		report(&R1[0], b, R1[0].honest, R1[0].base.lay.total, 1);
		/* b's upload has a's bytes (upload_sha256): b is a's twin and
		 * is not decoded either; gone, it still validates */
		{
			char pb[4200], mb[4300];
			struct ct_db_res *res = NULL;

			assert_int_equal(ct_db_query(F.db, &res, "SELECT name FROM result "
						     "WHERE id=?", "l", b), 0);
			assert_int_equal(ct_db_next(res), 1);
			assert_int_equal(ct_server_upload_path(&F.srv, ct_db_str(res, 0), pb,
							       sizeof(pb)), 0);
			ct_db_res_free(res);
			snprintf(mb, sizeof(mb), "%s.away", pb);
			assert_int_equal(rename(pb, mb), 0);
			run_daemons();
			assert_int_equal(rename(mb, pb), 0);
		}
		assert_int_equal(rename(moved, path), 0);
	}
	assert_int_equal(qint("SELECT COUNT(*) FROM result_check WHERE resultid=?", b), 1);
	assert_int_equal(vstate(a), CT_VS_VALID);
	assert_int_equal(vstate(b), CT_VS_VALID);
	canon1[0] = qint("SELECT canonical_resultid FROM workunit WHERE id=?", R1[0].id);
	assert_true(canon1[0] == a || canon1[0] == b);
	/* credit: from the model and the job, to both, recorded once each */
	credit1 = ct_credit_from_flops(ct_credit_wu_flops(&R1[0].base.cfg, 8, 2, 3));
	assert_true(credit1 > 0.0);
	assert_true(fabs(qdouble("SELECT granted_credit FROM result WHERE id=?", a) - credit1) < 1e-12);
	assert_true(fabs(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[0]) - credit1) < 1e-12);
	assert_true(fabs(qdouble("SELECT total_credit FROM host WHERE id=?", F.hosts[1]) - credit1) < 1e-12);
	assert_true(fabs(qdouble("SELECT total_credit FROM team WHERE id=?", F.team) - 2 * credit1) < 1e-12);
	assert_true(qdouble("SELECT expavg_credit FROM `user` WHERE id=?", F.users[0]) > 0.0);
	assert_int_equal(qint("SELECT consecutive_valid FROM host WHERE id=?", F.hosts[0]), 1);
	ev = qint("SELECT COUNT(*) FROM credit_event WHERE workunitid=?", R1[0].id);
	assert_int_equal(ev, 2);
	/* a second grant for the same result changes nothing */
	assert_int_equal(ct_credit_grant(F.db, a, credit1, ct_db_now()), 0);
	assert_true(fabs(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[0]) - credit1) < 1e-12);
	/* recent average credit decays with a 7-day half-life when the
	 * decay role runs, once per hour at most */
	{
		double rac = qdouble("SELECT expavg_credit FROM `user` WHERE id=?", F.users[0]);
		int64_t t = qint("SELECT expavg_time FROM `user` WHERE id=?", F.users[0]);

		assert_true(ct_credit_decay(F.db, t + 600) == 0);	/* < 1 h: untouched */
		assert_true(ct_credit_decay(F.db, t + 7 * 86400) >= 3);	/* user, host, team */
		assert_true(fabs(qdouble("SELECT expavg_credit FROM `user` WHERE id=?", F.users[0]) -
				 rac / 2) < 1e-9 * rac);
		assert_int_equal(qint("SELECT expavg_time FROM `user` WHERE id=?", F.users[0]),
				 t + 7 * 86400);
		assert_true(fabs(ct_credit_rac_now(rac, (double)t, (double)t + 7 * 86400) - rac / 2) <
			    1e-9 * rac);
		/* total credit is never touched */
		assert_true(fabs(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[0]) -
				 credit1) < 1e-12);
	}
	/* nothing left to validate; the validator finds no work */
	assert_int_equal(qint("SELECT need_validate FROM workunit WHERE id=?", R1[0].id), 0);
	assert_int_equal(ct_validator_run_once(&F.srv, F.db), 0);
}

/* weights for the bad results of WU (1, 1) */
static float *variant(const struct wu *w, const char *what)
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
			v[i] = b + (float)((urand() - 0.5) * 4e-3);
		else
			v[i] = w->honest[i];
	}
	if (strcmp(what, "nan") == 0)
		v[n / 2] = NAN;
	return v;
}

static void test_bad_results_rejected(void **state)
{
	struct wu *w = &R1[1];
	size_t n = w->base.lay.total;
	const char *bad[] = { "lazy", "nan", "x10", "shape" };
	int64_t honest, rid, noise, third;
	float *v;

	(void)state;
	honest = send_to(w, 1);
	report(w, honest, w->honest, n, 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		rid = send_to(w, 2);
		v = variant(w, bad[k]);
		report(w, rid, v, strcmp(bad[k], "shape") == 0 ? n - 1 : n, 0);
		free(v);
		run_daemons();
		assert_int_equal(vstate(rid), CT_VS_INVALID);
		assert_int_equal(qint("SELECT outcome FROM result WHERE id=?", rid),
				 CT_RO_VALIDATE_ERROR);
		assert_int_equal(qint("SELECT COUNT(*) FROM credit_event WHERE resultid=?", rid), 0);
		/* the honest one waits; a replacement replica is out */
		assert_int_equal(vstate(honest), CT_VS_INCONCLUSIVE);
		assert_int_equal(unsent(w), 1);
	}
	assert_int_equal(qint("SELECT consecutive_valid FROM host WHERE id=?", F.hosts[2]), 0);
	assert_int_equal(qint("SELECT nresults_invalid FROM host WHERE id=?", F.hosts[2]), 4);
	assert_int_equal(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[2]), 0);
	/* noise passes the sanity checks but disagrees: one more replica */
	noise = send_to(w, 3);
	v = variant(w, "noise");
	report(w, noise, v, n, 0);
	free(v);
	run_daemons();
	assert_int_equal(vstate(noise), CT_VS_INCONCLUSIVE);
	assert_int_equal(qint("SELECT target_nresults FROM workunit WHERE id=?", w->id), 3);
	assert_int_equal(unsent(w), 1);
	assert_int_equal(qint("SELECT canonical_resultid FROM workunit WHERE id=?", w->id), 0);
	/* the third replica agrees with the honest one */
	third = send_to(w, 4);
	report(w, third, w->honest, n, 0);
	run_daemons();
	canon1[1] = qint("SELECT canonical_resultid FROM workunit WHERE id=?", w->id);
	assert_true(canon1[1] == honest || canon1[1] == third);
	assert_int_equal(vstate(honest), CT_VS_VALID);
	assert_int_equal(vstate(third), CT_VS_VALID);
	assert_int_equal(vstate(noise), CT_VS_INVALID);
	assert_int_equal(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[3]), 0);
	assert_true(fabs(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[1]) -
			 2 * credit1) < 1e-12);
	assert_true(qdouble("SELECT probe_loss FROM result WHERE id=?", honest) > 0.0);
}

static void test_round_average(void **state)
{
	const float *in[2] = { R1[0].honest, R1[1].honest };
	struct ct_gpt2 got = { 0 };
	size_t n = R1[0].base.lay.total;
	float *want = malloc(n * sizeof(float));
	struct ct_db_res *res = NULL;
	char sha[65], path[4200];

	(void)state;
	/* run_daemons() already closed round 1 and opened round 2 */
	assert_int_equal(ct_db_query(F.db, &res, "SELECT status, out_model_sha256, eval_loss, "
				     "base_eval_loss FROM `round` WHERE jobid=? AND idx=1", "l",
				     F.jobid), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_ROUND_DONE);
	snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 1));
	assert_false(ct_db_isnull(res, 2));
	/* training on the learnable data helped */
	assert_true(ct_db_double(res, 2) < ct_db_double(res, 3));
	/* the base loss computed ahead is the job's base loss */
	assert_true(qdouble("SELECT base_eval_loss FROM job WHERE id=?", F.jobid) ==
		    ct_db_double(res, 3));
	ct_db_res_free(res);
	/* the page can say what the losses are over: the default size, or
	 * the whole eval file when it is shorter */
	{
		int64_t nt = qint("SELECT eval_ntokens FROM `round` WHERE jobid=? AND idx=1", F.jobid);

		assert_true(nt > 0 && nt <= CT_SEVAL_DEFAULT_TOKENS);
		assert_int_equal(nt % 16, 0);	/* whole batches of B x T = 2 x 8 */
	}
	assert_int_equal(ct_avg(want, in, 2, n, CT_AVG_MEAN, 0), 0);
	assert_int_equal(ct_server_download_path(&F.srv, sha, path, sizeof(path)), 0);
	assert_int_equal(ct_gpt2_load(path, &got), 0);
	assert_memory_equal(got.params, want, n * sizeof(float));
	assert_int_equal(qint("SELECT keep FROM `file` WHERE sha256=(SELECT out_model_sha256 "
			      "FROM `round` WHERE jobid=? AND idx=1)", F.jobid), 1);
	/* round 2 starts from it */
	assert_int_equal(qint("SELECT COUNT(*) FROM workunit w JOIN `round` r ON "
			      "r.jobid = w.jobid AND r.idx = 1 WHERE w.jobid=? AND "
			      "w.round_idx=2 AND w.model_sha256 = r.out_model_sha256", F.jobid), 2);
	assert_int_equal(qint("SELECT assimilate_state FROM workunit WHERE id=?", R1[0].id),
			 CT_AS_DONE);
	/* A crash after round 2 was opened but before round 1 was recorded:
	 * the next pass redoes the work, gets the same model, and opens
	 * nothing twice. */
	assert_int_equal(ct_db_exec(F.db, "UPDATE `round` SET status=?, out_model_sha256='' "
				    "WHERE jobid=? AND idx=1", "il", CT_ROUND_OPEN, F.jobid), 1);
	assert_int_equal(ct_db_exec(F.db, "UPDATE workunit SET assimilate_state=? WHERE jobid=? "
				    "AND round_idx=1", "il", CT_AS_READY, F.jobid), 2);
	assert_int_equal(ct_assimilator_run_once(&F.srv, F.db), 1);
	assert_int_equal(ct_assimilator_run_once(&F.srv, F.db), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM `round` r1 JOIN `round` r2 ON r2.jobid = "
			      "r1.jobid AND r2.idx = 2 WHERE r1.jobid=? AND r1.idx=1 AND "
			      "r1.status=2 AND r1.out_model_sha256 = r2.model_sha256", F.jobid), 1);
	assert_int_equal(qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND round_idx=2",
			      F.jobid), 2);
	check_round_stats();
	assert_int_equal(qint("SELECT COUNT(*) FROM result WHERE jobid=? AND name LIKE '%-r2-%'",
			      F.jobid), 4);
	ct_gpt2_free(&got);
	free(want);
}

static void test_deadline_resends(void **state)
{
	struct wu w;
	int64_t a, b, c;

	(void)state;
	wu_load(F.jobid, 2, 0, &w);
	a = send_to(&w, 0);
	b = send_to(&w, 1);
	report(&w, a, w.honest, w.base.lay.total, 1);
	run_daemons();
	assert_int_equal(vstate(a), CT_VS_INCONCLUSIVE);
	assert_int_equal(unsent(&w), 0);	/* b may still come back */
	assert_int_equal(qint("SELECT server_state FROM result WHERE id=?", b), CT_RS_IN_PROGRESS);
	ct_db_set_time_offset(2 * 86400);	/* b's deadline passes */
	run_daemons();
	assert_int_equal(unsent(&w), 1);	/* resent */
	assert_int_equal(qint("SELECT outcome FROM result WHERE id=?", b), CT_RO_NO_REPLY);
	assert_int_equal(qint("SELECT nresults_error FROM host WHERE id=?", F.hosts[1]), 1);
	c = send_to(&w, 4);
	report(&w, c, w.honest, w.base.lay.total, 1);
	run_daemons();
	assert_int_equal(vstate(a), CT_VS_VALID);
	assert_int_equal(vstate(c), CT_VS_VALID);
	assert_int_equal(qint("SELECT granted_credit > 0 FROM result WHERE id=?", b), 0);
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

	if (ct_db_open(&db) == 0) {
		r->handled = ct_validator_run_once(r->srv, db);
		ct_db_close(db);
	} else {
		r->handled = -1;
	}
	return NULL;
}

static int64_t race_a;		/* a result reported just now */

static void test_racing_validators_and_job_done(void **state)
{
	struct racer r[2] = { { &F.srv, 0 }, { &F.srv, 0 } };
	pthread_t t[2];
	struct wu w;
	int64_t a, b;
	double total;

	(void)state;
	wu_load(F.jobid, 2, 1, &w);
	a = send_to(&w, 0);
	b = send_to(&w, 5);
	report(&w, a, w.honest, w.base.lay.total, 1);
	report(&w, b, w.honest, w.base.lay.total, 1);
	race_a = a;
	assert_true(ct_transitioner_run_once(&F.srv, F.db) >= 1);
	assert_int_equal(qint("SELECT need_validate FROM workunit WHERE id=?", w.id), 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_true(r[0].handled >= 0 && r[1].handled >= 0);
	assert_int_equal(r[0].handled + r[1].handled, 1);	/* exactly one decided */
	assert_int_equal(qint("SELECT COUNT(*) FROM credit_event WHERE workunitid=?", w.id), 2);
	/* totals agree with the events: nothing granted twice */
	total = qdouble("SELECT SUM(credit) FROM credit_event WHERE userid=?", F.users[0]);
	assert_true(fabs(qdouble("SELECT total_credit FROM `user` WHERE id=?", F.users[0]) - total) < 1e-12);
	assert_true(fabs(total - 3 * credit1) < 1e-12);
	run_daemons();
	assert_int_equal(qint("SELECT status FROM job WHERE id=?", F.jobid), CT_JOB_DONE);
	assert_int_equal(qint("SELECT COUNT(*) FROM job j JOIN `round` r ON r.jobid = j.id AND "
			      "r.idx = 2 WHERE j.id=? AND j.final_model_sha256 = r.out_model_sha256 "
			      "AND j.final_eval_loss IS NOT NULL", F.jobid), 1);
	/* round 2 started where round 1 ended, loss included */
	assert_int_equal(qint("SELECT COUNT(*) FROM `round` r1 JOIN `round` r2 ON "
			      "r2.jobid = r1.jobid AND r2.idx = 2 WHERE r1.jobid=? AND r1.idx = 1 "
			      "AND r2.base_eval_loss = r1.eval_loss", F.jobid), 1);
	assert_int_equal(qint("SELECT COUNT(*) FROM job WHERE id=? AND base_eval_loss IS NOT NULL",
			      F.jobid), 1);
	wu_free(&w);
}

static void upload_of(int64_t rid, char *path, size_t cap)
{
	struct ct_db_res *res = NULL;

	assert_int_equal(ct_db_query(F.db, &res, "SELECT name FROM result WHERE id=?", "l",
				     rid), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_server_upload_path(&F.srv, ct_db_str(res, 0), path, cap), 0);
	ct_db_res_free(res);
}

static void test_file_deleter(void **state)
{
	char path[4200], recent[4200], sha[65];
	struct ct_db_res *res = NULL;
	int n;

	(void)state;
	upload_of(canon1[0], path, sizeof(path));	/* two days old */
	upload_of(race_a, recent, sizeof(recent));	/* just uploaded */
	assert_true(ct_file_exists(path));
	assert_true(ct_file_exists(recent));
	/* canonical uploads kept on request, the other replicas go */
	{
		char other[4200];
		int64_t b = qint("SELECT MAX(id) FROM result WHERE workunitid=? AND "
				 "validate_state=1 AND NOT EXISTS (SELECT 1 FROM workunit w "
				 "WHERE w.canonical_resultid = result.id)", R1[0].id);

		upload_of(b, other, sizeof(other));
		assert_true(ct_file_exists(other));
		assert_int_equal(ct_conf_set(F.srv.conf, "daemons.keep_canonical", "yes"), 0);
		assert_int_equal(ct_conf_set(F.srv.conf, "daemons.upload_grace", "3600"), 0);
		assert_true(ct_file_deleter_run_once(&F.srv, F.db) >= 1);
		assert_true(ct_file_exists(path));
		assert_false(ct_file_exists(other));
		assert_int_equal(ct_conf_set(F.srv.conf, "daemons.keep_canonical", "no"), 0);
	}
	n = ct_file_deleter_run_once(&F.srv, F.db);
	assert_true(n >= 2);	/* round 1's canonical uploads */
	assert_false(ct_file_exists(path));
	assert_true(ct_file_exists(recent));	/* within the grace period */
	/* the job ended just now: its shards are still in their grace period */
	assert_int_equal(qint("SELECT COUNT(*) FROM `file` WHERE jobid=? AND kind='shard' AND "
			      "file_delete_state=0", F.jobid), 2);
	ct_db_set_time_offset(5 * 86400);
	n = ct_file_deleter_run_once(&F.srv, F.db);
	assert_true(n >= 2);
	assert_false(ct_file_exists(recent));
	assert_int_equal(qint("SELECT COUNT(*) FROM result WHERE jobid=? AND file_delete_state<>2 "
			      "AND outcome=1", F.jobid), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM `file` WHERE jobid=? AND kind='shard' AND "
			      "file_delete_state=2", F.jobid), 2);
	assert_int_equal(qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND "
			      "file_delete_state<>2", F.jobid), 0);
	check_round_stats();
	/* with no grace (the default), an upload goes as soon as it may */
	assert_int_equal(ct_conf_set(F.srv.conf, "daemons.upload_grace", "0"), 0);
	/* every round's model and the job's base model stay */
	assert_int_equal(ct_db_query(F.db, &res, "SELECT model_sha256 FROM `round` WHERE jobid=? "
				     "UNION SELECT out_model_sha256 FROM `round` WHERE jobid=?", "ll",
				     F.jobid, F.jobid), 0);
	assert_int_equal(ct_db_nrows(res), 3);
	while (ct_db_next(res) > 0) {
		snprintf(sha, sizeof(sha), "%s", ct_db_str(res, 0));
		assert_int_equal(ct_server_download_path(&F.srv, sha, path, sizeof(path)), 0);
		assert_true(ct_file_exists(path));
	}
	ct_db_res_free(res);
}

/* The finished job's WUs and results go to the archive and out of the
 * database; rounds and their counters stay. */
static void test_purge(void **state)
{
	int64_t nwu = qint("SELECT COUNT(*) FROM workunit WHERE jobid=?", F.jobid);
	int64_t nres = qint("SELECT COUNT(*) FROM result WHERE jobid=?", F.jobid);
	int64_t valid = qint("SELECT SUM(n_valid) FROM round_stat WHERE jobid=?", F.jobid);
	char path[4200], name[64], line[1024];
	time_t now = time(NULL);
	struct tm tm;
	int64_t lw = 0, lr = 0;
	FILE *f;

	(void)state;
	assert_true(nwu >= 4 && nres > nwu);
	/* within its age (7 days by default) nothing goes */
	assert_int_equal(ct_purge_run_once(&F.srv, F.db), 0);
	assert_int_equal(ct_conf_set(F.srv.conf, "daemons.purge_age", "0"), 0);
	assert_int_equal(ct_purge_run_once(&F.srv, F.db), nwu);
	assert_int_equal(ct_purge_run_once(&F.srv, F.db), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM workunit WHERE jobid=?", F.jobid), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM result WHERE jobid=?", F.jobid), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM result_check c LEFT JOIN result r ON "
			      "r.id = c.resultid WHERE r.id IS NULL AND c.resultid>?", 0), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM `round` WHERE jobid=?", F.jobid), 2);
	assert_int_equal(qint("SELECT SUM(n_valid) FROM round_stat WHERE jobid=?", F.jobid),
			 valid);
	gmtime_r(&now, &tm);
	strftime(name, sizeof(name), "archive/purge-%Y-%m.tsv", &tm);
	assert_int_equal(ct_path_join(path, sizeof(path), F.srv.dir, name), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		lw += strncmp(line, "wu\t", 3) == 0;
		lr += strncmp(line, "result\t", 7) == 0;
	}
	fclose(f);
	assert_int_equal(lw, nwu);
	assert_int_equal(lr, nres);
	assert_int_equal(ct_conf_set(F.srv.conf, "daemons.purge_age", "604800"), 0);
}

static void test_error_cap_flags_job(void **state)
{
	int64_t job2, a, b;
	struct wu w;
	char msg[256];
	struct ct_db_res *res = NULL;

	(void)state;
	job2 = submit("doomed job", 1);
	wu_load(job2, 1, 0, &w);
	run_daemons();
	a = send_to(&w, 0);
	report_error(&w, a);
	run_daemons();
	assert_int_equal(qint("SELECT status FROM job WHERE id=?", job2), CT_JOB_RUNNING);
	b = send_to(&w, 1);
	report_error(&w, b);
	run_daemons();
	assert_int_equal(qint("SELECT error_mask FROM workunit WHERE id=?", w.id),
			 CT_WU_ERR_TOO_MANY_ERRORS);
	assert_int_equal(ct_db_query(F.db, &res, "SELECT status, error_message FROM job WHERE id=?",
				     "l", job2), 0);
	assert_int_equal(ct_db_next(res), 1);
	assert_int_equal(ct_db_int(res, 0), CT_JOB_ERROR);
	snprintf(msg, sizeof(msg), "%s", ct_db_str(res, 1));
	ct_db_res_free(res);
	assert_non_null(strstr(msg, "too many errors"));
	assert_int_equal(qint("SELECT status FROM `round` WHERE jobid=? AND idx=1", job2),
			 CT_ROUND_ERROR);
	/* nothing of the job is handed out any more */
	assert_int_equal(qint("SELECT COUNT(*) FROM result WHERE jobid=? AND server_state=2", job2), 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND assimilate_state<>2",
			      job2), 0);
	wu_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_pair_credited),
		cmocka_unit_test(test_bad_results_rejected),
		cmocka_unit_test(test_round_average),
		cmocka_unit_test(test_deadline_resends),
		cmocka_unit_test(test_racing_validators_and_job_done),
		cmocka_unit_test(test_file_deleter),
		cmocka_unit_test(test_purge),
		cmocka_unit_test(test_error_cap_flags_job),
	};
	int rc;

	rc = cmocka_run_group_tests(tests, setup, teardown);
	for (int i = 0; i < 2; i++)
		wu_free(&R1[i]);
	return rc;
}
