/*
 * page_cache.c - the web content cache and its single flight
 * (page_cache.h).
 *
 * A handful of flights at once is all a server sees (one per page being
 * rebuilt), so they are a small array under one mutex, with one condition
 * variable every waiter watches. When the array is full the caller just
 * builds (no worse than without single flight). The content store is 64
 * slots; a put evicts the entry that expires first.
 */
#include "page_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_clock.h"
#include "ct_err.h"

#define FLIGHTS 32
#define KEY_MAX 160
#define SLOTS 64
#define ENTRY_MAX (1u << 20)	/* bigger pages are not cached */

struct flight {
	char key[KEY_MAX];	/* "" free */
	struct timespec since;	/* CLOCK_MONOTONIC */
	unsigned gen;		/* changes when the slot is reused */
};

struct entry {
	char *key;
	unsigned char *data;
	size_t len;
	double expires;		/* on the cache's monotonic clock */
};

struct ct_page_cache {
	const struct ct_clock *clock;
	pthread_mutex_t lock;	/* flights */
	pthread_cond_t done;	/* a flight ended (CLOCK_MONOTONIC waits) */
	struct flight flights[FLIGHTS];
	pthread_mutex_t store_lock;
	struct entry slots[SLOTS];
	int ttl;		/* seconds; 0: off */
};

int ct_page_cache_new(struct ct_page_cache **out, const struct ct_clock *clock)
{
	struct ct_page_cache *pc = calloc(1, sizeof(*pc));
	pthread_condattr_t a;

	*out = NULL;
	if (pc == NULL)
		return CT_ENOMEM;
	pc->clock = clock != NULL ? clock : &ct_clock_system;
	pc->ttl = 5;
	pthread_mutex_init(&pc->lock, NULL);
	pthread_mutex_init(&pc->store_lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&pc->done, &a);
	pthread_condattr_destroy(&a);
	*out = pc;
	return 0;
}

void ct_page_cache_free(struct ct_page_cache *pc)
{
	if (pc == NULL)
		return;
	for (int i = 0; i < SLOTS; i++) {
		free(pc->slots[i].key);
		free(pc->slots[i].data);
	}
	pthread_cond_destroy(&pc->done);
	pthread_mutex_destroy(&pc->lock);
	pthread_mutex_destroy(&pc->store_lock);
	free(pc);
}

/* ---- single flight ------------------------------------------------------ */

static struct flight *find(struct ct_page_cache *pc, const char *key)
{
	for (int i = 0; i < FLIGHTS; i++)
		if (pc->flights[i].key[0] != '\0' && strcmp(pc->flights[i].key, key) == 0)
			return &pc->flights[i];
	return NULL;
}

/* Claim a slot for key; NULL when all are taken. */
static struct flight *claim(struct ct_page_cache *pc, const char *key,
			    const struct timespec *now)
{
	for (int i = 0; i < FLIGHTS; i++) {
		struct flight *f = &pc->flights[i];

		if (f->key[0] == '\0') {
			snprintf(f->key, KEY_MAX, "%s", key);
			f->since = *now;
			f->gen++;
			return f;
		}
	}
	return NULL;
}

int ct_page_flight_begin(struct ct_page_cache *pc, const char *key)
{
	struct timespec now, until;
	struct flight *f;
	unsigned gen;
	int build = 1;

	if (strlen(key) >= KEY_MAX)
		return 1;	/* not tracked: build */
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&pc->lock);
	f = find(pc, key);
	if (f == NULL) {
		claim(pc, key, &now);
		pthread_mutex_unlock(&pc->lock);
		return 1;
	}
	/* someone builds it: wait until that flight ends or grows stale */
	until = f->since;
	until.tv_sec += CT_PAGE_FLIGHT_WAIT_S;
	gen = f->gen;
	while (f->key[0] != '\0' && f->gen == gen && strcmp(f->key, key) == 0) {
		if (pthread_cond_timedwait(&pc->done, &pc->lock, &until) != 0)
			break;	/* stale: take the flight over */
	}
	if (f->key[0] != '\0' && f->gen == gen && strcmp(f->key, key) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &f->since);	/* ours now */
	} else {
		build = 0;
	}
	pthread_mutex_unlock(&pc->lock);
	return build;
}

void ct_page_flight_end(struct ct_page_cache *pc, const char *key)
{
	struct flight *f;

	pthread_mutex_lock(&pc->lock);
	f = find(pc, key);
	if (f != NULL) {
		f->key[0] = '\0';
		pthread_cond_broadcast(&pc->done);
	}
	pthread_mutex_unlock(&pc->lock);
}

/* ---- content store ------------------------------------------------------ */

void ct_page_cache_set_ttl(struct ct_page_cache *pc, int ttl_s)
{
	pthread_mutex_lock(&pc->store_lock);
	pc->ttl = ttl_s < 0 ? 0 : ttl_s > 3600 ? 3600 : ttl_s;
	pthread_mutex_unlock(&pc->store_lock);
}

static int ttl_of(struct ct_page_cache *pc)
{
	int ttl;

	pthread_mutex_lock(&pc->store_lock);
	ttl = pc->ttl;
	pthread_mutex_unlock(&pc->store_lock);
	return ttl;
}

static int lookup(struct ct_page_cache *pc, const char *key, struct ct_buf *out)
{
	double now = ct_clock_mono(pc->clock);
	int hit = 0;

	pthread_mutex_lock(&pc->store_lock);
	for (int i = 0; i < SLOTS; i++) {
		const struct entry *e = &pc->slots[i];

		if (e->key != NULL && e->expires > now && strcmp(e->key, key) == 0) {
			hit = ct_buf_append(out, e->data, e->len) == 0;
			break;
		}
	}
	pthread_mutex_unlock(&pc->store_lock);
	return hit;
}

int ct_page_cache_get(struct ct_page_cache *pc, const char *key, struct ct_buf *out)
{
	if (ttl_of(pc) <= 0)
		return 0;
	for (int tries = 0; tries < 3; tries++) {
		if (lookup(pc, key, out))
			return 1;
		if (ct_page_flight_begin(pc, key))
			return 0;	/* ours to build: put or abandon ends it */
	}
	return 0;
}

void ct_page_cache_abandon(struct ct_page_cache *pc, const char *key)
{
	ct_page_flight_end(pc, key);
}

void ct_page_cache_put(struct ct_page_cache *pc, const char *key, const struct ct_buf *data)
{
	double now = ct_clock_mono(pc->clock);
	int ttl = ttl_of(pc), victim = 0;
	unsigned char *d = NULL;
	char *k = NULL;

	if (ttl <= 0 || data->len > ENTRY_MAX)
		goto out;
	k = strdup(key);
	d = malloc(data->len ? data->len : 1);
	if (k == NULL || d == NULL)
		goto out;
	memcpy(d, data->data ? data->data : (unsigned char *)"", data->len);
	pthread_mutex_lock(&pc->store_lock);
	for (int i = 0; i < SLOTS; i++) {
		if (pc->slots[i].key != NULL && strcmp(pc->slots[i].key, key) == 0) {
			victim = i;
			break;
		}
		if (pc->slots[i].expires < pc->slots[victim].expires)
			victim = i;
	}
	free(pc->slots[victim].key);
	free(pc->slots[victim].data);
	pc->slots[victim] = (struct entry){ .key = k, .data = d, .len = data->len,
					    .expires = now + ttl };
	k = NULL;
	d = NULL;
	pthread_mutex_unlock(&pc->store_lock);
out:
	free(k);
	free(d);
	ct_page_flight_end(pc, key);
}
