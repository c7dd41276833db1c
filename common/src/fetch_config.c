/*
 * fetch_config.c: the syntax of SEO_FETCH_ALLOW_NETS and
 * SEO_FETCH_CONNECT_TO, read into arrays as long as the lists.
 */
#include "seo/fetch_config.h"

#include "seo/config.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Reads the trimmed, non-empty entry [s, end) into `elem`. */
typedef int (*entry_fn)(const char *s, const char *end, void *elem);

/* Walks the comma-separated `text`, blank entries skipped, into a
 * malloc'd array of `size`-byte elements (NULL when empty). */
static int list_parse(const char *text, size_t size, entry_fn parse,
		      void **out, size_t *n)
{
	size_t cap = 1, k = 0;
	const char *p = text;
	char *arr;

	*out = NULL;
	*n = 0;
	for (const char *c = text; *c; c++)
		cap += *c == ',';
	arr = calloc(cap, size);
	if (arr == NULL)
		return SEO_ENOMEM;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *s = p, *end = p + len;

		while (s < end && isspace((unsigned char)*s))
			s++;
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
		if (s < end && parse(s, end, arr + k++ * size) != 0) {
			free(arr);
			return SEO_EINVAL;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (k == 0) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = k;
	return 0;
}

/* ---- SEO_FETCH_ALLOW_NETS ------------------------------------------------- */

static int cidr_parse(const char *s, const char *end, void *elem)
{
	seo_cidr *out = elem;
	char buf[INET6_ADDRSTRLEN + 5];
	size_t len = (size_t)(end - s);
	char *slash, *stop;
	unsigned long bits;

	if (len >= sizeof(buf))
		return SEO_EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, out->addr) == 1)
		out->family = AF_INET6;
	else
		return SEO_EINVAL;
	out->bits = out->family == AF_INET ? 32 : 128;
	if (slash != NULL) {
		if (!isdigit((unsigned char)slash[1]))
			return SEO_EINVAL;
		bits = strtoul(slash + 1, &stop, 10);
		if (*stop != '\0' || bits > out->bits)
			return SEO_EINVAL;
		out->bits = (unsigned)bits;
	}
	return 0;
}

int seo_fetch_parse_allow_nets(const char *text, seo_cidr **out, size_t *n)
{
	return list_parse(text, sizeof(**out), cidr_parse, (void **)out, n);
}

/* ---- SEO_FETCH_CONNECT_TO ------------------------------------------------- */

/* Takes one host field (possibly "[v6]") up to the next ':' of `s`. */
static int ct_host(const char **s, const char *end, char *dst, size_t cap)
{
	const char *p = *s, *stop;
	size_t len;

	if (p < end && *p == '[') {
		stop = memchr(p, ']', (size_t)(end - p));
		if (stop == NULL)
			return SEO_EINVAL;
		p++;
		len = (size_t)(stop - p);
		stop++;
	} else {
		stop = memchr(p, ':', (size_t)(end - p));
		if (stop == NULL)
			stop = end;
		len = (size_t)(stop - p);
	}
	if (len >= cap)
		return SEO_EINVAL;
	memcpy(dst, p, len);
	dst[len] = '\0';
	*s = stop;
	return 0;
}

static int ct_port(const char **s, const char *end, unsigned short *port)
{
	const char *p = *s;
	unsigned long v = 0;

	while (p < end && *p != ':') {
		if (!isdigit((unsigned char)*p))
			return SEO_EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			return SEO_EINVAL;
		p++;
	}
	*port = (unsigned short)v;
	*s = p;
	return 0;
}

static int ct_colon(const char **s, const char *end)
{
	if (*s >= end || **s != ':')
		return SEO_EINVAL;
	(*s)++;
	return 0;
}

static int connect_to_parse(const char *s, const char *end, void *elem)
{
	seo_connect_to *e = elem;

	if (ct_host(&s, end, e->host, sizeof(e->host)) ||
	    ct_colon(&s, end) || ct_port(&s, end, &e->port) ||
	    ct_colon(&s, end) ||
	    ct_host(&s, end, e->connect_host, sizeof(e->connect_host)) ||
	    ct_colon(&s, end) || ct_port(&s, end, &e->connect_port) ||
	    s != end)
		return SEO_EINVAL;
	for (char *c = e->host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return 0;
}

int seo_fetch_parse_connect_to(const char *text, seo_connect_to **out,
			       size_t *n)
{
	return list_parse(text, sizeof(**out), connect_to_parse, (void **)out, n);
}

/* ---- from the environment ------------------------------------------------- */

int seo_fetch_config_from_env(seo_fetch_config *out, const char **bad)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = seo_fetch_parse_allow_nets(seo_config(SEO_CFG_FETCH_ALLOW_NETS),
					&out->allow_nets, &out->n_allow_nets);
	if (rc == SEO_EINVAL)
		*bad = seo_config_def(SEO_CFG_FETCH_ALLOW_NETS)->name;
	if (rc == 0) {
		rc = seo_fetch_parse_connect_to(seo_config(SEO_CFG_FETCH_CONNECT_TO),
						&out->connect_to, &out->n_connect_to);
		if (rc == SEO_EINVAL)
			*bad = seo_config_def(SEO_CFG_FETCH_CONNECT_TO)->name;
	}
	if (rc != 0) {
		seo_fetch_config_clear(out);
		return rc;
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
