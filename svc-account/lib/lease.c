/*
 * Account/Lease: a holder (a gateway) reports the calls it served from its
 * lease of a workspace's credits, then closes the lease or tops it up
 * (docs/decisions.md, "Credit leases"). One transaction on a pooled
 * connection: the workspace's row and the holder's open lease locked
 * (workspace first, as everywhere), the report's stream and the other
 * holders' leases read, in one round trip; then the calls not written
 * yet, their cost decided here, in batches (a row per key: migration 008)
 * in one more; then the ledger row, the lease, the stream, the balance and
 * COMMIT in one more. A transaction that gives credits back commits
 * synchronously, like a refund; the others do not wait for the disk, like
 * debits.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/json_write.h"
#include "seo/log.h"
#include "seo/util.h"

#define HOLDER_MAX 128
#define STREAM_MAX 64
/* The longest a Lease waits for a row lock held elsewhere (then 503
 * service_unavailable; the holder reports again). */
#define LOCK_WAIT_MS "5000"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

static int bad(acct_err *err, const char *msg)
{
	return acct__fail(err, SEO_EINVAL, "invalid_parameter", "%s", msg);
}

static int check_call(const LeaseCall *c, acct_err *err)
{
	if (c->request_id == NULL || c->request_id[0] == '\0')
		return bad(err, "every reported call needs a request_id");
	if (c->endpoint == NULL || c->endpoint[0] == '\0')
		return bad(err, "every reported call needs an endpoint");
	if (c->charged < 0 || c->created_at < 0)
		return bad(err, "charged and created_at must not be negative");
	if (c->credits_used < 0 || c->credits_used > c->charged)
		return bad(err, "credits_used must be between 0 and charged");
	return 0;
}

static int check(const LeaseRequest *in, acct_err *err)
{
	if (in->holder == NULL || in->holder[0] == '\0')
		return bad(err, "a lease needs a holder");
	if (strlen(in->holder) > HOLDER_MAX)
		return bad(err, "holder is longer than 128 bytes");
	if (in->workspace_id == NULL || in->workspace_id[0] == '\0')
		return bad(err, "a lease needs a workspace_id");
	if (in->want < 0)
		return bad(err, "want must not be negative");
	if (in->n_calls > ACCT_LEASE_CALLS_MAX)
		return bad(err, "a report carries at most 4096 calls");
	if (in->n_calls == 0)
		return 0;
	if (in->stream == NULL || in->stream[0] == '\0' ||
	    strlen(in->stream) > STREAM_MAX)
		return bad(err, "a report of calls needs a stream of 1 to 64 bytes");
	if (in->first_seq < 1 || in->first_seq > (uint64_t)(INT64_MAX - ACCT_LEASE_CALLS_MAX))
		return bad(err, "a report of calls needs a first_seq of 1 or more");
	for (size_t i = 0; i < in->n_calls; i++)
		if (check_call(in->calls[i], err) != 0)
			return SEO_EINVAL;
	return 0;
}

/* The transaction's state between its round trips. */
typedef struct tx {
	const LeaseRequest *in;
	int64_t balance;
	int mine;                 /* the holder had an open lease */
	int open;                 /* it has one after this call */
	int closed;               /* this call closed it */
	char lease_id[ACCT_ID_LEN];
	int64_t granted, used;
	int64_t reported;         /* credits_used of the calls written now */
	int64_t others_n, others_unused;
	int64_t delta;            /* the ledger row: balance change */
	int64_t stream_seq;       /* the stream's last call written before */
	size_t skip;              /* calls[0 .. skip) were written before */
	int64_t *cost;            /* credits_used of calls[skip ..] */
} tx;

