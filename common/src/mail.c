/*
 * mail.c: a component's notification outbox and the thread that drains it
 * over SMTP (seo/mail.h).
 */
#include "seo/mail.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define MAIL_BACKOFF_MIN_MS (30 * 1000LL)
#define MAIL_BACKOFF_MAX_MS (3600 * 1000LL)
#define MAIL_CONNECT_TIMEOUT_S 10L
#define MAIL_TIMEOUT_S 30L
/* Longest sleep between passes: how late a retry may start. */
#define MAILER_IDLE_MS 10000
/* Bytes of subject per RFC 2047 encoded word: "Subject: " and a word of
 * 56 base64 characters stay within 78 per line. */
#define SUBJECT_CHUNK 42
/* Room for one statement with the table and channel names spliced in. */
#define SQL_MAX 512

enum mail_outcome { MAIL_NONE, MAIL_SENT, MAIL_FAILED };

/* Runs a statement without parameters or rows (BEGIN, COMMIT). */
static int exec_plain(PGconn *db, const char *sql)
{
	PGresult *res = PQexec(db, sql);
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : SEO_EDB;

	if (rc != 0)
		log_error("%s failed: %.*s", sql,
			  (int)strcspn(PQerrorMessage(db), "\n"), PQerrorMessage(db));
	PQclear(res);
	return rc;
}

int seo_mail_enqueue(PGconn *db, const seo_outbox *box,
		     const char *workspace_id, const char *to,
		     const char *subject, const char *body)
{
	char snow[24], sql[SQL_MAX];
	const char *params[5] = {workspace_id, to, subject, body, snow};
	PGresult *res;
	int rc = SEO_EDB;

	/* A line break in a header value would let it add headers. */
	if (to == NULL || *to == '\0' || subject == NULL || body == NULL ||
	    strpbrk(to, "\r\n") != NULL || strpbrk(subject, "\r\n") != NULL)
		return SEO_EINVAL;
	snprintf(snow, sizeof(snow), "%lld", (long long)seo_now_ms());
	/* The NOTIFY wakes the mailers when the transaction commits. */
	snprintf(sql, sizeof(sql),
		 "WITH m AS (INSERT INTO %s (workspace_id, to_addr, subject,"
		 "           body, created_at, next_attempt_at)"
		 "           VALUES ($1, $2, $3, $4, $5, $5) RETURNING id)"
		 " SELECT pg_notify('%s', '') FROM m", box->table, box->channel);
	res = PQexecParams(db, sql, 5, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_error("could not queue mail: %s", PQerrorMessage(db));
		goto out;
	}
	rc = 0;
out:
	PQclear(res);
	return rc;
}

/* ---- message ------------------------------------------------------------ */

/*
 * Writes `s` as a header value: as is when ASCII, else as RFC 2047 base64
 * encoded words on folded lines, never splitting a UTF-8 sequence.
 */
static void put_subject(FILE *f, const char *s)
{
	size_t len = strlen(s), i, n;
	unsigned char b64[4 * SUBJECT_CHUNK / 3 + 1];

	for (i = 0; i < len && (unsigned char)s[i] < 0x80; i++)
		;
	if (i == len) {
		fputs(s, f);
		return;
	}
	for (i = 0; i < len; i += n) {
		n = len - i < SUBJECT_CHUNK ? len - i : SUBJECT_CHUNK;
		while (n < len - i && n > 1 && ((unsigned char)s[i + n] & 0xC0) == 0x80)
			n--;
		EVP_EncodeBlock(b64, (const unsigned char *)s + i, (int)n);
		fprintf(f, "%s=?UTF-8?B?%s?=", i > 0 ? "\r\n " : "", (char *)b64);
	}
}

/*
 * Builds the RFC 5322 message into *msg (malloc'd, *len bytes). The
 * Message-ID is derived from the outbox row, so a retry after an unknown
 * outcome carries the same id and receivers can drop the duplicate.
 */
