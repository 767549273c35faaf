/*
 * cmd_sample.c - `ctune sample`: generate text from a checkpoint
 * (engine/ct_sample.h). The prompt is echoed, then each new token is printed
 * as it is chosen; the same seed prints the same text on every device.
 */
#include "config.h"
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_llama_hf.h"
#include "ct_sample.h"
#include "ct_tokenizer.h"

static int usage(const char *what)
{
	fprintf(stderr, "ctune sample: %s (see 'ctune sample --help')\n", what);
	return CT_EXIT_USAGE;
}

static int fail(int rc)
{
	fprintf(stderr, "ctune sample: %s\n", ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

/* Parse the numeric options into p; 0 or -1 (message printed). */
static int parse_num(int c, const char *s, struct ct_sample_params *p)
{
	char *end;
	double d;
	long long v;

	errno = 0;
	if (c == 'x') {
		d = strtod(s, &end);
		if (errno || end == s || *end || !isfinite(d) || d < 0 || d > 1e6)
			goto bad;
		p->temperature = (float)d;
		return 0;
	}
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		goto bad;
	if (c == 's') {
		p->seed = (uint64_t)v;
		return 0;
	}
	if (v > INT_MAX)
		goto bad;
	if (c == 'n')
		p->ntokens = (int)v;
	else
		p->top_k = (int)v;
	return 0;
bad:
	fprintf(stderr, "ctune sample: bad number '%s'\n", s);
	return -1;
}

struct echo {
	const struct ct_tokenizer *tk;
};

static int print_token(void *arg, ct_tok id)
{
	struct echo *e = arg;
	size_t len;
	const unsigned char *b = ct_tokenizer_token(e->tk, id, &len);

	fwrite(b, 1, len, stdout);
	fflush(stdout);
	return 0;
}

int ct_cli_load_model(const char *mpath, struct ct_gpt2 *model, char *tkdef, size_t cap)
{
	struct stat st;

	tkdef[0] = 0;
	if (stat(mpath, &st) != 0 || !S_ISDIR(st.st_mode))
		return ct_gpt2_load(mpath, model);
	if (ct_path_join(tkdef, cap, mpath, "tokenizer.json") < 0 || !ct_file_exists(tkdef))
		tkdef[0] = 0;
	return ct_llama_hf_import(mpath, model, NULL);
}

static int run(const char *mpath, const char *tkname, const char *prompt,
	       const char *device, const struct ct_sample_params *sp)
{
	struct ct_gpt2 model = { 0 };
	struct ct_tokenizer *tk = NULL;
	struct ct_tokvec in = { 0 }, out = { 0 };
	struct echo e;
	size_t n = strlen(prompt);
	char tkdef[PATH_MAX];
	int rc;

	rc = ct_cli_load_model(mpath, &model, tkdef, sizeof(tkdef));
	if (rc == 0 && tkname == NULL && tkdef[0] != 0)
		tkname = tkdef;
	if (rc == 0 && tkname == NULL) {
		tkname = ct_tokenizer_for_vocab(model.cfg.V);
		if (tkname == NULL)
			rc = ct_error(CT_EINVAL, "no default tokenizer for vocabulary %d: "
				      "name one with --tokenizer", model.cfg.V);
	}
	if (rc == 0)
		rc = ct_tokenizer_open(tkname, &tk);
	if (rc == 0 && ct_tokenizer_vocab(tk) > model.cfg.V)
		rc = ct_error(CT_EMISMATCH, "tokenizer '%s' has %d tokens but %s has V = %d",
			      tkname, ct_tokenizer_vocab(tk), mpath, model.cfg.V);
	if (rc == 0)
		rc = ct_sample_prompt(tk, prompt, n, &in);
	if (rc == 0) {
		fwrite(prompt, 1, n, stdout);
		e.tk = tk;
		rc = ct_sample_generate(&model, device, in.v, in.n, sp, print_token, &e, &out);
		printf("\n");
	}
	ct_tokvec_free(&in);
	ct_tokvec_free(&out);
	ct_tokenizer_free(tk);
	ct_gpt2_free(&model);
	return rc;
}

static const struct option sample_long[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "tokenizer", required_argument, NULL, 'k' },
	{ "prompt", required_argument, NULL, 'p' },
	{ "tokens", required_argument, NULL, 'n' },
	{ "temperature", required_argument, NULL, 'x' },
	{ "top-k", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "device", required_argument, NULL, 'D' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_sample(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *mpath = NULL, *tkname = NULL, *prompt = "", *device = "cpu";
	struct ct_sample_params sp;
	int c, rc;

	(void)ctx;
	ct_sample_params_default(&sp);
	while ((c = getopt_long(argc, argv, "", sample_long, NULL)) != -1) {
		switch (c) {
		case 'm': mpath = optarg; break;
		case 'k': tkname = optarg; break;
		case 'p': prompt = optarg; break;
		case 'D': device = optarg; break;
		case 'n': case 'x': case 't': case 's':
			if (parse_num(c, optarg, &sp) < 0)
				return CT_EXIT_USAGE;
			break;
		default: return usage("bad option");
		}
	}
	if (optind < argc)
		return usage("unexpected argument");
	if (mpath == NULL)
		return usage("--model is required");
	rc = run(mpath, tkname, prompt, device, &sp);
	return rc < 0 ? fail(rc) : CT_EXIT_OK;
}

const struct ct_cmd_def ct_sample_cmd = {
	.name = "sample", .fn = cmd_sample, .opts = sample_long, .required = "model",
	.summary = "generate text from a model (same seed, same text)",
	.usage = "--model M.bin|HF_DIR [--tokenizer bytes|gpt2|TOKENIZER.json] [--prompt TEXT]\n"
	"                    [--tokens N] [--temperature X] [--top-k K] [--seed S]\n"
	"                    [--device cpu|opencl[:N]]",
	.help = "Generate N tokens (default 64) after TEXT with the model and print the\n"
	"prompt followed by the generated text. Sampling: temperature X (default\n"
	"1.0; 0 = always the most likely token), only the K most likely tokens\n"
	"(default 40; 0 = all), draws from seed S (default 1). The choice is made\n"
	"on the host in fixed-order arithmetic, so one seed gives the same text\n"
	"on every device. The tokenizer defaults to the one the model's\n"
	"vocabulary implies (V = 256: bytes, V = 50257: gpt2); a Hugging Face\n"
	"tokenizer.json (or its directory) whose vocabulary fits the model's may\n"
	"be named instead. HF_DIR: a Hugging Face directory (`model export`,\n"
	"`job export --hf`), sampled with its own tokenizer.json by default.\n"
	"An empty prompt starts from the end-of-text token (bytes: a newline).\n",
};