static int64_t col_int(PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/*
 * Calls reported beyond the lease: a holder should never spend more than
 * it was granted. What is over is taken from the balance as a top-up; what
 * the balance cannot cover is not charged (the last rows lowered): the
 * operator's loss, never the customer's.
 */
static void overspent(tx *t)
{
	int64_t over = t->used - t->granted, take = over, left;

	if (take > t->balance)
		take = t->balance;
	t->granted += take;
	t->balance -= take;
	t->delta -= take;
	left = over - take;
	log_warn("lease %s of workspace %s: calls reported %lld credits beyond "
		 "it, %lld not charged", t->lease_id, t->in->workspace_id,
		 (long long)over, (long long)left);
	for (size_t i = t->in->n_calls - t->skip; i-- > 0 && left > 0;) {
		int64_t cut = t->cost[i] < left ? t->cost[i] : left;

		t->cost[i] -= cut;
		left -= cut;
	}
	t->used = t->granted;
}

/* Which calls are new (numbered after the stream's last written) and what
 * each costs: what the holder says on its open lease, nothing without. */
static void price(tx *t)
{
	const LeaseRequest *in = t->in;
	int64_t first = (int64_t)in->first_seq;

	t->skip = 0;
	if (in->n_calls > 0 && t->stream_seq >= first)
		t->skip = t->stream_seq - first + 1 < (int64_t)in->n_calls
				  ? (size_t)(t->stream_seq - first + 1)
				  : in->n_calls;
	for (size_t i = t->skip; i < in->n_calls; i++) {
		t->cost[i - t->skip] = t->mine ? in->calls[i]->credits_used : 0;
		t->reported += t->cost[i - t->skip];
	}
	t->used += t->reported;
}

/* Decides the close or the top-up on the locked state. */
static int decide(acct_service *a, tx *t, acct_err *err)
{
	const LeaseRequest *in = t->in;
	int64_t top;

	price(t);
	if (t->mine && t->used > t->granted)
		overspent(t);
	if (!t->mine && in->n_calls > t->skip)
		log_warn("lease report of %zu calls for workspace %s by %s "
			 "without an open lease: recorded free",
			 in->n_calls - t->skip, in->workspace_id, in->holder);
	t->open = t->mine;
	if (in->close) {
		if (t->mine) {
			t->delta += t->granted - t->used;
			t->balance += t->granted - t->used;
			t->closed = 1;
			t->open = 0;
		}
		return 0;
	}
	top = t->balance / ACCT_LEASE_SHARE;
	if (in->want < top)
		top = in->want;
	if (t->balance < ACCT_LEASE_MIN_BALANCE || top < 1 ||
	    acct__leases_recalled(&a->leases, in->workspace_id))
		top = 0;
	/* A watch lease (hold) is opened holding nothing: its holder hears
	 * the balance's changes and shows it from memory. */
	if (top == 0 && !(in->hold && !t->mine))
		return 0;
	if (!t->mine) {
		int rc = acct__new_id("lse_", t->lease_id, err);

		if (rc != 0)
			return rc;
		t->open = 1;
	}
	t->granted += top;
	t->balance -= top;
	t->delta -= top;
	return 0;
}

/* Round trip 1: BEGIN, the locks, the stream, the other leases. */
static int lock_and_read(seo_pg_conn *c, tx *t, acct_err *err)
{
	const LeaseRequest *in = t->in;
	seo_pg_pipe p;
	const char *ws = in->workspace_id, *holder = in->holder;
	const char *mine[2] = {holder, ws}, *others[2] = {ws, holder};
	const char *stream[3] = {ws, holder, in->stream}, *timeout = LOCK_WAIT_MS;
	int rc, s_ws, s_mine, s_stream = -1, s_others;

	seo_pg_pipe_init(&p);
	seo_pg_pipe_add(&p, ACCT_Q_BEGIN, 0, NULL);
	seo_pg_pipe_add(&p, ACCT_Q_LEDGER_TIMEOUT, 1, &timeout);
	if (!in->close)
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_ASYNC, 0, NULL);
	s_ws = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_LOCK_WS, 1, &ws);
	s_mine = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_MINE, 2, mine);
	if (in->n_calls > 0) {
		s_stream = p.n;
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_STREAM, 3, stream);
	}
	s_others = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_OTHERS, 2, others);
	rc = acct__pipe_run(c, &p, err);
	if (rc == 0 && PQntuples(p.res[s_ws]) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "not_found",
				"workspace \"%s\" does not exist", ws);
	if (rc == 0) {
		PGresult *m = p.res[s_mine], *o = p.res[s_others];

		t->balance = col_int(p.res[s_ws], 0, 0);
		t->mine = PQntuples(m) > 0;
		if (t->mine) {
			snprintf(t->lease_id, sizeof(t->lease_id), "%s",
				 PQgetvalue(m, 0, 0));
			t->granted = col_int(m, 0, 1);
			t->used = col_int(m, 0, 2);
		}
		t->others_n = col_int(o, 0, 0);
		t->others_unused = col_int(o, 0, 1);
		if (s_stream >= 0 && PQntuples(p.res[s_stream]) > 0)
			t->stream_seq = col_int(p.res[s_stream], 0, 0);
	}
	seo_pg_pipe_clear(&p);
	return rc;
}

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static const char *or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* A new call of the report, with what it finally costs. */
typedef struct batch_call {
	const LeaseCall *call;
	int64_t cost;
	size_t i; /* its place in the report */
} batch_call;

