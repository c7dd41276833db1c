/*
 * pbjson.c: rt_pb_from_json(), the analysers' JSON objects into the
 * protobuf-c answers of seo.realtime.v1 through the shared conversion
 * (seo/pbjson.h), strictly, so that an analyser and its message cannot
 * drift apart unnoticed.
 */
#include "rt_service.h"

#include "seo/errors.h"
#include "seo/pbjson.h"

int rt_pb_from_json(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		    seo_arena *a, ProtobufCMessage **out, const char **where)
{
	seo_pbjson_error err;
	int rc = seo_pbjson_decode(obj, desc, SEO_PBJSON_STRICT, a, out, &err);

	*where = NULL;
	if (rc == SEO_EINVAL)
		*where = err.field != NULL ? err.field->name : err.message->name;
	return rc;
}
