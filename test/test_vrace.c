/*
 * Two validators in two processes against the same work units, many
 * times, on a real MariaDB server. Run by
 * test/vrace_mariadbd.sh, which starts a private mariadbd and passes its
 * URL in CT_TEST_DB_URL (without it the test is skipped, exit 77).
 *
 * A job's WUs each get two honest results; per pass every WU starts with
 * only the first reported, both validators poll, and the second report
 * lands at a random moment, often while a validator is deciding the first
 * result alone. The race of the issue: one validator marks the first
 * result inconclusive while the other, which read both results as new,
 * validates and closes the WU; the first result stays inconclusive with no
 * credit. After every pass each WU must have a canonical result and both
 * results must be valid.
 *
 * The second part gives the two processes instance names, so they share
 * the WUs by id mod 2 (instance.h): each computes a disjoint share and
 * every pass still ends with every result valid.
 */
#include "ct_test.h"
#include "validate/credit.h"
#include "daemon_fixture.h"
#include "data/result_state.h"
#include "data/wu_state.h"
#include "daemons/daemons.h"
#include "data/db.h"
#include "daemons/instance.h"
#include "cmd/roles.h"
#include "data/server.h"
#include "daemons/wg.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define NWU 4
#define PASSES 40
#define SHARED_PASSES 8

struct shm {
	int pause, quit;
	int paused[2], items[2], errors[2];
	long share_n[2], share_i[2];
};

static struct {
	char *dir;
	struct ct_server srv;
	struct ct_db *db;
	char model[4200], train[4200], eval[4200];
	int64_t jobid, users[2], hosts[2];
	int64_t wu[NWU], a[NWU], b[NWU];
	struct shm *shm;
	pid_t kids[2];
} F;

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static double urand(void)
{
	return ct_dfx_urand(&rng);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- fixture ------------------------------------------------------------------- */

static int make_inputs(void)
{
	const struct ct_model_config cfg = { .maxT = 16, .V = 64, .L = 1, .NH = 2, .C = 16,
					    .Vp = 64 };

	return ct_dfx_make_inputs(&cfg, F.dir, &rng, F.model, F.train, F.eval);
}

static int setup(void **state)
{
	int rc;

	(void)state;
	rc = ct_dfx_open("vrace", getenv("CT_TEST_DB_URL"), 0, &F.dir, &F.srv, &F.db);
	if (rc == 0) rc = make_inputs();
	if (rc < 0) {
		fprintf(stderr, "setup: %s\n", ct_errmsg(rc));
		return -1;
	}
	F.shm = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return F.shm == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	ct_dfx_close(F.dir, &F.srv, F.db);
	return 0;
}

/* The result's upload: the honest weights encoded against the WU's base. */
static void write_upload(int64_t rid, int h, const struct ct_gpt2 *base, const char *model_sha,
			 const float *w)
{
	static const struct ct_delta_model dm = { 16, 64, 64, 1, 2, 16 };
	struct ct_buf out = CT_BUF_INIT(0);
	unsigned char base_sha[32];
	char usha[65];
	int64_t now = ct_db_now(F.db);

	assert_int_equal(ct_hex_decode(model_sha, base_sha, 32), 0);
	assert_int_equal(ct_delta_encode(base->params, w, base->lay.total, &dm, base_sha,
					 CT_DELTA_LOSSLESS, -1, &out), 0);
	ct_dfx_upload(&F.srv, F.db, rid, out.data, out.len, usha);
	assert_int_equal(CT_DB_EXEC(F.db, "UPDATE result SET hostid=?, userid=?, sent_time=?, "
				    "report_deadline=?, received_time=?, upload_time=?, "
				    "upload_size=?, conforming=1, upload_sha256=? WHERE id=?",
				    F.hosts[h], F.users[h],
				    now, now + 86400, now, now,
				    (int64_t)out.len, usha, rid), 1);
	ct_buf_free(&out);
}

/* WU `shard` of the job, two results with honest uploads. */
static void prepare_wu(int shard)
{
	struct ct_db_res *res = NULL;
	struct ct_dfx_wu row;
	struct ct_gpt2 base;
	float *honest;
	int64_t id;

	ct_dfx_wu_row(F.db, F.jobid, 1, shard, &row);
	id = row.id;
	honest = ct_dfx_wu_run(&F.srv, &row, &row.hp, &base, 0);
	F.wu[shard] = id;
	assert_int_equal(CT_DB_QUERY(F.db, &res, "SELECT id FROM result WHERE workunitid=? "
				     "ORDER BY id LIMIT 2", id), 0);
	assert_int_equal(ct_db_next(res), 1);
	F.a[shard] = ct_db_int(res, 0);
	assert_int_equal(ct_db_next(res), 1);
	F.b[shard] = ct_db_int(res, 0);
	ct_db_res_free(res);
	write_upload(F.a[shard], 0, &base, row.model_sha, honest);
	write_upload(F.b[shard], 1, &base, row.model_sha, honest);
	ct_gpt2_free(&base);
	free(honest);
}

static void make_job(void)
{
	struct ct_job_spec spec = {
		.name = "race", .shards = NWU, .rounds = 1, .steps = 2, .batch = 2, .seq = 8,
		.lr = 1e-2, .quorum = 2, .replicas = 2, .max_error_results = 10,
		.max_total_results = 10, .tolerance = 1e-3, .loss_margin = 0.5,
		.adaptive = 0, .model_path = F.model, .train_path = F.train,
		.eval_path = F.eval,
	};

	for (int i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "racer%d", i);
		F.users[i] = ct_dfx_add_user(F.db, name, 0, &F.hosts[i]);
	}
	assert_int_equal(ct_wg_submit(&F.srv, F.db, &spec, &F.jobid), 0);
	while (ct_transitioner_run_once(&F.srv, F.db) > 0)
		;
	for (int s = 0; s < NWU; s++)
		prepare_wu(s);
}

