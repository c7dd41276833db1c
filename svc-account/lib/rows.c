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

/* One message of `d` per row of `r`; *out gets n + 1 slots. */
static int rows_to_messages(seo_arena *arena, PGresult *r,
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

int acct__query_list(acct_service *a, acct__q q, int nparams,
		     const char *const *params, seo_arena *arena,
		     const ProtobufCMessageDescriptor *d, const char *field,
		     ProtobufCMessage **out, acct_err *err)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(d, field);
	ProtobufCMessage *resp;
	PGresult *r = NULL;
	size_t n;
	int rc;

	if (f == NULL || f->label != PROTOBUF_C_LABEL_REPEATED ||
	    f->type != PROTOBUF_C_TYPE_MESSAGE)
		return acct__fail(err, SEO_EINVAL, "internal_error",
				  "%s has no repeated message field %s",
				  d->name, field);
	rc = acct__pool_query(a->pool, q, nparams, params, &r, err);
	if (rc != 0)
		goto out;
	resp = seo_arena_alloc(arena, d->sizeof_message);
	if (resp == NULL) {
		rc = acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
		goto out;
	}
	d->message_init(resp);
	rc = rows_to_messages(arena, r, f->descriptor,
				    (ProtobufCMessage ***)((char *)resp + f->offset),
				    &n, err);
	if (rc != 0)
		goto out;
	*(size_t *)((char *)resp + f->quantifier_offset) = n;
	*out = resp;
out:
	PQclear(r);
	return rc;
}
