/*
 * ct_receipt.c - see ct_receipt.h; the text is specified in
 * doc/receipts.md, which follows the order of format_* below.
 */
#include "ct_receipt.h"
#include "ct_chain.h"
#include "ct_err.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096	/* one line of a receipt, newline excluded */

/* ---- writing ------------------------------------------------------------- */

static int hex_or_none(const char *s)
{
	return s[0] == '\0' || ct_sha256_hex_valid(s);
}

/* A method, encoding or target list: [a-z0-9_,] only, not empty. */
static int name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == ','))
			return 0;
	return 1;
}

static int version(const struct ct_receipt *r)
{
	return r->version ? r->version : CT_RECEIPT_VERSION;
}

/* A chain is stated in version 2 only, with an interval a WU of steps
 * steps can have and a chain of at most CT_CHAIN_MAX_LINKS links. */
static int chain_ok(const struct ct_receipt_wu *w, int v, int steps)
{
	if (w->chain_every == 0 && w->chain_sha[0] == '\0')
		return 1;
	return v >= 2 && w->chain_every >= 1 && w->chain_every <= steps &&
	       ct_chain_nlinks(steps, w->chain_every) <= CT_CHAIN_MAX_LINKS &&
	       ct_sha256_hex_valid(w->chain_sha);
}

/* The base format written: "" is float32, as in receipts before version 3. */
static const char *base_name(const struct ct_receipt *r)
{
	return r->base_format[0] ? r->base_format : "f32";
}

/* Version 3 states a base format and maybe carried adapters (LoRA only);
 * an older one neither: its base is float32. */
static int base_ok(const struct ct_receipt *r)
{
	if (version(r) < 3)
		return strcmp(base_name(r), "f32") == 0 && r->lora_init_sha[0] == '\0' &&
		       r->lora_init_size == 0;
	if (!name_ok(base_name(r), CT_RECEIPT_NAME_MAX) || !hex_or_none(r->lora_init_sha))
		return 0;
	if (r->lora_init_sha[0] == '\0')
		return r->lora_init_size == 0;
	return r->lora_rank > 0 && r->lora_init_size > 0;
}

static int check_wu(const struct ct_receipt_wu *w, int prev_shard)
{
	if (w->shard <= prev_shard || !ct_sha256_hex_valid(w->data_sha) || w->data_size < 0 ||
	    !hex_or_none(w->result_sha) || (w->tolerance != 0 && w->tolerance != 1) ||
	    w->nhosts < 0 || w->nhosts > CT_RECEIPT_MAX_HOSTS)
		return 0;
	for (int h = 0; h < w->nhosts; h++)
		if (w->hosts[h] < 1 || (h > 0 && w->hosts[h] <= w->hosts[h - 1]))
			return 0;
	return 1;
}

static int check(const struct ct_receipt *r)
{
	const double d[] = { r->lr, r->beta1, r->beta2, r->eps, r->weight_decay, r->grad_clip,
			     r->lora_alpha, r->outer_lr, r->outer_momentum };

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (!isfinite(d[i]))
			return ct_error(CT_EINVAL, "receipt: a non-finite number");
	/* the eval loss may be NaN (a diverged round is still a fact) */
	if (version(r) < 1 || version(r) > CT_RECEIPT_VERSION)
		return ct_error(CT_EINVAL, "receipt: version %d", version(r));
	if (r->job < 1 || r->round < 1 || !hex_or_none(r->prev) || (r->round == 1) != (r->prev[0] == '\0') ||
	    r->steps < 1 || r->batch < 1 || r->seq < 1 || r->lora_rank < 0 ||
	    !name_ok(r->encoding, CT_RECEIPT_NAME_MAX) ||
	    !name_ok(r->aggregation, CT_RECEIPT_NAME_MAX) ||
	    !name_ok(r->outer, CT_RECEIPT_NAME_MAX) ||
	    (r->lora_rank > 0 && !name_ok(r->lora_targets, sizeof(r->lora_targets) - 1)) ||
	    !base_ok(r) ||
	    !hex_or_none(r->mom_in) || !hex_or_none(r->mom_out) ||
	    !ct_sha256_hex_valid(r->model_sha) || r->model_size < 0 ||
	    !ct_sha256_hex_valid(r->eval_sha) || r->eval_tokens < 0 ||
	    r->nwus < 0 || r->nwus > r->nwus_round || r->nwus_round > CT_RECEIPT_MAX_WUS ||
	    !ct_sha256_hex_valid(r->out_sha) || r->out_size < 0)
		return ct_error(CT_EINVAL, "receipt of job %" PRId64 " round %d: a field out of "
				"range", r->job, r->round);
	for (int i = 0; i < r->nwus; i++)
		if (!check_wu(&r->wus[i], i ? r->wus[i - 1].shard : -1) ||
		    !chain_ok(&r->wus[i], version(r), r->steps))
			return ct_error(CT_EINVAL, "receipt: work unit %d out of range (shards "
					"ascending, hosts ascending, hashes hex)", i);
	return 0;
}

