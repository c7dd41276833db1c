/*
 * Outcome reports retried until applied (settle.h): one entry per Refund
 * report, in a list, each with its own timer and arena; the earned
 * charges in one stack, taken by debits or by one Settle call at a time
 * on one timer.
 */
#include "settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include "account_paths.h"

#define SETTLE_PATH "/seo.account.v1.Account/Settle"
#define FIRST_WAIT_MS 200
#define MAX_WAIT_MS 5000
/* Earned charges one Settle call carries at most. */
#define SETTLE_MAX 1024

typedef struct entry {
	struct entry *prev, *next;
	gw_settler *s;
	struct event *timer;
	seo_arena *arena; /* the answers of its tries */
	ProtobufCAllocator alloc;
	char charge_id[64];
	char request_id[65];
	long long used;
	int wait_ms;
	int64_t give_up_at;
} entry;

struct gw_settler {
	struct event_base *base;
	rpc_client *const *account;
	int timeout_ms;
	int closed;
	entry *head;
	size_t n;
	/* Earned charges waiting, a stack (their order does not matter). */
	gw_earned *earned;
	size_t n_earned, cap_earned;
	struct event *flush;  /* the next Settle call */
	int flush_wait_ms;    /* GW_SETTLE_FLUSH_MS, longer after failures */
	seo_arena *sending;   /* the Settle call in flight, with its batch */
	ProtobufCAllocator sending_alloc;
	gw_earned *sent;
	size_t n_sent;
};

static void entry_free(entry *e)
{
	gw_settler *s = e->s;

	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		s->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	s->n--;
	if (e->timer != NULL)
		event_free(e->timer);
	seo_arena_free(e->arena);
	free(e);
}

static void send_report(entry *e);

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	send_report(arg);
}

/* Gives up (logged) or waits and tries again. */
static void retry(entry *e, const char *why)
{
	struct timeval tv = {e->wait_ms / 1000, (e->wait_ms % 1000) * 1000};

	if (e->s->closed || seo_mono_ms() + e->wait_ms > e->give_up_at ||
	    evtimer_add(e->timer, &tv) != 0) {
		log_error("outcome of %s (request %s, %lld credits) not reported, "
			  "left to the reconcile job: %s", e->charge_id,
			  e->request_id, e->used, why);
		entry_free(e);
		return;
	}
	log_warn("outcome of %s not reported yet, again in %d ms: %s",
		 e->charge_id, e->wait_ms, why);
	e->wait_ms = e->wait_ms * 2 < MAX_WAIT_MS ? e->wait_ms * 2 : MAX_WAIT_MS;
}

static void on_report(const rpc_result *res, void *ud)
{
	entry *e = ud;

	if (res->grpc_status == SEO_GRPC_OK) {
		entry_free(e);
		return;
	}
	/* An unknown charge will not become known: nothing to retry. */
	if (res->grpc_status == SEO_GRPC_NOT_FOUND) {
		log_error("outcome of %s not applied: %s", e->charge_id,
			  res->message);
		entry_free(e);
		return;
	}
	retry(e, res->message);
}

static void send_report(entry *e)
{
	Seo__Account__V1__RefundRequest req = SEO__ACCOUNT__V1__REFUND_REQUEST__INIT;
	rpc_meta meta[] = {{"x-request-id", e->request_id}};
	rpc_client *account = *e->s->account;

	req.charge_id = e->charge_id;
	req.has_credits_used = 1;
	req.credits_used = e->used;
	if (e->s->closed || account == NULL) {
		retry(e, "the gateway is stopping");
		return;
	}
	if (rpc_client_call(account, GW_REFUND_PATH, &req.base,
			    &seo__account__v1__refund_response__descriptor,
			    &e->alloc, e->s->timeout_ms, meta, 1, on_report, e) != 0)
		retry(e, "out of memory");
}

/* ---- earned charges ------------------------------------------------------ */

