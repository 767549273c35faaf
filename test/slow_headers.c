/*
 * slow_headers.c - the load program of test/attack_slow_headers.sh: one
 * address holds as many half-sent requests as it can (a header line
 * trickled every few seconds, reconnecting whenever the server closes
 * one) while another address makes ordinary requests, and we print what
 * the ordinary requests got.
 *
 *   slow_headers HOST PORT ATTACK-FROM CONNS TRICKLE-S GOOD-FROM PATH SECONDS
 *
 * HOST is the server's IPv4 address; ATTACK-FROM and GOOD-FROM are the
 * source addresses the two sides bind to (127.0.0.2, 127.0.0.3: all of
 * 127/8 reaches a loopback server). The attacker keeps CONNS sockets,
 * each sending "POST PATH HTTP/1.1", Host, then one "X-Pad-N: x" line
 * every TRICKLE-S seconds and never the empty line; a socket the server
 * closes is reopened 2 s later. The good side GETs PATH (Connection:
 * close), one request every 20 ms, each given 5 s; it counts a 200 as a
 * success. Everything stops after SECONDS.
 *
 * Prints "good: N requests, S ok (P%), p50 A ms, p99 B ms, max C ms" and
 * "attacker: ... held at most H at once, longest L s" and exits 0; 2 on a
 * setup error, 77 when the descriptor limit cannot hold CONNS sockets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GOOD_TIMEOUT_MS 5000
#define RETRY_MS 2000
#define MAX_GOOD 100000

struct opts {
	struct sockaddr_in server, attack_from, good_from;
	int conns, trickle_ms, seconds;
	const char *path;
};

struct slot {
	int fd, connected, pads;
	int64_t since, next;	/* connected at; next trickle or reconnect */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_ip(const char *s, int port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

/* A non-blocking socket bound to `from`, connecting to `to`; -1 on error. */
static int open_from(const struct sockaddr_in *from, const struct sockaddr_in *to)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)from, sizeof(*from)) < 0 ||
	    (connect(fd, (const struct sockaddr *)to, sizeof(*to)) < 0 && errno != EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *s)
{
	size_t n = strlen(s);

	return send(fd, s, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* ---- the good side: one request at a time ---------------------------------- */

struct good {
	const struct opts *o;
	int64_t end;
	int n, ok;
	int lat[MAX_GOOD];	/* ms of each successful request */
};

/* Wait for fd to be ready for `events` until `deadline`; 1 ready, 0 not. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left = deadline - now_ms();

	return left > 0 && poll(&p, 1, (int)left) == 1;
}

/* One GET; 1 when the status line says 200 within the timeout. */
static int good_request(const struct opts *o)
{
	int64_t deadline = now_ms() + GOOD_TIMEOUT_MS;
	char req[512], buf[4096];
	size_t got = 0;
	int fd = open_from(&o->good_from, &o->server), ok = 0;

	if (fd < 0)
		return 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
		 o->path);
	if (!wait_fd(fd, POLLOUT, deadline) || send_all(fd, req) < 0)
		goto out;
	while (got < sizeof(buf) - 1 && wait_fd(fd, POLLIN, deadline)) {
		ssize_t r = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		if (strstr(buf, "\r\n")) {
			ok = strncmp(buf, "HTTP/1.1 200", 12) == 0;
			break;
		}
	}
out:
	close(fd);
	return ok;
}

static void *good_main(void *arg)
{
	struct good *g = arg;

	while (now_ms() < g->end && g->n < MAX_GOOD) {
		int64_t t0 = now_ms();

		g->n++;
		if (good_request(g->o))
			g->lat[g->ok++] = (int)(now_ms() - t0);
		usleep(20000);
	}
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* ---- the attacker: CONNS trickling sockets ---------------------------------- */

struct attack {
	int attempts, closed, held, peak;
	int64_t longest;
};

static void slot_close(struct slot *s, struct attack *a, int64_t now)
{
	if (s->connected) {
		if (now - s->since > a->longest)
			a->longest = now - s->since;
		a->held--;
	}
	close(s->fd);
	s->fd = -1;
	s->connected = 0;
	s->next = now + RETRY_MS;
	a->closed++;
}

/* Connected (or failed), trickle due, or closed by the server. */
static void slot_step(const struct opts *o, struct slot *s, short rev, struct attack *a,
		      int64_t now)
{
	char line[256];

	if (!s->connected && (rev & (POLLOUT | POLLERR | POLLHUP))) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		snprintf(line, sizeof(line), "POST %s HTTP/1.1\r\nHost: test\r\n", o->path);
		if (err != 0 || send_all(s->fd, line) < 0) {
			s->connected = 0;
			slot_close(s, a, now);
			return;
		}
		s->connected = 1;
		s->since = now;
		s->next = now + o->trickle_ms;
		if (++a->held > a->peak)
			a->peak = a->held;
		return;
	}
	if (s->connected && (rev & (POLLIN | POLLERR | POLLHUP))) {
		slot_close(s, a, now);	/* the server answered or closed: either ends it */
		return;
	}
	if (s->connected && now >= s->next) {
		snprintf(line, sizeof(line), "X-Pad-%d: x\r\n", s->pads++);
		if (send_all(s->fd, line) < 0)
			slot_close(s, a, now);
		else
			s->next = now + o->trickle_ms;
	}
}

static int attack_run(const struct opts *o, struct attack *a)
{
	struct slot *s = calloc((size_t)o->conns, sizeof(*s));
	struct pollfd *p = calloc((size_t)o->conns, sizeof(*p));
	int64_t end = now_ms() + (int64_t)o->seconds * 1000;

	if (s == NULL || p == NULL)
		return -1;
	for (int i = 0; i < o->conns; i++)
		s[i].fd = -1;
	for (int64_t now = now_ms(); now < end; now = now_ms()) {
		for (int i = 0; i < o->conns; i++) {
			if (s[i].fd < 0 && now >= s[i].next) {
				s[i].fd = open_from(&o->attack_from, &o->server);
				a->attempts++;
				if (s[i].fd < 0)
					s[i].next = now + RETRY_MS;
			}
			p[i].fd = s[i].fd;
			p[i].events = s[i].connected ? POLLIN : POLLOUT;
			p[i].revents = 0;
		}
		poll(p, (nfds_t)o->conns, 50);
		now = now_ms();
		for (int i = 0; i < o->conns; i++)
			if (s[i].fd >= 0)
				slot_step(o, &s[i], p[i].revents, a, now);
	}
	for (int i = 0; i < o->conns; i++)
		if (s[i].fd >= 0)
			slot_close(&s[i], a, end);
	free(s);
	free(p);
	return 0;
}

static int fit_fds(int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_cur < (rlim_t)need) {
		if (rl.rlim_max < (rlim_t)need) {
			printf("skip: %d sockets need `ulimit -n` %d, the hard limit is %ld\n",
			       need - 64, need, (long)rl.rlim_max);
			return -1;
		}
		rl.rlim_cur = (rlim_t)need;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
	}
	return 0;
}

