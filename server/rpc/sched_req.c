/*
 * sched_req.c - parse a <scheduler_request> (see sched_req.h). Every string
 * is length-capped, every number range-checked, every list count-capped;
 * anything wrong is CT_EPROTO with the element named. The parse runs
 * before the account key is known, so the tree itself is capped too
 * (SCHED_REQ_MAX_NODES, SCHED_REQ_MAX_TEXT): a request over those is
 * CT_ETOOBIG (HTTP 413) and costs at most their worth of memory.
 */
#include "sched_req.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ct_chain.h"
#include "ct_err.h"
#include "ct_utf8.h"
#include "ct_xml.h"

#define STRCAP 255

/* The largest request the protocol allows is ~2,000 nodes (16 devices, 64
 * results, 256 other names, each a handful of elements) and under 600 KB
 * of text (64 hash chains of 8 KB); the caps leave room and cost a few MB
 * of tree. */
#define SCHED_REQ_MAX_NODES 20000
#define SCHED_REQ_MAX_TEXT (1u << 20)

/* Optional descriptive string: absent -> "" (allocated); bytes that are
 * not UTF-8 become '?' and it is cut on a character boundary to `cap`
 * bytes, so a long or odd field never makes the host's row unstorable. */
static int opt_str(xmlNodePtr p, const char *name, size_t cap, char **out)
{
	int rc = ct_xml_get_str(p, name, 1u << 16, out);

	if (rc == CT_ENOTFOUND) {
		*out = strdup("");
		return *out ? 0 : CT_ENOMEM;
	}
	if (rc < 0)
		return rc;
	ct_utf8_fit(*out, cap);	/* descriptive strings are cut, not refused */
	return 0;
}

static int opt_long(xmlNodePtr p, const char *name, long lo, long hi, long *out)
{
	int rc = ct_xml_get_long(p, name, lo, hi, out);

	return rc == CT_ENOTFOUND ? 0 : rc;
}

static int parse_device(xmlNodePtr d, struct sched_device *dev)
{
	int rc = opt_str(d, "name", STRCAP, &dev->name);

	if (rc == 0)
		rc = opt_str(d, "vendor", STRCAP, &dev->vendor);
	if (rc == 0)
		rc = opt_str(d, "type", 32, &dev->type);
	if (rc == 0) {
		rc = ct_xml_get_int64(d, "global_mem", 0, INT64_MAX, &dev->global_mem);
		if (rc == CT_ENOTFOUND)
			rc = 0;
	}
	if (rc == 0)
		rc = opt_long(d, "compute_units", 0, 1 << 24, &dev->compute_units);
	if (rc == 0)
		rc = opt_long(d, "conforming", 0, 1, &dev->conforming);
	return rc;
}

static int parse_host(xmlNodePtr root, struct sched_req *r)
{
	xmlNodePtr h = ct_xml_child(root, "host"), d;
	int rc;

	if (h == NULL)
		return ct_error(CT_EPROTO, "missing <host>");
	rc = opt_str(h, "hostname", STRCAP, &r->hostname);
	if (rc == 0)
		rc = opt_str(h, "os", STRCAP, &r->os);
	if (rc == 0)
		rc = opt_str(h, "cpu_model", STRCAP, &r->cpu_model);
	if (rc == 0)
		rc = opt_long(h, "ncpus", 0, 1 << 20, &r->ncpus);
	if (rc == 0) {
		rc = ct_xml_get_int64(h, "ram_bytes", 0, INT64_MAX, &r->ram_bytes);
		if (rc == CT_ENOTFOUND)
			rc = 0;
	}
	if (rc == 0) {	/* absent (an older client): 0, memory unknown */
		rc = ct_xml_get_int64(h, "work_mem", 0, INT64_MAX, &r->work_mem);
		if (rc == CT_ENOTFOUND)
			rc = 0;
	}
	if (rc == 0)	/* absent (an older client): "", either backend */
		rc = opt_str(h, "work_backend", STRCAP, &r->work_backend);
	for (d = ct_xml_child(h, "device"); rc == 0 && d; d = ct_xml_next(d, "device")) {
		if (r->ndev == CT_SCHED_MAX_DEVICES)
			return ct_error(CT_EPROTO, "more than %d <device>s", CT_SCHED_MAX_DEVICES);
		rc = parse_device(d, &r->dev[r->ndev++]);
	}
	return rc;
}

/* A result's hash chain: optional; hex links only, at most
 * CT_CHAIN_MAX_LINKS (whether it fits the WU is the validator's check). */
