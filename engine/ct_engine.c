/*
 * ct_engine.c - backend registry, the work-unit runner with its state file
 * (save/resume), and evaluation (see ct_engine.h, doc/workunit.md).
 *
 * State file (little-endian, 256-byte header, then 3*nparams float32, then
 * a SHA-256 of everything before it):
 *   0 "CTWUSTAT"  8 u32 version 1   12 u32 0
 *   16 i32 maxT V L NH C Vp        40 i32 steps B T steps_done
 *   56 f32 lr beta1 beta2 eps weight_decay grad_clip   80 f32 last_loss
 *   84 u32 0   88 u64 nparams   96 u64 ntokens   104 u64 next batch start
 *   112 [32] SHA-256 of the base weights   144 [32] SHA-256 of the tokens
 *   176..255 zero
 *   256 params[nparams]  m[nparams]  v[nparams]   end: [32] SHA-256
 * A LoRA work unit (hp.lora.rank > 0) writes version 2: the same header
 * with 176 i32 rank, 180 f32 alpha, 184 u32 targets, 188 u32 base format,
 * 192 u64 lora_seed, 200 u64 nadapters, and instead of params, m, v the
 * adapters, their m and their v (nadapters floats each); the frozen base
 * weights are identified by their SHA-256 at 112.
 */
#include "config.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_base.h"
#include "ct_hash.h"
#include "ct_le.h"
#include "ct_lora_model.h"
#include "ct_model.h"
#include "ct_model_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- registry ------------------------------------------------------- */

int ct_backend_find(const char *device, const struct ct_backend_ops **out)
{
	*out = NULL;
	if (device == NULL || strcmp(device, "cpu") == 0) {
		*out = &ct_cpu_backend_ops;
		return 0;
	}
	if (strncmp(device, "opencl", 6) == 0) {
		const char *p = device + 6;

		if (*p == ':') {
			p++;
			if (*p == '\0' || strlen(p) > 4 || strspn(p, "0123456789") != strlen(p))
				return ct_error(CT_EINVAL, "bad device '%s' (want opencl:N)", device);
		} else if (*p != '\0') {
			return ct_error(CT_EINVAL, "unknown device '%s' (cpu, opencl or opencl:N)",
					device);
		}
		*out = &ct_ocl_backend_ops;
		return 0;
	}
	return ct_error(CT_EINVAL, "unknown device '%s' (cpu, opencl or opencl:N)", device);
}

int ct_backend_supports(const struct ct_backend_ops *ops, const struct ct_model_config *cfg)
{
	const struct ct_model_ops *m = ct_model_ops_for(cfg);

	if (!(m->flags & CT_MODEL_ANY_BACKEND) && ops != &ct_cpu_backend_ops &&
	    ops != &ct_ocl_backend_ops)
		return ct_error(CT_EUNSUPP, "%s models run on the C reference and OpenCL "
				"only (device %s; use --device cpu or opencl)", m->name, ops->name);
	return 0;
}

/* ---- hyperparameters ------------------------------------------------ */

void ct_wu_hparams_default(struct ct_wu_hparams *hp)
{
	*hp = (struct ct_wu_hparams){
		.steps = 1, .B = 4, .T = 64, .lr = 1e-4f, .beta1 = 0.9f,
		.beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f,
		.grad_clip = 0.0f,
	};
}

/* A hyperparameter and its allowed range; open_lo/open_hi exclude the
 * bound itself. */
struct float_range {
	const char *name;
	float x, lo, hi;
	int open_lo, open_hi;
};

static int check_float(const struct float_range *r)
{
	if (!isfinite(r->x) || r->x < r->lo || (r->open_lo && r->x == r->lo) ||
	    r->x > r->hi || (r->open_hi && r->x == r->hi))
		return ct_error(CT_ERANGE, "%s = %g is out of range (%s%g, %g%s)",
				r->name, (double)r->x, r->open_lo ? "(" : "[",
				(double)r->lo, (double)r->hi, r->open_hi ? ")" : "]");
	return 0;
}

