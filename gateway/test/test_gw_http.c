/*
 * test_gw_http.c: the gateway's HTTP front end, driven over real sockets.
 *
 * The servers run in-process on 127.0.0.1 (port 0) on a loop thread; the
 * tests talk to them with blocking sockets (HTTP/1.x written by hand), a
 * small nghttp2 client (h2c by prior knowledge) and, for TLS + ALPN, the
 * curl command line. The handler echoes the request as JSON; /delay/<ms>
 * answers from a timer, so answers come out of order.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <jansson.h>
#include <nghttp2/nghttp2.h>

#include "gw_http.h"

#define BODY_LIMIT 1024

struct test_srv {
	gw_http_server *srv;
	unsigned short port;
};

static struct event_base *base;
static pthread_t loop_thread;
static struct test_srv plain;   /* cleartext, idle 5 s */
static struct test_srv idle1;   /* cleartext, idle 1 s */
static struct test_srv tls;     /* TLS, when a certificate could be made */
static struct test_srv tight;   /* small limits: tight_limits */
static struct test_srv tls_tight; /* TLS with them */

#define TIGHT_REQUEST_MS 300
/* libevent times its timers on the coarse monotonic clock, a few ms behind
 * gettimeofday(): a deadline met to the server may look that much early. */
#define CLOCK_SLACK_MS 10
#define TIGHT_BODY_LIMIT 16384
/* CONN_REQUEST_BYTES rises to one request at its limits: a 2 KiB arena,
 * 16 KiB of headers counted twice, a body at the limit: 51201 bytes. */
static const long long tight_limits[GW__LIM_COUNT] = {
	[GW_LIM_REQUEST_MS] = TIGHT_REQUEST_MS,
	[GW_LIM_IDLE_MS] = 5000,
	[GW_LIM_CONNS] = 6,
	[GW_LIM_CONNS_PER_IP] = 4,
	[GW_LIM_H2_STREAMS] = 3,
	[GW_LIM_CONN_REQUEST_BYTES] = 1,
};
static char tmpdir[64];

/* Loop-thread state. */
static int closed_answered;

struct delayed {
	struct event *ev;
	gw_http_req *req;
	struct delayed *prev;
	struct delayed *next;
};
static struct delayed *delayed_list;

/* ---- the handler (loop thread) ----------------------------------------- */

static void echo(gw_http_req *req)
{
	static const gw_http_header hdrs[] = {
		{"Content-Type", "application/json"},
		{"X-Echo", "1"},
		{"Content-Length", "999"}, /* the front end's own wins */
	};
	json_t *obj = json_object();
	json_t *h = json_object();
	size_t blen;
	const char *body = gw_http_body(req, &blen);
	const char *names[] = {"host", "x-test", "content-type", "expect",
			       "transfer-encoding", "x-empty", "x-next"};
	char *text;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = gw_http_header_get(req, names[i]);

		if (v != NULL)
			json_object_set_new(h, names[i], json_string(v));
	}
	json_object_set_new(obj, "method", json_string(gw_http_method(req)));
	json_object_set_new(obj, "path", json_string(gw_http_path(req)));
	json_object_set_new(obj, "query", json_string(gw_http_query(req)));
	json_object_set_new(obj, "protocol",
			    json_string(gw_http_protocol(req)));
	json_object_set_new(obj, "peer", json_string(gw_http_peer(req)));
	json_object_set_new(obj, "headers", h);
	json_object_set_new(obj, "body", json_stringn(body, blen));
	json_object_set_new(obj, "body_len", json_integer((json_int_t)blen));
	text = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	gw_http_respond(req, 200, hdrs, 3, text, strlen(text));
	free(text);
}

static void on_delay(evutil_socket_t fd, short what, void *arg)
{
	struct delayed *d = arg;

	(void)fd;
	(void)what;
	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		delayed_list = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	if (gw_http_closed(d->req))
		closed_answered++;
	echo(d->req);
	event_free(d->ev);
	free(d);
}

static void handler(gw_http_req *req, void *ud)
{
	struct test_srv *ts = ud;
	const char *path = gw_http_path(req);

	if (strncmp(path, "/delay/", 7) == 0) {
		struct delayed *d = calloc(1, sizeof(*d));
		long ms = strtol(path + 7, NULL, 10);
		struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

		d->req = req;
		d->ev = evtimer_new(base, on_delay, d);
		d->next = delayed_list;
		if (delayed_list != NULL)
			delayed_list->prev = d;
		delayed_list = d;
		evtimer_add(d->ev, &tv);
	} else if (strcmp(path, "/stats") == 0) {
		char buf[64];
		int n = snprintf(buf, sizeof(buf), "{\"closed_answered\":%d}",
				 closed_answered);

		gw_http_respond(req, 200, NULL, 0, buf, (size_t)n);
	} else if (strcmp(path, "/nocontent") == 0) {
		gw_http_respond(req, 204, NULL, 0, "ignored", 7);
	} else if (strcmp(path, "/shutdown") == 0) {
		gw_http_respond(req, 200, NULL, 0, "bye", 3);
		gw_http_server_shutdown(ts->srv);
	} else {
		echo(req);
	}
}

static void *loop_main(void *arg)
{
	(void)arg;
	event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

/* `limits` (NULL: idle_s and the defaults) as gw_http_config has them;
 * with them the body limit is TIGHT_BODY_LIMIT. */
static int start_server(struct test_srv *ts, int idle_s,
			const long long *limits, const char *cert,
			const char *key)
{
	gw_http_config cfg = {
		.addr = "127.0.0.1:0",
		.body_limit = limits != NULL ? TIGHT_BODY_LIMIT : BODY_LIMIT,
		.tls_cert = cert,
		.tls_key = key,
		.limits = {[GW_LIM_IDLE_MS] = idle_s * 1000LL},
	};

	if (limits != NULL)
		memcpy(cfg.limits, limits, sizeof(cfg.limits));

	if (gw_http_server_new(base, &cfg, handler, ts, &ts->srv) != 0)
		return -1;
	ts->port = gw_http_server_port(ts->srv);
	return ts->port != 0 ? 0 : -1;
}

static int have_cmd(const char *cmd)
{
	char buf[1024];

	if ((size_t)snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd) >= sizeof(buf))
		return 0;
	return system(buf) == 0;
}

