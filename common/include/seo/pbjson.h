/*
 * seo/pbjson.h: JSON <-> protobuf-c messages, driven by their descriptors.
 * The one conversion the gateway (public JSON in and out) and the services
 * (JSON analyses into answers) share.
 *
 * JSON names are the proto field names. Integers are JSON integers within
 * the field's type (a uint64 past LLONG_MAX encodes as a real), float and
 * double numbers (non-finite ones encode as null), bool booleans, strings
 * UTF-8 without NUL, bytes padded standard base64, enums their value name
 * in lowercase without the prefix all the enum's names share (ROLE_OWNER ->
 * "owner"), nested messages objects, repeated fields arrays, and a
 * seo.common.RawJson the JSON value its text holds. RawJson is recognised
 * by its full name, so that this library needs none of the generated code.
 *
 * Decoded messages and everything in them are allocated on a seo_arena;
 * encoded JSON belongs to the caller (json_decref()).
 */
#ifndef SEO_PBJSON_H
#define SEO_PBJSON_H

#include <stddef.h>

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "seo/arena.h"
#include "seo/json_write.h"

/* Decoding flags. Without them a member naming no field is skipped, null
 * stands for absent everywhere, and an integer field takes a real without
 * a fractional part (100.0, 1e3). */
enum {
	SEO_PBJSON_STRICT_FIELDS = 1, /* a member naming no field fails */
	SEO_PBJSON_STRICT_TYPES = 2,  /* integers as JSON integers only;
				       * repeated fields as arrays only */
	SEO_PBJSON_STRICT = SEO_PBJSON_STRICT_FIELDS | SEO_PBJSON_STRICT_TYPES,
};

/* What did not fit. */
typedef enum seo_pbjson_fault {
	SEO_PBJSON_TYPE = 1, /* another JSON type, or a bad base64 or enum name */
	SEO_PBJSON_RANGE,    /* a number outside the field type's bounds */
	SEO_PBJSON_UTF8,     /* a string not UTF-8, or holding NUL */
	SEO_PBJSON_ARRAY,    /* a repeated field given no array */
	SEO_PBJSON_UNKNOWN,  /* a member naming no field (strict) */
	SEO_PBJSON_ONEOF,    /* a second member of one oneof */
	SEO_PBJSON_MISSING,  /* an "always" field (seo/pb.h) absent
			      * or null */
} seo_pbjson_fault;

typedef struct seo_pbjson_error {
	seo_pbjson_fault fault;
	const ProtobufCMessageDescriptor *message; /* holding the fault */
	const ProtobufCFieldDescriptor *field;     /* NULL for UNKNOWN, or when
						    * the top value is no object */
	const ProtobufCFieldDescriptor *other;     /* ONEOF: the member set */
	/* Below the value converted: "" for the value itself, else "n",
	 * "items[1]", "child.name", or the unknown member "items[0].zzz".
	 * Cut to fit. */
	char path[128];
} seo_pbjson_error;

/*
 * Builds a message of `desc` from JSON object `obj` with SEO_PBJSON_*
 * `flags`, on `a`. Returns 0 and sets *out; SEO_EINVAL with *err filled;
 * SEO_ENOMEM.
 */
int seo_pbjson_decode(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		      unsigned flags, seo_arena *a, ProtobufCMessage **out,
		      seo_pbjson_error *err);

/*
 * Converts `v` into `slot`, one value of field `f` (an element, for a
 * repeated field): what seo_pbjson_decode() does for each, for callers
 * that walk the members themselves. null is a type fault here. Returns 0,
 * SEO_EINVAL with *err filled (path relative to the value), SEO_ENOMEM.
 */
int seo_pbjson_value(const ProtobufCFieldDescriptor *f, const json_t *v,
		     unsigned flags, seo_arena *a, void *slot,
		     seo_pbjson_error *err);

/*
 * Sets field `f` of `msg` from member value `v`, as seo_pbjson_decode()
 * does for each member: an array for a repeated field, one value
 * otherwise (a second member of a oneof fails), null leaving it unset.
 * Returns 0, SEO_EINVAL with *err filled (path relative to the member:
 * "", "[2]", "[2].n", "n"), SEO_ENOMEM.
 */
int seo_pbjson_field(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f,
		     const json_t *v, unsigned flags, seo_arena *a,
		     seo_pbjson_error *err);

/* Says whether field f of message m is nullable: written as null when it
 * has no value, rather than left out. */
typedef int (*seo_pbjson_nullable_fn)(const ProtobufCMessageDescriptor *m,
				      const ProtobufCFieldDescriptor *f);

