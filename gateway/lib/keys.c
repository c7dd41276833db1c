/*
 * Kept keys and the watch that forgets them (keys.h): a key in one of the
 * WAYS slots of the set its hash's first hex digits name (the least
 * recently used of them given up for a new key when all are taken), and
 * one Watch call at a time, which
 * also carries the rate tokens going back; a key's next rate grant asked
 * ahead is an Authorize of its own.
 */
#include "keys.h"

#include <stdlib.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include "account_paths.h"

/* The watch's deadline: svc-account holds it up to 1 s. */
#define WATCH_TIMEOUT_MS 3000
#define RETRY_MS 200
/* Slots a key may take: two keys of one set must not drive each other
 * out, as one slot a key did (200 keys in 4096 slots share about five). */
#define WAYS 8
#define SETS (GW_KEYS_SLOTS / WAYS)
_Static_assert(GW_KEYS_SLOTS % WAYS == 0, "whole sets");

typedef struct slot {
	char hash[65]; /* "" when free */
	gw_kept_key key;
	gw_rate_grant grant;
	int held; /* listed in gw_keys.held */
	uint64_t used; /* gw_keys.clock at its last use */
} slot;

/* A key's grant asked ahead, alone: lives in its own arena until
 * answered. */
typedef struct rate_ask {
	gw_keys *k;
	char hash[65];
	seo_arena *arena;
	ProtobufCAllocator alloc;
} rate_ask;

/* Tokens of a key going back with the next watch call. */
typedef struct back {
	char hash[65];
	long long tokens;
} back;

struct gw_keys {
	struct event_base *base;
	rpc_client *const *account;
	char watcher[40];
	slot *slots;
	uint64_t clock;
	uint64_t epoch;
	int64_t trusted_until; /* seo_mono_ms() */
	char instance[32];     /* svc-account's, from the last answer */
	uint64_t since;
	struct event *retry;
	seo_arena *arena;      /* the Watch call in flight */
	ProtobufCAllocator alloc;
	int closed;
	gw_keys_heard_fn heard; /* what else the watch says; NULL: nothing */
	void *heard_ud;
	/* Slots that may hold rate tokens, and tokens going back. */
	size_t held[GW_KEYS_HELD];
	size_t n_held;
	back back[GW_KEYS_BACK];
	size_t n_back;
	size_t n_asks; /* grants asked ahead, unanswered */
	/* The last watch call (WatchRequest.stop): 1 on its way, 2 done. */
	int stop;
	seo_arena *stop_arena;
	ProtobufCAllocator stop_alloc;
};

/* The first slot of a hash's set (64 hex digits) by its first eight. */
static slot *set_of(gw_keys *k, const char *hash)
{
	unsigned long v = 0;

	for (int i = 0; i < 8 && hash[i] != '\0'; i++)
		v = v * 16 + (unsigned long)(hash[i] <= '9' ? hash[i] - '0'
							     : (hash[i] | 0x20) - 'a' + 10);
	return &k->slots[(v % SETS) * WAYS];
}

/* The slot keeping `hash`, or NULL. */
static slot *find(gw_keys *k, const char *hash)
{
	slot *set = set_of(k, hash);

	for (int i = 0; i < WAYS; i++)
		if (strcmp(set[i].hash, hash) == 0)
			return &set[i];
	return NULL;
}

/* Queues `tokens` of `hash` to go back; dropped when the queue is full
 * (fewer calls admitted for a moment, never more). */
static void give_back(gw_keys *k, const char *hash, long long tokens)
{
	size_t i;

	if (tokens <= 0)
		return;
	for (i = 0; i < k->n_back && strcmp(k->back[i].hash, hash) != 0; i++)
		;
	if (i == k->n_back) {
		if (k->n_back == GW_KEYS_BACK)
			return;
		memcpy(k->back[k->n_back].hash, hash, 65);
		k->back[k->n_back++].tokens = 0;
	}
	k->back[i].tokens += tokens;
}

/* A slot emptied: its tokens go back when `keep` (else, a key revoked or
 * removed, they are dropped: its bucket no longer matters). */
static void empty_slot(gw_keys *k, slot *s, int keep)
{
	long long n = gw__grant_recall(&s->grant);

	if (keep && s->hash[0] != '\0')
		give_back(k, s->hash, n);
	s->hash[0] = '\0';
	memset(&s->grant, 0, sizeof(s->grant));
}

/* Every token held goes back (everything forgotten, the gateway
 * stopping). */
