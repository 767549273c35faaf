/*
 * conn_guard.c - per-address connection counts and request deadlines (see
 * conn_guard.h).
 *
 * Connections live in a fixed array of max_conns slots with a free stack;
 * the sweep walks them all (a few thousand, once a tick). Counts live in
 * an open-addressing table of addresses, four times max_conns slots so it
 * never fills (each counted connection or request holds one address),
 * linear probing, deletion by shifting the run back (no tombstones).
 * An IPv6 address counts as its /64: one subscriber gets a whole /64 and
 * could otherwise open a connection from each of its addresses.
 */
#include "conn_guard.h"

#include <pthread.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"

struct ct_guard_conn {
	struct ct_addr addr;
	int used, exempt, killed, fd;
	enum ct_guard_phase phase;
	int64_t since;		/* when the phase began */
	uint64_t bytes;		/* body bytes in this phase */
};

struct count {
	struct ct_addr addr;
	int n;			/* 0: empty slot */
};

struct ct_guard {
	pthread_mutex_t lock;
	struct ct_guard_opts o;
	struct ct_guard_conn *conns;
	int *free_stack, nfree;
	struct count *counts;
	size_t mask;		/* counts has mask + 1 slots, a power of 2 */
};

int ct_guard_new(const struct ct_guard_opts *o, struct ct_guard **out)
{
	struct ct_guard *g;
	size_t slots = 16;

	*out = NULL;
	if (o->max_conns <= 0 || o->per_addr <= 0 || o->header_ms <= 0 || o->body_ms <= 0 ||
	    o->min_rate <= 0)
		return CT_EINVAL;
	while (slots < 4 * (size_t)o->max_conns)
		slots *= 2;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return CT_ENOMEM;
	g->o = *o;
	g->conns = calloc((size_t)o->max_conns, sizeof(*g->conns));
	g->free_stack = calloc((size_t)o->max_conns, sizeof(int));
	g->counts = calloc(slots, sizeof(*g->counts));
	if (g->conns == NULL || g->free_stack == NULL || g->counts == NULL) {
		ct_guard_free(g);
		return CT_ENOMEM;
	}
	g->mask = slots - 1;
	for (int i = 0; i < o->max_conns; i++)
		g->free_stack[g->nfree++] = o->max_conns - 1 - i;
	pthread_mutex_init(&g->lock, NULL);
	*out = g;
	return 0;
}

void ct_guard_free(struct ct_guard *g)
{
	if (g == NULL)
		return;
	if (g->conns && g->free_stack && g->counts)
		pthread_mutex_destroy(&g->lock);
	free(g->conns);
	free(g->free_stack);
	free(g->counts);
	free(g);
}

/* ---- the count table (locked by the caller) -------------------------------- */

