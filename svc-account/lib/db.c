/*
 * Every SQL statement of the library, as the statement table the shared
 * pool prepares on each connection, and the shared runner's failures as
 * acct_err.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/pg.h"
#include "seo/pg_pool.h"

/* A constant of acct_int.h written into a statement. */
#define SQL_NUM_(x) #x
#define SQL_NUM(x) SQL_NUM_(x)
/* What the open leases of workspace `ws` (an SQL expression) hold
 * unused: still the customer's, so every balance shown adds it. */
#define SQL_LEASES_UNUSED(ws)                                                \
	"(SELECT coalesce(sum(granted - used), 0) FROM credit_leases "        \
	"WHERE workspace_id = " ws " AND closed_at IS NULL)"

static const seo_pg_stmt stmts[ACCT__Q_COUNT] = {
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
	/* Creations in one workspace take turns, so that the count below
	 * sees every key committed before it (READ COMMITTED takes a new
	 * snapshot per statement). */
	[ACCT_Q_KEY_LOCK] = {"key_lock",
		"SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || $1, 0))"},
	[ACCT_Q_KEY_ACTIVE] = {"key_active",
		"SELECT count(*) FROM api_keys k JOIN users u ON u.id = k.user_id "
		"WHERE k.workspace_id = $1 AND k.revoked_at IS NULL AND u.removed_at IS NULL"},
	[ACCT_Q_USER_OF_CALLER] = {"user_of_caller",
		"SELECT id, email, role, created_at FROM users "
		"WHERE id = $1 AND workspace_id = $2 AND removed_at IS NULL"},
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
	/* The balance a customer is shown, with its open leases whichever
	 * replica granted them: one snapshot, so a top-up committed anywhere
	 * moves credits within it, never out of it (test_acct_lease's
	 * replica test). */
	[ACCT_Q_BALANCE] = {"balance",
		"SELECT balance + " SQL_LEASES_UNUSED("w.id") " FROM workspaces w "
		"WHERE id = $1"},
	[ACCT_Q_WORKSPACE_INSERT] = {"workspace_insert",
		"INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)"},
	/* The balance answered counts what open leases hold; the holders
	 * hear of the grant. */
	[ACCT_Q_GRANT] = {"grant",
		"WITH w AS (UPDATE workspaces SET balance = balance + $2 "
		"WHERE id = $1 RETURNING id, balance), "
		"l AS (INSERT INTO ledger (workspace_id, delta, reason, created_at) "
		"SELECT id, $2, 'grant', $3 FROM w) "
		"SELECT balance + " SQL_LEASES_UNUSED("w.id") ", "
		"pg_notify('" ACCT_AUTH_CHANNEL "', '" ACCT_AUTH_BALANCE_PREFIX "' || id) FROM w"},
	/* Locks in id order everywhere, so that two writers cannot deadlock. */
	[ACCT_Q_LEDGER_LOCK_CHARGES] = {"ledger_lock_charges",
		"SELECT id, workspace_id, credits_used, outcome IS NOT NULL FROM usage "
		"WHERE id = ANY($1::text[]) ORDER BY id COLLATE \"C\" FOR UPDATE"},
	/* Debits already made under the idempotency keys of a batch: the
	 * rows with a settle time, those of usage_request (migration 007).
	 * A leased call's row has none: its report was applied once by its
	 * stream, and no debit is its retry. */
	[ACCT_Q_LEDGER_BY_REQUEST] = {"ledger_by_request",
		"SELECT request_id, id, workspace_id, charged FROM usage "
		"WHERE request_id = ANY($1::text[]) AND settle_by IS NOT NULL"},
	/* The batch's statement timeout (ms), for its transaction only. */
	[ACCT_Q_LEDGER_TIMEOUT] = {"ledger_timeout",
		"SELECT set_config('statement_timeout', $1, true)"},
	/* A batch that gives credits back waits for the disk at COMMIT. */
	[ACCT_Q_LEDGER_DURABLE] = {"ledger_durable",
		"SELECT set_config('synchronous_commit', 'on', true)"},
	[ACCT_Q_LEDGER_LOCK_WORKSPACES] = {"ledger_lock_workspaces",
		"SELECT id, balance FROM workspaces "
		"WHERE id = ANY($1::text[]) ORDER BY id COLLATE \"C\" FOR UPDATE"},
	[ACCT_Q_LEDGER_INSERT] = {"ledger_insert",
		"INSERT INTO ledger (workspace_id, delta, reason, ref, created_at) "
		"SELECT w, d, r, f, $5 FROM "
		"unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS t(w, d, r, f)"},
	/* A row without a key (r) is settled at once; one refused at 0 (c)
	 * has nothing to settle. */
	[ACCT_Q_USAGE_INSERT] = {"usage_insert",
		"INSERT INTO usage (id, workspace_id, user_id, key_id, endpoint, domain, "
		"charged, credits_used, request_id, settle_by, outcome, created_at) "
		"SELECT i, w, u, k, e, d, c, c, r, $10 + s, "
		"CASE WHEN r IS NULL OR c = 0 THEN 'earned' END, $10 FROM "
		"unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], "
		"$6::text[], $7::bigint[], $8::text[], $9::bigint[]) AS t(i, w, u, k, e, d, c, r, s)"},
	[ACCT_Q_USAGE_REFUND] = {"usage_refund",
		"UPDATE usage SET credits_used = t.c, outcome = coalesce(t.o, usage.outcome) "
		"FROM unnest($1::text[], $2::bigint[], $3::text[]) AS t(i, c, o) "
		"WHERE usage.id = t.i"},
	[ACCT_Q_BALANCE_SET] = {"balance_set",
		"UPDATE workspaces SET balance = t.b "
		"FROM unnest($1::text[], $2::bigint[]) AS t(i, b) WHERE workspaces.id = t.i"},
	/* A page of per-call rows and batched calls (migration 008) merged,
	 * newest first. Of the batches only those that may hold one of the
	 * k = limit + offset newest calls are read: the newest ones holding
	 * k calls between them (at most k batches), and every batch that
	 * ends after the earliest call of those (none of the k newest can
	 * be older than it). */
	[ACCT_Q_USAGE_PAGE] = {"usage_page",
		"WITH k AS (SELECT $2::bigint + $3::bigint AS k), "
		"r AS (SELECT endpoint, credits_used, domain, created_at, id FROM usage "
		"WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC "
		"LIMIT (SELECT k FROM k)), "
		"s AS (SELECT first_at, sum(n_calls) OVER (ORDER BY last_at DESC, id DESC) "
		"- n_calls AS before FROM (SELECT id, first_at, last_at, n_calls "
		"FROM usage_batches WHERE workspace_id = $1 "
		"ORDER BY last_at DESC, id DESC LIMIT (SELECT k FROM k)) t), "
		"m AS (SELECT min(first_at) AS m FROM s WHERE before < (SELECT k FROM k)), "
		"c AS (SELECT x.endpoint, x.credits_used, x.domain, x.created_at, "
		"b.id || '.' || lpad(x.o::text, 4, '0') AS id FROM usage_batches b, "
		"usage_batch_calls(b.calls, b.calls_compact, b.first_at) AS x "
		"WHERE b.workspace_id = $1 AND b.last_at >= (SELECT m FROM m)) "
		"SELECT endpoint, credits_used, domain, created_at FROM "
		"(SELECT * FROM r UNION ALL SELECT * FROM c) u "
		"ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"},
	[ACCT_Q_USAGE_COUNT] = {"usage_count",
		"SELECT (SELECT count(*) FROM usage WHERE workspace_id = $1) + "
		"(SELECT coalesce(sum(n_calls), 0) FROM usage_batches WHERE workspace_id = $1)"},
	[ACCT_Q_PRICING] = {"pricing",
		"SELECT min_credits AS min, price_per_credit::float8 AS price_per_credit FROM price_tiers "
		"ORDER BY min_credits"},
	[ACCT_Q_WEBSITE_LIST] = {"website_list",
		"SELECT id, host, name FROM websites "
		"WHERE workspace_id = $1 AND archived_at IS NULL "
		"ORDER BY lower(name), name, id LIMIT 200"},
	[ACCT_Q_SITE_LIST] = {"site_list",
		"SELECT id, host, name, indexnow_policy FROM websites "
		"WHERE workspace_id = $1 AND archived_at IS NULL ORDER BY id"},
	[ACCT_Q_WEBSITE_INSERT] = {"website_insert",
		"INSERT INTO websites (id, workspace_id, host, name, created_at) "
		"VALUES ($1, $2, $3, $4, $5)"},
	[ACCT_Q_WEBSITE_POLICY] = {"website_policy",
		"UPDATE websites SET indexnow_policy = $2 WHERE id = $1 "
		"RETURNING indexnow_policy"},
	/* The reconcile job (reconcile.c): open charges past $1, in id order. */
	[ACCT_Q_RECONCILE_LOCK] = {"reconcile_lock",
		"SELECT id FROM usage WHERE outcome IS NULL AND settle_by < $1 "
		"ORDER BY id COLLATE \"C\" LIMIT $2 FOR UPDATE"},
	[ACCT_Q_RECONCILE_LOCK_WORKSPACES] = {"reconcile_lock_workspaces",
		"SELECT id FROM workspaces WHERE id IN "
		"(SELECT workspace_id FROM usage WHERE id = ANY($1::text[])) "
		"ORDER BY id COLLATE \"C\" FOR UPDATE"},
	/* Every statement of a WITH sees the rows as they were: g holds what
	 * each charge still costs, given back to its workspace. */
	[ACCT_Q_RECONCILE_REFUND] = {"reconcile_refund",
		"WITH g AS (SELECT id, workspace_id, credits_used AS give FROM usage "
		"WHERE id = ANY($1::text[])), "
		"u AS (UPDATE usage SET credits_used = 0, outcome = 'refunded' "
		"FROM g WHERE usage.id = g.id RETURNING usage.id), "
		"l AS (INSERT INTO ledger (workspace_id, delta, reason, ref, created_at) "
		"SELECT workspace_id, give, 'refund', id, $2 FROM g WHERE give > 0), "
		"b AS (UPDATE workspaces w SET balance = w.balance + s.give FROM "
		"(SELECT workspace_id, sum(give) AS give FROM g GROUP BY workspace_id) s "
		"WHERE w.id = s.workspace_id RETURNING w.id) "
		"SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM "
		"(SELECT pg_notify('" ACCT_AUTH_CHANNEL "', '" ACCT_AUTH_BALANCE_PREFIX "' || id) FROM b) n)"},
	/* ---- credit leases (lease.c) ---- */
	/* A batch's settings, for its transaction only: the statement
	 * timeout (ms, $1); synchronous_commit ($2: off, as debits, unless it
	 * gives credits back); and generic plans, made once a connection:
	 * given a single workspace, the planner found a custom plan of its
	 * statements on arrays cheaper every time, and planned three of them
	 * at every batch (a seventh of the backend's CPU for a report of
	 * 1000 calls). */
	[ACCT_Q_LEASE_SETTINGS] = {"lease_settings",
		"SELECT set_config('statement_timeout', $1, true), "
		"set_config('synchronous_commit', $2, true), "
		"set_config('plan_cache_mode', 'force_generic_plan', true)"},
	/* Of a batch (LeaseBatch), in one statement each: arrays first, one
	 * element per report, then the scalars. The workspaces are locked with
	 * ledger_lock_workspaces, in id order as everywhere; their leases are
	 * read without a lock of their own: every writer of a lease (a batch,
	 * the expiry) holds its workspace's row lock, and a lock per lease
	 * cost a WAL record per report. Prepared, each goes to a generic plan
	 * that takes an array for 10 elements, and a join of unnest() with a
	 * table of a few thousand rows would hash the table whole at every
	 * report: the tables are reached by index instead, a LATERAL query
	 * per element (OFFSET 0 keeps it from being merged into a join), an
	 * UPDATE's rows named by = ANY as well (test_acct_lease_plans). */
	[ACCT_Q_LEASE_MINE] = {"lease_mine",
		"SELECT t.w, l.id, l.granted, l.used FROM unnest($1::text[]) AS t(w) "
		"CROSS JOIN LATERAL (SELECT id, granted, used FROM credit_leases "
		"WHERE holder = $2 AND workspace_id = t.w AND closed_at IS NULL OFFSET 0) l"},
	/* The last call of each report's stream already written. */
	[ACCT_Q_LEASE_STREAM] = {"lease_stream",
		"SELECT t.w, s.reported_seq FROM unnest($1::text[], $2::text[]) AS t(w, n) "
		"CROSS JOIN LATERAL (SELECT reported_seq FROM lease_streams "
		"WHERE workspace_id = t.w AND holder = $3 AND stream = t.n OFFSET 0) s"},
	/* The reports' new calls, a batch per report and key (migrations 008,
	 * 010); $9, their text, arrives as a binary text[] (lease.c). */
	[ACCT_Q_LEASE_USAGE_BATCHES] = {"lease_usage_batches",
		"INSERT INTO usage_batches (id, workspace_id, user_id, key_id, first_at, "
		"last_at, n_calls, credits_used, unclaimed, calls, calls_compact) "
		"SELECT i, w, u, k, f, l, n, c, n, '[]', j FROM unnest($1::text[], $2::text[], "
		"$3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::integer[], "
		"$8::bigint[], $9::text[]) AS t(i, w, u, k, f, l, n, c, j)"},
	[ACCT_Q_LEASE_OTHERS] = {"lease_others",
		"SELECT t.w, o.n, o.s FROM unnest($1::text[]) AS t(w) "
		"CROSS JOIN LATERAL (SELECT count(*) AS n, sum(granted - used) AS s "
		"FROM credit_leases WHERE workspace_id = t.w AND holder <> $2 "
		"AND closed_at IS NULL) o WHERE o.n > 0"},
	/* Numbers only grow: a report's stream is set only when it wrote
	 * calls numbered after the last. updated_at (indexed) moves once a
	 * minute: the other updates are heap-only (migration 009). */
	[ACCT_Q_LEASE_STREAM_SET] = {"lease_stream_set",
		"INSERT INTO lease_streams AS s (workspace_id, holder, stream, "
		"reported_seq, updated_at) SELECT w, $5, n, q, $4 FROM "
		"unnest($1::text[], $2::text[], $3::bigint[]) AS t(w, n, q) "
		"ON CONFLICT (workspace_id, holder, stream) DO UPDATE SET "
		"reported_seq = EXCLUDED.reported_seq, updated_at = CASE WHEN "
		"s.updated_at < EXCLUDED.updated_at - " SQL_NUM(ACCT_LEASE_STREAM_RENEW_MS)
		" THEN EXCLUDED.updated_at ELSE s.updated_at END"},
	[ACCT_Q_LEASE_STREAMS_FORGET] = {"lease_streams_forget",
		"DELETE FROM lease_streams WHERE updated_at < $1"},
	[ACCT_Q_LEASE_INSERT] = {"lease_insert",
		"INSERT INTO credit_leases (id, workspace_id, holder, granted, used, "
		"created_at, renewed_at, reported_at) SELECT i, w, $5, g, 0, $4, $4, $4 "
		"FROM unnest($1::text[], $2::text[], $3::bigint[]) AS t(i, w, g)"},
	/* c: the lease's closed_at, NULL while it stays open. reported_at is
	 * the report's time; renewed_at (indexed) trails it, moved only once
	 * ACCT_LEASE_RENEW_MS old: the other updates are heap-only
	 * (migration 009). */
	[ACCT_Q_LEASE_UPDATE] = {"lease_update",
		"UPDATE credit_leases l SET granted = t.g, used = t.u, reported_at = $5, "
		"renewed_at = CASE WHEN l.renewed_at < $5::bigint - "
		SQL_NUM(ACCT_LEASE_RENEW_MS) " THEN $5 ELSE l.renewed_at END, "
		"closed_at = t.c FROM unnest($1::text[], $2::bigint[], $3::bigint[], "
		"$4::bigint[]) AS t(i, g, u, c) WHERE l.id = t.i AND l.id = ANY($1::text[])"},
	/* Leases closed: every replica reads the workspaces' leases again (a
	 * recall may wait for a close elsewhere). */
	[ACCT_Q_LEASE_NOTIFY] = {"lease_notify",
		"SELECT pg_notify('" ACCT_AUTH_CHANNEL "', '" ACCT_AUTH_LEASE_PREFIX "' || w) "
		"FROM unnest($1::text[]) AS t(w)"},
	[ACCT_Q_LEASE_WS_SET] = {"lease_ws_set",
		"UPDATE workspaces w SET balance = t.b, lease_seq = w.lease_seq + 1 "
		"FROM unnest($1::text[], $2::bigint[]) AS t(i, b) WHERE w.id = t.i "
		"AND w.id = ANY($1::text[]) RETURNING w.id, w.lease_seq"},
	/* The open leases of one workspace ($1), or of every workspace that
	 * has some (NULL): id, lease_seq, count, unused. */
	[ACCT_Q_LEASE_STATE] = {"lease_state",
		"SELECT w.id, w.lease_seq, count(l.id), coalesce(sum(l.granted - l.used), 0) "
		"FROM workspaces w LEFT JOIN credit_leases l "
		"ON l.workspace_id = w.id AND l.closed_at IS NULL "
		"WHERE w.id = $1 OR ($1::text IS NULL AND w.id IN "
		"(SELECT workspace_id FROM credit_leases WHERE closed_at IS NULL)) "
		"GROUP BY w.id, w.lease_seq"},
	/* The expiry (reconcile job): workspaces first, in id order. A
	 * lease's last report is reported_at (renewed_at, indexed, is never
	 * later; a lease written before migration 009 has only renewed_at). */
	[ACCT_Q_LEASE_EXPIRE_LOCK] = {"lease_expire_lock",
		"SELECT id FROM workspaces WHERE id IN (SELECT workspace_id FROM credit_leases "
		"WHERE closed_at IS NULL AND renewed_at < $1 AND "
		"greatest(renewed_at, reported_at) < $1) "
		"ORDER BY id COLLATE \"C\" LIMIT $2 FOR UPDATE"},
	/* Closes them ($2 now, $3 the cutoff) as their holder would:
	 * granted - used back, one ledger row each; every process keeping
	 * leases hears of it. */
	[ACCT_Q_LEASE_EXPIRE] = {"lease_expire",
		"WITH g AS (SELECT id, workspace_id, granted - used AS give FROM credit_leases "
		"WHERE workspace_id = ANY($1::text[]) AND closed_at IS NULL AND renewed_at < $3 "
		"AND greatest(renewed_at, reported_at) < $3 FOR UPDATE), "
		"c AS (UPDATE credit_leases l SET closed_at = $2 FROM g WHERE l.id = g.id "
		"RETURNING l.id), "
		"l AS (INSERT INTO ledger (workspace_id, delta, reason, ref, created_at) "
		"SELECT workspace_id, give, 'lease', id, $2 FROM g WHERE give > 0), "
		"b AS (UPDATE workspaces w SET balance = w.balance + s.give, "
		"lease_seq = w.lease_seq + 1 FROM "
		"(SELECT workspace_id, sum(give) AS give FROM g GROUP BY workspace_id) s "
		"WHERE w.id = s.workspace_id RETURNING w.id) "
		"SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM "
		"(SELECT pg_notify('" ACCT_AUTH_CHANNEL "', '" ACCT_AUTH_LEASE_PREFIX "' || id) FROM b) n)"},
	[ACCT_Q_PING] = {"ping", "SELECT 1"},
	/* For pipelines, where a plain PQexec() is not allowed. */
	[ACCT_Q_BEGIN] = {"begin", "BEGIN"},
	[ACCT_Q_COMMIT] = {"commit", "COMMIT"},
};

