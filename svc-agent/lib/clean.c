/*
 * Text written by agents and people for others to read (agent_int.h):
 * what cannot be seen is removed, so that no reader is shown, or an agent
 * fed, text a person reviewing it did not see.
 */
#include "agent_int.h"

#include <string.h>

#include "seo/errors.h"

typedef struct cp_range {
	uint32_t lo, hi;
} cp_range;

/* Removed: controls (C0, DEL, C1) and the characters that print nothing
 * (format characters, fillers, variation selectors, tags, noncharacters). */
static const cp_range invisible[] = {
	{0x0000, 0x001f}, {0x007f, 0x009f}, {0x00ad, 0x00ad},
	{0x034f, 0x034f}, {0x061c, 0x061c}, {0x115f, 0x1160},
	{0x17b4, 0x17b5}, {0x180b, 0x180f}, {0x200b, 0x200f},
	{0x202a, 0x202e}, {0x2060, 0x206f}, {0x3164, 0x3164},
	{0xfe00, 0xfe0f}, {0xfeff, 0xfeff}, {0xffa0, 0xffa0},
	{0xfff0, 0xfffb}, {0xfffe, 0xffff}, {0x1bca0, 0x1bca3},
	{0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
};

/* Line and tab breaks among them separate words: a space instead (one
 * for a run of them and spaces). */
static const uint32_t breaks[] = {'\t', '\n', 0x0b, 0x0c, '\r', 0x85,
				  0x2028, 0x2029};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int in_ranges(uint32_t c, const cp_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c >= r[i].lo && c <= r[i].hi)
			return 1;
	return 0;
}

static int is_break(uint32_t c)
{
	for (size_t i = 0; i < N(breaks); i++)
		if (c == breaks[i])
			return 1;
	return 0;
}

/* The code point at s (valid, shortest form, no surrogate) and its length;
 * 0 for a byte that starts none. */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

int agent__text_clean(seo_arena *arena, const char *in, size_t max_chars,
		      char **out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, chars = 0, end = 0, n;
	char *buf = seo_arena_alloc(arena, strlen(in) + 1);
	uint32_t c;

	if (buf == NULL)
		return SEO_ENOMEM;
	/* `end` is the length without trailing spaces; leading ones are
	 * never written, nor one after another. */
	while (*s != '\0' && chars < max_chars) {
		n = utf8_next(s, &c);
		if (n == 0) {
			s++;
			continue;
		}
		if (is_break(c) || c == ' ') {
			if (o > 0 && buf[o - 1] != ' ') {
				buf[o++] = ' ';
				chars++;
			}
		} else if (!in_ranges(c, invisible, N(invisible))) {
			memcpy(buf + o, s, n);
			o += n;
			end = o;
			chars++;
		}
		s += n;
	}
	buf[end] = '\0';
	*out = buf;
	return 0;
}