static int suite_init(void)
{
	char cert[128], key[128], cmd[512];

	evthread_use_pthreads();
	base = event_base_new();
	if (base == NULL || start_server(&plain, 5, NULL, NULL, NULL) != 0 ||
	    start_server(&idle1, 1, NULL, NULL, NULL) != 0 ||
	    start_server(&tight, 0, tight_limits, NULL, NULL) != 0)
		return -1;
	/* A certificate from the openssl command line, when it is there. */
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_gw_http.XXXXXX");
	if (mkdtemp(tmpdir) != NULL && have_cmd("openssl version")) {
		snprintf(cert, sizeof(cert), "%s/c.pem", tmpdir);
		snprintf(key, sizeof(key), "%s/k.pem", tmpdir);
		snprintf(cmd, sizeof(cmd),
			 "openssl req -x509 -newkey rsa:2048 -nodes "
			 "-subj /CN=localhost -keyout %s -out %s -days 1",
			 key, cert);
		if (have_cmd(cmd) &&
		    (start_server(&tls, 5, NULL, cert, key) != 0 ||
		     start_server(&tls_tight, 0, tight_limits, cert, key) != 0))
			return -1;
	}
	{
		/* A certificate that does not exist is an error, not a crash. */
		gw_http_config bad = {.addr = "127.0.0.1:0",
				      .tls_cert = "/nonexistent.pem",
				      .tls_key = "/nonexistent.pem"};
		gw_http_server *s = NULL;

		if (gw_http_server_new(base, &bad, handler, NULL, &s) == 0)
			return -1;
	}
	return pthread_create(&loop_thread, NULL, loop_main, NULL) == 0 ? 0 : -1;
}

static int suite_clean(void)
{
	char cmd[128];

	event_base_loopbreak(base);
	pthread_join(loop_thread, NULL);
	gw_http_server_free(plain.srv);
	gw_http_server_free(idle1.srv);
	gw_http_server_free(tls.srv);
	gw_http_server_free(tight.srv);
	gw_http_server_free(tls_tight.srv);
	/* Answers for connections already gone are dropped. */
	while (delayed_list != NULL) {
		struct delayed *d = delayed_list;

		delayed_list = d->next;
		gw_http_respond(d->req, 200, NULL, 0, "late", 4);
		event_free(d->ev);
		free(d);
	}
	event_base_free(base);
	if (tmpdir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* ---- a blocking HTTP/1.x client ----------------------------------------- */

struct cli {
	int fd;
	char buf[65536];
	size_t len;
};

struct resp {
	int status;
	char head[8192];
	char *body;
	size_t body_len;
	json_t *json;
};

/* Connects from the loopback address 127.0.0.`from`. */
static int cli_open_from(struct cli *c, unsigned short port, int from)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in src = {.sin_family = AF_INET,
				  .sin_addr.s_addr =
					  htonl(0x7f000000u | (unsigned)from)};
	struct timeval tv = {3, 0};
	int one = 1;

	c->len = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) != 0 ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

static int cli_open(struct cli *c, unsigned short port)
{
	return cli_open_from(c, port, 1);
}

static void cli_close(struct cli *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int cli_send(struct cli *c, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int cli_sends(struct cli *c, const char *s)
{
	return cli_send(c, s, strlen(s));
}

/* Reads more bytes; 0 at EOF, -1 on error or timeout. */
static int cli_fill(struct cli *c)
{
	ssize_t n;

	if (c->len == sizeof(c->buf))
		return -1;
	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
	if (n < 0)
		return -1;
	c->len += (size_t)n;
	return n > 0 ? 1 : 0;
}

/* 1 when the server closed the connection with nothing more to read. */
static int cli_eof(struct cli *c)
{
	int rv;

	if (c->len > 0)
		return 0;
	rv = cli_fill(c);
	return rv == 0 || (rv < 0 && errno == ECONNRESET);
}

static int hdr(const struct resp *r, const char *name, char *out, size_t outlen)
{
	const char *p = strstr(r->head, "\r\n");
	size_t nlen = strlen(name);

	while (p != NULL && p[2] != '\0') {
		const char *line = p + 2;
		const char *end = strstr(line, "\r\n");

		if (end == NULL)
			break;
		if (strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
			const char *v = line + nlen + 1;
			size_t vlen;

			while (*v == ' ')
				v++;
			vlen = (size_t)(end - v);
			if (vlen >= outlen)
				vlen = outlen - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return 1;
		}
		p = end;
	}
	return 0;
}

/* Reads one response; `bodyless` for HEAD, 1xx, 204 and 304. */
static int cli_resp(struct cli *c, struct resp *r, int bodyless)
{
	char *end;
	size_t hlen, clen = 0;
	char v[64];

	memset(r, 0, sizeof(*r));
	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL)
		if (cli_fill(c) <= 0)
			return -1;
	hlen = (size_t)(end - c->buf) + 4;
	if (hlen >= sizeof(r->head))
		return -1;
	memcpy(r->head, c->buf, hlen);
	r->head[hlen] = '\0';
	if (sscanf(r->head, "HTTP/1.1 %d", &r->status) != 1)
		return -1;
	if (!bodyless && hdr(r, "Content-Length", v, sizeof(v)))
		clen = strtoul(v, NULL, 10);
	while (c->len < hlen + clen)
		if (cli_fill(c) <= 0)
			return -1;
	r->body = malloc(clen + 1);
	memcpy(r->body, c->buf + hlen, clen);
	r->body[clen] = '\0';
	r->body_len = clen;
	memmove(c->buf, c->buf + hlen + clen, c->len - hlen - clen);
	c->len -= hlen + clen;
	r->json = json_loadb(r->body, clen, 0, NULL);
	return 0;
}

static void resp_free(struct resp *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static const char *jstr(const struct resp *r, const char *key)
{
	const char *s = json_string_value(json_object_get(r->json, key));

	return s ? s : "(none)";
}

static const char *jhdr(const struct resp *r, const char *key)
{
	const char *s = json_string_value(
		json_object_get(json_object_get(r->json, "headers"), key));

	return s ? s : "(none)";
}

/* One request on a fresh connection. */
static int exchange(unsigned short port, const char *req, struct resp *r)
{
	struct cli c;
	int rv;

	if (cli_open(&c, port) != 0)
		return -1;
	rv = cli_sends(&c, req) == 0 ? cli_resp(&c, r, 0) : -1;
	cli_close(&c);
	return rv;
}

static void check_error(const struct resp *r, int status, const char *error,
			const char *code)
{
	char v[64];

	CU_ASSERT_EQUAL(r->status, status);
	CU_ASSERT_STRING_EQUAL(jstr(r, "error"), error);
	CU_ASSERT_STRING_EQUAL(jstr(r, "code"), code);
	CU_ASSERT(json_is_string(json_object_get(r->json, "message")));
	CU_ASSERT(hdr(r, "Content-Type", v, sizeof(v)) &&
		  strcmp(v, "application/json") == 0);
	CU_ASSERT(hdr(r, "Connection", v, sizeof(v)) &&
		  strcmp(v, "close") == 0);
}

/* ---- HTTP/1.x ------------------------------------------------------------ */

static void test_get(void)
{
	struct resp r;
	char v[64];

	CU_ASSERT_FATAL(exchange(plain.port,
				 "GET /v1/echo/a?x=1&y=%20 HTTP/1.1\r\n"
				 "Host: example.test\r\nX-Test: Hi there\r\n"
				 "X-Empty:\r\nX-Next: 2\r\n\r\n",
				 &r) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "method"), "GET");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), "/v1/echo/a");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "query"), "x=1&y=%20");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "protocol"), "HTTP/1.1");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "peer"), "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "body"), "");
	CU_ASSERT_STRING_EQUAL(jhdr(&r, "host"), "example.test");
	CU_ASSERT_STRING_EQUAL(jhdr(&r, "x-test"), "Hi there");
	CU_ASSERT_STRING_EQUAL(jhdr(&r, "x-empty"), "");
	CU_ASSERT_STRING_EQUAL(jhdr(&r, "x-next"), "2");
	CU_ASSERT(hdr(&r, "Connection", v, sizeof(v)) &&
		  strcmp(v, "keep-alive") == 0);
	CU_ASSERT(hdr(&r, "X-Echo", v, sizeof(v)) && strcmp(v, "1") == 0);
	/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
	CU_ASSERT(hdr(&r, "Date", v, sizeof(v)) && strlen(v) == 29 &&
		  strcmp(v + 25, " GMT") == 0 && v[3] == ',');
	CU_ASSERT(hdr(&r, "Content-Length", v, sizeof(v)) &&
		  strtoul(v, NULL, 10) == r.body_len);
	/* The handler's Content-Length was not repeated. */
	CU_ASSERT_PTR_NULL(strstr(r.head, "999"));
	resp_free(&r);
}

