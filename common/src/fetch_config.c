/*
 * fetch_config.c: SEO_FETCH_ALLOW_NETS and SEO_FETCH_CONNECT_TO, parsed by
 * their configuration rows (seo/config.h), into the fetcher's arrays.
 */
#include "seo/fetch_config.h"

#include "seo/errors.h"

#include <stdlib.h>
#include <string.h>

/* `text` as row `key` would be read, the list handed to the caller. */
static int list_parse(seo_cfg key, const char *text, void **out, size_t *n)
{
	seo_cfg_error err;
	seo_cfg_value v;
	int rc = seo_cfg_parse(seo_config_def(key), text, &v, &err);

	*out = rc == 0 ? v.list : NULL;
	*n = rc == 0 ? v.n : 0;
	return rc;
}

int seo_fetch_parse_allow_nets(const char *text, seo_cidr **out, size_t *n)
{
	return list_parse(SEO_CFG_FETCH_ALLOW_NETS, text, (void **)out, n);
}

int seo_fetch_parse_connect_to(const char *text, seo_connect_to **out,
			       size_t *n)
{
	return list_parse(SEO_CFG_FETCH_CONNECT_TO, text, (void **)out, n);
}

/* A malloc'd copy of n elements of `size` bytes at `src`; NULL for none. */
static int copy(const void *src, size_t n, size_t size, void **out)
{
	*out = NULL;
	if (n == 0)
		return 0;
	*out = malloc(n * size);
	if (*out == NULL)
		return SEO_ENOMEM;
	memcpy(*out, src, n * size);
	return 0;
}

int seo_fetch_config_from_env(seo_fetch_config *out)
{
	const seo_cidr *nets;
	const seo_connect_to *ct;

	memset(out, 0, sizeof(*out));
	nets = seo_config_nets(SEO_CFG_FETCH_ALLOW_NETS, &out->n_allow_nets);
	ct = seo_config_connect_to(SEO_CFG_FETCH_CONNECT_TO, &out->n_connect_to);
	if (copy(nets, out->n_allow_nets, sizeof(*nets), (void **)&out->allow_nets) != 0 ||
	    copy(ct, out->n_connect_to, sizeof(*ct), (void **)&out->connect_to) != 0) {
		seo_fetch_config_clear(out);
		return SEO_ENOMEM;
	}
	out->ca_file = seo_config(SEO_CFG_FETCH_CA_FILE);
	return 0;
}

void seo_fetch_config_clear(seo_fetch_config *c)
{
	if (c == NULL)
		return;
	free(c->allow_nets);
	free(c->connect_to);
	memset(c, 0, sizeof(*c));
}
