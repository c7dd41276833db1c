/*
 * openapi.c: the OpenAPI 3.1 document, built from the route table, the
 * message descriptors and the public error table, so that it cannot drift
 * from what the gateway does.
 *
 * Every message a response or request body can carry is one schema under
 * components.schemas, named by its full proto name and linked by $ref.
 * Error responses are grouped by HTTP status, one response per status
 * listing its codes, each with an example of the Error object.
 */
#include "gw_json.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_int.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"
#include "seo/nullable.h"
#include "seo/pb.h"

#define SCHEMA_REF "#/components/schemas/"

/* The tag of the gateway's own routes; a service's tag is its registry
 * row's name and summary. */
#define GATEWAY_TAG "gateway"
#define GATEWAY_TAG_DOC "Answered by the gateway itself."

static const char *tag_name(gw_service svc)
{
	return svc == GW_SVC_NONE ? GATEWAY_TAG
				  : seo_service_get(GW_SVC_REGISTRY(svc))->name;
}

static const char *tag_doc(gw_service svc)
{
	return svc == GW_SVC_NONE ? GATEWAY_TAG_DOC
				  : seo_service_get(GW_SVC_REGISTRY(svc))->summary;
}

/* Optional fields some errors carry besides error, code and message. */
static const struct {
	const char *name;
	const char *type;
	const char *description;
} error_extras[] = {
	{"retry_after", "integer", "Seconds to wait before retrying."},
	{"retry", "boolean", "Whether the same request may succeed later."},
	{"reset_at", "integer", "When the quota resets, in Unix milliseconds."},
	{"signup_url", "string", "Where to sign up for a higher limit."},
	{"tool", "string", "The free tool the limit applies to."},
	{"tier", "string", "The tier whose limit was reached."},
	{"quota", "integer", "The limit that was reached."},
};

/* ---- small builders ---------------------------------------------------- */

/* s followed by the formatted text, as a new string; s is released. NULL
 * when out of memory. */
static json_t *str_append(json_t *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static json_t *str_append(json_t *s, const char *fmt, ...)
{
	json_t *tail, *r = NULL;
	va_list ap;

	va_start(ap, fmt);
	tail = json_vsprintf(fmt, ap);
	va_end(ap);
	if (s != NULL && tail != NULL)
		r = json_sprintf("%s%s", json_string_value(s),
				 json_string_value(tail));
	json_decref(s);
	json_decref(tail);
	return r;
}

/* s with s[key] = v (v is stolen); NULL, s released, when out of memory. */
static json_t *with(json_t *s, const char *key, json_t *v)
{
	if (json_object_set_new(s, key, v) == 0)
		return s;
	json_decref(s);
	return NULL;
}

static json_t *schema_ref(const char *name)
{
	return json_pack("{s:s+}", "$ref", SCHEMA_REF, name);
}

/* Whether `name` is a ":name" segment of the route's pattern. */
static int is_path_param(const char *pattern, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = pattern; (p = strstr(p, "/:")) != NULL; p++)
		if (strncmp(p + 2, name, len) == 0 &&
		    (p[2 + len] == '/' || p[2 + len] == '\0'))
			return 1;
	return 0;
}

/* ---- schemas ----------------------------------------------------------- */

