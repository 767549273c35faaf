/*
 * cmd_model.c - `ctune model import | export | init-llama`: Hugging Face
 * Llama-family directories in and out of crowdtune's checkpoint format,
 * and random Llama-config models for demos and benchmarks (ct_llama_hf.h,
 * ct_llama.h). `ctune model` itself lives in cmd_train.c and dispatches
 * here.
 */
#include "config.h"
#include "cmd_model.h"
#include "ct_base.h"
#include "commands.h"
#include "ct_err.h"
#include "ct_gguf_model.h"
#include "ct_gpt2.h"
#include "ct_hf_dtype.h"
#include "ct_llama.h"
#include "ct_llama_hf.h"
#include "ct_model_ops.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc)
{
	fprintf(stderr, "ctune model %s: %s\n", what, ct_errmsg(rc));
	return CT_EXIT_FAIL;
}

static void progress(int i, int n, const char *path)
{
	fprintf(stderr, "reading %s (%d of %d)\n", path, i + 1, n);
}

static const struct option import_long[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "base-format", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};
static const struct option export_long[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "tokenizer-from", required_argument, NULL, 't' },
	{ "dtype", required_argument, NULL, 'd' },
	{ "gguf", required_argument, NULL, 'g' },
	{ NULL, 0, NULL, 0 },
};

/* --base-format of import (NULL: float32); --gguf of export. */
static const char *import_fmt, *gguf_out;

/* Parse "ARG --out X [--tokenizer-from Y] [--dtype D] | [--base-format F]"
 * (export: --gguf X instead of --out X) with opts (one of the above):
 * the positional into *pos, the options
 * into their slots. 0, or an exit status. */
static int two_args(int argc, char **argv, const struct option *opts, const char **pos,
		    const char **out, const char **tok, const char **dtype)
{
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': *out = optarg; break;
		case 't': *tok = optarg; break;
		case 'd': *dtype = optarg; break;
		case 'F': import_fmt = optarg; break;
		case 'g': gguf_out = optarg; break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	if (optind + 1 != argc || (*out == NULL) == (gguf_out == NULL))
		return CT_EXIT_USAGE;	/* ct_cmd_resolve counted them */
	*pos = argv[optind];
	return 0;
}

static int cmd_import(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *dir = NULL, *out = NULL;
	struct ct_gpt2 m = { 0 };
	int rc, fmt = CT_BASE_F32, exact = 1;

	(void)ctx;
	import_fmt = NULL;
	rc = two_args(argc, argv, import_long, &dir, &out, NULL, NULL);
	if (rc != 0)
		return rc;
	if (import_fmt != NULL && ct_base_fmt_parse(import_fmt, &fmt) < 0)
		return fail("import", CT_EINVAL);
	if (fmt != CT_BASE_F32)	/* straight into the compact image */
		rc = ct_llama_hf_import_base(dir, fmt, &m, &exact, progress);
	else
		rc = ct_llama_hf_import(dir, &m, progress);
	if (rc == 0)
		rc = ct_base_check_finite(&m);
	if (rc == 0 && fmt != CT_BASE_F32)
		rc = ct_base_save(out, &m);
	else if (rc == 0)
		rc = ct_gpt2_save(out, &m.cfg, m.params);
	if (rc == 0 && fmt != CT_BASE_F32)
		fprintf(stderr, "%s base: %zu bytes (%s)\n", ct_base_fmt_name(fmt), m.base_bytes,
			exact ? "exact: every matrix was stored as BF16"
			      : "rounded to nearest even from F32/F16 tensors");
	if (rc == 0)
		printf("wrote %s: Llama L=%d C=%d heads %d/%d kv, MLP %d, V=%d, %zu parameters%s%s\n",
		       out, m.cfg.L, m.cfg.C, m.cfg.NH, m.cfg.KVH, m.cfg.F, m.cfg.V, m.lay.total,
		       (m.cfg.flags & CT_LLAMA_TIED) ? ", tied embeddings" : "",
		       (m.cfg.flags & CT_LLAMA_QKV_BIAS) ? ", q/k/v biases" : "");
	ct_gpt2_free(&m);
	return rc < 0 ? fail("import", rc) : CT_EXIT_OK;
}

/* export --gguf: one GGUF file (ct_gguf_model.h). */
static int export_gguf(const char *in, const char *tok, const char *dts)
{
	enum ct_ggml_type dt = CT_GGML_F32;
	struct ct_gpt2 m = { 0 };
	int rc = ct_gguf_dtype_parse(dts, &dt);

	if (rc < 0) {
		fprintf(stderr, "ctune model export: --%s\n", ct_errmsg(rc));
		return CT_EXIT_USAGE;
	}
	if (tok == NULL)
		fprintf(stderr, "ctune model export: no --tokenizer-from: the GGUF file has no "
			"tokenizer, which llama.cpp needs to run it\n");
	rc = ct_gpt2_load(in, &m);
	if (rc == 0)
		rc = ct_gguf_export_model(&m, gguf_out, tok, dt, NULL);
	if (rc == 0)
		printf("wrote %s (%zu parameters, %s%s)\n", gguf_out, m.lay.total,
		       ct_gguf_dtype_name(dt), tok ? ", with the tokenizer" : "");
	ct_gpt2_free(&m);
	return rc < 0 ? fail("export", rc) : CT_EXIT_OK;
}

