/*
 * account.c - accounts and POST /rpc/account (see account.h and
 * doc/protocol.md). Passwords: PBKDF2-HMAC-SHA256, 16-byte random salt,
 * CT_PBKDF2_ITERATIONS rounds, 48 derived bytes: the first 32 are stored
 * (passwd_hash) to check the password, the last 16 wrap the account key
 * (auth_wrapped = key XOR them), so only someone with the password can get
 * the key back from the database.
 */
#include "account.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_utf8.h"
#include "ct_xml.h"
#include "data/db.h"
#include "data/dl.h"
#include "data/dl_account.h"
#include "ratelimit.h"
#include "data/server.h"

#define SALT_LEN 16
#define DK_LEN 48

static int pbkdf2(const char *pw, const unsigned char *salt, int iter, unsigned char dk[DK_LEN])
{
	if (PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, SALT_LEN, iter, EVP_sha256(),
			      DK_LEN, dk) != 1)
		return ct_error(CT_ECRYPTO, "PBKDF2 failed");
	return 0;
}

int ct_account_key_hash(const char *key, char out[65])
{
	unsigned char raw[16];

	if (key == NULL || strlen(key) != CT_ACCOUNT_KEY_HEXLEN ||
	    ct_hex_decode(key, raw, sizeof(raw)) < 0)
		return ct_error(CT_EAUTH, "malformed account key");
	ct_sha256_hex(key, CT_ACCOUNT_KEY_HEXLEN, out);
	return 0;
}

static int check_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > 64)
		return ct_error(CT_EINVAL, "name must have 1 to 64 bytes");
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return ct_error(CT_EINVAL, "name has control characters");
	if (!ct_utf8_valid(name))
		return ct_error(CT_EINVAL, "name is not UTF-8 text");
	return 0;
}

static int check_email(const char *email)
{
	size_t n = strlen(email);

	if (n < 3 || n > 254 || strchr(email, '@') == NULL || strpbrk(email, " \t\r\n<>\"'"))
		return ct_error(CT_EINVAL, "not an email address");
	if (!ct_utf8_valid(email))
		return ct_error(CT_EINVAL, "email address is not UTF-8 text");
	return 0;
}

static int check_password(const char *password)
{
	size_t n = strlen(password);

	if (n < 8 || n > 256)
		return ct_error(CT_EINVAL, "password must have 8 to 256 bytes");
	return 0;
}

static int check_fields(const char *name, const char *email, const char *password)
{
	int rc = name != NULL ? check_name(name) : 0;

	if (rc == 0)
		rc = check_email(email);
	if (rc == 0)
		rc = check_password(password);
	return rc;
}

int ct_account_name_taken(struct ct_db *db, const char *name, int64_t except)
{
	/* the column's collation compares without case: "Bob" takes "bob" */
	return ct_user_name_taken(db, name, except);
}

static void lower(char *dst, const char *src, size_t cap)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = 0;
}

int ct_account_create(struct ct_db *db, const char *name, const char *email,
		      const char *password, char key_out[CT_ACCOUNT_KEY_HEXLEN + 1],
		      int64_t *userid)
{
	unsigned char key[16], salt[SALT_LEN], dk[DK_LEN], wrapped[16];
	char saltx[2 * SALT_LEN + 1], dkx[65], wrapx[33], hash[65], em[256], ph[256];
	int64_t id = 0;
	int rc;

	rc = check_fields(name, email, password);
	if (rc == 0 && name != NULL)
		rc = ct_account_name_taken(db, name, 0);
	if (rc == 1)
		rc = ct_error(CT_EEXISTS, "the name '%s' is taken: choose another", name);
	if (rc < 0)
		return rc;
	lower(em, email, sizeof(em));
	rc = ct_random_bytes(key, sizeof(key));
	if (rc == 0)
		rc = ct_random_bytes(salt, sizeof(salt));
	if (rc == 0)
		rc = pbkdf2(password, salt, CT_PBKDF2_ITERATIONS, dk);
	if (rc < 0)
		return rc;
	for (int i = 0; i < 16; i++)
		wrapped[i] = key[i] ^ dk[32 + i];
	ct_hex_encode(key, sizeof(key), key_out);
	ct_hex_encode(salt, sizeof(salt), saltx);
	ct_hex_encode(dk, 32, dkx);
	ct_hex_encode(wrapped, sizeof(wrapped), wrapx);
	snprintf(ph, sizeof(ph), "pbkdf2-sha256$%d$%s$%s", CT_PBKDF2_ITERATIONS, saltx, dkx);
	ct_account_key_hash(key_out, hash);
	rc = ct_user_insert(db, ct_db_now(db), name, em, ph, hash, wrapx, &id);
	if (rc == CT_EDUP)
		return ct_error(CT_EEXISTS, "an account with this email address exists");
	if (rc < 0)
		return rc;
	if (userid)
		*userid = id;
	return 0;
}

