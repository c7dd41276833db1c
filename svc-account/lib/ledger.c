/*
 * The ledger: every debit and refund of this process is written in
 * group-committed batches, one at a time, on one connection. Handler
 * threads queue an operation and wait. A caller that finds no batch being
 * written writes one itself; batches that queue up meanwhile are written
 * by the writer thread, back to back. A batch takes everything queued,
 * decides each operation in queue order against balances it locked,
 * writes all rows with a few array-bound statements and commits once, in
 * two round trips (pipelined). Throughput is bounded by commits (fsyncs)
 * per second, never by calls. The outcomes of calls that earned their
 * whole charge ride along: closed in the batch of a later debit
 * (acct__debit.earned) or of a close of many (acct__ledger_close()),
 * never a transaction of their own per call.
 *
 * Durability (docs/decisions.md): a batch of debits and closed outcomes
 * commits without waiting for the disk (synchronous_commit off, the
 * writer's session setting): a crash of PostgreSQL may lose its last
 * fraction of a second of them, whole transactions, which then cost the
 * customer nothing. A batch with a refund waits for the disk, and so
 * makes everything before it durable too.
 *
 * Invariants kept here: a workspace balance equals the sum of its ledger
 * rows and never goes negative; a charge's credits_used never drops below
 * zero; nothing is answered before its commit; rows are locked charges
 * first, then workspaces, each in id order; a debit under an idempotency
 * key is written once; an operation whose caller's deadline has passed
 * when its batch is decided is not written, and no statement of a batch
 * waits longer than its latest caller would (statement_timeout).
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define BATCH_MAX 1024
/* The longest a batch's statement may wait (a lock held elsewhere), also
 * for callers that gave no deadline. */
#define STATEMENT_TIMEOUT_MS 5000

enum { OP_DEBIT, OP_REFUND, OP_CLOSE };

struct acct__op {
	acct__op *next;
	int kind;
	acct__debit debit;        /* OP_DEBIT */
	acct__refund refund;      /* OP_REFUND */
	const char *const *close; /* OP_CLOSE: charges to close earned */
	size_t n_close;
	int64_t deadline_ms;      /* seo_mono_ms(); 0: none */
	/* Results, valid once `done` is set. */
	int done;
	int rc;
	acct_err err;
	char charge_id[ACCT_ID_LEN];
	int64_t remaining;
	int64_t used;
};

/* A locked row: a workspace balance or a charge, as the batch changes it. */
typedef struct row {
	const char *id;        /* in the lock query's result */
	const char *workspace; /* charges only */
	int64_t value;         /* balance, or credits_used */
	int closed;            /* charges: the outcome is known */
	const char *outcome;   /* charges: the outcome this batch sets */
	int changed;
} row;

/* A debit made under an idempotency key, earlier or in this batch. */
typedef struct keyed {
	const char *request_id, *charge_id, *workspace;
	int64_t charged; /* 0 for a call refused for its balance */
} keyed;

/* The rows a batch writes, as unnest() parameters in statement order;
 * a changed row (C_) is an id and its new value. */
enum { L_WS, L_DELTA, L_REASON, L_REF, L_N };
enum { U_ID, U_WS, U_USER, U_KEY, U_ENDPOINT, U_DOMAIN, U_AMOUNT, U_REQUEST,
       U_SETTLE, U_N };
enum { C_ID, C_VALUE, C_OUTCOME, C_N };

typedef struct writes {
	acct__pgarr ledger[L_N];
	acct__pgarr usage[U_N];
	acct__pgarr used[C_N];    /* charges whose credits_used or outcome changed */
	acct__pgarr balance[C_N]; /* workspaces whose balance changed (no outcome) */
	size_t n_ledger, n_usage, n_used, n_balance;
	keyed *keyed;             /* BATCH_MAX + the rows found */
	size_t n_keyed;
} writes;

/* A balance as answered: what the workspace's open leases hold is still
 * the customer's. */