static int cmd_export(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *tok = NULL, *dts = "f32";
	enum ct_st_dtype dt = CT_ST_F32;
	struct ct_gpt2 m = { 0 };
	int rc;

	(void)ctx;
	gguf_out = NULL;
	rc = two_args(argc, argv, export_long, &in, &out, &tok, &dts);
	if (rc != 0)
		return rc;
	if (gguf_out != NULL)
		return export_gguf(in, tok, dts);
	rc = ct_hf_dtype_parse(dts, &dt);
	if (rc < 0) {
		fprintf(stderr, "ctune model export: --%s\n", ct_errmsg(rc));
		return CT_EXIT_USAGE;
	}
	rc = ct_gpt2_load(in, &m);
	if (rc == 0)
		rc = ct_model_ops_for(&m.cfg)->hf_export(&m, out, tok);
	if (rc == 0)	/* written as float32, then narrowed */
		rc = ct_hf_dtype_set(out, dt);
	if (rc == 0)
		printf("wrote %s/config.json and %s/model.safetensors (%zu parameters, %s)\n",
		       out, out, m.lay.total, ct_hf_dtype_name(dt));
	ct_gpt2_free(&m);
	return rc < 0 ? fail("export", rc) : CT_EXIT_OK;
}

/* The table's check: exactly one of --out DIR and --gguf FILE. */
static int check_export(int argc, char **argv)
{
	int out = 0, gguf = 0;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		out += strcmp(argv[i], "-o") == 0 || strncmp(argv[i], "--out", 5) == 0;
		gguf += strncmp(argv[i], "--gguf", 6) == 0;
	}
	if (out + gguf == 1)
		return 0;
	return ct_error(CT_EUSAGE, out + gguf ? "give one of --out DIR and --gguf FILE"
			: "the required option '--out' (or '--gguf') is missing");
}

static int num_arg(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= lo && *out <= hi)) {
		fprintf(stderr, "ctune model init-llama: '%s' is not a number in %g..%g\n", s,
			lo, hi);
		return -1;
	}
	return 0;
}

static const struct option init_long[] = {
	{ "layers", 1, NULL, 'L' }, { "heads", 1, NULL, 'H' },
	{ "kv-heads", 1, NULL, 'K' }, { "channels", 1, NULL, 'C' },
	{ "mlp", 1, NULL, 'F' }, { "vocab", 1, NULL, 'V' },
	{ "max-seq", 1, NULL, 'T' }, { "tied", 0, NULL, 'y' },
	{ "qkv-bias", 0, NULL, 'b' }, { "rope-theta", 1, NULL, 'r' },
	{ "rms-eps", 1, NULL, 'e' }, { "seed", 1, NULL, 's' },
	{ "out", 1, NULL, 'o' }, { "head-dim", 1, NULL, 'd' },
	{ "qk-norm", 0, NULL, 'q' }, { NULL, 0, NULL, 0 },
};

static int cmd_init_llama(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	struct ct_model_config c = { .arch = CT_ARCH_LLAMA, .rope_theta = 10000.0,
				    .rms_eps = 1e-5 };
	struct ct_gpt2 m = { 0 };
	const char *out = NULL;
	double x, seed = 0;
	int o, rc = 0, *slot;

	(void)ctx;
	optind = 0;
	while ((o = getopt_long(argc, argv, "", init_long, NULL)) != -1 && rc == 0) {
		slot = o == 'L' ? &c.L : o == 'H' ? &c.NH : o == 'K' ? &c.KVH : o == 'C' ? &c.C
		       : o == 'F' ? &c.F : o == 'V' ? &c.V : o == 'T' ? &c.maxT
		       : o == 'd' ? &c.hd : NULL;
		if (slot != NULL) {
			rc = num_arg(optarg, 1, 1 << 20, &x);
			*slot = (int)x;
			continue;
		}
		switch (o) {
		case 'y': c.flags |= CT_LLAMA_TIED; break;
		case 'b': c.flags |= CT_LLAMA_QKV_BIAS; break;
		case 'q': c.flags |= CT_LLAMA_QK_NORM; break;
		case 'r': rc = num_arg(optarg, 1.000001, 1e12, &c.rope_theta); break;
		case 'e': rc = num_arg(optarg, 1e-30, 0.5, &c.rms_eps); break;
		case 's': rc = num_arg(optarg, 0, 9007199254740992.0, &seed); break;
		case 'o': out = optarg; break;
		default: return CT_EXIT_USAGE;	/* ct_cmd_resolve named it */
		}
	}
	if (rc < 0)
		return CT_EXIT_USAGE;
	if (optind < argc || out == NULL || !c.L || !c.NH || !c.C || !c.F || !c.V || !c.maxT)
		return CT_EXIT_USAGE;	/* ct_cmd_resolve checked the required options */
	if (c.KVH == 0)
		c.KVH = c.NH;
	c.Vp = c.V;
	if (c.hd * c.NH == c.C)
		c.hd = 0;	/* C/NH is kept as 0 (ct_llama.h) */
	rc = ct_gpt2_alloc(&m, &c);
	if (rc == 0)
		rc = ct_gpt2_init_random(&c, (uint64_t)seed, m.params);
	if (rc == 0)
		rc = ct_gpt2_save(out, &c, m.params);
	if (rc == 0)
		printf("wrote %s: Llama L=%d C=%d heads %d/%d kv, MLP %d, V=%d, %zu parameters\n",
		       out, c.L, c.C, c.NH, c.KVH, c.F, c.V, m.lay.total);
	ct_gpt2_free(&m);
	return rc < 0 ? fail("init-llama", rc) : CT_EXIT_OK;
}