int ct_wu_hparams_check(const struct ct_wu_hparams *hp,
			const struct ct_model_config *cfg, uint64_t ntokens)
{
	int rc = 0;

	if (hp->steps < 1 || hp->steps > CT_WU_MAX_STEPS)
		return ct_error(CT_ERANGE, "steps = %d (must be 1..%d)", hp->steps,
				CT_WU_MAX_STEPS);
	if (hp->B < 1 || hp->B > CT_WU_MAX_B)
		return ct_error(CT_ERANGE, "batch = %d (must be 1..%d)", hp->B, CT_WU_MAX_B);
	if (hp->T < 1 || hp->T > cfg->maxT)
		return ct_error(CT_EINVAL, "sequence length %d is over the model's max_seq_len %d",
				hp->T, cfg->maxT);
	if ((uint64_t)hp->B * (uint64_t)hp->T + 1 > ntokens)
		return ct_error(CT_ERANGE, "a batch needs B*T+1 = %llu tokens but the data has %llu",
				(unsigned long long)hp->B * hp->T + 1,
				(unsigned long long)ntokens);
	const struct float_range ranges[] = {
		{ "lr", hp->lr, 0.0f, 1e3f, 0, 0 },
		{ "beta1", hp->beta1, 0.0f, 1.0f, 0, 1 },
		{ "beta2", hp->beta2, 0.0f, 1.0f, 0, 1 },
		{ "eps", hp->eps, 0.0f, 1.0f, 1, 0 },
		{ "weight_decay", hp->weight_decay, 0.0f, 1e3f, 0, 0 },
		{ "grad_clip", hp->grad_clip, 0.0f, 1e30f, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]) && rc == 0; i++)
		rc = check_float(&ranges[i]);
	if (rc == 0)
		rc = ct_lora_spec_check(&hp->lora, cfg);
	return rc;
}

uint64_t ct_wu_batch_start(uint64_t i, uint64_t n, int B, int T)
{
	uint64_t bt = (uint64_t)B * (uint64_t)T;
	uint64_t nb = (n - 1) / bt;

	return (i % nb) * bt;
}

const ct_tok *ct_wu_targets(const struct ct_tokens *t, uint64_t s, int BT,
			    ct_tok *scratch, int *ntrained)
{
	const ct_tok *tg = t->tok + s + 1;
	int n = 0;

	if (t->train == NULL) {
		*ntrained = BT;
		return tg;
	}
	for (int r = 0; r < BT; r++) {
		int on = (t->train[s + 1 + (uint64_t)r] & CT_TOKENS_TRAINED) != 0;

		scratch[r] = on ? tg[r] : tg[r] | CT_TOK_UNTRAINED;
		n += on;
	}
	*ntrained = n;
	return scratch;
}

/* ---- the work unit -------------------------------------------------- */

struct ct_wu {
	const struct ct_backend_ops *ops;
	struct ct_backend *be;
	const struct ct_gpt2 *model;	/* the caller's, or &conv */
	struct ct_gpt2 conv;		/* the model stored as hp.lora.base_fmt */
	const struct ct_tokens *tokens;
	struct ct_wu_hparams hp;
	int step;			/* steps done */
	float last_loss;
	int have_hashes;
	ct_tok *tgt;			/* B*T targets with their mask, when masked */
	size_t nlora;			/* adapter floats (LoRA), else 0 */
	unsigned char model_hash[CT_SHA256_LEN];
	unsigned char tokens_hash[CT_SHA256_LEN];
};

/* The backend for device that runs model, after checking that tokens are
 * all inside its vocabulary. */
static int backend_for(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
		       const char *device, const struct ct_backend_ops **ops)
{
	int rc;

	if (tokens->tok == NULL && tokens->n > 0)	/* ct_tokens_load_any, not widened */
		return ct_error(CT_EINVAL, "tokens mapped without widening (ct_tokens_load)");
	rc = ct_tokens_check_vocab(tokens, model->cfg.V);
	if (rc < 0)
		return rc;
	rc = ct_backend_find(device, ops);
	if (rc == 0)
		rc = ct_backend_supports(*ops, &model->cfg);
	return rc;
}

/* Make wu->model the WU's model stored as fmt: the caller's when it is,
 * else converted (float32 -> compact) or widened (compact -> float32)
 * into wu->conv. */
