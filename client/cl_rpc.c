/*
 * cl_rpc.c - see cl_rpc.h.
 */
#include "config.h"
#include "cl_rpc.h"
#include "cl_jail.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_xml.h"

#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- request ---- */

static int write_report(struct ct_buf *b, const struct ct_task *t)
{
	int rc;

	rc = ct_xml_open(b, "result");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", t->name);
	if (rc == 0 && t->outcome == 0) {
		rc = ct_xml_elem_str(b, "status", "success");
		if (rc == 0) rc = ct_xml_elem_str(b, "sha256", t->output_sha256);
		if (rc == 0) rc = ct_xml_elem_int64(b, "size", (int64_t)t->output_size);
		if (rc == 0 && isfinite(t->last_loss))
			rc = ct_xml_elem_double(b, "final_loss", t->last_loss);
		if (rc == 0)
			rc = ct_xml_elem_long(b, "conforming", t->conforming != 0);
		if (rc == 0 && t->chain != NULL && t->chain[0] != '\0')
			rc = ct_xml_elem_str(b, "chain", t->chain);
	} else if (rc == 0) {
		char msg[256];	/* the protocol caps it at 255 bytes */

		snprintf(msg, sizeof(msg), "%s", t->error ? t->error : "error");
		rc = ct_xml_elem_str(b, "status", "error");
		if (rc == 0) rc = ct_xml_elem_long(b, "error_code", t->outcome);
		if (rc == 0) rc = ct_xml_elem_str(b, "error_message", msg);
	}
	if (rc == 0) rc = ct_xml_elem_double(b, "elapsed_s", isfinite(t->elapsed) ? t->elapsed : 0);
	if (rc == 0) rc = ct_xml_close(b, "result");
	return rc;
}

/* A result the client refused (cl_jail.h), reported as a client error so
 * that the server gives it to someone else at once, not at its deadline. */
static int write_refused(struct ct_buf *b, const char *name)
{
	int rc;

	rc = ct_xml_open(b, "result");
	if (rc == 0) rc = ct_xml_elem_str(b, "name", name);
	if (rc == 0) rc = ct_xml_elem_str(b, "status", "error");
	if (rc == 0) rc = ct_xml_elem_long(b, "error_code", CT_EPROTO);
	if (rc == 0) rc = ct_xml_elem_str(b, "error_message",
					  "refused by the client: a name or URL it will not use");
	if (rc == 0) rc = ct_xml_elem_double(b, "elapsed_s", 0);
	if (rc == 0) rc = ct_xml_close(b, "result");
	return rc;
}

int ct_project_active_tasks(const struct ct_project *p)
{
	int n = 0;

	for (size_t i = 0; i < p->ntasks; i++)
		n += p->tasks[i].state < CT_TASK_DONE;
	return n;
}

int ct_rpc_build_request(const struct ct_state *st, const struct ct_project *p,
			 const char *host_xml, int want, struct ct_buf *b)
{
	int rc, nrep = 0, nother = 0;

	rc = ct_buf_appends(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rc == 0) rc = ct_xml_open(b, "scheduler_request");
	if (rc == 0) rc = ct_xml_elem_str(b, "authenticator", p->key);
	/* no valid host secret yet (an older state): no host_id, so the server
	 * finds the host by its cpid and sends the secret again */
	if (rc == 0)
		rc = ct_xml_elem_long(b, "host_id",
				      ct_rpc_host_secret_valid(p->host_secret) ? p->hostid : 0);
	if (rc == 0) rc = ct_xml_elem_str(b, "host_cpid", st->cpid);
	if (rc == 0) rc = ct_xml_elem_str(b, "client_version", PACKAGE_VERSION);
	if (rc == 0 && host_xml != NULL) rc = ct_buf_appends(b, host_xml);
	for (size_t i = 0; i < p->nrefused && rc == 0; i++, nrep++)
		rc = write_refused(b, p->refused[i]);
	for (size_t i = 0; i < p->ntasks && rc == 0; i++)
		if (p->tasks[i].state == CT_TASK_DONE && nrep < CT_RPC_MAX_REPORTS) {
			rc = write_report(b, &p->tasks[i]);
			nrep++;
		}
	if (rc == 0 && ct_project_active_tasks(p) > 0) {
		rc = ct_xml_open(b, "other_results");
		for (size_t i = 0; i < p->ntasks && rc == 0 && nother < CT_RPC_MAX_OTHER; i++)
			if (p->tasks[i].state < CT_TASK_DONE) {
				rc = ct_xml_elem_str(b, "name", p->tasks[i].name);
				nother++;
			}
		if (rc == 0) rc = ct_xml_close(b, "other_results");
	}
	if (rc == 0) rc = ct_xml_open(b, "work_req");
	if (rc == 0) rc = ct_xml_elem_long(b, "want_results", want < 0 ? 0 : want > 16 ? 16 : want);
	if (rc == 0) rc = ct_xml_elem_long(b, "lora", 1);	/* this client runs LoRA WUs */
	if (rc == 0) rc = ct_xml_close(b, "work_req");
	if (rc == 0) rc = ct_xml_close(b, "scheduler_request");
	return rc;
}

