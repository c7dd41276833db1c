/*
 * seoctl: the operator CLI (../shared/CONTRACT.md). Talks to PostgreSQL
 * directly (SEO_PG_URL, else the local cluster of ./seo) through the acct
 * library and seo/pg.h; `seoctl services` prints the service registry
 * without it. Prints one JSON object on stdout and exits 0; on
 * failure prints {"error": CODE, "message": TEXT} on stderr and exits 1
 * (2 for a bad command line).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "acct.h"
#include "agent_store.h"
#include "seoctl.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/pg.h"
#include "seo/services.h"
#include "seo/util.h"

#define MAX_OPTS 4
/* v[ARG]: a command's positional argument. */
#define ARG MAX_OPTS
#define EXIT_FAILED 1
#define EXIT_USAGE 2
/* Far beyond any real grant, far below int64 overflow in a balance. */
#define CREDITS_MAX 1000000000000000LL

typedef struct option {
	const char *name;  /* without the leading "--" */
	const char *value; /* shown in usage; NULL: a flag without a value,
			    * whose v[] entry is "" when given */
	int required;
} option;

/* A command's handler: `v` holds the option values in table order (NULL
 * when absent), then its positional argument at v[ARG]; it adds its
 * answer to `out`. */
typedef int (*command_fn)(PGconn *db, const char *const *v, json_t *out,
			  acct_err *err);

typedef struct command {
	const char *group;
	const char *verb; /* NULL: the group alone is the command */
	option opts[MAX_OPTS];
	command_fn run;
	const char *arg; /* a positional argument before the options, shown in
			  * usage; NULL: none */
} command;

/* Decimal digits only: "1e3", "-1" and "12abc" are refused. */
static int parse_count(const char *what, const char *s, int64_t *out,
		       acct_err *err)
{
	char *end;
	long long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoll(s, &end, 10) : -1;
	if (v < 0 || errno != 0 || *end != '\0' || v > CREDITS_MAX) {
		err->code = "invalid_parameter";
		snprintf(err->message, sizeof(err->message),
			 "%s must be a whole number from 0 to %lld, not \"%s\"",
			 what, CREDITS_MAX, s);
		return SEO_EINVAL;
	}
	*out = v;
	return 0;
}

static int put_str(json_t *out, const char *key, const char *value)
{
	return json_object_set_new(out, key, json_string(value)) == 0 ? 0 : SEO_ENOMEM;
}

static int user_json(json_t *out, const acct_new_user *u, int with_workspace)
{
	if (with_workspace && put_str(out, "workspace_id", u->workspace_id) != 0)
		return SEO_ENOMEM;
	if (put_str(out, "user_id", u->user_id) != 0 ||
	    put_str(out, "api_key", u->api_key) != 0)
		return SEO_ENOMEM;
	return 0;
}

static int workspace_create(PGconn *db, const char *const *v, json_t *out,
			    acct_err *err)
{
	acct_new_user u;
	int64_t credits = 0;
	int rc = v[2] != NULL ? parse_count("credits", v[2], &credits, err) : 0;

	if (rc == 0)
		rc = acct_workspace_create(db, v[0], v[1], credits, &u, err);
	if (rc == 0)
		rc = user_json(out, &u, 1);
	return rc;
}

static int user_add(PGconn *db, const char *const *v, json_t *out,
		    acct_err *err)
{
	acct_new_user u;
	acct_role role;
	int rc;

	if (acct_role_parse(v[2], &role) != 0) {
		err->code = "invalid_parameter";
		snprintf(err->message, sizeof(err->message),
			 "role must be owner, admin, member or client, not \"%s\"",
			 v[2]);
		return SEO_EINVAL;
	}
	rc = acct_user_add(db, v[0], v[1], role, &u, err);
	if (rc == 0)
		rc = user_json(out, &u, 0);
	return rc;
}

static int user_remove(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err)
{
	int rc = acct_user_remove(db, v[0], err);

	if (rc == 0 && json_object_set_new(out, "removed", json_true()) != 0)
		rc = SEO_ENOMEM;
	return rc;
}

