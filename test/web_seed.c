/*
 * web_seed - make a populated project for the browser tests (no server may
 * hold the project while it runs):
 *
 *   test/web_seed DIR
 *
 * creates the project DIR through test/web_fixture.c (accounts, a job,
 * hosts through scheduler RPCs, credit through the validator's call),
 * submits a second job ("e2e": 2 shards x 2 rounds, 2 replicas) for real
 * clients to run, writes the stats export, and prints
 *   job<TAB>id            the job whose results the fixture's hosts hold
 *   e2e<TAB>id            the job left for real clients
 *   user<TAB>id<TAB>total_credit<TAB>account key<TAB>name
 * (users highest total credit first).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ct_err.h"
#include "web.h"
#include "web_fixture.h"

int main(int argc, char **argv)
{
	static struct web_fx fx;
	int64_t e2e = 0;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	rc = web_fx_open(&fx, argv[1]);
	if (rc == 0)
		rc = web_fx_seed(&fx, 5, 10.0);
	if (rc == 0)
		rc = web_fx_submit(&fx, "e2e", 2, 2, 2, &e2e);
	if (rc == 0)
		rc = ct_stats_export(&fx.srv, fx.db);
	if (rc < 0) {
		fprintf(stderr, "web_seed: %s\n", ct_errmsg(rc));
		web_fx_close(&fx);
		return 1;
	}
	printf("job\t%lld\n", (long long)fx.jobid);
	printf("e2e\t%lld\n", (long long)e2e);
	for (size_t i = fx.nusers; i-- > 0;)
		printf("user\t%lld\t%.17g\t%s\t%s\n", (long long)fx.users[i].id,
		       fx.users[i].credit, fx.users[i].key, fx.users[i].name);
	web_fx_close(&fx);
	return 0;
}
