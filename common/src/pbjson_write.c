/*
 * pbjson_write.c: a protobuf-c message written straight as JSON text (see
 * seo/pbjson.h): the rules of seo_pbjson_encode(), the bytes jansson would
 * dump of its tree, without the tree.
 *
 * A value without a JSON form is found out only while it is written: its
 * member is then taken back (the writer's length reset to before its key)
 * or written as null, as the tree encoder would have it.
 */
#include "seo/pbjson.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbjson_int.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/pb.h"

#define MEMBER SEO_PBJSON_MEMBER
#define QUANT SEO_PBJSON_QUANT

/* value_w(): nothing written, the value has no JSON form. */
enum { NO_FORM = 1 };

static int members(seo_jw *w, const ProtobufCMessage *msg,
		   seo_pbjson_nullable_fn nullable, const char *skip,
		   size_t *n);

/* A RawJson's text as jansson dumps the value it holds: rare enough to
 * keep jansson's parser, which also normalises the text; 0, NO_FORM for
 * null, or a negative code. */
static int raw_json_w(seo_jw *w, const char *text)
{
	json_t *v;
	char *s;
	size_t len;
	int oom;

	v = seo_json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL, &oom);
	if (v == NULL)
		return oom ? SEO_ENOMEM : SEO_EINVAL;
	/* null is no value, as a nested message's absence */
	if (json_is_null(v)) {
		json_decref(v);
		return NO_FORM;
	}
	s = seo_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY, &len);
	json_decref(v);
	if (s == NULL)
		return SEO_ENOMEM;
	seo_jw_raw(w, s, len);
	free(s);
	return 0;
}

static int message_w(seo_jw *w, const ProtobufCMessage *m,
		     seo_pbjson_nullable_fn nullable)
{
	const char *text;
	int rc;

	if (m == NULL)
		return NO_FORM;
	if (seo_pbjson__is_raw_json(m->descriptor)) {
		text = *(char *const *)MEMBER(m, &m->descriptor->fields[0]);
		return text != NULL ? raw_json_w(w, text) : NO_FORM;
	}
	seo_jw_char(w, '{');
	rc = members(w, m, nullable, NULL, NULL);
	seo_jw_char(w, '}');
	return rc;
}

/* The public name of an enum value, lowercase without the shared prefix. */
static int enum_w(seo_jw *w, const ProtobufCEnumDescriptor *e, int value)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(e, value);
	const char *s;
	size_t len, i;

	if (ev == NULL)
		return NO_FORM;
	s = ev->name + seo_pbjson_enum_prefix(e);
	len = strlen(s);
	if (seo_jw_reserve(w, len + 2) != 0)
		return SEO_ENOMEM;
	w->buf[w->len++] = '"';
	for (i = 0; i < len; i++)
		w->buf[w->len++] = s[i] >= 'A' && s[i] <= 'Z'
					   ? (char)(s[i] - 'A' + 'a') : s[i];
	w->buf[w->len++] = '"';
	return 0;
}

static int bytes_w(seo_jw *w, const ProtobufCBinaryData *b)
{
	size_t n = seo_pbjson__b64_len(b->len);

	if (seo_jw_reserve(w, n + 2) != 0)
		return SEO_ENOMEM;
	w->buf[w->len++] = '"';
	seo_pbjson__b64_put(b->data, b->len, w->buf + w->len);
	w->len += n;
	w->buf[w->len++] = '"';
	return 0;
}

