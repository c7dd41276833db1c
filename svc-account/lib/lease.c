/*
 * Account/Lease: a holder (a gateway) reports the calls it served from its
 * lease of a workspace's credits, then closes the lease or tops it up
 * (docs/decisions.md, "Credit leases"). One transaction on a pooled
 * connection, in two round trips: the workspace's row and the holder's
 * open lease locked (workspace first, as everywhere), the calls' usage
 * rows written once per request id, the other holders' leases summed;
 * then the ledger row, the lease, the balance and COMMIT. A transaction
 * that gives credits back commits synchronously, like a refund; the others
 * do not wait for the disk, like debits.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define HOLDER_MAX 128
/* The longest a Lease waits for a row lock held elsewhere (then 503
 * service_unavailable; the holder reports again). */
#define LOCK_WAIT_MS "5000"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

/* The usage rows of a report, as unnest() parameters. */
enum { U_ID, U_USER, U_KEY, U_ENDPOINT, U_DOMAIN, U_CHARGED, U_USED,
       U_REQUEST, U_AT, U_N };

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
	for (size_t i = 0; i < in->n_calls; i++)
		if (check_call(in->calls[i], err) != 0)
			return SEO_EINVAL;
	return 0;
}

static const char *or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* The usage rows' arrays; `now` stands for a call without its time. */
static int usage_arrays(const LeaseRequest *in, int64_t now,
			acct__pgarr u[U_N], acct_err *err)
{
	for (size_t i = 0; i < in->n_calls; i++) {
		const LeaseCall *c = in->calls[i];
		char id[ACCT_ID_LEN];
		int rc = acct__new_id("chg_", id, err);

		if (rc != 0)
			return rc;
		acct__pgarr_add(&u[U_ID], id);
		acct__pgarr_add(&u[U_USER], or_null(c->user_id));
		acct__pgarr_add(&u[U_KEY], or_null(c->key_id));
		acct__pgarr_add(&u[U_ENDPOINT], c->endpoint);
		acct__pgarr_add(&u[U_DOMAIN], or_null(c->domain));
		acct__pgarr_addi(&u[U_CHARGED], c->charged);
		acct__pgarr_addi(&u[U_USED], c->credits_used);
		acct__pgarr_add(&u[U_REQUEST], c->request_id);
		acct__pgarr_addi(&u[U_AT], c->created_at > 0 ? c->created_at : now);
	}
	return 0;
}

/* The transaction's state between its two round trips. */
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
	PGresult *written;        /* usage rows written now: id, credits_used */
	acct__pgarr fix[2];       /* usage rows lowered: id, credits_used */
	size_t n_fix;
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
	for (int i = PQntuples(t->written) - 1; i >= 0 && left > 0; i--) {
		int64_t v = col_int(t->written, i, 1);
		int64_t cut = v < left ? v : left;

		if (cut == 0)
			continue;
		acct__pgarr_add(&t->fix[0], PQgetvalue(t->written, i, 0));
		acct__pgarr_addi(&t->fix[1], v - cut);
		t->n_fix++;
		left -= cut;
	}
	t->used = t->granted;
}