static int64_t shown(const acct__ledger *l, const row *bal)
{
	return bal->value + (l->leases != NULL
				     ? acct__leases_unused_settled(l->leases, bal->id)
				     : 0);
}

static int row_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const row *)elem)->id);
}

static row *row_find(row *rows, size_t n, const char *id)
{
	return n == 0 ? NULL : bsearch(id, rows, n, sizeof(row), row_cmp);
}

/* Copies a lock query's rows, already in strcmp order (COLLATE "C"). */
static int rows_from(PGresult *res, int charges, row **out, size_t *n)
{
	size_t nr = (size_t)PQntuples(res);
	row *rows = calloc(nr != 0 ? nr : 1, sizeof(row));

	if (rows == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		int col = 1;

		rows[i].id = PQgetvalue(res, (int)i, 0);
		if (charges)
			rows[i].workspace = PQgetvalue(res, (int)i, col++);
		rows[i].value = strtoll(PQgetvalue(res, (int)i, col++), NULL, 10);
		if (charges)
			rows[i].closed = PQgetvalue(res, (int)i, col)[0] == 't';
	}
	*out = rows;
	*n = nr;
	return 0;
}

/* The call's usage row, at `amount` credits (0 for a refused call). */
static void add_usage(writes *w, const acct__op *op, int64_t amount)
{
	const acct__debit *d = &op->debit;

	acct__pgarr_add(&w->usage[U_ID], op->charge_id);
	acct__pgarr_add(&w->usage[U_WS], d->workspace_id);
	acct__pgarr_add(&w->usage[U_USER], d->user_id);
	acct__pgarr_add(&w->usage[U_KEY], d->key_id);
	acct__pgarr_add(&w->usage[U_ENDPOINT], d->endpoint);
	acct__pgarr_add(&w->usage[U_DOMAIN], d->domain);
	acct__pgarr_addi(&w->usage[U_AMOUNT], amount);
	acct__pgarr_add(&w->usage[U_REQUEST], d->request_id);
	if (d->request_id != NULL)
		acct__pgarr_addi(&w->usage[U_SETTLE], d->settle_within_ms);
	else
		acct__pgarr_add(&w->usage[U_SETTLE], NULL);
	w->n_usage++;
}

/* 1 (and the operation failed) when its caller's deadline has passed: it
 * must not be written after the caller gave up. */
static int too_late(acct__op *op)
{
	if (op->deadline_ms == 0 || seo_mono_ms() < op->deadline_ms)
		return 0;
	op->rc = acct__fail(&op->err, SEO_ETIMEDOUT, "service_unavailable",
			    "the call's deadline passed before it was written");
	return 1;
}

static const keyed *keyed_find(const writes *w, const char *request_id)
{
	for (size_t i = 0; i < w->n_keyed; i++)
		if (strcmp(w->keyed[i].request_id, request_id) == 0)
			return &w->keyed[i];
	return NULL;
}

/* A debit retried under its key: answered with the first one's charge,
 * nothing written. */
static int debit_again(const acct__ledger *l, acct__op *op, const row *bal,
		       const writes *w)
{
	const acct__debit *d = &op->debit;
	const keyed *k = d->request_id != NULL ? keyed_find(w, d->request_id) : NULL;

	if (k == NULL)
		return 0;
	if (strcmp(k->workspace, d->workspace_id) != 0)
		op->rc = acct__fail(&op->err, SEO_EEXIST, "internal_error",
				    "request id \"%s\" was used by another workspace",
				    d->request_id);
	else if (k->charged < d->amount)
		op->rc = acct__fail(&op->err, SEO_EDENIED, "insufficient_credits",
				    "this call costs %lld credits, the balance is %lld",
				    (long long)d->amount, (long long)shown(l, bal));
	else
		op->rc = 0;
	snprintf(op->charge_id, sizeof(op->charge_id), "%s", k->charge_id);
	op->remaining = shown(l, bal);
	return 1;
}

