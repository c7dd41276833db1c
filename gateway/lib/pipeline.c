/*
 * The request path: route, decode, authorize (key, rate, role, debit in one
 * svc-account call), call the service, refund on failure (or, for a route
 * billed after its work, debit on success), answer JSON, log, count.
 * Everything runs on the loop thread; a request's state lives in one arena
 * freed when its answer has left.
 */
#include "gw.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "grpc/health/v1/health.pb-c.h"
#include "gw_http.h"
#include "gw_json.h"
#include "access_log.h"
#include "answer_cache.h"
#include "authfail.h"
#include "keys.h"
#include "lease.h"
#include "settle.h"
#include "client_ip.h"
#include "gw_routes.h"
#include "metrics.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/config.h"
#include "seo/json_write.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/log.h"
#include "seo/rpc.h"
#include "seo/util.h"

#include "account_paths.h"

#define API_KEY_HEADER "X-API-Key"
#define SIGNATURE_HEADER "Stripe-Signature"
#define HEALTH_PATH "/grpc.health.v1.Health/Check"
#define HEALTH_TIMEOUT_MS 1000
#define CLIENT_IP_META "seo-client-ip"
/* How often a stopping gateway looks whether it is done. */
#define DRAIN_POLL_MS 20

/* A forwarded request header longer than this is not forwarded. */
#define FORWARD_VALUE_MAX 256
/* The hex digits of the gateway's prefix of its calls' idempotency keys. */
#define KEY_PREFIX_LEN 16

struct gw_gateway {
	struct event_base *base;
	gw_http_server *http;
	rpc_client *clients[GW__SVC_COUNT];
	gw_metrics *metrics;
	const gw_route *routes;
	size_t n_routes;
	char *openapi;  /* built once: the table never changes */
	size_t openapi_len;
	int rpc_timeout_ms;
	int drain_ms;
	gw_proxies *proxies; /* SEO_TRUSTED_PROXIES; NULL: none */
	const char *metrics_token; /* "": /metrics is refused */
	gw_authfail *authfail; /* failed authentications per address */
	gw_answer_cache *answers; /* the answers kept in memory */
	char id_prefix[9];
	unsigned long long id_counter;
	/* Idempotency keys of billed calls: never the client's X-Request-Id,
	 * which a client could repeat to be charged once for many calls. */
	char key_prefix[KEY_PREFIX_LEN + 1];
	unsigned long long key_counter;
	gw_settler *settler; /* outcome reports retried until applied */
	gw_keys *keys;       /* keys checked in memory, and their watch */
	gw_leases *leases;   /* credits debited in memory (lease.h) */

	/* Calls begun and not yet answered. */
	size_t n_calls;
	/* After gw_gateway_shutdown(): the drain limit, then the end of the
	 * flush (seo_mono_ms()), and whether the services' calls were cut. */
	struct event *drain_ev;
	int64_t cut_at, give_up_at;
	int cut;
};

typedef struct gw_call {
	gw_gateway *gw;
	gw_http_req *req;
	seo_arena *arena;
	ProtobufCAllocator alloc;
	int64_t start_us;
	char request_id[65];
	/* The debit's idempotency key: the gateway's key prefix, then
	 * call_no in hex. */
	char call_key[KEY_PREFIX_LEN + SEO_FMT_ID_DIGITS + 1];
	uint64_t call_no;

	const gw_route *route;
	gw_kv params[GW_MAX_PATH_PARAMS];
	size_t n_params;

	ProtobufCMessage *input;
	gw_json_error decode_err;
	int decode_failed;

	const char *usage; /* the usage row's domain, or NULL */
	const char *client_ip; /* client_ip(): once needed */

	/* From Authorize. */
	const char *workspace_id, *user_id, *key_id, *role;
	int have_rate;
	long long rate_limit, rate_remaining, rate_reset;
	const char *charge_id;
	long long charged, refunded, credits_remaining;
	long long used; /* the outcome being reported */
	/* The key's hash, and the kept keys' epoch when svc-account was
	 * asked. */
	char key_hash[65];
	uint64_t keys_epoch;
	/* Earlier calls' earned charges this call's debit carries. */
	gw_earned *earned;
	size_t n_earned;
	/* The workspace's lease the charge was taken from (lease.h), held
	 * until the call ends or gives it back; NULL: none. A rate-limited
	 * call takes it before svc-account counts the rate (and names the
	 * key's workspace). */
	gw_lease_ws *lease;
	/* The route's earlier calls were reported before the service call. */
	int flushed;
	/* The key's rate, once looked at: counted here from a token held
	 * (rate_grant.h), or the grant asked for with Authorize (0: none). */
	int rate_checked, rate_local;
	long long rate_want;

	ProtobufCMessage *output;

	/* What the service chose for its answer, within the route's output
	 * stage: the success status (0: the route's), and headers. */
	int status;
	gw_http_header answer_headers[GW_ROUTE_MAX_HEADERS];
	size_t n_answer_headers;

	/* A failure waiting for its refund before it is answered. */
	int err_status;
	const char *err_code;
	const char *err_message;
	const char *err_extra;

	/* /healthz fan-in. */
	int health_pending;
	const char *health[GW__SVC_COUNT];
} gw_call;

static void call_log(gw_call *c, int status, size_t len);

/* ---- answers ------------------------------------------------------------ */

/* v in decimal, NUL-terminated, owned by the arena (NULL when out of
 * memory). */
static char *arena_int(seo_arena *a, long long v)
{
	char *s = seo_arena_alloc(a, SEO_INT_TEXT_MAX + 1);

	if (s != NULL)
		s[seo_fmt_int(s, v)] = '\0';
	return s;
}

static size_t add_rate_headers(gw_call *c, gw_http_header *h, size_t n)
{
	if (!c->have_rate)
		return n;
	h[n].name = "RateLimit-Limit";
	h[n++].value = arena_int(c->arena, c->rate_limit);
	h[n].name = "RateLimit-Remaining";
	h[n++].value = arena_int(c->arena, c->rate_remaining);
	h[n].name = "RateLimit-Reset";
	h[n++].value = arena_int(c->arena, c->rate_reset);
	return n;
}

static void respond(gw_call *c, int status, const char *ctype,
		    const char *body, size_t len)
{
	gw_http_header h[5 + GW_ROUTE_MAX_HEADERS];
	size_t n = 0;

	h[n].name = "Content-Type";
	h[n++].value = ctype;
	h[n].name = "X-Request-Id";
	h[n++].value = c->request_id;
	n = add_rate_headers(c, h, n);
	memcpy(h + n, c->answer_headers,
	       c->n_answer_headers * sizeof(*c->answer_headers));
	n += c->n_answer_headers;
	/* A service's success on a route whose answer is kept. */
	if (c->output != NULL && status == c->route->out.status)
		gw__answer_cache_put(c->gw->answers, c->route, status, body, len,
				     seo_mono_ms());
	/* The request is released by gw_http_respond(): log first. */
	call_log(c, status, len);
	gw_http_respond(c->req, status, h, n, body, len);
	c->gw->n_calls--;
	seo_arena_free(c->arena);
}

/* The error object written when no other could be: no allocation. */
static void respond_oom(gw_call *c)
{
	static const char oom[] = "{\"error\":\"Internal Server Error\","
		"\"code\":\"internal_error\",\"message\":\"out of memory\"}";

	respond(c, 500, "application/json", oom, sizeof(oom) - 1);
}

