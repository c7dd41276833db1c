/*
 * seo/config.h: the contract's environment variables, as one table.
 *
 * Every SEO_* variable a process reads is a row here with its kind, its
 * default and one line of meaning, so that documentation and `seoctl` list
 * the same set. Each process parses every row once, at start
 * (seo_config_init()): a value that does not fit its kind stops the process
 * with a message naming the variable and the fault. The accessors then
 * return the parsed values; nothing is parsed per request and nothing falls
 * back silently on a malformed value.
 *
 * Parsed values belong to this module and live until the next
 * seo_config_load(); callers never free them. Loading is not thread-safe:
 * it happens in main() before any thread starts (or, when a program never
 * called it, on the first access, under a once-guard).
 */
#ifndef SEO_CONFIG_H
#define SEO_CONFIG_H

#include <stddef.h>

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
	SEO_CFG_RPC_QUEUE_MAX,
	SEO_CFG_REALTIME_WORKSPACE_FETCHES,
	SEO_CFG_DRAIN_MS,
	SEO_CFG_MIGRATIONS_DIR,
	SEO_CFG_REALTIME_MIGRATIONS_DIR,
	SEO_CFG_AGENT_MIGRATIONS_DIR,
	SEO_CFG_TECH_RULES,
	SEO_CFG_TRUSTED_PROXIES,
	SEO_CFG_INTERNAL_TOKEN,
	SEO_CFG_METRICS_TOKEN,
	SEO_CFG_AUTH_FAILURES_PER_MIN,
	SEO__CFG_COUNT
} seo_cfg;

/* How a row's value is written and read. An empty value is the default,
 * which every kind accepts ("" where the row has none). */
typedef enum seo_cfg_kind {
	SEO_CFG_TEXT,       /* any text without control characters */
	SEO_CFG_SECRET,     /* as TEXT; never repeated in a message; at
			     * least `min` characters when not empty */
	SEO_CFG_INT,        /* a whole number within min..max `unit`s */
	SEO_CFG_MS,         /* a duration: whole milliseconds within min..max */
	SEO_CFG_ONOFF,      /* on or off: num 1 or 0 */
	SEO_CFG_LEVEL,      /* debug, info, warn, error: num 0..3 */
	SEO_CFG_ADDR,       /* host:port or [v6]:port */
	SEO_CFG_URL,        /* scheme://host... with a scheme of `schemes` */
	SEO_CFG_PG,         /* a postgresql:// URL or key=value connection
			     * string; a secret */
	SEO_CFG_FILE,       /* a readable file */
	SEO_CFG_DIR,        /* a directory */
	SEO_CFG_MAILBOX,    /* local@domain */
	SEO_CFG_NETS,       /* comma-separated CIDRs: seo_cidr list */
	SEO_CFG_CONNECT_TO, /* comma-separated HOST:PORT:CONNECT_HOST:
			     * CONNECT_PORT: seo_connect_to list */
} seo_cfg_kind;

typedef struct seo_cfg_def {
	const char *name;    /* environment variable, e.g. "SEO_HTTP_ADDR" */
	seo_cfg_kind kind;
	const char *dflt;    /* default value; "" when empty by default */
	const char *meaning; /* one line for docs */
	long long min, max;  /* INT, MS: the accepted range */
	const char *unit;    /* INT: what the number counts, plural */
	const char *schemes; /* URL: accepted schemes, ", "-separated */
} seo_cfg_def;

/* One network: `bits` leading bits of `addr` (4 bytes for AF_INET). */
typedef struct seo_cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
} seo_cidr;

/*
 * One SEO_FETCH_CONNECT_TO entry, as curl's --connect-to: requests for
 * host:port go to connect_host:connect_port instead. An empty host or a
 * zero port matches any; an empty connect_host or zero connect_port keeps
 * the original. `host` is lowercase.
 */
typedef struct seo_connect_to {
	char host[256];
	unsigned short port;
	char connect_host[256];
	unsigned short connect_port;
} seo_connect_to;

/* One parsed value. `text` points into the environment or the table;
 * `list` (NETS: seo_cidr, CONNECT_TO: seo_connect_to) is malloc'd, NULL
 * when it has no entry. */
typedef struct seo_cfg_value {
	const char *text;
	long long num;
	void *list;
	size_t n;
} seo_cfg_value;

/* Why a value was refused: "SEO_X: fault", lowercase after the name. */
typedef struct seo_cfg_error {
	char message[512];
} seo_cfg_error;

/*
 * Parses `text` (NULL or "" means the default) as row `def` into *out.
 * Returns 0; SEO_EINVAL with err->message set; SEO_ENOMEM. On failure *out
 * holds nothing to free; on success free it with seo_cfg_value_clear().
 */
int seo_cfg_parse(const seo_cfg_def *def, const char *text,
		  seo_cfg_value *out, seo_cfg_error *err);

/* Frees what seo_cfg_parse() allocated in `v` and zeroes it. */
void seo_cfg_value_clear(seo_cfg_value *v);

/*
 * Parses every row from the environment, replacing what an earlier load
 * parsed. Returns 0; SEO_EINVAL with err->message naming the first invalid
 * variable (nothing is replaced then); SEO_ENOMEM.
 */
int seo_config_load(seo_cfg_error *err);

/*
 * The start of every process: seo_config_load(), and on failure the
 * message on stderr as "seo: SEO_X: fault" and exit status 2.
 */
void seo_config_init(void);

/*
 * For a program that cannot run without row `key` (a secret with no
 * default): when its value is empty, prints "seo: SEO_X: not set (...)" on
 * stderr and exits with status 2, as seo_config_init() does.
 */
void seo_config_require(seo_cfg key);

/* The row for `key`. */
const seo_cfg_def *seo_config_def(seo_cfg key);

/* The value as given, or the default when unset or empty. Never NULL. */
const char *seo_config(seo_cfg key);

/* The number of an INT, MS, ONOFF or LEVEL row. */
long long seo_config_num(seo_cfg key);

/* The networks of a NETS row; *n entries, NULL when none. */
const seo_cidr *seo_config_nets(seo_cfg key, size_t *n);

/* 1 when the first `bits` bits of `addr` and `net` are equal, else 0.
 * Both hold at least (bits + 7) / 8 bytes. */
int seo_prefix_match(const unsigned char *addr, const unsigned char *net,
		     unsigned bits);

/* 1 when the address `addr` of `family` (AF_INET: 4 bytes, AF_INET6: 16)
 * lies in one of the `n` networks, else 0. */
int seo_cidr_match(const seo_cidr *nets, size_t n, int family,
		   const unsigned char *addr);

/* The entries of a CONNECT_TO row; *n entries, NULL when none. */
const seo_connect_to *seo_config_connect_to(seo_cfg key, size_t *n);

/*
 * Splits "host:port" (or "[v6]:port") into `host` (at most `hostlen`
 * bytes with the NUL) and `port`. Returns 0, or SEO_EINVAL when malformed.
 */
int seo_split_hostport(const char *addr, char *host, unsigned hostlen,
		       unsigned short *port);

#endif