static void test_post(void)
{
	struct resp r;

	/* "POST" shares its first byte with the HTTP/2 preface. */
	CU_ASSERT_FATAL(exchange(plain.port,
				 "POST /items HTTP/1.1\r\nHost: h\r\n"
				 "Content-Type: application/json\r\n"
				 "Content-Length: 13\r\n\r\n{\"a\":\"b c\"}\r\n",
				 &r) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "method"), "POST");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "query"), "");
	CU_ASSERT_STRING_EQUAL(jstr(&r, "body"), "{\"a\":\"b c\"}\r\n");
	CU_ASSERT_STRING_EQUAL(jhdr(&r, "content-type"), "application/json");
	resp_free(&r);
}

static void test_keepalive(void)
{
	struct cli c;
	struct resp r;
	char path[32];

	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	for (int i = 0; i < 5; i++) {
		char req[128];

		snprintf(path, sizeof(path), "/ka/%d", i);
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: h\r\n\r\n",
			 path);
		CU_ASSERT_FATAL(cli_sends(&c, req) == 0);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		CU_ASSERT_EQUAL(r.status, 200);
		CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), path);
		resp_free(&r);
	}
	cli_close(&c);
}

static void test_pipelined_out_of_order(void)
{
	struct cli c;
	struct resp r;
	/* The handler answers 2, 4, 3, 1: the wire must say 1, 2, 3, 4. */
	static const char *paths[] = {"/delay/400", "/fast", "/delay/200",
				      "/delay/100"};
	char reqs[1024] = "";

	for (int i = 0; i < 4; i++) {
		char one[128];

		snprintf(one, sizeof(one),
			 "GET %s?n=%d HTTP/1.1\r\nHost: h\r\n\r\n", paths[i], i);
		strcat(reqs, one);
	}
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT_FATAL(cli_sends(&c, reqs) == 0);
	for (int i = 0; i < 4; i++) {
		char q[16];

		snprintf(q, sizeof(q), "n=%d", i);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		CU_ASSERT_EQUAL(r.status, 200);
		CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), paths[i]);
		CU_ASSERT_STRING_EQUAL(jstr(&r, "query"), q);
		resp_free(&r);
	}
	/* Still usable afterwards. */
	CU_ASSERT_FATAL(cli_sends(&c, "GET /after HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), "/after");
	resp_free(&r);
	cli_close(&c);
}

static void test_pipelined_many(void)
{
	struct cli c;
	struct resp r;
	/* More than the read-ahead limit, with a body among them. */
	char *reqs = malloc(100 * 96);
	size_t len = 0;

	for (int i = 0; i < 100; i++)
		len += (size_t)sprintf(reqs + len,
				       i % 10 == 5 ?
				       "POST /p?n=%d HTTP/1.1\r\n"
				       "Content-Length: 3\r\n\r\nabc" :
				       "GET /p?n=%d HTTP/1.1\r\n\r\n", i);
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT_FATAL(cli_send(&c, reqs, len) == 0);
	for (int i = 0; i < 100; i++) {
		char q[16];

		snprintf(q, sizeof(q), "n=%d", i);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		CU_ASSERT_STRING_EQUAL(jstr(&r, "query"), q);
		CU_ASSERT_STRING_EQUAL(jstr(&r, "body"),
				       i % 10 == 5 ? "abc" : "");
		resp_free(&r);
	}
	cli_close(&c);
	free(reqs);
}

static void test_chunked(void)
{
	struct cli c;
	struct resp r;

	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	/* Sent in pieces that split sizes, data and CRLFs. */
	CU_ASSERT(cli_sends(&c, "POST /chunk HTTP/1.1\r\nHost: h\r\n"
				"Transfer-Encoding: chunked\r\n\r\n5\r\nhel") == 0);
	usleep(50 * 1000);
	CU_ASSERT(cli_sends(&c, "lo\r\n6\r") == 0);
	usleep(50 * 1000);
	CU_ASSERT(cli_sends(&c, "\n world\r\n0\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "body"), "hello world");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "body_len")),
			11);
	resp_free(&r);
	cli_close(&c);
}

static void test_expect_continue(void)
{
	struct cli c;
	struct resp r;

	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "PUT /up HTTP/1.1\r\nHost: h\r\n"
				"Expect: 100-continue\r\n"
				"Content-Length: 4\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 1) == 0);
	CU_ASSERT_EQUAL(r.status, 100);
	resp_free(&r);
	CU_ASSERT(cli_sends(&c, "data") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "body"), "data");
	resp_free(&r);
	/* Too large: the final answer comes at once, without 100. */
	CU_ASSERT(cli_sends(&c, "PUT /up HTTP/1.1\r\nHost: h\r\n"
				"Expect: 100-continue\r\n"
				"Content-Length: 100000\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	check_error(&r, 413, "Payload Too Large", "payload_too_large");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
}

static void test_body_limit(void)
{
	struct cli c;
	struct resp r;
	char big[BODY_LIMIT + 200];
	char head[128];

	memset(big, 'x', sizeof(big));
	/* Content-Length over the limit, body sent anyway. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	snprintf(head, sizeof(head),
		 "POST /big HTTP/1.1\r\nContent-Length: %zu\r\n\r\n",
		 sizeof(big));
	CU_ASSERT(cli_sends(&c, head) == 0);
	CU_ASSERT(cli_send(&c, big, sizeof(big)) == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	check_error(&r, 413, "Payload Too Large", "payload_too_large");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);

	/* Chunked, growing past the limit. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "POST /big HTTP/1.1\r\n"
				"Transfer-Encoding: chunked\r\n\r\n") == 0);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT(cli_sends(&c, "200\r\n") == 0);
		CU_ASSERT(cli_send(&c, big, 512) == 0);
		CU_ASSERT(cli_sends(&c, "\r\n") == 0);
	}
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	check_error(&r, 413, "Payload Too Large", "payload_too_large");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);

	/* Exactly at the limit is fine. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	snprintf(head, sizeof(head),
		 "POST /edge HTTP/1.1\r\nContent-Length: %d\r\n\r\n",
		 BODY_LIMIT);
	CU_ASSERT(cli_sends(&c, head) == 0);
	CU_ASSERT(cli_send(&c, big, BODY_LIMIT) == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "body_len")),
			BODY_LIMIT);
	resp_free(&r);
	cli_close(&c);
}

static void test_malformed(void)
{
	static const char *bad[] = {
		"GARBAGE\r\n\r\n",
		"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
	};
	struct cli c;
	struct resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
		CU_ASSERT(cli_sends(&c, bad[i]) == 0);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		check_error(&r, 400, "Bad Request", "invalid_parameter");
		CU_ASSERT_STRING_EQUAL(jstr(&r, "message"),
				       "malformed http request");
		resp_free(&r);
		CU_ASSERT(cli_eof(&c));
		cli_close(&c);
	}

	/* A good request, then garbage: the first is still answered. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /delay/100 HTTP/1.1\r\n\r\n"
				"\x01\x02 nonsense\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), "/delay/100");
	resp_free(&r);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	check_error(&r, 400, "Bad Request", "invalid_parameter");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
}

static void test_header_limit(void)
{
	struct cli c;
	struct resp r;
	char *req = malloc(20 * 1024);
	int n = sprintf(req, "GET / HTTP/1.1\r\nX-Big: ");

	memset(req + n, 'a', 17 * 1024);
	strcpy(req + n + 17 * 1024, "\r\n\r\n");
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, req) == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 431);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "error"),
			       "Request Header Fields Too Large");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
	free(req);
}

static void test_http10(void)
{
	struct cli c;
	struct resp r;
	char v[32];

	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /old HTTP/1.0\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "protocol"), "HTTP/1.0");
	CU_ASSERT(hdr(&r, "Connection", v, sizeof(v)) &&
		  strcmp(v, "close") == 0);
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);

	/* HTTP/1.0 asking for keep-alive gets it. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT(cli_sends(&c, "GET /old HTTP/1.0\r\n"
					"Connection: keep-alive\r\n\r\n") == 0);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		CU_ASSERT(hdr(&r, "Connection", v, sizeof(v)) &&
			  strcmp(v, "keep-alive") == 0);
		resp_free(&r);
	}
	cli_close(&c);

	/* HTTP/1.1 asking to close; what follows is not read. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /last HTTP/1.1\r\nConnection: close\r\n\r\n"
				"GET /never HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), "/last");
	CU_ASSERT(hdr(&r, "Connection", v, sizeof(v)) &&
		  strcmp(v, "close") == 0);
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
}

static void test_head_204(void)
{
	struct cli c;
	struct resp r;
	char v[32];

	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "HEAD /h HTTP/1.1\r\n\r\n"
				"GET /nocontent HTTP/1.1\r\n\r\n"
				"GET /tail HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 1) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	/* The length of the body a GET would get, and no body. */
	CU_ASSERT(hdr(&r, "Content-Length", v, sizeof(v)) && atoi(v) > 10);
	resp_free(&r);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 1) == 0);
	CU_ASSERT_EQUAL(r.status, 204);
	CU_ASSERT(!hdr(&r, "Content-Length", v, sizeof(v)));
	resp_free(&r);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_STRING_EQUAL(jstr(&r, "path"), "/tail");
	resp_free(&r);
	cli_close(&c);
}

static int stats_closed(void)
{
	struct resp r;
	int n = -1;

	if (exchange(plain.port, "GET /stats HTTP/1.1\r\n\r\n", &r) == 0)
		n = (int)json_integer_value(json_object_get(r.json,
							    "closed_answered"));
	resp_free(&r);
	return n;
}

static void test_disconnect(void)
{
	struct cli c;
	int before = stats_closed();

	/* Gone before the answer, alone and behind a pipeline. */
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /delay/150 HTTP/1.1\r\n\r\n") == 0);
	usleep(20 * 1000);
	cli_close(&c);
	CU_ASSERT_FATAL(cli_open(&c, plain.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /delay/200 HTTP/1.1\r\n\r\n"
				"GET /delay/50 HTTP/1.1\r\n\r\n"
				"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n"
				"abc") == 0);
	usleep(20 * 1000);
	cli_close(&c);
	usleep(400 * 1000);
	CU_ASSERT_EQUAL(stats_closed(), before + 3);
}

static void test_idle_timeout(void)
{
	struct cli c;
	struct resp r;

	/* A handler slower than the idle time is not idleness... */
	CU_ASSERT_FATAL(cli_open(&c, idle1.port) == 0);
	CU_ASSERT(cli_sends(&c, "GET /delay/1500 HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	resp_free(&r);
	/* ...but an idle keep-alive connection is closed. */
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
}

static long ms_since(const struct timeval *t0)
{
	struct timeval t;

	gettimeofday(&t, NULL);
	return (t.tv_sec - t0->tv_sec) * 1000L +
	       (t.tv_usec - t0->tv_usec) / 1000L;
}

/* Sends `req` a byte every 50 ms until an answer waits (each byte would
 * have restarted a read timeout); returns the ms until then. */
static long trickle(struct cli *c, const char *req)
{
	struct timeval t0;
	char b;

	gettimeofday(&t0, NULL);
	for (size_t i = 0; req[i] != '\0'; i++) {
		if (recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0 ||
		    cli_send(c, req + i, 1) != 0)
			break;
		usleep(50 * 1000);
	}
	return ms_since(&t0);
}

static void test_request_deadline(void)
{
	struct cli c;
	struct resp r;
	long ms;

	/* From the first byte of the request line... */
	CU_ASSERT_FATAL(cli_open(&c, tight.port) == 0);
	ms = trickle(&c, "POST /slow HTTP/1.1\r\nHost: h\r\n"
			 "Content-Length: 2\r\n\r\nab");
	CU_ASSERT(ms >= TIGHT_REQUEST_MS - CLOCK_SLACK_MS && ms < TIGHT_REQUEST_MS + 1000);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	check_error(&r, 408, "Request Timeout", "request_timeout");
	resp_free(&r);
	CU_ASSERT(cli_eof(&c));
	cli_close(&c);
	/* ...to the end of its body. */
	CU_ASSERT_FATAL(cli_open(&c, tight.port) == 0);
	CU_ASSERT(cli_sends(&c, "POST /slow HTTP/1.1\r\nHost: h\r\n"
				"Content-Length: 200\r\n\r\n") == 0);
	ms = trickle(&c, "abcdefghijklmnopqrstuvwxyz0123456789");
	CU_ASSERT(ms < TIGHT_REQUEST_MS + 1000);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 408);
	resp_free(&r);
	cli_close(&c);
}

/* Sends `start` and nothing more: closed at the deadline. */
static void check_cut_at_deadline(unsigned short port, const char *start)
{
	struct cli c;
	struct timeval t0;

	/* A TLS handshake's time starts at accept, before connect returns. */
	gettimeofday(&t0, NULL);
	CU_ASSERT_FATAL(cli_open(&c, port) == 0);
	CU_ASSERT(cli_sends(&c, start) == 0);
	CU_ASSERT(cli_eof(&c));
	CU_ASSERT(ms_since(&t0) >= TIGHT_REQUEST_MS - CLOCK_SLACK_MS);
	cli_close(&c);
}

static void test_protocol_deadline(void)
{
	/* A preface that never ends is no request either... */
	check_cut_at_deadline(tight.port, "PRI * HTTP/2.0\r\n");
	/* ...nor is a TLS handshake that never ends. */
	if (tls_tight.srv != NULL)
		check_cut_at_deadline(tls_tight.port, "\x16\x03\x01");
}

static void test_deadline_per_request(void)
{
	struct cli c;
	struct resp r;

	/* Idle time between requests is not request time. */
	CU_ASSERT_FATAL(cli_open(&c, tight.port) == 0);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT(cli_sends(&c, "GET /a HTTP/1.1\r\n\r\n") == 0);
		CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
		CU_ASSERT_EQUAL(r.status, 200);
		resp_free(&r);
		usleep(2 * TIGHT_REQUEST_MS * 1000);
	}
	/* A handler slower than the deadline is not a slow request. */
	CU_ASSERT(cli_sends(&c, "GET /delay/600 HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&c, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	resp_free(&r);
	cli_close(&c);
}

/* Opens `n` connections from 127.0.0.`from`, each answering a request. */
static int open_served(struct cli *c, int n, int from)
{
	struct resp r;

	for (int i = 0; i < n; i++) {
		if (cli_open_from(&c[i], tight.port, from) != 0 ||
		    cli_sends(&c[i], "GET /a HTTP/1.1\r\n\r\n") != 0 ||
		    cli_resp(&c[i], &r, 0) != 0)
			return -1;
		resp_free(&r);
	}
	return 0;
}

static void test_connection_caps(void)
{
	struct cli c[7];
	struct resp r;
	char v[16];

	/* Connections other tests closed are gone. */
	usleep(200 * 1000);
	CU_ASSERT_FATAL(open_served(c, 4, 1) == 0);
	CU_ASSERT_FATAL(cli_open_from(&c[4], tight.port, 1) == 0);
	CU_ASSERT_FATAL(cli_resp(&c[4], &r, 0) == 0);
	check_error(&r, 429, "Too Many Requests", "too_many_connections");
	CU_ASSERT(hdr(&r, "Retry-After", v, sizeof(v)) && atoi(v) > 0);
	resp_free(&r);
	CU_ASSERT(cli_eof(&c[4]));
	cli_close(&c[4]);
	/* Another address has its own count, up to the cap in all. */
	CU_ASSERT_FATAL(open_served(c + 4, 2, 2) == 0);
	CU_ASSERT_FATAL(cli_open_from(&c[6], tight.port, 3) == 0);
	CU_ASSERT_FATAL(cli_resp(&c[6], &r, 0) == 0);
	check_error(&r, 503, "Service Unavailable", "service_unavailable");
	resp_free(&r);
	cli_close(&c[6]);
	/* A closed connection gives its place back. */
	cli_close(&c[0]);
	usleep(100 * 1000);
	CU_ASSERT(open_served(c, 1, 1) == 0);
	for (int i = 0; i < 6; i++)
		cli_close(&c[i]);
}

/* The table's number as docs/decisions.md writes it. */
static void limit_text(const gw_http_limit_def *d, char *out, size_t n)
{
	if (strcmp(d->unit, "ms") == 0 && d->dflt % 1000 == 0)
		snprintf(out, n, "%lld s", d->dflt / 1000);
	else if (strcmp(d->unit, "bytes") == 0 && d->dflt % 1048576 == 0)
		snprintf(out, n, "%lld MiB", d->dflt / 1048576);
	else
		snprintf(out, n, "%lld", d->dflt);
}

static void test_limits_documented(void)
{
	const char *root = getenv("SEO_SOURCE_DIR");
	char path[512], *doc = NULL;
	size_t cap = 0;
	FILE *f;

	if (root == NULL)
		return;
	snprintf(path, sizeof(path), "%s/docs/decisions.md", root);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT(getdelim(&doc, &cap, '\0', f) > 0);
	fclose(f);
	for (int i = 0; i < GW__LIM_COUNT; i++) {
		const gw_http_limit_def *d = gw_http_limit_info(i);
		char want[160], num[32];

		limit_text(d, num, sizeof(num));
		snprintf(want, sizeof(want), "| `%s` | %s |", d->name, num);
		if (strstr(doc, want) == NULL)
			fprintf(stderr, "docs/decisions.md lacks \"%s\"\n", want);
		CU_ASSERT_PTR_NOT_NULL(strstr(doc, want));
	}
	free(doc);
}

/* ---- a small HTTP/2 client ---------------------------------------------- */

struct h2stream {
	int32_t id;
	int status;
	char body[8192];
	size_t len;
	int closed;
	uint32_t error;
	const char *upload;
	size_t upload_len;
	size_t upload_off;
};

struct h2c {
	int fd;
	nghttp2_session *s;
	struct h2stream st[16];
	int nst;
	int goaway;
	int eof;
	int split_first; /* send the preface in two pieces */
};

static struct h2stream *h2_find(struct h2c *h, int32_t id)
{
	for (int i = 0; i < h->nst; i++)
		if (h->st[i].id == id)
			return &h->st[i];
	return NULL;
}

static ssize_t h2_send_cb(nghttp2_session *s, const uint8_t *data,
			  size_t len, int flags, void *ud)
{
	struct h2c *h = ud;
	size_t first = len;

	(void)s;
	(void)flags;
	if (h->split_first && len > 10) {
		h->split_first = 0;
		first = 10;
		if (send(h->fd, data, first, MSG_NOSIGNAL) != (ssize_t)first)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		usleep(100 * 1000);
		if (send(h->fd, data + first, len - first, MSG_NOSIGNAL) !=
		    (ssize_t)(len - first))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		return (ssize_t)len;
	}
	if (send(h->fd, data, len, MSG_NOSIGNAL) != (ssize_t)len)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)len;
}

static int h2_header_cb(nghttp2_session *s, const nghttp2_frame *f,
			const uint8_t *name, size_t nlen, const uint8_t *value,
			size_t vlen, uint8_t flags, void *ud)
{
	struct h2stream *st = h2_find(ud, f->hd.stream_id);

	(void)s;
	(void)flags;
	(void)vlen;
	if (st != NULL && nlen == 7 && memcmp(name, ":status", 7) == 0)
		st->status = atoi((const char *)value);
	return 0;
}

static int h2_data_cb(nghttp2_session *s, uint8_t flags, int32_t id,
		      const uint8_t *data, size_t len, void *ud)
{
	struct h2stream *st = h2_find(ud, id);

	(void)s;
	(void)flags;
	if (st != NULL && st->len + len < sizeof(st->body)) {
		memcpy(st->body + st->len, data, len);
		st->len += len;
	}
	return 0;
}

static int h2_close_cb(nghttp2_session *s, int32_t id, uint32_t err,
		       void *ud)
{
	struct h2stream *st = h2_find(ud, id);

	(void)s;
	if (st != NULL) {
		st->closed = 1;
		st->error = err;
	}
	return 0;
}

static int h2_frame_cb(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	(void)s;
	if (f->hd.type == NGHTTP2_GOAWAY)
		((struct h2c *)ud)->goaway = 1;
	return 0;
}

static int h2_open(struct h2c *h, unsigned short port, int split)
{
	struct cli c;
	nghttp2_session_callbacks *cbs;

	memset(h, 0, sizeof(*h));
	if (cli_open(&c, port) != 0)
		return -1;
	h->fd = c.fd;
	h->split_first = split;
	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_send_callback(cbs, h2_send_cb);
	nghttp2_session_callbacks_set_on_header_callback(cbs, h2_header_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
								  h2_data_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
							       h2_close_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, h2_frame_cb);
	nghttp2_session_client_new(&h->s, cbs, h);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, NULL, 0);
	return 0;
}

static void h2_close(struct h2c *h)
{
	nghttp2_session_del(h->s);
	close(h->fd);
}

static ssize_t h2_upload_cb(nghttp2_session *s, int32_t id, uint8_t *buf,
			    size_t length, uint32_t *flags,
			    nghttp2_data_source *src, void *ud)
{
	struct h2stream *st = src->ptr;
	size_t n = st->upload_len - st->upload_off;

	(void)s;
	(void)id;
	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, st->upload + st->upload_off, n);
	st->upload_off += n;
	if (st->upload_off == st->upload_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static struct h2stream *h2_request(struct h2c *h, const char *method,
				   const char *path, const char *body,
				   size_t body_len)
{
	struct h2stream *st = &h->st[h->nst];
	nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)method, 7, strlen(method), 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"h2.test", 10, 7, 0},
		{(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
		{(uint8_t *)"x-test", (uint8_t *)"two", 6, 3, 0},
	};
	nghttp2_data_provider prd = {.source.ptr = st,
				     .read_callback = h2_upload_cb};

	memset(st, 0, sizeof(*st));
	st->upload = body;
	st->upload_len = body_len;
	st->id = nghttp2_submit_request(h->s, NULL, nv, 5,
					body ? &prd : NULL, NULL);
	h->nst++;
	return st;
}

static int h2_all_closed(struct h2c *h)
{
	for (int i = 0; i < h->nst; i++)
		if (!h->st[i].closed)
			return 0;
	return 1;
}

/* Runs the session until every stream closed (and, with `until_eof`, the
 * server closed the connection). */
static int h2_run(struct h2c *h, int until_eof)
{
	uint8_t buf[16384];

	for (;;) {
		ssize_t n;

		if (nghttp2_session_send(h->s) != 0)
			return -1;
		if (h2_all_closed(h) && !until_eof)
			return 0;
		n = recv(h->fd, buf, sizeof(buf), 0);
		if (n == 0) {
			h->eof = 1;
			return h2_all_closed(h) ? 0 : -1;
		}
		if (n < 0)
			return -1;
		if (nghttp2_session_mem_recv(h->s, buf, (size_t)n) < 0)
			return -1;
	}
}

static json_t *h2_json(const struct h2stream *st)
{
	return json_loadb(st->body, st->len, 0, NULL);
}

static void test_h2c(void)
{
	struct h2c h;
	static const char *paths[] = {"/delay/300?n=0", "/fast?n=1",
				      "/delay/150?n=2", "/delay/50?n=3",
				      "/fast?n=4"};
	struct h2stream *st[5], *post, *big, *big2;
	char blob[BODY_LIMIT + 500];

	memset(blob, 'y', sizeof(blob));
	CU_ASSERT_FATAL(h2_open(&h, plain.port, 1) == 0);
	for (int i = 0; i < 5; i++)
		st[i] = h2_request(&h, "GET", paths[i], NULL, 0);
	post = h2_request(&h, "POST", "/post", "hello h2", 8);
	/* Over the limit with no content-length: cut off in DATA. */
	big = h2_request(&h, "POST", "/big", blob, sizeof(blob));
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	for (int i = 0; i < 5; i++) {
		json_t *j = h2_json(st[i]);
		char path[32];

		snprintf(path, sizeof(path), "%s", paths[i]);
		*strchr(path, '?') = '\0';
		CU_ASSERT_EQUAL(st[i]->status, 200);
		CU_ASSERT_EQUAL(st[i]->error, NGHTTP2_NO_ERROR);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "path")),
				       path);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "query")),
				       strchr(paths[i], '?') + 1);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "protocol")),
				       "HTTP/2");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "method")),
				       "GET");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
					       json_object_get(j, "headers"), "host")),
				       "h2.test");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
					       json_object_get(j, "headers"), "x-test")),
				       "two");
		json_decref(j);
	}
	{
		json_t *j = h2_json(post);

		CU_ASSERT_EQUAL(post->status, 200);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "body")),
				       "hello h2");
		json_decref(j);
	}
	{
		json_t *j = h2_json(big);

		CU_ASSERT_EQUAL(big->status, 413);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "code")),
				       "payload_too_large");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "error")),
				       "Payload Too Large");
		json_decref(j);
	}
	/* The connection is still good; a declared content-length over the
	 * limit is refused from the headers. */
	h.nst = 0;
	big2 = h2_request(&h, "POST", "/big2", blob, sizeof(blob));
	{
		nghttp2_nv nv[] = {
			{(uint8_t *)":method", (uint8_t *)"HEAD", 7, 4, 0},
			{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
			{(uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0},
			{(uint8_t *)":path", (uint8_t *)"/head", 5, 5, 0},
		};
		struct h2stream *hs = &h.st[h.nst++];

		memset(hs, 0, sizeof(*hs));
		hs->id = nghttp2_submit_request(h.s, NULL, nv, 4, NULL, NULL);
		CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
		CU_ASSERT_EQUAL(hs->status, 200);
		CU_ASSERT_EQUAL(hs->len, 0);
	}
	CU_ASSERT_EQUAL(big2->status, 413);
	h2_close(&h);
}

static void test_h2c_content_length(void)
{
	struct h2c h;
	struct h2stream *st;
	char blob[BODY_LIMIT + 1];
	nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0},
		{(uint8_t *)":path", (uint8_t *)"/cl", 5, 3, 0},
		{(uint8_t *)"content-length", (uint8_t *)"1025", 14, 4, 0},
	};
	nghttp2_data_provider prd;

	memset(blob, 'z', sizeof(blob));
	CU_ASSERT_FATAL(h2_open(&h, plain.port, 0) == 0);
	st = &h.st[h.nst++];
	memset(st, 0, sizeof(*st));
	st->upload = blob;
	st->upload_len = sizeof(blob);
	prd.source.ptr = st;
	prd.read_callback = h2_upload_cb;
	st->id = nghttp2_submit_request(h.s, NULL, nv, 5, &prd, NULL);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	CU_ASSERT_EQUAL(st->status, 413);
	h2_close(&h);
}

