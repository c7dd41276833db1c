/*
 * Account/Lease and Account/LeaseBatch: a holder (a gateway) reports the
 * calls it served from its leases of workspaces' credits, then closes
 * each lease or tops it up (docs/decisions.md, "Credit leases"). A batch
 * holds one report per workspace, a Lease is the batch of one; either is
 * one transaction on a pooled connection of three round trips whatever
 * its size: the workspaces' rows locked in one statement in id order (as
 * everywhere; they guard their leases), the holder's open leases of them,
 * the reports' streams and the other holders' leases read; then the calls
 * not written yet, their cost decided here, in batches (a row per report
 * and key: migration 008) in one statement; then the streams, the ledger
 * rows, the leases and the balances, one statement each for all the
 * reports, and COMMIT. A transaction that gives credits back commits synchronously,
 * like a refund; the others do not wait for the disk, like debits.
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

static int oom(acct_err *err)
{
	return acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
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

/* One report; its holder and its number of calls are the batch's
 * (check_batch()). */
static int check(const LeaseRequest *in, acct_err *err)
{
	if (in->workspace_id == NULL || in->workspace_id[0] == '\0')
		return bad(err, "a lease needs a workspace_id");
	if (in->want < 0)
		return bad(err, "want must not be negative");
	if (in->columns != NULL)
		return bad(err, "a report's calls as columns go by LeaseBatchColumns");
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

/* What refuses a batch whole, except a workspace named twice (batch_init()
 * finds that). */
static int check_batch(const LeaseRequest *const *in, size_t n, acct_err *err)
{
	const char *holder = in[0]->holder;
	size_t calls = 0;

	if (n > ACCT_LEASE_BATCH_MAX)
		return bad(err, "a batch carries at most 1024 reports");
	if (holder == NULL || holder[0] == '\0')
		return bad(err, "a lease needs a holder");
	if (strlen(holder) > HOLDER_MAX)
		return bad(err, "holder is longer than 128 bytes");
	for (size_t i = 0; i < n; i++) {
		if (in[i]->holder == NULL || strcmp(in[i]->holder, holder) != 0)
			return bad(err, "every report of a batch names the same holder");
		calls += in[i]->n_calls;
	}
	if (calls > ACCT_LEASE_CALLS_MAX)
		return bad(err, "a report carries at most 4096 calls, a batch as "
				"many in all");
	return 0;
}

/* One report's state between the transaction's round trips. */
typedef struct tx {
	const LeaseRequest *in;
	acct__lease_result *res;  /* res->rc != 0: refused, left out */
	int found;                /* its workspace exists */
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
	int64_t seq;              /* the workspace's lease_seq, committed */
} tx;

/* The transaction's reports. */
typedef struct batch {
	acct_service *a;
	const char *holder;
	int64_t now;
	char snow[24];
	tx *t;           /* n of them, in the request's order */
	size_t n;
	tx **by_ws;      /* those naming a workspace, by its id */
	size_t n_ws;
	int64_t *cost;   /* the calls' of every report, each its slice */
} batch;

static int live(const tx *t)
{
	return t->res->rc == 0;
}

static int64_t col_int(PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static int by_ws(const void *x, const void *y)
{
	const tx *const *a = x, *const *b = y;

	return strcmp((*a)->in->workspace_id, (*b)->in->workspace_id);
}

static int ws_is(const void *key, const void *x)
{
	const tx *const *t = x;

	return strcmp(key, (*t)->in->workspace_id);
}

/* The report of workspace `ws` (a row read back), or NULL. */
static tx *find(const batch *b, const char *ws)
{
	tx **hit = bsearch(ws, b->by_ws, b->n_ws, sizeof(*b->by_ws), ws_is);

	return hit != NULL ? *hit : NULL;
}

/* Each report checked on its own (res[i]), and indexed by workspace. */
static int batch_init(batch *b, const LeaseRequest *const *in,
		      acct__lease_result *res, acct_err *err)
{
	size_t calls = 0;

	for (size_t i = 0; i < b->n; i++)
		calls += in[i]->n_calls;
	b->t = calloc(b->n, sizeof(*b->t));
	b->by_ws = calloc(b->n, sizeof(*b->by_ws));
	b->cost = calloc(calls + 1, sizeof(*b->cost));
	if (b->t == NULL || b->by_ws == NULL || b->cost == NULL)
		return oom(err);
	b->holder = in[0]->holder;
	b->now = seo_now_ms();
	snprintf(b->snow, sizeof(b->snow), "%lld", (long long)b->now);
	calls = 0;
	for (size_t i = 0; i < b->n; i++) {
		tx *t = &b->t[i];

		memset(&res[i], 0, sizeof(res[i]));
		t->in = in[i];
		t->res = &res[i];
		t->cost = b->cost + calls;
		calls += in[i]->n_calls;
		res[i].rc = check(in[i], &res[i].err);
		if (in[i]->workspace_id != NULL && in[i]->workspace_id[0] != '\0')
			b->by_ws[b->n_ws++] = t;
	}
	qsort(b->by_ws, b->n_ws, sizeof(*b->by_ws), by_ws);
	for (size_t i = 1; i < b->n_ws; i++)
		if (by_ws(&b->by_ws[i - 1], &b->by_ws[i]) == 0)
			return bad(err, "a batch names each workspace at most once");
	return 0;
}

static void batch_free(batch *b)
{
	free(b->t);
	free(b->by_ws);
	free(b->cost);
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

/* What round trip 1 read, by workspace; a report whose workspace has no
 * row is refused as not_found. */
static void read_state(batch *b, seo_pg_pipe *p, int s_ws, int s_mine,
		       int s_stream, int s_others)
{
	PGresult *r = p->res[s_ws];
	tx *t;

	for (int i = 0; i < PQntuples(r); i++)
		if ((t = find(b, PQgetvalue(r, i, 0))) != NULL) {
			t->found = 1;
			t->balance = col_int(r, i, 1);
		}
	r = p->res[s_mine];
	for (int i = 0; i < PQntuples(r); i++)
		if ((t = find(b, PQgetvalue(r, i, 0))) != NULL) {
			t->mine = 1;
			snprintf(t->lease_id, sizeof(t->lease_id), "%s",
				 PQgetvalue(r, i, 1));
			t->granted = col_int(r, i, 2);
			t->used = col_int(r, i, 3);
		}
	r = s_stream >= 0 ? p->res[s_stream] : NULL;
	for (int i = 0; r != NULL && i < PQntuples(r); i++)
		if ((t = find(b, PQgetvalue(r, i, 0))) != NULL)
			t->stream_seq = col_int(r, i, 1);
	r = p->res[s_others];
	for (int i = 0; i < PQntuples(r); i++)
		if ((t = find(b, PQgetvalue(r, i, 0))) != NULL) {
			t->others_n = col_int(r, i, 1);
			t->others_unused = col_int(r, i, 2);
		}
	for (size_t i = 0; i < b->n; i++)
		if (live(&b->t[i]) && !b->t[i].found)
			b->t[i].res->rc = acct__fail(
				&b->t[i].res->err, SEO_ENOTFOUND, "not_found",
				"workspace \"%s\" does not exist",
				b->t[i].in->workspace_id);
}

/* Round trip 1: BEGIN, the locks, the streams, the other leases. */
static int lock_and_read(seo_pg_conn *c, batch *b, acct_err *err)
{
	acct__pgarr ws, sws, sname;
	const char *settings[2] = {LOCK_WAIT_MS, NULL}, *pw[2], *ps[3];
	size_t n_streams = 0;
	int rc = 0, durable = 0, s_ws, s_mine, s_stream = -1, s_others;
	seo_pg_pipe p;

	acct__pgarr_init(&ws);
	acct__pgarr_init(&sws);
	acct__pgarr_init(&sname);
	for (size_t i = 0; i < b->n; i++) {
		const LeaseRequest *in = b->t[i].in;

		if (!live(&b->t[i]))
			continue;
		acct__pgarr_add(&ws, in->workspace_id);
		if (in->n_calls > 0) {
			acct__pgarr_add(&sws, in->workspace_id);
			acct__pgarr_add(&sname, in->stream);
			n_streams++;
		}
		durable |= in->close;
	}
	pw[0] = acct__pgarr_done(&ws);
	pw[1] = b->holder;
	ps[0] = acct__pgarr_done(&sws);
	ps[1] = acct__pgarr_done(&sname);
	ps[2] = b->holder;
	if (pw[0] == NULL || ps[0] == NULL || ps[1] == NULL)
		rc = oom(err);
	seo_pg_pipe_init(&p);
	seo_pg_pipe_add(&p, ACCT_Q_BEGIN, 0, NULL);
	settings[1] = durable ? "on" : "off";
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_SETTINGS, 2, settings);
	s_ws = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEDGER_LOCK_WORKSPACES, 1, pw);
	s_mine = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_MINE, 2, pw);
	if (n_streams > 0) {
		s_stream = p.n;
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_STREAM, 3, ps);
	}
	s_others = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_OTHERS, 2, pw);
	if (rc == 0)
		rc = acct__pipe_run(c, &p, err);
	if (rc == 0)
		read_state(b, &p, s_ws, s_mine, s_stream, s_others);
	seo_pg_pipe_clear(&p);
	acct__pgarr_free(&ws);
	acct__pgarr_free(&sws);
	acct__pgarr_free(&sname);
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