/* ---- reply ---- */

void ct_sched_reply_free(struct ct_sched_reply *r)
{
	free(r->web_prefs);
	for (size_t i = 0; i < r->nacks; i++) {
		free(r->acks[i].name);
		free(r->acks[i].code);
		free(r->acks[i].message);
	}
	free(r->acks);
	for (size_t i = 0; i < r->naborts; i++)
		free(r->aborts[i]);
	free(r->aborts);
	for (size_t i = 0; i < r->nwus; i++) {
		free(r->wus[i].name);
		free(r->wus[i].refused);
		ct_params_free(r->wus[i].params, r->wus[i].nparams);
		ct_task_files_free(r->wus[i].files, r->wus[i].nfiles);
	}
	free(r->wus);
	for (size_t i = 0; i < r->nresults; i++) {
		free(r->results[i].name);
		free(r->results[i].refused);
		free(r->results[i].wu_name);
		free(r->results[i].upload_url);
		free(r->results[i].upload_token);
	}
	free(r->results);
	free(r->user_name);
	free(r->host_secret);
	free(r->project_name);
	free(r->error_code);
	free(r->error_message);
	memset(r, 0, sizeof(*r));
}

/* Count children named name, refusing more than max. */
static int count_children(xmlNodePtr parent, const char *name, size_t max, size_t *n)
{
	*n = 0;
	for (xmlNodePtr c = ct_xml_child(parent, name); c != NULL; c = ct_xml_next(c, name))
		if (++*n > max)
			return ct_error(CT_ETOOBIG, "reply has more than %zu <%s>", max, name);
	return 0;
}

/* Optional string: absent is fine (stays NULL). */
static int opt_str(xmlNodePtr n, const char *tag, char **out)
{
	int rc = ct_xml_get_str(n, tag, CT_RPC_MAX_STR, out);

	return rc == CT_ENOTFOUND ? 0 : rc;
}

/* A required string; missing -> CT_EPROTO. */
static int req_str(xmlNodePtr n, const char *tag, char **out)
{
	int rc = ct_xml_get_str(n, tag, CT_RPC_MAX_STR, out);

	if (rc == CT_ENOTFOUND)
		return ct_error(CT_EPROTO, "scheduler reply: <%s> without <%s>",
				(const char *)n->name, tag);
	return rc;
}

static int parse_ack(xmlNodePtr n, struct ct_rpc_ack *a)
{
	char *status = NULL;
	int rc;

	rc = req_str(n, "name", &a->name);
	if (rc == 0) rc = req_str(n, "status", &status);
	if (rc == 0) rc = opt_str(n, "code", &a->code);
	if (rc == 0) rc = opt_str(n, "message", &a->message);
	if (rc == 0)
		a->accepted = strcmp(status, "accepted") == 0 ||
			      (a->code != NULL && strcmp(a->code, "DUP") == 0);
	free(status);
	return rc;
}

