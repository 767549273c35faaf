/*
 * cl_rpc.h - the client side of the scheduler and account RPCs
 * (doc/protocol.md): building requests from the client state and parsing
 * replies into plain structs, then applying them to the state.
 *
 * Parsing trusts nothing: the reply goes through ct_xml_parse with a 4 MiB
 * size cap and a depth cap of 8, every string has a length cap, and counts
 * of workunits, results, acks and aborts are capped (a reply over a count
 * cap is refused as a whole: CT_ETOOBIG). Names and URLs that become
 * paths, requests or headers are checked (cl_jail.h); a result that breaks
 * them is refused on its own and reported to the server as an error.
 * Building, parsing and applying are separate so that the tests exercise
 * each without a network.
 */
#ifndef CT_CL_RPC_H
#define CT_CL_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "cl_state.h"
#include "ct_buf.h"

#define CT_RPC_MAX_REPLY (4u << 20)
#define CT_RPC_MAX_DEPTH 8
#define CT_RPC_MAX_WUS 16
#define CT_RPC_MAX_RESULTS 16
#define CT_RPC_MAX_ACKS 64
#define CT_RPC_MAX_ABORTS 256
#define CT_RPC_MAX_PARAMS 64
#define CT_RPC_MAX_FILES 8
#define CT_RPC_MAX_STR 4096
#define CT_RPC_MAX_REPORTS 64		/* results reported per request */
#define CT_RPC_MAX_OTHER 256

struct ct_rpc_ack {
	char *name;
	int accepted;			/* 1 accepted (DUP counts as accepted) */
	char *code;			/* rejection code ("NOENT"), or NULL */
	char *message;
};

struct ct_rpc_wu {
	char *name;
	char *refused;			/* why the client will not run it (cl_jail.h), or NULL */
	struct ct_param *params;	/* every leaf element but name/file */
	size_t nparams;
	struct ct_task_file *files;
	size_t nfiles;
};

struct ct_rpc_result {
	char *name;
	char *refused;			/* why the client will not run it, or NULL */
	char *wu_name;
	double deadline;
	char *upload_url;
	char *upload_token;
	uint64_t max_upload_bytes;
};

#define CT_RPC_MAX_WEB_PREFS 4096

struct ct_sched_reply {
	long host_id;			/* 0 if absent */
	double request_delay;		/* seconds, 0 if absent */
	char *user_name;
	char *host_secret;		/* this host's upload MAC key, NULL if absent */
	double total_credit, expavg_credit;	/* NaN if absent */
	long rank;			/* the user's rank by RAC if sent, else 0 */
	long pending_results;		/* reported, not yet validated; -1 if absent */
	char *project_name;
	/* the account's computing preferences from the web (prefs.conf text
	 * of at most CT_RPC_MAX_WEB_PREFS bytes) and when they were saved;
	 * NULL and 0 when the reply has none */
	char *web_prefs;
	long long web_prefs_time;
	char *error_code;		/* whole request refused: "AUTH", ... */
	char *error_message;
	struct ct_rpc_ack *acks;
	size_t nacks;
	char **aborts;
	size_t naborts;
	struct ct_rpc_wu *wus;
	size_t nwus;
	struct ct_rpc_result *results;
	size_t nresults;
};

/* Build a <scheduler_request> for project p into b: authenticator, host id,
 * st->cpid, the host description (an XML fragment <host>...</host> made by
 * ct_host_describe, inserted as is), a <result> for every task in state
 * DONE and an error report for every name in p->refused (together at
 * most CT_RPC_MAX_REPORTS), <other_results> listing every task
 * still in progress, and <work_req> asking for `want` results. */
int ct_rpc_build_request(const struct ct_state *st, const struct ct_project *p,
			 const char *host_xml, int want, struct ct_buf *b);

/* Parse a scheduler reply of n bytes into *r (zeroed first; free with
 * ct_sched_reply_free, also after a failure). Returns 0, CT_EXML,
 * CT_ETOOBIG (size, depth or a count cap), CT_EPROTO (not a
 * <scheduler_reply>, a required element missing or malformed). A reply
 * with <error> parses fine: look at r->error_code. A workunit or result
 * that breaks the name forms of cl_jail.h (a name that would become a path
 * outside the client's directory, a URL that is not http(s), ...) or, for
 * a workunit, the protocol, parses with `refused` set to the reason: the
 * rest of the reply is still used, and nothing of the refused item is. */
int ct_rpc_parse_reply(const void *data, size_t n, struct ct_sched_reply *r);

/* 1 if s has the form of a host secret (64 hex digits), else 0. */
int ct_rpc_host_secret_valid(const char *s);

/* The X-Upload-MAC of an upload (doc/protocol.md): the hex HMAC-SHA256,
 * keyed by the host secret's hex string, of
 * "ctune-upload-mac\n<result>\n<body sha256 hex>", into out (65 bytes).
 * Returns 0, or CT_EINVAL (no valid secret, or names too long). */
int ct_rpc_upload_mac(const char *secret, const char *result, const char *sha_hex,
		      char out[65]);

void ct_sched_reply_free(struct ct_sched_reply *r);

/* Apply a parsed, error-free reply to project p at wall time now: host id,
 * request_delay, credit; acked results are marked REPORTED (a NOENT
 * rejection sends the task back to UPLOADING); aborted tasks are marked
 * REPORTED with outcome CT_ECANCELED; new results become DOWNLOADING tasks
 * with their WU's parameters and files (a result already known is left
 * alone; a result whose WU is missing from the reply is skipped with a
 * warning). A refused result (its own or its WU's `refused` set) becomes
 * nothing: it is logged and its name added to p->refused, which
 * ct_rpc_build_request reports as errors. *nnew gets the number of tasks
 * added. The caller removes
 * REPORTED tasks (after deleting their files) and saves the state. */
int ct_rpc_apply_reply(struct ct_project *p, const struct ct_sched_reply *r, double now,
		       int *nnew);

/* Forget the first n results of p->refused: they went out in a request
 * (each refused result is reported once; the server gives it to someone
 * else or resends it, and it is refused and reported again). */
void ct_rpc_forget_refused(struct ct_project *p, size_t n);

/* Number of tasks of p in progress (not DONE nor REPORTED). */
int ct_project_active_tasks(const struct ct_project *p);

/* Account RPC: build <account_request> for action "create" (name, email,
 * password) or "lookup" (email, password; name NULL). */
int ct_rpc_build_account(const char *action, const char *name, const char *email,
			 const char *password, struct ct_buf *b);

/* Parse <account_reply>: *key (malloc'd, 32 hex) and *user_name (malloc'd,
 * may be NULL). A reply with <error> gives CT_EAUTH / CT_EEXISTS / CT_EPROTO
 * / CT_EAGAIN with the server's message in the detail. */
int ct_rpc_parse_account(const void *data, size_t n, char **key, char **user_name);

#endif
