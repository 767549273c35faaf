/*
 * cl_state.c - see cl_state.h. The fields of projects and tasks are
 * described by tables (tag, type, offset), so the writer and the reader
 * cannot drift apart.
 */
#include "cl_state.h"
#include "cl_jail.h"
#include "ct_array.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_xml.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATE_MAX_BYTES (16u << 20)
#define STATE_MAX_DEPTH 8
#define STATE_MAX_STR (64u << 10)

static const char *const state_names[CT_TASK_NSTATES] = {
	[CT_TASK_DOWNLOADING] = "downloading",
	[CT_TASK_READY] = "ready",
	[CT_TASK_RUNNING] = "running",
	[CT_TASK_UPLOADING] = "uploading",
	[CT_TASK_DONE] = "done",
	[CT_TASK_REPORTED] = "reported",
};

const char *ct_task_state_str(enum ct_task_state s)
{
	return (unsigned)s < CT_TASK_NSTATES ? state_names[s] : "unknown";
}

int ct_task_state_parse(const char *s, enum ct_task_state *out)
{
	for (int i = 0; i < CT_TASK_NSTATES; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum ct_task_state)i;
			return 0;
		}
	return ct_error(CT_EFORMAT, "unknown task state '%s'", s);
}

int ct_strset(char **dst, const char *src)
{
	char *c = NULL;

	if (src != NULL) {
		c = strdup(src);
		if (c == NULL)
			return CT_ENOMEM;
	}
	free(*dst);
	*dst = c;
	return 0;
}

void ct_url_normalise(char *url)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		url[--n] = '\0';
}

/* ---- field tables ---- */

enum ftype { F_STR, F_DBL, F_LONG, F_INT, F_U64, F_HEX, F_STATE };

struct field {
	const char *tag;
	enum ftype type;
	size_t off;
};

/* The element is named after the member (FIELD(ct_task, F_STR, name) is
 * <name>), so the tag and the member cannot disagree either. */
#define FIELD(s, type, member) { #member, type, offsetof(struct s, member) }
static const struct field task_fields[] = {
	FIELD(ct_task, F_STR, name),
	FIELD(ct_task, F_STR, wu_name),
	FIELD(ct_task, F_STATE, state),
	FIELD(ct_task, F_DBL, received),
	FIELD(ct_task, F_DBL, deadline),
	FIELD(ct_task, F_STR, upload_url),
	FIELD(ct_task, F_STR, upload_token),
	FIELD(ct_task, F_U64, upload_max),
	FIELD(ct_task, F_STR, checkpoint),
	FIELD(ct_task, F_LONG, step),
	FIELD(ct_task, F_LONG, steps),
	FIELD(ct_task, F_DBL, progress),
	FIELD(ct_task, F_DBL, last_loss),
	FIELD(ct_task, F_DBL, elapsed),
	FIELD(ct_task, F_STR, device),
	FIELD(ct_task, F_INT, conforming),
	FIELD(ct_task, F_HEX, output_sha256),
	FIELD(ct_task, F_U64, output_size),
	FIELD(ct_task, F_STR, chain),
	FIELD(ct_task, F_DBL, eval_loss),
	FIELD(ct_task, F_INT, outcome),
	FIELD(ct_task, F_STR, error),
	FIELD(ct_task, F_INT, nfailures),
	FIELD(ct_task, F_DBL, next_try),
};

static const struct field project_fields[] = {
	FIELD(ct_project, F_STR, url),
	FIELD(ct_project, F_STR, key),
	FIELD(ct_project, F_STR, user_name),
	FIELD(ct_project, F_LONG, hostid),
	FIELD(ct_project, F_STR, host_auth),
	FIELD(ct_project, F_STR, host_secret),
	FIELD(ct_project, F_STR, ca_file),
	FIELD(ct_project, F_DBL, credit),
	FIELD(ct_project, F_DBL, rac),
	FIELD(ct_project, F_LONG, rank),
	FIELD(ct_project, F_LONG, pending_results),
	FIELD(ct_project, F_INT, nfailures),
	FIELD(ct_project, F_DBL, next_rpc),
	FIELD(ct_project, F_DBL, request_delay_until),
	FIELD(ct_project, F_DBL, last_rpc),
	FIELD(ct_project, F_INT, suspended),
};

