/*
 * urlcheck.c: URL validation, the private-address policy, checked name
 * resolution and SEO_FETCH_CONNECT_TO parsing.
 *
 * The policy is applied to addresses, never to host text: resolvers and
 * libcurl accept many spellings of one address, so the text is only
 * canonicalised (with inet_aton's rules) to reject the odd ones early, and
 * whatever getaddrinfo() returns is what gets checked and later pinned.
 */
#include "rt.h"

#include "seo/domain.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define URL_MAX_LEN 8192

/* ---- IPv4 text in inet_aton's forms -------------------------------------- */

/* One dot-separated part: 0x hex, 0-prefixed octal or decimal. */
static int v4_part(const char *s, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len == 0)
		return SEO_EINVAL;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < len; i++) {
		int c = (unsigned char)s[i], d;

		if (isdigit(c))
			d = c - '0';
		else if (base == 16 && isxdigit(c))
			d = tolower(c) - 'a' + 10;
		else
			return SEO_EINVAL;
		if (d >= (int)base)
			return SEO_EINVAL;
		v = v * base + (unsigned)d;
		if (v > 0xffffffffULL)
			return SEO_EINVAL;
	}
	*out = v;
	return 0;
}

/* Parses a.b.c.d, a.b.c, a.b or a as inet_aton() does (the last part
 * fills the remaining bytes). */
static int v4_parse(const char *s, size_t len, unsigned char out[4])
{
	unsigned long long parts[4];
	size_t n = 0, start = 0;
	unsigned long long v;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (n == 4 || v4_part(s + start, i - start, &parts[n]) != 0)
			return SEO_EINVAL;
		n++;
		start = i + 1;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (parts[i] > 0xff)
			return SEO_EINVAL;
	v = parts[n - 1];
	if (v >> (8 * (5 - n)) != 0)
		return SEO_EINVAL;
	for (size_t i = 0; i + 1 < n; i++)
		v |= parts[i] << (8 * (3 - i));
	out[0] = (unsigned char)(v >> 24);
	out[1] = (unsigned char)(v >> 16);
	out[2] = (unsigned char)(v >> 8);
	out[3] = (unsigned char)v;
	return 0;
}

/* ---- URL parsing ---------------------------------------------------------- */

static int host_parse(const char *h, size_t len, seo_arena *a, rt_url *out)
{
	char buf[INET6_ADDRSTRLEN], ascii[SEO_DOMAIN_MAX + 2];
	unsigned char addr[16];
	char *name;
	size_t label = 0;

	if (len > 0 && h[0] == '[') {
		/* IPv6 literal; zone ids and IPvFuture are refused. */
		if (len < 3 || h[len - 1] != ']' || len - 2 >= sizeof(buf))
			return SEO_EINVAL;
		memcpy(buf, h + 1, len - 2);
		buf[len - 2] = '\0';
		if (inet_pton(AF_INET6, buf, addr) != 1)
			return SEO_EINVAL;
		inet_ntop(AF_INET6, addr, buf, sizeof(buf));
		out->host_kind = RT_HOST_V6;
		out->host = seo_arena_strdup(a, buf);
		return out->host ? 0 : SEO_ENOMEM;
	}
	if (len > 0 && h[len - 1] == '.')
		len--;
	/* an IDN is looked up in punycode, as browsers do: the checks below
	 * and the address policy see that form */
	if (seo_domain_to_ascii(h, len, ascii, sizeof(ascii)) != 0)
		return SEO_EINVAL;
	h = ascii;
	len = strlen(ascii);
	if (len == 0 || len > 253)
		return SEO_EINVAL;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)h[i];

		if (c == '.') {
			if (label == 0)
				return SEO_EINVAL;
			label = 0;
			continue;
		}
		if (!isalnum(c) && c != '-' && c != '_')
			return SEO_EINVAL;
		if (++label > 63)
			return SEO_EINVAL;
	}
	/* "a.." would keep a trailing dot and hide a final number */
	if (label == 0)
		return SEO_EINVAL;
	if (seo_domain_ends_in_number(h, len)) {
		if (v4_parse(h, len, addr) != 0)
			return SEO_EINVAL;
		inet_ntop(AF_INET, addr, buf, sizeof(buf));
		out->host_kind = RT_HOST_V4;
		out->host = seo_arena_strdup(a, buf);
		return out->host ? 0 : SEO_ENOMEM;
	}
	name = seo_arena_strndup(a, h, len);
	if (name == NULL)
		return SEO_ENOMEM;
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	out->host_kind = RT_HOST_NAME;
	out->host = name;
	return 0;
}

/* Characters percent-encoded in a path or query (the rest pass as is). */
static int path_needs_escape(int c)
{
	return c >= 0x80 || strchr("\"<>\\^`{|}", c) != NULL;
}