static void decide_debit(const acct__ledger *l, acct__op *op, row *ws,
			 size_t nws, writes *w)
{
	const acct__debit *d = &op->debit;
	row *bal = row_find(ws, nws, d->workspace_id);

	if (bal == NULL) {
		op->rc = acct__fail(&op->err, SEO_ENOTFOUND, "internal_error",
				    "workspace \"%s\" does not exist",
				    d->workspace_id);
		return;
	}
	if (too_late(op) || debit_again(l, op, bal, w))
		return;
	if (bal->value < d->amount) {
		/* A call billed after its work was made: its row stays, at 0. */
		if (d->keep_refused &&
		    acct__new_time_id("chg_", op->charge_id, &op->err) == 0)
			add_usage(w, op, 0);
		if (d->show_balance)
			op->rc = acct__fail(&op->err, SEO_EDENIED,
					    "insufficient_credits",
					    "this call costs %lld credits, the balance is %lld",
					    (long long)d->amount,
					    (long long)shown(l, bal));
		else
			op->rc = acct__fail(&op->err, SEO_EDENIED,
					    "insufficient_credits",
					    "this call costs %lld credits, more than the balance",
					    (long long)d->amount);
		return;
	}
	op->rc = acct__new_time_id("chg_", op->charge_id, &op->err);
	if (op->rc != 0)
		return;
	/* A free call of a route billed after its work has no ledger row
	 * (a ledger delta is never 0). */
	if (d->amount > 0) {
		bal->value -= d->amount;
		bal->changed = 1;
		acct__pgarr_add(&w->ledger[L_WS], d->workspace_id);
		acct__pgarr_addi(&w->ledger[L_DELTA], -d->amount);
		acct__pgarr_add(&w->ledger[L_REASON], "charge");
		acct__pgarr_add(&w->ledger[L_REF], op->charge_id);
		w->n_ledger++;
	}
	op->remaining = shown(l, bal);
	add_usage(w, op, d->amount);
	if (d->request_id != NULL)
		w->keyed[w->n_keyed++] = (keyed){d->request_id, op->charge_id,
						 d->workspace_id, d->amount};
}

static void decide_refund(const acct__ledger *l, acct__op *op, row *ch,
			  size_t nch, row *ws, size_t nws, writes *w)
{
	const acct__refund *r = &op->refund;
	row *charge = row_find(ch, nch, r->charge_id);
	row *bal;
	int64_t give;

	/* Another workspace's charge is answered as if absent. */
	if (charge == NULL || (r->workspace_id != NULL &&
			       strcmp(charge->workspace, r->workspace_id) != 0)) {
		op->rc = acct__fail(&op->err, SEO_ENOTFOUND, "not_found",
				    "charge \"%s\" does not exist",
				    r->charge_id);
		return;
	}
	bal = row_find(ws, nws, charge->workspace);
	if (bal == NULL) {
		op->rc = acct__fail(&op->err, SEO_ENOTFOUND, "internal_error",
				    "workspace \"%s\" does not exist",
				    charge->workspace);
		return;
	}
	if (too_late(op))
		return;
	if (r->settle) {
		/* The outcome is reported once; a report again, or after the
		 * reconcile job, changes nothing. */
		give = charge->closed || charge->value <= r->used
			       ? 0 : charge->value - r->used;
		if (!charge->closed) {
			charge->closed = 1;
			charge->outcome = give > 0 ? "refunded" : "earned";
			charge->changed = 1;
		}
	} else {
		give = r->amount == 0 || r->amount > charge->value
			       ? charge->value : r->amount;
	}
	/* A fully refunded charge gives nothing and writes nothing. */
	if (give > 0) {
		charge->value -= give;
		charge->changed = 1;
		bal->value += give;
		bal->changed = 1;
		acct__pgarr_add(&w->ledger[L_WS], charge->workspace);
		acct__pgarr_addi(&w->ledger[L_DELTA], give);
		acct__pgarr_add(&w->ledger[L_REASON], "refund");
		acct__pgarr_add(&w->ledger[L_REF], charge->id);
		w->n_ledger++;
	}
	op->rc = 0;
	op->remaining = shown(l, bal);
	op->used = charge->value;
}