static int wu_convert(struct ct_wu *wu, int fmt)
{
	const struct ct_gpt2 *m = wu->model;
	int rc;

	if (m->fmt == fmt)
		return 0;
	if (fmt != CT_BASE_F32)
		rc = ct_base_convert(&m->cfg, m->params, fmt, &wu->conv);
	else {
		wu->conv.cfg = m->cfg;
		wu->conv.lay = m->lay;
		rc = ct_base_params_f32(m, &wu->conv.params);
	}
	if (rc == 0)
		wu->model = &wu->conv;
	return rc;
}

/* The frozen base of a LoRA WU, or the weights of a full one, into the
 * backend. */
static int wu_load_base(struct ct_wu *wu)
{
	const struct ct_gpt2 *m = wu->model;

	if (m->fmt == CT_BASE_F32)
		return wu->ops->load_state(wu->be, m->params, NULL, NULL);
	if (wu->ops->load_base == NULL)
		return ct_error(CT_EUNSUPP, "the %s backend cannot hold a %s base",
				wu->ops->name, ct_base_fmt_name(m->fmt));
	return wu->ops->load_base(wu->be, m->fmt, m->base, m->base_bytes);
}

/* Validate inputs, find and open the backend (no state loaded yet). */
static int wu_create(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
		     const struct ct_wu_hparams *hp, const char *device,
		     struct ct_wu **out)
{
	struct ct_wu *wu;
	const struct ct_backend_ops *ops;
	int rc;

	*out = NULL;
	rc = ct_wu_hparams_check(hp, &model->cfg, tokens->n);
	if (rc < 0)
		return rc;
	rc = backend_for(model, tokens, device, &ops);
	if (rc < 0)
		return rc;
	wu = calloc(1, sizeof(*wu));
	if (wu == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	wu->ops = ops;
	wu->model = model;
	rc = wu_convert(wu, hp->lora.base_fmt);
	if (rc < 0) {
		free(wu);
		return rc;
	}
	model = wu->model;
	wu->tokens = tokens;
	wu->hp = *hp;
	wu->last_loss = NAN;
	wu->nlora = ct_lora_nparams(&model->cfg, &hp->lora);
	if (tokens->train != NULL) {
		wu->tgt = malloc((size_t)hp->B * (size_t)hp->T * sizeof(ct_tok));
		if (wu->tgt == NULL) {
			ct_gpt2_free(&wu->conv);
			free(wu);
			return ct_error(CT_ENOMEM, "out of memory for the masked targets");
		}
	}
	if (hp->lora.rank > 0 && ops->open_lora == NULL)
		rc = ct_error(CT_EUNSUPP, "the %s backend cannot train LoRA adapters", ops->name);
	else if (hp->lora.rank > 0)
		rc = ops->open_lora(device ? device : "cpu", &model->cfg, hp->B, hp->T,
				    &hp->lora, &wu->be);
	else
		rc = ops->open(device ? device : "cpu", &model->cfg, hp->B, hp->T, 1, &wu->be);
	if (rc < 0) {
		ct_gpt2_free(&wu->conv);
		free(wu->tgt);
		free(wu);
		return rc;
	}
	*out = wu;
	return 0;
}

/* Initial adapters of a LoRA WU (ct_lora_init from the WU's seed), zero
 * moments. */
static int wu_lora_start(struct ct_wu *wu)
{
	float *ad = malloc(wu->nlora * sizeof(float));
	int rc;

	if (ad == NULL)
		return ct_error(CT_ENOMEM, "out of memory for %zu LoRA parameters", wu->nlora);
	rc = ct_lora_init(&wu->model->cfg, &wu->hp.lora, wu->hp.lora_seed, ad);
	if (rc == 0)
		rc = wu->ops->lora_load(wu->be, ad, NULL, NULL);
	free(ad);
	return rc;
}

int ct_wu_open(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	       const struct ct_wu_hparams *hp, const char *device,
	       struct ct_wu **out)
{
	struct ct_wu *wu;
	int rc;

