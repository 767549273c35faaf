/*
 * ct_cpu_backend.c - the "cpu" backend of ct_engine: the C reference model
 * of ct_model.h behind the struct ct_backend_ops interface.
 *
 * Backends keep their own context struct and hand it out as the opaque
 * struct ct_backend pointer (cast back on every call).
 */
#include "config.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_lora_model.h"
#include "ct_model_ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cpu_be {
	struct ct_model m;
	int training;
	int borrowed;	/* LoRA: m.params is the caller's frozen base, not ours */
};

static struct cpu_be *cpu(struct ct_backend *be)
{
	return (struct cpu_be *)(void *)be;
}

/* A zeroed cpu_be (*c) when device is "cpu"; else CT_EINVAL. */
static int cpu_alloc(const char *device, struct cpu_be **c)
{
	*c = NULL;
	if (strcmp(device, "cpu") != 0)
		return ct_error(CT_EINVAL, "cpu backend: bad device '%s'", device);
	*c = calloc(1, sizeof(**c));
	if (*c == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	return 0;
}

static int cpu_open(const char *device, const struct ct_model_config *cfg,
		    int B, int T, int training, struct ct_backend **out)
{
	struct cpu_be *c;
	int rc = cpu_alloc(device, &c);

	*out = NULL;
	if (rc < 0)
		return rc;
	rc = ct_model_init(&c->m, cfg, NULL, B, T, training);
	if (rc < 0) {
		free(c);
		return rc;
	}
	c->training = training;
	*out = (struct ct_backend *)(void *)c;
	return 0;
}

static int cpu_load_state(struct ct_backend *be, const float *params,
			  const float *m, const float *v)
{
	struct cpu_be *c = cpu(be);
	size_t n = c->m.lay.total * sizeof(float);

	if (c->borrowed)		/* frozen: read in place, never written */
		c->m.params = (float *)(uintptr_t)params;
	else
		memcpy(c->m.params, params, n);
	if (c->training) {
		if (m != NULL)
			memcpy(c->m.m, m, n);
		else
			memset(c->m.m, 0, n);
		if (v != NULL)
			memcpy(c->m.v, v, n);
		else
			memset(c->m.v, 0, n);
	}
	return 0;
}

static int cpu_step(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, const struct ct_step_args *a,
		    float *loss)
{
	struct ct_model *m = &cpu(be)->m;

	if (m->lora != NULL)
		return ct_lora_step(m, inputs, targets, &a->opt, a->grad_clip, loss);
	if (m->grads == NULL)
		return ct_error(CT_ESTATE, "cpu backend opened for evaluation cannot train");
	ct_model_zero_grad(m);
	*loss = ct_model_forward(m, inputs, targets);
	ct_model_backward(m, inputs, targets);
	if (a->grad_clip > 0.0f)
		ct_grad_clip(m->grads, m->lay.total, a->grad_clip);
	ct_adamw_update(m->params, m->grads, m->m, m->v, m->lay.total, &a->opt);
	return 0;
}

static int cpu_eval(struct ct_backend *be, const ct_tok *inputs,
		    const ct_tok *targets, float *loss)
{
	*loss = ct_model_forward(&cpu(be)->m, inputs, targets);
	return 0;
}

static int cpu_read_state(struct ct_backend *be, float *params, float *m, float *v)
{
	struct cpu_be *c = cpu(be);
	size_t n = c->m.lay.total * sizeof(float);

	if (params != NULL && c->m.base != NULL)	/* a compact frozen base */
		ct_base_widen(&c->m.cfg, c->m.blay.fmt, c->m.base, params);
	else if (params != NULL)
		memcpy(params, c->m.params, n);
	if ((m != NULL || v != NULL) && !c->training)
		return ct_error(CT_ESTATE, "cpu backend opened for evaluation has no optimizer state");
	if (m != NULL)
		memcpy(m, c->m.m, n);
	if (v != NULL)
		memcpy(v, c->m.v, n);
	return 0;
}

static int cpu_read_grads(struct ct_backend *be, float *grads)
{
	struct cpu_be *c = cpu(be);

	if (!c->training)
		return ct_error(CT_ESTATE, "cpu backend opened for evaluation has no gradients");
	memcpy(grads, c->m.grads, c->m.lay.total * sizeof(float));
	return 0;
}

static int cpu_load_range(struct ct_backend *be, size_t off, const float *params, size_t n)
{
	struct cpu_be *c = cpu(be);

	if (c->borrowed)
		return ct_error(CT_ESTATE, "cpu backend: the frozen base weights are borrowed");
	if (off > c->m.lay.total || n > c->m.lay.total - off)
		return ct_error(CT_EINVAL, "weights %zu..%zu of %zu", off, off + n, c->m.lay.total);
	memcpy(c->m.params + off, params, n * sizeof(float));
	return 0;
}

static int cpu_logits(struct ct_backend *be, const ct_tok *inputs, int pos,
		      float *out)
{
	struct ct_model *m = &cpu(be)->m;

	if (pos < 0 || pos >= m->B * m->T)
		return ct_error(CT_EINVAL, "logits of row %d of %d", pos, m->B * m->T);
	if (m->B == 1 && !cpu(be)->training && m->lora == NULL &&
	    (ct_model_ops_for(&m->cfg)->flags & CT_MODEL_PREFIX_LOGITS)) {
		/* causal: the forward of rows 0..pos alone gives row pos's
		 * logits bit for bit (the OpenCL backend does the same) */
		const int T = m->T;

		m->T = pos + 1;
		ct_model_forward(m, inputs, NULL);
		m->T = T;
	} else {
		ct_model_forward(m, inputs, NULL);
	}
	memcpy(out, m->acts.logits + (size_t)pos * m->cfg.Vp, (size_t)m->cfg.V * sizeof(float));
	return 0;
}

static int cpu_open_lora(const char *device, const struct ct_model_config *cfg,
			 int B, int T, const struct ct_lora_spec *spec,
			 struct ct_backend **out)
{
	struct cpu_be *c;
	int rc = cpu_alloc(device, &c);

	*out = NULL;
	if (rc < 0)
		return rc;
	rc = ct_model_init(&c->m, cfg, NULL, B, T, CT_MODEL_FROZEN);
	if (rc == 0)
		rc = ct_lora_attach(&c->m, spec, NULL);
	if (rc < 0) {
		ct_model_free(&c->m);
		free(c);
		return rc;
	}
	/* the base is frozen: use the caller's copy instead of a second one */
	free(c->m.params);
	c->m.params = NULL;
	c->borrowed = 1;
	*out = (struct ct_backend *)(void *)c;	/* training 0: base m, v absent */
	return 0;
}

static int cpu_load_base(struct ct_backend *be, int fmt, const unsigned char *img,
			 size_t bytes)
{
	struct cpu_be *c = cpu(be);
	struct ct_base_layout bl;

	if (!c->borrowed)
		return ct_error(CT_ESTATE, "cpu backend: a compact base needs a LoRA open");
	ct_base_layout(&c->m.cfg, fmt, &bl);
	if (bytes != bl.bytes)
		return ct_error(CT_EINVAL, "cpu backend: %s base of %zu bytes, want %zu",
				ct_base_fmt_name(fmt), bytes, bl.bytes);
	return ct_model_set_base(&c->m, fmt, img);
}

static int cpu_lora_load(struct ct_backend *be, const float *adapters,
			 const float *m, const float *v)
{
	struct ct_model *md = &cpu(be)->m;
	size_t n = ct_lora_model_nparams(md) * sizeof(float);

	if (md->lora == NULL)
		return ct_error(CT_ESTATE, "cpu backend opened without LoRA");
	memcpy(ct_lora_model_adapters(md), adapters, n);
	if (m != NULL)
		memcpy(ct_lora_model_m(md), m, n);
	else
		memset(ct_lora_model_m(md), 0, n);
	if (v != NULL)
		memcpy(ct_lora_model_v(md), v, n);
	else
		memset(ct_lora_model_v(md), 0, n);
	return 0;
}

static int cpu_lora_read(struct ct_backend *be, float *adapters, float *m, float *v)
{
	struct ct_model *md = &cpu(be)->m;
	size_t n = ct_lora_model_nparams(md) * sizeof(float);

	if (md->lora == NULL)
		return ct_error(CT_ESTATE, "cpu backend opened without LoRA");
	if (adapters != NULL)
		memcpy(adapters, ct_lora_model_adapters(md), n);
	if (m != NULL)
		memcpy(m, ct_lora_model_m(md), n);
	if (v != NULL)
		memcpy(v, ct_lora_model_v(md), n);
	return 0;
}

static void cpu_close(struct ct_backend *be)
{
	struct cpu_be *c = cpu(be);

	if (c == NULL)
		return;
	if (c->borrowed)
		c->m.params = NULL;
	ct_model_free(&c->m);
	free(c);
}

const struct ct_backend_ops ct_cpu_backend_ops = {
	.name = "cpu",
	.open = cpu_open,
	.load_state = cpu_load_state,
	.step = cpu_step,
	.eval = cpu_eval,
	.read_state = cpu_read_state,
	.read_grads = cpu_read_grads,
	.open_lora = cpu_open_lora,
	.lora_load = cpu_lora_load,
	.lora_read = cpu_lora_read,
	.load_base = cpu_load_base,
	.close = cpu_close,
	.logits = cpu_logits,
	.load_range = cpu_load_range,
};
