/*
 * json.c: the descriptor-driven transcoder between the public JSON and
 * query-string interface and protobuf-c messages (see gw_json.h).
 *
 * Decoding fills a message allocated on the request's arena from, in
 * order, the path parameters, the body and the query string; a field may
 * come from one of them only. Scalar range rules act while a value is
 * stored; required, default, count and length rules and the proto2
 * required fields are checked once everything is in.
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
#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"

/* ---- shared helpers ---------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at p (at most `avail` bytes),
 * or 0 when it is malformed, overlong, a surrogate, past U+10FFFF or NUL. */
static size_t utf8_seq(const unsigned char *p, size_t avail)
{
	unsigned c = p[0], cp, min;
	size_t n, i;

	if (c >= 0x01 && c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		n = 2, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, cp = c & 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int gw__utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = utf8_seq(p + i, len - i);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

size_t gw__enum_prefix(const ProtobufCEnumDescriptor *e)
{
	/* protoc refuses an enum without values. */
	size_t len = strlen(e->values[0].name), i, cut = 0;
	unsigned v;

	for (v = 1; v < e->n_values; v++) {
		const char *name = e->values[v].name;
		for (i = 0; i < len && name[i] == e->values[0].name[i]; i++)
			;
		len = i;
	}
	for (i = 0; i < len; i++)
		if (e->values[0].name[i] == '_')
			cut = i + 1;
	return cut;
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

json_t *gw__enum_name(const char *name, size_t prefix)
{
	/* Value names are short; a longer one is copied to the heap. */
	char small[64] = "", *buf = small;
	size_t len = strlen(name + prefix), i;
	json_t *s;

	if (len >= sizeof(small)) {
		buf = malloc(len + 1);
		if (buf == NULL)
			return NULL;
	}
	for (i = 0; i < len; i++)
		buf[i] = ascii_lower(name[prefix + i]);
	s = json_stringn_nocheck(buf, len);
	if (buf != small)
		free(buf);
	return s;
}

const gw_param_rule *gw__rule(const gw_route *route, const char *name)
{
	size_t i;

	for (i = 0; i < route->n_params; i++)
		if (strcmp(route->params[i].name, name) == 0)
			return &route->params[i];
	return NULL;
}

int gw__is_int(ProtobufCType t)
{
	return t <= PROTOBUF_C_TYPE_FIXED64;
}

void gw__int_bounds(ProtobufCType t, long long *min, unsigned long long *max)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*min = INT32_MIN;
		*max = INT32_MAX;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*min = 0;
		*max = UINT32_MAX;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*min = 0;
		*max = ULLONG_MAX;
		break;
	default:
		*min = LLONG_MIN;
		*max = LLONG_MAX;
		break;
	}
}

/* Size of one element of a repeated field of type t. */
static size_t slot_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return sizeof(int32_t);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return sizeof(int64_t);
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return sizeof(ProtobufCMessage *);
	}
}

#define MEMBER(msg, f) ((char *)(msg) + (f)->offset)
#define QUANT(msg, f) ((char *)(msg) + (f)->quantifier_offset)

/* Whether an optional (non-repeated) field is set, the way protobuf-c
 * decides whether to pack it. */
static int present(const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
	const char *base = (const char *)msg;

	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
	if (f->label != PROTOBUF_C_LABEL_OPTIONAL)
		return 1;
	if (f->type == PROTOBUF_C_TYPE_STRING ||
	    f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const void *p = *(const void *const *)(base + f->offset);
		return p != NULL && p != f->default_value;
	}
	return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
}

/* Records that a non-repeated field was set: its has_ flag or oneof case. */
static void mark_set(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		*(uint32_t *)QUANT(msg, f) = f->id;
	else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		 f->type != PROTOBUF_C_TYPE_STRING &&
		 f->type != PROTOBUF_C_TYPE_MESSAGE)
		*(protobuf_c_boolean *)QUANT(msg, f) = 1;
}

/* ---- base64 (RFC 4648, standard alphabet, padded) ---------------------- */

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Returns a malloc()ed encoding of data (caller frees), NULL when out of
 * memory; *out_len is its length. */