static int is_leaf(xmlNodePtr n)
{
	for (xmlNodePtr c = n->children; c != NULL; c = c->next)
		if (c->type == XML_ELEMENT_NODE)
			return 0;
	return 1;
}

static int parse_file(xmlNodePtr n, struct ct_task_file *f)
{
	xmlChar *role = xmlGetProp(n, BAD_CAST "role");
	char *sha = NULL;
	int64_t size;
	int rc = 0;

	if (role == NULL || xmlStrlen(role) == 0 || xmlStrlen(role) > 64)
		rc = ct_error(CT_EPROTO, "scheduler reply: <file> without a role");
	else
		f->name = strdup((const char *)role);
	xmlFree(role);
	if (rc == 0 && f->name == NULL) rc = CT_ENOMEM;
	if (rc == 0) rc = ct_jail_check_name("file role in the scheduler reply", f->name);
	if (rc == 0) rc = req_str(n, "url", &f->url);
	if (rc == 0) rc = ct_jail_check_url("file URL in the scheduler reply", f->url);
	if (rc == 0) rc = req_str(n, "sha256", &sha);
	if (rc == 0) rc = ct_jail_check_sha("file sha256 in the scheduler reply", sha);
	if (rc == 0)
		memcpy(f->sha256, sha, CT_SHA256_HEXLEN + 1);
	if (rc == 0) rc = ct_xml_get_int64(n, "size", 0, INT64_MAX, &size);
	if (rc == 0)
		f->size = (uint64_t)size;
	else if (rc == CT_ENOTFOUND)
		rc = ct_error(CT_EPROTO, "scheduler reply: <file> without <size>");
	free(sha);
	return rc;
}

static int parse_wu_fields(xmlNodePtr n, struct ct_rpc_wu *w)
{
	size_t nfiles;
	int rc;

	rc = req_str(n, "name", &w->name);
	if (rc == 0) rc = ct_jail_check_name("workunit name in the scheduler reply", w->name);
	if (rc == 0) rc = count_children(n, "file", CT_RPC_MAX_FILES, &nfiles);
	if (rc < 0)
		return rc;
	w->files = calloc(nfiles ? nfiles : 1, sizeof(*w->files));
	w->params = calloc(CT_RPC_MAX_PARAMS, sizeof(*w->params));
	if (w->files == NULL || w->params == NULL)
		return CT_ENOMEM;
	for (xmlNodePtr c = ct_xml_child(n, "file"); c != NULL && rc == 0; c = ct_xml_next(c, "file"))
		rc = parse_file(c, &w->files[w->nfiles++]);
	for (xmlNodePtr c = ct_xml_child(n, NULL); c != NULL && rc == 0; c = ct_xml_next(c, NULL)) {
		const char *tag = (const char *)c->name;
		struct ct_param *pp;

		if (strcmp(tag, "name") == 0 || strcmp(tag, "file") == 0 || !is_leaf(c) ||
		    tag[0] == '_')	/* '_' names are the client's own */
			continue;
		if (w->nparams == CT_RPC_MAX_PARAMS)
			return ct_error(CT_ETOOBIG, "workunit with over %d parameters",
					CT_RPC_MAX_PARAMS);
		pp = &w->params[w->nparams++];
		pp->name = strdup(tag);
		if (pp->name == NULL)
			return CT_ENOMEM;
		rc = ct_xml_get_str(n, tag, CT_RPC_MAX_STR, &pp->value);
	}
	return rc;
}

/* Every field of a result that becomes a path, a URL or a header. */
static int check_result(const struct ct_rpc_result *r)
{
	int rc;

	rc = ct_jail_check_name("result name in the scheduler reply", r->name);
	if (rc == 0)
		rc = ct_jail_check_name("result's workunit name in the scheduler reply",
					r->wu_name);
	if (rc == 0) rc = ct_jail_check_url("upload URL in the scheduler reply", r->upload_url);
	if (rc == 0)
		rc = ct_jail_check_token("upload token in the scheduler reply", r->upload_token);
	return rc;
}