/* One value of field f stored at slot: 0, NO_FORM, or a negative code. */
static int value_w(seo_jw *w, const ProtobufCFieldDescriptor *f,
		   const void *slot, seo_pbjson_nullable_fn nullable)
{
	const char *s;
	uint64_t u;
	double d;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		seo_jw_int(w, *(const int32_t *)slot);
		return 0;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		seo_jw_uint(w, *(const uint32_t *)slot);
		return 0;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		/* past jansson's long long, the tree held a real */
		u = *(const uint64_t *)slot;
		if (u <= LLONG_MAX)
			seo_jw_uint(w, u);
		else
			seo_jw_real(w, (double)u);
		return 0;
	case PROTOBUF_C_TYPE_FLOAT:
		if (!isfinite(*(const float *)slot))
			return NO_FORM;
		seo_jw_real(w, seo_pbjson__float_double(*(const float *)slot));
		return 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		d = *(const double *)slot;
		if (!isfinite(d))
			return NO_FORM;
		seo_jw_real(w, d);
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		if (*(const protobuf_c_boolean *)slot)
			seo_jw_raw(w, "true", 4);
		else
			seo_jw_raw(w, "false", 5);
		return 0;
	case PROTOBUF_C_TYPE_ENUM:
		return enum_w(w, f->descriptor, *(const int *)slot);
	case PROTOBUF_C_TYPE_STRING:
		s = *(char *const *)slot;
		seo_jw_string_lossy(w, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
		return 0;
	case PROTOBUF_C_TYPE_BYTES:
		return bytes_w(w, slot);
	case PROTOBUF_C_TYPE_MESSAGE:
		return message_w(w, *(ProtobufCMessage *const *)slot, nullable);
	default:
		seo_jw_int(w, *(const int64_t *)slot);
		return 0;
	}
}

static int array_w(seo_jw *w, const ProtobufCFieldDescriptor *f,
		   const ProtobufCMessage *msg, seo_pbjson_nullable_fn nullable)
{
	size_t n = *(const size_t *)QUANT(msg, f);
	const char *arr = *(char *const *)MEMBER(msg, f);
	size_t size = seo_pbjson_slot_size(f->type), i;
	int rc;

	seo_jw_char(w, '[');
	for (i = 0; i < n; i++) {
		if (i > 0)
			seo_jw_char(w, ',');
		rc = value_w(w, f, arr + i * size, nullable);
		if (rc == NO_FORM)
			seo_jw_raw(w, "null", 4);
		else if (rc < 0)
			return rc;
	}
	seo_jw_char(w, ']');
	return 0;
}

static int members(seo_jw *w, const ProtobufCMessage *msg,
		   seo_pbjson_nullable_fn nullable, const char *skip,
		   size_t *n)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	size_t count = 0, mark, len;
	unsigned i;
	int rc;

	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];
		int present = f->label == PROTOBUF_C_LABEL_REPEATED ||
			      seo_pbjson_present(msg, f);

		/* asked only when needed: a search by name */
		if ((!present && !seo_pbjson__null_kept(desc, f, nullable)) ||
		    (skip != NULL && strcmp(f->name, skip) == 0))
			continue;
		mark = w->len;
		len = strlen(f->name);
		/* field names are identifiers: nothing to escape */
		if (seo_jw_reserve(w, len + 4) != 0)
			return SEO_ENOMEM;
		if (count > 0)
			w->buf[w->len++] = ',';
		w->buf[w->len++] = '"';
		memcpy(w->buf + w->len, f->name, len);
		w->len += len;
		w->buf[w->len++] = '"';
		w->buf[w->len++] = ':';
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			rc = array_w(w, f, msg, nullable);
		else if (present)
			rc = value_w(w, f, MEMBER(msg, f), nullable);
		else
			rc = NO_FORM;
		if (rc < 0)
			return rc;
		if (rc == NO_FORM) {
			if (present && !seo_pb_always(f) &&
			    !seo_pbjson__null_kept(desc, f, nullable)) {
				w->len = mark;
				continue;
			}
			seo_jw_raw(w, "null", 4);
		}
		count++;
	}
	if (n != NULL)
		*n = count;
	return w->failed ? SEO_ENOMEM : 0;
}

int seo_pbjson_write_members(seo_jw *w, const ProtobufCMessage *msg,
			     seo_pbjson_nullable_fn nullable, const char *skip,
			     size_t *n)
{
	return members(w, msg, nullable, skip, n);
}

int seo_pbjson_write(seo_jw *w, const ProtobufCMessage *msg,
		     seo_pbjson_nullable_fn nullable)
{
	int rc;

	seo_jw_char(w, '{');
	rc = members(w, msg, nullable, NULL, NULL);
	seo_jw_char(w, '}');
	return rc == 0 && w->failed ? SEO_ENOMEM : rc;
}
