/*
 * sched_rpc.h - the scheduler RPC (POST /rpc/scheduler; doc/protocol.md):
 * authenticate, register or recognise the host and its devices, take
 * reports of finished results, tell the client which results to abort,
 * resend lost ones, and hand out new results.
 *
 * Handing out: candidates are unsent results of WUs where the account has
 * no result yet; each is claimed in a transaction that locks its WU row,
 * re-checks the account, and flips the result with
 *   UPDATE result SET server_state=IN_PROGRESS, hostid=... WHERE id=? AND
 *   server_state=UNSENT
 * counting affected rows, so any number of scheduler threads or processes
 * never hand out one result twice nor two results of a WU to one account.
 * Sending a result pulls the WU's transition_time down to the deadline;
 * a report sets it to now (the transitioner's contract).
 */
#ifndef CT_SCHED_RPC_H
#define CT_SCHED_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "ct_buf.h"
#include "http.h"

struct ct_server;
struct ct_db;

/* Caps on what one request may carry. */
#define CT_SCHED_MAX_DEVICES 16
#define CT_SCHED_MAX_REPORTS 64
#define CT_SCHED_MAX_OTHER 256
#define CT_SCHED_MAX_WANT 16

/* One scheduler RPC: body (n bytes, already gunzipped) in, the XML reply
 * appended to out and the HTTP status in *status. Returns 0 when a reply
 * (maybe an error reply) was written; < 0 only for failures that leave no
 * reply (out of memory, reply over out's cap). */
int ct_sched_rpc(struct ct_server *srv, struct ct_db *db, const void *body, size_t n,
		 const char *remote_ip, struct ct_buf *out, int *status);

extern const struct ct_http_route ct_sched_routes[];

#endif