/* Keep the reason when rc says the client refuses the item (cl_jail.h):
 * the item is then skipped and reported, the rest of the reply used. */
static int refuse_item(int rc, char **why)
{
	if (rc != CT_EPROTO)
		return rc;
	*why = strdup(ct_errmsg(rc));
	return *why != NULL ? 0 : CT_ENOMEM;
}

/* A workunit; one that breaks the protocol or the name forms is kept as
 * refused (its results are refused with it). */
static int parse_wu(xmlNodePtr n, struct ct_rpc_wu *w)
{
	return refuse_item(parse_wu_fields(n, w), &w->refused);
}

static int parse_result(xmlNodePtr n, struct ct_rpc_result *r)
{
	int64_t max;
	int rc;

	rc = req_str(n, "name", &r->name);
	if (rc == 0) rc = req_str(n, "wu_name", &r->wu_name);
	if (rc == 0) rc = req_str(n, "upload_url", &r->upload_url);
	if (rc == 0) rc = req_str(n, "upload_token", &r->upload_token);
	if (rc == 0) rc = ct_xml_get_double(n, "deadline", 0, 1e12, &r->deadline);
	if (rc == 0) rc = ct_xml_get_int64(n, "max_upload_bytes", 0, INT64_MAX, &max);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_EPROTO, "scheduler reply: <result> incomplete");
	if (rc == 0) rc = refuse_item(check_result(r), &r->refused);
	r->max_upload_bytes = (uint64_t)max;
	return rc;
}

static int parse_header(xmlNodePtr root, struct ct_sched_reply *r)
{
	xmlNodePtr e;
	int rc;

	rc = ct_xml_get_long(root, "host_id", 0, LONG_MAX, &r->host_id);
	if (rc == CT_ENOTFOUND) rc = 0;
	if (rc == 0) rc = ct_xml_get_double(root, "request_delay", 0, 86400 * 7, &r->request_delay);
	if (rc == CT_ENOTFOUND) rc = 0;
	if (rc == 0) rc = ct_xml_get_double(root, "total_credit", 0, 1e300, &r->total_credit);
	if (rc == CT_ENOTFOUND) rc = 0;
	if (rc == 0) rc = ct_xml_get_double(root, "expavg_credit", 0, 1e300, &r->expavg_credit);
	if (rc == CT_ENOTFOUND) rc = 0;
	if (rc == 0) rc = ct_xml_get_long(root, "rank", 0, LONG_MAX, &r->rank);
	if (rc == CT_ENOTFOUND) rc = 0;
	r->pending_results = -1;
	if (rc == 0) rc = ct_xml_get_long(root, "pending_results", 0, LONG_MAX, &r->pending_results);
	if (rc == CT_ENOTFOUND) rc = 0;
	if (rc == 0) rc = opt_str(root, "user_name", &r->user_name);
	if (rc == 0) rc = opt_str(root, "host_secret", &r->host_secret);
	if (rc == 0 && r->host_secret != NULL && !ct_rpc_host_secret_valid(r->host_secret))
		rc = ct_error(CT_EPROTO, "bad host_secret in the scheduler reply");
	if (rc == 0) rc = opt_str(root, "project_name", &r->project_name);
	e = ct_xml_child(root, "web_prefs");
	if (rc == 0 && e != NULL) {
		int64_t t = 0;

		rc = ct_xml_get_int64(e, "mod_time", 1, INT64_MAX, &t);
		if (rc == 0)
			rc = ct_xml_get_str(e, "conf", CT_RPC_MAX_WEB_PREFS, &r->web_prefs);
		if (rc == CT_ENOTFOUND)	/* <conf></conf>: cleared on the web */
			rc = (r->web_prefs = strdup("")) != NULL ? 0 : CT_ENOMEM;
		if (rc < 0)
			rc = ct_error(CT_EPROTO, "scheduler reply: bad <web_prefs>");
		r->web_prefs_time = t;
	}
	e = ct_xml_child(root, "error");
	if (rc == 0 && e != NULL) {
		rc = opt_str(e, "code", &r->error_code);
		if (rc == 0) rc = opt_str(e, "message", &r->error_message);
		if (rc == 0 && r->error_code == NULL)
			r->error_code = strdup("INTERNAL");
	}
	return rc;
}

