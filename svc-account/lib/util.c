/*
 * Small helpers shared by the library: errors, ids, role names.
 */
#include "acct_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define ACCT_ID_RANDOM 20

static const struct {
	const char *name;
	acct_role role;
} role_names[] = {
	{"owner", ACCT_ROLE_OWNER},
	{"admin", ACCT_ROLE_ADMIN},
	{"member", ACCT_ROLE_MEMBER},
	{"client", ACCT_ROLE_CLIENT},
};

#define N_ROLES (sizeof(role_names) / sizeof(role_names[0]))

const char *acct_role_name(acct_role role)
{
	for (size_t i = 0; i < N_ROLES; i++)
		if (role_names[i].role == role)
			return role_names[i].name;
	return NULL;
}

int acct_role_parse(const char *name, acct_role *out)
{
	for (size_t i = 0; name != NULL && i < N_ROLES; i++) {
		if (strcmp(role_names[i].name, name) == 0) {
			*out = role_names[i].role;
			return 0;
		}
	}
	return SEO_EINVAL;
}

int acct__fail(acct_err *err, int rc, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return rc;
}

int acct__new_id(const char *prefix, char out[ACCT_ID_LEN], acct_err *err)
{
	size_t plen = strlen(prefix);

	if (plen + ACCT_ID_RANDOM >= ACCT_ID_LEN)
		return acct__fail(err, SEO_EINVAL, "internal_error",
				  "id prefix \"%s\" is too long", prefix);
	memcpy(out, prefix, plen);
	if (seo_random_string(out + plen, ACCT_ID_RANDOM, SEO_URLSAFE) != 0)
		return acct__fail(err, SEO_EIO, "internal_error",
				  "random generator failed");
	return 0;
}

#define TIME_DIGITS 11

int acct__new_time_id(const char *prefix, char out[ACCT_ID_LEN],
		      acct_err *err)
{
	static const char hex[] = "0123456789abcdef";
	size_t plen = strlen(prefix);
	uint64_t ms = (uint64_t)seo_now_ms();
	int rc = acct__new_id(prefix, out, err);

	for (size_t i = TIME_DIGITS; rc == 0 && i-- > 0; ms >>= 4)
		out[plen + i] = hex[ms & 15];
	return rc;
}

int acct__exec_sql(PGconn *db, const char *sql)
{
	PGresult *res = PQexec(db, sql);
	int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

	if (!ok)
		log_error("%s failed: %s", sql, PQerrorMessage(db));
	PQclear(res);
	return ok ? 0 : SEO_EDB;
}

void acct__deadline_in(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