static const struct field file_fields[] = {
	FIELD(ct_task_file, F_STR, name),
	FIELD(ct_task_file, F_STR, url),
	FIELD(ct_task_file, F_HEX, sha256),
	FIELD(ct_task_file, F_U64, size),
};

static const struct field totals_fields[] = {
	FIELD(ct_totals, F_LONG, results_done),
	FIELD(ct_totals, F_LONG, results_reported),
	FIELD(ct_totals, F_DBL, seconds),
	FIELD(ct_totals, F_DBL, tokens),
};

#define NF(a) (sizeof(a) / sizeof((a)[0]))

/* Write the fields of obj; NaN doubles and NULL strings are omitted. */
static int write_fields(struct ct_buf *b, const void *obj, const struct field *f, size_t n)
{
	const char *base = obj;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		const void *p = base + f[i].off;

		switch (f[i].type) {
		case F_STR:
			if (*(char *const *)p != NULL)
				rc = ct_xml_elem_str(b, f[i].tag, *(char *const *)p);
			break;
		case F_HEX:
			if (*(const char *)p)
				rc = ct_xml_elem_str(b, f[i].tag, p);
			break;
		case F_DBL:
			if (isfinite(*(const double *)p))
				rc = ct_xml_elem_double(b, f[i].tag, *(const double *)p);
			break;
		case F_LONG:
			rc = ct_xml_elem_long(b, f[i].tag, *(const long *)p);
			break;
		case F_INT:
			rc = ct_xml_elem_long(b, f[i].tag, *(const int *)p);
			break;
		case F_U64:
			rc = ct_xml_elem_int64(b, f[i].tag, (int64_t)*(const uint64_t *)p);
			break;
		case F_STATE:
			rc = ct_xml_elem_str(b, f[i].tag,
					     ct_task_state_str(*(const enum ct_task_state *)p));
			break;
		}
	}
	return rc;
}

/* Read one field from its element; absent elements keep their value. */
static int read_field(xmlNodePtr parent, void *obj, const struct field *f)
{
	char *base = obj, *s = NULL;
	void *p = base + f->off;
	int64_t v64;
	long l;
	int rc;

	switch (f->type) {
	case F_STR:
		rc = ct_xml_get_str(parent, f->tag, STATE_MAX_STR, &s);
		if (rc == 0) {
			free(*(char **)p);
			*(char **)p = s;
		}
		break;
	case F_HEX:
		rc = ct_xml_get_str(parent, f->tag, CT_SHA256_HEXLEN, &s);
		if (rc == 0) {
			memcpy(p, s, strlen(s) + 1);
			free(s);
		}
		break;
	case F_STATE:
		rc = ct_xml_get_str(parent, f->tag, 32, &s);
		if (rc == 0) {
			rc = ct_task_state_parse(s, p);
			free(s);
		}
		break;
	case F_DBL:
		rc = ct_xml_get_double(parent, f->tag, -1e300, 1e300, p);
		break;
	case F_LONG:
		rc = ct_xml_get_long(parent, f->tag, LONG_MIN, LONG_MAX, p);
		break;
	case F_INT:
		rc = ct_xml_get_long(parent, f->tag, INT_MIN, INT_MAX, &l);
		if (rc == 0)
			*(int *)p = (int)l;
		break;
	case F_U64:
		rc = ct_xml_get_int64(parent, f->tag, 0, INT64_MAX, &v64);
		if (rc == 0)
			*(uint64_t *)p = (uint64_t)v64;
		break;
	default:
		rc = CT_EINTERNAL;
	}
	return rc == CT_ENOTFOUND ? 0 : rc;
}

static int read_fields(xmlNodePtr parent, void *obj, const struct field *f, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = read_field(parent, obj, &f[i]);
	return rc;
}

/* Free the strings of obj: every F_STR field (the tables list them all). */
static void free_fields(void *obj, const struct field *f, size_t n)
{
	char *base = obj;

	for (size_t i = 0; i < n; i++)
		if (f[i].type == F_STR)
			free(*(char **)(base + f[i].off));
}

/* ---- writer ---- */

