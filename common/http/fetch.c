/*
 * fetch.c: the live fetcher. libcurl's multi interface driven by a
 * libevent base, many fetches in flight, with name resolution on threads
 * a fetch abandons at its deadline (resolver.h: getaddrinfo blocks).
 *
 * Every hop of a fetch is: parse and canonicalise the URL, apply the
 * connect-to entries, resolve, refuse blocked addresses, then let curl
 * connect to that one checked address only (CURLOPT_CONNECT_TO with a
 * numeric target, and an open-socket callback that refuses any other
 * address). Redirects are followed here, not by curl, so that each target
 * goes through the same steps.
 */
#include "seo/fetch.h"

#include "body.h"
#include "resolver.h"
#include "seo/charset.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_MAX_BODY (5u * 1024 * 1024)
#define DEFAULT_MAX_REDIRECTS 5
#define MAX_HEADERS 256

typedef struct fetch {
	seo_fetcher *f;
	struct fetch *prev, *next;
	seo_arena *a;
	seo_fetch_done_fn done;
	void *ud;
	seo_fetch_opts o;
	int64_t start_ms, deadline_ms;
	seo_url url;            /* the current hop */
	seo__lookup *lookup;   /* resolution in progress, or NULL */
	unsigned short lookup_port;
	struct sockaddr_storage pinned;
	CURL *easy;
	struct curl_slist *connect_to;
	struct event *ev;      /* deadline, or a deferred failure */
	int deferred_error;
	const char *deferred_message;
	seo__body body;
	size_t streamed;       /* body bytes handed to opts.on_body, this hop */
	int body_stopped;      /* opts.on_body asked to end the transfer */
	seo_header *headers;    /* malloc'd array of arena strings */
	size_t n_headers;
	seo_hop *hops;          /* on the arena, max_redirects + 1 */
	size_t n_hops;
	seo_fetch_result *res;  /* on the arena */
} fetch;

struct seo_fetcher {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	const seo_fetch_config *cfg; /* borrowed, read by every thread */
	const char *user_agent;
	fetch *fetches;
	size_t active;
	seo__resolver *resolver;
};

struct sock_ev {
	struct event *ev;
};

static void hop_begin(fetch *ft);

const char *seo_fetch_error_code(int err)
{
	switch (err) {
	case SEO_FETCH_INVALID_URL: return "invalid_url";
	case SEO_FETCH_PRIVATE_IP: return "private_ip";
	case SEO_FETCH_FAILED: return "fetch_failed";
	case SEO_FETCH_TIMEOUT: return "timeout";
	case SEO_FETCH_TOO_LARGE: return "response_too_large";
	default: return NULL;
	}
}

const char *seo_fetch_header(const seo_fetch_result *res, const char *name)
{
	for (size_t i = 0; i < res->n_headers; i++)
		if (strcmp(res->headers[i].name, name) == 0)
			return res->headers[i].value;
	return NULL;
}

/* ---- finishing ------------------------------------------------------------ */

static void easy_drop(fetch *ft)
{
	if (ft->easy != NULL) {
		curl_multi_remove_handle(ft->f->multi, ft->easy);
		curl_easy_cleanup(ft->easy);
		ft->easy = NULL;
	}
	curl_slist_free_all(ft->connect_to);
	ft->connect_to = NULL;
}

static void fetch_free(fetch *ft)
{
	seo_fetcher *f = ft->f;

	easy_drop(ft);
	if (ft->lookup != NULL)
		seo__lookup_abandon(ft->lookup);
	if (ft->ev != NULL)
		event_free(ft->ev);
	if (ft->prev != NULL)
		ft->prev->next = ft->next;
	else
		f->fetches = ft->next;
	if (ft->next != NULL)
		ft->next->prev = ft->prev;
	f->active--;
	seo__body_free(&ft->body);
	free(ft->headers);
	free(ft);
}

static int is_text(const char *content_type)
{
	if (content_type == NULL)
		return 1;
	return strncasecmp(content_type, "text/", 5) == 0 ||
	       strcasestr(content_type, "html") != NULL ||
	       strcasestr(content_type, "xml") != NULL;
}