static void respond_json(gw_call *c, int status, json_t *obj)
{
	size_t len = 0;
	char *text = seo_json_dumps(obj, JSON_COMPACT, &len);

	json_decref(obj);
	if (text == NULL) {
		respond_oom(c);
		return;
	}
	respond(c, status, "application/json", text, len);
	free(text);
}

/* A member of a service's extra fields, as jansson writes it. */
static void write_extra_member(seo_jw *w, const char *k, json_t *v)
{
	size_t len = 0;
	char *text = seo_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY, &len);

	if (text == NULL) {
		w->failed = 1;
		return;
	}
	seo_jw_char(w, ',');
	seo_jw_string_lossy(w, k, strlen(k));
	seo_jw_char(w, ':');
	seo_jw_raw(w, text, len);
	free(text);
}

/*
 * Answers with the specification's error object, written without a
 * jansson tree (refusals come in storms: a key out of credits or over its
 * rate). `extra_json` (may be NULL) is a JSON object whose members are
 * appended (retry_after, ...); only it is parsed.
 */
static void respond_error(gw_call *c, const char *code, const char *message,
			  const char *extra_json)
{
	const seo_error_def *def = seo_error_lookup(code);
	const char *reason, *msg;
	seo_jw w = SEO_JW_INIT;
	size_t len = 0;
	char *text;
	int status;

	if (def == NULL)
		def = seo_error_lookup("internal_error");
	status = def->http_status;
	reason = seo_http_reason(status);
	msg = message && *message ? message : def->summary;
	seo_jw_raw(&w, "{\"error\":", 9);
	seo_jw_string_lossy(&w, reason, strlen(reason));
	seo_jw_raw(&w, ",\"code\":", 8);
	seo_jw_string_lossy(&w, def->code, strlen(def->code));
	seo_jw_raw(&w, ",\"message\":", 11);
	seo_jw_string_lossy(&w, msg, strlen(msg));
	if (extra_json != NULL) {
		json_t *extra = json_loads(extra_json, 0, NULL), *v;
		const char *k;

		/* Rate state travels in the extra fields but belongs in the
		 * RateLimit-* headers, not in the body; the three members
		 * above are never overwritten. */
		json_object_foreach(extra, k, v)
			if (strncmp(k, "ratelimit_", 10) != 0 &&
			    strcmp(k, "error") != 0 && strcmp(k, "code") != 0 &&
			    strcmp(k, "message") != 0)
				write_extra_member(&w, k, v);
		json_decref(extra);
	}
	seo_jw_char(&w, '}');
	text = seo_jw_finish(&w, &len);
	if (text == NULL) {
		respond_oom(c);
		return;
	}
	respond(c, status, "application/json", text, len);
	free(text);
}

/* Maps a failed call's result onto the public error. */
static void respond_rpc_error(gw_call *c, const rpc_result *res)
{
	const seo_error_def *def = seo_error_lookup(res->code);

	if (def == NULL) {
		def = seo_error_for_grpc(res->grpc_status);
		log_warn("service call failed: %s %s",
			 seo_grpc_status_name(res->grpc_status), res->message);
		respond_error(c, def->code, def->summary, NULL);
		return;
	}
	respond_error(c, def->code, res->message, res->extra_json);
}

/* ---- request end: log line and metrics ------------------------------------ */

static void call_log(gw_call *c, int status, size_t len)
{
	int64_t us = seo_mono_us() - c->start_us;
	seo_jw w = SEO_JW_INIT;
	char *text;

	gw_metrics_observe(c->gw->metrics, c->route, status, us);
	if (seo_log_min_level <= SEO_LOG_INFO) {
		gw__access_line(&w, &(gw_access){
			.ts_ms = seo_now_ms(),
			.request_id = c->request_id,
			.method = gw_http_method(c->req),
			.path = gw_http_path(c->req),
			.route = c->route ? c->route->pattern : "",
			.status = status,
			.duration_us = us,
			.bytes = (long long)len,
			.credits = c->charged - c->refunded,
			.workspace_id = c->workspace_id,
			.key_id = c->key_id});
		text = seo_jw_finish(&w, NULL);
		if (text != NULL)
			seo_log_raw_line(text);
		free(text);
	}
}

/* ---- refunds ------------------------------------------------------------ */

static void answer_success(gw_call *c);

/* A refunded call's answer: the error that made it, else its result. */
static void answer_refunded(gw_call *c)
{
	if (c->err_code != NULL)
		respond_error(c, c->err_code, c->err_message, c->err_extra);
	else
		answer_success(c);
}

static void on_refund(const rpc_result *res, void *ud)
{
	gw_call *c = ud;
	const Seo__Account__V1__RefundResponse *r = (const void *)res->response;

	gw__lease_touched(c->gw->leases, c->workspace_id,
			  res->grpc_status == SEO_GRPC_OK
				  ? c->charged - r->credits_used : 0);
	if (res->grpc_status == SEO_GRPC_OK) {
		c->refunded = c->charged - r->credits_used;
		c->credits_remaining = r->credits_remaining;
		gw_metrics_credits(c->gw->metrics, 0, c->refunded);
	} else {
		/* Answered now; the report goes on in the background until
		 * svc-account applies it. */
		log_warn("refund of %s failed, retrying: %s", c->charge_id,
			 res->message);
		gw__settle(c->gw->settler, c->charge_id, c->call_key, c->used);
	}
	answer_refunded(c);
}

/* The leased call's end: what it finally cost goes to its usage row with
 * the lease's next report, the rest back to the lease. */
static void end_leased(gw_call *c, long long used)
{
	gw_lease_call call = {.request_no = c->call_no,
			      .user_id = c->user_id,
			      .key_id = c->key_id,
			      .endpoint = c->route->endpoint,
			      .domain = c->usage,
			      .charged = c->charged,
			      .credits_used = used,
			      .created_at = seo_now_ms()};

	gw__lease_end(c->lease, &call);
	c->lease = NULL;
}

/* Reports that the call finally cost `used` (less than its charge), which
 * gives the rest back, then answers. */
static void refund(gw_call *c, long long used)
{
	Seo__Account__V1__RefundRequest req = SEO__ACCOUNT__V1__REFUND_REQUEST__INIT;
	rpc_meta meta[] = {{"x-request-id", c->request_id}};

	if (c->lease != NULL) {
		end_leased(c, used);
		c->refunded = c->charged - used;
		c->credits_remaining += c->refunded;
		gw_metrics_credits(c->gw->metrics, 0, c->refunded);
		answer_refunded(c);
		return;
	}
	c->used = used;
	req.charge_id = (char *)c->charge_id;
	req.has_credits_used = 1;
	req.credits_used = used;
	if (rpc_client_call(c->gw->clients[GW_SVC_ACCOUNT], GW_REFUND_PATH,
			    &req.base, &seo__account__v1__refund_response__descriptor,
			    &c->alloc, c->gw->rpc_timeout_ms, meta, 1, on_refund,
			    c) != 0) {
		gw__settle(c->gw->settler, c->charge_id, c->call_key, used);
		respond_error(c, "internal_error", "out of memory", NULL);
	}
}

/* ---- the service call --------------------------------------------------- */

