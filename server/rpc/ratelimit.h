/*
 * ratelimit.h - exact rate limits on the account actions (web sign-in and
 * sign-up, the account RPC), per address and per account, checked before
 * any password hashing runs (doc/validation.md, "Accounts").
 *
 * Each limit is a token bucket per exact key ("login-ip 203.0.113.5",
 * "login-acct alice@example.org"): `burst` requests at once, refilled at
 * `per_hour` an hour. Keys are compared whole, so two addresses never
 * share a counter; an IPv6 address counts as its /64 (one subscriber's,
 * who could otherwise rotate through 2^64 addresses). The table holds at most CT_RL_CAP keys; a key whose
 * bucket has refilled is dropped (it is the same as absent), so the table
 * only fills with keys that are being limited right now; when it is full
 * of those a new key is refused (fail closed) rather than resetting
 * anyone's counter.
 *
 * The actions and their limits (config keys [limits], burst / per hour):
 *   login per address     login_ip_burst 10,   login_ip_per_hour 60
 *   login per account     login_acct_burst 5,  login_acct_per_hour 12
 *   sign-up per address   signup_ip_burst 3,   signup_ip_per_hour 6
 *   recovery mail per address  reset_ip_burst 5, reset_ip_per_hour 20
 *   recovery mail per account  reset_acct_burst 2, reset_acct_per_hour 4
 *     (the account is the e-mail address asked, whether or not an
 *     account has it, so the limit tells nothing about which do)
 * Loopback addresses are exempt (local tools, demos) unless
 * limits.loopback = 1. The address is the request's (req->remote_ip):
 * behind a proxy listed in http.trusted_proxies, the client's from the
 * proxy's header (proxy.h), so a local proxy no longer makes everyone
 * exempt.
 *
 * Threads: one table per server (struct ct_server.rl) behind its own
 * mutex; ct_rl_allow() is thread-safe.
 */
#ifndef CT_RATELIMIT_H
#define CT_RATELIMIT_H

#include <stdint.h>

#include "ct_conf.h"

#define CT_RL_CAP 4096
#define CT_RL_KEYLEN 300

enum ct_rl_action { CT_RL_LOGIN, CT_RL_SIGNUP, CT_RL_RESET };

struct ct_rl;

/* A new, empty table; *out is freed with ct_rl_free(). 0 or CT_ENOMEM. */
int ct_rl_new(struct ct_rl **out);
void ct_rl_free(struct ct_rl *rl);

/* Whether `action` from address ip (and for the account `account`, an
 * e-mail address or NULL) may run now; each call that is allowed takes
 * one token from every bucket it names. Returns 1 (go on) or 0 (refuse:
 * *retry_s is the seconds until it would be allowed, at least 1). */
int ct_rl_allow(struct ct_rl *rl, const struct ct_conf *conf, enum ct_rl_action action,
		const char *ip, const char *account, int64_t now, int *retry_s);

#endif