/* Orders two calls by key, then user: a batch is a run of 0. */
static int key_cmp(const acct__batch_call *a, const acct__batch_call *b)
{
	int d = strcmp(or_empty(a->call->key_id), or_empty(b->call->key_id));

	return d != 0 ? d
		      : strcmp(or_empty(a->call->user_id), or_empty(b->call->user_id));
}

/* By key and user, then as reported: each batch keeps the calls' order. */
static int by_key(const void *x, const void *y)
{
	const acct__batch_call *a = x, *b = y;
	int d = key_cmp(a, b);

	return d != 0 ? d : (a->i > b->i) - (a->i < b->i);
}

/* The columns of lease_usage_batches, in its parameters' order. */
enum { UB_ID, UB_WS, UB_USER, UB_KEY, UB_FIRST, UB_LAST, UB_N, UB_CREDITS,
       UB_CALLS, UB_COLS };

/* One batch's row of usage_batches (migrations 008, 010), added to `col`:
 * calls[0 .. n) of workspace `ws`, of one key and user, their text
 * written with `w`. */
static int batch_add(acct__pgarr *col, seo_jw *w, const char *id,
		     const char *ws, const acct__batch_call *c, size_t n, int64_t now,
		     acct_err *err)
{
	int64_t first = INT64_MAX, last = 0, credits = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t at = c[i].call->created_at > 0 ? c[i].call->created_at : now;

		first = at < first ? at : first;
		last = at > last ? at : last;
		credits += c[i].cost;
	}
	seo_jw_reset(w);
	if (acct__usage_text(w, c, n, now, first) == 0)
		seo_jw_char(w, '\0'); /* the text as a C string */
	if (w->failed)
		return oom(err);
	acct__pgarr_add(&col[UB_ID], id);
	acct__pgarr_add(&col[UB_WS], ws);
	acct__pgarr_add(&col[UB_USER], or_null(c[0].call->user_id));
	acct__pgarr_add(&col[UB_KEY], or_null(c[0].call->key_id));
	acct__pgarr_addi(&col[UB_FIRST], first);
	acct__pgarr_addi(&col[UB_LAST], last);
	acct__pgarr_addi(&col[UB_N], (int64_t)n);
	acct__pgarr_addi(&col[UB_CREDITS], credits);
	acct__pgarr_add(&col[UB_CALLS], w->buf);
	return 0;
}