/* The charges `op` closes as earned (a debit's earlier calls, or a close). */
static const char *const *closes_of(const acct__op *op, size_t *n)
{
	if (op->kind == OP_CLOSE) {
		*n = op->n_close;
		return op->close;
	}
	*n = op->kind == OP_DEBIT ? op->debit.n_earned : 0;
	return op->kind == OP_DEBIT ? op->debit.earned : NULL;
}

/* Closes what `op` reports earned: nothing moves, and a charge closed
 * already (or unknown) stays as it is. */
static void decide_closes(const acct__op *op, row *ch, size_t nch)
{
	size_t n;
	const char *const *ids = closes_of(op, &n);

	for (size_t i = 0; i < n; i++) {
		row *charge = row_find(ch, nch, ids[i]);

		if (charge != NULL && !charge->closed) {
			charge->closed = 1;
			charge->outcome = "earned";
			charge->changed = 1;
		}
	}
	if (op->kind == OP_CLOSE)
		((acct__op *)op)->rc = 0;
}

/* Queues `q` with the finished arrays, then `extra` as the last parameter. */
static int add_arrays(seo_pg_pipe *p, acct__q q, acct__pgarr *arrs,
		      size_t narrs, const char *extra, acct_err *err)
{
	const char *params[SEO_PG_PIPE_PARAMS];
	size_t n = 0;

	for (size_t i = 0; i < narrs; i++) {
		params[n] = acct__pgarr_done(&arrs[i]);
		if (params[n++] == NULL)
			return acct__fail(err, SEO_ENOMEM, "internal_error",
					  "out of memory");
	}
	if (extra != NULL)
		params[n++] = extra;
	seo_pg_pipe_add(p, q, (int)n, params);
	return 0;
}

/* The changed rows of `rows` as (id, value[, outcome]) arrays; returns
 * how many. */
static size_t changed_rows(const row *rows, size_t n, int charges,
			   acct__pgarr out[C_N])
{
	size_t changed = 0;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].changed) {
			acct__pgarr_add(&out[C_ID], rows[i].id);
			acct__pgarr_addi(&out[C_VALUE], rows[i].value);
			if (charges)
				acct__pgarr_add(&out[C_OUTCOME], rows[i].outcome);
			changed++;
		}
	}
	return changed;
}

/*
 * The writer's session: STATEMENT_TIMEOUT_MS for every batch (a batch
 * whose callers wait less sets its own), commits that do not wait for
 * the disk (a batch with a refund does), and no sequential scan. Every
 * statement of a batch reaches its rows by key, and a plan prepared while
 * a table was small (a new database, before autovacuum's first analyze)
 * would scan the whole table at every batch as it grows: usage's scan made
 * the keyed debit cost 2.5x (docs/benchmarks.md). And generic plans: the
 * planner found a custom plan of the balances' update (arrays of one
 * batch's workspaces) cheaper every time, and planned it at every batch,
 * 82 us of PostgreSQL's CPU against 39 us running it.
 */
static int connect_writer(acct__ledger *l, acct_err *err)
{
	char sql[192];
	int rc = acct__connect(l->url, &l->conn.pg, err);

	snprintf(sql, sizeof(sql),
		 "SET statement_timeout = %d; SET synchronous_commit = off; "
		 "SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan",
		 STATEMENT_TIMEOUT_MS);
	if (rc == 0 && acct__exec_sql(l->conn.pg, sql) != 0)
		rc = acct__fail(err, SEO_EDB, "internal_error",
				"could not set the ledger's session");
	return rc;
}

static int reconnect(acct__ledger *l, acct_err *err)
{
	PQfinish(l->conn.pg);
	l->conn.pg = NULL;
	l->conn.prepared = 0;
	return connect_writer(l, err);
}

