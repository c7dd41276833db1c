/*
 * Operator functions (seoctl): workspaces, users, credits and websites, on
 * the caller's own connection. Each change is one transaction.
 */
#include "acct_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/util.h"

#define NAME_MAX_BYTES 200
#define EMAIL_MAX_BYTES 320
#define HOST_MAX 253
#define LABEL_MAX 63

/* Statements run unprepared on a caller's connection. */
static seo_pg_conn oneshot(PGconn *db)
{
	return seo_pg_conn_of(db, &acct__stmts, 1);
}

static void ms_text(char out[24])
{
	snprintf(out, 24, "%lld", (long long)seo_now_ms());
}

static int check_name(const char *what, const char *name, acct_err *err)
{
	if (name == NULL || name[0] == '\0')
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "%s must not be empty", what);
	if (strlen(name) > NAME_MAX_BYTES)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "%s is longer than %d bytes", what,
				  NAME_MAX_BYTES);
	return 0;
}

/* One '@' with text on both sides, no spaces or controls: enough to keep
 * mail headers sane; the mail server judges the rest. */
static int check_email(const char *email, acct_err *err)
{
	const char *at = email != NULL ? strchr(email, '@') : NULL;

	if (at == NULL || at == email || at[1] == '\0' || strchr(at + 1, '@') ||
	    strlen(email) > EMAIL_MAX_BYTES)
		goto bad;
	for (const unsigned char *p = (const unsigned char *)email; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			goto bad;
	return 0;
bad:
	return acct__fail(err, SEO_EINVAL, "invalid_parameter",
			  "invalid email address \"%s\"", email ? email : "");
}

static int workspace_exists(seo_pg_conn *c, const char *workspace_id,
			    acct_err *err)
{
	PGresult *r = NULL;
	int rc = acct__exec(c, ACCT_Q_BALANCE, 1, &workspace_id, &r, err);

	if (rc == 0 && PQntuples(r) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "workspace_not_found",
				"workspace \"%s\" does not exist", workspace_id);
	PQclear(r);
	return rc;
}

/* A user with a key, inside the caller's transaction. */
static int add_user(seo_pg_conn *c, const char *workspace_id, const char *email,
		    acct_role role, acct_new_user *out, acct_err *err)
{
	char now[24], hash[ACCT_HASH_LEN];
	const char *params[5];
	int64_t created_at;
	int rc = acct__new_id("usr_", out->user_id, err);

	if (rc != 0)
		return rc;
	ms_text(now);
	params[0] = out->user_id;
	params[1] = workspace_id;
	params[2] = email;
	params[3] = acct_role_name(role);
	params[4] = now;
	rc = acct__exec(c, ACCT_Q_USER_INSERT, 5, params, NULL, err);
	if (rc != 0)
		return rc;
	snprintf(out->workspace_id, sizeof(out->workspace_id), "%s", workspace_id);
	return acct__key_insert(c, workspace_id, out->user_id, email, "Default",
				out->api_key, hash, &created_at, err);
}

static int grant(seo_pg_conn *c, const char *workspace_id, int64_t credits,
		 int64_t *balance, acct_err *err)
{
	char amount[24], now[24];
	const char *params[3] = {workspace_id, amount, now};
	PGresult *r = NULL;
	int rc;

	snprintf(amount, sizeof(amount), "%lld", (long long)credits);
	ms_text(now);
	rc = acct__exec(c, ACCT_Q_GRANT, 3, params, &r, err);
	if (rc == 0 && PQntuples(r) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "workspace_not_found",
				"workspace \"%s\" does not exist", workspace_id);
	if (rc == 0)
		*balance = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return rc;
}

/* Ends the transaction: COMMIT after success, else ROLLBACK. */
static int finish(seo_pg_conn *c, int rc, acct_err *err)
{
	if (rc == 0)
		return acct__commit(c, err);
	seo_pg_rollback(c);
	return rc;
}

int acct_workspace_create(PGconn *db, const char *name, const char *email,
			  int64_t credits, acct_new_user *out, acct_err *err)
{
	seo_pg_conn c = oneshot(db);
	char ws[ACCT_ID_LEN], now[24];
	const char *params[3] = {ws, name, now};
	int64_t balance;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_name("workspace name", name, err);
	if (rc == 0)
		rc = check_email(email, err);
	if (rc == 0 && credits < 0)
		rc = acct__fail(err, SEO_EINVAL, "invalid_parameter",
				"credits must not be negative");
	if (rc == 0)
		rc = acct__new_id("ws_", ws, err);
	if (rc != 0)
		return rc;
	ms_text(now);
	rc = acct__begin(&c, err);
	if (rc != 0)
		return rc;
	rc = acct__exec(&c, ACCT_Q_WORKSPACE_INSERT, 3, params, NULL, err);
	if (rc == 0)
		rc = add_user(&c, ws, email, ACCT_ROLE_OWNER, out, err);
	if (rc == 0 && credits > 0)
		rc = grant(&c, ws, credits, &balance, err);
	return finish(&c, rc, err);
}

int acct_user_add(PGconn *db, const char *workspace_id, const char *email,
		  acct_role role, acct_new_user *out, acct_err *err)
{
	seo_pg_conn c = oneshot(db);
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_email(email, err);
	if (rc == 0 && acct_role_name(role) == NULL)
		rc = acct__fail(err, SEO_EINVAL, "invalid_parameter",
				"unknown role %d", (int)role);
	if (rc == 0)
		rc = acct__begin(&c, err);
	if (rc != 0)
		return rc;
	rc = workspace_exists(&c, workspace_id, err);
	if (rc == 0)
		rc = add_user(&c, workspace_id, email, role, out, err);
	return finish(&c, rc, err);
}

int acct_user_remove(PGconn *db, const char *user_id, acct_err *err)
{
	seo_pg_conn c = oneshot(db);
	char now[24], payload[ACCT_ID_LEN + sizeof(ACCT_AUTH_USER_PREFIX)];
	const char *params[2] = {user_id, now};
	const char *p = payload;
	PGresult *r = NULL;
	int rc;

	if (strlen(user_id) >= ACCT_ID_LEN)
		return acct__fail(err, SEO_ENOTFOUND, "user_not_found",
				  "user \"%s\" does not exist", user_id);
	snprintf(payload, sizeof(payload), "%s%s", ACCT_AUTH_USER_PREFIX, user_id);
	ms_text(now);
	rc = acct__begin(&c, err);
	if (rc != 0)
		return rc;
	rc = acct__exec(&c, ACCT_Q_USER_REMOVE, 2, params, &r, err);
	if (rc == 0 && PQntuples(r) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "user_not_found",
				"user \"%s\" does not exist", user_id);
	/* Every svc-account drops the user's cached keys on commit. */
	if (rc == 0)
		rc = acct__exec(&c, ACCT_Q_NOTIFY, 1, &p, NULL, err);
	PQclear(r);
	return finish(&c, rc, err);
}

int acct_credits_grant(PGconn *db, const char *workspace_id, int64_t credits,
		       int64_t *balance, acct_err *err)
{
	seo_pg_conn c = oneshot(db);

	if (credits <= 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "credits must be positive");
	/* One statement: the balance and its ledger row commit together. */
	return grant(&c, workspace_id, credits, balance, err);
}

int acct_host_normalize(const char *in, char out[ACCT_HOST_LEN])
{
	const char *start = in, *end, *scheme = strstr(in, "://");
	size_t n, label = 0;

	if (scheme != NULL)
		start = scheme + 3;
	end = start + strcspn(start, "/?#");
	/* A port belongs to a URL, not to the site. */
	for (const char *p = start; p < end; p++) {
		if (*p == ':') {
			if (p + 1 == end || strspn(p + 1, "0123456789") != (size_t)(end - p - 1))
				return SEO_EINVAL;
			end = p;
			break;
		}
	}
	while (end > start && end[-1] == '.')
		end--;
	n = (size_t)(end - start);
	if (n == 0 || n > HOST_MAX || memchr(start, '.', n) == NULL)
		return SEO_EINVAL;
	for (size_t i = 0; i < n; i++) {
		char ch = (char)tolower((unsigned char)start[i]);

		if (ch == '.') {
			if (label == 0)
				return SEO_EINVAL;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
			   ch == '-') {
			if (++label > LABEL_MAX)
				return SEO_EINVAL;
		} else {
			return SEO_EINVAL;
		}
		out[i] = ch;
	}
	out[n] = '\0';
	return 0;
}

int acct_website_add(PGconn *db, const char *workspace_id, const char *host,
		     const char *name, char site_id[ACCT_ID_LEN],
		     char host_out[ACCT_HOST_LEN], acct_err *err)
{
	seo_pg_conn c = oneshot(db);
	char now[24];
	const char *params[5] = {site_id, workspace_id, host_out, NULL, now};
	int rc;

	if (acct_host_normalize(host, host_out) != 0)
		return acct__fail(err, SEO_EINVAL, "invalid_domain",
				  "invalid host \"%s\"", host);
	params[3] = name != NULL && name[0] != '\0' ? name : host_out;
	rc = check_name("website name", params[3], err);
	if (rc == 0)
		rc = acct__new_id("site_", site_id, err);
	if (rc != 0)
		return rc;
	ms_text(now);
	rc = workspace_exists(&c, workspace_id, err);
	if (rc != 0)
		return rc;
	rc = acct__exec(&c, ACCT_Q_WEBSITE_INSERT, 5, params, NULL, err);
	if (rc == SEO_EEXIST)
		return acct__fail(err, rc, "already_exists",
				  "website \"%s\" already exists in workspace \"%s\"",
				  host_out, workspace_id);
	return rc;
}

int acct_website_policy(PGconn *db, const char *site_id, const char *policy,
			acct_err *err)
{
	static const char *const policies[] = {"automatic", "approval"};
	seo_pg_conn c = oneshot(db);
	const char *params[2] = {site_id, NULL};
	PGresult *r = NULL;
	int rc;

	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (policy != NULL && strcmp(policy, policies[i]) == 0)
			params[1] = policies[i];
	if (params[1] == NULL)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "indexnow policy must be automatic or approval");
	rc = acct__exec(&c, ACCT_Q_WEBSITE_POLICY, 2, params, &r, err);
	if (rc == 0 && PQntuples(r) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "site_not_found",
				"website \"%s\" does not exist", site_id);
	PQclear(r);
	return rc;
}

int acct_website_host(PGconn *db, const char *workspace_id, const char *site_id,
		      char host_out[ACCT_HOST_LEN], acct_err *err)
{
	seo_pg_conn c = oneshot(db);
	PGresult *r = NULL;
	int rc = workspace_exists(&c, workspace_id, err);

	if (rc != 0 || site_id == NULL)
		return rc;
	rc = acct__exec(&c, ACCT_Q_SITE_LIST, 1, &workspace_id, &r, err);
	for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
		if (strcmp(PQgetvalue(r, i, 0), site_id) != 0)
			continue;
		snprintf(host_out, ACCT_HOST_LEN, "%s", PQgetvalue(r, i, 1));
		PQclear(r);
		return 0;
	}
	PQclear(r);
	if (rc != 0)
		return rc;
	return acct__fail(err, SEO_ENOTFOUND, "site_not_found",
			  "website \"%s\" is not an active website of workspace \"%s\"",
			  site_id, workspace_id);
}