static void test_h2c_header_limit(void)
{
	struct h2c h;
	struct h2stream *st, *ok;
	char *big = malloc(17 * 1024);
	nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0},
		{(uint8_t *)":path", (uint8_t *)"/hl", 5, 3, 0},
		{(uint8_t *)"x-big", (uint8_t *)big, 5, 17 * 1024, 0},
	};

	memset(big, 'b', 17 * 1024);
	CU_ASSERT_FATAL(h2_open(&h, plain.port, 0) == 0);
	st = &h.st[h.nst++];
	memset(st, 0, sizeof(*st));
	st->id = nghttp2_submit_request(h.s, NULL, nv, 5, NULL, NULL);
	ok = h2_request(&h, "GET", "/fine", NULL, 0);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	CU_ASSERT_EQUAL(st->status, 431);
	CU_ASSERT_EQUAL(ok->status, 200);
	h2_close(&h);
	free(big);
}

/* A body that never comes: the stream stays open after HEADERS. */
static ssize_t h2_stall_cb(nghttp2_session *s, int32_t id, uint8_t *buf,
			   size_t length, uint32_t *flags,
			   nghttp2_data_source *src, void *ud)
{
	(void)s;
	(void)id;
	(void)buf;
	(void)length;
	(void)flags;
	(void)src;
	(void)ud;
	return NGHTTP2_ERR_DEFERRED;
}

