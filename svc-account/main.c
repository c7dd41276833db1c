/*
 * svc-account: applies the migrations, then serves seo.account.v1.Account
 * on SEO_ACCOUNT_ADDR, drains its mail outbox and runs its periodic jobs.
 */
#include <limits.h>
#include <string.h>

#include <libpq-fe.h>

#include "acct.h"
#include "seo/config.h"
#include "seo/job.h"
#include "seo/log.h"
#include "seo/mail.h"
#include "seo/pg.h"

/*
 * Handler threads. A debit waits for its group commit on its thread, so the
 * number of threads bounds how many debits can share one commit.
 */
#define WORKERS 128

/* PostgreSQL connections; a handler holds one only while it queries. */
#define POOL 16

static int migrate(const char *url)
{
	char dir[PATH_MAX];
	acct_err err;
	PGconn *db;
	int applied, rc;

	if (acct_migrations_dir(dir, sizeof(dir)) != 0) {
		log_error("migrations directory not found; set %s",
			  seo_pg_migrations_var(&acct_migrations));
		return -1;
	}
	db = PQconnectdb(url);
	if (PQstatus(db) != CONNECTION_OK) {
		log_error("cannot connect to postgresql: %.*s",
			  (int)strcspn(PQerrorMessage(db), "\n"), PQerrorMessage(db));
		PQfinish(db);
		return -1;
	}
	rc = acct_migrate(db, dir, &applied, &err);
	PQfinish(db);
	if (rc != 0) {
		log_error("migrations failed: %s", err.message);
		return rc;
	}
	if (applied > 0)
		log_info("applied %d migrations from %s", applied, dir);
	return 0;
}

int main(void)
{
	const char *url = seo_pg_url();
	seo_mailer *mailer = NULL;
	seo_jobs *jobs = NULL;
	acct_options opt;
	acct_err err;
	acct_service *a = NULL;
	int rc = 1;

	seo_config_init();
	/* before the migrations: rpc_service_main() would refuse it later */
	seo_config_require(SEO_CFG_INTERNAL_TOKEN);
	seo_log_init("svc-account");
	if (migrate(url) != 0)
		goto out;
	acct_options_init(&opt);
	opt.pg_url = url;
	opt.pool_size = POOL;
	if (acct_new(&opt, &a, &err) != 0) {
		log_error("cannot start: %s", err.message);
		goto out;
	}
	if (seo_mailer_start(url, &acct_outbox, &mailer) != 0) {
		log_error("cannot start the mailer");
		goto out;
	}
	if (seo_jobs_start(url, acct_jobs, acct_n_jobs, &jobs) != 0) {
		log_error("cannot start the job scheduler");
		goto out;
	}
	rc = rpc_service_main("svc-account", seo_config(SEO_CFG_ACCOUNT_ADDR),
			      acct_rpc_methods, acct_rpc_n_methods, a, WORKERS,
			      NULL);
out:
	seo_jobs_stop(jobs);
	seo_mailer_stop(mailer);
	acct_free(a);
	return rc;
}
