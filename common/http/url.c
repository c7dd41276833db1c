/*
 * url.c: URL validation and canonical form, redirect targets.
 *
 * Resolvers and libcurl accept many spellings of one address, so a host
 * is canonicalised (with inet_aton's rules) to reject the odd ones early;
 * the address policy (netpolicy.c) then judges what getaddrinfo() returns.
 */
#include "seo/fetch.h"

#include "seo/domain.h"
#include "seo/errors.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
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

static int host_parse(const char *h, size_t len, seo_arena *a, seo_url *out)
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
		out->host_kind = SEO_HOST_V6;
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
		out->host_kind = SEO_HOST_V4;
		out->host = seo_arena_strdup(a, buf);
		return out->host ? 0 : SEO_ENOMEM;
	}
	name = seo_arena_strndup(a, h, len);
	if (name == NULL)
		return SEO_ENOMEM;
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	out->host_kind = SEO_HOST_NAME;
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

int seo_url_parse(const char *url, seo_arena *a, seo_url *out)
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
					     out->host_kind == SEO_HOST_V6 ? "[" : "",
					     out->host,
					     out->host_kind == SEO_HOST_V6 ? "]" : "",
					     out->path);
	else
		out->href = seo_arena_printf(a, "%s://%s%s%s:%lu%s", out->scheme,
					     out->host_kind == SEO_HOST_V6 ? "[" : "",
					     out->host,
					     out->host_kind == SEO_HOST_V6 ? "]" : "",
					     port, out->path);
	if (out->href == NULL)
		return SEO_ENOMEM;
	/* Escaping can triple a long non-ASCII URL; a canonical form this
	 * parser would refuse must not be handed on (to a redirect, say). */
	return strlen(out->href) > URL_MAX_LEN ? SEO_EINVAL : 0;
}

int seo_url_resolve(const char *base, const char *ref, seo_arena *a,
		   seo_url *out)
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
	rc = seo_url_parse(joined, a, out);
out:
	curl_free(joined);
	curl_url_cleanup(u);
	return rc;
}

