/*
 * Kept keys and the watch that forgets them (keys.h): one slot per key by
 * the first hex digits of its hash, and one Watch call at a time.
 */
#include "keys.h"

#include <stdlib.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define WATCH_PATH "/seo.account.v1.Account/Watch"
/* The watch's deadline: svc-account holds it up to 1 s. */
#define WATCH_TIMEOUT_MS 3000
#define RETRY_MS 200

typedef struct slot {
	char hash[65]; /* "" when free */
	gw_kept_key key;
} slot;

struct gw_keys {
	struct event_base *base;
	rpc_client *const *account;
	char watcher[40];
	slot *slots;
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
};

/* The slot of a hash (64 hex digits) by its first eight. */
static slot *slot_of(gw_keys *k, const char *hash)
{
	unsigned long v = 0;

	for (int i = 0; i < 8 && hash[i] != '\0'; i++)
		v = v * 16 + (unsigned long)(hash[i] <= '9' ? hash[i] - '0'
							     : (hash[i] | 0x20) - 'a' + 10);
	return &k->slots[v % GW_KEYS_SLOTS];
}

static void forget_all(gw_keys *k)
{
	for (size_t i = 0; i < GW_KEYS_SLOTS; i++)
		k->slots[i].hash[0] = '\0';
	k->epoch++;
}

static void forget_key(gw_keys *k, const char *hash)
{
	slot *s = slot_of(k, hash);

	if (strcmp(s->hash, hash) == 0)
		s->hash[0] = '\0';
	k->epoch++;
}

static void forget_user(gw_keys *k, const char *user_id)
{
	for (size_t i = 0; i < GW_KEYS_SLOTS; i++)
		if (strcmp(k->slots[i].key.user_id, user_id) == 0)
			k->slots[i].hash[0] = '\0';
	k->epoch++;
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
		snprintf(k->instance, sizeof(k->instance), "%s", w->instance);
	}
	for (size_t i = 0; i < w->n_keys; i++)
		forget_key(k, w->keys[i]);
	for (size_t i = 0; i < w->n_users; i++)
		forget_user(k, w->users[i]);
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

/* One Watch call: what stops a key after k->since. */
static void ask(gw_keys *k)
{
	Seo__Account__V1__WatchRequest req = SEO__ACCOUNT__V1__WATCH_REQUEST__INIT;
	rpc_client *account = *k->account;

	if (k->closed || account == NULL)
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
	if (rpc_client_call(account, WATCH_PATH, &req.base,
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
	slot *s = slot_of(k, hash);

	if (now_ms >= k->trusted_until || strcmp(s->hash, hash) != 0)
		return 0;
	*out = s->key;
	return 1;
}

void gw__keys_put(gw_keys *k, const char *hash, const gw_kept_key *key,
		  uint64_t epoch)
{
	slot *s = slot_of(k, hash);

	if (epoch != k->epoch || k->closed || strlen(hash) != 64)
		return;
	memcpy(s->hash, hash, 65);
	s->key = *key;
}
