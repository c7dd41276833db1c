/*
 * pbjson.c: JSON <-> protobuf-c by descriptor (see seo/pbjson.h).
 *
 * Decoding walks the JSON object's members in their order, so that the
 * first fault reported is the first one the client wrote; "always" fields
 * (seo/pb.h) are checked once the members are in. Encoding walks the descriptors, never
 * looking a field up by name: it runs on every response.
 */
#include "seo/pbjson.h"
#include "seo/pb.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbjson_int.h"
#include "swar.h"
#include "seo/errors.h"
#include "seo/json_text.h"

#define MEMBER SEO_PBJSON_MEMBER
#define QUANT SEO_PBJSON_QUANT

/* ---- UTF-8 ------------------------------------------------------------- */

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

/* 1 when the 8 bytes at p are all ASCII but NUL. */
static int ascii8(const unsigned char *p)
{
	uint64_t v = seo_swar_load(p);

	return ((v & SEO_SWAR_HIGHS) | seo_swar_below(v, 1)) == 0;
}

/* Text is mostly ASCII (ids, keys, domains): it is passed eight bytes at
 * a time, the rest sequence by sequence. */
size_t seo_utf8_prefix(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	for (;;) {
		while (len - i >= 8 && ascii8(p + i))
			i += 8;
		if (i == len || (n = utf8_seq(p + i, len - i)) == 0)
			return i;
		i += n;
	}
}

/* ---- field types and presence ------------------------------------------ */

int seo_pbjson_is_int(ProtobufCType t)
{
	return t <= PROTOBUF_C_TYPE_FIXED64;
}

void seo_pbjson_int_bounds(ProtobufCType t, long long *min,
			   unsigned long long *max)
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

size_t seo_pbjson_slot_size(ProtobufCType t)
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

int seo_pbjson_present(const ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)QUANT(msg, f) == f->id;
	if (f->label != PROTOBUF_C_LABEL_OPTIONAL || seo_pb_always(f))
		return 1;
	if (f->type == PROTOBUF_C_TYPE_STRING ||
	    f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const void *p = *(const void *const *)MEMBER(msg, f);
		return p != NULL && p != f->default_value;
	}
	return *(const protobuf_c_boolean *)QUANT(msg, f);
}

void seo_pbjson_mark_set(ProtobufCMessage *msg,
			 const ProtobufCFieldDescriptor *f)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		*(uint32_t *)QUANT(msg, f) = f->id;
	else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		 f->type != PROTOBUF_C_TYPE_STRING &&
		 f->type != PROTOBUF_C_TYPE_MESSAGE)
		*(protobuf_c_boolean *)QUANT(msg, f) = 1;
}

const ProtobufCFieldDescriptor *
seo_pbjson_oneof_other(const ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f)
{
	uint32_t other;

	if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
		return NULL;
	other = *(const uint32_t *)QUANT(msg, f);
	if (other == 0 || other == f->id)
		return NULL;
	return protobuf_c_message_descriptor_get_field(msg->descriptor, other);
}

/* seo.common.RawJson, by name: linking the generated code here would tie
 * every user of seo_common to all of seo_proto. */
int seo_pbjson__is_raw_json(const ProtobufCMessageDescriptor *desc)
{
	return desc->n_fields == 1 &&
	       desc->fields[0].type == PROTOBUF_C_TYPE_STRING &&
	       desc->fields[0].label != PROTOBUF_C_LABEL_REPEATED &&
	       strcmp(desc->name, "seo.common.RawJson") == 0;
}

/* ---- integers ---------------------------------------------------------- */

seo_pbjson_int seo_pbjson_int_of(long long v)
{
	seo_pbjson_int b = {v < 0, 0, 0};

	b.mag = v < 0 ? (unsigned long long)-(v + 1) + 1 : (unsigned long long)v;
	return b;
}