/* Split "pbkdf2-sha256$iter$salt$dk"; 0 or -1. */
static int parse_phash(const char *s, int *iter, unsigned char salt[SALT_LEN], char dkx[65])
{
	char saltx[2 * SALT_LEN + 1];

	if (sscanf(s, "pbkdf2-sha256$%d$%32[0-9a-f]$%64[0-9a-f]", iter, saltx, dkx) != 3)
		return -1;
	if (*iter < 1 || *iter > 10000000 || strlen(dkx) != 64)
		return -1;
	return ct_hex_decode(saltx, salt, SALT_LEN) < 0 ? -1 : 0;
}

/* The row a sign-in reads. */
/* The password check of a sign-in on row u (found: the SELECT's code, 0
 * or CT_ENOTFOUND): PBKDF2 runs even for no row, so timing does not tell.
 * dk gets the derived bytes, key the account key when it is wrapped (1 in
 * *has_key: not after a password reset). CT_EAUTH for a wrong password. */
static int check_login(int found, const struct ct_user_login *u, const char *password,
		       unsigned char dk[DK_LEN], unsigned char key[16], int *has_key)
{
	unsigned char salt[SALT_LEN] = { 0 }, wrapped[16];
	char dkx[65] = "", got[65];
	int iter = CT_PBKDF2_ITERATIONS, ok, rc;

	if (found < 0 && found != CT_ENOTFOUND)
		return found;
	ok = found == 0 && parse_phash(u->passwd_hash, &iter, salt, dkx) == 0;
	rc = pbkdf2(password, salt, iter, dk);
	if (rc < 0)
		return rc;
	ct_hex_encode(dk, 32, got);
	if (!ok || !ct_memeq_ct(got, dkx, 64))
		return CT_EAUTH;
	*has_key = ct_hex_decode(u->auth_wrapped, wrapped, sizeof(wrapped)) == 0;
	for (int i = 0; *has_key && i < 16; i++)
		key[i] = wrapped[i] ^ dk[32 + i];
	return 0;
}

int ct_account_lookup(struct ct_db *db, const char *email, const char *password,
		      char key_out[CT_ACCOUNT_KEY_HEXLEN + 1], int64_t *userid,
		      char name_out[65])
{
	struct ct_user_login u = { 0 };
	unsigned char dk[DK_LEN], key[16];
	char em[256];
	int has_key = 0, rc;

	lower(em, email, sizeof(em));
	rc = ct_user_login_by_email(db, em, &u);
	rc = check_login(rc, &u, password, dk, key, &has_key);
	if (rc == CT_EAUTH)
		return ct_error(CT_EAUTH, "wrong email address or password");
	if (rc < 0)
		return rc;
	key_out[0] = '\0';	/* no wrapped key after a password reset */
	if (has_key)
		ct_hex_encode(key, sizeof(key), key_out);
	*userid = u.id;
	snprintf(name_out, 65, "%s", u.name);
	return 0;
}

/* ---- changes to an account ---------------------------------------------- */

/* Check `password` against account `userid` (check_login). */
static int verify(struct ct_db *db, int64_t userid, const char *password,
		  unsigned char dk[DK_LEN], unsigned char key[16], int *has_key)
{
	struct ct_user_login u = { 0 };
	int rc = ct_user_login_by_id(db, userid, &u);

	rc = check_login(rc, &u, password, dk, key, has_key);
	return rc == CT_EAUTH ? ct_error(CT_EAUTH, "wrong password") : rc;
}

/* Store `password` for `userid` with `key` wrapped under it (key NULL:
 * none), and, when new_key, key's hash as the account key. */
static int store_password(struct ct_db *db, int64_t userid, const char *password,
			  const unsigned char *key, int new_key)
{
	unsigned char salt[SALT_LEN], dk[DK_LEN], wrapped[16];
	char saltx[2 * SALT_LEN + 1], dkx[65], wrapx[33] = "", ph[256], keyx[33], hash[65];
	int rc;

	rc = ct_random_bytes(salt, sizeof(salt));
	if (rc == 0)
		rc = pbkdf2(password, salt, CT_PBKDF2_ITERATIONS, dk);
	if (rc < 0)
		return rc;
	ct_hex_encode(salt, sizeof(salt), saltx);
	ct_hex_encode(dk, 32, dkx);
	snprintf(ph, sizeof(ph), "pbkdf2-sha256$%d$%s$%s", CT_PBKDF2_ITERATIONS, saltx, dkx);
	if (key != NULL) {
		for (int i = 0; i < 16; i++)
			wrapped[i] = key[i] ^ dk[32 + i];
		ct_hex_encode(wrapped, sizeof(wrapped), wrapx);
	}
	if (new_key && key != NULL) {
		ct_hex_encode(key, 16, keyx);
		ct_account_key_hash(keyx, hash);
		return ct_user_set_password(db, userid, ph, wrapx, hash);
	}
	return ct_user_set_password(db, userid, ph, wrapx, NULL);
}

