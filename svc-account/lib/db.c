/*
 * Every SQL statement of the library, the code that runs them (prepared
 * once per connection), and the connection pool of the handler threads.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/pg.h"

static const struct {
	const char *name;
	const char *sql;
} stmts[ACCT__Q_COUNT] = {
	[ACCT_Q_KEY_LOOKUP] = {"key_lookup",
		"SELECT k.workspace_id, k.user_id, u.role FROM api_keys k "
		"JOIN users u ON u.id = k.user_id "
		"WHERE k.id = $1 AND k.revoked_at IS NULL AND u.removed_at IS NULL"},
	[ACCT_Q_KEY_INSERT] = {"key_insert",
		"INSERT INTO api_keys (id, workspace_id, user_id, name, last_four, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6)"},
	/* $3 limits a member to its own keys; NULL for other roles. */
	[ACCT_Q_KEY_REVOKE] = {"key_revoke",
		"UPDATE api_keys SET revoked_at = $4 "
		"WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL "
		"AND ($3::text IS NULL OR user_id = $3) RETURNING user_id, name, last_four"},
	/* A removed user's keys no longer authenticate: not active. */
	[ACCT_Q_KEY_LIST] = {"key_list",
		"SELECT k.id, k.name, k.last_four, k.created_at FROM api_keys k "
		"JOIN users u ON u.id = k.user_id "
		"WHERE k.workspace_id = $1 AND k.revoked_at IS NULL AND u.removed_at IS NULL "
		"AND ($2::text IS NULL OR k.user_id = $2) "
		"ORDER BY k.created_at DESC, k.id DESC"},
	[ACCT_Q_USER_OF_CALLER] = {"user_of_caller",
		"SELECT u.id, u.email, u.role, u.created_at, w.balance FROM users u "
		"JOIN workspaces w ON w.id = u.workspace_id "
		"WHERE u.id = $1 AND u.workspace_id = $2 AND u.removed_at IS NULL"},
	[ACCT_Q_USER_EMAIL] = {"user_email",
		"SELECT email, removed_at IS NOT NULL FROM users "
		"WHERE id = $1 AND workspace_id = $2"},
	[ACCT_Q_USER_INSERT] = {"user_insert",
		"INSERT INTO users (id, workspace_id, email, role, created_at) "
		"VALUES ($1, $2, $3, $4, $5)"},
	[ACCT_Q_USER_REMOVE] = {"user_remove",
		"UPDATE users SET removed_at = coalesce(removed_at, $2) "
		"WHERE id = $1 RETURNING id"},
	[ACCT_Q_NOTIFY] = {"notify",
		"SELECT pg_notify('" ACCT_AUTH_CHANNEL "', $1)"},
	[ACCT_Q_BALANCE] = {"balance",
		"SELECT balance FROM workspaces WHERE id = $1"},
	[ACCT_Q_WORKSPACE_INSERT] = {"workspace_insert",
		"INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)"},
	[ACCT_Q_GRANT] = {"grant",
		"WITH w AS (UPDATE workspaces SET balance = balance + $2 "
		"WHERE id = $1 RETURNING id, balance), "
		"l AS (INSERT INTO ledger (workspace_id, delta, reason, created_at) "
		"SELECT id, $2, 'grant', $3 FROM w) "
		"SELECT balance FROM w"},
	/* Locks in id order everywhere, so that two writers cannot deadlock. */
	[ACCT_Q_LEDGER_LOCK_CHARGES] = {"ledger_lock_charges",
		"SELECT id, workspace_id, credits_used FROM usage "
		"WHERE id = ANY($1::text[]) ORDER BY id COLLATE \"C\" FOR UPDATE"},
	[ACCT_Q_LEDGER_LOCK_WORKSPACES] = {"ledger_lock_workspaces",
		"SELECT id, balance FROM workspaces "
		"WHERE id = ANY($1::text[]) ORDER BY id COLLATE \"C\" FOR UPDATE"},
	[ACCT_Q_LEDGER_INSERT] = {"ledger_insert",
		"INSERT INTO ledger (workspace_id, delta, reason, ref, created_at) "
		"SELECT w, d, r, f, $5 FROM "
		"unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS t(w, d, r, f)"},
	[ACCT_Q_USAGE_INSERT] = {"usage_insert",
		"INSERT INTO usage (id, workspace_id, user_id, key_id, endpoint, domain, "
		"charged, credits_used, created_at) "
		"SELECT i, w, u, k, e, d, c, c, $8 FROM "
		"unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], "
		"$6::text[], $7::bigint[]) AS t(i, w, u, k, e, d, c)"},
	[ACCT_Q_USAGE_REFUND] = {"usage_refund",
		"UPDATE usage SET credits_used = t.c "
		"FROM unnest($1::text[], $2::bigint[]) AS t(i, c) WHERE usage.id = t.i"},
	[ACCT_Q_BALANCE_SET] = {"balance_set",
		"UPDATE workspaces SET balance = t.b "
		"FROM unnest($1::text[], $2::bigint[]) AS t(i, b) WHERE workspaces.id = t.i"},
	[ACCT_Q_USAGE_PAGE] = {"usage_page",
		"SELECT endpoint, credits_used, domain, created_at FROM usage "
		"WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC "
		"LIMIT $2 OFFSET $3"},
	[ACCT_Q_USAGE_COUNT] = {"usage_count",
		"SELECT count(*) FROM usage WHERE workspace_id = $1"},
	[ACCT_Q_PRICING] = {"pricing",
		"SELECT min_credits AS min, price_per_credit::float8 AS price_per_credit FROM price_tiers "
		"ORDER BY min_credits"},
	[ACCT_Q_WEBSITE_LIST] = {"website_list",
		"SELECT id, host, name FROM websites "
		"WHERE workspace_id = $1 AND archived_at IS NULL "
		"ORDER BY lower(name), name, id LIMIT 200"},
	[ACCT_Q_WEBSITE_INSERT] = {"website_insert",
		"INSERT INTO websites (id, workspace_id, host, name, created_at) "
		"VALUES ($1, $2, $3, $4, $5)"},
	[ACCT_Q_WEBSITE_POLICY] = {"website_policy",
		"UPDATE websites SET indexnow_policy = $2 WHERE id = $1 "
		"RETURNING indexnow_policy"},
	/* For pipelines, where a plain PQexec() is not allowed. */
	[ACCT_Q_BEGIN] = {"begin", "BEGIN"},
	[ACCT_Q_COMMIT] = {"commit", "COMMIT"},
};

