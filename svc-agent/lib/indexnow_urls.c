/*
 * The URL rules of an IndexNow submission, shared by POST /v1/indexnow and
 * IndexNow proposals (indexnow.h).
 */
#include "indexnow.h"

#include <string.h>
#include <sys/socket.h>

#include "seo/errors.h"
#include "seo/fetch.h"

/* Per reason: POST /v1/indexnow's code and a few words for messages. */
static const struct {
	const char *code;
	const char *text;
} reasons[] = {
	[AGENT_INOW_URLS_OK] = {"", "valid"},
	[AGENT_INOW_URLS_NONE] = {"indexnow_invalid_url", "urls is missing or empty"},
	[AGENT_INOW_URLS_TOO_MANY] = {"indexnow_too_many_urls", "more than 1000 urls"},
	[AGENT_INOW_URLS_INVALID] = {"indexnow_invalid_url",
		"not an absolute http(s) url without credentials, fragment or whitespace"},
	[AGENT_INOW_URLS_PRIVATE] = {"indexnow_invalid_url",
		"a private, reserved or local host"},
	[AGENT_INOW_URLS_TOO_LONG] = {"indexnow_invalid_url", "longer than 2048 characters"},
	[AGENT_INOW_URLS_PORT] = {"indexnow_invalid_url", "an explicit port"},
	[AGENT_INOW_URLS_HOSTS] = {"indexnow_host_mismatch", "urls of more than one host"},
};

#define N_REASONS (sizeof(reasons) / sizeof(reasons[0]))

const char *agent_indexnow_reason_code(int reason)
{
	return reason > 0 && (size_t)reason < N_REASONS ? reasons[reason].code
							 : "indexnow_invalid_url";
}

const char *agent_indexnow_reason_text(int reason)
{
	return reason >= 0 && (size_t)reason < N_REASONS ? reasons[reason].text : "invalid";
}

/* Characters of UTF-8 text: the bytes that start one. */
static size_t chars_of(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* 1 when the authority of `url` (parsed already) names a port, even an
 * empty or default one: the rule is "default port only", never written. */
static int has_port(const char *url)
{
	const char *auth = strstr(url, "://") + 3;
	size_t len = strcspn(auth, "/?");
	const char *close;

	if (*auth == '[') {
		close = memchr(auth, ']', len);
		return close != NULL && close + 1 < auth + len && close[1] == ':';
	}
	return memchr(auth, ':', len) != NULL;
}

/* Names that only ever mean this machine or a private network. */
static int local_name(const char *host)
{
	static const char *const suffixes[] = {".localhost", ".local", ".internal"};
	size_t len = strlen(host);

	if (strchr(host, '.') == NULL || strcmp(host, "localhost") == 0)
		return 1;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && strcmp(host + len - sl, suffixes[i]) == 0)
			return 1;
	}
	return 0;
}

/* The reason `raw` is refused, or OK with *u parsed. */
static int check_one(const seo_fetch_config *cfg, const char *raw,
		     seo_arena *a, seo_url *u, int *reason)
{
	struct sockaddr_storage ss;
	int rc;

	if (chars_of(raw) > AGENT_INOW_MAX_URL_CHARS) {
		*reason = AGENT_INOW_URLS_TOO_LONG;
		return 0;
	}
	rc = seo_url_parse(raw, a, u);
	if (rc == SEO_ENOMEM)
		return rc;
	if (rc != 0)
		*reason = AGENT_INOW_URLS_INVALID;
	else if (has_port(raw))
		*reason = AGENT_INOW_URLS_PORT;
	else if (u->host_kind == SEO_HOST_NAME ? local_name(u->host)
		 : seo_resolve_checked(cfg, u->host, u->port, &ss) != 0)
		*reason = AGENT_INOW_URLS_PRIVATE;
	else
		*reason = AGENT_INOW_URLS_OK;
	return 0;
}

int agent_indexnow_check_urls(const seo_fetch_config *cfg,
			      const char *const *urls, size_t n, seo_arena *a,
			      agent_inow_urls *out, int *reason, size_t *bad)
{
	size_t mismatch = 0;
	seo_url u;
	int rc;

	memset(out, 0, sizeof(*out));
	*bad = 0;
	*reason = n == 0 ? AGENT_INOW_URLS_NONE
		: n > AGENT_INOW_MAX_URLS ? AGENT_INOW_URLS_TOO_MANY
		: AGENT_INOW_URLS_OK;
	if (*reason != AGENT_INOW_URLS_OK)
		return SEO_EINVAL;
	out->urls = seo_arena_alloc(a, n * sizeof(*out->urls));
	if (out->urls == NULL)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		rc = check_one(cfg, urls[i], a, &u, reason);
		if (rc != 0)
			return rc;
		if (*reason != AGENT_INOW_URLS_OK) {
			*bad = i;
			return SEO_EINVAL;
		}
		if (i == 0)
			out->host = u.host;
		else if (mismatch == 0 && strcmp(u.host, out->host) != 0)
			mismatch = i;
		out->urls[i] = u.href;
	}
	if (mismatch != 0) {
		*reason = AGENT_INOW_URLS_HOSTS;
		*bad = mismatch;
		return SEO_EINVAL;
	}
	out->n = n;
	return 0;
}
