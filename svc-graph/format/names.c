/*
 * names.c: domain names as the index keeps them (user input through the
 * common normaliser, seo/domain.h; libpsl for registrable domains) and
 * the day numbers of its dates.
 */
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include <seo/domain.h>
#include <seo/errors.h>

#include "format.h"

void graph_reverse_labels(const char *name, size_t len, char *out)
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

int graph_normalize_domain(const char *input, char *out, size_t outlen)
{
	return seo_domain_normalize(input, SEO_DOMAIN_STRIP_WWW, out, outlen);
}

/* Howard Hinnant's civil-date algorithms (public domain description). */
int32_t graph_days_from_civil(int y, unsigned m, unsigned d)
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

void graph_civil_from_days(int32_t z, int *y, unsigned *m, unsigned *d)
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
