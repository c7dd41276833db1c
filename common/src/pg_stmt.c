/*
 * Statement tables run on a connection that prepares each row on first
 * use, one at a time or pipelined (seo/pg_stmt.h).
 */
#include "seo/pg_stmt.h"

#include <stdio.h>
#include <string.h>

#include "seo/errors.h"

#define NAME_MAX_LEN 64

/* "<what> failed: <msg>", the message's trailing newline dropped. */
static int db_fail(char *err, size_t err_len, const char *what,
		   const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	snprintf(err, err_len, "%s failed: %.*s", what, (int)n, msg);
	return SEO_EDB;
}

/* 1 when `r` reports the end of the session (FATAL or PANIC: a
 * terminated backend, a server shutting down), which the connection's
 * status may not show until its next read. */
static int session_ended(const PGresult *r)
{
	const char *sev = r != NULL ? PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED)
				    : NULL;

	return sev != NULL && (strcmp(sev, "FATAL") == 0 || strcmp(sev, "PANIC") == 0);
}

static int result_fail(const seo_pg_conn *c, PGresult *r, const char *what,
		       char *err, size_t err_len)
{
	const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	int rc = db_fail(err, err_len, what,
			 r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(c->pg));

	if (session_ended(r))
		return SEO_ECLOSED;
	if (state != NULL && strcmp(state, "23505") == 0)
		return SEO_EEXIST;
	if (state != NULL && strcmp(state, "57014") == 0)
		return SEO_ETIMEDOUT;
	return rc;
}

static int result_ok(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);

	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static void stmt_name(const seo_pg_conn *c, int q, char name[NAME_MAX_LEN])
{
	snprintf(name, NAME_MAX_LEN, "%s%s", c->stmts->prefix, c->stmts->rows[q].name);
}

seo_pg_conn seo_pg_conn_of(PGconn *pg, const seo_pg_stmts *stmts, int oneshot)
{
	return (seo_pg_conn){.pg = pg, .stmts = stmts, .oneshot = oneshot};
}

/* Prepares `q` on `c` unless it already is (or `c` is oneshot). */
static int prepare(seo_pg_conn *c, int q, char *err, size_t err_len)
{
	uint64_t bit = UINT64_C(1) << q;
	char name[NAME_MAX_LEN];
	PGresult *r;
	int rc = 0;

	if (c->oneshot || (c->prepared & bit) != 0)
		return 0;
	stmt_name(c, q, name);
	r = PQprepare(c->pg, name, c->stmts->rows[q].sql, 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = result_fail(c, r, c->stmts->rows[q].name, err, err_len);
	else
		c->prepared |= bit;
	PQclear(r);
	return rc;
}

int seo_pg_exec(seo_pg_conn *c, int q, int nparams, const char *const *params,
		PGresult **res, char *err, size_t err_len)
{
	return seo_pg_exec_bin(c, q, nparams, params, NULL, NULL, res, err,
			       err_len);
}

int seo_pg_exec_bin(seo_pg_conn *c, int q, int nparams,
		    const char *const *params, const int *lengths,
		    const int *formats, PGresult **res, char *err,
		    size_t err_len)
{
	const seo_pg_stmt *s = &c->stmts->rows[q];
	char name[NAME_MAX_LEN];
	PGresult *r = NULL;
	int rc;

	if (res != NULL)
		*res = NULL;
	rc = prepare(c, q, err, err_len);
	if (rc != 0)
		return rc;
	stmt_name(c, q, name);
	if (c->oneshot)
		r = PQexecParams(c->pg, s->sql, nparams, NULL, params, lengths,
				 formats, 0);
	else
		r = PQexecPrepared(c->pg, name, nparams, params, lengths, formats,
				   0);
	if (!result_ok(r)) {
		rc = result_fail(c, r, s->name, err, err_len);
		goto out;
	}
	if (res != NULL) {
		*res = r;
		r = NULL;
	}
out:
	PQclear(r);
	return rc;
}

static int exec_plain(seo_pg_conn *c, const char *sql, char *err,
		      size_t err_len)
{
	PGresult *r = PQexec(c->pg, sql);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = result_fail(c, r, sql, err, err_len);
	PQclear(r);
	return rc;
}

int seo_pg_begin(seo_pg_conn *c, char *err, size_t err_len)
{
	return exec_plain(c, "BEGIN", err, err_len);
}

int seo_pg_commit(seo_pg_conn *c, char *err, size_t err_len)
{
	return exec_plain(c, "COMMIT", err, err_len);
}

void seo_pg_rollback(seo_pg_conn *c)
{
	PQclear(PQexec(c->pg, "ROLLBACK"));
}

int seo_pg_dead(const seo_pg_conn *c, int rc)
{
	return rc == SEO_ECLOSED ||
	       (rc == SEO_EDB && PQstatus(c->pg) != CONNECTION_OK);
}

/* ---- pipelines ---------------------------------------------------------- */

void seo_pg_pipe_init(seo_pg_pipe *p)
{
	memset(p, 0, sizeof(*p));
}

void seo_pg_pipe_add(seo_pg_pipe *p, int q, int nparams,
		     const char *const *params)
{
	if (p->n == SEO_PG_PIPE_MAX || nparams > SEO_PG_PIPE_PARAMS) {
		p->overflow = 1;
		return;
	}
	p->st[p->n].q = q;
	p->st[p->n].nparams = nparams;
	for (int i = 0; i < nparams; i++)
		p->st[p->n].params[i] = params[i];
	p->n++;
}

static int pipe_send(seo_pg_conn *c, const seo_pg_pipe *p, int i)
{
	int q = p->st[i].q;
	char name[NAME_MAX_LEN];

	if (c->oneshot)
		return PQsendQueryParams(c->pg, c->stmts->rows[q].sql,
					 p->st[i].nparams, NULL, p->st[i].params,
					 NULL, NULL, 0);
	stmt_name(c, q, name);
	return PQsendQueryPrepared(c->pg, name, p->st[i].nparams,
				   p->st[i].params, NULL, NULL, 0);
}

/* Reads the results of `sent` statements and the Sync's; 0 when the
 * pipeline ended where it should (whatever each statement's status). */
static int pipe_read(seo_pg_conn *c, seo_pg_pipe *p, int sent)
{
	PGresult *r;

	for (int i = 0; i < sent; i++) {
		p->res[i] = PQgetResult(c->pg);
		if (p->res[i] == NULL)
			return SEO_EDB;
		/* Each statement's results end with a NULL. */
		while ((r = PQgetResult(c->pg)) != NULL)
			PQclear(r);
	}
	r = PQgetResult(c->pg);
	if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
		PQclear(r);
		return SEO_EDB;
	}
	PQclear(r);
	return 0;
}

