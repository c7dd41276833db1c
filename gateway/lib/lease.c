/*
 * Credit leases held by the gateway (lease.h): one state per workspace
 * that spends here, in a hash table, and one timer that reports and tops
 * up every GW_LEASE_REPORT_MS while any state is held. The workspaces due
 * to be asked in one pass of the loop go together in one
 * LeaseBatchColumns call (one transaction at svc-account for all of
 * them), their calls as columns; an svc-account without it is asked by
 * LeaseBatch, a message a call, and one without that one Lease call a
 * workspace. A workspace is in at most one call in flight; the calls it
 * reports stay owned here until svc-account has answered, and go back to
 * the queue if it failed.
 */
#include "lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/hmap.h"
#include "seo/log.h"
#include "seo/util.h"

#include "account_paths.h"
#include "lease_queue.h"

/* What one LeaseBatch call carries at most (LeaseBatchRequest). */
#define BATCH_REPORTS 1024
#define BATCH_CALLS 4096
/* A report always fits a call: send_one() would otherwise send none. */
_Static_assert(GW_LEASE_BATCH <= BATCH_CALLS, "a report fits one LeaseBatch call");
#define BUCKETS 1024 /* a power of two (seo/hmap.h) */
/* An open lease not reported on for this long is renewed anyway. */
#define RENEW_MS 10000
/* The least a lease is topped up to, and the seconds of spending it
 * holds: enough to go on serving through a report held up by the
 * database (a write stalled behind a checkpoint's I/O for seconds, up to
 * svc-account's 5 s lock wait and the retry after it) before the calls
 * fall back to being debited one by one, into the same stall. */
#define WANT_MIN 200
#define WANT_SECONDS 10
/* Reads within GW_LEASE_IDLE_MS of each other that make a watch lease
 * worth its two Lease calls (open, close): a balance polled seldom is
 * asked of svc-account each time. */
#define HOLD_READS 2
#define STREAM_LEN 16
/* The user, key and endpoint names a state keeps once for its queued
 * calls; a call of a name past them carries its own copy. */
#define NAMES_MAX 16

typedef struct waiter {
	struct waiter *next;
	uint64_t seq;
	gw_lease_flushed_fn cb;
	void *ud;
} waiter;

typedef struct gw_lease_ws {
	seo_hnode node; /* keyed by the workspace id */
	gw_leases *l;
	int open;
	long long granted, used, outside;
	long long running;      /* charged of calls running */
	long long pending_used; /* credits_used of the calls queued */
	long long sent_used;    /* and of those in the Lease call in flight */
	/* The calls ended and not yet reported, in order: the first n_sent
	 * in the Lease call in flight, the rest queued (pending()). */
	gw_lq q;
	size_t n_sent;
	int64_t pending_since; /* when the oldest call queued ended */
	/* Calls are numbered 1, 2, ... in this stream, drawn when the state
	 * is made: a state made again (or another process) numbers anew. */
	char stream[STREAM_LEN + 1];
	uint64_t seq;          /* calls ended: the last is q's last */
	uint64_t sent_seq;     /* the last call in flight */
	uint64_t reported_seq; /* the last call svc-account has */
	int asking, sent_close, sent_hold, refresh, closing;
	long long asked_want;
	struct gw_lease_ws *due; /* the next to be asked in this pass */
	long long due_want;
	int due_close;
	int64_t ok_at, next_ask_at, took_at;
	int64_t retry_at; /* after a failed Lease call, nothing is asked before */
	int64_t read_at;  /* the last /v1/credits */
	int reads;        /* up to HOLD_READS, each within the idle time */
	long long spent; /* credits taken or wanted since the last ask */
	int64_t spent_since;
	waiter *waiters;
	/* Debits and refunds of calls made without the lease (answered
	 * here), counted; svc-account's `outside` is known as of `fresh` of
	 * them, and the Lease call in flight asked as of `asked_touched`.
	 * Between, `outside` follows them here. */
	uint64_t touched, fresh, asked_touched;
	int have_outside;
	/* Kept once, pointed at by the queued calls (most workspaces call
	 * with one key and a few routes): a long queue holds its calls' ids
	 * and domains, not a copy of every name, and a gateway queueing for
	 * hundreds of workspaces stays in the caches. Freed with the state,
	 * which outlives its calls. */
	char *names[NAMES_MAX];
	size_t n_names;
	uint32_t last[GW_LQ_NAMES]; /* each name's index last found */
} ws;

