/*
 * dl_web.h - the data behind every web page and its JSON twin: one query
 * function per view, filling plain structs, so the HTML pages (web_pages.c)
 * and the API (web_api.c) show the same numbers from the same statements.
 * The data layer for server/web/: boards, rows, histories and the status
 * numbers in dl_web.c, jobs in dl_web_job.c, tasks in dl_web_task.c, the
 * user's preferences and profile in dl_user.c, news in dl_news.c.
 *
 * Every query is a prepared statement through server/data/db.h; leaderboards
 * pick one page of ids from a credit index alone (ORDER BY <credit> DESC,
 * id DESC LIMIT ? OFFSET ?: user_expavg, user_total and friends, whose
 * InnoDB entries end with the primary key), then join that page's rows by
 * primary key (dl_web.c says why). Strings are copied
 * into fixed fields sized to their columns, so the structs own nothing and
 * need no free; arrays are malloc'd and freed with free().
 *
 * Errors: 0 or a negative CT_E* code (CT_ENOTFOUND for an unknown id).
 */
#ifndef CT_DL_WEB_H
#define CT_DL_WEB_H

#include <stddef.h>
#include <stdint.h>

struct ct_db;

#define CT_WEB_PAGE_SIZE 50		/* leaderboard rows per page */
#define CT_WEB_MAX_PAGE 100000		/* deepest page served */
#define CT_WEB_HIST_DAYS 400		/* credit history points */

/* Leaderboard order. */
enum ct_web_sort { CT_WEB_SORT_RAC = 0, CT_WEB_SORT_TOTAL = 1 };

struct ct_web_user {
	int64_t id, teamid, create_time;
	char name[260], country[260], url[1024], team_name[260];
	double total_credit, expavg_credit, expavg_time;
	int64_t nhosts;			/* filled by ct_web_get_user only */
	char profile[1025];		/* the same: the profile's text */
	int64_t rank;			/* 1-based, in the order asked for */
};

struct ct_web_team {
	int64_t id, userid, create_time, nusers;
	char name[260], founder_name[260], url[1024], description[4100];
	double total_credit, expavg_credit, expavg_time;
	int64_t rank;
	/* what today's members have earned in all, before joining included
	 * (total_credit counts only credit earned in the team); filled by
	 * ct_web_get_team only */
	double members_credit;
};

struct ct_web_host {
	int64_t id, userid, create_time, rpc_time, ncpus, ram_bytes;
	char owner_name[260], os[260], cpu_model[260], device[260];
	char client_version[80];
	int64_t nresults_valid, nresults_invalid, ndevices;
	double total_credit, expavg_credit, expavg_time;
	int64_t rank;
};

/* One page of a leaderboard: rows [0, n), total = rows in the table. */
struct ct_web_board {
	enum ct_web_sort sort;
	int64_t page, npages, total;
	size_t n;
	union {
		struct ct_web_user *users;
		struct ct_web_team *teams;
		struct ct_web_host *hosts;
	};
};

/* Leaderboards: page >= 1 (pages past the end give n = 0). `teamid` > 0
 * limits the users board to that team's members and `userid` > 0 the hosts
 * board to that user's computers (pages then are the whole list, capped at
 * CT_WEB_PAGE_SIZE * 4). On success the caller frees b->users/teams/hosts
 * with ct_web_board_free(). */
int ct_web_users(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t teamid, struct ct_web_board *b);
int ct_web_teams(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 struct ct_web_board *b);
int ct_web_hosts(struct ct_db *db, enum ct_web_sort sort, int64_t page,
		 int64_t userid, struct ct_web_board *b);
void ct_web_board_free(struct ct_web_board *b);

/* The same by kind ("user", "team", "host"): owner is teamid for "user",
 * userid for "host", and must be 0 for "team". CT_EINVAL for another kind. */
int ct_web_board(struct ct_db *db, const char *kind, enum ct_web_sort sort, int64_t page,
		 int64_t owner, struct ct_web_board *b);

#define CT_WEB_SEARCH_MAX 50	/* rows a name search returns */

/* The users ("user") or teams ("team") whose name starts with q (any case,
 * at most 64 bytes; wildcards are text), up to CT_WEB_SEARCH_MAX, most
 * recent average credit first, unranked (rank 0: the rank of each would
 * cost a count apiece; their pages show it). CT_EINVAL for another kind
 * or a longer q. Free with ct_web_board_free(). */
int ct_web_search(struct ct_db *db, const char *kind, const char *q, struct ct_web_board *b);

