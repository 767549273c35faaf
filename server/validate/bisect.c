/*
 * bisect.c - see bisect.h.
 */
#include "bisect.h"
#include "credit.h"
#include "lora_round.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <string.h>

int ct_bisect_chain_every(const struct ct_model_config *cfg, const struct ct_lora_spec *lora,
			  int batch, int seq, int steps)
{
	struct ct_gpt2_layout lay;
	double ntrained, flops;

	if (lora != NULL && lora->rank > 0) {
		ntrained = (double)ct_lora_nparams(cfg, lora);
		flops = ct_lora_wu_flops(cfg, lora, seq, batch, 1);
	} else {
		ct_gpt2_layout(cfg, &lay);
		ntrained = (double)lay.total;
		flops = ct_credit_wu_flops(cfg, seq, batch, 1);
	}
	return ct_chain_every(steps, ntrained, flops);
}

int ct_bisect_chain_true(const char *chain, int steps, int every, const unsigned char sha[32])
{
	unsigned char last[32];
	int n = ct_chain_nlinks(steps, every);

	if (ct_chain_check(chain, steps, every) < 0)
		return 0;
	ct_chain_link(chain, n - 1, last);
	return memcmp(last, sha, 32) == 0;
}

static int chain_true(const struct ct_bisect_side *s, int steps, int every)
{
	return ct_bisect_chain_true(s->chain, steps, every, s->sha);
}

void ct_bisect_plan(const struct ct_bisect_side *a, const struct ct_bisect_side *b,
		    int steps, int every, struct ct_bisect_plan *p)
{
	int ta, tb, k;

	memset(p, 0, sizeof(*p));
	if (every < 1 || !a->exact || !b->exact || !a->chain[0] || !b->chain[0])
		return;
	ta = chain_true(a, steps, every);
	tb = chain_true(b, steps, every);
	if (ta != tb) {		/* one side lied about its own result */
		p->verdict = ta ? CT_BISECT_FALSE_B : CT_BISECT_FALSE_A;
		return;
	}
	if (!ta)		/* both lie: neither chain says anything */
		return;
	k = ct_chain_first_diff(a->chain, b->chain, ct_chain_nlinks(steps, every));
	if (k < 0)
		return;		/* equal chains end in equal hashes: no dispute */
	p->verdict = CT_BISECT_SEGMENT;
	p->link = k;
	p->step = k > 0 ? ct_chain_link_step(k - 1, steps, every) : 0;
	p->end = ct_chain_link_step(k, steps, every);
	if (k > 0)
		ct_chain_link(a->chain, k - 1, p->agreed);
	ct_chain_link(a->chain, k, p->want_a);
	ct_chain_link(b->chain, k, p->want_b);
}

int ct_bisect_segment(const struct ct_bisect_inputs *in, const struct ct_bisect_plan *plan,
		      unsigned char out[32], int *steps_run)
{
	struct ct_wu *wu = NULL;
	unsigned char d[32];
	float loss;
	int rc;

	*steps_run = 0;
	if (plan->step > 0 && in->state_path == NULL)
		return ct_error(CT_EINVAL, "segment from step %d needs the agreed state",
				plan->step);
	if (plan->step > 0)
		rc = ct_wu_resume(in->state_path, in->model, in->tokens, in->hp, in->device, &wu);
	else
		rc = ct_wu_open(in->model, in->tokens, in->hp, in->device, &wu);
	if (rc == 0 && plan->step == 0 && in->lora_init != NULL)	/* as the client starts */
		rc = ct_wu_set_adapters(wu, in->lora_init);
	if (rc < 0) {
		ct_wu_close(wu);
		return rc;
	}
	if (plan->step > 0) {
		rc = ct_wu_steps_done(wu) == plan->step ? ct_wu_state_digest(wu, d)
			: ct_error(CT_EMISMATCH, "the state is after step %d, not %d",
				   ct_wu_steps_done(wu), plan->step);
		if (rc == 0 && memcmp(d, plan->agreed, 32) != 0)
			rc = ct_error(CT_EMISMATCH, "the state's digest is not the agreed link "
				      "after step %d", plan->step);
	}
	while (rc == 0 && ct_wu_steps_done(wu) < plan->end) {
		rc = ct_wu_step(wu, &loss);
		*steps_run += rc == 0;
	}
	if (rc == 0)
		rc = ct_wu_chain_link(wu, out);
	ct_wu_close(wu);
	return rc;
}
