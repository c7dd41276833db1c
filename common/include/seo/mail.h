/*
 * mail.h: notification mail through the outbox table.
 *
 * Sending never happens on a request: acct_mail_enqueue() is one INSERT in
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
#ifndef ACCT_MAIL_H
#define ACCT_MAIL_H

#include <libpq-fe.h>

/*
 * Queues a plain-text UTF-8 mail to `to` inside the caller's transaction
 * on `db` (or as its own statement when none is open); `workspace_id` may
 * be NULL. The strings are copied. Returns 0, SEO_EINVAL when `to` is
 * empty or `to` or `subject` hold a line break, or SEO_EDB.
 */
int acct_mail_enqueue(PGconn *db, const char *workspace_id, const char *to,
		      const char *subject, const char *body);

typedef struct acct_mailer acct_mailer;

/*
 * Starts the background thread draining the outbox through its own
 * connection to `pg_url` (copied). It wakes when a mail is queued and at
 * least every 10 s for retries, and reconnects after a database failure.
 * On success *out is owned by the caller, who ends it with
 * acct_mailer_stop(). Returns 0, SEO_ENOMEM or SEO_EIO.
 */
int acct_mailer_start(const char *pg_url, acct_mailer **out);

/* Stops the thread (a send in progress finishes first, bounded by the SMTP
 * timeout) and frees `m`. NULL is allowed. */
void acct_mailer_stop(acct_mailer *m);

/*
 * One pass over the mail due now on `db` (which must be idle): each row is
 * sent through `smtp_url` and marked sent, or its failure is recorded and
 * the row rescheduled. *sent is the number delivered. An empty `smtp_url`
 * sends nothing and is not an error. Returns 0, SEO_EDB or SEO_ENOMEM
 * (the pass stops; rows not yet handled stay due).
 */
int acct_mail_drain_once(PGconn *db, const char *smtp_url, int *sent);

#endif
