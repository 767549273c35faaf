/*
 * web_seed - make a populated project for the browser tests (no server may
 * hold the project while it runs):
 *
 *   test/web_seed DIR
 *
 * creates the project DIR through test/web_fixture.c (accounts, a job,
 * hosts through scheduler RPCs, credit through the validator's call),
 * submits a second job ("e2e": 2 shards x 2 rounds, 2 replicas) for real
 * clients to run, from text (`job submit --train-text` on a licence text
 * Debian ships, bytes tokenizer, so its page gets per-round samples),
 * writes the stats export, and prints
 *   job<TAB>id            the job whose results the fixture's hosts hold
 *   e2e<TAB>id            the job left for real clients
 *   user<TAB>id<TAB>total_credit<TAB>account key<TAB>name
 * (users highest total credit first).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/commands.h"
#include "ct_err.h"
#include "ct_file.h"
#include "ct_gpt2.h"
#include "web/web.h"
#include "web_fixture.h"

#define SEED_TEXT "/usr/share/common-licenses/BSD"

/* The "e2e" job, through the operator's own `job submit --train-text`. */
static int submit_text_job(struct web_fx *fx, int64_t *jobid)
{
	const struct ct_model_config cfg = { .maxT = 16, .V = 256, .L = 1,
					    .NH = 2, .C = 8, .Vp = 256 };
	struct ct_gpt2 m = { 0 };
	char model[4200], out[64] = "";
	char *argv[] = { "submit", "--name", "e2e", "--model", model, "--train-text",
			 SEED_TEXT, "--eval-fraction", "0.2", "--shards", "2", "--rounds",
			 "2", "--steps", "2", "--batch", "1", "--seq", "8", "--lr", "1e-3",
			 "--quorum", "2", "--replicas", "2", "--sample-prompt", "Copyright ",
			 "--allow-random-base", NULL };
	struct ct_cmd_ctx ctx = { .srv = &fx->srv, .db = fx->db, .cwd = "/" };
	char *words[] = { "job", "submit", NULL };
	const struct ct_cmd_def *cmd;
	int nw = 0, rc;

	rc = ct_path_join(model, sizeof(model), fx->dir, "text-model.bin");
	if (rc == 0)
		rc = ct_gpt2_alloc(&m, &cfg);
	if (rc == 0)
		rc = ct_gpt2_init_random(&cfg, 42, m.params);
	if (rc == 0)
		rc = ct_gpt2_save(model, &cfg, m.params);
	ct_gpt2_free(&m);
	cmd = ct_cmd_lookup(ct_project_cmds, 2, words, &nw);
	ctx.out = fmemopen(out, sizeof(out) - 1, "w");
	if (rc == 0 && (cmd == NULL || ctx.out == NULL))
		rc = ct_error(CT_EINVAL, "no job submit");
	if (rc == 0)
		rc = cmd->fn(&ctx, (int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
	if (ctx.out != NULL)
		fclose(ctx.out);
	if (rc == 0 && sscanf(out, "job %" SCNd64, jobid) != 1)
		rc = ct_error(CT_EINVAL, "job submit printed '%s'", out);
	return rc;
}

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
		rc = submit_text_job(&fx, &e2e);
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
