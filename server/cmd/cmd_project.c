/*
 * cmd_project.c - `ctune-server project show DIR`: what identifies the
 * project to outsiders: its name, URL and the public half of the key that
 * signs its round receipts (data/project_key.h, doc/receipts.md), and how
 * many receipts it has signed.
 */
#include "commands.h"
#include "data/db.h"
#include "data/dl_receipt.h"
#include "data/server.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <inttypes.h>

static int cmd_show(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	char key[2 * CT_SIGN_PUB_LEN + 1];
	const char *name = "crowdtune";
	int64_t n = 0;
	int rc;

	(void)argc;
	(void)argv;
	ct_conf_get_str(ctx->srv->conf, "name", "crowdtune", &name);
	rc = ct_dl_receipt_count(ctx->db, &n);
	if (rc < 0)
		return rc;
	ct_hex_encode(ctx->srv->sign_pub, CT_SIGN_PUB_LEN, key);
	fprintf(ctx->out, "project %s\nname %s\nurl %s\nreceipt key %s (Ed25519, %s/%s)\n"
		"receipts %" PRId64 "\n", ctx->srv->dir, name,
		ctx->srv->base_url[0] ? ctx->srv->base_url : "(none set)", key, ctx->srv->dir,
		"signing.key", n);
	return 0;
}

static const struct ct_cmd_def project_show = {
	.name = "show", .fn = cmd_show, .min_args = 1, .max_args = 1,
	.flags = CT_CMD_PROJECT, .usage = "DIR",
	.summary = "the project's name, URL and receipt signing key (public half)",
};
static const struct ct_cmd_def *const project_cmds[] = { &project_show, NULL };
const struct ct_cmd_def ct_project_cmd = {
	.name = "project", .subs = project_cmds,
	.summary = "show what identifies the project (its receipt key)",
};