/* An answer of bytes: the route's bytes field as its content type. */
static void answer_bytes(gw_call *c, int status)
{
	const gw_out_stage *out = &c->route->out;
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(
			c->output->descriptor, out->body_field);
	const ProtobufCBinaryData *b;

	/* gw_json_route_check() makes it a singular bytes field. */
	b = (const ProtobufCBinaryData *)((const char *)c->output + f->offset);
	respond(c, status, out->content_type, (const char *)b->data, b->len);
}

static void answer_success(gw_call *c)
{
	int status = c->status != 0 ? c->status : c->route->out.status;
	const gw_bill_stage *bill = &c->route->bill;
	gw_json_member env[2];
	size_t n_env = 0, len;
	char *text;

	if (c->route->out.kind == GW_OUT_BYTES) {
		answer_bytes(c, status);
		return;
	}
	if (bill->envelope) {
		env[n_env++] = (gw_json_member){"credits_used",
						c->charged - c->refunded};
		if (gw_role_bit(c->role) & GW_ROLES_BALANCE)
			env[n_env++] = (gw_json_member){"credits_remaining",
							c->credits_remaining};
	}
	if (gw_json_write_answer(c->output,
				 bill->hide_billed ? bill->billed_field : NULL,
				 env, n_env, &text, &len) != 0) {
		respond_error(c, "internal_error", "out of memory", NULL);
		return;
	}
	respond(c, status, "application/json", text, len);
	free(text);
}

/* What the call finally costs by its answer: per item or billed after,
 * the items billed times the cost; a fixed call with a billed field,
 * nothing when that field is 0; otherwise what was debited (billed after:
 * the cost). An answer without the field keeps the debit, or costs one
 * item: billing must not guess. */
static long long cost_after(const gw_call *c)
{
	long long billed;

	if (c->route->bill.kind == GW_BILL_FREE || c->route->bill.billed_field == NULL ||
	    gw_json_field_count(c->output, c->route->bill.billed_field, &billed) != 0)
		return c->route->bill.kind == GW_BILL_AFTER ? c->route->bill.cost
						       : c->charged;
	if (c->route->bill.kind == GW_BILL_FIXED)
		return billed == 0 ? 0 : c->charged;
	return billed * c->route->bill.cost;
}

/* The caller's identity as the services read it; meta holds 4. */
static size_t identity_meta(const gw_call *c, rpc_meta *meta)
{
	if (c->workspace_id == NULL)
		return 0;
	meta[0] = (rpc_meta){"seo-workspace-id", c->workspace_id};
	meta[1] = (rpc_meta){"seo-user-id", c->user_id};
	meta[2] = (rpc_meta){"seo-key-id", c->key_id};
	meta[3] = (rpc_meta){"seo-role", c->role};
	return 4;
}

/* ---- billing after the work ---------------------------------------------- */

static void on_charge(const rpc_result *res, void *ud)
{
	gw_call *c = ud;
	const Seo__Account__V1__ChargeResponse *r = (const void *)res->response;

	if (res->grpc_status != SEO_GRPC_OK) {
		c->charged = 0;
		respond_rpc_error(c, res);
		return;
	}
	c->charge_id = r->charge_id;
	c->credits_remaining = r->credits_remaining;
	gw__lease_touched(c->gw->leases, c->workspace_id, -c->charged);
	gw_metrics_credits(c->gw->metrics, c->charged, 0);
	/* Earned: a row at 0 needs no report. */
	if (c->charged > 0)
		gw__settle_earned(c->gw->settler, c->charge_id, c->call_key,
				  c->charged);
	answer_success(c);
}

/* Debits `amount` for the service's answer, then answers: svc-account
 * refuses (402) when the balance is short, with the usage row at 0. */
static void send_charge(void *ud)
{
	gw_call *c = ud;
	Seo__Account__V1__ChargeRequest req = SEO__ACCOUNT__V1__CHARGE_REQUEST__INIT;
	rpc_meta meta[5];
	size_t n = 0;

	meta[n++] = (rpc_meta){"x-request-id", c->request_id};
	n += identity_meta(c, meta + n);
	req.endpoint = (char *)c->route->endpoint;
	req.amount = c->charged;
	req.usage_domain = (char *)(c->usage ? c->usage : "");
	req.request_id = c->call_key;
	req.has_settle_within_ms = 1;
	req.settle_within_ms = c->gw->rpc_timeout_ms;
	if (rpc_client_call(c->gw->clients[GW_SVC_ACCOUNT], GW_CHARGE_PATH,
			    &req.base, &seo__account__v1__charge_response__descriptor,
			    &c->alloc, c->gw->rpc_timeout_ms, meta, n, on_charge,
			    c) != 0)
		respond_error(c, "internal_error", "out of memory", NULL);
}

/* Debits `amount` once the workspace's leased calls answered before are
 * reported: the balance svc-account answers then counts them. */
static void charge(gw_call *c, long long amount)
{
	c->charged = amount;
	if (gw__lease_flush(c->gw->leases, c->workspace_id, send_charge, c) != 0)
		send_charge(c);
}

/* Whether `status` (digits only) is one the route lets a service choose. */
static int status_allowed(const gw_out_stage *out, const char *text)
{
	char *end;
	long st = strtol(text, &end, 10);

	if (!isdigit((unsigned char)text[0]) || *end != '\0')
		return 0;
	if (st == out->status)
		return (int)st;
	for (const int *s = out->statuses; s != NULL && *s != 0; s++)
		if (*s == st)
			return (int)st;
	return 0;
}

/* Takes from the service's response metadata the status and the headers
 * the route's output stage allows; the rest is ignored. */
static void take_answer_meta(gw_call *c, const rpc_result *res)
{
	const gw_out_stage *out = &c->route->out;

	for (size_t i = 0; i < res->n_meta; i++) {
		const rpc_meta *m = &res->meta[i];

		if (strcmp(m->name, RPC_META_HTTP_STATUS) == 0) {
			c->status = status_allowed(out, m->value);
			if (c->status == 0)
				log_warn("%s %s: status %s not allowed by the "
					 "route", c->route->method,
					 c->route->pattern, m->value);
			continue;
		}
		for (const char *const *h = out->headers; h != NULL && *h != NULL;
		     h++) {
			if (strcasecmp(*h, m->name) != 0 ||
			    c->n_answer_headers == GW_ROUTE_MAX_HEADERS)
				continue;
			c->answer_headers[c->n_answer_headers].name = *h;
			c->answer_headers[c->n_answer_headers].value =
				seo_arena_strdup(c->arena, m->value);
			if (c->answer_headers[c->n_answer_headers].value != NULL)
				c->n_answer_headers++;
		}
	}
}

