/*
 * project_key.c - see project_key.h.
 */
#include "project_key.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_hash.h"
#include "ct_log.h"

#include <limits.h>

int ct_project_key_make(const char *dir)
{
	struct ct_sign_key *k = NULL;
	char path[PATH_MAX];
	int rc;

	rc = ct_path_join(path, sizeof(path), dir, CT_PROJECT_KEY_FILE);
	if (rc == 0)
		rc = ct_sign_key_generate(&k);
	if (rc == 0)
		rc = ct_sign_key_save(k, path);
	ct_sign_key_free(k);
	return rc;
}

int ct_project_key_open(const char *dir, struct ct_sign_key **key,
			unsigned char pub[CT_SIGN_PUB_LEN])
{
	char path[PATH_MAX], hex[2 * CT_SIGN_PUB_LEN + 1];
	int rc;

	*key = NULL;
	rc = ct_path_join(path, sizeof(path), dir, CT_PROJECT_KEY_FILE);
	if (rc == 0 && !ct_file_exists(path)) {
		rc = ct_project_key_make(dir);
		if (rc == CT_EEXISTS)	/* another process made it first */
			rc = 0;
		else if (rc == 0)
			ct_log_info("project: made its receipt signing key %s", path);
	}
	if (rc == 0)
		rc = ct_sign_key_load(path, key);
	if (rc == 0) {
		ct_sign_key_public(*key, pub);
		ct_hex_encode(pub, CT_SIGN_PUB_LEN, hex);
		ct_log_debug("project: receipt key %s", hex);
	}
	return rc;
}