_Static_assert(ACCT__Q_COUNT <= SEO_PG_STMTS_MAX, "one connection prepares 64 at most");

const seo_pg_stmts acct__stmts = {"acct_", stmts, ACCT__Q_COUNT};

int acct__db_fail(acct_err *err, const char *what, const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return acct__fail(err, SEO_EDB, "internal_error", "%s failed: %.*s",
			  what, (int)n, msg);
}

/* The code of a failure the shared runner described in err->message: a
 * database that is away or a statement past its timeout is unavailable
 * (the client may retry; the detail is logged, never shown), anything
 * else our own failure. */
static int coded(acct_err *err, int rc, int reachable)
{
	if (rc == 0)
		return 0;
	if (rc == SEO_ETIMEDOUT || !reachable) {
		log_warn("database unavailable: %s", err->message);
		err->code = "service_unavailable";
		snprintf(err->message, sizeof(err->message),
			 "the account database is unavailable, try again");
	} else {
		err->code = "internal_error";
	}
	return rc;
}

int acct__exec(seo_pg_conn *c, acct__q q, int nparams,
	       const char *const *params, PGresult **res, acct_err *err)
{
	return acct__exec_bin(c, q, nparams, params, NULL, NULL, res, err);
}

int acct__exec_bin(seo_pg_conn *c, acct__q q, int nparams,
		   const char *const *params, const int *lengths,
		   const int *formats, PGresult **res, acct_err *err)
{
	int rc = seo_pg_exec_bin(c, (int)q, nparams, params, lengths, formats,
				 res, err->message, sizeof(err->message));

	return coded(err, rc, rc == 0 || !seo_pg_dead(c, rc));
}

