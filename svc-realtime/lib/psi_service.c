/*
 * The PagePerformance handler: the URL policy, the daily quotas, the 24 h
 * cache shared by every user, and single-flight of identical uncached
 * runs in this process. Billing is the gateway's: the route is billed
 * after the work (GW_BILL_AFTER), so a failure here never costs anything.
 *
 * Order of a call: caller identity, URL syntax and an address host (400s,
 * not counted), the cache, a name host on a miss (400 private_ip), the
 * person's daily count (429 user_quota_exceeded), then for a miss one
 * upstream run per url + strategy in flight: the service-wide attempt
 * count (429 quota_exceeded, and the person's count is taken back),
 * PageSpeed (503 psi_unavailable), the cache write.
 */
#include "rt_service.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "rt.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/pg.h"
#include "seo/realtime/v1/realtime.pb-c.h"
#include "seo/util.h"

/* The spec's limits. */
#define USER_CALLS_PER_DAY 50
#define ATTEMPTS_PER_DAY 25000
#define CACHE_MS ((int64_t)24 * 3600 * 1000)
/* The gateway's bound on a URL (IndexNow's). */
#define URL_MAX 2048

/* Connections: calls hold one only between their statements. */
#define DB_POOL 8
/* Time kept from the caller's deadline for the cache write and the
 * answer. */
#define ANSWER_MARGIN_MS 1000

/* The database is away: 503 service_unavailable. */
#define STATE_UNAVAILABLE "page-performance state is unavailable"

/* One upstream run of a url + strategy and the calls waiting for it. */
typedef struct flight {
	struct flight *next;
	char *key;  /* strategy, a space, url */
	int refs;   /* the leader and the followers still reading */
	int done;
	/* The outcome, once done. */
	const char *code; /* NULL on success (static) */
	char message[300];
	char *result;     /* data object without cached_at (JSON text) */
	int64_t cached_at;
} flight;

struct rt_svc {
	seo_pg_pool *db;
	const seo_fetch_config *fetch; /* borrowed */
	pthread_mutex_t mu;
	pthread_cond_t landed;
	flight *flights;
	rt_slots *slots;
};

int rt_svc_new(const char *pg_url, const seo_fetch_config *fetch, rt_svc **out)
{
	char dir[PATH_MAX];
	rt_svc *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (s == NULL)
		return SEO_ENOMEM;
	s->fetch = fetch;
	/* Not found is reported on use, so that the other analyses serve. */
	rc = rt_db_pool_new(pg_url,
			    seo_pg_migrations_dir(&rt_migrations, dir, sizeof(dir)) == 0
				    ? dir : NULL,
			    DB_POOL, &s->db);
	if (rc == 0)
		rc = rt_slots_new((unsigned)seo_config_num(SEO_CFG_REALTIME_WORKSPACE_FETCHES),
				  &s->slots);
	if (rc != 0) {
		seo_pg_pool_free(s->db);
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->landed, NULL);
	*out = s;
	return 0;
}

const seo_fetch_config *rt_svc_fetch(const rt_svc *s)
{
	return s != NULL ? s->fetch : NULL;
}

rt_slots *rt_svc_slots(const rt_svc *s)
{
	return s != NULL ? s->slots : NULL;
}

void rt_svc_free(rt_svc *s)
{
	if (s == NULL)
		return;
	rt_slots_free(s->slots);
	seo_pg_pool_free(s->db);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->landed);
	free(s);
}

int rt_svc_db_check(rt_svc *s)
{
	seo_pg_conn *c;
	int rc = rt_db_get(s->db, &c);

	if (rc == 0)
		seo_pg_pool_put(s->db, c);
	return rc;
}

/* ---- the steps of a call ------------------------------------------------- */

static int unavailable(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "service_unavailable", STATE_UNAVAILABLE);
}

