/*
 * http_limits.c: the front end's limits table (gw_http.h) and the count of
 * open connections per peer address that GW_LIM_CONNS_PER_IP caps.
 *
 * The counts are a chained hash table keyed by 16 bytes: an IPv4 address
 * as IPv4-mapped IPv6, an IPv6 address cut to its /64 (one customer's
 * allocation, as the free tools count it). An entry lives while its
 * address has a connection open.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http_internal.h"
#include "seo/errors.h"

#define PEERS_BUCKETS 1024 /* a power of two */

static const gw_http_limit_def limits[GW__LIM_COUNT] = {
#define GW_HTTP_LIMIT_ROW(id, dflt, unit, meaning) \
	[GW_LIM_##id] = {#id, dflt, unit, meaning},
	GW_HTTP_LIMITS(GW_HTTP_LIMIT_ROW)
#undef GW_HTTP_LIMIT_ROW
};

const gw_http_limit_def *gw_http_limit_info(gw_http_limit id)
{
	return &limits[id];
}

struct peer {
	struct peer *next;
	unsigned char key[16];
	unsigned count;
};

struct gw__peers {
	struct peer *bucket[PEERS_BUCKETS];
};

gw__peers *gw__peers_new(void)
{
	return calloc(1, sizeof(gw__peers));
}

void gw__peers_free(gw__peers *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < PEERS_BUCKETS; i++) {
		struct peer *e, *next;

		for (e = p->bucket[i]; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(p);
}

void gw__peer_key(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 8);
	}
}

/* FNV-1a: the key is chosen by the client, but a bucket's chain is at most
 * one entry per address it has connected from. */
static struct peer **slot(gw__peers *p, const unsigned char key[16])
{
	uint32_t h = 2166136261u;
	struct peer **e;

	for (int i = 0; i < 16; i++)
		h = (h ^ key[i]) * 16777619u;
	for (e = &p->bucket[h & (PEERS_BUCKETS - 1)]; *e != NULL;
	     e = &(*e)->next)
		if (memcmp((*e)->key, key, 16) == 0)
			break;
	return e;
}

int gw__peers_add(gw__peers *p, const unsigned char key[16], unsigned max)
{
	struct peer **e = slot(p, key);

	if (*e == NULL) {
		if (max == 0)
			return SEO_EDENIED;
		*e = calloc(1, sizeof(**e));
		if (*e == NULL)
			return SEO_ENOMEM;
		memcpy((*e)->key, key, 16);
	} else if ((*e)->count >= max) {
		return SEO_EDENIED;
	}
	(*e)->count++;
	return 0;
}

void gw__peers_remove(gw__peers *p, const unsigned char key[16])
{
	struct peer **e = slot(p, key);
	struct peer *gone = *e;

	if (gone == NULL || --gone->count > 0)
		return;
	*e = gone->next;
	free(gone);
}