static int mail_build(const char *from, const char *to, const char *subject,
		      const char *body, const char *table, const char *row_id,
		      const char *created_at, char **msg, size_t *len)
{
	static const char *const wday[] = {"Sun", "Mon", "Tue", "Wed", "Thu",
					   "Fri", "Sat"};
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May",
					  "Jun", "Jul", "Aug", "Sep", "Oct",
					  "Nov", "Dec"};
	const char *domain = strrchr(from, '@');
	time_t now = time(NULL);
	struct tm tm;
	const char *p;
	FILE *f;

	*msg = NULL;
	f = open_memstream(msg, len);
	if (f == NULL)
		return SEO_ENOMEM;
	gmtime_r(&now, &tm);
	fprintf(f, "Date: %s, %02d %s %04d %02d:%02d:%02d +0000\r\n",
		wday[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon], tm.tm_year + 1900,
		tm.tm_hour, tm.tm_min, tm.tm_sec);
	fprintf(f, "From: %s\r\nTo: %s\r\nSubject: ", from, to);
	put_subject(f, subject);
	fprintf(f, "\r\nMessage-ID: <%s.%s.%s@%s>\r\n", table, row_id, created_at,
		domain != NULL && domain[1] != '\0' ? domain + 1 : "localhost");
	fputs("MIME-Version: 1.0\r\n"
	      "Content-Type: text/plain; charset=utf-8\r\n"
	      "Content-Transfer-Encoding: 8bit\r\n\r\n", f);
	/* SMTP wants CRLF line ends; libcurl adds the dot-stuffing. */
	for (p = body; *p != '\0'; p++) {
		if (*p == '\n')
			fputs("\r\n", f);
		else if (*p != '\r')
			fputc(*p, f);
	}
	if (p == body || p[-1] != '\n')
		fputs("\r\n", f);
	if (fclose(f) != 0) {
		free(*msg);
		*msg = NULL;
		return SEO_ENOMEM;
	}
	return 0;
}

/* ---- smtp --------------------------------------------------------------- */

typedef struct upload {
	const char *p;
	size_t left;
} upload;

static size_t upload_read(char *buf, size_t size, size_t n, void *ud)
{
	upload *u = ud;
	size_t k = size * n < u->left ? size * n : u->left;

	memcpy(buf, u->p, k);
	u->p += k;
	u->left -= k;
	return k;
}

/* Sends one message; on failure `err` says why (the server's reply code
 * when there was one). */
static int smtp_send(const char *url, const char *from, const char *to,
		     const char *msg, size_t len, char err[CURL_ERROR_SIZE])
{
	struct curl_slist *rcpt = NULL;
	upload u = {msg, len};
	CURL *curl;
	CURLcode cc;
	int rc = SEO_ENOMEM;

	err[0] = '\0';
	curl = curl_easy_init();
	if (curl == NULL)
		goto out;
	rcpt = curl_slist_append(NULL, to);
	if (rcpt == NULL)
		goto out;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
	curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, upload_read);
	curl_easy_setopt(curl, CURLOPT_READDATA, &u);
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, MAIL_CONNECT_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, MAIL_TIMEOUT_S);
	/* The mailer is a thread: no SIGALRM-based resolver timeout. */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	cc = curl_easy_perform(curl);
	if (cc != CURLE_OK) {
		if (err[0] == '\0')
			snprintf(err, CURL_ERROR_SIZE, "%s", curl_easy_strerror(cc));
		rc = SEO_EIO;
		goto out;
	}
	rc = 0;
out:
	if (rc == SEO_ENOMEM)
		snprintf(err, CURL_ERROR_SIZE, "out of memory");
	curl_slist_free_all(rcpt);
	curl_easy_cleanup(curl);
	return rc;
}

/* ---- outbox ------------------------------------------------------------- */

/* Delay after the `attempts`-th failure: 30 s, 1 min, 2 min ... 1 h. */
static long long mail_backoff_ms(int attempts)
{
	long long d = MAIL_BACKOFF_MIN_MS;

	for (int i = 1; i < attempts && d < MAIL_BACKOFF_MAX_MS; i++)
		d *= 2;
	return d < MAIL_BACKOFF_MAX_MS ? d : MAIL_BACKOFF_MAX_MS;
}

/* Marks row `id` sent (err NULL), or records its `attempts`-th failure
 * and when to try again. */
