/*
 * cl_paths.c - see cl_paths.h.
 */
#include "cl_paths.h"
#include "ct_err.h"
#include "ct_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	int n;

	*out = NULL;
	if (override != NULL && *override)
		n = asprintf(out, "%s", override);
	else if (env != NULL && *env)
		n = asprintf(out, "%s", env);
	else if (xdg != NULL && *xdg == '/')
		n = asprintf(out, "%s/crowdtune", xdg);
	else if (home != NULL && *home)
		n = asprintf(out, "%s/.local/share/crowdtune", home);
	else
		return ct_error(CT_ECONFIG, "no state directory: set HOME or use --dir");
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
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	if (*fd < 0)
		return ct_error_errno("open %s/%s", dir, CT_CL_LOCK_FILE);
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0)
		return ct_error(CT_EBUSY, "%s is locked by another ctune", dir);
	return 0;
}

int ct_cl_make_private_dir(const char *dir)
{
	struct stat st;
	int rc;

	rc = ct_mkdir_p(dir, 0700);	/* an existing non-directory: CT_EEXISTS */
	if (rc < 0)
		return rc;
	if (stat(dir, &st) < 0)
		return ct_error_errno("stat %s", dir);
	if (st.st_uid != geteuid())
		return ct_error(CT_EPERM, "%s belongs to another user", dir);
	if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) < 0)
		return ct_error_errno("chmod %s", dir);
	return 0;
}
