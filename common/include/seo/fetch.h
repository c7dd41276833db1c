/*
 * seo/fetch.h: the one way a service fetches a URL a user gave: URL
 * validation, the SSRF-safe address policy and the live fetcher.
 *
 * Every hop of a fetch is parsed and canonicalised, mapped by the
 * configuration's connect-to entries, resolved here, refused when any of
 * its addresses is private or reserved, and connected to that one checked
 * address only; redirects are followed here, each hop alike; bodies and
 * time are capped; no proxy is taken from the environment; http and https
 * only. A URL handed to a provider on a user's behalf passes
 * seo_resolve_checked() first.
 *
 * Configuration: seo/fetch_config.h. All functions returning int return 0
 * or a negative SEO_E* code (seo/errors.h).
 */
#ifndef SEO_FETCH_H
#define SEO_FETCH_H

#include <stddef.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "seo/arena.h"
#include "seo/fetch_config.h"

/* ---- URLs ---------------------------------------------------------------- */

enum seo_host_kind {
	SEO_HOST_NAME = 0, /* a DNS name, lowercase, no trailing dot */
	SEO_HOST_V4 = 1,   /* dotted quad, canonicalised from any inet_aton form */
	SEO_HOST_V6 = 2,   /* RFC 5952 text, without brackets */
};

typedef struct seo_url {
	const char *scheme; /* "http" or "https" (static) */
	const char *host;   /* canonical host, see seo_host_kind */
	int host_kind;
	unsigned short port; /* explicit or the scheme's default */
	const char *path;    /* "/..." with the query, percent-encoded */
	const char *href;    /* the canonical URL rebuilt from the parts */
} seo_url;

/*
 * Parses an absolute URL the way the spec's invalid_url rule reads it:
 * http or https only, a host, no userinfo, no fragment, no whitespace or
 * control characters, no percent-encoded host. A non-ASCII host is an IDN
 * and becomes punycode as browsers look it up (seo_domain_to_ascii();
 * one that is no valid IDN is invalid). IPv4 hosts in any spelling
 * inet_aton() accepts (127.1, 0x7f.1, 0177.0.0.1, 2130706433, full-width
 * digits) are canonicalised to a dotted quad, so that the address policy
 * sees what a resolver would. Strings of `out` are allocated on `a`.
 * Returns 0, SEO_EINVAL (invalid_url) or SEO_ENOMEM.
 */
int seo_url_parse(const char *url, seo_arena *a, seo_url *out);

/*
 * Resolves `ref` (a Location value) against `base` (a canonical href) and
 * parses the result with seo_url_parse(). Same returns.
 */
int seo_url_resolve(const char *base, const char *ref, seo_arena *a,
		    seo_url *out);

/* ---- the address policy -------------------------------------------------- */

/*
 * Returns 1 when a fetch must not connect to `sa`: private, loopback,
 * link-local, CGNAT, "this network", reserved, benchmarking, documentation,
 * multicast, broadcast, IPv4-mapped/compatible/translated IPv6, NAT64 or
 * 6to4 wrapping a blocked IPv4, Teredo, ULA, site-local, anything outside
 * 2000::/3; 0 otherwise or when an allow-net of `cfg` (NULL allowed: none)
 * exempts it.
 */
int seo_addr_blocked(const seo_fetch_config *cfg, const struct sockaddr *sa);

/*
 * Resolves `host` with getaddrinfo() (numeric hosts are not looked up) and
 * checks every address it returns: one blocked address refuses the host,
 * since a later lookup could pick it. The first address, with `port`, is
 * stored in *out. Connect-to entries are not applied: the fetcher maps a
 * host before calling this. Blocking. Returns 0, SEO_EDENIED (private_ip)
 * or SEO_EIO (no address).
 */
int seo_resolve_checked(const seo_fetch_config *cfg, const char *host,
			unsigned short port, struct sockaddr_storage *out);

/* ---- the fetcher --------------------------------------------------------- */

/* Why a fetch failed; each maps to the spec's error code. */
enum seo_fetch_error {
	SEO_FETCH_OK = 0,
	SEO_FETCH_INVALID_URL,   /* 400 invalid_url */
	SEO_FETCH_PRIVATE_IP,    /* 400 private_ip */
	SEO_FETCH_FAILED,        /* 503 fetch_failed */
	SEO_FETCH_TIMEOUT,       /* 503 timeout */
	SEO_FETCH_TOO_LARGE,     /* 503 response_too_large */
};