static void report(const struct good *g, const struct attack *a, const struct opts *o)
{
	int *lat = (int *)g->lat;
	double pct = g->n ? 100.0 * g->ok / g->n : 0;

	qsort(lat, (size_t)g->ok, sizeof(int), cmp_int);
	printf("attacker: %d sockets wanted, %d connects, %d closed by the server, "
	       "held at most %d at once, longest %.1f s\n",
	       o->conns, a->attempts, a->closed, a->peak, (double)a->longest / 1000.0);
	printf("good: %d requests, %d ok (%.1f%%), p50 %d ms, p99 %d ms, max %d ms\n", g->n,
	       g->ok, pct, g->ok ? lat[g->ok / 2] : -1,
	       g->ok ? lat[(g->ok * 99) / 100 < g->ok ? (g->ok * 99) / 100 : g->ok - 1] : -1,
	       g->ok ? lat[g->ok - 1] : -1);
}

int main(int argc, char **argv)
{
	struct opts o;
	static struct good g;
	struct attack a = { 0 };
	pthread_t t;

	if (argc != 9) {
		fprintf(stderr, "usage: slow_headers HOST PORT ATTACK-FROM CONNS TRICKLE-S "
				"GOOD-FROM PATH SECONDS\n");
		return 2;
	}
	o.conns = atoi(argv[4]);
	o.trickle_ms = atoi(argv[5]) * 1000;
	o.path = argv[7];
	o.seconds = atoi(argv[8]);
	if (parse_ip(argv[1], atoi(argv[2]), &o.server) < 0 ||
	    parse_ip(argv[3], 0, &o.attack_from) < 0 || parse_ip(argv[6], 0, &o.good_from) < 0 ||
	    o.conns <= 0 || o.trickle_ms <= 0 || o.seconds <= 0) {
		fprintf(stderr, "slow_headers: bad arguments\n");
		return 2;
	}
	if (fit_fds(o.conns + 64) < 0)
		return 77;
	g.o = &o;
	g.end = now_ms() + (int64_t)o.seconds * 1000;
	if (pthread_create(&t, NULL, good_main, &g) != 0)
		return 2;
	if (attack_run(&o, &a) < 0)
		return 2;
	pthread_join(t, NULL);
	report(&g, &a, &o);
	return 0;
}
