/*
 * rpc_wire.c: the small text codecs of the gRPC wire protocol (status
 * message percent-encoding, grpc-timeout, content-type).
 */
#include "rpc_internal.h"

#include "seo/errors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t rpc_pct_encode(const char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)in[i];

		if (b >= 0x20 && b <= 0x7e && b != '%') {
			out[o++] = (char)b;
		} else {
			out[o++] = '%';
			out[o++] = hex[b >> 4];
			out[o++] = hex[b & 15];
		}
	}
	out[o] = '\0';
	return o;
}

size_t rpc_pct_decode(const char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (in[i] == '%' && i + 2 < n &&
		    (hi = hexval(in[i + 1])) >= 0 &&
		    (lo = hexval(in[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return o;
}

int rpc_timeout_parse(const char *v, int64_t *ms)
{
	int64_t n = 0;
	size_t digits = 0;

	if (v == NULL)
		return SEO_EINVAL;
	while (v[digits] >= '0' && v[digits] <= '9') {
		n = n * 10 + (v[digits] - '0');
		digits++;
	}
	/* The spec allows at most 8 digits, which keeps hours in range. */
	if (digits == 0 || digits > 8 || v[digits + 1] != '\0')
		return SEO_EINVAL;
	switch (v[digits]) {
	case 'H': *ms = n * 3600000; break;
	case 'M': *ms = n * 60000; break;
	case 'S': *ms = n * 1000; break;
	case 'm': *ms = n; break;
	case 'u': *ms = (n + 999) / 1000; break;
	case 'n': *ms = (n + 999999) / 1000000; break;
	default: return SEO_EINVAL;
	}
	return 0;
}

void rpc_timeout_format(int64_t ms, char out[16])
{
	static const char unit[] = "mSMH";
	static const int64_t div[] = {1, 1000, 60000, 3600000};
	int u = 0;

	/* At most 8 digits: switch to a coarser unit, rounding up. */
	while (u < 3 && (ms + div[u] - 1) / div[u] > 99999999)
		u++;
	/* The value fits in 8 digits, so int keeps the output within 16. */
	snprintf(out, 16, "%d%c", (int)((ms + div[u] - 1) / div[u]), unit[u]);
}

int rpc_content_type_ok(const char *ct)
{
	static const char base[] = "application/grpc";
	const char *rest;

	if (ct == NULL || strncasecmp(ct, base, sizeof(base) - 1) != 0)
		return 0;
	rest = ct + sizeof(base) - 1;
	if (strncasecmp(rest, "+proto", 6) == 0)
		rest += 6;
	return *rest == '\0' || *rest == ';';
}
