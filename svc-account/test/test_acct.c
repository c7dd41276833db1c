/*
 * test_acct: the account library and seoctl against a real PostgreSQL.
 *
 * SEO_TEST_PG_URL names a server; this program creates its own database
 * there (acct_test_<pid>, dropped at the end) so that test programs can run
 * in parallel. Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "acct_testdb.h"
#include "acct.h"
#include "test_pgdb.h"
#include "seo/util.h"

#define COST 3
#define CALLS 200
#define COVERED 37
#define REMAINDER 2

static test_pgdb pgdb;       /* our database on SEO_TEST_PG_URL */
static char migrations[PATH_MAX];
static PGconn *db;           /* the test's own connection */
static acct_service *svc;    /* rate limit off */

/* ---- helpers ---------------------------------------------------------- */

/* The first value of `sql` as an integer (acct_testdb.h). */
#define q_int(...) acct_testdb_int(db, __VA_ARGS__)

static void hash_of(const char *key, char out[ACCT_HASH_LEN])
{
	seo_sha256_hex(key, strlen(key), out);
}

static uint64_t notifications(void);

/* Waits (at most 5 s) for the service to have more than `seen`
 * notifications, then for 50 ms without one: a key created announces
 * itself (NOTIFY), and its eviction must not land in the middle of a test
 * that counts lookups or notifications. */
static void settle(uint64_t seen)
{
	uint64_t n;

	for (int i = 0; i < 500 && notifications() <= seen; i++)
		usleep(10000);
	do {
		n = notifications();
		usleep(50000);
	} while (notifications() != n);
}

static void new_workspace(int64_t credits, const char *email, acct_new_user *u)
{
	acct_err err;
	uint64_t seen = notifications();

	CU_ASSERT_FATAL(acct_workspace_create(db, "Test", email, credits, u,
					      &err) == 0);
	settle(seen);
}

static void new_user(const acct_new_user *ws, const char *email,
		     acct_role role, acct_new_user *u)
{
	acct_err err;
	uint64_t seen = notifications();

	CU_ASSERT_FATAL(acct_user_add(db, ws->workspace_id, email, role, u,
				      &err) == 0);
	settle(seen);
}

/* The caller identity the gateway would send for `u`'s first key. */
static acct_caller caller(const acct_new_user *u, acct_role role,
			  char hash[ACCT_HASH_LEN])
{
	hash_of(u->api_key, hash);
	return (acct_caller){u->workspace_id, u->user_id, hash, role};
}

static int authz(acct_service *s, const char *key, int64_t cost,
		 unsigned roles, int rate_limited, acct_authorization *out,
		 acct_err *err)
{
	char hash[ACCT_HASH_LEN];
	acct_authorize_req req = {
		.key_hash = hash,
		.endpoint = "backlinks",
		.cost = cost,
		.roles_allowed = roles,
		.usage_domain = "example.com",
		.rate_limited = rate_limited,
	};

	hash_of(key, hash);
	return acct_authorize(s, &req, out, err);
}

/* The refusal code of an authorization of `key`, or "ok". */
static const char *authz_code(acct_service *s, const char *key)
{
	static acct_err err;
	acct_authorization az;

	return authz(s, key, 0, 0, 0, &az, &err) == 0 ? "ok" : err.code;
}

/* Waits (at most 5 s) until authorizing `key` answers `code` ("ok" when
 * accepted): a NOTIFY from another connection travels asynchronously. */
static int wait_code(const char *key, const char *code)
{
	for (int i = 0; i < 500; i++) {
		if (strcmp(authz_code(svc, key), code) == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int wait_refused(const char *key)
{
	return wait_code(key, "invalid_api_key");
}

static uint64_t notifications(void)
{
	acct_stats st;

	acct_get_stats(svc, &st);
	return st.notifications;
}

static int is_key(const char *key)
{
	return strlen(key) == ACCT_KEY_LEN - 1 &&
	       strncmp(key, ACCT_KEY_PREFIX, 4) == 0 &&
	       strspn(key + 4, SEO_ALPHANUM) == ACCT_KEY_RANDOM;
}

/* ---- migrations ------------------------------------------------------- */

typedef struct migrator {
	int rc;
	int applied;
} migrator;

static void *migrate_thread(void *arg)
{
	migrator *m = arg;
	PGconn *c = PQconnectdb(pgdb.url);
	acct_err err;

	m->rc = PQstatus(c) == CONNECTION_OK ? acct_migrate(c, migrations,
							    &m->applied, &err)
					     : -1;
	if (m->rc != 0)
		fprintf(stderr, "migrate: %s\n", err.message);
	PQfinish(c);
	return NULL;
}

static int count_migration_files(void)
{
	DIR *d = opendir(migrations);
	struct dirent *e;
	int n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".sql") != NULL)
			n++;
	if (d != NULL)
		closedir(d);
	return n;
}

static void test_migrations_concurrent_and_idempotent(void)
{
	migrator m[4] = {{0, 0}};
	pthread_t t[4];
	int total = 0, files = count_migration_files();
	acct_err err;
	int applied = -1;

	CU_ASSERT_FATAL(files > 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, migrate_thread, &m[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(m[i].rc, 0);
		total += m[i].applied;
	}
	CU_ASSERT_EQUAL(total, files);
	CU_ASSERT_EQUAL(acct_migrate(db, migrations, &applied, &err), 0);
	CU_ASSERT_EQUAL(applied, 0);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM schema_migrations", NULL), files);
}

/* ---- keys ------------------------------------------------------------- */

static void test_key_create_hash_lookup(void)
{
	acct_new_user ws;
	acct_authorization az;
	acct_stats before, after;
	acct_err err;
	char hash[ACCT_HASH_LEN];
	acct_caller who;
	Seo__Account__V1__CreatedKey *k1, *k2;
	Seo__Account__V1__ListKeysResponse *list;
	seo_arena *arena = seo_arena_new(0);

	new_workspace(0, "keys@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	CU_ASSERT(is_key(ws.api_key));
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM api_keys WHERE id = $1 AND "
			      "last_four = right($2, 4) AND user_id = $3",
			      hash, ws.api_key, ws.user_id), 1);
	/* Only the hash is stored. */
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM api_keys k WHERE "
			      "strpos(k::text, $1) > 0", ws.api_key, NULL), 0);

	acct_get_stats(svc, &before);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 0, 0, 0, &az, &err), 0);
	CU_ASSERT_STRING_EQUAL(az.workspace_id, ws.workspace_id);
	CU_ASSERT_STRING_EQUAL(az.user_id, ws.user_id);
	CU_ASSERT_STRING_EQUAL(az.key_id, hash);
	CU_ASSERT_EQUAL(az.role, ACCT_ROLE_OWNER);
	CU_ASSERT_STRING_EQUAL(az.charge_id, "");
	CU_ASSERT_EQUAL(az.credits_remaining, 0);
	CU_ASSERT_EQUAL(az.rate.limit, 0);
	/* The second lookup is served by the cache. */
	CU_ASSERT_EQUAL(authz(svc, ws.api_key, 0, 0, 0, &az, &err), 0);
	acct_get_stats(svc, &after);
	CU_ASSERT_EQUAL(after.key_db_lookups, before.key_db_lookups + 1);

	CU_ASSERT_STRING_EQUAL(authz_code(svc, "seo_unknownunknownunknownunknown1"),
			       "invalid_api_key");
	{
		acct_authorize_req bad = {.key_hash = "not-a-hash"};

		CU_ASSERT(acct_authorize(svc, &bad, &az, &err) != 0);
		CU_ASSERT_STRING_EQUAL(err.code, "invalid_api_key");
	}

	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, NULL, arena, &k1, &err), 0);
	CU_ASSERT_STRING_EQUAL(k1->name, "Default");
	CU_ASSERT(is_key(k1->key));
	hash_of(k1->key, hash);
	CU_ASSERT_STRING_EQUAL(k1->id, hash);
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, "ci", arena, &k2, &err), 0);
	CU_ASSERT_STRING_EQUAL(k2->name, "ci");
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k2->key), "ok");
	/* One mail per key created through the API, to the account email. */
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM outbox WHERE workspace_id = $1 "
			      "AND to_addr = 'keys@example.com'",
			      ws.workspace_id, NULL), 3);

	CU_ASSERT_EQUAL_FATAL(acct_list_keys(svc, &who, arena, &list, &err), 0);
	CU_ASSERT_EQUAL_FATAL(list->n_keys, 3);
	CU_ASSERT_STRING_EQUAL(list->keys[0]->id, k2->id);
	CU_ASSERT_STRING_EQUAL(list->keys[0]->last_four, k2->key + 32);
	CU_ASSERT_STRING_EQUAL(list->keys[1]->id, k1->id);
	CU_ASSERT(list->keys[0]->created_at >= list->keys[1]->created_at);
	seo_arena_free(arena);
}

