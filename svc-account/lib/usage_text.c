/*
 * The text of a usage batch's calls (acct_int.h, migration 010): what a
 * busy key repeats at every call (its routes and domains, the gateway's
 * request id prefix, the time to the millisecond) is said once a batch,
 * so that svc-account formats, and PostgreSQL receives and compresses, a
 * quarter of the bytes.
 */
#include "acct_int.h"

#include <string.h>

#include "seo/errors.h"

/* The names a batch keeps in "n"; a name past them is written in full
 * at each call. A batch of one key rarely calls more routes, and its
 * domains repeat in runs when they repeat at all. */
#define NAMES_MAX 16

typedef struct names {
	const char *s[NAMES_MAX];
	size_t n;
} names;

/* A call's name: its index in `d`, added when there is room and
 * `*last`, the index found before, checked first; -1: not kept. */
static int name_index(names *d, const char *s, int *last)
{
	if (*last >= 0 && (d->s[*last] == s || strcmp(d->s[*last], s) == 0))
		return *last;
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i] == s || strcmp(d->s[i], s) == 0)
			return *last = (int)i;
	if (d->n == NAMES_MAX)
		return -1;
	d->s[d->n] = s;
	return *last = (int)d->n++;
}

static void write_text(seo_jw *w, const char *s)
{
	if (s == NULL || s[0] == '\0')
		seo_jw_raw(w, "null", 4);
	else
		seo_jw_string_lossy(w, s, strlen(s));
}

static void write_name(seo_jw *w, names *d, const char *s, int *last)
{
	int i = s != NULL && s[0] != '\0' ? name_index(d, s, last) : -1;

	if (i >= 0)
		seo_jw_int(w, i);
	else
		write_text(w, s);
}

/* The length of the prefix every request id of c[0 .. n) shares, cut
 * back to a character's start; the first id in *id. */
static size_t common_prefix(const acct__batch_call *c, size_t n,
			    const char **id)
{
	const char *r0 = NULL;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		const char *r = c[i].call->request_id;
		size_t k = 0;

		if (r == NULL || r[0] == '\0')
			continue;
		if (r0 == NULL) {
			r0 = r;
			len = strlen(r);
			continue;
		}
		while (k < len && r[k] == r0[k])
			k++;
		len = k;
	}
	while (len > 0 && ((unsigned char)r0[len] & 0xC0) == 0x80)
		len--;
	*id = r0;
	return len;
}

int acct__usage_text(seo_jw *w, const acct__batch_call *c, size_t n,
		     int64_t now, int64_t first)
{
	names d = {{NULL}, 0};
	int last_endpoint = -1, last_domain = -1;
	const char *id;
	size_t plen = common_prefix(c, n, &id);

	seo_jw_raw(w, "{\"p\":", 5);
	seo_jw_string_lossy(w, plen > 0 ? id : "", plen);
	seo_jw_raw(w, ",\"c\":[", 6);
	for (size_t i = 0; i < n; i++) {
		const Seo__Account__V1__LeaseCall *k = c[i].call;
		const char *r = k->request_id;

		seo_jw_raw(w, i == 0 ? "[" : ",[", i == 0 ? 1 : 2);
		seo_jw_int(w, (k->created_at > 0 ? k->created_at : now) - first);
		seo_jw_char(w, ',');
		write_name(w, &d, k->endpoint, &last_endpoint);
		seo_jw_char(w, ',');
		write_name(w, &d, k->domain, &last_domain);
		seo_jw_char(w, ',');
		seo_jw_int(w, k->charged);
		seo_jw_char(w, ',');
		seo_jw_int(w, c[i].cost);
		seo_jw_char(w, ',');
		if (r == NULL || r[0] == '\0')
			seo_jw_raw(w, "null", 4);
		else
			seo_jw_string_lossy(w, r + plen, strlen(r + plen));
		seo_jw_char(w, ']');
	}
	seo_jw_raw(w, "],\"n\":[", 7);
	for (size_t i = 0; i < d.n; i++) {
		if (i > 0)
			seo_jw_char(w, ',');
		write_text(w, d.s[i]);
	}
	seo_jw_raw(w, "]}", 2);
	return w->failed ? SEO_ENOMEM : 0;
}
