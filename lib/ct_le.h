/*
 * ct_le.h - little-endian integer fields in byte arrays (file headers:
 * the result-delta header, the work-unit state file). Byte by byte, so
 * the layout does not depend on the host's byte order or alignment; and a
 * test for the host's byte order, for files read as they lie in memory.
 */
#ifndef CT_LE_H
#define CT_LE_H

#include <stdint.h>
#include <string.h>

/* 1 on a little-endian host (whose float and int arrays can be read from
 * and written to llm.c-style files as they lie in memory), else 0. */
static inline int ct_le_host(void)
{
	const uint32_t one = 1;
	unsigned char b;

	memcpy(&b, &one, 1);
	return b == 1;
}

/* Store v at p[0..3], least significant byte first. */
static inline void ct_le_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Store v at p[0..7], least significant byte first. */
static inline void ct_le_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The value stored by ct_le_put32() at p. */
static inline uint32_t ct_le_get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* The value stored by ct_le_put64() at p. */
static inline uint64_t ct_le_get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* ct_le_put_f32(p, float) / ct_le_get_f32(p) and ct_le_put_f64(p, double)
 * / ct_le_get_f64(p): a float's or double's bits stored at p[0..N/8) as
 * ct_le_putN() stores an integer, and read back bit for bit. */
#define CT_LE_FLOAT_(T, U, N)							\
static inline void ct_le_put_f##N(unsigned char *p, T v)			\
{										\
	U u;									\
										\
	memcpy(&u, &v, sizeof(u));						\
	ct_le_put##N(p, u);							\
}										\
static inline T ct_le_get_f##N(const unsigned char *p)				\
{										\
	U u = ct_le_get##N(p);							\
	T v;									\
										\
	memcpy(&v, &u, sizeof(v));						\
	return v;								\
}
CT_LE_FLOAT_(float, uint32_t, 32)
CT_LE_FLOAT_(double, uint64_t, 64)
#undef CT_LE_FLOAT_

#endif
