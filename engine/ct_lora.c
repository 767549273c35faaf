/*
 * ct_lora.c - LoRA adapter specs and layout (see ct_lora.h). Adapter
 * initialisation and the exact merge live beside this file
 * (ct_lora_init, ct_lora_merge).
 */
#include "config.h"
#include "ct_lora.h"
#include "ct_base.h"
#include "ct_err.h"
#include "ct_model_ops.h"

#include <math.h>
#include <string.h>

static const struct {
	const char *name;
	enum ct_lora_target bit;
} target_names[] = {
	{ "qkv", CT_LORA_QKV },
	{ "proj", CT_LORA_ATTPROJ },
	{ "attproj", CT_LORA_ATTPROJ },
	{ "fc", CT_LORA_FC },
	{ "fcproj", CT_LORA_FCPROJ },
	{ "all", CT_LORA_ALL },
};

int ct_lora_spec_check(const struct ct_lora_spec *spec,
		       const struct ct_model_config *cfg)
{
	(void)cfg;
	if (spec->rank == 0 && spec->base_fmt != CT_BASE_F32)
		return ct_error(CT_EINVAL, "a %s base needs LoRA (rank > 0): full fine-tuning "
				"trains float32 weights", ct_base_fmt_name(spec->base_fmt));
	if (spec->rank == 0)
		return 0;
	if (spec->rank < 0 || spec->rank > CT_LORA_MAX_RANK)
		return ct_error(CT_EINVAL, "LoRA rank %d out of range (1..%d)",
				spec->rank, CT_LORA_MAX_RANK);
	if (!isfinite(spec->alpha) || spec->alpha <= 0.0f)
		return ct_error(CT_EINVAL, "LoRA alpha must be a finite number > 0");
	if (spec->base_fmt < 0 || spec->base_fmt >= CT_BASE_NFMT)
		return ct_error(CT_EINVAL, "LoRA base format %d unknown", spec->base_fmt);
	if (spec->targets == 0 || (spec->targets & ~(unsigned)CT_LORA_ALL) != 0)
		return ct_error(CT_EINVAL, "LoRA targets 0x%x: want a non-empty set of "
				"qkv, proj, fc, fcproj", spec->targets);
	return 0;
}

int ct_lora_targets_parse(const char *s, unsigned *out)
{
	unsigned bits = 0;

	*out = 0;
	while (*s != '\0') {
		size_t n = strcspn(s, ",");
		size_t i;

		for (i = 0; i < sizeof(target_names) / sizeof(target_names[0]); i++)
			if (strlen(target_names[i].name) == n &&
			    strncmp(target_names[i].name, s, n) == 0)
				break;
		if (i == sizeof(target_names) / sizeof(target_names[0]))
			return ct_error(CT_EINVAL, "unknown LoRA target '%.*s' (known: "
					"qkv, proj, fc, fcproj, all)", (int)n, s);
		bits |= target_names[i].bit;
		s += n;
		if (*s == ',')
			s++;
	}
	if (bits == 0)
		return ct_error(CT_EINVAL, "empty LoRA target list");
	*out = bits;
	return 0;
}

static int ntargets(unsigned targets)
{
	int n = 0;

	for (int t = 0; t < CT_LORA_NTARGETS; t++)
		n += (targets >> t) & 1;
	return n;
}

int ct_lora_nslots(const struct ct_model_config *cfg, const struct ct_lora_spec *spec)
{
	return spec->rank > 0 ? cfg->L * ntargets(spec->targets) : 0;
}

/* (out, in) of a target's W, and its tensor in the model: the family's
 * widths (GPT-2: 3C, C, 4C; Llama: the q/k/v rows, the attention width,
 * gate+up 2F, F). */
static void target_shape(const struct ct_model_config *cfg, enum ct_lora_target t,
			 int *out, int *in, int *tensor)
{
	const struct ct_model_dims d = ct_model_dims(cfg);
	int C = cfg->C;

	switch (t) {
	case CT_LORA_QKV:     *out = d.qkv; *in = C;        *tensor = CT_QKVW; break;
	case CT_LORA_ATTPROJ: *out = C;     *in = d.att;    *tensor = CT_ATTPROJW; break;
	case CT_LORA_FC:      *out = d.fc;  *in = C;        *tensor = CT_FCW; break;
	default:              *out = C;     *in = d.hidden; *tensor = CT_FCPROJW; break;
	}
}

void ct_lora_slot(const struct ct_model_config *cfg, const struct ct_lora_spec *spec,
		  int i, struct ct_lora_slot *out)
{
	struct ct_gpt2_layout lay;
	size_t off = 0;
	int s = 0;

	ct_gpt2_layout(cfg, &lay);
	memset(out, 0, sizeof(*out));
	for (int l = 0; l < cfg->L; l++) {
		for (int t = 0; t < CT_LORA_NTARGETS; t++) {
			enum ct_lora_target bit = (enum ct_lora_target)(1 << t);
			int o, in, tensor;

			if (!(spec->targets & bit))
				continue;
			target_shape(cfg, bit, &o, &in, &tensor);
			if (s == i) {
				out->layer = l;
				out->target = bit;
				out->out = o;
				out->in = in;
				out->a_off = off;
				out->b_off = off + (size_t)spec->rank * in;
				out->w_off = lay.offset[tensor] + (size_t)l * o * in;
				return;
			}
			off += (size_t)spec->rank * ((size_t)in + o);
			s++;
		}
	}
}

size_t ct_lora_nparams(const struct ct_model_config *cfg, const struct ct_lora_spec *spec)
{
	size_t per_layer = 0;

	if (spec->rank <= 0)
		return 0;
	for (int t = 0; t < CT_LORA_NTARGETS; t++) {
		int o, in, tensor;

		if (spec->targets & (1u << t)) {
			target_shape(cfg, (enum ct_lora_target)(1 << t), &o, &in, &tensor);
			per_layer += (size_t)spec->rank * ((size_t)o + in);
		}
	}
	return per_layer * cfg->L;
}
