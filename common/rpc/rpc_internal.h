/*
 * rpc_internal.h: pieces shared by the gRPC server, client, service main and
 * their tests. Not a public API: only common/rpc/ and tests/ include it.
 */
#ifndef SEO_RPC_INTERNAL_H
#define SEO_RPC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "seo/rpc.h"

/* The 1-byte compressed flag and 4-byte big-endian length before each
 * message. */
#define RPC_PREFIX_LEN 5

/* grpc-message texts are cut to this many bytes before encoding, so that a
 * runaway error message cannot exceed a peer's metadata limit. */
#define RPC_STATUS_TEXT_MAX 1024

/* Request metadata a server accepts per call, in bytes (names + values). */
#define RPC_META_MAX (64 * 1024)

/* Flow-control windows: per stream, and for a whole connection. */
#define RPC_STREAM_WINDOW (1024 * 1024)
#define RPC_CONN_WINDOW (16 * 1024 * 1024)

static inline void rpc_prefix_put(uint8_t *p, size_t len)
{
	p[0] = 0;
	p[1] = (uint8_t)(len >> 24);
	p[2] = (uint8_t)(len >> 16);
	p[3] = (uint8_t)(len >> 8);
	p[4] = (uint8_t)len;
}

static inline uint32_t rpc_prefix_len(const uint8_t *p)
{
	return (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 8 | (uint32_t)p[4];
}

/*
 * Percent-encodes the `n` bytes of `in` as grpc-message requires (every
 * byte outside 0x20-0x7E, and '%', becomes %XX) into `out`, which holds at
 * least 3 * n + 1 bytes. Returns the encoded length (NUL not counted).
 */
size_t rpc_pct_encode(const char *in, size_t n, char *out);

/*
 * Decodes %XX sequences of the `n` bytes of `in` into `out` (at least n + 1
 * bytes); a '%' not followed by two hex digits is kept as it is. Returns the
 * decoded length (NUL not counted).
 */
size_t rpc_pct_decode(const char *in, size_t n, char *out);

/* Parses a grpc-timeout value ("100m", "2S", ...) into milliseconds,
 * rounded up. Returns 0, or SEO_EINVAL when malformed. */
int rpc_timeout_parse(const char *v, int64_t *ms);

/* Formats `ms` (> 0) as a grpc-timeout value into `out` (16 bytes). */
void rpc_timeout_format(int64_t ms, char out[16]);

/* 1 when `ct` is application/grpc or application/grpc+proto (parameters
 * after ';' allowed), else 0. */
int rpc_content_type_ok(const char *ct);

/* The port the server's listener is bound to (useful after ":0"), or 0
 * when it does not listen. */
unsigned rpc_server_port(const rpc_server *srv);

/* Open connections plus calls handed to workers and not yet back: 0 once
 * a shut-down server has nothing left to finish. Loop thread only. */
size_t rpc_server_busy(const rpc_server *srv);

#endif
