/*
 * names.c: domain and URL normalisation (libpsl for registrable domains;
 * user input through the common normaliser, seo/domain.h), HTML character
 * references, dates.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include <seo/domain.h>
#include <seo/errors.h>

#include "internal.h"

void graph__reverse_labels(const char *name, size_t len, char *out)
{
	size_t o = 0, end = len;

	while (end > 0) {
		size_t start = end;

		while (start > 0 && name[start - 1] != '.')
			start--;
		memcpy(out + o, name + start, end - start);
		o += end - start;
		if (start > 0)
			out[o++] = '.';
		end = start > 0 ? start - 1 : 0;
	}
	out[o] = '\0';
}

void graph__registrable(const char *name, char *out)
{
	const char *reg = psl_registrable_domain(psl_builtin(), name);

	strcpy(out, reg ? reg : name);
}

int graph__url_domain(const char *url, char *out)
{
	char host[GRAPH_DOMAIN_MAX + 1];

	if (url[0] == '/' && url[1] == '/')
		url += 2;
	else if (strncasecmp(url, "http://", 7) != 0 &&
		 strncasecmp(url, "https://", 8) != 0)
		return SEO_EINVAL;
	if (seo_domain_normalize(url, 0, host, sizeof(host)) != 0)
		return SEO_EINVAL;
	graph__registrable(host, out);
	return 0;
}

int graph_normalize_domain(const char *input, char *out, size_t outlen)
{
	return seo_domain_normalize(input, SEO_DOMAIN_STRIP_WWW, out, outlen);
}

size_t graph__html_unescape(char *s, size_t len)
{
	static const struct {
		const char *name;
		char c;
	} ents[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' },
		{ "quot;", '"' }, { "apos;", '\'' }, { "nbsp;", ' ' },
	};
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '&') {
			size_t k;

			for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
				size_t n = strlen(ents[k].name);

				if (i + 1 + n <= len &&
				    memcmp(s + i + 1, ents[k].name, n) == 0) {
					s[o++] = ents[k].c;
					i += n;
					break;
				}
			}
			if (k < sizeof(ents) / sizeof(ents[0]))
				continue;
			if (i + 2 < len && s[i + 1] == '#') {
				char *end;
				long v = strtol(s + i + 2, &end, 10);

				/* only ASCII: wider code points stay
				 * escaped rather than be mis-encoded */
				if (end < s + len && *end == ';' && v > 0 &&
				    v < 128) {
					s[o++] = (char)v;
					i = (size_t)(end - s);
					continue;
				}
			}
		}
		s[o++] = s[i];
	}
	s[o] = '\0';
	return o;
}

/* Howard Hinnant's civil-date algorithms (public domain description). */
int32_t graph__days_from_civil(int y, unsigned m, unsigned d)
{
	int era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int32_t)doe - 719468;
}

void graph__civil_from_days(int32_t z, int *y, unsigned *m, unsigned *d)
{
	int era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)yoe + era * 400 + (*m <= 2);
}

static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int64_t graph__parse_time(const char *s)
{
	int y, mo, d, h = 0, mi = 0, se = 0;

	if (strlen(s) >= 14 && isdigit((unsigned char)s[4])) {
		y = digits(s, 4);
		mo = digits(s + 4, 2);
		d = digits(s + 6, 2);
		h = digits(s + 8, 2);
		mi = digits(s + 10, 2);
		se = digits(s + 12, 2);
	} else if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		y = digits(s, 4);
		mo = digits(s + 5, 2);
		d = digits(s + 8, 2);
		if (s[10] == 'T' && strlen(s) >= 19) {
			h = digits(s + 11, 2);
			mi = digits(s + 14, 2);
			se = digits(s + 17, 2);
		}
	} else {
		return 0;
	}
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
	    h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60)
		return 0;
	return (int64_t)graph__days_from_civil(y, (unsigned)mo, (unsigned)d) *
		       86400 + h * 3600 + mi * 60 + se;
}
