/*
 * test_cmd_train.c - `ctune model init`, `ctune train`, `ctune eval` as a
 * user runs them: output lines, exit statuses, one-line errors, atomic
 * outputs (nothing written on failure), and --state/--resume giving the
 * same checkpoint as an uninterrupted run; LoRA: `train --lora-rank`
 * writes the adapter file, `model merge` and `eval --adapter` use it.
 *
 * The subcommand functions are called directly (client/cmd_train.c is
 * linked in), with stdout/stderr captured into files.
 */
#include "ct_test_engine.h"
#include "commands.h"
#include "ct_delta.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_tokens.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>

static char out_text[65536], err_text[4096];

/* A path in the test directory; short, as nearly every command line has some. */
static const char *P(const char *name)
{
	return ct_test_path(name);
}

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/* The commands under test, dispatched as client/main.c does. */
static const struct ct_cmd_def *const commands[] = {
	&ct_train_cmd, &ct_eval_cmd, &ct_model_cmd, NULL,
};

/* Run a command line (NULL-terminated words, "train" first) through the
 * command table; stdout and stderr land in out_text / err_text. Returns
 * the exit status. */
static int run(const char *first, ...)
{
	char *argv[64];
	int argc = 0, rc, so, se, fo, fe;
	va_list ap;

	argv[argc++] = (char *)first;
	va_start(ap, first);
	while (argc < 63 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	fo = open(P("stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fe = open(P("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fo, 1);
	dup2(fe, 2);
	rc = ct_cmd_run("ctune", commands, NULL, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so); close(se); close(fo); close(fe);
	slurp(P("stdout.txt"), out_text, sizeof(out_text));
	slurp(P("stderr.txt"), err_text, sizeof(err_text));
	return rc;
}

static void make_data(void)
{
	ct_tok tok[3000];

	for (int i = 0; i < 3000; i++)
		tok[i] = (ct_tok)((i * 5 + i / 7) % 29);
	assert_int_equal(ct_tokens_save(P("tok.bin"), tok, 3000), 0);
	tok[10] = 40;	/* out of a 29-token vocabulary */
	assert_int_equal(ct_tokens_save(P("bad_tok.bin"), tok, 3000), 0);
}

static void test_model_init(void **state)
{
	struct ct_gpt2 m = { 0 };

	(void)state;
	make_data();
	assert_int_equal(run("model", "init", "--config", "2,2,32,32,29,32",
			     "--seed", "3", "--out", P("m.bin"), NULL), 0);
	assert_non_null(strstr(out_text, "27520 parameters"));
	assert_int_equal(ct_gpt2_load(P("m.bin"), &m), 0);
	assert_int_equal(m.cfg.L, 2);
	assert_int_equal(m.cfg.Vp, 32);
	ct_gpt2_free(&m);
	/* the long form, Vp rounded up to 128 by default */
	assert_int_equal(run("model", "init", "--layers", "1", "--heads", "2",
			     "--channels", "16", "--max-seq", "8", "--vocab", "29",
			     "--out", P("m2.bin"), NULL), 0);
	assert_int_equal(ct_gpt2_read_config(P("m2.bin"), &m.cfg), 0);
	assert_int_equal(m.cfg.Vp, 128);
	assert_int_equal(run("model", "info", P("m2.bin"), NULL), 0);
	assert_non_null(strstr(out_text, "layers 1, heads 2, channels 16"));
	/* bad configs: one line, non-zero, no file */
	assert_int_equal(run("model", "init", "--config", "2,3,32,32,29,32",
			     "--out", P("bad.bin"), NULL), CT_EXIT_FAIL);
	assert_non_null(strstr(err_text, "divisible"));
	assert_false(ct_file_exists(P("bad.bin")));
	assert_int_equal(run("model", "init", "--config", "2,2,32",
			     "--out", P("bad.bin"), NULL), CT_EXIT_USAGE);
	assert_false(ct_file_exists(P("bad.bin")));
}

static void test_train_and_eval(void **state)
{
	const char *m = P("m.bin"), *t = P("tok.bin");
	float l1, l3;

	(void)state;
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "3",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--weight-decay",
			     "0.01", "--grad-clip", "1.0", "--out", P("o.bin"), NULL), 0);
	assert_int_equal(sscanf(out_text, "step 1/3 loss %f", &l1), 1);
	assert_non_null(strstr(out_text, "step 3/3 loss "));
	assert_int_equal(sscanf(strstr(out_text, "step 3/3"), "step 3/3 loss %f", &l3), 1);
	assert_true(l3 < l1);
	assert_non_null(strstr(out_text, "tokens/s"));
	assert_true(ct_file_exists(P("o.bin")));
	assert_int_equal(run("eval", "--model", P("o.bin"), "--data", t,
			     "--batch", "2", "--seq", "16", "--batches", "4", NULL), 0);
	assert_non_null(strstr(out_text, "loss "));
	assert_non_null(strstr(out_text, "4 batches of 2 x 16"));
}

