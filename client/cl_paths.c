/*
 * cl_paths.c - see cl_paths.h.
 */
#include "cl_paths.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *ct_cl_path(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

int ct_cl_state_dir(const char *override, char **out)
{
	const char *env = getenv("CTUNE_DIR");
	int n;

	*out = NULL;
	if (override != NULL && *override)
		n = asprintf(out, "%s", override);
	else if (env != NULL && *env)
		n = asprintf(out, "%s", env);
	else
		return ct_os_data_dir("crowdtune", out);
	if (n < 0) {
		*out = NULL;
		return CT_ENOMEM;
	}
	return 0;
}

int ct_cl_lock_dir(const char *dir, int *fd)
{
	char *path = ct_cl_path(dir, CT_CL_LOCK_FILE);

	*fd = -1;
	if (path == NULL)
		return CT_ENOMEM;
	*fd = ct_os_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	if (*fd < 0)
		return ct_error_errno("open %s/%s", dir, CT_CL_LOCK_FILE);
	if (ct_os_lock(*fd) < 0)
		return ct_error(CT_EBUSY, "%s is locked by another ctune", dir);
	return 0;
}

int ct_cl_make_private_dir(const char *dir)
{
	int rc;

	rc = ct_mkdir_p(dir, 0700);	/* an existing non-directory: CT_EEXISTS */
	if (rc < 0)
		return rc;
	return ct_os_private_dir(dir);
}