/* At most `limit` rows of kind's board whose id is > after, in id order
 * (keyset paging for the stats export), into b->users/teams/hosts (rank 0,
 * page fields 0). Free with ct_web_board_free(). */
int ct_web_board_after(struct ct_db *db, const char *kind, int64_t after, int64_t limit,
		       struct ct_web_board *b);

/* One row by id (with its rank by RAC filled in). */
int ct_web_get_user(struct ct_db *db, int64_t id, struct ct_web_user *u);
int ct_web_get_team(struct ct_db *db, int64_t id, struct ct_web_team *t);
int ct_web_get_host(struct ct_db *db, int64_t id, struct ct_web_host *h);
/* The same by kind ("user", "team", "host") into the matching struct;
 * CT_EINVAL for another kind. */
int ct_web_get(struct ct_db *db, const char *kind, int64_t id, void *row);

/* Credit history: cumulative credit at the end of each day with a grant,
 * newest CT_WEB_HIST_DAYS days, oldest first; t[] are UNIX times (end of
 * the day, or now for today), credit[] cumulative totals ending at `total` (the row's
 * total_credit), with one point before the first day at its start. `kind`
 * is "user", "team" or "host". *t and *credit are malloc'd (free both);
 * *n may be 0 (then both are NULL). */
int ct_web_history(struct ct_db *db, const char *kind, int64_t id,
		   double total, double **t, double **credit, size_t *n);

struct ct_web_job {
	int64_t id, create_time, finish_time, status, nshards, nrounds;
	int64_t cur_round, steps, batch, seq, min_quorum, target_nresults;
	char name[260], error_message[260], model_sha256[65];
	char final_model_sha256[65], status_name[32];
	double lr, base_eval_loss, final_eval_loss;	/* NAN when NULL */
	int64_t nwus, nwus_done;			/* over all rounds */
	int64_t res_unsent, res_in_progress, res_valid, res_invalid;
	int64_t res_error;
	double credit;					/* granted so far */
	char aggregation[17], outer_method[17];		/* ct_avg's, ct_outer's names */
	double outer_lr, outer_momentum;
	double round_quorum;				/* < 1: rounds may close early */
};

/* What a job trains and on what (its job page's "Model and data"). */
struct ct_web_job_inputs {
	char model_sha256[65], train_sha256[65], eval_sha256[65];
	int64_t model_size, train_tokens, eval_tokens;	/* eval_tokens 0: all */
	char tokenizer[17];		/* job_text's ("bytes", "gpt2"), "" none */
	char tokenizer_files[300];	/* job_tokenizer_file names, "," between */
	int64_t lora_rank, lora_targets;	/* 0: every weight trained */
	double lora_alpha;
};

/* Job `id`'s inputs (CT_ENOTFOUND for no such job). */
int ct_web_get_job_inputs(struct ct_db *db, int64_t id, struct ct_web_job_inputs *in);

struct ct_web_round {
	int64_t idx, status, nwus, nwus_done, create_time, finish_time;
	char model_sha256[65], out_model_sha256[65], status_name[32];
	double eval_loss, base_eval_loss;		/* NAN when NULL */
	int64_t res_in_progress, res_valid, res_invalid;
	int64_t eval_ntokens;				/* tokens the losses are over, 0 unknown */
	int64_t nfailed;	/* times the round check refused its average */
};

struct ct_web_contrib {
	int64_t userid, nresults;
	char name[260];
	double credit;
};

/* Every job, newest first (at most 500), with progress counts. */
int ct_web_jobs(struct ct_db *db, struct ct_web_job **jobs, size_t *n);

/* One job with its rounds (oldest first) and up to 50 contributors (most
 * credit first). Arrays malloc'd; free them. */
int ct_web_get_job(struct ct_db *db, int64_t id, struct ct_web_job *job,
		   struct ct_web_round **rounds, size_t *nrounds,
		   struct ct_web_contrib **contrib, size_t *ncontrib);

/* ---- where tolerance replicas parted (dl_web_job.c) ------------------------ */

#define CT_WEB_PARTINGS_MAX 64	/* pairs a job page shows */

/* A WU's canonical result and another valid replica compared on the
 * tolerance path (one of them from a device that does not conform), and
 * where their hash chains (ct_chain.h) part. */
struct ct_web_parting {
	int64_t round, shard;
	char wu[64], canonical[96], other[96];
	int64_t steps, every;		/* the WU's steps, its chain interval */
	int64_t link;			/* first differing link, -1: the chains agree */
	int64_t agreed, parted;		/* the last step both vouch for, and the
					 * step by which they part (ct_chain_parting) */
};

