/*
 * Cleaning text a client sends for people to read (agent_int.h).
 */
#include "agent_int.h"

#include <stdint.h>
#include <string.h>

/* Code points that show nothing and can hide or reorder what a reader
 * sees. */
static const struct {
	uint32_t from, to;
} invisible_ranges[] = {
	{0x00AD, 0x00AD}, {0x180E, 0x180E}, {0x200B, 0x200F},
	{0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x2069},
	{0xFEFF, 0xFEFF},
};

#define N_INVISIBLE (sizeof(invisible_ranges) / sizeof(invisible_ranges[0]))

static int is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

static int is_invisible(uint32_t cp)
{
	for (size_t i = 0; i < N_INVISIBLE; i++)
		if (cp >= invisible_ranges[i].from && cp <= invisible_ranges[i].to)
			return 1;
	return 0;
}

/* The code point at s (valid UTF-8) and its length in *len. */
static uint32_t decode(const unsigned char *s, size_t *len)
{
	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if ((s[0] & 0xE0) == 0xC0) {
		*len = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	}
	if ((s[0] & 0xF0) == 0xE0) {
		*len = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12) |
		       ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	}
	*len = 4;
	return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
	       ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

char *agent__clean_text(seo_arena *arena, const char *in, size_t max_chars,
			int invisible)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), at = 0, len, chars = 0;
	char *out = seo_arena_alloc(arena, n + 1);

	if (out == NULL)
		return NULL;
	while (*s != '\0' && chars < max_chars) {
		uint32_t cp = decode(s, &len);

		/* a truncated sequence at the end is no character */
		if (strnlen((const char *)s, len) < len)
			break;
		if (!is_control(cp) && !(invisible && is_invisible(cp))) {
			memcpy(out + at, s, len);
			at += len;
			chars++;
		}
		s += len;
	}
	out[at] = '\0';
	return out;
}