static int write_task(struct ct_buf *b, const struct ct_task *t)
{
	int rc;

	rc = ct_xml_open(b, "task");
	if (rc < 0) goto out;
	rc = write_fields(b, t, task_fields, NF(task_fields));
	if (rc < 0) goto out;
	for (size_t i = 0; i < t->nparams && rc == 0; i++) {
		rc = ct_xml_open(b, "param");
		if (rc == 0) rc = ct_xml_elem_str(b, "name", t->params[i].name);
		if (rc == 0) rc = ct_xml_elem_str(b, "value", t->params[i].value);
		if (rc == 0) rc = ct_xml_close(b, "param");
	}
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		rc = ct_xml_open(b, "file");
		if (rc == 0) rc = write_fields(b, &t->files[i], file_fields, NF(file_fields));
		if (rc == 0) rc = ct_xml_close(b, "file");
	}
	if (rc < 0) goto out;
	rc = ct_xml_close(b, "task");
out:
	return rc;
}

int ct_state_to_xml(const struct ct_state *st, struct ct_buf *b)
{
	int rc;

	rc = ct_buf_appends(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<client_state>\n");
	if (rc < 0) goto out;
	rc = ct_xml_elem_long(b, "version", 1);
	if (rc == 0) rc = ct_xml_elem_str(b, "cpid", st->cpid);
	if (rc == 0) rc = ct_xml_open(b, "totals");
	if (rc == 0) rc = write_fields(b, &st->totals, totals_fields, NF(totals_fields));
	if (rc == 0) rc = ct_xml_close(b, "totals");
	for (size_t i = 0; i < st->nprojects && rc == 0; i++) {
		const struct ct_project *p = &st->projects[i];

		rc = ct_xml_open(b, "project");
		if (rc == 0) rc = write_fields(b, p, project_fields, NF(project_fields));
		for (size_t j = 0; j < p->ntasks && rc == 0; j++)
			rc = write_task(b, &p->tasks[j]);
		if (rc == 0) rc = ct_xml_close(b, "project");
	}
	if (rc < 0) goto out;
	rc = ct_xml_close(b, "client_state");
out:
	return rc;
}

int ct_state_save(const struct ct_state *st)
{
	struct ct_buf b = CT_BUF_INIT(STATE_MAX_BYTES);
	int rc;

	rc = ct_state_to_xml(st, &b);
	if (rc < 0) {
		ct_error(rc, "client state over %u bytes", STATE_MAX_BYTES);
		goto out;
	}
	rc = ct_file_write_atomic(st->path, b.data, b.len, 0600);
out:
	ct_buf_free(&b);
	return rc;
}

/* ---- reader ---- */

static void task_init(struct ct_task *t)
{
	memset(t, 0, sizeof(*t));
	t->last_loss = NAN;
	t->eval_loss = NAN;
}

void ct_params_free(struct ct_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].value);
	}
	free(p);
}

void ct_task_files_free(struct ct_task_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free_fields(&f[i], file_fields, NF(file_fields));
	free(f);
}

static void task_free(struct ct_task *t)
{
	ct_params_free(t->params, t->nparams);
	ct_task_files_free(t->files, t->nfiles);
	free_fields(t, task_fields, NF(task_fields));
}

static void project_free(struct ct_project *p)
{
	for (size_t i = 0; i < p->ntasks; i++)
		task_free(&p->tasks[i]);
	free(p->tasks);
	for (size_t i = 0; i < p->nrefused; i++)
		free(p->refused[i]);
	free_fields(p, project_fields, NF(project_fields));
}

void ct_state_free(struct ct_state *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->nprojects; i++)
		project_free(&st->projects[i]);
	free(st->projects);
	free(st->path);
	free(st);
}

/* A state file someone edited is checked like a scheduler reply (cl_jail.h):
 * a task whose names would become paths outside the client's directory is
 * refused, never followed. */
static int check_file(const struct ct_task_file *f)
{
	int rc;

	rc = ct_jail_check_name("file role in the state file", f->name);
	if (rc == 0) rc = ct_jail_check_sha("file sha256 in the state file", f->sha256);
	if (rc == 0) rc = ct_jail_check_url("file URL in the state file", f->url);
	return rc;
}

static int check_task(const struct ct_task *t)
{
	int rc;

	rc = ct_jail_check_name("task name in the state file", t->name);
	if (rc == 0 && t->wu_name != NULL)
		rc = ct_jail_check_name("workunit name in the state file", t->wu_name);
	if (rc == 0 && t->upload_url != NULL)
		rc = ct_jail_check_url("upload URL in the state file", t->upload_url);
	if (rc == 0 && t->upload_token != NULL)
		rc = ct_jail_check_token("upload token in the state file", t->upload_token);
	if (rc == 0 && t->output_sha256[0] != '\0')
		rc = ct_jail_check_sha("output sha256 in the state file", t->output_sha256);
	for (size_t i = 0; i < t->nfiles && rc == 0; i++)
		rc = check_file(&t->files[i]);
	return rc < 0 ? ct_error(CT_EFORMAT, "%s (edited by hand?)", ct_errmsg(rc)) : 0;
}