/* Parse the repeated elements named tag with fn into a calloc'd array. */
#define PARSE_LIST(root, tag, max, arr, count, fn)                              \
	do {                                                                     \
		size_t n_;                                                       \
		rc = count_children(root, tag, max, &n_);                        \
		if (rc < 0) goto out;                                            \
		arr = calloc(n_ ? n_ : 1, sizeof(*arr));                         \
		if (arr == NULL) { rc = CT_ENOMEM; goto out; }                   \
		for (xmlNodePtr c_ = ct_xml_child(root, tag); c_ && rc == 0;     \
		     c_ = ct_xml_next(c_, tag))                                  \
			rc = fn(c_, &arr[count++]);                              \
		if (rc < 0) goto out;                                            \
	} while (0)

static int parse_abort(xmlNodePtr n, char **out)
{
	xmlChar *s = xmlNodeGetContent(n);
	int rc = 0;

	if (s == NULL || xmlStrlen(s) == 0 || xmlStrlen(s) > CT_RPC_MAX_STR)
		rc = ct_error(CT_EPROTO, "scheduler reply: bad <abort>");
	else if ((*out = strdup((const char *)s)) == NULL)
		rc = CT_ENOMEM;
	xmlFree(s);
	return rc;
}

int ct_rpc_host_secret_valid(const char *s)
{
	unsigned char raw[CT_SHA256_LEN];

	return s != NULL && strlen(s) == CT_SHA256_HEXLEN &&
	       ct_hex_decode(s, raw, sizeof(raw)) == 0;
}

int ct_rpc_upload_mac(const char *secret, const char *result, const char *sha_hex,
		      char out[65])
{
	unsigned char d[CT_SHA256_LEN];
	char msg[256];
	int n;

	if (!ct_rpc_host_secret_valid(secret))
		return ct_error(CT_EINVAL, "no host secret: attach again to get one");
	n = snprintf(msg, sizeof(msg), "ctune-upload-mac\n%s\n%s", result, sha_hex);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return ct_error(CT_EINVAL, "result name too long");
	ct_hmac_sha256(secret, CT_SHA256_HEXLEN, msg, (size_t)n, d);
	ct_hex_encode(d, sizeof(d), out);
	return 0;
}

int ct_rpc_parse_reply(const void *data, size_t n, struct ct_sched_reply *r)
{
	xmlDocPtr doc = NULL;
	xmlNodePtr root;
	int rc;

	memset(r, 0, sizeof(*r));
	r->total_credit = r->expavg_credit = NAN;
	rc = ct_xml_parse(data, n, CT_RPC_MAX_REPLY, CT_RPC_MAX_DEPTH, &doc);
	if (rc < 0) goto out;
	root = xmlDocGetRootElement(doc);
	if (xmlStrcmp(root->name, BAD_CAST "scheduler_reply") != 0) {
		rc = ct_error(CT_EPROTO, "not a scheduler reply: <%.40s>", (const char *)root->name);
		goto out;
	}
	rc = parse_header(root, r);
	if (rc < 0 || r->error_code != NULL) goto out;
	PARSE_LIST(root, "ack", CT_RPC_MAX_ACKS, r->acks, r->nacks, parse_ack);
	PARSE_LIST(root, "abort", CT_RPC_MAX_ABORTS, r->aborts, r->naborts, parse_abort);
	PARSE_LIST(root, "workunit", CT_RPC_MAX_WUS, r->wus, r->nwus, parse_wu);
	PARSE_LIST(root, "result", CT_RPC_MAX_RESULTS, r->results, r->nresults, parse_result);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	return rc;
}

/* ---- applying a reply ---- */