/* A workspace holds at most ACCT_MAX_ACTIVE_KEYS active keys (its first
 * one included); one more is refused, and revoking one makes room. */
static void test_key_cap(void)
{
	acct_new_user ws;
	acct_err err;
	char hash[ACCT_HASH_LEN], last[ACCT_HASH_LEN];
	acct_caller who;
	Seo__Account__V1__CreatedKey *k = NULL;
	seo_arena *arena = seo_arena_new(0);

	new_workspace(0, "cap@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	for (int i = 1; i < ACCT_MAX_ACTIVE_KEYS; i++)
		CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, "k", arena, &k, &err), 0);
	hash_of(k->key, last);
	CU_ASSERT_EQUAL(acct_create_key(svc, &who, "one more", arena, &k, &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "key_limit_reached");
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM api_keys WHERE workspace_id = $1",
			      ws.workspace_id, NULL), ACCT_MAX_ACTIVE_KEYS);
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &who, last, &err), 0);
	CU_ASSERT_EQUAL(acct_create_key(svc, &who, "room again", arena, &k, &err), 0);
	seo_arena_free(arena);
}

static void test_revocation_is_immediate(void)
{
	acct_new_user ws;
	acct_err err;
	char hash[ACCT_HASH_LEN], k2hash[ACCT_HASH_LEN];
	acct_caller who;
	Seo__Account__V1__CreatedKey *k2;
	seo_arena *arena = seo_arena_new(0);

	new_workspace(0, "revoke@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, "two", arena, &k2, &err), 0);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k2->key), "ok");
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k2->key), "ok");
	hash_of(k2->key, k2hash);
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &who, k2hash, &err), 0);
	/* The very next call, with the key cached a moment ago. */
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k2->key), "invalid_api_key");
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &who, k2hash, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "key_not_found");
	CU_ASSERT(acct_revoke_key(svc, &who, "nope", &err) != 0);
	CU_ASSERT_STRING_EQUAL(err.code, "key_not_found");
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM outbox WHERE workspace_id = $1 "
			      "AND subject LIKE '%revoked%'", ws.workspace_id, NULL), 1);
	/* Revoking the calling key is allowed and final. */
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &who, hash, &err), 0);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "invalid_api_key");
	seo_arena_free(arena);
}

static void test_revocation_through_notify(void)
{
	acct_new_user ws, member;
	acct_err err;
	char hash[ACCT_HASH_LEN], mhash[ACCT_HASH_LEN];
	acct_caller who;
	Seo__Account__V1__User *me;
	seo_arena *arena = seo_arena_new(0);
	uint64_t seen;

	new_workspace(0, "notify@example.com", &ws);
	hash_of(ws.api_key, hash);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "ok");
	/* Changed behind the service's back: the cache still answers... */
	q_int("UPDATE api_keys SET revoked_at = 1 WHERE id = $1", hash, NULL);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "ok");
	/* ...until another process announces it. */
	seen = notifications();
	q_int("SELECT pg_notify('seo_auth', $1)", hash, NULL);
	CU_ASSERT(wait_refused(ws.api_key));
	CU_ASSERT(notifications() > seen);

	/* A removed user's keys stop at once, and GetMe no longer finds it. */
	new_workspace(0, "notify2@example.com", &ws);
	new_user(&ws, "gone@example.com", ACCT_ROLE_MEMBER, &member);
	who = caller(&member, ACCT_ROLE_MEMBER, mhash);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, member.api_key), "ok");
	CU_ASSERT_EQUAL(acct_user_remove(db, member.user_id, &err), 0);
	CU_ASSERT(wait_refused(member.api_key));
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "ok");
	CU_ASSERT_EQUAL(acct_get_me(svc, &who, arena, &me, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "user_not_found");
	CU_ASSERT_EQUAL(acct_user_remove(db, member.user_id, &err), 0);
	CU_ASSERT(acct_user_remove(db, "usr_nobody", &err) != 0);
	CU_ASSERT_STRING_EQUAL(err.code, "user_not_found");
	seo_arena_free(arena);
}

/* An unknown key costs one query, then none for a while; a key created
 * under that hash is not hidden by it: the creator's NOTIFY (another
 * replica, seoctl) evicts it, and every creation sends one. */
static void test_unknown_keys(void)
{
	const char *key = "seo_UnknownFirstCreatedRightAfter123";
	acct_new_user ws;
	acct_stats before, after;
	acct_err err;
	char hash[ACCT_HASH_LEN], own[ACCT_HASH_LEN];
	acct_caller who;
	Seo__Account__V1__CreatedKey *k;
	seo_arena *arena = seo_arena_new(0);
	uint64_t seen;

	CU_ASSERT_FATAL(is_key(key));
	new_workspace(0, "unknown@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, own);
	acct_get_stats(svc, &before);
	for (int i = 0; i < 5; i++)
		CU_ASSERT_STRING_EQUAL(authz_code(svc, key), "invalid_api_key");
	acct_get_stats(svc, &after);
	CU_ASSERT_EQUAL(after.key_db_lookups, before.key_db_lookups + 1);

	/* Created behind the service's back without the NOTIFY: hidden... */
	hash_of(key, hash);
	q_int("INSERT INTO api_keys (id, workspace_id, user_id, name, last_four, "
	      "created_at) SELECT $1, workspace_id, id, 'probe', 'ter1', 0 FROM "
	      "users WHERE id = $2", hash, ws.user_id, NULL);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, key), "invalid_api_key");
	/* ...until the NOTIFY that acct__key_insert sends arrives. */
	q_int("SELECT pg_notify('seo_auth', $1)", hash, NULL);
	CU_ASSERT(wait_code(key, "ok"));

	seen = notifications();
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, "n", arena, &k, &err), 0);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k->key), "ok");
	settle(seen);
	CU_ASSERT(notifications() > seen);
	seo_arena_free(arena);
}

/* ---- roles ------------------------------------------------------------ */

static int has_key(const Seo__Account__V1__ListKeysResponse *l, const char *id)
{
	for (size_t i = 0; i < l->n_keys; i++)
		if (strcmp(l->keys[i]->id, id) == 0)
			return 1;
	return 0;
}