static json_t *enum_values(const ProtobufCEnumDescriptor *e, int nullable)
{
	size_t pre = seo_pbjson_enum_prefix(e);
	json_t *a = json_array();
	unsigned i;

	for (i = 0; a != NULL && i < e->n_values; i++)
		if (json_array_append_new(a, seo_pbjson_enum_name(e->values[i].name,
							   pre)) != 0) {
			json_decref(a);
			return NULL;
		}
	if (a != NULL && nullable && json_array_append_new(a, json_null()) != 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static int add_schema(json_t *schemas, const ProtobufCMessageDescriptor *desc);

/* A seo.common.RawJson is written as the JSON value it carries: a
 * free-form object. */
static json_t *raw_json_schema(int nullable)
{
	return json_pack("{s:o,s:b,s:s}", "type",
			 nullable ? json_pack("[s,s]", "object", "null")
				  : json_string("object"),
			 "additionalProperties", 1,
			 "description", "free-form JSON object");
}

/*
 * The schema of one value of field f. `nullable` lets it be null too: as
 * type [T, "null"] (with null among enum values) or, for a message, anyOf
 * its $ref and null. Messages reached get their component schema.
 */
static json_t *value_schema(json_t *schemas, const ProtobufCFieldDescriptor *f,
			    int nullable)
{
	const char *type = "string";
	json_t *s;
	long long min;
	unsigned long long max;

	if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
	    f->descriptor == &seo__common__raw_json__descriptor)
		return raw_json_schema(nullable);
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const ProtobufCMessageDescriptor *m = f->descriptor;
		if (add_schema(schemas, m) != 0)
			return NULL;
		if (!nullable)
			return schema_ref(m->name);
		return json_pack("{s:[o,{s:s}]}", "anyOf", schema_ref(m->name),
				 "type", "null");
	}
	if (seo_pbjson_is_int(f->type))
		type = "integer";
	else if (f->type == PROTOBUF_C_TYPE_FLOAT ||
		 f->type == PROTOBUF_C_TYPE_DOUBLE)
		type = "number";
	else if (f->type == PROTOBUF_C_TYPE_BOOL)
		type = "boolean";
	s = nullable ? json_pack("{s:[s,s]}", "type", type, "null")
		     : json_pack("{s:s}", "type", type);
	if (s == NULL)
		return NULL;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return with(s, "format", json_string("int32"));
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return with(s, "format", json_string("int64"));
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		/* No format names these: the bounds say it. */
		seo_pbjson_int_bounds(f->type, &min, &max);
		s = with(s, "minimum", json_integer(min));
		return max <= LLONG_MAX
			       ? with(s, "maximum", json_integer((json_int_t)max))
			       : s;
	case PROTOBUF_C_TYPE_FLOAT:
		return with(s, "format", json_string("float"));
	case PROTOBUF_C_TYPE_DOUBLE:
		return with(s, "format", json_string("double"));
	case PROTOBUF_C_TYPE_ENUM:
		return with(s, "enum", enum_values(f->descriptor, nullable));
	case PROTOBUF_C_TYPE_BYTES:
		return with(s, "contentEncoding", json_string("base64"));
	default:
		return s;
	}
}

/* A repeated field is an array of values; a singular one is a value. */
static json_t *field_schema(json_t *schemas, const ProtobufCFieldDescriptor *f,
			    int nullable)
{
	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return value_schema(schemas, f, nullable);
	return json_pack("{s:s,s:o}", "type", "array", "items",
			 value_schema(schemas, f, nullable));
}

/*
 * The object schema of a message as the encoder writes it: every field; the
 * nullable ones (seo/nullable.h) as [T, "null"], since the encoder writes
 * them null when unset; the other optional ones may be absent but are never
 * null. Fields that are path parameters of `skip_pattern`
 * (when not NULL) are left out: they do not travel in the body; so is
 * `skip_field` (when not NULL), a hidden billed field.
 */
static json_t *message_schema(json_t *schemas,
			      const ProtobufCMessageDescriptor *desc,
			      const char *skip_pattern, const char *skip_field)
{
	json_t *props = json_object(), *req = json_array();
	unsigned i;
	int ok = props != NULL && req != NULL;

	for (i = 0; ok && i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		int nullable = f->label == PROTOBUF_C_LABEL_OPTIONAL &&
			       !seo_pb_always(f) &&
			       !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			       seo_proto_nullable(desc, f);
		if ((skip_pattern != NULL && is_path_param(skip_pattern, f->name)) ||
		    (skip_field != NULL && strcmp(skip_field, f->name) == 0))
			continue;
		ok = json_object_set_new(props, f->name,
					 field_schema(schemas, f, nullable)) == 0 &&
		     (!seo_pb_always(f) ||
		      json_array_append_new(req, json_string(f->name)) == 0);
	}
	if (!ok) {
		json_decref(props);
		json_decref(req);
		return NULL;
	}
	if (json_array_size(req) == 0) {
		json_decref(req);
		req = NULL;
	}
	return json_pack("{s:s,s:o,s:o*}", "type", "object", "properties", props,
			 "required", req);
}

/* Adds the component schema of desc (and of the messages it reaches) once.
 * The entry goes in before its fields are walked, so that a message that
 * reaches itself refers to it instead of recursing. */
static int add_schema(json_t *schemas, const ProtobufCMessageDescriptor *desc)
{
	json_t *s;

	if (json_object_get(schemas, desc->name) != NULL)
		return 0;
	if (json_object_set_new(schemas, desc->name, json_object()) != 0)
		return SEO_ENOMEM;
	s = message_schema(schemas, desc, NULL, NULL);
	if (s == NULL || json_object_set_new(schemas, desc->name, s) != 0)
		return SEO_ENOMEM;
	return 0;
}