	rc = wu_create(model, tokens, hp, device, &wu);
	if (rc < 0)
		return rc;
	rc = wu_load_base(wu);
	if (rc == 0 && wu->nlora > 0)
		rc = wu_lora_start(wu);
	if (rc < 0) {
		ct_wu_close(wu);
		return rc;
	}
	*out = wu;
	return 0;
}

int ct_wu_set_adapters(struct ct_wu *wu, const float *ad)
{
	if (wu->nlora == 0 || wu->step != 0)
		return ct_error(CT_ESTATE, "initial adapters: %s",
				wu->nlora == 0 ? "not a LoRA work unit" : "steps done already");
	return wu->ops->lora_load(wu->be, ad, NULL, NULL);
}

int ct_wu_step(struct ct_wu *wu, float *loss)
{
	struct ct_step_args a;
	const ct_tok *batch, *targets;
	uint64_t s;
	int rc, ntr;

	if (wu->step >= wu->hp.steps)
		return ct_error(CT_ESTATE, "work unit already finished (%d steps)", wu->hp.steps);
	s = ct_wu_batch_start((uint64_t)wu->step, wu->tokens->n, wu->hp.B, wu->hp.T);
	batch = wu->tokens->tok + s;
	targets = ct_wu_targets(wu->tokens, s, wu->hp.B * wu->hp.T, wu->tgt, &ntr);
	(void)ntr;	/* a batch without a trained target still steps (loss 0) */
	a.t = wu->step + 1;
	a.grad_clip = wu->hp.grad_clip;
	a.opt = (struct ct_adamw_args){
		.lr = wu->hp.lr, .beta1 = wu->hp.beta1, .beta2 = wu->hp.beta2,
		.eps = wu->hp.eps, .weight_decay = wu->hp.weight_decay,
	};
	ct_adamw_bias_corrections(a.opt.beta1, a.opt.beta2, a.t, &a.opt.bc1, &a.opt.bc2);
	rc = wu->ops->step(wu->be, batch, targets, &a, loss);
	if (rc < 0)
		return rc;
	wu->step++;
	wu->last_loss = *loss;
	return 0;
}

int ct_wu_steps_done(const struct ct_wu *wu)
{
	return wu->step;
}

int ct_wu_done(const struct ct_wu *wu)
{
	return wu->step >= wu->hp.steps;
}

float ct_wu_last_loss(const struct ct_wu *wu)
{
	return wu->last_loss;
}

const char *ct_wu_backend_name(const struct ct_wu *wu)
{
	return wu->ops->name;
}

int ct_wu_read_params(struct ct_wu *wu, float *params)
{
	if (wu->model->fmt != CT_BASE_F32) {	/* frozen: the stored base, widened */
		ct_base_widen(&wu->model->cfg, wu->model->fmt, wu->model->base, params);
		return 0;
	}
	return wu->ops->read_state(wu->be, params, NULL, NULL);
}

size_t ct_wu_nparams_trained(const struct ct_wu *wu)
{
	return wu->nlora > 0 ? wu->nlora : wu->model->lay.total;
}

int ct_wu_read_adapters(struct ct_wu *wu, float *adapters)
{
	if (wu->nlora == 0)
		return ct_error(CT_ESTATE, "not a LoRA work unit");
	return wu->ops->lora_read(wu->be, adapters, NULL, NULL);
}

int ct_wu_read_trained(struct ct_wu *wu, float *out)
{
	return wu->nlora > 0 ? ct_wu_read_adapters(wu, out) : ct_wu_read_params(wu, out);
}

int ct_wu_save_model(struct ct_wu *wu, const char *path)
{
	float *p = malloc(wu->model->lay.total * sizeof(float));
	int rc;

	if (p == NULL)
		return ct_error(CT_ENOMEM, "out of memory for the trained weights");
	rc = ct_wu_read_params(wu, p);
	if (rc == 0)
		rc = ct_gpt2_save(path, &wu->model->cfg, p);
	free(p);
	return rc;
}

void ct_wu_close(struct ct_wu *wu)
{
	if (wu == NULL)
		return;
	if (wu->be != NULL)
		wu->ops->close(wu->be);
	ct_gpt2_free(&wu->conv);
	free(wu->tgt);
	free(wu);
}

int ct_wu_run(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	      const struct ct_wu_hparams *hp, const char *device,
	      float *params_out, float *losses)
{
	struct ct_wu *wu = NULL;
	float loss;
	int rc;

	rc = ct_wu_open(model, tokens, hp, device, &wu);
	if (rc < 0)
		return rc;
	while (!ct_wu_done(wu)) {
		int i = wu->step;

		rc = ct_wu_step(wu, &loss);
		if (rc < 0)
			goto out;
		if (losses != NULL)
			losses[i] = loss;
	}
	rc = ct_wu_read_trained(wu, params_out);
out:
	ct_wu_close(wu);
	return rc;
}

/* ---- state file ----------------------------------------------------- */

#define STATE_MAGIC "CTWUSTAT"
#define STATE_VERSION 1
#define STATE_VERSION_LORA 2
#define STATE_HDR 256

/* SHA-256 of the base weights and the tokens, once per WU. */
static int wu_input_hashes(struct ct_wu *wu)
{
	int rc;

	if (wu->have_hashes)
		return 0;
	ct_base_sha256(wu->model, wu->model_hash);	/* the base as stored */
	rc = ct_tokens_sha256(wu->tokens, wu->tokens_hash);	/* 16-bit packing when ids fit */
	wu->have_hashes = rc == 0;
	return rc;
}

static void state_header(struct ct_wu *wu, unsigned char h[STATE_HDR])
{
	const struct ct_model_config *c = &wu->model->cfg;
	const int32_t ints[10] = { c->maxT, c->V, c->L, c->NH, c->C, c->Vp,
				   wu->hp.steps, wu->hp.B, wu->hp.T, wu->step };
	const float fl[6] = { wu->hp.lr, wu->hp.beta1, wu->hp.beta2, wu->hp.eps,
			      wu->hp.weight_decay, wu->hp.grad_clip };

	memset(h, 0, STATE_HDR);
	memcpy(h, STATE_MAGIC, 8);
	ct_le_put32(h + 8, wu->nlora > 0 ? STATE_VERSION_LORA : STATE_VERSION);
	memcpy(h + 16, ints, sizeof(ints));
	memcpy(h + 56, fl, sizeof(fl));
	ct_le_put_f32(h + 80, wu->last_loss);
	ct_le_put64(h + 88, wu->model->lay.total);
	ct_le_put64(h + 96, wu->tokens->n);
	ct_le_put64(h + 104, ct_wu_batch_start((uint64_t)wu->step, wu->tokens->n,
					   wu->hp.B, wu->hp.T));
	memcpy(h + 112, wu->model_hash, CT_SHA256_LEN);
	memcpy(h + 144, wu->tokens_hash, CT_SHA256_LEN);
	if (wu->nlora > 0) {
		ct_le_put32(h + 176, (uint32_t)wu->hp.lora.rank);
		ct_le_put_f32(h + 180, wu->hp.lora.alpha);
		ct_le_put32(h + 184, wu->hp.lora.targets);
		ct_le_put32(h + 188, (uint32_t)wu->hp.lora.base_fmt);
		ct_le_put64(h + 192, wu->hp.lora_seed);
		ct_le_put64(h + 200, wu->nlora);
	}
}

/* Read part 0..2 of the trained state (weights or adapters, m, v). */
static int state_read_part(struct ct_wu *wu, int part, float *buf)
{
	float *p = part == 0 ? buf : NULL, *m = part == 1 ? buf : NULL;
	float *v = part == 2 ? buf : NULL;

	if (wu->nlora > 0)
		return wu->ops->lora_read(wu->be, p, m, v);
	return wu->ops->read_state(wu->be, p, m, v);
}

/* Write buf to the file and the running hash. */
static int state_put(struct ct_afile *af, struct ct_sha256_ctx *sha,
		     const void *buf, size_t n)
{
	int rc = ct_sha256_update(sha, buf, n);

	if (rc < 0)
		return rc;
	return ct_afile_write(af, buf, n);
}

uint64_t ct_wu_mem_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp)
{
	return ct_ocl_wu_bytes(cfg, hp, NULL);
}

