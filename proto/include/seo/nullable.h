/*
 * seo/nullable.h: which fields of our messages the interface lets be null.
 *
 * The specification writes `nullable` (or "or null") where a field is
 * always present and may be null; every other optional field is left out of
 * the JSON when unset. The .proto files mark the former with a trailing
 * comment beginning "nullable"; proto/nullable.cmake turns the marks into
 * the table behind this function at build time, and the transcoder and the
 * OpenAPI document both read it.
 */
#ifndef SEO_NULLABLE_H
#define SEO_NULLABLE_H

#include <protobuf-c/protobuf-c.h>

/* 1 when field `f` of message `m` is marked nullable, else 0. Thread-safe;
 * a binary search over the marks. */
int seo_proto_nullable(const ProtobufCMessageDescriptor *m,
		       const ProtobufCFieldDescriptor *f);

#endif
