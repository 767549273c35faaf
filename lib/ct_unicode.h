/*
 * ct_unicode.h - UTF-8 decoding and the code point classes the GPT-2
 * pre-tokeniser needs: letter (\p{L}), number (\p{N}), white space (\s,
 * Unicode's White_Space property) and everything else. The table is
 * generated from Python's unicodedata by tools/gen_unicode_tab.py
 * (lib/ct_unicode_tab.c, committed).
 */
#ifndef CT_UNICODE_H
#define CT_UNICODE_H

#include <stddef.h>
#include <stdint.h>

enum ct_ucls { CT_UCLS_OTHER = 0, CT_UCLS_LETTER = 1, CT_UCLS_NUMBER = 2,
	       CT_UCLS_SPACE = 3 };

extern const char ct_unicode_version[];
extern const unsigned short ct_unicode_stage1[0x110000 >> 8];
extern const unsigned char ct_unicode_stage2[][64];

/* Class of code point cp (< 0x110000). */
static inline enum ct_ucls ct_unicode_class(uint32_t cp)
{
	const unsigned char *blk = ct_unicode_stage2[ct_unicode_stage1[cp >> 8]];

	return (enum ct_ucls)((blk[(cp & 255) >> 2] >> ((cp & 3) * 2)) & 3);
}

/* Decode one UTF-8 sequence at p[0..n) (n >= 1). Returns its length (1-4)
 * and sets *cp; a byte that does not start a well-formed sequence (stray
 * continuation, overlong form, surrogate, past U+10FFFF, cut short) is
 * returned alone with *cp = UINT32_MAX. */
size_t ct_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/* Encode code point cp (< 0x110000) as UTF-8 into out; its length 1-4. */
size_t ct_utf8_encode(uint32_t cp, unsigned char out[4]);

#endif