/* The longer side of the largest matrix: the vocabulary, the MLP's up
 * rows (GPT-2 4C; Llama's fused gate/up 2F) or the fused q/k/v rows. */
static uint64_t longest_side(const struct ct_model_config *cfg)
{
	const struct ct_model_dims d = ct_model_dims(cfg);
	uint64_t s = (uint64_t)cfg->Vp, w;

	w = d.fc > d.qkv ? (uint64_t)d.fc : (uint64_t)d.qkv;
	return w > s ? w : s;
}

uint64_t ct_ref_wu_bytes(const struct ct_model_config *cfg, const struct ct_wu_hparams *hp)
{
	const int lora = hp->lora.rank > 0, fmt = lora ? hp->lora.base_fmt : CT_BASE_F32;
	struct ct_gpt2_layout lay;
	uint64_t weights, need;

	ct_gpt2_layout(cfg, &lay);
	weights = 4 * (uint64_t)lay.total;
	if (fmt != CT_BASE_F32) {
		struct ct_base_layout bl;
		uint64_t side = longest_side(cfg);

		ct_base_layout(cfg, fmt, &bl);
		weights = bl.bytes;
		need = 4 * (64 * side > (1u << 20) ? 64 * side : (1u << 20));
	} else {
		need = 0;
	}
	need += 2 * weights + 4 * (uint64_t)ct_model_act_floats(cfg, hp->B, hp->T, 1);
	if (lora)
		need += 4 * (uint64_t)ct_lora_state_floats(cfg, &hp->lora, hp->B, hp->T, 1);
	else
		need += 12 * (uint64_t)lay.total;
	return need;
}