static int credits_grant(PGconn *db, const char *const *v, json_t *out,
			 acct_err *err)
{
	int64_t credits, balance;
	int rc = parse_count("credits", v[1], &credits, err);

	if (rc == 0)
		rc = acct_credits_grant(db, v[0], credits, &balance, err);
	if (rc == 0 &&
	    json_object_set_new(out, "credits", json_integer(balance)) != 0)
		rc = SEO_ENOMEM;
	return rc;
}

static int website_add(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err)
{
	char site[ACCT_ID_LEN], host[ACCT_HOST_LEN];
	int rc = acct_website_add(db, v[0], v[1], v[2], site, host, err);

	if (rc != 0)
		return rc;
	if (put_str(out, "site_id", site) != 0 || put_str(out, "host", host) != 0 ||
	    put_str(out, "name", v[2] != NULL && v[2][0] != '\0' ? v[2] : host) != 0)
		return SEO_ENOMEM;
	return 0;
}

static int website_policy(PGconn *db, const char *const *v, json_t *out,
			  acct_err *err)
{
	int rc = acct_website_policy(db, v[0], v[1], err);

	if (rc == 0 && (put_str(out, "site_id", v[0]) != 0 ||
			put_str(out, "indexnow_policy", v[1]) != 0))
		rc = SEO_ENOMEM;
	return rc;
}

/* svc-account's migrations; svc-realtime applies its own when it starts. */
static int migrate(PGconn *db, const char *const *v, json_t *out,
		   acct_err *err)
{
	char dir[PATH_MAX];
	int applied, rc;

	(void)v;
	if (acct_migrations_dir(dir, sizeof(dir)) != 0) {
		err->code = "internal_error";
		snprintf(err->message, sizeof(err->message),
			 "migrations directory not found; set SEO_MIGRATIONS_DIR");
		return SEO_ENOTFOUND;
	}
	rc = acct_migrate(db, dir, &applied, err);
	if (rc == 0 && json_object_set_new(out, "applied", json_integer(applied)) != 0)
		rc = SEO_ENOMEM;
	return rc;
}

