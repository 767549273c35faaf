/*
 * Unit tests for the client's LoRA work units (client/cl_lora.c): a
 * scheduler reply's LoRA elements (doc/protocol.md's example) become the
 * task's parameters and then the engine's hp.lora / hp.lora_seed, with
 * the defaults the protocol states; malformed values are refused naming
 * the parameter; a WU without them stays a full-weight WU. A WU's
 * "lora_init" input (a compact-base job's later rounds) is read only when
 * its announced size is the exact size of the WU's adapters and the file
 * is the WU's spec; a full-weight WU with one is refused.
 */
#include "ct_test.h"
#include "cl_lora.h"
#include "cl_rpc.h"
#include "cl_state.h"
#include "cl_task.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_lora_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SHA_A "0a4d55a8d778e5022fab701977c5d840bbc486d0a4d55a8d778e5022fab70197"

/* A reply with one WU whose extra leaf elements are `extra`. */
static struct ct_task *task_from_reply(struct ct_state **st, const char *extra)
{
	char doc[4096];
	struct ct_sched_reply r;
	struct ct_project *p;
	int nnew = 0;

	snprintf(doc, sizeof(doc),
		 "<scheduler_reply><workunit><name>j3-r1-s0</name><steps>50</steps>"
		 "<batch>4</batch><seq>64</seq><lr>0.001</lr>"
		 "<seed>5129441107367914539</seed><upload_encoding>lossless</upload_encoding>"
		 "%s<file role=\"model\"><url>http://h/download/" SHA_A "</url><sha256>" SHA_A
		 "</sha256><size>10</size></file></workunit><result><name>j3-r1-s0-0</name>"
		 "<wu_name>j3-r1-s0</wu_name><deadline>1795449600</deadline>"
		 "<upload_url>http://h/upload/r</upload_url><upload_token>t</upload_token>"
		 "<max_upload_bytes>5374112</max_upload_bytes></result></scheduler_reply>", extra);
	assert_int_equal(ct_state_load("/nonexistent/x.xml", st), 0);
	assert_int_equal(ct_state_add_project(*st, "http://h", "3f2a9c0d41b7e85566a10c2d9e4f7b13",
					      &p), 0);
	assert_int_equal(ct_rpc_parse_reply(doc, strlen(doc), &r), 0);
	assert_int_equal(ct_rpc_apply_reply(p, &r, 1000, &nnew), 0);
	assert_int_equal(nnew, 1);
	ct_sched_reply_free(&r);
	return ct_project_find_task(p, "j3-r1-s0-0");
}

static void test_protocol_example(void **unused)
{
	struct ct_state *st = NULL;
	struct ct_task *t;
	struct ct_wu_hparams hp;

	(void)unused;
	t = task_from_reply(&st, "<lora_rank>8</lora_rank><lora_alpha>16</lora_alpha>"
			    "<lora_targets>qkv,proj,fc,fcproj</lora_targets>");
	assert_non_null(t);
	assert_int_equal(ct_task_hparams(t, &hp), 0);
	assert_int_equal(hp.lora.rank, 8);
	assert_true(hp.lora.alpha == 16.0f);
	assert_int_equal(hp.lora.targets, CT_LORA_ALL);
	assert_true(hp.lora_seed == 5129441107367914539ull);
	assert_int_equal(hp.steps, 50);
	ct_state_free(st);
}

static void test_defaults_and_full(void **unused)
{
	struct ct_state *st = NULL;
	struct ct_task *t;
	struct ct_wu_hparams hp;

	(void)unused;
	t = task_from_reply(&st, "<lora_rank>4</lora_rank><lora_targets>qkv,fc</lora_targets>");
	assert_int_equal(ct_task_hparams(t, &hp), 0);
	assert_int_equal(hp.lora.rank, 4);
	assert_true(hp.lora.alpha == 4.0f);	/* alpha defaults to the rank */
	assert_int_equal(hp.lora.targets, CT_LORA_QKV | CT_LORA_FC);
	ct_state_free(st);
	/* alpha survives the trip as the same float */
	t = task_from_reply(&st, "<lora_rank>3</lora_rank>"
			    "<lora_alpha>0.69999998807907715</lora_alpha>");
	assert_int_equal(ct_task_hparams(t, &hp), 0);
	assert_true(hp.lora.alpha == 0.7f);
	assert_int_equal(hp.lora.targets, CT_LORA_ALL);
	ct_state_free(st);
	/* no LoRA elements: every weight */
	t = task_from_reply(&st, "");
	assert_int_equal(ct_task_hparams(t, &hp), 0);
	assert_int_equal(hp.lora.rank, 0);
	ct_state_free(st);
}