/* The calls ended and queued, not in the Lease call in flight. */
static size_t pending(const ws *w)
{
	return w->q.n - w->n_sent;
}

/* How reports are sent, the first tried first: an svc-account without a
 * method answers UNIMPLEMENTED, and the reports go again by the next. */
enum { BY_COLUMNS, BY_BATCH, BY_LEASE };

static const struct way {
	const char *path, *name;
} ways[] = {
	[BY_COLUMNS] = {GW_LEASE_COLUMNS_PATH, "LeaseBatchColumns, calls as columns"},
	[BY_BATCH] = {GW_LEASE_BATCH_PATH, "LeaseBatch, a message a call"},
	[BY_LEASE] = {GW_LEASE_PATH, "Lease, a workspace a call"},
};

/* One report call in flight, sent `by`, and the workspaces it asks for,
 * in the request's order. */
typedef struct batch {
	gw_leases *l;
	seo_arena *arena;
	ProtobufCAllocator alloc;
	int by;
	size_t n;
	ws *w[];
} batch;

struct gw_leases {
	struct event_base *base;
	rpc_client *const *account;
	char *holder, *prefix;
	int timeout_ms;
	int stopped;
	struct event *tick;
	struct event *send; /* made active when a workspace is due */
	ws *due, **due_tail;
	int by; /* how reports are sent now */
	seo_hmap map; /* of ws */
};

static ws *find(gw_leases *l, const char *id)
{
	return id != NULL ? (ws *)seo_hmap_get(&l->map, id) : NULL;
}

static void arm(gw_leases *l)
{
	struct timeval tv = {0, GW_LEASE_REPORT_MS * 1000};

	if (!evtimer_pending(l->tick, NULL) && evtimer_add(l->tick, &tv) != 0)
		log_error("cannot arm the lease timer: calls are reported "
			  "when a lease is next asked for");
}

static ws *find_or_make(gw_leases *l, const char *id)
{
	ws *w = find(l, id);

	if (w != NULL || l->stopped || strlen(id) >= sizeof(w->node.key))
		return w;
	w = calloc(1, sizeof(*w));
	if (w == NULL ||
	    seo_random_string(w->stream, STREAM_LEN, SEO_ALPHANUM) != 0) {
		free(w);
		return NULL;
	}
	strcpy(w->node.key, id);
	w->l = l;
	w->spent_since = seo_mono_ms();
	seo_hmap_put(&l->map, &w->node);
	arm(l);
	return w;
}

static long long avail(const ws *w)
{
	return w->granted - w->used - w->sent_used - w->pending_used -
	       w->running;
}

static int usable(const ws *w, int64_t now)
{
	return w->open && !w->closing && now - w->ok_at <= GW_LEASE_STALE_MS;
}

/* Read lately and often enough: a watch lease is held (asked for with
 * hold) while so. */
static int reading(const ws *w, int64_t now)
{
	return w->reads >= HOLD_READS && now - w->read_at <= GW_LEASE_IDLE_MS &&
	       !w->l->stopped;
}

/* Neither spent from nor read for GW_LEASE_IDLE_MS: given back. */
static int idle(const ws *w, int64_t now)
{
	return now - w->took_at > GW_LEASE_IDLE_MS &&
	       now - w->read_at > GW_LEASE_IDLE_MS;
}

/* ---- the calls' queue ------------------------------------------------------ */

/* The index of the state's own copy of `s`, the `j`th name of a call,
 * made on first sight; GW_LQ_OWN when it keeps NAMES_MAX others already
 * (or is out of memory): the call copies it. The index found last for
 * that name is tried first: a workspace's calls mostly repeat one key
 * and route. */