/* Moves the last response into the result (on the arena). */
static int result_fill(fetch *ft)
{
	seo_fetch_result *r = ft->res;
	const char *ctype, *raw = ft->body.data ? ft->body.data : "";
	char *body;
	size_t len;
	seo_header *h;

	h = seo_arena_alloc(ft->a, (ft->n_headers + 1) * sizeof(*h));
	if (h == NULL)
		return SEO_ENOMEM;
	memcpy(h, ft->headers, ft->n_headers * sizeof(*h));
	r->headers = h;
	r->n_headers = ft->n_headers;
	ctype = seo_fetch_header(r, "content-type");
	if (!ft->o.raw_body && is_text(ctype)) {
		r->charset = seo_charset_detect(raw, ft->body.len, ctype, ft->a);
		if (r->charset == NULL ||
		    seo_to_utf8(raw, ft->body.len, r->charset, ft->a, &body, &len) != 0)
			return SEO_ENOMEM;
	} else {
		body = seo_arena_alloc(ft->a, ft->body.len + 1);
		if (body == NULL)
			return SEO_ENOMEM;
		memcpy(body, raw, ft->body.len + 1);
		len = ft->body.len;
	}
	r->body = body;
	r->body_len = len;
	return 0;
}

/* Ends the fetch: fills the result, calls back, frees. */
static void finish(fetch *ft, int err, const char *message)
{
	seo_fetch_result *r = ft->res;

	r->error = err;
	r->message = message;
	r->final_url = ft->url.href ? ft->url.href : r->url;
	r->response_time_ms = (long)(seo_mono_ms() - ft->start_ms);
	r->hops = ft->hops;
	r->n_hops = ft->n_hops;
	if (err == SEO_FETCH_OK && result_fill(ft) != 0) {
		r->error = SEO_FETCH_FAILED;
		r->message = "out of memory";
	}
	if (r->body == NULL)
		r->body = "";
	if (r->error != SEO_FETCH_OK)
		log_debug("fetch of %s failed: %s", r->url, r->message);
	ft->done(r, ft->ud);
	fetch_free(ft);
}

/* Fails from the event loop rather than the caller's stack. */
static void fail_later(fetch *ft, int err, const char *message)
{
	ft->deferred_error = err;
	ft->deferred_message = message;
	event_active(ft->ev, EV_TIMEOUT, 0);
}

static void on_fetch_ev(evutil_socket_t fd, short what, void *arg)
{
	fetch *ft = arg;

	(void)fd;
	(void)what;
	if (ft->deferred_error != SEO_FETCH_OK)
		finish(ft, ft->deferred_error, ft->deferred_message);
	else
		finish(ft, SEO_FETCH_TIMEOUT, "deadline passed");
}

/* ---- curl callbacks ------------------------------------------------------- */

/* The body: kept, or streamed to opts.on_body (a 2xx body only), within
 * max_body either way. */
static size_t on_write(char *data, size_t size, size_t n, void *ud)
{
	fetch *ft = ud;
	size_t len = size * n;
	long status = 0;

	if (ft->o.on_body == NULL)
		return seo__body_write(data, size, n, &ft->body);
	if (len > ft->o.max_body - ft->streamed) {
		ft->body.too_large = 1;
		return 0;
	}
	ft->streamed += len;
	curl_easy_getinfo(ft->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300 && ft->o.on_body(data, len, ft->o.body_ud) != 0) {
		ft->body_stopped = 1;
		return 0;
	}
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	fetch *ft = ud;
	size_t len = size * n, nlen;
	const char *colon, *v, *end = data + len;
	char *name;

	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* a new response (1xx, then the real one) */
		ft->n_headers = 0;
		return len;
	}
	colon = memchr(data, ':', len);
	if (colon == NULL || colon == data || ft->n_headers == MAX_HEADERS)
		return len;
	if (ft->headers == NULL) {
		ft->headers = malloc(MAX_HEADERS * sizeof(*ft->headers));
		if (ft->headers == NULL)
			return 0;
	}
	nlen = (size_t)(colon - data);
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	name = seo_arena_strndup(ft->a, data, nlen);
	if (name == NULL)
		return 0;
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	ft->headers[ft->n_headers].name = name;
	ft->headers[ft->n_headers].value = seo_arena_strndup(ft->a, v, (size_t)(end - v));
	if (ft->headers[ft->n_headers].value == NULL)
		return 0;
	ft->n_headers++;
	return len;
}

static int same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return 0;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
	}
	return 0;
}

/* The last guard: curl may only open a socket to the checked address. */
static curl_socket_t on_open_socket(void *ud, curlsocktype purpose,
				    struct curl_sockaddr *addr)
{
	fetch *ft = ud;

