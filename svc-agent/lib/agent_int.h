/*
 * agent_int.h: what the parts of svc-agent share: the service's state, a
 * call's caller, errors, the database and the workspace's websites. Each
 * part (proposals, indexnow, outreach, tasks, activity, report) has its
 * own .c files and, where others call it, its own header beside them.
 */
#ifndef AGENT_INT_H
#define AGENT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "agent.h"
#include "agent_store.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/fetch_config.h"
#include "seo/pg_pool.h"
#include "seo/pg_stmt.h"
#include "seo/rpc.h"
#include "seo/rpc_peer.h"

struct agent__worker;

struct agent_svc {
	seo_pg_pool *pool;
	rpc_peer *account;
	const seo_fetch_config *fetch; /* the caller's */
	struct agent__worker *worker;  /* runs approved proposals */
};

/* Who a call acts for: the identity the gateway sent (borrowed from the
 * call's metadata, valid for the call). `ctx` is NULL for work of the
 * service's own (jobs, the proposal worker), which fills the ids itself. */
typedef struct agent_call {
	agent_svc *svc;
	rpc_ctx *ctx;
	seo_arena *arena;
	const char *workspace_id;
	const char *user_id;
	const char *key_id;
	const char *role;
	const char *service_client; /* X-Service-Client, or NULL */
} agent_call;

/*
 * The caller of `ctx` into *out. Returns 0, or fails the call (as
 * rpc_ctx_fail(), -1) when the gateway sent no workspace: every agent
 * route is keyed.
 */
int agent__call_of(rpc_ctx *ctx, agent_call *out);

/* A public error: a code of seo/errors.h and a message for the client. */
typedef struct agent_err {
	const char *code;
	char message[256];
} agent_err;

/* Sets *err and returns `rc`. */
int agent__err(agent_err *err, int rc, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fails `ctx` with *err (as rpc_ctx_fail(), -1). */
int agent__fail(rpc_ctx *ctx, const agent_err *err);

/* ---- the database ----------------------------------------------------------
 * Each part declares its statements as its own static seo_pg_stmts table
 * and runs them unprepared on a pooled connection (agent routes are not a
 * hot path; no part's table limits another's). */

/* Lends a connection (migrated). SEO_EDB (logged) when the database does
 * not answer. Give it back with agent__db_put(). */
int agent__db_get(agent_svc *s, seo_pg_conn **out);
void agent__db_put(agent_svc *s, seo_pg_conn *c);

/*
 * Runs row `q` of `t` on `pg` with text parameters (NULL is SQL NULL).
 * *res (may be NULL) is the result, the caller PQclear()s it. Returns 0,
 * SEO_EEXIST on a unique violation, SEO_EDB (logged) otherwise.
 */
int agent__db_exec(PGconn *pg, const seo_pg_stmts *t, int q, int n,
		   const char *const *params, PGresult **res);

/*
 * A job's statement (seo/job.h): runs row `q` of `t`, whose one parameter
 * $1 is an instant (Unix ms; a DELETE or UPDATE of the rows before it,
 * say), with `ms` on `pg`, and counts the rows it changed into *done.
 * Returns 0, or SEO_EDB (logged) with "<the row's name> failed" in `err`.
 */
int agent__db_count_at(PGconn *pg, const seo_pg_stmts *t, int q, int64_t ms,
		       int64_t *done, char *err, size_t err_len);

/* BEGIN / COMMIT (0 or SEO_EDB, logged) and ROLLBACK on `pg`. */
int agent__db_begin(PGconn *pg);
int agent__db_commit(PGconn *pg);
void agent__db_rollback(PGconn *pg);

/* A new id `prefix` + 24 url-safe random characters (CSPRNG), on
 * `arena`. NULL when out of memory or randomness. */
char *agent__new_id(seo_arena *arena, const char *prefix);

/* ---- text from agents and people (clean.c) ---------------------------------- */

/*
 * `in` (NUL-terminated) without control characters and invisible ones
 * (format characters, fillers, variation selectors, tags), line breaks and
 * tabs read as spaces, a run of spaces as one, without blanks at either
 * end, cut to its first `max_chars` characters (code points); bytes that
 * are not UTF-8 are dropped. *out is on `arena`, possibly "" (whether empty
 * is allowed is the caller's rule). Returns 0 or SEO_ENOMEM.
 */
int agent__text_clean(seo_arena *arena, const char *in, size_t max_chars,
		      char **out);

/* ---- the workspace's websites (sites.c) ------------------------------------- */

/*
 * The caller's active websites with their policies (Account/ListSites on
 * behalf of c->ctx, which must not be NULL) into *out, on c->arena.
 * Returns 0, or SEO_EUPSTREAM/SEO_ETIMEDOUT/SEO_EIO with *res holding the
 * peer's failure for rpc_peer_fail().
 */
int agent__sites(const agent_call *c, Seo__Account__V1__ListSitesResponse **out,
		 rpc_result *res);

/* The website `site_id` among the `n` of `sites` (a ListSites answer's),
 * or NULL. */
const Seo__Account__V1__Site *agent__site_in(Seo__Account__V1__Site *const *sites,
					    size_t n, const char *site_id);

/*
 * The caller's website `site_id` into *out (on c->arena): SEO_ENOTFOUND
 * when the workspace has no such active website (another workspace's
 * included), else as agent__sites().
 */
int agent__site_find(const agent_call *c, const char *site_id,
		     const Seo__Account__V1__Site **out, rpc_result *res);

/* ---- events (the specification's Events) ----------------------------------- */

/* One activity row (agent_activity). `params` is a JSON object's text
 * (NULL: {}); `visible` makes it client-visible now. */
typedef struct agent_event {
	const char *workspace_id;
	const char *site_id;     /* NULL: workspace-wide */
	const char *verb;        /* "indexnow.submitted" ... */
	const char *params;
	const char *agent_text;  /* NULL when none */
	int visible;
	int64_t occurred_at_ms;
} agent_event;

/* Records *e on `pg` (inside the caller's transaction, if any) under a new
 * `act_` id, copied into `id_out` (at least 32 bytes) when not NULL.
 * Returns 0, SEO_ENOMEM or SEO_EDB. */
int agent__event_add(PGconn *pg, const agent_event *e, char *id_out);

#endif