/* Runs `p`. The round trip that begins the transaction has written
 * nothing, so it runs again on a fresh connection when the server had
 * dropped ours. */
static int round_trip(acct__ledger *l, seo_pg_pipe *p, acct_err *err)
{
	int begins = p->n > 0 && p->st[0].q == ACCT_Q_BEGIN;
	int rc = acct__pipe_run(&l->conn, p, err);

	if (rc != 0 && begins && seo_pg_dead(&l->conn, rc)) {
		rc = reconnect(l, err);
		if (rc == 0)
			rc = acct__pipe_run(&l->conn, p, err);
	}
	return rc;
}

/* Queues `q` with `arr` as its one parameter; its result's slot, or -1
 * when out of memory. */
static int add_lock(seo_pg_pipe *p, acct__q q, acct__pgarr *arr)
{
	const char *param = acct__pgarr_done(arr);

	if (param == NULL)
		return -1;
	seo_pg_pipe_add(p, q, 1, &param);
	return p->n - 1;
}

/* The result of `slot` taken out of `p` (NULL for -1). */
static PGresult *take_res(seo_pg_pipe *p, int slot)
{
	PGresult *r = slot >= 0 ? p->res[slot] : NULL;

	if (slot >= 0)
		p->res[slot] = NULL;
	return r;
}

/*
 * The batch's statement timeout, into `out`: what its latest caller still
 * waits. 0 when that is STATEMENT_TIMEOUT_MS or more (a caller without a
 * deadline waits that long), which the connection holds already: no
 * statement to send.
 */
static int batch_timeout(acct__op **ops, size_t n, char out[24])
{
	int64_t now = seo_mono_ms(), latest = 1;

	for (size_t i = 0; i < n; i++) {
		if (ops[i]->deadline_ms == 0)
			return 0;
		if (ops[i]->deadline_ms - now > latest)
			latest = ops[i]->deadline_ms - now;
	}
	if (latest >= STATEMENT_TIMEOUT_MS)
		return 0;
	snprintf(out, 24, "%lld", (long long)latest);
	return 1;
}

static void writes_init(writes *w, keyed *keyed)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < L_N; i++)
		acct__pgarr_init(&w->ledger[i]);
	for (size_t i = 0; i < U_N; i++)
		acct__pgarr_init(&w->usage[i]);
	for (size_t i = 0; i < C_N; i++) {
		acct__pgarr_init(&w->used[i]);
		acct__pgarr_init(&w->balance[i]);
	}
	w->keyed = keyed;
}

static void writes_free(writes *w)
{
	for (size_t i = 0; i < L_N; i++)
		acct__pgarr_free(&w->ledger[i]);
	for (size_t i = 0; i < U_N; i++)
		acct__pgarr_free(&w->usage[i]);
	for (size_t i = 0; i < C_N; i++) {
		acct__pgarr_free(&w->used[i]);
		acct__pgarr_free(&w->balance[i]);
	}
	free(w->keyed);
}

/* Reads the locked rows of `res` (NULL: none). */
static int read_rows(PGresult *res, int charges, row **rows, size_t *n,
		     acct_err *err)
{
	if (res == NULL)
		return 0;
	if (rows_from(res, charges, rows, n) != 0)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	return 0;
}

/*
 * One transaction in two round trips: BEGIN, the statement timeout (when
 * a caller waits less than the connection's), the locks of the charges
 * (refunded or closed) and of the workspaces, with the debits already
 * made under the batch's keys; then every write and COMMIT. Refunds need
 * their charges' workspaces, known once the charges are locked: a batch
 * with refunds takes three. Statements with nothing to do are not sent.
 * Each operation is decided after the locks, right before the COMMIT is
 * sent: one whose caller's deadline has passed is not written.
 */
