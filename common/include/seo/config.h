/*
 * seo/config.h: the contract's environment variables, as one table.
 *
 * Every SEO_* variable a process reads is a row here with its default, so
 * that documentation and `seoctl` list the same set. Values are read from
 * the environment on each call; the strings are owned by the environment or
 * the table and must not be freed.
 */
#ifndef SEO_CONFIG_H
#define SEO_CONFIG_H

typedef enum seo_cfg {
	SEO_CFG_HTTP_ADDR,
	SEO_CFG_PG_URL,
	SEO_CFG_DATA_DIR,
	SEO_CFG_LOG_LEVEL,
	SEO_CFG_RATE_LIMIT_PER_MIN,
	/* SEO_CFG_<ID>_ADDR: one per row of the service registry */
#define SEO_SERVICE(id, name, port, calls, summary) SEO_CFG_##id##_ADDR,
#include "services.def"
#undef SEO_SERVICE
	SEO_CFG_FETCH_CONNECT_TO,
	SEO_CFG_FETCH_ALLOW_NETS,
	SEO_CFG_FETCH_CA_FILE,
	SEO_CFG_CHALLENGE,
	SEO_CFG_CHALLENGE_VERIFY_URL,
	SEO_CFG_PAGESPEED_URL,
	SEO_CFG_PAGESPEED_KEY,
	SEO_CFG_INDEXNOW_URL,
	SEO_CFG_CONSOLE_API_URL,
	SEO_CFG_ADS_API_URL,
	SEO_CFG_PAYMENTS_API_URL,
	SEO_CFG_PAYMENTS_KEY,
	SEO_CFG_PAYMENTS_WEBHOOK_SECRET,
	SEO_CFG_RDAP_URL,
	SEO_CFG_SMTP_URL,
	SEO_CFG_MAIL_FROM,
	SEO_CFG_HTTP_TLS_CERT,
	SEO_CFG_HTTP_TLS_KEY,
	SEO_CFG_HTTP_BODY_LIMIT,
	SEO_CFG_HTTP_REQUEST_TIMEOUT_MS,
	SEO_CFG_RPC_TIMEOUT_MS,
	SEO_CFG_MIGRATIONS_DIR,
	SEO_CFG_REALTIME_MIGRATIONS_DIR,
	SEO_CFG_TECH_RULES,
	SEO__CFG_COUNT
} seo_cfg;

typedef struct seo_cfg_def {
	const char *name;    /* environment variable, e.g. "SEO_HTTP_ADDR" */
	const char *dflt;    /* default value; "" when empty by default */
	const char *meaning; /* one line for docs */
} seo_cfg_def;

/* Returns the variable's value, or its default when unset or empty. Never
 * NULL. */
const char *seo_config(seo_cfg key);

/* Returns the value parsed as a decimal integer, or `fallback` when it is
 * not one. */
long long seo_config_int(seo_cfg key, long long fallback);

/* The table row for `key`. */
const seo_cfg_def *seo_config_def(seo_cfg key);

/*
 * Splits "host:port" (or "[v6]:port") into `host` (at most `hostlen`
 * bytes with the NUL) and `port`. Returns 0, or SEO_EINVAL when malformed.
 */
int seo_split_hostport(const char *addr, char *host, unsigned hostlen,
		       unsigned short *port);

#endif