static void test_role_rules(void)
{
	acct_new_user ws, admin, m1, m2, client, other;
	char h_ws[ACCT_HASH_LEN], h_admin[ACCT_HASH_LEN], h_m1[ACCT_HASH_LEN];
	char h_m2[ACCT_HASH_LEN], h_client[ACCT_HASH_LEN], h_other[ACCT_HASH_LEN];
	acct_caller owner_c, admin_c, m1_c, m2_c, client_c, other_c;
	Seo__Account__V1__ListKeysResponse *list;
	Seo__Account__V1__CreatedKey *mine, *theirs;
	Seo__Account__V1__User *me;
	Seo__Account__V1__ListUsageResponse *usage;
	seo_arena *arena = seo_arena_new(0);
	acct_authorization az;
	acct_err err;
	int64_t credits;

	new_workspace(40, "owner@roles.example", &ws);
	new_user(&ws, "admin@roles.example", ACCT_ROLE_ADMIN, &admin);
	new_user(&ws, "m1@roles.example", ACCT_ROLE_MEMBER, &m1);
	new_user(&ws, "m2@roles.example", ACCT_ROLE_MEMBER, &m2);
	new_user(&ws, "client@roles.example", ACCT_ROLE_CLIENT, &client);
	new_workspace(7, "other@roles.example", &other);
	owner_c = caller(&ws, ACCT_ROLE_OWNER, h_ws);
	admin_c = caller(&admin, ACCT_ROLE_ADMIN, h_admin);
	m1_c = caller(&m1, ACCT_ROLE_MEMBER, h_m1);
	m2_c = caller(&m2, ACCT_ROLE_MEMBER, h_m2);
	client_c = caller(&client, ACCT_ROLE_CLIENT, h_client);
	other_c = caller(&other, ACCT_ROLE_OWNER, h_other);

	/* The gateway's mask. */
	CU_ASSERT_EQUAL(authz(svc, m1.api_key, 0, ACCT_ROLE_OWNER | ACCT_ROLE_ADMIN,
			      0, &az, &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "capability_missing");
	CU_ASSERT_EQUAL(authz(svc, client.api_key, 1, ACCT_ROLES_STAFF, 0, &az,
			      &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "capability_missing");
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 40);
	CU_ASSERT_EQUAL(authz(svc, client.api_key, 0, 0, 0, &az, &err), 0);
	CU_ASSERT_EQUAL(az.role, ACCT_ROLE_CLIENT);

	/* Credits. */
	CU_ASSERT_EQUAL(acct_get_credits(svc, &m1_c, &credits, &err), 0);
	CU_ASSERT_EQUAL(credits, 40);
	CU_ASSERT_EQUAL(acct_get_credits(svc, &client_c, &credits, &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "capability_missing");
	CU_ASSERT_EQUAL(acct_get_credits(svc, &other_c, &credits, &err), 0);
	CU_ASSERT_EQUAL(credits, 7);
	CU_ASSERT_EQUAL(acct_list_usage(svc, &client_c, NULL, arena, &usage, &err),
			SEO_EDENIED);

	/* Me: the client sees no credits. */
	CU_ASSERT_EQUAL_FATAL(acct_get_me(svc, &owner_c, arena, &me, &err), 0);
	CU_ASSERT_STRING_EQUAL(me->id, ws.user_id);
	CU_ASSERT_STRING_EQUAL(me->email, "owner@roles.example");
	CU_ASSERT(me->has_credits && me->credits == 40);
	CU_ASSERT(me->created_at > 1600000000000LL);
	CU_ASSERT_EQUAL_FATAL(acct_get_me(svc, &client_c, arena, &me, &err), 0);
	CU_ASSERT(!me->has_credits);
	CU_ASSERT_STRING_EQUAL(me->email, "client@roles.example");

	/* Keys: members see and revoke only their own. */
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &m1_c, "mine", arena, &mine, &err), 0);
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &m2_c, "theirs", arena, &theirs, &err), 0);
	CU_ASSERT_EQUAL(acct_create_key(svc, &client_c, NULL, arena, &mine, &err),
			SEO_EDENIED);
	CU_ASSERT_EQUAL_FATAL(acct_list_keys(svc, &m1_c, arena, &list, &err), 0);
	CU_ASSERT(has_key(list, mine->id) && has_key(list, h_m1));
	CU_ASSERT(!has_key(list, theirs->id) && !has_key(list, h_ws));
	CU_ASSERT_EQUAL(acct_list_keys(svc, &client_c, arena, &list, &err), SEO_EDENIED);
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &m1_c, theirs->id, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "key_not_found");
	CU_ASSERT_STRING_EQUAL(authz_code(svc, theirs->key), "ok");
	CU_ASSERT_EQUAL_FATAL(acct_list_keys(svc, &admin_c, arena, &list, &err), 0);
	CU_ASSERT(has_key(list, mine->id) && has_key(list, theirs->id) &&
		  has_key(list, h_ws) && has_key(list, h_client));
	CU_ASSERT(!has_key(list, h_other));
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &admin_c, theirs->id, &err), 0);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, theirs->key), "invalid_api_key");
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &client_c, mine->id, &err), SEO_EDENIED);

	/* Another workspace's key is absent. */
	CU_ASSERT_EQUAL(acct_revoke_key(svc, &owner_c, h_other, &err), SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "key_not_found");
	CU_ASSERT_STRING_EQUAL(authz_code(svc, other.api_key), "ok");
	seo_arena_free(arena);
}

/* ---- the rate limiter ------------------------------------------------- */

static int64_t fake_ms;

static int64_t fake_clock(void *ud)
{
	(void)ud;
	return fake_ms;
}

static acct_service *limited(long long per_min)
{
	acct_options opt;
	acct_service *s = NULL;
	acct_err err;

	acct_options_init(&opt);
	opt.pg_url = pgdb.url;
	opt.pool_size = 2;
	opt.rate_per_min = per_min;
	opt.clock = fake_clock;
	CU_ASSERT(acct_new(&opt, &s, &err) == 0);
	return s;
}

static void test_rate_limiter(void)
{
	acct_new_user ws, ws2;
	acct_authorization az;
	acct_err err;
	acct_service *s = limited(60);

	CU_ASSERT_FATAL(s != NULL);
	fake_ms = 1000000;
	new_workspace(0, "rate@example.com", &ws);
	new_workspace(0, "rate2@example.com", &ws2);
	for (int i = 0; i < 60; i++) {
		CU_ASSERT_EQUAL_FATAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
		CU_ASSERT_EQUAL(az.rate.limit, 60);
		CU_ASSERT_EQUAL(az.rate.remaining, 59 - i);
		CU_ASSERT_EQUAL(az.rate.reset_s, i + 1);
	}
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(err.code, "rate_limited");
	CU_ASSERT_EQUAL(az.retry_after, 1);
	/* Calls not counted pass and only report. */
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 0, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 0);
	/* Other keys have their own bucket. */
	CU_ASSERT_EQUAL(authz(s, ws2.api_key, 0, 0, 1, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 59);
	/* One token a second. */
	fake_ms += 999;
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), SEO_EDENIED);
	CU_ASSERT_EQUAL(az.retry_after, 1);
	fake_ms += 1;
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 0);
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), SEO_EDENIED);
	/* A minute refills all. */
	fake_ms += 60000;
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 59);
	CU_ASSERT_EQUAL(az.rate.reset_s, 1);
	acct_free(s);

	/* 5 a minute: one token every 12 s. */
	s = limited(5);
	CU_ASSERT_FATAL(s != NULL);
	for (int i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.reset_s, 60);
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), SEO_EDENIED);
	CU_ASSERT_EQUAL(az.retry_after, 12);
	fake_ms += 11001;
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), SEO_EDENIED);
	CU_ASSERT_EQUAL(az.retry_after, 1);
	acct_free(s);
}

/* An ask alone (rate_want without rate_limited, nothing debited: a
 * gateway asking its next grant ahead) takes tokens and counts no call of
 * the key; near empty it gets none, and it is never refused. */
