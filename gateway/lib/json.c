/*
 * json.c: the descriptor-driven transcoder between the public JSON and
 * query-string interface and protobuf-c messages (see gw_json.h).
 *
 * Decoding fills a message allocated on the request's arena from, in
 * order, the path parameters, the body and the query string; a field may
 * come from one of them only. Scalar range rules act while a value is
 * stored; required, default, count and length rules and the "always"
 * fields (seo/pb.h) are checked once everything is in. Nested messages,
 * repeated body fields and all encoding are the shared conversion's
 * (seo/pbjson.h); this file words its faults and applies the route rules.
 */
#include "gw_json.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_int.h"
#include "seo/domain.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/nullable.h"
#include "seo/pb.h"
#include "seo/pbjson.h"

/* ---- shared helpers ---------------------------------------------------- */

const gw_param_rule *gw__rule(const gw_route *route, const char *name)
{
	size_t i;

	for (i = 0; i < route->in.n_params; i++)
		if (strcmp(route->in.params[i].name, name) == 0)
			return &route->in.params[i];
	return NULL;
}

#define MEMBER(msg, f) ((char *)(msg) + (f)->offset)
#define QUANT(msg, f) ((char *)(msg) + (f)->quantifier_offset)

/* ---- errors ------------------------------------------------------------ */

/* Fills *err with `code` (NULL: invalid_parameter), its HTTP status and the
 * message; returns SEO_EINVAL. A message cut short by the buffer is cut
 * back to whole UTF-8 characters, since it becomes a JSON string. */
static int fail(gw_json_error *err, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(gw_json_error *err, const char *code, const char *fmt, ...)
{
	const seo_error_def *def;
	va_list ap;

	err->code = code != NULL ? code : "invalid_parameter";
	def = seo_error_lookup(err->code);
	err->http_status = def != NULL ? def->http_status : 400;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	err->message[seo_utf8_prefix(err->message, strlen(err->message))] = '\0';
	return SEO_EINVAL;
}

static int oom(gw_json_error *err)
{
	err->code = "internal_error";
	err->http_status = 500;
	snprintf(err->message, sizeof(err->message), "out of memory");
	return SEO_ENOMEM;
}

static const char *rule_code(const gw_param_rule *rule)
{
	return rule != NULL ? rule->error_code : NULL;
}

/* ---- decoding ---------------------------------------------------------- */

typedef struct dec {
	const gw_route *route;
	seo_arena *arena;
	gw_json_error *err;
	unsigned pb_flags; /* SEO_PBJSON_* for the shared conversion */
} dec;

/* Where a value sits, for messages: name, [idx] when >= 0. */
typedef struct where {
	const char *name;
	long idx;
} where;

static const char *where_str(const where *w, char *buf, size_t n)
{
	if (w->idx < 0)
		return w->name;
	snprintf(buf, n, "%s[%ld]", w->name, w->idx);
	return buf;
}

/* What a range bounds, and how its message reads. */
enum { RANGE_VALUE, RANGE_ITEMS, RANGE_CHARS, RANGE_BYTES };

static const struct {
	const char *verb, *one, *many;
} range_words[] = {
	[RANGE_VALUE] = {"be ", "", ""},
	[RANGE_ITEMS] = {"have ", " item", " items"},
	[RANGE_CHARS] = {"be ", " character long", " characters long"},
	[RANGE_BYTES] = {"be ", " byte long", " bytes long"},
};

/* The range message: "limit must be between 1 and 1000", "domains must have
 * at most 50 items", "name must be at least 1 character long". LLONG_MIN
 * and LLONG_MAX leave that end open. */
static int range_error(dec *d, const where *w, const gw_param_rule *rule,
		       int kind)
{
	char buf[128];
	const char *path = where_str(w, buf, sizeof(buf));
	const char *verb = range_words[kind].verb;

	if (rule->max == LLONG_MAX)
		return fail(d->err, rule->error_code, "%s must %sat least %lld%s",
			    path, verb, rule->min,
			    rule->min == 1 ? range_words[kind].one
					   : range_words[kind].many);
	if (rule->min == LLONG_MIN)
		return fail(d->err, rule->error_code, "%s must %sat most %lld%s",
			    path, verb, rule->max,
			    rule->max == 1 ? range_words[kind].one
					   : range_words[kind].many);
	return fail(d->err, rule->error_code, "%s must %sbetween %lld and %lld%s",
		    path, verb, rule->min, rule->max, range_words[kind].many);
}

/* -1, 0 or 1 as a is below, at or above b. */
static int int_cmp(const seo_pbjson_int *a, long long b)
{
	seo_pbjson_int c = seo_pbjson_int_of(b);

	if (a->overflow)
		return a->neg ? -1 : 1;
	if (a->neg != c.neg)
		return a->neg ? -1 : 1;
	if (a->mag == c.mag)
		return 0;
	return (a->mag > c.mag) != a->neg ? 1 : -1;
}

/* An optional '-' and decimal digits, nothing else. */
static int parse_int_text(const char *s, size_t len, seo_pbjson_int *out)
{
	size_t i = 0;

	out->neg = out->overflow = 0;
	out->mag = 0;
	if (len > 0 && s[0] == '-') {
		out->neg = 1;
		i = 1;
	}
	if (i == len)
		return SEO_EINVAL;
	for (; i < len; i++) {
		unsigned dgt = (unsigned)(unsigned char)s[i] - '0';
		if (dgt > 9)
			return SEO_EINVAL;
		if (out->mag > (ULLONG_MAX - dgt) / 10)
			out->overflow = 1;
		else
			out->mag = out->mag * 10 + dgt;
	}
	if (out->mag == 0 && !out->overflow)
		out->neg = 0;
	return 0;
}

/* Plain decimal notation only: strtod() would also take blanks, hex, inf
 * and nan. An exponent past the double range reads as an infinity, which
 * the range rule or the finiteness check then deals with. */
static int parse_real_text(const char *s, size_t len, double *out)
{
	char *end;
	size_t i;

	if (len == 0)
		return SEO_EINVAL;
	for (i = 0; i < len; i++)
		if (strchr("0123456789+-.eE", s[i]) == NULL || s[i] == '\0')
			return SEO_EINVAL;
	*out = strtod(s, &end);
	return end == s + len ? 0 : SEO_EINVAL;
}

/* Stores a rule's integer default into a numeric, bool or enum slot. */
static void store_default(void *slot, ProtobufCType t, long long v)
{
	seo_pbjson_int b;

	switch (t) {
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)slot = (float)v;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)slot = (double)v;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)slot = v != 0;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		*(int *)slot = (int)v;
		break;
	default:
		b = seo_pbjson_int_of(v);
		seo_pbjson_int_store(slot, t, &b);
		break;
	}
}