static void test_malformed(void **unused)
{
	static const char *const bad[] = {
		"<lora_rank>0</lora_rank>", "<lora_rank>2000</lora_rank>",
		"<lora_rank>8x</lora_rank>", "<lora_rank>8</lora_rank><lora_alpha>-1</lora_alpha>",
		"<lora_rank>8</lora_rank><lora_alpha>nan</lora_alpha>",
		"<lora_rank>8</lora_rank><lora_targets>qkv,mlp</lora_targets>",
		"<lora_rank>8</lora_rank><lora_targets></lora_targets>",
	};
	struct ct_state *st = NULL;
	struct ct_task *t;
	struct ct_wu_hparams hp;

	(void)unused;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = task_from_reply(&st, bad[i]);
		if (ct_task_hparams(t, &hp) != CT_EINVAL)
			fail_msg("accepted %s", bad[i]);
		ct_state_free(st);
	}
	/* a LoRA WU needs its seed: the adapters start from it */
	t = task_from_reply(&st, "<lora_rank>8</lora_rank>");
	for (size_t i = 0; i < t->nparams; i++)
		if (strcmp(t->params[i].name, "seed") == 0)
			assert_int_equal(ct_strset(&t->params[i].value, "-3"), 0);
	assert_int_equal(ct_task_hparams(t, &hp), CT_EINVAL);
	ct_state_free(st);
}

/* An adapter file for cfg and sp in dir, under its hash (sha, 65). */
static void cache_adapters(const char *dir, const struct ct_model_config *cfg,
			   const struct ct_lora_spec *sp, float *ad, char *sha)
{
	char tmp[4200], path[4200];

	for (size_t i = 0; i < ct_lora_nparams(cfg, sp); i++)
		ad[i] = 0.25f * (float)(i % 7);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	assert_int_equal(ct_lora_file_save(tmp, cfg, sp, ad), 0);
	assert_int_equal(ct_sha256_file_hex(tmp, sha), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, sha);
	assert_int_equal(rename(tmp, path), 0);
}

/* ct_task_lora_init of a WU of `lora` elements naming `sha` of `size`. */
static int init_of(const char *lora, const char *sha, uint64_t size, const char *dir,
		   const struct ct_model_config *cfg, struct ct_task_run *r)
{
	char extra[1024];
	struct ct_state *st = NULL;
	struct ct_task *t;
	int rc;

	snprintf(extra, sizeof(extra), "%s<file role=\"lora_init\"><url>http://h/download/%s"
		 "</url><sha256>%s</sha256><size>%llu</size></file>", lora, sha, sha,
		 (unsigned long long)size);
	t = task_from_reply(&st, extra);
	assert_non_null(t);
	memset(r, 0, sizeof(*r));
	r->model.cfg = *cfg;
	assert_int_equal(ct_task_hparams(t, &r->hp), 0);
	rc = ct_task_lora_init(r, t, dir);
	ct_state_free(st);
	return rc;
}

static void test_lora_init(void **unused)
{
	static const char *const lora = "<lora_rank>8</lora_rank><lora_alpha>16</lora_alpha>";
	const struct ct_model_config cfg = { .maxT = 16, .V = 60, .L = 2, .NH = 2, .C = 64,
					     .Vp = 64 };
	struct ct_lora_spec sp = { .rank = 8, .alpha = 16.0f, .targets = CT_LORA_ALL }, o = sp;
	size_t n = ct_lora_nparams(&cfg, &sp);
	uint64_t size = ct_lora_file_size(&cfg, &sp);
	float *ad = calloc(n, sizeof(float));
	char dir[] = "/tmp/ct-cl-lora-XXXXXX", sha[65], sha2[65], path[4200];
	struct ct_task_run r;

	(void)unused;
	assert_non_null(ad);
	assert_non_null(mkdtemp(dir));
	cache_adapters(dir, &cfg, &sp, ad, sha);
	assert_int_equal(init_of(lora, sha, size, dir, &cfg, &r), 0);
	assert_non_null(r.lora_init);
	assert_memory_equal(r.lora_init, ad, n * sizeof(float));
	free(r.lora_init);
	/* an announced size other than the WU's adapters: not read */
	assert_int_equal(init_of(lora, sha, size + 4, dir, &cfg, &r), CT_EFORMAT);
	assert_null(r.lora_init);
	assert_int_equal(init_of(lora, sha, 1ull << 40, dir, &cfg, &r), CT_EFORMAT);
	/* a file of another alpha, the same size: refused */
	o.alpha = 4.0f;
	cache_adapters(dir, &cfg, &o, ad, sha2);
	assert_int_equal(init_of(lora, sha2, size, dir, &cfg, &r), CT_EMISMATCH);
	assert_null(r.lora_init);
	/* a full-weight WU names no initial adapters */
	assert_int_equal(init_of("", sha, size, dir, &cfg, &r), CT_EINVAL);
	snprintf(path, sizeof(path), "%s/%s", dir, sha);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, sha2);
	unlink(path);
	rmdir(dir);
	free(ad);
}

CT_TEST_MAIN(test_protocol_example, test_defaults_and_full, test_malformed, test_lora_init)
