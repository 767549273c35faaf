/*
 * project_key.h - the project's Ed25519 signing key (PROJECT/signing.key,
 * PEM, 0600; lib/ct_sign.h): made by `ctune-server init`, or by the first
 * start of a project made before receipts existed, and never replaced.
 * It signs every round's receipt (daemons/receipt.h); its public half is
 * on the home page and in `ctune-server project show`.
 */
#ifndef CT_PROJECT_KEY_H
#define CT_PROJECT_KEY_H

#include "ct_sign.h"

#define CT_PROJECT_KEY_FILE "signing.key"

/* Make dir/signing.key. CT_EEXISTS when there is one already. */
int ct_project_key_make(const char *dir);

/* Load dir/signing.key into *key (the caller frees it with
 * ct_sign_key_free) and its public half into pub, making the file first
 * when it is missing (two processes doing so at once end with one key:
 * ct_sign_key_save never replaces a file). Returns 0 or a CT_E* code;
 * *key NULL on failure. */
int ct_project_key_open(const char *dir, struct ct_sign_key **key,
			unsigned char pub[CT_SIGN_PUB_LEN]);

#endif