static void test_rate_ask_alone(void)
{
	acct_new_user ws;
	acct_authorization az;
	acct_err err;
	char hash[ACCT_HASH_LEN];
	acct_authorize_req ask = {.key_hash = hash, .no_balance = 1,
				  .rate_want = 50};
	acct_service *s = limited(600);
	int calls = 0;

	CU_ASSERT_FATAL(s != NULL);
	fake_ms = 5000000;
	new_workspace(0, "rateask@example.com", &ws);
	hash_of(ws.api_key, hash);
	CU_ASSERT_EQUAL(acct_authorize(s, &ask, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.granted, 50);
	CU_ASSERT_EQUAL(az.rate.remaining, 550);
	CU_ASSERT_EQUAL(az.charge_id[0], '\0');
	/* A call of the key is counted as before. */
	CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 549);
	while (az.rate.remaining >= 16 && calls++ < 600)
		CU_ASSERT_EQUAL(authz(s, ws.api_key, 0, 0, 1, &az, &err), 0);
	/* Near empty: none, and nothing counted. */
	CU_ASSERT_EQUAL(acct_authorize(s, &ask, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.granted, 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 15);
	while (authz(s, ws.api_key, 0, 0, 1, &az, &err) == 0 && calls++ < 600)
		;
	CU_ASSERT_STRING_EQUAL(err.code, "rate_limited");
	CU_ASSERT_EQUAL(acct_authorize(s, &ask, &az, &err), 0);
	CU_ASSERT_EQUAL(az.rate.granted, 0);
	CU_ASSERT_EQUAL(az.rate.remaining, 0);
	acct_free(s);
}

/* ---- group commit ----------------------------------------------------- */

typedef struct debit_call {
	pthread_barrier_t *go;
	const char *key;
	int rc;
	const char *code;
	acct_authorization az;
} debit_call;

static void *debit_thread(void *arg)
{
	debit_call *c = arg;
	acct_err err;

	pthread_barrier_wait(c->go);
	c->rc = authz(svc, c->key, COST, 0, 0, &c->az, &err);
	c->code = c->rc != 0 ? err.code : NULL;
	return NULL;
}

static void test_group_commit(void)
{
	static debit_call calls[CALLS];
	pthread_t t[CALLS];
	pthread_barrier_t go;
	acct_new_user ws;
	acct_stats before, after;
	int ok = 0, insufficient = 0;
	int64_t lowest = -1;
	char cost[24];

	snprintf(cost, sizeof(cost), "%d", COST);
	new_workspace(COVERED * COST + REMAINDER, "batch@example.com", &ws);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "ok");
	acct_get_stats(svc, &before);
	pthread_barrier_init(&go, NULL, CALLS);
	for (int i = 0; i < CALLS; i++) {
		calls[i] = (debit_call){.go = &go, .key = ws.api_key};
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, debit_thread, &calls[i]) == 0);
	}
	for (int i = 0; i < CALLS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	acct_get_stats(svc, &after);

	for (int i = 0; i < CALLS; i++) {
		if (calls[i].rc == 0) {
			ok++;
			CU_ASSERT(strncmp(calls[i].az.charge_id, "chg_", 4) == 0);
			if (lowest < 0 || calls[i].az.credits_remaining < lowest)
				lowest = calls[i].az.credits_remaining;
		} else if (strcmp(calls[i].code, "insufficient_credits") == 0) {
			insufficient++;
		}
	}
	CU_ASSERT_EQUAL(ok, COVERED);
	CU_ASSERT_EQUAL(insufficient, CALLS - COVERED);
	CU_ASSERT_EQUAL(lowest, REMAINDER);
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), REMAINDER);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      ws.workspace_id, NULL), REMAINDER);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE workspace_id = $1 "
			      "AND credits_used = $2 AND endpoint = 'backlinks' "
			      "AND domain = 'example.com'",
			      ws.workspace_id, cost, NULL),
			COVERED);
	CU_ASSERT_EQUAL(q_int("SELECT count(DISTINCT ref) FROM ledger WHERE "
			      "workspace_id = $1 AND reason = 'charge'",
			      ws.workspace_id, NULL), COVERED);
	/* Calls shared commits. */
	CU_ASSERT_EQUAL(after.ledger_ops - before.ledger_ops, CALLS);
	CU_ASSERT(after.ledger_batches - before.ledger_batches < CALLS);
	printf("\n    %d debits in %llu ledger transactions ", CALLS,
	       (unsigned long long)(after.ledger_batches - before.ledger_batches));
}

/* ---- refunds ---------------------------------------------------------- */

typedef struct refund_call {
	pthread_barrier_t *go;
	const char *charge;
	int rc;
} refund_call;

static void *refund_thread(void *arg)
{
	refund_call *c = arg;
	int64_t remaining, used;
	acct_err err;

	pthread_barrier_wait(c->go);
	c->rc = acct_refund(svc, NULL, c->charge, 1, &remaining, &used, &err);
	return NULL;
}