static void on_service(const rpc_result *res, void *ud)
{
	gw_call *c = ud;
	long long due;

	take_answer_meta(c, res);
	if (res->grpc_status != SEO_GRPC_OK) {
		/* A failure answers its error's status. */
		c->status = 0;
		if (c->charged > 0) {
			const seo_error_def *def = seo_error_lookup(res->code);
			if (def == NULL)
				def = seo_error_for_grpc(res->grpc_status);
			c->err_code = def->code;
			c->err_message = seo_arena_strdup(c->arena, res->message);
			c->err_extra = res->extra_json ?
				seo_arena_strdup(c->arena, res->extra_json) : NULL;
			refund(c, 0);
			return;
		}
		respond_rpc_error(c, res);
		return;
	}
	c->output = res->response;
	due = cost_after(c);
	if (c->route->bill.kind == GW_BILL_AFTER) {
		charge(c, due);
		return;
	}
	if (c->charged > 0 && due < c->charged) {
		refund(c, due);
		return;
	}
	if (c->lease != NULL)
		end_leased(c, c->charged);
	else if (c->charged > 0)
		gw__settle_earned(c->gw->settler, c->charge_id, c->call_key,
				  c->charged);
	answer_success(c);
}

/* The client's address (client_ip.h), found once per request. */
static const char *client_ip(gw_call *c)
{
	if (c->client_ip == NULL)
		c->client_ip = gw__client_ip(
			c->gw->proxies, gw_http_peer(c->req),
			gw_http_header_get(c->req, "X-Forwarded-For"), c->arena);
	return c->client_ip;
}

