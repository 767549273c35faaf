/*
 * ct_lora_model.c - LoRA adapters in the C reference model (see
 * ct_lora_model.h for the arithmetic): the adapter layer, the state
 * attached to a struct ct_model, the hooks ct_model.c calls next to its
 * target matmuls, and the adapter-only training step.
 */
#include "config.h"
#include "ct_lora_model.h"
#include "ct_err.h"
#include "ct_model_ops.h"

#include <stdlib.h>
#include <string.h>

struct ct_lora_state {
	struct ct_lora_spec spec;
	float s;			/* alpha / r */
	int train;
	int nslots;
	struct ct_lora_slot *slots;
	int *slot_of;			/* (L, 4): slot index or -1 */
	size_t n;			/* adapter floats */
	float *ad, *grad, *m, *v;	/* adapters; grads/moments when training */
	float *hs;			/* (nslots, BT, r) saved by forward */
	float *dh;			/* (BT, r) backward scratch */
	float *u;			/* (BT, 4C) forward scratch */
};

static void scale(float *x, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		x[i] = x[i] * s;
}

void ct_lora_layer_forward(float *out, float *hs, float *u, const float *inp,
			   const float *A, const float *Bm, float s,
			   int BT, int C, int OC, int r)
{
	size_t n = (size_t)BT * OC;

	ct_matmul_forward(hs, inp, A, NULL, BT, C, r);
	scale(hs, (size_t)BT * r, s);
	ct_matmul_forward(u, hs, Bm, NULL, BT, r, OC);
	for (size_t i = 0; i < n; i++)
		out[i] = out[i] + u[i];
}

void ct_lora_layer_backward(float *dinp, float *dA, float *dB, float *dh,
			    const float *dout, const float *inp, const float *hs,
			    const float *A, const float *Bm, float s,
			    int BT, int C, int OC, int r)
{
	memset(dh, 0, (size_t)BT * r * sizeof(float));
	ct_matmul_backward(dh, dB, NULL, dout, hs, Bm, BT, r, OC);
	scale(dh, (size_t)BT * r, s);
	ct_matmul_backward(dinp, dA, NULL, dh, inp, A, BT, C, r);
}

static int target_index(enum ct_lora_target t)
{
	int i = 0;

	while (i < CT_LORA_NTARGETS - 1 && (1 << i) != (int)t)
		i++;
	return i;
}

/* The widest output row an adapter adds into (st->u per position): the
 * fused q/k/v rows, the MLP's up rows or C. */
static size_t u_width(const struct ct_model_config *c)
{
	const struct ct_model_dims d = ct_model_dims(c);
	const int w = d.fc > d.qkv ? d.fc : d.qkv;

	return (size_t)(w > c->C ? w : c->C);
}

size_t ct_lora_state_floats(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
			    int B, int T, int train)
{
	const size_t BT = (size_t)B * (size_t)T, n = ct_lora_nparams(cfg, spec);
	size_t f = n + (size_t)ct_lora_nslots(cfg, spec) * BT * (size_t)spec->rank +
		   BT * u_width(cfg);

	return train ? f + 3 * n + BT * (size_t)spec->rank : f;
}

static float *alloc_f(size_t n)
{
	return calloc(n ? n : 1, sizeof(float));
}

void ct_lora_detach(struct ct_model *m)
{
	struct ct_lora_state *st = m->lora;

	if (st == NULL)
		return;
	free(st->slots);
	free(st->slot_of);
	free(st->ad);
	free(st->grad);
	free(st->m);
	free(st->v);
	free(st->hs);
	free(st->dh);
	free(st->u);
	free(st);
	m->lora = NULL;
	m->lora_ops = NULL;
}

static const struct ct_model_lora_ops lora_ops;

