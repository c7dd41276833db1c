#include "seo/config.h"
#include "seo/errors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const seo_cfg_def cfg_table[SEO__CFG_COUNT] = {
	[SEO_CFG_HTTP_ADDR] = {"SEO_HTTP_ADDR", "127.0.0.1:8080", "gateway listen address"},
	[SEO_CFG_PG_URL] = {"SEO_PG_URL", "", "PostgreSQL connection string (default: the local cluster of ./seo up)"},
	[SEO_CFG_DATA_DIR] = {"SEO_DATA_DIR", "var/graph", "crawl index served by svc-graph"},
	[SEO_CFG_LOG_LEVEL] = {"SEO_LOG_LEVEL", "info", "debug, info, warn, error"},
	[SEO_CFG_RATE_LIMIT_PER_MIN] = {"SEO_RATE_LIMIT_PER_MIN", "60", "requests per minute per key; 0 turns the limit off"},
#define SEO_SERVICE(id, name, port, calls, summary) \
	[SEO_CFG_##id##_ADDR] = {"SEO_" #id "_ADDR", "127.0.0.1:" #port, "svc-" name " gRPC address"},
#include "services.def"
#undef SEO_SERVICE
	[SEO_CFG_FETCH_CONNECT_TO] = {"SEO_FETCH_CONNECT_TO", "", "live fetches: HOST:PORT:CONNECT_HOST:CONNECT_PORT entries"},
	[SEO_CFG_FETCH_ALLOW_NETS] = {"SEO_FETCH_ALLOW_NETS", "", "CIDRs exempt from the private-address block (tests only)"},
	[SEO_CFG_FETCH_CA_FILE] = {"SEO_FETCH_CA_FILE", "", "extra CA bundle for live fetches"},
	[SEO_CFG_CHALLENGE] = {"SEO_CHALLENGE", "on", "off disables the bot-challenge check of the free tools"},
	[SEO_CFG_CHALLENGE_VERIFY_URL] = {"SEO_CHALLENGE_VERIFY_URL", "", "bot-challenge token verification endpoint"},
	[SEO_CFG_PAGESPEED_URL] = {"SEO_PAGESPEED_URL", "https://www.googleapis.com", "page-performance upstream (PageSpeed Insights v5 base URL)"},
	[SEO_CFG_PAGESPEED_KEY] = {"SEO_PAGESPEED_KEY", "", "page-performance upstream key"},
	[SEO_CFG_INDEXNOW_URL] = {"SEO_INDEXNOW_URL", "", "IndexNow submission endpoint"},
	[SEO_CFG_CONSOLE_API_URL] = {"SEO_CONSOLE_API_URL", "", "search-console upstream"},
	[SEO_CFG_ADS_API_URL] = {"SEO_ADS_API_URL", "", "ads-planner upstream"},
	[SEO_CFG_PAYMENTS_API_URL] = {"SEO_PAYMENTS_API_URL", "", "payment provider (checkout sessions)"},
	[SEO_CFG_PAYMENTS_KEY] = {"SEO_PAYMENTS_KEY", "", "payment provider secret key"},
	[SEO_CFG_PAYMENTS_WEBHOOK_SECRET] = {"SEO_PAYMENTS_WEBHOOK_SECRET", "", "shared secret signing payment webhooks"},
	[SEO_CFG_RDAP_URL] = {"SEO_RDAP_URL", "", "registration data lookups"},
	[SEO_CFG_SMTP_URL] = {"SEO_SMTP_URL", "", "SMTP server for notification mail; empty keeps mail in the outbox"},
	[SEO_CFG_MAIL_FROM] = {"SEO_MAIL_FROM", "noreply@seo.local", "sender address of notification mail"},
	[SEO_CFG_HTTP_TLS_CERT] = {"SEO_HTTP_TLS_CERT", "", "gateway TLS certificate (PEM); empty serves cleartext"},
	[SEO_CFG_HTTP_TLS_KEY] = {"SEO_HTTP_TLS_KEY", "", "gateway TLS private key (PEM)"},
	[SEO_CFG_HTTP_BODY_LIMIT] = {"SEO_HTTP_BODY_LIMIT", "2097152", "largest request body the gateway accepts, in bytes"},
	[SEO_CFG_HTTP_REQUEST_TIMEOUT_MS] = {"SEO_HTTP_REQUEST_TIMEOUT_MS", "", "deadline of a whole request (headers and body) at the gateway, in ms; empty: 30000"},
	[SEO_CFG_RPC_TIMEOUT_MS] = {"SEO_RPC_TIMEOUT_MS", "30000", "deadline of a gateway call to a service"},
	[SEO_CFG_MIGRATIONS_DIR] = {"SEO_MIGRATIONS_DIR", "", "SQL migrations of svc-account (default: found beside the binary)"},
	[SEO_CFG_REALTIME_MIGRATIONS_DIR] = {"SEO_REALTIME_MIGRATIONS_DIR", "", "SQL migrations of svc-realtime (default: found beside the binary)"},
	[SEO_CFG_TECH_RULES] = {"SEO_TECH_RULES", "", "technology fingerprint rules of tech-stack (default: found beside the binary)"},
};

const seo_cfg_def *seo_config_def(seo_cfg key)
{
	return &cfg_table[key];
}

const char *seo_config(seo_cfg key)
{
	const char *v = getenv(cfg_table[key].name);

	if (v == NULL || *v == '\0')
		return cfg_table[key].dflt;
	return v;
}

long long seo_config_int(seo_cfg key, long long fallback)
{
	const char *v = seo_config(key);
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0')
		return fallback;
	return n;
}

int seo_split_hostport(const char *addr, char *host, unsigned hostlen,
		       unsigned short *port)
{
	const char *colon, *h = addr;
	size_t hl;
	char *end;
	long p;

	if (addr == NULL)
		return SEO_EINVAL;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (close == NULL || close[1] != ':')
			return SEO_EINVAL;
		h = addr + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (colon == NULL)
			return SEO_EINVAL;
		hl = (size_t)(colon - addr);
	}
	if (hl == 0 || hl + 1 > hostlen)
		return SEO_EINVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || p < 0 || p > 65535)
		return SEO_EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned short)p;
	return 0;
}