/* Whether a rule's integer default can be stored in field f: a singular
 * number, bool or enum. */
static int defaultable(const ProtobufCFieldDescriptor *f)
{
	return f->label != PROTOBUF_C_LABEL_REPEATED &&
	       f->type != PROTOBUF_C_TYPE_STRING &&
	       f->type != PROTOBUF_C_TYPE_BYTES &&
	       f->type != PROTOBUF_C_TYPE_MESSAGE;
}

static int fallback(const gw_param_rule *rule, const ProtobufCFieldDescriptor *f)
{
	return rule != NULL && (rule->flags & GW_P_FALLBACK) && defaultable(f);
}

/* Rules on repeated fields count items: an element only borrows the
 * rule's error code. */
static gw_param_rule element_rule(const gw_param_rule *rule)
{
	gw_param_rule el = {0};

	el.error_code = rule_code(rule);
	return el;
}

/* Applies the rule's range (clamp, fallback or error) and the type's
 * bounds to v, then stores it. */
static int int_set(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		   seo_pbjson_int v, const where *w, const gw_param_rule *rule)
{
	char buf[128];

	if (rule != NULL && (rule->flags & GW_P_RANGE)) {
		int below = int_cmp(&v, rule->min) < 0;
		int above = int_cmp(&v, rule->max) > 0;
		if (below || above) {
			if (rule->flags & GW_P_CLAMP)
				v = seo_pbjson_int_of(below ? rule->min : rule->max);
			else if (rule->flags & GW_P_FALLBACK)
				v = seo_pbjson_int_of(rule->dflt);
			/* Past an open end the bound is the type's. */
			else if (!(above && rule->max == LLONG_MAX) &&
				 !(below && rule->min == LLONG_MIN))
				return range_error(d, w, rule, RANGE_VALUE);
		}
	}
	if (!seo_pbjson_int_fits(&v, f->type)) {
		if (!fallback(rule, f))
			return fail(d->err, rule_code(rule), "%s is out of range",
				    where_str(w, buf, sizeof(buf)));
		v = seo_pbjson_int_of(rule->dflt);
	}
	seo_pbjson_int_store(slot, f->type, &v);
	return 0;
}

static int real_set(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		    double v, const where *w, const gw_param_rule *rule)
{
	char buf[128];
	double lim = f->type == PROTOBUF_C_TYPE_FLOAT ? FLT_MAX : DBL_MAX;

	if (rule != NULL && (rule->flags & GW_P_RANGE) &&
	    (v < (double)rule->min || v > (double)rule->max)) {
		if (rule->flags & GW_P_CLAMP)
			v = v < (double)rule->min ? (double)rule->min
						  : (double)rule->max;
		else if (rule->flags & GW_P_FALLBACK)
			v = (double)rule->dflt;
		else if (!(v > (double)rule->max && rule->max == LLONG_MAX) &&
			 !(v < (double)rule->min && rule->min == LLONG_MIN))
			return range_error(d, w, rule, RANGE_VALUE);
	}
	if (!(fabs(v) <= lim)) {
		if (!fallback(rule, f))
			return fail(d->err, rule_code(rule), "%s is out of range",
				    where_str(w, buf, sizeof(buf)));
		v = (double)rule->dflt;
	}
	if (f->type == PROTOBUF_C_TYPE_FLOAT)
		*(float *)slot = (float)v;
	else
		*(double *)slot = v;
	return 0;
}

