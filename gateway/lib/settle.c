/*
 * Outcome reports retried until applied (settle.h): one entry per report,
 * in a list, each with its own timer and arena.
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

#define REFUND_PATH "/seo.account.v1.Account/Refund"
#define FIRST_WAIT_MS 200
#define MAX_WAIT_MS 5000

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
	if (rpc_client_call(account, REFUND_PATH, &req.base,
			    &seo__account__v1__refund_response__descriptor,
			    &e->alloc, e->s->timeout_ms, meta, 1, on_report, e) != 0)
		retry(e, "out of memory");
}

int gw__settler_new(struct event_base *base, rpc_client *const *account,
		    int timeout_ms, gw_settler **out)
{
	gw_settler *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return SEO_ENOMEM;
	s->base = base;
	s->account = account;
	s->timeout_ms = timeout_ms;
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
	if (s->n > 0)
		log_error("%zu outcomes not reported, left to the reconcile job",
			  s->n);
	while (s->head != NULL)
		entry_free(s->head);
	free(s);
}

size_t gw__settler_pending(const gw_settler *s)
{
	return s->n;
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
