/*
 * config.c: the table of SEO_* variables and the values parsed from it once
 * per process (see seo/config.h). The kinds' parsers are config_kinds.c.
 */
#include "seo/config.h"
#include "seo/errors.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROW(key, nm, k, d, m, ...) \
	[key] = {.name = nm, .kind = k, .dflt = d, .meaning = m, __VA_ARGS__}
#define WEB "http or https"

static const seo_cfg_def cfg_table[SEO__CFG_COUNT] = {
	ROW(SEO_CFG_HTTP_ADDR, "SEO_HTTP_ADDR", SEO_CFG_ADDR, "127.0.0.1:8080", "gateway listen address"),
	ROW(SEO_CFG_PG_URL, "SEO_PG_URL", SEO_CFG_PG, "", "PostgreSQL connection string (default: the local cluster of ./seo up)"),
	ROW(SEO_CFG_DATA_DIR, "SEO_DATA_DIR", SEO_CFG_TEXT, "var/graph", "crawl index served by svc-graph"),
	ROW(SEO_CFG_LOG_LEVEL, "SEO_LOG_LEVEL", SEO_CFG_LEVEL, "info", "debug, info, warn, error"),
	ROW(SEO_CFG_RATE_LIMIT_PER_MIN, "SEO_RATE_LIMIT_PER_MIN", SEO_CFG_INT, "60", "requests per minute per key; 0 turns the limit off",
	    .min = 0, .max = 1000000000, .unit = "requests per minute"),
#define SEO_SERVICE(id, name, port, calls, summary) \
	ROW(SEO_CFG_##id##_ADDR, "SEO_" #id "_ADDR", SEO_CFG_ADDR, "127.0.0.1:" #port, "svc-" name " gRPC address"),
#include "services.def"
#undef SEO_SERVICE
	ROW(SEO_CFG_FETCH_CONNECT_TO, "SEO_FETCH_CONNECT_TO", SEO_CFG_CONNECT_TO, "", "live fetches: HOST:PORT:CONNECT_HOST:CONNECT_PORT entries"),
	ROW(SEO_CFG_FETCH_ALLOW_NETS, "SEO_FETCH_ALLOW_NETS", SEO_CFG_NETS, "", "CIDRs exempt from the private-address block (tests only)"),
	ROW(SEO_CFG_FETCH_CA_FILE, "SEO_FETCH_CA_FILE", SEO_CFG_FILE, "", "extra CA bundle for live fetches"),
	ROW(SEO_CFG_CHALLENGE, "SEO_CHALLENGE", SEO_CFG_ONOFF, "on", "off disables the bot-challenge check of the free tools"),
	ROW(SEO_CFG_CHALLENGE_VERIFY_URL, "SEO_CHALLENGE_VERIFY_URL", SEO_CFG_URL, "", "bot-challenge token verification endpoint", .schemes = WEB),
	ROW(SEO_CFG_PAGESPEED_URL, "SEO_PAGESPEED_URL", SEO_CFG_URL, "https://www.googleapis.com", "page-performance upstream (PageSpeed Insights v5 base URL)", .schemes = WEB),
	ROW(SEO_CFG_PAGESPEED_KEY, "SEO_PAGESPEED_KEY", SEO_CFG_SECRET, "", "page-performance upstream key"),
	ROW(SEO_CFG_INDEXNOW_URL, "SEO_INDEXNOW_URL", SEO_CFG_URL, "https://api.indexnow.org/indexnow", "IndexNow submission endpoint (the protocol's shared one)", .schemes = WEB),
	ROW(SEO_CFG_CONSOLE_API_URL, "SEO_CONSOLE_API_URL", SEO_CFG_URL, "", "search-console upstream", .schemes = WEB),
	ROW(SEO_CFG_ADS_API_URL, "SEO_ADS_API_URL", SEO_CFG_URL, "", "ads-planner upstream", .schemes = WEB),
	ROW(SEO_CFG_PAYMENTS_API_URL, "SEO_PAYMENTS_API_URL", SEO_CFG_URL, "", "payment provider (checkout sessions)", .schemes = WEB),
	ROW(SEO_CFG_PAYMENTS_KEY, "SEO_PAYMENTS_KEY", SEO_CFG_SECRET, "", "payment provider secret key"),
	ROW(SEO_CFG_PAYMENTS_WEBHOOK_SECRET, "SEO_PAYMENTS_WEBHOOK_SECRET", SEO_CFG_SECRET, "", "shared secret signing payment webhooks"),
	ROW(SEO_CFG_RDAP_URL, "SEO_RDAP_URL", SEO_CFG_URL, "", "registration data lookups", .schemes = WEB),
	ROW(SEO_CFG_SMTP_URL, "SEO_SMTP_URL", SEO_CFG_URL, "", "SMTP server for notification mail; empty keeps mail in the outbox", .schemes = "smtp or smtps"),
	ROW(SEO_CFG_MAIL_FROM, "SEO_MAIL_FROM", SEO_CFG_MAILBOX, "noreply@seo.local", "sender address of notification mail"),
	ROW(SEO_CFG_HTTP_TLS_CERT, "SEO_HTTP_TLS_CERT", SEO_CFG_FILE, "", "gateway TLS certificate (PEM); empty serves cleartext"),
	ROW(SEO_CFG_HTTP_TLS_KEY, "SEO_HTTP_TLS_KEY", SEO_CFG_FILE, "", "gateway TLS private key (PEM)"),
	ROW(SEO_CFG_HTTP_BODY_LIMIT, "SEO_HTTP_BODY_LIMIT", SEO_CFG_INT, "2097152", "largest request body the gateway accepts, in bytes",
	    .min = 1, .max = 1073741824, .unit = "bytes"),
	ROW(SEO_CFG_HTTP_REQUEST_TIMEOUT_MS, "SEO_HTTP_REQUEST_TIMEOUT_MS", SEO_CFG_MS, "", "deadline of a whole request (headers and body) at the gateway; empty: the front end's own (gw_http.h)",
	    .min = 1, .max = 3600000),
	ROW(SEO_CFG_RPC_TIMEOUT_MS, "SEO_RPC_TIMEOUT_MS", SEO_CFG_MS, "30000", "deadline of a gateway call to a service",
	    .min = 1, .max = 3600000),
	ROW(SEO_CFG_RPC_QUEUE_MAX, "SEO_RPC_QUEUE_MAX", SEO_CFG_INT, "256", "calls a service holds waiting for a worker thread; one more is answered 503 service_unavailable with Retry-After",
	    .min = 1, .max = 1000000, .unit = "calls"),
	ROW(SEO_CFG_REALTIME_WORKSPACE_FETCHES, "SEO_REALTIME_WORKSPACE_FETCHES", SEO_CFG_INT, "8", "live analyses one workspace may run at once in svc-realtime; one more is answered 429 rate_limited",
	    .min = 1, .max = 10000, .unit = "analyses"),
	ROW(SEO_CFG_DRAIN_MS, "SEO_DRAIN_MS", SEO_CFG_MS, "15000", "after SIGTERM, how long calls in flight may still run before they are failed (and refunded)",
	    .min = 0, .max = 600000),
	ROW(SEO_CFG_MIGRATIONS_DIR, "SEO_MIGRATIONS_DIR", SEO_CFG_DIR, "", "SQL migrations of svc-account (default: found beside the binary)"),
	ROW(SEO_CFG_REALTIME_MIGRATIONS_DIR, "SEO_REALTIME_MIGRATIONS_DIR", SEO_CFG_DIR, "", "SQL migrations of svc-realtime (default: found beside the binary)"),
	ROW(SEO_CFG_AGENT_MIGRATIONS_DIR, "SEO_AGENT_MIGRATIONS_DIR", SEO_CFG_DIR, "", "SQL migrations of svc-agent (default: found beside the binary)"),
	ROW(SEO_CFG_TECH_RULES, "SEO_TECH_RULES", SEO_CFG_FILE, "", "technology fingerprint rules of tech-stack (default: found beside the binary)"),
	ROW(SEO_CFG_INTERNAL_TOKEN, "SEO_INTERNAL_TOKEN", SEO_CFG_SECRET, "", "shared secret every internal RPC carries; a call without it is refused (required by the gateway and every service)",
	    .min = 16),
	ROW(SEO_CFG_METRICS_TOKEN, "SEO_METRICS_TOKEN", SEO_CFG_SECRET, "", "bearer token of GET /metrics; empty: /metrics is refused",
	    .min = 16),
	ROW(SEO_CFG_AUTH_FAILURES_PER_MIN, "SEO_AUTH_FAILURES_PER_MIN", SEO_CFG_INT, "30", "unknown keys one client address may try per minute before the gateway answers 429 without asking; 0 turns the limit off",
	    .min = 0, .max = 1000000, .unit = "failed authentications per minute"),
	ROW(SEO_CFG_TRUSTED_PROXIES, "SEO_TRUSTED_PROXIES", SEO_CFG_NETS, "", "comma-separated CIDRs of proxies whose X-Forwarded-For gives the client IP; empty: the socket's peer is the client"),
};

static seo_cfg_value values[SEO__CFG_COUNT];
static atomic_int loaded;
static pthread_once_t lazy_once = PTHREAD_ONCE_INIT;

const seo_cfg_def *seo_config_def(seo_cfg key)
{
	return &cfg_table[key];
}

int seo_config_load(seo_cfg_error *err)
{
	seo_cfg_value next[SEO__CFG_COUNT];
	int i, j, rc;

	for (i = 0; i < SEO__CFG_COUNT; i++) {
		rc = seo_cfg_parse(&cfg_table[i], getenv(cfg_table[i].name),
				   &next[i], err);
		if (rc != 0) {
			for (j = 0; j < i; j++)
				seo_cfg_value_clear(&next[j]);
			return rc;
		}
	}
	for (i = 0; i < SEO__CFG_COUNT; i++) {
		seo_cfg_value_clear(&values[i]);
		values[i] = next[i];
	}
	atomic_store(&loaded, 1);
	return 0;
}

/* Stops the process over a bad configuration. _exit(), not exit(): a
 * service checks its own requirements (seo_config_require()) after its
 * mailer and job threads have started, and exit()'s handlers (OpenSSL's,
 * libpq's) torn down under those threads made it abort now and then. */
static void config_exit(void)
{
	fflush(stderr);
	_exit(2);
}

void seo_config_init(void)
{
	seo_cfg_error err;
	int rc = seo_config_load(&err);

	if (rc == 0)
		return;
	fprintf(stderr, "seo: %s\n",
		rc == SEO_ENOMEM ? "out of memory reading the configuration"
				 : err.message);
	config_exit();
}

void seo_config_require(seo_cfg key)
{
	if (*seo_config(key) != '\0')
		return;
	fprintf(stderr, "seo: %s: not set (%s)\n", cfg_table[key].name,
		cfg_table[key].meaning);
	config_exit();
}

/* A program that never called seo_config_init() (a test, a tool) still
 * gets parsed values, checked the same way. */
static void lazy_init(void)
{
	if (!atomic_load(&loaded))
		seo_config_init();
}

static const seo_cfg_value *value(seo_cfg key)
{
	if (!atomic_load(&loaded))
		pthread_once(&lazy_once, lazy_init);
	return &values[key];
}

const char *seo_config(seo_cfg key)
{
	return value(key)->text;
}

long long seo_config_num(seo_cfg key)
{
	return value(key)->num;
}

const seo_cidr *seo_config_nets(seo_cfg key, size_t *n)
{
	const seo_cfg_value *v = value(key);

	*n = cfg_table[key].kind == SEO_CFG_NETS ? v->n : 0;
	return *n > 0 ? v->list : NULL;
}

const seo_connect_to *seo_config_connect_to(seo_cfg key, size_t *n)
{
	const seo_cfg_value *v = value(key);

	*n = cfg_table[key].kind == SEO_CFG_CONNECT_TO ? v->n : 0;
	return *n > 0 ? v->list : NULL;
}
