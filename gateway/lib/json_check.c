/*
 * json_check.c: gw_json_route_check(), the consistency check of a route row
 * against its message descriptors, so that a table mistake fails a test or
 * the start-up instead of misdecoding requests.
 */
#include "gw_json.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "json_int.h"
#include "seo/errors.h"

static int bad(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return SEO_EINVAL;
}

static const ProtobufCFieldDescriptor *
field(const ProtobufCMessageDescriptor *desc, const char *name)
{
	if (desc == NULL || name == NULL)
		return NULL;
	return protobuf_c_message_descriptor_get_field_by_name(desc, name);
}

static int singular(const ProtobufCFieldDescriptor *f)
{
	return f->label != PROTOBUF_C_LABEL_REPEATED;
}

static int is_number(const ProtobufCFieldDescriptor *f)
{
	return singular(f) && (seo_pbjson_is_int(f->type) ||
			       f->type == PROTOBUF_C_TYPE_FLOAT ||
			       f->type == PROTOBUF_C_TYPE_DOUBLE);
}

/* Whether v is a value an integer field of f's type can hold. */
static int int_fits(const ProtobufCFieldDescriptor *f, long long v)
{
	long long min;
	unsigned long long max;

	if (!seo_pbjson_is_int(f->type))
		return 1;
	seo_pbjson_int_bounds(f->type, &min, &max);
	return v >= min && (v < 0 || (unsigned long long)v <= max);
}

/* A count of items or of characters, or a singular number. */
static int rangeable(const ProtobufCFieldDescriptor *f)
{
	return !singular(f) || is_number(f) || f->type == PROTOBUF_C_TYPE_STRING ||
	       f->type == PROTOBUF_C_TYPE_BYTES;
}

static int check_default(const ProtobufCFieldDescriptor *f,
			 const gw_param_rule *r)
{
	if (!singular(f) || f->type == PROTOBUF_C_TYPE_STRING ||
	    f->type == PROTOBUF_C_TYPE_BYTES || f->type == PROTOBUF_C_TYPE_MESSAGE)
		return 0;
	if (f->type == PROTOBUF_C_TYPE_BOOL)
		return r->dflt == 0 || r->dflt == 1;
	if (f->type == PROTOBUF_C_TYPE_ENUM)
		return r->dflt >= INT_MIN && r->dflt <= INT_MAX &&
		       protobuf_c_enum_descriptor_get_value(f->descriptor,
							    (int)r->dflt) != NULL;
	if ((r->flags & GW_P_RANGE) && (r->dflt < r->min || r->dflt > r->max))
		return 0;
	return int_fits(f, r->dflt);
}

static int check_rule(const gw_route *route, const gw_param_rule *r,
		      char *why, size_t n)
{
	const ProtobufCFieldDescriptor *f = field(route->in.message, r->name);

	if (f == NULL)
		return bad(why, n, "rule %s: no such field", r->name);
	if (gw__rule(route, r->name) != r)
		return bad(why, n, "rule %s: given twice", r->name);
	if ((r->flags & GW_P_CLAMP) && (r->flags & GW_P_FALLBACK))
		return bad(why, n, "rule %s: clamp and fallback", r->name);
	if ((r->flags & GW_P_CLAMP) && (!(r->flags & GW_P_RANGE) || !is_number(f)))
		return bad(why, n, "rule %s: clamp needs a range on a number",
			   r->name);
	if ((r->flags & GW_P_RANGE) &&
	    (r->min > r->max || !rangeable(f) ||
	     (is_number(f) ? !int_fits(f, r->min) || !int_fits(f, r->max)
			   : r->min < 0)))
		return bad(why, n, "rule %s: range does not fit the field",
			   r->name);
	if ((r->flags & (GW_P_DEFAULT | GW_P_FALLBACK)) && !check_default(f, r))
		return bad(why, n, "rule %s: default does not fit the field",
			   r->name);
	if ((r->flags & GW_P_USAGE) && f->type != PROTOBUF_C_TYPE_STRING)
		return bad(why, n, "rule %s: usage value is not a string",
			   r->name);
	if ((r->flags & GW_P_URL) &&
	    (!singular(f) || f->type != PROTOBUF_C_TYPE_STRING))
		return bad(why, n, "rule %s: a URL rule needs a string field",
			   r->name);
	if ((r->flags & GW_P_DOMAIN) && f->type != PROTOBUF_C_TYPE_STRING)
		return bad(why, n, "rule %s: a domain rule needs a string field",
			   r->name);
	if (r->error_code != NULL && seo_error_lookup(r->error_code) == NULL)
		return bad(why, n, "rule %s: unknown code %s", r->name,
			   r->error_code);
	return 0;
}

