/*
 * A report's calls as columns (LeaseCallColumns, Account/LeaseBatchColumns)
 * turned into the LeaseCall's the rest of lease.c reads: one array of
 * each from the call's arena, the request ids formatted here, every
 * string else pointing into the request.
 */
#include "acct_int.h"

#include <string.h>

#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/util.h"

#define PREFIX_MAX 64

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;
typedef Seo__Account__V1__LeaseCallColumns LeaseCallColumns;

static int bad(acct_err *err, const char *msg)
{
	return acct__fail(err, SEO_EINVAL, "invalid_parameter", "%s", msg);
}

/* Every column of `k` but names holds n entries, each index names one. */
static int check(const LeaseCallColumns *k, size_t n, acct_err *err)
{
	const uint32_t *idx[] = {k->user, k->key, k->endpoint};

	if (n > ACCT_LEASE_CALLS_MAX)
		return bad(err, "a report carries at most 4096 calls, a batch as "
				"many in all");
	if (k->n_user != n || k->n_key != n || k->n_endpoint != n ||
	    k->n_domain != n || k->n_charged != n || k->n_credits_used != n ||
	    k->n_created_at != n)
		return bad(err, "every column of a report's calls has one entry "
				"a call");
	if (k->request_prefix == NULL || strlen(k->request_prefix) > PREFIX_MAX)
		return bad(err, "request_prefix is longer than 64 bytes");
	for (size_t c = 0; c < sizeof(idx) / sizeof(idx[0]); c++)
		for (size_t i = 0; i < n; i++)
			if (idx[c][i] >= k->n_names)
				return bad(err, "a call names no entry of names");
	return 0;
}

int acct__lease_columns(seo_arena *arena, const LeaseRequest *in,
			LeaseRequest **out, acct_err *err)
{
	const LeaseCallColumns *k = in->columns;
	size_t n = k != NULL ? k->n_request_no : 0, plen;
	LeaseRequest *r;
	LeaseCall *calls, **ptrs;
	char *ids;

	if (k == NULL) {
		*out = (LeaseRequest *)in;
		return 0;
	}
	if (in->n_calls > 0)
		return bad(err, "a report carries its calls or their columns, "
				"not both");
	if (check(k, n, err) != 0)
		return SEO_EINVAL;
	plen = strlen(k->request_prefix);
	r = seo_arena_alloc(arena, sizeof(*r));
	calls = seo_arena_alloc(arena, (n + 1) * sizeof(*calls));
	ptrs = seo_arena_alloc(arena, (n + 1) * sizeof(*ptrs));
	ids = seo_arena_alloc(arena, (n + 1) * (plen + SEO_FMT_ID_DIGITS + 1));
	if (r == NULL || calls == NULL || ptrs == NULL || ids == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	*r = *in;
	r->columns = NULL;
	for (size_t i = 0; i < n; i++) {
		char *id = ids + i * (plen + SEO_FMT_ID_DIGITS + 1);

		seo_fmt_id(id, k->request_prefix, plen, k->request_no[i]);
		seo__account__v1__lease_call__init(&calls[i]);
		calls[i].request_id = id;
		calls[i].user_id = k->names[k->user[i]];
		calls[i].key_id = k->names[k->key[i]];
		calls[i].endpoint = k->names[k->endpoint[i]];
		calls[i].domain = k->domain[i];
		calls[i].charged = k->charged[i];
		calls[i].credits_used = k->credits_used[i];
		calls[i].created_at = k->created_at[i];
		ptrs[i] = &calls[i];
	}
	r->calls = ptrs;
	r->n_calls = n;
	*out = r;
	return 0;
}