static size_t hash(const struct ct_addr *a)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)a->family;

	for (int i = 0; i < 16; i++)
		h = (h ^ a->b[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

/* What a counts as: itself, or its /64 for IPv6. */
static struct ct_addr key_of(const struct ct_addr *a)
{
	struct ct_addr k = *a;

	if (k.family == AF_INET6)
		memset(k.b + 8, 0, 8);
	return k;
}

/* The slot of key k, or the empty slot where it would go. */
static size_t slot_of(const struct ct_guard *g, const struct ct_addr *k)
{
	size_t i = hash(k) & g->mask;

	while (g->counts[i].n != 0 && !ct_addr_equal(&g->counts[i].addr, k))
		i = (i + 1) & g->mask;
	return i;
}

static int count_of(const struct ct_guard *g, const struct ct_addr *a)
{
	struct ct_addr k = key_of(a);

	return g->counts[slot_of(g, &k)].n;
}

static void count_add(struct ct_guard *g, const struct ct_addr *a)
{
	struct ct_addr k = key_of(a);
	size_t i = slot_of(g, &k);

	g->counts[i].addr = k;
	g->counts[i].n++;
}

/* Take one off; an emptied slot is refilled from the rest of its run so
 * every lookup still finds its address before an empty slot. */
static void count_sub(struct ct_guard *g, const struct ct_addr *a)
{
	struct ct_addr k = key_of(a);
	size_t i = slot_of(g, &k), j = i;

	if (g->counts[i].n == 0 || --g->counts[i].n > 0)
		return;
	for (;;) {
		size_t home;

		j = (j + 1) & g->mask;
		if (g->counts[j].n == 0)
			break;
		home = hash(&g->counts[j].addr) & g->mask;
		/* j's entry may move to i when its home is not in (i, j] */
		if (((j - home) & g->mask) >= ((j - i) & g->mask)) {
			g->counts[i] = g->counts[j];
			g->counts[j].n = 0;
			i = j;
		}
	}
}

/* ---- connections ------------------------------------------------------------- */

int ct_guard_admit(struct ct_guard *g, const struct ct_addr *a)
{
	int ok;

	pthread_mutex_lock(&g->lock);
	ok = g->nfree > 0 && count_of(g, a) < g->o.per_addr;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

struct ct_guard_conn *ct_guard_open(struct ct_guard *g, const struct ct_addr *a, int exempt,
				    int fd, int64_t now_ms)
{
	struct ct_guard_conn *c = NULL;

	pthread_mutex_lock(&g->lock);
	if (g->nfree > 0) {
		c = &g->conns[g->free_stack[--g->nfree]];
		memset(c, 0, sizeof(*c));
		c->used = 1;
		c->addr = *a;
		c->exempt = exempt;
		c->fd = fd;
		c->phase = CT_GUARD_HEADERS;
		c->since = now_ms;
		if (!exempt)
			count_add(g, a);
	}
	pthread_mutex_unlock(&g->lock);
	return c;
}

void ct_guard_close(struct ct_guard *g, struct ct_guard_conn *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->used) {
		if (!c->exempt)
			count_sub(g, &c->addr);
		c->used = 0;
		g->free_stack[g->nfree++] = (int)(c - g->conns);
	}
	pthread_mutex_unlock(&g->lock);
}

void ct_guard_phase(struct ct_guard *g, struct ct_guard_conn *c, enum ct_guard_phase p,
		    int64_t now_ms)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	c->phase = p;
	c->since = now_ms;
	c->bytes = 0;
	pthread_mutex_unlock(&g->lock);
}

void ct_guard_body(struct ct_guard *g, struct ct_guard_conn *c, size_t n)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	c->bytes += n;
	pthread_mutex_unlock(&g->lock);
}

int ct_guard_acquire(struct ct_guard *g, const struct ct_addr *a)
{
	int ok;

	pthread_mutex_lock(&g->lock);
	ok = count_of(g, a) < g->o.per_addr;
	if (ok)
		count_add(g, a);
	pthread_mutex_unlock(&g->lock);
	return ok;
}

void ct_guard_release(struct ct_guard *g, const struct ct_addr *a)
{
	pthread_mutex_lock(&g->lock);
	count_sub(g, a);
	pthread_mutex_unlock(&g->lock);
}

int ct_guard_count(struct ct_guard *g, const struct ct_addr *a)
{
	int n;

	pthread_mutex_lock(&g->lock);
	n = count_of(g, a);
	pthread_mutex_unlock(&g->lock);
	return n;
}

/* The deadline of c, or INT64_MAX when it has none. */
static int64_t deadline(const struct ct_guard *g, const struct ct_guard_conn *c)
{
	if (c->exempt || c->phase == CT_GUARD_RESPONSE)
		return INT64_MAX;
	if (c->phase == CT_GUARD_HEADERS)
		return c->since + g->o.header_ms;
	return c->since + g->o.body_ms + (int64_t)(c->bytes * 1000 / (uint64_t)g->o.min_rate);
}

int ct_guard_sweep(struct ct_guard *g, int64_t now_ms, void (*kill)(void *cls, int fd),
		   void *cls)
{
	int n = 0;

	pthread_mutex_lock(&g->lock);
	for (int i = 0; i < g->o.max_conns; i++) {
		struct ct_guard_conn *c = &g->conns[i];

		if (!c->used || c->killed || now_ms <= deadline(g, c))
			continue;
		c->killed = 1;
		kill(cls, c->fd);
		n++;
	}
	pthread_mutex_unlock(&g->lock);
	return n;
}
