/*
 * bench_verify.c - how much volunteer compute goes to verification: a
 * simulation of quorum-2 replication against BOINC-style adaptive
 * replication, with a few cheating hosts to show how fast they are caught.
 *
 *   bench/bench_verify [--wus N] [--hosts N] [--cheaters N] [--window N]
 *                      [--seed S]
 *
 * The model (one WU at a time, in order; no network, no database):
 * - each WU's first result goes to a host drawn uniformly from all hosts;
 * - adaptive policy: the scheduler asks ct_trust_decide() (trust.h) - the very
 *   function the server's scheduler calls (server/validate/quorum.c, linked in) -
 *   with that host's consecutive valid results n: with n >= 10 it sends
 *   the WU unreplicated with probability 1 - 1/n, and the single result is
 *   accepted on its own; otherwise the WU needs a quorum of 2;
 * - quorum policy: always a quorum of 2;
 * - a replicated WU gets results from distinct random hosts until two
 *   agree (at most 6 results). Honest results agree with each other; a
 *   cheater's result agrees with nothing (no collusion). Results that
 *   disagree with the canonical one are invalid and reset their host's n
 *   to 0 (the validator); every other accepted result adds 1 to n -
 *   including a bad result accepted alone, which nobody can tell apart;
 * - cheaters (among the hosts): "always" returns garbage every time;
 *   "patient" is honest until its n reaches 20 (replication chance 1/20),
 *   then cheats every time; "sometimes" cheats on 10% of its results.
 *
 * Replication overhead = (results computed - WUs) / results computed: the
 * fraction of all volunteer compute spent re-doing work (quorum 2: 50%).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemons/daemons.h"
#include "validate/trust.h"

#define MAX_REPLICAS 6
#define NKINDS 4

enum kind { HONEST = 0, ALWAYS, PATIENT, SOMETIMES };

static const char *const kind_name[NKINDS] = { "honest", "always", "patient", "sometimes" };

struct host {
	enum kind kind;
	int n;				/* consecutive valid results */
	int caught;			/* ever invalid: never trusted again */
};

/* Per-kind counters. */
struct kstats {
	int hosts;
	long results, bad, detected, accepted_bad;
	long first_detected;		/* WU index, -1: never */
};

/* Counters of one window of WUs (or of the whole run). */
struct wstats {
	long wus, results, replicated, detected, accepted_bad;
};

struct sim {
	int adaptive;
	uint64_t rng;
	struct host *h;
	int nhosts;
	struct kstats k[NKINDS];
};

struct opts {
	long wus, window;
	int hosts, cheaters;
	uint64_t seed;
};