static struct h2stream *h2_stalled(struct h2c *h, const char *clen)
{
	struct h2stream *st = &h->st[h->nst++];
	nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0},
		{(uint8_t *)":path", (uint8_t *)"/stall", 5, 6, 0},
		{(uint8_t *)"content-length", (uint8_t *)clen, 14, strlen(clen),
		 0},
	};
	nghttp2_data_provider prd = {.read_callback = h2_stall_cb};

	memset(st, 0, sizeof(*st));
	st->id = nghttp2_submit_request(h->s, NULL, nv, 5, &prd, NULL);
	return st;
}

static void check_h2_error(const struct h2stream *st, int status,
			   const char *code)
{
	json_t *j = h2_json(st);

	CU_ASSERT_EQUAL(st->status, status);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "code")),
			       code);
	json_decref(j);
}

static void test_h2c_stream_deadline(void)
{
	struct h2c h;
	struct h2stream *slow, *ok;
	struct timeval t0;

	CU_ASSERT_FATAL(h2_open(&h, tight.port, 0) == 0);
	gettimeofday(&t0, NULL);
	slow = h2_stalled(&h, "10");
	ok = h2_request(&h, "GET", "/fine", NULL, 0);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	CU_ASSERT(ms_since(&t0) >= TIGHT_REQUEST_MS - CLOCK_SLACK_MS);
	check_h2_error(slow, 408, "request_timeout");
	CU_ASSERT_EQUAL(ok->status, 200);
	CU_ASSERT_EQUAL(nghttp2_session_get_remote_settings(
				h.s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS),
			tight_limits[GW_LIM_H2_STREAMS]);
	h2_close(&h);
}

