/*
 * cl_task.c - see cl_task.h.
 */
#include "cl_task.h"
#include "cl_lora.h"
#include "cl_paths.h"
#include "cl_jail.h"
#include "ct_base.h"
#include "ct_chain.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


const struct ct_task_file *ct_task_input(const struct ct_task *t, const char *role)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].name != NULL && strcmp(t->files[i].name, role) == 0)
			return &t->files[i];
	return NULL;
}

static int param_int(const struct ct_task *t, const char *name, long min, long max, int *out)
{
	const char *s = ct_task_param(t, name);
	char *end;
	long v;

	if (s == NULL)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < min || v > max)
		return ct_error(CT_EINVAL, "work unit parameter %s = '%.40s' is out of range",
				name, s);
	*out = (int)v;
	return 0;
}

static int param_float(const struct ct_task *t, const char *name, float *out)
{
	const char *s = ct_task_param(t, name);
	char *end;
	double v;

	if (s == NULL)
		return 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v) || fabs(v) > 1e30)
		return ct_error(CT_EINVAL, "work unit parameter %s = '%.40s' is not a number",
				name, s);
	*out = (float)v;
	return 0;
}

int ct_task_hparams(const struct ct_task *t, struct ct_wu_hparams *hp)
{
	int rc;

	ct_wu_hparams_default(hp);
	rc = param_int(t, "steps", 1, CT_WU_MAX_STEPS, &hp->steps);
	if (rc == 0) rc = param_int(t, "batch", 1, CT_WU_MAX_B, &hp->B);
	if (rc == 0) rc = param_int(t, "seq", 1, CT_GPT2_MAX_T, &hp->T);
	if (rc == 0) rc = param_float(t, "lr", &hp->lr);
	if (rc == 0) rc = param_float(t, "beta1", &hp->beta1);
	if (rc == 0) rc = param_float(t, "beta2", &hp->beta2);
	if (rc == 0) rc = param_float(t, "eps", &hp->eps);
	if (rc == 0) rc = param_float(t, "weight_decay", &hp->weight_decay);
	if (rc == 0) rc = param_float(t, "grad_clip", &hp->grad_clip);
	if (rc == 0) rc = ct_task_lora_hparams(t, hp);
	return rc;
}

/* The chain interval of t: its chain_every parameter, 0 when absent. */
static int task_chain_every(const struct ct_task *t, int steps, int *every)
{
	*every = 0;
	if (param_int(t, "chain_every", 0, CT_WU_MAX_STEPS, every) < 0)
		return CT_EINVAL;
	if (*every > 0 && ct_chain_nlinks(steps, *every) > CT_CHAIN_MAX_LINKS)
		return ct_error(CT_EINVAL, "work unit parameter chain_every = %d makes over "
				"%d links", *every, CT_CHAIN_MAX_LINKS);
	return 0;
}

int ct_task_chain_link(struct ct_task_run *r, char hex[65])
{
	unsigned char d[CT_SHA256_LEN];
	int rc;

	hex[0] = '\0';
	if (!ct_chain_due(ct_wu_steps_done(r->wu), r->hp.steps, r->chain_every))
		return 0;
	rc = ct_wu_chain_link(r->wu, d);
	if (rc == 0)
		ct_hex_encode(d, sizeof(d), hex);
	return rc;
}

int ct_task_chain_append(char **chain, const char *hex)
{
	size_t n = *chain ? strlen(*chain) : 0;
	char *c;

	if (n + 64 > CT_CHAIN_HEX_MAX)
		return ct_error(CT_ETOOBIG, "hash chain over %d links", CT_CHAIN_MAX_LINKS);
	c = realloc(*chain, n + 65);
	if (c == NULL)
		return CT_ENOMEM;
	memcpy(c + n, hex, 64);
	c[n + 64] = '\0';
	*chain = c;
	return 0;
}