_Static_assert(ACCT__Q_COUNT <= 64, "the prepared mask holds 64 statements");

int acct__db_fail(acct_err *err, const char *what, const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return acct__fail(err, SEO_EDB, "internal_error", "%s failed: %.*s",
			  what, (int)n, msg);
}

static int result_fail(acct__conn *c, PGresult *r, const char *what,
		       acct_err *err)
{
	const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	int rc = acct__db_fail(err, what, r != NULL ? PQresultErrorMessage(r)
					      : PQerrorMessage(c->pg));

	if (state != NULL && strcmp(state, "23505") == 0)
		return SEO_EEXIST;
	return rc;
}

static void stmt_name(acct__q q, char name[32])
{
	snprintf(name, 32, "acct_%s", stmts[q].name);
}

/* Prepares `q` on `c` unless it already is (or `c` is oneshot). */
static int prepare(acct__conn *c, acct__q q, acct_err *err)
{
	uint64_t bit = UINT64_C(1) << q;
	char name[32];
	PGresult *r;
	int rc = 0;

	if (c->oneshot || (c->prepared & bit) != 0)
		return 0;
	stmt_name(q, name);
	r = PQprepare(c->pg, name, stmts[q].sql, 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = result_fail(c, r, stmts[q].name, err);
	else
		c->prepared |= bit;
	PQclear(r);
	return rc;
}

static int result_ok(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);

	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

int acct__exec(acct__conn *c, acct__q q, int nparams,
	       const char *const *params, PGresult **res, acct_err *err)
{
	char name[32];
	PGresult *r = NULL;
	int rc;

	if (res != NULL)
		*res = NULL;
	rc = prepare(c, q, err);
	if (rc != 0)
		return rc;
	stmt_name(q, name);
	if (c->oneshot)
		r = PQexecParams(c->pg, stmts[q].sql, nparams, NULL, params,
				 NULL, NULL, 0);
	else
		r = PQexecPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
	if (!result_ok(r)) {
		rc = result_fail(c, r, stmts[q].name, err);
		goto out;
	}
	if (res != NULL) {
		*res = r;
		r = NULL;
	}
out:
	PQclear(r);
	return rc;
}

void acct__pipe_init(acct__pipe *p)
{
	memset(p, 0, sizeof(*p));
}

void acct__pipe_add(acct__pipe *p, acct__q q, int nparams,
		    const char *const *params)
{
	if (p->n == ACCT__PIPE_MAX || nparams > ACCT__PIPE_PARAMS) {
		p->overflow = 1;
		return;
	}
	p->st[p->n].q = q;
	p->st[p->n].nparams = nparams;
	for (int i = 0; i < nparams; i++)
		p->st[p->n].params[i] = params[i];
	p->n++;
}

static int pipe_send(acct__conn *c, const acct__pipe *p, int i)
{
	acct__q q = p->st[i].q;
	char name[32];

	if (c->oneshot)
		return PQsendQueryParams(c->pg, stmts[q].sql, p->st[i].nparams,
					 NULL, p->st[i].params, NULL, NULL, 0);
	stmt_name(q, name);
	return PQsendQueryPrepared(c->pg, name, p->st[i].nparams,
				   p->st[i].params, NULL, NULL, 0);
}

/* Reads the results of `sent` statements and the Sync's; 0 when the
 * pipeline ended where it should (whatever each statement's status). */
static int pipe_read(acct__conn *c, acct__pipe *p, int sent)
{
	PGresult *r;

	for (int i = 0; i < sent; i++) {
		p->res[i] = PQgetResult(c->pg);
		if (p->res[i] == NULL)
			return SEO_EDB;
		/* Each statement's results end with a NULL. */
		while ((r = PQgetResult(c->pg)) != NULL)
			PQclear(r);
	}
	r = PQgetResult(c->pg);
	if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
		PQclear(r);
		return SEO_EDB;
	}
	PQclear(r);
	return 0;
}

