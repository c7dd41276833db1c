/*
 * seo/domain.h: the one reading of a domain argument, shared by the
 * gateway's pre-check, svc-graph and svc-realtime's site analyses, and the
 * IDNA conversion of host names (libidn2).
 *
 * Nothing here allocates for the caller: results go into buffers the
 * caller owns.
 */
#ifndef SEO_DOMAIN_H
#define SEO_DOMAIN_H

#include <stddef.h>

/* Longest DNS name, without the trailing dot. */
#define SEO_DOMAIN_MAX 253

/* Flags of seo_domain_normalize(). */
enum {
	/* The link graph's form: a leading "www." is dropped (when a dot
	 * follows it), so that "www.example.com" and "example.com" are one
	 * domain. Without it the host stays as given (site analyses probe
	 * exactly that host). */
	SEO_DOMAIN_STRIP_WWW = 1,
};

/*
 * Normalises a domain as a user types it: blanks around it, a scheme
 * ("https://"), userinfo, a port, a path, query or fragment and trailing
 * dots are dropped; a name with non-ASCII letters becomes punycode
 * (seo_domain_to_ascii()); letters are lowercased. What is left must be a
 * DNS name: labels of letters, digits, '-' and '_', each 1 to 63 bytes, at
 * most SEO_DOMAIN_MAX in all, at least two labels, a letter somewhere and
 * a last label that is no number (an IP address is not a domain). Writes
 * it into `out` (`outlen` bytes with the NUL). Returns 0, or SEO_EINVAL
 * when it is not a domain or does not fit.
 */
int seo_domain_normalize(const char *input, unsigned flags, char *out,
			 size_t outlen);

/*
 * The ASCII form of host name `host` (`len` bytes of UTF-8, no trailing
 * dot): IDNA2008 lookup with UTS #46 non-transitional mapping, as browsers
 * convert a host ("Bücher.example" -> "xn--bcher-kva.example", full-width
 * dots and letters mapped, lowercased). Writes it into `out` (`outlen`
 * bytes with the NUL). A name of ASCII bytes only is copied unchanged.
 * Returns 0, or SEO_EINVAL when the name is no valid IDN (invalid UTF-8,
 * disallowed code points, a label or the name too long) or does not fit.
 */
int seo_domain_to_ascii(const char *host, size_t len, char *out,
			size_t outlen);

/*
 * 1 when the last label of `host` (`len` bytes) is a number, decimal or
 * 0x-hex (WHATWG's "ends in a number"): such a host is an IPv4 address or
 * invalid, never a DNS name.
 */
int seo_domain_ends_in_number(const char *host, size_t len);

#endif
