/*
 * ct_test_ocl.h - what the OpenCL tests (test_ocl, test_ocl_kernels,
 * test_ocl_train) share: skipping, automake's way, on a machine without
 * any OpenCL device. Header-only (static inline).
 */
#ifndef CT_TEST_OCL_H
#define CT_TEST_OCL_H

#include "ct_test.h"
#include "ct_ocl.h"
#include "ct_engine.h"

/* 1 if this machine has no OpenCL device (after saying so on stderr), so
 * main() returns 77 and the test counts as skipped; else 0. */
static inline int ct_test_ocl_none(void)
{
	struct ct_ocl_devinfo *devs = NULL;
	int ndev = 0;

	ct_ocl_enumerate(&devs, &ndev);
	free(devs);
	if (ndev == 0) {
		fprintf(stderr, "SKIP: no OpenCL device on this machine\n");
		return 1;
	}
	return 0;
}

/* The inputs of the small work units run on both backends: model (cfg,
 * random weights of seed 7), a 400-token mostly repetitive stream (so the
 * loss moves) and hp: 6 steps of B 3 x T 11, lr 1e-2, weight decay 0.01,
 * the other hyperparameters at their defaults. 0, or -1 (what was made is
 * the caller's to free). */
static inline int ct_test_ocl_wu_inputs(const struct ct_gpt2_config *cfg, struct ct_gpt2 *model,
					struct ct_tokens *tokens, struct ct_wu_hparams *hp)
{
	uint16_t tok[400];
	uint64_t s = 12345;

	if (ct_gpt2_alloc(model, cfg) < 0 || ct_gpt2_init_random(cfg, 7, model->params) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		tok[i] = (uint16_t)(i % 7 == 3 ? (s >> 33) % cfg->V : (i * 5) % 17);
	}
	if (ct_tokens_from_array(tokens, tok, sizeof(tok) / sizeof(tok[0])) < 0)
		return -1;
	ct_wu_hparams_default(hp);
	hp->steps = 6;
	hp->B = 3;
	hp->T = 11;
	hp->lr = 1e-2f;
	hp->weight_decay = 0.01f;
	return 0;
}

#endif
