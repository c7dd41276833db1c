/*
 * test_acct_lease: credit leases (svc-account/lib/lease.c,
 * lease_registry.c, the recall in service.c, the expiry in reconcile.c)
 * against a real PostgreSQL: their numbers, a report applied once, calls
 * without a lease free, the sizing rule, `outside`, the expiry, the recall
 * of a debit short of balance, watch leases (granted 0), 8 holders at
 * once conserving credits, and the balance another replica shows while
 * one tops a lease up.
 * After every operation the ledger sums to the balance. Without
 * SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "acct_testdb.h"
#include "seo/util.h"

#define HOLDERS 8
#define ROUNDS 25

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

static acct_testdb T;
static PGconn *db;
static acct_service *svc;
static int seq_calls; /* request ids of this program */
static pthread_mutex_t seq_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- helpers ---------------------------------------------------------- */

/* The first value of `sql` as an integer (acct_testdb.h). */
#define q_int(...) acct_testdb_int(db, __VA_ARGS__)

static long long balance(const char *ws)
{
	return q_int("SELECT balance FROM workspaces WHERE id = $1", ws, NULL);
}

/* Every change of the balance is one ledger row. */
static int ledger_ok(const char *ws)
{
	return q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1", ws,
		     NULL) == balance(ws);
}

/* What the open leases hold unused, as the table says. */
static long long open_unused(const char *ws)
{
	return q_int("SELECT coalesce(sum(granted - used), 0) FROM credit_leases "
		     "WHERE workspace_id = $1 AND closed_at IS NULL", ws, NULL);
}

static long long usage_used(const char *ws)
{
	return q_int("SELECT coalesce(sum(credits_used), 0) FROM usage_all "
		     "WHERE workspace_id = $1", ws, NULL);
}

/* balance + open leases' unused + usage's credits_used, in one snapshot. */
static long long total(const char *ws)
{
	return q_int("SELECT (SELECT balance FROM workspaces WHERE id = $1) + "
		     "(SELECT coalesce(sum(granted - used), 0) FROM credit_leases "
		     "WHERE workspace_id = $1 AND closed_at IS NULL) + "
		     "(SELECT coalesce(sum(credits_used), 0) FROM usage_all "
		     "WHERE workspace_id = $1)", ws, NULL);
}

static void new_workspace(int64_t credits, acct_new_user *u)
{
	acct_err err;

	CU_ASSERT_FATAL(acct_workspace_create(db, "Lease", "l@example.com",
					      credits, u, &err) == 0);
}

/* A call of `charged` credits that finally cost `used`, under a new
 * request id (written into `id`, 32 bytes). */
static LeaseCall mkcall(char *id, int64_t charged, int64_t used)
{
	LeaseCall c = SEO__ACCOUNT__V1__LEASE_CALL__INIT;

	pthread_mutex_lock(&seq_mu);
	snprintf(id, 32, "lease-test-%d-%d", (int)getpid(), ++seq_calls);
	pthread_mutex_unlock(&seq_mu);
	c.request_id = id;
	c.user_id = "usr_x";
	c.key_id = "";
	c.endpoint = "backlinks";
	c.domain = "example.com";
	c.charged = charged;
	c.credits_used = used;
	return c;
}

/* A report of `n` calls in `stream`, calls[0] numbered `first`; `hold`
 * asks for a watch lease. */
static int lease_in(const char *holder, const char *ws, const char *stream,
		    uint64_t first, LeaseCall *calls, size_t n, int64_t want,
		    int close, int hold, acct__lease_out *out, acct_err *err)
{
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	LeaseCall *ptrs[64];

	for (size_t i = 0; i < n; i++)
		ptrs[i] = &calls[i];
	req.holder = (char *)holder;
	req.workspace_id = (char *)ws;
	req.calls = ptrs;
	req.n_calls = n;
	req.want = want;
	req.close = close;
	req.hold = hold;
	req.stream = (char *)stream;
	req.first_seq = first;
	return acct__lease(svc, &req, out, err);
}

/* A report in this program's stream, its calls numbered by their request
 * ids (mkcall's counter: increasing, so later reports number higher). */
static int lease_req(const char *holder, const char *ws, LeaseCall *calls,
		     size_t n, int64_t want, int close, int hold,
		     acct__lease_out *out, acct_err *err)
{
	const char *num = n > 0 ? strrchr(calls[0].request_id, '-') : NULL;
	uint64_t first = num != NULL ? strtoull(num + 1, NULL, 10) : 1;

	return lease_in(holder, ws, "test", first, calls, n, want, close, hold,
			out, err);
}

static int lease(const char *holder, const char *ws, LeaseCall *calls,
		 size_t n, int64_t want, int close, acct__lease_out *out,
		 acct_err *err)
{
	return lease_req(holder, ws, calls, n, want, close, 0, out, err);
}

/* A watch lease asked for (hold), with `want`. */
static int watch_lease(const char *holder, const char *ws, int64_t want,
		       acct__lease_out *out, acct_err *err)
{
	return lease_req(holder, ws, NULL, 0, want, 0, 1, out, err);
}

/* 1 when the watch `watcher` (b from its last answer) hears within 5 s
 * that the balance of `ws` changed. */
