/*
 * ct_chain.c - see ct_chain.h.
 */
#include "ct_chain.h"
#include "ct_err.h"
#include "ct_hash.h"

#include <math.h>
#include <string.h>

int ct_chain_every(int steps, double ntrained, double step_flops)
{
	double s;
	int min;

	if (steps < 1 || !(ntrained > 0) || !(step_flops > 0))
		return 1;
	s = ceil(100.0 * 12.0 * ntrained * CT_CHAIN_FLOPS_PER_BYTE / step_flops);
	min = (steps + CT_CHAIN_MAX_LINKS - 1) / CT_CHAIN_MAX_LINKS;
	if (!(s >= min))
		s = min;
	return s > steps ? steps : (int)s;
}

int ct_chain_nlinks(int steps, int every)
{
	if (steps < 1 || every < 1)
		return 0;
	return steps / every + (steps % every != 0);
}

int ct_chain_link_step(int k, int steps, int every)
{
	long long s = (long long)(k + 1) * every;

	return s < steps ? (int)s : steps;
}

int ct_chain_due(int i, int steps, int every)
{
	return every > 0 && (i == steps || i % every == 0);
}

int ct_chain_check(const char *hex, int steps, int every)
{
	int n = ct_chain_nlinks(steps, every);
	size_t len = hex ? strlen(hex) : 0;

	if (n < 1 || n > CT_CHAIN_MAX_LINKS)
		return ct_error(CT_EFORMAT, "a chain of %d steps every %d: %d links (1..%d)",
				steps, every, n, CT_CHAIN_MAX_LINKS);
	if (len != (size_t)n * 64)
		return ct_error(CT_EFORMAT, "chain of %zu hex digits, want %d links of 64",
				len, n);
	for (size_t i = 0; i < len; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return ct_error(CT_EFORMAT, "chain: not lower-case hex at digit %zu", i);
	return 0;
}

int ct_chain_first_diff(const char *a, const char *b, int n)
{
	for (int k = 0; k < n; k++)
		if (memcmp(a + 64 * k, b + 64 * k, 64) != 0)
			return k;
	return -1;
}

int ct_chain_parting(const char *a, const char *b, int steps, int every, int *agreed,
		     int *parted)
{
	int k = ct_chain_first_diff(a, b, ct_chain_nlinks(steps, every));

	*agreed = k < 0 ? steps : k == 0 ? 0 : ct_chain_link_step(k - 1, steps, every);
	*parted = k < 0 ? steps : ct_chain_link_step(k, steps, every);
	return k;
}

void ct_chain_link(const char *hex, int k, unsigned char out[32])
{
	char one[65];

	memcpy(one, hex + 64 * k, 64);
	one[64] = '\0';
	if (ct_hex_decode(one, out, 32) < 0)
		memset(out, 0, 32);
}