int acct__pipe_run(acct__conn *c, acct__pipe *p, acct_err *err)
{
	int sent = 0, rc = 0;

	if (p->overflow)
		return acct__fail(err, SEO_EINVAL, "internal_error",
				  "too many statements in one round trip");
	for (int i = 0; i < ACCT__PIPE_MAX; i++) {
		PQclear(p->res[i]);
		p->res[i] = NULL;
	}
	/* PQprepare() waits for its answer, which pipeline mode forbids. */
	for (int i = 0; i < p->n; i++) {
		rc = prepare(c, p->st[i].q, err);
		if (rc != 0)
			return rc;
	}
	if (!PQenterPipelineMode(c->pg))
		return acct__db_fail(err, "pipeline", PQerrorMessage(c->pg));
	while (sent < p->n && pipe_send(c, p, sent))
		sent++;
	/* What was sent is synced and read even after a failed send, so that
	 * the connection leaves pipeline mode idle. */
	if (sent < p->n)
		rc = acct__db_fail(err, stmts[p->st[sent].q].name,
				   PQerrorMessage(c->pg));
	if (!PQpipelineSync(c->pg) || pipe_read(c, p, sent) != 0 ||
	    !PQexitPipelineMode(c->pg))
		return rc != 0 ? rc : acct__db_fail(err, "pipeline",
						    PQerrorMessage(c->pg));
	for (int i = 0; i < sent && rc == 0; i++)
		if (!result_ok(p->res[i]))
			rc = result_fail(c, p->res[i], stmts[p->st[i].q].name,
					 err);
	return rc;
}

void acct__pipe_clear(acct__pipe *p)
{
	for (int i = 0; i < ACCT__PIPE_MAX; i++)
		PQclear(p->res[i]);
	acct__pipe_init(p);
}

static int exec_plain(acct__conn *c, const char *sql, acct_err *err)
{
	PGresult *r = PQexec(c->pg, sql);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = result_fail(c, r, sql, err);
	PQclear(r);
	return rc;
}

int acct__begin(acct__conn *c, acct_err *err)
{
	return exec_plain(c, "BEGIN", err);
}

int acct__commit(acct__conn *c, acct_err *err)
{
	return exec_plain(c, "COMMIT", err);
}

void acct__rollback(acct__conn *c)
{
	PQclear(PQexec(c->pg, "ROLLBACK"));
}

int acct__connect(const char *url, PGconn **out, acct_err *err)
{
	/* The shared connect sets synchronous_commit on: an answer must never
	 * precede the durability of what it reports. */
	err->code = "internal_error";
	return seo_pg_connect(url, 0, out, err->message, sizeof(err->message));
}