/* "a, b, c": the accepted names of e, cut to fit buf. */
static const char *enum_list(const ProtobufCEnumDescriptor *e, char *buf,
			     size_t n)
{
	size_t pre = seo_pbjson_enum_prefix(e), o = 0, i;
	unsigned v;

	buf[0] = '\0';
	for (v = 0; v < e->n_values; v++) {
		const char *name = e->values[v].name + pre;
		if (v > 0 && o + 2 < n) {
			buf[o++] = ',';
			buf[o++] = ' ';
		}
		for (i = 0; name[i] != '\0' && o + 1 < n; i++)
			buf[o++] = name[i] >= 'A' && name[i] <= 'Z'
					   ? (char)(name[i] - 'A' + 'a') : name[i];
		buf[o] = '\0';
	}
	return buf;
}

/* A value of the wrong type: the rule's default with GW_P_FALLBACK (for
 * numbers, bools and enums), an error naming what was expected otherwise. */
static int type_error(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		      const where *w, const gw_param_rule *rule)
{
	char buf[128], names[160];
	const char *path = where_str(w, buf, sizeof(buf));
	const char *want;

	if (fallback(rule, f)) {
		store_default(slot, f->type, rule->dflt);
		return 0;
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		want = "a number";
		break;
	case PROTOBUF_C_TYPE_BOOL:
		want = "true or false";
		break;
	case PROTOBUF_C_TYPE_ENUM:
		return fail(d->err, rule_code(rule), "%s must be one of: %s", path,
			    enum_list(f->descriptor, names, sizeof(names)));
	case PROTOBUF_C_TYPE_STRING:
		want = "a string";
		break;
	case PROTOBUF_C_TYPE_BYTES:
		want = "a base64 string";
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		want = "an object";
		break;
	default:
		want = "an integer";
		break;
	}
	return fail(d->err, rule_code(rule), "%s must be %s", path, want);
}

/*
 * The result `rc` of the shared conversion of the value at w (`slot`, NULL
 * for a whole repeated field), a fault in the gateway's words. The rule
 * acts on that value and its elements; a fault in a message below them is
 * a plain invalid_parameter.
 */
static int pb_result(dec *d, int rc, const seo_pbjson_error *pe, void *slot,
		     const where *w, const gw_param_rule *rule)
{
	char top[128], buf[sizeof(top) + sizeof(pe->path) + 1];
	where at = {buf, -1};
	const char *sub = pe->path;

	if (rc == SEO_ENOMEM)
		return oom(d->err);
	if (rc != SEO_EINVAL)
		return rc;
	if (sub[0] != '\0' && (sub[0] != '[' || strchr(sub, '.') != NULL))
		rule = NULL;
	snprintf(buf, sizeof(buf), "%s%s%s", where_str(w, top, sizeof(top)),
		 sub[0] == '\0' || sub[0] == '[' ? "" : ".", sub);
	switch (pe->fault) {
	case SEO_PBJSON_TYPE:
		return type_error(d, pe->field, slot, &at, rule);
	case SEO_PBJSON_RANGE:
		return fail(d->err, rule_code(rule), "%s is out of range", buf);
	case SEO_PBJSON_UTF8:
		return fail(d->err, rule_code(rule), "%s must be valid utf-8", buf);
	case SEO_PBJSON_ARRAY:
		return fail(d->err, rule_code(rule), "%s must be an array", buf);
	case SEO_PBJSON_UNKNOWN:
		return fail(d->err, d->route->in.strict_code, "unknown field: %s", buf);
	case SEO_PBJSON_ONEOF:
		return fail(d->err, rule_code(rule),
			    "%s cannot be given together with %s", buf,
			    pe->other->name);
	default: /* SEO_PBJSON_MISSING */
		return fail(d->err, NULL, "missing parameter: %s", buf);
	}
}

/* One body value into `slot`: numbers here, where the rule's range acts
 * before the type's bounds; the rest by the shared conversion. */
static int json_value(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		      const json_t *v, const where *w, const gw_param_rule *rule)
{
	seo_pbjson_error pe;
	seo_pbjson_int i;
	int rc;

	if (f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_DOUBLE)
		return json_is_number(v)
			       ? real_set(d, f, slot, json_number_value(v), w, rule)
			       : type_error(d, f, slot, w, rule);
	if (seo_pbjson_is_int(f->type))
		return seo_pbjson_int_json(v, d->pb_flags, &i) == 0
			       ? int_set(d, f, slot, i, w, rule)
			       : type_error(d, f, slot, w, rule);
	rc = seo_pbjson_value(f, v, d->pb_flags, d->arena, slot, &pe);
	return pb_result(d, rc, &pe, slot, w, rule);
}

/*
 * Converts one value into `slot`, a field of f's type: from `json` when it
 * is not NULL (body), else from text[0..len) (path, query; NUL-terminated;
 * never for a message field).
 */