static void test_h2c_body_budget(void)
{
	struct h2c h;
	struct h2stream *st[3];

	/* Each announced body is reserved (16000 bytes as 16384): with their
	 * arenas and headers two fit in the connection's 51201, the third is
	 * refused at once. */
	CU_ASSERT_FATAL(h2_open(&h, tight.port, 0) == 0);
	for (int i = 0; i < 3; i++)
		st[i] = h2_stalled(&h, "16000");
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	check_h2_error(st[0], 408, "request_timeout");
	check_h2_error(st[1], 408, "request_timeout");
	check_h2_error(st[2], 503, "service_unavailable");
	h2_close(&h);
}

static void test_h2c_header_budget(void)
{
	struct h2c h;
	struct h2stream *slow[2], *st;
	char big[14000];
	nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":authority", (uint8_t *)"h", 10, 1, 0},
		{(uint8_t *)":path", (uint8_t *)"/hb", 5, 3, 0},
		{(uint8_t *)"x-big", (uint8_t *)big, 5, sizeof(big), 0},
	};

	/* Headers count with the bodies: two streams as above, then 14000
	 * bytes of headers over the connection's 51201. */
	memset(big, 'h', sizeof(big));
	CU_ASSERT_FATAL(h2_open(&h, tight.port, 0) == 0);
	slow[0] = h2_stalled(&h, "16000");
	slow[1] = h2_stalled(&h, "16000");
	st = &h.st[h.nst++];
	memset(st, 0, sizeof(*st));
	st->id = nghttp2_submit_request(h.s, NULL, nv, 5, NULL, NULL);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	check_h2_error(st, 503, "service_unavailable");
	check_h2_error(slow[0], 408, "request_timeout");
	check_h2_error(slow[1], 408, "request_timeout");
	h2_close(&h);
}