static json_t *error_schema(void)
{
	unsigned n, i;
	const seo_error_def *table = seo_error_table(&n);
	json_t *codes = json_array(), *s;

	for (i = 0; codes != NULL && i < n; i++)
		if (json_array_append_new(codes, json_string(table[i].code)) != 0) {
			json_decref(codes);
			codes = NULL;
		}
	s = json_pack("{s:s,s:[sss],s:{s:{s:s,s:s},s:{s:s,s:s,s:o},s:{s:s,s:s}}}",
		      "type", "object",
		      "required", "error", "code", "message",
		      "properties",
		      "error", "type", "string", "description",
		      "The HTTP reason phrase, e.g. Not Found.",
		      "code", "type", "string", "description",
		      "The stable machine code.", "enum", codes,
		      "message", "type", "string", "description",
		      "What was wrong, in lowercase, naming the parameter.");
	for (i = 0; s != NULL && i < sizeof(error_extras) / sizeof(error_extras[0]); i++)
		if (json_object_set_new(json_object_get(s, "properties"),
					error_extras[i].name,
					json_pack("{s:s,s:s}", "type",
						  error_extras[i].type,
						  "description",
						  error_extras[i].description)) != 0) {
			json_decref(s);
			return NULL;
		}
	return s;
}

/* ---- rules in schemas -------------------------------------------------- */

/* Adds a rule's bounds and default to the schema s of field f: minimum and
 * maximum for numbers, minItems/maxItems for repeated fields, minLength and
 * maxLength for strings; LLONG_MIN and LLONG_MAX mean unbounded. */
static int rule_schema(json_t *s, const ProtobufCFieldDescriptor *f,
		       const gw_param_rule *rule)
{
	const char *lo = "minimum", *hi = "maximum";
	json_t *dflt = NULL;

	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		lo = "minItems";
		hi = "maxItems";
	} else if (f->type == PROTOBUF_C_TYPE_STRING) {
		lo = "minLength";
		hi = "maxLength";
	} else if (f->type == PROTOBUF_C_TYPE_BYTES) {
		lo = hi = NULL; /* the base64 text is longer than the bytes */
	}
	if ((rule->flags & GW_P_RANGE) && lo != NULL &&
	    ((rule->min != LLONG_MIN &&
	      json_object_set_new(s, lo, json_integer(rule->min)) != 0) ||
	     (rule->max != LLONG_MAX &&
	      json_object_set_new(s, hi, json_integer(rule->max)) != 0)))
		return SEO_ENOMEM;
	if (!(rule->flags & GW_P_DEFAULT) || f->label == PROTOBUF_C_LABEL_REPEATED)
		return 0;
	if (f->type == PROTOBUF_C_TYPE_BOOL) {
		dflt = json_boolean(rule->dflt);
	} else if (f->type == PROTOBUF_C_TYPE_ENUM) {
		const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
			f->descriptor, (int)rule->dflt);
		if (v == NULL)
			return 0;
		dflt = seo_pbjson_enum_name(v->name, seo_pbjson_enum_prefix(f->descriptor));
	} else if (f->type != PROTOBUF_C_TYPE_STRING &&
		   f->type != PROTOBUF_C_TYPE_BYTES &&
		   f->type != PROTOBUF_C_TYPE_MESSAGE) {
		dflt = json_integer(rule->dflt);
	} else {
		return 0;
	}
	return json_object_set_new(s, "default", dflt) == 0 ? 0 : SEO_ENOMEM;
}

/* The rule's doc line and what happens to values out of range. NULL (and
 * *oom unset) when there is nothing to say. */
static json_t *rule_description(const gw_param_rule *rule, int *oom)
{
	json_t *d;

	if (rule == NULL)
		return NULL;
	d = json_string(rule->doc != NULL ? rule->doc : "");
	if (rule->flags & GW_P_CLAMP)
		d = str_append(d, "%sValues out of range are clamped.",
			       rule->doc != NULL ? " " : "");
	else if (rule->flags & GW_P_FALLBACK)
		d = str_append(d, "%sInvalid or out-of-range values fall back to "
			       "the default.", rule->doc != NULL ? " " : "");
	if (d == NULL) {
		*oom = 1;
	} else if (json_string_length(d) == 0) {
		json_decref(d);
		d = NULL;
	}
	return d;
}

/* ---- operations -------------------------------------------------------- */

/* "/v1/keys/:id" -> "/v1/keys/{id}". */
static json_t *openapi_path(const char *pattern)
{
	size_t len = strlen(pattern), i, o = 0;
	char *buf = malloc(len * 2 + 1);
	int in_param = 0;
	json_t *s;

	if (buf == NULL)
		return NULL;
	for (i = 0; i <= len; i++) {
		char c = pattern[i];
		if (in_param && (c == '/' || c == '\0')) {
			buf[o++] = '}';
			in_param = 0;
		}
		if (c == ':' && i > 0 && pattern[i - 1] == '/') {
			buf[o++] = '{';
			in_param = 1;
		} else {
			buf[o++] = c;
		}
	}
	s = json_string(buf);
	free(buf);
	return s;
}

/*
 * operationId from method and pattern: "DELETE /v1/keys/:id" ->
 * "deleteKeysById", "GET /v1/ads-planner/keyword-ideas" ->
 * "getAdsPlannerKeywordIdeas". The leading version segment is dropped; a
 * clash (e.g. /a-b and /a/b) gets a number appended. `ids` holds the ids
 * given so far.
 */