int ct_task_chain_trim(const struct ct_task_run *r, char **chain)
{
	size_t want;

	if (r->chain_every <= 0) {
		free(*chain);
		*chain = NULL;
		return 0;
	}
	want = 64 * (size_t)(ct_wu_steps_done(r->wu) / r->chain_every);
	if ((*chain ? strlen(*chain) : 0) < want) {
		free(*chain);
		*chain = NULL;
		return 0;
	}
	if (*chain != NULL)
		(*chain)[want] = '\0';
	return 1;
}

int ct_task_cache_path(const char *cache_dir, const struct ct_task *t, const char *role,
		       char *out, size_t cap, unsigned char *sha_raw)
{
	const struct ct_task_file *f = ct_task_input(t, role);

	if (f == NULL)
		return ct_error(CT_EINVAL, "work unit has no '%s' file", role);
	if (ct_jail_check_sha("input sha256", f->sha256) < 0)
		return ct_error(CT_EFORMAT, "%s", ct_errmsg(CT_EPROTO));
	if (sha_raw != NULL && ct_hex_decode(f->sha256, sha_raw, 32) < 0)
		return ct_error(CT_EFORMAT, "bad sha256 of '%s'", role);
	return ct_path_join(out, cap, cache_dir, f->sha256);	/* checked above */
}

static int load_inputs(struct ct_task_run *r, const struct ct_task *t, const char *cache_dir)
{
	char path[4096];
	const char *enc = ct_task_param(t, "upload_encoding");
	int rc;

	r->encoding = CT_DELTA_LOSSLESS;
	if (enc != NULL && strcmp(enc, "int8") == 0)
		r->encoding = CT_DELTA_INT8;
	else if (enc != NULL && strcmp(enc, "lossless") != 0)
		return ct_error(CT_EINVAL, "unknown upload_encoding '%.40s'", enc);
	rc = ct_task_hparams(t, &r->hp);
	if (rc == 0) rc = task_chain_every(t, r->hp.steps, &r->chain_every);
	if (rc == 0) rc = param_int(t, "state_at", 0, r->hp.steps - 1, &r->state_at);
	if (rc == 0) rc = ct_task_cache_path(cache_dir, t, "model", path, sizeof(path), r->base_sha);
	if (rc == 0) rc = ct_base_load(path, &r->model);	/* float32 or a compact base */
	if (rc == 0 && r->model.fmt != CT_BASE_F32 && r->model.fmt != r->hp.lora.base_fmt)
		rc = ct_error(CT_EMISMATCH, "the work unit's model is a %s base, its parameters "
			      "say %s", ct_base_fmt_name(r->model.fmt),
			      ct_base_fmt_name(r->hp.lora.base_fmt));
	if (rc == 0) rc = ct_task_cache_path(cache_dir, t, "data", path, sizeof(path), NULL);
	if (rc == 0) rc = ct_tokens_load(path, &r->tokens);
	if (rc == 0) rc = ct_task_lora_init(r, t, cache_dir);
	return rc;
}

int ct_task_open(struct ct_task_run *r, const struct ct_task *t, const char *cache_dir,
		 const char *slot_dir, const char *device)
{
	char state[4096];
	int rc;

	memset(r, 0, sizeof(*r));
	rc = load_inputs(r, t, cache_dir);
	if (rc < 0) goto out;
	rc = ct_path_join(state, sizeof(state), slot_dir, CT_CL_SLOT_STATE);
	if (rc < 0) goto out;
	if (ct_file_exists(state)) {
		rc = ct_wu_resume(state, &r->model, &r->tokens, &r->hp, device, &r->wu);
		if (rc == 0) {
			r->resumed = 1;
			goto out;
		}
		if (rc != CT_EFORMAT && rc != CT_ECORRUPT && rc != CT_EMISMATCH)
			goto out;
		ct_log_warn("%s: checkpoint unusable (%s); starting the WU again", t->name,
			    ct_errmsg(rc));
		unlink(state);
	}
	rc = ct_wu_open(&r->model, &r->tokens, &r->hp, device, &r->wu);
	if (rc == 0 && r->lora_init != NULL)	/* round r+1 of a compact-base job */
		rc = ct_wu_set_adapters(r->wu, r->lora_init);
out:
	if (rc < 0)
		ct_task_close(r);
	return rc;
}