int ct_lora_attach(struct ct_model *m, const struct ct_lora_spec *spec,
		   const float *adapters)
{
	const struct ct_model_config *c = &m->cfg;
	const size_t BT = (size_t)m->B * m->T;
	struct ct_lora_state *st;
	int rc = ct_lora_spec_check(spec, c);

	if (rc < 0)
		return rc;
	if (spec->rank == 0 || m->grads != NULL || m->lora != NULL)
		return ct_error(CT_EINVAL, "LoRA needs rank > 0 and a model with frozen weights");
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return ct_error(CT_ENOMEM, "out of memory for LoRA state");
	m->lora = st;
	m->lora_ops = &lora_ops;
	st->spec = *spec;
	st->s = spec->alpha / (float)spec->rank;
	st->train = m->gmem != NULL;
	st->nslots = ct_lora_nslots(c, spec);
	st->n = ct_lora_nparams(c, spec);
	st->slots = calloc((size_t)st->nslots, sizeof(*st->slots));
	st->slot_of = malloc((size_t)c->L * CT_LORA_NTARGETS * sizeof(int));
	st->ad = alloc_f(st->n);
	st->hs = alloc_f((size_t)st->nslots * BT * spec->rank);
	st->u = alloc_f(BT * u_width(c));
	if (st->train) {
		st->grad = alloc_f(st->n);
		st->m = alloc_f(st->n);
		st->v = alloc_f(st->n);
		st->dh = alloc_f(BT * spec->rank);
	}
	if (st->slots == NULL || st->slot_of == NULL || st->ad == NULL || st->hs == NULL ||
	    st->u == NULL || (st->train && (st->grad == NULL || st->m == NULL ||
					    st->v == NULL || st->dh == NULL))) {
		ct_lora_detach(m);
		return ct_error(CT_ENOMEM, "out of memory for %zu LoRA parameters", st->n);
	}
	for (int i = 0; i < c->L * CT_LORA_NTARGETS; i++)
		st->slot_of[i] = -1;
	for (int i = 0; i < st->nslots; i++) {
		ct_lora_slot(c, spec, i, &st->slots[i]);
		st->slot_of[st->slots[i].layer * CT_LORA_NTARGETS +
			    target_index(st->slots[i].target)] = i;
	}
	if (adapters != NULL)
		memcpy(st->ad, adapters, st->n * sizeof(float));
	return 0;
}

size_t ct_lora_model_nparams(const struct ct_model *m)
{
	return m->lora ? m->lora->n : 0;
}

float *ct_lora_model_adapters(struct ct_model *m)
{
	return m->lora ? m->lora->ad : NULL;
}

float *ct_lora_model_grads(struct ct_model *m)
{
	return m->lora ? m->lora->grad : NULL;
}

float *ct_lora_model_m(struct ct_model *m)
{
	return m->lora ? m->lora->m : NULL;
}

float *ct_lora_model_v(struct ct_model *m)
{
	return m->lora ? m->lora->v : NULL;
}

/* Slot index of (l, t), or -1. */
static int slot_at(const struct ct_model *m, int l, enum ct_lora_target t)
{
	if (m->lora == NULL)
		return -1;
	return m->lora->slot_of[l * CT_LORA_NTARGETS + target_index(t)];
}

void ct_lora_forward(struct ct_model *m, int l, enum ct_lora_target t,
		     float *out, const float *inp)
{
	struct ct_lora_state *st = m->lora;
	const int BT = m->B * m->T, i = slot_at(m, l, t);
	const struct ct_lora_slot *sl;

	if (i < 0)
		return;
	sl = &st->slots[i];
	ct_lora_layer_forward(out, st->hs + (size_t)i * BT * st->spec.rank, st->u, inp,
			      st->ad + sl->a_off, st->ad + sl->b_off, st->s, BT,
			      sl->in, sl->out, st->spec.rank);
}

void ct_lora_backward(struct ct_model *m, int l, enum ct_lora_target t,
		      float *dinp, const float *dout, const float *inp)
{
	struct ct_lora_state *st = m->lora;
	const int BT = m->B * m->T, i = slot_at(m, l, t);
	const struct ct_lora_slot *sl;

	if (i < 0 || !st->train)
		return;
	sl = &st->slots[i];
	ct_lora_layer_backward(dinp, st->grad + sl->a_off, st->grad + sl->b_off, st->dh,
			       dout, inp, st->hs + (size_t)i * BT * st->spec.rank,
			       st->ad + sl->a_off, st->ad + sl->b_off, st->s, BT,
			       sl->in, sl->out, st->spec.rank);
}

int ct_lora_step(struct ct_model *m, const ct_tok *inputs, const ct_tok *targets,
		 const struct ct_adamw_args *a, float grad_clip, float *loss)
{
	struct ct_lora_state *st = m->lora;

	if (st == NULL || !st->train)
		return ct_error(CT_ESTATE, "model has no trainable LoRA adapters");
	memset(st->grad, 0, st->n * sizeof(float));
	*loss = ct_model_forward(m, inputs, targets);
	ct_model_backward(m, inputs, targets);
	if (grad_clip > 0.0f)
		ct_grad_clip(st->grad, st->n, grad_clip);
	ct_adamw_update(st->ad, st->grad, st->m, st->v, st->n, a);
	return 0;
}

static const struct ct_model_lora_ops lora_ops = {
	.forward = ct_lora_forward, .backward = ct_lora_backward,
	.step = ct_lora_step, .detach = ct_lora_detach,
};