static int set_value(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		     const char *text, size_t len, const json_t *json,
		     const where *w, const gw_param_rule *rule)
{
	char buf[128];
	seo_pbjson_int i;
	double r;
	int rc;

	if (json != NULL)
		return json_value(d, f, slot, json, w, rule);
	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (parse_real_text(text, len, &r) != 0)
			return type_error(d, f, slot, w, rule);
		return real_set(d, f, slot, r, w, rule);
	case PROTOBUF_C_TYPE_BOOL:
		if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
			*(protobuf_c_boolean *)slot = 1;
		else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
			*(protobuf_c_boolean *)slot = 0;
		else
			return type_error(d, f, slot, w, rule);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return type_error(d, f, slot, w, rule);
	case PROTOBUF_C_TYPE_ENUM:
		if (seo_pbjson_enum_parse(f->descriptor, text, len, slot) != 0)
			return type_error(d, f, slot, w, rule);
		return 0;
	case PROTOBUF_C_TYPE_BYTES:
		rc = seo_pbjson_b64_decode(d->arena, text, len, slot);
		if (rc == SEO_ENOMEM)
			return oom(d->err);
		return rc == 0 ? 0 : type_error(d, f, slot, w, rule);
	case PROTOBUF_C_TYPE_STRING:
		if (seo_utf8_prefix(text, len) != len)
			return fail(d->err, rule_code(rule), "%s must be valid utf-8",
				    where_str(w, buf, sizeof(buf)));
		*(char **)slot = seo_arena_strndup(d->arena, text, len);
		return *(char **)slot != NULL ? 0 : oom(d->err);
	default:
		if (parse_int_text(text, len, &i) != 0)
			return type_error(d, f, slot, w, rule);
		return int_set(d, f, slot, i, w, rule);
	}
}

/* Sets a non-repeated field, refusing a second member of a oneof. */
static int set_single(dec *d, ProtobufCMessage *msg,
		      const ProtobufCFieldDescriptor *f, const char *text,
		      size_t len, const json_t *json, const where *w,
		      const gw_param_rule *rule)
{
	const ProtobufCFieldDescriptor *other = seo_pbjson_oneof_other(msg, f);
	char buf[128];
	int rc;

	if (other != NULL)
		return fail(d->err, rule_code(rule),
			    "%s cannot be given together with %s",
			    where_str(w, buf, sizeof(buf)), other->name);
	rc = set_value(d, f, MEMBER(msg, f), text, len, json, w, rule);
	if (rc == 0)
		seo_pbjson_mark_set(msg, f);
	return rc;
}

/* A body value for field f: an array for repeated fields (rules on those
 * count items, so elements only borrow the rule's code), else one value. */
static int set_json(dec *d, ProtobufCMessage *msg,
		    const ProtobufCFieldDescriptor *f, const json_t *v,
		    const where *w, const gw_param_rule *rule)
{
	gw_param_rule el = element_rule(rule);
	seo_pbjson_error pe;
	int rc;

	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return set_single(d, msg, f, NULL, 0, v, w, rule);
	rc = seo_pbjson_field(msg, f, v, d->pb_flags, d->arena, &pe);
	return pb_result(d, rc, &pe, NULL, w, &el);
}

/* The body's members; nested messages are the shared conversion's. */
static int decode_object(dec *d, ProtobufCMessage *msg, json_t *obj,
			 unsigned char *seen)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach(obj, key, v) {
		where w = {key, -1};
		f = protobuf_c_message_descriptor_get_field_by_name(desc, key);
		if (f == NULL) {
			if (d->route->in.strict)
				return fail(d->err, d->route->in.strict_code,
					    "unknown field: %s", key);
			continue;
		}
		if (json_is_null(v))
			continue;
		/* Only a path parameter can have set it already. */
		if (seen[f - desc->fields])
			return fail(d->err, rule_code(gw__rule(d->route, key)),
				    "duplicate parameter: %s", key);
		rc = set_json(d, msg, f, v, &w, gw__rule(d->route, f->name));
		if (rc != 0)
			return rc;
		seen[f - desc->fields] = 1;
	}
	return 0;
}

/* Decodes s[0..len) (%XX escapes; '+' as a space when `plus`) into a new
 * NUL-terminated arena string. Returns 0, SEO_EINVAL for a malformed
 * escape, SEO_ENOMEM. */
static int pct_decode(seo_arena *a, const char *s, size_t len, int plus,
		      char **out, size_t *out_len)
{
	static const char hex[] = "0123456789abcdef0123456789ABCDEF";
	size_t i, o = 0;
	char *buf = seo_arena_alloc(a, len + 1);

	if (buf == NULL)
		return SEO_ENOMEM;
	for (i = 0; i < len; i++) {
		const char *hi, *lo;
		if (s[i] == '+' && plus) {
			buf[o++] = ' ';
			continue;
		}
		if (s[i] != '%') {
			buf[o++] = s[i];
			continue;
		}
		if (len - i < 3 || s[i + 1] == '\0' || s[i + 2] == '\0')
			return SEO_EINVAL;
		hi = strchr(hex, s[i + 1]);
		lo = strchr(hex, s[i + 2]);
		if (hi == NULL || lo == NULL)
			return SEO_EINVAL;
		buf[o++] = (char)(((hi - hex) % 16) << 4 | (lo - hex) % 16);
		i += 2;
	}
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	return 0;
}