static uint32_t name_of(ws *w, int j, const char *s)
{
	uint32_t last = w->last[j];

	if (last < w->n_names && strcmp(w->names[last], s) == 0)
		return last;
	for (size_t i = w->n_names; i-- > 0;)
		if (i != last && strcmp(w->names[i], s) == 0)
			return w->last[j] = (uint32_t)i;
	if (w->n_names == NAMES_MAX ||
	    (w->names[w->n_names] = strdup(s)) == NULL)
		return GW_LQ_OWN;
	return w->last[j] = (uint32_t)w->n_names++;
}

static void names_free(ws *w)
{
	while (w->n_names > 0)
		free(w->names[--w->n_names]);
}

/* Call i's name j: the state's, or the call's own. */
static char *name_at(const ws *w, size_t i, int j)
{
	uint32_t k = w->q.name[j][i];

	return k == GW_LQ_OWN ? (char *)gw__lq_own(&w->q, i, j) : w->names[k];
}

/* Puts the calls of a failed Lease call back at the queue's head. */
static void unsend(ws *w)
{
	if (w->n_sent == 0)
		return;
	w->n_sent = 0;
	w->pending_since = 0; /* older than any queued: due at the retry */
	w->pending_used += w->sent_used;
	w->sent_used = 0;
}

/* Calls back the flushes the reports have satisfied; all of them when
 * `all` (a report failed: the reads go on without waiting longer). The
 * list is cut first: a callback may ask for another flush. */
static void release(ws *w, int all)
{
	waiter *done = NULL, **p = &w->waiters;

	while (*p != NULL) {
		waiter *x = *p;

		if (!all && x->seq > w->reported_seq) {
			p = &x->next;
			continue;
		}
		*p = x->next;
		x->next = done;
		done = x;
	}
	while (done != NULL) {
		waiter *x = done;

		done = x->next;
		x->cb(x->ud);
		free(x);
	}
}

static void waiters_free(waiter *x)
{
	while (x != NULL) {
		waiter *next = x->next;

		free(x);
		x = next;
	}
}

/* ---- Lease calls ------------------------------------------------------------ */

static void ask(ws *w, long long want, int close);

/* A workspace's report answered with `status` (and `r` when OK). */
static void answered(ws *w, int status, const char *message,
		     const Seo__Account__V1__LeaseResponse *r)
{
	int64_t now = seo_mono_ms();

	w->asking = 0;
	if (status != SEO_GRPC_OK || r == NULL) {
		if (w->q.n > 0 || w->sent_close)
			log_warn("lease of %s: report failed, again in %d ms: %s",
				 w->node.key, GW_LEASE_RETRY_MS,
				 r == NULL && status == SEO_GRPC_OK ? "no answer"
								    : message);
		unsend(w);
		w->retry_at = now + GW_LEASE_RETRY_MS;
		w->next_ask_at = w->retry_at;
		release(w, 1);
		return;
	}
	gw__lq_drop(&w->q, w->n_sent);
	w->n_sent = 0;
	w->sent_used = 0;
	w->reported_seq = w->sent_seq;
	w->open = r->lease_id[0] != '\0';
	w->granted = w->open ? r->granted : 0;
	w->used = w->open ? r->used : 0;
	/* An answer asked before a call debited alone was answered here may
	 * not count it: `outside` as followed here stands, and is asked for
	 * again. */
	if (!w->have_outside || w->asked_touched == w->touched)
		w->outside = r->outside;
	else
		w->refresh = 1;
	w->have_outside = 1;
	w->fresh = w->asked_touched;
	w->ok_at = now;
	if (w->sent_close)
		w->closing = w->l->stopped;
	if ((w->asked_want > 0 && avail(w) < w->asked_want / 2) ||
	    (w->sent_hold && !w->open))
		w->next_ask_at = now + GW_LEASE_RETRY_MS;
	release(w, 0);
	/* A queue longer than a report drains at once, not one report a
	 * tick: past GW_LEASE_BATCH calls a tick it would only grow. */
	if ((w->waiters != NULL && pending(w) > 0) ||
	    pending(w) >= GW_LEASE_BATCH)
		ask(w, 0, 0);
}

