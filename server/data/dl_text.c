/*
 * dl_text.c - the text tables' reads and writes (see dl_text.h).
 */
#include "dl_text.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_tokenizer.h"
#include "db.h"
#include "dl.h"
#include "server.h"

int ct_job_text_get(struct ct_db *db, int64_t jobid, struct ct_job_text_row *row)
{
	struct ct_db_res *res = NULL;
	int rc;

	memset(row, 0, sizeof(*row));
	rc = CT_DB_QUERY(db, &res, "SELECT tokenizer, sample_prompt, sample_seed, sample_chat "
			 "FROM job_text WHERE jobid=?", jobid);
	if (rc < 0)
		return rc;
	rc = CT_ENOTFOUND;
	if (ct_db_next(res) > 0) {
		snprintf(row->tokenizer, sizeof(row->tokenizer), "%s", ct_db_str(res, 0));
		snprintf(row->prompt, sizeof(row->prompt), "%s", ct_db_str(res, 1));
		row->seed = ct_db_int(res, 2);
		row->chat = strdup(ct_db_str(res, 3));
		rc = row->chat ? 0 : ct_error(CT_ENOMEM, "out of memory");
	}
	ct_db_res_free(res);
	return rc;
}

void ct_job_text_row_free(struct ct_job_text_row *row)
{
	free(row->chat);
	row->chat = NULL;
}

int ct_job_text_put(struct ct_db *db, int64_t jobid, const char *tokenizer,
		    const char *prompt, int64_t seed, const char *chat)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO job_text (jobid, tokenizer, sample_prompt, "
			    "sample_seed, sample_chat) VALUES (?, ?, ?, ?, ?)", jobid, tokenizer,
			    prompt, seed, chat ? chat : "");

	return rc < 0 ? rc : 0;
}

static const struct ct_dl_col kept_cols[] = {
	CT_DL_COL(struct ct_kept_file, name),
	CT_DL_COL(struct ct_kept_file, sha),
};

int ct_kept_file_put(struct ct_db *db, int64_t jobid, const char *name, const char *sha)
{
	int rc = CT_DB_EXEC(db, "INSERT INTO job_tokenizer_file (jobid, name, sha256) "
			    "VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE sha256=VALUES(sha256)",
			    jobid, name, sha);

	return rc < 0 ? rc : 0;
}

int ct_kept_file_list(struct ct_db *db, int64_t jobid, struct ct_kept_file **files,
		      size_t *n)
{
	return CT_DL_LIST(db, files, n, kept_cols, "tokenizer files", "SELECT name, sha256 "
			  "FROM job_tokenizer_file WHERE jobid=? ORDER BY name", jobid);
}

static int kept_file_get(struct ct_db *db, int64_t jobid, const char *name,
			 struct ct_kept_file *f)
{
	return CT_DL_ONE(db, f, kept_cols, "SELECT name, sha256 FROM job_tokenizer_file "
			 "WHERE jobid=? AND name=?", jobid, name);
}

int ct_job_tokenizer_find(struct ct_db *db, int64_t jobid, const char *name, char sha[65])
{
	struct ct_kept_file f;
	int rc;

	sha[0] = 0;
	if (strcmp(name, CT_JOB_TOKENIZER_JSON) != 0)
		return 0;
	rc = kept_file_get(db, jobid, CT_JOB_TOKENIZER_JSON, &f);
	if (rc == CT_ENOTFOUND)
		return ct_error(CT_ENOTFOUND, "job %lld keeps no tokenizer.json",
				(long long)jobid);
	if (rc == 0)
		memcpy(sha, f.sha, 65);
	return rc;
}

int ct_job_tokenizer_open(const struct ct_server *srv, const char *name, const char *sha,
			  struct ct_tokenizer **tk)
{
	char path[PATH_MAX];
	int rc;

	*tk = NULL;
	if (sha[0] == 0)
		return ct_tokenizer_open(name, tk);
	rc = ct_server_download_path(srv, sha, path, sizeof(path));
	if (rc == 0)
		rc = ct_tokenizer_open(path, tk);
	return rc;
}

int ct_job_tokenizer_kept(struct ct_server *srv, struct ct_db *db, int64_t jobid,
			  const char *name, char *path, size_t cap)
{
	struct ct_kept_file f;
	int rc = kept_file_get(db, jobid, name, &f);

	if (rc == 0)
		rc = ct_server_download_path(srv, f.sha, path, cap);
	return rc;
}

int ct_round_sample_have(struct ct_db *db, int64_t jobid, int idx, int *have)
{
	int64_t n = 0;
	int rc = CT_DB_QUERY_INT(db, &n, "SELECT COUNT(*) FROM round_sample WHERE jobid=? AND "
				 "round_idx=?", jobid, idx);

	*have = n > 0;
	return rc < 0 ? rc : 0;
}

int ct_round_sample_put(struct ct_db *db, int64_t jobid, int idx, const char *sha,
			const char *text)
{
	int rc = CT_DB_EXEC(db, "INSERT IGNORE INTO round_sample (jobid, round_idx, "
			    "model_sha256, create_time, sample_text) VALUES (?, ?, ?, ?, ?)",
			    jobid, idx, sha, ct_db_now(db), text);

	return rc < 0 ? rc : 0;
}
