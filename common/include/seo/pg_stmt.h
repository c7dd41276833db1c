/*
 * seo/pg_stmt.h: a component's SQL as a statement table, run on a
 * connection that prepares each statement the first time it is used
 * there (library seo_pg).
 *
 * A component declares its statements once, as a static table indexed by
 * its own enum, and names rows by index; the connection (pooled, see
 * seo/pg_pool.h, or a caller's own) keeps which rows it has prepared.
 * Prepared names are the table's prefix + the row's name, so tables of
 * different components may share a connection.
 *
 * Functions return 0 or a negative SEO_E* code; where `err` is passed (it
 * may not be NULL) it receives "<statement> failed: <server message>" on
 * failure, for logs, never for API clients.
 */
#ifndef SEO_PG_STMT_H
#define SEO_PG_STMT_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* One statement: `name` (for prepared names and messages) and its SQL. */
typedef struct seo_pg_stmt {
	const char *name;
	const char *sql;
} seo_pg_stmt;

/* A component's statements (static data of the component). */
typedef struct seo_pg_stmts {
	const char *prefix;     /* of prepared names, e.g. "ex_" */
	const seo_pg_stmt *rows;
	int n;                  /* at most SEO_PG_STMTS_MAX */
} seo_pg_stmts;

#define SEO_PG_STMTS_MAX 64

/*
 * A connection and what is prepared on it. `oneshot` runs statements
 * unprepared, so that nothing outlives a call on a caller's connection
 * (e.g. a CLI's). Fields are read by the owner; the pool changes `pg`,
 * `prepared` and `lent` only while it lends the connection.
 */
typedef struct seo_pg_conn {
	PGconn *pg;
	const seo_pg_stmts *stmts;
	uint64_t prepared; /* bit q: row q is prepared on pg */
	int oneshot;
	int lent;          /* a pool slot in use */
} seo_pg_conn;

/* A connection on `pg` (not owned: the caller PQfinish()es it) for the
 * rows of `stmts`, nothing prepared yet. */
seo_pg_conn seo_pg_conn_of(PGconn *pg, const seo_pg_stmts *stmts,
			   int oneshot);

/*
 * Runs row `q` with text parameters (NULL is SQL NULL), preparing it
 * first on this connection unless it already is. On success *res (may be
 * NULL when the rows are not wanted) is the result, which the caller
 * PQclear()s. Returns 0, SEO_EEXIST on a unique violation, SEO_ETIMEDOUT
 * when cancelled (statement_timeout), SEO_ECLOSED when the server ended the
 * session (FATAL: the connection is unusable, even if its status does not
 * show it yet), SEO_EDB otherwise.
 */
int seo_pg_exec(seo_pg_conn *c, int q, int nparams, const char *const *params,
		PGresult **res, char *err, size_t err_len);

/*
 * seo_pg_exec() with parameters in binary format where formats[i] is 1:
 * params[i] then holds lengths[i] bytes of the type's binary form (as its
 * receive function reads it; the statement's SQL fixes the type, e.g.
 * with a cast), which the server neither unescapes nor parses. Text where
 * formats[i] is 0 (lengths[i] unused). `lengths` and `formats` are the
 * caller's, read during the call; both NULL is seo_pg_exec(). Same
 * returns.
 */
int seo_pg_exec_bin(seo_pg_conn *c, int q, int nparams,
		    const char *const *params, const int *lengths,
		    const int *formats, PGresult **res, char *err,
		    size_t err_len);

/* BEGIN and COMMIT: 0 or SEO_EDB. ROLLBACK ignores failures (a pool then
 * drops the connection). */
int seo_pg_begin(seo_pg_conn *c, char *err, size_t err_len);
int seo_pg_commit(seo_pg_conn *c, char *err, size_t err_len);
void seo_pg_rollback(seo_pg_conn *c);

/* 1 when a statement that failed with `rc` ran nowhere because the server
 * went away (restart, idle timeout, terminated backend; SEO_ECLOSED or a
 * broken connection): worth a retry on a new connection. */
int seo_pg_dead(const seo_pg_conn *c, int rc);

/* ---- several statements in one round trip --------------------------------- */

#define SEO_PG_PIPE_MAX 8
#define SEO_PG_PIPE_PARAMS 12

/*
 * Statements queued with seo_pg_pipe_add() and sent by seo_pg_pipe_run()
 * together, in libpq's pipeline mode with one Sync: one round trip
 * whatever their number. The pipe keeps the parameter pointers, not the
 * text, which must stay valid until the run. Once a statement fails the
 * server skips the rest up to the Sync, so a COMMIT queued after it never
 * runs; a transaction begun before is then left aborted, for the caller
 * to roll back.
 */
typedef struct seo_pg_pipe {
	int n;
	int overflow; /* more than SEO_PG_PIPE_MAX statements were added */
	struct {
		int q;
		int nparams;
		const char *params[SEO_PG_PIPE_PARAMS];
	} st[SEO_PG_PIPE_MAX];
	PGresult *res[SEO_PG_PIPE_MAX]; /* by seo_pg_pipe_run(), owned here */
} seo_pg_pipe;

void seo_pg_pipe_init(seo_pg_pipe *p);
void seo_pg_pipe_add(seo_pg_pipe *p, int q, int nparams,
		     const char *const *params);

/*
 * Prepares what is not yet, sends, and reads every result into res[] in
 * order (res[i] of the i-th statement added). 0 when all succeeded, else
 * the first failure as seo_pg_exec() reports it (SEO_EINVAL when more
 * were added than fit); the connection is out of pipeline mode either way
 * unless it broke: then SEO_ECLOSED, and the outcome of what was sent is
 * unknown. May run again (e.g. on a new connection): the previous
 * results are freed first.
 */
int seo_pg_pipe_run(seo_pg_conn *c, seo_pg_pipe *p, char *err,
		    size_t err_len);

/* Frees the results; the pipe is empty again. */
void seo_pg_pipe_clear(seo_pg_pipe *p);

#endif
