/*
 * ct_hf_dtype.c - dtypes of exported Hugging Face directories (see
 * ct_hf_dtype.h).
 */
#include "config.h"
#include "ct_hf_dtype.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_jv.h"
#include "ct_os.h"	/* memmem on Windows */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX (1 << 20)	/* as ct_llama_hf.h's CT_HF_MAX_CONFIG */

static const struct {
	const char *name, *torch;
	enum ct_st_dtype d;
} dtypes[] = {
	{ "f32", "float32", CT_ST_F32 },
	{ "bf16", "bfloat16", CT_ST_BF16 },
	{ "f16", "float16", CT_ST_F16 },
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

int ct_hf_dtype_parse(const char *s, enum ct_st_dtype *out)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (strcmp(s, dtypes[i].name) == 0 || strcmp(s, dtypes[i].torch) == 0) {
			*out = dtypes[i].d;
			return 0;
		}
	return ct_error(CT_EINVAL, "dtype '%s': want f32, bf16 or f16", s);
}

static size_t dtype_index(enum ct_st_dtype d)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (dtypes[i].d == d)
			return i;
	return 0;
}

const char *ct_hf_dtype_name(enum ct_st_dtype d)
{
	return dtypes[dtype_index(d)].name;
}

int ct_hf_dtype_of_config(const char *path, enum ct_st_dtype *out)
{
	static const struct ct_jv_limits lim = { CONFIG_MAX, 100000, 64 };
	unsigned char *text = NULL;
	struct ct_jv *root = NULL;
	size_t len = 0;
	int rc;

	*out = CT_ST_F32;
	rc = ct_file_read_all(path, CONFIG_MAX, &text, &len);
	if (rc == 0)
		rc = ct_jv_parse((const char *)text, len, &lim, path, &root);
	if (rc == 0) {
		const struct ct_jv *v = ct_jv_get(root, "torch_dtype");

		if (v == NULL || v->type != CT_JV_STR)
			v = ct_jv_get(root, "dtype");
		for (size_t i = 0; v != NULL && v->type == CT_JV_STR && i < NDTYPES; i++)
			if (strcmp(v->str, dtypes[i].torch) == 0)
				*out = dtypes[i].d;
	}
	ct_jv_free(root);
	free(text);
	return rc;
}

/* dir/config.json with its "torch_dtype": "float32" member naming torch. */
static int set_config(const char *dir, const char *torch)
{
	static const char f32[] = "\"torch_dtype\": \"float32\"";
	char path[4096], *out = NULL, *at;
	unsigned char *text = NULL;
	size_t len = 0;
	int rc = ct_path_join(path, sizeof(path), dir, "config.json");

	if (rc == 0)
		rc = ct_file_read_all(path, CONFIG_MAX, &text, &len);
	if (rc < 0)
		return rc;
	at = memmem(text, len, f32, sizeof(f32) - 1);
	if (at == NULL)
		rc = ct_error(CT_EFORMAT, "%s: no \"torch_dtype\": \"float32\" to change", path);
	if (rc == 0 && asprintf(&out, "%.*s\"torch_dtype\": \"%s\"%.*s", (int)(at - (char *)text),
				(char *)text, torch,
				(int)(len - (size_t)(at - (char *)text) - (sizeof(f32) - 1)),
				at + sizeof(f32) - 1) < 0)
		rc = ct_error(CT_ENOMEM, "out of memory");
	if (rc == 0)
		rc = ct_file_write_atomic(path, out, strlen(out), 0644);
	free(out);
	free(text);
	return rc;
}

int ct_hf_dtype_set(const char *dir, enum ct_st_dtype d)
{
	char path[4096];
	int rc;

	if (d == CT_ST_F32)
		return 0;
	rc = ct_path_join(path, sizeof(path), dir, "model.safetensors");
	if (rc == 0)
		rc = ct_st_convert(path, d);
	if (rc == 0)
		rc = set_config(dir, dtypes[dtype_index(d)].torch);
	return rc;
}
