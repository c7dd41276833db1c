/*
 * svc-account's migrations (svc-account/migrations) through the shared
 * runner of seo/pg.h.
 */
#include "acct_int.h"

#include "seo/pg.h"

int acct_migrate(PGconn *db, const char *dir, int *applied, acct_err *err)
{
	err->code = "internal_error";
	return seo_pg_migrate(db, SEO_PG_ACCOUNT, dir, applied, err->message,
			      sizeof(err->message));
}

int acct_migrations_dir(char *out, size_t n)
{
	return seo_pg_migrations_dir(SEO_PG_ACCOUNT, out, n);
}