static int mail_record(PGconn *db, const seo_outbox *box, const char *id,
		       int attempts, const char *err)
{
	char when[24], sql[SQL_MAX];
	const char *params[3] = {id, when, err};
	PGresult *res;
	int rc = 0;

	snprintf(when, sizeof(when), "%lld",
		 (long long)seo_now_ms() + (err != NULL ? mail_backoff_ms(attempts) : 0));
	if (err == NULL)
		snprintf(sql, sizeof(sql), "UPDATE %s SET sent_at = $2 WHERE id = $1",
			 box->table);
	else
		snprintf(sql, sizeof(sql), "UPDATE %s SET attempts = attempts + 1,"
			 " next_attempt_at = $2, last_error = $3 WHERE id = $1",
			 box->table);
	res = PQexecParams(db, sql, err == NULL ? 2 : 3, NULL, params, NULL,
			   NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		log_error("could not record the outcome of mail %s: %s", id,
			  PQerrorMessage(db));
		rc = SEO_EDB;
	}
	PQclear(res);
	return rc;
}

/*
 * Sends the first row due at `due` that no other mailer holds. The row
 * stays locked while it is sent, so a concurrent pass skips it.
 */
static int mail_send_next(PGconn *db, const seo_outbox *box,
			  const char *smtp_url, long long due,
			  enum mail_outcome *outcome)
{
	const char *from = seo_config(SEO_CFG_MAIL_FROM);
	const char *id, *to;
	char sdue[24], err[CURL_ERROR_SIZE], sql[SQL_MAX];
	const char *params[1] = {sdue};
	PGresult *res;
	char *msg = NULL;
	size_t len = 0;
	int attempts, rc = SEO_EDB;

	*outcome = MAIL_NONE;
	if (exec_plain(db, "BEGIN") < 0)
		return SEO_EDB;
	snprintf(sdue, sizeof(sdue), "%lld", due);
	snprintf(sql, sizeof(sql),
		 "SELECT id, to_addr, subject, body, attempts, created_at"
		 " FROM %s WHERE sent_at IS NULL AND next_attempt_at <= $1"
		 " ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
		 box->table);
	res = PQexecParams(db, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_error("could not read the outbox: %s", PQerrorMessage(db));
		goto out;
	}
	if (PQntuples(res) == 0) {
		rc = 0;
		goto out;
	}
	id = PQgetvalue(res, 0, 0);
	to = PQgetvalue(res, 0, 1);
	attempts = atoi(PQgetvalue(res, 0, 4)) + 1;
	rc = mail_build(from, to, PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3),
			box->table, id, PQgetvalue(res, 0, 5), &msg, &len);
	if (rc < 0)
		goto out;
	if (smtp_send(smtp_url, from, to, msg, len, err) == 0) {
		*outcome = MAIL_SENT;
		log_info("mail %s sent to %s", id, to);
		rc = mail_record(db, box, id, attempts, NULL);
	} else {
		*outcome = MAIL_FAILED;
		log_warn("mail %s to %s failed (attempt %d): %s", id, to,
			 attempts, err);
		rc = mail_record(db, box, id, attempts, err);
	}
out:
	PQclear(res);
	free(msg);
	if (exec_plain(db, rc == 0 ? "COMMIT" : "ROLLBACK") < 0)
		rc = SEO_EDB;
	return rc;
}

int seo_mail_drain_once(PGconn *db, const seo_outbox *box,
			const char *smtp_url, int *sent)
{
	/* Only rows due when the pass starts: a failed row moves at least
	 * 30 s past this, so the pass ends. */
	long long due = seo_now_ms();
	enum mail_outcome outcome;
	int rc = 0;

	*sent = 0;
	if (smtp_url == NULL || *smtp_url == '\0')
		return 0;
	do {
		rc = mail_send_next(db, box, smtp_url, due, &outcome);
		if (rc == 0 && outcome == MAIL_SENT)
			(*sent)++;
	} while (rc == 0 && outcome != MAIL_NONE);
	return rc;
}