/* Decides the close or the top-up on the locked state. */
static int decide(acct_service *a, tx *t, acct_err *err)
{
	const LeaseRequest *in = t->in;
	int64_t top;

	for (int i = 0; t->written != NULL && i < PQntuples(t->written); i++)
		t->reported += col_int(t->written, i, 1);
	t->used += t->reported;
	if (t->mine && t->used > t->granted)
		overspent(t);
	if (!t->mine && in->n_calls > 0)
		log_warn("lease report of %zu calls for workspace %s by %s "
			 "without an open lease: recorded free",
			 in->n_calls, in->workspace_id, in->holder);
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

/* Round trip 1: BEGIN, the locks, the usage rows, the other leases. */
static int lock_and_report(seo_pg_conn *c, tx *t, int64_t now, acct_err *err)
{
	const LeaseRequest *in = t->in;
	acct__pgarr u[U_N];
	seo_pg_pipe p;
	const char *ws = in->workspace_id, *holder = in->holder;
	const char *mine[2] = {holder, ws}, *others[2] = {ws, holder};
	const char *usage[11], *timeout = LOCK_WAIT_MS;
	int rc = 0, s_ws, s_mine, s_usage = -1, s_others;

	for (size_t i = 0; i < U_N; i++)
		acct__pgarr_init(&u[i]);
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
		rc = usage_arrays(in, now, u, err);
		for (size_t i = 0; rc == 0 && i < U_N; i++) {
			size_t slot = i == U_AT ? 10 : i;

			usage[slot] = acct__pgarr_done(&u[i]);
			if (usage[slot] == NULL)
				rc = acct__fail(err, SEO_ENOMEM, "internal_error",
						"out of memory");
		}
		usage[8] = ws;
		usage[9] = holder;
		s_usage = p.n;
		if (rc == 0)
			seo_pg_pipe_add(&p, ACCT_Q_LEASE_USAGE, 11, usage);
	}
	s_others = p.n;
	seo_pg_pipe_add(&p, ACCT_Q_LEASE_OTHERS, 2, others);
	if (rc == 0)
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
		if (s_usage >= 0) {
			t->written = p.res[s_usage];
			p.res[s_usage] = NULL;
		}
	}
	seo_pg_pipe_clear(&p);
	for (size_t i = 0; i < U_N; i++)
		acct__pgarr_free(&u[i]);
	return rc;
}

/* Round trip 2: the writes and COMMIT; *seq the workspace's lease_seq. */
static int write_and_commit(seo_pg_conn *c, tx *t, int64_t now, int64_t *seq,
			    acct_err *err)
{
	const char *ws = t->in->workspace_id;
	char snow[24], granted[24], used[24], delta[24], balance[24];
	char payload[ACCT_ID_LEN + sizeof(ACCT_AUTH_LEASE_PREFIX)];
	const char *fix[2], *lease[5], *bal[2] = {ws, balance}, *notify = payload;
	acct__pgarr l[4];
	seo_pg_pipe p;
	int rc = 0, s_ws;

	snprintf(snow, sizeof(snow), "%lld", (long long)now);
	snprintf(granted, sizeof(granted), "%lld", (long long)t->granted);
	snprintf(used, sizeof(used), "%lld", (long long)t->used);
	snprintf(delta, sizeof(delta), "%lld", (long long)t->delta);
	snprintf(balance, sizeof(balance), "%lld", (long long)t->balance);
	snprintf(payload, sizeof(payload), "%s%s", ACCT_AUTH_LEASE_PREFIX, ws);
	for (size_t i = 0; i < 4; i++)
		acct__pgarr_init(&l[i]);
	seo_pg_pipe_init(&p);
	if (t->n_fix > 0) {
		fix[0] = acct__pgarr_done(&t->fix[0]);
		fix[1] = acct__pgarr_done(&t->fix[1]);
		seo_pg_pipe_add(&p, ACCT_Q_LEASE_USAGE_FIX, 2, fix);
	}
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
	if (t->n_fix > 0 && (fix[0] == NULL || fix[1] == NULL))
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
	acct__pgarr_init(&t.fix[0]);
	acct__pgarr_init(&t.fix[1]);
	rc = lock_and_report(c, &t, now, err);
	if (rc == 0)
		rc = decide(a, &t, err);
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
				  in->workspace_id);
	if (rc != 0)
		seo_pg_rollback(c);
	seo_pg_pool_put(a->pool, c);
	PQclear(t.written);
	acct__pgarr_free(&t.fix[0]);
	acct__pgarr_free(&t.fix[1]);
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
	return acct__sweep_run(c, &expiry, cutoff_ms, now_ms, n, err, err_len);
}