	if (purpose != CURLSOCKTYPE_IPCXN || !same_addr(&addr->addr, &ft->pinned)) {
		log_warn("refusing a connection to an unchecked address for %s",
			 ft->url.href);
		return CURL_SOCKET_BAD;
	}
	return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* Adds the configuration's CA file to the default trust store rather
 * than replacing it. */
static CURLcode on_ssl_ctx(CURL *easy, void *ssl_ctx, void *ud)
{
	fetch *ft = ud;

	(void)easy;
	if (SSL_CTX_load_verify_locations(ssl_ctx, ft->f->cfg->ca_file, NULL) != 1) {
		log_error("cannot load CA file %s", ft->f->cfg->ca_file);
		return CURLE_SSL_CACERT_BADFILE;
	}
	return CURLE_OK;
}

/* ---- hops ----------------------------------------------------------------- */

static const seo_connect_to *connect_to_match(const seo_fetcher *f, const seo_url *u)
{
	for (size_t i = 0; i < f->cfg->n_connect_to; i++) {
		const seo_connect_to *c = &f->cfg->connect_to[i];

		if ((c->host[0] == '\0' || strcmp(c->host, u->host) == 0) &&
		    (c->port == 0 || c->port == u->port))
			return c;
	}
	return NULL;
}

static void on_lookup(struct addrinfo *res, int gai_rc, void *ud);

static void hop_begin(fetch *ft)
{
	seo_fetcher *f = ft->f;
	const seo_connect_to *c = connect_to_match(f, &ft->url);
	const char *host = c && c->connect_host[0] ? c->connect_host : ft->url.host;

	ft->lookup_port = c && c->connect_port ? c->connect_port : ft->url.port;
	if (seo__lookup_start(f->resolver, host, on_lookup, ft, &ft->lookup) != 0)
		fail_later(ft, SEO_FETCH_FAILED, "out of memory");
}

/* curl's connect-to entry pinning host:port to the checked address. */
static char *pin_entry(fetch *ft)
{
	char addr[INET6_ADDRSTRLEN];
	unsigned port;
	int v6 = ft->pinned.ss_family == AF_INET6;
	int host_v6 = ft->url.host_kind == SEO_HOST_V6;

	if (v6) {
		const struct sockaddr_in6 *s = (const void *)&ft->pinned;

		inet_ntop(AF_INET6, &s->sin6_addr, addr, sizeof(addr));
		port = ntohs(s->sin6_port);
	} else {
		const struct sockaddr_in *s = (const void *)&ft->pinned;

		inet_ntop(AF_INET, &s->sin_addr, addr, sizeof(addr));
		port = ntohs(s->sin_port);
	}
	return seo_arena_printf(ft->a, "%s%s%s:%u:%s%s%s:%u",
				host_v6 ? "[" : "", ft->url.host, host_v6 ? "]" : "",
				ft->url.port, v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

static int easy_start(fetch *ft)
{
	seo_fetcher *f = ft->f;
	int64_t left = ft->deadline_ms - seo_mono_ms();
	char *pin = pin_entry(ft);
	CURL *e;

	if (pin == NULL || left <= 0)
		return SEO_ENOMEM;
	ft->connect_to = curl_slist_append(NULL, pin);
	e = ft->easy = curl_easy_init();
	if (ft->connect_to == NULL || e == NULL)
		return SEO_ENOMEM;
	curl_easy_setopt(e, CURLOPT_URL, ft->url.href);
	curl_easy_setopt(e, CURLOPT_PRIVATE, ft);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROXY, ""); /* never the environment's */
	curl_easy_setopt(e, CURLOPT_CONNECT_TO, ft->connect_to);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, ft);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_USERAGENT, f->user_agent);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)left);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)ft->o.max_body);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, ft);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, ft);
	if (f->cfg->ca_file != NULL && f->cfg->ca_file[0] != '\0') {
		curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
		curl_easy_setopt(e, CURLOPT_SSL_CTX_DATA, ft);
	}
	if (curl_multi_add_handle(f->multi, e) != CURLM_OK)
		return SEO_ENOMEM;
	return 0;
}

static void on_lookup(struct addrinfo *res, int gai_rc, void *ud)
{
	fetch *ft = ud;
	const char *host = ft->url.host;
	int rc = res != NULL ? seo__addrs_checked(ft->f->cfg, res, ft->lookup_port,
						  &ft->pinned)
			     : SEO_EIO;

	(void)gai_rc;
	ft->lookup = NULL;
	if (res != NULL)
		freeaddrinfo(res);
	if (rc == SEO_EDENIED) {
		finish(ft, SEO_FETCH_PRIVATE_IP,
		       seo_arena_printf(ft->a, "%s resolves to a private or reserved address", host));
		return;
	}
	if (rc != 0) {
		finish(ft, SEO_FETCH_FAILED,
		       seo_arena_printf(ft->a, "could not resolve %s", host));
		return;
	}
	if (seo_mono_ms() >= ft->deadline_ms)
		finish(ft, SEO_FETCH_TIMEOUT, "deadline passed");
	else if (easy_start(ft) != 0)
		finish(ft, SEO_FETCH_FAILED, "cannot start the transfer");
}

