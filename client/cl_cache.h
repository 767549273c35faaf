/*
 * cl_cache.h - the content-addressed input cache (DIR/cache/<sha256>):
 * base models and data shards are kept by hash across tasks and rounds, so
 * the next WU that names the same file does not download it again. The
 * cache is bounded: least recently used files (by mtime, refreshed each
 * time a task uses the file) go first, never one a task in hand needs.
 */
#ifndef CT_CL_CACHE_H
#define CT_CL_CACHE_H

#include <stdint.h>

/* Mark cache_dir/sha as just used (mtime = now). Missing file: no-op. */
void ct_cache_touch(const char *cache_dir, const char *sha);

/* Delete least recently used complete files (64-hex names; .part files are
 * left to the resumable downloads) until the total is at most max_bytes,
 * skipping those for which needed(ctx, sha) is 1. *kept (may be NULL) gets
 * the bytes left. Returns 0 or CT_EIO (the directory cannot be read). */
int ct_cache_trim(const char *cache_dir, uint64_t max_bytes,
		  int (*needed)(void *ctx, const char *sha), void *ctx, uint64_t *kept);

#endif