static const char *or_none(const char *s)
{
	return s[0] ? s : "none";
}

static int format_head(const struct ct_receipt *r, struct ct_buf *b)
{
	char key[2 * CT_SIGN_PUB_LEN + 1];

	ct_hex_encode(r->key, CT_SIGN_PUB_LEN, key);
	return ct_buf_appendf(b, "ctune-receipt %d\nkey %s\njob %" PRId64 "\nround %d\n"
			      "prev %s\ntime %" PRId64 "\n", version(r), key, r->job,
			      r->round, or_none(r->prev), r->time);
}

static int format_spec(const struct ct_receipt *r, struct ct_buf *b)
{
	int rc = ct_buf_appendf(b, "steps %d\nbatch %d\nseq %d\nlr %.17g\nbeta1 %.17g\n"
				"beta2 %.17g\neps %.17g\nweight_decay %.17g\ngrad_clip %.17g\n"
				"upload_encoding %s\n", r->steps, r->batch, r->seq, r->lr,
				r->beta1, r->beta2, r->eps, r->weight_decay, r->grad_clip,
				r->encoding);

	if (rc == 0 && r->lora_rank > 0)
		rc = ct_buf_appendf(b, "lora %d %.17g %s\n", r->lora_rank, r->lora_alpha,
				    r->lora_targets);
	else if (rc == 0)
		rc = ct_buf_appends(b, "lora none\n");
	if (rc == 0 && version(r) >= 3)
		rc = ct_buf_appendf(b, "base %s\n", base_name(r));
	if (rc == 0)
		rc = ct_buf_appendf(b, "aggregation %s\nouter %s %.17g %.17g\nmomentum_in %s\n"
				    "momentum_out %s\n", r->aggregation, r->outer, r->outer_lr,
				    r->outer_momentum, or_none(r->mom_in), or_none(r->mom_out));
	return rc;
}

static int format_wu(const struct ct_receipt_wu *w, int v, struct ct_buf *b)
{
	int rc = ct_buf_appendf(b, "wu %d %" PRIu64 " %s %" PRId64 " %s %s ", w->shard, w->seed,
				w->data_sha, w->data_size,
				w->result_sha[0] ? w->result_sha : "unknown",
				w->tolerance ? "tolerance" : "hash");

	for (int h = 0; rc == 0 && h < w->nhosts; h++)
		rc = ct_buf_appendf(b, "%s%" PRId64, h ? "," : "", w->hosts[h]);
	if (rc == 0)
		rc = ct_buf_appends(b, w->nhosts ? "\n" : "none\n");
	if (rc == 0 && v >= 2 && w->chain_every > 0)
		rc = ct_buf_appendf(b, "chain %d %s\n", w->chain_every, w->chain_sha);
	else if (rc == 0 && v >= 2)
		rc = ct_buf_appends(b, "chain none\n");
	return rc;
}

int ct_receipt_format(const struct ct_receipt *r, struct ct_buf *b)
{
	int rc = check(r);

	if (rc == 0) rc = format_head(r, b);
	if (rc == 0) rc = format_spec(r, b);
	if (rc == 0)
		rc = ct_buf_appendf(b, "model %s %" PRId64 "\n", r->model_sha, r->model_size);
	if (rc == 0 && version(r) >= 3 && r->lora_init_sha[0])
		rc = ct_buf_appendf(b, "lora_init %s %" PRId64 "\n", r->lora_init_sha,
				    r->lora_init_size);
	else if (rc == 0 && version(r) >= 3)
		rc = ct_buf_appends(b, "lora_init none\n");
	if (rc == 0)
		rc = ct_buf_appendf(b, "eval %s %" PRId64 "\nwus %d %d\n", r->eval_sha,
				    r->eval_tokens, r->nwus, r->nwus_round);
	for (int i = 0; rc == 0 && i < r->nwus; i++)
		rc = format_wu(&r->wus[i], version(r), b);
	if (rc == 0)
		rc = ct_buf_appendf(b, "out %s %" PRId64 "\neval_loss %.17g\n", r->out_sha,
				    r->out_size, r->eval_loss);
	return rc;
}

