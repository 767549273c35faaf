/*
 * store.h - the content-addressed file store under PROJECT/download: every
 * model, token shard and evaluation file is kept once, named by its SHA-256,
 * recorded in the `file` table, and served by GET /download/<sha256>.
 *
 * Adding a file is idempotent: adding the same bytes twice returns the same
 * hash and leaves one copy and one row (the row's `keep` is raised to 1 if
 * either add asked to keep it).
 */
#ifndef CT_STORE_H
#define CT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "ct_hash.h"

struct ct_server;
struct ct_db;

/* Copy the file at src_path into the store (streamed: hashed, written to a
 * temp file, fsynced, renamed into place; never overwrites an existing
 * object) and record it in `file` with the given kind ("model", "train",
 * "shard", "eval", "round_model", "final"), jobid (0: none) and keep
 * (1: the file deleter never removes it). sha_out gets the 64-hex hash and
 * *size_out (may be NULL) the size. Returns 0 or a CT_E* file/db error. */
int ct_store_add_file(struct ct_server *srv, struct ct_db *db, const char *src_path,
		      const char *kind, int64_t jobid, int keep,
		      char sha_out[CT_SHA256_HEXLEN + 1], int64_t *size_out);

/* Same for n bytes in memory. */
int ct_store_add_buf(struct ct_server *srv, struct ct_db *db, const void *data,
		     size_t n, const char *kind, int64_t jobid, int keep,
		     char sha_out[CT_SHA256_HEXLEN + 1]);

/* Same for the concatenation of nparts pieces in memory (parts[i] of
 * sizes[i] bytes), hashed as they are written: a model is stored as its
 * header and its weights without a file of its own first. */
int ct_store_add_parts(struct ct_server *srv, struct ct_db *db, const void *const *parts,
		       const size_t *sizes, int nparts, const char *kind, int64_t jobid,
		       int keep, char sha_out[CT_SHA256_HEXLEN + 1]);

/* The size of stored file sha into *size. Returns 0, CT_ENOTFOUND (not in
 * the store) or a db error. */
int ct_store_size(struct ct_db *db, const char *sha, int64_t *size);

/* Give a new job's stored model, training and evaluation files (by hash)
 * that belong to no job yet to job jobid (their file rows' jobid).
 * Returns 0 or a db error. */
int ct_store_claim(struct ct_db *db, int64_t jobid, const char *model, const char *train,
		   const char *eval);

/* 1 if the object is present on disk, else 0. */
int ct_store_has(const struct ct_server *srv, const char *sha256);

#endif
