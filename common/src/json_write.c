/*
 * json_write.c: JSON text without a tree and without printf (see
 * seo/json_write.h).
 *
 * Reals are jansson's "%.17g", computed exactly in 128-bit integers for
 * the magnitudes answers hold (1e-11 up to 2^128); other magnitudes, and
 * subnormals, go through snprintf(), as jansson itself does.
 */
#include "seo/json_write.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/pbjson.h"
#include "swar.h"

int seo_jw_reserve(seo_jw *w, size_t n)
{
	size_t cap = w->cap < 256 ? 256 : w->cap;
	char *buf;

	if (w->failed)
		return SEO_ENOMEM;
	if (w->cap - w->len >= n)
		return 0;
	while (cap - w->len < n) {
		if (cap > SIZE_MAX / 2) {
			w->failed = 1;
			return SEO_ENOMEM;
		}
		cap *= 2;
	}
	buf = realloc(w->buf, cap);
	if (buf == NULL) {
		w->failed = 1;
		return SEO_ENOMEM;
	}
	w->buf = buf;
	w->cap = cap;
	return 0;
}

char *seo_jw_finish(seo_jw *w, size_t *len)
{
	char *text;

	if (seo_jw_reserve(w, 1) != 0) {
		seo_jw_free(w);
		return NULL;
	}
	text = w->buf;
	text[w->len] = '\0';
	if (len != NULL)
		*len = w->len;
	*w = (seo_jw)SEO_JW_INIT;
	return text;
}

void seo_jw_free(seo_jw *w)
{
	free(w->buf);
	*w = (seo_jw)SEO_JW_INIT;
}

/* ---- integers ------------------------------------------------------------ */

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* Writes v's decimal digits so that they end at `end`; returns how many. */
static size_t digits(unsigned long long v, char *end)
{
	char *p = end;

	while (v >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return (size_t)(end - p);
}

size_t seo_fmt_int(char *out, long long v)
{
	char buf[SEO_INT_TEXT_MAX];
	unsigned long long mag =
		v < 0 ? (unsigned long long)-(v + 1) + 1 : (unsigned long long)v;
	size_t n = digits(mag, buf + sizeof(buf));

	if (v < 0)
		buf[sizeof(buf) - ++n] = '-';
	memcpy(out, buf + sizeof(buf) - n, n);
	return n;
}

void seo_jw_uint(seo_jw *w, unsigned long long v)
{
	char buf[20];
	size_t n = digits(v, buf + sizeof(buf));

	seo_jw_raw(w, buf + sizeof(buf) - n, n);
}

void seo_jw_int(seo_jw *w, long long v)
{
	if (w->cap - w->len < SEO_INT_TEXT_MAX &&
	    seo_jw_reserve(w, SEO_INT_TEXT_MAX) != 0)
		return;
	w->len += seo_fmt_int(w->buf + w->len, v);
}

/* ---- reals --------------------------------------------------------------- */

typedef unsigned __int128 u128;

#define E17 100000000000000000ULL
#define E16 10000000000000000ULL

/* 5^k, k <= 27: the largest power that fits 64 bits. */
static uint64_t pow5(int k)
{
	uint64_t p = 1;

	while (k-- > 0)
		p *= 5;
	return p;
}

/* Divides `n` by 2^sh or by `div` (not 0), rounded half to even as printf
 * rounds; -1 when the quotient does not fit 64 bits. */
static int round_div(u128 n, int sh, uint64_t div, uint64_t *out)
{
	u128 q, rem, twice;

	if (div != 0) {
		q = n / div;
		rem = n - q * div;
		twice = rem * 2;
		if (twice > div || (twice == div && (q & 1)))
			q++;
	} else if (sh == 0) {
		q = n;
	} else {
		q = n >> sh;
		rem = n - (q << sh);
		twice = rem << 1;
		if (twice > ((u128)1 << sh) || (twice == ((u128)1 << sh) && (q & 1)))
			q++;
	}
	if (q >> 64 != 0)
		return -1;
	*out = (uint64_t)q;
	return 0;
}

/* m * 2^e2 * 10^k rounded to an integer; -1 when this cannot be done
 * exactly in 128 bits (the caller falls back on snprintf()). */
static int scale(uint64_t m, int e2, int k, uint64_t *out)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
		10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
		100000000000ULL, 1000000000000ULL, 10000000000000ULL,
		100000000000000ULL, 1000000000000000ULL, E16, E17,
		1000000000000000000ULL, 10000000000000000000ULL};
	u128 p;
	int s;

	if (k >= 0) {
		/* m * 5^k * 2^(e2 + k) */
		if (k > 27)
			return -1;
		p = (u128)m * pow5(k);
		s = e2 + k;
		if (s >= 0) {
			if (s >= 64 || (p << s) >> s != p)
				return -1;
			return round_div(p << s, 0, 0, out);
		}
		if (s <= -127)
			return -1;
		return round_div(p, -s, 0, out);
	}
	/* m * 2^e2 / 10^-k: here e2 > 0, the value being past 2^53 */
	if (-k > 19 || e2 < 0 || e2 > 74)
		return -1;
	return round_div((u128)m << e2, 0, pow10[-k], out);
}

/* jansson's touches to "%.17g": ".0" when there is neither '.' nor 'e',
 * no '+' nor leading zeros in the exponent. */