int ct_account_check_password(struct ct_db *db, int64_t userid, const char *password)
{
	unsigned char dk[DK_LEN], key[16];
	int has_key = 0;

	return verify(db, userid, password, dk, key, &has_key);
}

int ct_account_set_name(struct ct_db *db, int64_t userid, const char *name)
{
	int rc = check_name(name);

	if (rc == 0)
		rc = ct_account_name_taken(db, name, userid);
	if (rc == 1)
		return ct_error(CT_EEXISTS, "the name '%s' is taken: choose another", name);
	if (rc == 0)
		rc = ct_user_set_name(db, userid, name);
	return rc < 0 ? rc : 0;
}

int ct_account_set_email(struct ct_db *db, int64_t userid, const char *password,
			 const char *email)
{
	unsigned char dk[DK_LEN], key[16];
	char em[256];
	int has_key = 0, rc = check_email(email);

	if (rc == 0)
		rc = verify(db, userid, password, dk, key, &has_key);
	if (rc < 0)
		return rc;
	lower(em, email, sizeof(em));
	rc = ct_user_set_email(db, userid, em);
	if (rc == CT_EDUP)
		return ct_error(CT_EEXISTS, "an account with this email address exists");
	return rc < 0 ? rc : 0;
}

int ct_account_set_password(struct ct_db *db, int64_t userid, const char *old_password,
			    const char *new_password)
{
	unsigned char dk[DK_LEN], key[16];
	int has_key = 0, rc = check_password(new_password);

	if (rc == 0)
		rc = verify(db, userid, old_password, dk, key, &has_key);
	if (rc == 0)
		rc = store_password(db, userid, new_password, has_key ? key : NULL, 0);
	return rc;
}

int ct_account_new_key(struct ct_db *db, int64_t userid, const char *password,
		       char key_out[CT_ACCOUNT_KEY_HEXLEN + 1])
{
	unsigned char dk[DK_LEN], key[16];
	int has_key = 0, rc = verify(db, userid, password, dk, key, &has_key);

	if (rc == 0)
		rc = ct_random_bytes(key, sizeof(key));
	if (rc == 0)
		rc = store_password(db, userid, password, key, 1);
	if (rc == 0)
		ct_hex_encode(key, sizeof(key), key_out);
	return rc;
}

int ct_account_reset_start(struct ct_db *db, const char *email, int ttl,
			   char token_out[65], int64_t *userid)
{
	unsigned char rnd[32];
	char em[256], hash[65];
	int64_t now = ct_db_now(db);
	int rc;

	lower(em, email, sizeof(em));
	rc = ct_user_id_by_email(db, em, userid);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "no account with the email address %s", em);
	if (rc == 0)
		rc = ct_random_bytes(rnd, sizeof(rnd));
	if (rc < 0)
		return rc;
	ct_hex_encode(rnd, sizeof(rnd), token_out);
	ct_sha256_hex(token_out, 64, hash);
	return ct_user_reset_add(db, hash, *userid, now, now + ttl);
}

int ct_account_reset_finish(struct ct_db *db, const char *token, const char *new_password,
			    int64_t *userid)
{
	char hash[65];
	int rc = check_password(new_password);

	if (rc < 0)
		return rc;
	if (strlen(token) != 64)
		return ct_error(CT_EAUTH, "this reset link is not valid");
	ct_sha256_hex(token, 64, hash);
	rc = ct_user_reset_find(db, hash, ct_db_now(db), userid);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_EAUTH, "this reset link is not valid or has expired");
	/* the old password wrapped the key: it cannot be shown again */
	if (rc == 0)
		rc = store_password(db, *userid, new_password, NULL, 0);
	if (rc == 0)	/* once: every link of this account goes */
		rc = ct_user_reset_clear(db, *userid);
	return rc < 0 ? rc : 0;
}

/* ---- the RPC ----------------------------------------------------------- */

