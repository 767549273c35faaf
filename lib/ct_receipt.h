/*
 * ct_receipt.h - a round's signed receipt (doc/receipts.md): what went
 * into a round of a job and what came out, in one canonical text that the
 * project signs with its Ed25519 key (ct_sign.h) and anyone can check.
 *
 * The server fills a struct ct_receipt and writes it with
 * ct_receipt_format + ct_receipt_sign; a verifier reads the bytes with
 * ct_receipt_parse, which accepts only the canonical form (it formats
 * what it parsed again and compares byte for byte, so one receipt has one
 * spelling and its SHA-256 names it), then checks the signature with
 * ct_receipt_verify. Every count and length a sender controls is capped
 * below; nothing in a parsed receipt is trusted beyond its signature.
 */
#ifndef CT_RECEIPT_H
#define CT_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "ct_hash.h"
#include "ct_sign.h"

/* The version written; a reader takes 1 (no chains), 2 (no base format
 * nor carried adapters) and 3. A receipt is never rewritten, so older
 * receipts stay as they were signed. */
#define CT_RECEIPT_VERSION 3
/* a whole receipt: 16,384 WUs of 16 hosts with a chain each take ~6.3 MB */
#define CT_RECEIPT_MAX_BYTES ((size_t)8 << 20)
#define CT_RECEIPT_MAX_WUS 16384		/* WUs of one round */
#define CT_RECEIPT_MAX_HOSTS 16			/* agreeing hosts of one WU */
#define CT_RECEIPT_NAME_MAX 16			/* method and encoding names */

/* One WU of the aggregate. */
struct ct_receipt_wu {
	int shard;				/* 0-based */
	uint64_t seed;				/* the WU's seed (LoRA: adapter seed) */
	char data_sha[CT_SHA256_HEXLEN + 1];	/* the shard's token file */
	int64_t data_size;
	/* SHA-256 of the canonical result's decoded weights (LoRA: adapters),
	 * float32 little-endian; "" when the server did not record it */
	char result_sha[CT_SHA256_HEXLEN + 1];
	int tolerance;			/* 1: replicas agreed by tolerance, not by hash */
	/* version 2: the canonical result's hash chain (ct_chain.h), a file
	 * of the store holding its wire form (64 * ct_chain_nlinks(steps,
	 * chain_every) hex digits, no newline); 0 and "" when not stated */
	int chain_every;
	char chain_sha[CT_SHA256_HEXLEN + 1];
	int nhosts;
	int64_t hosts[CT_RECEIPT_MAX_HOSTS];	/* host ids of the valid replicas, ascending */
};

struct ct_receipt {
	int version;				/* 0: CT_RECEIPT_VERSION */
	unsigned char key[CT_SIGN_PUB_LEN];	/* the signer's public key */
	int64_t job;
	int round;				/* 1-based */
	char prev[CT_SHA256_HEXLEN + 1];	/* SHA-256 of round-1's receipt; "" in round 1 */
	int64_t time;				/* when the round closed (Unix seconds) */
	/* the job's spec: every WU of the round has these */
	int steps, batch, seq;
	double lr, beta1, beta2, eps, weight_decay, grad_clip;
	char encoding[CT_RECEIPT_NAME_MAX + 1];	/* upload encoding: lossless | int8 */
	int lora_rank;				/* 0: all weights */
	double lora_alpha;
	char lora_targets[32];			/* "qkv,proj,fc,fcproj" order */
	/* version 3: the frozen base's format (ct_base_fmt_name: f32, bf16,
	 * q8, nf4); "" and "f32" alike: float32, all an older receipt has */
	char base_format[CT_RECEIPT_NAME_MAX + 1];
	char aggregation[CT_RECEIPT_NAME_MAX + 1];	/* mean | trimmed | median */
	char outer[CT_RECEIPT_NAME_MAX + 1];	/* mean | sgd | nesterov */
	double outer_lr, outer_momentum;
	char mom_in[CT_SHA256_HEXLEN + 1];	/* momentum buffer read; "" none */
	char mom_out[CT_SHA256_HEXLEN + 1];	/* momentum buffer written; "" none */
	/* the round's input model, the eval file and tokens used */
	char model_sha[CT_SHA256_HEXLEN + 1];
	int64_t model_size;
	/* version 3: the adapters the round's WUs start from (a CTLORA1 file
	 * of the store: a compact-base job's round >= 2); "" and 0: none, the
	 * WUs start from their seed's adapters */
	char lora_init_sha[CT_SHA256_HEXLEN + 1];
	int64_t lora_init_size;
	char eval_sha[CT_SHA256_HEXLEN + 1];
	int64_t eval_tokens;
	int nwus_round;				/* WUs the round opened */
	int nwus;				/* WUs in the aggregate (<= nwus_round) */
	struct ct_receipt_wu *wus;		/* nwus, shard ascending; owned */
	/* what came out: the model applied (after the outer step) */
	char out_sha[CT_SHA256_HEXLEN + 1];
	int64_t out_size;
	double eval_loss;
	unsigned char sig[CT_SIGN_SIG_LEN];
};

/* The canonical text of r without its signature line (the signed bytes)
 * into out (appended). Returns 0, CT_EINVAL (a field out of range or not
 * canonical: a name with spaces, a host list not ascending, a
 * non-finite number) or CT_ETOOBIG / CT_ENOMEM from out. */
int ct_receipt_format(const struct ct_receipt *r, struct ct_buf *out);

/* Sign r with k (r->key is set to k's public key first) and append the
 * whole receipt, signed text and signature line, to out. Returns as
 * ct_receipt_format, or CT_ECRYPTO. */
int ct_receipt_sign(struct ct_receipt *r, const struct ct_sign_key *k, struct ct_buf *out);

/* Parse the n bytes at data (a whole receipt) into r (zeroed first; free
 * with ct_receipt_free, also on failure). Returns 0 or CT_EFORMAT with a
 * message naming the first line that is wrong (CT_ETOOBIG over the caps).
 * The signature is not checked here. */
int ct_receipt_parse(const void *data, size_t n, struct ct_receipt *r);

/* Check r's signature against its own key, and that key against `want`
 * when want is not NULL. Returns 0, CT_EAUTH (bad signature, or signed by
 * another key) or CT_ECRYPTO. */
int ct_receipt_verify(const struct ct_receipt *r, const unsigned char *want);

void ct_receipt_free(struct ct_receipt *r);

#endif
