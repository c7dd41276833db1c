/*
 * The open credit leases of each workspace, in memory (acct_int.h, "credit
 * leases"): what every balance answered adds, what a debit refused for its
 * balance recalls and waits for, and who hears of a balance changed
 * outside the leases.
 */
#include "acct_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seo/errors.h"
#include "seo/util.h"

typedef struct entry {
	seo_hnode node;
	int64_t seq;
	int64_t count;
	int64_t unused;
	int64_t recalled_until; /* seo_mono_ms() */
} entry;

#define BUCKETS 256

int acct__leases_init(acct__leases *r, acct__watch *watch, acct_err *err)
{
	pthread_condattr_t attr;

	memset(r, 0, sizeof(*r));
	if (seo_hmap_init(&r->map, BUCKETS) != 0)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	r->watch = watch;
	pthread_rwlock_init(&r->commit, NULL);
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->changed, &attr);
	pthread_condattr_destroy(&attr);
	return 0;
}

void acct__leases_destroy(acct__leases *r)
{
	seo_hmap_destroy(&r->map);
	pthread_rwlock_destroy(&r->commit);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->changed);
}

/* Under r->mu: the entry of `ws`, created when `add` (NULL when out of
 * memory or absent). */
static entry *find(acct__leases *r, const char *ws, int add)
{
	entry *e = (entry *)seo_hmap_get(&r->map, ws);

	if (e != NULL || !add || strlen(ws) >= sizeof(e->node.key))
		return e;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	memcpy(e->node.key, ws, strlen(ws) + 1);
	e->seq = -1;
	seo_hmap_put(&r->map, &e->node);
	return e;
}

void acct__leases_set(acct__leases *r, const char *workspace_id, int64_t seq,
		      int64_t count, int64_t unused)
{
	entry *e;

	pthread_mutex_lock(&r->mu);
	e = find(r, workspace_id, 1);
	if (e != NULL && seq > e->seq) {
		e->seq = seq;
		e->count = count;
		e->unused = unused;
	}
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->mu);
}

int acct__leases_load(acct__leases *r, PGconn *pg, const char *workspace_id,
		      acct_err *err)
{
	PGresult *res = PQexecParams(pg, acct__stmts.rows[ACCT_Q_LEASE_STATE].sql,
				     1, NULL, &workspace_id, NULL, NULL, 0);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = acct__db_fail(err, "reading the open leases",
				   PQerrorMessage(pg));
	for (int i = 0; rc == 0 && i < PQntuples(res); i++)
		acct__leases_set(r, PQgetvalue(res, i, 0),
				 strtoll(PQgetvalue(res, i, 1), NULL, 10),
				 strtoll(PQgetvalue(res, i, 2), NULL, 10),
				 strtoll(PQgetvalue(res, i, 3), NULL, 10));
	PQclear(res);
	return rc;
}

/* The workspace's state: *count, *unused, and 1 while recalled. */
static int state(acct__leases *r, const char *ws, int64_t *count,
		 int64_t *unused)
{
	entry *e;
	int recalled;

	pthread_mutex_lock(&r->mu);
	e = find(r, ws, 0);
	*count = e != NULL ? e->count : 0;
	*unused = e != NULL ? e->unused : 0;
	recalled = e != NULL && e->recalled_until > seo_mono_ms();
	pthread_mutex_unlock(&r->mu);
	return recalled;
}

int64_t acct__leases_unused(acct__leases *r, const char *workspace_id)
{
	int64_t count, unused;

	state(r, workspace_id, &count, &unused);
	return unused;
}

int64_t acct__leases_unused_settled(acct__leases *r, const char *workspace_id)
{
	int64_t v;

	pthread_rwlock_rdlock(&r->commit);
	v = acct__leases_unused(r, workspace_id);
	pthread_rwlock_unlock(&r->commit);
	return v;
}

int64_t acct__leases_count(acct__leases *r, const char *workspace_id)
{
	int64_t count, unused;

	state(r, workspace_id, &count, &unused);
	return count;
}

int acct__leases_recalled(acct__leases *r, const char *workspace_id)
{
	int64_t count, unused;

	return state(r, workspace_id, &count, &unused);
}

void acct__leases_balance_changed(acct__leases *r, const char *workspace_id,
				  int wait)
{
	if (acct__leases_count(r, workspace_id) > 0)
		acct__watch_lease(r->watch, ACCT_WATCH_BALANCE, workspace_id,
				  wait);
}

void acct__leases_mark_recalled(acct__leases *r, const char *workspace_id)
{
	entry *e;

	pthread_mutex_lock(&r->mu);
	e = find(r, workspace_id, 1);
	if (e != NULL)
		e->recalled_until = seo_mono_ms() + ACCT_LEASE_RECALL_MS;
	pthread_mutex_unlock(&r->mu);
	/* Outside r->mu: the watch has its own lock. */
	acct__watch_lease(r->watch, ACCT_WATCH_RECALL, workspace_id, 0);
}

int acct__leases_recall(acct__leases *r, const char *workspace_id,
			int64_t wait_ms)
{
	struct timespec until;
	entry *e;
	int none;

	acct__deadline_in(&until, wait_ms > 0 ? wait_ms : 0);
	acct__leases_mark_recalled(r, workspace_id);
	pthread_mutex_lock(&r->mu);
	e = find(r, workspace_id, 0);
	while (e != NULL && e->unused > 0 && wait_ms > 0)
		if (pthread_cond_timedwait(&r->changed, &r->mu, &until) ==
		    ETIMEDOUT)
			break;
	none = e == NULL || e->unused <= 0;
	pthread_mutex_unlock(&r->mu);
	return none;
}

typedef struct open_ids {
	char (*ids)[ACCT_HASH_LEN];
	size_t n, cap;
} open_ids;

/* seo_hmap_drop() as a walk: keeps every entry, notes the open ones. */
static int note_open(seo_hnode *n, void *ud)
{
	const entry *e = (const entry *)n;
	open_ids *o = ud;

	if (e->count > 0 && o->n < o->cap)
		memcpy(o->ids[o->n++], n->key, ACCT_HASH_LEN);
	return 0;
}

int acct__leases_reload(acct__leases *r, PGconn *pg, acct_err *err)
{
	open_ids o = {0};
	int rc = 0;

	pthread_mutex_lock(&r->mu);
	o.cap = r->map.count;
	o.ids = calloc(o.cap + 1, sizeof(*o.ids));
	if (o.ids != NULL)
		seo_hmap_drop(&r->map, note_open, &o);
	pthread_mutex_unlock(&r->mu);
	if (o.ids == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	for (size_t i = 0; rc == 0 && i < o.n; i++)
		rc = acct__leases_load(r, pg, o.ids[i], err);
	if (rc == 0)
		rc = acct__leases_load(r, pg, NULL, err);
	free(o.ids);
	return rc;
}