/* A new JSON object of `msg` (caller json_decref()s it), or NULL when out
 * of memory. "Always" fields (seo/pb.h) always appear, repeated ones as
 * arrays; another field (a nested message included) without a value
 * appears as null when `nullable` (NULL: none is) says so, else not at
 * all; of a oneof only its member that is set appears. A value without a
 * JSON form (a non-finite number, an enum value this build does not know)
 * counts as no value, except in an "always" field, where it is null. */
json_t *seo_pbjson_encode(const ProtobufCMessage *msg,
			  seo_pbjson_nullable_fn nullable);

/*
 * Writes the JSON object seo_pbjson_encode() would build of `msg` into
 * `w`, byte for byte as json_dumps(..., JSON_COMPACT) would write it,
 * without building it. Returns 0; SEO_ENOMEM (w failed); SEO_EINVAL when
 * a RawJson's text is not JSON (the tree encoder's NULL). On an error `w`
 * holds a part of the text.
 */
int seo_pbjson_write(seo_jw *w, const ProtobufCMessage *msg,
		     seo_pbjson_nullable_fn nullable);

/*
 * The same members without the braces (each after the first preceded by
 * ','), leaving out the field named `skip` (NULL: none), for callers that
 * add members of their own; *n (when not NULL) gets how many were written.
 * Returns as seo_pbjson_write().
 */
int seo_pbjson_write_members(seo_jw *w, const ProtobufCMessage *msg,
			     seo_pbjson_nullable_fn nullable, const char *skip,
			     size_t *n);

/* ---- pieces for callers with rules of their own (the gateway) ---------- */

/* An integer as written, before it meets a field type: sign and magnitude,
 * so that every int64 and uint64 fits, or which way it overflowed them. */
typedef struct seo_pbjson_int {
	int neg;
	int overflow;
	unsigned long long mag;
} seo_pbjson_int;

seo_pbjson_int seo_pbjson_int_of(long long v);

/* A JSON integer, or (without SEO_PBJSON_STRICT_TYPES in `flags`) a real
 * without a fractional part. Returns 0 or SEO_EINVAL. */
int seo_pbjson_int_json(const json_t *v, unsigned flags, seo_pbjson_int *out);

/* 1 when v is within the bounds of integer type t. */
int seo_pbjson_int_fits(const seo_pbjson_int *v, ProtobufCType t);

/* Stores v (within t's bounds) into a slot of integer type t. */
void seo_pbjson_int_store(void *slot, ProtobufCType t, const seo_pbjson_int *v);

/* 1 for the integer field types (int32 ... fixed64). */
int seo_pbjson_is_int(ProtobufCType t);

/* Bounds of an integer field type; uint64 and fixed64 reach ULLONG_MAX. */
void seo_pbjson_int_bounds(ProtobufCType t, long long *min,
			   unsigned long long *max);

/* Bytes of one element of a repeated field of type t. */
size_t seo_pbjson_slot_size(ProtobufCType t);

/* Whether non-repeated field f of msg is set: an "always" field (seo/pb.h)
 * always is, another as protobuf-c decides whether to pack it. */
int seo_pbjson_present(const ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f);

/* Records that non-repeated field f of msg was set: its has_ flag or its
 * oneof case. */
void seo_pbjson_mark_set(ProtobufCMessage *msg,
			 const ProtobufCFieldDescriptor *f);

/* The other member of f's oneof already set in msg, or NULL. */
const ProtobufCFieldDescriptor *
seo_pbjson_oneof_other(const ProtobufCMessage *msg,
		       const ProtobufCFieldDescriptor *f);

/* Length of the prefix every value name of `e` shares, cut after its last
 * '_' ("ROLE_" for ROLE_OWNER, ROLE_ADMIN, ...). */
size_t seo_pbjson_enum_prefix(const ProtobufCEnumDescriptor *e);

/* The public name of an enum value: `name` without its first `prefix`
 * bytes, in lowercase, as a new JSON string (caller decrefs); NULL when
 * out of memory. */
json_t *seo_pbjson_enum_name(const char *name, size_t prefix);

/* The value of e whose public name is s[0..len). Returns 0 or
 * SEO_EINVAL. */
int seo_pbjson_enum_parse(const ProtobufCEnumDescriptor *e, const char *s,
			  size_t len, int *out);

/* Decodes padded base64 s[0..len) onto `a`. Returns 0, SEO_EINVAL,
 * SEO_ENOMEM. */
int seo_pbjson_b64_decode(seo_arena *a, const char *s, size_t len,
			  ProtobufCBinaryData *out);

/* Length of the longest prefix of s[0..len) that is well-formed UTF-8
 * without NUL bytes; len when all of it is. */
size_t seo_utf8_prefix(const char *s, size_t len);

#endif
