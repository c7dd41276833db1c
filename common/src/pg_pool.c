/*
 * The connection pool (seo/pg_pool.h): slots lent under one mutex,
 * connecting outside it, waits bounded on the monotonic clock.
 */
#include "seo/pg_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seo/errors.h"
#include "seo/log.h"

struct seo_pg_pool {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	seo_pg_conn *slots;
	int n;
	int wait_ms;
	int connect_timeout_s;
	int async_commit;
	char *url;
	const seo_pg_set *migrations;
	char *migrations_dir;
	atomic_int migrated;
	atomic_int unreachable; /* the latest connection attempt failed */
};

int seo_pg_pool_new(const seo_pg_pool_opt *opt, seo_pg_pool **out)
{
	seo_pg_pool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	*out = NULL;
	if (p == NULL)
		return SEO_ENOMEM;
	p->n = opt->size > 0 ? opt->size : 1;
	p->slots = calloc((size_t)p->n, sizeof(*p->slots));
	p->url = strdup(opt->url);
	p->migrations_dir = opt->migrations_dir != NULL ? strdup(opt->migrations_dir)
							: NULL;
	if (p->slots == NULL || p->url == NULL ||
	    (opt->migrations_dir != NULL && p->migrations_dir == NULL)) {
		free(p->slots);
		free(p->url);
		free(p->migrations_dir);
		free(p);
		return SEO_ENOMEM;
	}
	for (int i = 0; i < p->n; i++)
		p->slots[i].stmts = opt->stmts;
	p->wait_ms = opt->wait_ms > 0 ? opt->wait_ms : SEO_PG_POOL_WAIT_MS;
	p->connect_timeout_s = opt->connect_timeout_s;
	p->async_commit = opt->async_commit;
	p->migrations = opt->migrations;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->freed, &ca);
	pthread_condattr_destroy(&ca);
	*out = p;
	return 0;
}

void seo_pg_pool_free(seo_pg_pool *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->n; i++)
		PQfinish(p->slots[i].pg);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->freed);
	free(p->slots);
	free(p->url);
	free(p->migrations_dir);
	free(p);
}

/* Applies the migrations on `pg` unless this process already did. */
static int migrate(seo_pg_pool *p, PGconn *pg, char *err, size_t err_len)
{
	int applied, rc;

	if (p->migrations == NULL || atomic_load(&p->migrated))
		return 0;
	if (p->migrations_dir == NULL) {
		snprintf(err, err_len, "%s migrations not found; set %s",
			 p->migrations->name, seo_pg_migrations_var(p->migrations));
		return SEO_ENOTFOUND;
	}
	rc = seo_pg_migrate(pg, p->migrations, p->migrations_dir, &applied, err,
			    err_len);
	if (rc != 0)
		return SEO_EDB;
	if (applied > 0)
		log_info("applied %d %s migrations from %s", applied,
			 p->migrations->name, p->migrations_dir);
	atomic_store(&p->migrated, 1);
	return 0;
}

static int open_conn(seo_pg_pool *p, PGconn **out, char *err, size_t err_len)
{
	PGresult *r;
	int rc = seo_pg_connect(p->url, p->connect_timeout_s, out, err, err_len);

	atomic_store(&p->unreachable, rc != 0);
	if (rc == 0)
		rc = migrate(p, *out, err, err_len);
	if (rc == 0 && p->async_commit) {
		r = PQexec(*out, "SET synchronous_commit TO off");
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			snprintf(err, err_len, "set synchronous_commit failed: %.*s",
				 (int)strcspn(PQerrorMessage(*out), "\n"),
				 PQerrorMessage(*out));
			rc = SEO_EDB;
		}
		PQclear(r);
	}
	if (rc != 0) {
		PQfinish(*out);
		*out = NULL;
	}
	return rc;
}

/* Slot fields change under the mutex only, so that seo_pg_pool_put_pg()
 * can search the slots while other threads borrow and return. */