static int apply(acct__ledger *l, acct__op **ops, size_t n, acct_err *err)
{
	PGresult *ch_res = NULL, *ws_res = NULL, *keys_res = NULL;
	row *ch = NULL, *ws = NULL;
	size_t nch = 0, nws = 0, nkeys, refunds = 0;
	acct__pgarr charge_ids, ws_ids, keys;
	seo_pg_pipe p;
	writes w;
	char now[24], timeout[24];
	const char *timeout_param = timeout;
	int rc = 0, ch_slot = -1, ws_slot = -1, keys_slot = -1;

	acct__pgarr_init(&charge_ids);
	acct__pgarr_init(&ws_ids);
	acct__pgarr_init(&keys);
	writes_init(&w, NULL);
	seo_pg_pipe_init(&p);
	snprintf(now, sizeof(now), "%lld", (long long)seo_now_ms());

	/* Charges first, then workspaces, always: one lock order. */
	seo_pg_pipe_add(&p, ACCT_Q_BEGIN, 0, NULL);
	if (batch_timeout(ops, n, timeout))
		seo_pg_pipe_add(&p, ACCT_Q_LEDGER_TIMEOUT, 1, &timeout_param);
	for (size_t i = 0; i < n; i++) {
		size_t nc;
		const char *const *closes = closes_of(ops[i], &nc);

		for (size_t j = 0; j < nc; j++)
			acct__pgarr_add(&charge_ids, closes[j]);
		if (ops[i]->kind == OP_REFUND) {
			acct__pgarr_add(&charge_ids, ops[i]->refund.charge_id);
			refunds++;
		} else if (ops[i]->kind == OP_DEBIT) {
			acct__pgarr_add(&ws_ids, ops[i]->debit.workspace_id);
			if (ops[i]->debit.request_id != NULL)
				acct__pgarr_add(&keys, ops[i]->debit.request_id);
		}
	}
	if (refunds > 0)
		seo_pg_pipe_add(&p, ACCT_Q_LEDGER_DURABLE, 0, NULL);
	if (charge_ids.len > 0 &&
	    (ch_slot = add_lock(&p, ACCT_Q_LEDGER_LOCK_CHARGES, &charge_ids)) < 0)
		goto oom;
	if (refunds > 0) {
		rc = round_trip(l, &p, err);
		if (rc == 0)
			rc = read_rows(ch_res = take_res(&p, ch_slot), 1, &ch,
				       &nch, err);
		seo_pg_pipe_clear(&p);
		if (rc != 0)
			goto out;
		for (size_t i = 0; i < n; i++) {
			row *c = ops[i]->kind == OP_REFUND
					 ? row_find(ch, nch, ops[i]->refund.charge_id)
					 : NULL;

			if (c != NULL)
				acct__pgarr_add(&ws_ids, c->workspace);
		}
	}
	if (ws_ids.len > 0 &&
	    (ws_slot = add_lock(&p, ACCT_Q_LEDGER_LOCK_WORKSPACES, &ws_ids)) < 0)
		goto oom;
	if (keys.len > 0 &&
	    (keys_slot = add_lock(&p, ACCT_Q_LEDGER_BY_REQUEST, &keys)) < 0)
		goto oom;
	if (p.n > 0) {
		rc = round_trip(l, &p, err);
		if (rc == 0 && refunds == 0)
			rc = read_rows(ch_res = take_res(&p, ch_slot), 1, &ch,
				       &nch, err);
		if (rc == 0)
			rc = read_rows(ws_res = take_res(&p, ws_slot), 0, &ws,
				       &nws, err);
		keys_res = take_res(&p, keys_slot);
		seo_pg_pipe_clear(&p);
		if (rc != 0)
			goto out;
	}

	nkeys = keys_res != NULL ? (size_t)PQntuples(keys_res) : 0;
	w.keyed = calloc(n + nkeys + 1, sizeof(keyed));
	if (w.keyed == NULL)
		goto oom;
	for (size_t i = 0; i < nkeys; i++)
		w.keyed[w.n_keyed++] = (keyed){
			PQgetvalue(keys_res, (int)i, 0), PQgetvalue(keys_res, (int)i, 1),
			PQgetvalue(keys_res, (int)i, 2),
			strtoll(PQgetvalue(keys_res, (int)i, 3), NULL, 10)};
	for (size_t i = 0; i < n; i++) {
		decide_closes(ops[i], ch, nch);
		if (ops[i]->kind == OP_DEBIT)
			decide_debit(l, ops[i], ws, nws, &w);
		else if (ops[i]->kind == OP_REFUND)
			decide_refund(l, ops[i], ch, nch, ws, nws, &w);
	}
	w.n_used = changed_rows(ch, nch, 1, w.used);
	w.n_balance = changed_rows(ws, nws, 0, w.balance);

	if (w.n_ledger > 0)
		rc = add_arrays(&p, ACCT_Q_LEDGER_INSERT, w.ledger, L_N, now,
				err);
	if (rc == 0 && w.n_usage > 0)
		rc = add_arrays(&p, ACCT_Q_USAGE_INSERT, w.usage, U_N, now, err);
	if (rc == 0 && w.n_used > 0)
		rc = add_arrays(&p, ACCT_Q_USAGE_REFUND, w.used, C_N, NULL, err);
	if (rc == 0 && w.n_balance > 0)
		rc = add_arrays(&p, ACCT_Q_BALANCE_SET, w.balance, C_OUTCOME,
				NULL, err); /* (id, value): no outcome */
	if (rc != 0)
		goto out;
	seo_pg_pipe_add(&p, ACCT_Q_COMMIT, 0, NULL);
	rc = round_trip(l, &p, err);
	/* Holders of leases of a workspace whose balance changed here learn
	 * their `outside` again. */
	for (size_t i = 0; rc == 0 && l->leases != NULL && i < nws; i++)
		if (ws[i].changed)
			acct__leases_balance_changed(l->leases, ws[i].id, 0);
	goto out;
oom:
	rc = acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
out:
	/* A failure leaves the transaction open, aborted or ended: ROLLBACK
	 * ends it, and only warns when none is open. */
	if (rc != 0)
		seo_pg_rollback(&l->conn);
	seo_pg_pipe_clear(&p);
	writes_free(&w);
	acct__pgarr_free(&charge_ids);
	acct__pgarr_free(&ws_ids);
	acct__pgarr_free(&keys);
	free(ch);
	free(ws);
	PQclear(ch_res);
	PQclear(ws_res);
	PQclear(keys_res);
	return rc;
}