static void test_refunds(void)
{
	acct_new_user ws, other;
	acct_authorization a, b, c, o;
	char hash[ACCT_HASH_LEN], ohash[ACCT_HASH_LEN];
	acct_caller who, other_c;
	refund_call calls[10];
	pthread_t t[10];
	pthread_barrier_t go;
	int64_t remaining, used;
	acct_err err;

	new_workspace(20, "refund@example.com", &ws);
	new_workspace(5, "refund2@example.com", &other);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	other_c = caller(&other, ACCT_ROLE_OWNER, ohash);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 4, 0, 0, &a, &err), 0);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 3, 0, 0, &b, &err), 0);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 5, 0, 0, &c, &err), 0);
	CU_ASSERT_EQUAL(c.credits_remaining, 8);
	CU_ASSERT_EQUAL_FATAL(authz(svc, other.api_key, 2, 0, 0, &o, &err), 0);

	/* Full, then again: the second gives nothing. */
	CU_ASSERT_EQUAL(acct_refund(svc, &who, a.charge_id, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 12);
	CU_ASSERT_EQUAL(used, 0);
	CU_ASSERT_EQUAL(acct_refund(svc, &who, a.charge_id, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 12);
	CU_ASSERT_EQUAL(used, 0);
	CU_ASSERT_EQUAL(acct_refund(svc, &who, a.charge_id, 2, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 12);
	/* Partial, then more than is left: capped. */
	CU_ASSERT_EQUAL(acct_refund(svc, &who, b.charge_id, 1, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 13);
	CU_ASSERT_EQUAL(used, 2);
	CU_ASSERT_EQUAL(acct_refund(svc, &who, b.charge_id, 50, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 15);
	CU_ASSERT_EQUAL(used, 0);
	/* Errors. */
	CU_ASSERT_EQUAL(acct_refund(svc, &who, "chg_unknown", 0, &remaining, &used, &err),
			SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "not_found");
	CU_ASSERT_EQUAL(acct_refund(svc, &who, o.charge_id, 0, &remaining, &used, &err),
			SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(acct_refund(svc, &who, c.charge_id, -1, &remaining, &used, &err),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	CU_ASSERT_EQUAL(acct_refund(svc, &other_c, o.charge_id, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 5);

	/* Ten concurrent refunds of 1 on a charge of 5 give back exactly 5. */
	pthread_barrier_init(&go, NULL, 10);
	for (int i = 0; i < 10; i++) {
		calls[i] = (refund_call){.go = &go, .charge = c.charge_id};
		pthread_create(&t[i], NULL, refund_thread, &calls[i]);
	}
	for (int i = 0; i < 10; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(calls[i].rc, 0);
	}
	pthread_barrier_destroy(&go);

	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 20);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 20);
	CU_ASSERT_EQUAL(q_int("SELECT sum(credits_used) FROM usage WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 0);
	CU_ASSERT_EQUAL(q_int("SELECT sum(charged) FROM usage WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 12);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM ledger WHERE ref = $1 AND reason = 'refund'",
			      a.charge_id, NULL), 1);
}

/* ---- batches through the pipeline ------------------------------------ */

/* One ledger call on its own thread: a debit (Authorize) of `cost`, a
 * Charge of `cost` at `endpoint`, or a refund of `charge`. */
typedef struct ledger_call {
	enum { CALL_DEBIT, CALL_CHARGE, CALL_REFUND } kind;
	const char *key;          /* CALL_DEBIT */
	const acct_caller *who;   /* CALL_CHARGE, CALL_REFUND */
	const char *endpoint;     /* CALL_CHARGE */
	const char *charge;       /* CALL_REFUND */
	int64_t cost;             /* CALL_REFUND: the amount, 0 = all */
	int rc;
	char code[32];
	int64_t remaining, used;
} ledger_call;

static void *ledger_thread(void *arg)
{
	ledger_call *c = arg;
	acct_authorization az;
	char charge[ACCT_ID_LEN];
	acct_err err;

	switch (c->kind) {
	case CALL_DEBIT:
		c->rc = authz(svc, c->key, c->cost, 0, 0, &az, &err);
		c->remaining = az.credits_remaining;
		break;
	case CALL_CHARGE:
		c->rc = acct_charge(svc, c->who, NULL, c->endpoint, c->cost, NULL,
				    charge, &c->remaining, &err);
		break;
	case CALL_REFUND:
		c->rc = acct_refund(svc, c->who, c->charge, c->cost,
				    &c->remaining, &c->used, &err);
		break;
	}
	snprintf(c->code, sizeof(c->code), "%s", c->rc != 0 ? err.code : "ok");
	return NULL;
}

/* Waits (at most 10 s) until a backend of our database waits for a row
 * lock: the ledger's batch is then stuck behind the test's transaction. */
static int wait_lock_waiter(void)
{
	for (int i = 0; i < 1000; i++) {
		if (q_int("SELECT count(*) FROM pg_stat_activity WHERE "
			  "datname = current_database() AND wait_event_type = 'Lock'",
			  NULL) > 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/*
 * Runs calls[0] alone in a batch held back by a row lock of `workspace`,
 * while the other calls queue behind it; once the lock is released they
 * form the next batch, all together. Returns the batches written.
 */
static uint64_t run_held(const char *workspace, ledger_call *calls, int n)
{
	pthread_t t[16];
	acct_stats before, after;

	acct_get_stats(svc, &before);
	q_int("BEGIN", NULL);
	q_int("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", workspace, NULL);
	pthread_create(&t[0], NULL, ledger_thread, &calls[0]);
	CU_ASSERT(wait_lock_waiter());
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, ledger_thread, &calls[i]);
	/* All queued before the lock goes: one that came late would be a
	 * third batch (at most 10 s) */
	for (int i = 0; i < 1000; i++) {
		acct_get_stats(svc, &after);
		if (after.ledger_queued - before.ledger_queued >= (uint64_t)n)
			break;
		usleep(10000);
	}
	CU_ASSERT_EQUAL(after.ledger_queued - before.ledger_queued, (uint64_t)n);
	q_int("COMMIT", NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	acct_get_stats(svc, &after);
	CU_ASSERT_EQUAL(after.ledger_ops - before.ledger_ops, (uint64_t)n);
	return after.ledger_batches - before.ledger_batches;
}

/* A debit under an idempotency key: what a retry, the outcome report and
 * the reconcile job do with it. */
static int keyed_debit(const char *key, int64_t cost, const acct_call *call,
		       acct_authorization *out, acct_err *err)
{
	char hash[ACCT_HASH_LEN];
	acct_authorize_req req = {
		.key_hash = hash,
		.endpoint = "backlinks",
		.cost = cost,
		.call = *call,
	};

	hash_of(key, hash);
	return acct_authorize(svc, &req, out, err);
}

static void test_idempotent_debits_and_outcomes(void)
{
	acct_new_user ws;
	acct_authorization a, again, b, c;
	char hash[ACCT_HASH_LEN];
	acct_caller who;
	acct_call call = {"it-req-1", 60000, 0};
	int64_t remaining, used;
	acct_err err;

	new_workspace(20, "keyed@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 4, &call, &a, &err), 0);
	CU_ASSERT_EQUAL(a.credits_remaining, 16);
	/* The retry answers the first charge and debits nothing. */
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 4, &call, &again, &err), 0);
	CU_ASSERT_STRING_EQUAL(again.charge_id, a.charge_id);
	CU_ASSERT_EQUAL(again.credits_remaining, 16);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE request_id = $1",
			      "it-req-1", NULL), 1);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE id = $1 AND outcome IS NULL",
			      a.charge_id, NULL), 1);

	/* The outcome: it cost 1, 3 come back, once. */
	CU_ASSERT_EQUAL(acct_settle(svc, &who, a.charge_id, 1, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 19);
	CU_ASSERT_EQUAL(used, 1);
	CU_ASSERT_EQUAL(acct_settle(svc, &who, a.charge_id, 0, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 19);
	CU_ASSERT_EQUAL(used, 1);
	CU_ASSERT_EQUAL(acct_settle(svc, &who, a.charge_id, -1, 0, &remaining, &used, &err),
			SEO_EINVAL);

	/* Earned in full: nothing comes back, the outcome is closed. */
	call.request_id = "it-req-2";
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 2, &call, &b, &err), 0);
	CU_ASSERT_EQUAL(acct_settle(svc, NULL, b.charge_id, 2, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(remaining, 17);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE id = $1 AND outcome = 'earned'",
			      b.charge_id, NULL), 1);

	/* A debit whose caller's deadline has passed is not written. */
	call = (acct_call){"it-req-3", 60000, seo_mono_ms() - 1};
	CU_ASSERT_EQUAL(keyed_debit(ws.api_key, 2, &call, &c, &err), SEO_ETIMEDOUT);
	CU_ASSERT_STRING_EQUAL(err.code, "service_unavailable");
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 17);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE request_id = 'it-req-3'", NULL), 0);
}

static void test_reconcile(void)
{
	acct_new_user ws;
	acct_authorization open1, open2, settled, plain;
	acct_call call = {"rc-open-1", 1000, 0};
	int64_t remaining, used, done;
	char why[256];
	acct_err err;

	new_workspace(30, "reconcile@example.com", &ws);
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 5, &call, &open1, &err), 0);
	call.request_id = "rc-open-2";
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 3, &call, &open2, &err), 0);
	call.request_id = "rc-settled";
	CU_ASSERT_EQUAL_FATAL(keyed_debit(ws.api_key, 4, &call, &settled, &err), 0);
	CU_ASSERT_EQUAL(acct_settle(svc, NULL, settled.charge_id, 4, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 6, 0, 0, &plain, &err), 0);
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 12);

	/* Within the grace: nothing. */
	CU_ASSERT_EQUAL(acct_reconcile(db, seo_now_ms() + 1000, &done, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(done, 0);
	/* Past it: both open debits come back, the settled one and the one
	 * made without a key stay; a second run finds nothing. */
	CU_ASSERT_EQUAL(acct_reconcile(db, seo_now_ms() + ACCT_RECONCILE_GRACE_MS + 5000,
				       &done, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(done, 2);
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 20);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 20);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE workspace_id = $1 "
			      "AND outcome = 'refunded' AND credits_used = 0",
			      ws.workspace_id, NULL), 2);
	CU_ASSERT_EQUAL(acct_reconcile(db, seo_now_ms() + ACCT_RECONCILE_GRACE_MS + 5000,
				       &done, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(done, 0);
	/* A report after the job changes nothing. */
	CU_ASSERT_EQUAL(acct_settle(svc, NULL, open1.charge_id, 5, 0, &remaining, &used, &err), 0);
	CU_ASSERT_EQUAL(used, 0);
	CU_ASSERT_EQUAL(remaining, 20);
}

static void test_mixed_batch(void)
{
	acct_new_user ws, other;
	acct_authorization c1, c2, c3;
	char hash[ACCT_HASH_LEN], ohash[ACCT_HASH_LEN];
	acct_caller who, other_c;
	ledger_call calls[9];
	int n;
	acct_err err;

	new_workspace(100, "mixed@example.com", &ws);
	new_workspace(10, "mixed2@example.com", &other);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	other_c = caller(&other, ACCT_ROLE_OWNER, ohash);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 5, 0, 0, &c1, &err), 0);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 5, 0, 0, &c2, &err), 0);
	CU_ASSERT_EQUAL_FATAL(authz(svc, ws.api_key, 5, 0, 0, &c3, &err), 0);

	/* Debits and refunds of two workspaces in one batch: charges are
	 * locked, then their workspaces with the debits', then written. */
	calls[0] = (ledger_call){.kind = CALL_DEBIT, .key = ws.api_key, .cost = 1};
	calls[1] = (ledger_call){.kind = CALL_DEBIT, .key = ws.api_key, .cost = 2};
	calls[2] = (ledger_call){.kind = CALL_REFUND, .who = &who,
				 .charge = c1.charge_id};
	calls[3] = (ledger_call){.kind = CALL_DEBIT, .key = other.api_key, .cost = 4};
	calls[4] = (ledger_call){.kind = CALL_REFUND, .who = &who,
				 .charge = c2.charge_id, .cost = 3};
	calls[5] = (ledger_call){.kind = CALL_REFUND, .who = &who,
				 .charge = c2.charge_id, .cost = 3};
	calls[6] = (ledger_call){.kind = CALL_REFUND, .who = &who,
				 .charge = "chg_unknown"};
	calls[7] = (ledger_call){.kind = CALL_REFUND, .who = &other_c,
				 .charge = c3.charge_id};
	calls[8] = (ledger_call){.kind = CALL_DEBIT, .key = other.api_key, .cost = 7};
	n = 9;

	CU_ASSERT_EQUAL(run_held(ws.workspace_id, calls, n), 2);
	CU_ASSERT_STRING_EQUAL(calls[0].code, "ok");
	CU_ASSERT_STRING_EQUAL(calls[1].code, "ok");
	CU_ASSERT_STRING_EQUAL(calls[2].code, "ok");
	CU_ASSERT_STRING_EQUAL(calls[4].code, "ok");
	CU_ASSERT_STRING_EQUAL(calls[5].code, "ok");
	CU_ASSERT_STRING_EQUAL(calls[6].code, "not_found");
	CU_ASSERT_STRING_EQUAL(calls[7].code, "not_found");
	/* Whichever came first, 10 credits of `other` cover only one. */
	CU_ASSERT((strcmp(calls[3].code, "ok") == 0) !=
		  (strcmp(calls[8].code, "ok") == 0));
	CU_ASSERT_STRING_EQUAL(strcmp(calls[3].code, "ok") == 0 ? calls[8].code
								 : calls[3].code,
			       "insufficient_credits");
	/* 100 - 15 - 1 - 2 + 5 + 5 */
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 92);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 92);
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      other.workspace_id, NULL),
			strcmp(calls[3].code, "ok") == 0 ? 6 : 3);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      other.workspace_id, NULL),
			q_int("SELECT balance FROM workspaces WHERE id = $1",
			      other.workspace_id, NULL));
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage WHERE id = $1",
			      c1.charge_id, NULL), 0);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage WHERE id = $1",
			      c2.charge_id, NULL), 0);
	CU_ASSERT_EQUAL(q_int("SELECT credits_used FROM usage WHERE id = $1",
			      c3.charge_id, NULL), 5);
}