int acct__pipe_run(seo_pg_conn *c, seo_pg_pipe *p, acct_err *err)
{
	int rc = seo_pg_pipe_run(c, p, err->message, sizeof(err->message));

	return coded(err, rc, rc == 0 || !seo_pg_dead(c, rc));
}

int acct__begin(seo_pg_conn *c, acct_err *err)
{
	int rc = seo_pg_begin(c, err->message, sizeof(err->message));

	return coded(err, rc, rc == 0 || !seo_pg_dead(c, rc));
}

int acct__commit(seo_pg_conn *c, acct_err *err)
{
	int rc = seo_pg_commit(c, err->message, sizeof(err->message));

	return coded(err, rc, rc == 0 || !seo_pg_dead(c, rc));
}

int acct__pool_get(seo_pg_pool *p, seo_pg_conn **out, acct_err *err)
{
	int rc = seo_pg_pool_get(p, out, err->message, sizeof(err->message));

	return coded(err, rc, seo_pg_pool_reachable(p));
}

int acct__pool_query(seo_pg_pool *p, acct__q q, int nparams,
		     const char *const *params, PGresult **res, acct_err *err)
{
	int rc = seo_pg_pool_query(p, (int)q, nparams, params, res,
				   err->message, sizeof(err->message));

	return coded(err, rc, seo_pg_pool_reachable(p));
}