int seo_pg_pipe_run(seo_pg_conn *c, seo_pg_pipe *p, char *err, size_t err_len)
{
	int sent = 0, rc = 0;

	if (p->overflow) {
		snprintf(err, err_len, "too many statements in one round trip");
		return SEO_EINVAL;
	}
	for (int i = 0; i < SEO_PG_PIPE_MAX; i++) {
		PQclear(p->res[i]);
		p->res[i] = NULL;
	}
	/* PQprepare() waits for its answer, which pipeline mode forbids. */
	for (int i = 0; i < p->n; i++) {
		rc = prepare(c, p->st[i].q, err, err_len);
		if (rc != 0)
			return rc;
	}
	if (!PQenterPipelineMode(c->pg))
		return db_fail(err, err_len, "pipeline", PQerrorMessage(c->pg));
	while (sent < p->n && pipe_send(c, p, sent))
		sent++;
	/* What was sent is synced and read even after a failed send, so that
	 * the connection leaves pipeline mode idle. */
	if (sent < p->n)
		rc = db_fail(err, err_len, c->stmts->rows[p->st[sent].q].name,
			     PQerrorMessage(c->pg));
	if (!PQpipelineSync(c->pg) || pipe_read(c, p, sent) != 0 ||
	    !PQexitPipelineMode(c->pg)) {
		/* A pipeline that did not end at its Sync leaves the
		 * connection in no known state (the server ended the session,
		 * the socket broke): unusable. */
		if (rc == 0)
			db_fail(err, err_len, "pipeline", PQerrorMessage(c->pg));
		return SEO_ECLOSED;
	}
	for (int i = 0; i < sent && rc == 0; i++)
		if (!result_ok(p->res[i]))
			rc = result_fail(c, p->res[i],
					 c->stmts->rows[p->st[i].q].name, err,
					 err_len);
	return rc;
}

void seo_pg_pipe_clear(seo_pg_pipe *p)
{
	for (int i = 0; i < SEO_PG_PIPE_MAX; i++)
		PQclear(p->res[i]);
	seo_pg_pipe_init(p);
}