static void test_h2c_unread_answer(void)
{
	struct h2c h;
	struct h2stream *st;
	struct timeval t0;
	nghttp2_settings_entry shut = {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
				       0};

	/* A client that never opens a window for the answer's body. */
	CU_ASSERT_FATAL(h2_open(&h, tight.port, 0) == 0);
	nghttp2_submit_settings(h.s, NGHTTP2_FLAG_NONE, &shut, 1);
	gettimeofday(&t0, NULL);
	st = h2_request(&h, "GET", "/fine", NULL, 0);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	CU_ASSERT(ms_since(&t0) >= TIGHT_REQUEST_MS - CLOCK_SLACK_MS);
	CU_ASSERT_EQUAL(st->status, 200);
	CU_ASSERT_EQUAL(st->len, 0);
	CU_ASSERT_EQUAL(st->error, NGHTTP2_CANCEL);
	h2_close(&h);
}

static void test_h2c_head(void)
{
	struct h2c h;
	struct h2stream *st;

	CU_ASSERT_FATAL(h2_open(&h, plain.port, 0) == 0);
	st = h2_request(&h, "HEAD", "/h", NULL, 0);
	CU_ASSERT_FATAL(h2_run(&h, 0) == 0);
	CU_ASSERT_EQUAL(st->status, 200);
	CU_ASSERT_EQUAL(st->len, 0);
	h2_close(&h);
}

