/*
 * service_posix.c - `ctune service install|uninstall|start|stop` where the
 * client is not a Windows service (client/service_win.c): on Linux it runs
 * as the systemd user unit that `make install` and the .deb put in place
 * (ctune.service), so each command prints the systemctl command that does
 * the job, and how to keep it running without a login. Exit status 0.
 */
#include "config.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *cmd, *what, *systemctl;
} steps[] = {
	{ "install", "start it at every login", "systemctl --user enable ctune" },
	{ "uninstall", "no longer start it", "systemctl --user disable --now ctune" },
	{ "start", "start it now", "systemctl --user start ctune" },
	{ "stop", "stop it (it checkpoints first)", "systemctl --user stop ctune" },
};

static int cmd_step(struct ct_cmd_ctx *ctx, int argc, char **argv)
{
	(void)ctx, (void)argc;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (strcmp(argv[0], steps[i].cmd) != 0)
			continue;
		printf("ctune runs as a systemd user service here (ctune.service, installed\n"
		       "with ctune). To %s:\n  %s\n", steps[i].what, steps[i].systemctl);
		if (i == 0)
			printf("To keep it running while nobody is logged in (a machine that\n"
			       "stays on):\n  sudo loginctl enable-linger $USER\n");
		return CT_EXIT_OK;
	}
	return CT_EXIT_USAGE;
}

#define STEP(n, s) { .name = n, .fn = cmd_step, .max_args = 0, \
	.usage = "", .summary = s }
static const struct ct_cmd_def install_cmd = STEP("install", "say how systemd starts the client");
static const struct ct_cmd_def uninstall_cmd = STEP("uninstall", "say how to stop that");
static const struct ct_cmd_def start_cmd = STEP("start", "say how to start it now");
static const struct ct_cmd_def stop_cmd = STEP("stop", "say how to stop it");
static const struct ct_cmd_def *const service_cmds[] = {
	&install_cmd, &uninstall_cmd, &start_cmd, &stop_cmd, NULL,
};

const struct ct_cmd_def ct_service_cmd = {
	.name = "service", .subs = service_cmds,
	.summary = "start with the system (a Windows service; systemd here)",
};