/* Arms the Settle timer when charges wait and no Settle is in flight. */
static void arm_flush(gw_settler *s)
{
	struct timeval tv = {s->flush_wait_ms / 1000,
			     (s->flush_wait_ms % 1000) * 1000};

	if (s->closed || s->n_earned == 0 || s->sending != NULL ||
	    evtimer_pending(s->flush, NULL))
		return;
	if (evtimer_add(s->flush, &tv) != 0)
		log_error("cannot arm the outcome timer: %zu earned charges "
			  "wait for the next debit", s->n_earned);
}

static int push(gw_settler *s, const gw_earned *e, size_t n)
{
	if (s->n_earned + n > s->cap_earned) {
		size_t cap = s->cap_earned ? s->cap_earned : 64;
		gw_earned *grown;

		while (cap < s->n_earned + n)
			cap *= 2;
		grown = realloc(s->earned, cap * sizeof(*grown));
		if (grown == NULL) {
			log_error("outcome of %zu earned charges not reported, "
				  "left to the reconcile job: out of memory", n);
			return SEO_ENOMEM;
		}
		s->earned = grown;
		s->cap_earned = cap;
	}
	memcpy(s->earned + s->n_earned, e, n * sizeof(*e));
	s->n_earned += n;
	arm_flush(s);
	return 0;
}

/* Drops (logged) the charges waiting past GW_SETTLE_RETRY_MS. */
static void drop_stale(gw_settler *s, int64_t now)
{
	size_t kept = 0, n = s->n_earned;

	for (size_t i = 0; i < n; i++)
		if (now - s->earned[i].since <= GW_SETTLE_RETRY_MS)
			s->earned[kept++] = s->earned[i];
	s->n_earned = kept;
	if (kept < n)
		log_error("outcome of %zu earned charges not reported, left to "
			  "the reconcile job: svc-account did not take them",
			  n - kept);
}

static void sent_done(gw_settler *s)
{
	seo_arena_free(s->sending);
	s->sending = NULL;
	s->sent = NULL;
	s->n_sent = 0;
}

static void on_settled(const rpc_result *res, void *ud)
{
	gw_settler *s = ud;

	if (res->grpc_status == SEO_GRPC_OK) {
		s->flush_wait_ms = GW_SETTLE_FLUSH_MS;
	} else {
		s->flush_wait_ms = s->flush_wait_ms < FIRST_WAIT_MS
					   ? FIRST_WAIT_MS
					   : s->flush_wait_ms * 2 < MAX_WAIT_MS
						     ? s->flush_wait_ms * 2
						     : MAX_WAIT_MS;
		log_warn("outcome of %zu earned charges not reported yet, again "
			 "in %d ms: %s", s->n_sent, s->flush_wait_ms, res->message);
		push(s, s->sent, s->n_sent);
	}
	sent_done(s);
	arm_flush(s);
}

/* Sends what waits, SETTLE_MAX at a time, in one Settle call. */
static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	Seo__Account__V1__SettleRequest req = SEO__ACCOUNT__V1__SETTLE_REQUEST__INIT;
	gw_settler *s = arg;
	rpc_client *account = *s->account;
	size_t n;

	(void)fd;
	(void)what;
	drop_stale(s, seo_mono_ms());
	if (s->closed || s->n_earned == 0 || s->sending != NULL)
		return;
	n = s->n_earned < SETTLE_MAX ? s->n_earned : SETTLE_MAX;
	s->sending = seo_arena_new(0);
	if (s->sending == NULL)
		goto again;
	seo_arena_pb_allocator(s->sending, &s->sending_alloc);
	s->sent = seo_arena_alloc(s->sending, n * sizeof(*s->sent));
	req.earned = seo_arena_alloc(s->sending, n * sizeof(char *));
	if (s->sent == NULL || req.earned == NULL)
		goto again;
	s->n_earned -= n;
	memcpy(s->sent, s->earned + s->n_earned, n * sizeof(*s->sent));
	s->n_sent = n;
	for (size_t i = 0; i < n; i++)
		req.earned[i] = s->sent[i].id;
	req.n_earned = n;
	if (account != NULL &&
	    rpc_client_call(account, SETTLE_PATH, &req.base,
			    &seo__account__v1__settle_response__descriptor,
			    &s->sending_alloc, s->timeout_ms, NULL, 0, on_settled,
			    s) == 0)
		return;
	push(s, s->sent, s->n_sent);