static int read_task(xmlNodePtr n, struct ct_project *p)
{
	struct ct_task *t;
	struct ct_task_file *f;
	xmlNodePtr c;
	char *name = NULL, *pname = NULL, *pvalue = NULL;
	int rc;

	rc = ct_xml_get_str(n, "name", STATE_MAX_STR, &name);
	if (rc < 0) goto out;
	rc = ct_project_add_task(p, name, &t);
	if (rc < 0) goto out;
	rc = read_fields(n, t, task_fields, NF(task_fields));
	for (c = ct_xml_child(n, "param"); c != NULL && rc == 0; c = ct_xml_next(c, "param")) {
		rc = ct_xml_get_str(c, "name", STATE_MAX_STR, &pname);
		if (rc == 0) rc = ct_xml_get_str(c, "value", STATE_MAX_STR, &pvalue);
		if (rc == 0) rc = ct_task_add_param(t, pname, pvalue);
		free(pname);
		free(pvalue);
		pname = pvalue = NULL;
	}
	for (c = ct_xml_child(n, "file"); c != NULL && rc == 0; c = ct_xml_next(c, "file")) {
		rc = ct_task_add_file(t, &f);
		if (rc == 0) rc = read_fields(c, f, file_fields, NF(file_fields));
	}
	if (rc == 0) rc = check_task(t);
out:
	free(name);
	return rc;
}

static int read_project(xmlNodePtr n, struct ct_state *st)
{
	struct ct_project *p;
	xmlNodePtr c;
	char *url = NULL, *key = NULL;
	int rc;

	rc = ct_xml_get_str(n, "url", STATE_MAX_STR, &url);
	if (rc == 0) rc = ct_xml_get_str(n, "key", STATE_MAX_STR, &key);
	if (rc == 0) rc = ct_state_add_project(st, url, key, &p);
	if (rc == 0) rc = read_fields(n, p, project_fields, NF(project_fields));
	for (c = ct_xml_child(n, "task"); c != NULL && rc == 0; c = ct_xml_next(c, "task"))
		rc = read_task(c, p);
	free(url);
	free(key);
	return rc;
}

static int new_state(const char *path, struct ct_state **out)
{
	unsigned char id[16];
	struct ct_state *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (st == NULL)
		return CT_ENOMEM;
	st->path = strdup(path ? path : "");
	if (st->path == NULL) {
		free(st);
		return CT_ENOMEM;
	}
	if (ct_random_bytes(id, sizeof(id)) < 0)
		memset(id, 0, sizeof(id));
	ct_hex_encode(id, sizeof(id), st->cpid);
	*out = st;
	return 0;
}

int ct_state_from_xml(const void *data, size_t n, const char *path, struct ct_state **out)
{
	struct ct_state *st = NULL;
	xmlDocPtr doc = NULL;
	xmlNodePtr root, c;
	char *cpid = NULL;
	int rc;

	*out = NULL;
	rc = ct_xml_parse(data, n, STATE_MAX_BYTES, STATE_MAX_DEPTH, &doc);
	if (rc < 0) goto out;
	root = xmlDocGetRootElement(doc);
	if (root == NULL || xmlStrcmp(root->name, BAD_CAST "client_state") != 0) {
		rc = ct_error(CT_EFORMAT, "%s: not a client state file", path);
		goto out;
	}
	rc = new_state(path, &st);
	if (rc < 0) goto out;
	rc = ct_xml_get_str(root, "cpid", 32, &cpid);
	if (rc == 0)
		snprintf(st->cpid, sizeof(st->cpid), "%s", cpid);
	c = ct_xml_child(root, "totals");
	rc = c ? read_fields(c, &st->totals, totals_fields, NF(totals_fields)) : 0;
	for (c = ct_xml_child(root, "project"); c != NULL && rc == 0; c = ct_xml_next(c, "project"))
		rc = read_project(c, st);
	if (rc < 0) goto out;
	*out = st;
	st = NULL;
out:
	if (rc < 0 && path != NULL)
		ct_error(rc, "%s: %s", path, ct_errmsg(rc));
	free(cpid);
	ct_state_free(st);
	if (doc != NULL)
		xmlFreeDoc(doc);
	return rc;
}

