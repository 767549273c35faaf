/*
 * web_mail.c - plain-text e-mail through the configured SMTP server with
 * libcurl's SMTP client (see web_mail.h). A message is made whole in a
 * capped buffer, CRLF line ends, then handed to curl, which does the SMTP
 * conversation (EHLO, STARTTLS, AUTH, MAIL FROM, RCPT TO, DATA with its
 * dot-stuffing).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "ct_buf.h"
#include "ct_conf.h"
#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "web_mail.h"

static int has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int ct_mail_addr_ok(const char *addr)
{
	size_t n = strlen(addr);
	const char *at = strchr(addr, '@');

	if (n < 3 || n > CT_MAIL_ADDR_MAX || at == NULL || at == addr || at[1] == '\0' ||
	    strchr(at + 1, '@') != NULL || has_ctl(addr))
		return 0;
	return strpbrk(addr, " <>\"(),;\\") == NULL;
}

/* The bare address of a From value ("Name <a@b>" or "a@b") into out. */
static int from_addr(const char *from, char *out, size_t cap)
{
	const char *lt = strrchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	size_t n;

	if (lt != NULL && (gt == NULL || gt[1] != '\0'))
		return ct_error(CT_ECONFIG, "mail.from: '%s' is not NAME <ADDRESS>", from);
	n = lt ? (size_t)(gt - lt - 1) : strlen(from);
	if (n >= cap)
		return ct_error(CT_ECONFIG, "mail.from: the address is too long");
	memcpy(out, lt ? lt + 1 : from, n);
	out[n] = '\0';
	if (!ct_mail_addr_ok(out))
		return ct_error(CT_ECONFIG, "mail.from: '%s' is not an e-mail address", out);
	return 0;
}

static int conf_str(const struct ct_conf *conf, const char *key, char *out, size_t cap)
{
	const char *v = "";

	ct_conf_get_str(conf, key, "", &v);
	if (strlen(v) >= cap || has_ctl(v))
		return ct_error(CT_ECONFIG, "%s: too long or not one line of text", key);
	snprintf(out, cap, "%s", v);
	return 0;
}

int ct_mail_conf_load(const struct ct_conf *conf, struct ct_mail_conf *mc)
{
	const char *tls = "try";
	int rc;

	memset(mc, 0, sizeof(*mc));
	rc = conf_str(conf, "mail.smtp_url", mc->url, sizeof(mc->url));
	if (rc == 0)
		rc = conf_str(conf, "mail.from", mc->from, sizeof(mc->from));
	if (rc == 0)
		rc = conf_str(conf, "mail.user", mc->user, sizeof(mc->user));
	if (rc == 0)
		rc = conf_str(conf, "mail.password", mc->password, sizeof(mc->password));
	if (rc == 0)
		rc = ct_conf_get_int(conf, "mail.timeout", 30, 1, 600, &mc->timeout_s);
	if (rc < 0 || mc->url[0] == '\0')
		return rc;
	if (strncasecmp(mc->url, "smtp://", 7) != 0 && strncasecmp(mc->url, "smtps://", 8) != 0)
		return ct_error(CT_ECONFIG, "mail.smtp_url: '%s' is not smtp:// or smtps://",
				mc->url);
	if (mc->from[0] == '\0')
		return ct_error(CT_ECONFIG, "mail.from: needed with mail.smtp_url");
	rc = from_addr(mc->from, mc->from_addr, sizeof(mc->from_addr));
	if (rc < 0)
		return rc;
	ct_conf_get_str(conf, "mail.tls", "try", &tls);
	if (strcmp(tls, "try") == 0)
		mc->tls = CT_MAIL_TLS_TRY;
	else if (strcmp(tls, "required") == 0)
		mc->tls = CT_MAIL_TLS_REQUIRED;
	else if (strcmp(tls, "none") == 0)
		mc->tls = CT_MAIL_TLS_NONE;
	else
		return ct_error(CT_ECONFIG, "mail.tls: '%s' is not try, required or none", tls);
	return 0;
}