static int parse_chain(xmlNodePtr e, char **out)
{
	int rc = ct_xml_get_str(e, "chain", CT_CHAIN_HEX_MAX, out);
	size_t n;

	if (rc == CT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return rc == CT_ETOOBIG ? ct_error(CT_EPROTO, "<chain> over %d links",
						   CT_CHAIN_MAX_LINKS) : rc;
	n = strlen(*out);
	if (n == 0 || n % 64 != 0 || strspn(*out, "0123456789abcdef") != n)
		return ct_error(CT_EPROTO, "<chain> must be links of 64 lower-case hex digits");
	return 0;
}

static int parse_report(xmlNodePtr e, struct sched_report *rep)
{
	char *status = NULL;
	int rc;

	rc = ct_xml_get_str(e, "name", 80, &rep->name);
	if (rc == 0)
		rc = ct_xml_get_str(e, "status", 16, &status);
	if (rc < 0)
		goto out;
	if (strcmp(status, "success") == 0) {
		rep->success = 1;
		rc = ct_xml_get_str(e, "sha256", 64, &rep->sha256);
		if (rc == 0)
			rc = ct_xml_get_int64(e, "size", 0, INT64_MAX, &rep->size);
		if (rc == 0) {
			rc = ct_xml_get_double(e, "final_loss", -1e30, 1e30, &rep->final_loss);
			rep->has_final_loss = rc == 0;
			if (rc == CT_ENOTFOUND)
				rc = 0;
		}
		if (rc == 0)
			rc = parse_chain(e, &rep->chain);
	} else if (strcmp(status, "error") == 0) {
		rc = opt_long(e, "error_code", -1000000, 1000000, &rep->error_code);
		if (rc == 0)
			rc = opt_str(e, "error_message", STRCAP, &rep->error_message);
	} else {
		rc = ct_error(CT_EPROTO, "<status> must be success or error");
	}
	if (rc == 0) {
		rc = ct_xml_get_double(e, "elapsed_s", 0, 1e9, &rep->elapsed_s);
		if (rc == CT_ENOTFOUND)
			rc = 0;
	}
	if (rc == 0)
		rc = opt_long(e, "conforming", 0, 1, &rep->conforming);
out:
	free(status);
	return rc;
}

static int parse_lists(xmlNodePtr root, struct sched_req *r)
{
	xmlNodePtr e, o, w;
	int rc = 0;

	for (e = ct_xml_child(root, "result"); rc == 0 && e; e = ct_xml_next(e, "result")) {
		if (r->nrep == CT_SCHED_MAX_REPORTS)
			return ct_error(CT_EPROTO, "more than %d <result>s", CT_SCHED_MAX_REPORTS);
		rc = parse_report(e, &r->rep[r->nrep++]);
	}
	o = ct_xml_child(root, "other_results");
	r->has_other = o != NULL;
	for (e = o ? ct_xml_child(o, "name") : NULL; rc == 0 && e; e = ct_xml_next(e, "name")) {
		xmlChar *t = xmlNodeGetContent(e);
		if (r->nother == CT_SCHED_MAX_OTHER) {
			xmlFree(t);
			return ct_error(CT_EPROTO, "more than %d names in <other_results>",
					CT_SCHED_MAX_OTHER);
		}
		r->other[r->nother] = strndup(t ? (const char *)t : "", 80);
		xmlFree(t);
		if (r->other[r->nother] == NULL)
			return CT_ENOMEM;
		ct_utf8_fit(r->other[r->nother++], 80);
	}
	w = ct_xml_child(root, "work_req");
	if (rc == 0 && w)
		rc = opt_long(w, "want_results", 0, CT_SCHED_MAX_WANT, &r->want);
	if (rc == 0 && w)
		rc = opt_long(w, "lora", 0, 1, &r->lora);
	return rc;
}

int sched_req_parse(const void *body, size_t n, size_t max_bytes, struct sched_req *r)
{
	const struct ct_xml_limits lim = {
		.max_bytes = max_bytes, .max_depth = 16,
		.max_nodes = SCHED_REQ_MAX_NODES, .max_text = SCHED_REQ_MAX_TEXT,
	};
	xmlDocPtr doc = NULL;
	xmlNodePtr root;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = ct_xml_parse_lim(body, n, &lim, &doc);
	if (rc < 0)
		return rc;	/* CT_EXML 400, CT_ETOOBIG 413: not the protocol's */
	root = xmlDocGetRootElement(doc);
	if (root == NULL || strcmp((const char *)root->name, "scheduler_request") != 0) {
		rc = ct_error(CT_EPROTO, "expected <scheduler_request>");
		goto out;
	}
	rc = ct_xml_get_str(root, "authenticator", 64, &r->authenticator);
	if (rc == 0)
		rc = ct_xml_get_int64(root, "host_id", 0, INT64_MAX, &r->host_id);
	if (rc == 0)
		rc = ct_xml_get_str(root, "host_cpid", 32, &r->host_cpid);
	if (rc == 0)
		rc = opt_str(root, "client_version", 64, &r->client_version);
	if (rc == 0)
		rc = parse_host(root, r);
	if (rc == 0)
		rc = parse_lists(root, r);
out:
	if (rc < 0 && rc != CT_ENOMEM && rc != CT_EPROTO)
		rc = ct_error(CT_EPROTO, "%s", ct_errmsg(rc));
	xmlFreeDoc(doc);
	return rc;
}

void sched_req_free(struct sched_req *r)
{
	free(r->authenticator);
	free(r->host_cpid);
	free(r->client_version);
	free(r->hostname);
	free(r->os);
	free(r->cpu_model);
	free(r->work_backend);
	for (int i = 0; i < r->ndev; i++) {
		free(r->dev[i].name);
		free(r->dev[i].vendor);
		free(r->dev[i].type);
	}
	for (int i = 0; i < r->nrep; i++) {
		free(r->rep[i].name);
		free(r->rep[i].sha256);
		free(r->rep[i].error_message);
		free(r->rep[i].chain);
	}
	for (int i = 0; i < r->nother; i++)
		free(r->other[i]);
	memset(r, 0, sizeof(*r));
}
