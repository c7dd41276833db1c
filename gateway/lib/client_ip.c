/* client_ip.c: the client's address behind trusted proxies (client_ip.h). */
#include "client_ip.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "seo/errors.h"
#include "seo/config.h"

/* The trusted networks: SEO_TRUSTED_PROXIES, parsed by its row. */
struct gw_proxies {
	seo_cidr *nets;
	size_t n;
};

/* An address in text, into family and bytes. Returns 0 or SEO_EINVAL. */
static int addr_parse(const char *s, int *family, unsigned char *addr)
{
	if (inet_pton(AF_INET, s, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, s, addr) == 1)
		*family = AF_INET6;
	else
		return SEO_EINVAL;
	return 0;
}

int gw__proxies_parse(const char *text, gw_proxies **out)
{
	gw_proxies *px = calloc(1, sizeof(*px));
	seo_cfg_value v;
	seo_cfg_error err;
	int rc;

	*out = NULL;
	if (px == NULL)
		return SEO_ENOMEM;
	rc = seo_cfg_parse(seo_config_def(SEO_CFG_TRUSTED_PROXIES), text, &v,
			   &err);
	if (rc == 0) {
		px->nets = v.list;
		px->n = v.n;
	}
	if (rc != 0 || px->n == 0)
		free(px);
	else
		*out = px;
	return rc;
}

void gw__proxies_free(gw_proxies *p)
{
	if (p != NULL)
		free(p->nets);
	free(p);
}

static int trusted(const gw_proxies *p, const char *ip)
{
	unsigned char a[16];
	int family;

	return p != NULL && addr_parse(ip, &family, a) == 0 &&
	       seo_cidr_match(p->nets, p->n, family, a);
}

/* s without the blanks around it (cut in place). */
static char *trim(char *s)
{
	size_t len;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
	return s;
}

const char *gw__client_ip(const gw_proxies *p, const char *peer,
			  const char *xff, seo_arena *arena)
{
	const char *client = peer;
	unsigned char probe[16];
	char *list, *comma, *hop;
	int family;

	if (!trusted(p, client) || xff == NULL ||
	    (list = seo_arena_strdup(arena, xff)) == NULL)
		return client;
	for (;;) {
		comma = strrchr(list, ',');
		hop = trim(comma != NULL ? comma + 1 : list);
		if (addr_parse(hop, &family, probe) != 0)
			return client;
		client = hop;
		if (!trusted(p, hop) || comma == NULL)
			return client;
		*comma = '\0';
	}
}