/* The spec's error code of `err` ("fetch_failed"), or NULL for OK
 * (static). */
const char *seo_fetch_error_code(int err);

typedef struct seo_fetch_opts {
	long timeout_ms;   /* whole fetch, all hops; 0: 10000 */
	size_t max_body;   /* decoded bytes; 0: 5 MiB */
	int max_redirects; /* hops followed; < 0: none, 0: 5 */
	int no_follow;     /* 1: return the first response, even a redirect */
	int raw_body;      /* 1: keep the bytes; 0: text converted to UTF-8 */
	/* When set, the body of a 2xx response is handed here as it arrives
	 * (decoded from its Content-Encoding, unconverted) instead of being
	 * kept, and the result's body is "". Returning non-zero ends the
	 * transfer, and the fetch ends OK with what was read. Bytes of every
	 * response still count against max_body. Called on the loop. */
	int (*on_body)(const char *data, size_t len, void *ud);
	void *body_ud;
} seo_fetch_opts;

typedef struct seo_header {
	const char *name;  /* lowercase */
	const char *value; /* trimmed */
} seo_header;

typedef struct seo_hop {
	const char *url;
	long status;
} seo_hop;

/*
 * A finished fetch. Everything is allocated on the arena given to
 * seo_fetch_start() and lives as long as it.
 */
typedef struct seo_fetch_result {
	int error;              /* enum seo_fetch_error */
	const char *message;    /* why, for logs; "" when OK */
	const char *url;        /* as requested */
	const char *final_url;  /* canonical URL of the last response */
	long status;            /* HTTP status of the last response, 0 if none */
	const seo_header *headers; /* of the last response */
	size_t n_headers;
	const char *body;       /* NUL-terminated; UTF-8 for text unless raw */
	size_t body_len;
	const char *charset;    /* detected source charset of a text body */
	long response_time_ms;  /* start to end, all hops */
	const seo_hop *hops;    /* every response, redirects included */
	size_t n_hops;
} seo_fetch_result;

/* The first value of header `name` (lowercase) in `res`, or NULL. */
const char *seo_fetch_header(const seo_fetch_result *res, const char *name);

typedef struct seo_fetcher seo_fetcher;

/*
 * Called once per fetch, always from the event loop, never from inside
 * seo_fetch_start().
 */
typedef void (*seo_fetch_done_fn)(const seo_fetch_result *res, void *ud);

/*
 * Creates a fetcher on `base` (libcurl multi driven by libevent; each name
 * lookup on a thread of its own, abandoned at its fetch's deadline) with
 * configuration `cfg`, borrowed: it must stay alive and unchanged until
 * seo_fetcher_free(). Returns 0, SEO_EIO or SEO_ENOMEM. Free with
 * seo_fetcher_free().
 */
int seo_fetcher_new(struct event_base *base, const seo_fetch_config *cfg,
		    seo_fetcher **out);

/*
 * Starts fetching `url` (GET). `opts` may be NULL. The result lives on
 * `a`, which must outlive the callback; the fetcher does not touch `a`
 * once the callback has been called, so the callback may free it.
 * Returns 0 (done will be called) or SEO_ENOMEM (it will not).
 */
int seo_fetch_start(seo_fetcher *f, const char *url, const seo_fetch_opts *opts,
		    seo_arena *a, seo_fetch_done_fn done, void *ud);

/* Number of fetches in flight. */
size_t seo_fetcher_active(const seo_fetcher *f);

/*
 * Frees the fetcher; fetches still in flight end without their callbacks.
 * NULL is allowed.
 */
void seo_fetcher_free(seo_fetcher *f);

/*
 * Blocking convenience: one fetch with configuration `cfg` on its own
 * event_base. The result lives on `a`. Returns 0 (see res->error) or a
 * negative SEO_E* code when the fetcher could not be set up.
 */
int seo_fetch_sync(const seo_fetch_config *cfg, const char *url,
		   const seo_fetch_opts *opts, seo_arena *a,
		   seo_fetch_result *res);

#endif