/* ---- the table rows (ct_cmd.h) ---- */

const struct ct_cmd_def ct_model_import_cmd = {
	.name = "import", .fn = cmd_import, .opts = import_long, .shortopts = "o:",
	.required = "out", .min_args = 1, .max_args = 1,
	.summary = "read a Hugging Face Llama-family directory into a checkpoint",
	.usage = "HF_DIR --out M.ct [--base-format bf16]",
	.help = "Read a Hugging Face Llama-family model directory (config.json and one or\n"
	"more *.safetensors shards; model_type llama, qwen2 or\n"
	"qwen3; F32, F16 or BF16\n"
	"tensors, converted to float32) and write it as a crowdtune Llama\n"
	"checkpoint. Refuses missing or unexpected tensors, other dtypes and\n"
	"unsupported features, naming them.\n\n"
	"  --base-format bf16  write a compact frozen base for LoRA instead\n"
	"                      (doc/workunit.md 13): the matrices as bfloat16,\n"
	"                      exact for BF16 tensors (rounded from F32/F16)\n",
};

const struct ct_cmd_def ct_model_export_cmd = {
	.name = "export", .fn = cmd_export, .opts = export_long, .shortopts = "o:",
	.check = check_export, .min_args = 1, .max_args = 1,
	.summary = "write a Llama or GPT-2 checkpoint as a Hugging Face directory or a GGUF file",
	.usage = "M.ct --out DIR [--tokenizer-from HF_DIR] [--dtype f32|bf16|f16]\n"
	"         M.ct --gguf FILE [--tokenizer-from HF_DIR] [--dtype f32|f16|bf16|q8_0]",
	.help = "Write a crowdtune Llama checkpoint as a Hugging Face directory:\n"
	"config.json and model.safetensors, loadable with transformers'\n"
	"from_pretrained(). --dtype bf16 or f16 stores each weight rounded to\n"
	"the nearest of that type, ties to even (half the size; config.json's\n"
	"torch_dtype says which); the default f32 keeps every bit. --tokenizer-from copies tokenizer.json,\n"
	"tokenizer_config.json, special_tokens_map.json and\n"
	"generation_config.json from HF_DIR when present. A GPT-2 (llm.c)\n"
	"checkpoint is written in transformers' GPT-2 layout (GPT2LMHeadModel).\n\n"
	"--gguf FILE writes one GGUF file for llama.cpp, Ollama and LM Studio instead:\n"
	"the architecture (llama, qwen2, qwen3, gpt2) and tensors as llama.cpp names\n"
	"them, and with --tokenizer-from the tokenizer (tokenizer.json: byte-level BPE\n"
	"only) with its special tokens and chat template (tokenizer_config.json).\n"
	"--dtype f16, bf16 or q8_0 (8-bit blocks of 32 with a float16 scale) stores\n"
	"the matrices so; norms and biases stay f32 (doc/llama.md).\n",
};

const struct ct_cmd_def ct_model_init_llama_cmd = {
	.name = "init-llama", .fn = cmd_init_llama, .opts = init_long,
	.required = "layers heads channels mlp vocab max-seq out",
	.summary = "write a Llama-config checkpoint with random weights",
	.usage = "--layers L --heads NH --kv-heads KVH\n"
	"         --channels C --mlp F --vocab V --max-seq T [--tied] [--qkv-bias]\n"
	"         [--head-dim HD] [--qk-norm] [--rope-theta X] [--rms-eps E]\n"
	"         [--seed S] --out M.ct",
	.help = "Matrices and embeddings ~ N(0, 0.02), norms 1, biases 0, from seed S\n"
	"(default 0). Defaults: rope_theta 10000, rms_norm_eps 1e-5, KVH = NH,\n"
	"head_dim C/NH. --head-dim and --qk-norm (per-head RMSNorm of q and k)\n"
	"make a Qwen3-style model.\n",
};