/* A header value fit to travel as metadata: printable ASCII, short. */
static int forwardable(const char *v)
{
	size_t n = strlen(v);

	if (n > FORWARD_VALUE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return 0;
	return 1;
}

/* What the route's forwarding stage sends: the client IP and request
 * headers, under lowercase names; meta holds 1 + GW_ROUTE_MAX_HEADERS. */
static size_t forward_meta(gw_call *c, rpc_meta *meta)
{
	const gw_route *r = c->route;
	size_t n = 0;

	if (r->forward.client_ip || r->quota == GW_QUOTA_IP)
		meta[n++] = (rpc_meta){CLIENT_IP_META, client_ip(c)};
	for (const char *const *h = r->forward.headers;
	     h != NULL && *h != NULL && n <= GW_ROUTE_MAX_HEADERS; h++) {
		const char *v = gw_http_header_get(c->req, *h);
		char *name;

		if (v == NULL || !forwardable(v) ||
		    (name = seo_arena_strdup(c->arena, *h)) == NULL)
			continue;
		for (char *p = name; *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
		meta[n++] = (rpc_meta){name, v};
	}
	return n;
}

/* The deadline of the route's service call. */
static int service_timeout(const gw_call *c)
{
	return c->route->timeout_ms > c->gw->rpc_timeout_ms ? c->route->timeout_ms
							   : c->gw->rpc_timeout_ms;
}

/* The answer of a service whose client is gone: the gateway is stopping
 * and the drain limit has passed. */
static const rpc_result stopping = {
	.grpc_status = SEO_GRPC_UNAVAILABLE,
	.code = "service_unavailable",
	.message = "the gateway is shutting down",
};

static void call_service(gw_call *c);

static void on_flushed(void *ud)
{
	call_service(ud);
}

/* The workspace's credits from its lease here, without svc-account: 1
 * when answered. */
static int answer_lease_credits(gw_call *c)
{
	Seo__Account__V1__Credits *cr;
	long long credits;

	if (!c->route->out.lease_credits || c->workspace_id == NULL ||
	    !gw__lease_credits(c->gw->leases, c->workspace_id, &credits) ||
	    (cr = seo_arena_alloc(c->arena, sizeof(*cr))) == NULL)
		return 0;
	seo__account__v1__credits__init(cr);
	cr->has_credits = 1;
	cr->credits = credits;
	c->output = &cr->base;
	answer_success(c);
	return 1;
}

static void call_service(gw_call *c)
{
	int timeout = service_timeout(c);
	rpc_meta meta[5 + 1 + GW_ROUTE_MAX_HEADERS];
	size_t n = 0;

	if (c->route->sees_billing && c->workspace_id != NULL && !c->flushed) {
		c->flushed = 1;
		if (answer_lease_credits(c) ||
		    gw__lease_flush(c->gw->leases, c->workspace_id, on_flushed,
				    c) == 0)
			return;
	}
	if (c->gw->clients[c->route->service] == NULL) {
		on_service(&stopping, c);
		return;
	}
	meta[n++] = (rpc_meta){"x-request-id", c->request_id};
	n += identity_meta(c, meta + n);
	n += forward_meta(c, meta + n);
	if (rpc_client_call(c->gw->clients[c->route->service],
			    c->route->rpc_path, c->input, c->route->out.message,
			    &c->alloc, timeout, meta, n, on_service, c) != 0) {
		if (c->lease != NULL)
			end_leased(c, 0);
		respond_error(c, "internal_error", "out of memory", NULL);
	}
}

/* ---- authorize ------------------------------------------------------------ */

/* Reads rate state that a failed Authorize reports in its extra fields. */
static void rate_from_extra(gw_call *c, const char *extra_json)
{
	json_t *extra = extra_json ? json_loads(extra_json, 0, NULL) : NULL;
	json_int_t limit, remaining, reset;

	if (extra != NULL &&
	    json_unpack(extra, "{s:I, s:I, s:I}", "ratelimit_limit", &limit,
			"ratelimit_remaining", &remaining, "ratelimit_reset",
			&reset) == 0) {
		c->have_rate = 1;
		c->rate_limit = limit;
		c->rate_remaining = remaining;
		c->rate_reset = reset;
	}
	json_decref(extra);
}

/* Keeps the key svc-account just authorized (keys.h). */
static void keep_key(gw_call *c)
{
	gw_kept_key k = {.rate_limit = c->rate_limit,
		    .rate_remaining = c->rate_remaining,
		    .rate_reset = c->rate_reset};

	if (!c->have_rate || strlen(c->workspace_id) >= sizeof(k.workspace_id) ||
	    strlen(c->user_id) >= sizeof(k.user_id) ||
	    strlen(c->role) >= sizeof(k.role))
		return;
	strcpy(k.workspace_id, c->workspace_id);
	strcpy(k.user_id, c->user_id);
	strcpy(k.role, c->role);
	gw__keys_put(c->gw->keys, c->key_hash, &k, c->keys_epoch);
}

/* 1 when the route's key rate limit counts the call of kept key `k`. */
static int rate_counted(const gw_call *c, const gw_kept_key *k)
{
	return c->route->quota == GW_QUOTA_KEY && k->rate_limit != 0;
}

/* 1 when the role of kept key `k` may call the route. */
static int role_allowed(const gw_call *c, const gw_kept_key *k)
{
	return c->route->auth.roles == 0 ||
	       (c->route->auth.roles & gw_role_bit(k->role)) != 0;
}

/*
 * The rate of a call of the kept key `k`, counted once: from a token this
 * gateway holds when it can (no svc-account call for the rate; running
 * low, keys.c asks the next grant ahead), else the call asks svc-account,
 * and with it for a grant. A role refused is left
 * to svc-account, which counts the rate before it (429 before 403).
 */
static void count_rate(gw_call *c, const gw_kept_key *k)
{
	gw_rate rate;
	int asked;

	if (c->rate_checked || k == NULL || !rate_counted(c, k) ||
	    !role_allowed(c, k))
		return;
	c->rate_checked = 1;
	c->rate_local = gw__keys_rate_take(c->gw->keys, c->key_hash,
					   seo_mono_ms(), &rate, &c->rate_want,
					   &asked);
	if (asked) {
		gw_metrics_authorize(c->gw->metrics);
		gw_metrics_rate_ask(c->gw->metrics);
	}
	if (!c->rate_local)
		return;
	c->have_rate = 1;
	c->rate_limit = rate.limit;
	c->rate_remaining = rate.remaining;
	c->rate_reset = rate.reset;
	gw_metrics_rate_local(c->gw->metrics);
}

/* Hands svc-account's answer to the grant the call asked for (ok: the
 * call was authorized, with `a`). */
static void grant_answered(gw_call *c,
			   const Seo__Account__V1__AuthorizeResponse *a, int ok)
{
	gw_rate rate;

	if (c->rate_want == 0)
		return;
	c->rate_want = 0;
	if (!ok || a->rate == NULL) {
		gw__keys_rate_unasked(c->gw->keys, c->key_hash);
		return;
	}
	rate = (gw_rate){a->rate->limit, a->rate->remaining, a->rate->reset_s};
	gw__keys_rate_granted(c->gw->keys, c->key_hash, a->rate->granted, &rate,
			      seo_mono_ms());
}

/* The kept key of the call (NULL: none), when its role may call the route
 * and no rate limit counts it or its rate was counted here, taken as the
 * call's identity: 1, else 0. */
static int take_kept(gw_call *c, const gw_kept_key *k)
{
	if (k == NULL || !role_allowed(c, k) ||
	    (rate_counted(c, k) && !c->rate_local))
		return 0;
	c->workspace_id = seo_arena_strdup(c->arena, k->workspace_id);
	c->user_id = seo_arena_strdup(c->arena, k->user_id);
	c->role = seo_arena_strdup(c->arena, k->role);
	c->key_id = c->key_hash;
	if (c->workspace_id == NULL || c->user_id == NULL || c->role == NULL) {
		c->workspace_id = NULL;
		return 0;
	}
	if (!c->rate_local) {
		c->have_rate = 1;
		c->rate_limit = k->rate_limit;
		c->rate_remaining = k->rate_remaining;
		c->rate_reset = k->rate_reset;
	}
	return 1;
}

static long long cost_before(const gw_call *c);

/*
 * A billed call of `cost` with the kept key `k` debited from its
 * workspace's lease here (lease.h), without svc-account. 1 when the call
 * went on, else 0 (ask svc-account).
 */
static int authorize_leased(gw_call *c, const gw_kept_key *k, long long cost)
{
	const gw_route *r = c->route;
	long long remaining;

	if ((r->bill.kind != GW_BILL_FIXED && r->bill.kind != GW_BILL_PER_ITEM) ||
	    c->decode_failed || cost <= 0 || !take_kept(c, k))
		return 0;
	if (!gw__lease_take(c->gw->leases, c->workspace_id, cost, &remaining,
			    &c->lease)) {
		c->workspace_id = NULL;
		return 0;
	}
	c->charged = cost;
	c->credits_remaining = remaining;
	c->usage = gw_json_usage_value(r, c->input, c->arena);
	gw_metrics_credits(c->gw->metrics, c->charged, 0);
	call_service(c);
	return 1;
}

/*
 * A free call of a kept key goes to its service without svc-account: its
 * route debits nothing and shows no balance, its role may call it, and no
 * rate limit counts it (svc-account's bucket is the one all gateways
 * share). 1 when the call went on, else 0 (ask svc-account).
 */
static int authorize_kept(gw_call *c, const gw_kept_key *k)
{
	const gw_route *r = c->route;

	if (r->bill.kind != GW_BILL_FREE || r->bill.envelope || !take_kept(c, k))
		return 0;
	c->charged = 0;
	if (c->decode_failed)
		respond_error(c, c->decode_err.code, c->decode_err.message, NULL);
	else
		call_service(c);
	return 1;
}

static void on_authorize(const rpc_result *res, void *ud)
{
	gw_call *c = ud;
	const Seo__Account__V1__AuthorizeResponse *a = (const void *)res->response;

	/* Applied with an OK debit only; else reported again. */
	if (res->grpc_status != SEO_GRPC_OK)
		gw__settle_return(c->gw->settler, c->earned, c->n_earned);
	c->n_earned = 0;
	if (c->lease != NULL &&
	    (res->grpc_status != SEO_GRPC_OK ||
	     strcmp(a->workspace_id, gw__lease_workspace(c->lease)) != 0)) {
		gw__lease_cancel(c->lease, c->charged);
		c->lease = NULL;
		c->charged = 0;
		if (res->grpc_status == SEO_GRPC_OK) {
			grant_answered(c, a, 0);
			respond_error(c, "internal_error",
				      "the key changed workspace", NULL);
			return;
		}
	}
	if (res->grpc_status != SEO_GRPC_OK) {
		grant_answered(c, a, 0);
		if (res->code != NULL && strcmp(res->code, "invalid_api_key") == 0)
			gw__authfail_count(c->gw->authfail, client_ip(c),
					   seo_mono_ms());
		rate_from_extra(c, res->extra_json);
		respond_rpc_error(c, res);
		return;
	}
	c->workspace_id = a->workspace_id;
	c->user_id = a->user_id;
	c->key_id = a->key_id;
	c->role = a->role;
	c->charge_id = a->charge_id && *a->charge_id ? a->charge_id : NULL;
	if (c->lease == NULL)
		c->credits_remaining = a->credits_remaining;
	/* A call counted here shows this gateway's view of its rate; the
	 * tokens just granted here are still to spend. */
	if (a->rate != NULL && !c->rate_local) {
		c->have_rate = 1;
		c->rate_limit = a->rate->limit;
		c->rate_remaining = a->rate->remaining + a->rate->granted;
		c->rate_reset = a->rate->reset_s;
	}
	keep_key(c);
	/* After the key is kept: the grant is held by its slot. */
	grant_answered(c, a, 1);
	if (c->charge_id != NULL)
		gw__lease_touched(c->gw->leases, c->workspace_id,
				  -c->charged);
	if (c->charge_id != NULL || c->lease != NULL)
		gw_metrics_credits(c->gw->metrics, c->charged, 0);
	else
		c->charged = 0;
	if (c->decode_failed) {
		respond_error(c, c->decode_err.code, c->decode_err.message, NULL);
		return;
	}
	call_service(c);
}

/* The credits to debit before the work. */
static long long cost_before(const gw_call *c)
{
	long long items;

	if (c->decode_failed)
		return 0;
	switch (c->route->bill.kind) {
	case GW_BILL_FIXED:
		if (c->route->bill.surcharge_field != NULL &&
		    gw_json_field_true(c->input, c->route->bill.surcharge_field))
			return c->route->bill.cost + c->route->bill.surcharge;
		return c->route->bill.cost;
	case GW_BILL_PER_ITEM:
		if (gw_json_field_count(c->input, c->route->bill.items_field,
					&items) != 0)
			return 0;
		return items * c->route->bill.cost;
	default:
		return 0;
	}
}

/* Hands the debit the earned charges waiting (settle.h): their outcome
 * then costs no call and no transaction of its own. */
static void carry_earned(gw_call *c, Seo__Account__V1__AuthorizeRequest *req)
{
	char **ids;

	if (gw__settle_take(c->gw->settler, c->arena, &c->earned,
			    &c->n_earned) != 0 || c->n_earned == 0)
		return;
	ids = seo_arena_alloc(c->arena, c->n_earned * sizeof(*ids));
	if (ids == NULL) {
		gw__settle_return(c->gw->settler, c->earned, c->n_earned);
		c->n_earned = 0;
		return;
	}
	for (size_t i = 0; i < c->n_earned; i++)
		ids[i] = c->earned[i].id;
	req->earned = ids;
	req->n_earned = c->n_earned;
}

/*
 * A billed call of a kept key that a rate limit counts: its charge is
 * taken from the workspace's lease here before svc-account is asked for
 * the rate (and the key) only. 1 when taken, else 0.
 */
static int reserve_leased(gw_call *c, const gw_kept_key *k)
{
	long long remaining;

	if (k == NULL || !gw__lease_take(c->gw->leases, k->workspace_id,
					 c->charged, &remaining, &c->lease))
		return 0;
	c->credits_remaining = remaining;
	return 1;
}

static void authorize_hashed(void *ud);

/* A call debited alone waits first for the leased calls of its workspace
 * (the kept key's) answered before to be reported, so that the balance
 * svc-account answers counts them: 1 when it waits. */
static int wait_leased_calls(gw_call *c, const gw_kept_key *k,
			     long long cost)
{
	if (c->flushed || cost <= 0 || k == NULL)
		return 0;
	c->flushed = 1;
	return gw__lease_flush(c->gw->leases, k->workspace_id,
			       authorize_hashed, c) == 0;
}

static void authorize(gw_call *c, const char *key)
{
	seo_sha256_hex(key, strlen(key), c->key_hash);
	authorize_hashed(c);
}

static void authorize_hashed(void *ud)
{
	gw_call *c = ud;
	Seo__Account__V1__AuthorizeRequest req =
		SEO__ACCOUNT__V1__AUTHORIZE_REQUEST__INIT;
	rpc_meta meta[] = {{"x-request-id", c->request_id}};
	/* Looked up once a pass: a flush waited for comes back here, and
	 * the key may have been forgotten meanwhile. */
	gw_kept_key kept;
	const gw_kept_key *k =
		gw__keys_get(c->gw->keys, c->key_hash, seo_mono_ms(), &kept)
			? &kept : NULL;
	long long cost = cost_before(c);

	count_rate(c, k);
	if (authorize_kept(c, k) || authorize_leased(c, k, cost) ||
	    wait_leased_calls(c, k, cost))
		return;
	c->keys_epoch = gw__keys_epoch(c->gw->keys);
	req.key_hash = c->key_hash;
	req.endpoint = (char *)c->route->endpoint;
	c->charged = cost;
	req.cost = c->charged;
	req.roles_allowed = c->route->auth.roles;
	if (!c->decode_failed)
		c->usage = gw_json_usage_value(c->route, c->input, c->arena);
	req.usage_domain = (char *)(c->usage ? c->usage : "");
	/* A call counted here from a token held is not counted again. */
	req.rate_limited = c->route->quota == GW_QUOTA_KEY && !c->rate_local;
	req.rate_want = c->rate_want;
	/* The outcome is due once the service call and its report could
	 * have taken their whole deadlines. */
	req.request_id = c->call_key;
	req.has_settle_within_ms = 1;
	req.settle_within_ms = service_timeout(c) + c->gw->rpc_timeout_ms;
	if (c->charged > 0 && reserve_leased(c, k)) {
		/* The lease pays; svc-account counts the rate only. */
		req.cost = 0;
		req.no_balance = 1;
	} else if (c->charged > 0) {
		carry_earned(c, &req);
	}
	/* Only an envelope shows the balance; billed after, Charge gives it. */
	if (c->lease == NULL)
		req.no_balance = c->charged == 0 &&
				 (!c->route->bill.envelope ||
				  c->route->bill.kind == GW_BILL_AFTER);
	gw_metrics_authorize(c->gw->metrics);
	if (rpc_client_call(c->gw->clients[GW_SVC_ACCOUNT], GW_AUTHORIZE_PATH,
			    &req.base,
			    &seo__account__v1__authorize_response__descriptor,
			    &c->alloc, c->gw->rpc_timeout_ms, meta, 1,
			    on_authorize, c) != 0) {
		gw__settle_return(c->gw->settler, c->earned, c->n_earned);
		c->n_earned = 0;
		grant_answered(c, NULL, 0);
		respond_error(c, "internal_error", "out of memory", NULL);
	}
}

/* ---- built-in routes -------------------------------------------------------- */

/*
 * Answers of /healthz arrive in any order, so each check carries its own
 * slot: the call for service i completes slot i.
 */
typedef struct health_slot {
	gw_call *call;
	int service;
} health_slot;

static void on_health_slot(const rpc_result *res, void *ud)
{
	health_slot *s = ud;
	gw_call *c = s->call;
	const Grpc__Health__V1__HealthCheckResponse *h = (const void *)res->response;
	json_t *services, *obj;
	int ok = 1;

	c->health[s->service] = res->grpc_status == SEO_GRPC_OK &&
		h->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
		? "ok" : "unavailable";
	if (--c->health_pending > 0)
		return;
	services = json_object();
	for (int i = 1; i < GW__SVC_COUNT; i++) {
		json_object_set_new(services,
				    seo_service_get(GW_SVC_REGISTRY(i))->name,
				    json_string(c->health[i]));
		ok &= strcmp(c->health[i], "ok") == 0;
	}
	obj = json_pack("{s:s, s:o}", "status", ok ? "ok" : "unavailable",
			"services", services);
	respond_json(c, ok ? 200 : 503, obj);
}

static void serve_health(gw_call *c)
{
	Grpc__Health__V1__HealthCheckRequest req =
		GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	health_slot *slots = seo_arena_alloc(c->arena, sizeof(*slots) * GW__SVC_COUNT);

	c->health_pending = GW__SVC_COUNT - 1;
	for (int i = 1; i < GW__SVC_COUNT; i++) {
		slots[i].call = c;
		slots[i].service = i;
		if (c->gw->clients[i] == NULL) {
			on_health_slot(&stopping, &slots[i]);
			continue;
		}
		if (rpc_client_call(c->gw->clients[i], HEALTH_PATH, &req.base,
				    &grpc__health__v1__health_check_response__descriptor,
				    &c->alloc, HEALTH_TIMEOUT_MS, NULL, 0,
				    on_health_slot, &slots[i]) != 0) {
			respond_error(c, "internal_error", "out of memory", NULL);
			return;
		}
	}
}

/* /metrics shows what was charged: only for the bearer of
 * SEO_METRICS_TOKEN, none at all while it is not set. */
static int metrics_allowed(gw_call *c)
{
	const char *auth = gw_http_header_get(c->req, "Authorization");
	const char *token = c->gw->metrics_token;

	return *token != '\0' && auth != NULL &&
	       strncasecmp(auth, "Bearer ", 7) == 0 &&
	       seo_secure_streq(auth + 7, token);
}

static void serve_builtin(gw_call *c)
{
	const char *p = c->route->pattern;

	if (strcmp(p, "/healthz") == 0) {
		serve_health(c);
	} else if (strcmp(p, "/metrics") == 0) {
		size_t len;
		char *text;

		if (!metrics_allowed(c)) {
			c->answer_headers[0] = (gw_http_header){
				"WWW-Authenticate", "Bearer realm=\"metrics\""};
			c->n_answer_headers = 1;
			respond_error(c, "invalid_api_key",
				      *c->gw->metrics_token == '\0'
					      ? "/metrics is off: SEO_METRICS_TOKEN is not set"
					      : "missing or wrong bearer token of /metrics",
				      NULL);
			return;
		}
		text = gw_metrics_render(c->gw->metrics, &len);
		if (text == NULL) {
			respond_error(c, "internal_error", "out of memory", NULL);
			return;
		}
		respond(c, 200, "text/plain; version=0.0.4; charset=utf-8",
			text, len);
		free(text);
	} else {
		respond(c, 200, "application/json", c->gw->openapi,
			c->gw->openapi_len);
	}
}

/* ---- entry ------------------------------------------------------------------- */

/* The gateway's prefix, then its counter as 16 hex digits: every call
 * gets one, so it is written without printf. */
static void new_request_id(gw_gateway *gw, char out[65])
{
	seo_fmt_id(out, gw->id_prefix, strlen(gw->id_prefix), ++gw->id_counter);
}

/* Takes the caller's X-Request-Id when it is short and printable. */
static void set_request_id(gw_call *c)
{
	const char *given = gw_http_header_get(c->req, "X-Request-Id");
	size_t n;

	if (given != NULL && (n = strlen(given)) > 0 && n < sizeof(c->request_id)) {
		size_t i;
		for (i = 0; i < n && isgraph((unsigned char)given[i]) &&
			    given[i] != '"' && given[i] != '\\'; i++)
			;
		if (i == n) {
			memcpy(c->request_id, given, n + 1);
			return;
		}
	}
	new_request_id(c->gw, c->request_id);
}

static void on_request(gw_http_req *req, void *ud)
{
	gw_gateway *gw = ud;
	seo_arena *arena = seo_arena_new(0);
	gw_call *c;
	const char *path = gw_http_path(req), *key, *body;
	char *scratch;
	int path_known;
	size_t body_len;
	long long wait;

	if (arena == NULL || (c = seo_arena_calloc(arena, sizeof(*c))) == NULL ||
	    (scratch = seo_arena_alloc(arena, strlen(path) + 1 +
				       GW_ROUTE_SCRATCH_EXTRA)) == NULL) {
		static const char oom[] = "{\"error\":\"Service Unavailable\","
			"\"code\":\"service_unavailable\",\"message\":\"out of memory\"}";
		seo_arena_free(arena);
		gw_http_respond(req, 503, NULL, 0, oom, sizeof(oom) - 1);
		return;
	}
	c->gw = gw;
	c->req = req;
	c->arena = arena;
	gw->n_calls++;
	c->start_us = seo_mono_us();
	seo_arena_pb_allocator(arena, &c->alloc);
	set_request_id(c);
	c->call_no = ++gw->key_counter;
	seo_fmt_id(c->call_key, gw->key_prefix, KEY_PREFIX_LEN, c->call_no);

	c->route = gw_route_match(gw_http_method(req), path, scratch, c->params,
				  &c->n_params, &path_known);
	if (c->route == NULL) {
		if (path_known) {
			char *allow = seo_arena_alloc(arena, 64);

			if (allow != NULL &&
			    gw_route_allow(path, scratch, c->params, allow,
					   64) > 0) {
				c->answer_headers[0].name = "Allow";
				c->answer_headers[0].value = allow;
				c->n_answer_headers = 1;
			}
			respond_error(c, "method_not_allowed",
				      seo_arena_printf(arena, "%s is not allowed on %s",
						       gw_http_method(req), path),
				      NULL);
		} else {
			respond_error(c, "not_found",
				      seo_arena_printf(arena, "no route for %s", path),
				      NULL);
		}
		return;
	}
	if (c->route->service == GW_SVC_NONE) {
		serve_builtin(c);
		return;
	}
	{
		const gw_cached_answer *kept = gw__answer_cache_get(
			gw->answers, c->route, seo_mono_ms());

		if (kept != NULL) {
			respond(c, kept->status, "application/json", kept->body,
				kept->len);
			return;
		}
	}

	body = gw_http_body(req, &body_len);
	if (gw_json_decode_request(c->route, c->params, c->n_params,
				   gw_http_query(req), body, body_len,
				   gw_http_header_get(req, SIGNATURE_HEADER),
				   arena, &c->input, &c->decode_err) != 0)
		c->decode_failed = 1;

	key = c->route->auth.key == GW_KEY_NONE
		      ? NULL : gw_http_header_get(req, API_KEY_HEADER);
	if ((key == NULL || *key == '\0') &&
	    c->route->auth.key != GW_KEY_REQUIRED) {
		if (c->decode_failed) {
			respond_error(c, c->decode_err.code,
				      c->decode_err.message, NULL);
			return;
		}
		call_service(c);
		return;
	}
	if (key == NULL || *key == '\0') {
		respond_error(c, "invalid_api_key", "missing X-API-Key header",
			      NULL);
		return;
	}
	/* An address that tried too many unknown keys is told so before
	 * svc-account is asked again. */
	wait = gw__authfail_wait(gw->authfail, client_ip(c), seo_mono_ms());
	if (wait > 0) {
		c->answer_headers[0] = (gw_http_header){
			"Retry-After", seo_arena_printf(arena, "%lld", wait)};
		c->n_answer_headers = 1;
		respond_error(c, "rate_limited",
			      "too many failed authentications from this address",
			      seo_arena_printf(arena, "{\"retry_after\": %lld}",
					       wait));
		return;
	}
	/* A bad request still authorizes first (at no cost), so that a bad
	 * key is told 401 before a bad parameter is told 400. */
	authorize(c, key);
}

/* ---- lifecycle ------------------------------------------------------------- */

void gw_config_from_env(gw_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->http_addr = seo_config(SEO_CFG_HTTP_ADDR);
	for (int i = 0; i < SEO__SVC_COUNT; i++)
		cfg->service_addr[i] = seo_service_addr((seo_service)i);
	cfg->tls_cert = seo_config(SEO_CFG_HTTP_TLS_CERT);
	cfg->tls_key = seo_config(SEO_CFG_HTTP_TLS_KEY);
	cfg->body_limit = (size_t)seo_config_num(SEO_CFG_HTTP_BODY_LIMIT);
	cfg->rpc_timeout_ms = (int)seo_config_num(SEO_CFG_RPC_TIMEOUT_MS);
	cfg->drain_ms = (int)seo_config_num(SEO_CFG_DRAIN_MS);
	cfg->trusted_proxies = seo_config(SEO_CFG_TRUSTED_PROXIES);
	cfg->metrics_token = seo_config(SEO_CFG_METRICS_TOKEN);
	cfg->auth_failures_per_min =
		seo_config_num(SEO_CFG_AUTH_FAILURES_PER_MIN);
	cfg->request_timeout_ms =
		(int)seo_config_num(SEO_CFG_HTTP_REQUEST_TIMEOUT_MS);
}

/* What the key watch heard that concerns the leases. */
static void on_watch_heard(const Seo__Account__V1__WatchResponse *w, void *ud)
{
	gw_gateway *gw = ud;

	gw__leases_heard(gw->leases, w);
}

int gw_gateway_new(struct event_base *base, const gw_config *cfg,
		   gw_gateway **out)
{
	gw_gateway *gw = calloc(1, sizeof(*gw));
	gw_http_config hc = {0};
	json_t *doc = NULL;
	char server_url[300];
	char watcher[40];
	int rc = SEO_ENOMEM;

	if (gw == NULL)
		return SEO_ENOMEM;
	gw->base = base;
	gw->rpc_timeout_ms = cfg->rpc_timeout_ms > 0 ? cfg->rpc_timeout_ms : 30000;
	gw->drain_ms = cfg->drain_ms;
	gw->metrics_token = cfg->metrics_token != NULL ? cfg->metrics_token : "";
	gw->routes = gw_routes(&gw->n_routes);
	for (size_t i = 0; i < gw->n_routes; i++) {
		char why[256];
		if (gw_json_route_check(&gw->routes[i], why, sizeof(why)) != 0 ||
		    gw__answer_cache_check(&gw->routes[i], why, sizeof(why)) != 0) {
			log_error("route %s %s: %s", gw->routes[i].method,
				  gw->routes[i].pattern, why);
			rc = SEO_EINVAL;
			goto out;
		}
	}
	if (gw__proxies_parse(cfg->trusted_proxies != NULL ? cfg->trusted_proxies
							   : "",
			      &gw->proxies) != 0) {
		log_error("SEO_TRUSTED_PROXIES: not a comma-separated list of "
			  "addresses or CIDRs: \"%s\"", cfg->trusted_proxies);
		rc = SEO_EINVAL;
		goto out;
	}
	if (seo_random_string(gw->id_prefix, 8, "0123456789abcdef") != 0 ||
	    seo_random_string(gw->key_prefix, KEY_PREFIX_LEN, "0123456789abcdef") != 0) {
		rc = SEO_EIO;
		goto out;
	}
	gw->metrics = gw_metrics_new(gw->routes, gw->n_routes);
	if (gw->metrics == NULL ||
	    gw__answer_cache_new(gw->routes, gw->n_routes, &gw->answers) != 0 ||
	    gw__authfail_new(cfg->auth_failures_per_min, &gw->authfail) != 0 ||
	    gw__settler_new(base, &gw->clients[GW_SVC_ACCOUNT],
			    gw->rpc_timeout_ms, &gw->settler) != 0) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (int i = 1; i < GW__SVC_COUNT; i++) {
		rc = rpc_client_new(base, cfg->service_addr[GW_SVC_REGISTRY(i)],
				    &gw->clients[i]);
		if (rc != 0)
			goto out;
	}
	snprintf(watcher, sizeof(watcher), "gw-%s", gw->key_prefix);
	rc = gw__leases_new(base, &gw->clients[GW_SVC_ACCOUNT], watcher,
			    gw->key_prefix, gw->rpc_timeout_ms, &gw->leases);
	if (rc != 0)
		goto out;
	rc = gw__keys_new(base, &gw->clients[GW_SVC_ACCOUNT], watcher,
			  on_watch_heard, gw, &gw->keys);
	if (rc != 0)
		goto out;
	snprintf(server_url, sizeof(server_url), "%s://%s",
		 cfg->tls_cert && *cfg->tls_cert ? "https" : "http",
		 cfg->http_addr);
	rc = gw_openapi_build(gw->routes, gw->n_routes, server_url, &doc);
	if (rc != 0)
		goto out;
	gw->openapi = json_dumps(doc, JSON_COMPACT);
	if (gw->openapi == NULL) {
		rc = SEO_ENOMEM;
		goto out;
	}
	gw->openapi_len = strlen(gw->openapi);

	hc.addr = cfg->http_addr;
	hc.body_limit = cfg->body_limit;
	hc.tls_cert = cfg->tls_cert;
	hc.tls_key = cfg->tls_key;
	hc.limits[GW_LIM_REQUEST_MS] = cfg->request_timeout_ms;
	rc = gw_http_server_new(base, &hc, on_request, gw, &gw->http);
out:
	json_decref(doc);
	if (rc != 0) {
		gw_gateway_free(gw);
		return rc;
	}
	*out = gw;
	return 0;
}

struct event_base *gw_gateway_base(gw_gateway *gw)
{
	return gw->base;
}

/* Fails the calls still running at the services: each is refunded
 * through svc-account's client, which stays. */
static void cut_service_calls(gw_gateway *gw)
{
	gw->cut = 1;
	for (int i = 1; i < GW__SVC_COUNT; i++) {
		rpc_client *cl = gw->clients[i];

		if (i == GW_SVC_ACCOUNT)
			continue;
		/* Calls that reach call_service() from now on see NULL. */
		gw->clients[i] = NULL;
		rpc_client_free(cl);
	}
}

static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
	gw_gateway *gw = arg;
	int64_t now = seo_mono_ms();
	int giving_back;

	(void)fd;
	(void)what;
	/* Rate tokens go back once no call can spend them, beside the
	 * leases' closes. */
	giving_back = gw->n_calls > 0 || gw__keys_stop(gw->keys);
	if (gw->n_calls == 0 && gw__settler_pending(gw->settler) == 0 &&
	    !gw__leases_busy(gw->leases) && gw_http_server_idle(gw->http) &&
	    !giving_back) {
		event_base_loopbreak(gw->base);
		return;
	}
	if (!gw->cut && now >= gw->cut_at) {
		log_warn("drain limit of %d ms reached: failing the calls still "
			 "at the services (%zu unanswered)", gw->drain_ms,
			 gw->n_calls);
		cut_service_calls(gw);
	} else if (now >= gw->give_up_at) {
		if (gw->n_calls > 0)
			log_error("stopping with %zu calls unanswered",
				  gw->n_calls);
		else
			log_warn("stopping with answers still unread");
		event_base_loopbreak(gw->base);
	}
}

void gw_gateway_shutdown(gw_gateway *gw)
{
	struct timeval tv = {0, DRAIN_POLL_MS * 1000};

	if (gw->drain_ev != NULL)
		return;
	gw->cut_at = seo_mono_ms() + gw->drain_ms;
	gw->give_up_at = gw->cut_at + GW_FLUSH_MS;
	gw_http_server_shutdown(gw->http);
	gw__leases_stop(gw->leases);
	gw->drain_ev = event_new(gw->base, -1, EV_PERSIST, drain_cb, gw);
	if (gw->drain_ev == NULL || event_add(gw->drain_ev, &tv) != 0) {
		log_error("cannot drain: stopping now");
		event_base_loopbreak(gw->base);
	}
}

void gw_gateway_free(gw_gateway *gw)
{
	if (gw == NULL)
		return;
	if (!gw->cut)
		cut_service_calls(gw);
	/* Reports failed by the client's end are not tried again. */
	gw__settler_close(gw->settler);
	gw__keys_close(gw->keys);
	rpc_client_free(gw->clients[GW_SVC_ACCOUNT]);
	gw->clients[GW_SVC_ACCOUNT] = NULL;
	gw__settler_free(gw->settler);
	gw__keys_free(gw->keys);
	gw__leases_free(gw->leases);
	gw_http_server_free(gw->http);
	if (gw->drain_ev != NULL)
		event_free(gw->drain_ev);
	gw_metrics_free(gw->metrics);
	gw__proxies_free(gw->proxies);
	gw__authfail_free(gw->authfail);
	gw__answer_cache_free(gw->answers);
	free(gw->openapi);
	free(gw);
}
