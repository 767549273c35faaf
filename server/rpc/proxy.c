/*
 * proxy.c - addresses, trusted proxy networks and the client address of a
 * proxied request (see proxy.h).
 *
 * A header is split into hops left to right (commas inside a quoted
 * Forwarded value do not split), keeping the spans of the rightmost
 * CT_PROXY_MAX_HOPS in a ring, then walked from the right. Text is
 * parsed by inet_pton on a bounded copy, after the forms a proxy writes
 * around it ("[v6]:port", "v4:port", a quoted Forwarded value) are taken
 * off by hand.
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "ct_err.h"

static const unsigned char v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void set_v4(struct ct_addr *a, const void *b4)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	memcpy(a->b, b4, 4);
}

static void set_v6(struct ct_addr *a, const unsigned char *b16)
{
	if (memcmp(b16, v4_mapped, sizeof(v4_mapped)) == 0) {
		set_v4(a, b16 + 12);
		return;
	}
	memset(a, 0, sizeof(*a));
	a->family = AF_INET6;
	memcpy(a->b, b16, 16);
}

int ct_addr_parse(const char *s, size_t n, struct ct_addr *out)
{
	char tmp[CT_ADDR_STRLEN];
	unsigned char b[16];

	memset(out, 0, sizeof(*out));
	if (s == NULL || n == 0 || n >= sizeof(tmp))
		return CT_EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (strlen(tmp) != n)
		return CT_EINVAL;	/* a NUL inside */
	if (inet_pton(AF_INET, tmp, b) == 1) {
		set_v4(out, b);
		return 0;
	}
	if (inet_pton(AF_INET6, tmp, b) == 1) {
		set_v6(out, b);
		return 0;
	}
	return CT_EINVAL;
}

int ct_addr_from_sockaddr(const struct sockaddr *sa, struct ct_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (sa == NULL)
		return CT_EINVAL;
	if (sa->sa_family == AF_INET) {
		set_v4(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		set_v6(out, ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr);
		return 0;
	}
	return CT_EINVAL;
}

void ct_addr_format(const struct ct_addr *a, char out[CT_ADDR_STRLEN])
{
	if (inet_ntop(a->family == AF_INET ? AF_INET : AF_INET6, a->b, out,
		      CT_ADDR_STRLEN) == NULL)
		strcpy(out, "?");
}

int ct_addr_equal(const struct ct_addr *a, const struct ct_addr *b)
{
	return a->family == b->family && memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/* ---- trusted networks ---------------------------------------------------- */

static void mask_to(struct ct_addr *a, int bits)
{
	for (int i = 0; i < 16; i++) {
		int keep = bits - 8 * i;

		if (keep <= 0)
			a->b[i] = 0;
		else if (keep < 8)
			a->b[i] &= (unsigned char)(0xff00u >> keep);
	}
}

/* One entry "ADDR" or "ADDR/BITS" of n bytes. */
static int parse_net(const char *s, size_t n, struct ct_addr *net, int *bits)
{
	const char *slash = memchr(s, '/', n);
	size_t alen = slash ? (size_t)(slash - s) : n;
	int max, b = 0;

	if (ct_addr_parse(s, alen, net) < 0)
		return CT_EINVAL;
	max = net->family == AF_INET ? 32 : 128;
	if (slash == NULL) {
		*bits = max;
		return 0;
	}
	if (slash + 1 == s + n || n - alen - 1 > 3)
		return CT_EINVAL;
	for (const char *p = slash + 1; p < s + n; p++) {
		if (*p < '0' || *p > '9')
			return CT_EINVAL;
		b = b * 10 + (*p - '0');
	}
	if (b > max)
		return CT_EINVAL;
	mask_to(net, b);
	*bits = b;
	return 0;
}

static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

int ct_proxy_list_parse(const char *spec, struct ct_proxy_list *out)
{
	const char *p = spec ? spec : "";

	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t n;

		while (*p && is_sep(*p))
			p++;
		if (*p == '\0')
			return 0;
		for (n = 0; p[n] && !is_sep(p[n]); n++)
			;
		if (out->n == CT_PROXY_MAX_NETS)
			return ct_error(CT_ECONFIG, "http.trusted_proxies: more than %d entries",
					CT_PROXY_MAX_NETS);
		if (parse_net(p, n, &out->e[out->n].net, &out->e[out->n].bits) < 0)
			return ct_error(CT_ECONFIG, "http.trusted_proxies: '%.*s' is not an "
					"address or ADDRESS/BITS", (int)(n > 60 ? 60 : n), p);
		out->n++;
		p += n;
	}
}

int ct_proxy_trusted(const struct ct_proxy_list *l, const struct ct_addr *a)
{
	for (int i = 0; i < l->n; i++) {
		struct ct_addr m = *a;

		if (m.family != l->e[i].net.family)
			continue;
		mask_to(&m, l->e[i].bits);
		if (memcmp(m.b, l->e[i].net.b, sizeof(m.b)) == 0)
			return 1;
	}
	return 0;
}

/* ---- one hop --------------------------------------------------------------- */

static int all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 5)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* A node: "[v6]", "[v6]:port", "v4", "v4:port" or a bare v6. */
static int parse_node(const char *s, size_t n, struct ct_addr *out)
{
	const char *colon;

	if (n > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		size_t rest;

		if (close == NULL || ct_addr_parse(s + 1, (size_t)(close - s - 1), out) < 0 ||
		    out->family != AF_INET6)
			return CT_EINVAL;
		rest = n - (size_t)(close + 1 - s);
		if (rest == 0)
			return 0;
		return close[1] == ':' && all_digits(close + 2, rest - 1) ? 0 : CT_EINVAL;
	}
	colon = memchr(s, ':', n);
	if (colon != NULL && memchr(colon + 1, ':', n - (size_t)(colon + 1 - s)) == NULL) {
		/* one colon: v4:port */
		if (!all_digits(colon + 1, n - (size_t)(colon + 1 - s)) ||
		    ct_addr_parse(s, (size_t)(colon - s), out) < 0 || out->family != AF_INET)
			return CT_EINVAL;
		return 0;
	}
	return ct_addr_parse(s, n, out);
}