/* retry_after: the daily quotas reset at the next UTC midnight. */
static int quota_fail(rpc_ctx *ctx, const char *code, int64_t to_midnight_s,
		      const char *message)
{
	char extra[48];

	snprintf(extra, sizeof(extra), "{\"retry_after\": %lld}",
		 (long long)to_midnight_s);
	rpc_ctx_fail_extra(ctx, extra);
	return rpc_ctx_fail(ctx, code, "%s", message);
}

/* http(s), no credentials, no fragment. */
static int parse_url(rpc_ctx *ctx, const char *url, seo_url *u)
{
	if (strlen(url) > URL_MAX || seo_url_parse(url, rpc_ctx_arena(ctx), u) != 0)
		return rpc_ctx_fail(ctx, "invalid_url",
				    "\"%.200s\" is not an http(s) URL without "
				    "credentials or fragment", url);
	return 0;
}

/* A public host, by the live fetches' address policy and allow-list,
 * before anything is counted or sent upstream. A name that does not
 * resolve here is PageSpeed's to report, like any page it cannot load. */
static int check_host(rt_svc *s, rpc_ctx *ctx, const seo_url *u)
{
	struct sockaddr_storage addr;

	if (seo_resolve_checked(rt_svc_fetch(s), u->host, u->port, &addr) ==
	    SEO_EDENIED)
		return rpc_ctx_fail(ctx, "private_ip",
				    "%s resolves to a private or reserved address",
				    u->host);
	return 0;
}

