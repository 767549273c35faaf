/*
 * mean_stream.c - see mean_stream.h.
 *
 * One pass per group of up to CT_MEAN_GROUP results: for each span of
 * SPAN chunks of CT_DELTA_CHUNK weights the main thread reads the base's
 * span, every thread (the main one included) decodes the chunks of its share of the
 * group's readers (reader j on thread j mod T) into their own buffers,
 * and once all are done the main thread adds them into the sum in result
 * order. Inflating is most of a decode (zlib: ~70% of the CPU time at
 * 124M), and the readers are independent, so the threads split it.
 */
#include "config.h"
#include "mean_stream.h"
#include "eval.h"
#include "ct_avg.h"
#include "ct_delta.h"
#include "ct_err.h"
#include "ct_gpt2.h"
#include "ct_log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Chunks decoded per reader between two synchronisations of the threads
 * (a thread start and join each: under load a join can wait a time
 * slice, so not one per chunk). */
#define SPAN 4

struct group {
	struct ct_delta_reader *rd[CT_MEAN_GROUP];
	float *dec[CT_MEAN_GROUP];	/* each reader's span of chunks */
	int rc[CT_MEAN_GROUP];
	int n;				/* readers in this group */
	const float *base;		/* the current span of the base */
	size_t nch;			/* chunks in the span */
	int threads;
};

struct share {
	struct group *g;
	int tid;
};

/* Thread tid's share of the current span: readers tid, tid + T, ...,
 * each its span's chunks in order. */
static void decode_share(struct group *g, int tid)
{
	for (int j = tid; j < g->n; j += g->threads) {
		for (size_t c = 0; c < g->nch && g->rc[j] == 1; c++) {
			size_t first, m, off = c * CT_DELTA_CHUNK;

			g->rc[j] = ct_delta_reader_next(g->rd[j], g->base + off, g->dec[j] + off,
							&first, &m);
		}
	}
}

static void *worker(void *arg)
{
	struct share *sh = arg;

	decode_share(sh->g, sh->tid);
	return NULL;
}

/* Every share of the current span: threads 1..T-1 started per span
 * (~500 spans a pass at 124M), the main thread's share meanwhile; a share
 * whose thread cannot start runs here. */
static void decode_all(struct group *g)
{
	struct share sh[CT_MEAN_GROUP];
	pthread_t th[CT_MEAN_GROUP];
	int up[CT_MEAN_GROUP] = { 0 };

	for (int t = 1; t < g->threads; t++) {
		sh[t] = (struct share){ g, t };
		up[t] = pthread_create(&th[t], NULL, worker, &sh[t]) == 0;
	}
	decode_share(g, 0);
	for (int t = 1; t < g->threads; t++) {
		if (up[t])
			pthread_join(th[t], NULL);
		else
			decode_share(g, t);
	}
}

/* The base's weights [s, s + m) into buf. */
static int read_base(int fd, const char *path, size_t s, size_t m, float *buf)
{
	return ct_seval_pread(fd, path, buf, m * sizeof(float),
			      (uint64_t)CT_GPT2_HEADER_BYTES + s * sizeof(float));
}

/* Open the readers of results [g0, g0 + g->n). */
static int group_open(struct group *g, const char *const *paths, int g0, size_t n)
{
	for (int j = 0; j < g->n; j++) {
		int rc = ct_delta_reader_open(paths[g0 + j], 0, n, &g->rd[j]);

		if (rc < 0) {
			ct_log_error("mean: %s: %s", paths[g0 + j], ct_errmsg(rc));
			return rc;
		}
		g->rc[j] = 1;
	}
	return 0;
}

/* First reader error of the chunk, logged; 0 if every reader gave one. */
static int group_check(const struct group *g, const char *const *paths, int g0, int want)
{
	for (int j = 0; j < g->n; j++)
		if (g->rc[j] != want) {
			int rc = g->rc[j] < 0 ? g->rc[j]
					      : ct_error(CT_ECORRUPT, "result file: ends early");

			ct_log_error("mean: %s: %s", paths[g0 + j], ct_errmsg(rc));
			return rc;
		}
	return 0;
}

/* One pass: add results [g0, g0 + g->n) into out (result 0 is copied). */
static int group_pass(struct group *g, int fd, const char *base_path, const char *const *paths,
		      int g0, size_t n, float *bbuf, float *out)
{
	int rc = group_open(g, paths, g0, n);

	for (size_t s = 0; rc == 0 && s < n; s += SPAN * CT_DELTA_CHUNK) {
		size_t len = n - s < SPAN * CT_DELTA_CHUNK ? n - s : SPAN * CT_DELTA_CHUNK;

		rc = read_base(fd, base_path, s, len, bbuf);
		if (rc < 0)
			break;
		g->base = bbuf;
		g->nch = (len + CT_DELTA_CHUNK - 1) / CT_DELTA_CHUNK;
		decode_all(g);
		rc = group_check(g, paths, g0, 1);
		for (int j = 0; rc == 0 && j < g->n; j++) {
			if (g0 + j == 0)
				memcpy(out + s, g->dec[j], len * sizeof(float));
			else
				ct_avg_accumulate(out + s, g->dec[j], len);
		}
	}
	if (rc == 0) {	/* each stream ends here, and its hash matches */
		g->base = bbuf;
		g->nch = 1;
		for (int t = 0; t < g->threads; t++)
			decode_share(g, t);
		rc = group_check(g, paths, g0, 0);
	}
	for (int j = 0; j < g->n; j++) {
		ct_delta_reader_close(g->rd[j]);
		g->rd[j] = NULL;
	}
	return rc;
}

int ct_mean_stream(const char *base_path, size_t n, const char *const *paths, int k,
		   int threads, float *out)
{
	struct group *g = NULL;
	float *bbuf = NULL;
	struct stat st;
	int fd = -1, rc = 0;

	if (k < 1 || k > CT_AVG_MAX_INPUTS || n == 0)
		return ct_error(CT_EINVAL, "mean: %d results of %zu weights", k, n);
	fd = open(base_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ct_error(errno == ENOENT ? CT_ENOENT : CT_EIO, "%s: %s", base_path,
				strerror(errno));
	if (fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size < CT_GPT2_HEADER_BYTES + (uint64_t)n * sizeof(float)) {
		rc = ct_error(CT_EFORMAT, "%s: shorter than %zu weights", base_path, n);
		goto out;
	}
	g = calloc(1, sizeof(*g));
	bbuf = malloc((size_t)(CT_MEAN_GROUP + 1) * SPAN * CT_DELTA_CHUNK * sizeof(float));
	if (g == NULL || bbuf == NULL) {
		rc = CT_ENOMEM;
		goto out;
	}
	for (int j = 0; j < CT_MEAN_GROUP; j++)
		g->dec[j] = bbuf + (size_t)(j + 1) * SPAN * CT_DELTA_CHUNK;
	g->threads = threads < 1 ? 1 : threads > CT_MEAN_GROUP ? CT_MEAN_GROUP : threads;
	if (g->threads > k)
		g->threads = k;
	for (int g0 = 0; rc == 0 && g0 < k; g0 += CT_MEAN_GROUP) {
		g->n = k - g0 < CT_MEAN_GROUP ? k - g0 : CT_MEAN_GROUP;
		rc = group_pass(g, fd, base_path, paths, g0, n, bbuf, out);
	}
	if (rc == 0)
		ct_avg_finish(out, (size_t)k, n);
out:
	free(g);
	free(bbuf);
	close(fd);
	return rc;
}