/* A connection left broken or busy by the last batch is replaced. */
static int ready(acct__ledger *l, acct_err *err)
{
	if (l->conn.pg != NULL && PQstatus(l->conn.pg) == CONNECTION_OK &&
	    PQtransactionStatus(l->conn.pg) == PQTRANS_IDLE)
		return 0;
	return reconnect(l, err);
}

static void run_batch(acct__ledger *l, acct__op **ops, size_t n)
{
	acct_err err = {0};
	int rc = ready(l, &err);

	if (rc == 0)
		rc = apply(l, ops, n, &err);
	atomic_fetch_add(&l->batches, 1);
	atomic_fetch_add(&l->ops, n);
	if (rc == 0)
		return;
	/* A session the server ended may still look fine to libpq. */
	if (l->conn.pg != NULL && seo_pg_dead(&l->conn, rc)) {
		PQfinish(l->conn.pg);
		l->conn.pg = NULL;
	}
	/* Nothing of the batch was committed (or, when the connection broke
	 * at COMMIT, nobody knows): every operation fails alike, unavailable
	 * when the database is. */
	log_error("ledger batch of %zu operations failed: %s", n, err.message);
	for (size_t i = 0; i < n; i++) {
		ops[i]->rc = rc;
		ops[i]->err = err;
	}
}

/* Under l->mu: takes up to BATCH_MAX operations off the queue. */
static size_t take(acct__ledger *l, acct__op **batch)
{
	size_t n = 0;

	while (l->head != NULL && n < BATCH_MAX) {
		batch[n++] = l->head;
		l->head = l->head->next;
	}
	if (l->head == NULL)
		l->tail = NULL;
	return n;
}