static void give_back_held(gw_keys *k)
{
	for (size_t i = 0; i < k->n_held; i++) {
		slot *s = &k->slots[k->held[i]];

		give_back(k, s->hash, gw__grant_recall(&s->grant));
	}
}

static void forget_all(gw_keys *k)
{
	give_back_held(k);
	for (size_t i = 0; i < GW_KEYS_SLOTS; i++)
		k->slots[i].hash[0] = '\0';
	k->epoch++;
}

static void forget_key(gw_keys *k, const char *hash)
{
	slot *s = find(k, hash);

	if (s != NULL)
		empty_slot(k, s, 0);
	k->epoch++;
}

static void forget_user(gw_keys *k, const char *user_id)
{
	for (size_t i = 0; i < GW_KEYS_SLOTS; i++)
		if (strcmp(k->slots[i].key.user_id, user_id) == 0)
			empty_slot(k, &k->slots[i], 0);
	k->epoch++;
}

/* Sends back what a recall names. */
static void recall_key(gw_keys *k, const char *hash)
{
	slot *s = find(k, hash);

	if (s != NULL)
		give_back(k, hash, gw__grant_recall(&s->grant));
}

/* Tokens held past their time go back; slots holding none leave the
 * list. */
static void expire_held(gw_keys *k, int64_t now)
{
	for (size_t i = 0; i < k->n_held;) {
		slot *s = &k->slots[k->held[i]];

		give_back(k, s->hash, gw__grant_expire(&s->grant, now));
		if (s->grant.tokens > 0) {
			i++;
			continue;
		}
		s->held = 0;
		k->held[i] = k->held[--k->n_held];
	}
}

/* Nothing kept is trusted until the watch answers again. */
static void distrust(gw_keys *k)
{
	k->trusted_until = 0;
	forget_all(k);
}

static void ask(gw_keys *k);

void gw__keys_heard(gw_keys *k, const Seo__Account__V1__WatchResponse *w,
		    int64_t now_ms)
{
	if (w->reset || strcmp(w->instance, k->instance) != 0) {
		forget_all(k);
		/* Another svc-account never granted them: not given back. */
		if (strcmp(w->instance, k->instance) != 0)
			k->n_back = 0;
		snprintf(k->instance, sizeof(k->instance), "%s", w->instance);
	}
	for (size_t i = 0; i < w->n_keys; i++)
		forget_key(k, w->keys[i]);
	for (size_t i = 0; i < w->n_users; i++)
		forget_user(k, w->users[i]);
	for (size_t i = 0; i < w->n_rate_recall; i++)
		recall_key(k, w->rate_recall[i]);
	k->since = w->seq;
	k->trusted_until = now_ms + GW_KEYS_TRUST_MS;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ask(arg);
}

static void ask_later(gw_keys *k)
{
	struct timeval tv = {0, RETRY_MS * 1000};

	if (!k->closed && evtimer_add(k->retry, &tv) != 0)
		log_error("cannot arm the key watch's timer: keys are asked "
			  "for at every call");
}

static void on_watch(const rpc_result *res, void *ud)
{
	gw_keys *k = ud;
	const Seo__Account__V1__WatchResponse *w = (const void *)res->response;

	if (res->grpc_status != SEO_GRPC_OK) {
		if (!k->closed && k->trusted_until != 0)
			log_warn("key watch failed, keys are asked for at every "
				 "call until it answers: %s", res->message);
		distrust(k);
		seo_arena_free(k->arena);
		k->arena = NULL;
		ask_later(k);
		return;
	}
	gw__keys_heard(k, w, seo_mono_ms());
	if (k->heard != NULL)
		k->heard(w, k->heard_ud);
	seo_arena_free(k->arena);
	k->arena = NULL;
	ask(k);
}

/* Moves the tokens going back into `req`, allocated in `a`: 0, or
 * SEO_ENOMEM (they stay queued). */
static int put_back(gw_keys *k, seo_arena *a,
		    Seo__Account__V1__WatchRequest *req)
{
	Seo__Account__V1__RateTokens *t;

	if (k->n_back == 0)
		return 0;
	t = seo_arena_alloc(a, k->n_back * sizeof(*t));
	req->rate_back = seo_arena_alloc(a, k->n_back * sizeof(*req->rate_back));
	if (t == NULL || req->rate_back == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < k->n_back; i++) {
		seo__account__v1__rate_tokens__init(&t[i]);
		t[i].key_hash = seo_arena_strdup(a, k->back[i].hash);
		if (t[i].key_hash == NULL)
			return SEO_ENOMEM;
		t[i].tokens = k->back[i].tokens;
		req->rate_back[i] = &t[i];
	}
	req->n_rate_back = k->n_back;
	k->n_back = 0;
	return 0;
}