static int is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 ||
	       status == 307 || status == 308;
}

/* A transfer ended with `code`: fail, finish, or start the next hop. */
static void transfer_done(fetch *ft, CURLcode code)
{
	const char *location = NULL;
	long status = 0;
	seo_url next;
	int rc;

	curl_easy_getinfo(ft->easy, CURLINFO_RESPONSE_CODE, &status);
	easy_drop(ft);
	if (ft->body_stopped)
		code = CURLE_OK; /* the reader has what it wanted */
	if (code == CURLE_OPERATION_TIMEDOUT) {
		finish(ft, SEO_FETCH_TIMEOUT, "deadline passed");
		return;
	}
	if (ft->body.too_large || code == CURLE_FILESIZE_EXCEEDED) {
		finish(ft, SEO_FETCH_TOO_LARGE, "response body over the limit");
		return;
	}
	if (code != CURLE_OK) {
		finish(ft, SEO_FETCH_FAILED, seo_arena_strdup(ft->a, curl_easy_strerror(code)));
		return;
	}
	ft->hops[ft->n_hops].url = ft->url.href;
	ft->hops[ft->n_hops].status = status;
	ft->n_hops++;
	ft->res->status = status;
	for (size_t i = 0; i < ft->n_headers; i++)
		if (strcmp(ft->headers[i].name, "location") == 0)
			location = ft->headers[i].value;
	if (ft->o.no_follow || !is_redirect(status) || location == NULL ||
	    *location == '\0') {
		finish(ft, SEO_FETCH_OK, "");
		return;
	}
	if (ft->n_hops > (size_t)ft->o.max_redirects) {
		finish(ft, SEO_FETCH_FAILED, "too many redirects");
		return;
	}
	rc = seo_url_resolve(ft->url.href, location, ft->a, &next);
	if (rc != 0) {
		finish(ft, SEO_FETCH_FAILED,
		       seo_arena_printf(ft->a, "redirect to an invalid url: %s", location));
		return;
	}
	ft->url = next;
	seo__body_reset(&ft->body);
	ft->streamed = 0;
	ft->n_headers = 0;
	hop_begin(ft);
}

/* ---- libcurl multi on libevent -------------------------------------------- */

static void check_done(seo_fetcher *f)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(f->multi, &left)) != NULL) {
		fetch *ft;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&ft);
		transfer_done(ft, m->data.result);
	}
}

static void on_sock_ev(evutil_socket_t fd, short what, void *arg)
{
	seo_fetcher *f = arg;
	int flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(f->multi, fd, flags, &running);
	check_done(f);
}

static void on_timer_ev(evutil_socket_t fd, short what, void *arg)
{
	seo_fetcher *f = arg;
	int running;

	(void)fd;
	(void)what;
	curl_multi_socket_action(f->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(f);
}

static int on_curl_socket(CURL *e, curl_socket_t s, int what, void *ud,
			  void *sockp)
{
	seo_fetcher *f = ud;
	struct sock_ev *se = sockp;
	short kind = EV_PERSIST;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (se != NULL) {
			event_free(se->ev);
			free(se);
		}
		curl_multi_assign(f->multi, s, NULL);
		return 0;
	}
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	if (se == NULL) {
		se = calloc(1, sizeof(*se));
		if (se == NULL)
			return -1;
		curl_multi_assign(f->multi, s, se);
	} else {
		event_free(se->ev);
	}
	se->ev = event_new(f->base, s, kind, on_sock_ev, f);
	if (se->ev == NULL || event_add(se->ev, NULL) != 0)
		return -1;
	return 0;
}

static int on_curl_timer(CURLM *m, long timeout_ms, void *ud)
{
	seo_fetcher *f = ud;
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

	(void)m;
	if (timeout_ms < 0)
		return evtimer_del(f->timer);
	return evtimer_add(f->timer, &tv);
}

/* ---- public --------------------------------------------------------------- */

