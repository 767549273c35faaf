/*
 * eval.c - the server's evaluations on the engine's backends (eval.h).
 */
#include "eval.h"
#include "daemons.h"
#include "data/db.h"
#include "data/dl_job.h"
#include "data/dl_round.h"
#include "data/server.h"
#include "ct_base.h"
#include "ct_engine.h"
#include "ct_err.h"
#include "ct_options.h"
#include "ct_log.h"
#include "ct_ocl_selftest.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_STEP ((size_t)4 << 20)

/* 1 if path is a compact base file (ct_base.h), 0 if not, or CT_E*. */
static int base_file(const char *path)
{
	unsigned char head[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return ct_error(errno == ENOENT ? CT_ENOENT : CT_EIO, "%s: %s", path,
				strerror(errno));
	got = read(fd, head, sizeof(head));
	close(fd);
	return got > 0 && ct_base_is_file(head, (size_t)got);
}

int ct_seval_model_load(const char *path, struct ct_gpt2 *m)
{
	struct ct_model_config cfg;
	size_t len, got = 0;
	int fd = -1, rc;

	memset(m, 0, sizeof(*m));
	rc = base_file(path);
	if (rc != 0)	/* a compact base (a LoRA job's), widened: §13 of doc/workunit.md;
			 * its image and the float32 copy are held together a moment */
		return rc < 0 ? rc : ct_base_load_f32(path, m);
	rc = ct_gpt2_read_config(path, &cfg);	/* checks the header and the size */
	if (rc == 0)
		rc = ct_gpt2_alloc(m, &cfg);
	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = ct_error(errno == ENOENT ? CT_ENOENT : CT_EIO, "%s: %s", path, strerror(errno));
		goto out;
	}
	len = m->lay.total * sizeof(float);
	for (got = 0; got < len && rc == 0; got += READ_STEP)
		rc = ct_seval_pread(fd, path, (char *)m->params + got,
				    len - got < READ_STEP ? len - got : READ_STEP,
				    (uint64_t)CT_GPT2_HEADER_BYTES + got);
	if (rc < 0)
		goto out;
	/* the weights are read once: let the page cache drop them */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		ct_gpt2_free(m);
	return rc;
}

/* ---- one daemon's models at a time -------------------------------------------- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_seval_hold(void)
{
	pthread_mutex_lock(&hold_lock);
}

void ct_seval_release(void)
{
	pthread_mutex_unlock(&hold_lock);
}

/* ---- the device ---------------------------------------------------------------- */

/* A strong reference links the OpenCL backend in (ct_engine.h's note). */
const struct ct_backend_ops *const ct_seval_ocl_ops = &ct_ocl_backend_ops;

static pthread_mutex_t eval_lock = PTHREAD_MUTEX_INITIALIZER;
static char device[32];	/* "" until decided; under eval_lock */

/* Called with eval_lock held. */
static void decide_device(struct ct_server *srv)
{
	const char *want = "auto";
	long threads = 0;
	int conforming = 0, rc;

	if (ct_conf_get_int(srv->conf, "daemons.eval_threads", 0, 0, 256, &threads) < 0)
		threads = 0;
	if (threads > 0 && ct_opt_str(CT_OPT_THREADS) == NULL) {
		char buf[16];

		/* read once by the C reference, before its first evaluation */
		snprintf(buf, sizeof(buf), "%ld", threads);
		if (ct_opt_set(CT_OPT_THREADS, buf) < 0)
			ct_log_warn("daemons.eval_threads: %s", ct_errmsg(CT_EINVAL));
	}
	if (ct_conf_get_str(srv->conf, "daemons.eval_device", "auto", &want) < 0)
		want = "auto";
	if (strcmp(want, "auto") != 0) {
		snprintf(device, sizeof(device), "%s", want);
		ct_log_info("eval: evaluations run on %s (daemons.eval_device)", device);
		return;
	}
	rc = ct_ocl_selftest("opencl", &conforming);
	snprintf(device, sizeof(device), "%s", rc == 0 && conforming ? "opencl" : "cpu");
	ct_log_info("eval: evaluations run on %s (%s)", device,
		    rc < 0 ? ct_errmsg(rc) : conforming ? "OpenCL device conforms"
							: "OpenCL device does not conform");
}