static char *b64_encode(const uint8_t *data, size_t len, size_t *out_len)
{
	size_t n = (len + 2) / 3 * 4, i, o = 0;
	char *s = malloc(n + 1);

	if (s == NULL)
		return NULL;
	for (i = 0; i < len; i += 3) {
		unsigned v = (unsigned)data[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		s[o++] = b64_alphabet[v >> 18 & 63];
		s[o++] = b64_alphabet[v >> 12 & 63];
		s[o++] = i + 1 < len ? b64_alphabet[v >> 6 & 63] : '=';
		s[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
	}
	s[o] = '\0';
	*out_len = o;
	return s;
}

/* Decodes s[0..len) onto the arena. Returns 0, SEO_EINVAL when it is not
 * padded base64, SEO_ENOMEM. */
static int b64_decode(seo_arena *a, const char *s, size_t len,
		      ProtobufCBinaryData *out)
{
	size_t pad = 0, i, o = 0;
	uint8_t *data;

	if (len % 4 != 0)
		return SEO_EINVAL;
	while (pad < 2 && pad < len && s[len - 1 - pad] == '=')
		pad++;
	data = seo_arena_alloc(a, len / 4 * 3 + 1);
	if (data == NULL)
		return SEO_ENOMEM;
	for (i = 0; i < len; i += 4) {
		unsigned v = 0;
		int k;
		for (k = 0; k < 4; k++) {
			int d = i + k < len - pad ? b64_value(s[i + k]) : 0;
			if (d < 0)
				return SEO_EINVAL;
			v = v << 6 | (unsigned)d;
		}
		data[o++] = (uint8_t)(v >> 16);
		data[o++] = (uint8_t)(v >> 8);
		data[o++] = (uint8_t)v;
	}
	out->data = data;
	out->len = o - pad;
	return 0;
}

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
	size_t len, i = 0, n;

	err->code = code != NULL ? code : "invalid_parameter";
	def = seo_error_lookup(err->code);
	err->http_status = def != NULL ? def->http_status : 400;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	len = strlen(err->message);
	while (i < len) {
		n = utf8_seq((const unsigned char *)err->message + i, len - i);
		if (n == 0)
			break;
		i += n;
	}
	err->message[i] = '\0';
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
} dec;

/* Where a value sits, for messages: prefix + name, [idx] when >= 0. */
typedef struct where {
	const char *prefix;  /* "" at the top, "rate." or "keys[2]." below */
	const char *name;
	long idx;
} where;

static const char *where_str(const where *w, char *buf, size_t n)
{
	if (w->idx < 0 && w->prefix[0] == '\0')
		return w->name;
	if (w->idx < 0)
		snprintf(buf, n, "%s%s", w->prefix, w->name);
	else
		snprintf(buf, n, "%s%s[%ld]", w->prefix, w->name, w->idx);
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

static ProtobufCMessage *new_message(seo_arena *a,
				     const ProtobufCMessageDescriptor *desc)
{
	ProtobufCMessage *m = seo_arena_alloc(a, desc->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(desc, m);
	return m;
}

/* An integer as the client wrote it, before it meets a field type: sign
 * and magnitude, so that every int64 and uint64 fits, or the direction it
 * overflowed even those in. */
typedef struct bigint {
	int neg;
	int overflow;
	unsigned long long mag;
} bigint;

static bigint bigint_of(long long v)
{
	bigint b = {v < 0, 0, 0};

	b.mag = v < 0 ? (unsigned long long)-(v + 1) + 1 : (unsigned long long)v;
	return b;
}

/* -1, 0 or 1 as a is below, at or above b. */
static int bigint_cmp(const bigint *a, long long b)
{
	bigint c = bigint_of(b);

	if (a->overflow)
		return a->neg ? -1 : 1;
	if (a->neg != c.neg)
		return a->neg ? -1 : 1;
	if (a->mag == c.mag)
		return 0;
	return (a->mag > c.mag) != a->neg ? 1 : -1;
}

static int bigint_fits(const bigint *v, ProtobufCType t)
{
	long long min;
	unsigned long long max;

	gw__int_bounds(t, &min, &max);
	if (v->overflow)
		return 0;
	return v->neg ? bigint_cmp(v, min) >= 0 : v->mag <= max;
}

/* An optional '-' and decimal digits, nothing else. */
static int parse_int_text(const char *s, size_t len, bigint *out)
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

/* A JSON integer, or a JSON real without a fractional part (100.0, 1e3). */
static int parse_int_json(const json_t *v, bigint *out)
{
	double r;

	if (json_is_integer(v)) {
		*out = bigint_of(json_integer_value(v));
		return 0;
	}
	if (!json_is_real(v))
		return SEO_EINVAL;
	r = json_real_value(v);
	if (r != trunc(r))
		return SEO_EINVAL;
	out->neg = r < 0;
	r = fabs(r);
	out->overflow = r >= 18446744073709551616.0;
	out->mag = out->overflow ? 0 : (unsigned long long)r;
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

static void int_store(void *slot, ProtobufCType t, const bigint *v)
{
	long long s = v->neg ? -(long long)(v->mag - 1) - 1 : (long long)v->mag;

	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)slot = (int32_t)s;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)slot = (uint32_t)v->mag;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)slot = v->mag;
		break;
	default:
		*(int64_t *)slot = s;
		break;
	}
}

