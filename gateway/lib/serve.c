/* The gateway process (gw_main): configuration from the environment, one
 * event loop. */
#include <signal.h>
#include <stdio.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "gw.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/log.h"

/* The first signal drains (gw_gateway_shutdown()); a second stops now. */
static void on_signal(evutil_socket_t sig, short what, void *ud)
{
	static int stopping;
	gw_gateway *gw = ud;

	(void)what;
	if (stopping) {
		log_info("second signal %d: stopping now", (int)sig);
		event_base_loopbreak(gw_gateway_base(gw));
		return;
	}
	stopping = 1;
	log_info("signal %d: shutting down", (int)sig);
	gw_gateway_shutdown(gw);
}

int gw_main(void)
{
	struct event_base *base;
	struct event *sigint, *sigterm;
	gw_gateway *gw;
	gw_config cfg;
	int rc;

	seo_config_init();
	seo_config_require(SEO_CFG_INTERNAL_TOKEN);
	seo_log_init("gateway");
	seo_json_init();
	signal(SIGPIPE, SIG_IGN);
	evthread_use_pthreads();
	base = event_base_new();
	if (base == NULL) {
		log_error("could not create the event loop");
		return 1;
	}
	gw_config_from_env(&cfg);
	rc = gw_gateway_new(base, &cfg, &gw);
	if (rc != 0) {
		log_error("could not start the gateway on %s: %s", cfg.http_addr,
			  seo_strerror(rc));
		event_base_free(base);
		return 1;
	}
	sigint = evsignal_new(base, SIGINT, on_signal, gw);
	sigterm = evsignal_new(base, SIGTERM, on_signal, gw);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	log_info("listening on %s", cfg.http_addr);
	event_base_dispatch(base);
	log_info("stopped");
	event_free(sigint);
	event_free(sigterm);
	gw_gateway_free(gw);
	event_base_free(base);
	return 0;
}
