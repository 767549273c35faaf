/*
 * ct_model_ops.c - the list of model families and the look-ups into it
 * (see ct_model_ops.h); the rows themselves are ct_model_ops_gpt2.c and
 * ct_model_ops_llama.c.
 */
#include "config.h"
#include "ct_model_ops.h"

static const struct ct_model_ops *const rows[] = { &ct_model_ops_gpt2, &ct_model_ops_llama };
#define NROWS (sizeof(rows) / sizeof(rows[0]))

const struct ct_model_ops *ct_model_ops_find(int arch)
{
	for (size_t i = 0; i < NROWS; i++)
		if (rows[i]->arch == arch)
			return rows[i];
	return NULL;
}

const struct ct_model_ops *ct_model_ops_by_magic(int32_t magic)
{
	for (size_t i = 0; i < NROWS; i++)
		if (rows[i]->magic == magic)
			return rows[i];
	return NULL;
}

const struct ct_model_ops *ct_model_ops_for(const struct ct_model_config *cfg)
{
	const struct ct_model_ops *o = ct_model_ops_find(cfg->arch);

	return o != NULL ? o : &ct_model_ops_gpt2;
}

struct ct_model_dims ct_model_dims(const struct ct_model_config *cfg)
{
	return ct_model_ops_for(cfg)->dims(cfg);
}
