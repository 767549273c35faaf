/*
 * eval_handover.c - an evaluation whose weights move to the device instead
 * of being copied there (eval.h, ct_seval_loss_handover): the host array
 * is written to the backend 4 MiB at a time (ct_backend_ops.load_range)
 * and each piece's pages are given back to the kernel as soon as the
 * device has them, so the process never holds the model twice. At 124M
 * that is the difference between the server's peak being two models and
 * the database, and one (doc/results.md).
 */
#include "eval.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PIECE ((size_t)1 << 20)	/* floats per write: 4 MiB */

int ct_seval_pread(int fd, const char *path, void *dst, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)dst + got, len - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return ct_error(CT_EIO, "%s: read: %s", path,
					r < 0 ? strerror(errno) : "file shrank");
		got += (size_t)r;
	}
	return 0;
}

/* Give back the whole pages inside [p, p + bytes): their contents are
 * dropped (read again as zeros). */
static void release_pages(void *p, size_t bytes)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + bytes) & ~(page - 1);

	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Set be's weights from w (n floats), releasing w's pages behind. */
static int hand_over(const struct ct_backend_ops *ops, struct ct_backend *be, float *w,
		     size_t n)
{
	int rc = 0;

	if (ops->load_range == NULL)
		return ops->load_state(be, w, NULL, NULL);
	for (size_t off = 0; off < n && rc == 0; off += PIECE) {
		size_t k = n - off < PIECE ? n - off : PIECE;

		rc = ops->load_range(be, off, w + off, k);
		if (rc == 0)
			release_pages(w + off, k * sizeof(float));
	}
	return rc;
}

int ct_seval_run_handover(const char *device, struct ct_gpt2 *m, const struct ct_tokens *tok,
			  int B, int T, int nb, float *loss, int *consumed)
{
	const struct ct_backend_ops *ops;
	struct ct_backend *be = NULL;
	int rc;

	*consumed = 0;
	if (B < 1 || T < 1 || nb < 1 || (uint64_t)B * (uint64_t)T + 1 > tok->n)
		return ct_error(CT_ERANGE, "eval: %d batches of %d x %d on %llu tokens", nb, B, T,
				(unsigned long long)tok->n);
	rc = ct_tokens_check_vocab(tok, m->cfg.V);
	if (rc == 0)
		rc = ct_backend_find(device, &ops);
	if (rc == 0)
		rc = ct_backend_supports(ops, &m->cfg);
	if (rc == 0)
		rc = ops->open(device, &m->cfg, B, T, 0, &be);
	if (rc < 0)
		return rc;
	*consumed = ops->load_range != NULL;
	rc = hand_over(ops, be, m->params, m->lay.total);
	/* ct_eval's batches and its float sum, in its order: the same loss */
	if (rc == 0)
		rc = ct_eval_batches(ops, be, tok, B, T, nb, loss);
	ops->close(be);
	return rc;
}

int ct_seval_load_file(void *arg, const struct ct_backend_ops *ops, struct ct_backend *be)
{
	const struct ct_seval_file *f = arg;
	struct ct_gpt2 whole = { 0 };
	float *buf = NULL;
	int fd = -1, rc = 0;

	if (ops->load_range == NULL) {	/* no pieces: the whole model, once */
		rc = ct_seval_model_load(f->path, &whole);
		if (rc == 0)
			rc = ops->load_state(be, whole.params, NULL, NULL);
		ct_gpt2_free(&whole);
		return rc;
	}
	buf = malloc(PIECE * sizeof(float));
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (buf == NULL || fd < 0) {
		rc = buf == NULL ? ct_error(CT_ENOMEM, "model piece")
				 : ct_error(CT_EIO, "%s: %s", f->path, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < f->nparams && rc == 0; off += PIECE) {
		size_t k = f->nparams - off < PIECE ? f->nparams - off : PIECE;

		rc = ct_seval_pread(fd, f->path, buf, k * sizeof(float),
				    (uint64_t)CT_GPT2_HEADER_BYTES + off * sizeof(float));
		if (rc == 0)
			rc = ops->load_range(be, off, buf, k);
	}
	/* read once: let the page cache drop it */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
