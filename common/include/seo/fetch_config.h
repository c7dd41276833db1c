/*
 * seo/fetch_config.h: what the fetcher of seo/fetch.h is given: the
 * networks exempt from its private-address block (SEO_FETCH_ALLOW_NETS),
 * the host mappings of SEO_FETCH_CONNECT_TO, the extra CA file
 * (SEO_FETCH_CA_FILE) and the User-Agent. The lists take any number of
 * entries.
 *
 * The syntax of those variables is read once, by their rows' kinds in
 * seo/config.h (which also defines seo_cidr and seo_connect_to); the
 * functions here hand the parsed lists on. They need no network and live
 * in seo_common. All functions returning int return 0 or a negative SEO_E*
 * code (seo/errors.h).
 */
#ifndef SEO_FETCH_CONFIG_H
#define SEO_FETCH_CONFIG_H

#include <stddef.h>

#include "seo/config.h"

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
 * Parses `text` as SEO_FETCH_ALLOW_NETS would be (seo_cfg_parse(); ""
 * gives none) into *out, a malloc'd array of *n entries (NULL when there
 * are none) the caller frees. Returns 0, SEO_EINVAL (a malformed entry;
 * nothing is allocated) or SEO_ENOMEM.
 */
int seo_fetch_parse_allow_nets(const char *text, seo_cidr **out, size_t *n);

/* The same for SEO_FETCH_CONNECT_TO's HOST:PORT:CONNECT_HOST:CONNECT_PORT
 * entries. */
int seo_fetch_parse_connect_to(const char *text, seo_connect_to **out,
			       size_t *n);

/*
 * Fills *out with copies of the lists the process parsed at start
 * (seo_config_init()) and SEO_FETCH_CA_FILE (pointing into the
 * configuration; user_agent is left NULL). Returns 0 or SEO_ENOMEM (then
 * *out holds nothing to free). Release with seo_fetch_config_clear().
 */
int seo_fetch_config_from_env(seo_fetch_config *out);

/* Frees the arrays of `c` and zeroes it. NULL is allowed. */
void seo_fetch_config_clear(seo_fetch_config *c);

#endif
