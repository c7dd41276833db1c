/*
 * The read-only account endpoints: me, credits, usage, pricing, websites.
 * Every query is scoped to the caller's workspace, so that ids of another
 * workspace are simply absent.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

#define USAGE_LIMIT_DEFAULT 50
#define USAGE_LIMIT_MAX 200

static int staff_only(const acct_caller *who, const char *what, acct_err *err)
{
	if ((who->role & ACCT_ROLES_STAFF) != 0)
		return 0;
	return acct__fail(err, SEO_EDENIED, "capability_missing",
			  "role %s may not view %s", acct_role_name(who->role),
			  what);
}

static int oom(acct_err *err)
{
	return acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
}

/* A column as an arena string; NULL stays NULL (*bad set on failure). */
static char *col(seo_arena *arena, PGresult *r, int row, int c, int *bad)
{
	char *s;

	if (PQgetisnull(r, row, c))
		return NULL;
	s = seo_arena_strdup(arena, PQgetvalue(r, row, c));
	if (s == NULL)
		*bad = 1;
	return s;
}

static int64_t col_int(PGresult *r, int row, int c)
{
	return strtoll(PQgetvalue(r, row, c), NULL, 10);
}

int acct_get_me(acct_service *a, const acct_caller *who, seo_arena *arena,
		Seo__Account__V1__User **out, acct_err *err)
{
	const char *params[2] = {who->user_id, who->workspace_id};
	Seo__Account__V1__User *u;
	PGresult *r = NULL;
	acct_role role;
	int bad = 0;
	int rc = acct__pool_query(a->pool, ACCT_Q_USER_OF_CALLER, 2, params, &r, err);

	if (rc != 0)
		goto out;
	if (PQntuples(r) == 0) {
		rc = acct__fail(err, SEO_ENOTFOUND, "user_not_found",
				"user not found");
		goto out;
	}
	u = seo_arena_alloc(arena, sizeof(*u));
	if (u == NULL) {
		rc = oom(err);
		goto out;
	}
	seo__account__v1__user__init(u);
	u->id = col(arena, r, 0, 0, &bad);
	u->email = col(arena, r, 0, 1, &bad);
	u->created_at = col_int(r, 0, 3);
	/* The stored role decides, should the caller's be stale. */
	if (acct_role_parse(PQgetvalue(r, 0, 2), &role) != 0)
		role = ACCT_ROLE_CLIENT;
	u->has_credits = (role & ACCT_ROLES_STAFF) != 0;
	if (bad) {
		rc = oom(err);
		goto out;
	}
	/* The balance as every reader shows it, leases' credits included. */
	if (u->has_credits &&
	    (rc = acct__read_balance(a, who->workspace_id, &u->credits, err)) != 0)
		goto out;
	*out = u;
out:
	PQclear(r);
	return rc;
}

int acct_get_credits(acct_service *a, const acct_caller *who, int64_t *credits,
		     acct_err *err)
{
	int rc = staff_only(who, "credits", err);

	if (rc != 0)
		return rc;
	return acct__read_balance(a, who->workspace_id, credits, err);
}

int acct_list_usage(acct_service *a, const acct_caller *who,
		    const Seo__Account__V1__ListUsageRequest *req,
		    seo_arena *arena, Seo__Account__V1__ListUsageResponse **out,
		    acct_err *err)
{
	int64_t limit = req != NULL && req->has_limit ? req->limit : USAGE_LIMIT_DEFAULT;
	int64_t offset = req != NULL && req->has_offset ? req->offset : 0;
	Seo__Account__V1__ListUsageResponse *resp;
	char lim[24], off[24];
	const char *params[3] = {who->workspace_id, lim, off};
	PGresult *total = NULL;
	int rc = staff_only(who, "usage", err);

	if (rc != 0)
		return rc;
	if (limit < 1)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "limit must be at least 1");
	if (offset < 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "offset must not be negative");
	if (limit > USAGE_LIMIT_MAX)
		limit = USAGE_LIMIT_MAX;
	snprintf(lim, sizeof(lim), "%lld", (long long)limit);
	snprintf(off, sizeof(off), "%lld", (long long)offset);
	rc = acct__query_list(a, ACCT_Q_USAGE_PAGE, 3, params, arena,
			      &seo__account__v1__list_usage_response__descriptor,
			      "usage", (ProtobufCMessage **)&resp, err);
	if (rc == 0)
		rc = acct__pool_query(a->pool, ACCT_Q_USAGE_COUNT, 1, params, &total, err);
	if (rc != 0)
		goto out;
	resp->total = col_int(total, 0, 0);
	*out = resp;
out:
	PQclear(total);
	return rc;
}

int acct_get_pricing(acct_service *a, seo_arena *arena,
		     Seo__Account__V1__PricingResponse **out, acct_err *err)
{
	return acct__query_list(a, ACCT_Q_PRICING, 0, NULL, arena,
				&seo__account__v1__pricing_response__descriptor,
				"tiers", (ProtobufCMessage **)out, err);
}

int acct_list_websites(acct_service *a, const acct_caller *who, seo_arena *arena,
		       Seo__Account__V1__ListWebsitesResponse **out,
		       acct_err *err)
{
	return acct__query_list(a, ACCT_Q_WEBSITE_LIST, 1, &who->workspace_id,
				arena,
				&seo__account__v1__list_websites_response__descriptor,
				"websites", (ProtobufCMessage **)out, err);
}

int acct_list_sites(acct_service *a, const acct_caller *who, seo_arena *arena,
		    Seo__Account__V1__ListSitesResponse **out, acct_err *err)
{
	return acct__query_list(a, ACCT_Q_SITE_LIST, 1, &who->workspace_id,
				arena, &seo__account__v1__list_sites_response__descriptor,
				"sites", (ProtobufCMessage **)out, err);
}