/* The answer {url, data} from the cached data object. */
static int answer(rpc_ctx *ctx, const char *url, const char *result,
		  int64_t cached_at, ProtobufCMessage **resp)
{
	json_t *data = json_loads(result, 0, NULL), *obj;
	const char *where = NULL;
	char iso[21];
	int rc;

	rt_iso8601(cached_at, iso);
	if (data == NULL || json_object_set_new(data, "cached_at",
						json_string(iso)) != 0) {
		json_decref(data);
		return rpc_ctx_fail(ctx, "internal_error",
				    "cached result is not a json object");
	}
	obj = json_pack("{s:s, s:o}", "url", url, "data", data);
	if (obj == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	rc = rt_pb_from_json(obj, &seo__realtime__v1__page_performance_response__descriptor,
			     rpc_ctx_arena(ctx), resp, &where);
	json_decref(obj);
	if (rc == SEO_ENOMEM)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	if (rc != 0) {
		log_error("page performance does not fit its answer at %s",
			  where ? where : "?");
		return rpc_ctx_fail(ctx, "internal_error",
				    "analysis does not fit its answer");
	}
	return 0;
}

/* A fresh cached result into *result (malloc'd): 0, SEO_ENOTFOUND or
 * SEO_EDB. */
static int cache_get(rt_svc *s, const char *url, const char *strategy,
		     char **result, int64_t *cached_at)
{
	seo_pg_conn *c;
	int rc = rt_db_get(s->db, &c);

	*result = NULL;
	if (rc != 0)
		return SEO_EDB;
	rc = rt_db_psi_cache_get(c, url, strategy, seo_now_ms() - CACHE_MS,
				 result, cached_at);
	seo_pg_pool_put(s->db, c);
	return rc;
}

/* ---- single-flight ----------------------------------------------------------- */

static void flight_fail(flight *f, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void flight_fail(flight *f, const char *code, const char *fmt, ...)
{
	va_list ap;

	f->code = code;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
}

/* The leader's work: another look at the cache (a flight that just
 * landed, another replica), the service-wide attempt, the run, the
 * cache write. The outcome goes into `f`. */
static void fly(rt_svc *s, flight *f, const char *url, const char *strategy,
		const char *day, int64_t deadline)
{
	char why[256], *text = NULL;
	json_t *data = NULL;
	seo_pg_conn *c = NULL;
	int64_t left;
	int rc;

	rc = cache_get(s, url, strategy, &f->result, &f->cached_at);
	if (rc != SEO_ENOTFOUND) {
		if (rc != 0)
			flight_fail(f, "service_unavailable", STATE_UNAVAILABLE);
		return;
	}
	rc = rt_db_get(s->db, &c);
	if (rc == 0) {
		rc = rt_db_count(c, &rt_db_attempts, day, NULL, ATTEMPTS_PER_DAY);
		seo_pg_pool_put(s->db, c);
	}
	if (rc == SEO_EDENIED) {
		flight_fail(f, "quota_exceeded",
			    "the service-wide daily page-performance quota is used up");
		return;
	}
	if (rc != 0) {
		flight_fail(f, "service_unavailable", STATE_UNAVAILABLE);
		return;
	}
	left = deadline == 0 ? RT_PSI_TIMEOUT_MS
			     : deadline - seo_mono_ms() - ANSWER_MARGIN_MS;
	if (left < 1) {
		snprintf(why, sizeof(why), "no time left before the deadline");
		rc = SEO_EUPSTREAM;
	} else {
		rc = rt_psi_run(seo_config(SEO_CFG_PAGESPEED_URL),
				seo_config(SEO_CFG_PAGESPEED_KEY), url, strategy,
				left, &data, why, sizeof(why));
	}
	if (rc == SEO_ENOMEM) {
		flight_fail(f, "internal_error", "out of memory");
		return;
	}
	if (rc != 0) {
		log_warn("page-speed run of %s (%s) failed: %s", url, strategy, why);
		flight_fail(f, "psi_unavailable", "the page-speed upstream failed: %s",
			    why);
		return;
	}
	text = json_dumps(data, JSON_COMPACT);
	json_decref(data);
	if (text == NULL) {
		flight_fail(f, "internal_error", "out of memory");
		return;
	}
	rc = rt_db_get(s->db, &c);
	if (rc == 0) {
		int64_t now = seo_now_ms();

		rc = rt_db_psi_cache_put(c, url, strategy, text, now,
					 now - CACHE_MS, &f->result, &f->cached_at);
		seo_pg_pool_put(s->db, c);
	}
	free(text);
	if (rc != 0)
		flight_fail(f, "service_unavailable", STATE_UNAVAILABLE);
}

static void flight_unref(flight *f)
{
	if (--f->refs > 0)
		return;
	free(f->key);
	free(f->result);
	free(f);
}

/* Absolute CLOCK_REALTIME time of a seo_mono_ms() deadline. */
static struct timespec wall_deadline(int64_t deadline)
{
	struct timespec ts;
	int64_t left = deadline - seo_mono_ms();

	clock_gettime(CLOCK_REALTIME, &ts);
	left = left < 0 ? 0 : left;
	ts.tv_sec += (time_t)(left / 1000);
	ts.tv_nsec += (long)(left % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/*
 * Runs or joins the flight of `url` + `strategy`; copies its outcome:
 * 0 with *result (malloc'd) and *cached_at, or a failure with its public
 * *code and `message`.
 */
static int join_flight(rt_svc *s, const char *url, const char *strategy,
		       const char *day, int64_t deadline, char **result,
		       int64_t *cached_at, const char **code, char *message,
		       size_t message_len)
{
	size_t klen = strlen(strategy) + 1 + strlen(url) + 1;
	char *key = malloc(klen);
	flight *f;
	int rc = 0;

	*result = NULL;
	if (key == NULL)
		goto oom;
	snprintf(key, klen, "%s %s", strategy, url);
	pthread_mutex_lock(&s->mu);
	for (f = s->flights; f != NULL && strcmp(f->key, key) != 0; f = f->next)
		;
	if (f != NULL) {
		/* Time to answer is kept, as the leader keeps it. */
		struct timespec until = wall_deadline(deadline - ANSWER_MARGIN_MS);

		free(key);
		f->refs++;
		while (!f->done && rc == 0)
			rc = deadline == 0 ? pthread_cond_wait(&s->landed, &s->mu)
					   : pthread_cond_timedwait(&s->landed, &s->mu,
								    &until);
	} else {
		f = calloc(1, sizeof(*f));
		if (f == NULL) {
			pthread_mutex_unlock(&s->mu);
			free(key);
			goto oom;
		}
		f->key = key;
		f->refs = 1;
		f->next = s->flights;
		s->flights = f;
		pthread_mutex_unlock(&s->mu);

		fly(s, f, url, strategy, day, deadline);

		pthread_mutex_lock(&s->mu);
		for (flight **p = &s->flights; *p != NULL; p = &(*p)->next)
			if (*p == f) {
				*p = f->next;
				break;
			}
		f->done = 1;
		pthread_cond_broadcast(&s->landed);
	}
	if (!f->done) {
		*code = "service_unavailable";
		snprintf(message, message_len,
			 "the page-speed run did not end before the deadline");
	} else if (f->code != NULL) {
		*code = f->code;
		snprintf(message, message_len, "%s", f->message);
	} else if ((*result = strdup(f->result)) == NULL) {
		*code = "internal_error";
		snprintf(message, message_len, "out of memory");
	} else {
		*code = NULL;
		*cached_at = f->cached_at;
	}
	flight_unref(f);
	pthread_mutex_unlock(&s->mu);
	return *code == NULL ? 0 : SEO_EUPSTREAM;
oom:
	*code = "internal_error";
	snprintf(message, message_len, "out of memory");
	return SEO_ENOMEM;
}

/* ---- the handler ------------------------------------------------------------ */

int rt__page_performance(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp)
{
	const Seo__Realtime__V1__PagePerformanceRequest *r = (const void *)req;
	const char *user = rpc_ctx_meta(ctx, "seo-user-id");
	const char *strategy = rt_psi_strategy(r->strategy), *code;
	rt_svc *s = rpc_ctx_service(ctx);
	char day[11], message[300], *result = NULL;
	int64_t to_midnight, cached_at;
	seo_pg_conn *c = NULL;
	seo_url u;
	int rc;

	if (user == NULL || user[0] == '\0')
		return rpc_ctx_fail(ctx, "invalid_api_key",
				    "the call carries no caller identity");
	rc = parse_url(ctx, r->url, &u);
	/* An address is checked at once; a name is resolved only when a run
	 * is needed, so that cache hits wait for no DNS. */
	if (rc == 0 && u.host_kind != SEO_HOST_NAME)
		rc = check_host(s, ctx, &u);
	if (rc != 0)
		return rc;
	if (s == NULL)
		return unavailable(ctx);
	rt_utc_day(seo_now_ms(), day, &to_midnight);

	rc = cache_get(s, r->url, strategy, &result, &cached_at);
	if (rc != 0 && rc != SEO_ENOTFOUND)
		return unavailable(ctx);
	if (rc == SEO_ENOTFOUND && u.host_kind == SEO_HOST_NAME) {
		rc = check_host(s, ctx, &u);
		if (rc != 0)
			return rc;
	}

	/* Every call counts for its person, cache hits and failures too. */
	rc = rt_db_get(s->db, &c);
	if (rc == 0) {
		rc = rt_db_count(c, &rt_db_user_calls, day, user, USER_CALLS_PER_DAY);
		seo_pg_pool_put(s->db, c);
	}
	if (rc != 0) {
		free(result);
		if (rc != SEO_EDENIED)
			return unavailable(ctx);
		return quota_fail(ctx, "user_quota_exceeded", to_midnight,
				  "50 page-performance calls per person per UTC "
				  "day are used up");
	}

	if (result == NULL)
		rc = join_flight(s, r->url, strategy, day, rpc_ctx_deadline(ctx),
				 &result, &cached_at, &code, message,
				 sizeof(message));
	if (rc == 0) {
		rc = answer(ctx, r->url, result, cached_at, resp);
		free(result);
		return rc;
	}
	if (strcmp(code, "quota_exceeded") != 0)
		return rpc_ctx_fail(ctx, code, "%s", message);
	/* Refused before any run: not one of the person's calls. */
	if (rt_db_get(s->db, &c) == 0) {
		rt_db_uncount(c, &rt_db_user_calls, day, user);
		seo_pg_pool_put(s->db, c);
	}
	return quota_fail(ctx, code, to_midnight, message);
}
