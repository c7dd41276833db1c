/*
 * swar.h: eight bytes tested at once in a 64-bit word, for scanners of
 * text that is mostly plain (UTF-8 validation, JSON escapes). Internal to
 * common/.
 *
 * A byte below n is one that borrows through v - n*0x01..01 while its
 * own high bit was clear. A borrow may also mark the bytes above a true
 * one, so a result says whether some byte matched, not which.
 */
#ifndef SEO_SWAR_H
#define SEO_SWAR_H

#include <stdint.h>
#include <string.h>

#define SEO_SWAR_ONES 0x0101010101010101ULL
#define SEO_SWAR_HIGHS (SEO_SWAR_ONES << 7)

/* The 8 bytes at p, in any alignment. */
static inline uint64_t seo_swar_load(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Nonzero when a byte of v is below n (1 to 128). */
static inline uint64_t seo_swar_below(uint64_t v, unsigned n)
{
	return (v - SEO_SWAR_ONES * n) & ~v & SEO_SWAR_HIGHS;
}

/* Nonzero when a byte of v is c. */
static inline uint64_t seo_swar_has(uint64_t v, unsigned char c)
{
	return seo_swar_below(v ^ (SEO_SWAR_ONES * c), 1);
}

#endif
