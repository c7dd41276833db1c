/*
 * Query results to messages. Every column fills the field of the same
 * name, so a list endpoint is its SQL, with columns named as the public
 * interface names them, and one call. A NULL column leaves its field unset
 * (null in JSON).
 */
#include "acct_int.h"

#include <stdlib.h>

#include <jansson.h>

#include "seo/errors.h"
#include "seo/pbjson.h"

#define MAX_COLUMNS 16

/* A cell's text as the JSON value seo_pbjson stores into a field. */
static json_t *cell_json(ProtobufCType t, const char *text)
{
	switch (t) {
	case PROTOBUF_C_TYPE_STRING:
		return json_string(text);
	case PROTOBUF_C_TYPE_BOOL:
		return json_boolean(text[0] == 't');
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FLOAT:
		return json_real(strtod(text, NULL));
	default:
		return json_integer(strtoll(text, NULL, 10));
	}
}

int acct__rows_to_messages(seo_arena *arena, PGresult *r,
			   const ProtobufCMessageDescriptor *d,
			   ProtobufCMessage ***out, size_t *n, acct_err *err)
{
	const ProtobufCFieldDescriptor *fields[MAX_COLUMNS];
	int ncol = PQnfields(r), nrow = PQntuples(r);
	ProtobufCMessage **msgs;
	seo_pbjson_error perr;

	if (ncol > MAX_COLUMNS)
		return acct__fail(err, SEO_EINVAL, "internal_error",
				  "query has more than %d columns", MAX_COLUMNS);
	for (int c = 0; c < ncol; c++) {
		fields[c] = protobuf_c_message_descriptor_get_field_by_name(
			d, PQfname(r, c));
		if (fields[c] == NULL)
			return acct__fail(err, SEO_EINVAL, "internal_error",
					  "column %s is no field of %s",
					  PQfname(r, c), d->name);
	}
	/* One slot more, so that an empty list is not a NULL array. */
	msgs = seo_arena_alloc(arena, sizeof(*msgs) * ((size_t)nrow + 1));
	if (msgs == NULL)
		goto oom;
	for (int i = 0; i < nrow; i++) {
		ProtobufCMessage *m = seo_arena_alloc(arena, d->sizeof_message);

		if (m == NULL)
			goto oom;
		d->message_init(m);
		for (int c = 0; c < ncol; c++) {
			json_t *v;
			int rc;

			if (PQgetisnull(r, i, c))
				continue;
			v = cell_json(fields[c]->type, PQgetvalue(r, i, c));
			if (v == NULL)
				goto oom;
			rc = seo_pbjson_field(m, fields[c], v, 0, arena, &perr);
			json_decref(v);
			if (rc == SEO_ENOMEM)
				goto oom;
			if (rc != 0)
				return acct__fail(err, rc, "internal_error",
						  "column %s does not fit %s",
						  PQfname(r, c), d->name);
		}
		msgs[i] = m;
	}
	*out = msgs;
	*n = (size_t)nrow;
	return 0;
oom:
	return acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
}
