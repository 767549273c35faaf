/*
 * ratelimit.c - token buckets per exact key for the account actions (see
 * ratelimit.h). An IPv6 address is keyed by its /64.
 */
#include "ratelimit.h"

#include <ctype.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "proxy.h"

struct bucket {
	char key[CT_RL_KEYLEN];
	double tokens;
	int64_t t;		/* when tokens was computed */
	double burst, rate;	/* rate: tokens a second */
};

struct limit {
	const char *prefix, *burst_key, *rate_key;
	long burst, per_hour;
};

static const struct limit g_limits[] = {
	{ "login-ip", "limits.login_ip_burst", "limits.login_ip_per_hour", 10, 60 },
	{ "login-acct", "limits.login_acct_burst", "limits.login_acct_per_hour", 5, 12 },
	{ "signup-ip", "limits.signup_ip_burst", "limits.signup_ip_per_hour", 3, 6 },
	{ "reset-ip", "limits.reset_ip_burst", "limits.reset_ip_per_hour", 5, 20 },
	{ "reset-acct", "limits.reset_acct_burst", "limits.reset_acct_per_hour", 2, 4 },
};
enum { L_LOGIN_IP, L_LOGIN_ACCT, L_SIGNUP_IP, L_RESET_IP, L_RESET_ACCT };

/* The limits of each action: its per-address one, its per-account one. */
static const int g_action_limits[][2] = {
	[CT_RL_LOGIN] = { L_LOGIN_IP, L_LOGIN_ACCT },
	[CT_RL_SIGNUP] = { L_SIGNUP_IP, -1 },
	[CT_RL_RESET] = { L_RESET_IP, L_RESET_ACCT },
};

struct ct_rl {
	pthread_mutex_t lock;
	int n;
	struct bucket b[CT_RL_CAP];
};

int ct_rl_new(struct ct_rl **out)
{
	struct ct_rl *rl = calloc(1, sizeof(*rl));

	*out = NULL;
	if (rl == NULL)
		return CT_ENOMEM;
	pthread_mutex_init(&rl->lock, NULL);
	*out = rl;
	return 0;
}

void ct_rl_free(struct ct_rl *rl)
{
	if (rl == NULL)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

static double level(const struct bucket *b, int64_t now)
{
	double v = b->tokens + (double)(now - b->t) * b->rate;

	return v > b->burst ? b->burst : v;
}

/* Drop the buckets that are full again (the same as absent). */
static void sweep(struct ct_rl *rl, int64_t now)
{
	int j = 0;

	for (int i = 0; i < rl->n; i++)
		if (level(&rl->b[i], now) < rl->b[i].burst)
			rl->b[j++] = rl->b[i];
	rl->n = j;
}

/* The bucket of key, made full when new; NULL when the table is full
 * (the caller swept it first). */
static struct bucket *find(struct ct_rl *rl, const char *key, double burst, double rate,
			   int64_t now)
{
	struct bucket *b;

	for (int i = 0; i < rl->n; i++)
		if (strcmp(rl->b[i].key, key) == 0)
			return &rl->b[i];
	if (rl->n == CT_RL_CAP)
		return NULL;
	b = &rl->b[rl->n++];
	snprintf(b->key, sizeof(b->key), "%s", key);
	b->tokens = burst;
	b->t = now;
	b->burst = burst;
	b->rate = rate;
	return b;
}

static void limit_of(const struct ct_conf *conf, int which, double *burst, double *rate)
{
	const struct limit *l = &g_limits[which];
	long bu = l->burst, ph = l->per_hour;

	if (conf != NULL) {
		if (ct_conf_get_int(conf, l->burst_key, l->burst, 1, 1000000, &bu) < 0)
			bu = l->burst;
		if (ct_conf_get_int(conf, l->rate_key, l->per_hour, 1, 100000000, &ph) < 0)
			ph = l->per_hour;
	}
	*burst = (double)bu;
	*rate = (double)ph / 3600.0;
}

static int loopback(const char *ip)
{
	return strncmp(ip, "127.", 4) == 0 || strcmp(ip, "::1") == 0 ||
	       strncmp(ip, "::ffff:127.", 11) == 0;
}

/* The key text of address ip into out: ip itself, or "PREFIX::/64" for an
 * IPv6 address (a subscriber's /64 is one address here). */
static const char *addr_key(const char *ip, char out[CT_ADDR_STRLEN + 4])
{
	char net[CT_ADDR_STRLEN];
	struct ct_addr a;

	if (ct_addr_parse(ip, strlen(ip), &a) < 0 || a.family != AF_INET6)
		return ip;
	memset(a.b + 8, 0, 8);
	ct_addr_format(&a, net);
	snprintf(out, CT_ADDR_STRLEN + 4, "%s/64", net);
	return out;
}

int ct_rl_allow(struct ct_rl *rl, const struct ct_conf *conf, enum ct_rl_action action,
		const char *ip, const char *account, int64_t now, int *retry_s)
{
	char ipkey[CT_ADDR_STRLEN + 4];

	struct bucket *bs[2] = { NULL, NULL };
	int which[2], n = 0, ok = 1, lo = 0;
	char key[CT_RL_KEYLEN];

	*retry_s = 0;
	if (ip == NULL)
		ip = "";
	if (conf != NULL && ct_conf_get_bool(conf, "limits.loopback", 0, &lo) < 0)
		lo = 0;
	if (loopback(ip) && !lo)
		return 1;
	ip = addr_key(ip, ipkey);
	which[n++] = g_action_limits[action][0];
	if (g_action_limits[action][1] >= 0 && account != NULL && account[0] != '\0')
		which[n++] = g_action_limits[action][1];
	pthread_mutex_lock(&rl->lock);
	if (rl->n > CT_RL_CAP - 2)	/* before any find(): it keeps pointers */
		sweep(rl, now);
	for (int i = 0; i < n; i++) {
		const char *who = i == 1 ? account : ip;
		double burst, rate;
		size_t k;

		k = (size_t)snprintf(key, sizeof(key), "%s %s", g_limits[which[i]].prefix, who);
		/* e-mail addresses are case-insensitive here as in account.c */
		for (size_t j = strlen(g_limits[which[i]].prefix) + 1; j < k && j < sizeof(key); j++)
			key[j] = (char)tolower((unsigned char)key[j]);
		limit_of(conf, which[i], &burst, &rate);
		bs[i] = find(rl, key, burst, rate, now);
		if (bs[i] == NULL) {	/* full of keys being limited: fail closed */
			ok = 0;
			*retry_s = 60;
			continue;
		}
		bs[i]->tokens = level(bs[i], now);
		bs[i]->t = now;
		if (bs[i]->tokens < 1.0) {
			int w = (int)((1.0 - bs[i]->tokens) / bs[i]->rate) + 1;

			ok = 0;
			*retry_s = w > *retry_s ? w : *retry_s;
		}
	}
	if (ok)
		for (int i = 0; i < n; i++)
			bs[i]->tokens -= 1.0;
	pthread_mutex_unlock(&rl->lock);
	return ok;
}
