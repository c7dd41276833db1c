/*
 * domain.c: the one domain normaliser, and IDNA for host names.
 *
 * Reading rules (docs/decisions.md, "Link graph" and "Real-time"): what a
 * user may type around a domain (a scheme, userinfo, a port, a path) is
 * dropped, never refused, so that every endpoint taking a domain accepts
 * the same inputs; only what is left is checked.
 */
#include "seo/domain.h"

#include <ctype.h>
#include <idn2.h>
#include <stdint.h>
#include <string.h>

#include "seo/errors.h"

/* Bytes of a host as typed, before IDNA; UTF-8 takes up to 4 per letter. */
#define RAW_HOST_MAX 1024

static int is_scheme_char(int c)
{
	return isalnum(c) || c == '+' || c == '-' || c == '.';
}

/* Length of a leading "scheme://" of `s` (0 when there is none). */
static size_t scheme_len(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]))
		return 0;
	while (is_scheme_char((unsigned char)s[n]))
		n++;
	return strncmp(s + n, "://", 3) == 0 ? n + 3 : 0;
}

int seo_domain_ends_in_number(const char *host, size_t len)
{
	size_t start = len;

	while (start > 0 && host[start - 1] != '.')
		start--;
	if (start == len)
		return 0;
	if (len - start >= 2 && host[start] == '0' &&
	    (host[start + 1] == 'x' || host[start + 1] == 'X')) {
		for (size_t i = start + 2; i < len; i++)
			if (!isxdigit((unsigned char)host[i]))
				return 0;
		return 1;
	}
	for (size_t i = start; i < len; i++)
		if (!isdigit((unsigned char)host[i]))
			return 0;
	return 1;
}

int seo_domain_to_ascii(const char *host, size_t len, char *out,
			size_t outlen)
{
	char raw[RAW_HOST_MAX + 1];
	uint8_t *ascii = NULL;
	size_t n;
	int ascii_only = 1, rc = SEO_EINVAL;

	for (size_t i = 0; i < len; i++) {
		if (host[i] == '\0')
			return SEO_EINVAL;
		if ((unsigned char)host[i] >= 0x80)
			ascii_only = 0;
	}
	if (ascii_only) {
		if (len >= outlen)
			return SEO_EINVAL;
		memcpy(out, host, len);
		out[len] = '\0';
		return 0;
	}
	if (len > RAW_HOST_MAX)
		return SEO_EINVAL;
	memcpy(raw, host, len);
	raw[len] = '\0';
	/* UTS #46 mapping (case, width, compatibility forms) and NFC come
	 * with the non-transitional processing browsers do */
	if (idn2_lookup_u8((const uint8_t *)raw, &ascii, IDN2_NONTRANSITIONAL) != IDN2_OK)
		goto out;
	n = strlen((const char *)ascii);
	/* a mapped full stop (U+3002) can end the name */
	while (n > 0 && ascii[n - 1] == '.')
		n--;
	if (n >= outlen)
		goto out;
	memcpy(out, ascii, n);
	out[n] = '\0';
	rc = 0;
out:
	idn2_free(ascii);
	return rc;
}

/* Letters, digits, '-' and '_' in labels of 1..63 bytes, at least two of
 * them, a letter somewhere and no number at the end. */
static int valid_name(const char *h, size_t len)
{
	size_t label = 0;
	int letter = 0, dots = 0;

	if (len == 0 || len > SEO_DOMAIN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			dots++;
			continue;
		}
		if (!(isalnum(c) || c == '-' || c == '_') || ++label > 63)
			return 0;
		letter |= isalpha(c) != 0;
	}
	return label > 0 && dots > 0 && letter && !seo_domain_ends_in_number(h, len);
}

int seo_domain_normalize(const char *input, unsigned flags, char *out,
			 size_t outlen)
{
	char host[SEO_DOMAIN_MAX + 2];
	const char *h, *e, *name = host;
	size_t len;

	if (input == NULL)
		return SEO_EINVAL;
	while (isspace((unsigned char)*input))
		input++;
	h = input + scheme_len(input);
	e = h + strcspn(h, "/?#");
	for (const char *at = h; at < e; at++)
		if (*at == '@')
			h = at + 1;
	len = strcspn(h, ":");
	if (h + len < e)
		e = h + len;
	while (e > h && (isspace((unsigned char)e[-1]) || e[-1] == '.'))
		e--;
	if (seo_domain_to_ascii(h, (size_t)(e - h), host, sizeof(host)) != 0)
		return SEO_EINVAL;
	len = strlen(host);
	for (size_t i = 0; i < len; i++)
		host[i] = (char)tolower((unsigned char)host[i]);
	if ((flags & SEO_DOMAIN_STRIP_WWW) && strncmp(host, "www.", 4) == 0 &&
	    strchr(host + 4, '.') != NULL) {
		name += 4;
		len -= 4;
	}
	if (!valid_name(name, len) || len >= outlen)
		return SEO_EINVAL;
	memcpy(out, name, len + 1);
	return 0;
}