/* The process names of the peers service `svc` may call, or NULL. */
static json_t *peers(seo_service svc)
{
	json_t *a = json_array();

	for (int j = 0; a != NULL && j < SEO__SVC_COUNT; j++) {
		if (seo_service_may_call(svc, (seo_service)j) &&
		    json_array_append_new(a, json_string(seo_service_get(
						     (seo_service)j)->process)) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

/* The service registry (seo/services.h) for ./seo and the tests:
 * {"services": [{"name", "process", "addr_env", "addr", "port", "calls"}]}
 * in registry order, "addr" as this environment sets it. */
static int services(PGconn *db, const char *const *v, json_t *out,
		    acct_err *err)
{
	json_t *list = json_array();

	(void)db;
	(void)v;
	(void)err;
	if (list == NULL || json_object_set_new(out, "services", list) != 0)
		return SEO_ENOMEM;
	for (int i = 0; i < SEO__SVC_COUNT; i++) {
		const seo_service_def *d = seo_service_get((seo_service)i);
		json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:I, s:o?}",
					"name", d->name, "process", d->process,
					"addr_env", seo_config_def(d->addr_key)->name,
					"addr", seo_service_addr((seo_service)i),
					"port", (json_int_t)d->port,
					"calls", peers((seo_service)i));

		if (row == NULL || !json_is_array(json_object_get(row, "calls")) ||
		    json_array_append_new(list, row) != 0) {
			json_decref(row);
			return SEO_ENOMEM;
		}
	}
	return 0;
}

/* What a reviewer does in the web app: exactly one of --approve, --skip. */
static int proposal_decide(PGconn *db, const char *const *v, json_t *out,
			   acct_err *err)
{
	const char *status;
	int rc;

	if ((v[1] != NULL) == (v[2] != NULL)) {
		err->code = "invalid_parameter";
		snprintf(err->message, sizeof(err->message),
			 "give one of --approve and --skip");
		return SEO_EINVAL;
	}
	rc = seoctl_migrate_set(db, &agent_migrations, err);
	if (rc == 0)
		rc = agent_proposal_decide(db, v[0], v[1] != NULL, seo_now_ms(),
					   &status, err->message,
					   sizeof(err->message));
	if (rc == SEO_ENOTFOUND)
		err->code = "proposal_not_found";
	else if (rc == SEO_EINVAL || rc == SEO_EEXIST)
		err->code = "invalid_parameter";
	else if (rc != 0 && err->code == NULL)
		err->code = "internal_error";
	if (rc == 0 && (put_str(out, "proposal_id", v[0]) != 0 ||
			put_str(out, "status", status) != 0))
		rc = SEO_ENOMEM;
	return rc;
}

static int job_run(PGconn *db, const char *const *v, json_t *out,
		   acct_err *err)
{
	return seoctl_job_run(db, v[ARG], v[0], out, err);
}

static int proposal_remove_email(PGconn *db, const char *const *v,
				 json_t *out, acct_err *err)
{
	return seoctl_outreach_remove(db, v[0], v[1], out, err);
}

static int activity_share(PGconn *db, const char *const *v, json_t *out,
			  acct_err *err)
{
	return seoctl_activity_share(db, v[0], out, err);
}

static const command commands[] = {
	{"workspace", "create",
	 {{"name", "NAME", 1}, {"email", "EMAIL", 1}, {"credits", "N", 0}},
	 workspace_create, NULL},
	{"user", "add",
	 {{"workspace", "W", 1}, {"email", "EMAIL", 1},
	  {"role", "owner|admin|member|client", 1}},
	 user_add, NULL},
	{"user", "remove", {{"user", "U", 1}}, user_remove, NULL},
	{"credits", "grant", {{"workspace", "W", 1}, {"credits", "N", 1}},
	 credits_grant, NULL},
	{"website", "add",
	 {{"workspace", "W", 1}, {"host", "HOST", 1}, {"name", "NAME", 0}},
	 website_add, NULL},
	{"website", "policy",
	 {{"site", "S", 1}, {"indexnow", "automatic|approval", 1}},
	 website_policy, NULL},
	{"proposal", "decide",
	 {{"id", "P", 1}, {"approve", NULL, 0}, {"skip", NULL, 0}},
	 proposal_decide, NULL},
	{"proposal", "remove-email", {{"id", "P", 1}, {"email", "EMAIL", 1}},
	 proposal_remove_email, NULL},
	{"task", "create",
	 {{"workspace", "W", 1}, {"site", "S", 0}, {"prompt", "TEXT", 1},
	  {"origin", "ORIGIN", 0}},
	 seoctl_task_create, NULL},
	{"task", "cancel", {{"id", "T", 1}}, seoctl_task_cancel, NULL},
	{"activity", "share", {{"id", "ACT|TASK", 1}}, activity_share, NULL},
	{"job", "run", {{"at", "TIME", 0}}, job_run, "NAME"},
	{"migrate", NULL, {{NULL, NULL, 0}}, migrate, NULL},
	{"services", NULL, {{NULL, NULL, 0}}, services, NULL},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_json(FILE *f, json_t *obj)
{
	char *s = json_dumps(obj, 0);

	if (s != NULL)
		fprintf(f, "%s\n", s);
	free(s);
}

static int fail(int status, const char *code, const char *message)
{
	json_t *obj = json_pack("{s:s, s:s}", "error", code, "message", message);

	if (obj != NULL)
		print_json(stderr, obj);
	json_decref(obj);
	return status;
}

static void usage_line(const command *c, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "seoctl %s%s%s%s%s", c->group,
				      c->verb != NULL ? " " : "",
				      c->verb != NULL ? c->verb : "",
				      c->arg != NULL ? " " : "",
				      c->arg != NULL ? c->arg : "");

	for (int i = 0; i < MAX_OPTS && c->opts[i].name != NULL && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len,
					c->opts[i].required ? " --%s%s%s" : " [--%s%s%s]",
					c->opts[i].name,
					c->opts[i].value != NULL ? " " : "",
					c->opts[i].value != NULL ? c->opts[i].value : "");
}

static int usage_error(const command *c, const char *what)
{
	char line[256], msg[512];

	if (c == NULL) {
		snprintf(msg, sizeof(msg), "%s; commands:", what);
		for (size_t i = 0; i < N_COMMANDS; i++) {
			usage_line(&commands[i], line, sizeof(line));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%s %s", i > 0 ? ";" : "", line + strlen("seoctl "));
		}
	} else {
		usage_line(c, line, sizeof(line));
		snprintf(msg, sizeof(msg), "%s; usage: %s", what, line);
	}
	return fail(EXIT_USAGE, "usage", msg);
}

static const command *find_command(int argc, char **argv, int *used)
{
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const command *c = &commands[i];

		if (argc < 2 || strcmp(argv[1], c->group) != 0)
			continue;
		if (c->verb == NULL) {
			*used = 2;
			return c;
		}
		if (argc >= 3 && strcmp(argv[2], c->verb) == 0) {
			*used = 3;
			return c;
		}
	}
	return NULL;
}

