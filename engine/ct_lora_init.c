/*
 * ct_lora_init.c - initial LoRA adapters of a work unit (ct_lora_init in
 * ct_lora.h): a pure function of the config, the spec and the seed.
 */
#include "config.h"
#include "ct_lora.h"
#include "ct_err.h"
#include "ct_rng.h"

#include <math.h>
#include <string.h>

int ct_lora_init(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		 uint64_t seed, float *adapters)
{
	struct ct_rng g;
	int rc, ns;

	rc = ct_gpt2_config_check(cfg);
	if (rc < 0)
		return ct_error(CT_EINVAL, "LoRA init: bad model config");
	rc = ct_lora_spec_check(spec, cfg);
	if (rc < 0)
		return rc;
	if (spec->rank == 0)
		return 0;
	ct_rng_seed(&g, seed);
	ns = ct_lora_nslots(cfg, spec);
	for (int i = 0; i < ns; i++) {
		struct ct_lora_slot s;
		float sd;
		size_t na;

		ct_lora_slot(cfg, spec, i, &s);
		sd = 1.0f / sqrtf((float)s.in);
		na = (size_t)spec->rank * s.in;
		for (size_t j = 0; j < na; j++)
			adapters[s.a_off + j] = ct_rng_normal(&g) * sd;
		memset(adapters + s.b_off, 0, (size_t)s.out * spec->rank * sizeof(float));
	}
	return 0;
}