static void test_failed_batch(void)
{
	acct_new_user ws;
	char hash[ACCT_HASH_LEN];
	acct_caller who;
	ledger_call calls[3];
	acct_authorization az;
	acct_err err;

	new_workspace(10, "failing@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	/* The usage insert fails after the ledger insert, in the same round
	 * trip as COMMIT. */
	q_int("CREATE FUNCTION usage_boom() RETURNS trigger LANGUAGE plpgsql AS "
	      "$$BEGIN IF NEW.endpoint = 'boom' THEN RAISE EXCEPTION 'boom'; END IF; "
	      "RETURN NEW; END$$", NULL);
	q_int("CREATE TRIGGER usage_boom BEFORE INSERT ON usage FOR EACH ROW "
	      "EXECUTE FUNCTION usage_boom()", NULL);

	calls[0] = (ledger_call){.kind = CALL_DEBIT, .key = ws.api_key, .cost = 1};
	calls[1] = (ledger_call){.kind = CALL_DEBIT, .key = ws.api_key, .cost = 2};
	calls[2] = (ledger_call){.kind = CALL_CHARGE, .who = &who,
				 .endpoint = "boom", .cost = 3};

	CU_ASSERT_EQUAL(run_held(ws.workspace_id, calls, 3), 2);
	CU_ASSERT_STRING_EQUAL(calls[0].code, "ok");
	CU_ASSERT_EQUAL(calls[0].remaining, 9);
	/* The whole second batch failed, its innocent debit too. */
	CU_ASSERT_STRING_EQUAL(calls[1].code, "internal_error");
	CU_ASSERT_STRING_EQUAL(calls[2].code, "internal_error");
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1",
			      ws.workspace_id, NULL), 9);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 9);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE workspace_id = $1",
			      ws.workspace_id, NULL), 1);

	q_int("DROP TRIGGER usage_boom ON usage", NULL);
	q_int("DROP FUNCTION usage_boom()", NULL);
	/* The connection came back out of the pipeline, usable. */
	CU_ASSERT_EQUAL(authz(svc, ws.api_key, 4, 0, 0, &az, &err), 0);
	CU_ASSERT_EQUAL(az.credits_remaining, 5);
}

/* ---- usage, pricing, websites ----------------------------------------- */

