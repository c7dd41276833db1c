/*
 * pbjson.c: rt_pb_from_json(), the analysers' JSON objects into the
 * protobuf-c answers of seo.realtime.v1, by descriptor: one conversion
 * instead of a hand-written copy per message, and a strict one, so that an
 * analyser and its message cannot drift apart unnoticed.
 */
#include "rt_service.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"

static int fill(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		seo_arena *a, ProtobufCMessage **out, const char **where);

/* Bytes of one element of a repeated field; 0 for the types the
 * conversion does not handle. */
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
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	default:
		return 0;
	}
}

/* A RawJson holding v's text. */
static int raw_json(const json_t *v, seo_arena *a, ProtobufCMessage **out)
{
	Seo__Common__RawJson *r = seo_arena_alloc(a, sizeof(*r));
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	int rc = SEO_ENOMEM;

	if (r == NULL || text == NULL)
		goto out;
	seo__common__raw_json__init(r);
	r->json = seo_arena_strdup(a, text);
	if (r->json == NULL)
		goto out;
	*out = &r->base;
	rc = 0;
out:
	free(text);
	return rc;
}

/* An integer in the bounds of integer field type t. */
static int int_fits(ProtobufCType t, json_int_t v)
{
	switch (t) {
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return v >= 0 && v <= UINT32_MAX;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return v >= 0;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return 1;
	default:
		return v >= INT32_MIN && v <= INT32_MAX;
	}
}

/* One JSON value into `slot`, a value of field f. */
static int value(const ProtobufCFieldDescriptor *f, const json_t *v,
		 seo_arena *a, void *slot, const char **where)
{
	json_int_t i;

	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		if (!json_is_string(v))
			return SEO_EINVAL;
		*(char **)slot = seo_arena_strndup(a, json_string_value(v),
						   json_string_length(v));
		return *(char **)slot != NULL ? 0 : SEO_ENOMEM;
	case PROTOBUF_C_TYPE_BOOL:
		if (!json_is_boolean(v))
			return SEO_EINVAL;
		*(protobuf_c_boolean *)slot = json_is_true(v);
		return 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		if (!json_is_number(v))
			return SEO_EINVAL;
		*(double *)slot = json_number_value(v);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (f->descriptor == &seo__common__raw_json__descriptor)
			return raw_json(v, a, slot);
		if (!json_is_object(v))
			return SEO_EINVAL;
		return fill(v, f->descriptor, a, slot, where);
	default:
		if (slot_size(f->type) == 0 || !json_is_integer(v) ||
		    !int_fits(f->type, i = json_integer_value(v)))
			return SEO_EINVAL;
		if (slot_size(f->type) == sizeof(int32_t))
			*(int32_t *)slot = (int32_t)i;
		else
			*(int64_t *)slot = i;
		return 0;
	}
}

/* A JSON array into repeated field f of msg. */
static int repeated(const ProtobufCFieldDescriptor *f, const json_t *v,
		    seo_arena *a, char *msg, const char **where)
{
	size_t n = json_array_size(v), size = slot_size(f->type), i;
	char *arr;
	int rc;

	if (!json_is_array(v))
		return SEO_EINVAL;
	if (n == 0)
		return 0;
	arr = seo_arena_calloc(a, n * size);
	if (arr == NULL)
		return SEO_ENOMEM;
	for (i = 0; i < n; i++) {
		rc = value(f, json_array_get(v, i), a, arr + i * size, where);
		if (rc != 0)
			return rc;
	}
	*(void **)(msg + f->offset) = arr;
	*(size_t *)(msg + f->quantifier_offset) = n;
	return 0;
}

/* Records that optional field f is set: its oneof case or has_ flag
 * (strings and messages are set by being non-NULL). */
static void mark_set(const ProtobufCFieldDescriptor *f, char *msg)
{
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		*(uint32_t *)(msg + f->quantifier_offset) = f->id;
	else if (f->type != PROTOBUF_C_TYPE_STRING &&
		 f->type != PROTOBUF_C_TYPE_MESSAGE)
		*(protobuf_c_boolean *)(msg + f->quantifier_offset) = 1;
}

static int fill(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		seo_arena *a, ProtobufCMessage **out, const char **where)
{
	ProtobufCMessage *msg = seo_arena_alloc(a, desc->sizeof_message);
	const char *key;
	json_t *v;
	unsigned i;
	int rc;

	if (msg == NULL)
		return SEO_ENOMEM;
	desc->message_init(msg);
	json_object_foreach((json_t *)obj, key, v)
		if (protobuf_c_message_descriptor_get_field_by_name(desc, key) == NULL) {
			*where = desc->name;
			return SEO_EINVAL;
		}
	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &desc->fields[i];

		v = json_object_get(obj, f->name);
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			rc = v != NULL ? repeated(f, v, a, (char *)msg, where) : 0;
		else if (v == NULL || json_is_null(v))
			rc = f->label == PROTOBUF_C_LABEL_REQUIRED ? SEO_EINVAL : 0;
		else if ((rc = value(f, v, a, (char *)msg + f->offset, where)) == 0 &&
			 f->label == PROTOBUF_C_LABEL_OPTIONAL)
			mark_set(f, (char *)msg);
		if (rc != 0) {
			if (rc == SEO_EINVAL && *where == NULL)
				*where = f->name;
			return rc;
		}
	}
	*out = msg;
	return 0;
}

int rt_pb_from_json(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		    seo_arena *a, ProtobufCMessage **out, const char **where)
{
	*where = NULL;
	if (!json_is_object(obj))
		return SEO_EINVAL;
	return fill(obj, desc, a, out, where);
}