static int check_pattern(const gw_route *route, char *why, size_t n)
{
	const char *p = route->pattern, *end;
	const ProtobufCFieldDescriptor *f;
	char name[64];
	size_t count = 0, len;

	if (p == NULL || p[0] != '/')
		return bad(why, n, "pattern must start with /");
	for (; (p = strstr(p, "/:")) != NULL; p = end) {
		p += 2;
		end = strchr(p, '/');
		if (end == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0 || len >= sizeof(name))
			return bad(why, n, "%s: bad path parameter", route->pattern);
		memcpy(name, p, len);
		name[len] = '\0';
		f = field(route->in.message, name);
		if (f == NULL || !singular(f) || f->type == PROTOBUF_C_TYPE_MESSAGE)
			return bad(why, n, "path parameter %s: no such scalar field",
				   name);
		if (++count > GW_MAX_PATH_PARAMS)
			return bad(why, n, "%s: too many path parameters",
				   route->pattern);
	}
	return 0;
}

static int countable(const ProtobufCMessageDescriptor *desc, const char *name)
{
	const ProtobufCFieldDescriptor *f = field(desc, name);

	return f != NULL && (!singular(f) || seo_pbjson_is_int(f->type));
}

/* Header names the gateway writes itself, which no service may set. */
static const char *const own_headers[] = {
	"content-type", "content-length", "x-request-id", "date", "connection",
	"transfer-encoding", "ratelimit-limit", "ratelimit-remaining",
	"ratelimit-reset", NULL};

static int header_listed(const char *const *list, const char *name)
{
	for (; list != NULL && *list != NULL; list++)
		if (strcasecmp(*list, name) == 0)
			return 1;
	return 0;
}

/* A NULL-ended list of at most GW_ROUTE_MAX_HEADERS header names, each an
 * HTTP token, none of `banned`. */