int ct_receipt_sign(struct ct_receipt *r, const struct ct_sign_key *k, struct ct_buf *out)
{
	size_t start = out->len;
	char hex[2 * CT_SIGN_SIG_LEN + 1];
	int rc;

	ct_sign_key_public(k, r->key);
	rc = ct_receipt_format(r, out);
	if (rc == 0)
		rc = ct_sign(k, out->data + start, out->len - start, r->sig);
	if (rc == 0) {
		ct_hex_encode(r->sig, CT_SIGN_SIG_LEN, hex);
		rc = ct_buf_appendf(out, "signature %s\n", hex);
	}
	return rc;
}

/* ---- reading -------------------------------------------------------------- */

struct cursor {
	const char *p, *end;
	int line;
	char buf[LINE_MAX_LEN + 1];	/* the current line's value (after "key ") */
};

/* The next line, which must start with "key ": its rest into c->buf. */
static int take(struct cursor *c, const char *key)
{
	const char *nl = c->p < c->end ? memchr(c->p, '\n', (size_t)(c->end - c->p)) : NULL;
	size_t kl = strlen(key), n;

	c->line++;
	if (nl == NULL)
		return ct_error(CT_EFORMAT, "receipt line %d: missing (expected '%s')", c->line, key);
	n = (size_t)(nl - c->p);
	if (n > LINE_MAX_LEN || n < kl + 1 || memcmp(c->p, key, kl) != 0 || c->p[kl] != ' ')
		return ct_error(CT_EFORMAT, "receipt line %d: expected '%s'", c->line, key);
	memcpy(c->buf, c->p + kl + 1, n - kl - 1);
	c->buf[n - kl - 1] = '\0';
	if (memchr(c->buf, '\0', n - kl - 1) != NULL)
		return ct_error(CT_EFORMAT, "receipt line %d: a NUL byte", c->line);
	c->p = nl + 1;
	return 0;
}

/* "none" as "", else a hash (checked when formatted again). */
static void hash_field(const char *s, char out[CT_SHA256_HEXLEN + 1])
{
	snprintf(out, CT_SHA256_HEXLEN + 1, "%s", strcmp(s, "none") == 0 ? "" : s);
}

#define SCAN(c, key, n, ...) \
	do { \
		rc = take(c, key); \
		if (rc == 0 && sscanf((c)->buf, __VA_ARGS__) != (n)) \
			rc = ct_error(CT_EFORMAT, "receipt line %d ('%s'): malformed", (c)->line, key); \
		if (rc < 0) \
			return rc; \
	} while (0)

static int parse_head(struct cursor *c, struct ct_receipt *r)
{
	char key[80], prev[CT_SHA256_HEXLEN + 1];
	int v, rc;

	SCAN(c, "ctune-receipt", 1, "%d", &v);
	if (v < 1 || v > CT_RECEIPT_VERSION)
		return ct_error(CT_EFORMAT, "receipt version %d (this verifier reads 1 to %d)", v,
				CT_RECEIPT_VERSION);
	r->version = v;
	SCAN(c, "key", 1, "%79s", key);
	if (ct_hex_decode(key, r->key, CT_SIGN_PUB_LEN) < 0)
		return ct_error(CT_EFORMAT, "receipt line 2: not a public key");
	SCAN(c, "job", 1, "%" SCNd64, &r->job);
	SCAN(c, "round", 1, "%d", &r->round);
	SCAN(c, "prev", 1, "%64s", prev);
	hash_field(prev, r->prev);
	SCAN(c, "time", 1, "%" SCNd64, &r->time);
	return 0;
}