static int reply_ok(struct ct_http_resp *resp, int64_t uid, const char *name, const char *key)
{
	struct ct_buf *b = &resp->body;
	int rc;

	resp->content_type = "application/xml";
	rc = ct_xml_open(b, "account_reply");
	if (rc == 0)
		rc = ct_xml_elem_int64(b, "user_id", uid);
	if (rc == 0)
		rc = ct_xml_elem_str(b, "name", name);
	if (rc == 0)
		rc = ct_xml_elem_str(b, "authenticator", key);
	if (rc == 0)
		rc = ct_xml_close(b, "account_reply");
	return rc;
}

struct acct_req {
	char *action, *name, *email, *password;
};

static void acct_req_free(struct acct_req *a)
{
	free(a->action);
	free(a->name);
	free(a->email);
	free(a->password);
}

static int parse_acct(struct ct_http_req *req, struct acct_req *a)
{
	xmlDocPtr doc = NULL;
	xmlNodePtr root;
	int rc;

	rc = ct_xml_parse(req->body, req->body_len, 64 << 10, 8, &doc);
	if (rc < 0)
		return rc;
	root = xmlDocGetRootElement(doc);
	if (root == NULL || strcmp((const char *)root->name, "account_request") != 0) {
		rc = ct_error(CT_EPROTO, "expected <account_request>");
		goto out;
	}
	rc = ct_xml_get_str(root, "action", 16, &a->action);
	if (rc == 0)
		rc = ct_xml_get_str(root, "email", 254, &a->email);
	if (rc == 0)
		rc = ct_xml_get_str(root, "password", 256, &a->password);
	if (rc == 0 && strcmp(a->action, "create") == 0)
		rc = ct_xml_get_str(root, "name", 64, &a->name);
	if (rc < 0 && rc != CT_ENOMEM)
		rc = ct_error(CT_EPROTO, "<account_request>: %s", ct_errmsg(rc));
out:
	xmlFreeDoc(doc);
	return rc;
}

static int account_rpc(struct ct_http_req *req, struct ct_http_resp *resp)
{
	struct acct_req a = { 0 };
	struct ct_db *db;
	char key[CT_ACCOUNT_KEY_HEXLEN + 1], name[65];
	int64_t uid = 0;
	int rc, ok, wait = 0;

	rc = parse_acct(req, &a);
	if (rc < 0) {
		rc = ct_http_xml_error(resp, rc == CT_EXML ? 400 : rc == CT_ETOOBIG ? 413 : 200,
				       "account_reply", rc, ct_errmsg(rc), -1);
		goto out;
	}
	/* the same limits as the web forms, before any password is hashed */
	if (!ct_rl_allow(req->srv->rl, req->srv->conf,
			 strcmp(a.action, "create") == 0 ? CT_RL_SIGNUP : CT_RL_LOGIN,
			 req->remote_ip, a.email, ct_server_now(req->srv), &wait)) {
		char msg[128];

		snprintf(msg, sizeof(msg), "too many account requests; try again in %d s", wait);
		ct_log_info("account %s from %s: rate-limited", a.action, req->remote_ip);
		rc = ct_http_xml_error(resp, 429, "account_reply", CT_EAGAIN, msg, wait);
		goto out;
	}
	db = ct_http_db(req);
	if (db == NULL) {
		rc = ct_http_xml_error(resp, 503, "account_reply", CT_EAGAIN, "database busy", -1);
		goto out;
	}
	if (strcmp(a.action, "create") == 0) {
		rc = ct_account_create(db, a.name, a.email, a.password, key, &uid);
		snprintf(name, sizeof(name), "%s", a.name ? a.name : "");
	} else if (strcmp(a.action, "lookup") == 0) {
		rc = ct_account_lookup(db, a.email, a.password, key, &uid, name);
		if (rc == 0 && key[0] == '\0')
			rc = ct_error(CT_EAUTH, "this account's key cannot be looked up since its "
				      "password was reset: make a new key on the web site");
	} else {
		rc = ct_error(CT_EPROTO, "unknown action (want create or lookup)");
	}
	if (rc == CT_EINVAL)
		rc = ct_error(CT_EPROTO, "%s", ct_errmsg(CT_EINVAL));
	ok = rc == 0;
	if (rc == 0)
		rc = reply_ok(resp, uid, name, key);
	else if (rc == CT_EDB)
		ct_http_db_reset(req);
	else
		rc = ct_http_xml_error(resp, 200, "account_reply", rc, ct_errmsg(rc), -1);
	ct_log_info("account %s %s from %s: %s", a.action, a.email, req->remote_ip,
		    ok ? "ok" : "refused");
out:
	acct_req_free(&a);
	return rc;
}

const struct ct_http_route ct_account_routes[] = {
	{ .method = "POST", .path = "/rpc/account", .handler = account_rpc },
	{ .path = NULL },
};
