/*
 * web_data.h - the data behind every web page and its JSON twin: one query
 * function per view, filling plain structs, so the HTML pages (web_pages.c)
 * and the API (web_api.c) show the same numbers from the same statements.
 *
 * Every query is a prepared statement through server/data/db.h; leaderboards
 * pick one page of ids from a credit index alone (ORDER BY <credit> DESC,
 * id DESC LIMIT ? OFFSET ?: user_expavg, user_total and friends, whose
 * InnoDB entries end with the primary key), then join that page's rows by
 * primary key (web_data.c says why). Strings are copied
 * into fixed fields sized to their columns, so the structs own nothing and
 * need no free; arrays are malloc'd and freed with free().
 *
 * Errors: 0 or a negative CT_E* code (CT_ENOTFOUND for an unknown id).
 */
#ifndef CT_WEB_DATA_H
#define CT_WEB_DATA_H

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
	int64_t rank;			/* 1-based, in the order asked for */
};

struct ct_web_team {
	int64_t id, userid, create_time, nusers;
	char name[260], founder_name[260], url[1024], description[4100];
	double total_credit, expavg_credit, expavg_time;
	int64_t rank;
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
 * the day), credit[] cumulative totals ending at `total` (the row's
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

/* Server status numbers (TFLOPS = credit granted in the last 24 h converted
 * at 1 cobblestone = 432 GFLOP, over 86400 s). */
int ct_web_get_status(struct ct_db *db, struct ct_web_status *st);

#endif
