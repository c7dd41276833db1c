/*
 * rpc_service.c: rpc_service_main(), the main() of every service process.
 *
 * The first SIGINT or SIGTERM starts a graceful stop: GOAWAY on every
 * connection, no new ones, and the loop ends once the calls in flight are
 * answered and the connections closed, or after the drain limit
 * (SEO_DRAIN_MS; the Kubernetes grace period is longer). Calls still
 * running then are waited for by rpc_server_free() but their answers go
 * nowhere: the caller sees the connection lost and refunds. A second
 * signal stops at once. Without SEO_INTERNAL_TOKEN it does not start (exit
 * status 2).
 */
#include "rpc_internal.h"

#include "seo/config.h"
#include "seo/json_text.h"
#include "seo/log.h"
#include "seo/util.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#define SERVICE_POLL_MS 20

struct service {
	struct event_base *base;
	rpc_server *srv;
	struct event *poll;
	int64_t give_up_at; /* 0 until a signal arrived */
};

/* While stopping: ends the loop once nothing is left (or time is up). */
static void poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;

	(void)fd;
	(void)what;
	if (rpc_server_busy(s->srv) == 0) {
		event_base_loopbreak(s->base);
	} else if (seo_mono_ms() >= s->give_up_at) {
		log_warn("stopping with %zu connections or calls unfinished",
			 rpc_server_busy(s->srv));
		event_base_loopbreak(s->base);
	}
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct service *s = arg;
	struct timeval tv = {0, SERVICE_POLL_MS * 1000};

	(void)what;
	if (s->give_up_at != 0) {
		log_info("second signal %d, stopping now", (int)sig);
		event_base_loopbreak(s->base);
		return;
	}
	log_info("signal %d, shutting down", (int)sig);
	s->give_up_at = seo_mono_ms() + seo_config_num(SEO_CFG_DRAIN_MS);
	rpc_server_shutdown(s->srv);
	event_add(s->poll, &tv);
}

int rpc_service_main(const char *name, const char *addr,
		     const rpc_method *methods, size_t n_methods,
		     void *service, int workers,
		     const rpc_inline *inline_methods)
{
	struct service s = {0};
	struct event *sigint = NULL, *sigterm = NULL;
	char host[256];
	unsigned short port;
	int rc = 1;

	seo_config_require(SEO_CFG_INTERNAL_TOKEN);
	seo_log_init(name);
	seo_json_init();
	/* Before the event_base exists: a lock-aware base, so that code on
	 * a handler's thread may activate its events (rpc_server's own
	 * workers hand calls back through an eventfd instead). */
	if (evthread_use_pthreads() != 0) {
		log_error("cannot enable libevent threading");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	s.base = event_base_new();
	if (s.base == NULL) {
		log_error("cannot create the event loop");
		return 1;
	}
	if (rpc_server_new(s.base, methods, n_methods, service, workers,
			   &s.srv) != 0) {
		log_error("cannot create the server");
		goto out;
	}
	for (; inline_methods != NULL && inline_methods->path != NULL;
	     inline_methods++)
		if (rpc_server_run_inline(s.srv, inline_methods->path,
					  inline_methods->when) != 0) {
			log_error("no method %s to run inline",
				  inline_methods->path);
			goto out;
		}
	if (rpc_server_listen(s.srv, addr) != 0)
		goto out; /* rpc_server_listen() logged why */
	s.poll = event_new(s.base, -1, EV_PERSIST, poll_cb, &s);
	sigint = evsignal_new(s.base, SIGINT, signal_cb, &s);
	sigterm = evsignal_new(s.base, SIGTERM, signal_cb, &s);
	if (s.poll == NULL || sigint == NULL || sigterm == NULL ||
	    event_add(sigint, NULL) != 0 || event_add(sigterm, NULL) != 0) {
		log_error("cannot install signal handlers");
		goto out;
	}
	if (seo_split_hostport(addr, host, sizeof(host), &port) == 0)
		log_info("listening on %s%s%s:%u", strchr(host, ':') ? "[" : "",
			 host, strchr(host, ':') ? "]" : "",
			 rpc_server_port(s.srv));
	event_base_dispatch(s.base);
	log_info("stopped");
	rc = 0;
out:
	if (rc != 0)
		log_error("%s cannot start", name);
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	if (s.poll != NULL)
		event_free(s.poll);
	rpc_server_free(s.srv);
	event_base_free(s.base);
	return rc;
}