static int check_headers(const gw_route *route, const char *stage,
			 const char *const *names, const char *const *banned,
			 char *why, size_t n)
{
	size_t count = 0;

	for (; names != NULL && *names != NULL; names++) {
		size_t len = strlen(*names);

		if (len == 0 || strspn(*names, "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				       "!#$%&'*+-.^_`|~") != len)
			return bad(why, n, "%s %s: %s header \"%s\" is no "
				   "header name", route->method, route->pattern,
				   stage, *names);
		if (header_listed(banned, *names))
			return bad(why, n, "%s %s: %s header %s is not allowed",
				   route->method, route->pattern, stage, *names);
		if (++count > GW_ROUTE_MAX_HEADERS)
			return bad(why, n, "%s %s: more than %d %s headers",
				   route->method, route->pattern,
				   GW_ROUTE_MAX_HEADERS, stage);
	}
	return 0;
}

/* The output stage: success statuses, headers, bytes. */
static int check_output(const gw_route *route, char *why, size_t n)
{
	const gw_out_stage *out = &route->out;
	const ProtobufCFieldDescriptor *f;

	if (out->status < 200 || out->status > 299)
		return bad(why, n, "%s %s: success status %d", route->method,
			   route->pattern, out->status);
	for (const int *s = out->statuses; s != NULL && *s != 0; s++)
		if (*s < 200 || *s > 299)
			return bad(why, n, "%s %s: success status %d",
				   route->method, route->pattern, *s);
	if (check_headers(route, "output", out->headers, own_headers, why,
			  n) != 0)
		return SEO_EINVAL;
	/* gw_json_write_answer() appends them: a field of that name would
	 * be written twice */
	if (route->bill.envelope && out->message != NULL &&
	    (field(out->message, "credits_used") != NULL ||
	     field(out->message, "credits_remaining") != NULL))
		return bad(why, n, "%s %s: an envelope's output has its own "
			   "credits_used or credits_remaining", route->method,
			   route->pattern);
	if (out->kind != GW_OUT_BYTES)
		return 0;
	f = field(out->message, out->body_field);
	if (f == NULL || !singular(f) || f->type != PROTOBUF_C_TYPE_BYTES)
		return bad(why, n, "%s %s: bytes output needs a bytes field",
			   route->method, route->pattern);
	if (out->content_type == NULL || out->content_type[0] == '\0' ||
	    strchr(out->content_type, '/') == NULL)
		return bad(why, n, "%s %s: bytes output needs a content type",
			   route->method, route->pattern);
	if (route->bill.envelope || route->bill.hide_billed)
		return bad(why, n, "%s %s: bytes output has no JSON to add "
			   "credits to or hide fields from", route->method,
			   route->pattern);
	return 0;
}

/* Authentication and forwarding: an anonymous call can be neither
 * charged nor told its balance; the key never reaches a service. */
static int check_auth_forward(const gw_route *route, char *why, size_t n)
{
	static const char *const never_forwarded[] = {"x-api-key", NULL};

	if (route->auth.key == GW_KEY_OPTIONAL &&
	    (route->bill.kind != GW_BILL_FREE || route->bill.envelope ||
	     route->auth.roles != GW_ROLES_ANY))
		return bad(why, n, "%s %s: an optional key needs a free route "
			   "open to any role", route->method, route->pattern);
	return check_headers(route, "forwarded", route->forward.headers,
			     never_forwarded, why, n);
}

int gw_json_route_check(const gw_route *route, char *why, size_t why_len)
{
	const ProtobufCFieldDescriptor *f;
	size_t i;
	int rc;

	if (route->method == NULL || route->summary == NULL)
		return bad(why, why_len, "method and summary are required");
	rc = check_pattern(route, why, why_len);
	if (rc != 0)
		return rc;
	if (route->in.kind != GW_IN_NONE && route->in.message == NULL)
		return bad(why, why_len, "%s %s: input message missing",
			   route->method, route->pattern);
	rc = check_output(route, why, why_len);
	if (rc == 0)
		rc = check_auth_forward(route, why, why_len);
	if (rc != 0)
		return rc;
	for (i = 0; i < route->in.n_params; i++) {
		rc = check_rule(route, &route->in.params[i], why, why_len);
		if (rc != 0)
			return rc;
	}
	if (route->in.kind == GW_IN_RAW) {
		f = field(route->in.message, "payload");
		if (f == NULL || !singular(f) || f->type != PROTOBUF_C_TYPE_BYTES)
			return bad(why, why_len, "raw input needs payload bytes");
		f = field(route->in.message, "signature");
		if (f == NULL || !singular(f) || f->type != PROTOBUF_C_TYPE_STRING)
			return bad(why, why_len, "raw input needs signature string");
	}
	if (route->bill.kind == GW_BILL_PER_ITEM &&
	    (!countable(route->in.message, route->bill.items_field) ||
	     !countable(route->out.message, route->bill.billed_field)))
		return bad(why, why_len, "%s %s: per-item fields missing",
			   route->method, route->pattern);
	if ((route->bill.kind == GW_BILL_FIXED || route->bill.kind == GW_BILL_AFTER) &&
	    route->bill.billed_field != NULL &&
	    !countable(route->out.message, route->bill.billed_field))
		return bad(why, why_len, "%s %s: billed field %s missing",
			   route->method, route->pattern, route->bill.billed_field);
	if (route->bill.surcharge_field != NULL &&
	    (route->bill.kind != GW_BILL_FIXED || route->bill.surcharge <= 0 ||
	     (f = field(route->in.message, route->bill.surcharge_field)) == NULL ||
	     !singular(f) || f->type != PROTOBUF_C_TYPE_BOOL))
		return bad(why, why_len, "%s %s: surcharge needs a boolean "
			   "request field and a fixed price", route->method,
			   route->pattern);
	if (route->bill.cost < 0 || (route->bill.kind != GW_BILL_FREE && route->bill.cost == 0))
		return bad(why, why_len, "%s %s: cost %lld", route->method,
			   route->pattern, route->bill.cost);
	if (route->in.strict_code != NULL && seo_error_lookup(route->in.strict_code) == NULL)
		return bad(why, why_len, "unknown code %s", route->in.strict_code);
	if (route->in.body_code != NULL && seo_error_lookup(route->in.body_code) == NULL)
		return bad(why, why_len, "unknown code %s", route->in.body_code);
	for (i = 0; route->errors != NULL && route->errors[i] != NULL; i++)
		if (seo_error_lookup(route->errors[i]) == NULL)
			return bad(why, why_len, "unknown code %s", route->errors[i]);
	return 0;
}