static int path_copy(const char *p, size_t len, seo_arena *a, const char **out)
{
	static const char hex[] = "0123456789ABCDEF";
	char *dst, *d;

	dst = seo_arena_alloc(a, 3 * len + 2);
	if (dst == NULL)
		return SEO_ENOMEM;
	d = dst;
	if (len == 0 || p[0] != '/')
		*d++ = '/';
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)p[i];

		if (path_needs_escape(c)) {
			*d++ = '%';
			*d++ = hex[c >> 4];
			*d++ = hex[c & 15];
		} else {
			*d++ = (char)c;
		}
	}
	*d = '\0';
	*out = dst;
	return 0;
}

int rt_url_parse(const char *url, seo_arena *a, rt_url *out)
{
	const char *p, *auth, *auth_end, *host_end;
	unsigned default_port;
	unsigned long port;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	len = strlen(url);
	if (len == 0 || len > URL_MAX_LEN)
		return SEO_EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)url[i];

		/* whitespace and controls: resolvers and browsers disagree on
		 * them; '#' is a fragment, which the spec refuses */
		if (c <= 0x20 || c == 0x7f || c == '#')
			return SEO_EINVAL;
	}
	if (strncasecmp(url, "http://", 7) == 0) {
		out->scheme = "http";
		default_port = 80;
		auth = url + 7;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		out->scheme = "https";
		default_port = 443;
		auth = url + 8;
	} else {
		return SEO_EINVAL;
	}
	auth_end = auth + strcspn(auth, "/?");
	for (p = auth; p < auth_end; p++)
		/* userinfo, percent-encoding and backslashes in the authority
		 * are refused outright */
		if (*p == '@' || *p == '%' || *p == '\\')
			return SEO_EINVAL;
	if (*auth == '[') {
		host_end = memchr(auth, ']', (size_t)(auth_end - auth));
		if (host_end == NULL)
			return SEO_EINVAL;
		host_end++;
	} else {
		host_end = memchr(auth, ':', (size_t)(auth_end - auth));
		if (host_end == NULL)
			host_end = auth_end;
	}
	port = default_port;
	if (host_end < auth_end) {
		char *end;

		if (*host_end != ':')
			return SEO_EINVAL;
		if (host_end + 1 < auth_end) {
			if (!isdigit((unsigned char)host_end[1]) ||
			    auth_end - host_end > 6)
				return SEO_EINVAL;
			port = strtoul(host_end + 1, &end, 10);
			if (end != auth_end || port == 0 || port > 65535)
				return SEO_EINVAL;
		}
	}
	out->port = (unsigned short)port;
	rc = host_parse(auth, (size_t)(host_end - auth), a, out);
	if (rc != 0)
		return rc;
	rc = path_copy(auth_end, strlen(auth_end), a, &out->path);
	if (rc != 0)
		return rc;
	if (port == default_port)
		out->href = seo_arena_printf(a, "%s://%s%s%s%s", out->scheme,
					     out->host_kind == RT_HOST_V6 ? "[" : "",
					     out->host,
					     out->host_kind == RT_HOST_V6 ? "]" : "",
					     out->path);
	else
		out->href = seo_arena_printf(a, "%s://%s%s%s:%lu%s", out->scheme,
					     out->host_kind == RT_HOST_V6 ? "[" : "",
					     out->host,
					     out->host_kind == RT_HOST_V6 ? "]" : "",
					     port, out->path);
	if (out->href == NULL)
		return SEO_ENOMEM;
	/* Escaping can triple a long non-ASCII URL; a canonical form this
	 * parser would refuse must not be handed on (to a redirect, say). */
	return strlen(out->href) > URL_MAX_LEN ? SEO_EINVAL : 0;
}

int rt_url_resolve(const char *base, const char *ref, seo_arena *a,
		   rt_url *out)
{
	CURLU *u = curl_url();
	char *joined = NULL;
	int rc = SEO_EINVAL;

	if (u == NULL)
		return SEO_ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK)
		goto out;
	/* Location values often carry raw spaces or UTF-8: encode them. */
	if (curl_url_set(u, CURLUPART_URL, ref,
			 CURLU_URLENCODE | CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
		goto out;
	/* a fragment is never sent; it must not make the target invalid */
	curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &joined, 0) != CURLUE_OK)
		goto out;
	rc = rt_url_parse(joined, a, out);
out:
	curl_free(joined);
	curl_url_cleanup(u);
	return rc;
}

/* ---- the address policy --------------------------------------------------- */

