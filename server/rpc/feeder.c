/*
 * feeder.c - the scheduler's ready-to-send cache (see feeder.h): a sorted
 * array of slots under one mutex, refilled by one statement that reads
 * the candidates with their WU's sent replicas (one row per candidate and
 * replica, grouped here).
 */
#include "feeder.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_err.h"
#include "ct_hash.h"
#include "ct_log.h"
#include "ct_time.h"
#include "data/dl_sched.h"
#include "data/result_state.h"

#define INC_LIMIT 64	/* new results merged per look; more: refill */
/* While the cache holds at least this many free candidates, or the
 * database more unsent work than the cache, a request looks for new
 * results only when no request looked in the last CT_FEED_LOOK_S seconds:
 * under load one look serves many requests, and new work waits that long
 * at most. */
#define LOOK_BACKLOG (CT_FEED_SLOTS / 2)
#define INC_MARGIN 16	/* ids looked at again (inserts commit out of order) */
#define MAX_TAKE 64

struct slot {
	struct ct_feed_cand c;
	int busy;		/* leased to a request */
	int used;		/* in ord[] */
};

#define NEST 16		/* jobs' estimates kept */

struct est {
	int64_t jobid;		/* 0: empty */
	double at;		/* monotonic time it was read */
	struct ct_wlim_estimate e;
};

struct ct_feeder {
	pthread_mutex_t mu;
	pthread_cond_t filled;	/* signalled when a read ends */
	struct slot *s;		/* [CT_FEED_SLOTS], unordered */
	int ord[CT_FEED_SLOTS];	/* s[ord[0..n)] in dispatch order (moving
				 * ints, not slots, on insert and removal) */
	int n;
	int64_t seen;		/* highest result id looked at */
	double full_at;		/* monotonic time of the last full read (0: never) */
	double full_s;		/* seconds between full reads */
	double look_at;		/* monotonic time of the last look (0: never) */
	int complete;		/* that read found fewer unsent results than slots */
	int stale;		/* a full read is due */
	int filling;		/* a request is reading */
	int64_t lora_sig[2];	/* struct read_info's, at the last full read */
	struct est est[NEST];
};

int ct_feeder_new(struct ct_feeder **out, double full_s)
{
	struct ct_feeder *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (f == NULL)
		return CT_ENOMEM;
	f->s = calloc(CT_FEED_SLOTS, sizeof(*f->s));
	if (f->s == NULL || pthread_mutex_init(&f->mu, NULL) != 0) {
		free(f->s);
		free(f);
		return CT_ENOMEM;
	}
	if (pthread_cond_init(&f->filled, NULL) != 0) {
		pthread_mutex_destroy(&f->mu);
		free(f->s);
		free(f);
		return CT_ENOMEM;
	}
	f->full_s = full_s;
	*out = f;
	return 0;
}

void ct_feeder_free(struct ct_feeder *f)
{
	if (f == NULL)
		return;
	pthread_cond_destroy(&f->filled);
	pthread_mutex_destroy(&f->mu);
	free(f->s);
	free(f);
}

/* ---- reading ----------------------------------------------------------- */

/* What a read says besides its candidates. */
struct read_info {
	int64_t maxid;		/* MAX(result.id) */
	int64_t lora_sig[2];	/* job_lora: rows, sum of jobid */
	int64_t top;		/* highest candidate id read */
	int results;		/* candidates read (any state) */
};

/* The rows rows[0..nrows) (dl_sched.h) into out[0..*n) (unsent ones
 * only; cap slots). */