static void on_batch(const rpc_result *res, void *ud)
{
	batch *b = ud;
	const Seo__Account__V1__LeaseBatchResponse *r = (const void *)res->response;
	int ok = res->grpc_status == SEO_GRPC_OK;

	if (b->by == BY_LEASE) {
		answered(b->w[0], res->grpc_status, res->message,
			 ok ? (const void *)res->response : NULL);
	} else if (ok && r->n_results == b->n) {
		for (size_t i = 0; i < b->n; i++)
			answered(b->w[i], r->results[i]->status,
				 r->results[i]->message, r->results[i]->lease);
	} else if (res->grpc_status == SEO_GRPC_UNIMPLEMENTED) {
		/* Not a failure: the same reports go at once by the next way,
		 * not after a retry's wait spent debiting call by call. */
		if (b->by == b->l->by) {
			b->l->by++;
			log_warn("svc-account refused %s: leases are reported by %s",
				 ways[b->by].name, ways[b->l->by].name);
		}
		for (size_t i = 0; i < b->n; i++) {
			ws *w = b->w[i];

			w->asking = 0;
			unsend(w);
			ask(w, w->asked_want, w->sent_close);
		}
	} else {
		for (size_t i = 0; i < b->n; i++)
			answered(b->w[i], ok ? SEO_GRPC_INTERNAL : res->grpc_status,
				 ok ? "answers do not match the reports"
				    : res->message, NULL);
	}
	seo_arena_free(b->arena);
	free(b);
}

/* The first n calls of `w` as messages into `req`; 0 or SEO_ENOMEM. */
static int fill_calls(const ws *w, seo_arena *arena, size_t n,
		      Seo__Account__V1__LeaseRequest *req)
{
	const char *prefix = w->l->prefix;
	size_t plen = strlen(prefix);
	const gw_lq *q = &w->q;
	Seo__Account__V1__LeaseCall *calls;
	Seo__Account__V1__LeaseCall **ptrs;
	char *ids;

	calls = seo_arena_alloc(arena, (n + 1) * sizeof(*calls));
	ptrs = seo_arena_alloc(arena, (n + 1) * sizeof(*ptrs));
	ids = seo_arena_alloc(arena, (n + 1) * (plen + SEO_FMT_ID_DIGITS + 1));
	if (calls == NULL || ptrs == NULL || ids == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char *id = ids + i * (plen + SEO_FMT_ID_DIGITS + 1);

		seo_fmt_id(id, prefix, plen, q->request_no[i]);
		seo__account__v1__lease_call__init(&calls[i]);
		calls[i].request_id = id;
		calls[i].user_id = name_at(w, i, GW_LQ_USER);
		calls[i].key_id = name_at(w, i, GW_LQ_KEY);
		calls[i].endpoint = name_at(w, i, GW_LQ_ENDPOINT);
		calls[i].domain = (char *)gw__lq_domain(q, i);
		calls[i].charged = q->charged[i];
		calls[i].credits_used = q->used[i];
		calls[i].created_at = q->created_at[i];
		ptrs[i] = &calls[i];
	}
	req->calls = ptrs;
	req->n_calls = n;
	return 0;
}

/* The same as columns: the queue's own, but for the names a call
 * carries itself, which follow the state's in `names` (the indexes then
 * copied and changed). Everything points into the queue: `req` is packed
 * before the queue changes (rpc_client_call()). */