int seo_mail_purge(PGconn *db, const seo_outbox *box, int64_t before_ms,
		   int64_t *deleted)
{
	char sbefore[24], sql[SQL_MAX];
	const char *params[1] = {sbefore};
	PGresult *res;
	int rc = 0;

	*deleted = 0;
	snprintf(sbefore, sizeof(sbefore), "%lld", (long long)before_ms);
	snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE sent_at < $1", box->table);
	res = PQexecParams(db, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		log_error("could not purge sent mail: %s", PQerrorMessage(db));
		rc = SEO_EDB;
	} else {
		*deleted = strtoll(PQcmdTuples(res), NULL, 10);
	}
	PQclear(res);
	return rc;
}

/* ---- mailer thread ------------------------------------------------------ */

struct seo_mailer {
	const seo_outbox *box;
	char *pg_url;
	int stop_pipe[2]; /* closing the write end stops the thread */
	pthread_t thread;
};

static PGconn *mailer_connect(const seo_mailer *m)
{
	PGconn *db = PQconnectdb(m->pg_url);
	PGresult *res = NULL;
	char sql[SQL_MAX];

	if (PQstatus(db) != CONNECTION_OK)
		goto fail;
	snprintf(sql, sizeof(sql), "LISTEN %s", m->box->channel);
	res = PQexec(db, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto fail;
	PQclear(res);
	return db;
fail:
	log_warn("mailer could not connect to the database: %s",
		 PQerrorMessage(db));
	PQclear(res);
	PQfinish(db);
	return NULL;
}

/* Sleeps until a mail is queued, the idle timeout passes or the mailer is
 * stopped. Returns 1 when stopped. */
static int mailer_wait(seo_mailer *m, PGconn *db)
{
	struct pollfd pfd[2] = {
		{.fd = m->stop_pipe[0], .events = POLLIN},
		{.fd = db != NULL ? PQsocket(db) : -1, .events = POLLIN},
	};
	int pending = 0;
	PGnotify *n;

	/* Notifications read during the last pass are already in libpq. */
	while (db != NULL && (n = PQnotifies(db)) != NULL) {
		PQfreemem(n);
		pending = 1;
	}
	if (poll(pfd, 2, pending ? 0 : MAILER_IDLE_MS) < 0)
		return 0;
	if (pfd[0].revents != 0)
		return 1;
	if (pfd[1].revents != 0) {
		/* A failure leaves the connection bad: the loop reconnects. */
		PQconsumeInput(db);
		while ((n = PQnotifies(db)) != NULL)
			PQfreemem(n);
	}
	return 0;
}

static void *mailer_main(void *arg)
{
	seo_mailer *m = arg;
	PGconn *db = NULL;
	int sent;

	do {
		if (db != NULL && PQstatus(db) != CONNECTION_OK) {
			log_warn("mailer lost its database connection");
			PQfinish(db);
			db = NULL;
		}
		if (db == NULL)
			db = mailer_connect(m);
		if (db != NULL)
			seo_mail_drain_once(db, m->box, seo_config(SEO_CFG_SMTP_URL),
					    &sent);
	} while (!mailer_wait(m, db));
	PQfinish(db);
	return NULL;
}

int seo_mailer_start(const char *pg_url, const seo_outbox *box,
		     seo_mailer **out)
{
	seo_mailer *m;
	int rc = SEO_ENOMEM;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return SEO_ENOMEM;
	m->stop_pipe[0] = m->stop_pipe[1] = -1;
	m->box = box;
	m->pg_url = strdup(pg_url);
	if (m->pg_url == NULL)
		goto out;
	rc = SEO_EIO;
	if (pipe2(m->stop_pipe, O_CLOEXEC) != 0) {
		m->stop_pipe[0] = m->stop_pipe[1] = -1;
		goto out;
	}
	if (pthread_create(&m->thread, NULL, mailer_main, m) != 0)
		goto out;
	*out = m;
	rc = 0;
out:
	if (rc < 0) {
		if (m->stop_pipe[0] >= 0) {
			close(m->stop_pipe[0]);
			close(m->stop_pipe[1]);
		}
		free(m->pg_url);
		free(m);
	}
	return rc;
}

void seo_mailer_stop(seo_mailer *m)
{
	if (m == NULL)
		return;
	close(m->stop_pipe[1]);
	pthread_join(m->thread, NULL);
	close(m->stop_pipe[0]);
	free(m->pg_url);
	free(m);
}