/* RFC 5322's date in UTC, with English names whatever the locale. */
static void mail_date(char *out, size_t cap)
{
	static const char *const wd[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const mo[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d +0000", wd[tm.tm_wday], tm.tm_mday,
		 mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The whole message into b: headers, a blank line, the body in CRLF lines. */
static int make_message(struct ct_buf *b, const struct ct_mail_conf *mc, const char *to,
			const char *subject, const char *body)
{
	unsigned char rnd[16];
	char date[64], id[33];
	int rc;

	if (!ct_mail_addr_ok(to))
		return ct_error(CT_EINVAL, "mail: '%s' is not an e-mail address", to);
	if (strlen(subject) > 200 || has_ctl(subject))
		return ct_error(CT_EINVAL, "mail: the subject must be one line of 200 bytes");
	rc = ct_random_bytes(rnd, sizeof(rnd));
	if (rc < 0)
		return rc;
	ct_hex_encode(rnd, sizeof(rnd), id);
	mail_date(date, sizeof(date));
	rc = ct_buf_appendf(b, "Date: %s\r\nFrom: %s\r\nTo: <%s>\r\nSubject: %s\r\n"
			    "Message-ID: <%s@%s>\r\nMIME-Version: 1.0\r\nContent-Type: "
			    "text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n"
			    "Auto-Submitted: auto-generated\r\n\r\n", date, mc->from, to, subject,
			    id, strchr(mc->from_addr, '@') + 1);
	for (const char *p = body; rc == 0 && *p; ) {
		size_t n = strcspn(p, "\r\n");

		rc = ct_buf_append(b, p, n);
		if (rc == 0)
			rc = ct_buf_append(b, "\r\n", 2);
		p += n;
		if (*p == '\r')
			p++;
		if (*p == '\n')
			p++;
	}
	return rc;
}

struct reader {
	const unsigned char *p;
	size_t left;
};

static size_t read_cb(char *out, size_t size, size_t nmemb, void *arg)
{
	struct reader *r = arg;
	size_t n = size * nmemb < r->left ? size * nmemb : r->left;

	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return n;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Hand message m (len bytes) for `to` to the SMTP server. */
static int smtp_send(const struct ct_mail_conf *mc, const char *to, const unsigned char *m,
		     size_t len)
{
	static const long use_ssl[] = { [CT_MAIL_TLS_TRY] = CURLUSESSL_TRY,
					[CT_MAIL_TLS_REQUIRED] = CURLUSESSL_ALL,
					[CT_MAIL_TLS_NONE] = CURLUSESSL_NONE };
	struct reader r = { m, len };
	char env_from[CT_MAIL_ADDR_MAX + 3], rcpt[CT_MAIL_ADDR_MAX + 3];
	char err[CURL_ERROR_SIZE] = "";
	struct curl_slist *to_list = NULL;
	CURL *c;
	CURLcode cc;

	pthread_once(&curl_once, curl_init);
	c = curl_easy_init();
	snprintf(env_from, sizeof(env_from), "<%s>", mc->from_addr);
	snprintf(rcpt, sizeof(rcpt), "<%s>", to);
	to_list = curl_slist_append(NULL, rcpt);
	if (c == NULL || to_list == NULL) {
		curl_easy_cleanup(c);
		curl_slist_free_all(to_list);
		return ct_error(CT_ENOMEM, "mail: curl");
	}
	curl_easy_setopt(c, CURLOPT_URL, mc->url);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, env_from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, to_list);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &r);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_USE_SSL, use_ssl[mc->tls]);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, mc->timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	if (mc->user[0] != '\0' && mc->password[0] != '\0') {
		curl_easy_setopt(c, CURLOPT_USERNAME, mc->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, mc->password);
	}
	cc = curl_easy_perform(c);
	curl_slist_free_all(to_list);
	curl_easy_cleanup(c);
	if (cc != CURLE_OK)
		return ct_error(CT_EIO, "mail to %s through %s: %s", to, mc->url,
				err[0] ? err : curl_easy_strerror(cc));
	return 0;
}

int ct_mail_send(const struct ct_mail_conf *mc, const char *to, const char *subject,
		 const char *body)
{
	struct ct_buf b = CT_BUF_INIT(CT_MAIL_MSG_MAX);
	int rc = make_message(&b, mc, to, subject, body);

	if (rc == 0)
		rc = smtp_send(mc, to, b.data, b.len);
	ct_buf_free(&b);
	return rc;
}

/* ---- sending from a thread ------------------------------------------------ */

static atomic_int inflight;

struct mail_job {
	struct ct_mail_conf mc;
	char to[CT_MAIL_ADDR_MAX + 1];
	unsigned char *msg;
	size_t len;
};

static void *mail_thread(void *arg)
{
	struct mail_job *j = arg;
	int rc = smtp_send(&j->mc, j->to, j->msg, j->len);

	if (rc == 0)
		ct_log_info("mail: sent to %s", j->to);
	else
		ct_log_warn("mail: not sent: %s", ct_errmsg(rc));
	free(j->msg);
	free(j);
	atomic_fetch_sub(&inflight, 1);
	return NULL;
}

int ct_mail_send_async(const struct ct_mail_conf *mc, const char *to, const char *subject,
		       const char *body)
{
	struct ct_buf b = CT_BUF_INIT(CT_MAIL_MSG_MAX);
	struct mail_job *j = NULL;
	pthread_attr_t attr;
	pthread_t t;
	int rc = make_message(&b, mc, to, subject, body);

	if (rc < 0)
		goto out;
	if (atomic_fetch_add(&inflight, 1) >= CT_MAIL_MAX_INFLIGHT) {
		atomic_fetch_sub(&inflight, 1);
		rc = ct_error(CT_EBUSY, "mail: %d messages on their way already",
			      CT_MAIL_MAX_INFLIGHT);
		goto out;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		atomic_fetch_sub(&inflight, 1);
		rc = ct_error(CT_ENOMEM, "mail job");
		goto out;
	}
	j->mc = *mc;
	snprintf(j->to, sizeof(j->to), "%s", to);
	j->msg = ct_buf_steal(&b, &j->len);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, mail_thread, j) != 0) {
		atomic_fetch_sub(&inflight, 1);
		free(j->msg);
		free(j);
		rc = ct_error(CT_ENOMEM, "mail: no thread");
	}
	pthread_attr_destroy(&attr);
out:
	ct_buf_free(&b);
	return rc;
}
