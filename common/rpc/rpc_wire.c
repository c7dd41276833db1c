/*
 * rpc_wire.c: what the gRPC client and server share on the wire: message
 * framing, the HTTP/2 connection start and the small text codecs (status
 * message percent-encoding, grpc-timeout, content-type).
 */
#include "rpc_internal.h"

#include "seo/errors.h"

#include <stdio.h>
#include <stdlib.h>
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
	/* One digit past the limit is enough to refuse, and n stays far
	 * from overflowing however long the run of digits. */
	while (digits <= RPC_TIMEOUT_DIGITS && v[digits] >= '0' &&
	       v[digits] <= '9') {
		n = n * 10 + (v[digits] - '0');
		digits++;
	}
	/* a unit, and nothing after it */
	if (digits == 0 || digits > RPC_TIMEOUT_DIGITS || v[digits] == '\0' ||
	    v[digits + 1] != '\0')
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

/* Moves to `dst` what *data has of the bytes it misses (*got of `want`
 * there). Returns 1 once dst is complete. */
static int take(uint8_t *dst, size_t want, size_t *got, const uint8_t **data,
		size_t *len)
{
	size_t n = want - *got;

	if (n > *len)
		n = *len;
	memcpy(dst + *got, *data, n);
	*got += n;
	*data += n;
	*len -= n;
	return *got == want;
}

rpc_read_err rpc_reader_feed(rpc_reader *r, const uint8_t *data, size_t len,
			     void *(*alloc)(void *ud, size_t n), void *ud)
{
	while (len > 0) {
		if (r->prefix_got < RPC_PREFIX_LEN) {
			if (!take(r->prefix, RPC_PREFIX_LEN, &r->prefix_got,
				  &data, &len))
				return RPC_READ_OK;
			if (r->n_msgs > 0)
				return RPC_READ_SECOND;
			if (r->prefix[0] & 1)
				return RPC_READ_COMPRESSED;
			r->msg_len = rpc_prefix_len(r->prefix);
			if (r->msg_len > RPC_MAX_MESSAGE)
				return RPC_READ_TOO_LARGE;
			r->msg = alloc(ud, r->msg_len);
			if (r->msg == NULL)
				return RPC_READ_NOMEM;
			r->msg_got = 0;
		}
		if (take(r->msg, r->msg_len, &r->msg_got, &data, &len)) {
			r->n_msgs++;
			r->prefix_got = 0;
		}
	}
	return RPC_READ_OK;
}

size_t rpc_copy_out(uint8_t *buf, size_t length, const uint8_t *src,
		    size_t len, size_t *off)
{
	size_t n = len - *off;

	if (n > length)
		n = length;
	memcpy(buf, src + *off, n);
	*off += n;
	return n;
}

static void *mem_malloc(size_t size, void *ud)
{
	(void)ud;
	return malloc(size);
}

static void mem_free(void *ptr, void *ud)
{
	(void)ud;
	free(ptr);
}

static void *mem_calloc(size_t nmemb, size_t size, void *ud)
{
	(void)ud;
	return calloc(nmemb, size);
}

static void *mem_realloc(void *ptr, size_t size, void *ud)
{
	(void)ud;
	return realloc(ptr, size);
}

nghttp2_mem *rpc__mem(void)
{
	static nghttp2_mem mem = {NULL, mem_malloc, mem_free, mem_calloc,
				  mem_realloc};

	return &mem;
}

int rpc_session_start(nghttp2_session *session, int32_t setting_id,
		      uint32_t setting_value, struct bufferevent *bev,
		      seo_h2io_close_fn on_close, void *ud, seo_h2io **io)
{
	nghttp2_settings_entry iv[2] = {
		{setting_id, setting_value},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, RPC_STREAM_WINDOW},
	};

	if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, iv, 2) != 0 ||
	    nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0,
						  RPC_CONN_WINDOW) != 0)
		return SEO_ENOMEM;
	return seo_h2io_new(bev, session, SEO_H2IO_CLEARTEXT, on_close, ud,
			    io);
}