static json_t *operation_id(json_t *ids, const char *method,
			    const char *pattern)
{
	size_t len = strlen(method) + strlen(pattern) * 2 + 24, o = 0, i;
	char *buf = malloc(len);
	const char *p = pattern;
	int upper = 0, n;
	json_t *id = NULL;

	if (buf == NULL)
		return NULL;
	for (i = 0; method[i] != '\0'; i++)
		buf[o++] = method[i] >= 'A' && method[i] <= 'Z'
				   ? (char)(method[i] - 'A' + 'a') : method[i];
	if (p[0] == '/' && p[1] == 'v' && p[2] >= '0' && p[2] <= '9') {
		for (p += 2; *p >= '0' && *p <= '9'; p++)
			;
	}
	for (; *p != '\0'; p++) {
		char c = *p;
		if (c == ':') {
			memcpy(buf + o, "By", 2);
			o += 2;
			upper = 1;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9')) {
			buf[o++] = upper && c >= 'a' && c <= 'z'
					   ? (char)(c - 'a' + 'A') : c;
			upper = 0;
		} else {
			upper = 1; /* '/', '-', '_' and '.' start a word */
		}
	}
	buf[o] = '\0';
	for (n = 2; json_object_get(ids, buf) != NULL; n++)
		snprintf(buf + o, len - o, "%d", n);
	if (json_object_set_new(ids, buf, json_true()) == 0)
		id = json_string(buf);
	free(buf);
	return id;
}