double ct_wu_state_bytes(const struct ct_wu *wu)
{
	return (double)STATE_HDR + 3.0 * (double)ct_wu_nparams_trained(wu) * sizeof(float) +
	       CT_SHA256_LEN;
}

int ct_wu_save_state(struct ct_wu *wu, const char *path)
{
	const size_t n = ct_wu_nparams_trained(wu);
	unsigned char hdr[STATE_HDR], digest[CT_SHA256_LEN];
	struct ct_afile af = { .fd = -1 };
	struct ct_sha256_ctx *sha = NULL;
	float *buf = malloc(n * sizeof(float));
	int rc;

	if (buf == NULL)
		return ct_error(CT_ENOMEM, "out of memory for the state of %zu parameters", n);
	rc = wu_input_hashes(wu);
	state_header(wu, hdr);
	if (rc == 0)
		rc = ct_sha256_init(&sha);
	if (rc < 0)
		goto out;
	rc = ct_afile_open(&af, path, 0600);
	if (rc < 0)
		goto out;
	rc = state_put(&af, sha, hdr, sizeof(hdr));
	for (int part = 0; part < 3 && rc == 0; part++) {
		rc = state_read_part(wu, part, buf);
		if (rc == 0)
			rc = state_put(&af, sha, buf, n * sizeof(float));
	}
	if (rc < 0)
		goto out;
	rc = ct_sha256_final(sha, digest);
	sha = NULL;
	if (rc == 0)
		rc = ct_afile_write(&af, digest, sizeof(digest));
	if (rc == 0)
		rc = ct_afile_commit(&af);
out:
	ct_afile_abort(&af);
	ct_sha256_abort(sha);
	free(buf);
	return rc;
}

int ct_wu_state_digest(struct ct_wu *wu, unsigned char out[CT_SHA256_LEN])
{
	const size_t n = ct_wu_nparams_trained(wu);
	unsigned char head[12] = "CTCHAIN1";
	struct ct_sha256_ctx *sha = NULL;
	float *buf = malloc(n * sizeof(float));
	int rc = buf ? ct_sha256_init(&sha) : CT_ENOMEM;

	ct_le_put32(head + 8, (uint32_t)ct_wu_steps_done(wu));
	if (rc == 0)
		rc = ct_sha256_update(sha, head, sizeof(head));
	for (int part = 0; part < 3 && rc == 0; part++) {
		rc = state_read_part(wu, part, buf);
		if (rc == 0)
			rc = ct_sha256_update(sha, buf, n * sizeof(float));
	}
	if (rc == 0) {
		rc = ct_sha256_final(sha, out);
		sha = NULL;
	}
	ct_sha256_abort(sha);
	free(buf);
	return rc;
}

