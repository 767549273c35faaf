/*
 * tls_cert.h - a self-signed certificate for `ctune-server init --tls`:
 * an EC P-256 key and an X.509 v3 certificate whose subject and
 * subjectAltName are the project's host (a DNS name or an IP address), so
 * that the server can serve https from its first start and the client can
 * pin the key (doc/operator.md, "TLS").
 */
#ifndef CT_TLS_CERT_H
#define CT_TLS_CERT_H

#include <stddef.h>

/* Make a new EC P-256 key and a self-signed certificate for host (DNS name
 * or IPv4/IPv6 literal, at most 253 bytes) valid for days days, and write
 * them as PEM to cert_path (0644) and key_path (0600), each atomically.
 * Returns 0, CT_EINVAL (bad host or days), CT_ECRYPTO (libcrypto failed,
 * detail in ct_errmsg()), or a file error. */
int ct_tls_make_self_signed(const char *cert_path, const char *key_path,
			    const char *host, int days);

/* Copy the host part of url (scheme://host[:port]/...; [v6] unbracketed)
 * into host (cap bytes). 0, or CT_EINVAL when url has no host. */
int ct_tls_url_host(const char *url, char *host, size_t cap);

#endif
