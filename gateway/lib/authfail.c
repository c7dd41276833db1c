/* Failed authentications per client address (authfail.h). */
#include "authfail.h"

#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

#define BUCKETS 4096
#define MINUTE_MS 60000.0

typedef struct addr {
	struct addr *next;
	double tokens; /* tries left at `at` */
	int64_t at;
	char ip[];
} addr;

struct gw_authfail {
	double per_min;
	addr *table[BUCKETS];
	size_t n;
};

int gw__authfail_new(long long per_min, gw_authfail **out)
{
	gw_authfail *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return SEO_ENOMEM;
	f->per_min = (double)per_min;
	*out = f;
	return 0;
}

/* Drops the entries keep() refuses; with keep NULL, all. */
static void sweep(gw_authfail *f, int64_t now_ms,
		  int (*keep)(const gw_authfail *, const addr *, int64_t))
{
	for (size_t b = 0; b < BUCKETS; b++) {
		addr **p = &f->table[b];

		while (*p != NULL) {
			addr *a = *p;

			if (keep != NULL && keep(f, a, now_ms)) {
				p = &a->next;
				continue;
			}
			*p = a->next;
			free(a);
			f->n--;
		}
	}
}

void gw__authfail_free(gw_authfail *f)
{
	if (f == NULL)
		return;
	sweep(f, 0, NULL);
	free(f);
}

static double tokens_at(const gw_authfail *f, const addr *a, int64_t now_ms)
{
	double t = a->tokens + (double)(now_ms - a->at) * f->per_min / MINUTE_MS;

	return t < f->per_min ? t : f->per_min;
}

static int not_full(const gw_authfail *f, const addr *a, int64_t now_ms)
{
	return tokens_at(f, a, now_ms) < f->per_min;
}

static size_t bucket_of(const char *ip)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *ip != '\0'; ip++)
		h = (h ^ (unsigned char)*ip) * 16777619u;
	return h % BUCKETS;
}

static addr *find(gw_authfail *f, const char *ip)
{
	for (addr *a = f->table[bucket_of(ip)]; a != NULL; a = a->next)
		if (strcmp(a->ip, ip) == 0)
			return a;
	return NULL;
}

long long gw__authfail_wait(gw_authfail *f, const char *ip, int64_t now_ms)
{
	addr *a;
	double t;
	long long ms;

	if (f->per_min <= 0 || (a = find(f, ip)) == NULL)
		return 0;
	t = tokens_at(f, a, now_ms);
	if (t >= 1)
		return 0;
	ms = (long long)((1 - t) * MINUTE_MS / f->per_min);
	return ms < 1000 ? 1 : (ms + 999) / 1000;
}

void gw__authfail_count(gw_authfail *f, const char *ip, int64_t now_ms)
{
	addr *a;
	size_t len;

	if (f->per_min <= 0)
		return;
	a = find(f, ip);
	if (a == NULL) {
		if (f->n >= GW_AUTHFAIL_MAX_ADDRS)
			sweep(f, now_ms, not_full);
		if (f->n >= GW_AUTHFAIL_MAX_ADDRS)
			sweep(f, now_ms, NULL);
		len = strlen(ip);
		a = malloc(sizeof(*a) + len + 1);
		if (a == NULL)
			return;
		memcpy(a->ip, ip, len + 1);
		a->tokens = f->per_min;
		a->at = now_ms;
		a->next = f->table[bucket_of(ip)];
		f->table[bucket_of(ip)] = a;
		f->n++;
	}
	a->tokens = tokens_at(f, a, now_ms) - 1;
	a->at = now_ms;
}
