/*
 * proxy.h - the address a request comes from, when a reverse proxy (nginx,
 * Caddy, a load balancer) stands in front of ctune-server: IPv4/IPv6
 * addresses and networks, the operator's list of trusted proxies
 * (http.trusted_proxies), and the client address a proxy's header names.
 *
 * Only a peer on the trusted list is believed, and only for the hops it
 * and the trusted proxies before it appended: the header is read from the
 * right, and the first hop that is not a trusted proxy is the client
 * ("rightmost untrusted hop", as nginx's real_ip_recursive does). What a
 * client wrote into the header itself sits to the left of that and is
 * never reached. A hop that does not parse ("unknown", an obfuscated name,
 * garbage) ends the walk at the last address that did: the proxy that
 * wrote it, which cannot be spoofed.
 *
 * The header is one the operator names (http.forwarded_header): either
 * X-Forwarded-For ("203.0.113.5, 10.0.0.2", hops may carry ":port" or be
 * "[v6]:port") or the RFC 7239 Forwarded header ("for=203.0.113.5;proto=
 * https, for=\"[2001:db8::1]:4711\""). Not both: a proxy that sets one
 * passes the other through from the client untouched.
 *
 * Addresses are kept as 16 bytes and a family; an IPv4-mapped IPv6
 * address (::ffff:192.0.2.1) is IPv4, so one host never has two keys.
 * Everything here is pure (no I/O, no state): test/test_proxy.c.
 */
#ifndef CT_PROXY_H
#define CT_PROXY_H

#include <stddef.h>

struct sockaddr;

#define CT_PROXY_MAX_NETS 64	/* entries of http.trusted_proxies */
#define CT_PROXY_MAX_HOPS 32	/* hops of a header examined, from the right */
#define CT_ADDR_STRLEN 46	/* INET6_ADDRSTRLEN */

struct ct_addr {
	int family;		/* AF_INET (bytes 0-3 used) or AF_INET6 */
	unsigned char b[16];
};

struct ct_proxy_list {
	int n;
	struct {
		struct ct_addr net;	/* host bits cleared */
		int bits;		/* prefix length */
	} e[CT_PROXY_MAX_NETS];
};

enum ct_proxy_header { CT_PROXY_XFF, CT_PROXY_FORWARDED };

/* Parse the n bytes at s as an IPv4 or IPv6 address (no brackets, port or
 * zone). Returns 0 or CT_EINVAL; *out is zeroed on failure. */
int ct_addr_parse(const char *s, size_t n, struct ct_addr *out);

/* The address of an AF_INET/AF_INET6 sockaddr. 0 or CT_EINVAL (another
 * family or NULL). */
int ct_addr_from_sockaddr(const struct sockaddr *sa, struct ct_addr *out);

/* Text form into out (CT_ADDR_STRLEN bytes): dotted quad, or RFC 5952
 * IPv6. */
void ct_addr_format(const struct ct_addr *a, char out[CT_ADDR_STRLEN]);

/* 1 when a and b are the same address, else 0. */
int ct_addr_equal(const struct ct_addr *a, const struct ct_addr *b);

/* Parse a list of addresses and networks ("127.0.0.1, 10.0.0.0/8 ::1
 * fd00::/8"; commas and/or blanks between entries; an address alone is
 * a /32 or /128). An empty or NULL spec is an empty list. Returns 0 or
 * CT_ECONFIG naming the bad entry (also past CT_PROXY_MAX_NETS entries). */
int ct_proxy_list_parse(const char *spec, struct ct_proxy_list *out);

/* 1 when a is inside one of the list's networks, else 0. */
int ct_proxy_trusted(const struct ct_proxy_list *l, const struct ct_addr *a);

/* The client behind peer: peer itself unless peer is trusted; then the
 * rightmost hop of `value` (the header of kind `kind`, all its lines
 * joined by ","; NULL or "" when absent) that is not trusted, or the last
 * one that parsed. Returns 1 when *client came from the header, 0 when it
 * is peer. Never fails: whatever the header holds, *client is an address
 * the trusted chain vouches for. */
int ct_proxy_resolve(const struct ct_proxy_list *l, const struct ct_addr *peer,
		     enum ct_proxy_header kind, const char *value, struct ct_addr *client);

#endif