static int fill_columns(const ws *w, seo_arena *arena, size_t n,
			Seo__Account__V1__LeaseRequest *req)
{
	const gw_lq *q = &w->q;
	Seo__Account__V1__LeaseCallColumns *k;
	uint32_t *idx[GW_LQ_NAMES];
	size_t n_names = w->n_names;

	k = seo_arena_alloc(arena, sizeof(*k));
	if (k == NULL)
		return SEO_ENOMEM;
	seo__account__v1__lease_call_columns__init(k);
	k->names = seo_arena_alloc(arena, (n_names + GW_LQ_NAMES * n + 1) *
						  sizeof(*k->names));
	k->domain = seo_arena_alloc(arena, (n + 1) * sizeof(*k->domain));
	if (k->names == NULL || k->domain == NULL)
		return SEO_ENOMEM;
	memcpy(k->names, w->names, n_names * sizeof(*k->names));
	for (int j = 0; j < GW_LQ_NAMES; j++)
		idx[j] = q->name[j];
	for (size_t i = 0; i < n; i++) {
		k->domain[i] = (char *)gw__lq_domain(q, i);
		for (int j = 0; j < GW_LQ_NAMES; j++) {
			if (q->name[j][i] != GW_LQ_OWN)
				continue;
			if (idx[j] == q->name[j]) {
				idx[j] = seo_arena_alloc(arena, (n + 1) * sizeof(*idx[j]));
				if (idx[j] == NULL)
					return SEO_ENOMEM;
				memcpy(idx[j], q->name[j], n * sizeof(*idx[j]));
			}
			k->names[n_names] = (char *)gw__lq_own(q, i, j);
			idx[j][i] = (uint32_t)n_names++;
		}
	}
	k->request_no = q->request_no;
	k->charged = q->charged;
	k->credits_used = q->used;
	k->created_at = q->created_at;
	k->n_names = n_names;
	k->request_prefix = w->l->prefix;
	k->user = idx[GW_LQ_USER];
	k->key = idx[GW_LQ_KEY];
	k->endpoint = idx[GW_LQ_ENDPOINT];
	k->n_request_no = k->n_user = k->n_key = k->n_endpoint = k->n_domain =
		k->n_charged = k->n_credits_used = k->n_created_at = n;
	req->columns = k;
	return 0;
}

/* Moves up to `max` of the workspace's queued calls (the first, none
 * being in flight) into `req`, asked as ask() noted and sent as `b`
 * goes; 0 or SEO_ENOMEM. */
static int fill(ws *w, batch *b, size_t max,
		Seo__Account__V1__LeaseRequest *req)
{
	gw_leases *l = w->l;
	size_t n = pending(w) < max ? pending(w) : max;

	seo__account__v1__lease_request__init(req);
	if (n > 0 && (b->by == BY_COLUMNS ? fill_columns(w, b->arena, n, req)
					  : fill_calls(w, b->arena, n, req)) != 0)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++)
		w->sent_used += w->q.used[i];
	w->pending_used -= w->sent_used;
	w->n_sent = n;
	if (n > 0) {
		req->first_seq = w->seq - w->q.n + 1;
		w->sent_seq = req->first_seq + n - 1;
	}
	if (pending(w) > 0)
		w->pending_since = seo_mono_ms();
	req->holder = l->holder;
	req->workspace_id = w->node.key;
	req->stream = w->stream;
	req->want = w->due_want;
	req->close = w->due_close;
	req->hold = !w->due_close && !w->closing && reading(w, seo_mono_ms());
	w->sent_close = w->due_close;
	w->sent_hold = req->hold;
	w->asked_want = w->due_want;
	w->refresh = 0;
	w->asked_touched = w->touched;
	w->spent = 0;
	w->spent_since = seo_mono_ms();
	return 0;
}

static void batch_fail(batch *b, const char *why)
{
	rpc_result res = {.grpc_status = SEO_GRPC_INTERNAL, .message = why};

	on_batch(&res, b);
}

/* Asks for the next workspaces due, up to what one call carries; 0, or
 * -1 when nothing more can be asked in this pass. */
