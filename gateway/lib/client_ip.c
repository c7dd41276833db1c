/* client_ip.c: the client's address behind trusted proxies (client_ip.h). */
#include "client_ip.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "seo/errors.h"

typedef struct net {
	int family;
	unsigned char addr[16];
	unsigned bits;
} net;

struct gw_proxies {
	size_t n;
	net nets[];
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

/* "addr[/bits]" of s[0..len), blanks around allowed. */
static int net_parse(const char *s, size_t len, net *out)
{
	char buf[INET6_ADDRSTRLEN + 5], *slash, *end;
	unsigned long bits;

	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return SEO_EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	memset(out, 0, sizeof(*out));
	if (addr_parse(buf, &out->family, out->addr) != 0)
		return SEO_EINVAL;
	out->bits = out->family == AF_INET ? 32 : 128;
	if (slash == NULL)
		return 0;
	bits = strtoul(slash + 1, &end, 10);
	if (!isdigit((unsigned char)slash[1]) || *end != '\0' || bits > out->bits)
		return SEO_EINVAL;
	out->bits = (unsigned)bits;
	return 0;
}

int gw__proxies_parse(const char *text, gw_proxies **out)
{
	size_t n = 1, len;
	const char *p;
	gw_proxies *px;

	*out = NULL;
	for (p = text; *p != '\0'; p++)
		n += *p == ',';
	px = malloc(sizeof(*px) + n * sizeof(px->nets[0]));
	if (px == NULL)
		return SEO_ENOMEM;
	px->n = 0;
	for (p = text;; p += len + 1) {
		len = strcspn(p, ",");
		if (strspn(p, " \t") < len &&
		    net_parse(p, len, &px->nets[px->n++]) != 0) {
			free(px);
			return SEO_EINVAL;
		}
		if (p[len] == '\0')
			break;
	}
	if (px->n == 0)
		free(px);
	else
		*out = px;
	return 0;
}

void gw__proxies_free(gw_proxies *p)
{
	free(p);
}

static int trusted(const gw_proxies *p, const char *ip)
{
	unsigned char a[16];
	int family;

	if (p == NULL || addr_parse(ip, &family, a) != 0)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		const net *m = &p->nets[i];
		unsigned whole = m->bits / 8, rest = m->bits % 8;

		if (m->family == family && memcmp(a, m->addr, whole) == 0 &&
		    (rest == 0 ||
		     ((a[whole] ^ m->addr[whole]) & (0xff << (8 - rest))) == 0))
			return 1;
	}
	return 0;
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
