/*
 * authfail.h: failed authentications per client address. Each address has
 * a bucket of `per_min` tries, refilled at `per_min` a minute; a key that
 * svc-account does not know takes one. An empty bucket answers 429 before
 * svc-account is asked, so that trying keys from one address costs the
 * stack nothing after the first `per_min` (docs/decisions.md). At most
 * GW_AUTHFAIL_MAX_ADDRS addresses are tracked; past that, full buckets
 * are forgotten first, then all. Loop thread only. Internal to the
 * gateway.
 */
#ifndef GW_AUTHFAIL_H
#define GW_AUTHFAIL_H

#include <stdint.h>

#define GW_AUTHFAIL_MAX_ADDRS 65536

typedef struct gw_authfail gw_authfail;

/* Creates the table; `per_min` 0 turns it off (nothing is ever refused).
 * Returns 0 or SEO_ENOMEM; free with gw__authfail_free(). */
int gw__authfail_new(long long per_min, gw_authfail **out);

void gw__authfail_free(gw_authfail *f);

/* 0 when `ip` may try a key at `now_ms` (seo_mono_ms()), else the whole
 * seconds until it may (at least 1). */
long long gw__authfail_wait(gw_authfail *f, const char *ip, int64_t now_ms);

/* Counts one failed authentication of `ip` at `now_ms`. Without memory
 * it is not counted. */
void gw__authfail_count(gw_authfail *f, const char *ip, int64_t now_ms);

#endif
