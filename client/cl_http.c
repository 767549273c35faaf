/*
 * cl_http.c - see cl_http.h.
 */
#include "config.h"
#include "cl_http.h"
#include "cl_jail.h"
#include "cl_pin.h"
#include "ct_err.h"
#include "ct_os.h"
#include "ct_file.h"
#include "ct_gzip.h"
#include "ct_log.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t http_once = PTHREAD_ONCE_INIT;

static void http_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void ct_http_init(void)
{
	pthread_once(&http_once, http_global_init);
}

struct sink {
	struct ct_buf *buf;
	int overflow;
};

static size_t buf_write(char *p, size_t size, size_t nm, void *arg)
{
	struct sink *s = arg;

	if (ct_buf_append(s->buf, p, size * nm) < 0) {
		s->overflow = 1;
		return 0;
	}
	return size * nm;
}

static int progress_cb(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const volatile int *cancel = arg;

	(void)dt; (void)dn; (void)ut; (void)un;
	return *cancel != 0;
}

/* Common options on a fresh handle; *hdrs gets the header list to free. */
static CURL *make_handle(const char *url, const struct ct_http_opts *o,
			 struct curl_slist **hdrs)
{
	static const struct ct_http_opts none;
	CURL *c = curl_easy_init();
	const char *ca;

	*hdrs = NULL;
	if (c == NULL)
		return NULL;
	if (o == NULL)
		o = &none;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			 (long)((o->timeout_s > 0 ? o->timeout_s : 300) * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)((o->connect_timeout_s > 0 ? o->connect_timeout_s : 20) * 1000));
	curl_easy_setopt(c, CURLOPT_USERAGENT,
			 o->user_agent ? o->user_agent : "ctune/" PACKAGE_VERSION);
	if (o->cancel != NULL) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)o->cancel);
	}
	for (const char *const *h = o->headers; h != NULL && *h != NULL; h++)
		*hdrs = curl_slist_append(*hdrs, *h);
	ca = o->ca_file ? o->ca_file : getenv("CURL_CA_BUNDLE");
	/* self-signed: that key, no CA check; verification stays on (and
	 * fails) where the TLS backend cannot pin */
	if (ct_pin_is(o->ca_file) &&
	    curl_easy_setopt(c, CURLOPT_PINNEDPUBLICKEY, o->ca_file) == CURLE_OK) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (ca != NULL && *ca != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	else	/* Windows: the system's certificate store (elsewhere no-op) */
		curl_easy_setopt(c, CURLOPT_SSL_OPTIONS, (long)CURLSSLOPT_NATIVE_CA);
	return c;
}

/* Map a finished transfer to a CT_E* code. */
static int map_result(CURL *c, CURLcode cc, const char *url, int overflow, long *status)
{
	long st = 0;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
	if (status != NULL)
		*status = st;
	if (overflow)
		return ct_error(CT_ETOOBIG, "%s: reply over the size limit", url);
	switch (cc) {
	case CURLE_OK:
		break;
	case CURLE_ABORTED_BY_CALLBACK:
		return ct_error(CT_ECANCELED, "%s: canceled", url);
	case CURLE_OPERATION_TIMEDOUT:
		return ct_error(CT_ETIMEOUT, "%s: %s", url, curl_easy_strerror(cc));
	case CURLE_WRITE_ERROR:
		return ct_error(CT_EIO, "%s: %s", url, curl_easy_strerror(cc));
	case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR: case CURLE_SSL_CRL_BADFILE:
		return ct_error(CT_ENET, "%s: TLS: %s", url, curl_easy_strerror(cc));
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
		return ct_error(CT_ENET, "%s: TLS: the server's key changed: it is not the key "
				"pinned at attach (refusing to talk to it; if the project says it "
				"has a new key: detach, then attach --pin-self-signed again)", url);
	default:
		return ct_error(CT_ENET, "%s: %s", url, curl_easy_strerror(cc));
	}
	if (st >= 400 || st < 200)
		return ct_error(CT_EHTTP, "%s: HTTP status %ld", url, st);
	return 0;
}