/* A report's new calls of one key and user: calls[at .. end). */
typedef struct span {
	const tx *t;
	size_t at, end;
} span;

/* The new calls of report `t` into calls[0 ..), sorted by key, cut into
 * spans[*n_spans ..); the number of calls. */
static size_t cut(const tx *t, acct__batch_call *calls, size_t base, span *spans,
		  size_t *n_spans)
{
	size_t n = t->in->n_calls - t->skip, sorted = 1;

	for (size_t i = 0; i < n; i++)
		calls[base + i] = (acct__batch_call){t->in->calls[t->skip + i], t->cost[i], i};
	/* A report of one key, the common case, is in order already. */
	while (sorted < n &&
	       key_cmp(&calls[base + sorted - 1], &calls[base + sorted]) <= 0)
		sorted++;
	if (sorted < n)
		qsort(calls + base, n, sizeof(*calls), by_key);
	for (size_t at = base, end; at < base + n; at = end) {
		for (end = at + 1; end < base + n &&
				   key_cmp(&calls[at], &calls[end]) == 0;)
			end++;
		spans[(*n_spans)++] = (span){t, at, end};
	}
	return n;
}

/* Round trip 2: the new calls' usage rows, a batch per report, key and
 * user (migration 008), each holding its calls in the order reported;
 * `now` stands for a call without its time. Leased rows have no settle
 * time: the reconcile job never touches them. */
