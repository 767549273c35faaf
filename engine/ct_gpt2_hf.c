/*
 * ct_gpt2_hf.c - GPT-2 models out in the Hugging Face GPT-2 layout (see
 * ct_gpt2_hf.h). One table says, for each llm.c tensor, its Hugging Face
 * name and whether it is one of Conv1D's transposed matrices.
 */
#include "config.h"
#include "ct_gpt2_hf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPT2_EOT 50256		/* <|endoftext|>, GPT-2's BOS and EOS */
#define NAME_MAX_LEN 40

/* llm.c tensor -> Hugging Face name ("%d": the layer), and the rows (out)
 * of a per-layer matrix as a multiple of C that Conv1D stores transposed
 * (0: stored as is). */
static const struct gpt2_hf_name {
	int t;
	const char *name;
	int per_layer, out_c, in_c;	/* transposed matrices: (out_c C, in_c C) */
} gpt2_hf_names[] = {
	{ CT_WTE, "wte.weight", 0, 0, 0 }, { CT_WPE, "wpe.weight", 0, 0, 0 },
	{ CT_LN1W, "h.%d.ln_1.weight", 1, 0, 0 }, { CT_LN1B, "h.%d.ln_1.bias", 1, 0, 0 },
	{ CT_QKVW, "h.%d.attn.c_attn.weight", 1, 3, 1 },
	{ CT_QKVB, "h.%d.attn.c_attn.bias", 1, 0, 0 },
	{ CT_ATTPROJW, "h.%d.attn.c_proj.weight", 1, 1, 1 },
	{ CT_ATTPROJB, "h.%d.attn.c_proj.bias", 1, 0, 0 },
	{ CT_LN2W, "h.%d.ln_2.weight", 1, 0, 0 }, { CT_LN2B, "h.%d.ln_2.bias", 1, 0, 0 },
	{ CT_FCW, "h.%d.mlp.c_fc.weight", 1, 4, 1 }, { CT_FCB, "h.%d.mlp.c_fc.bias", 1, 0, 0 },
	{ CT_FCPROJW, "h.%d.mlp.c_proj.weight", 1, 1, 4 },
	{ CT_FCPROJB, "h.%d.mlp.c_proj.bias", 1, 0, 0 },
	{ CT_LNFW, "ln_f.weight", 0, 0, 0 }, { CT_LNFB, "ln_f.bias", 0, 0, 0 },
};
#define NNAMES (sizeof(gpt2_hf_names) / sizeof(gpt2_hf_names[0]))

/* One tensor of layer l (or the whole, for a tensor not per layer) into
 * dst, transposed when Conv1D wants it; o gets its name and shape. */
static void put_tensor(const struct ct_gpt2 *m, const struct gpt2_hf_name *e, int l,
		       float *dst, char *name, struct ct_st_out *o)
{
	const struct ct_model_config *c = &m->cfg;
	size_t n = e->per_layer ? m->lay.size[e->t] / (size_t)c->L : m->lay.size[e->t];
	const float *src = m->params + m->lay.offset[e->t] + (size_t)l * n;

	snprintf(name, NAME_MAX_LEN, e->name, l);
	o->name = name;
	o->data = dst;
	if (e->out_c > 0) {	/* (out, in) -> (in, out) */
		size_t rows = (size_t)e->out_c * c->C, cols = (size_t)e->in_c * c->C;

		for (size_t i = 0; i < rows; i++)
			for (size_t j = 0; j < cols; j++)
				dst[j * rows + i] = src[i * cols + j];
		o->ndim = 2;
		o->shape[0] = (int64_t)cols;
		o->shape[1] = (int64_t)rows;
		return;
	}
	if (e->t == CT_WTE)	/* the padding rows stay behind */
		n = (size_t)c->V * c->C;
	memcpy(dst, src, n * sizeof(*dst));
	o->ndim = e->t == CT_WTE || e->t == CT_WPE ? 2 : 1;
	o->shape[0] = e->t == CT_WTE ? c->V : e->t == CT_WPE ? c->maxT : (int64_t)n;
	o->shape[1] = c->C;
}

static int write_config(const struct ct_model_config *c, const char *dir)
{
	char path[4096], text[2048], ids[96] = "";
	int k;

	if (c->V == GPT2_EOT + 1)
		snprintf(ids, sizeof(ids), "  \"bos_token_id\": %d,\n  \"eos_token_id\": %d,\n",
			 GPT2_EOT, GPT2_EOT);
	k = snprintf(text, sizeof(text),
		     "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
		     "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n"
		     "  \"n_embd\": %d,\n  \"n_layer\": %d,\n  \"n_head\": %d,\n"
		     "  \"n_inner\": null,\n  \"activation_function\": \"gelu_new\",\n"
		     "  \"layer_norm_epsilon\": 1e-05,\n  \"resid_pdrop\": 0.0,\n"
		     "  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n"
		     "  \"tie_word_embeddings\": true,\n%s  \"torch_dtype\": \"float32\"\n}\n",
		     c->V, c->maxT, c->maxT, c->C, c->L, c->NH, ids);
	if (k < 0 || (size_t)k >= sizeof(text))
		return ct_error(CT_EINTERNAL, "config.json text too long");
	if (ct_path_join(path, sizeof(path), dir, "config.json") < 0)
		return ct_error(CT_ETOOBIG, "%s: path too long", dir);
	return ct_file_write_atomic(path, text, (size_t)k, 0644);
}

int ct_gpt2_hf_export(const struct ct_gpt2 *m, const char *dir)
{
	size_t nt = 4 + 12 * (size_t)m->cfg.L, k = 0, off = 0;
	struct ct_st_out *o = calloc(nt, sizeof(*o));
	char (*names)[NAME_MAX_LEN] = calloc(nt, sizeof(*names));
	float *w = malloc(m->lay.total * sizeof(*w));
	char path[4096];
	int rc = 0;

	if (o == NULL || names == NULL || w == NULL)
		rc = ct_error(CT_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < NNAMES; i++) {
		const struct gpt2_hf_name *e = &gpt2_hf_names[i];

		for (int l = 0; l < (e->per_layer ? m->cfg.L : 1); l++, k++) {
			put_tensor(m, e, l, w + off, names[k], &o[k]);
			off += (size_t)o[k].shape[0] * (size_t)(o[k].ndim == 2 ? o[k].shape[1] : 1);
		}
	}
	if (rc == 0)
		rc = ct_mkdir_p(dir, 0755);
	if (rc == 0)
		rc = ct_path_join(path, sizeof(path), dir, "model.safetensors");
	if (rc == 0)
		rc = ct_st_write(path, o, k);
	if (rc == 0)
		rc = write_config(&m->cfg, dir);
	free(w);
	free(names);
	free(o);
	return rc;
}

/* ---- PEFT's names of the LoRA targets ------------------------------ */

const char *const ct_gpt2_hf_peft_words[4][3] = {
	{ "c_attn" }, { "attn.c_proj" }, { "c_fc" }, { "mlp.c_proj" },
};

int ct_gpt2_hf_lora_module(const struct ct_model_config *c, int ti, int k, int l, int out,
			   char *name, size_t cap)
{
	(void)c;
	if (k > 0)
		return 0;
	snprintf(name, cap, "transformer.h.%d.%s%s", l,
		 ti == 0 ? "attn." : ti == 2 ? "mlp." : "", ct_gpt2_hf_peft_words[ti][k]);
	return out;
}
