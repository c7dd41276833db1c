/*
 * fields.c: what the readers take from the fields of the inputs: the
 * registrable domain of a URL, HTML character references, times.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <seo/domain.h>
#include <seo/errors.h>

#include "ingest.h"

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
	return (int64_t)graph_days_from_civil(y, (unsigned)mo, (unsigned)d) *
		       86400 + h * 3600 + mi * 60 + se;
}