static int send_one(gw_leases *l, rpc_client *account)
{
	size_t most = l->by == BY_LEASE ? 1 : BATCH_REPORTS, n = 0, calls = 0,
	       due = 0;
	Seo__Account__V1__LeaseBatchRequest req =
		SEO__ACCOUNT__V1__LEASE_BATCH_REQUEST__INIT;
	Seo__Account__V1__LeaseRequest *reqs, **ptrs;
	batch *b;
	int rc;

	for (const ws *w = l->due; w != NULL && due < most; w = w->due)
		due++;
	most = due;
	b = calloc(1, sizeof(*b) + most * sizeof(b->w[0]));
	if (b == NULL || (b->arena = seo_arena_new(0)) == NULL) {
		free(b);
		return -1;
	}
	b->l = l;
	b->by = l->by;
	seo_arena_pb_allocator(b->arena, &b->alloc);
	reqs = seo_arena_alloc(b->arena, most * sizeof(*reqs));
	ptrs = seo_arena_alloc(b->arena, most * sizeof(*ptrs));
	while (l->due != NULL && n < most &&
	       calls + (pending(l->due) < GW_LEASE_BATCH ? pending(l->due)
							     : GW_LEASE_BATCH) <=
		       BATCH_CALLS) {
		ws *w = l->due;

		l->due = w->due;
		if (l->due == NULL)
			l->due_tail = &l->due;
		b->w[b->n++] = w;
		if (reqs == NULL || ptrs == NULL ||
		    fill(w, b, GW_LEASE_BATCH, &reqs[n]) != 0) {
			batch_fail(b, "out of memory");
			return -1;
		}
		calls += reqs[n].columns != NULL ? reqs[n].columns->n_request_no
						 : reqs[n].n_calls;
		ptrs[n] = &reqs[n];
		n++;
	}
	req.leases = ptrs;
	req.n_leases = n;
	if (b->by == BY_LEASE)
		rc = rpc_client_call(account, ways[b->by].path, &reqs[0].base,
				     &seo__account__v1__lease_response__descriptor,
				     &b->alloc, l->timeout_ms, NULL, 0, on_batch, b);
	else
		rc = rpc_client_call(account, ways[b->by].path, &req.base,
				     &seo__account__v1__lease_batch_response__descriptor,
				     &b->alloc, l->timeout_ms, NULL, 0, on_batch, b);
	if (rc != 0) {
		batch_fail(b, "out of memory");
		return -1;
	}
	return 0;
}

/* The workspaces due in this pass of the loop, asked together. */
static void on_send(evutil_socket_t fd, short what, void *arg)
{
	gw_leases *l = arg;
	rpc_client *account = *l->account;

	(void)fd;
	(void)what;
	while (l->due != NULL && account != NULL)
		if (send_one(l, account) != 0)
			break;
	/* Not asked (stopping, or out of memory): asked again at a tick. */
	while (l->due != NULL) {
		ws *w = l->due;

		l->due = w->due;
		w->asking = 0;
		w->next_ask_at = seo_mono_ms() + GW_LEASE_RETRY_MS;
	}
	l->due_tail = &l->due;
}

/* Notes the workspace as due: it is asked at the end of this pass of the
 * loop, with the others due by then. */
static void ask(ws *w, long long want, int close)
{
	gw_leases *l = w->l;

	if (w->asking || *l->account == NULL)
		return;
	w->asking = 1;
	w->due_want = want;
	w->due_close = close;
	w->due = NULL;
	*l->due_tail = w;
	l->due_tail = &w->due;
	event_active(l->send, 0, 0);
}

/* The top-up to ask for: about WANT_SECONDS of the spending seen since
 * the last ask, at least WANT_MIN, when what is left is under half of
 * it; 0 without spending. */
static long long want_of(ws *w, int64_t now)
{
	int64_t ms = now - w->spent_since;
	long long target, left = w->open ? avail(w) : 0;

	if (w->spent == 0 || w->closing)
		return 0;
	if (ms < 1)
		ms = 1;
	target = w->spent * 1000 * WANT_SECONDS / ms;
	if (target < WANT_MIN)
		target = WANT_MIN;
	return left < target / 2 ? target - left : 0;
}

/* The queue is worth a report: long enough, old enough, or waited for. */
static int report_due(const ws *w, int64_t now)
{
	return pending(w) > 0 &&
	       (pending(w) >= GW_LEASE_REPORT_CALLS || w->waiters != NULL ||
		now - w->pending_since >= GW_LEASE_REPORT_MAX_MS);
}