static void trim(const char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* The for= node of one Forwarded element ("for=...;proto=...;by=..."):
 * exactly one for= pair, its value a token or a quoted string without
 * escapes. */
static int forwarded_for(const char *s, size_t n, struct ct_addr *out)
{
	const char *val = NULL;
	size_t vlen = 0;
	int nfor = 0;

	while (n > 0) {
		const char *semi = memchr(s, ';', n);
		size_t plen = semi ? (size_t)(semi - s) : n;
		const char *p = s;
		size_t pn = plen;

		trim(&p, &pn);
		if (pn >= 4 && strncasecmp(p, "for=", 4) == 0) {
			val = p + 4;
			vlen = pn - 4;
			nfor++;
		}
		s += plen + (semi ? 1 : 0);
		n -= plen + (semi ? 1 : 0);
	}
	if (nfor != 1)
		return CT_EINVAL;
	if (vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"') {
		val++;
		vlen -= 2;
		if (memchr(val, '"', vlen) || memchr(val, '\\', vlen))
			return CT_EINVAL;
	}
	return parse_node(val, vlen, out);
}

static int parse_hop(enum ct_proxy_header kind, const char *s, size_t n, struct ct_addr *out)
{
	trim(&s, &n);
	if (kind == CT_PROXY_FORWARDED)
		return forwarded_for(s, n, out);
	return parse_node(s, n, out);
}

/* ---- the walk --------------------------------------------------------------- */

struct hops {
	const char *start[CT_PROXY_MAX_HOPS];
	size_t len[CT_PROXY_MAX_HOPS];
	int total;		/* hops seen; the ring holds the last ones */
};

/* Split at commas that are outside a quoted string (Forwarded only). */
static void split(enum ct_proxy_header kind, const char *v, struct hops *h)
{
	const char *start = v;
	int quoted = 0;

	h->total = 0;
	for (const char *p = v;; p++) {
		if (*p == '"' && kind == CT_PROXY_FORWARDED)
			quoted = !quoted;
		if (*p == '\0' || (*p == ',' && !quoted)) {
			int i = h->total % CT_PROXY_MAX_HOPS;

			h->start[i] = start;
			h->len[i] = (size_t)(p - start);
			h->total++;
			start = p + 1;
		}
		if (*p == '\0')
			return;
	}
}

int ct_proxy_resolve(const struct ct_proxy_list *l, const struct ct_addr *peer,
		     enum ct_proxy_header kind, const char *value, struct ct_addr *client)
{
	struct hops h;
	int kept;

	*client = *peer;
	if (!ct_proxy_trusted(l, peer) || value == NULL || value[0] == '\0')
		return 0;
	split(kind, value, &h);
	kept = h.total < CT_PROXY_MAX_HOPS ? h.total : CT_PROXY_MAX_HOPS;
	for (int k = 0; k < kept; k++) {
		int i = (h.total - 1 - k) % CT_PROXY_MAX_HOPS;
		struct ct_addr a;

		if (parse_hop(kind, h.start[i], h.len[i], &a) < 0)
			break;	/* the last address that parsed stands */
		*client = a;
		if (!ct_proxy_trusted(l, &a))
			break;
	}
	return !ct_addr_equal(client, peer);
}
