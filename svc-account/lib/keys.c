/*
 * API keys: creation (the raw key exists only in the answer), listing and
 * revocation. Both changes mail the key's user in their own transaction,
 * so a mail exists exactly when the change does.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/mail.h"
#include "seo/errors.h"
#include "seo/util.h"

#define KEY_NAME_MAX 200
#define DEFAULT_KEY_NAME "Default"

enum { MAIL_KEY_CREATED, MAIL_KEY_REVOKED };

/* Bodies are printf formats taking the key's name and last four. */
static const struct {
	const char *subject;
	const char *body;
} key_mails[] = {
	[MAIL_KEY_CREATED] = {
		"A new API key was created",
		"An API key named \"%s\", ending in %s, was created for your account.\n"
		"If you did not create it, revoke it now with DELETE /v1/keys/:id.\n",
	},
	[MAIL_KEY_REVOKED] = {
		"An API key was revoked",
		"The API key named \"%s\", ending in %s, was revoked and no longer works.\n",
	},
};

static int mail_key(seo_pg_conn *c, const char *workspace_id, const char *email,
		    int which, const char *name, const char *last_four,
		    acct_err *err)
{
	char *body;
	int rc;

	/* A user without an address gets no mail; nothing else changes. */
	if (email == NULL || email[0] == '\0')
		return 0;
	if (asprintf(&body, key_mails[which].body, name, last_four) < 0)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	rc = seo_mail_enqueue(c->pg, &acct_outbox, workspace_id, email,
			      key_mails[which].subject, body);
	free(body);
	if (rc != 0)
		return acct__fail(err, rc, "internal_error",
				  "could not queue the key notification mail: %s",
				  seo_strerror(rc));
	return 0;
}

int acct__key_insert(seo_pg_conn *c, const char *workspace_id,
		     const char *user_id, const char *email, const char *name,
		     char out_key[ACCT_KEY_LEN], char out_hash[ACCT_HASH_LEN],
		     int64_t *created_at, acct_err *err)
{
	size_t plen = strlen(ACCT_KEY_PREFIX);
	const char *params[6];
	char now[24];
	int rc;

	memcpy(out_key, ACCT_KEY_PREFIX, plen);
	if (seo_random_string(out_key + plen, ACCT_KEY_RANDOM, SEO_ALPHANUM) != 0)
		return acct__fail(err, SEO_EIO, "internal_error",
				  "random generator failed");
	seo_sha256_hex(out_key, strlen(out_key), out_hash);
	*created_at = seo_now_ms();
	snprintf(now, sizeof(now), "%lld", (long long)*created_at);
	params[0] = out_hash;
	params[1] = workspace_id;
	params[2] = user_id;
	params[3] = name;
	params[4] = out_key + strlen(out_key) - 4;
	params[5] = now;
	rc = acct__exec(c, ACCT_Q_KEY_INSERT, 6, params, NULL, err);
	/* Every replica forgets the hash when this commits: one that was
	 * tried as an unknown key a moment ago must not hide the new key. */
	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_NOTIFY, 1, &params[0], NULL, err);
	if (rc != 0)
		return rc;
	return mail_key(c, workspace_id, email, MAIL_KEY_CREATED, name,
			params[4], err);
}

/* Members manage only their own keys; the rest may not manage any. */
static int keys_role(const acct_caller *who, const char **only_user,
		     acct_err *err)
{
	if ((who->role & ACCT_ROLES_STAFF) == 0)
		return acct__fail(err, SEO_EDENIED, "capability_missing",
				  "role %s may not manage api keys",
				  acct_role_name(who->role));
	*only_user = who->role == ACCT_ROLE_MEMBER ? who->user_id : NULL;
	return 0;
}

int acct_list_keys(acct_service *a, const acct_caller *who, seo_arena *arena,
		   Seo__Account__V1__ListKeysResponse **out, acct_err *err)
{
	const char *params[2] = {who->workspace_id, NULL};
	int rc = keys_role(who, &params[1], err);

	if (rc != 0)
		return rc;
	return acct__query_list(a, ACCT_Q_KEY_LIST, 2, params, arena,
				&seo__account__v1__list_keys_response__descriptor,
				"keys", (ProtobufCMessage **)out, err);
}

/* The user's address and whether it was removed, inside a transaction. */
static int user_email(seo_pg_conn *c, const char *workspace_id,
		      const char *user_id, PGresult **res, acct_err *err)
{
	const char *params[2] = {user_id, workspace_id};
	int rc = acct__exec(c, ACCT_Q_USER_EMAIL, 2, params, res, err);

	if (rc == 0 && PQntuples(*res) == 0) {
		PQclear(*res);
		*res = NULL;
		rc = acct__fail(err, SEO_ENOTFOUND, "user_not_found",
				"user not found");
	}
	return rc;
}

static const char *email_of(PGresult *r)
{
	return PQgetisnull(r, 0, 0) ? NULL : PQgetvalue(r, 0, 0);
}

/* Refuses a new key when the workspace already has ACCT_MAX_ACTIVE_KEYS
 * active ones; inside the creating transaction, which it serialises per
 * workspace. */
