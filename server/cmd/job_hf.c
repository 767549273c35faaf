/*
 * job_hf.c - Hugging Face directories for `job submit` and `job export`
 * (see job_hf.h).
 */
#include "config.h"
#include "job_hf.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "ct_jv.h"
#include "ct_gguf_model.h"
#include "ct_llama_hf.h"
#include "ct_model_ops.h"
#include "data/server.h"
#include "job_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_job_hf_import(char **path, char **tmp)
{
	struct ct_gpt2 m = { 0 };
	struct stat st;
	const char *td = ct_opt_str(CT_OPT_TMPDIR);
	char *name;
	int fd, rc;

	*tmp = NULL;
	if (*path == NULL || stat(*path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (td == NULL || td[0] == '\0')
		td = "/tmp";
	if (asprintf(&name, "%s/ctune-import-XXXXXX", td) < 0)
		return ct_error(CT_ENOMEM, "out of memory");
	fd = mkstemp(name);
	if (fd < 0) {
		rc = ct_error_errno("%s: cannot create a temporary file", name);
		free(name);
		return rc;
	}
	close(fd);
	rc = ct_llama_hf_import(*path, &m, NULL);
	if (rc == 0)
		rc = ct_gpt2_check_finite(m.params, m.lay.total, &m.lay);
	if (rc == 0)
		rc = ct_gpt2_save(name, &m.cfg, m.params);
	ct_gpt2_free(&m);
	if (rc < 0) {
		unlink(name);
		free(name);
		return rc;
	}
	free(*path);
	*path = strdup(name);
	*tmp = name;
	if (*path == NULL)
		return ct_error(CT_ENOMEM, "out of memory");
	return 0;
}

int ct_job_hf_export(const char *model_path, const char *dir)
{
	struct ct_gpt2 m = { 0 };
	int rc = ct_gpt2_load(model_path, &m);

	if (rc == 0)
		rc = ct_model_ops_for(&m.cfg)->hf_export(&m, dir, NULL);
	ct_gpt2_free(&m);
	return rc;
}

/* The special ids ct_job_hf_special_ids carries over, in this order. */
static const char *const special_keys[] = { "bos_token_id", "eos_token_id" };
#define NSPECIAL 2
#define ID_TEXT_MAX 256		/* one id, or an array of a few */

/* v (a number, or an array of numbers) as JSON text into out; 0 or -1. */
static int id_text(const struct ct_jv *v, char *out, size_t cap)
{
	size_t k = 0;

	if (v != NULL && v->type == CT_JV_NUM)
		return snprintf(out, cap, "%s", v->str) < (int)cap ? 0 : -1;
	if (v == NULL || v->type != CT_JV_ARR || v->n == 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		int n;

		if (v->items[i].type != CT_JV_NUM)
			return -1;
		n = snprintf(out + k, cap - k, "%s%s", i ? ", " : "[", v->items[i].str);
		if (n < 0 || (size_t)n >= cap - k)
			return -1;
		k += (size_t)n;
	}
	return snprintf(out + k, cap - k, "]") < (int)(cap - k) ? 0 : -1;
}

/* "key": value lines of the ids the input has into out (JSON members, each
 * ending ",\n"); their count. */
static int special_members(const char *input_config, char *out, size_t cap)
{
	static const struct ct_jv_limits lim = { CT_HF_MAX_CONFIG, 100000, 64 };
	unsigned char *text = NULL;
	struct ct_jv *root = NULL;
	size_t len = 0, k = 0;
	int n = 0;

	out[0] = 0;
	if (ct_file_read_all(input_config, CT_HF_MAX_CONFIG, &text, &len) < 0)
		return 0;
	if (ct_jv_parse((const char *)text, len, &lim, "config.json", &root) == 0)
		for (int i = 0; i < NSPECIAL; i++) {
			char v[ID_TEXT_MAX];
			int w;

			if (id_text(ct_jv_get(root, special_keys[i]), v, sizeof(v)) < 0)
				continue;
			w = snprintf(out + k, cap - k, "  \"%s\": %s,\n", special_keys[i], v);
			if (w < 0 || (size_t)w >= cap - k)
				break;
			k += (size_t)w;
			n++;
		}
	ct_jv_free(root);
	free(text);
	return n;
}

/* Write text (n bytes) into dir/name atomically. */
static int write_in(const char *dir, const char *name, const char *text, size_t n)
{
	char path[4096];
	int rc = ct_path_join(path, sizeof(path), dir, name);

	return rc < 0 ? rc : ct_file_write_atomic(path, text, n, 0644);
}

int ct_job_hf_special_ids(const char *dir, const char *input_config)
{
	char ids[2 * ID_TEXT_MAX + 64], path[4096], *out = NULL;
	unsigned char *cfg = NULL;
	size_t len = 0;
	int rc;

	if (special_members(input_config, ids, sizeof(ids)) == 0)
		return 0;
	rc = ct_path_join(path, sizeof(path), dir, "config.json");
	if (rc == 0)
		rc = ct_file_read_all(path, CT_HF_MAX_CONFIG, &cfg, &len);
	/* ours: "{\n" then members, one a line: the ids go first */
	if (rc == 0 && (len < 2 || memcmp(cfg, "{\n", 2) != 0))
		rc = ct_error(CT_EFORMAT, "%s: not the config.json export writes", path);
	if (rc == 0 && asprintf(&out, "{\n%s%.*s", ids, (int)(len - 2), (char *)cfg + 2) < 0)
		rc = ct_error(CT_ENOMEM, "out of memory");
	if (rc == 0)
		rc = write_in(dir, "config.json", out, strlen(out));
	free(out);
	out = NULL;
	if (rc == 0 && ct_path_join(path, sizeof(path), dir, "generation_config.json") == 0 &&
	    !ct_file_exists(path)) {
		ids[strlen(ids) - 2] = '\n';	/* the last member's comma */
		ids[strlen(ids) - 1] = 0;
		if (asprintf(&out, "{\n%s}\n", ids) < 0)
			rc = ct_error(CT_ENOMEM, "out of memory");
		if (rc == 0)
			rc = write_in(dir, "generation_config.json", out, strlen(out));
	}
	free(out);
	free(cfg);
	return rc;
}

int ct_job_hf_input_name(const char *input_config, char *out, size_t cap)
{
	static const struct ct_jv_limits lim = { CT_HF_MAX_CONFIG, 100000, 64 };
	unsigned char *text = NULL;
	struct ct_jv *root = NULL;
	const struct ct_jv *v;
	size_t len = 0;
	int rc = ct_file_read_all(input_config, CT_HF_MAX_CONFIG, &text, &len);

	if (rc == 0)
		rc = ct_jv_parse((const char *)text, len, &lim, "config.json", &root);
	v = rc == 0 ? ct_jv_get(root, "_name_or_path") : NULL;
	if (rc == 0)
		rc = v != NULL && v->type == CT_JV_STR && v->str[0] != 0 &&
		     snprintf(out, cap, "%s", v->str) < (int)cap;
	ct_jv_free(root);
	free(text);
	return rc;
}

/* Remove the tokenizer files job_tokenizer_export may have put in dir, and dir. */
static void remove_tokenizer_dir(const char *dir)
{
	for (const char *const *n = ct_llama_hf_tokenizer_files; *n != NULL; n++) {
		char path[4096];

		if (ct_path_join(path, sizeof(path), dir, *n) == 0)
			unlink(path);
	}
	rmdir(dir);
}

int ct_job_gguf_export(struct ct_server *srv, struct ct_db *db, int64_t jobid,
		       const char *model_path, const char *out, enum ct_ggml_type dtype,
		       int *tok)
{
	struct ct_gpt2 m = { 0 };
	char dir[4096], name[64];
	int n = 0, rc;

	rc = ct_path_join(dir, sizeof(dir), srv->upload_dir, ".gguf-tok-XXXXXX");
	if (rc == 0 && mkdtemp(dir) == NULL)
		rc = ct_error_errno("%s", dir);
	if (rc < 0)
		return rc;
	rc = ct_job_tokenizer_export(srv, db, jobid, dir, &n);
	if (rc == 0)
		rc = ct_gpt2_load(model_path, &m);
	snprintf(name, sizeof(name), "crowdtune job %lld", (long long)jobid);
	if (rc == 0)
		rc = ct_gguf_export_model(&m, out, n > 0 ? dir : NULL, dtype, name);
	ct_gpt2_free(&m);
	remove_tokenizer_dir(dir);
	if (tok != NULL)
		*tok = n > 0;
	return rc;
}