int acct__pool_begin(seo_pg_pool *p, seo_pg_conn **out, acct_err *err)
{
	int rc = seo_pg_pool_begin(p, out, err->message, sizeof(err->message));

	return coded(err, rc, seo_pg_pool_reachable(p));
}

int acct__connect(const char *url, PGconn **out, acct_err *err)
{
	/* The shared connect sets synchronous_commit on: an answer must never
	 * precede the durability of what it reports. A database that cannot
	 * be reached within the timeout is unavailable. */
	int rc = seo_pg_connect(url, ACCT_CONNECT_TIMEOUT_S, out, err->message,
				sizeof(err->message));

	return coded(err, rc, rc == SEO_ENOMEM);
}

int acct_db_check(acct_service *a, acct_err *err)
{
	PGresult *r = NULL;
	int rc = acct__pool_query(a->pool, ACCT_Q_PING, 0, NULL, &r, err);

	PQclear(r);
	return rc;
}

int acct_db_acquire(acct_service *a, PGconn **out, acct_err *err)
{
	seo_pg_conn *c;
	int rc = acct__pool_get(a->pool, &c, err);

	*out = rc == 0 ? c->pg : NULL;
	return rc;
}

void acct_db_release(acct_service *a, PGconn *db)
{
	seo_pg_pool_put_pg(a->pool, db);
}
