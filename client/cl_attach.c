/*
 * cl_attach.c - see cl_attach.h: the checks and the two RPCs of an attach,
 * shared by `ctune attach` (cmd_attach.c) and the control page (cl_web.c).
 */
#include "cl_attach.h"
#include "cl_http.h"
#include "cl_rpc.h"
#include "cl_state.h"
#include "ct_buf.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_attach_check_url(const char *url)
{
	if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
	    strlen(url) > 1000 || strpbrk(url, " \t\r\n") != NULL)
		return ct_error(CT_EUSAGE, "'%s' is not an http:// or https:// URL", url);
	return 0;
}

int ct_attach_check_key(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > 255)
		return ct_error(CT_EUSAGE, "bad account key");
	for (size_t i = 0; i < n; i++)
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'z') ||
		      (key[i] >= 'A' && key[i] <= 'Z')))
			return ct_error(CT_EUSAGE, "bad account key (letters and digits only)");
	return 0;
}

/* 1 if the n bytes at data hold a whole PEM certificate block. */
static int has_pem_cert(const unsigned char *data, size_t n)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	static const char end[] = "-----END CERTIFICATE-----";
	const unsigned char *b = memmem(data, n, begin, sizeof(begin) - 1);

	if (b == NULL || memchr(data, '\0', n) != NULL)
		return 0;
	b += sizeof(begin) - 1;
	return memmem(b, n - (size_t)(b - data), end, sizeof(end) - 1) != NULL;
}

int ct_attach_check_ca(const char *path, char **out)
{
	unsigned char *data = NULL;
	struct stat sb;
	size_t n = 0;
	int rc = 0;

	*out = path[0] != '\0' ? realpath(path, NULL) : NULL;
	if (*out == NULL || stat(*out, &sb) != 0 || access(*out, R_OK) != 0)
		rc = ct_error(CT_EUSAGE, "CA file %s: not a readable file", path);
	else if (!S_ISREG(sb.st_mode))
		rc = ct_error(CT_EUSAGE, "CA file %s: not a regular file", *out);
	else if (strpbrk(*out, " \t\r\n") != NULL || strlen(*out) >= 1000)
		rc = ct_error(CT_EUSAGE, "CA file %s: a path without spaces, under 1000 bytes, "
			      "please", *out);
	else if (sb.st_size > CT_ATTACH_CA_MAX)
		rc = ct_error(CT_EUSAGE, "CA file %s: over %d bytes", *out, CT_ATTACH_CA_MAX);
	else if (ct_file_read_all(*out, CT_ATTACH_CA_MAX, &data, &n) < 0)
		rc = ct_error(CT_EUSAGE, "CA file %s: cannot be read (or over %d bytes)", *out,
			      CT_ATTACH_CA_MAX);
	else if (!has_pem_cert(data, n))
		rc = ct_error(CT_EUSAGE, "CA file %s: no PEM certificate in it (-----BEGIN "
			      "CERTIFICATE-----)", *out);
	free(data);
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* One line saying what is wrong with an RPC to the project at url that
 * failed with rc (ct_errmsg(rc) holds the detail). */
static int explain(const char *url, int rc)
{
	char detail[600];

	snprintf(detail, sizeof(detail), "%s", ct_errmsg(rc));
	for (char *c = detail; *c; c++)
		if (*c == '\n' || *c == '\r' || *c == '\t')
			*c = ' ';
	if (rc == CT_ENET && strstr(detail, "TLS:") != NULL)
		return ct_error(rc, "TLS with %s failed: %s (a project with its own CA: its "
				"CA file, by --ca-file FILE, the control page's CA file or "
				"CURL_CA_BUNDLE; a self-signed one: --pin-self-signed)", url, strstr(detail, "TLS:") + 5);
	if (rc == CT_ENET || rc == CT_ETIMEOUT)
		return ct_error(rc, "cannot reach %s: %s", url, detail);
	if (rc == CT_EHTTP || rc == CT_EXML || rc == CT_ETOOBIG || rc == CT_EPROTO)
		return ct_error(CT_EPROTO, "%s is not a crowdtune server (%s)", url, detail);
	return rc;
}

/* POST req to url/path; parse a reply that is XML whatever its status.
 * Returns the transport's code or 0 with the body in reply. */
static int post(const char *url, const char *path, const struct ct_buf *req,
		const char *ca, struct ct_buf *reply)
{
	struct ct_http_opts o = { .timeout_s = 60, .connect_timeout_s = 15, .ca_file = ca };
	char *rpc = NULL;
	long status = 0;
	int rc;

	if (asprintf(&rpc, "%s%s", url, path) < 0)
		return CT_ENOMEM;
	rc = ct_http_post(rpc, "application/xml", req->data, req->len, 0, &o, reply, &status);
	if (rc == CT_EHTTP && reply->len > 0 && memmem(reply->data, reply->len, "<error>", 7))
		rc = 0;		/* a refusal in XML: the caller reads it */
	free(rpc);
	return rc;
}

int ct_attach_account(const char *url, const char *name, const char *email,
		      const char *password, const char *ca, char **key, char **user_name)
{
	struct ct_buf req = CT_BUF_INIT(1 << 16), reply = CT_BUF_INIT(1 << 16);
	char msg[512];
	int rc;

	*key = NULL;
	*user_name = NULL;
	rc = ct_rpc_build_account(name ? "create" : "lookup", name, email, password, &req);
	if (rc == 0) rc = post(url, "/rpc/account", &req, ca, &reply);
	if (rc == 0)
		rc = ct_rpc_parse_account(reply.data, reply.len, key, user_name);
	/* the detail is overwritten by the next ct_error(): copy it first */
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? ct_errmsg(rc) : "");
	msg[strcspn(msg, "\r\n")] = '\0';
	if (rc == CT_EXML || (rc == CT_EPROTO && strncmp(msg, "not an account", 14) == 0))
		rc = explain(url, rc);
	else if (rc == CT_EPROTO && strstr(msg, "password") != NULL)
		rc = ct_error(CT_EAUTH, "the project refused the password: %s (yours has %zu)",
			      msg, strlen(password));
	else if (rc == CT_EAUTH)
		rc = ct_error(CT_EAUTH, "%s: no account with that email and password", url);
	else if (rc == CT_EEXISTS || rc == CT_EPROTO || rc == CT_EAGAIN)
		rc = ct_error(rc, "the project refused: %s", msg);
	else if (rc < 0)
		rc = explain(url, rc);
	if (rc < 0) {
		free(*key);
		free(*user_name);
		*key = *user_name = NULL;
	}
	ct_buf_free(&req);
	ct_buf_free(&reply);
	return rc;
}

