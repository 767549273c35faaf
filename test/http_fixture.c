/*
 * http_fixture.c - see http_fixture.h.
 */
#include "http_fixture.h"
#include "ct_file.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

int ct_fx_collect(void **con_cls, const char *data, size_t *size, size_t cap,
		  struct ct_fx_conn **conn)
{
	struct ct_fx_conn *cn = *con_cls;

	*conn = cn;
	if (cn == NULL) {
		cn = calloc(1, sizeof(*cn));
		if (cn == NULL)
			abort();
		ct_buf_init(&cn->body, cap);
		*con_cls = cn;
		return 1;
	}
	if (*size > 0) {
		ct_buf_append(&cn->body, data, *size);
		*size = 0;
		return 1;
	}
	return 0;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct ct_fx_conn *cn = *con_cls;

	(void)cls; (void)c; (void)toe;
	if (cn != NULL) {
		ct_buf_free(&cn->body);
		free(cn);
	}
	*con_cls = NULL;
}

struct MHD_Daemon *ct_fx_start(const char *dir, int port, MHD_AccessHandlerCallback h,
			       void *cls)
{
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	char path[4200], buf[32];

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
			     (uint16_t)port, NULL, NULL, h, cls,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
	if (d == NULL)
		return NULL;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(buf, sizeof(buf), "%u\n", (unsigned)info->port);
	snprintf(path, sizeof(path), "%s/port", dir);
	ct_file_write_atomic(path, buf, strlen(buf), 0644);
	return d;
}

void ct_fx_wait_signal(void)
{
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!quit)
		pause();
}
