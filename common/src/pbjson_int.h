/*
 * pbjson_int.h: the pieces of the descriptor rules (pbjson.c) that the
 * tree encoder and the text writer (pbjson_write.c) both apply. Internal
 * to seo_common.
 */
#ifndef SEO_PBJSON_INT_H
#define SEO_PBJSON_INT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "seo/pbjson.h"

#define SEO_PBJSON_MEMBER(msg, f) ((char *)(msg) + (f)->offset)
#define SEO_PBJSON_QUANT(msg, f) ((char *)(msg) + (f)->quantifier_offset)

/* Whether `desc` is seo.common.RawJson (by name). */
int seo_pbjson__is_raw_json(const ProtobufCMessageDescriptor *desc);

/* The double a float field is written as: the shortest decimal (6 to 9
 * digits) that reads back as the same float (0.1f -> 0.1). v finite. */
double seo_pbjson__float_double(float v);

/* Bytes of the padded base64 of `len` bytes. */
static inline size_t seo_pbjson__b64_len(size_t len)
{
	return (len + 2) / 3 * 4;
}

/* Writes the padded base64 of data[0..len) at out (seo_pbjson__b64_len()
 * bytes, no NUL). */
void seo_pbjson__b64_put(const uint8_t *data, size_t len, char *out);

/* Whether optional field f of desc without a value is written as null
 * rather than left out. */
int seo_pbjson__null_kept(const ProtobufCMessageDescriptor *desc,
			  const ProtobufCFieldDescriptor *f,
			  seo_pbjson_nullable_fn nullable);

#endif