static int key_room(seo_pg_conn *c, const char *workspace_id, acct_err *err)
{
	const char *params[1] = {workspace_id};
	PGresult *r = NULL;
	int rc = acct__exec(c, ACCT_Q_KEY_LOCK, 1, params, NULL, err);

	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_KEY_ACTIVE, 1, params, &r, err);
	if (rc == 0 && atoll(PQgetvalue(r, 0, 0)) >= ACCT_MAX_ACTIVE_KEYS)
		rc = acct__fail(err, SEO_EDENIED, "key_limit_reached",
				"the workspace already has %d active api keys; "
				"revoke one first", ACCT_MAX_ACTIVE_KEYS);
	PQclear(r);
	return rc;
}

int acct_create_key(acct_service *a, const acct_caller *who, const char *name,
		    seo_arena *arena, Seo__Account__V1__CreatedKey **out,
		    acct_err *err)
{
	Seo__Account__V1__CreatedKey *resp;
	const char *only_user;
	char key[ACCT_KEY_LEN], hash[ACCT_HASH_LEN];
	seo_pg_conn *c = NULL;
	PGresult *u = NULL;
	int64_t created_at;
	int rc = keys_role(who, &only_user, err);

	if (rc != 0)
		return rc;
	if (name == NULL || name[0] == '\0')
		name = DEFAULT_KEY_NAME;
	if (strlen(name) > KEY_NAME_MAX)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "key name is longer than %d bytes",
				  KEY_NAME_MAX);
	rc = acct__pool_begin(a->pool, &c, err);
	if (rc != 0)
		return rc;
	rc = user_email(c, who->workspace_id, who->user_id, &u, err);
	if (rc == 0 && strcmp(PQgetvalue(u, 0, 1), "t") == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "user_not_found",
				"user not found");
	if (rc == 0)
		rc = key_room(c, who->workspace_id, err);
	if (rc == 0)
		rc = acct__key_insert(c, who->workspace_id, who->user_id,
				      email_of(u), name, key, hash, &created_at,
				      err);
	if (rc == 0)
		rc = acct__commit(c, err);
	else
		seo_pg_rollback(c);
	if (rc != 0)
		goto out;
	/* Here at once, not when our own NOTIFY comes back. */
	acct__keycache_evict_key(&a->cache, hash);
	resp = seo_arena_alloc(arena, sizeof(*resp));
	if (resp == NULL)
		goto oom;
	seo__account__v1__created_key__init(resp);
	resp->id = seo_arena_strdup(arena, hash);
	resp->key = seo_arena_strdup(arena, key);
	resp->name = seo_arena_strdup(arena, name);
	resp->created_at = created_at;
	if (resp->id == NULL || resp->key == NULL || resp->name == NULL)
		goto oom;
	*out = resp;
	goto out;
oom:
	rc = acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
out:
	/* The raw key leaves only through the answer. */
	explicit_bzero(key, sizeof(key));
	PQclear(u);
	seo_pg_pool_put(a->pool, c);
	return rc;
}

int acct_revoke_key(acct_service *a, const acct_caller *who, const char *key_id,
		    acct_err *err)
{
	const char *params[4];
	char now[24];
	seo_pg_conn *c = NULL;
	PGresult *k = NULL, *u = NULL;
	int rc = keys_role(who, &params[2], err);

	if (rc != 0)
		return rc;
	if (!acct__is_key_hash(key_id))
		return acct__fail(err, SEO_ENOTFOUND, "key_not_found",
				  "api key not found");
	snprintf(now, sizeof(now), "%lld", (long long)seo_now_ms());
	params[0] = key_id;
	params[1] = who->workspace_id;
	params[3] = now;
	rc = acct__pool_begin(a->pool, &c, err);
	if (rc != 0)
		return rc;
	rc = acct__exec(c, ACCT_Q_KEY_REVOKE, 4, params, &k, err);
	if (rc == 0 && PQntuples(k) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "key_not_found",
				"api key not found");
	if (rc == 0)
		rc = user_email(c, who->workspace_id, PQgetvalue(k, 0, 0), &u, err);
	if (rc == 0)
		rc = mail_key(c, who->workspace_id, email_of(u), MAIL_KEY_REVOKED,
			      PQgetvalue(k, 0, 1), PQgetvalue(k, 0, 2), err);
	/* Other replicas evict when this commits. */
	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_NOTIFY, 1, &key_id, NULL, err);
	if (rc == 0)
		rc = acct__commit(c, err);
	else
		seo_pg_rollback(c);
	if (rc != 0)
		goto out;
	/* After the commit: a lookup racing with us then reads the
	 * revocation, or its cache insert is refused by the new epoch. */
	acct__keycache_evict_key(&a->cache, key_id);
	acct__limiter_forget(&a->limiter, key_id);
out:
	PQclear(k);
	PQclear(u);
	seo_pg_pool_put(a->pool, c);
	/* The answer leaves once every gateway watching forgot the key (the
	 * connection already back in the pool: this may take 2 s). */
	if (rc == 0)
		acct__watch_key(&a->watch, key_id, 1);
	return rc;
}
