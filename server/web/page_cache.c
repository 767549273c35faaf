/*
 * page_cache.c - single flight for the web content cache (page_cache.h).
 *
 * A handful of flights at once is all a server sees (one per page being
 * rebuilt), so they are a small array under one mutex, with one condition
 * variable every waiter watches. When the array is full the caller just
 * builds (no worse than without single flight).
 */
#include "page_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FLIGHTS 32
#define KEY_MAX 160

struct flight {
	char key[KEY_MAX];	/* "" free */
	struct timespec since;	/* CLOCK_MONOTONIC */
	unsigned gen;		/* changes when the slot is reused */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct flight flights[FLIGHTS];

static void init_cond(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&done, &a);
	pthread_condattr_destroy(&a);
}

static struct flight *find(const char *key)
{
	for (int i = 0; i < FLIGHTS; i++)
		if (flights[i].key[0] != '\0' && strcmp(flights[i].key, key) == 0)
			return &flights[i];
	return NULL;
}

/* Claim a slot for key; NULL when all are taken. */
static struct flight *claim(const char *key, const struct timespec *now)
{
	for (int i = 0; i < FLIGHTS; i++) {
		if (flights[i].key[0] == '\0') {
			snprintf(flights[i].key, KEY_MAX, "%s", key);
			flights[i].since = *now;
			flights[i].gen++;
			return &flights[i];
		}
	}
	return NULL;
}

int ct_page_flight_begin(const char *key)
{
	struct timespec now, until;
	struct flight *f;
	unsigned gen;
	int build = 1;

	if (strlen(key) >= KEY_MAX)
		return 1;	/* not tracked: build */
	pthread_once(&once, init_cond);
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&lock);
	f = find(key);
	if (f == NULL) {
		claim(key, &now);
		pthread_mutex_unlock(&lock);
		return 1;
	}
	/* someone builds it: wait until that flight ends or grows stale */
	until = f->since;
	until.tv_sec += CT_PAGE_FLIGHT_WAIT_S;
	gen = f->gen;
	while (f->key[0] != '\0' && f->gen == gen && strcmp(f->key, key) == 0) {
		if (pthread_cond_timedwait(&done, &lock, &until) != 0)
			break;	/* stale: take the flight over */
	}
	if (f->key[0] != '\0' && f->gen == gen && strcmp(f->key, key) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &f->since);	/* ours now */
	} else {
		build = 0;
	}
	pthread_mutex_unlock(&lock);
	return build;
}

void ct_page_flight_end(const char *key)
{
	struct flight *f;

	pthread_once(&once, init_cond);
	pthread_mutex_lock(&lock);
	f = find(key);
	if (f != NULL) {
		f->key[0] = '\0';
		pthread_cond_broadcast(&done);
	}
	pthread_mutex_unlock(&lock);
}
