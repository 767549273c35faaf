/*
 * web_mail.h - e-mail through the project's SMTP server (libcurl), for the
 * password-recovery links of /account/forgot (doc/web.md, doc/operator.md).
 *
 * The config keys, section [mail] of ctune-server.conf:
 *   smtp_url   smtp://HOST[:PORT] or smtps://HOST[:PORT]; empty (the
 *              default): no mail, the forgot page says to ask the operator
 *   from       the sender, "addr@example.org" or "Name <addr@example.org>"
 *   user, password   SMTP AUTH, when both are set
 *   tls        try (default: STARTTLS when the server offers it),
 *              required (refuse to send without it), none
 *   timeout    seconds one message may take (default 30, 1-600)
 * Every value is checked at the server's start (ct_web_register: a bad
 * one stops it, CT_ECONFIG naming the key) and again for each message.
 *
 * Threads: ct_mail_send() blocks; ct_mail_send_async() copies the message
 * and sends it from a detached thread (at most CT_MAIL_MAX_INFLIGHT at
 * once, more are refused), so a web request never waits for a mail server.
 */
#ifndef CT_WEB_MAIL_H
#define CT_WEB_MAIL_H

#include <stddef.h>

struct ct_conf;

#define CT_MAIL_ADDR_MAX 254		/* an address (RFC 5321's path limit) */
#define CT_MAIL_MAX_INFLIGHT 16
#define CT_MAIL_MSG_MAX (64u << 10)	/* a whole message, headers included */

enum ct_mail_tls { CT_MAIL_TLS_TRY, CT_MAIL_TLS_REQUIRED, CT_MAIL_TLS_NONE };

struct ct_mail_conf {
	char url[512];			/* "" : mail is off */
	char from[CT_MAIL_ADDR_MAX + 200];	/* the From: header as configured */
	char from_addr[CT_MAIL_ADDR_MAX + 1];	/* its bare address (envelope) */
	char user[256], password[256];
	enum ct_mail_tls tls;
	long timeout_s;
};

/* The [mail] keys of conf into *mc (url "" when smtp_url is unset). Returns
 * 0, or CT_ECONFIG for a bad value (a scheme other than smtp/smtps, no
 * from with a url, a from or value with a control character). */
int ct_mail_conf_load(const struct ct_conf *conf, struct ct_mail_conf *mc);

/* Whether `addr` can be a recipient: 3-254 bytes, one '@' with text on
 * both sides, no space, control character, '<', '>', '"', '(', ')', ',',
 * ';' or '\'. 1 or 0. */
int ct_mail_addr_ok(const char *addr);

/* Send a plain-text UTF-8 message from mc->from to `to` with `subject`
 * (one line, at most 200 bytes) and `body` (lines ending in "\n"; turned
 * into CRLF). Returns 0, CT_EINVAL (bad address or subject), CT_ETOOBIG
 * (over CT_MAIL_MSG_MAX), or CT_EIO naming what the mail server said. */
int ct_mail_send(const struct ct_mail_conf *mc, const char *to, const char *subject,
		 const char *body);

/* The same from a detached thread; copies everything. Returns 0 once the
 * thread runs (its outcome is logged), CT_EINVAL / CT_ETOOBIG as
 * ct_mail_send, CT_EBUSY with CT_MAIL_MAX_INFLIGHT messages on their way. */
int ct_mail_send_async(const struct ct_mail_conf *mc, const char *to, const char *subject,
		       const char *body);

#endif