/* Up to CT_WEB_PARTINGS_MAX such pairs of job jobid, newest round
 * first, whose results both still have their chains (well formed for the
 * job's interval) and are exact uploads (an int8 one's chain is not
 * checked: doc/validation.md), into a malloc'd *out (free()), *n rows. Returns 0 or
 * a db error. */
int ct_web_job_partings(struct ct_db *db, int64_t jobid, struct ct_web_parting **out,
			size_t *n);

/* ---- the samples of a job's rounds (dl_web_job.c) ------------------------- */

#define CT_WEB_SAMPLES_MAX 201	/* the base model and 200 rounds */

/* One round_sample row; TEXT holds at most 65,535 bytes, so text never
 * truncates (hence one row at a time, not an array). */
struct ct_web_sample {
	int64_t round;		/* 0: the base model */
	char model_sha256[65];
	char text[65536];
};

/* The rows of one job's samples, read one by one. */
struct ct_web_samples {
	struct ct_db_res *res;
	size_t n;		/* rows in all */
};

/* Open job `jobid`'s samples (at most CT_WEB_SAMPLES_MAX, oldest round
 * first) into *it, and *row, a malloc'd buffer for one row. Close both
 * with ct_web_samples_close(), also on failure (then it->n is 0). */
int ct_web_samples_open(struct ct_db *db, int64_t jobid, struct ct_web_samples *it,
			struct ct_web_sample **row);
/* The next row into *row: 1, or 0 at the end. */
int ct_web_samples_next(struct ct_web_samples *it, struct ct_web_sample *row);
void ct_web_samples_close(struct ct_web_samples *it, struct ct_web_sample *row);

/* A chat job's sample conversation (job_text.sample_chat, one JSON line)
 * into *text (malloc'd: free it), NULL for a job of text samples. */
int ct_web_sample_chat(struct ct_db *db, int64_t jobid, char **text);

/* ---- tasks (results) of one computer or one user ---------------------- */

/* What a volunteer sees of a result; the numbers are the page's filter
 * (?state=N) and the API's "state_code". */
enum ct_web_task_state {
	CT_WEB_TASK_ANY = 0,
	CT_WEB_TASK_IN_PROGRESS = 1,	/* sent, not reported yet */
	CT_WEB_TASK_PENDING = 2,	/* reported, waiting for its quorum */
	CT_WEB_TASK_VALID = 3,		/* validated: credit granted */
	CT_WEB_TASK_INVALID = 4,	/* disagreed with the quorum */
	CT_WEB_TASK_ERROR = 5,		/* client error, no reply, too late */
	CT_WEB_TASK_NSTATES = 6,
};

/* "in progress", "pending validation", ... ("all" for CT_WEB_TASK_ANY). */
const char *ct_web_task_state_name(int state);

struct ct_web_task {
	int64_t id, workunitid, jobid, hostid, state, round_idx, shard;
	int64_t sent_time, report_deadline, received_time;
	char name[81], job_name[129], state_name[24];
	double elapsed_s, granted_credit;
	double credit;		/* granted, or what a pending one will get */
};

/* Counts by state of one owner's tasks, and their credit. */
struct ct_web_task_sum {
	int64_t n[CT_WEB_TASK_NSTATES];		/* [CT_WEB_TASK_ANY]: all */
	double granted;				/* over the valid ones */
	double pending;				/* over the pending ones (expected) */
};

/* One page (CT_WEB_PAGE_SIZE rows, newest first) of the tasks of host
 * `id` (kind "host") or user `id` (kind "user") in `state` (ANY: all but
 * those never sent), with the counts; page past the end gives n = 0.
 * credit_of(jobid, arg, &credit) gives what one valid result of a job
 * earns (it fills the pending figures; web_tasks.c reads the job's
 * model). *tasks is malloc'd (free it); NULL and 0 on failure. */
int ct_web_tasks(struct ct_db *db, const char *kind, int64_t id, int state, int64_t page,
		 int (*credit_of)(int64_t jobid, void *arg, double *credit), void *arg,
		 struct ct_web_task **tasks, size_t *n, struct ct_web_task_sum *sum);

/* What the credit of a valid result of a job is made of: the grants so
 * far (round_stat) and the shape the validator's formula reads. */
struct ct_web_job_credit {
	int64_t nvalid;
	double credit;			/* over the nvalid valid results */
	char model_sha256[65];
	int64_t seq, batch, steps;
};

