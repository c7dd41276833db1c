/*
 * svc-account's migration set (svc-account/migrations) and the shared
 * runner of seo/pg.h applied to it.
 */
#include "acct_int.h"

#include "seo/pg.h"

static const char *const beside_exe[] = {
	"../../svc-account/migrations", "../share/seo/migrations", NULL};

const seo_pg_set acct_migrations = {"svc-account", "", SEO_CFG_MIGRATIONS_DIR,
				    beside_exe};

int acct_migrate(PGconn *db, const char *dir, int *applied, acct_err *err)
{
	err->code = "internal_error";
	return seo_pg_migrate(db, &acct_migrations, dir, applied, err->message,
			      sizeof(err->message));
}

int acct_migrations_dir(char *out, size_t n)
{
	return seo_pg_migrations_dir(&acct_migrations, out, n);
}
