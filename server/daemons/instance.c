/*
 * instance.c - instance names, the per-instance lock, heartbeats and the
 * daemons' shares (see instance.h).
 */
#include "instance.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "ct_conf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "data/db.h"
#include "data/dl_heartbeat.h"
#include "data/server.h"

static char g_name[CT_INSTANCE_MAX + 1];
static char g_host[64];
static int g_default = 1;
static int g_lockfd = -1;
static __thread const char *t_role;

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > CT_INSTANCE_MAX || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && !strchr("._-", s[i]))
			return 0;
	return 1;
}

/* The config's `instance`, else the host name up to its first dot. */
static int default_name(const struct ct_server *srv, char *out, size_t cap)
{
	const char *conf = ct_conf_get(srv->conf, "instance");

	if (conf && *conf) {
		if (!name_ok(conf))
			return ct_error(CT_ECONFIG, "instance '%s': want 1-%d of [A-Za-z0-9._-]",
					conf, CT_INSTANCE_MAX);
		snprintf(out, cap, "%s", conf);
		return 0;
	}
	snprintf(out, cap, "%s", g_host);
	out[strcspn(out, ".")] = 0;
	for (char *p = out; *p; p++)
		if (!strchr("_-", *p) && !((*p | 32) >= 'a' && (*p | 32) <= 'z') &&
		    !(*p >= '0' && *p <= '9'))
			*p = '_';
	if (!name_ok(out))
		snprintf(out, cap, "default");
	return 0;
}

/* What to do about an instance that runs already: another --instance NAME
 * works only beside an external database (the embedded one is one
 * process's, db.c's datadir lock). */
static const char *busy_hint(int embedded)
{
	return embedded ? "the embedded database serves one process: to run several instances, "
			  "move the project to an external MariaDB (--db URL, doc/operator.md "
			  "\"Instances\")"
			: "give this one another --instance NAME";
}

/* Take dir/run-NAME.lock and write our PID into it. */
static int take_lock(const char *dir, int embedded)
{
	char file[CT_INSTANCE_MAX + 16], path[PATH_MAX], pid[32] = "";
	int fd, rc;

	snprintf(file, sizeof(file), "run-%s.lock", g_name);
	rc = ct_path_join(path, sizeof(path), dir, file);
	if (rc < 0)
		return rc;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return ct_error_errno("%s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		ssize_t k = pread(fd, pid, sizeof(pid) - 1, 0);

		close(fd);
		if (e != EWOULDBLOCK)
			return ct_error(ct_from_errno(e), "%s: %s", path, strerror(e));
		pid[k > 0 ? k : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		return ct_error(CT_EBUSY, "instance '%s' already runs on this project (pid %s "
				"holds %s); %s", g_name, pid[0] ? pid : "?", path,
				busy_hint(embedded));
	}
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		rc = ct_error_errno("%s", path);
		close(fd);
		return rc;
	}
	g_lockfd = fd;
	return 0;
}

int ct_instance_setup(struct ct_server *srv, const char *name)
{
	char def[CT_INSTANCE_MAX + 1];
	int rc;

	gethostname(g_host, sizeof(g_host) - 1);
	rc = default_name(srv, def, sizeof(def));
	if (rc < 0)
		return rc;
	if (name && !name_ok(name))
		return ct_error(CT_EINVAL, "--instance '%s': want 1-%d of [A-Za-z0-9._-]", name,
				CT_INSTANCE_MAX);
	snprintf(g_name, sizeof(g_name), "%s", name ? name : def);
	g_default = strcmp(g_name, def) == 0;
	rc = take_lock(srv->dir, srv->db_url == NULL || srv->db_url[0] == 0 ||
				 strcmp(srv->db_url, "embedded") == 0);
	if (rc < 0)
		g_name[0] = 0;
	return rc;
}

void ct_instance_release(void)
{
	if (g_lockfd >= 0)
		close(g_lockfd);
	g_lockfd = -1;
}

const char *ct_instance_name(void)
{
	return g_name;
}

int ct_instance_file(const char *dir, const char *base, const char *ext, char *out,
		     size_t cap)
{
	int n;

	if (g_default || g_name[0] == 0)
		n = snprintf(out, cap, "%s/%s%s", dir, base, ext);
	else
		n = snprintf(out, cap, "%s/%s-%s%s", dir, base, g_name, ext);
	if (n < 0 || (size_t)n >= cap)
		return ct_error(CT_ETOOBIG, "%s: path too long", dir);
	return 0;
}

/* This process as role_heartbeat names it. */
static struct ct_beat_id self(void)
{
	return (struct ct_beat_id){ g_name, g_host, (int64_t)getpid() };
}

int ct_instance_beat(struct ct_db *db, const char *role, int64_t nruns, int64_t nitems,
		     const char *err)
{
	struct ct_beat_id id = self();

	return ct_beat_put(db, role, &id, ct_db_now(db), nruns, nitems, err);
}

int ct_instance_clear_stale(void)
{
	struct ct_beat_id id = self();
	struct ct_db *db = NULL;
	int rc;

	rc = ct_db_open(&db, NULL);
	if (rc == 0)
		rc = ct_beat_clear_stale(db, &id);
	ct_db_close(db);
	return rc;
}

int ct_instance_forget(struct ct_db *db, const char *role)
{
	struct ct_beat_id id = self();

	return ct_beat_forget(db, role, &id);
}

void ct_instance_set_role(const char *role)
{
	t_role = role;
}

int ct_instance_share(struct ct_db *db, int64_t *n, int64_t *i)
{
	struct ct_beat_id id = self();
	int64_t below = 0, live = 0;
	int rc;

	*n = 1;
	*i = 0;
	if (t_role == NULL || g_name[0] == 0)
		return 0;
	rc = ct_beat_count(db, t_role, &id, ct_db_now(db) - CT_INSTANCE_LIVE_S, &live, &below);
	if (rc < 0)
		return rc;
	*n = live + 1;
	*i = below;
	return 0;
}
