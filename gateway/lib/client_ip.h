/*
 * client_ip.h: who the client is, for the routes that forward its address
 * (per-IP quotas, logs): the socket's peer, or, when that peer is a proxy
 * listed in SEO_TRUSTED_PROXIES, the address X-Forwarded-For names.
 * Internal to the gateway.
 */
#ifndef GW_CLIENT_IP_H
#define GW_CLIENT_IP_H

#include <stddef.h>

#include "seo/arena.h"

typedef struct gw_proxies gw_proxies;

/*
 * Parses SEO_TRUSTED_PROXIES' syntax, that of SEO_FETCH_ALLOW_NETS
 * (seo/fetch_config.h): comma-separated CIDRs ("10.0.0.0/8, ::1/128"; a
 * bare address is one host; blanks skipped; any number of entries). Sets *out (NULL for an empty list), freed with
 * gw__proxies_free(). Returns 0, SEO_EINVAL for a malformed entry (nothing
 * allocated), SEO_ENOMEM.
 */
int gw__proxies_parse(const char *text, gw_proxies **out);

void gw__proxies_free(gw_proxies *p);

/*
 * The client's address: `peer` (the socket's), unless it is a trusted
 * proxy; then `xff` (the X-Forwarded-For value, may be NULL) is read from
 * its right end, skipping the trusted proxies, and the first other address
 * is the client's (a malformed entry stops the walk at the last trusted
 * hop). The text is `peer` or on `arena`.
 */
const char *gw__client_ip(const gw_proxies *p, const char *peer,
			  const char *xff, seo_arena *arena);

#endif
