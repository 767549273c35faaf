/*
 * job_tokenizer.c - a job's own tokenizer.json (see job_tokenizer.h).
 */
#include "job_tokenizer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct_err.h"
#include "ct_file.h"
#include "ct_llama_hf.h"
#include "ct_log.h"
#include "ct_time.h"
#include "data/db.h"
#include "data/dl.h"
#include "text_args.h"
#include "data/server.h"
#include "data/store.h"

#define PART (1u << 20)
#define PROGRESS_MIN (16u << 20)
#define SIDE_FILE_MAX (16u << 20)	/* tokenizer_config.json and the like */

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ts->tk_path := path (a tokenizer.json, or a directory holding one),
 * ts->tk_dir := its directory; ts->tokenizer points at tk_path. */
static int take_path(struct ct_text_submit *ts, const char *path)
{
	char file[PATH_MAX];
	char *slash;
	int rc = 0;

	if (is_dir(path))
		rc = ct_path_join(file, sizeof(file), path, CT_JOB_TOKENIZER_JSON);
	else if (snprintf(file, sizeof(file), "%s", path) >= (int)sizeof(file))
		rc = ct_error(CT_ETOOBIG, "%s: path too long", path);
	if (rc < 0)
		return rc;
	if (!ct_file_exists(file))
		return ct_error(CT_ENOENT, "%s: no such file", file);
	free(ts->tk_path);
	free(ts->tk_dir);
	ts->tk_path = strdup(file);
	ts->tk_dir = strdup(file);
	if (ts->tk_path == NULL || ts->tk_dir == NULL)
		return ct_error(CT_ENOMEM, "path");
	slash = strrchr(ts->tk_dir, '/');
	if (slash != NULL)
		*slash = 0;
	ts->tokenizer = ts->tk_path;
	return 0;
}

int ct_job_tokenizer_prepare(struct ct_cmd_ctx *ctx, const char *model_arg, int text,
			     struct ct_text_submit *ts)
{
	struct ct_model_config cfg;
	char dir[PATH_MAX], file[PATH_MAX];
	int rc;

	if (ts->tokenizer && ct_tokenizer_is_path(ts->tokenizer)) {
		rc = ct_cmd_path(ctx, ts->tokenizer, file, sizeof(file));
		if (rc == 0)
			rc = take_path(ts, file);
		if (rc < 0)
			return ct_error(rc, "--tokenizer: %s", ct_errmsg(rc));
	}
	if (model_arg == NULL || ct_cmd_path(ctx, model_arg, dir, sizeof(dir)) < 0 ||
	    !is_dir(dir))
		return 0;	/* a checkpoint file: text_submit.c reads its V */
	rc = ct_llama_hf_read_config(dir, &cfg);
	if (rc < 0)
		return rc;
	ts->V = cfg.V;
	if (ts->tokenizer != NULL)
		return 0;
	rc = ct_path_join(file, sizeof(file), dir, CT_JOB_TOKENIZER_JSON);
	if (rc == 0 && ct_file_exists(file))
		return take_path(ts, file);
	if (rc == 0 && text)
		rc = ct_error(CT_ENOENT, "--model %s has no tokenizer.json to tokenise "
			      "--train-text with: copy the model's tokenizer.json there, or "
			      "name one with --tokenizer PATH", model_arg);
	return rc;
}

/* Is the tokenizer at ts->tk_path one the server can decode this job
 * with? 1 yes, 0 no (warned). */
static int usable(const struct ct_text_submit *ts, int64_t jobid)
{
	struct ct_tokenizer *tk = NULL;
	int rc = ct_tokenizer_open(ts->tk_path, &tk);

	if (rc == 0 && ts->V > 0 && ct_tokenizer_vocab(tk) > ts->V)
		rc = ct_error(CT_EMISMATCH, "it has %d tokens, the model only %d",
			      ct_tokenizer_vocab(tk), ts->V);
	ct_tokenizer_free(tk);
	if (rc == 0)
		return 1;
	ct_log_warn("job %lld: no samples: tokenizer %s: %s", (long long)jobid, ts->tk_path,
		    ct_errmsg(rc));
	return 0;
}

/* Store one file and list it as job jobid's `name`. */
static int store_one(struct ct_cmd_ctx *ctx, int64_t jobid, const char *path,
		     const char *name)
{
	char sha[CT_SHA256_HEXLEN + 1];
	int rc;

	rc = ct_store_add_file(ctx->srv, ctx->db, path, "tokenizer", jobid, 1, sha, NULL);
	if (rc == 0)
		rc = ct_kept_file_put(ctx->db, jobid, name, sha);
	return rc < 0 ? rc : 0;
}