static int parse_spec(struct cursor *c, struct ct_receipt *r)
{
	char a[CT_SHA256_HEXLEN + 1], b[CT_SHA256_HEXLEN + 1];
	int rc;

	SCAN(c, "steps", 1, "%d", &r->steps);
	SCAN(c, "batch", 1, "%d", &r->batch);
	SCAN(c, "seq", 1, "%d", &r->seq);
	SCAN(c, "lr", 1, "%lf", &r->lr);
	SCAN(c, "beta1", 1, "%lf", &r->beta1);
	SCAN(c, "beta2", 1, "%lf", &r->beta2);
	SCAN(c, "eps", 1, "%lf", &r->eps);
	SCAN(c, "weight_decay", 1, "%lf", &r->weight_decay);
	SCAN(c, "grad_clip", 1, "%lf", &r->grad_clip);
	SCAN(c, "upload_encoding", 1, "%16s", r->encoding);
	rc = take(c, "lora");
	if (rc == 0 && strcmp(c->buf, "none") != 0 &&
	    sscanf(c->buf, "%d %lf %31s", &r->lora_rank, &r->lora_alpha, r->lora_targets) != 3)
		rc = ct_error(CT_EFORMAT, "receipt line %d ('lora'): malformed", c->line);
	if (rc < 0)
		return rc;
	snprintf(r->base_format, sizeof(r->base_format), "f32");
	if (r->version >= 3)
		SCAN(c, "base", 1, "%16s", r->base_format);
	SCAN(c, "aggregation", 1, "%16s", r->aggregation);
	SCAN(c, "outer", 3, "%16s %lf %lf", r->outer, &r->outer_lr, &r->outer_momentum);
	SCAN(c, "momentum_in", 1, "%64s", a);
	SCAN(c, "momentum_out", 1, "%64s", b);
	hash_field(a, r->mom_in);
	hash_field(b, r->mom_out);
	return 0;
}

/* "1,5,9" or "none" into w->hosts. */
static int parse_hosts(const char *s, struct ct_receipt_wu *w, int line)
{
	char *end;

	if (strcmp(s, "none") == 0)
		return 0;
	for (;;) {
		if (w->nhosts >= CT_RECEIPT_MAX_HOSTS || *s < '1' || *s > '9')
			return ct_error(CT_EFORMAT, "receipt line %d: bad host list", line);
		w->hosts[w->nhosts++] = strtoll(s, &end, 10);
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return ct_error(CT_EFORMAT, "receipt line %d: bad host list", line);
		s = end + 1;
	}
}

/* Version 2's "chain S H" or "chain none" after a WU's line. */
static int parse_chain(struct cursor *c, struct ct_receipt_wu *w)
{
	int rc = take(c, "chain");

	if (rc == 0 && strcmp(c->buf, "none") != 0 &&
	    sscanf(c->buf, "%d %64s", &w->chain_every, w->chain_sha) != 2)
		rc = ct_error(CT_EFORMAT, "receipt line %d ('chain'): malformed", c->line);
	return rc;
}

static int parse_wu(struct cursor *c, struct ct_receipt_wu *w, int v)
{
	char data[CT_SHA256_HEXLEN + 1], res[CT_SHA256_HEXLEN + 1], how[16], hosts[LINE_MAX_LEN];
	int rc;

	SCAN(c, "wu", 7, "%d %" SCNu64 " %64s %" SCNd64 " %64s %15s %4095s", &w->shard, &w->seed,
	     data, &w->data_size, res, how, hosts);
	snprintf(w->data_sha, sizeof(w->data_sha), "%s", data);
	snprintf(w->result_sha, sizeof(w->result_sha), "%s", strcmp(res, "unknown") ? res : "");
	w->tolerance = strcmp(how, "tolerance") == 0;
	if (!w->tolerance && strcmp(how, "hash") != 0)
		return ct_error(CT_EFORMAT, "receipt line %d: agreement '%s'", c->line, how);
	rc = parse_hosts(hosts, w, c->line);
	return rc < 0 || v < 2 ? rc : parse_chain(c, w);
}

/* Version 3's "lora_init H SIZE" or "lora_init none" after the model. */
static int parse_lora_init(struct cursor *c, struct ct_receipt *r)
{
	int rc = take(c, "lora_init");

	if (rc == 0 && strcmp(c->buf, "none") != 0 &&
	    sscanf(c->buf, "%64s %" SCNd64, r->lora_init_sha, &r->lora_init_size) != 2)
		rc = ct_error(CT_EFORMAT, "receipt line %d ('lora_init'): malformed", c->line);
	return rc;
}

