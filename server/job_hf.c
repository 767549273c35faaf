/*
 * job_hf.c - Hugging Face directories for `job submit` and `job export`
 * (see job_hf.h).
 */
#include "config.h"
#include "job_hf.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_llama_hf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_job_hf_import(char **path, char **tmp)
{
	struct ct_gpt2 m = { 0 };
	struct stat st;
	const char *td = getenv("TMPDIR");
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
		rc = ct_llama_hf_export(&m, dir, NULL);
	ct_gpt2_free(&m);
	return rc;
}