int seo_pbjson_int_json(const json_t *v, unsigned flags, seo_pbjson_int *out)
{
	double r;

	if (json_is_integer(v)) {
		*out = seo_pbjson_int_of(json_integer_value(v));
		return 0;
	}
	if (!json_is_real(v) || (flags & SEO_PBJSON_STRICT_TYPES))
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

int seo_pbjson_int_fits(const seo_pbjson_int *v, ProtobufCType t)
{
	long long min;
	unsigned long long max;

	seo_pbjson_int_bounds(t, &min, &max);
	if (v->overflow)
		return 0;
	if (!v->neg)
		return v->mag <= max;
	/* -min, computed without overflowing at LLONG_MIN */
	return min < 0 && v->mag <= (unsigned long long)-(min + 1) + 1;
}

void seo_pbjson_int_store(void *slot, ProtobufCType t, const seo_pbjson_int *v)
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

/* ---- enums ------------------------------------------------------------- */

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

size_t seo_pbjson_enum_prefix(const ProtobufCEnumDescriptor *e)
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

json_t *seo_pbjson_enum_name(const char *name, size_t prefix)
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

int seo_pbjson_enum_parse(const ProtobufCEnumDescriptor *e, const char *s,
			  size_t len, int *out)
{
	size_t pre = seo_pbjson_enum_prefix(e), i;
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

void seo_pbjson__b64_put(const uint8_t *data, size_t len, char *s)
{
	size_t i, o = 0;

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
}

int seo_pbjson_b64_decode(seo_arena *a, const char *s, size_t len,
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

/* ---- decoding ---------------------------------------------------------- */

typedef struct dec {
	unsigned flags;
	seo_arena *a;
	seo_pbjson_error *err;
} dec;

/* Where a value sits below the value converted: a member name, or an
 * index (name NULL) into the array above. */
typedef struct seg {
	const struct seg *up;
	const char *name;
	long idx;
} seg;

/* Writes the path of `s` at buf[o..n); returns the new end (< n). */
static size_t path_put(char *buf, size_t n, const seg *s)
{
	size_t o = s->up != NULL ? path_put(buf, n, s->up) : 0;
	int w;

	if (s->name != NULL)
		w = snprintf(buf + o, n - o, "%s%s", o > 0 ? "." : "", s->name);
	else
		w = snprintf(buf + o, n - o, "[%ld]", s->idx);
	return w < 0 ? o : o + (size_t)w < n ? o + (size_t)w : n - 1;
}

/* Fills d->err; returns SEO_EINVAL. */
static int fault(const dec *d, seo_pbjson_fault k,
		 const ProtobufCMessageDescriptor *m,
		 const ProtobufCFieldDescriptor *f, const seg *at)
{
	d->err->fault = k;
	d->err->message = m;
	d->err->field = f;
	d->err->other = NULL;
	d->err->path[0] = '\0';
	if (at != NULL)
		path_put(d->err->path, sizeof(d->err->path), at);
	return SEO_EINVAL;
}

static int message(const dec *d, const json_t *obj,
		   const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
		   const seg *at);

/* A RawJson holding v's compact text. */
static int raw_json_decode(const dec *d, const ProtobufCMessageDescriptor *desc,
			   const json_t *v, ProtobufCMessage **out)
{
	ProtobufCMessage *r = seo_arena_alloc(d->a, desc->sizeof_message);
	char *text = seo_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY, NULL);
	int rc = SEO_ENOMEM;

	if (r == NULL || text == NULL)
		goto out;
	protobuf_c_message_init(desc, r);
	*(char **)MEMBER(r, &desc->fields[0]) = seo_arena_strdup(d->a, text);
	if (*(char **)MEMBER(r, &desc->fields[0]) == NULL)
		goto out;
	*out = r;
	rc = 0;
out:
	free(text);
	return rc;
}

/* One value of field f into `slot`. */
static int value(const dec *d, const ProtobufCFieldDescriptor *f,
		 const json_t *v, void *slot, const seg *at)
{
	seo_pbjson_int i;
	const char *s;
	size_t len;
	double r;
	int rc;

	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (!json_is_number(v))
			return fault(d, SEO_PBJSON_TYPE, NULL, f, at);
		r = json_number_value(v);
		if (f->type == PROTOBUF_C_TYPE_DOUBLE) {
			*(double *)slot = r;
			return 0;
		}
		if (!(fabs(r) <= FLT_MAX))
			return fault(d, SEO_PBJSON_RANGE, NULL, f, at);
		*(float *)slot = (float)r;
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		if (!json_is_boolean(v))
			return fault(d, SEO_PBJSON_TYPE, NULL, f, at);
		*(protobuf_c_boolean *)slot = json_is_true(v);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (seo_pbjson__is_raw_json(f->descriptor))
			return raw_json_decode(d, f->descriptor, v, slot);
		if (!json_is_object(v))
			return fault(d, SEO_PBJSON_TYPE, NULL, f, at);
		return message(d, v, f->descriptor, slot, at);
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		break;
	default:
		if (seo_pbjson_int_json(v, d->flags, &i) != 0)
			return fault(d, SEO_PBJSON_TYPE, NULL, f, at);
		if (!seo_pbjson_int_fits(&i, f->type))
			return fault(d, SEO_PBJSON_RANGE, NULL, f, at);
		seo_pbjson_int_store(slot, f->type, &i);
		return 0;
	}
	if (!json_is_string(v))
		return fault(d, SEO_PBJSON_TYPE, NULL, f, at);
	s = json_string_value(v);
	len = json_string_length(v);
	if (f->type == PROTOBUF_C_TYPE_ENUM)
		return seo_pbjson_enum_parse(f->descriptor, s, len, slot) == 0
			       ? 0 : fault(d, SEO_PBJSON_TYPE, NULL, f, at);
	if (f->type == PROTOBUF_C_TYPE_BYTES) {
		rc = seo_pbjson_b64_decode(d->a, s, len, slot);
		return rc == SEO_EINVAL ? fault(d, SEO_PBJSON_TYPE, NULL, f, at)
					: rc;
	}
	/* jansson lets "\u0000" in; a C string cannot carry it. */
	if (seo_utf8_prefix(s, len) != len)
		return fault(d, SEO_PBJSON_UTF8, NULL, f, at);
	*(char **)slot = seo_arena_strndup(d->a, s, len);
	return *(char **)slot != NULL ? 0 : SEO_ENOMEM;
}

/* A JSON array into repeated field f of msg. */
static int repeated(const dec *d, ProtobufCMessage *msg,
		    const ProtobufCFieldDescriptor *f, const json_t *v,
		    const seg *at)
{
	size_t n = json_array_size(v), size = seo_pbjson_slot_size(f->type), i;
	char *arr;
	int rc;

	if (!json_is_array(v))
		return fault(d, SEO_PBJSON_ARRAY, NULL, f, at);
	if (n == 0)
		return 0;
	arr = seo_arena_calloc(d->a, n * size);
	if (arr == NULL)
		return SEO_ENOMEM;
	for (i = 0; i < n; i++) {
		seg el = {at, NULL, (long)i};
		rc = value(d, f, json_array_get(v, i), arr + i * size, &el);
		if (rc != 0)
			return rc;
	}
	*(void **)MEMBER(msg, f) = arr;
	*(size_t *)QUANT(msg, f) = n;
	return 0;
}

/* Member v of the object into field f of msg. */
static int member(const dec *d, ProtobufCMessage *msg,
		  const ProtobufCFieldDescriptor *f, const json_t *v,
		  const seg *at)
{
	const ProtobufCFieldDescriptor *other;
	int rc;

	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return json_is_null(v) && !(d->flags & SEO_PBJSON_STRICT_TYPES)
			       ? 0 : repeated(d, msg, f, v, at);
	if (json_is_null(v))
		return 0;
	other = seo_pbjson_oneof_other(msg, f);
	if (other != NULL) {
		fault(d, SEO_PBJSON_ONEOF, NULL, f, at);
		d->err->other = other;
		return SEO_EINVAL;
	}
	rc = value(d, f, v, MEMBER(msg, f), at);
	if (rc == 0)
		seo_pbjson_mark_set(msg, f);
	return rc;
}

static int message(const dec *d, const json_t *obj,
		   const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
		   const seg *at)
{
	ProtobufCMessage *msg = seo_arena_alloc(d->a, desc->sizeof_message);
	const ProtobufCFieldDescriptor *f;
	const char *key;
	json_t *v;
	unsigned i;
	int rc;

	if (msg == NULL)
		return SEO_ENOMEM;
	protobuf_c_message_init(desc, msg);
	json_object_foreach((json_t *)obj, key, v) {
		seg m = {at, key, -1};
		f = protobuf_c_message_descriptor_get_field_by_name(desc, key);
		if (f == NULL) {
			if (d->flags & SEO_PBJSON_STRICT_FIELDS)
				return fault(d, SEO_PBJSON_UNKNOWN, desc, NULL, &m);
			continue;
		}
		rc = member(d, msg, f, v, &m);
		if (rc != 0)
			return rc;
	}
	for (i = 0; i < desc->n_fields; i++) {
		seg m = {at, desc->fields[i].name, -1};
		if (!seo_pb_always(&desc->fields[i]))
			continue;
		v = json_object_get(obj, desc->fields[i].name);
		if (v == NULL || json_is_null(v))
			return fault(d, SEO_PBJSON_MISSING, desc,
				     &desc->fields[i], &m);
	}
	*out = msg;
	return 0;
}

int seo_pbjson_decode(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		      unsigned flags, seo_arena *a, ProtobufCMessage **out,
		      seo_pbjson_error *err)
{
	dec d = {flags, a, err};

	if (!json_is_object(obj))
		return fault(&d, SEO_PBJSON_TYPE, desc, NULL, NULL);
	return message(&d, obj, desc, out, NULL);
}

int seo_pbjson_value(const ProtobufCFieldDescriptor *f, const json_t *v,
		     unsigned flags, seo_arena *a, void *slot,
		     seo_pbjson_error *err)
{
	dec d = {flags, a, err};

	return value(&d, f, v, slot, NULL);
}

int seo_pbjson_field(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		     const json_t *v, unsigned flags, seo_arena *a,
		     seo_pbjson_error *err)
{
	dec d = {flags, a, err};

	return member(&d, msg, f, v, NULL);
}

/* ---- encoding ---------------------------------------------------------- */

/* Non-finite numbers have no JSON form. */
static json_t *real_json(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Floats are rare in answers (none today): printf is good enough. */
double seo_pbjson__float_double(float v)
{
	char buf[32];
	int prec;

	for (prec = 6; prec < 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
		if (strtof(buf, NULL) == v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
	return strtod(buf, NULL);
}

/* 0.1f becomes 0.1, not 0.10000000149011612. */
static json_t *float_json(float v)
{
	if (!isfinite(v))
		return json_null();
	return json_real(seo_pbjson__float_double(v));
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
	if (seo_utf8_prefix(s, len) == len)
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
	size_t len = seo_pbjson__b64_len(b->len);
	char *s = malloc(len + 1);
	json_t *v;

	if (s == NULL)
		return NULL;
	seo_pbjson__b64_put(b->data, b->len, s);
	v = json_stringn_nocheck(s, len);
	free(s);
	return v;
}

static json_t *enum_json(const ProtobufCEnumDescriptor *e, int value)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(e, value);

	/* A value this build does not know (a newer peer) has no name. */
	if (ev == NULL)
		return json_null();
	return seo_pbjson_enum_name(ev->name, seo_pbjson_enum_prefix(e));
}

static json_t *encode(const ProtobufCMessage *msg, seo_pbjson_nullable_fn nullable);

/* A nested message, null when unset. A RawJson stands for the value its
 * text holds; text that does not load fails the answer (NULL): without
 * seo_json_init() jansson cannot tell text that is not JSON from an
 * allocation that failed, and RawJson is only ever written by
 * raw_json_decode(), from a JSON value. */
static json_t *message_json(const ProtobufCMessage *m,
			    seo_pbjson_nullable_fn nullable)
{
	const char *text;
	int oom;

	if (m == NULL)
		return json_null();
	if (!seo_pbjson__is_raw_json(m->descriptor))
		return encode(m, nullable);
	text = *(char *const *)MEMBER(m, &m->descriptor->fields[0]);
	if (text == NULL)
		return json_null();
	return seo_json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL, &oom);
}

/* One value of field f stored at slot. */
static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *slot,
			  seo_pbjson_nullable_fn nullable)
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
		return message_json(*(ProtobufCMessage *const *)slot, nullable);
	default:
		return json_integer(*(const int64_t *)slot);
	}
}