/* ---- the validator processes ------------------------------------------------------ */

static void kid_main(int idx, const char *instance)
{
	struct ct_db *db = NULL;
	int64_t nruns = 0, n = 1, i = 0;
	time_t beat = 0;

	if (instance) {
		if (ct_instance_setup(&F.srv, instance) < 0)
			_exit(2);
		ct_instance_set_role("validator");
	}
	if (ct_db_open(&db, F.srv.clock) < 0)
		_exit(3);
	while (!__atomic_load_n(&F.shm->quit, __ATOMIC_SEQ_CST)) {
		int rc;

		if (__atomic_load_n(&F.shm->pause, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&F.shm->paused[idx], 1, __ATOMIC_SEQ_CST);
			usleep(1000);
			continue;
		}
		if (instance && time(NULL) != beat) {
			beat = time(NULL);
			if (ct_instance_beat(db, "validator", nruns, 0, NULL) == 0 &&
			    ct_instance_share(db, &n, &i) == 0) {
				F.shm->share_n[idx] = (long)n;
				F.shm->share_i[idx] = (long)i;
			}
		}
		rc = ct_validator_run_once(&F.srv, db);
		nruns++;
		if (rc > 0)
			__atomic_add_fetch(&F.shm->items[idx], rc, __ATOMIC_SEQ_CST);
		if (rc < 0)
			__atomic_add_fetch(&F.shm->errors[idx], 1, __ATOMIC_SEQ_CST);
		if (rc <= 0)
			usleep(300);
	}
	if (instance)
		ct_instance_forget(db, "validator");
	ct_db_close(db);
	_exit(0);
}

static void start_kids(const char *inst0, const char *inst1)
{
	memset(F.shm, 0, sizeof(*F.shm));
	F.shm->pause = 1;
	for (int k = 0; k < 2; k++) {
		F.kids[k] = fork();
		assert_true(F.kids[k] >= 0);
		if (F.kids[k] == 0)
			kid_main(k, k == 0 ? inst0 : inst1);
	}
}