int ct_attach_verify(struct ct_state *st, const char *url, const char *key, const char *ca,
		     char **user_name)
{
	struct ct_buf req = CT_BUF_INIT(1 << 16), reply = CT_BUF_INIT(CT_RPC_MAX_REPLY);
	struct ct_sched_reply r = { 0 };
	struct ct_project *p = NULL;
	int rc;

	*user_name = NULL;
	rc = ct_state_add_project(st, url, key, &p);
	if (rc == CT_EEXISTS)
		rc = ct_error(rc, "already attached to %s", url);
	if (rc == 0) rc = ct_rpc_build_request(st, p, "<host></host>", 0, &req);
	if (rc == 0) rc = post(url, "/rpc/scheduler", &req, ca, &reply);
	if (rc == 0) {
		rc = ct_rpc_parse_reply(reply.data, reply.len, &r);
		if (rc < 0)
			rc = explain(url, rc);
	} else {
		rc = explain(url, rc);
	}
	if (rc == 0 && r.error_code != NULL) {
		if (strcmp(r.error_code, "AUTH") == 0 && r.error_message != NULL &&
		    strncmp(r.error_message, "malformed account key", 21) == 0)
			rc = ct_error(CT_EAUTH, "%s: this is not an account key: %.100s (copy "
				      "it again from your account page)", url, r.error_message);
		else if (strcmp(r.error_code, "AUTH") == 0)
			rc = ct_error(CT_EAUTH, "%s does not know this account key (copy it "
				      "again from your account page)", url);
		else	/* the reply's strings are ours: no ct_errmsg aliasing */
			rc = ct_error(CT_EDENIED, "%s refused: %s: %.300s", url, r.error_code,
				      r.error_message ? r.error_message : "");
	}
	if (rc == 0 && r.user_name != NULL && (*user_name = strdup(r.user_name)) == NULL)
		rc = CT_ENOMEM;
	ct_sched_reply_free(&r);
	ct_buf_free(&req);
	ct_buf_free(&reply);
	return rc;
}
