/*
 * cmd_train.c - `ctune train`, `ctune eval` and `ctune model`: run one work
 * unit locally, evaluate a checkpoint, create or inspect checkpoints.
 *
 * These are thin wrappers over engine/ct_engine.h (the same runner the daemon
 * uses), so a volunteer or an operator can reproduce any work unit by hand.
 * Errors print one line naming the problem and exit non-zero; outputs are
 * written atomically, so a failed run leaves no partial file.
 */
#include "config.h"
#include "commands.h"
#include "cmd_lora.h"
#include "ct_lora_file.h"
#include "ct_base.h"
#include "cmd_model.h"
#include "ct_model_ops.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_chain.h"
#include "ct_hash.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_tokens.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small helpers -------------------------------------------------- */

static int fail(const char *cmd, int rc)
{
	fprintf(stderr, "ctune %s: %s\n", cmd, ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

static int usage_error(const char *cmd, const char *what)
{
	fprintf(stderr, "ctune %s: %s (see 'ctune %s --help')\n", cmd, what, cmd);
	return CT_EXIT_USAGE;
}

/* Strict integer parse into [lo, hi]. Returns 0 or -1 (message printed). */
static int parse_int(const char *cmd, const char *opt, const char *s, long lo,
		     long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "ctune %s: --%s '%s' is not an integer in %ld..%ld\n",
			cmd, opt, s, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* Strict unsigned 64-bit parse (a WU's seed: the server's are 64-bit).
 * Returns 0 or -1 (message printed). */
static int parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || s[0] == '+') {
		fprintf(stderr, "ctune %s: --%s '%s' is not an integer in 0..%llu\n", cmd, opt,
			s, (unsigned long long)UINT64_MAX);
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

static int parse_float(const char *cmd, const char *opt, const char *s, float *out)
{
	char *end;
	float v;

	errno = 0;
	v = strtof(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
		fprintf(stderr, "ctune %s: --%s '%s' is not a finite number\n", cmd, opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Fail early (before hours of training) if path cannot be created: make
 * and drop the temp file an atomic write would use. */
static int check_writable(const char *path)
{
	struct ct_afile af = { .fd = -1 };
	int rc = ct_afile_open(&af, path, 0644);

	ct_afile_abort(&af);
	return rc;
}

/* The vocabulary check, with both file names in the message. */
static int check_vocab(const struct ct_tokens *t, const char *tpath,
		       const struct ct_gpt2 *m, const char *mpath)
{
	int rc = ct_tokens_check_vocab(t, m->cfg.V);

	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", ct_errmsg(rc));
		return ct_error(rc, "%s does not fit %s: %s", tpath, mpath, why);
	}
	return 0;
}

/* ---- train ---------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct train_opts {
	const char *model, *data, *out, *device, *resume, *state;
	int every;
	int chain_every;	/* --chain-every S: a hash chain link every S steps */
	double t_chain;		/* seconds spent on the chain */
	int fmt_given;		/* --base-format was given */
	const char *lora_init;	/* --lora-init FILE: the initial adapters */
	struct ct_wu_hparams hp;
};

static const struct option train_long[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "data", required_argument, NULL, 'd' },
	{ "steps", required_argument, NULL, 'n' },
	{ "batch", required_argument, NULL, 'b' },
	{ "seq", required_argument, NULL, 't' },
	{ "lr", required_argument, NULL, 'l' },
	{ "beta1", required_argument, NULL, '1' },
	{ "beta2", required_argument, NULL, '2' },
	{ "eps", required_argument, NULL, 'e' },
	{ "weight-decay", required_argument, NULL, 'w' },
	{ "grad-clip", required_argument, NULL, 'c' },
	{ "device", required_argument, NULL, 'D' },
	{ "resume", required_argument, NULL, 'r' },
	{ "state", required_argument, NULL, 's' },
	{ "checkpoint-every", required_argument, NULL, 'k' },
	{ "chain-every", required_argument, NULL, 'H' },
	{ "out", required_argument, NULL, 'o' },
	{ "lora-rank", required_argument, NULL, 'R' },
	{ "lora-alpha", required_argument, NULL, 'A' },
	{ "lora-targets", required_argument, NULL, 'G' },
	{ "lora-seed", required_argument, NULL, 'S' },
	{ "base-format", required_argument, NULL, 'F' },
	{ "lora-init", required_argument, NULL, 'I' },
	{ NULL, 0, NULL, 0 },
};

static int train_parse(int argc, char **argv, struct train_opts *o)
{
	int c, bad = 0, have_lr = 0;
	uint64_t seed = 0;

	memset(o, 0, sizeof(*o));
	ct_wu_hparams_default(&o->hp);
	o->hp.steps = o->hp.B = o->hp.T = 0;
	o->device = "cpu";
	while ((c = getopt_long(argc, argv, "", train_long, NULL)) != -1 && !bad) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'd': o->data = optarg; break;
		case 'o': o->out = optarg; break;
		case 'D': o->device = optarg; break;
		case 'r': o->resume = optarg; break;
		case 's': o->state = optarg; break;
		case 'n': bad = parse_int("train", "steps", optarg, 1, CT_WU_MAX_STEPS, &o->hp.steps); break;
		case 'b': bad = parse_int("train", "batch", optarg, 1, CT_WU_MAX_B, &o->hp.B); break;
		case 't': bad = parse_int("train", "seq", optarg, 1, INT_MAX, &o->hp.T); break;
		case 'k': bad = parse_int("train", "checkpoint-every", optarg, 0, INT_MAX, &o->every); break;
		case 'H': bad = parse_int("train", "chain-every", optarg, 1, INT_MAX, &o->chain_every); break;
		case 'l': bad = parse_float("train", "lr", optarg, &o->hp.lr); have_lr = 1; break;
		case '1': bad = parse_float("train", "beta1", optarg, &o->hp.beta1); break;
		case '2': bad = parse_float("train", "beta2", optarg, &o->hp.beta2); break;
		case 'e': bad = parse_float("train", "eps", optarg, &o->hp.eps); break;
		case 'w': bad = parse_float("train", "weight-decay", optarg, &o->hp.weight_decay); break;
		case 'c': bad = parse_float("train", "grad-clip", optarg, &o->hp.grad_clip); break;
		case 'R': bad = parse_int("train", "lora-rank", optarg, 1, CT_LORA_MAX_RANK, &o->hp.lora.rank); break;
		case 'A': bad = parse_float("train", "lora-alpha", optarg, &o->hp.lora.alpha); break;
		case 'G': bad = ct_lora_targets_parse(optarg, &o->hp.lora.targets) < 0;
			if (bad)
				fprintf(stderr, "ctune train: %s\n", ct_errmsg(CT_EINVAL));
			break;
		case 'S': bad = parse_u64("train", "lora-seed", optarg, &seed); break;
		case 'I': o->lora_init = optarg; break;
		case 'F': bad = ct_base_fmt_parse(optarg, &o->hp.lora.base_fmt) < 0;
			o->fmt_given = 1;
			if (bad)
				fprintf(stderr, "ctune train: %s\n", ct_errmsg(CT_EINVAL));
			break;
		default: return usage_error("train", "bad option");
		}
	}
	if (bad)
		return CT_EXIT_USAGE;
	if (optind < argc)
		return usage_error("train", "unexpected argument");
	if (!o->model || !o->data || !o->out || !o->hp.steps || !o->hp.B ||
	    !o->hp.T || !have_lr)
		return usage_error("train", "--model, --data, --steps, --batch, --seq, --lr and --out are required");
	if (o->every > 0 && o->state == NULL)
		return usage_error("train", "--checkpoint-every needs --state FILE");
	if (o->hp.lora.rank == 0 && (o->hp.lora.alpha != 0.0f || o->hp.lora.targets || seed != 0 ||
				     o->fmt_given || o->lora_init))
		return usage_error("train", "--lora-alpha, --lora-targets, --lora-seed, "
				   "--lora-init and --base-format need --lora-rank");
	if (o->hp.lora.rank > 0) {
		if (o->hp.lora.alpha == 0.0f)
			o->hp.lora.alpha = (float)o->hp.lora.rank;
		if (o->hp.lora.targets == 0)
			o->hp.lora.targets = CT_LORA_ALL;
		o->hp.lora_seed = seed;
	}
	return 0;
}

/* The chain's link after step i (doc/workunit.md §14): the state's
 * digest every S steps, the result's hash after the last step. */
static int chain_link(struct ct_wu *wu, struct train_opts *o, int i)
{
	unsigned char d[32];
	char hex[65];
	double t0 = now_s();
	int rc;

	if (!ct_chain_due(i, o->hp.steps, o->chain_every))
		return 0;
	rc = ct_wu_chain_link(wu, d);
	o->t_chain += now_s() - t0;
	if (rc < 0)
		return rc;
	ct_hex_encode(d, sizeof(d), hex);
	printf("chain %d %s%s\n", i, hex, i == o->hp.steps ? " (result)" : "");
	return 0;
}

/* Step loop: print losses, checkpoint when asked, stop on a signal. */
static int train_loop(struct ct_wu *wu, struct train_opts *o)
{
	int rc;
	float loss;

	while (!ct_wu_done(wu)) {
		int i = ct_wu_steps_done(wu) + 1;

		rc = ct_wu_step(wu, &loss);
		if (rc < 0)
			return rc;
		printf("step %d/%d loss %.6f\n", i, o->hp.steps, (double)loss);
		rc = chain_link(wu, o, i);
		if (rc < 0)
			return rc;
		fflush(stdout);
		if (o->state && ((o->every > 0 && i % o->every == 0) || stop_requested)) {
			rc = ct_wu_save_state(wu, o->state);
			if (rc < 0)
				return rc;
		}
		if (stop_requested)
			return ct_error(CT_ECANCELED, "interrupted after step %d%s%s", i,
					o->state ? "; state saved to " : "",
					o->state ? o->state : "");
	}
	return 0;
}

/* --lora-init FILE: the WU's initial adapters (ct_lora_file.h; what a
 * compact-base job's round r+1 downloads as its "lora_init" input) into
 * *init (malloc'd, the caller frees), held to the WU's spec. */
static int load_lora_init(const struct train_opts *o, const struct ct_gpt2 *model,
			  float **init)
{
	int rc;

	*init = malloc(ct_lora_nparams(&model->cfg, &o->hp.lora) * sizeof(float));
	if (*init == NULL)
		return CT_ENOMEM;
	rc = ct_lora_file_load(o->lora_init, &model->cfg, &o->hp.lora, *init);
	if (rc < 0) {
		free(*init);
		*init = NULL;
	}
	return rc;
}

static int cmd_train(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct train_opts o;
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	struct ct_wu *wu = NULL;
	float *init = NULL;
	double t0, dt;
	int rc, start;

	(void)ctx;
	rc = train_parse(argc, argv, &o);
	if (rc != 0)
		return CT_EXIT_USAGE;
	rc = check_writable(o.out);
	if (rc == 0)	/* a float32 checkpoint or a compact base file */
		rc = ct_base_load(o.model, &model);
	if (rc == 0 && !o.fmt_given && o.hp.lora.rank > 0)
		o.hp.lora.base_fmt = model.fmt;	/* a compact file stays compact */
	if (rc == 0)
		rc = ct_tokens_load(o.data, &tok);
	if (rc == 0)
		rc = check_vocab(&tok, o.data, &model, o.model);
	if (rc == 0 && o.lora_init)
		rc = load_lora_init(&o, &model, &init);
	if (rc == 0 && o.resume)
		rc = ct_wu_resume(o.resume, &model, &tok, &o.hp, o.device, &wu);
	else if (rc == 0)
		rc = ct_wu_open(&model, &tok, &o.hp, o.device, &wu);
	if (rc == 0 && init != NULL && !o.resume)
		rc = ct_wu_set_adapters(wu, init);
	if (rc < 0)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	start = ct_wu_steps_done(wu);
	t0 = now_s();
	rc = train_loop(wu, &o);
	if (rc < 0)
		goto out;
	dt = now_s() - t0;
	if (o.hp.lora.rank > 0)
		rc = ct_lora_write_adapter_file(wu, &model, o.model, &o.hp, init, o.out, NULL);
	else
		rc = ct_wu_save_model(wu, o.out);
	if (rc < 0)
		goto out;
	printf("done: %d steps on %s, %.0f tokens/s; wrote %s\n",
	       o.hp.steps - start, ct_wu_backend_name(wu),
	       dt > 0 ? (double)(o.hp.steps - start) * o.hp.B * o.hp.T / dt : 0.0,
	       o.out);
	if (o.chain_every > 0)
		printf("hash chain: a link every %d steps, %.3f s of %.3f s (%.2f%%)\n",
		       o.chain_every, o.t_chain, dt, dt > 0 ? 100.0 * o.t_chain / dt : 0.0);
out:
	ct_wu_close(wu);
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
	free(init);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return rc < 0 ? fail("train", rc) : CT_EXIT_OK;
}

/* ---- eval ----------------------------------------------------------- */

static const struct option eval_long[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "data", required_argument, NULL, 'd' },
	{ "batch", required_argument, NULL, 'b' },
	{ "seq", required_argument, NULL, 't' },
	{ "batches", required_argument, NULL, 'k' },
	{ "device", required_argument, NULL, 'D' },
	{ "adapter", required_argument, NULL, 'a' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_eval(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *mpath = NULL, *dpath = NULL, *device = "cpu", *apath = NULL;
	int B = 0, T = 0, K = 0, c, bad = 0, rc;
	struct ct_gpt2 model = { 0 };
	struct ct_tokens tok = { 0 };
	float loss;

	(void)ctx;
	while ((c = getopt_long(argc, argv, "", eval_long, NULL)) != -1 && !bad) {
		switch (c) {
		case 'm': mpath = optarg; break;
		case 'd': dpath = optarg; break;
		case 'D': device = optarg; break;
		case 'a': apath = optarg; break;
		case 'b': bad = parse_int("eval", "batch", optarg, 1, CT_WU_MAX_B, &B); break;
		case 't': bad = parse_int("eval", "seq", optarg, 1, INT_MAX, &T); break;
		case 'k': bad = parse_int("eval", "batches", optarg, 1, 1000000, &K); break;
		default: return usage_error("eval", "bad option");
		}
	}
	if (bad)
		return CT_EXIT_USAGE;
	if (optind < argc)
		return usage_error("eval", "unexpected argument");
	if (!mpath || !dpath || !B || !T)
		return usage_error("eval", "--model, --data, --batch and --seq are required");
	rc = ct_base_load_f32(mpath, &model);	/* a compact base widened */
	if (rc == 0 && apath != NULL)
		rc = ct_lora_apply_file(&model, mpath, apath, NULL);
	if (rc == 0)
		rc = ct_tokens_load(dpath, &tok);
	if (rc == 0)
		rc = check_vocab(&tok, dpath, &model, mpath);
	if (rc == 0)
		rc = ct_eval(&model, &tok, B, T, K, device, &loss);
	if (rc == 0) {
		if (K == 0)
			K = (int)((tok.n - 1) / ((uint64_t)B * T));
		printf("loss %.6f (%d batches of %d x %d)\n", (double)loss, K, B, T);
	}
	ct_tokens_free(&tok);
	ct_gpt2_free(&model);
	return rc < 0 ? fail("eval", rc) : CT_EXIT_OK;
}

/* ---- model ---------------------------------------------------------- */

static int parse_config(const char *s, struct ct_model_config *c)
{
	int v[6], n = 0;
	const char *p = s;

	while (n < 6) {
		char *end;
		long x;

		errno = 0;
		x = strtol(p, &end, 10);
		if (errno || end == p || x < 1 || x > INT_MAX)
			break;
		v[n++] = (int)x;
		if (*end != ',' || n == 6) {
			p = end;
			break;
		}
		p = end + 1;
	}
	if (n != 6 || *p != '\0') {
		fprintf(stderr, "ctune model: --config '%s' is not L,NH,C,maxT,V,Vp\n", s);
		return -1;
	}
	*c = (struct ct_model_config){ .L = v[0], .NH = v[1], .C = v[2],
				      .maxT = v[3], .V = v[4], .Vp = v[5] };
	return 0;
}

static const struct option model_init_long[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "layers", required_argument, NULL, 'L' },
	{ "heads", required_argument, NULL, 'H' },
	{ "channels", required_argument, NULL, 'C' },
	{ "max-seq", required_argument, NULL, 'T' },
	{ "vocab", required_argument, NULL, 'V' },
	{ "padded-vocab", required_argument, NULL, 'P' },
	{ "seed", required_argument, NULL, 's' },
	{ "out", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static int model_init(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_model_config cfg = { 0 };
	struct ct_gpt2 m = { 0 };
	const char *out = NULL;
	unsigned long long seed = 0;
	int c, bad = 0, rc;

	(void)ctx;
	while ((c = getopt_long(argc, argv, "", model_init_long, NULL)) != -1 && !bad) {
		switch (c) {
		case 'c': bad = parse_config(optarg, &cfg); break;
		case 'L': bad = parse_int("model", "layers", optarg, 1, INT_MAX, &cfg.L); break;
		case 'H': bad = parse_int("model", "heads", optarg, 1, INT_MAX, &cfg.NH); break;
		case 'C': bad = parse_int("model", "channels", optarg, 1, INT_MAX, &cfg.C); break;
		case 'T': bad = parse_int("model", "max-seq", optarg, 1, INT_MAX, &cfg.maxT); break;
		case 'V': bad = parse_int("model", "vocab", optarg, 1, INT_MAX, &cfg.V); break;
		case 'P': bad = parse_int("model", "padded-vocab", optarg, 1, INT_MAX, &cfg.Vp); break;
		case 's': {
			char *end;

			errno = 0;
			seed = strtoull(optarg, &end, 10);
			bad = errno || end == optarg || *end || optarg[0] == '-';
			if (bad)
				fprintf(stderr, "ctune model: --seed '%s' is not a number\n", optarg);
			break;
		}
		case 'o': out = optarg; break;
		default: return usage_error("model", "bad option");
		}
	}
	if (bad)
		return CT_EXIT_USAGE;
	if (optind < argc)
		return usage_error("model", "unexpected argument");
	if (cfg.Vp == 0 && cfg.V > 0)
		cfg.Vp = (cfg.V + 127) / 128 * 128;
	if (!out || !cfg.L || !cfg.NH || !cfg.C || !cfg.maxT || !cfg.V)
		return usage_error("model", "init needs --out and a full config");
	rc = ct_gpt2_alloc(&m, &cfg);
	if (rc == 0)
		rc = ct_gpt2_init_random(&cfg, (uint64_t)seed, m.params);
	if (rc == 0)
		rc = ct_gpt2_save(out, &cfg, m.params);
	if (rc == 0)
		printf("wrote %s: L=%d NH=%d C=%d maxT=%d V=%d Vp=%d, %zu parameters, seed %llu\n",
		       out, cfg.L, cfg.NH, cfg.C, cfg.maxT, cfg.V, cfg.Vp, m.lay.total, seed);
	ct_gpt2_free(&m);
	return rc < 0 ? fail("model", rc) : CT_EXIT_OK;
}

static int model_info(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_model_config c;
	struct ct_gpt2_layout lay;
	char what[256];
	int rc;

	(void)ctx;
	if (argc != 2 || argv[1][0] == '-')
		return usage_error("model", "info takes one checkpoint file");
	rc = ct_gpt2_read_config(argv[1], &c);
	if (rc < 0)
		return fail("model", rc);
	ct_gpt2_layout(&c, &lay);
	ct_model_ops_for(&c)->describe(&c, what, sizeof(what));
	printf("%s: %s\n", argv[1], what);
	printf("  layers %d, heads %d, channels %d, max_seq_len %d, vocab %d (padded %d)\n"
	       "  %zu parameters, %.3g training FLOPs per token at T=%d\n",
	       c.L, c.NH, c.C, c.maxT, c.V, c.Vp, lay.total,
	       ct_gpt2_flops_per_token(&c, c.maxT), c.maxT);
	return CT_EXIT_OK;
}


/* ---- the table rows (ct_cmd.h) ---------------------------------------- */

#define STR_(x) #x
#define STR(x) STR_(x)

const struct ct_cmd_def ct_train_cmd = {
	.name = "train", .fn = cmd_train, .opts = train_long,
	.required = "model data steps batch seq lr out",
	.summary = "run one work unit locally (training)",
	.usage = "--model BASE.bin --data TOKENS.bin --steps N --batch B\n"
	"                   --seq T --lr LR --out OUT.bin [options]",
	.help = "Run one work unit: N AdamW steps from BASE on consecutive batches of\n"
	"B x T tokens of TOKENS (wrapping around), printing each step's loss, then\n"
	"write the trained model (llm.c checkpoint) to OUT atomically.\n\n"
	"  --beta1 X            AdamW beta1 (default 0.9)\n"
	"  --beta2 X            AdamW beta2 (default 0.999)\n"
	"  --eps X              AdamW epsilon (default 1e-8)\n"
	"  --weight-decay X     decoupled weight decay (default 0)\n"
	"  --grad-clip X        clip the global gradient norm at X (default 0: off)\n"
	"  --device D           cpu, opencl or opencl:N (default cpu)\n"
	"  --state FILE         save the full training state to FILE ...\n"
	"  --checkpoint-every K ... every K steps (default 0: only on SIGINT/SIGTERM)\n"
	"  --resume FILE        continue from a state file saved with --state\n"
	"                       (same model, data and hyperparameters)\n"
	"  --chain-every S      print the WU's hash chain: the state's digest every\n"
	"                       S steps, the result's hash after the last\n"
	"                       (doc/workunit.md 14), and what it cost\n"
	"  --lora-rank R        train LoRA adapters of rank R (1.." STR(CT_LORA_MAX_RANK)
	") instead of\n"
	"                       all weights; OUT is then the adapter file (what a\n"
	"                       volunteer uploads, lossless; `ctune model merge`)\n"
	"  --lora-alpha A       LoRA scale alpha, s = A/R (default R)\n"
	"  --lora-targets LIST  adapted matrices: qkv,proj,fc,fcproj (default all)\n"
	"  --lora-seed S        seed of the initial adapters, 0..2^64-1 (a WU's\n"
	"                       seed, as the server sends it; default 0)\n"
	"  --lora-init FILE     start from the adapters in FILE (a CTLORA1 file: a\n"
	"                       compact-base job's round r+1 WU downloads round\n"
	"                       r's mean adapters as its lora_init input) instead\n"
	"                       of the seed's; OUT is then a delta against them\n"
	"  --base-format F      keep the frozen base as f32, bf16, q8 (int8, a scale\n"
	"                       per 32) or nf4 (QLoRA's 4-bit NormalFloat, a scale\n"
	"                       per 64; doc/workunit.md 13): exactly the f32\n"
	"                       result of the base rounded to F. BASE may also be a\n"
	"                       compact base file (`ctune model import\n"
	"                       --base-format`); default: as BASE is\n",
};

const struct ct_cmd_def ct_eval_cmd = {
	.name = "eval", .fn = cmd_eval, .opts = eval_long, .required = "model data batch seq",
	.summary = "evaluate a model on a token file",
	.usage = "--model M.bin --data TOKENS.bin --batch B --seq T\n"
	"                  [--batches K] [--device D] [--adapter ADAPTER.bin]",
	.help = "Print the mean cross-entropy loss of M over K batches of B x T tokens\n"
	"read from the start of TOKENS (default: one pass over the file).\n"
	"With --adapter, M with those LoRA adapters merged in (as `ctune model\n"
	"merge` would write it).\n",
};

static const struct ct_cmd_def model_init_cmd = {
	.name = "init", .fn = model_init, .opts = model_init_long,
	.summary = "write a GPT-2 checkpoint with GPT-2's random initialisation",
	.usage = "(--config L,NH,C,maxT,V,Vp | --layers L --heads NH\n"
	"                         --channels C --max-seq T --vocab V [--padded-vocab Vp])\n"
	"                        [--seed S] --out M.bin",
	.help = "The initialisation comes from seed S (default 0); Vp defaults to V\n"
	"rounded up to a multiple of 128.\n",
};

static const struct ct_cmd_def model_info_cmd = {
	.name = "info", .fn = model_info, .min_args = 1, .max_args = 1,
	.summary = "print a checkpoint's configuration and size", .usage = "M.bin",
};

static const struct ct_cmd_def *const model_cmds[] = {
	&model_init_cmd, &model_info_cmd, &ct_model_merge_cmd, &ct_model_import_cmd,
	&ct_model_export_cmd, &ct_model_init_llama_cmd, NULL,
};

const struct ct_cmd_def ct_model_cmd = {
	.name = "model", .subs = model_cmds,
	.summary = "inspect or create model checkpoints; Hugging Face Llama in and out",
};
