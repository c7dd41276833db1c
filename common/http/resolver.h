/*
 * resolver.h: the fetcher's name lookups, off the loop thread and never
 * waited for past a fetch's deadline. Each lookup runs getaddrinfo() on a
 * detached thread of its own; a fetch that ends first abandons it, and the
 * thread frees what is left when getaddrinfo() returns. Nothing joins a
 * thread stuck in a lookup, so freeing a fetcher never waits on DNS.
 * Loop-thread functions: all but the lookup threads themselves.
 */
#ifndef SEO_HTTP_RESOLVER_H
#define SEO_HTTP_RESOLVER_H

#include <netdb.h>

#include <event2/event.h>

#include "seo/fetch.h"

/* Lookup threads alive at once in the process (abandoned ones included);
 * beyond it a lookup fails at once rather than piling up threads. */
#define SEO_RESOLVER_MAX_THREADS 256

typedef struct seo__resolver seo__resolver;
typedef struct seo__lookup seo__lookup;

/*
 * A lookup ended: `res` (NULL on failure; the callee owns it and frees it
 * with freeaddrinfo()) and getaddrinfo()'s return code, or EAI_AGAIN when
 * no thread could be started. Called on the loop thread, never from inside
 * seo__lookup_start().
 */
typedef void (*seo__lookup_fn)(struct addrinfo *res, int gai_rc, void *ud);

/* Creates a resolver on `base`. Returns 0, SEO_EIO or SEO_ENOMEM. */
int seo__resolver_new(struct event_base *base, seo__resolver **out);

/* Frees the resolver; lookups in flight are abandoned (no callback). NULL
 * is allowed. */
void seo__resolver_free(seo__resolver *r);

/*
 * Looks `host` up (TCP addresses of any family; a numeric host is not
 * sent to DNS). Sets *out to a handle valid until the callback or
 * seo__lookup_abandon(). Returns 0 (done will be called) or SEO_ENOMEM.
 */
int seo__lookup_start(seo__resolver *r, const char *host, seo__lookup_fn done,
		      void *ud, seo__lookup **out);

/* The callback of `l` will not be called; its thread cleans up. */
void seo__lookup_abandon(seo__lookup *l);

/*
 * Checks every address of `res` against the policy of `cfg` (one blocked
 * address refuses the host) and stores the first, with `port`, in *out.
 * Returns 0 or SEO_EDENIED (netpolicy.c).
 */
int seo__addrs_checked(const seo_fetch_config *cfg, const struct addrinfo *res,
		       unsigned short port, struct sockaddr_storage *out);

/* getaddrinfo() as lookups call it; a test may slow it down. */
extern int (*seo__getaddrinfo)(const char *node, const char *service,
			       const struct addrinfo *hints,
			       struct addrinfo **res);

#endif