/* Run c with the header list hdrs, its body into s, and free both. */
static int perform(CURL *c, struct curl_slist *hdrs, const char *url, struct sink *s,
		   long *status)
{
	CURLcode cc;
	int rc;

	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	cc = curl_easy_perform(c);
	rc = map_result(c, cc, url, s->overflow, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return rc;
}

int ct_http_post(const char *url, const char *ctype, const void *body, size_t n,
		 int gzip, const struct ct_http_opts *o, struct ct_buf *reply, long *status)
{
	struct ct_buf z = CT_BUF_INIT(0);
	struct curl_slist *hdrs = NULL;
	struct sink s = { reply, 0 };
	char ct[128];
	CURL *c;
	int rc;

	ct_http_init();
	if (status != NULL)
		*status = 0;
	if (gzip) {
		rc = ct_gzip_compress(body, n, CT_GZIP_DEFAULT_LEVEL, &z);
		if (rc < 0) goto out;
		body = z.data;
		n = z.len;
	}
	c = make_handle(url, o, &hdrs);
	if (c == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
	hdrs = curl_slist_append(hdrs, ct);
	if (gzip)
		hdrs = curl_slist_append(hdrs, "Content-Encoding: gzip");
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	rc = perform(c, hdrs, url, &s, status);
out:
	ct_buf_free(&z);
	return rc;
}

int ct_http_get(const char *url, const struct ct_http_opts *o, struct ct_buf *reply,
		long *status)
{
	struct curl_slist *hdrs = NULL;
	struct sink s = { reply, 0 };
	CURL *c;

	ct_http_init();
	if (status != NULL)
		*status = 0;
	c = make_handle(url, o, &hdrs);
	if (c == NULL)
		return CT_ENOMEM;
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	return perform(c, hdrs, url, &s, status);
}

/* ---- resumable download ---- */

struct dl {
	int fd;
	uint64_t have;		/* bytes in the .part file */
	uint64_t size;		/* announced size: never write more */
	CURL *c;
	int checked;		/* status of this response looked at */
	int overflow;
	int ioerr;
};

static size_t dl_write(char *p, size_t size, size_t nm, void *arg)
{
	struct dl *d = arg;
	size_t n = size * nm;
	long st = 0;

	if (!d->checked) {
		d->checked = 1;
		curl_easy_getinfo(d->c, CURLINFO_RESPONSE_CODE, &st);
		if (st == 200 && d->have > 0) {
			/* the server ignored the Range: start over */
			if (ftruncate(d->fd, 0) < 0 || lseek(d->fd, 0, SEEK_SET) < 0) {
				d->ioerr = errno;
				return 0;
			}
			d->have = 0;
		} else if (st >= 300) {
			return n;	/* error body: ignore, the status says it */
		}
	}
	curl_easy_getinfo(d->c, CURLINFO_RESPONSE_CODE, &st);
	if (st >= 300)
		return n;
	if (d->have + n > d->size) {
		d->overflow = 1;
		return 0;
	}
	if (ct_fd_write_all(d->fd, p, n) < 0) {
		d->ioerr = errno;
		return 0;
	}
	d->have += n;
	return n;
}

static int dl_transfer(const char *url, struct dl *d, const struct ct_http_opts *o)
{
	struct curl_slist *hdrs = NULL;
	CURLcode cc;
	long st = 0;
	int rc;

	d->c = make_handle(url, o, &hdrs);
	if (d->c == NULL)
		return CT_ENOMEM;
	curl_easy_setopt(d->c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(d->c, CURLOPT_WRITEFUNCTION, dl_write);
	curl_easy_setopt(d->c, CURLOPT_WRITEDATA, d);
	if (d->have > 0)
		curl_easy_setopt(d->c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)d->have);
	cc = curl_easy_perform(d->c);
	if (d->ioerr) {
		errno = d->ioerr;
		rc = ct_error_errno("download %s", url);
	} else {
		rc = map_result(d->c, cc, url, d->overflow, &st);
		/* 416: we already have every byte (or more); verification decides */
		if (rc == CT_EHTTP && st == 416 && d->have > 0)
			rc = 0;
	}
	curl_easy_cleanup(d->c);
	curl_slist_free_all(hdrs);
	return rc;
}

/* Size, hash, fsync and rename part -> final. */
static int dl_finish(struct dl *d, const char *part, const char *final,
		     const char *sha256, const char *url)
{
	char got[CT_SHA256_HEXLEN + 1];
	int rc;

	if (d->have != d->size) {
		rc = ct_error(CT_EHASH, "%s: got %llu bytes, expected %llu", url,
			      (unsigned long long)d->have, (unsigned long long)d->size);
		goto bad;
	}
	if (fsync(d->fd) < 0)
		return ct_error_errno("fsync %s", part);
	rc = ct_sha256_file_hex(part, got);
	if (rc < 0)
		return rc;
	if (strcmp(got, sha256) != 0) {
		rc = ct_error(CT_EHASH, "%s: SHA-256 %s, expected %s", url, got, sha256);
		goto bad;
	}
	if (rename(part, final) < 0)
		return ct_error_errno("rename %s", part);
	ct_file_fsync_dir(final);
	return 0;
bad:
	unlink(part);
	return rc;
}

int ct_http_fetch_cached(const char *url, const char *cache_dir,
			 const char sha256[CT_SHA256_HEXLEN + 1], uint64_t size,
			 const struct ct_http_opts *o)
{
	struct dl d = { .fd = -1, .size = size };
	char *final = NULL, *part = NULL, name[CT_SHA256_HEXLEN + 8];
	struct stat st;
	int rc;

	ct_http_init();
	if (!ct_sha256_hex_valid(sha256))
		return ct_error(CT_EINVAL, "bad SHA-256 '%s'", sha256);
	snprintf(name, sizeof(name), "%s.part", sha256);
	rc = ct_jail_join(cache_dir, cache_dir, sha256, &final);	/* cl_jail.h */
	if (rc == 0) rc = ct_jail_join(cache_dir, cache_dir, name, &part);
	if (rc < 0) goto out;
	if (stat(final, &st) == 0 && (uint64_t)st.st_size == size) {
		rc = 0;		/* verified when it was renamed into place */
		goto out;
	}
	d.fd = ct_os_open(part, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (d.fd < 0 || fstat(d.fd, &st) < 0) {
		rc = ct_error_errno("open %s", part);
		goto out;
	}
	d.have = (uint64_t)st.st_size;
	if (d.have > size) {
		if (ftruncate(d.fd, 0) < 0) {
			rc = ct_error_errno("truncate %s", part);
			goto out;
		}
		d.have = 0;
	}
	if (lseek(d.fd, (off_t)d.have, SEEK_SET) < 0) {
		rc = ct_error_errno("seek %s", part);
		goto out;
	}
	rc = d.have < size ? dl_transfer(url, &d, o) : 0;
	if (rc == CT_ETOOBIG) {	/* a peer that sends more than it announced: start over */
		unlink(part);
		rc = ct_error(CT_ETOOBIG, "%s: the server sent more than the %llu bytes it "
			      "announced; partial file removed", url, (unsigned long long)size);
	}
	if (rc < 0) goto out;
	rc = dl_finish(&d, part, final, sha256, url);
out:
	if (d.fd >= 0)
		close(d.fd);
	free(final);
	free(part);
	return rc;
}

/* ---- upload ---- */

int ct_http_upload(const char *url, const char *path, const struct ct_http_opts *o,
		   struct ct_buf *reply, long *status)
{
	struct curl_slist *hdrs = NULL;
	struct sink s = { reply, 0 };
	struct stat st;
	CURLcode cc;
	CURL *c = NULL;
	FILE *f;
	int rc;

	ct_http_init();
	if (status != NULL)
		*status = 0;
	f = fopen(path, "rb");
	if (f == NULL)
		return ct_error_errno("open %s", path);
	if (fstat(fileno(f), &st) < 0) {
		rc = ct_error_errno("stat %s", path);
		goto out;
	}
	c = make_handle(url, o, &hdrs);
	if (c == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_READDATA, f);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)st.st_size);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	cc = curl_easy_perform(c);
	rc = map_result(c, cc, url, s.overflow, status);
out:
	if (c != NULL)
		curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	fclose(f);
	return rc;
}