static void test_resume_same_bytes(void **state)
{
	const char *m = P("m.bin"), *t = P("tok.bin");
	unsigned char *a, *b;
	size_t na, nb;

	(void)state;
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "5",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--out",
			     P("full.bin"), NULL), 0);
	/* a first run that saves its state every 2 steps, "interrupted" by
	 * being told to stop at 5 anyway: we resume from the step-4 state */
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "5",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--state",
			     P("s.state"), "--checkpoint-every", "2", "--out", P("x.bin"),
			     NULL), 0);
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "5",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--resume",
			     P("s.state"), "--out", P("resumed.bin"), NULL), 0);
	assert_null(strstr(out_text, "step 4/5"));
	assert_non_null(strstr(out_text, "step 5/5"));
	assert_int_equal(ct_file_read_all(P("full.bin"), 0, &a, &na), 0);
	assert_int_equal(ct_file_read_all(P("resumed.bin"), 0, &b, &nb), 0);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	free(a);
	free(b);
	/* resuming with other hyperparameters is refused */
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "5",
			     "--batch", "2", "--seq", "16", "--lr", "2e-2", "--resume",
			     P("s.state"), "--out", P("r2.bin"), NULL), CT_EXIT_FAIL);
	assert_non_null(strstr(err_text, "hyperparameters"));
	assert_false(ct_file_exists(P("r2.bin")));
}

/* Each bad input: exit 1 (or 2 for usage), one line naming the problem,
 * and no output file. */