static void read_rows(const struct ct_sched_feed_row *rows, size_t nrows, struct slot *out,
		      int cap, int *n, struct read_info *ri)
{
	int64_t last = 0;
	struct slot *cur = NULL;

	*n = 0;
	for (size_t k = 0; k < nrows; k++) {
		const struct ct_sched_feed_row *r = &rows[k];

		ri->maxid = r->mx;
		ri->lora_sig[0] = r->nl;
		ri->lora_sig[1] = r->sl;
		if (r->id == 0)		/* no candidate at all */
			continue;
		if (r->id > ri->top)
			ri->top = r->id;
		if (r->id != last) {
			last = r->id;
			ri->results++;
			cur = NULL;
			if (r->state != CT_RS_UNSENT || r->wuid == 0 || *n == cap)
				continue;
			cur = &out[(*n)++];
			memset(cur, 0, sizeof(*cur));
			cur->c = (struct ct_feed_cand){ .resultid = r->id, .wuid = r->wuid,
				.jobid = r->jobid, .priority = r->priority, .roundid = r->roundid,
				.nwus = r->nwus, .lora = r->lora != 0 };
		}
		if (cur == NULL || r->o_hostid == 0)
			continue;
		if (cur->c.nheld == CT_FEED_HOLDERS) {
			cur->c.held_more = 1;
			continue;
		}
		struct ct_feed_holder *h = &cur->c.held[cur->c.nheld++];
		h->userid = r->o_userid;
		h->hostid = r->o_hostid;
		snprintf(h->cpid, sizeof(h->cpid), "%s", r->o_cpid);
		snprintf(h->net, sizeof(h->net), "%s", r->o_net);
	}
}

/* a sorts before b in dispatch order */
static int before(const struct ct_feed_cand *a, const struct ct_feed_cand *b)
{
	return a->priority > b->priority || (a->priority == b->priority && a->resultid < b->resultid);
}

#define SLOT(f, i) (&(f)->s[(f)->ord[i]])

/* The position in ord of result resultid, or -1. */
static int find(const struct ct_feeder *f, int64_t resultid)
{
	for (int i = 0; i < f->n; i++)
		if (SLOT(f, i)->c.resultid == resultid)
			return i;
	return -1;
}

/* Locked: drop position i of ord. */
static void drop(struct ct_feeder *f, int i)
{
	SLOT(f, i)->used = 0;
	memmove(&f->ord[i], &f->ord[i + 1], (size_t)(f->n - i - 1) * sizeof(f->ord[0]));
	f->n--;
}

/* Locked: the fresh slots fresh[0..n) replace the cache; leases carry over. */
static void put_full(struct ct_feeder *f, struct slot *fresh, int n)
{
	int64_t busy[MAX_TAKE * 8];
	int nbusy = 0;

	for (int i = 0; i < f->n && nbusy < (int)(sizeof(busy) / sizeof(busy[0])); i++)
		if (SLOT(f, i)->busy)
			busy[nbusy++] = SLOT(f, i)->c.resultid;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nbusy; k++)
			if (fresh[i].c.resultid == busy[k])
				fresh[i].busy = 1;
	memcpy(f->s, fresh, (size_t)n * sizeof(*fresh));
	for (int i = 0; i < CT_FEED_SLOTS; i++) {
		f->s[i].used = i < n;
		f->ord[i] = i;
	}
	f->n = n;
}

/* Locked: merge new slots, in dispatch order; what sorts after a full
 * cache is left for the next full read. */
static void put_new(struct ct_feeder *f, const struct slot *add, int n)
{
	for (int k = 0; k < n; k++) {
		int at = f->n, free_at = 0;

		if (find(f, add[k].c.resultid) >= 0)
			continue;
		while (at > 0 && before(&add[k].c, &SLOT(f, at - 1)->c))
			at--;
		if (at == CT_FEED_SLOTS) {	/* behind all the cache holds */
			f->complete = 0;
			continue;
		}
		if (f->n == CT_FEED_SLOTS) {
			if (SLOT(f, f->n - 1)->busy) {	/* leased: keep it, read later */
				f->complete = 0;
				continue;
			}
			drop(f, f->n - 1);	/* the last one goes */
			f->complete = 0;
		}
		while (f->s[free_at].used)
			free_at++;
		f->s[free_at] = add[k];
		f->s[free_at].used = 1;
		memmove(&f->ord[at + 1], &f->ord[at], (size_t)(f->n - at) * sizeof(f->ord[0]));
		f->ord[at] = free_at;
		f->n++;
	}
}

static int free_slots(const struct ct_feeder *f)
{
	int n = 0;

	for (int i = 0; i < f->n; i++)
		n += !SLOT(f, i)->busy;
	return n;
}

/* One read: the full one or the new results after `after`. */
static int read_some(struct ct_db *db, int full, int64_t after, struct slot *fresh, int *n,
		     struct read_info *ri)
{
	struct ct_sched_feed_row *rows = NULL;
	size_t nrows = 0;
	int rc;