again:
	/* Out of memory, or no client: later, as after a failed call. */
	sent_done(s);
	s->flush_wait_ms = MAX_WAIT_MS;
	arm_flush(s);
}

int gw__settle_earned(gw_settler *s, const char *charge_id,
		       const char *request_id, long long charged)
{
	gw_earned e;

	if (strlen(charge_id) >= sizeof(e.id))
		return gw__settle(s, charge_id, request_id, charged);
	memcpy(e.id, charge_id, strlen(charge_id) + 1);
	e.since = seo_mono_ms();
	return push(s, &e, 1);
}

int gw__settle_take(gw_settler *s, seo_arena *arena, gw_earned **out,
		    size_t *n)
{
	size_t k = s->n_earned < GW_SETTLE_CARRY ? s->n_earned : GW_SETTLE_CARRY;
	gw_earned *e = k > 0 ? seo_arena_alloc(arena, k * sizeof(*e)) : NULL;

	*out = NULL;
	*n = 0;
	if (k == 0)
		return 0;
	if (e == NULL)
		return SEO_ENOMEM;
	s->n_earned -= k;
	memcpy(e, s->earned + s->n_earned, k * sizeof(*e));
	*out = e;
	*n = k;
	return 0;
}

void gw__settle_return(gw_settler *s, const gw_earned *e, size_t n)
{
	if (n > 0)
		push(s, e, n);
}

/* ---- the settler ------------------------------------------------------------ */

int gw__settler_new(struct event_base *base, rpc_client *const *account,
		    int timeout_ms, gw_settler **out)
{
	gw_settler *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return SEO_ENOMEM;
	s->base = base;
	s->account = account;
	s->timeout_ms = timeout_ms;
	s->flush_wait_ms = GW_SETTLE_FLUSH_MS;
	s->flush = evtimer_new(base, on_flush, s);
	if (s->flush == NULL) {
		free(s);
		return SEO_ENOMEM;
	}
	*out = s;
	return 0;
}

void gw__settler_close(gw_settler *s)
{
	if (s != NULL)
		s->closed = 1;
}

void gw__settler_free(gw_settler *s)
{
	if (s == NULL)
		return;
	if (s->n + s->n_earned + s->n_sent > 0)
		log_error("%zu outcomes not reported, left to the reconcile job",
			  s->n + s->n_earned + s->n_sent);
	while (s->head != NULL)
		entry_free(s->head);
	sent_done(s);
	event_free(s->flush);
	free(s->earned);
	free(s);
}

size_t gw__settler_pending(const gw_settler *s)
{
	return s->n + s->n_earned + s->n_sent;
}

int gw__settle(gw_settler *s, const char *charge_id, const char *request_id,
	       long long credits_used)
{
	entry *e = calloc(1, sizeof(*e));

	if (e != NULL) {
		e->arena = seo_arena_new(0);
		e->timer = evtimer_new(s->base, on_timer, e);
	}
	if (e == NULL || e->arena == NULL || e->timer == NULL) {
		log_error("outcome of %s not reported, left to the reconcile job: "
			  "out of memory", charge_id);
		if (e != NULL) {
			if (e->timer != NULL)
				event_free(e->timer);
			seo_arena_free(e->arena);
			free(e);
		}
		return SEO_ENOMEM;
	}
	e->s = s;
	seo_arena_pb_allocator(e->arena, &e->alloc);
	snprintf(e->charge_id, sizeof(e->charge_id), "%s", charge_id);
	snprintf(e->request_id, sizeof(e->request_id), "%s", request_id);
	e->used = credits_used;
	e->wait_ms = FIRST_WAIT_MS;
	e->give_up_at = seo_mono_ms() + GW_SETTLE_RETRY_MS;
	e->next = s->head;
	if (s->head != NULL)
		s->head->prev = e;
	s->head = e;
	s->n++;
	send_report(e);
	return 0;
}