/* Fills v[] from the positional argument, if any, and "--name value"
 * pairs. Returns an exit status on error. */
static int parse_options(const command *c, int argc, char **argv,
			 const char **v)
{
	char what[128];
	int i = 0;

	if (c->arg != NULL) {
		if (argc < 1 || strncmp(argv[0], "--", 2) == 0) {
			snprintf(what, sizeof(what), "%s is required", c->arg);
			return usage_error(c, what);
		}
		v[ARG] = argv[i++];
	}
	for (int step; i < argc; i += step) {
		int found = -1;

		for (int j = 0; j < MAX_OPTS && c->opts[j].name != NULL; j++)
			if (strncmp(argv[i], "--", 2) == 0 &&
			    strcmp(argv[i] + 2, c->opts[j].name) == 0)
				found = j;
		if (found < 0) {
			snprintf(what, sizeof(what), "unknown option \"%s\"", argv[i]);
			return usage_error(c, what);
		}
		step = c->opts[found].value != NULL ? 2 : 1;
		if (step == 1) {
			v[found] = "";
			continue;
		}
		if (i + 1 >= argc) {
			snprintf(what, sizeof(what), "option \"%s\" needs a value", argv[i]);
			return usage_error(c, what);
		}
		v[found] = argv[i + 1];
	}
	for (int j = 0; j < MAX_OPTS && c->opts[j].name != NULL; j++) {
		if (c->opts[j].required && v[j] == NULL) {
			snprintf(what, sizeof(what), "option --%s is required",
				 c->opts[j].name);
			return usage_error(c, what);
		}
	}
	return 0;
}

/* Notices (e.g. from migrations) would break the one-JSON-object rule. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

int main(int argc, char **argv)
{
	const char *v[MAX_OPTS + 1] = {NULL};
	const command *c;
	acct_err err = {0};
	seo_cfg_error cfg_err;
	json_t *out = NULL;
	PGconn *db = NULL;
	int used = 0, status;

	status = seo_config_load(&cfg_err);
	if (status != 0)
		return fail(EXIT_USAGE, "invalid_configuration",
			    status == SEO_ENOMEM ? "out of memory" : cfg_err.message);
	c = find_command(argc, argv, &used);
	if (c == NULL)
		return usage_error(NULL, argc < 2 ? "no command" : "unknown command");
	status = parse_options(c, argc - used, argv + used, v);
	if (status != 0)
		return status;

	/* `services` alone reads no database (db stays NULL). */
	if (c->run != services)
		db = PQconnectdb(seo_pg_url());
	if (db != NULL && PQstatus(db) != CONNECTION_OK) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", PQerrorMessage(db));
		msg[strcspn(msg, "\n")] = '\0';
		status = fail(EXIT_FAILED, "database_unavailable", msg);
		goto out;
	}
	if (db != NULL)
		PQsetNoticeProcessor(db, quiet, NULL);
	out = json_object();
	if (out == NULL) {
		status = fail(EXIT_FAILED, "internal_error", "out of memory");
		goto out;
	}
	if (c->run(db, v, out, &err) != 0) {
		status = fail(EXIT_FAILED, err.code != NULL ? err.code : "internal_error",
			      err.code != NULL ? err.message : "out of memory");
		goto out;
	}
	print_json(stdout, out);
	status = 0;
out:
	json_decref(out);
	PQfinish(db);
	return status;
}