/* One Watch call: what stops a key after k->since; the tokens going back
 * go with it. */
static void ask(gw_keys *k)
{
	Seo__Account__V1__WatchRequest req = SEO__ACCOUNT__V1__WATCH_REQUEST__INIT;
	rpc_client *account = *k->account;

	if (k->closed || k->stop != 0 || account == NULL)
		return;
	k->arena = seo_arena_new(0);
	if (k->arena == NULL) {
		ask_later(k);
		return;
	}
	seo_arena_pb_allocator(k->arena, &k->alloc);
	req.watcher = k->watcher;
	req.instance = k->instance;
	req.since = k->since;
	expire_held(k, seo_mono_ms());
	if (put_back(k, k->arena, &req) != 0) {
		seo_arena_free(k->arena);
		k->arena = NULL;
		ask_later(k);
		return;
	}
	if (rpc_client_call(account, GW_WATCH_PATH, &req.base,
			    &seo__account__v1__watch_response__descriptor,
			    &k->alloc, WATCH_TIMEOUT_MS, NULL, 0, on_watch,
			    k) != 0) {
		seo_arena_free(k->arena);
		k->arena = NULL;
		ask_later(k);
	}
}

int gw__keys_new(struct event_base *base, rpc_client *const *account,
		 const char *watcher, gw_keys_heard_fn heard, void *heard_ud,
		 gw_keys **out)
{
	gw_keys *k = calloc(1, sizeof(*k));

	if (k == NULL)
		return SEO_ENOMEM;
	k->slots = calloc(GW_KEYS_SLOTS, sizeof(*k->slots));
	k->retry = evtimer_new(base, on_retry, k);
	if (k->slots == NULL || k->retry == NULL) {
		gw__keys_free(k);
		return SEO_ENOMEM;
	}
	k->base = base;
	k->account = account;
	k->heard = heard;
	k->heard_ud = heard_ud;
	snprintf(k->watcher, sizeof(k->watcher), "%s", watcher);
	ask(k);
	*out = k;
	return 0;
}

void gw__keys_close(gw_keys *k)
{
	if (k == NULL)
		return;
	k->closed = 1;
	distrust(k);
}

void gw__keys_free(gw_keys *k)
{
	if (k == NULL)
		return;
	if (k->retry != NULL)
		event_free(k->retry);
	seo_arena_free(k->arena);
	seo_arena_free(k->stop_arena);
	free(k->slots);
	free(k);
}

uint64_t gw__keys_epoch(const gw_keys *k)
{
	return k->epoch;
}

int gw__keys_get(gw_keys *k, const char *hash, int64_t now_ms,
		 gw_kept_key *out)
{
	slot *s = find(k, hash);

	if (now_ms >= k->trusted_until || s == NULL)
		return 0;
	s->used = ++k->clock;
	*out = s->key;
	return 1;
}

void gw__keys_put(gw_keys *k, const char *hash, const gw_kept_key *key,
		  uint64_t epoch)
{
	slot *s = find(k, hash), *set = set_of(k, hash);

	if (epoch != k->epoch || k->closed || strlen(hash) != 64)
		return;
	for (int i = 0; s == NULL && i < WAYS; i++)
		if (set[i].hash[0] == '\0')
			s = &set[i];
	if (s == NULL) {
		s = &set[0];
		for (int i = 1; i < WAYS; i++)
			if (set[i].used < s->used)
				s = &set[i];
		empty_slot(k, s, 1);
	}
	if (s->hash[0] == '\0')
		memcpy(s->hash, hash, 65);
	s->used = ++k->clock;
	s->key = *key;
}

static void on_rate_ask(const rpc_result *res, void *ud)
{
	rate_ask *a = ud;
	gw_keys *k = a->k;
	const Seo__Account__V1__AuthorizeResponse *r = (const void *)res->response;

	k->n_asks--;
	if (!k->closed && res->grpc_status == SEO_GRPC_OK && r->rate != NULL) {
		gw_rate rate = {r->rate->limit, r->rate->remaining,
				r->rate->reset_s};

		gw__keys_rate_granted(k, a->hash, r->rate->granted, &rate,
				      seo_mono_ms());
	} else if (!k->closed) {
		gw__keys_rate_unasked(k, a->hash);
	}
	seo_arena_free(a->arena);
}