static int hears_balance(const char *watcher, acct__watch_batch *b,
			 const char *ws)
{
	for (int i = 0; i < 50; i++) {
		acct__watch_wait(&svc->watch, watcher, b->instance, b->seq, 100, b);
		for (size_t k = 0; k < b->n; k++)
			if (b->ev[k].kind == ACCT_WATCH_BALANCE &&
			    strcmp(b->ev[k].id, ws) == 0)
				return 1;
	}
	return 0;
}

/* The balance a customer is shown (GetCredits). */
static int64_t shown(const char *ws)
{
	int64_t v = -1;
	acct_err err;

	CU_ASSERT(acct__read_balance(svc, ws, &v, &err) == 0);
	return v;
}

/* ---- tests ------------------------------------------------------------ */

static void test_numbers(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[4][32];
	LeaseCall calls[4];
	const char *ws;

	new_workspace(100000, &u);
	ws = u.workspace_id;
	/* Opened: min(want, balance / 8). */
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 5000, 0, &o, &err), 0);
	CU_ASSERT(strncmp(o.lease_id, "lse_", 4) == 0);
	CU_ASSERT_EQUAL(o.granted, 5000);
	CU_ASSERT_EQUAL(o.used, 0);
	CU_ASSERT_EQUAL(o.outside, 95000);
	CU_ASSERT_EQUAL(o.ttl_ms, ACCT_LEASE_TTL_MS);
	CU_ASSERT_EQUAL(balance(ws), 95000);
	CU_ASSERT(ledger_ok(ws));
	/* The customer never sees credits vanish into a lease. */
	CU_ASSERT_EQUAL(shown(ws), 100000);

	/* Reported, then topped up. */
	for (int i = 0; i < 3; i++)
		calls[i] = mkcall(ids[i], 10, 10);
	calls[3] = mkcall(ids[3], 10, 4);
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, calls, 4, 1000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 6000);
	CU_ASSERT_EQUAL(o.used, 34);
	CU_ASSERT_EQUAL(o.outside, 94000);
	CU_ASSERT_EQUAL(balance(ws), 94000);
	CU_ASSERT(ledger_ok(ws));
	CU_ASSERT_EQUAL(shown(ws), 100000 - 34);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1 "
			      "AND outcome = 'earned' AND settle_by IS NULL", ws, NULL), 3);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1 "
			      "AND outcome = 'refunded' AND charged = 10", ids[3], NULL), 4);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE request_id = $1 "
			      "AND domain = 'example.com' AND key_id IS NULL", ids[0], NULL), 1);

	/* Closed: granted - used back, one ledger row. */
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 0, 1, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
	CU_ASSERT_EQUAL(o.granted, 0);
	CU_ASSERT_EQUAL(o.outside, 100000 - 34);
	CU_ASSERT_EQUAL(balance(ws), 100000 - 34);
	CU_ASSERT(ledger_ok(ws));
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM ledger WHERE workspace_id = $1 "
			      "AND reason = 'lease'", ws, NULL), 3);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM credit_leases WHERE workspace_id = $1 "
			      "AND closed_at IS NOT NULL AND used = 34 AND granted = 6000",
			      ws, NULL), 1);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 0);
	CU_ASSERT_EQUAL(shown(ws), 100000 - 34);
	/* A close with nothing open changes nothing. */
	CU_ASSERT_EQUAL(lease("gw1", ws, NULL, 0, 0, 1, &o, &err), 0);
	CU_ASSERT_EQUAL(balance(ws), 100000 - 34);
}

static void test_report_twice(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[2][32];
	LeaseCall calls[2];
	const char *ws;

	new_workspace(80000, &u);
	ws = u.workspace_id;
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	calls[0] = mkcall(ids[0], 7, 7);
	calls[1] = mkcall(ids[1], 5, 0);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 2, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 7);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 2, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 7);
	/* Twice in one report, too. */
	calls[1] = calls[0];
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 2, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 7);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1",
			      ws, NULL), 2);
	CU_ASSERT_EQUAL(usage_used(ws) + open_unused(ws) + balance(ws), 80000);
	CU_ASSERT(ledger_ok(ws));
}

static long long rows_of(const char *ws)
{
	return q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1", ws, NULL);
}

/* Calls are written once by their stream and number, whatever their
 * request ids: the same report twice, one overlapping it, one after the
 * lease closed; a new stream starts at 1 again. */
