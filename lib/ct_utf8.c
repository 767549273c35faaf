/*
 * ct_utf8.c - UTF-8 validation, scrubbing and cutting on a character
 * boundary (see ct_utf8.h).
 */
#include "ct_utf8.h"
#include "ct_buf.h"

#include <string.h>

size_t ct_utf8_char_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0 || u[0] == 0)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		len = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		len = 3;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, overlong lead, > U+10FFFF */
	if (n < len)
		return 0;
	/* the second byte's range rules out overlong forms, surrogates and
	 * code points above U+10FFFF (RFC 3629, section 4) */
	if (u[0] == 0xe0)
		lo = 0xa0;
	else if (u[0] == 0xed)
		hi = 0x9f;
	else if (u[0] == 0xf0)
		lo = 0x90;
	else if (u[0] == 0xf4)
		hi = 0x8f;
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (u[i] < 0x80 || u[i] > 0xbf)
			return 0;
	return len;
}

int ct_utf8_valid(const char *s)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t c = ct_utf8_char_len(s + i, n - i);

		if (c == 0)
			return 0;
		i += c;
	}
	return 1;
}

size_t ct_utf8_fit(char *s, size_t max_bytes)
{
	size_t n = strlen(s), i = 0, cut = 0;

	while (i < n) {
		size_t c = ct_utf8_char_len(s + i, n - i);

		if (c == 0) {
			s[i] = '?';
			c = 1;
		}
		if (i + c > max_bytes)
			break;
		i += c;
		cut = i;
	}
	s[cut] = '\0';
	return cut;
}

int ct_utf8_clean(const char *s, size_t n, struct ct_buf *out)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = ct_utf8_char_len(s + i, n - i);

		if (len == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t')
			len = 0;
		if (len > 0)
			rc = ct_buf_append(out, s + i, len);
		else
			rc = ct_buf_append(out, "\xEF\xBF\xBD", 3);
		i += len > 0 ? len : 1;
	}
	return rc;
}
