/*
 * parts.h: the entry points of svc-agent's parts that the method table
 * (service.c) and the job table (jobs.c) name. Each part adds its own
 * lines here; its functions live in its own files.
 */
#ifndef AGENT_PARTS_H
#define AGENT_PARTS_H

#include <stdint.h>

#include <libpq-fe.h>

#include "seo/rpc.h"

/* ---- proposals (proposals.c) ---- */
int agent__rpc_create_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp);
int agent__rpc_list_proposals(rpc_ctx *ctx, const ProtobufCMessage *req,
			      ProtobufCMessage **resp);
int agent__rpc_get_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp);

/* The jobs (proposals_store.c; seo/job.h). "expire": pending proposals
 * past expires_at become expired, runs cut off fail. "indexnow-retry":
 * queued runs are run again. "retention": finished proposals go after 400
 * days, their notes after 90. */
int agent__proposal_expire(PGconn *pg, int64_t at_ms, int64_t *done,
			   char *err, size_t err_len);
int agent__proposal_retry(PGconn *pg, int64_t at_ms, int64_t *done,
			  char *err, size_t err_len);
int agent__proposal_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			      char *err, size_t err_len);
/* ---- agent tasks and activity notes (tasks.c, tasks_store.c, activity.c) ---- */
int agent__rpc_list_agent_tasks(rpc_ctx *ctx, const ProtobufCMessage *req,
				ProtobufCMessage **resp);
int agent__rpc_claim_agent_task(rpc_ctx *ctx, const ProtobufCMessage *req,
				ProtobufCMessage **resp);
int agent__rpc_complete_agent_task(rpc_ctx *ctx, const ProtobufCMessage *req,
				   ProtobufCMessage **resp);
int agent__rpc_log_activity(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp);
/* "expire": open and claimed tasks past their expiry become expired. */
int agent__task_expire(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		       size_t err_len);
/* "retention": tasks done, expired or cancelled more than 400 days ago. */
int agent__task_retention(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
			  size_t err_len);

/* ---- IndexNow (indexnow_rpc.c) ---- */
int agent__rpc_indexnow_key(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp);
int agent__rpc_submit_indexnow(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp);

/* ---- events (events.c) ---- */
/* "retention": activity rows past 400 days (seo/job.h). */
int agent__event_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			   char *err, size_t err_len);

/* ---- client report (report.c, report_freeze.c) ---- */
int agent__rpc_client_report(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp);
/* "freeze": past weeks with client-visible activity saved (seo/job.h). */
int agent__report_freeze(PGconn *pg, int64_t at_ms, int64_t *done,
			 char *err, size_t err_len);
/* "retention": saved weeks past 400 days. */
int agent__report_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			    char *err, size_t err_len);

/* ---- outreach (outreach_retention.c) ---- */
/* "retention": outreach mail delivered more than 30 days ago (unsent mail
 * stays) and the copies held for proposals no longer kept. */
int agent__outreach_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			      char *err, size_t err_len);

#endif