/* One name=value pair of the query string, value still encoded. */
typedef struct qpair {
	const ProtobufCFieldDescriptor *f;
	const char *val;
	size_t val_len;
} qpair;

/* Finds the field a query parameter sets. Names that are not fields (or
 * are message fields, which a query cannot carry) are unknown: skipped,
 * or an error on strict routes. `fields` is 0 when the route takes no
 * query input, making every name unknown. */
static int query_field(dec *d, const ProtobufCMessageDescriptor *desc,
		       const char *raw, size_t len, int fields,
		       const ProtobufCFieldDescriptor **out)
{
	char *key;
	size_t key_len;
	int rc = pct_decode(d->arena, raw, len, 1, &key, &key_len);

	*out = NULL;
	if (rc == SEO_ENOMEM)
		return oom(d->err);
	if (rc == 0 && seo_utf8_prefix(key, key_len) == key_len) {
		if (fields)
			*out = protobuf_c_message_descriptor_get_field_by_name(
				desc, key);
		if (*out != NULL && (*out)->type == PROTOBUF_C_TYPE_MESSAGE)
			*out = NULL;
		if (*out != NULL || !(d->route->in.strict))
			return 0;
		return fail(d->err, d->route->in.strict_code,
			    "unknown parameter: %s", key);
	}
	if (!(d->route->in.strict))
		return 0;
	return fail(d->err, d->route->in.strict_code, "unknown parameter");
}

static int query_error(dec *d, int rc, const ProtobufCFieldDescriptor *f)
{
	if (rc == SEO_ENOMEM)
		return oom(d->err);
	return fail(d->err, rule_code(gw__rule(d->route, f->name)),
		    "invalid percent-encoding in parameter: %s", f->name);
}

/* Converts one query pair: comma-separated items (each decoded on its own,
 * so %2C stays inside an item) appended to a repeated field, or the whole
 * value for a singular one. Empty items are skipped. */
static int query_value(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		       const qpair *q)
{
	const ProtobufCFieldDescriptor *f = q->f;
	const gw_param_rule *rule = gw__rule(d->route, f->name);
	gw_param_rule el = element_rule(rule);
	where w = {f->name, -1};
	size_t size = seo_pbjson_slot_size(f->type), *n, len, i, start = 0;
	char *text, *arr;
	int rc;

	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		rc = pct_decode(d->arena, q->val, q->val_len, 1, &text, &len);
		if (rc != 0)
			return query_error(d, rc, f);
		rc = set_single(d, msg, f, text, len, NULL, &w, rule);
		if (rc == 0)
			seen[f - msg->descriptor->fields] = 1;
		return rc;
	}
	n = (size_t *)QUANT(msg, f);
	arr = *(char **)MEMBER(msg, f);
	for (i = 0; i <= q->val_len; i++) {
		if (i < q->val_len && q->val[i] != ',')
			continue;
		if (i > start) {
			rc = pct_decode(d->arena, q->val + start, i - start, 1,
					&text, &len);
			if (rc != 0)
				return query_error(d, rc, f);
			rc = set_value(d, f, arr + *n * size, text, len, NULL,
				       &w, &el);
			if (rc != 0)
				return rc;
			++*n;
			seen[f - msg->descriptor->fields] = 1;
		}
		start = i + 1;
	}
	return 0;
}

/*
 * The query string. A first pass finds the fields and counts the items of
 * each repeated one, so that its array is allocated once; a singular field
 * given twice, or also given by the path or body, is an error. An empty
 * value counts as absent.
 */