static int parse_body(struct cursor *c, struct ct_receipt *r)
{
	int rc = parse_head(c, r);

	if (rc == 0)
		rc = parse_spec(c, r);
	if (rc < 0)
		return rc;
	SCAN(c, "model", 2, "%64s %" SCNd64, r->model_sha, &r->model_size);
	if (r->version >= 3)
		rc = parse_lora_init(c, r);
	if (rc < 0)
		return rc;
	SCAN(c, "eval", 2, "%64s %" SCNd64, r->eval_sha, &r->eval_tokens);
	SCAN(c, "wus", 2, "%d %d", &r->nwus, &r->nwus_round);
	if (r->nwus < 0 || r->nwus > r->nwus_round)
		return ct_error(CT_EFORMAT, "receipt: %d of %d work units", r->nwus, r->nwus_round);
	if (r->nwus_round > CT_RECEIPT_MAX_WUS)
		return ct_error(CT_ETOOBIG, "receipt: %d of %d work units (at most %d)", r->nwus,
				r->nwus_round, CT_RECEIPT_MAX_WUS);
	r->wus = calloc(r->nwus ? (size_t)r->nwus : 1, sizeof(*r->wus));
	if (r->wus == NULL)
		return CT_ENOMEM;
	for (int i = 0; i < r->nwus; i++) {
		rc = parse_wu(c, &r->wus[i], r->version);
		if (rc < 0)
			return rc;
	}
	SCAN(c, "out", 2, "%64s %" SCNd64, r->out_sha, &r->out_size);
	SCAN(c, "eval_loss", 1, "%lf", &r->eval_loss);
	return 0;
}

int ct_receipt_parse(const void *data, size_t n, struct ct_receipt *r)
{
	struct cursor *c = calloc(1, sizeof(*c));
	struct ct_buf again = CT_BUF_INIT(CT_RECEIPT_MAX_BYTES);
	size_t body;
	int rc;

	memset(r, 0, sizeof(*r));
	if (c == NULL)
		return CT_ENOMEM;
	c->p = data;
	c->end = c->p + n;
	rc = n > CT_RECEIPT_MAX_BYTES ? ct_error(CT_ETOOBIG, "receipt over %zu bytes",
						 CT_RECEIPT_MAX_BYTES) : 0;
	if (rc == 0)
		rc = parse_body(c, r);
	body = (size_t)(c->p - (const char *)data);
	if (rc == 0)
		rc = take(c, "signature");
	if (rc == 0 && (strlen(c->buf) != 2 * CT_SIGN_SIG_LEN ||
			ct_hex_decode(c->buf, r->sig, CT_SIGN_SIG_LEN) < 0))
		rc = ct_error(CT_EFORMAT, "receipt line %d: not a signature", c->line);
	if (rc == 0 && c->p != c->end)
		rc = ct_error(CT_EFORMAT, "receipt: bytes after the signature");
	/* one spelling only: what was read, written again, is the same bytes */
	if (rc == 0 && ct_receipt_format(r, &again) < 0)
		rc = ct_error(CT_EFORMAT, "receipt: a field out of range");
	if (rc == 0 && (again.len != body || memcmp(again.data, data, body) != 0))
		rc = ct_error(CT_EFORMAT, "receipt: not in canonical form");
	ct_buf_free(&again);
	free(c);
	return rc;
}

int ct_receipt_verify(const struct ct_receipt *r, const unsigned char *want)
{
	struct ct_buf body = CT_BUF_INIT(CT_RECEIPT_MAX_BYTES);
	int rc;

	if (want != NULL && memcmp(want, r->key, CT_SIGN_PUB_LEN) != 0)
		return ct_error(CT_EAUTH, "receipt of round %d is signed by another key", r->round);
	rc = ct_receipt_format(r, &body);
	if (rc == 0)
		rc = ct_sign_verify(r->key, body.data, body.len, r->sig);
	if (rc == CT_EAUTH)
		rc = ct_error(CT_EAUTH, "receipt of round %d: bad signature", r->round);
	ct_buf_free(&body);
	return rc;
}

void ct_receipt_free(struct ct_receipt *r)
{
	free(r->wus);
	r->wus = NULL;
}