/* Stores a rule's integer default into a numeric, bool or enum slot. */
static void store_default(void *slot, ProtobufCType t, long long v)
{
	bigint b;

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
		b = bigint_of(v);
		int_store(slot, t, &b);
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
		   bigint v, const where *w, const gw_param_rule *rule)
{
	char buf[128];

	if (rule != NULL && (rule->flags & GW_P_RANGE)) {
		int below = bigint_cmp(&v, rule->min) < 0;
		int above = bigint_cmp(&v, rule->max) > 0;
		if (below || above) {
			if (rule->flags & GW_P_CLAMP)
				v = bigint_of(below ? rule->min : rule->max);
			else if (rule->flags & GW_P_FALLBACK)
				v = bigint_of(rule->dflt);
			/* Past an open end the bound is the type's. */
			else if (!(above && rule->max == LLONG_MAX) &&
				 !(below && rule->min == LLONG_MIN))
				return range_error(d, w, rule, RANGE_VALUE);
		}
	}
	if (!bigint_fits(&v, f->type)) {
		if (!fallback(rule, f))
			return fail(d->err, rule_code(rule), "%s is out of range",
				    where_str(w, buf, sizeof(buf)));
		v = bigint_of(rule->dflt);
	}
	int_store(slot, f->type, &v);
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

/* Matches a lowercase value name without the enum's prefix. */
static int enum_parse(const ProtobufCEnumDescriptor *e, const char *s,
		      size_t len, int *out)
{
	size_t pre = gw__enum_prefix(e), i;
	unsigned v;

	for (v = 0; v < e->n_values; v++) {
		const char *name = e->values[v].name + pre;
		for (i = 0; i < len && name[i] != '\0' &&
			    ascii_lower(name[i]) == s[i]; i++)
			;
		if (i == len && name[i] == '\0') {
			*out = e->values[v].value;
			return 0;
		}
	}
	return SEO_EINVAL;
}

/* "a, b, c": the accepted names of e, cut to fit buf. */
static const char *enum_list(const ProtobufCEnumDescriptor *e, char *buf,
			     size_t n)
{
	size_t pre = gw__enum_prefix(e), o = 0, i;
	unsigned v;

	buf[0] = '\0';
	for (v = 0; v < e->n_values; v++) {
		const char *name = e->values[v].name + pre;
		if (v > 0 && o + 2 < n) {
			buf[o++] = ',';
			buf[o++] = ' ';
		}
		for (i = 0; name[i] != '\0' && o + 1 < n; i++)
			buf[o++] = ascii_lower(name[i]);
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

static int decode_object(dec *d, ProtobufCMessage *msg, json_t *obj,
			 const char *prefix, unsigned char *seen, int top);
static int check_required(dec *d, ProtobufCMessage *msg,
			  const unsigned char *seen, const char *prefix, int top);

/* A nested message from a JSON object. */
static int decode_sub(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		      json_t *obj, const where *w)
{
	const ProtobufCMessageDescriptor *desc = f->descriptor;
	ProtobufCMessage *sub = new_message(d->arena, desc);
	unsigned char *seen = seo_arena_calloc(d->arena, desc->n_fields + 1);
	const char *prefix;
	int rc;

	if (w->idx < 0)
		prefix = seo_arena_printf(d->arena, "%s%s.", w->prefix, w->name);
	else
		prefix = seo_arena_printf(d->arena, "%s%s[%ld].", w->prefix,
					  w->name, w->idx);
	if (sub == NULL || seen == NULL || prefix == NULL)
		return oom(d->err);
	rc = decode_object(d, sub, obj, prefix, seen, 0);
	if (rc == 0)
		rc = check_required(d, sub, seen, prefix, 0);
	if (rc == 0)
		*(ProtobufCMessage **)slot = sub;
	return rc;
}

/*
 * Converts one value into `slot`, a field of f's type: from `json` when it
 * is not NULL (body), else from text[0..len) (path, query; NUL-terminated).
 * JSON strings for string, bytes and enum fields take the text path.
 */
static int set_value(dec *d, const ProtobufCFieldDescriptor *f, void *slot,
		     const char *text, size_t len, json_t *json, const where *w,
		     const gw_param_rule *rule)
{
	char buf[128];
	bigint bi;
	double r;
	int rc;

	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (json != NULL ? !json_is_number(json)
				 : parse_real_text(text, len, &r) != 0)
			return type_error(d, f, slot, w, rule);
		if (json != NULL)
			r = json_number_value(json);
		return real_set(d, f, slot, r, w, rule);
	case PROTOBUF_C_TYPE_BOOL:
		if (json != NULL && json_is_boolean(json))
			*(protobuf_c_boolean *)slot = json_is_true(json);
		else if (json == NULL && (strcmp(text, "true") == 0 ||
					  strcmp(text, "1") == 0))
			*(protobuf_c_boolean *)slot = 1;
		else if (json == NULL && (strcmp(text, "false") == 0 ||
					  strcmp(text, "0") == 0))
			*(protobuf_c_boolean *)slot = 0;
		else
			return type_error(d, f, slot, w, rule);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (json == NULL || !json_is_object(json))
			return type_error(d, f, slot, w, rule);
		return decode_sub(d, f, slot, json, w);
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		break;
	default:
		if ((json != NULL ? parse_int_json(json, &bi)
				  : parse_int_text(text, len, &bi)) != 0)
			return type_error(d, f, slot, w, rule);
		return int_set(d, f, slot, bi, w, rule);
	}
	if (json != NULL) {
		if (!json_is_string(json))
			return type_error(d, f, slot, w, rule);
		text = json_string_value(json);
		len = json_string_length(json);
	}
	if (f->type == PROTOBUF_C_TYPE_ENUM) {
		if (enum_parse(f->descriptor, text, len, slot) != 0)
			return type_error(d, f, slot, w, rule);
		return 0;
	}
	if (f->type == PROTOBUF_C_TYPE_BYTES) {
		rc = b64_decode(d->arena, text, len, slot);
		if (rc == SEO_ENOMEM)
			return oom(d->err);
		return rc == 0 ? 0 : type_error(d, f, slot, w, rule);
	}
	if (!gw__utf8_valid(text, len))
		return fail(d->err, rule_code(rule), "%s must be valid utf-8",
			    where_str(w, buf, sizeof(buf)));
	*(char **)slot = seo_arena_strndup(d->arena, text, len);
	return *(char **)slot != NULL ? 0 : oom(d->err);
}

/* Sets a non-repeated field, refusing a second member of a oneof. */
static int set_single(dec *d, ProtobufCMessage *msg,
		      const ProtobufCFieldDescriptor *f, const char *text,
		      size_t len, json_t *json, const where *w,
		      const gw_param_rule *rule)
{
	char buf[128];
	int rc;

	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		uint32_t other = *(const uint32_t *)QUANT(msg, f);
		if (other != 0 && other != f->id)
			return fail(d->err, rule_code(rule),
				    "%s cannot be given together with %s",
				    where_str(w, buf, sizeof(buf)),
				    protobuf_c_message_descriptor_get_field(
					    msg->descriptor, other)->name);
	}
	rc = set_value(d, f, MEMBER(msg, f), text, len, json, w, rule);
	if (rc == 0)
		mark_set(msg, f);
	return rc;
}

/* A body value for field f: an array for repeated fields (rules on those
 * count items, so elements get none), else one value. */
static int set_json(dec *d, ProtobufCMessage *msg,
		    const ProtobufCFieldDescriptor *f, json_t *v, where *w,
		    const gw_param_rule *rule)
{
	char buf[128];
	size_t n, i, size = slot_size(f->type);
	gw_param_rule el = element_rule(rule);
	char *arr;
	int rc;

	if (f->label != PROTOBUF_C_LABEL_REPEATED)
		return set_single(d, msg, f, NULL, 0, v, w, rule);
	if (!json_is_array(v))
		return fail(d->err, rule_code(rule), "%s must be an array",
			    where_str(w, buf, sizeof(buf)));
	n = json_array_size(v);
	arr = seo_arena_calloc(d->arena, n * size);
	if (arr == NULL)
		return oom(d->err);
	for (i = 0; i < n; i++) {
		w->idx = (long)i;
		rc = set_value(d, f, arr + i * size, NULL, 0,
			       json_array_get(v, i), w, &el);
		if (rc != 0)
			return rc;
	}
	*(size_t *)QUANT(msg, f) = n;
	*(void **)MEMBER(msg, f) = arr;
	return 0;
}

static int decode_object(dec *d, ProtobufCMessage *msg, json_t *obj,
			 const char *prefix, unsigned char *seen, int top)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach(obj, key, v) {
		where w = {prefix, key, -1};
		f = protobuf_c_message_descriptor_get_field_by_name(desc, key);
		if (f == NULL) {
			if (d->route->flags & GW_R_STRICT)
				return fail(d->err, d->route->strict_code,
					    "unknown field: %s%s", prefix, key);
			continue;
		}
		if (json_is_null(v))
			continue;
		/* Only a path parameter can have set it already. */
		if (seen[f - desc->fields])
			return fail(d->err, top ? rule_code(gw__rule(d->route, key))
						: NULL,
				    "duplicate parameter: %s", key);
		rc = set_json(d, msg, f, v, &w,
			      top ? gw__rule(d->route, f->name) : NULL);
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
	if (rc == 0 && gw__utf8_valid(key, key_len)) {
		if (fields)
			*out = protobuf_c_message_descriptor_get_field_by_name(
				desc, key);
		if (*out != NULL && (*out)->type == PROTOBUF_C_TYPE_MESSAGE)
			*out = NULL;
		if (*out != NULL || !(d->route->flags & GW_R_STRICT))
			return 0;
		return fail(d->err, d->route->strict_code,
			    "unknown parameter: %s", key);
	}
	if (!(d->route->flags & GW_R_STRICT))
		return 0;
	return fail(d->err, d->route->strict_code, "unknown parameter");
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
	where w = {"", f->name, -1};
	size_t size = slot_size(f->type), *n, len, i, start = 0;
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
	    (!fields && !(d->route->flags & GW_R_STRICT)))
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
			seo_arena_calloc(d->arena, items[i] * slot_size(f->type));
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
		where w = {"", params[i].name, -1};
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

static int decode_body(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		       const char *body, size_t body_len, json_t **root)
{
	json_error_t jerr;

	/* An empty body is an empty object: the required checks still run. */
	if (body_len == 0)
		return 0;
	*root = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (*root == NULL)
		return fail(d->err, "invalid_json",
			    "body is not valid json (line %d, column %d): %s",
			    jerr.line, jerr.column,
			    gw__utf8_valid(jerr.text, strlen(jerr.text))
				    ? jerr.text : "malformed text");
	if (!json_is_object(*root))
		return fail(d->err, "invalid_json", "body must be a json object");
	return decode_object(d, msg, *root, "", seen, 1);
}

/* The webhook shape: the body bytes into `payload`, the signature header
 * into `signature`; empty ones are absent. */
static int decode_raw(dec *d, ProtobufCMessage *msg, unsigned char *seen,
		      const char *body, size_t body_len, const char *signature)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	ProtobufCBinaryData *bin;
	where w = {"", "signature", -1};
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
		mark_set(msg, f);
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
 * characters anywhere. Non-ASCII is left to the service's full parse.
 */
static int url_syntax_ok(const char *s)
{
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
 * A cheap syntax check of a domain argument, so that a malformed one is
 * refused before anything is charged. It accepts what the services'
 * normaliser (graph_normalize_domain) reads: an optional scheme, userinfo,
 * port and path around the host, trailing dots; labels of letters, digits,
 * '-' and '_' (non-ASCII bytes are an IDN, converted by the service), at
 * least two labels and a letter somewhere (an IPv4 address is no domain).
 */
static int domain_syntax_ok(const char *s)
{
	const char *h, *e, *at;
	size_t label = 0, len;
	int letter = 0, dots = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	h = strstr(s, "://");
	h = h != NULL ? h + 3 : s;
	e = h + strcspn(h, "/?#");
	for (at = h; at < e; at++)
		if (*at == '@')
			h = at + 1;
	len = strcspn(h, ":");
	if (h + len < e)
		e = h + len;
	while (e > h && (e[-1] == '.' || e[-1] == ' '))
		e--;
	if (e == h || e - h > 253)
		return 0;
	for (; h < e; h++) {
		unsigned char c = (unsigned char)*h;
		int alpha = c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			dots++;
			continue;
		}
		if (!(alpha || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
		letter |= alpha;
		/* a non-ASCII label's length is known after punycode only */
		if (++label > 63 && c < 0x80)
			return 0;
	}
	return label > 0 && dots > 0 && letter;
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

	for (i = 0; i < route->n_params; i++) {
		const gw_param_rule *rule = &route->params[i];
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(desc,
									rule->name);
		where w = {"", rule->name, -1};
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
				mark_set(msg, f);
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

/* Proto2 required fields that nothing set. On success every required field
 * was set, so no required string is left NULL. */
static int check_required(dec *d, ProtobufCMessage *msg,
			  const unsigned char *seen, const char *prefix, int top)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	unsigned i;

	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		if (f->label != PROTOBUF_C_LABEL_REQUIRED || seen[i])
			continue;
		return fail(d->err,
			    top ? rule_code(gw__rule(d->route, f->name)) : NULL,
			    "missing parameter: %s%s", prefix, f->name);
	}
	return 0;
}

int gw_json_decode_request(const gw_route *route, const gw_kv *path_params,
			   size_t n_path_params, const char *query,
			   const char *body, size_t body_len,
			   const char *signature, seo_arena *arena,
			   ProtobufCMessage **out, gw_json_error *err)
{
	dec d = {route, arena, err};
	ProtobufCMessage *msg = NULL;
	unsigned char *seen;
	json_t *root = NULL;
	int rc = 0;

	*out = NULL;
	if (route->input == NULL)
		goto out;
	msg = new_message(arena, route->input);
	seen = seo_arena_calloc(arena, route->input->n_fields + 1);
	if (msg == NULL || seen == NULL) {
		rc = oom(err);
		goto out;
	}
	rc = decode_path(&d, msg, seen, path_params, n_path_params);
	if (rc == 0 && route->in == GW_IN_JSON)
		rc = decode_body(&d, msg, seen, body, body_len, &root);
	if (rc == 0 && route->in == GW_IN_RAW)
		rc = decode_raw(&d, msg, seen, body, body_len, signature);
	if (rc == 0)
		rc = decode_query(&d, msg, seen, query,
				  route->in == GW_IN_QUERY ||
					  route->in == GW_IN_JSON);
	if (rc == 0)
		rc = apply_rules(&d, msg, seen);
	if (rc == 0)
		rc = check_required(&d, msg, seen, "", 1);
	if (rc == 0)
		*out = msg;
out:
	json_decref(root);
	return rc;
}

/* ---- encoding ---------------------------------------------------------- */

/* Non-finite numbers have no JSON form. */
static json_t *real_json(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* The shortest decimal that reads back as the same float, as a double:
 * 0.1f becomes 0.1, not 0.10000000149011612. */
static json_t *float_json(float v)
{
	char buf[32];
	int prec;

	if (!isfinite(v))
		return json_null();
	for (prec = 6; prec < 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
		if (strtof(buf, NULL) == v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
	return json_real(strtod(buf, NULL));
}

/* Services should send UTF-8; bytes that are not become U+FFFD rather than
 * failing the whole response. */
static json_t *string_json(const char *s)
{
	size_t len, i, o = 0, n;
	char *buf;
	json_t *v;

	if (s == NULL)
		return json_string_nocheck("");
	len = strlen(s);
	if (gw__utf8_valid(s, len))
		return json_stringn_nocheck(s, len);
	buf = malloc(len * 3 + 1);
	if (buf == NULL)
		return NULL;
	for (i = 0; i < len; i += n) {
		n = utf8_seq((const unsigned char *)s + i, len - i);
		if (n > 0) {
			memcpy(buf + o, s + i, n);
			o += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	v = json_stringn_nocheck(buf, o);
	free(buf);
	return v;
}

static json_t *bytes_json(const ProtobufCBinaryData *b)
{
	size_t len;
	char *s = b64_encode(b->data, b->len, &len);
	json_t *v;

	if (s == NULL)
		return NULL;
	v = json_stringn_nocheck(s, len);
	free(s);
	return v;
}

static json_t *enum_json(const ProtobufCEnumDescriptor *e, int value)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(e, value);

	/* A value this build does not know (a newer service) has no name. */
	if (ev == NULL)
		return json_null();
	return gw__enum_name(ev->name, gw__enum_prefix(e));
}

static json_t *encode(const ProtobufCMessage *msg);

/* A seo.common.RawJson stands for the value its text holds. Text that is
 * not JSON (a service's bug) becomes null rather than failing the
 * answer. */
static json_t *raw_json(const Seo__Common__RawJson *r)
{
	json_t *v = r->json ? json_loads(r->json, JSON_DECODE_ANY, NULL) : NULL;

	return v != NULL ? v : json_null();
}

/* A nested message, null when unset. */
static json_t *message_json(const ProtobufCMessage *m)
{
	if (m == NULL)
		return json_null();
	if (m->descriptor == &seo__common__raw_json__descriptor)
		return raw_json((const Seo__Common__RawJson *)m);
	return encode(m);
}

/* One value of field f stored at slot. */
static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *slot)
{
	uint64_t u;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return json_integer(*(const int32_t *)slot);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return json_integer(*(const uint32_t *)slot);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		/* jansson integers are long long: past that, a double. */
		u = *(const uint64_t *)slot;
		return u <= LLONG_MAX ? json_integer((json_int_t)u)
				      : json_real((double)u);
	case PROTOBUF_C_TYPE_FLOAT:
		return float_json(*(const float *)slot);
	case PROTOBUF_C_TYPE_DOUBLE:
		return real_json(*(const double *)slot);
	case PROTOBUF_C_TYPE_BOOL:
		return json_boolean(*(const protobuf_c_boolean *)slot);
	case PROTOBUF_C_TYPE_ENUM:
		return enum_json(f->descriptor, *(const int *)slot);
	case PROTOBUF_C_TYPE_STRING:
		return string_json(*(char *const *)slot);
	case PROTOBUF_C_TYPE_BYTES:
		return bytes_json(slot);
	case PROTOBUF_C_TYPE_MESSAGE:
		return message_json(*(ProtobufCMessage *const *)slot);
	default:
		return json_integer(*(const int64_t *)slot);
	}
}

static json_t *array_json(const ProtobufCFieldDescriptor *f, const char *msg)
{
	size_t n = *(const size_t *)(msg + f->quantifier_offset);
	const char *arr = *(char *const *)(msg + f->offset);
	size_t size = slot_size(f->type), i;
	json_t *a = json_array();

	for (i = 0; a != NULL && i < n; i++) {
		if (json_array_append_new(a, value_json(f, arr + i * size)) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *encode(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	const char *base = (const char *)msg;
	json_t *obj = json_object(), *v;
	unsigned i;

	for (i = 0; obj != NULL && i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			v = array_json(f, base);
		else if (present(msg, f))
			v = value_json(f, base + f->offset);
		else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			continue; /* only the member that is set appears */
		else
			v = json_null();
		if (json_object_set_new_nocheck(obj, f->name, v) != 0) {
			json_decref(obj);
			obj = NULL;
		}
	}
	return obj;
}

json_t *gw_json_encode_message(const ProtobufCMessage *msg)
{
	return encode(msg);
}

/* ---- reading fields back ----------------------------------------------- */

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
	if (!gw__is_int(f->type) || !present(msg, f))
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

	for (i = 0; f == NULL && i < route->n_params; i++)
		if (route->params[i].flags & GW_P_USAGE)
			f = protobuf_c_message_descriptor_get_field_by_name(
				req->descriptor, route->params[i].name);
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