static void test_usage_listing(void)
{
	acct_new_user ws, other;
	char hash[ACCT_HASH_LEN], ohash[ACCT_HASH_LEN];
	acct_caller who, other_c;
	Seo__Account__V1__ListUsageRequest req = SEO__ACCOUNT__V1__LIST_USAGE_REQUEST__INIT;
	Seo__Account__V1__ListUsageResponse *u;
	seo_arena *arena = seo_arena_new(0);
	acct_err err;

	new_workspace(0, "usage@example.com", &ws);
	new_workspace(0, "usage2@example.com", &other);
	who = caller(&ws, ACCT_ROLE_MEMBER, hash);
	other_c = caller(&other, ACCT_ROLE_OWNER, ohash);
	q_int("INSERT INTO usage (id, workspace_id, endpoint, domain, charged, "
	      "credits_used, created_at) SELECT 'chg_' || $1 || i, $1, 'ep' || i, "
	      "CASE WHEN i % 2 = 0 THEN 'd' || i END, 2, 2, 1000 + i "
	      "FROM generate_series(1, 250) AS i", ws.workspace_id, NULL);

	CU_ASSERT_EQUAL_FATAL(acct_list_usage(svc, &who, NULL, arena, &u, &err), 0);
	CU_ASSERT_EQUAL(u->n_usage, 50);
	CU_ASSERT_EQUAL(u->total, 250);
	CU_ASSERT_STRING_EQUAL(u->usage[0]->endpoint, "ep250");
	CU_ASSERT_STRING_EQUAL(u->usage[0]->domain, "d250");
	CU_ASSERT_PTR_NULL(u->usage[1]->domain);
	CU_ASSERT_EQUAL(u->usage[0]->created_at, 1250);
	CU_ASSERT_EQUAL(u->usage[0]->credits_used, 2);
	CU_ASSERT(u->usage[0]->created_at > u->usage[49]->created_at);

	req.has_limit = 1;
	req.limit = 1000;
	CU_ASSERT_EQUAL_FATAL(acct_list_usage(svc, &who, &req, arena, &u, &err), 0);
	CU_ASSERT_EQUAL(u->n_usage, 200);
	req.limit = 10;
	req.has_offset = 1;
	req.offset = 245;
	CU_ASSERT_EQUAL_FATAL(acct_list_usage(svc, &who, &req, arena, &u, &err), 0);
	CU_ASSERT_EQUAL(u->n_usage, 5);
	CU_ASSERT_STRING_EQUAL(u->usage[4]->endpoint, "ep1");
	CU_ASSERT_EQUAL(u->total, 250);
	req.offset = -1;
	CU_ASSERT_EQUAL(acct_list_usage(svc, &who, &req, arena, &u, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	req.offset = 0;
	req.limit = 0;
	CU_ASSERT_EQUAL(acct_list_usage(svc, &who, &req, arena, &u, &err), SEO_EINVAL);
	CU_ASSERT_EQUAL_FATAL(acct_list_usage(svc, &other_c, NULL, arena, &u, &err), 0);
	CU_ASSERT_EQUAL(u->total, 0);
	CU_ASSERT_EQUAL(u->n_usage, 0);
	seo_arena_free(arena);
}

static void test_pricing_order(void)
{
	Seo__Account__V1__PricingResponse *p;
	seo_arena *arena = seo_arena_new(0);
	acct_err err;

	q_int("INSERT INTO price_tiers VALUES (500, 0.009)", NULL);
	CU_ASSERT_EQUAL_FATAL(acct_get_pricing(svc, arena, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p->n_tiers, 5);
	CU_ASSERT_EQUAL(p->tiers[0]->min, 100);
	CU_ASSERT_DOUBLE_EQUAL(p->tiers[0]->price_per_credit, 0.01, 1e-9);
	CU_ASSERT_EQUAL(p->tiers[1]->min, 500);
	CU_ASSERT_DOUBLE_EQUAL(p->tiers[1]->price_per_credit, 0.009, 1e-9);
	for (size_t i = 1; i < p->n_tiers; i++)
		CU_ASSERT(p->tiers[i - 1]->min < p->tiers[i]->min);
	q_int("DELETE FROM price_tiers WHERE min_credits = 500", NULL);
	seo_arena_free(arena);
}

static void test_host_normalize(void)
{
	static const struct {
		const char *in;
		const char *out; /* NULL: refused */
	} cases[] = {
		{"example.com", "example.com"},
		{"HTTPS://Example.COM:8443/a?b#c", "example.com"},
		{"example.com.", "example.com"},
		{"http://sub.Example.org/", "sub.example.org"},
		{"localhost", NULL},
		{"exa mple.com", NULL},
		{"a..b", NULL},
		{".example.com", NULL},
		{"user@example.com", NULL},
		{"example.com:abc", NULL},
		{"", NULL},
		{"https://", NULL},
	};
	char out[ACCT_HOST_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = acct_host_normalize(cases[i].in, out);

		if (cases[i].out == NULL) {
			CU_ASSERT(rc != 0);
		} else {
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_STRING_EQUAL(out, cases[i].out);
		}
	}
}

static void test_websites(void)
{
	acct_new_user ws, other;
	char hash[ACCT_HASH_LEN], site[ACCT_ID_LEN], host[ACCT_HOST_LEN];
	char zeta[ACCT_ID_LEN], name[32];
	acct_caller who;
	Seo__Account__V1__ListWebsitesResponse *l;
	seo_arena *arena = seo_arena_new(0);
	acct_err err;

	new_workspace(0, "sites@example.com", &ws);
	new_workspace(0, "sites2@example.com", &other);
	who = caller(&ws, ACCT_ROLE_CLIENT, hash);
	CU_ASSERT_EQUAL(acct_website_add(db, ws.workspace_id, "zeta.example", "Zeta",
					 zeta, host, &err), 0);
	CU_ASSERT_EQUAL(acct_website_add(db, ws.workspace_id, "https://Alpha.Example/x",
					 "Alpha", site, host, &err), 0);
	CU_ASSERT_STRING_EQUAL(host, "alpha.example");
	CU_ASSERT_EQUAL(acct_website_add(db, ws.workspace_id, "mid.example", NULL,
					 site, host, &err), 0);
	CU_ASSERT_EQUAL(acct_website_add(db, ws.workspace_id, "old.example", "Aaa",
					 site, host, &err), 0);
	q_int("UPDATE websites SET archived_at = 1 WHERE id = $1", site, NULL);
	CU_ASSERT_EQUAL(acct_website_add(db, other.workspace_id, "other.example", NULL,
					 site, host, &err), 0);
	CU_ASSERT_EQUAL(acct_website_add(db, ws.workspace_id, "ZETA.example", NULL,
					 site, host, &err), SEO_EEXIST);
	CU_ASSERT_STRING_EQUAL(err.code, "already_exists");
	CU_ASSERT(acct_website_add(db, ws.workspace_id, "not a host", NULL, site,
				   host, &err) != 0);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_domain");
	CU_ASSERT(acct_website_add(db, "ws_nope", "x.example", NULL, site, host,
				   &err) != 0);
	CU_ASSERT_STRING_EQUAL(err.code, "workspace_not_found");

	CU_ASSERT_EQUAL_FATAL(acct_list_websites(svc, &who, arena, &l, &err), 0);
	CU_ASSERT_EQUAL_FATAL(l->n_websites, 3);
	CU_ASSERT_STRING_EQUAL(l->websites[0]->name, "Alpha");
	CU_ASSERT_STRING_EQUAL(l->websites[0]->host, "alpha.example");
	CU_ASSERT_STRING_EQUAL(l->websites[1]->name, "mid.example");
	CU_ASSERT_STRING_EQUAL(l->websites[2]->name, "Zeta");
	CU_ASSERT_STRING_EQUAL(l->websites[2]->id, zeta);

	CU_ASSERT_EQUAL(acct_website_policy(db, zeta, "automatic", &err), 0);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM websites WHERE id = $1 AND "
			      "indexnow_policy = 'automatic'", zeta, NULL), 1);
	CU_ASSERT_EQUAL(acct_website_policy(db, zeta, "sometimes", &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(acct_website_policy(db, "site_nope", "approval", &err),
			SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(err.code, "site_not_found");

	/* At most 200. */
	for (int i = 0; i < 205; i++) {
		snprintf(name, sizeof(name), "s%03d.example", i);
		CU_ASSERT_EQUAL(acct_website_add(db, other.workspace_id, name, NULL,
						 site, host, &err), 0);
	}
	who = caller(&other, ACCT_ROLE_MEMBER, hash);
	CU_ASSERT_EQUAL_FATAL(acct_list_websites(svc, &who, arena, &l, &err), 0);
	CU_ASSERT_EQUAL(l->n_websites, 200);
	seo_arena_free(arena);
}

/* ---- reconnection ----------------------------------------------------- */

static void test_reconnects(void)
{
	acct_new_user ws;
	char hash[ACCT_HASH_LEN], k2hash[ACCT_HASH_LEN];
	acct_caller who;
	acct_authorization az;
	Seo__Account__V1__CreatedKey *k2;
	Seo__Account__V1__ListKeysResponse *list;
	seo_arena *arena = seo_arena_new(0);
	acct_err err;

	new_workspace(10, "reconnect@example.com", &ws);
	who = caller(&ws, ACCT_ROLE_OWNER, hash);
	CU_ASSERT_EQUAL_FATAL(acct_create_key(svc, &who, "two", arena, &k2, &err), 0);
	hash_of(k2->key, k2hash);
	CU_ASSERT_EQUAL(authz(svc, ws.api_key, 1, 0, 0, &az, &err), 0);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, k2->key), "ok");

	/* Every connection of the service dies, as in a server restart. */
	CU_ASSERT(q_int("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
			"WHERE datname = current_database() AND pid <> pg_backend_pid()",
			NULL) > 0);
	/* Nobody will announce this: the listener is gone. */
	q_int("UPDATE api_keys SET revoked_at = 1 WHERE id = $1", k2hash, NULL);

	CU_ASSERT_EQUAL(authz(svc, ws.api_key, 1, 0, 0, &az, &err), 0);
	CU_ASSERT_EQUAL(az.credits_remaining, 8);
	CU_ASSERT_EQUAL(acct_list_keys(svc, &who, arena, &list, &err), 0);
	/* The listener, back, distrusts what it cached while away. */
	CU_ASSERT(wait_refused(k2->key));
	CU_ASSERT_STRING_EQUAL(authz_code(svc, ws.api_key), "ok");
	seo_arena_free(arena);
}

/* ---- seoctl ----------------------------------------------------------- */

typedef struct ctl {
	int status;
	json_t *out; /* stdout as JSON, or NULL */
	json_t *err; /* stderr as JSON, or NULL */
	char raw_out[4096];
} ctl;

static char seoctl_path[PATH_MAX];
static char stderr_path[PATH_MAX];

/* Runs seoctl with shell-quoted `args`. The caller frees with ctl_free. */
static void seoctl(ctl *c, const char *fmt, ...)
{
	char args[1024], cmd[2 * PATH_MAX + sizeof(args) + 16];
	size_t n;
	FILE *p, *e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>'%s'", seoctl_path, args, stderr_path);
	memset(c, 0, sizeof(*c));
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	n = fread(c->raw_out, 1, sizeof(c->raw_out) - 1, p);
	c->raw_out[n] = '\0';
	c->status = pclose(p);
	c->status = WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1;
	c->out = json_loads(c->raw_out, JSON_DECODE_ANY, NULL);
	e = fopen(stderr_path, "r");
	if (e != NULL) {
		c->err = json_loadf(e, 0, NULL);
		fclose(e);
	}
}

static void ctl_free(ctl *c)
{
	json_decref(c->out);
	json_decref(c->err);
}

static const char *str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

/* A failure: non-zero exit, nothing on stdout, one error object. */
static void expect_failure(ctl *c, const char *code)
{
	CU_ASSERT(c->status != 0);
	CU_ASSERT_STRING_EQUAL(c->raw_out, "");
	CU_ASSERT_STRING_EQUAL(str(c->err, "error"), code);
	CU_ASSERT(strlen(str(c->err, "message")) > 0);
}

static void test_seoctl(void)
{
	ctl c;
	char ws[64], user[64], key[64], member[64], member_key[64], site[64];

	CU_ASSERT_FATAL(access(seoctl_path, X_OK) == 0);

	seoctl(&c, "workspace create --name 'Ops Team' --email ops@example.com --credits 25");
	CU_ASSERT_EQUAL_FATAL(c.status, 0);
	CU_ASSERT_EQUAL(json_object_size(c.out), 3);
	snprintf(ws, sizeof(ws), "%s", str(c.out, "workspace_id"));
	snprintf(user, sizeof(user), "%s", str(c.out, "user_id"));
	snprintf(key, sizeof(key), "%s", str(c.out, "api_key"));
	ctl_free(&c);
	CU_ASSERT(strncmp(ws, "ws_", 3) == 0 && strlen(ws) == 23);
	CU_ASSERT(strncmp(user, "usr_", 4) == 0 && strlen(user) == 24);
	CU_ASSERT(is_key(key));
	CU_ASSERT_EQUAL(q_int("SELECT balance FROM workspaces WHERE id = $1", ws, NULL), 25);
	CU_ASSERT_EQUAL(q_int("SELECT sum(delta) FROM ledger WHERE workspace_id = $1 "
			      "AND reason = 'grant'", ws, NULL), 25);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM users WHERE id = $1 AND role = 'owner' "
			      "AND email = 'ops@example.com'", user, NULL), 1);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, key), "ok");

	seoctl(&c, "user add --workspace %s --email m@example.com --role member", ws);
	CU_ASSERT_EQUAL_FATAL(c.status, 0);
	CU_ASSERT_EQUAL(json_object_size(c.out), 2);
	snprintf(member, sizeof(member), "%s", str(c.out, "user_id"));
	snprintf(member_key, sizeof(member_key), "%s", str(c.out, "api_key"));
	ctl_free(&c);
	CU_ASSERT_STRING_EQUAL(authz_code(svc, member_key), "ok");

	seoctl(&c, "credits grant --workspace %s --credits 5", ws);
	CU_ASSERT_EQUAL(c.status, 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(c.out, "credits")), 30);
	ctl_free(&c);

	seoctl(&c, "website add --workspace %s --host 'https://Shop.Example/cart'", ws);
	CU_ASSERT_EQUAL_FATAL(c.status, 0);
	snprintf(site, sizeof(site), "%s", str(c.out, "site_id"));
	CU_ASSERT(strncmp(site, "site_", 5) == 0 && strlen(site) == 25);
	CU_ASSERT_STRING_EQUAL(str(c.out, "host"), "shop.example");
	CU_ASSERT_STRING_EQUAL(str(c.out, "name"), "shop.example");
	ctl_free(&c);
	seoctl(&c, "website add --workspace %s --host blog.example --name 'The Blog'", ws);
	CU_ASSERT_STRING_EQUAL(str(c.out, "name"), "The Blog");
	ctl_free(&c);

	seoctl(&c, "website policy --site %s --indexnow automatic", site);
	CU_ASSERT_EQUAL(c.status, 0);
	CU_ASSERT_STRING_EQUAL(str(c.out, "site_id"), site);
	CU_ASSERT_STRING_EQUAL(str(c.out, "indexnow_policy"), "automatic");
	ctl_free(&c);

	seoctl(&c, "user remove --user %s", member);
	CU_ASSERT_EQUAL(c.status, 0);
	CU_ASSERT(json_is_true(json_object_get(c.out, "removed")));
	ctl_free(&c);
	/* Another process removed it: its NOTIFY evicts the cached key here. */
	CU_ASSERT(wait_refused(member_key));
	CU_ASSERT_STRING_EQUAL(authz_code(svc, key), "ok");

	seoctl(&c, "migrate");
	CU_ASSERT_EQUAL(c.status, 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(c.out, "applied")), 0);
	ctl_free(&c);

	/* Failures. */
	seoctl(&c, "frobnicate");
	expect_failure(&c, "usage");
	ctl_free(&c);
	seoctl(&c, "user add --workspace %s --email x@example.com", ws);
	expect_failure(&c, "usage");
	ctl_free(&c);
	seoctl(&c, "user add --workspace %s --email x@example.com --role boss", ws);
	expect_failure(&c, "invalid_parameter");
	ctl_free(&c);
	seoctl(&c, "credits grant --workspace ws_nope --credits 5");
	expect_failure(&c, "workspace_not_found");
	ctl_free(&c);
	seoctl(&c, "credits grant --workspace %s --credits 1e3", ws);
	expect_failure(&c, "invalid_parameter");
	ctl_free(&c);
	seoctl(&c, "workspace create --name X --email not-an-email");
	expect_failure(&c, "invalid_parameter");
	ctl_free(&c);
	seoctl(&c, "website add --workspace %s --host 'https://Shop.Example'", ws);
	expect_failure(&c, "already_exists");
	ctl_free(&c);
	seoctl(&c, "website policy --site site_nope --indexnow approval");
	expect_failure(&c, "site_not_found");
	ctl_free(&c);
	seoctl(&c, "user remove --user usr_nope");
	expect_failure(&c, "user_not_found");
	ctl_free(&c);
}