static void give_back(seo_pg_pool *p, seo_pg_conn *c, PGconn *keep)
{
	pthread_mutex_lock(&p->mu);
	c->pg = keep;
	if (keep == NULL)
		c->prepared = 0;
	c->lent = 0;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->mu);
}

/* The first free slot, lent to the caller, waiting until `deadline`;
 * NULL when none was freed in time. Called with the mutex held. */
static seo_pg_conn *take_slot(seo_pg_pool *p, const struct timespec *deadline)
{
	for (;;) {
		for (int i = 0; i < p->n; i++)
			if (!p->slots[i].lent) {
				p->slots[i].lent = 1;
				return &p->slots[i];
			}
		if (pthread_cond_timedwait(&p->freed, &p->mu, deadline) == ETIMEDOUT)
			return NULL;
	}
}

int seo_pg_pool_get(seo_pg_pool *p, seo_pg_conn **out, char *err,
		    size_t err_len)
{
	struct timespec deadline;
	seo_pg_conn *c;
	PGconn *pg;
	int rc;

	*out = NULL;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += p->wait_ms / 1000;
	deadline.tv_nsec += (long)(p->wait_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	c = take_slot(p, &deadline);
	pg = c != NULL ? c->pg : NULL;
	pthread_mutex_unlock(&p->mu);
	if (c == NULL) {
		snprintf(err, err_len, "no database connection free within %d ms",
			 p->wait_ms);
		return SEO_ETIMEDOUT;
	}
	if (pg != NULL && PQstatus(pg) == CONNECTION_OK) {
		*out = c;
		return 0;
	}
	/* Outside the lock: connecting may take up to its timeout. */
	PQfinish(pg);
	rc = open_conn(p, &pg, err, err_len);
	if (rc != 0) {
		give_back(p, c, NULL);
		return rc;
	}
	pthread_mutex_lock(&p->mu);
	c->pg = pg;
	c->prepared = 0;
	pthread_mutex_unlock(&p->mu);
	*out = c;
	return 0;
}

void seo_pg_pool_put(seo_pg_pool *p, seo_pg_conn *c)
{
	PGconn *pg = c->pg;

	if (PQstatus(pg) != CONNECTION_OK ||
	    PQtransactionStatus(pg) != PQTRANS_IDLE) {
		PQfinish(pg);
		pg = NULL;
	}
	give_back(p, c, pg);
}

void seo_pg_pool_put_pg(seo_pg_pool *p, PGconn *pg)
{
	seo_pg_conn *c = NULL;

	pthread_mutex_lock(&p->mu);
	for (int i = 0; i < p->n && c == NULL; i++)
		if (p->slots[i].lent && p->slots[i].pg == pg)
			c = &p->slots[i];
	pthread_mutex_unlock(&p->mu);
	if (c != NULL)
		seo_pg_pool_put(p, c);
}

int seo_pg_pool_reachable(seo_pg_pool *p)
{
	return !atomic_load(&p->unreachable);
}

int seo_pg_pool_query(seo_pg_pool *p, int q, int nparams,
		      const char *const *params, PGresult **res, char *err,
		      size_t err_len)
{
	seo_pg_conn *c;
	int rc, again;

	for (int attempt = 0;; attempt++) {
		rc = seo_pg_pool_get(p, &c, err, err_len);
		if (rc != 0)
			return rc;
		rc = seo_pg_exec(c, q, nparams, params, res, err, err_len);
		again = attempt == 0 && seo_pg_dead(c, rc);
		seo_pg_pool_put(p, c);
		if (!again)
			return rc;
	}
}

int seo_pg_pool_begin(seo_pg_pool *p, seo_pg_conn **out, char *err,
		      size_t err_len)
{
	int rc, again;

	for (int attempt = 0;; attempt++) {
		rc = seo_pg_pool_get(p, out, err, err_len);
		if (rc != 0)
			return rc;
		rc = seo_pg_begin(*out, err, err_len);
		if (rc == 0)
			return 0;
		again = attempt == 0 && seo_pg_dead(*out, rc);
		seo_pg_pool_put(p, *out);
		*out = NULL;
		if (!again)
			return rc;
	}
}
