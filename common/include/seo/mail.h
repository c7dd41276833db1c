/*
 * seo/mail.h: notification mail through an outbox table (library
 * seo_mail), for any component that sends mail.
 *
 * The outbox belongs to the component that sends: its migrations create
 * the table (any name) with this shape, and it names the table and the
 * NOTIFY channel that wakes its mailers in a seo_outbox:
 *
 *   CREATE TABLE <table> (
 *       id bigserial PRIMARY KEY, workspace_id text, to_addr text NOT NULL,
 *       subject text NOT NULL, body text NOT NULL,
 *       created_at bigint NOT NULL, attempts integer NOT NULL DEFAULT 0,
 *       next_attempt_at bigint NOT NULL, sent_at bigint, last_error text);
 *   CREATE INDEX <table>_pending ON <table> (next_attempt_at)
 *       WHERE sent_at IS NULL;
 *
 * Sending never happens on a request: seo_mail_enqueue() is one INSERT in
 * the caller's transaction, so a mail exists exactly when the change that
 * caused it commits, and a slow or failing mail server never delays the
 * API. A mailer thread with its own connection sends due rows through SMTP
 * (SEO_SMTP_URL, e.g. smtp://host:25 or smtps://user:pass@host:465; STARTTLS
 * is used when the server offers it) from SEO_MAIL_FROM (a bare address:
 * the envelope sender and the From header), and retries a failed row with
 * exponential back-off from 30 s up to one hour. With SEO_SMTP_URL empty,
 * mail stays in the outbox.
 *
 * Several processes may run mailers on one database: a row being sent is
 * locked (FOR UPDATE SKIP LOCKED), so each mail is sent by one of them.
 * Functions return 0 or a negative SEO_E* code.
 */
#ifndef SEO_MAIL_H
#define SEO_MAIL_H

#include <stdint.h>

#include <libpq-fe.h>

/* A component's outbox (static data of the component; trusted SQL
 * identifiers). */
typedef struct seo_outbox {
	const char *table;   /* "outbox" */
	const char *channel; /* NOTIFY channel of its mailers, "ex_outbox" */
} seo_outbox;

/*
 * Queues a plain-text UTF-8 mail to `to` in `box`, inside the caller's
 * transaction on `db` (or as its own statement when none is open);
 * `workspace_id` may be NULL. The strings are copied. Returns 0,
 * SEO_EINVAL when `to` is empty or `to` or `subject` hold a line break,
 * or SEO_EDB.
 */
int seo_mail_enqueue(PGconn *db, const seo_outbox *box,
		     const char *workspace_id, const char *to,
		     const char *subject, const char *body);

typedef struct seo_mailer seo_mailer;

/*
 * Starts the background thread draining `box` (static, not copied)
 * through its own connection to `pg_url` (copied). It wakes when a mail is queued and at
 * least every 10 s for retries, and reconnects after a database failure.
 * On success *out is owned by the caller, who ends it with
 * seo_mailer_stop(). Returns 0, SEO_ENOMEM or SEO_EIO.
 */
int seo_mailer_start(const char *pg_url, const seo_outbox *box,
		     seo_mailer **out);

/* Stops the thread (a send in progress finishes first, bounded by the SMTP
 * timeout) and frees `m`. NULL is allowed. */
void seo_mailer_stop(seo_mailer *m);

/*
 * One pass over the mail of `box` due now on `db` (which must be idle): each row is
 * sent through `smtp_url` and marked sent, or its failure is recorded and
 * the row rescheduled. *sent is the number delivered. An empty `smtp_url`
 * sends nothing and is not an error. Returns 0, SEO_EDB or SEO_ENOMEM
 * (the pass stops; rows not yet handled stay due).
 */
int seo_mail_drain_once(PGconn *db, const seo_outbox *box,
			const char *smtp_url, int *sent);

/* Deletes the mail of `box` sent before `before_ms` (Unix ms); *deleted
 * counts it (for a retention job). Unsent mail is kept. */
int seo_mail_purge(PGconn *db, const seo_outbox *box, int64_t before_ms,
		   int64_t *deleted);

#endif