/* Orders two calls by key, then user: a batch is a run of 0. */
static int key_cmp(const batch_call *a, const batch_call *b)
{
	int d = strcmp(or_empty(a->call->key_id), or_empty(b->call->key_id));

	return d != 0 ? d
		      : strcmp(or_empty(a->call->user_id), or_empty(b->call->user_id));
}

/* By key and user, then as reported: each batch keeps the calls' order. */
static int by_key(const void *x, const void *y)
{
	const batch_call *a = x, *b = y;
	int d = key_cmp(a, b);

	return d != 0 ? d : (a->i > b->i) - (a->i < b->i);
}

static void jw_text(seo_jw *w, const char *s)
{
	if (s == NULL || s[0] == '\0')
		seo_jw_raw(w, "null", 4);
	else
		seo_jw_string_lossy(w, s, strlen(s));
}

/* One batch's row of usage_batches (migration 008): its parameters, and
 * the calls' JSON text they point to (the batch's; free()d by the
 * caller). */
typedef struct batch_row {
	char num[5][24];
	char *calls;
	const char *params[9];
} batch_row;

static int batch_make(batch_row *b, const char *id, const char *ws,
		      const batch_call *c, size_t n, int64_t now, acct_err *err)
{
	seo_jw w = SEO_JW_INIT;
	int64_t first = INT64_MAX, last = 0, credits = 0;

	seo_jw_char(&w, '[');
	for (size_t i = 0; i < n; i++) {
		const LeaseCall *k = c[i].call;
		int64_t at = k->created_at > 0 ? k->created_at : now;

		first = at < first ? at : first;
		last = at > last ? at : last;
		credits += c[i].cost;
		seo_jw_raw(&w, i == 0 ? "[" : ",[", i == 0 ? 1 : 2);
		seo_jw_int(&w, at);
		seo_jw_char(&w, ',');
		jw_text(&w, k->endpoint);
		seo_jw_char(&w, ',');
		jw_text(&w, k->domain);
		seo_jw_char(&w, ',');
		seo_jw_int(&w, k->charged);
		seo_jw_char(&w, ',');
		seo_jw_int(&w, c[i].cost);
		seo_jw_char(&w, ',');
		jw_text(&w, k->request_id);
		seo_jw_raw(&w, ",null]", 6);
	}
	seo_jw_char(&w, ']');
	b->calls = seo_jw_finish(&w, NULL);
	if (b->calls == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
	snprintf(b->num[0], sizeof(b->num[0]), "%lld", (long long)first);
	snprintf(b->num[1], sizeof(b->num[1]), "%lld", (long long)last);
	snprintf(b->num[2], sizeof(b->num[2]), "%zu", n);
	snprintf(b->num[3], sizeof(b->num[3]), "%lld", (long long)credits);
	b->params[0] = id;
	b->params[1] = ws;
	b->params[2] = or_null(c[0].call->user_id);
	b->params[3] = or_null(c[0].call->key_id);
	for (size_t i = 0; i < 4; i++)
		b->params[4 + i] = b->num[i];
	b->params[8] = b->calls;
	return 0;
}

/* The batches of calls[*at ..], up to SEO_PG_PIPE_MAX of them in one
 * round trip; *at moves past what was written. */
static int write_batches(seo_pg_conn *c, const char *ws, const batch_call *calls,
			 size_t n, size_t *at, int64_t now, acct_err *err)
{
	char ids[SEO_PG_PIPE_MAX][ACCT_ID_LEN];
	batch_row b[SEO_PG_PIPE_MAX];
	seo_pg_pipe p;
	int nb = 0, rc;

	rc = acct__new_time_ids("ubt_", ids, SEO_PG_PIPE_MAX, err);
	seo_pg_pipe_init(&p);
	while (rc == 0 && nb < SEO_PG_PIPE_MAX && *at < n) {
		size_t end = *at + 1;

		while (end < n && key_cmp(&calls[*at], &calls[end]) == 0)
			end++;
		rc = batch_make(&b[nb], ids[nb], ws, calls + *at, end - *at, now,
				err);
		if (rc == 0)
			seo_pg_pipe_add(&p, ACCT_Q_LEASE_USAGE_BATCH, 9,
					b[nb++].params);
		*at = end;
	}
	if (rc == 0)
		rc = acct__pipe_run(c, &p, err);
	seo_pg_pipe_clear(&p);
	for (int i = 0; i < nb; i++)
		free(b[i].calls);
	return rc;
}

/* The new calls' usage rows: a batch per key and user (migration 008),
 * each holding its calls in the order reported; `now` stands for a call
 * without its time. Leased rows have no settle time: the reconcile job
 * never touches them. */
static int write_usage(seo_pg_conn *c, const tx *t, int64_t now,
		       acct_err *err)
{
	const LeaseRequest *in = t->in;
	size_t n = in->n_calls - t->skip, at = 0;
	batch_call *calls;
	int rc = 0;

	if (n == 0)
		return 0;
	calls = malloc(n * sizeof(*calls));
	if (calls == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
	for (size_t i = 0; i < n; i++)
		calls[i] = (batch_call){in->calls[t->skip + i], t->cost[i], i};
	qsort(calls, n, sizeof(*calls), by_key);
	while (rc == 0 && at < n)
		rc = write_batches(c, in->workspace_id, calls, n, &at, now, err);
	free(calls);
	return rc;
}

/* The last round trip: the writes and COMMIT; *seq the workspace's
 * lease_seq. */
static int write_and_commit(seo_pg_conn *c, tx *t, int64_t now, int64_t *seq,
			    acct_err *err)
{
	const char *ws = t->in->workspace_id;
	const LeaseRequest *in = t->in;
	char snow[24], granted[24], used[24], delta[24], balance[24], last[24];
	char payload[ACCT_ID_LEN + sizeof(ACCT_AUTH_LEASE_PREFIX)];
	const char *lease[5], *bal[2] = {ws, balance}, *notify = payload;
	const char *stream[5] = {ws, in->holder, in->stream, last, snow};
	acct__pgarr l[4];
	seo_pg_pipe p;
	int rc = 0, s_ws;

	snprintf(snow, sizeof(snow), "%lld", (long long)now);
	snprintf(granted, sizeof(granted), "%lld", (long long)t->granted);
	snprintf(used, sizeof(used), "%lld", (long long)t->used);
	snprintf(delta, sizeof(delta), "%lld", (long long)t->delta);
	snprintf(balance, sizeof(balance), "%lld", (long long)t->balance);
	snprintf(payload, sizeof(payload), "%s%s", ACCT_AUTH_LEASE_PREFIX, ws);
	snprintf(last, sizeof(last), "%lld",
		 (long long)(in->first_seq + in->n_calls - 1));
	for (size_t i = 0; i < 4; i++)
		acct__pgarr_init(&l[i]);
	seo_pg_pipe_init(&p);
	/* Numbers only grow: a late report of calls written before leaves
	 * the stream as it is. */
	if (in->n_calls > t->skip)
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_STREAM_SET, 5, stream);
	if (t->delta != 0) {
		const char *ledger[5];

		acct__pgarr_add(&l[0], ws);
		acct__pgarr_addi(&l[1], t->delta);
		acct__pgarr_add(&l[2], "lease");
		acct__pgarr_add(&l[3], t->lease_id);
		for (size_t i = 0; i < 4; i++)
			ledger[i] = acct__pgarr_done(&l[i]);
		ledger[4] = snow;
		seo_pg_pipe_add(&p, ACCT_Q_LEDGER_INSERT, 5, ledger);
	}
	if (t->mine) {
		lease[0] = t->lease_id;
		lease[1] = granted;
		lease[2] = used;
		lease[3] = snow;
		lease[4] = t->closed ? snow : NULL;
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_UPDATE, 5, lease);
	} else if (t->open) {
		lease[0] = t->lease_id;
		lease[1] = ws;
		lease[2] = t->in->holder;
		lease[3] = granted;
		lease[4] = snow;
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_INSERT, 5, lease);
	}
	/* Every replica reads the workspace's leases again: a recall may
	 * wait for this close elsewhere. */
	if (t->closed)
		seo_pg_pipe_add(&p, ACCT_Q_NOTIFY, 1, &notify);
	s_ws = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_WS_SET, 2, bal);
	seo_pg_pipe_add(&p, ACCT_Q_COMMIT, 0, NULL);
	for (size_t i = 0; i < 4 && t->delta != 0; i++)
		if (l[i].oom)
			rc = acct__fail(err, SEO_ENOMEM, "internal_error",
					"out of memory");
	if (rc == 0)
		rc = acct__pipe_run(c, &p, err);
	if (rc == 0)
		*seq = col_int(p.res[s_ws], 0, 0);
	seo_pg_pipe_clear(&p);
	for (size_t i = 0; i < 4; i++)
		acct__pgarr_free(&l[i]);
	return rc;
}