int ct_wu_chain_link(struct ct_wu *wu, unsigned char out[CT_SHA256_LEN])
{
	const size_t n = ct_wu_nparams_trained(wu);
	float *w;
	int rc;

	if (!ct_wu_done(wu))
		return ct_wu_state_digest(wu, out);
	w = malloc(n * sizeof(float));
	if (w == NULL)
		return ct_error(CT_ENOMEM, "out of memory for the %zu trained floats", n);
	rc = ct_wu_read_trained(wu, w);
	if (rc == 0)
		ct_sha256(w, n * sizeof(float), out);
	free(w);
	return rc;
}

/* Check a mapped state file against the WU being resumed. */
static int state_check(struct ct_wu *wu, const unsigned char *h, size_t len,
		       const char *path)
{
	const size_t n = ct_wu_nparams_trained(wu);
	const uint32_t version = wu->nlora > 0 ? STATE_VERSION_LORA : STATE_VERSION;
	unsigned char saved_hdr[STATE_HDR], digest[CT_SHA256_LEN];
	int32_t ints[10];
	int done;

	if (len < STATE_HDR + CT_SHA256_LEN || memcmp(h, STATE_MAGIC, 8) != 0)
		return ct_error(CT_EFORMAT, "%s: not a work-unit state file", path);
	if (ct_le_get32(h + 8) != STATE_VERSION && ct_le_get32(h + 8) != STATE_VERSION_LORA)
		return ct_error(CT_EFORMAT, "%s: state file version %u not supported",
				path, ct_le_get32(h + 8));
	if (ct_le_get32(h + 8) != version)
		return ct_error(CT_EMISMATCH, "%s: saved %s LoRA", path,
				version == STATE_VERSION ? "with" : "without");
	if (ct_le_get64(h + 88) != wu->model->lay.total || len != STATE_HDR + 3 * n * sizeof(float) + CT_SHA256_LEN)
		return ct_error(CT_EFORMAT, "%s: state file size does not match the model", path);
	ct_sha256(h, len - CT_SHA256_LEN, digest);
	if (memcmp(digest, h + len - CT_SHA256_LEN, CT_SHA256_LEN) != 0)
		return ct_error(CT_ECORRUPT, "%s: state file checksum mismatch (corrupt)", path);
	memcpy(ints, h + 16, sizeof(ints));
	done = ints[9];
	if (done < 0 || done > wu->hp.steps)
		return ct_error(CT_EFORMAT, "%s: bad step count %d", path, done);
	/* Rebuild the header this WU would write at that step and compare. */
	wu->step = done;
	wu->last_loss = ct_le_get_f32(h + 80);
	if (wu_input_hashes(wu) < 0)
		return ct_error(CT_ENOMEM, "%s: could not hash the work unit's tokens", path);
	state_header(wu, saved_hdr);
	if (memcmp(saved_hdr + 16, h + 16, 40) != 0)
		return ct_error(CT_EMISMATCH, "%s: saved for another model config or batch/steps", path);
	if (memcmp(saved_hdr + 56, h + 56, 24) != 0)
		return ct_error(CT_EMISMATCH, "%s: saved with other hyperparameters", path);
	if (memcmp(saved_hdr + 112, h + 112, CT_SHA256_LEN) != 0)
		return ct_error(CT_EMISMATCH, "%s: saved for another base model", path);
	if (memcmp(saved_hdr + 96, h + 96, 16) != 0 ||
	    memcmp(saved_hdr + 144, h + 144, CT_SHA256_LEN) != 0)
		return ct_error(CT_EMISMATCH, "%s: saved for other training data", path);
	if (memcmp(saved_hdr + 176, h + 176, STATE_HDR - 176) != 0)
		return ct_error(CT_EMISMATCH, "%s: saved with another LoRA rank, alpha, "
				"targets or seed", path);
	return 0;
}

