/*
 * The worker running approved proposals (proposals_int.h): a thread on its
 * own connection, listening on channel agent_proposals (an approval, a
 * retry), that claims one approved proposal at a time (FOR UPDATE SKIP
 * LOCKED: replicas share the work) and runs it on behalf of its creator.
 * It also looks every POLL_MS without a notification, and after a
 * reconnection.
 */
#include "proposals_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define POLL_MS 30000
#define WAKE_MS 500

struct agent__worker {
	agent_svc *svc;
	char *pg_url;
	pthread_t thread;
	atomic_int stop;
};

enum { Q_CLAIM, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_CLAIM] = {"claim",
		"UPDATE agent_proposals SET status = 'executing', "
		"started_at = $1::bigint, attempts = attempts + 1 WHERE id = "
		"(SELECT id FROM agent_proposals WHERE status = 'approved' "
		"AND queued_at IS NULL ORDER BY decided_at, id LIMIT 1 "
		"FOR UPDATE SKIP LOCKED) RETURNING id, workspace_id, kind, "
		"site_id, payload::text, created_user_id, created_key_id, "
		"created_role, attempts"},
};

static const seo_pg_stmts stmts = {"agent_prw_", rows, Q__COUNT};

static const char *col(PGresult *r, int c)
{
	return PQgetisnull(r, 0, c) ? NULL : PQgetvalue(r, 0, c);
}

/* Claims and runs one approved proposal: 1 when there was one, 0 when
 * none, SEO_EDB when the connection failed. */
static int run_one(agent__worker *w, PGconn *pg)
{
	char now[24];
	PGresult *r = NULL;
	agent_proposal_outcome out;
	const agent__kind *k;
	seo_arena *arena;
	int64_t at = seo_now_ms();
	int rc;

	snprintf(now, sizeof(now), "%lld", (long long)at);
	rc = agent__db_exec(pg, &stmts, Q_CLAIM, 1, (const char *const[]){now}, &r);
	if (rc != 0 || PQntuples(r) == 0) {
		PQclear(r);
		return rc != 0 ? SEO_EDB : 0;
	}
	k = agent__kind_find(col(r, 2));
	arena = seo_arena_new(0);
	if (k == NULL || arena == NULL) {
		log_error("proposal %s: cannot run kind %s", col(r, 0), col(r, 2));
	} else {
		rpc_identity who = {col(r, 0), col(r, 1), col(r, 5), col(r, 6),
				    col(r, 7)};
		agent_proposal_run run = {
			.svc = w->svc, .arena = arena, .proposal_id = col(r, 0),
			.workspace_id = col(r, 1), .site_id = col(r, 3),
			.payload_json = col(r, 4), .who = &who, .charge = 1,
			.attempt = atoi(col(r, 8)), .now_ms = at,
		};

		agent__proposal_execute(k, &run, &out);
		log_info("proposal %s: %s%s%s", run.proposal_id, out.status,
			 out.err.code != NULL ? " " : "",
			 out.err.code != NULL ? out.err.code : "");
	}
	seo_arena_free(arena);
	PQclear(r);
	return 1;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A connection listening on agent_proposals, once the service's tables
 * exist (its pool applies the migrations); NULL for now. */
static PGconn *connect_listening(agent_svc *svc, const char *url)
{
	PGconn *pg;
	PGresult *r;

	if (agent_svc_db_check(svc) != 0)
		return NULL;
	pg = PQconnectdb(url);
	if (PQstatus(pg) == CONNECTION_OK) {
		r = PQexec(pg, "LISTEN agent_proposals");
		if (PQresultStatus(r) == PGRES_COMMAND_OK) {
			PQclear(r);
			return pg;
		}
		PQclear(r);
	}
	PQfinish(pg);
	return NULL;
}

/* Waits up to WAKE_MS for a notification: 1 when one came, 0 when none,
 * SEO_EDB when the connection broke. */
static int wait_notice(PGconn *pg)
{
	int fd = PQsocket(pg), got = 0;
	struct timeval tv = {0, WAKE_MS * 1000};
	PGnotify *n;
	fd_set fds;

	FD_ZERO(&fds);
	FD_SET(fd, &fds);
	if (select(fd + 1, &fds, NULL, NULL, &tv) < 0)
		return 0;
	if (PQconsumeInput(pg) == 0)
		return SEO_EDB;
	while ((n = PQnotifies(pg)) != NULL) {
		got = 1;
		PQfreemem(n);
	}
	return got;
}

static void *worker_main(void *arg)
{
	agent__worker *w = arg;
	PGconn *pg = NULL;
	int64_t last = 0;

	while (!atomic_load(&w->stop)) {
		int rc = 1;

		if (pg == NULL &&
		    (pg = connect_listening(w->svc, w->pg_url)) == NULL) {
			pause_ms(WAKE_MS * 2);
			continue;
		}
		if (seo_mono_ms() - last >= POLL_MS || (rc = wait_notice(pg)) == 1) {
			last = seo_mono_ms();
			while (!atomic_load(&w->stop) && (rc = run_one(w, pg)) == 1)
				;
		}
		if (rc < 0) {
			PQfinish(pg);
			pg = NULL;
			last = 0;
		}
	}
	PQfinish(pg);
	return NULL;
}

int agent__worker_start(agent_svc *svc, const char *pg_url,
			agent__worker **out)
{
	agent__worker *w = calloc(1, sizeof(*w));

	if (w == NULL || (w->pg_url = strdup(pg_url)) == NULL) {
		free(w);
		return SEO_ENOMEM;
	}
	w->svc = svc;
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		free(w->pg_url);
		free(w);
		return SEO_EIO;
	}
	*out = w;
	return 0;
}

void agent__worker_stop(agent__worker *w)
{
	if (w == NULL)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	free(w->pg_url);
	free(w);
}