static void apply_ack(struct ct_project *p, const struct ct_rpc_ack *a)
{
	struct ct_task *t = ct_project_find_task(p, a->name);

	if (t == NULL || t->state != CT_TASK_DONE)
		return;
	if (!a->accepted && a->code != NULL && strcmp(a->code, "NOENT") == 0 &&
	    t->outcome == 0) {
		ct_log_warn("%s: server has no upload yet; uploading again", t->name);
		t->state = CT_TASK_UPLOADING;
		return;
	}
	if (!a->accepted)
		ct_log_warn("%s: report rejected: %s %s", t->name, a->code ? a->code : "?",
			    a->message ? a->message : "");
	t->state = CT_TASK_REPORTED;
}

static const struct ct_rpc_wu *find_wu(const struct ct_sched_reply *r, const char *name)
{
	for (size_t i = 0; i < r->nwus; i++)
		if (r->wus[i].name != NULL && strcmp(r->wus[i].name, name) == 0)
			return &r->wus[i];
	return NULL;
}

/* Whether a refused result can be reported: a name the server's request
 * parser takes (printable ASCII, at most 80 bytes), not listed yet. */
static int reportable(const struct ct_project *p, const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 80 || p->nrefused == CT_PROJECT_MAX_REFUSED)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x20 || name[i] >= 0x7f)
			return 0;
	for (size_t i = 0; i < p->nrefused; i++)
		if (strcmp(p->refused[i], name) == 0)
			return 0;
	return 1;
}

/* A result the client will not run: nothing of it is created; it is
 * reported as an error with the next request when its name allows. */
static void refuse_result(struct ct_project *p, const char *name, const char *why)
{
	int report = reportable(p, name);

	ct_log_error("%s: result refused, nothing created%s: %s", p->url,
		     report ? "; reporting it as an error" : "", why);
	if (report && (p->refused[p->nrefused] = strdup(name)) != NULL)
		p->nrefused++;
}

static int add_result(struct ct_project *p, const struct ct_sched_reply *r,
		      const struct ct_rpc_result *res, double now)
{
	const struct ct_rpc_wu *w = find_wu(r, res->wu_name);
	struct ct_task_file *f;
	struct ct_task *t;
	int rc;

	if (res->refused != NULL || (w != NULL && w->refused != NULL)) {
		refuse_result(p, res->name, w != NULL && w->refused ? w->refused : res->refused);
		return 1;
	}
	if (w == NULL) {
		ct_log_warn("%s: workunit %s missing from the reply; skipped", res->name,
			    res->wu_name);
		return 0;
	}
	rc = ct_project_add_task(p, res->name, &t);
	if (rc < 0)
		return rc;
	t->state = CT_TASK_DOWNLOADING;
	t->received = now;
	t->deadline = res->deadline;
	t->upload_max = res->max_upload_bytes;
	rc = ct_strset(&t->wu_name, res->wu_name);
	if (rc == 0) rc = ct_strset(&t->upload_url, res->upload_url);
	if (rc == 0) rc = ct_strset(&t->upload_token, res->upload_token);
	for (size_t i = 0; i < w->nparams && rc == 0; i++)
		rc = ct_task_add_param(t, w->params[i].name, w->params[i].value);
	for (size_t i = 0; i < w->nfiles && rc == 0; i++) {
		rc = ct_task_add_file(t, &f);
		if (rc == 0) rc = ct_strset(&f->name, w->files[i].name);
		if (rc == 0) rc = ct_strset(&f->url, w->files[i].url);
		if (rc == 0) {
			memcpy(f->sha256, w->files[i].sha256, sizeof(f->sha256));
			f->size = w->files[i].size;
		}
	}
	return rc;
}