int ct_wu_resume(const char *state_path, const struct ct_gpt2 *model,
		 const struct ct_tokens *tokens, const struct ct_wu_hparams *hp,
		 const char *device, struct ct_wu **out)
{
	struct ct_mmap map = { 0 };
	struct ct_wu *wu = NULL;
	const float *p;
	size_t n;
	int rc;

	*out = NULL;
	rc = ct_file_map(state_path, &map);
	if (rc < 0)
		return rc;
	rc = wu_create(model, tokens, hp, device, &wu);
	if (rc < 0)
		goto out;
	rc = state_check(wu, map.addr, map.len, state_path);
	if (rc < 0)
		goto out;
	p = (const float *)((const unsigned char *)map.addr + STATE_HDR);
	n = ct_wu_nparams_trained(wu);
	if (wu->nlora > 0) {
		rc = wu_load_base(wu);
		if (rc == 0)
			rc = wu->ops->lora_load(wu->be, p, p + n, p + 2 * n);
	} else {
		rc = wu->ops->load_state(wu->be, p, p + n, p + 2 * n);
	}
	if (rc < 0)
		goto out;
	*out = wu;
	wu = NULL;
out:
	ct_wu_close(wu);
	ct_file_unmap(&map);
	return rc;
}

/* ---- evaluation ----------------------------------------------------- */

int ct_eval(const struct ct_gpt2 *model, const struct ct_tokens *tokens,
	    int B, int T, int nbatches, const char *device, float *mean_loss)
{
	const struct ct_backend_ops *ops;
	struct ct_backend *be = NULL;
	uint64_t bt = (uint64_t)B * (uint64_t)T;
	int rc;

	if (B < 1 || B > CT_WU_MAX_B || T < 1)
		return ct_error(CT_ERANGE, "batch %d x %d is out of range", B, T);
	if (T > model->cfg.maxT)
		return ct_error(CT_EINVAL, "sequence length %d is over the model's max_seq_len %d",
				T, model->cfg.maxT);
	if (bt + 1 > tokens->n)
		return ct_error(CT_ERANGE, "a batch needs B*T+1 = %llu tokens but the data has %llu",
				(unsigned long long)bt + 1, (unsigned long long)tokens->n);
	if (nbatches <= 0)
		nbatches = (int)((tokens->n - 1) / bt > 1000000 ? 1000000 : (tokens->n - 1) / bt);
	rc = backend_for(model, tokens, device, &ops);
	if (rc < 0)
		return rc;
	if (model->fmt != CT_BASE_F32) {	/* a compact base: its widened weights */
		struct ct_gpt2 w = { .cfg = model->cfg, .lay = model->lay };

		rc = ct_base_params_f32(model, &w.params);
		if (rc == 0)
			rc = ct_eval(&w, tokens, B, T, nbatches, device, mean_loss);
		ct_gpt2_free(&w);
		return rc;
	}
	rc = ops->open(device ? device : "cpu", &model->cfg, B, T, 0, &be);
	if (rc < 0)
		return rc;
	rc = ops->load_state(be, model->params, NULL, NULL);
	if (rc == 0)
		rc = ct_eval_batches(ops, be, tokens, B, T, nbatches, mean_loss);
	ops->close(be);
	return rc;
}

int ct_eval_batches(const struct ct_backend_ops *ops, struct ct_backend *be,
		    const struct ct_tokens *tokens, int B, int T, int nbatches,
		    float *mean_loss)
{
	int BT = B * T, rc = 0, counted = 0;
	float acc = 0.0f, loss;
	ct_tok *tgt = NULL;

	if (tokens->train != NULL) {
		tgt = malloc((size_t)BT * sizeof(ct_tok));
		if (tgt == NULL)
			return ct_error(CT_ENOMEM, "out of memory for the masked targets");
	}
	for (int i = 0; i < nbatches && rc == 0; i++) {
		uint64_t s = ct_wu_batch_start((uint64_t)i, tokens->n, B, T);
		const ct_tok *tg;
		int ntr;

		tg = ct_wu_targets(tokens, s, BT, tgt, &ntr);
		if (ntr == 0)	/* nothing to count: not a batch of the mean */
			continue;
		rc = ops->eval(be, tokens->tok + s, tg, &loss);
		if (rc == 0)
			acc = acc + loss;
		counted++;
	}
	free(tgt);
	if (rc == 0 && counted == 0)
		rc = ct_error(CT_EINVAL, "no trained token in %d evaluation batches", nbatches);
	if (rc == 0)
		*mean_loss = acc / (float)counted;
	return rc;
}
