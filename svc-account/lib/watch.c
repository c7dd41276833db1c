/*
 * What stops a key, for the gateways that check keys in their own memory
 * (acct_int.h, "the watch"): a numbered log of the last WATCH_LOG events
 * (a key revoked, a user removed, everything; for the credit leases, a
 * workspace recalled or its balance changed; a key's rate grants
 * recalled), the watchers that asked
 * for it and how far each has read. A revocation waits until every live
 * watcher has read past it, so that its answer comes after every gateway
 * forgot the key.
 */
#include "acct_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seo/errors.h"
#include "seo/util.h"

/* Events kept; a watcher further behind is answered with a reset. */
#define WATCH_LOG 1024

int acct__watch_init(acct__watch *w, acct_err *err)
{
	pthread_condattr_t attr;

	memset(w, 0, sizeof(*w));
	w->log = calloc(WATCH_LOG, sizeof(*w->log));
	if (w->log == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	if (seo_random_string(w->instance, sizeof(w->instance) - 1,
			      SEO_ALPHANUM) != 0) {
		free(w->log);
		return acct__fail(err, SEO_EIO, "internal_error",
				  "random generator failed");
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->changed, &attr);
	pthread_condattr_destroy(&attr);
	return 0;
}

void acct__watch_destroy(acct__watch *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->changed);
	free(w->log);
}

/* Under w->mu: appends an event; its seq. */
static uint64_t append(acct__watch *w, int kind, const char *id)
{
	acct__watch_ev *ev = &w->log[++w->seq % WATCH_LOG];

	ev->seq = w->seq;
	ev->kind = kind;
	snprintf(ev->id, sizeof(ev->id), "%s", id != NULL ? id : "");
	pthread_cond_broadcast(&w->changed);
	return w->seq;
}

/* Under w->mu: 1 when every watcher seen in the last ACCT_WATCH_LIVE_MS
 * has read up to `seq`. */
static int all_read(const acct__watch *w, uint64_t seq, int64_t now)
{
	for (size_t i = 0; i < w->n_watchers; i++)
		if (now - w->watchers[i].seen_ms < ACCT_WATCH_LIVE_MS &&
		    w->watchers[i].read < seq)
			return 0;
	return 1;
}

static uint64_t publish(acct__watch *w, int kind, const char *id, int wait)
{
	struct timespec until;
	uint64_t seq;

	acct__deadline_in(&until, ACCT_WATCH_ACK_MS);
	pthread_mutex_lock(&w->mu);
	seq = append(w, kind, id);
	while (wait && !all_read(w, seq, seo_mono_ms()))
		if (pthread_cond_timedwait(&w->changed, &w->mu, &until) ==
		    ETIMEDOUT)
			break;
	pthread_mutex_unlock(&w->mu);
	return seq;
}

void acct__watch_key(acct__watch *w, const char *hash, int wait)
{
	publish(w, ACCT_WATCH_KEY, hash, wait);
}

void acct__watch_user(acct__watch *w, const char *user_id)
{
	publish(w, ACCT_WATCH_USER, user_id, 0);
}

void acct__watch_lease(acct__watch *w, int kind, const char *workspace_id,
		       int wait)
{
	publish(w, kind, workspace_id, wait);
}

void acct__watch_reset(acct__watch *w)
{
	publish(w, ACCT_WATCH_RESET, NULL, 0);
}

void acct__watch_rate(acct__watch *w, const char *hash)
{
	publish(w, ACCT_WATCH_RATE, hash, 0);
}

void acct__watch_gone(acct__watch *w, const char *watcher)
{
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->n_watchers; i++)
		if (strcmp(w->watchers[i].id, watcher) == 0) {
			w->watchers[i] = w->watchers[--w->n_watchers];
			break;
		}
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->mu);
}

/* Under w->mu: records that `watcher` has read up to `read`. */
static void seen(acct__watch *w, const char *watcher, uint64_t read,
		 int64_t now)
{
	size_t i, oldest = 0;

	for (i = 0; i < w->n_watchers; i++) {
		if (strcmp(w->watchers[i].id, watcher) == 0)
			break;
		if (w->watchers[i].seen_ms < w->watchers[oldest].seen_ms)
			oldest = i;
	}
	if (i == w->n_watchers) {
		/* A full table gives the slot of the longest silent. */
		if (w->n_watchers < ACCT_WATCHERS_MAX)
			w->n_watchers++;
		else
			i = oldest;
		snprintf(w->watchers[i].id, sizeof(w->watchers[i].id), "%s",
			 watcher);
	}
	w->watchers[i].read = read;
	w->watchers[i].seen_ms = now;
	pthread_cond_broadcast(&w->changed);
}

int acct__watch_wait(acct__watch *w, const char *watcher,
		     const char *instance, uint64_t since, int64_t wait_ms,
		     acct__watch_batch *out)
{
	struct timespec until;
	int ours;

	acct__deadline_in(&until, wait_ms);
	pthread_mutex_lock(&w->mu);
	/* Before `out` is cleared: `instance` may be its own. */
	ours = instance != NULL && strcmp(instance, w->instance) == 0;
	memset(out, 0, sizeof(*out));
	/* A watcher of another instance, or ahead of us, has read nothing
	 * of ours: it counts as having read everything only once reset. */
	seen(w, watcher, ours && since <= w->seq ? since : 0, seo_mono_ms());
	if (!ours || since > w->seq || w->seq - since >= WATCH_LOG) {
		out->reset = 1;
	} else {
		while (w->seq == since)
			if (pthread_cond_timedwait(&w->changed, &w->mu, &until) ==
			    ETIMEDOUT)
				break;
		for (uint64_t s = since + 1; s <= w->seq && !out->reset; s++) {
			const acct__watch_ev *ev = &w->log[s % WATCH_LOG];

			if (ev->kind == ACCT_WATCH_RESET)
				out->reset = 1;
			else if (out->n < ACCT_WATCH_BATCH)
				out->ev[out->n++] = *ev;
			else
				out->reset = 1;
		}
	}
	if (out->reset)
		out->n = 0;
	out->seq = w->seq;
	memcpy(out->instance, w->instance, sizeof(out->instance));
	pthread_mutex_unlock(&w->mu);
	return 0;
}