/* splitmix64 */
static uint64_t rnd(struct sim *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double urand(struct sim *s)
{
	return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Does host i return garbage this time? */
static int cheats(struct sim *s, int i)
{
	switch (s->h[i].kind) {
	case ALWAYS: return 1;
	case PATIENT: return s->h[i].n >= 20;
	case SOMETIMES: return urand(s) < 0.1;
	default: return 0;
	}
}

/* A host not among the first `used` of ids[]. */
static int pick_other(struct sim *s, const int *ids, int used)
{
	for (;;) {
		int i = (int)(rnd(s) % (uint64_t)s->nhosts), dup = 0;

		for (int j = 0; j < used; j++)
			dup = dup || ids[j] == i;
		if (!dup)
			return i;
	}
}

/* Book one result of host i: verdict 1 valid (accepted: as canonical or
 * agreeing with it), 0 invalid (the validator resets the host's trust),
 * -1 none (the WU failed without a quorum). bad: it was garbage. */
static void account(struct sim *s, int i, int verdict, int bad, long wu, struct wstats *w)
{
	struct kstats *k = &s->k[s->h[i].kind];

	k->results++;
	k->bad += bad;
	if (verdict > 0) {
		s->h[i].n++;
		k->accepted_bad += bad;
		w->accepted_bad += bad;
	} else if (verdict == 0) {
		s->h[i].n = 0;
		s->h[i].caught = 1;
		k->detected++;
		w->detected++;
		if (k->first_detected < 0)
			k->first_detected = wu;
	}
}

/* The scheduler's rule (trust.h, ct_trust_decide): 10 valid in a row,
 * never caught, a spot-check floor of 10%; rounds and age are not
 * simulated (every host counts as old enough). */
static int trusted(struct sim *s, int i, double u)
{
	struct ct_trust_limits l = { .min_valid = 10, .min_rounds = 1, .min_age = 0,
				     .floor = 0.1 };
	struct ct_trust_host h = { .consecutive_valid = s->h[i].n, .nrounds = 1,
				   .first_valid = 1, .caught = s->h[i].caught };

	return ct_trust_decide(&h, &l, 1, u);
}

/* Run WU number `wu`. */
static void one_wu(struct sim *s, long wu, struct wstats *w)
{
	int ids[MAX_REPLICAS], bad[MAX_REPLICAS], nres = 1, honest = 0;

	ids[0] = (int)(rnd(s) % (uint64_t)s->nhosts);
	w->wus++;
	if (s->adaptive && trusted(s, ids[0], urand(s))) {
		int b = cheats(s, ids[0]);

		w->results++;
		account(s, ids[0], 1, b, wu, w);
		return;
	}
	w->replicated++;
	bad[0] = cheats(s, ids[0]);
	honest = !bad[0];
	/* Results until two agree: only honest ones ever agree. */
	while (honest < 2 && nres < MAX_REPLICAS) {
		ids[nres] = pick_other(s, ids, nres);
		bad[nres] = cheats(s, ids[nres]);
		honest += !bad[nres];
		nres++;
	}
	w->results += nres;
	for (int j = 0; j < nres; j++)
		account(s, ids[j], honest >= 2 ? !bad[j] : -1, bad[j], wu, w);
}

static void sim_init(struct sim *s, const struct opts *o, int adaptive)
{
	memset(s, 0, sizeof(*s));
	s->adaptive = adaptive;
	s->rng = o->seed;
	s->nhosts = o->hosts;
	s->h = calloc((size_t)o->hosts, sizeof(*s->h));
	for (int i = 0; i < NKINDS; i++)
		s->k[i].first_detected = -1;
	/* Cheaters spread over the host ids, kinds in turn. */
	for (int c = 0; c < o->cheaters && s->h; c++)
		s->h[(int)((long)c * o->hosts / o->cheaters)].kind = (enum kind)(1 + c % 3);
	for (int i = 0; i < o->hosts && s->h; i++)
		s->k[s->h[i].kind].hosts++;
}

static void print_window(const char *policy, long from, long to, const struct wstats *w)
{
	printf("| %s | %ld-%ld | %ld | %.1f%% | %.1f%% | %ld | %ld |\n", policy, from, to,
	       w->results, 100.0 * (double)(w->results - w->wus) / (double)w->results,
	       100.0 * (double)w->replicated / (double)w->wus, w->detected, w->accepted_bad);
}

static void print_cheaters(const char *policy, const struct sim *s)
{
	for (int i = 1; i < NKINDS; i++) {
		const struct kstats *k = &s->k[i];

		if (k->hosts == 0)
			continue;
		printf("| %s | %s | %d | %ld | %ld | %ld | %ld | ", policy, kind_name[i],
		       k->hosts, k->results, k->bad, k->detected, k->accepted_bad);
		if (k->first_detected >= 0)
			printf("%ld |\n", k->first_detected + 1);
		else
			printf("never |\n");
	}
}

/* One policy over all WUs; prints its windows, fills *total. */
static int run_policy(const struct opts *o, int adaptive, struct sim *s, struct wstats *total)
{
	const char *name = adaptive ? "adaptive" : "quorum 2";
	struct wstats w = { 0 };

	sim_init(s, o, adaptive);
	if (s->h == NULL) {
		fprintf(stderr, "bench_verify: out of memory\n");
		return 1;
	}
	memset(total, 0, sizeof(*total));
	for (long wu = 0; wu < o->wus; wu++) {
		one_wu(s, wu, &w);
		if (w.wus == o->window || wu + 1 == o->wus) {
			print_window(name, wu + 2 - w.wus, wu + 1, &w);
			total->wus += w.wus;
			total->results += w.results;
			total->replicated += w.replicated;
			total->detected += w.detected;
			total->accepted_bad += w.accepted_bad;
			memset(&w, 0, sizeof(w));
		}
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: bench_verify [--wus N] [--hosts N] [--cheaters N] [--window N]\n"
	      "                    [--seed S]\n"
	      "Simulates quorum-2 and adaptive replication (server/validate/quorum.c's\n"
	      "ct_adaptive_decide) and prints the share of volunteer compute spent\n"
	      "on replication over time and how cheating hosts are caught.\n"
	      "Defaults: 10000 WUs, 100 hosts, 6 cheaters, windows of 1000, seed 1.\n", f);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "wus", required_argument, NULL, 'w' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "cheaters", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .wus = 10000, .window = 1000, .hosts = 100, .cheaters = 6,
			    .seed = 1 };
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'w': o->wus = atol(optarg); break;
		case 'n': o->hosts = atoi(optarg); break;
		case 'c': o->cheaters = atoi(optarg); break;
		case 'i': o->window = atol(optarg); break;
		case 's': o->seed = strtoull(optarg, NULL, 10); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	/* MAX_REPLICAS distinct hosts must exist for every WU. */
	if (optind != argc || o->wus < 1 || o->wus > 100000000 || o->window < 1 ||
	    o->hosts < MAX_REPLICAS || o->hosts > 1000000 || o->cheaters < 0 ||
	    o->cheaters > o->hosts) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct sim s[2] = { 0 };
	struct wstats tot[2];
	int rc = parse(argc, argv, &o);

	if (rc != 0)
		return rc;
	printf("## verification cost (%ld WUs, %d hosts of which %d cheat, seed %llu)\n\n",
	       o.wus, o.hosts, o.cheaters, (unsigned long long)o.seed);
	printf("| policy | WUs | results computed | replication overhead | WUs replicated |"
	       " cheats detected | bad results accepted |\n|---|---|---|---|---|---|---|\n");
	for (int a = 0; a < 2 && rc == 0; a++)
		rc = run_policy(&o, a, &s[a], &tot[a]);
	if (rc == 0) {
		printf("\n| policy | WUs | results computed | replication overhead |"
		       " WUs replicated | cheats detected | bad results accepted |\n"
		       "|---|---|---|---|---|---|---|\n");
		print_window("quorum 2", 1, o.wus, &tot[0]);
		print_window("adaptive", 1, o.wus, &tot[1]);
		printf("\n| policy | cheater | hosts | results | bad results | detected |"
		       " bad accepted | first caught at WU |\n|---|---|---|---|---|---|---|---|\n");
		print_cheaters("quorum 2", &s[0]);
		print_cheaters("adaptive", &s[1]);
	}
	free(s[0].h);
	free(s[1].h);
	return rc;
}
