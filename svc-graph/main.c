/*
 * svc-graph: serves seo.graph.v1.Graph on SEO_GRAPH_ADDR from the crawl
 * index at SEO_DATA_DIR, and switches to a newer release placed there
 * (a directory renamed or a symlink swapped into place) on SIGHUP or
 * within RELOAD_CHECK_S seconds, without dropping a call.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "graph_service.h"
#include "seo/config.h"
#include "seo/log.h"

#define WORKERS 4
#define RELOAD_CHECK_S 5

static atomic_int stopping;

/* Waits for SIGHUP (blocked in every thread, so only this one takes it)
 * or the next periodic check, then looks for a new release. */
static void *watch(void *arg)
{
	const struct timespec every = {RELOAD_CHECK_S, 0};
	sigset_t hup;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	while (!atomic_load(&stopping)) {
		int sig = sigtimedwait(&hup, NULL, &every);

		if (atomic_load(&stopping))
			break;
		if (sig == SIGHUP)
			log_info("SIGHUP: looking for a new crawl release");
		graph_service_reload(arg);
	}
	return NULL;
}

int main(void)
{
	graph_service *s = NULL;
	pthread_t watcher;
	sigset_t hup;
	int rc = 1;

	seo_config_init();
	seo_log_init("svc-graph");
	/* Before any thread exists, so that every thread inherits it. */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	if (graph_service_new(seo_config(SEO_CFG_DATA_DIR), &s) != 0) {
		log_error("cannot start: out of memory or data path too long");
		return 1;
	}
	if (pthread_create(&watcher, NULL, watch, s) != 0) {
		log_error("cannot start the release watcher");
		goto out;
	}
	rc = rpc_service_main("svc-graph", seo_config(SEO_CFG_GRAPH_ADDR),
			      graph_rpc_methods, graph_rpc_n_methods, s,
			      WORKERS, graph_rpc_inline);
	atomic_store(&stopping, 1);
	pthread_kill(watcher, SIGHUP);
	pthread_join(watcher, NULL);
out:
	graph_service_free(s);
	return rc;
}