int ct_job_tokenizer_keep_config(struct ct_cmd_ctx *ctx, const char *dir, int64_t jobid)
{
	char path[PATH_MAX];
	struct stat st;

	if (ct_path_join(path, sizeof(path), dir, "config.json") < 0 ||
	    stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > SIDE_FILE_MAX)
		return 0;
	return store_one(ctx, jobid, path, CT_JOB_INPUT_CONFIG);
}

int ct_job_tokenizer_record(struct ct_cmd_ctx *ctx, const struct ct_text_submit *ts,
			    int64_t jobid)
{
	const char *const *names = ct_llama_hf_tokenizer_files;
	int rc;

	if (ts->tk_path == NULL || !usable(ts, jobid))
		return 1;
	rc = store_one(ctx, jobid, ts->tk_path, CT_JOB_TOKENIZER_JSON);
	for (size_t i = 0; rc == 0 && names[i] != NULL; i++) {
		char path[PATH_MAX];
		struct stat st;

		if (strcmp(names[i], CT_JOB_TOKENIZER_JSON) == 0 ||
		    ct_path_join(path, sizeof(path), ts->tk_dir, names[i]) < 0 ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size > SIDE_FILE_MAX)
			ct_log_warn("job %lld: %s is over %u bytes: not kept", (long long)jobid,
				    path, SIDE_FILE_MAX);
		else
			rc = store_one(ctx, jobid, path, names[i]);
	}
	return rc == 0 ? ct_job_tokenizer_keep_config(ctx, ts->tk_dir, jobid) : rc;
}

static void progress(const char *name, size_t done, size_t n, size_t ntok, double t0,
		     int end)
{
	double dt = ct_time_mono_s() - t0;

	fprintf(stderr, "job submit: %s: %.1f MB of %.1f, %zu tokens, %.1f MB/s%s", name,
		done / 1e6, n / 1e6, ntok, done / 1e6 / (dt > 1e-9 ? dt : 1e-9),
		end || !isatty(2) ? "\n" : "\r");
	fflush(stderr);
}

int ct_job_tokenizer_encode(const struct ct_tokenizer *tk, const char *name,
			    const void *text, size_t n, struct ct_tokvec *out)
{
	const unsigned char *p = text;
	double t0 = ct_time_mono_s(), last = t0;
	size_t off = 0, want = PART;
	int rc = 0;

	if (n < PROGRESS_MIN)
		return ct_tokenizer_encode(tk, text, n, out);
	while (rc == 0 && off < n) {
		size_t len = n - off < want ? n - off : want, used = 0;

		rc = ct_tokenizer_encode_part(tk, p + off, len, off + len == n, out, &used);
		off += used;
		want = used > 0 ? PART : want * 2;	/* one piece longer than a part */
		if (rc == 0 && ct_time_mono_s() - last >= 1.0) {
			last = ct_time_mono_s();
			progress(name, off, n, out->n, t0, 0);
		}
	}
	if (rc == 0)
		progress(name, off, n, out->n, t0, 1);
	return rc;
}

/* A row of job_tokenizer_file (name is VARCHAR(64) of utf8mb4). */
int ct_job_tokenizer_export(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			    const char *dir, int *n)
{
	struct ct_kept_file *files = NULL;
	size_t nfiles = 0;
	int rc, k = 0;

	if (n != NULL)
		*n = 0;
	rc = ct_kept_file_list(db, jobid, &files, &nfiles);
	for (size_t i = 0; rc == 0 && i < nfiles; i++) {
		char from[PATH_MAX], to[PATH_MAX];
		const char *name = files[i].name;
		unsigned char *data = NULL;
		size_t len = 0;

		if (strchr(name, '/') != NULL || name[0] == '.' ||
		    strcmp(name, CT_JOB_INPUT_CONFIG) == 0)
			continue;	/* only the names record() writes, as they came */
		rc = ct_server_download_path(srv, files[i].sha, from, sizeof(from));
		if (rc == 0)
			rc = ct_path_join(to, sizeof(to), dir, name);
		if (rc == 0)	/* tokenizer.json is capped at 64 MiB when read */
			rc = ct_file_read_all(from, (size_t)256 << 20, &data, &len);
		if (rc == 0)
			rc = ct_file_write_atomic(to, data, len, 0644);
		free(data);
		k += rc == 0;
	}
	free(files);
	if (n != NULL)
		*n = k;
	return rc;
}