int seo_fetcher_new(struct event_base *base, const seo_fetch_config *cfg,
		    seo_fetcher **out)
{
	static const seo_fetch_config none;
	seo_fetcher *f = calloc(1, sizeof(*f));
	int rc = SEO_ENOMEM;

	if (f == NULL)
		return SEO_ENOMEM;
	f->base = base;
	f->cfg = cfg != NULL ? cfg : &none;
	f->user_agent = f->cfg->user_agent != NULL ? f->cfg->user_agent
						   : SEO_FETCH_USER_AGENT;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(f);
		return SEO_EIO;
	}
	f->multi = curl_multi_init();
	f->timer = evtimer_new(base, on_timer_ev, f);
	if (f->multi == NULL || f->timer == NULL)
		goto out;
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(f->multi, CURLMOPT_SOCKETDATA, f);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(f->multi, CURLMOPT_TIMERDATA, f);
	rc = seo__resolver_new(base, &f->resolver);
out:
	if (rc != 0) {
		seo_fetcher_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int seo_fetch_start(seo_fetcher *f, const char *url, const seo_fetch_opts *opts,
		   seo_arena *a, seo_fetch_done_fn done, void *ud)
{
	fetch *ft = calloc(1, sizeof(*ft));
	struct timeval tv;
	int rc;

	if (ft == NULL)
		return SEO_ENOMEM;
	ft->f = f;
	ft->a = a;
	ft->done = done;
	ft->ud = ud;
	if (opts != NULL)
		ft->o = *opts;
	if (ft->o.timeout_ms <= 0)
		ft->o.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (ft->o.max_body == 0)
		ft->o.max_body = DEFAULT_MAX_BODY;
	ft->body.max = ft->o.max_body;
	if (ft->o.max_redirects == 0)
		ft->o.max_redirects = DEFAULT_MAX_REDIRECTS;
	else if (ft->o.max_redirects < 0)
		ft->o.max_redirects = 0;
	ft->start_ms = seo_mono_ms();
	ft->deadline_ms = ft->start_ms + ft->o.timeout_ms;
	ft->res = seo_arena_calloc(a, sizeof(*ft->res));
	ft->hops = seo_arena_calloc(a, ((size_t)ft->o.max_redirects + 1) * sizeof(*ft->hops));
	ft->ev = evtimer_new(f->base, on_fetch_ev, ft);
	if (ft->res == NULL || ft->hops == NULL || ft->ev == NULL ||
	    (ft->res->url = seo_arena_strdup(a, url)) == NULL) {
		if (ft->ev != NULL)
			event_free(ft->ev);
		free(ft);
		return SEO_ENOMEM;
	}
	ft->next = f->fetches;
	if (f->fetches != NULL)
		f->fetches->prev = ft;
	f->fetches = ft;
	f->active++;
	tv.tv_sec = ft->o.timeout_ms / 1000;
	tv.tv_usec = (ft->o.timeout_ms % 1000) * 1000;
	evtimer_add(ft->ev, &tv);
	rc = seo_url_parse(url, a, &ft->url);
	if (rc == SEO_ENOMEM)
		fail_later(ft, SEO_FETCH_FAILED, "out of memory");
	else if (rc != 0)
		fail_later(ft, SEO_FETCH_INVALID_URL, "invalid url");
	else
		hop_begin(ft);
	return 0;
}

size_t seo_fetcher_active(const seo_fetcher *f)
{
	return f->active;
}

void seo_fetcher_free(seo_fetcher *f)
{
	if (f == NULL)
		return;
	while (f->fetches != NULL)
		fetch_free(f->fetches);
	seo__resolver_free(f->resolver);
	if (f->multi != NULL)
		curl_multi_cleanup(f->multi);
	if (f->timer != NULL)
		event_free(f->timer);
	free(f);
	curl_global_cleanup();
}

struct sync_state {
	struct event_base *base;
	seo_fetch_result *res;
};

static void sync_done(const seo_fetch_result *res, void *ud)
{
	struct sync_state *s = ud;

	*s->res = *res;
	event_base_loopbreak(s->base);
}

int seo_fetch_sync(const seo_fetch_config *cfg, const char *url,
		  const seo_fetch_opts *opts, seo_arena *a, seo_fetch_result *res)
{
	struct sync_state s = {event_base_new(), res};
	seo_fetcher *f = NULL;
	int rc = SEO_ENOMEM;

	if (s.base == NULL)
		goto out;
	rc = seo_fetcher_new(s.base, cfg, &f);
	if (rc != 0)
		goto out;
	rc = seo_fetch_start(f, url, opts, a, sync_done, &s);
	if (rc != 0)
		goto out;
	event_base_dispatch(s.base);
out:
	seo_fetcher_free(f);
	if (s.base != NULL)
		event_base_free(s.base);
	return rc;
}