static size_t jansson_fixup(char *buf, size_t len)
{
	char *start, *end;

	if (memchr(buf, '.', len) == NULL && memchr(buf, 'e', len) == NULL) {
		memcpy(buf + len, ".0", 2);
		return len + 2;
	}
	start = memchr(buf, 'e', len);
	if (start == NULL)
		return len;
	start++;
	end = start + 1;
	if (*start == '-')
		start++;
	while (end < buf + len && *end == '0')
		end++;
	if (end != start) {
		memmove(start, end, (size_t)(buf + len - end));
		len -= (size_t)(end - start);
	}
	return len;
}

static size_t real_by_printf(double v, char *out)
{
	char buf[40];
	int n = snprintf(buf, sizeof(buf) - 3, "%.17g", v);

	if (n < 0 || (size_t)n >= sizeof(buf) - 3)
		n = 0;
	n = (int)jansson_fixup(buf, (size_t)n);
	memcpy(out, buf, (size_t)n);
	return (size_t)n;
}

/* Writes the text of v at out (room for 32 bytes); returns its length. */
static size_t real_text(double v, char *out)
{
	uint64_t bits, m, d = 0;
	int be, e2, x, k, tries;
	char dig[17], *p = out;
	size_t nd, i;

	memcpy(&bits, &v, sizeof(bits));
	be = (int)(bits >> 52 & 0x7ff);
	m = bits & ((1ULL << 52) - 1);
	if (be == 0 && m == 0) {
		if (bits >> 63)
			*p++ = '-';
		memcpy(p, "0.0", 3);
		return (size_t)(p - out) + 3;
	}
	if (be == 0)
		return real_by_printf(v, out);
	m |= 1ULL << 52;
	e2 = be - 1075;
	/* The decimal exponent, perhaps one off: corrected below. */
	x = (int)floor((double)(be - 1023) * 0.30102999566398120);
	for (tries = 0;; tries++) {
		if (tries == 3)
			return real_by_printf(v, out);
		k = 16 - x;
		if (scale(m, e2, k, &d) != 0)
			return real_by_printf(v, out);
		if (d >= E17)
			x++;
		else if (d < E16)
			x--;
		else
			break;
	}
	digits(d, dig + sizeof(dig));
	for (nd = sizeof(dig); nd > 1 && dig[nd - 1] == '0'; nd--)
		;
	if (bits >> 63)
		*p++ = '-';
	if (x < -4 || x >= 17) {
		*p++ = dig[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, dig + 1, nd - 1);
			p += nd - 1;
		}
		*p++ = 'e';
		if (x < 0)
			*p++ = '-';
		nd = digits((unsigned long long)(x < 0 ? -x : x), dig + 3);
		memcpy(p, dig + 3 - nd, nd);
		return (size_t)(p - out) + nd;
	}
	if (x >= 0) {
		memcpy(p, dig, (size_t)x + 1);
		p += x + 1;
		*p++ = '.';
		if (nd > (size_t)x + 1) {
			memcpy(p, dig + x + 1, nd - (size_t)x - 1);
			p += nd - (size_t)x - 1;
		} else {
			*p++ = '0';
		}
		return (size_t)(p - out);
	}
	*p++ = '0';
	*p++ = '.';
	for (i = 0; i < (size_t)(-x - 1); i++)
		*p++ = '0';
	memcpy(p, dig, nd);
	p += nd;
	return (size_t)(p - out);
}

void seo_jw_real(seo_jw *w, double v)
{
	char buf[40];

	seo_jw_raw(w, buf, real_text(v, buf));
}

/* ---- strings ------------------------------------------------------------- */

/* 0: the byte is written as is; else the letter after its backslash ('u'
 * for \u00XX). */
#define U4 'u', 'u', 'u', 'u'
static const char escape[256] = {
	U4, U4, 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u', U4, U4, U4, U4,
	['"'] = '"', ['\\'] = '\\',
};
#undef U4

/* 1 when none of the 8 bytes at p needs an escape. */
static int plain8(const unsigned char *p)
{
	uint64_t v = seo_swar_load(p);

	return (seo_swar_below(v, 0x20) | seo_swar_has(v, '"') |
		seo_swar_has(v, '\\')) == 0;
}

/* Valid UTF-8 s[0..n), escaped, without quotes. Most text needs no
 * escape: it is passed eight bytes at a time. */
static void escaped(seo_jw *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		unsigned char c;
		char e;

		while (n - i >= 8 && plain8((const unsigned char *)s + i))
			i += 8;
		if (i == n)
			break;
		c = (unsigned char)s[i];
		e = escape[c];
		if (e == 0)
			continue;
		seo_jw_raw(w, s + from, i - from);
		if (e == 'u') {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			seo_jw_raw(w, u, sizeof(u));
		} else {
			char b[2] = {'\\', e};
			seo_jw_raw(w, b, sizeof(b));
		}
		from = i + 1;
	}
	seo_jw_raw(w, s + from, n - from);
}

void seo_jw_string(seo_jw *w, const char *s, size_t n)
{
	if (seo_jw_reserve(w, n + 2) != 0)
		return;
	w->buf[w->len++] = '"';
	escaped(w, s, n);
	seo_jw_char(w, '"');
}

void seo_jw_string_lossy(seo_jw *w, const char *s, size_t n)
{
	size_t i = 0, ok;

	seo_jw_char(w, '"');
	for (;;) {
		ok = seo_utf8_prefix(s + i, n - i);
		escaped(w, s + i, ok);
		i += ok;
		if (i == n)
			break;
		seo_jw_raw(w, "\xef\xbf\xbd", 3);
		i++;
	}
	seo_jw_char(w, '"');
}
