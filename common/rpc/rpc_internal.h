/*
 * rpc_internal.h: pieces shared by the gRPC server, client, service main and
 * their tests. Not a public API: only common/rpc/ and tests/ include it.
 */
#ifndef SEO_RPC_INTERNAL_H
#define SEO_RPC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <nghttp2/nghttp2.h>

#include "seo/h2io.h"
#include "seo/rpc.h"

/* The 1-byte compressed flag and 4-byte big-endian length before each
 * message. */
#define RPC_PREFIX_LEN 5

/* grpc-message texts are cut to this many bytes before encoding, so that a
 * runaway error message cannot exceed a peer's metadata limit. */
#define RPC_STATUS_TEXT_MAX 1024

/* Request metadata a server accepts per call, in bytes (names + values). */
#define RPC_META_MAX (64 * 1024)

/* Response metadata of one call (rpc_ctx_set_meta()): entries, and the
 * longest name and value; a client keeps as many entries. */
#define RPC_RESP_META_MAX 16
#define RPC_RESP_META_NAME_MAX 64
#define RPC_RESP_META_VALUE_MAX 1024

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

/* Reassembles the length-prefixed messages of a stream's DATA. Zeroed to
 * start; `msg` belongs to the caller (it comes from its allocator). */
typedef struct rpc_reader {
	uint8_t prefix[RPC_PREFIX_LEN];
	size_t prefix_got; /* 0 between messages */
	uint8_t *msg;      /* the last message begun, msg_len bytes */
	size_t msg_len;
	size_t msg_got;
	int n_msgs; /* messages read whole */
} rpc_reader;

/* Why rpc_reader_feed() stopped before the end of its input. */
typedef enum rpc_read_err {
	RPC_READ_OK,
	RPC_READ_SECOND,     /* a second message began: calls are unary */
	RPC_READ_COMPRESSED, /* compression is not supported */
	RPC_READ_TOO_LARGE,  /* msg_len exceeds RPC_MAX_MESSAGE */
	RPC_READ_NOMEM,      /* alloc returned NULL */
} rpc_read_err;

/*
 * Feeds `len` bytes of DATA to `r`, taking each message's buffer from
 * alloc(ud, msg_len). Returns RPC_READ_OK once all is consumed, or why it
 * stopped (the stream is then to be answered with an error, not fed on).
 */
rpc_read_err rpc_reader_feed(rpc_reader *r, const uint8_t *data, size_t len,
			     void *(*alloc)(void *ud, size_t n), void *ud);

/*
 * Copies to `buf` (`length` bytes) what is left of the `len` bytes at `src`
 * after *off, and advances *off: a DATA read callback's body. Returns the
 * count.
 */
size_t rpc_copy_out(uint8_t *buf, size_t length, const uint8_t *src,
		    size_t len, size_t *off);

/*
 * The allocator every nghttp2 session of this library is created with: the
 * C library's, called from this library instead of from libnghttp2, so
 * that a test linked with -Wl,--wrap=malloc (tests/support/failmalloc.h)
 * reaches nghttp2's allocations as well as ours. Static; never freed.
 */
nghttp2_mem *rpc__mem(void);

/*
 * Starts a new connection's `session` on `bev`: our SETTINGS (`setting_id`
 * = `setting_value`, and the stream window), the connection window and the
 * pump, which calls on_close(io, ud) when the connection ends. Returns 0
 * with *io set; on failure `bev` is still the caller's.
 */
int rpc_session_start(nghttp2_session *session, int32_t setting_id,
		      uint32_t setting_value, struct bufferevent *bev,
		      seo_h2io_close_fn on_close, void *ud, seo_h2io **io);

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

/* A grpc-timeout value's most digits (gRPC over HTTP/2: 1 to 8 ASCII
 * digits, then one unit of H M S m u n); 8 keeps hours in range. */
#define RPC_TIMEOUT_DIGITS 8

/* Parses a grpc-timeout value ("100m", "2S", ...) into milliseconds,
 * rounded up. Returns 0, or SEO_EINVAL when malformed: no digit, more
 * than RPC_TIMEOUT_DIGITS, no unit, another unit or anything after it. */
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
