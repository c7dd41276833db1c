/*
 * The key-file check: the hosted file at key_location holds exactly the
 * key (indexnow_int.h).
 */
#include "indexnow_int.h"

#include <stdio.h>
#include <string.h>

#include "seo/fetch.h"
#include "seo/log.h"

/* The specification's bounds of the check. */
#define FILE_TIMEOUT_MS 30000
#define FILE_MAX_BYTES 4096

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
	       c == '\v';
}

int agent__inow_file_matches(const char *body, size_t len, const char *key)
{
	static const char bom[] = "\xef\xbb\xbf";
	size_t klen = strlen(key);

	if (len >= 3 && memcmp(body, bom, 3) == 0) {
		body += 3;
		len -= 3;
	}
	while (len > 0 && blank(body[0])) {
		body++;
		len--;
	}
	while (len > 0 && blank(body[len - 1]))
		len--;
	return len == klen && memcmp(body, key, klen) == 0;
}

int agent__inow_file_check(const seo_fetch_config *cfg,
			   const char *key_location, const char *key,
			   char *why, size_t why_len)
{
	/* The file is at key_location itself: a redirect is not HTTP 200. */
	const seo_fetch_opts opts = {
		.timeout_ms = FILE_TIMEOUT_MS,
		.max_body = FILE_MAX_BYTES,
		.max_redirects = -1,
		.no_follow = 1,
		.raw_body = 1,
	};
	seo_arena *a = seo_arena_new(0);
	seo_fetch_result res = {0};
	int ok = 0;

	if (a == NULL) {
		snprintf(why, why_len, "out of memory");
		return 0;
	}
	if (seo_fetch_sync(cfg, key_location, &opts, a, &res) != 0)
		snprintf(why, why_len, "the key file could not be fetched");
	else if (res.error == SEO_FETCH_TOO_LARGE)
		snprintf(why, why_len, "%s is larger than 4 KB: not a key file",
			 key_location);
	else if (res.error != SEO_FETCH_OK)
		snprintf(why, why_len, "%s could not be fetched (%s)", key_location,
			 seo_fetch_error_code(res.error));
	else if (res.status != 200)
		snprintf(why, why_len, "%s answered http %ld, not 200",
			 key_location, res.status);
	else if (!agent__inow_file_matches(res.body, res.body_len, key))
		snprintf(why, why_len, "%s does not contain exactly the key",
			 key_location);
	else
		ok = 1;
	if (!ok)
		log_info("indexnow key file: %s (%s)", why,
			 res.message != NULL ? res.message : "");
	seo_arena_free(a);
	return ok;
}