const char *ct_seval_device(struct ct_server *srv)
{
	pthread_mutex_lock(&eval_lock);
	if (device[0] == '\0')
		decide_device(srv);
	pthread_mutex_unlock(&eval_lock);
	return device;
}

/* ---- evaluations ------------------------------------------------------------------ */

/* Batch size and count of an evaluation (ct_seval_loss's rules). */
static int eval_shape(const struct ct_tokens *tok, int batch, int T, int64_t want_tokens,
		      int *B, int *nb)
{
	int64_t pass;

	if (T < 1 || tok->n < 2)
		return ct_error(CT_ERANGE, "eval: sequence length %d on %llu tokens", T,
				(unsigned long long)tok->n);
	*B = ct_eval_batch(batch, T, tok->n);
	if (want_tokens > 0 && *B > want_tokens / T)
		*B = want_tokens / T > 0 ? (int)(want_tokens / T) : 1;
	pass = (int64_t)((tok->n - 1) / ((uint64_t)*B * (uint64_t)T));
	if (want_tokens <= 0)
		*nb = (int)(pass > 1000000 ? 1000000 : pass);
	else
		*nb = want_tokens / ((int64_t)*B * T) > 0 ? (int)(want_tokens / ((int64_t)*B * T))
							  : 1;
	if (pass >= 1 && *nb > pass)
		*nb = (int)pass;
	return 0;
}

int ct_seval_loss_handover(struct ct_server *srv, struct ct_gpt2 *m,
			   const struct ct_tokens *tok, int batch, int T, int64_t want_tokens,
			   float *loss, int64_t *ntokens, int *consumed)
{
	const char *dev = ct_seval_device(srv);
	int B, nb, rc;

	*consumed = 0;
	if (tok->tok == NULL)	/* ids not widened: ct_eval says what to do */
		return ct_seval_loss(srv, m, tok, batch, T, want_tokens, loss, ntokens);
	rc = eval_shape(tok, batch, T, want_tokens, &B, &nb);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&eval_lock);
	rc = ct_seval_run_handover(dev, m, tok, B, T, nb, loss, consumed);
	if ((rc == CT_ECL || rc == CT_EDEVNOMEM || rc == CT_EUNSUPP) && !*consumed &&
	    strcmp(dev, "cpu") != 0) {
		ct_log_warn("eval: %s failed (%s); evaluating on cpu", dev, ct_errmsg(rc));
		rc = ct_seval_run_handover("cpu", m, tok, B, T, nb, loss, consumed);
	}
	pthread_mutex_unlock(&eval_lock);
	if (rc == 0 && ntokens != NULL)
		*ntokens = (int64_t)nb * B * T;
	return rc;
}

int ct_seval_loss(struct ct_server *srv, const struct ct_gpt2 *m, const struct ct_tokens *tok,
		  int batch, int T, int64_t want_tokens, float *loss, int64_t *ntokens)
{
	const char *dev = ct_seval_device(srv);
	int B, nb, rc;

	rc = eval_shape(tok, batch, T, want_tokens, &B, &nb);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&eval_lock);
	rc = ct_eval(m, tok, B, T, nb, dev, loss);
	if ((rc == CT_ECL || rc == CT_EDEVNOMEM || rc == CT_EUNSUPP) && strcmp(dev, "cpu") != 0) {
		ct_log_warn("eval: %s failed (%s); evaluating on cpu", dev, ct_errmsg(rc));
		rc = ct_eval(m, tok, B, T, nb, "cpu", loss);
	}
	pthread_mutex_unlock(&eval_lock);
	if (rc == 0 && ntokens != NULL)
		*ntokens = (int64_t)nb * B * T;
	return rc;
}

int ct_seval_job_tokens(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			int64_t *tokens)
{
	long def = CT_SEVAL_DEFAULT_TOKENS;
	struct ct_job_row j;
	int rc;

	rc = ct_job_get(db, jobid, &j);
	if (rc < 0)
		return rc;
	if (j.eval_tokens > 0) {
		*tokens = j.eval_tokens;
		return 0;
	}
	rc = ct_conf_get_int(srv->conf, "daemons.eval_tokens", CT_SEVAL_DEFAULT_TOKENS, 0,
			     1L << 40, &def);
	*tokens = def;
	return rc;
}

int ct_seval_record_round(struct ct_db *db, int64_t roundid, int64_t ntokens)
{
	return ct_round_set_eval_ntokens(db, roundid, ntokens);
}