static int decode_query(dec *d, ProtobufCMessage *msg, unsigned char *seen,
			const char *query, int fields)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	size_t n_pairs = 1, n = 0, i, *items;
	const char *p, *end, *eq;
	qpair *pairs;
	int rc;

	if (query == NULL || *query == '\0' ||
	    (!fields && !(d->route->in.strict)))
		return 0;
	for (p = query; *p != '\0'; p++)
		n_pairs += *p == '&';
	pairs = seo_arena_alloc(d->arena, n_pairs * sizeof(*pairs));
	items = seo_arena_calloc(d->arena, (desc->n_fields + 1) * sizeof(*items));
	if (pairs == NULL || items == NULL)
		return oom(d->err);
	for (p = query;; p = end + 1) {
		end = strchr(p, '&');
		if (end == NULL)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if ((eq != NULL ? eq : end) > p) {
			rc = query_field(d, desc, p, (size_t)((eq ? eq : end) - p),
					 fields, &f);
			if (rc != 0)
				return rc;
			if (f != NULL && eq != NULL && eq + 1 < end) {
				i = (size_t)(f - desc->fields);
				if (seen[i] || (items[i] > 0 &&
						f->label != PROTOBUF_C_LABEL_REPEATED))
					return fail(d->err,
						    rule_code(gw__rule(d->route, f->name)),
						    "duplicate parameter: %s", f->name);
				items[i]++;
				for (const char *c = eq + 1; c < end; c++)
					items[i] += *c == ',';
				pairs[n++] = (qpair){f, eq + 1, (size_t)(end - eq - 1)};
			}
		}
		if (*end == '\0')
			break;
	}
	for (i = 0; i < desc->n_fields; i++) {
		f = &desc->fields[i];
		if (items[i] == 0 || f->label != PROTOBUF_C_LABEL_REPEATED)
			continue;
		*(void **)MEMBER(msg, f) =
			seo_arena_calloc(d->arena, items[i] * seo_pbjson_slot_size(f->type));
		if (*(void **)MEMBER(msg, f) == NULL)
			return oom(d->err);
	}
	for (i = 0; i < n; i++) {
		rc = query_value(d, msg, seen, &pairs[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Path parameters, percent-decoded ('+' stays a '+' in a path). */
static int decode_path(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		       const gw_kv *params, size_t n_params)
{
	const ProtobufCFieldDescriptor *f;
	size_t i, len;
	char *text;
	int rc;

	for (i = 0; i < n_params; i++) {
		where w = {params[i].name, -1};
		f = protobuf_c_message_descriptor_get_field_by_name(
			msg->descriptor, params[i].name);
		/* gw_json_route_check() reports parameters naming no
		 * singular scalar field. */
		if (f == NULL || f->label == PROTOBUF_C_LABEL_REPEATED ||
		    f->type == PROTOBUF_C_TYPE_MESSAGE ||
		    params[i].value == NULL || params[i].value[0] == '\0')
			continue;
		rc = pct_decode(d->arena, params[i].value,
				strlen(params[i].value), 0, &text, &len);
		if (rc != 0)
			return query_error(d, rc, f);
		rc = set_single(d, msg, f, text, len, NULL, &w,
				gw__rule(d->route, f->name));
		if (rc != 0)
			return rc;
		seen[f - msg->descriptor->fields] = 1;
	}
	return 0;
}

static const char *body_code(const gw_route *route)
{
	return route->in.body_code != NULL ? route->in.body_code : "invalid_json";
}

static int decode_body(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		       const char *body, size_t body_len, json_t **root)
{
	json_error_t jerr;
	int nomem;

	/* An empty body is an empty object: the required checks still run. */
	if (body_len == 0)
		return 0;
	*root = seo_json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr,
			       &nomem);
	if (nomem)
		return oom(d->err);
	if (*root == NULL)
		return fail(d->err, body_code(d->route),
			    "body is not valid json (line %d, column %d): %s",
			    jerr.line, jerr.column,
			    seo_utf8_prefix(jerr.text, strlen(jerr.text)) ==
					    strlen(jerr.text)
				    ? jerr.text : "malformed text");
	if (!json_is_object(*root))
		return fail(d->err, body_code(d->route),
			    "body must be a json object");
	return decode_object(d, msg, *root, seen);
}

/* The webhook shape: the body bytes into `payload`, the signature header
 * into `signature`; empty ones are absent. */
static int decode_raw(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		      const char *body, size_t body_len, const char *signature)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	ProtobufCBinaryData *bin;
	where w = {"signature", -1};
	int rc;

	/* gw_json_route_check() reports inputs without these two. */
	f = protobuf_c_message_descriptor_get_field_by_name(desc, "payload");
	if (f != NULL && f->type == PROTOBUF_C_TYPE_BYTES &&
	    f->label != PROTOBUF_C_LABEL_REPEATED && body_len > 0) {
		bin = (ProtobufCBinaryData *)MEMBER(msg, f);
		bin->data = seo_arena_alloc(d->arena, body_len);
		if (bin->data == NULL)
			return oom(d->err);
		memcpy(bin->data, body, body_len);
		bin->len = body_len;
		seo_pbjson_mark_set(msg, f);
		seen[f - desc->fields] = 1;
	}
	f = protobuf_c_message_descriptor_get_field_by_name(desc, "signature");
	if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING &&
	    f->label != PROTOBUF_C_LABEL_REPEATED && signature != NULL &&
	    signature[0] != '\0') {
		rc = set_single(d, msg, f, signature, strlen(signature), NULL,
				&w, gw__rule(d->route, f->name));
		if (rc != 0)
			return rc;
		seen[f - desc->fields] = 1;
	}
	return 0;
}

/* Characters of a valid UTF-8 string: the bytes that start one. */
static long long utf8_chars(const char *s)
{
	long long n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * The GW_P_URL syntax, the spec's invalid_url short of resolving: http or
 * https (any case), "://", an authority with a host and no userinfo, an
 * optional decimal port up to 65535; no fragment, no blanks or control
 * characters anywhere. A non-ASCII host must be a valid IDN (the service
 * looks it up in punycode); the rest of the full parse is the service's.
 */
static int url_syntax_ok(const char *s)
{
	char ascii[SEO_DOMAIN_MAX + 2];
	size_t scheme, auth, host, i;
	long port = 0;

	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || s[i] == '#')
			return 0;
	if (strncasecmp(s, "http://", 7) == 0)
		scheme = 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		scheme = 8;
	else
		return 0;
	s += scheme;
	auth = strcspn(s, "/?");
	if (memchr(s, '@', auth) != NULL)
		return 0;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', auth);
		if (close == NULL || close == s + 1)
			return 0;
		host = (size_t)(close - s) + 1;
	} else {
		host = strcspn(s, ":/?");
	}
	if (host == 0)
		return 0;
	for (i = 0; i < host && (unsigned char)s[i] < 0x80; i++)
		;
	if (i < host && seo_domain_to_ascii(s, host - (s[host - 1] == '.'), ascii,
					    sizeof(ascii)) != 0)
		return 0;
	if (host == auth)
		return 1;
	if (s[host] != ':' || host + 1 == auth)
		return 0;
	for (i = host + 1; i < auth; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		port = port * 10 + (s[i] - '0');
		if (port > 65535)
			return 0;
	}
	return 1;
}

