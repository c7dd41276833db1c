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

/* 0 when an id of `prefix` fits ACCT_ID_LEN, else SEO_EINVAL. */
static int check_prefix(const char *prefix, acct_err *err)
{
	if (strlen(prefix) + ACCT_ID_RANDOM >= ACCT_ID_LEN)
		return acct__fail(err, SEO_EINVAL, "internal_error",
				  "id prefix \"%s\" is too long", prefix);
	return 0;
}

int acct__new_id(const char *prefix, char out[ACCT_ID_LEN], acct_err *err)
{
	size_t plen = strlen(prefix);
	int rc = check_prefix(prefix, err);

	if (rc != 0)
		return rc;
	memcpy(out, prefix, plen);
	if (seo_random_string(out + plen, ACCT_ID_RANDOM, SEO_URLSAFE) != 0)
		return acct__fail(err, SEO_EIO, "internal_error",
				  "random generator failed");
	return 0;
}

#define TIME_DIGITS 11
/* Ids drawn at once: a draw of randomness is one getpid() besides
 * (OpenSSL's fork check), which a report's every usage row paid. */
#define DRAW_IDS 64

int acct__new_time_ids(const char *prefix, char (*out)[ACCT_ID_LEN], size_t n,
		       acct_err *err)
{
	enum { RND = ACCT_ID_RANDOM - TIME_DIGITS };
	size_t plen = strlen(prefix);
	char stamp[TIME_DIGITS], rnd[DRAW_IDS * RND + 1];
	int rc = check_prefix(prefix, err);

	if (rc != 0)
		return rc;
	seo_fmt_hex(stamp, TIME_DIGITS, (uint64_t)seo_now_ms());
	for (size_t i = 0; i < n; i++) {
		size_t k = i % DRAW_IDS, draw = n - i < DRAW_IDS ? n - i : DRAW_IDS;

		if (k == 0 && seo_random_string(rnd, draw * RND, SEO_URLSAFE) != 0)
			return acct__fail(err, SEO_EIO, "internal_error",
					  "random generator failed");
		memcpy(out[i], prefix, plen);
		memcpy(out[i] + plen, stamp, TIME_DIGITS);
		memcpy(out[i] + plen + TIME_DIGITS, rnd + k * RND, RND);
		out[i][plen + ACCT_ID_RANDOM] = '\0';
	}
	return 0;
}

int acct__new_time_id(const char *prefix, char out[ACCT_ID_LEN],
		      acct_err *err)
{
	return acct__new_time_ids(prefix, (char (*)[ACCT_ID_LEN])out, 1, err);
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
