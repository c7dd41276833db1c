/*
 * seo/fetch_config.h: what the fetcher of seo/fetch.h is given: the
 * networks exempt from its private-address block (SEO_FETCH_ALLOW_NETS),
 * the host mappings of SEO_FETCH_CONNECT_TO, the extra CA file
 * (SEO_FETCH_CA_FILE) and the User-Agent. The lists take any number of
 * entries.
 *
 * The parsers are the one reading of those variables' syntax: the start-up
 * configuration check and the fetcher's users call them. They need no
 * network and live in seo_common. All functions returning int return 0 or
 * a negative SEO_E* code (seo/errors.h).
 */
#ifndef SEO_FETCH_CONFIG_H
#define SEO_FETCH_CONFIG_H

#include <stddef.h>

/* One network: `bits` leading bits of `addr` (4 bytes for AF_INET). */
typedef struct seo_cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
} seo_cidr;

/*
 * One SEO_FETCH_CONNECT_TO entry, as curl's --connect-to: requests for
 * host:port go to connect_host:connect_port instead. An empty host or a
 * zero port matches any; an empty connect_host or zero connect_port keeps
 * the original. `host` is lowercase.
 */
typedef struct seo_connect_to {
	char host[256];
	unsigned short port;
	char connect_host[256];
	unsigned short connect_port;
} seo_connect_to;

/*
 * A fetcher's configuration. Whoever fills it owns the arrays; the fetcher
 * and the policy functions only read them, from any thread, and never
 * copy them: the struct and its arrays must outlive every fetcher made
 * from it. The first connect-to entry matching a host wins.
 */
typedef struct seo_fetch_config {
	seo_cidr *allow_nets;      /* exempt from the block; none by default */
	size_t n_allow_nets;
	seo_connect_to *connect_to;
	size_t n_connect_to;
	const char *ca_file;       /* added to the default trust store; NULL
				      or "": none */
	const char *user_agent;    /* NULL: SEO_FETCH_USER_AGENT */
} seo_fetch_config;

/* The User-Agent of fetches whose configuration names none. */
#define SEO_FETCH_USER_AGENT "Mozilla/5.0 (compatible; seo-data-service/1.0)"

/*
 * Parses comma-separated CIDRs ("127.0.0.0/8, ::1/128"; a bare address is
 * a host route; blank entries are skipped) into *out, a malloc'd array of
 * *n entries (NULL when there are none) the caller frees. Returns 0,
 * SEO_EINVAL (a malformed entry; nothing is allocated) or SEO_ENOMEM.
 */
int seo_fetch_parse_allow_nets(const char *text, seo_cidr **out, size_t *n);

/*
 * Parses comma-separated HOST:PORT:CONNECT_HOST:CONNECT_PORT entries (a
 * host may be "[v6]"; any field but the colons may be empty; blank entries
 * are skipped) into *out, a malloc'd array of *n entries (NULL when there
 * are none) the caller frees. Returns 0, SEO_EINVAL (a malformed entry;
 * nothing is allocated) or SEO_ENOMEM.
 */
int seo_fetch_parse_connect_to(const char *text, seo_connect_to **out,
			       size_t *n);

/*
 * Fills *out from SEO_FETCH_ALLOW_NETS, SEO_FETCH_CONNECT_TO and
 * SEO_FETCH_CA_FILE (the CA path points into the environment; user_agent
 * is left NULL). Returns 0; SEO_EINVAL with *bad set to the name of the
 * malformed variable (static); SEO_ENOMEM. On failure *out holds nothing
 * to free. Release with seo_fetch_config_clear().
 */
int seo_fetch_config_from_env(seo_fetch_config *out, const char **bad);

/* Frees the arrays of `c` and zeroes it. NULL is allowed. */
void seo_fetch_config_clear(seo_fetch_config *c);

#endif