static void test_report_by_sequence(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[6][32];
	LeaseCall calls[6];
	const char *ws;

	new_workspace(80000, &u);
	ws = u.workspace_id;
	for (int i = 0; i < 6; i++)
		calls[i] = mkcall(ids[i], 3, 3);
	CU_ASSERT_EQUAL_FATAL(lease_in("gw1", ws, "s1", 0, NULL, 0, 1000, 0, 0, &o,
				       &err), 0);
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 1, calls, 3, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 9);
	CU_ASSERT_EQUAL(rows_of(ws), 3);
	/* The answer lost: sent again, nothing more written or counted. */
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 1, calls, 3, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 9);
	CU_ASSERT_EQUAL(rows_of(ws), 3);
	/* Sent again with one more call: only that one. */
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 1, calls, 4, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 12);
	CU_ASSERT_EQUAL(rows_of(ws), 4);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE request_id = $1",
			      ids[3], NULL), 1);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE request_id = $1",
			      ids[4], NULL), 0);
	/* Closed, then the last report once more: nothing twice, and the
	 * credits given back stay given back. */
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 0, NULL, 0, 0, 1, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(balance(ws), 80000 - 12);
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 1, calls, 4, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(rows_of(ws), 4);
	/* A call after the close in the same stream: written, free. */
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 3, &calls[2], 3, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(rows_of(ws), 5);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1",
			      ids[4], NULL), 0);
	/* The gateway restarted: a new stream, numbered from 1, written. */
	CU_ASSERT_EQUAL_FATAL(lease_in("gw1", ws, "s2", 0, NULL, 0, 1000, 0, 0, &o,
				       &err), 0);
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s2", 1, &calls[5], 1, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 3);
	CU_ASSERT_EQUAL(rows_of(ws), 6);
	/* The old stream's late report still finds its number. */
	CU_ASSERT_EQUAL(lease_in("gw1", ws, "s1", 1, calls, 5, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 3);
	CU_ASSERT_EQUAL(rows_of(ws), 6);
	/* Another holder's stream of the same name is its own, numbered
	 * apart. A leased call's request id is not looked up (migration
	 * 007): a call is only ever reported by the holder that served it,
	 * so this one, reported by a holder without a lease, is written
	 * again, free, and costs nothing. */
	CU_ASSERT_EQUAL(lease_in("gw2", ws, "s1", 1, &calls[5], 1, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(rows_of(ws), 7);
	CU_ASSERT_EQUAL(q_int("SELECT sum(credits_used) FROM usage_all WHERE request_id = $1",
			      ids[5], NULL), 3);
	CU_ASSERT_EQUAL(total(ws), 80000);
	CU_ASSERT(ledger_ok(ws));
}

/* Batches' ids grow with time (the primary key grows at its right edge):
 * a later report's rows sort after an earlier one's, in bytes; a call's
 * row in usage_all is its batch's id, a dot and its place (4 digits). */
static void test_ids_in_time_order(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[4][32];
	LeaseCall calls[4];
	const char *ws;
	PGresult *r;

	new_workspace(80000, &u);
	ws = u.workspace_id;
	for (int i = 0; i < 4; i++)
		calls[i] = mkcall(ids[i], 1, 1);
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 2, 0, 0, &o, &err), 0);
	usleep(3000);
	CU_ASSERT_EQUAL(lease("gw1", ws, &calls[2], 2, 0, 0, &o, &err), 0);
	r = PQexecParams(db, "SELECT request_id, length(id) FROM usage_all "
			 "WHERE workspace_id = $1 ORDER BY id COLLATE \"C\"",
			 1, NULL, &ws, NULL, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(PQntuples(r), 4);
	/* The first report's two in any order, then the second's. */
	CU_ASSERT(strcmp(PQgetvalue(r, 2, 0), ids[2]) == 0 ||
		  strcmp(PQgetvalue(r, 2, 0), ids[3]) == 0);
	CU_ASSERT(strcmp(PQgetvalue(r, 3, 0), ids[2]) == 0 ||
		  strcmp(PQgetvalue(r, 3, 0), ids[3]) == 0);
	CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 0, 1), "29");
	PQclear(r);
}