/* ---- TLS + ALPN through curl --------------------------------------------- */

static int curl_get(const char *flags, const char *path, json_t **out)
{
	char cmd[512], buf[8192];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "curl -sk --max-time 5 %s https://127.0.0.1:%u%s", flags,
		 tls.port, path);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf), p);
	if (pclose(p) != 0)
		return -1;
	*out = json_loadb(buf, n, 0, NULL);
	return *out != NULL ? 0 : -1;
}

static void test_tls_alpn(void)
{
	json_t *j;

	if (tls.srv == NULL || !have_cmd("curl -V")) {
		fprintf(stderr, "\n  (skipped: no openssl or curl) ");
		return;
	}
	CU_ASSERT_FATAL(curl_get("--http1.1", "/tls/one?a=b", &j) == 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "protocol")),
			       "HTTP/1.1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "query")),
			       "a=b");
	json_decref(j);
	if (!have_cmd("curl -V | grep -q HTTP2")) {
		fprintf(stderr, "\n  (h2 skipped: curl without HTTP/2) ");
		return;
	}
	CU_ASSERT_FATAL(curl_get("--http2", "/tls/two", &j) == 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "protocol")),
			       "HTTP/2");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "path")),
			       "/tls/two");
	json_decref(j);
	CU_ASSERT_FATAL(curl_get("--http2 -X POST -d 'x=1'", "/tls/post",
				 &j) == 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "body")),
			       "x=1");
	json_decref(j);
}

static void test_h2c_curl(void)
{
	char cmd[512], buf[512];
	size_t n;
	FILE *p;

	if (!have_cmd("curl -V | grep -q HTTP2")) {
		fprintf(stderr, "\n  (skipped: curl without HTTP/2) ");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "curl -s --max-time 5 --http2-prior-knowledge "
		 "-w '%%{http_version}' -o /dev/null http://127.0.0.1:%u/c",
		 plain.port);
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	CU_ASSERT_EQUAL(pclose(p), 0);
	CU_ASSERT_STRING_EQUAL(buf, "2");
}

/* ---- shutdown (last) ------------------------------------------------------ */

static void test_shutdown(void)
{
	struct cli slow, idle, fresh, trigger;
	struct resp r;
	struct h2c h;
	struct h2stream *st;
	char v[32];

	CU_ASSERT_FATAL(cli_open(&slow, plain.port) == 0);
	CU_ASSERT(cli_sends(&slow, "GET /delay/300 HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_open(&idle, plain.port) == 0);
	CU_ASSERT(cli_sends(&idle, "GET /x HTTP/1.1\r\n\r\n") == 0);
	CU_ASSERT_FATAL(cli_resp(&idle, &r, 0) == 0);
	resp_free(&r);
	CU_ASSERT_FATAL(cli_open(&fresh, plain.port) == 0);
	CU_ASSERT_FATAL(h2_open(&h, plain.port, 0) == 0);
	st = h2_request(&h, "GET", "/delay/300", NULL, 0);
	CU_ASSERT(nghttp2_session_send(h.s) == 0);
	usleep(100 * 1000);

	CU_ASSERT_FATAL(exchange(plain.port, "GET /shutdown HTTP/1.1\r\n\r\n",
				 &r) == 0);
	CU_ASSERT_STRING_EQUAL(r.body, "bye");
	resp_free(&r);

	/* Idle connections close at once, in-flight answers still arrive. */
	CU_ASSERT(cli_eof(&idle));
	CU_ASSERT(cli_eof(&fresh));
	CU_ASSERT_FATAL(cli_resp(&slow, &r, 0) == 0);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT(hdr(&r, "Connection", v, sizeof(v)) &&
		  strcmp(v, "close") == 0);
	resp_free(&r);
	CU_ASSERT(cli_eof(&slow));
	CU_ASSERT(h2_run(&h, 1) == 0);
	CU_ASSERT(h.goaway);
	CU_ASSERT(h.eof);
	CU_ASSERT_EQUAL(st->status, 200);
	h2_close(&h);
	cli_close(&slow);
	cli_close(&idle);
	cli_close(&fresh);
	/* Nobody listens any more. */
	CU_ASSERT(cli_open(&trigger, plain.port) != 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_http", suite_init, suite_clean);
	CU_add_test(s, "GET echo", test_get);
	CU_add_test(s, "POST echo", test_post);
	CU_add_test(s, "keep-alive", test_keepalive);
	CU_add_test(s, "pipelined, answered out of order", test_pipelined_out_of_order);
	CU_add_test(s, "pipelined past the read-ahead", test_pipelined_many);
	CU_add_test(s, "chunked body", test_chunked);
	CU_add_test(s, "Expect: 100-continue", test_expect_continue);
	CU_add_test(s, "body limit 413", test_body_limit);
	CU_add_test(s, "malformed 400", test_malformed);
	CU_add_test(s, "header limit 431", test_header_limit);
	CU_add_test(s, "HTTP/1.0 and Connection: close", test_http10);
	CU_add_test(s, "HEAD and 204", test_head_204);
	CU_add_test(s, "client gone before the answer", test_disconnect);
	CU_add_test(s, "idle timeout", test_idle_timeout);
	CU_add_test(s, "request deadline 408", test_request_deadline);
	CU_add_test(s, "protocol choice and TLS handshake deadline",
		    test_protocol_deadline);
	CU_add_test(s, "the deadline is per request", test_deadline_per_request);
	CU_add_test(s, "connection caps 429 and 503", test_connection_caps);
	CU_add_test(s, "every limit in docs/decisions.md", test_limits_documented);
	CU_add_test(s, "h2c prior knowledge, concurrent streams", test_h2c);
	CU_add_test(s, "h2c content-length over the limit", test_h2c_content_length);
	CU_add_test(s, "h2c header limit 431", test_h2c_header_limit);
	CU_add_test(s, "h2c stream deadline 408", test_h2c_stream_deadline);
	CU_add_test(s, "h2c body budget 503", test_h2c_body_budget);
	CU_add_test(s, "h2c header budget 503", test_h2c_header_budget);
	CU_add_test(s, "h2c answer left unread: reset", test_h2c_unread_answer);
	CU_add_test(s, "h2c HEAD", test_h2c_head);
	CU_add_test(s, "h2c with curl", test_h2c_curl);
	CU_add_test(s, "TLS with ALPN", test_tls_alpn);
	CU_add_test(s, "graceful shutdown", test_shutdown);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