/* Job `id`'s (CT_ENOTFOUND for no such job). */
int ct_web_get_job_credit(struct ct_db *db, int64_t id, struct ct_web_job_credit *jc);

/* The user's computing preferences saved on the web (prefs.conf lines of
 * the keys web_prefs.c lets the web set) into text (cap bytes; "" when
 * none) and when they were saved (0: never). */
int ct_web_get_prefs(struct ct_db *db, int64_t userid, char *text, size_t cap,
		     int64_t *mod_time);

/* Save them (at most 2048 bytes; "" clears them on every client), now. */
int ct_web_put_prefs(struct ct_db *db, int64_t userid, const char *text);

/* Whether s is min..max bytes of UTF-8 without control characters
 * (newlines allowed when `newlines`): 1 or 0. */
int ct_web_text_ok(const char *s, size_t min, size_t max, int newlines);

/* Set user `id`'s profile: country (one of ct_web_countries, or "") and
 * text (at most 1024 bytes of UTF-8 without control characters but
 * newlines). CT_EINVAL names what is wrong. */
int ct_web_set_profile(struct ct_db *db, int64_t id, const char *country, const char *text);

/* ---- sign-in sessions (dl_user.c) ---------------------------------------- */

/* The user a session belongs to. */
struct ct_web_session_user {
	int64_t userid, teamid;
	char name[260];
};

/* The user of the session whose token's SHA-256 is token_hash (64 hex)
 * and that is still valid at `now`: 0, CT_ENOTFOUND, or a db error. */
int ct_web_session_get(struct ct_db *db, const char *token_hash, int64_t now,
		       struct ct_web_session_user *u);

/* Record a session of `userid` valid until expire_time, first dropping
 * that user's expired ones. 0 or a db error. */
int ct_web_session_add(struct ct_db *db, const char *token_hash, int64_t userid,
		       int64_t now, int64_t expire_time);

/* End one session (signing out), or every session expired at `now`
 * (the stats role's sweep). 0 or a db error. */
int ct_web_session_delete(struct ct_db *db, const char *token_hash);
int ct_web_session_purge(struct ct_db *db, int64_t now);
/* End every session of user `userid` (a password reset). 0 or a db error. */
int ct_web_session_end_user(struct ct_db *db, int64_t userid);

/* The user whose account key hashes to key_hash (ct_account_key_hash):
 * 0, CT_ENOTFOUND, or a db error. */
int ct_web_user_by_auth_hash(struct ct_db *db, const char *key_hash, int64_t *userid);

/* ---- news ----------------------------------------------------------------- */

#define CT_WEB_NEWS_TITLE_MAX 200
#define CT_WEB_NEWS_BODY_MAX 4000

struct ct_web_news {
	int64_t id, create_time;
	char title[CT_WEB_NEWS_TITLE_MAX + 1], body[CT_WEB_NEWS_BODY_MAX + 1];
};

/* Post a news item (title 1-200 bytes, body at most 4000, UTF-8 without
 * control characters but newlines in the body): 0, CT_EINVAL, a db error;
 * its id in *id. */
int ct_web_news_add(struct ct_db *db, const char *title, const char *body, int64_t *id);

/* The newest `max` items, newest first (*items malloc'd: free it). */
int ct_web_news(struct ct_db *db, size_t max, struct ct_web_news **items, size_t *n);

struct ct_web_role {
	char role[40], instance[140], last_error[260];
	int64_t start_time, beat_time, nruns, nitems;
	int alive;				/* beat in the last 2 minutes */
};

struct ct_web_status {
	int64_t now;
	int64_t res_unsent, res_in_progress, wu_need_validate, wu_need_assimilate;
	int64_t users, users_with_credit, teams, hosts, hosts_active_24h;
	int64_t jobs_running, jobs_done, credit_events_24h;
	double credit_24h, tflops, total_credit;
	struct ct_web_role roles[32];
	size_t nroles;
};

/* What the stats export's tables.xml counts: rows of user, team and
 * host, and the users' total credit. */
struct ct_web_totals {
	int64_t users, teams, hosts;
	double credit;
};

int ct_web_get_totals(struct ct_db *db, struct ct_web_totals *tot);

/* Server status numbers (TFLOPS = credit granted in the last 24 h converted
 * at 1 cobblestone = 432 GFLOP, over 86400 s). */
int ct_web_get_status(struct ct_db *db, struct ct_web_status *st);

#endif