	memset(ri, 0, sizeof(*ri));
	rc = ct_sched_feed_read(db, full, after, full ? CT_FEED_SLOTS : INC_LIMIT, &rows, &nrows);
	if (rc < 0)
		return rc;
	read_rows(rows, nrows, fresh, CT_FEED_SLOTS, n, ri);
	free(rows);
	return 0;
}

/* Locked: the cache after a read. */
static void put_read(struct ct_feeder *f, int full, struct slot *fresh, int n,
		     const struct read_info *ri, double now)
{
	if (full) {
		put_full(f, fresh, n);
		f->full_at = now;
		f->complete = n < CT_FEED_SLOTS;
		f->stale = 0;
		/* the highest id when the read began: a result inserted
		 * meanwhile is looked at next time */
		f->seen = ri->maxid;
		f->lora_sig[0] = ri->lora_sig[0];
		f->lora_sig[1] = ri->lora_sig[1];
		return;
	}
	put_new(f, fresh, n);
	if (ri->top > f->seen)
		f->seen = ri->top;
	if (ri->results >= INC_LIMIT)	/* more new work than one look takes */
		f->stale = 1;
}

/* Read what is due (one request at a time). */
static int refresh(struct ct_feeder *f, struct ct_db *db)
{
	struct slot *fresh = NULL;
	struct read_info ri;
	double now = ct_time_mono_s();
	int64_t after, seen, sig[2];
	int full, wholesale = 0, n = 0, rc;

	pthread_mutex_lock(&f->mu);
	/* the first read: wait for it rather than find nothing (a host told
	 * "no work" is held to its request_delay) */
	while (f->filling && f->full_at == 0)
		pthread_cond_wait(&f->filled, &f->mu);
	if (f->filling) {
		pthread_mutex_unlock(&f->mu);
		return 0;
	}
	full = f->full_at == 0 || now - f->full_at >= f->full_s || f->stale ||
	       (!f->complete && free_slots(f) < CT_FEED_SLOTS / 4);
	/* a look on every request only while the cache holds all the
	 * unsent work and little of it is free: new work is then all there
	 * is; with more unsent work in the database the full read refills */
	if (!full && now - f->look_at < CT_FEED_LOOK_S &&
	    (free_slots(f) >= LOOK_BACKLOG || !f->complete)) {
		pthread_mutex_unlock(&f->mu);
		return 0;
	}
	f->look_at = now;
	seen = f->seen;
	sig[0] = f->lora_sig[0];
	sig[1] = f->lora_sig[1];
	after = seen > INC_MARGIN ? seen - INC_MARGIN : 0;
	f->filling = 1;
	pthread_mutex_unlock(&f->mu);

	fresh = malloc((size_t)CT_FEED_SLOTS * sizeof(*fresh));
	rc = fresh ? 0 : CT_ENOMEM;
	if (rc == 0 && !full) {
		rc = read_some(db, 0, after, fresh, &n, &ri);
		/* out of date wholesale: read it all now */
		full = rc == 0 && (ri.maxid < seen || ri.lora_sig[0] != sig[0] ||
				   ri.lora_sig[1] != sig[1]);
		wholesale = full;
	}
	if (rc == 0 && full) {
		ct_log_debug("feeder: full read (stale %d, free %d, complete %d)", f->stale,
			     free_slots(f), f->complete);
		rc = read_some(db, 1, 0, fresh, &n, &ri);
	}
	pthread_mutex_lock(&f->mu);
	if (rc == 0 && full && wholesale)
		memset(f->est, 0, sizeof(f->est));
	if (rc == 0)
		put_read(f, full, fresh, n, &ri, now);
	f->filling = 0;
	pthread_cond_broadcast(&f->filled);
	pthread_mutex_unlock(&f->mu);
	free(fresh);
	return rc;
}

/* ---- taking ------------------------------------------------------------ */

/* 1 if the per-WU rules let h take c as far as the cache knows; else 0,
 * said in the debug log as the claim says it (the tests read it). */
static int may_take(const struct ct_feed_cand *c, const struct ct_elig_host *h)
{
	for (int i = 0; i < c->nheld; i++) {
		const char *why = ct_elig_replica_rule(h, c->held[i].userid, c->held[i].hostid,
						       c->held[i].cpid, c->held[i].net);
		if (why != NULL) {
			ct_log_debug("sched: host %" PRId64 ": not eligible for WU %" PRId64 " (%s)",
				     h->hostid, c->wuid, why);
			return 0;
		}
	}
	return 1;
}

