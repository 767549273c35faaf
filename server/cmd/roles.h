/*
 * roles.h - the roles one ctune-server process can run, each in its own
 * thread: "http" (scheduler RPC, account RPC, uploads, downloads, web
 * pages) and the daemons "transitioner", "validator", "assimilator",
 * "file_deleter". `run --roles a,b` picks a subset; default all.
 *
 * A daemon role is a loop: the thread opens its own database connection,
 * then repeatedly calls run_once(srv, db) and sleeps idle_ms when it
 * returned 0 (nothing to do), goes again at once when it returned > 0
 * (that many items handled), and logs and sleeps when it returned < 0
 * (the connection is reopened after CT_EDB). It stops when srv->stop is
 * set. run_once must be safe to run in several processes at once (claim
 * rows with conditional UPDATEs) and must leave no transaction open; the
 * validator, transitioner and assimilator take only their instance's
 * share of the candidates (ct_instance_share(), instance.h). The item
 * daemons (transitioner, validator, assimilator, purge) are one pass each
 * of daemon_pass.h: claim, handle, and one policy for an item that fails
 * (logged, backed off, never blocking the rest); the file deleter marks a
 * file it cannot delete as failed in its row instead. Each thread
 * beats into role_heartbeat every 5 s, sleeping too, and deletes its row
 * when it stops cleanly.
 *
 * The daemon functions are written in server/daemons/transitioner.c, validator.c,
 * assimilator.c, file_deleter.c and purge.c, all in server/libctserver.a;
 * roles.c's table ct_roles lists every role (so roles.c sits above every
 * layer that has one: here in cmd/, with the commands that start them).
 */
#ifndef CT_ROLES_H
#define CT_ROLES_H

#include "daemons/daemons.h"

struct ct_server;
struct ct_db;

/* The daemons' run_once functions are declared in daemons/daemons.h. */

struct ct_role {
	const char *name;
	/* NULL for the http role (it runs on libmicrohttpd's threads) */
	int (*run_once)(struct ct_server *srv, struct ct_db *db);
	int idle_ms;		/* sleep when run_once returned 0 */
};

/* The table of roles, terminated by an entry with name NULL. */
extern const struct ct_role ct_roles[];

/* The role named name, or NULL. */
const struct ct_role *ct_role_find(const char *name);

/* Start a thread per selected role (comma-separated names; NULL or "all":
 * every role that is built) and wait until srv->stop is set and every
 * thread ended. Returns 0, CT_EINVAL (unknown role; detail names it) or
 * the first fatal start error. */
int ct_roles_run(struct ct_server *srv, const char *roles);

/* 1 if the selection (as for ct_roles_run) includes "http". */
int ct_roles_wants_http(const char *roles);

#endif