static json_t *array_json(const ProtobufCFieldDescriptor *f,
			  const ProtobufCMessage *msg,
			  seo_pbjson_nullable_fn nullable)
{
	size_t n = *(const size_t *)QUANT(msg, f);
	const char *arr = *(char *const *)MEMBER(msg, f);
	size_t size = seo_pbjson_slot_size(f->type), i;
	json_t *a = json_array();

	for (i = 0; a != NULL && i < n; i++) {
		if (json_array_append_new(a, value_json(f, arr + i * size,
							nullable)) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

int seo_pbjson__null_kept(const ProtobufCMessageDescriptor *desc,
			  const ProtobufCFieldDescriptor *f,
			  seo_pbjson_nullable_fn nullable)
{
	return !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && nullable != NULL &&
	       nullable(desc, f);
}

static json_t *encode(const ProtobufCMessage *msg, seo_pbjson_nullable_fn nullable)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	json_t *obj = json_object(), *v;
	unsigned i;

	for (i = 0; obj != NULL && i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			v = array_json(f, msg, nullable);
		} else if (seo_pbjson_present(msg, f)) {
			v = value_json(f, MEMBER(msg, f), nullable);
			/* A value without a JSON form (not finite, an enum
			 * value this build does not know) is no value. */
			if (json_is_null(v) && !seo_pb_always(f) &&
			    !seo_pbjson__null_kept(desc, f, nullable))
				continue;
		} else if (seo_pbjson__null_kept(desc, f, nullable)) {
			v = json_null();
		} else {
			continue;
		}
		if (json_object_set_new_nocheck(obj, f->name, v) != 0) {
			json_decref(obj);
			obj = NULL;
		}
	}
	return obj;
}

json_t *seo_pbjson_encode(const ProtobufCMessage *msg,
			  seo_pbjson_nullable_fn nullable)
{
	return encode(msg, nullable);
}