static int listed(int64_t id, const int64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

int ct_feeder_take(struct ct_feeder *f, struct ct_db *db, const struct ct_elig_host *h,
		   int lora, const int64_t *skip, int nskip, struct ct_feed_cand *out, int max,
		   int *n)
{
	int win[MAX_TAKE * 4 + 8], nwin = 0, window, start = 0, rc;
	int64_t wus[MAX_TAKE * 4 + 8];
	uint32_t r = 0;

	*n = 0;
	if (max > MAX_TAKE)
		max = MAX_TAKE;
	if (max <= 0)
		return 0;
	rc = refresh(f, db);
	if (rc < 0)
		return rc;
	window = max * 4 + 8;
	pthread_mutex_lock(&f->mu);
	for (int i = 0; i < f->n && nwin < window; i++) {
		const struct ct_feed_cand *c = &SLOT(f, i)->c;

		if (SLOT(f, i)->busy || (c->lora && !lora) || listed(c->resultid, skip, nskip) ||
		    listed(c->wuid, wus, nwin) || !may_take(c, h))
			continue;
		wus[nwin] = c->wuid;
		win[nwin++] = i;
	}
	if (nwin > 0 && ct_random_bytes(&r, sizeof(r)) == 0)
		start = (int)(r % (uint32_t)nwin);
	for (int k = 0; k < nwin && *n < max; k++) {
		struct slot *s = SLOT(f, win[(start + k) % nwin]);

		s->busy = 1;
		out[(*n)++] = s->c;
	}
	pthread_mutex_unlock(&f->mu);
	return 0;
}

/* Locked: h holds a replica of WU wuid now (the cache's other replicas). */
static void add_holder(struct ct_feeder *f, int64_t wuid, const struct ct_elig_host *h)
{
	for (int i = 0; i < f->n; i++) {
		struct ct_feed_cand *c = &SLOT(f, i)->c;
		struct ct_feed_holder *x;

		if (c->wuid != wuid)
			continue;
		if (c->nheld == CT_FEED_HOLDERS) {
			c->held_more = 1;
			continue;
		}
		x = &c->held[c->nheld++];
		x->userid = h->userid;
		x->hostid = h->hostid;
		snprintf(x->cpid, sizeof(x->cpid), "%s", h->cpid ? h->cpid : "");
		snprintf(x->net, sizeof(x->net), "%s", h->net);
	}
}

void ct_feeder_done(struct ct_feeder *f, const struct ct_feed_cand *cands, const int *outcome,
		    int n, const struct ct_elig_host *h)
{
	pthread_mutex_lock(&f->mu);
	for (int k = 0; k < n; k++) {
		int i = find(f, cands[k].resultid);

		if (i < 0)
			continue;	/* a full read dropped it meanwhile */
		if (outcome[k] == CT_FEED_KEEP) {
			SLOT(f, i)->busy = 0;
			continue;
		}
		drop(f, i);
		if (outcome[k] == CT_FEED_CLAIMED)
			add_holder(f, cands[k].wuid, h);
	}
	pthread_mutex_unlock(&f->mu);
}

/* ---- deadline estimates -------------------------------------------------- */

int ct_feeder_estimate(struct ct_feeder *f, int64_t jobid, struct ct_wlim_estimate *e)
{
	double now = ct_time_mono_s();
	int hit = 0;

	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mu);
	for (int i = 0; i < NEST && !hit; i++)
		if (f->est[i].jobid == jobid && jobid != 0 && now - f->est[i].at < CT_FEED_EST_S) {
			*e = f->est[i].e;
			hit = 1;
		}
	pthread_mutex_unlock(&f->mu);
	return hit;
}

void ct_feeder_estimate_put(struct ct_feeder *f, int64_t jobid, const struct ct_wlim_estimate *e)
{
	double now = ct_time_mono_s();
	int at = 0;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	for (int i = 0; i < NEST; i++) {
		if (f->est[i].jobid == jobid) {
			at = i;
			break;
		}
		if (f->est[i].at < f->est[at].at)	/* else the oldest goes */
			at = i;
	}
	f->est[at] = (struct est){ .jobid = jobid, .at = now, .e = *e };
	pthread_mutex_unlock(&f->mu);
}