/*
 * A domain argument is checked before anything is charged by the very
 * normaliser the services apply (seo/domain.h): an optional scheme,
 * userinfo, port and path around the host, trailing dots, an IDN; labels
 * of letters, digits, '-' and '_', at least two of them, a letter
 * somewhere and no number at the end (an IPv4 address is no domain).
 */
static int domain_syntax_ok(const char *s)
{
	char host[SEO_DOMAIN_MAX + 1];

	return seo_domain_normalize(s, 0, host, sizeof(host)) == 0;
}

/* GW_P_DOMAIN on a string or on each string of a repeated field. */
static int domain_rule(dec *d, const gw_param_rule *rule,
		       const ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f)
{
	const char *code = rule->error_code ? rule->error_code : "invalid_domain";
	char *const *v = (char *const *)MEMBER(msg, f);
	size_t n = 1;

	if (f->type != PROTOBUF_C_TYPE_STRING)
		return 0; /* gw_json_route_check() reports it */
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		n = *(size_t *)QUANT(msg, f);
		v = *(char *const *const *)MEMBER(msg, f);
	}
	for (size_t i = 0; i < n; i++)
		if (!domain_syntax_ok(v[i]))
			return fail(d->err, code,
				    "%s is not a valid domain name: \"%.100s\"",
				    rule->name, v[i]);
	return 0;
}

/* The top-level rules: required (absent or empty), defaults, and the
 * ranges that count items of repeated fields or characters of strings
 * (scalar ranges were applied as values were stored); URL and domain
 * syntax. */
static int apply_rules(dec *d, ProtobufCMessage *msg, unsigned char *seen)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const gw_route *route = d->route;
	size_t i, idx;

	for (i = 0; i < route->in.n_params; i++) {
		const gw_param_rule *rule = &route->in.params[i];
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(desc,
									rule->name);
		where w = {rule->name, -1};
		long long size = -1;
		int kind = RANGE_ITEMS;

		/* gw_json_route_check() reports rules naming no field. */
		if (f == NULL)
			continue;
		idx = (size_t)(f - desc->fields);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size = (long long)*(size_t *)QUANT(msg, f);
		} else if (f->type == PROTOBUF_C_TYPE_STRING && seen[idx]) {
			size = utf8_chars(*(char **)MEMBER(msg, f));
			kind = RANGE_CHARS;
		} else if (f->type == PROTOBUF_C_TYPE_BYTES && seen[idx]) {
			size = (long long)((ProtobufCBinaryData *)MEMBER(msg, f))->len;
			kind = RANGE_BYTES;
		}
		if (!seen[idx] || ((rule->flags & GW_P_REQUIRED) && size == 0)) {
			if (rule->flags & GW_P_REQUIRED)
				return fail(d->err, rule->error_code,
					    "missing parameter: %s", rule->name);
			if (!seen[idx] && (rule->flags & GW_P_DEFAULT) &&
			    defaultable(f)) {
				store_default(MEMBER(msg, f), f->type, rule->dflt);
				seo_pbjson_mark_set(msg, f);
				seen[idx] = 1;
			}
			continue;
		}
		if ((rule->flags & GW_P_RANGE) && size >= 0 &&
		    (size < rule->min || size > rule->max))
			return range_error(d, &w, rule, kind);
		if ((rule->flags & GW_P_URL) && kind == RANGE_CHARS &&
		    !url_syntax_ok(*(char **)MEMBER(msg, f)))
			return fail(d->err, rule->error_code ? rule->error_code
							      : "invalid_url",
				    "%s is not an absolute http(s) URL without "
				    "credentials or fragment", rule->name);
		if ((rule->flags & GW_P_DOMAIN) &&
		    domain_rule(d, rule, msg, f) != 0)
			return SEO_EINVAL;
	}
	return 0;
}

/* "Always" fields (seo/pb.h) that nothing set: the parameters a client must
 * give. */
static int check_required(dec *d, ProtobufCMessage *msg,
			  const unsigned char *seen)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	unsigned i;

	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		if (!seo_pb_always(f) || seen[i])
			continue;
		return fail(d->err, rule_code(gw__rule(d->route, f->name)),
			    "missing parameter: %s", f->name);
	}
	return 0;
}