static int write_usage(seo_pg_conn *c, const batch *b, acct_err *err)
{
	size_t n = 0, k = 0, n_spans = 0;
	acct__pgarr col[UB_COLS];
	const char *params[UB_COLS];
	int lengths[UB_COLS] = {0}, formats[UB_COLS] = {0};
	char (*ids)[ACCT_ID_LEN];
	seo_jw w = SEO_JW_INIT;
	acct__batch_call *calls;
	span *spans;
	int rc = 0;

	for (size_t i = 0; i < b->n; i++)
		if (live(&b->t[i]))
			n += b->t[i].in->n_calls - b->t[i].skip;
	if (n == 0)
		return 0;
	calls = malloc(n * sizeof(*calls));
	spans = malloc(n * sizeof(*spans));
	ids = malloc(n * sizeof(*ids));
	/* The calls' JSON, most of a report's bytes, in binary: neither
	 * escaped here nor parsed as an array literal by the server. */
	for (size_t i = 0; i < UB_COLS; i++) {
		if (i == UB_CALLS)
			acct__pgarr_init_bin(&col[i]);
		else
			acct__pgarr_init(&col[i]);
	}
	if (calls == NULL || spans == NULL || ids == NULL)
		rc = oom(err);
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		if (live(&b->t[i]))
			k += cut(&b->t[i], calls, k, spans, &n_spans);
	if (rc == 0)
		rc = acct__new_time_ids("ubt_", ids, n_spans, err);
	for (size_t i = 0; rc == 0 && i < n_spans; i++)
		rc = batch_add(col, &w, ids[i], spans[i].t->in->workspace_id,
			       calls + spans[i].at, spans[i].end - spans[i].at,
			       b->now, err);
	for (size_t i = 0; rc == 0 && i < UB_COLS; i++)
		if ((params[i] = acct__pgarr_done(&col[i])) == NULL)
			rc = oom(err);
	lengths[UB_CALLS] = acct__pgarr_len(&col[UB_CALLS]);
	formats[UB_CALLS] = 1;
	if (rc == 0)
		rc = acct__exec_bin(c, ACCT_Q_LEASE_USAGE_BATCHES, UB_COLS, params,
				    lengths, formats, NULL, err);
	for (size_t i = 0; i < UB_COLS; i++)
		acct__pgarr_free(&col[i]);
	seo_jw_free(&w);
	free(calls);
	free(spans);
	free(ids);
	return rc;
}

/* The columns of round trip 3's statements, in their parameters' order. */
enum {
	ST_WS, ST_STREAM, ST_LAST,            /* lease_stream_set */
	LG_WS, LG_DELTA, LG_REASON, LG_REF,   /* ledger_insert */
	UP_ID, UP_GRANTED, UP_USED, UP_CLOSED, /* lease_update */
	IN_ID, IN_WS, IN_GRANTED,             /* lease_insert */
	NT_WS,                                /* lease_notify */
	WS_ID, WS_BALANCE,                    /* lease_ws_set */
	WRITE_COLS
};

