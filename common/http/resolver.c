/*
 * resolver.c: name lookups on detached threads (resolver.h).
 *
 * A resolver is shared by its owner (the fetcher, on the loop thread) and
 * by every lookup thread still running, counted in `refs`; the last one
 * out frees it. A finished lookup goes on `done` and the loop is woken
 * through an eventfd; once the owner has let go (`closed`), a thread frees
 * its own lookup instead. A lookup's callback fields are touched by the
 * loop thread only.
 */
#include "resolver.h"

#include "seo/errors.h"
#include "seo/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct seo__resolver {
	pthread_mutex_t mu;
	int refs;           /* the owner, until closed, and each thread */
	int closed;         /* the owner let go */
	seo__lookup *done;  /* finished, not yet delivered */
	int efd;
	struct event *ev;   /* the owner's, on efd */
};

struct seo__lookup {
	seo__resolver *r;
	seo__lookup *next;
	char host[256];
	struct addrinfo *res;
	int rc;
	seo__lookup_fn fn; /* loop thread only; NULL once abandoned */
	void *ud;
};

static atomic_int threads_alive;

static void resolver_destroy(seo__resolver *r)
{
	close(r->efd);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static void lookup_free(seo__lookup *l)
{
	if (l->res != NULL)
		freeaddrinfo(l->res);
	free(l);
}

static void *lookup_main(void *arg)
{
	seo__lookup *l = arg;
	seo__resolver *r = l->r;
	struct addrinfo hints;
	unsigned char probe[16];
	const uint64_t one = 1;
	int last;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (inet_pton(AF_INET, l->host, probe) == 1 ||
	    inet_pton(AF_INET6, l->host, probe) == 1)
		hints.ai_flags = AI_NUMERICHOST;
	l->rc = seo__getaddrinfo(l->host, NULL, &hints, &l->res);
	if (l->rc != 0)
		l->res = NULL;

	pthread_mutex_lock(&r->mu);
	if (r->closed) {
		lookup_free(l);
	} else {
		l->next = r->done;
		r->done = l;
		if (write(r->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_error("cannot wake the fetch loop: %s", strerror(errno));
	}
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (last)
		resolver_destroy(r);
	atomic_fetch_sub(&threads_alive, 1);
	return NULL;
}

/* Hands finished lookups to their callbacks (loop thread). */
static void on_done_ev(evutil_socket_t fd, short what, void *arg)
{
	seo__resolver *r = arg;
	seo__lookup *list;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("cannot read the resolver wake-up: %s", strerror(errno));
	pthread_mutex_lock(&r->mu);
	list = r->done;
	r->done = NULL;
	pthread_mutex_unlock(&r->mu);
	while (list != NULL) {
		seo__lookup *l = list;

		list = l->next;
		if (l->fn != NULL) {
			l->fn(l->res, l->rc, l->ud);
			l->res = NULL; /* the callee's now */
		}
		lookup_free(l);
	}
}

int seo__resolver_new(struct event_base *base, seo__resolver **out)
{
	seo__resolver *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return SEO_ENOMEM;
	r->refs = 1;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0) {
		free(r);
		return SEO_EIO;
	}
	pthread_mutex_init(&r->mu, NULL);
	r->ev = event_new(base, r->efd, EV_READ | EV_PERSIST, on_done_ev, r);
	if (r->ev == NULL || event_add(r->ev, NULL) != 0) {
		if (r->ev != NULL)
			event_free(r->ev);
		resolver_destroy(r);
		return SEO_ENOMEM;
	}
	*out = r;
	return 0;
}

void seo__resolver_free(seo__resolver *r)
{
	seo__lookup *list;
	int last;

	if (r == NULL)
		return;
	event_free(r->ev);
	pthread_mutex_lock(&r->mu);
	r->closed = 1;
	list = r->done;
	r->done = NULL;
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	while (list != NULL) {
		seo__lookup *l = list;

		list = l->next;
		lookup_free(l);
	}
	if (last)
		resolver_destroy(r);
}

/* Fails a lookup that got no thread, from the loop rather than the
 * caller's stack. */
static void fail_soon(seo__resolver *r, seo__lookup *l)
{
	const uint64_t one = 1;

	l->rc = EAI_AGAIN;
	pthread_mutex_lock(&r->mu);
	l->next = r->done;
	r->done = l;
	pthread_mutex_unlock(&r->mu);
	if (write(r->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("cannot wake the fetch loop: %s", strerror(errno));
}

int seo__lookup_start(seo__resolver *r, const char *host, seo__lookup_fn done,
		      void *ud, seo__lookup **out)
{
	seo__lookup *l = calloc(1, sizeof(*l));
	pthread_attr_t attr;
	pthread_t t;
	int started = 0;

	if (l == NULL)
		return SEO_ENOMEM;
	l->r = r;
	l->fn = done;
	l->ud = ud;
	snprintf(l->host, sizeof(l->host), "%s", host);
	*out = l;
	if (atomic_fetch_add(&threads_alive, 1) >= SEO_RESOLVER_MAX_THREADS) {
		atomic_fetch_sub(&threads_alive, 1);
		log_warn("%d name lookups already running; %s not looked up",
			 SEO_RESOLVER_MAX_THREADS, host);
		fail_soon(r, l);
		return 0;
	}
	pthread_mutex_lock(&r->mu);
	r->refs++;
	pthread_mutex_unlock(&r->mu);
	if (pthread_attr_init(&attr) == 0) {
		started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
			  pthread_create(&t, &attr, lookup_main, l) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!started) {
		pthread_mutex_lock(&r->mu);
		r->refs--; /* the owner still holds one */
		pthread_mutex_unlock(&r->mu);
		atomic_fetch_sub(&threads_alive, 1);
		log_warn("cannot start a name lookup thread for %s", host);
		fail_soon(r, l);
	}
	return 0;
}

void seo__lookup_abandon(seo__lookup *l)
{
	l->fn = NULL;
}