/* ---- set-up ----------------------------------------------------------- */

/* A conninfo for our database from the server's connection settings. */
static int suite_init(void)
{
	acct_options opt;
	acct_err err;

	acct_options_init(&opt);
	opt.pg_url = pgdb.url;
	opt.rate_per_min = 0;
	if (acct_new(&opt, &svc, &err) != 0) {
		fprintf(stderr, "acct_new: %s\n", err.message);
		return -1;
	}
	return 0;
}

static int suite_clean(void)
{
	acct_free(svc);
	svc = NULL;
	return 0;
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	const char *build = getenv("SEO_BUILD_DIR");
	CU_pSuite schema, suite;
	unsigned failures;

	if (url == NULL || url[0] == '\0') {
		printf("test_acct: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	if (src != NULL)
		snprintf(migrations, sizeof(migrations), "%s/svc-account/migrations", src);
	else if (acct_migrations_dir(migrations, sizeof(migrations)) != 0)
		return 1;
	snprintf(seoctl_path, sizeof(seoctl_path), "%s/bin/seoctl",
		 build != NULL ? build : ".");
	snprintf(stderr_path, sizeof(stderr_path), "/tmp/test_acct_%d.err", (int)getpid());
	if (test_pgdb_create(&pgdb, url, "acct_test") != 0)
		return 1;
	db = PQconnectdb(pgdb.url);
	if (PQstatus(db) != CONNECTION_OK) {
		fprintf(stderr, "%s", PQerrorMessage(db));
		return 1;
	}
	setenv("SEO_PG_URL", pgdb.url, 1);
	setenv("SEO_MIGRATIONS_DIR", migrations, 1);

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	schema = CU_add_suite("schema", NULL, NULL);
	suite = CU_add_suite("acct", suite_init, suite_clean);
	CU_add_test(schema, "migrations are concurrent-safe and idempotent",
		    test_migrations_concurrent_and_idempotent);
	CU_add_test(schema, "host normalisation", test_host_normalize);
	CU_add_test(suite, "key create, hash, lookup", test_key_create_hash_lookup);
	CU_add_test(suite, "active keys per workspace capped", test_key_cap);
	CU_add_test(suite, "revocation is immediate", test_revocation_is_immediate);
	CU_add_test(suite, "revocation through NOTIFY", test_revocation_through_notify);
	CU_add_test(suite, "unknown keys cached, never hiding a new one",
		    test_unknown_keys);
	CU_add_test(suite, "role rules", test_role_rules);
	CU_add_test(suite, "rate limiter", test_rate_limiter);
	CU_add_test(suite, "a rate grant asked alone", test_rate_ask_alone);
	CU_add_test(suite, "group commit", test_group_commit);
	CU_add_test(suite, "refunds", test_refunds);
	CU_add_test(suite, "debits and refunds in one batch", test_mixed_batch);
	CU_add_test(suite, "idempotent debits and outcomes", test_idempotent_debits_and_outcomes);
	CU_add_test(suite, "the reconcile job", test_reconcile);
	CU_add_test(suite, "a failed statement fails its whole batch", test_failed_batch);
	CU_add_test(suite, "usage listing", test_usage_listing);
	CU_add_test(suite, "pricing order", test_pricing_order);
	CU_add_test(suite, "websites", test_websites);
	CU_add_test(suite, "reconnects after the server dropped it", test_reconnects);
	CU_add_test(suite, "seoctl", test_seoctl);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();

	PQfinish(db);
	unlink(stderr_path);
	test_pgdb_drop(&pgdb);
	return failures == 0 ? 0 : 1;
}