/* Round trip 3's statements, in order: each runs when its first column
 * has rows, with its `ncols` columns, then the first `scalars` of (now,
 * the holder). The balances' last: their rows are read back. */
static const struct write {
	acct__q q;
	int col, ncols, scalars;
} writes[] = {
	{ACCT_Q_LEASE_STREAM_SET, ST_WS, 3, 2},
	{ACCT_Q_LEDGER_INSERT, LG_WS, 4, 1},
	{ACCT_Q_LEASE_UPDATE, UP_ID, 4, 1},
	{ACCT_Q_LEASE_INSERT, IN_ID, 3, 2},
	{ACCT_Q_LEASE_NOTIFY, NT_WS, 1, 0},
	{ACCT_Q_LEASE_WS_SET, WS_ID, 2, 0},
};

#define N_WRITES (sizeof(writes) / sizeof(writes[0]))

/* Report `t`'s rows of round trip 3. */
static void add_writes(acct__pgarr *col, const tx *t, int64_t now)
{
	const LeaseRequest *in = t->in;
	const char *ws = in->workspace_id;

	/* Numbers only grow: a late report of calls written before leaves
	 * the stream as it is. */
	if (in->n_calls > t->skip) {
		acct__pgarr_add(&col[ST_WS], ws);
		acct__pgarr_add(&col[ST_STREAM], in->stream);
		acct__pgarr_addi(&col[ST_LAST],
				 (int64_t)(in->first_seq + in->n_calls - 1));
	}
	if (t->delta != 0) {
		acct__pgarr_add(&col[LG_WS], ws);
		acct__pgarr_addi(&col[LG_DELTA], t->delta);
		acct__pgarr_add(&col[LG_REASON], "lease");
		acct__pgarr_add(&col[LG_REF], t->lease_id);
	}
	if (t->mine) {
		acct__pgarr_add(&col[UP_ID], t->lease_id);
		acct__pgarr_addi(&col[UP_GRANTED], t->granted);
		acct__pgarr_addi(&col[UP_USED], t->used);
		if (t->closed)
			acct__pgarr_addi(&col[UP_CLOSED], now);
		else
			acct__pgarr_add(&col[UP_CLOSED], NULL);
	} else if (t->open) {
		acct__pgarr_add(&col[IN_ID], t->lease_id);
		acct__pgarr_add(&col[IN_WS], ws);
		acct__pgarr_addi(&col[IN_GRANTED], t->granted);
	}
	/* Every replica reads the workspace's leases again: a recall may
	 * wait for this close elsewhere. */
	if (t->closed)
		acct__pgarr_add(&col[NT_WS], ws);
	acct__pgarr_add(&col[WS_ID], ws);
	acct__pgarr_addi(&col[WS_BALANCE], t->balance);
}

/* Round trip 3: the writes and COMMIT; each report's `seq` set. */
static int write_and_commit(seo_pg_conn *c, batch *b, acct_err *err)
{
	acct__pgarr col[WRITE_COLS];
	const char *params[N_WRITES][6];
	int rc = 0, s_ws = -1;
	seo_pg_pipe p;

	for (size_t i = 0; i < WRITE_COLS; i++)
		acct__pgarr_init(&col[i]);
	for (size_t i = 0; i < b->n; i++)
		if (live(&b->t[i]))
			add_writes(col, &b->t[i], b->now);
	seo_pg_pipe_init(&p);
	for (size_t w = 0; w < N_WRITES; w++) {
		const struct write *wr = &writes[w];

		if (col[wr->col].len == 0)
			continue;
		for (int k = 0; k < wr->ncols; k++)
			if ((params[w][k] = acct__pgarr_done(&col[wr->col + k])) == NULL)
				rc = oom(err);
		params[w][wr->ncols] = b->snow;
		params[w][wr->ncols + 1] = b->holder;
		if (wr->q == ACCT_Q_LEASE_WS_SET)
			s_ws = p.n;
		seo_pg_pipe_add(&p, wr->q, wr->ncols + wr->scalars, params[w]);
	}
	seo_pg_pipe_add(&p, ACCT_Q_COMMIT, 0, NULL);
	if (rc == 0)
		rc = acct__pipe_run(c, &p, err);
	for (int i = 0; rc == 0 && s_ws >= 0 && i < PQntuples(p.res[s_ws]); i++) {
		tx *t = find(b, PQgetvalue(p.res[s_ws], i, 0));

		if (t != NULL)
			t->seq = col_int(p.res[s_ws], i, 1);
	}
	seo_pg_pipe_clear(&p);
	for (size_t i = 0; i < WRITE_COLS; i++)
		acct__pgarr_free(&col[i]);
	return rc;
}