int gw_json_decode_request(const gw_route *route, const gw_kv *path_params,
			   size_t n_path_params, const char *query,
			   const char *body, size_t body_len,
			   const char *signature, seo_arena *arena,
			   ProtobufCMessage **out, gw_json_error *err)
{
	dec d = {route, arena, err,
		 route->in.strict ? SEO_PBJSON_STRICT_FIELDS : 0};
	ProtobufCMessage *msg = NULL;
	unsigned char *seen;
	json_t *root = NULL;
	int rc = 0;

	*out = NULL;
	if (route->in.message == NULL)
		goto out;
	msg = seo_arena_alloc(arena, route->in.message->sizeof_message);
	seen = seo_arena_calloc(arena, route->in.message->n_fields + 1);
	if (msg == NULL || seen == NULL) {
		rc = oom(err);
		goto out;
	}
	protobuf_c_message_init(route->in.message, msg);
	rc = decode_path(&d, msg, seen, path_params, n_path_params);
	if (rc == 0 && route->in.kind == GW_IN_JSON)
		rc = decode_body(&d, msg, seen, body, body_len, &root);
	if (rc == 0 && route->in.kind == GW_IN_RAW)
		rc = decode_raw(&d, msg, seen, body, body_len, signature);
	if (rc == 0)
		rc = decode_query(&d, msg, seen, query,
				  route->in.kind == GW_IN_QUERY ||
					  route->in.kind == GW_IN_JSON);
	if (rc == 0)
		rc = apply_rules(&d, msg, seen);
	if (rc == 0)
		rc = check_required(&d, msg, seen);
	if (rc == 0)
		*out = msg;
out:
	json_decref(root);
	return rc;
}

/* ---- encoding ---------------------------------------------------------- */

int gw_json_write_answer(const ProtobufCMessage *msg, const char *hide,
			 const gw_json_member *extra, size_t n_extra,
			 char **text, size_t *len)
{
	seo_jw w = SEO_JW_INIT;
	size_t n = 0, i;

	seo_jw_char(&w, '{');
	if (seo_pbjson_write_members(&w, msg, seo_proto_nullable, hide, &n) != 0) {
		seo_jw_free(&w);
		return SEO_ENOMEM;
	}
	for (i = 0; i < n_extra; i++, n++) {
		if (n > 0)
			seo_jw_char(&w, ',');
		seo_jw_char(&w, '"');
		seo_jw_raw(&w, extra[i].name, strlen(extra[i].name));
		seo_jw_raw(&w, "\":", 2);
		seo_jw_int(&w, extra[i].value);
	}
	seo_jw_char(&w, '}');
	*text = seo_jw_finish(&w, len);
	return *text != NULL ? 0 : SEO_ENOMEM;
}

/* ---- reading fields back ----------------------------------------------- */

int gw_json_field_true(const ProtobufCMessage *msg, const char *field)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(msg->descriptor,
								field);

	return f != NULL && f->type == PROTOBUF_C_TYPE_BOOL &&
	       f->label != PROTOBUF_C_LABEL_REPEATED &&
	       seo_pbjson_present(msg, f) &&
	       *(const protobuf_c_boolean *)((const char *)msg + f->offset);
}

int gw_json_field_count(const ProtobufCMessage *msg, const char *field,
			long long *value)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(msg->descriptor,
								field);
	const char *slot;

	if (f == NULL)
		return SEO_ENOTFOUND;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		*value = (long long)*(const size_t *)((const char *)msg +
						      f->quantifier_offset);
		return 0;
	}
	/* An unset count is not zero: billing must not guess. */
	if (!seo_pbjson_is_int(f->type) || !seo_pbjson_present(msg, f))
		return SEO_ENOTFOUND;
	slot = (const char *)msg + f->offset;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*value = *(const int32_t *)slot;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*value = *(const uint32_t *)slot;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*value = *(const uint64_t *)slot > LLONG_MAX
				 ? LLONG_MAX
				 : (long long)*(const uint64_t *)slot;
		break;
	default:
		*value = *(const int64_t *)slot;
		break;
	}
	return 0;
}

const char *gw_json_usage_value(const gw_route *route,
				const ProtobufCMessage *req, seo_arena *arena)
{
	const ProtobufCFieldDescriptor *f = NULL;
	const char *base = (const char *)req;
	char *const *items;
	size_t i, n, len = 0;
	char *s;

	for (i = 0; f == NULL && i < route->in.n_params; i++)
		if (route->in.params[i].flags & GW_P_USAGE)
			f = protobuf_c_message_descriptor_get_field_by_name(
				req->descriptor, route->in.params[i].name);
	if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING)
		return NULL;
	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		s = *(char *const *)(base + f->offset);
		return s != NULL && s[0] != '\0' ? seo_arena_strdup(arena, s)
						 : NULL;
	}
	/* Several domains (a batch) are recorded as the list the client sent. */
	n = *(const size_t *)(base + f->quantifier_offset);
	items = *(char *const *const *)(base + f->offset);
	for (i = 0; i < n; i++)
		len += strlen(items[i]) + 1;
	if (len == 0 || (s = seo_arena_alloc(arena, len)) == NULL)
		return NULL;
	for (i = 0, len = 0; i < n; i++) {
		size_t l = strlen(items[i]);
		memcpy(s + len, items[i], l);
		len += l;
		s[len++] = ',';
	}
	s[len - 1] = '\0';
	return s;
}
