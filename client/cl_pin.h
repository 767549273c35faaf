/*
 * cl_pin.h - pinning a self-signed project's TLS key (`ctune attach
 * --pin-self-signed`): the pin is curl's "sha256//BASE64" form of the
 * SHA-256 of the server's SubjectPublicKeyInfo, stored in the project's
 * ca_file field of the client state in place of a CA file; cl_http.c then
 * skips CA verification for that project and accepts only that key.
 */
#ifndef CT_CL_PIN_H
#define CT_CL_PIN_H

#include <stddef.h>

#define CT_PIN_PREFIX "sha256//"
#define CT_PIN_MAX 64		/* "sha256//" + 44 base64 characters + NUL */

/* 1 if s (a project's ca_file) is a pin "sha256//" + 44 base64 chars. */
int ct_pin_is(const char *s);

/* Connect to the https url without verifying its certificate, and write
 * the pin of the key it presents to pin (CT_PIN_MAX bytes). Returns 0,
 * CT_EINVAL (not https), CT_ENET (no connection or no certificate seen),
 * CT_ECRYPTO (the certificate does not parse). Trust on first use: the
 * caller shows the pin to the user. */
int ct_pin_fetch(const char *url, char pin[CT_PIN_MAX]);

#endif