static int prefix_match(const unsigned char *addr, const unsigned char *net,
			unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(addr, net, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((addr[whole] ^ net[whole]) & (0xff << (8 - rest))) == 0;
}

/* IPv4 networks no fetch may reach (IANA special-purpose registry). */
static const struct {
	unsigned char net[4];
	unsigned bits;
} v4_blocked_nets[] = {
	{{0, 0, 0, 0}, 8},        /* "this network" */
	{{10, 0, 0, 0}, 8},       /* private */
	{{100, 64, 0, 0}, 10},    /* CGNAT; also cloud metadata 100.100.100.200 */
	{{127, 0, 0, 0}, 8},      /* loopback */
	{{169, 254, 0, 0}, 16},   /* link-local; metadata 169.254.169.254 */
	{{172, 16, 0, 0}, 12},    /* private */
	{{192, 0, 0, 0}, 24},     /* protocol assignments; metadata 192.0.0.192 */
	{{192, 0, 2, 0}, 24},     /* documentation */
	{{192, 31, 196, 0}, 24},  /* AS112 */
	{{192, 52, 193, 0}, 24},  /* AMT */
	{{192, 88, 99, 0}, 24},   /* 6to4 relay anycast */
	{{192, 168, 0, 0}, 16},   /* private */
	{{192, 175, 48, 0}, 24},  /* direct delegation AS112 */
	{{198, 18, 0, 0}, 15},    /* benchmarking */
	{{198, 51, 100, 0}, 24},  /* documentation */
	{{203, 0, 113, 0}, 24},   /* documentation */
	{{224, 0, 0, 0}, 4},      /* multicast */
	{{240, 0, 0, 0}, 4},      /* reserved and broadcast */
};

static int v4_blocked(const unsigned char *a)
{
	for (size_t i = 0; i < sizeof(v4_blocked_nets) / sizeof(v4_blocked_nets[0]); i++)
		if (prefix_match(a, v4_blocked_nets[i].net, v4_blocked_nets[i].bits))
			return 1;
	return 0;
}

static int v6_blocked(const unsigned char *a)
{
	/* full 16 bytes: prefix_match() reads the byte holding the last
	 * partial bits */
	static const unsigned char nat64[16] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char doc[16] = {0x20, 0x01, 0x0d, 0xb8};
	static const unsigned char doc2[16] = {0x3f, 0xff};
	static const unsigned char ietf[16] = {0x20, 0x01};

	/* NAT64 reaches whatever IPv4 address it wraps. */
	if (memcmp(a, nat64, 12) == 0)
		return v4_blocked(a + 12);
	/* Only global unicast is fetchable: this refuses ::, ::1, mapped,
	 * compatible and translated IPv4, discard-only, ULA, link-local,
	 * site-local and multicast in one test. */
	if ((a[0] & 0xe0) != 0x20)
		return 1;
	if (prefix_match(a, ietf, 23) || prefix_match(a, doc, 32) ||
	    prefix_match(a, doc2, 20))
		return 1; /* Teredo, ORCHID, benchmarking; documentation */
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_blocked(a + 2); /* 6to4 wraps an IPv4 address */
	return 0;
}

static int policy_allows(const rt_netpolicy *p, int family,
			 const unsigned char *addr)
{
	if (p == NULL)
		return 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->nets[i].family == family &&
		    prefix_match(addr, p->nets[i].addr, p->nets[i].bits))
			return 1;
	return 0;
}

int rt_addr_blocked(const rt_netpolicy *policy, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const unsigned char *a = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;

		return v4_blocked(a) && !policy_allows(policy, AF_INET, a);
	}
	if (sa->sa_family == AF_INET6) {
		const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		return v6_blocked(a) && !policy_allows(policy, AF_INET6, a);
	}
	return 1;
}

static int cidr_parse(const char *s, size_t len, rt_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 5];
	char *slash, *end;
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
		bits = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || bits > out->bits)
			return SEO_EINVAL;
		out->bits = (unsigned)bits;
	}
	return 0;
}

int rt_netpolicy_parse(const char *list, rt_netpolicy *out)
{
	const char *p = list;

	out->n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int blank = 1;

		for (size_t i = 0; i < len; i++)
			if (!isspace((unsigned char)p[i]))
				blank = 0;
		if (!blank) {
			if (out->n == RT_MAX_ALLOW_NETS ||
			    cidr_parse(p, len, &out->nets[out->n]) != 0)
				return SEO_EINVAL;
			out->n++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int rt_resolve_checked(const rt_netpolicy *policy, const char *host,
		       unsigned short port, struct sockaddr_storage *out)
{
	struct addrinfo hints, *res = NULL;
	unsigned char probe[16];
	int rc = SEO_EIO;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (inet_pton(AF_INET, host, probe) == 1 || inet_pton(AF_INET6, host, probe) == 1)
		hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
		goto out;
	for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		if (rt_addr_blocked(policy, ai->ai_addr)) {
			rc = SEO_EDENIED;
			goto out;
		}
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	if (out->ss_family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)out)->sin6_port = htons(port);
	rc = 0;
out:
	if (res != NULL)
		freeaddrinfo(res);
	return rc;
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

int rt_connect_to_parse(const char *list, rt_connect_to *out, size_t *n)
{
	const char *p = list;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *s = p, *end = p + len;

		while (s < end && isspace((unsigned char)*s))
			s++;
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
		if (s < end) {
			rt_connect_to *e = &out[*n];

			if (*n == RT_MAX_CONNECT_TO)
				return SEO_EINVAL;
			if (ct_host(&s, end, e->host, sizeof(e->host)) ||
			    ct_colon(&s, end) || ct_port(&s, end, &e->port) ||
			    ct_colon(&s, end) ||
			    ct_host(&s, end, e->connect_host, sizeof(e->connect_host)) ||
			    ct_colon(&s, end) || ct_port(&s, end, &e->connect_port) ||
			    s != end)
				return SEO_EINVAL;
			for (char *c = e->host; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			(*n)++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}