/* One workspace at a tick (a walk of the map): give back, report, top
 * up, or forget (1: the map frees it). */
static int visit(seo_hnode *n, void *ud)
{
	ws *w = (ws *)n;
	int64_t now = *(const int64_t *)ud;
	long long want;

	if (w->asking || now < w->retry_at)
		return 0;
	if (w->open && !w->closing && idle(w, now))
		w->closing = 1;
	if (w->closing && !w->open && pending(w) == 0)
		w->closing = w->l->stopped;
	if (w->closing && w->open) {
		if (w->running == 0 && pending(w) <= GW_LEASE_BATCH)
			ask(w, 0, 1);
		else if (pending(w) > 0)
			ask(w, 0, 0);
		return 0;
	}
	want = want_of(w, now);
	if (report_due(w, now) || w->refresh ||
	    (want > 0 && now >= w->next_ask_at) ||
	    (w->open && now - w->ok_at > RENEW_MS) ||
	    (!w->open && !w->closing && reading(w, now) &&
	     now >= w->next_ask_at)) {
		ask(w, now >= w->next_ask_at ? want : 0, 0);
		return 0;
	}
	if (w->open || w->running != 0 || pending(w) != 0 ||
	    w->waiters != NULL || !idle(w, now))
		return 0;
	gw__lq_free(&w->q);
	names_free(w);
	return 1;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	gw_leases *l = arg;
	int64_t now = seo_mono_ms();

	(void)fd;
	(void)what;
	seo_hmap_drop(&l->map, visit, &now);
	if (l->map.count > 0)
		arm(l);
}

/* ---- the interface ------------------------------------------------------------ */

int gw__leases_new(struct event_base *base, rpc_client *const *account,
		   const char *holder, const char *request_prefix,
		   int timeout_ms, gw_leases **out)
{
	gw_leases *l = calloc(1, sizeof(*l));

	if (l == NULL || (l->holder = strdup(holder)) == NULL ||
	    (l->prefix = strdup(request_prefix)) == NULL ||
	    seo_hmap_init(&l->map, BUCKETS) != 0 ||
	    (l->tick = evtimer_new(base, on_tick, l)) == NULL ||
	    (l->send = event_new(base, -1, 0, on_send, l)) == NULL) {
		gw__leases_free(l);
		return SEO_ENOMEM;
	}
	l->base = base;
	l->account = account;
	l->due_tail = &l->due;
	l->timeout_ms = timeout_ms;
	*out = l;
	return 0;
}

static int close_one(seo_hnode *n, void *ud)
{
	(void)ud;
	((ws *)n)->closing = 1;
	return 0;
}

void gw__leases_stop(gw_leases *l)
{
	l->stopped = 1;
	seo_hmap_drop(&l->map, close_one, NULL);
	if (l->map.count > 0)
		arm(l);
}

static int note_busy(seo_hnode *n, void *busy)
{
	const ws *w = (const ws *)n;

	if (w->open || w->asking || pending(w) > 0)
		*(int *)busy = 1;
	return 0;
}

int gw__leases_busy(gw_leases *l)
{
	int busy = 0;

	seo_hmap_drop(&l->map, note_busy, &busy);
	return busy;
}

/* What a state holds besides itself, freed before the map frees it. */
static int forget(seo_hnode *n, void *ud)
{
	ws *w = (ws *)n;

	(void)ud;
	if (w->open || w->q.n > 0)
		log_warn("lease of %s not given back, %zu calls unreported: "
			 "svc-account gives it back when it expires",
			 w->node.key, w->q.n);
	waiters_free(w->waiters);
	gw__lq_free(&w->q);
	names_free(w);
	return 1;
}

void gw__leases_free(gw_leases *l)
{
	if (l == NULL)
		return;
	seo_hmap_drop(&l->map, forget, NULL);
	seo_hmap_destroy(&l->map);
	if (l->tick != NULL)
		event_free(l->tick);
	if (l->send != NULL)
		event_free(l->send);
	free(l->holder);
	free(l->prefix);
	free(l);
}