int ct_rpc_apply_reply(struct ct_project *p, const struct ct_sched_reply *r, double now,
		       int *nnew)
{
	int rc = 0;

	*nnew = 0;
	if (r->host_id > 0)
		p->hostid = r->host_id;
	p->request_delay_until = now + r->request_delay;
	if (r->user_name != NULL)
		rc = ct_strset(&p->user_name, r->user_name);
	if (rc == 0 && r->host_secret != NULL)
		rc = ct_strset(&p->host_secret, r->host_secret);
	if (!isnan(r->total_credit))
		p->credit = r->total_credit;
	if (!isnan(r->expavg_credit))
		p->rac = r->expavg_credit;
	if (r->rank > 0)
		p->rank = r->rank;
	if (r->pending_results >= 0)
		p->pending_results = r->pending_results;
	for (size_t i = 0; i < r->nacks; i++)
		apply_ack(p, &r->acks[i]);
	for (size_t i = 0; i < r->naborts; i++) {
		struct ct_task *t = ct_project_find_task(p, r->aborts[i]);

		if (t != NULL && t->state < CT_TASK_DONE) {
			ct_log_info("%s: aborted by the server", t->name);
			t->state = CT_TASK_REPORTED;
			t->outcome = CT_ECANCELED;
		}
	}
	for (size_t i = 0; i < r->nresults && rc == 0; i++) {
		if (ct_project_find_task(p, r->results[i].name) != NULL)
			continue;	/* resent: we have it */
		rc = add_result(p, r, &r->results[i], now);
		if (rc == 0)
			(*nnew)++;
		rc = rc > 0 ? 0 : rc;	/* 1: refused */
	}
	return rc;
}

/* ---- account RPC ---- */

int ct_rpc_build_account(const char *action, const char *name, const char *email,
			 const char *password, struct ct_buf *b)
{
	int rc;

	rc = ct_buf_appends(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rc == 0) rc = ct_xml_open(b, "account_request");
	if (rc == 0) rc = ct_xml_elem_str(b, "action", action);
	if (rc == 0 && name != NULL) rc = ct_xml_elem_str(b, "name", name);
	if (rc == 0) rc = ct_xml_elem_str(b, "email", email);
	if (rc == 0) rc = ct_xml_elem_str(b, "password", password);
	if (rc == 0) rc = ct_xml_close(b, "account_request");
	return rc;
}

static int error_code_value(const char *code)
{
	static const struct { const char *name; int code; } map[] = {
		{ "AUTH", CT_EAUTH }, { "EXISTS", CT_EEXISTS }, { "PROTO", CT_EPROTO },
		{ "AGAIN", CT_EAGAIN }, { "DENIED", CT_EDENIED }, { "TOOBIG", CT_ETOOBIG },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].name, code) == 0)
			return map[i].code;
	return CT_EPROTO;
}

int ct_rpc_parse_account(const void *data, size_t n, char **key, char **user_name)
{
	xmlDocPtr doc = NULL;
	xmlNodePtr root, e;
	char *code = NULL, *msg = NULL;
	int rc;

	*key = NULL;
	*user_name = NULL;
	rc = ct_xml_parse(data, n, 1 << 16, CT_RPC_MAX_DEPTH, &doc);
	if (rc < 0) goto out;
	root = xmlDocGetRootElement(doc);
	if (xmlStrcmp(root->name, BAD_CAST "account_reply") != 0) {
		rc = ct_error(CT_EPROTO, "not an account reply");
		goto out;
	}
	e = ct_xml_child(root, "error");
	if (e != NULL) {
		opt_str(e, "code", &code);
		opt_str(e, "message", &msg);
		rc = ct_error(error_code_value(code ? code : ""), "%s",
			      msg ? msg : (code ? code : "refused"));
		goto out;
	}
	rc = ct_xml_get_str(root, "authenticator", 256, key);
	if (rc == CT_ENOTFOUND)
		rc = ct_error(CT_EPROTO, "account reply without <authenticator>");
	if (rc == 0) rc = opt_str(root, "name", user_name);
out:
	free(code);
	free(msg);
	if (doc != NULL)
		xmlFreeDoc(doc);
	if (rc < 0) {
		free(*key);
		free(*user_name);
		*key = *user_name = NULL;
	}
	return rc;
}

void ct_rpc_forget_refused(struct ct_project *p, size_t n)
{
	if (n > p->nrefused)
		n = p->nrefused;
	for (size_t i = 0; i < n; i++)
		free(p->refused[i]);
	memmove(p->refused, p->refused + n, (p->nrefused - n) * sizeof(p->refused[0]));
	p->nrefused -= n;
}