/* Asks svc-account for `want` tokens of `hash` ahead, with an Authorize
 * that counts no call (rate_limited unset) and debits nothing: 0, or
 * SEO_ENOMEM or SEO_ECLOSED (stopping): not asked. */
static int ask_ahead(gw_keys *k, const char *hash, long long want)
{
	Seo__Account__V1__AuthorizeRequest req =
		SEO__ACCOUNT__V1__AUTHORIZE_REQUEST__INIT;
	rpc_client *account = *k->account;
	seo_arena *arena;
	rate_ask *a;

	if (account == NULL || k->closed)
		return SEO_ECLOSED;
	arena = seo_arena_new(0);
	a = arena != NULL ? seo_arena_alloc(arena, sizeof(*a)) : NULL;
	if (a == NULL) {
		seo_arena_free(arena);
		return SEO_ENOMEM;
	}
	a->k = k;
	a->arena = arena;
	memcpy(a->hash, hash, 65);
	seo_arena_pb_allocator(arena, &a->alloc);
	req.key_hash = a->hash;
	req.rate_want = want;
	req.no_balance = 1;
	if (rpc_client_call(account, GW_AUTHORIZE_PATH, &req.base,
			    &seo__account__v1__authorize_response__descriptor,
			    &a->alloc, GW_RATE_ASK_MS, NULL, 0, on_rate_ask,
			    a) != 0) {
		seo_arena_free(arena);
		return SEO_ENOMEM;
	}
	k->n_asks++;
	return 0;
}

int gw__keys_rate_take(gw_keys *k, const char *hash, int64_t now,
		       gw_rate *rate, long long *want, int *asked)
{
	slot *s = find(k, hash);
	long long ask;
	int taken;

	*want = 0;
	*asked = 0;
	if (s == NULL || k->stop != 0)
		return 0;
	/* Tokens past their hold are not spent: they go back. */
	give_back(k, hash, gw__grant_expire(&s->grant, now));
	taken = gw__grant_take(&s->grant, now, rate, &ask);
	if (!taken)
		*want = ask;
	else if (ask > 0 && ask_ahead(k, hash, ask) == 0)
		*asked = 1;
	else if (ask > 0)
		gw__grant_unasked(&s->grant);
	return taken;
}

void gw__keys_rate_granted(gw_keys *k, const char *hash, long long granted,
			   const gw_rate *rate, int64_t now)
{
	slot *s = find(k, hash);

	if (s == NULL || k->stop != 0) {
		give_back(k, hash, granted);
		return;
	}
	gw__grant_add(&s->grant, granted, rate, now);
	if (s->grant.tokens == 0 || s->held)
		return;
	if (k->n_held == GW_KEYS_HELD) {
		give_back(k, hash, gw__grant_recall(&s->grant));
		return;
	}
	s->held = 1;
	k->held[k->n_held++] = (size_t)(s - k->slots);
}

void gw__keys_rate_unasked(gw_keys *k, const char *hash)
{
	slot *s = find(k, hash);

	if (s != NULL)
		gw__grant_unasked(&s->grant);
}

static void on_stopped(const rpc_result *res, void *ud)
{
	gw_keys *k = ud;

	(void)res;
	k->stop = 2;
}

int gw__keys_stop(gw_keys *k)
{
	Seo__Account__V1__WatchRequest req = SEO__ACCOUNT__V1__WATCH_REQUEST__INIT;
	rpc_client *account = *k->account;

	if (k->stop != 0)
		return k->stop == 1;
	/* A grant asked ahead goes back too, once answered. */
	if (k->n_asks > 0 && !k->closed && account != NULL)
		return 1;
	k->stop = 2;
	give_back_held(k);
	if (k->closed || account == NULL ||
	    (k->stop_arena = seo_arena_new(0)) == NULL)
		return 0;
	seo_arena_pb_allocator(k->stop_arena, &k->stop_alloc);
	req.watcher = k->watcher;
	req.instance = k->instance;
	req.since = k->since;
	req.stop = 1;
	if (put_back(k, k->stop_arena, &req) != 0 ||
	    rpc_client_call(account, GW_WATCH_PATH, &req.base,
			    &seo__account__v1__watch_response__descriptor,
			    &k->stop_alloc, WATCH_TIMEOUT_MS, NULL, 0, on_stopped,
			    k) != 0)
		return 0;
	k->stop = 1;
	return 1;
}