int acct__lease(acct_service *a, const LeaseRequest *in, acct__lease_out *out,
		acct_err *err)
{
	int64_t now = seo_now_ms(), seq = 0;
	seo_pg_conn *c;
	tx t = {.in = in};
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check(in, err);
	if (rc != 0)
		return rc;
	rc = acct__pool_get(a->pool, &c, err);
	if (rc != 0)
		return rc;
	t.cost = calloc(in->n_calls + 1, sizeof(*t.cost));
	if (t.cost == NULL)
		rc = acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
	if (rc == 0)
		rc = lock_and_read(c, &t, err);
	if (rc == 0)
		rc = decide(a, &t, err);
	if (rc == 0)
		rc = write_usage(c, &t, now, err);
	if (rc == 0) {
		pthread_rwlock_wrlock(&a->leases.commit);
		rc = write_and_commit(c, &t, now, &seq, err);
		if (rc == 0)
			acct__leases_set(&a->leases, in->workspace_id, seq,
					 t.others_n + (t.open ? 1 : 0),
					 t.others_unused +
						 (t.open ? t.granted - t.used : 0));
		pthread_rwlock_unlock(&a->leases.commit);
	}
	/* Calls spent from this lease lower what the other holders are
	 * answered as `outside`: they ask again (a watch lease follows). */
	if (rc == 0 && t.mine && t.reported > 0 && t.others_n > 0)
		acct__watch_lease(a->leases.watch, ACCT_WATCH_BALANCE,
				  in->workspace_id, 0);
	if (rc != 0)
		seo_pg_rollback(c);
	seo_pg_pool_put(a->pool, c);
	free(t.cost);
	if (rc != 0)
		return rc;
	if (t.open) {
		memcpy(out->lease_id, t.lease_id, sizeof(out->lease_id));
		out->granted = t.granted;
		out->used = t.used;
	}
	out->outside = t.balance + t.others_unused;
	out->ttl_ms = ACCT_LEASE_TTL_MS;
	return 0;
}

/* Leases not renewed since the cutoff, by workspace: closed. */
static const acct__sweep expiry = {
	ACCT_Q_LEASE_EXPIRE_LOCK, 200, {{ACCT_Q_LEASE_EXPIRE, 3}}, 1,
};

int acct__lease_expire(seo_pg_conn *c, int64_t cutoff_ms, int64_t now_ms,
		       int64_t *n, char *err, size_t err_len)
{
	char forget[24];
	const char *p = forget;
	int rc = acct__sweep_run(c, &expiry, cutoff_ms, now_ms, n, err, err_len);

	/* Streams silent for a day: nothing of theirs can still arrive. */
	snprintf(forget, sizeof(forget), "%lld",
		 (long long)(now_ms - ACCT_LEASE_STREAM_KEEP_MS));
	if (rc == 0)
		rc = seo_pg_exec(c, ACCT_Q_LEASE_STREAMS_FORGET, 1, &p, NULL, err,
				 err_len);
	return rc;
}
