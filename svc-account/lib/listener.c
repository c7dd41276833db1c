/*
 * The seo_auth listener: its own connection LISTENs, so that a key revoked
 * or a user removed by another process (another replica, seoctl) leaves
 * this process's key cache at once. Payloads: a key hash, or "user:<id>";
 * for the credit leases, "lease:<workspace>" (leases closed: read again),
 * "recall:<workspace>" and "balance:<workspace>" (told to the holders).
 */
#include "acct_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seo/errors.h"
#include "seo/log.h"

#define RECONNECT_MS 1000

static int connect_listen(acct__listener *l, acct_err *err)
{
	PGresult *r;
	int rc = acct__connect(l->url, &l->pg, err);

	if (rc != 0)
		return rc;
	r = PQexec(l->pg, "LISTEN " ACCT_AUTH_CHANNEL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		rc = acct__db_fail(err, "listen", PQerrorMessage(l->pg));
		PQfinish(l->pg);
		l->pg = NULL;
	}
	PQclear(r);
	return rc;
}

static int prefixed(const char *payload, const char *prefix)
{
	return strncmp(payload, prefix, strlen(prefix)) == 0;
}

/* Leases closed by another process: their state as the table has it. */
static void leases_changed(acct__listener *l, const char *workspace_id)
{
	acct_err err = {0};

	if (acct__leases_load(l->leases, l->pg, workspace_id, &err) != 0)
		log_warn("could not read the leases of %s: %s", workspace_id,
			 err.message);
}

static void handle(acct__listener *l, const char *payload)
{
	size_t plen = strlen(ACCT_AUTH_USER_PREFIX);

	/* Lease and balance news count as no notification: they stop no
	 * key. */
	if (prefixed(payload, ACCT_AUTH_LEASE_PREFIX)) {
		leases_changed(l, payload + strlen(ACCT_AUTH_LEASE_PREFIX));
		return;
	}
	if (prefixed(payload, ACCT_AUTH_RECALL_PREFIX)) {
		acct__leases_mark_recalled(l->leases,
					   payload + strlen(ACCT_AUTH_RECALL_PREFIX));
		return;
	}
	if (prefixed(payload, ACCT_AUTH_BALANCE_PREFIX)) {
		acct__leases_balance_changed(l->leases,
					     payload + strlen(ACCT_AUTH_BALANCE_PREFIX), 0);
		return;
	}
	if (strncmp(payload, ACCT_AUTH_USER_PREFIX, plen) == 0) {
		acct__keycache_evict_user(l->cache, payload + plen);
		acct__watch_user(l->watch, payload + plen);
	} else {
		acct__keycache_evict_key(l->cache, payload);
		acct__watch_key(l->watch, payload, 0);
	}
	atomic_fetch_add(&l->notifications, 1);
}

/* Waits for the socket (or only `ms` for the stop byte when fd < 0).
 * Returns 1 when asked to stop. */
static int wait_for(acct__listener *l, int fd, int ms)
{
	struct pollfd fds[2] = {
		{.fd = l->wake[0], .events = POLLIN},
		{.fd = fd, .events = POLLIN},
	};

	while (poll(fds, fd >= 0 ? 2 : 1, ms) < 0)
		if (errno != EINTR)
			break;
	return (fds[0].revents & POLLIN) != 0;
}

/* Leases closed while we were away: every workspace known with open
 * leases, and every one that has some, read again. */
static void leases_reload(acct__listener *l)
{
	acct_err err = {0};

	if (acct__leases_reload(l->leases, l->pg, &err) != 0)
		log_warn("could not read the open leases: %s", err.message);
}

static void *listener_main(void *arg)
{
	acct__listener *l = arg;

	for (;;) {
		PGnotify *n;

		if (l->pg == NULL) {
			acct_err err = {0};

			if (wait_for(l, -1, RECONNECT_MS))
				break;
			if (connect_listen(l, &err) != 0)
				continue;
			/* Notifications sent while we were away are lost:
			 * whatever is cached may be stale. */
			acct__keycache_clear(l->cache);
			acct__watch_reset(l->watch);
			leases_reload(l);
			log_info("seo_auth listener reconnected");
		}
		if (wait_for(l, PQsocket(l->pg), -1))
			break;
		if (!PQconsumeInput(l->pg) || PQstatus(l->pg) != CONNECTION_OK) {
			acct_err err = {0};

			acct__db_fail(&err, "listen", PQerrorMessage(l->pg));
			log_warn("seo_auth listener lost its connection: %s",
				 err.message);
			PQfinish(l->pg);
			l->pg = NULL;
			continue;
		}
		while ((n = PQnotifies(l->pg)) != NULL) {
			handle(l, n->extra);
			PQfreemem(n);
		}
	}
	return NULL;
}

int acct__listener_start(acct__listener *l, const char *url,
			 acct__keycache *cache, acct__watch *watch,
			 acct__leases *leases, acct_err *err)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->cache = cache;
	l->watch = watch;
	l->leases = leases;
	l->url = strdup(url);
	if (l->url == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	if (pipe(l->wake) != 0) {
		free(l->url);
		return acct__fail(err, SEO_EIO, "internal_error",
				  "could not create a pipe: %s", strerror(errno));
	}
	rc = connect_listen(l, err);
	if (rc != 0)
		goto fail;
	if (pthread_create(&l->thread, NULL, listener_main, l) != 0) {
		rc = acct__fail(err, SEO_EIO, "internal_error",
				"could not start the seo_auth listener");
		goto fail;
	}
	return 0;
fail:
	PQfinish(l->pg);
	close(l->wake[0]);
	close(l->wake[1]);
	free(l->url);
	return rc;
}

void acct__listener_stop(acct__listener *l)
{
	char byte = 1;

	while (write(l->wake[1], &byte, 1) < 0 && errno == EINTR)
		;
	pthread_join(l->thread, NULL);
	close(l->wake[0]);
	close(l->wake[1]);
	PQfinish(l->pg);
	free(l->url);
}