int gw__lease_take(gw_leases *l, const char *workspace_id, long long cost,
		   long long *remaining, gw_lease_ws **held)
{
	ws *w = find_or_make(l, workspace_id);
	int64_t now = seo_mono_ms();

	if (w == NULL)
		return 0;
	w->took_at = now;
	w->spent += cost;
	if (!usable(w, now) || avail(w) < cost)
		return 0;
	/* Held: a state is forgotten only with nothing running (visit()). */
	w->running += cost;
	*remaining = w->outside + avail(w);
	*held = w;
	return 1;
}

const char *gw__lease_workspace(const gw_lease_ws *w)
{
	return w->node.key;
}

void gw__lease_end(gw_lease_ws *w, const gw_lease_call *call)
{
	gw_lq_call c;

	w->running -= call->charged;
	c = (gw_lq_call){.request_no = call->request_no,
			 .charged = call->charged,
			 .used = call->credits_used,
			 .created_at = call->created_at,
			 .name = {name_of(w, GW_LQ_USER, call->user_id),
				  name_of(w, GW_LQ_KEY, call->key_id),
				  name_of(w, GW_LQ_ENDPOINT, call->endpoint)},
			 .own = {call->user_id, call->key_id, call->endpoint},
			 .domain = call->domain};
	if (gw__lq_push(&w->q, &c) != 0) {
		/* Unreported, it costs nothing: the lease gives its credits
		 * back at the close. */
		log_error("lease of %s: call %s%016llx not reported: out of "
			  "memory", w->node.key, w->l->prefix,
			  (unsigned long long)call->request_no);
		return;
	}
	w->seq++;
	if (pending(w) == 1)
		w->pending_since = seo_mono_ms();
	w->pending_used += call->credits_used;
}

void gw__lease_cancel(gw_lease_ws *w, long long charged)
{
	w->running -= charged;
}

void gw__lease_touched(gw_leases *l, const char *workspace_id,
		       long long delta)
{
	ws *w = find(l, workspace_id);

	if (w != NULL) {
		w->touched++;
		w->outside += delta;
		w->refresh = 1;
	}
}

int gw__lease_credits(gw_leases *l, const char *workspace_id,
		      long long *credits)
{
	ws *w = find_or_make(l, workspace_id);
	int64_t now = seo_mono_ms();

	if (w == NULL)
		return 0;
	if (now - w->read_at > GW_LEASE_IDLE_MS)
		w->reads = 0;
	if (w->reads < HOLD_READS)
		w->reads++;
	w->read_at = now;
	if (!usable(w, now) || w->fresh != w->touched)
		return 0;
	*credits = w->outside + avail(w);
	return 1;
}

int gw__lease_flush(gw_leases *l, const char *workspace_id,
		    gw_lease_flushed_fn cb, void *ud)
{
	ws *w = find(l, workspace_id);
	waiter *x;

	if (w == NULL || w->reported_seq >= w->seq)
		return 1;
	x = malloc(sizeof(*x));
	if (x == NULL)
		return 1;
	x->seq = w->seq;
	x->cb = cb;
	x->ud = ud;
	x->next = w->waiters;
	w->waiters = x;
	if (!w->asking)
		ask(w, 0, 0);
	return 0;
}

void gw__leases_heard(gw_leases *l, const Seo__Account__V1__WatchResponse *w)
{
	for (size_t i = 0; i < w->n_recall; i++) {
		ws *s = find(l, w->recall[i]);

		/* A Lease call in flight may answer with a lease open. */
		if (s != NULL && (s->open || s->asking))
			s->closing = 1;
	}
	for (size_t i = 0; i < w->n_balances; i++) {
		ws *s = find(l, w->balances[i]);

		if (s == NULL)
			continue;
		s->refresh = 1;
		/* A lease holding nothing to spend (a watch lease) is not
		 * shown from memory until answered after the event. One that
		 * pays for calls shows its balance in their answers too,
		 * which cannot wait: both follow at its next answer. */
		if (avail(s) <= 0)
			s->touched++;
	}
}