static void test_calls_without_lease_free(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[3][32];
	LeaseCall calls[3];
	const char *ws;

	new_workspace(50000, &u);
	ws = u.workspace_id;
	/* Never opened. */
	calls[0] = mkcall(ids[0], 9, 9);
	CU_ASSERT_EQUAL(lease("gw9", ws, calls, 1, 0, 0, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1 "
			      "AND outcome = 'refunded' AND charged = 9", ids[0], NULL), 0);
	CU_ASSERT_EQUAL(balance(ws), 50000);
	/* Closed, then a late report: free as well. */
	CU_ASSERT_EQUAL_FATAL(lease("gw9", ws, NULL, 0, 100, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 100);
	CU_ASSERT_EQUAL(lease("gw9", ws, NULL, 0, 0, 1, &o, &err), 0);
	calls[1] = mkcall(ids[1], 9, 9);
	CU_ASSERT_EQUAL(lease("gw9", ws, &calls[1], 1, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1",
			      ids[1], NULL), 0);
	/* Reported with a top-up wanted: the calls free, a new lease opened. */
	calls[2] = mkcall(ids[2], 9, 9);
	CU_ASSERT_EQUAL(lease("gw9", ws, &calls[2], 1, 100, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1",
			      ids[2], NULL), 0);
	CU_ASSERT_EQUAL(o.granted, 100);
	CU_ASSERT_EQUAL(o.used, 0);
	CU_ASSERT_EQUAL(balance(ws), 49900);
	CU_ASSERT_EQUAL(usage_used(ws), 0);
	CU_ASSERT(ledger_ok(ws));
}

static void test_sizing(void)
{
	acct_new_user low, edge;
	acct__lease_out o;
	acct_err err;

	new_workspace(9999, &low);
	CU_ASSERT_EQUAL(lease("gw1", low.workspace_id, NULL, 0, 100, 0, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
	CU_ASSERT_EQUAL(o.granted, 0);
	CU_ASSERT_EQUAL(o.outside, 9999);
	CU_ASSERT_EQUAL(balance(low.workspace_id), 9999);

	new_workspace(10000, &edge);
	CU_ASSERT_EQUAL(lease("gw1", edge.workspace_id, NULL, 0, 5000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 1250);
	CU_ASSERT_EQUAL(balance(edge.workspace_id), 8750);
	/* Below the minimum now: the open lease stays, no more top-up. */
	CU_ASSERT_EQUAL(lease("gw1", edge.workspace_id, NULL, 0, 5000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 1250);
	CU_ASSERT_EQUAL(balance(edge.workspace_id), 8750);
	CU_ASSERT(ledger_ok(edge.workspace_id));
}

static void test_recalled_no_top_up(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	const char *ws;

	new_workspace(100000, &u);
	ws = u.workspace_id;
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(acct__leases_recall(&svc->leases, ws, 0), 0);
	CU_ASSERT(acct__leases_recalled(&svc->leases, ws));
	CU_ASSERT_EQUAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 1000);
	CU_ASSERT_EQUAL(lease("gw2", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
	CU_ASSERT_EQUAL(balance(ws), 99000);
}

static void test_outside(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[1][32];
	LeaseCall calls[1];
	const char *ws;

	new_workspace(100000, &u);
	ws = u.workspace_id;
	CU_ASSERT_EQUAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.outside, 99000);
	CU_ASSERT_EQUAL(lease("gw2", ws, NULL, 0, 2000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.outside, 97000 + 1000);
	calls[0] = mkcall(ids[0], 300, 300);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 1, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.outside, 97000 + 2000);
	CU_ASSERT_EQUAL(lease("gw2", ws, NULL, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.outside, 97000 + 700);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 2);
	CU_ASSERT_EQUAL(acct__leases_unused(&svc->leases, ws), 700 + 2000);
	CU_ASSERT_EQUAL(shown(ws), 100000 - 300);
}

/* Waits up to 5 s for the registry to show `count` open leases of `ws`
 * (a NOTIFY from another connection). */
static int wait_count(const char *ws, int64_t count)
{
	for (int i = 0; i < 500; i++) {
		if (acct__leases_count(&svc->leases, ws) == count)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void test_expiry(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[1][32], msg[256];
	LeaseCall calls[1];
	int64_t done;
	const char *ws;

	new_workspace(100000, &u);
	ws = u.workspace_id;
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 3000, 0, &o, &err), 0);
	calls[0] = mkcall(ids[0], 40, 40);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 1, 0, 0, &o, &err), 0);
	/* Not yet stale. */
	CU_ASSERT_EQUAL(acct_reconcile(db, seo_now_ms(), &done, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 1);
	CU_ASSERT_EQUAL(balance(ws), 97000);
	/* The job on its own connection, as `seoctl job run reconcile --at`. */
	CU_ASSERT_EQUAL(acct_reconcile(db, seo_now_ms() + ACCT_LEASE_TTL_MS + 1000,
				       &done, msg, sizeof(msg)), 0);
	CU_ASSERT(done >= 1);
	CU_ASSERT_EQUAL(balance(ws), 100000 - 40);
	CU_ASSERT_EQUAL(open_unused(ws), 0);
	CU_ASSERT(ledger_ok(ws));
	CU_ASSERT(wait_count(ws, 0));
	CU_ASSERT_EQUAL(shown(ws), 100000 - 40);
	/* Its holder learns it at its next report: nothing open. */
	CU_ASSERT_EQUAL(lease("gw1", ws, NULL, 0, 0, 0, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
}

/* A holder reporting beyond its lease: the excess comes from the balance
 * as far as it goes; the rest is not charged. */
static void test_overspent(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[2][32], hash[ACCT_HASH_LEN], charge[ACCT_ID_LEN];
	LeaseCall calls[2];
	acct_caller who;
	int64_t remaining;
	const char *ws;

	new_workspace(10000, &u);
	ws = u.workspace_id;
	CU_ASSERT_EQUAL_FATAL(lease("gw1", ws, NULL, 0, 5000, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 1250);
	calls[0] = mkcall(ids[0], 1300, 1300);
	CU_ASSERT_EQUAL(lease("gw1", ws, calls, 1, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 1300);
	CU_ASSERT_EQUAL(o.used, 1300);
	CU_ASSERT_EQUAL(balance(ws), 8700);
	CU_ASSERT(ledger_ok(ws));
	/* The rest of the balance spent elsewhere, then more reported. */
	seo_sha256_hex(u.api_key, strlen(u.api_key), hash);
	who = (acct_caller){ws, u.user_id, hash, ACCT_ROLE_OWNER};
	CU_ASSERT_EQUAL(acct_charge(svc, &who, NULL, "backlinks", 8690, NULL,
				    charge, &remaining, &err), 0);
	calls[1] = mkcall(ids[1], 50, 50);
	CU_ASSERT_EQUAL(lease("gw1", ws, &calls[1], 1, 0, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, o.granted);
	CU_ASSERT_EQUAL(o.granted, 1310);
	CU_ASSERT_EQUAL(balance(ws), 0);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage_all WHERE request_id = $1 "
			      "AND outcome = 'refunded'", ids[1], NULL), 10);
	CU_ASSERT_EQUAL(total(ws), 10000);
	CU_ASSERT(ledger_ok(ws));
}

typedef struct closer {
	const char *ws;
	int closed;
} closer;

/* The holder: closes its lease once the workspace is recalled, waiting up
 * to 10 s for the recall (a debit slow to reach it on a busy machine would
 * find a holder that gave up sooner gone). */
static void *close_on_recall(void *arg)
{
	closer *c = arg;
	acct__lease_out o;
	acct_err err;

	for (int i = 0; i < 5000 && !acct__leases_recalled(&svc->leases, c->ws); i++)
		usleep(2000);
	c->closed = acct__leases_recalled(&svc->leases, c->ws) &&
		    lease("gw1", c->ws, NULL, 0, 0, 1, &o, &err) == 0;
	return NULL;
}

/* A workspace of 16,000 credits whose lease of 2,000 gw1 holds, and its
 * owner as a caller (hash: the key's, which `who` points to). */
static void recall_setup(acct_new_user *u, char hash[ACCT_HASH_LEN],
			 acct_caller *who)
{
	acct__lease_out o;
	acct_err err;

	new_workspace(16000, u);
	seo_sha256_hex(u->api_key, strlen(u->api_key), hash);
	*who = (acct_caller){u->workspace_id, u->user_id, hash, ACCT_ROLE_OWNER};
	CU_ASSERT_EQUAL_FATAL(lease("gw1", u->workspace_id, NULL, 0, 2000, 0, &o,
				    &err), 0);
}

/* Charges 15,000 while gw1 closes its lease once recalled: paid, the
 * lease closed, 1,000 left; *took its milliseconds. */
static void charge_recalled(const acct_new_user *u, const acct_caller *who,
			    int64_t *took)
{
	char charge[ACCT_ID_LEN];
	closer c = {u->workspace_id, 0};
	pthread_t t;
	int64_t remaining, t0 = seo_mono_ms();
	acct_err err;

	CU_ASSERT_FATAL(pthread_create(&t, NULL, close_on_recall, &c) == 0);
	CU_ASSERT_EQUAL(acct_charge(svc, who, NULL, "backlinks", 15000, NULL,
				    charge, &remaining, &err), 0);
	*took = seo_mono_ms() - t0;
	pthread_join(t, NULL);
	CU_ASSERT(c.closed);
	CU_ASSERT_EQUAL(remaining, 1000);
}

static void test_recall(void)
{
	acct_new_user u;
	char hash[ACCT_HASH_LEN];
	acct_caller who;
	int64_t took;
	acct__watch_batch *b = malloc(sizeof(*b));
	int recalled = 0;

	CU_ASSERT_FATAL(b != NULL);
	recall_setup(&u, hash, &who);
	acct__watch_wait(&svc->watch, "test", NULL, 0, 0, b);
	CU_ASSERT_EQUAL(balance(u.workspace_id), 14000);

	/* Short of the balance, not of balance + lease: recalled, then paid. */
	charge_recalled(&u, &who, &took);
	CU_ASSERT_EQUAL(balance(u.workspace_id), 1000);
	CU_ASSERT(ledger_ok(u.workspace_id));
	/* The watch carried the recall. */
	acct__watch_wait(&svc->watch, "test", b->instance, b->seq, 0, b);
	for (size_t i = 0; i < b->n; i++)
		if (b->ev[i].kind == ACCT_WATCH_RECALL &&
		    strcmp(b->ev[i].id, u.workspace_id) == 0)
			recalled = 1;
	CU_ASSERT(recalled);
	free(b);
}

static void test_recall_unanswered(void)
{
	acct_new_user u;
	acct_err err;
	char hash[ACCT_HASH_LEN], charge[ACCT_ID_LEN];
	acct_caller who;
	int64_t remaining, t0;

	recall_setup(&u, hash, &who);
	/* Nobody closes: refused after the wait, its refused row kept once. */
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL(acct_charge(svc, &who, NULL, "backlinks", 15000, NULL,
				    charge, &remaining, &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "insufficient_credits");
	CU_ASSERT(seo_mono_ms() - t0 >= ACCT_LEASE_RECALL_WAIT_MS - 50);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1 "
			      "AND charged = 0 AND credits_used = 0",
			      u.workspace_id, NULL), 1);
	CU_ASSERT_EQUAL(balance(u.workspace_id), 14000);
	/* The message names the balance the customer sees. */
	CU_ASSERT(strstr(err.message, "16000") != NULL);
}

static void test_bad_input(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char ids[1][32];
	LeaseCall calls[1];

	new_workspace(20000, &u);
	CU_ASSERT_EQUAL(lease("", u.workspace_id, NULL, 0, 1, 0, &o, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	CU_ASSERT_EQUAL(lease("gw1", "", NULL, 0, 1, 0, &o, &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(lease("gw1", u.workspace_id, NULL, 0, -1, 0, &o, &err), SEO_EINVAL);
	calls[0] = mkcall(ids[0], 5, 6);
	CU_ASSERT_EQUAL(lease("gw1", u.workspace_id, calls, 1, 0, 0, &o, &err), SEO_EINVAL);
	calls[0] = mkcall(ids[0], -1, 0);
	CU_ASSERT_EQUAL(lease("gw1", u.workspace_id, calls, 1, 0, 0, &o, &err), SEO_EINVAL);
	calls[0] = mkcall(ids[0], 5, 5);
	calls[0].request_id = "";
	CU_ASSERT_EQUAL(lease("gw1", u.workspace_id, calls, 1, 0, 0, &o, &err), SEO_EINVAL);
	/* Calls need their stream and number. */
	calls[0] = mkcall(ids[0], 5, 5);
	CU_ASSERT_EQUAL(lease_in("gw1", u.workspace_id, "", 1, calls, 1, 0, 0, 0, &o,
				 &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(lease_in("gw1", u.workspace_id, "s", 0, calls, 1, 0, 0, 0, &o,
				 &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(lease_in("gw1", u.workspace_id, "s", UINT64_MAX, calls, 1, 0,
				 0, 0, &o, &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(lease("gw1", "ws_nope", NULL, 0, 1, 0, &o, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "not_found");
	calls[0] = mkcall(ids[0], 5, 5);
	CU_ASSERT_EQUAL(lease("gw1", "ws_nope", calls, 1, 0, 0, &o, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "not_found");
	CU_ASSERT_EQUAL(balance(u.workspace_id), 20000);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1",
			      u.workspace_id, NULL), 0);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE request_id = $1",
			      ids[0], NULL), 0);
}

/* A grant outside the leases reaches their holders through the watch. */
static void test_balance_event(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	acct__watch_batch *b = malloc(sizeof(*b));
	int64_t bal;

	CU_ASSERT_FATAL(b != NULL);
	new_workspace(100000, &u);
	CU_ASSERT_EQUAL_FATAL(lease("gw1", u.workspace_id, NULL, 0, 1000, 0, &o,
				    &err), 0);
	acct__watch_wait(&svc->watch, "test-b", NULL, 0, 0, b);
	CU_ASSERT_EQUAL(acct_credits_grant(db, u.workspace_id, 5, &bal, &err), 0);
	CU_ASSERT_EQUAL(bal, 100005);
	CU_ASSERT(hears_balance("test-b", b, u.workspace_id));
	CU_ASSERT_EQUAL(shown(u.workspace_id), 100005);
	free(b);
}

/* A watch lease: opened holding nothing on a balance too small for a
 * lease, answered `outside`; its holder hears every change of the
 * balance; a debit refused for its balance is answered at once (nothing to
 * recall), keeping its refused row as without leases; topped up later
 * like any lease; closed with no ledger row. */
static void test_watch_lease(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char hash[ACCT_HASH_LEN], charge[ACCT_ID_LEN], id[ACCT_ID_LEN];
	acct__watch_batch *b = malloc(sizeof(*b));
	acct_caller who;
	int64_t remaining, bal, t0, took;
	const char *ws;

	CU_ASSERT_FATAL(b != NULL);
	new_workspace(500, &u);
	ws = u.workspace_id;
	seo_sha256_hex(u.api_key, strlen(u.api_key), hash);
	who = (acct_caller){ws, u.user_id, hash, ACCT_ROLE_OWNER};
	CU_ASSERT_EQUAL_FATAL(watch_lease("gw1", ws, 0, &o, &err), 0);
	CU_ASSERT_FATAL(strncmp(o.lease_id, "lse_", 4) == 0);
	memcpy(id, o.lease_id, sizeof(id));
	CU_ASSERT_EQUAL(o.granted, 0);
	CU_ASSERT_EQUAL(o.used, 0);
	CU_ASSERT_EQUAL(o.outside, 500);
	CU_ASSERT_EQUAL(balance(ws), 500);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM credit_leases WHERE workspace_id = $1 "
			      "AND closed_at IS NULL AND granted = 0", ws, NULL), 1);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM ledger WHERE workspace_id = $1 "
			      "AND reason = 'lease'", ws, NULL), 0);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 1);
	CU_ASSERT_EQUAL(acct__leases_unused(&svc->leases, ws), 0);
	CU_ASSERT_EQUAL(shown(ws), 500);
	/* Asked for again, with a top-up the balance cannot give: the same. */
	CU_ASSERT_EQUAL(watch_lease("gw1", ws, 100, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, id);
	CU_ASSERT_EQUAL(o.granted, 0);

	/* A debit: its holder hears it. */
	acct__watch_wait(&svc->watch, "test-w", NULL, 0, 0, b);
	CU_ASSERT_EQUAL(acct_charge(svc, &who, NULL, "backlinks", 100, NULL,
				    charge, &remaining, &err), 0);
	CU_ASSERT_EQUAL(remaining, 400);
	CU_ASSERT(hears_balance("test-w", b, ws));

	/* Refused for its balance: at once, no recall, its row kept once. */
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL(acct_charge(svc, &who, NULL, "backlinks", 401, NULL,
				    charge, &remaining, &err), SEO_EDENIED);
	took = seo_mono_ms() - t0;
	CU_ASSERT_STRING_EQUAL(err.code, "insufficient_credits");
	CU_ASSERT(took < ACCT_LEASE_RECALL_WAIT_MS / 4);
	CU_ASSERT(!acct__leases_recalled(&svc->leases, ws));
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1 "
			      "AND charged = 0 AND credits_used = 0", ws, NULL), 1);
	CU_ASSERT_EQUAL(balance(ws), 400);
	CU_ASSERT(strstr(err.message, "400") != NULL);
	CU_ASSERT(ledger_ok(ws));

	/* The balance grown: the same lease topped up when spending asks. */
	CU_ASSERT_EQUAL(acct_credits_grant(db, ws, 20000, &bal, &err), 0);
	CU_ASSERT_EQUAL(lease("gw1", ws, NULL, 0, 1000, 0, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, id);
	CU_ASSERT_EQUAL(o.granted, 1000);
	CU_ASSERT_EQUAL(o.outside, 19400);
	CU_ASSERT_EQUAL(balance(ws), 19400);
	CU_ASSERT_EQUAL(shown(ws), 20400);
	CU_ASSERT(ledger_ok(ws));

	/* Calls spent from it lower the outside of another holder's watch
	 * lease, who hears it. */
	CU_ASSERT_EQUAL_FATAL(watch_lease("gw2", ws, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.granted, 0);
	CU_ASSERT_EQUAL(o.outside, 20400);
	{
		char ids[1][32];
		LeaseCall calls[1] = {mkcall(ids[0], 30, 30)};

		acct__watch_wait(&svc->watch, "test-w", b->instance, b->seq, 0, b);
		CU_ASSERT_EQUAL(lease("gw1", ws, calls, 1, 0, 0, &o, &err), 0);
		CU_ASSERT(hears_balance("test-w", b, ws));
	}
	CU_ASSERT_EQUAL(watch_lease("gw2", ws, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.outside, 20370);

	/* Closed: nothing to give back, no ledger row. */
	CU_ASSERT_EQUAL(lease("gw2", ws, NULL, 0, 0, 1, &o, &err), 0);
	CU_ASSERT_STRING_EQUAL(o.lease_id, "");
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM ledger WHERE workspace_id = $1 "
			      "AND reason = 'lease'", ws, NULL), 1);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 1);
	CU_ASSERT_EQUAL(total(ws), 20500);
	free(b);
}

/* A recall waits only for leases holding credits: a watch lease open (or
 * reopened) beside a closed one never holds the debit. */
static void test_recall_ignores_watch_leases(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char hash[ACCT_HASH_LEN];
	acct_caller who;
	int64_t took;

	recall_setup(&u, hash, &who);
	CU_ASSERT_EQUAL_FATAL(watch_lease("gw2", u.workspace_id, 0, &o, &err), 0);
	charge_recalled(&u, &who, &took);
	CU_ASSERT(took < ACCT_LEASE_RECALL_WAIT_MS);
	/* Reopened after the close, a watch lease holds nothing. */
	CU_ASSERT_EQUAL(watch_lease("gw1", u.workspace_id, 500, &o, &err), 0);
	CU_ASSERT(o.lease_id[0] != '\0');
	CU_ASSERT_EQUAL(o.granted, 0);
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, u.workspace_id), 2);
	CU_ASSERT_EQUAL(balance(u.workspace_id), 1000);
	CU_ASSERT(ledger_ok(u.workspace_id));
}

typedef struct holder {
	const char *ws;
	char name[16];
	int failures;
} holder;

/* Reports calls on its lease (never beyond it) and tops up, then closes. */
static void *holder_main(void *arg)
{
	holder *h = arg;
	acct__lease_out o;
	acct_err err;
	unsigned seed = (unsigned)(uintptr_t)h;
	int64_t left = 0;

	for (int r = 0; r < ROUNDS; r++) {
		char ids[8][32];
		LeaseCall calls[8];
		size_t n = 0;

		while (n < 8 && left >= 5) {
			int64_t used = rand_r(&seed) % 6;

			calls[n] = mkcall(ids[n], 5, used);
			left -= 5;
			n++;
		}
		if (lease(h->name, h->ws, calls, n, 400, 0, &o, &err) != 0) {
			h->failures++;
			continue;
		}
		left = o.granted - o.used;
	}
	if (lease(h->name, h->ws, NULL, 0, 0, 1, &o, &err) != 0)
		h->failures++;
	return NULL;
}

static void test_concurrent_holders(void)
{
	acct_new_user u;
	holder h[HOLDERS];
	pthread_t t[HOLDERS];
	const char *ws;

	new_workspace(200000, &u);
	ws = u.workspace_id;
	for (int i = 0; i < HOLDERS; i++) {
		h[i] = (holder){ws, "", 0};
		snprintf(h[i].name, sizeof(h[i].name), "gw-%d", i);
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, holder_main, &h[i]) == 0);
	}
	/* Meanwhile, in one snapshot each time: no credit made or lost. */
	for (int i = 0; i < 40; i++) {
		CU_ASSERT_EQUAL(total(ws), 200000);
		usleep(5000);
	}
	for (int i = 0; i < HOLDERS; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(h[i].failures, 0);
	}
	CU_ASSERT_EQUAL(balance(ws) + open_unused(ws) + usage_used(ws), 200000);
	CU_ASSERT_EQUAL(open_unused(ws), 0);
	CU_ASSERT(usage_used(ws) > 0);
	CU_ASSERT(ledger_ok(ws));
	CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, ws), 0);
	CU_ASSERT_EQUAL(shown(ws), 200000 - usage_used(ws));
}

/* A restart keeps the open leases: the registry is read from the table. */
static void test_restart_keeps_leases(void)
{
	acct_new_user u;
	acct__lease_out o;
	acct_options opt;
	acct_service *other;
	acct_err err;

	new_workspace(100000, &u);
	CU_ASSERT_EQUAL_FATAL(lease("gw1", u.workspace_id, NULL, 0, 1000, 0, &o,
				    &err), 0);
	acct_options_init(&opt);
	opt.pg_url = T.pgdb.url;
	opt.rate_per_min = 0;
	CU_ASSERT_FATAL(acct_new(&opt, &other, &err) == 0);
	CU_ASSERT_EQUAL(acct__leases_count(&other->leases, u.workspace_id), 1);
	CU_ASSERT_EQUAL(acct__leases_unused(&other->leases, u.workspace_id), 1000);
	acct_free(other);
}

/* Top-ups of a lease through replica A, while replica B reads. */
typedef struct topups {
	const char *ws;
	int rounds, failures;
	int done; /* set when the lease is closed */
} topups;

static void *topup_main(void *arg)
{
	topups *t = arg;
	acct__lease_out o;
	acct_err err;

	for (int i = 0; i < t->rounds; i++)
		t->failures += lease("gw-topup", t->ws, NULL, 0, 1000, 0, &o, &err) != 0;
	t->failures += lease("gw-topup", t->ws, NULL, 0, 0, 1, &o, &err) != 0;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The balance a replica shows counts a lease another replica grants at
 * once: a top-up moves credits from the balance into the lease, so with
 * no call spent every read, on either replica, is the whole 1,000,000
 * while one replica tops a lease up 200 times and closes it.
 */
static void test_replica_reads_see_top_ups(void)
{
	topups t = {NULL, 200, 0, 0};
	acct_options opt;
	acct_service *other;
	acct_new_user u;
	pthread_t th;
	acct_err err;
	int reads = 0, wrong = 0, failed = 0;
	int64_t v;

	new_workspace(1000000, &u);
	t.ws = u.workspace_id;
	acct_options_init(&opt);
	opt.pg_url = T.pgdb.url;
	opt.rate_per_min = 0;
	CU_ASSERT_FATAL(acct_new(&opt, &other, &err) == 0);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, topup_main, &t) == 0);
	/* Until the lease is closed; no fatal assertion while it runs. */
	while (!__atomic_load_n(&t.done, __ATOMIC_ACQUIRE)) {
		if (acct__read_balance(other, t.ws, &v, &err) != 0) {
			failed++;
			continue;
		}
		reads++;
		wrong += v != 1000000;
	}
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(t.failures, 0);
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT(reads > 10);
	CU_ASSERT_EQUAL(wrong, 0);
	if (wrong != 0)
		fprintf(stderr, "replica reads: %d of %d not 1000000\n", wrong, reads);
	CU_ASSERT(acct__read_balance(other, t.ws, &v, &err) == 0 && v == 1000000);
	CU_ASSERT_EQUAL(shown(t.ws), 1000000);
	CU_ASSERT(ledger_ok(t.ws));
	acct_free(other);
}

static const acct_testdb_case cases[] = {
	{"open, report, top up, close", test_numbers},
	{"a report sent again applies once", test_report_twice},
	{"calls written once by their stream and number",
	 test_report_by_sequence},
	{"usage rows' ids in time order", test_ids_in_time_order},
	{"calls without an open lease are free", test_calls_without_lease_free},
	{"top-ups: 10000 at least, an eighth at most", test_sizing},
	{"no top-up while recalled", test_recalled_no_top_up},
	{"outside counts the other holders", test_outside},
	{"the reconcile job expires stale leases", test_expiry},
	{"calls reported beyond the lease", test_overspent},
	{"a debit short of balance recalls the leases", test_recall},
	{"a recall nobody answers refuses after the wait",
	 test_recall_unanswered},
	{"bad input", test_bad_input},
	{"a grant reaches the holders", test_balance_event},
	{"a watch lease holds nothing and never delays a debit",
	 test_watch_lease},
	{"a recall waits only for leases holding credits",
	 test_recall_ignores_watch_leases},
	{"8 holders at once conserve credits", test_concurrent_holders},
	{"a restart keeps the open leases", test_restart_keeps_leases},
	{"a replica's balance counts the leases granted elsewhere",
	 test_replica_reads_see_top_ups},
};

int main(void)
{
	int rc = acct_testdb_open(&T, "test_acct_lease", "acct_lease");

	if (rc != 0)
		return rc < 0;
	db = T.db;
	svc = T.svc;
	return ACCT_TESTDB_RUN(&T, "leases", cases);
}