static json_t *roles_json(unsigned roles)
{
	const ProtobufCEnumDescriptor *e = &seo__account__v1__role__descriptor;
	size_t pre = seo_pbjson_enum_prefix(e);
	json_t *a = json_array();
	unsigned i;

	if (a != NULL && roles == GW_ROLES_ANY)
		return json_array_append_new(a, json_string("any")) == 0
			       ? a : (json_decref(a), NULL);
	for (i = 0; a != NULL && i < e->n_values; i++)
		if (e->values[i].value != 0 &&
		    (roles & (unsigned)e->values[i].value) &&
		    json_array_append_new(a, seo_pbjson_enum_name(e->values[i].name,
							   pre)) != 0) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

/* Cost, billing, roles and rate in words. */
static json_t *operation_description(const gw_route *r)
{
	const char *unit = r->bill.cost == 1 ? "credit" : "credits";
	json_t *d, *roles = NULL;
	size_t i;

	if (r->bill.kind == GW_BILL_FREE)
		d = json_string("Free: no credits are charged.");
	else if (r->bill.kind == GW_BILL_FIXED && r->bill.surcharge_field != NULL)
		d = json_sprintf("Costs %lld %s per call, %lld more with `%s` "
				 "true, debited before the work and refunded if "
				 "it fails.", r->bill.cost, unit, r->bill.surcharge,
				 r->bill.surcharge_field);
	else if (r->bill.kind == GW_BILL_FIXED)
		d = json_sprintf("Costs %lld %s per call, debited before the work "
				 "and refunded if it fails.", r->bill.cost, unit);
	else if (r->bill.kind == GW_BILL_AFTER && r->bill.billed_field == NULL)
		d = json_sprintf("Costs %lld %s per call, debited only once the "
				 "work succeeded (402 insufficient_credits then "
				 "if the balance is short); a failure costs "
				 "nothing.", r->bill.cost, unit);
	else if (r->bill.kind == GW_BILL_AFTER)
		d = json_sprintf("Costs %lld %s per item (`%s` in the response), "
				 "debited only once the work succeeded (402 "
				 "insufficient_credits then if the balance is "
				 "short); a failure costs nothing.",
				 r->bill.cost, unit, r->bill.billed_field);
	else
		d = json_sprintf("Costs %lld %s per item (`%s`): the most items "
				 "are debited before the work, and the items not "
				 "billed (`%s` in the response) are refunded.",
				 r->bill.cost, unit, r->bill.items_field, r->bill.billed_field);
	if (r->auth.key == GW_KEY_NONE)
		return str_append(d, " No API key is needed.");
	if (r->auth.key == GW_KEY_OPTIONAL)
		d = str_append(d, " The API key is optional: without one the "
			       "call is anonymous, an invalid one is refused.");
	if (r->auth.roles == GW_ROLES_ANY) {
		d = str_append(d, " Any API key may call it.");
	} else {
		roles = roles_json(r->auth.roles);
		d = str_append(d, " Roles allowed:");
		for (i = 0; i < json_array_size(roles); i++)
			d = str_append(d, "%s %s", i > 0 ? "," : "",
				       json_string_value(json_array_get(roles, i)));
		d = roles != NULL ? str_append(d, ".") : (json_decref(d), NULL);
		json_decref(roles);
	}
	if (r->quota == GW_QUOTA_NONE)
		d = str_append(d, " Not counted against the per-key rate limit.");
	else if (r->quota == GW_QUOTA_IP)
		d = str_append(d, " Counted against a quota per client IP "
			       "address, not the per-key rate limit.");
	return d;
}

/* One parameter named `name`, typed by field f (a string when NULL, for a
 * path parameter naming no field, which gw_json_route_check() reports). */
static int append_param(json_t *params, json_t *schemas, const gw_route *r,
			const char *name, const ProtobufCFieldDescriptor *f,
			const char *in, int required)
{
	const gw_param_rule *rule = gw__rule(r, name);
	json_t *schema, *p;
	int oom = 0;

	schema = f != NULL ? field_schema(schemas, f, 0)
			   : json_pack("{s:s}", "type", "string");
	if (schema == NULL ||
	    (f != NULL && rule != NULL && rule_schema(schema, f, rule) != 0)) {
		json_decref(schema);
		return SEO_ENOMEM;
	}
	p = json_pack("{s:s,s:s,s:b,s:o,s:o*}", "name", name, "in", in,
		      "required", required, "schema", schema, "description",
		      rule_description(rule, &oom));
	/* Comma-separated is the documented form; repeated keys work too. */
	if (f != NULL && f->label == PROTOBUF_C_LABEL_REPEATED)
		p = with(with(p, "style", json_string("form")), "explode",
			 json_false());
	if (oom) {
		json_decref(p);
		return SEO_ENOMEM;
	}
	return json_array_append_new(params, p) == 0 ? 0 : SEO_ENOMEM;
}

/* Path parameters in pattern order, then, for query input, every other
 * field a query can carry, in field order. */
static json_t *parameters(json_t *schemas, const gw_route *r)
{
	const ProtobufCMessageDescriptor *in = r->in.message;
	json_t *params = json_array();
	const char *p, *end;
	char name[64];
	unsigned i;

	for (p = r->pattern; params != NULL && (p = strstr(p, "/:")) != NULL;
	     p = end) {
		p += 2;
		end = p + strcspn(p, "/");
		snprintf(name, sizeof(name), "%.*s", (int)(end - p), p);
		if (append_param(params, schemas, r, name,
				 in != NULL ? protobuf_c_message_descriptor_get_field_by_name(
						      in, name)
					    : NULL,
				 "path", 1) != 0) {
			json_decref(params);
			return NULL;
		}
	}
	for (i = 0; params != NULL && in != NULL && r->in.kind == GW_IN_QUERY &&
		    i < in->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &in->fields[i];
		const gw_param_rule *rule = gw__rule(r, f->name);
		int required = (rule != NULL && (rule->flags & GW_P_REQUIRED)) ||
			       (seo_pb_always(f) &&
				!(rule != NULL && (rule->flags & GW_P_DEFAULT)));
		if (is_path_param(r->pattern, f->name) ||
		    f->type == PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (append_param(params, schemas, r, f->name, f, "query",
				 required) != 0) {
			json_decref(params);
			return NULL;
		}
	}
	for (const char *const *h = r->forward.headers;
	     params != NULL && h != NULL && *h != NULL; h++)
		if (json_array_append_new(params, json_pack(
			    "{s:s,s:s,s:b,s:{s:s},s:s}", "name", *h, "in",
			    "header", "required", 0, "schema", "type", "string",
			    "description", "Forwarded to the service.")) != 0) {
			json_decref(params);
			return NULL;
		}
	return params;
}

/* The rules of a JSON route as a schema to combine with the message's:
 * bounds, defaults and docs per property, and the fields they require.
 * NULL (and *oom unset) when the rules say nothing about the body. */
static json_t *rules_overlay(const gw_route *r, int *oom)
{
	json_t *o, *props, *req;
	size_t i;

	if (r->in.n_params == 0)
		return NULL;
	o = json_pack("{s:s,s:{},s:[]}", "type", "object", "properties",
		      "required");
	props = json_object_get(o, "properties");
	req = json_object_get(o, "required");
	for (i = 0; o != NULL && i < r->in.n_params; i++) {
		const gw_param_rule *rule = &r->in.params[i];
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(r->in.message,
									rule->name);
		json_t *p, *d;
		/* gw_json_route_check() reports rules naming no field. */
		if (f == NULL)
			continue;
		p = json_object();
		d = rule_description(rule, oom);
		if (d != NULL)
			p = with(p, "description", d);
		if (p != NULL && rule_schema(p, f, rule) != 0) {
			json_decref(p);
			p = NULL;
		}
		/* A rule that only marks the usage value says nothing here. */
		if (p != NULL && json_object_size(p) == 0)
			json_decref(p);
		else if (json_object_set_new(props, rule->name, p) != 0)
			*oom = 1;
		if ((rule->flags & GW_P_REQUIRED) &&
		    json_array_append_new(req, json_string(rule->name)) != 0)
			*oom = 1;
		if (*oom) {
			json_decref(o);
			return NULL;
		}
	}
	if (o == NULL) {
		*oom = 1;
	} else if (json_object_size(props) == 0 && json_array_size(req) == 0) {
		json_decref(o);
		o = NULL;
	} else if (json_array_size(req) == 0) {
		json_object_del(o, "required");
	}
	return o;
}

static int body_required(const gw_route *r)
{
	size_t i;

	for (i = 0; i < r->in.message->n_fields; i++)
		if (seo_pb_always(&r->in.message->fields[i]) &&
		    !is_path_param(r->pattern, r->in.message->fields[i].name))
			return 1;
	for (i = 0; i < r->in.n_params; i++)
		if (r->in.params[i].flags & GW_P_REQUIRED)
			return 1;
	return 0;
}

/*
 * The JSON request body: the input message's schema by $ref, combined by
 * allOf with the route's rules. An input with path parameters among its
 * fields is inlined without them instead, since they are not body fields.
 */
static json_t *request_body(json_t *schemas, const gw_route *r)
{
	json_t *schema, *overlay;
	int oom = 0;

	if (r->in.kind == GW_IN_RAW)
		return json_pack("{s:s,s:b,s:{s:{s:{}}}}", "description",
				 "The event exactly as the payment provider sent "
				 "it; the signature is checked over these bytes.",
				 "required", 1, "content", "*/*", "schema");
	if (strstr(r->pattern, "/:") != NULL) {
		schema = message_schema(schemas, r->in.message, r->pattern, NULL);
	} else {
		schema = add_schema(schemas, r->in.message) == 0
				 ? schema_ref(r->in.message->name) : NULL;
	}
	overlay = rules_overlay(r, &oom);
	if (overlay != NULL)
		schema = json_pack("{s:[oo]}", "allOf", schema, overlay);
	if (schema == NULL || oom) {
		json_decref(schema);
		return NULL;
	}
	return json_pack("{s:b,s:{s:{s:o}}}", "required", body_required(r),
			 "content", "application/json", "schema", schema);
}

static json_t *success_response(json_t *schemas, const gw_route *r)
{
	json_t *schema;

	if (r->out.kind == GW_OUT_BYTES)
		return json_pack("{s:s,s:{s:{s:{s:s,s:s}}}}", "description",
				 seo_http_reason(r->out.status), "content",
				 r->out.content_type, "schema", "type", "string",
				 "format", "binary");
	if (r->out.message == NULL)
		return json_pack("{s:s}", "description", seo_http_reason(r->out.status));
	/* Inline, not the component: this answer lacks its billed field. */
	if (r->bill.hide_billed)
		schema = message_schema(schemas, r->out.message, NULL,
					r->bill.billed_field);
	else if (add_schema(schemas, r->out.message) == 0)
		schema = schema_ref(r->out.message->name);
	else
		return NULL;
	if (schema == NULL)
		return NULL;
	if (r->bill.envelope)
		schema = json_pack(
			"{s:[o,{s:s,s:[s],s:{s:{s:s,s:i,s:s},s:{s:s,s:i,s:s}}}]}",
			"allOf", schema, "type", "object", "required",
			"credits_used", "properties",
			"credits_used", "type", "integer", "minimum", 0,
			"description", "Credits this call cost after refunds.",
			"credits_remaining", "type", "integer", "minimum", 0,
			"description", "The workspace balance after this call; "
			"absent for a key whose role may not read the balance "
			"(client).");
	return json_pack("{s:s,s:{s:{s:o}}}", "description",
			 seo_http_reason(r->out.status), "content",
			 "application/json", "schema", schema);
}

/* ---- error codes per route --------------------------------------------- */

static int takes_input(const gw_route *r)
{
	return r->in.message != NULL && r->in.message->n_fields > 0;
}

/* A body that is not JSON gets invalid_json, unless the route names its
 * own code. */
static int takes_json(const gw_route *r)
{
	return r->in.kind == GW_IN_JSON && r->in.body_code == NULL;
}

static int needs_key(const gw_route *r)
{
	return r->auth.key != GW_KEY_NONE;
}

static int billed(const gw_route *r)
{
	return r->bill.kind != GW_BILL_FREE;
}

static int role_limited(const gw_route *r)
{
	return r->auth.roles != GW_ROLES_ANY;
}

static int any_route(const gw_route *r)
{
	(void)r;
	return 1;
}

static int rate_limited(const gw_route *r)
{
	return r->auth.key != GW_KEY_NONE && r->quota == GW_QUOTA_KEY;
}

static int calls_service(const gw_route *r)
{
	return r->service != GW_SVC_NONE;
}

/* The codes the gateway itself may answer on a route, besides its list. */
static const struct {
	const char *code;
	int (*applies)(const gw_route *r);
} generic_codes[] = {
	{"invalid_parameter", takes_input},
	{"invalid_json", takes_json},
	{"invalid_api_key", needs_key},
	{"insufficient_credits", billed},
	{"capability_missing", role_limited},
	{"not_found", any_route},
	{"rate_limited", rate_limited},
	{"service_unavailable", calls_service},
};

static int route_answers(const gw_route *r, const char *code)
{
	size_t i;

	for (i = 0; i < sizeof(generic_codes) / sizeof(generic_codes[0]); i++)
		if (strcmp(generic_codes[i].code, code) == 0 &&
		    generic_codes[i].applies(r))
			return 1;
	for (i = 0; r->errors != NULL && r->errors[i] != NULL; i++)
		if (strcmp(r->errors[i], code) == 0)
			return 1;
	for (i = 0; i < r->in.n_params; i++)
		if (r->in.params[i].error_code != NULL &&
		    strcmp(r->in.params[i].error_code, code) == 0)
			return 1;
	if (r->in.body_code != NULL && strcmp(r->in.body_code, code) == 0)
		return 1;
	return r->in.strict && r->in.strict_code != NULL &&
	       strcmp(r->in.strict_code, code) == 0;
}

/* Adds one response per HTTP status the route can fail with. The table is
 * sorted by status, so codes of one status arrive together. */
static int error_responses(json_t *responses, const gw_route *r)
{
	unsigned n, i;
	const seo_error_def *table = seo_error_table(&n);
	json_t *resp = NULL, *examples = NULL;
	char key[8];

	for (i = 0; i < n; i++) {
		const seo_error_def *e = &table[i];
		if (!route_answers(r, e->code))
			continue;
		snprintf(key, sizeof(key), "%d", e->http_status);
		resp = json_object_get(responses, key);
		if (resp == NULL) {
			resp = json_pack("{s:s+,s:{s:{s:{s:s},s:{}}}}",
					 "description",
					 seo_http_reason(e->http_status), ".",
					 "content", "application/json",
					 "schema", "$ref", SCHEMA_REF "Error",
					 "examples");
			if (json_object_set_new(responses, key, resp) != 0)
				return SEO_ENOMEM;
		}
		examples = json_object_get(
			json_object_get(json_object_get(resp, "content"),
					"application/json"),
			"examples");
		if (json_object_set_new(resp, "description",
					str_append(json_incref(json_object_get(
							   resp, "description")),
						   "\n- `%s`: %s", e->code,
						   e->summary)) != 0 ||
		    json_object_set_new(examples, e->code,
					json_pack("{s:s,s:{s:s,s:s,s:s}}",
						  "summary", e->summary, "value",
						  "error",
						  seo_http_reason(e->http_status),
						  "code", e->code, "message",
						  e->summary)) != 0)
			return SEO_ENOMEM;
	}
	return 0;
}

/* The other success statuses a service may choose: the same answer. */
static int other_statuses(json_t *responses, json_t *schemas, const gw_route *r)
{
	char key[8];

	for (const int *st = r->out.statuses; st != NULL && *st != 0; st++) {
		json_t *resp = success_response(schemas, r);

		snprintf(key, sizeof(key), "%d", *st);
		if (resp == NULL ||
		    json_object_set_new(resp, "description",
					json_string(seo_http_reason(*st))) != 0 ||
		    json_object_set_new(responses, key, resp) != 0)
			return SEO_ENOMEM;
	}
	return 0;
}

/* The headers a service may set, on every response of the route. */
static int answer_headers(json_t *responses, const gw_route *r)
{
	const char *key;
	json_t *resp, *headers;

	if (r->out.headers == NULL || r->out.headers[0] == NULL)
		return 0;
	json_object_foreach(responses, key, resp) {
		headers = json_object();
		if (json_object_set_new(resp, "headers", headers) != 0)
			return SEO_ENOMEM;
		for (const char *const *h = r->out.headers; *h != NULL; h++)
			if (json_object_set_new(headers, *h, json_pack(
					"{s:s,s:{s:s}}", "description",
					"Set by the service when it applies.",
					"schema", "type", "string")) != 0)
				return SEO_ENOMEM;
	}
	return 0;
}

/* No key: none; an optional key: none or the key; else the key. */
static json_t *security(const gw_route *r)
{
	switch (r->auth.key) {
	case GW_KEY_NONE:
		return json_array();
	case GW_KEY_OPTIONAL:
		return json_pack("[{},{s:[]}]", "ApiKey");
	default:
		return json_pack("[{s:[]}]", "ApiKey");
	}
}

static json_t *operation(json_t *schemas, json_t *ids, const gw_route *r)
{
	json_t *op, *params, *responses, *body = NULL;
	char status[8];

	snprintf(status, sizeof(status), "%d", r->out.status);
	op = json_pack("{s:o,s:s,s:o,s:[s]}", "operationId",
		       operation_id(ids, r->method, r->pattern), "summary",
		       r->summary != NULL ? r->summary : r->pattern,
		       "description", operation_description(r),
		       "tags", tag_name(r->service));
	params = parameters(schemas, r);
	if (op == NULL || params == NULL)
		goto fail;
	if (json_array_size(params) > 0 &&
	    json_object_set(op, "parameters", params) != 0)
		goto fail;
	if ((r->in.kind == GW_IN_JSON && r->in.message != NULL) || r->in.kind == GW_IN_RAW) {
		body = request_body(schemas, r);
		if (json_object_set_new(op, "requestBody", body) != 0)
			goto fail;
	}
	responses = json_pack("{s:o}", status, success_response(schemas, r));
	if (json_object_set_new(op, "responses", responses) != 0 ||
	    other_statuses(responses, schemas, r) != 0 ||
	    error_responses(responses, r) != 0 ||
	    answer_headers(responses, r) != 0)
		goto fail;
	if (json_object_set_new(op, "security", security(r)) != 0 ||
	    json_object_set_new(op, "x-credit-cost", json_integer(r->bill.cost)) != 0 ||
	    json_object_set_new(op, "x-billing",
				json_string(gw_bill_name(r->bill.kind))) != 0 ||
	    json_object_set_new(op, "x-roles", roles_json(r->auth.roles)) != 0)
		goto fail;
	json_decref(params);
	return op;
fail:
	json_decref(params);
	json_decref(op);
	return NULL;
}

static json_t *tags(const gw_route *routes, size_t n_routes)
{
	json_t *a = json_array();
	size_t i;
	int svc;

	for (svc = 0; a != NULL && svc < GW__SVC_COUNT; svc++) {
		for (i = 0; i < n_routes && routes[i].service != (gw_service)svc; i++)
			;
		if (i < n_routes &&
		    json_array_append_new(a, json_pack("{s:s,s:s}", "name",
						       tag_name((gw_service)svc),
						       "description",
						       tag_doc((gw_service)svc))) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

int gw_openapi_build(const gw_route *routes, size_t n_routes,
		     const char *server_url, json_t **out)
{
	json_t *doc, *paths, *schemas, *ids = json_object(), *item, *path, *op;
	char method[16];
	size_t i, k;
	int rc = SEO_ENOMEM;

	*out = NULL;
	doc = json_pack(
		"{s:s,s:{s:s,s:s,s:s},s:[{s:s}],s:o,s:{},"
		"s:{s:{s:{s:s,s:s,s:s,s:s}},s:{s:o}}}",
		"openapi", "3.1.0",
		"info", "title", "SEO Data Service", "version", "1.0.0",
		"description",
		"SEO data over REST with JSON bodies: link-graph and domain "
		"data, live page analysis, account and credit management. "
		"Billing is prepaid, per call, in credits; each operation "
		"states its cost in `x-credit-cost` and `x-billing`. Errors "
		"are the Error object with a stable `code`.",
		"servers", "url", server_url != NULL ? server_url : "/",
		"tags", tags(routes, n_routes),
		"paths",
		"components", "securitySchemes", "ApiKey", "type", "apiKey",
		"in", "header", "name", "X-API-Key", "description",
		"The API key; it acts as its creator inside its workspace.",
		"schemas", "Error", error_schema());
	paths = json_object_get(doc, "paths");
	schemas = json_object_get(json_object_get(doc, "components"), "schemas");
	if (doc == NULL || ids == NULL)
		goto out;
	for (i = 0; i < n_routes; i++) {
		const gw_route *r = &routes[i];
		for (k = 0; r->method[k] != '\0' && k + 1 < sizeof(method); k++)
			method[k] = (char)(r->method[k] >= 'A' && r->method[k] <= 'Z'
						   ? r->method[k] - 'A' + 'a'
						   : r->method[k]);
		method[k] = '\0';
		path = openapi_path(r->pattern);
		if (path == NULL)
			goto out;
		item = json_object_get(paths, json_string_value(path));
		if (item == NULL) {
			item = json_object();
			if (json_object_set_new(paths, json_string_value(path),
						item) != 0)
				item = NULL;
		}
		json_decref(path);
		if (item == NULL)
			goto out;
		op = operation(schemas, ids, r);
		if (json_object_set_new(item, method, op) != 0)
			goto out;
	}
	*out = doc;
	doc = NULL;
	rc = 0;
out:
	json_decref(doc);
	json_decref(ids);
	return rc;
}