int acct__pool_init(acct__pool *p, const char *url, int size)
{
	memset(p, 0, sizeof(*p));
	p->slots = calloc((size_t)size, sizeof(*p->slots));
	p->url = strdup(url);
	if (p->slots == NULL || p->url == NULL) {
		free(p->slots);
		free(p->url);
		return SEO_ENOMEM;
	}
	p->n = size;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->freed, NULL);
	return 0;
}

void acct__pool_destroy(acct__pool *p)
{
	for (int i = 0; i < p->n; i++)
		PQfinish(p->slots[i].pg);
	free(p->slots);
	free(p->url);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->freed);
}

/* Slot fields change under the mutex only, so that acct_db_release() can
 * search the slots while other threads borrow and return. */
static void pool_return(acct__pool *p, acct__conn *c, PGconn *keep)
{
	pthread_mutex_lock(&p->mu);
	c->pg = keep;
	if (keep == NULL)
		c->prepared = 0;
	c->lent = 0;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->mu);
}

int acct__pool_get(acct__pool *p, acct__conn **out, acct_err *err)
{
	acct__conn *c = NULL;
	PGconn *pg;
	int rc;

	pthread_mutex_lock(&p->mu);
	while (c == NULL) {
		for (int i = 0; i < p->n && c == NULL; i++)
			if (!p->slots[i].lent)
				c = &p->slots[i];
		if (c == NULL)
			pthread_cond_wait(&p->freed, &p->mu);
	}
	c->lent = 1;
	pg = c->pg;
	pthread_mutex_unlock(&p->mu);

	if (pg != NULL && PQstatus(pg) == CONNECTION_OK) {
		*out = c;
		return 0;
	}
	PQfinish(pg);
	rc = acct__connect(p->url, &pg, err);
	if (rc != 0) {
		pool_return(p, c, NULL);
		return rc;
	}
	pthread_mutex_lock(&p->mu);
	c->pg = pg;
	c->prepared = 0;
	pthread_mutex_unlock(&p->mu);
	*out = c;
	return 0;
}

void acct__pool_put(acct__pool *p, acct__conn *c)
{
	PGconn *pg = c->pg;

	if (PQstatus(pg) != CONNECTION_OK ||
	    PQtransactionStatus(pg) != PQTRANS_IDLE) {
		PQfinish(pg);
		pg = NULL;
	}
	pool_return(p, c, pg);
}

/* A statement that failed because the server went away (restart, idle
 * timeout, terminated backend) ran nowhere: worth one more try. */
static int dead(const acct__conn *c, int rc)
{
	return rc == SEO_EDB && PQstatus(c->pg) != CONNECTION_OK;
}

int acct__pool_query(acct__pool *p, acct__q q, int nparams,
		     const char *const *params, PGresult **res, acct_err *err)
{
	acct__conn *c;
	int rc, again;

	for (int attempt = 0;; attempt++) {
		rc = acct__pool_get(p, &c, err);
		if (rc != 0)
			return rc;
		rc = acct__exec(c, q, nparams, params, res, err);
		again = attempt == 0 && dead(c, rc);
		acct__pool_put(p, c);
		if (!again)
			return rc;
	}
}

int acct__pool_begin(acct__pool *p, acct__conn **out, acct_err *err)
{
	int rc, again;

	for (int attempt = 0;; attempt++) {
		rc = acct__pool_get(p, out, err);
		if (rc != 0)
			return rc;
		rc = acct__begin(*out, err);
		if (rc == 0)
			return 0;
		again = attempt == 0 && dead(*out, rc);
		acct__pool_put(p, *out);
		if (!again)
			return rc;
	}
}

int acct_db_acquire(acct_service *a, PGconn **out, acct_err *err)
{
	acct__conn *c;
	int rc = acct__pool_get(&a->pool, &c, err);

	*out = rc == 0 ? c->pg : NULL;
	return rc;
}

void acct_db_release(acct_service *a, PGconn *db)
{
	acct__conn *c = NULL;

	pthread_mutex_lock(&a->pool.mu);
	for (int i = 0; i < a->pool.n && c == NULL; i++)
		if (a->pool.slots[i].lent && a->pool.slots[i].pg == db)
			c = &a->pool.slots[i];
	pthread_mutex_unlock(&a->pool.mu);
	if (c != NULL)
		acct__pool_put(&a->pool, c);
}
