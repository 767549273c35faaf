/*
 * web_http.h - registration of the web pages with ctune-server's HTTP
 * front end (http.h). The server calls ct_web_register(srv) once, before the
 * http role starts.
 */
#ifndef CT_WEB_HTTP_H
#define CT_WEB_HTTP_H

struct ct_server;

/* Register the web module's route table with srv's HTTP front end (every
 * path listed in web.h). Returns 0 or CT_ETOOBIG (too many tables). */
int ct_web_register(struct ct_server *srv);

#endif