int ct_task_checkpoint(struct ct_task_run *r, const char *slot_dir)
{
	char state[4096];
	int rc;

	rc = ct_path_join(state, sizeof(state), slot_dir, CT_CL_SLOT_STATE);
	if (rc == 0)
		rc = ct_wu_save_state(r->wu, state);
	return rc;
}

int ct_task_save_result(int rc, const struct ct_buf *out, uint64_t max_bytes,
			const char *slot_dir, char sha_hex[CT_SHA256_HEXLEN + 1], uint64_t *size)
{
	char path[4096];

	if (rc == CT_ETOOBIG)
		rc = ct_error(CT_ETOOBIG, "result over the %llu bytes the server allows",
			      (unsigned long long)max_bytes);
	if (rc == 0) rc = ct_path_join(path, sizeof(path), slot_dir, CT_CL_SLOT_RESULT);
	if (rc == 0) rc = ct_file_write_atomic(path, out->data, out->len, 0600);
	if (rc == 0) {
		ct_sha256_hex(out->data, out->len, sha_hex);
		*size = out->len;
	}
	return rc;
}

/* A state task's upload: the WU's state file into slot_dir/result.ctd. */
static int write_state(struct ct_task_run *r, const char *slot_dir, uint64_t max_bytes,
		       char sha_hex[CT_SHA256_HEXLEN + 1], uint64_t *size)
{
	char path[4096];
	uint64_t len = 0;
	int rc;

	rc = ct_path_join(path, sizeof(path), slot_dir, CT_CL_SLOT_RESULT);
	if (rc == 0) rc = ct_wu_save_state(r->wu, path);
	if (rc == 0) rc = ct_file_size(path, &len);
	if (rc == 0 && max_bytes > 0 && len > max_bytes)
		rc = ct_error(CT_ETOOBIG, "state of %llu bytes over the %llu the server allows",
			      (unsigned long long)len, (unsigned long long)max_bytes);
	if (rc == 0) rc = ct_sha256_file_hex(path, sha_hex);
	if (rc == 0)
		*size = len;
	return rc;
}

int ct_task_write_result(struct ct_task_run *r, const char *slot_dir, uint64_t max_bytes,
			 char sha_hex[CT_SHA256_HEXLEN + 1], uint64_t *size)
{
	struct ct_buf out = CT_BUF_INIT(max_bytes > 0 && max_bytes < SIZE_MAX ? (size_t)max_bytes : 0);
	const struct ct_model_config *c = &r->model.cfg;
	struct ct_delta_model dm = {
		.max_seq_len = (uint32_t)c->maxT, .vocab_size = (uint32_t)c->V,
		.padded_vocab_size = (uint32_t)c->Vp, .num_layers = (uint32_t)c->L,
		.num_heads = (uint32_t)c->NH, .channels = (uint32_t)c->C,
	};
	size_t n = r->model.lay.total;
	float *w = malloc(n * sizeof(float));
	int rc;

	if (r->state_at > 0) {	/* a state task: the state is the upload */
		free(w);
		return write_state(r, slot_dir, max_bytes, sha_hex, size);
	}
	if (r->hp.lora.rank > 0) {	/* adapters only: cl_lora.h */
		free(w);
		return ct_task_write_lora_result(r, slot_dir, max_bytes, sha_hex, size);
	}
	if (w == NULL)
		return CT_ENOMEM;
	rc = ct_wu_read_params(r->wu, w);
	if (rc == 0) rc = ct_gpt2_check_finite(w, n, &r->model.lay);
	if (rc == 0) rc = ct_delta_encode(r->model.params, w, n, &dm, r->base_sha, r->encoding,
					  -1, &out);
	rc = ct_task_save_result(rc, &out, max_bytes, slot_dir, sha_hex, size);
	free(w);
	ct_buf_free(&out);
	return rc;
}

void ct_task_close(struct ct_task_run *r)
{
	ct_wu_close(r->wu);
	ct_tokens_free(&r->tokens);
	ct_gpt2_free(&r->model);
	free(r->lora_init);
	memset(r, 0, sizeof(*r));
}