static void stop_kids(void)
{
	__atomic_store_n(&F.shm->quit, 1, __ATOMIC_SEQ_CST);
	for (int k = 0; k < 2; k++) {
		int st = 0;

		assert_int_equal(waitpid(F.kids[k], &st, 0), F.kids[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

/* Stop both validators between two run_once calls. */
static void pause_kids(void)
{
	F.shm->paused[0] = F.shm->paused[1] = 0;
	__atomic_store_n(&F.shm->pause, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&F.shm->paused[0], __ATOMIC_SEQ_CST) ||
	       !__atomic_load_n(&F.shm->paused[1], __ATOMIC_SEQ_CST))
		usleep(200);
}

/* ---- one pass -------------------------------------------------------------------- */

static int64_t qint(const char *sql, int64_t arg)
{
	return ct_dfx_qint(F.db, sql, arg);
}

/* Every WU back to "first result reported, second in progress". */
static void reset_wus(void)
{
	for (int s = 0; s < NWU; s++) {
		assert_true(CT_DB_EXEC(F.db, "UPDATE result SET server_state=?, outcome=?, "
				       "validate_state=? WHERE id=?", CT_RS_OVER,
				       CT_RO_SUCCESS, CT_VS_INIT, F.a[s]) >= 0);
		assert_true(CT_DB_EXEC(F.db, "UPDATE result SET server_state=?, outcome=?, "
				       "validate_state=? WHERE id=?", CT_RS_IN_PROGRESS,
				       CT_RO_INIT, CT_VS_INIT, F.b[s]) >= 0);
		/* no shortcut from an earlier pass: each pass decodes and probes */
		assert_true(CT_DB_EXEC(F.db, "DELETE FROM result_check WHERE resultid IN (?, ?)",
				       F.a[s], F.b[s]) >= 0);
		assert_true(CT_DB_EXEC(F.db, "UPDATE workunit SET canonical_resultid=0, "
				       "need_validate=1, assimilate_state=?, target_nresults=2 "
				       "WHERE id=?", CT_AS_INIT, F.wu[s]) >= 0);
	}
}

/* The second reports, as the scheduler and transitioner leave them. */
static void report_second(void)
{
	for (int s = 0; s < NWU; s++) {
		assert_int_equal(CT_DB_EXEC(F.db, "UPDATE result SET server_state=?, outcome=? "
					    "WHERE id=?", CT_RS_OVER, CT_RO_SUCCESS,
					    F.b[s]), 1);
		assert_int_equal(CT_DB_EXEC(F.db, "UPDATE workunit SET need_validate=1 WHERE id=?",
					    F.wu[s]), 1);
	}
}

/* Let the validators run until no WU of the job needs them. Seconds. */
static double settle(void)
{
	double t0 = now_s();

	for (;;) {
		__atomic_store_n(&F.shm->pause, 0, __ATOMIC_SEQ_CST);
		usleep(2000);
		if (qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND need_validate=1",
			 F.jobid) > 0) {
			assert_true(now_s() - t0 < 60);
			continue;
		}
		pause_kids();	/* nothing in flight: the count is final */
		if (qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND need_validate=1",
			 F.jobid) == 0)
			return now_s() - t0;
	}
}

/* One pass; returns how many results ended other than valid. */
static int one_pass(double window)
{
	int bad;

	pause_kids();
	reset_wus();
	__atomic_store_n(&F.shm->pause, 0, __ATOMIC_SEQ_CST);
	usleep((useconds_t)(urand() * window * 1e6));
	report_second();
	settle();
	bad = (int)qint("SELECT COUNT(*) FROM result WHERE jobid=? AND validate_state<>1",
			F.jobid);
	bad += (int)qint("SELECT COUNT(*) FROM workunit WHERE jobid=? AND "
			 "canonical_resultid=0", F.jobid);
	return bad;
}

/* How long the validators take over the first results alone. */
static double calibrate(void)
{
	pause_kids();
	reset_wus();
	return settle();
}

static void test_two_validators_same_wus(void **state)
{
	double window;
	int stuck = 0, passes_bad = 0;

	(void)state;
	make_job();
	start_kids(NULL, NULL);
	window = calibrate();
	for (int p = 0; p < PASSES; p++) {
		int bad = one_pass(window);

		stuck += bad;
		passes_bad += bad > 0;
	}
	pause_kids();
	printf("# %d passes of %d WUs, window %.1f ms: %d result(s) left undecided in %d "
	       "pass(es); items %d + %d, errors %d + %d\n", PASSES, NWU, window * 1e3, stuck,
	       passes_bad, F.shm->items[0], F.shm->items[1], F.shm->errors[0],
	       F.shm->errors[1]);
	stop_kids();
	assert_int_equal(F.shm->errors[0] + F.shm->errors[1], 0);
	assert_int_equal(stuck, 0);
	/* credit once per result, however many passes validated it */
	assert_int_equal(qint("SELECT COUNT(*) FROM credit_event WHERE workunitid IN "
			      "(SELECT id FROM workunit WHERE jobid=?)", F.jobid), 2 * NWU);
}

static void test_instances_share_by_id(void **state)
{
	double window;
	int stuck = 0;

	(void)state;
	start_kids("v0", "v1");
	window = calibrate();
	sleep(2);	/* both have beaten and read the other's beat */
	calibrate();
	for (int p = 0; p < SHARED_PASSES; p++)
		stuck += one_pass(window);
	pause_kids();
	printf("# shared: v0 share %ld of %ld, v1 share %ld of %ld; items %d + %d\n",
	       F.shm->share_i[0], F.shm->share_n[0], F.shm->share_i[1], F.shm->share_n[1],
	       F.shm->items[0], F.shm->items[1]);
	assert_int_equal(F.shm->share_n[0], 2);
	assert_int_equal(F.shm->share_n[1], 2);
	assert_int_equal(F.shm->share_i[0], 0);
	assert_int_equal(F.shm->share_i[1], 1);
	assert_true(F.shm->items[0] > 0 && F.shm->items[1] > 0);	/* both worked */
	stop_kids();
	assert_int_equal(stuck, 0);
	assert_int_equal(qint("SELECT COUNT(*) FROM role_heartbeat WHERE role='validator' AND "
			      "pid<>?", 0), 0);	/* clean stops forgot themselves */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_validators_same_wus),
		cmocka_unit_test(test_instances_share_by_id),
	};

	if (getenv("CT_TEST_DB_URL") == NULL) {
		printf("skip: CT_TEST_DB_URL not set (test/vrace_mariadbd.sh sets it)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