static void expect_fail(int want, const char *needle, const char *const *args)
{
	char *argv[40];
	int n = 0, rc;

	while (args[n] && n < 38) {
		argv[n] = (char *)args[n];
		n++;
	}
	argv[n] = NULL;
	fflush(stdout);
	{
		int so = dup(2), fe = open(P("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fe, 2);
		rc = ct_cmd_run("ctune", commands, NULL, n, argv);
		fflush(stderr);
		dup2(so, 2);
		close(so);
		close(fe);
	}
	slurp(P("stderr.txt"), err_text, sizeof(err_text));
	assert_int_equal(rc, want);
	if (strstr(err_text, needle) == NULL)
		fail_msg("stderr '%s' lacks '%s'", err_text, needle);
	assert_non_null(strchr(err_text, '\n'));
	assert_null(strchr(strchr(err_text, '\n') + 1, '\n'));	/* one line */
	assert_false(ct_file_exists(P("never.bin")));
}

static void test_bad_inputs(void **state)
{
	const char *m = P("m.bin"), *t = P("tok.bin"), *o = P("never.bin");

	(void)state;
	{
		const char *a[] = { "train", "--model", P("missing.bin"), "--data", t, "--steps",
				    "1", "--batch", "1", "--seq", "8", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "missing.bin", a);
	}
	{
		const char *a[] = { "train", "--model", t, "--data", t, "--steps", "1", "--batch",
				    "1", "--seq", "8", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "bad magic", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", P("bad_tok.bin"), "--steps",
				    "1", "--batch", "1", "--seq", "8", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "vocabulary", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "1", "--batch",
				    "1", "--seq", "33", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "max_seq_len 32", a);
	}
	{	/* B*T > maxT is fine; B*T+1 > tokens is not */
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "1", "--batch",
				    "200", "--seq", "32", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "tokens", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "1", "--batch",
				    "1", "--seq", "8", "--lr", "1e-3", "--device", "tpu", "--out", o, NULL };
		expect_fail(CT_EXIT_FAIL, "unknown device", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "x", "--batch",
				    "1", "--seq", "8", "--lr", "1e-3", "--out", o, NULL };
		expect_fail(CT_EXIT_USAGE, "--steps", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "1", "--batch",
				    "1", "--seq", "8", "--out", o, NULL };
		expect_fail(CT_EXIT_USAGE, "required", a);
	}
	{
		const char *a[] = { "train", "--model", m, "--data", t, "--steps", "1", "--batch",
				    "1", "--seq", "8", "--lr", "1e-3", "--out", P("nodir/x.bin"), NULL };
		expect_fail(CT_EXIT_FAIL, "nodir", a);
	}
}

/* The LoRA adapter file, merged: the same weights as the engine's own WU
 * merged by ct_lora_merge; eval --adapter sees the merged model. */
static void test_lora_train_merge(void **state)
{
	const char *m = P("m.bin"), *t = P("tok.bin");
	struct ct_gpt2 base = { 0 }, merged = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu_hparams hp;
	struct ct_delta_info info;
	unsigned char *data;
	size_t len, n;
	float *ad, l1, l3;
	char want[256];

	(void)state;
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "3",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--lora-rank", "4",
			     "--lora-alpha", "8", "--lora-targets", "qkv,fc,fcproj",
			     "--lora-seed", "5", "--out", P("a.bin"), NULL), 0);
	assert_int_equal(sscanf(out_text, "step 1/3 loss %f", &l1), 1);
	assert_int_equal(sscanf(strstr(out_text, "step 3/3"), "step 3/3 loss %f", &l3), 1);
	assert_true(l3 < l1);
	assert_int_equal(ct_file_read_all(P("a.bin"), 0, &data, &len), 0);
	assert_int_equal(ct_delta_parse_header(data, len, &info), 0);
	assert_int_equal(info.kind, CT_DELTA_LORA);
	assert_int_equal(info.lora.rank, 4);
	assert_int_equal(info.lora.targets, CT_LORA_QKV | CT_LORA_FC | CT_LORA_FCPROJ);
	assert_true(info.lora.alpha == 8.0f);
	assert_int_equal(info.lora.seed, 5);
	free(data);
	assert_int_equal(run("model", "merge", m, P("a.bin"), "--out",
			     P("merged.bin"), NULL), 0);
	assert_non_null(strstr(out_text, "LoRA rank 4"));
	/* the same WU through the engine, merged by hand */
	assert_int_equal(ct_gpt2_load(m, &base), 0);
	assert_int_equal(ct_tokens_load(t, &tok), 0);
	ct_wu_hparams_default(&hp);
	hp.steps = 3;
	hp.B = 2;
	hp.T = 16;
	hp.lr = 1e-2f;
	hp.lora = (struct ct_lora_spec){ .rank = 4, .alpha = 8.0f,
					 .targets = CT_LORA_QKV | CT_LORA_FC | CT_LORA_FCPROJ };
	hp.lora_seed = 5;
	n = ct_lora_nparams(&base.cfg, &hp.lora);
	ad = malloc(n * sizeof(float));
	assert_int_equal(ct_wu_run(&base, &tok, &hp, "cpu", ad, NULL), 0);
	{
		const float *const one[1] = { ad };

		assert_int_equal(ct_lora_merge(&base.cfg, &hp.lora, base.params, one, 1), 0);
	}
	assert_int_equal(ct_gpt2_load(P("merged.bin"), &merged), 0);
	assert_memory_equal(base.params, merged.params, base.lay.total * sizeof(float));
	/* eval with the adapter == eval of the merged file */
	assert_int_equal(run("eval", "--model", P("merged.bin"), "--data", t,
			     "--batch", "2", "--seq", "16", "--batches", "3", NULL), 0);
	snprintf(want, sizeof(want), "%.255s", out_text);	/* longer output fails below */
	assert_int_equal(run("eval", "--model", m, "--adapter", P("a.bin"),
			     "--data", t, "--batch", "2", "--seq", "16", "--batches", "3",
			     NULL), 0);
	assert_string_equal(out_text, want);
	/* against another base: refused, nothing written */
	assert_int_equal(run("model", "merge", P("o.bin"), P("a.bin"), "--out",
			     P("bad.bin"), NULL), CT_EXIT_FAIL);
	assert_non_null(strstr(err_text, "another base model"));
	assert_false(ct_file_exists(P("bad.bin")));
	assert_int_equal(run("model", "merge", m, "--out", P("bad.bin"), NULL),
			 CT_EXIT_USAGE);
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "1",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--lora-alpha", "3",
			     "--out", P("bad.bin"), NULL), CT_EXIT_USAGE);
	assert_int_equal(run("train", "--model", m, "--data", t, "--steps", "1",
			     "--batch", "2", "--seq", "16", "--lr", "1e-2", "--lora-rank", "2",
			     "--lora-targets", "qkv,mlp", "--out", P("bad.bin"), NULL),
			 CT_EXIT_USAGE);
	assert_non_null(strstr(err_text, "mlp"));
	free(ad);
	ct_tokens_free(&tok);
	ct_gpt2_free(&base);
	ct_gpt2_free(&merged);
}

CT_TEST_MAIN_GROUP(ct_test_dir_setup, ct_test_dir_teardown, test_model_init,
	test_train_and_eval, test_resume_same_bytes, test_bad_inputs,
	test_lora_train_merge)