/* Under l->mu, released while writing: writes one batch and answers it. */
static void write_batch(acct__ledger *l, acct__op **batch)
{
	size_t n = take(l, batch);

	l->writing = 1;
	pthread_mutex_unlock(&l->mu);
	run_batch(l, batch, n);
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < n; i++)
		batch[i]->done = 1;
	l->writing = 0;
	pthread_cond_broadcast(&l->done);
}

/* Writes the batches that queue up while another is written, one after
 * the other without waiting to be woken. */
static void *writer_main(void *arg)
{
	acct__ledger *l = arg;
	acct__op *batch[BATCH_MAX];

	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (l->writing || (l->head == NULL && !l->stop))
			pthread_cond_wait(&l->work, &l->mu);
		if (l->head == NULL)
			break;
		write_batch(l, batch);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int acct__ledger_start(acct__ledger *l, const char *url, acct_err *err)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->url = strdup(url);
	if (l->url == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	l->conn = seo_pg_conn_of(NULL, &acct__stmts, 0);
	rc = connect_writer(l, err);
	if (rc != 0)
		goto fail;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->done, NULL);
	if (pthread_create(&l->thread, NULL, writer_main, l) != 0) {
		rc = acct__fail(err, SEO_EIO, "internal_error",
				"could not start the ledger writer");
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->work);
		pthread_cond_destroy(&l->done);
		goto fail;
	}
	return 0;
fail:
	PQfinish(l->conn.pg);
	free(l->url);
	return rc;
}

void acct__ledger_stop(acct__ledger *l)
{
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_signal(&l->work);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->done);
	PQfinish(l->conn.pg);
	free(l->url);
}

/*
 * Queues `op` and waits for its commit. A caller that finds no batch being
 * written writes one itself (everything queued, its own operation
 * included): a call alone wakes no other thread. What queues meanwhile is
 * left to the writer thread, woken once.
 */
static int submit(acct__ledger *l, acct__op *op, acct_err *err)
{
	acct__op *batch[BATCH_MAX];

	pthread_mutex_lock(&l->mu);
	if (l->tail != NULL)
		l->tail->next = op;
	else
		l->head = op;
	l->tail = op;
	atomic_fetch_add(&l->queued, 1);
	while (!op->done) {
		if (l->writing) {
			pthread_cond_wait(&l->done, &l->mu);
			continue;
		}
		write_batch(l, batch);
		if (l->head != NULL || l->stop)
			pthread_cond_signal(&l->work);
	}
	pthread_mutex_unlock(&l->mu);
	if (op->rc != 0)
		*err = op->err;
	return op->rc;
}

int acct__ledger_debit(acct__ledger *l, const acct__debit *d,
		       char charge_id[ACCT_ID_LEN], int64_t *remaining,
		       acct_err *err)
{
	acct__op op = {.kind = OP_DEBIT, .debit = *d, .deadline_ms = d->deadline_ms};
	int rc = submit(l, &op, err);

	if (rc != 0)
		return rc;
	memcpy(charge_id, op.charge_id, ACCT_ID_LEN);
	*remaining = op.remaining;
	return 0;
}

int acct__ledger_refund(acct__ledger *l, const acct__refund *r,
			int64_t *remaining, int64_t *used, acct_err *err)
{
	acct__op op = {.kind = OP_REFUND, .refund = *r, .deadline_ms = r->deadline_ms};
	int rc = submit(l, &op, err);

	if (rc != 0)
		return rc;
	*remaining = op.remaining;
	*used = op.used;
	return 0;
}

int acct__ledger_close(acct__ledger *l, const char *const *ids, size_t n,
		       int64_t deadline_ms, acct_err *err)
{
	acct__op op = {.kind = OP_CLOSE, .close = ids, .n_close = n,
		       .deadline_ms = deadline_ms};

	return submit(l, &op, err);
}