int ct_state_load(const char *path, struct ct_state **out)
{
	unsigned char *data = NULL;
	size_t len;
	int rc;

	*out = NULL;
	rc = ct_file_read_all(path, STATE_MAX_BYTES, &data, &len);
	if (rc == CT_ENOENT)
		return new_state(path, out);
	if (rc < 0)
		return rc;
	rc = ct_state_from_xml(data, len, path, out);
	free(data);
	return rc;
}

/* ---- editing ---- */

struct ct_project *ct_state_find_project(struct ct_state *st, const char *url)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	for (size_t i = 0; i < st->nprojects; i++)
		if (strlen(st->projects[i].url) == n && strncmp(st->projects[i].url, url, n) == 0)
			return &st->projects[i];
	return NULL;
}

int ct_state_add_project(struct ct_state *st, const char *url, const char *key,
			 struct ct_project **out)
{
	struct ct_project *p;

	if (out != NULL)
		*out = NULL;
	if (ct_state_find_project(st, url) != NULL)
		return ct_error(CT_EEXISTS, "already attached to %s", url);
	p = ct_array_add_zeroed(&st->projects, st->nprojects, sizeof(*p));
	if (p == NULL)
		return CT_ENOMEM;
	p->url = strdup(url);
	p->key = strdup(key ? key : "");
	if (p->url == NULL || p->key == NULL) {
		project_free(p);
		return CT_ENOMEM;
	}
	ct_url_normalise(p->url);
	st->nprojects++;
	if (out != NULL)
		*out = p;
	return 0;
}

int ct_state_remove_project(struct ct_state *st, const char *url)
{
	struct ct_project *p = ct_state_find_project(st, url);
	size_t i;

	if (p == NULL)
		return ct_error(CT_ENOTFOUND, "not attached to %s", url);
	i = (size_t)(p - st->projects);
	project_free(p);
	memmove(p, p + 1, (st->nprojects - i - 1) * sizeof(*p));
	st->nprojects--;
	return 0;
}

struct ct_task *ct_project_find_task(struct ct_project *p, const char *name)
{
	for (size_t i = 0; i < p->ntasks; i++)
		if (strcmp(p->tasks[i].name, name) == 0)
			return &p->tasks[i];
	return NULL;
}

int ct_project_add_task(struct ct_project *p, const char *name, struct ct_task **out)
{
	struct ct_task *t;

	*out = NULL;
	if (ct_project_find_task(p, name) != NULL)
		return ct_error(CT_EEXISTS, "task %s already known", name);
	t = ct_array_add_zeroed(&p->tasks, p->ntasks, sizeof(*t));
	if (t == NULL)
		return CT_ENOMEM;
	task_init(t);
	t->name = strdup(name);
	if (t->name == NULL)
		return CT_ENOMEM;
	p->ntasks++;
	*out = t;
	return 0;
}

void ct_project_remove_task(struct ct_project *p, size_t i)
{
	if (i >= p->ntasks)
		return;
	task_free(&p->tasks[i]);
	memmove(&p->tasks[i], &p->tasks[i + 1], (p->ntasks - i - 1) * sizeof(p->tasks[0]));
	p->ntasks--;
}

const char *ct_task_param(const struct ct_task *t, const char *name)
{
	for (size_t i = 0; i < t->nparams; i++)
		if (strcmp(t->params[i].name, name) == 0)
			return t->params[i].value;
	return NULL;
}

int ct_task_add_param(struct ct_task *t, const char *name, const char *value)
{
	struct ct_param *pp = ct_array_add_zeroed(&t->params, t->nparams, sizeof(*pp));

	if (pp == NULL)
		return CT_ENOMEM;
	pp->name = strdup(name);
	pp->value = strdup(value);
	if (pp->name == NULL || pp->value == NULL) {
		free(pp->name);
		free(pp->value);
		return CT_ENOMEM;
	}
	t->nparams++;
	return 0;
}

int ct_task_add_file(struct ct_task *t, struct ct_task_file **out)
{
	struct ct_task_file *f = ct_array_add_zeroed(&t->files, t->nfiles, sizeof(*f));

	*out = NULL;
	if (f == NULL)
		return CT_ENOMEM;
	t->nfiles++;
	*out = f;
	return 0;
}