/* After the commit: what report `t` is answered. */
static void answer(acct_service *a, const tx *t)
{
	acct__lease_out *out = &t->res->out;

	/* Calls spent from this lease lower what the other holders are
	 * answered as `outside`: they ask again (a watch lease follows). */
	if (t->mine && t->reported > 0 && t->others_n > 0)
		acct__watch_lease(a->leases.watch, ACCT_WATCH_BALANCE,
				  t->in->workspace_id, 0);
	if (t->open) {
		memcpy(out->lease_id, t->lease_id, sizeof(out->lease_id));
		out->granted = t->granted;
		out->used = t->used;
	}
	out->outside = t->balance + t->others_unused;
	out->ttl_ms = ACCT_LEASE_TTL_MS;
}

/* The transaction of the reports still live after batch_init(). */
static int run(batch *b, acct_err *err)
{
	acct_service *a = b->a;
	seo_pg_conn *c;
	int rc = acct__pool_get(a->pool, &c, err);

	if (rc != 0)
		return rc;
	rc = lock_and_read(c, b, err);
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		if (live(&b->t[i]))
			rc = decide(a, &b->t[i], err);
	if (rc == 0)
		rc = write_usage(c, b, err);
	if (rc == 0) {
		pthread_rwlock_wrlock(&a->leases.commit);
		rc = write_and_commit(c, b, err);
		for (size_t i = 0; rc == 0 && i < b->n; i++) {
			const tx *t = &b->t[i];

			if (live(t))
				acct__leases_set(&a->leases, t->in->workspace_id,
						 t->seq, t->others_n + (t->open ? 1 : 0),
						 t->others_unused +
							 (t->open ? t->granted - t->used : 0));
		}
		pthread_rwlock_unlock(&a->leases.commit);
	}
	if (rc != 0)
		seo_pg_rollback(c);
	seo_pg_pool_put(a->pool, c);
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		if (live(&b->t[i]))
			answer(a, &b->t[i]);
	return rc;
}

int acct__lease_batch(acct_service *a, const LeaseRequest *const *in, size_t n,
		      acct__lease_result *res, acct_err *err)
{
	batch b = {.a = a, .n = n};
	int rc = n > 0 ? check_batch(in, n, err) : 0;
	size_t n_live = 0;

	if (n == 0 || rc != 0)
		return rc;
	rc = batch_init(&b, in, res, err);
	for (size_t i = 0; rc == 0 && i < n; i++)
		n_live += live(&b.t[i]);
	if (rc == 0 && n_live > 0)
		rc = run(&b, err);
	batch_free(&b);
	return rc;
}

int acct__lease(acct_service *a, const LeaseRequest *in, acct__lease_out *out,
		acct_err *err)
{
	acct__lease_result r;
	int rc = acct__lease_batch(a, &in, 1, &r, err);

	memset(out, 0, sizeof(*out));
	if (rc == 0 && r.rc != 0) {
		*err = r.err;
		rc = r.rc;
	}
	if (rc == 0)
		*out = r.out;
	return rc;
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

	/* Streams silent for a day: nothing of theirs can still arrive. Their
	 * updated_at may trail their last report by a minute. */
	snprintf(forget, sizeof(forget), "%lld",
		 (long long)(now_ms - ACCT_LEASE_STREAM_KEEP_MS -
			     ACCT_LEASE_STREAM_RENEW_MS));
	if (rc == 0)
		rc = seo_pg_exec(c, ACCT_Q_LEASE_STREAMS_FORGET, 1, &p, NULL, err,
				 err_len);
	return rc;
}
