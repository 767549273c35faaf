/*
 * http_fixture.h - what the stand-in HTTP servers of the client's tests
 * (test/cl_fake_server.c, test/hostile_proxy.c) share on libmicrohttpd: a
 * request body collected across the access handler's calls, a daemon on
 * a free port written to DIR/port, and running until SIGTERM or SIGINT.
 */
#ifndef CT_HTTP_FIXTURE_H
#define CT_HTTP_FIXTURE_H

#include <microhttpd.h>
#include <stddef.h>

#include "ct_buf.h"

/* The state of one connection: the request body so far (capped). */
struct ct_fx_conn {
	struct ct_buf body;
};

/* The start of an access handler: collects the body into *con_cls (a
 * ct_fx_conn of at most cap bytes, made on the first call). Returns 1 when
 * the handler must return MHD_YES at once (more is coming), 0 when the
 * request is complete and *conn is its connection state. */
int ct_fx_collect(void **con_cls, const char *data, size_t *size, size_t cap,
		  struct ct_fx_conn **conn);

/* Start a thread-per-connection daemon with handler h (cls its argument)
 * on port (0: any free one) and write the port it got to dir/port
 * atomically. NULL when it cannot listen. Stop with MHD_stop_daemon. */
struct MHD_Daemon *ct_fx_start(const char *dir, int port, MHD_AccessHandlerCallback h,
			       void *cls);

/* Return once SIGTERM or SIGINT has come. */
void ct_fx_wait_signal(void);

#endif
